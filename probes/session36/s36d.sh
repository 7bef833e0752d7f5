#!/usr/bin/env bash
# session 36 call D (one H200): cuda tests of the grouped pass; ab36 main (cf89c52) against
# the working tree (2 groups; 3 and 4 groups by AB_GROUP), alternated.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_pair_ends.py tests/test_pairs_inputs.py > $OUT/tests1.log 2>&1; echo "tests1 rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/tests1.log
ab() { env PYTHONPATH=/tmp/site timeout 90 python3 .carry/p36/ab36.py $1 $2 $OUT/ab.jsonl 15 2>&1 | grep -o '"tag": "[^"]*"\|"mode": "[a-z]*"\|"median_ms": [0-9.]*\|"min_ms": [0-9.]*\|"same": [a-z]*\|Error.*' | paste -sd' ' | sed 's/"tag"/\n&/g'; }
for round in 1 2 3; do
  ab $R/src new$round
  ab $R/.carry/t/m36/src main$round
done
AB_GROUP=12582912 ab $R/src new
AB_GROUP=9437184 ab $R/src new
AB_GROUP=6291456 ab $R/src new
echo "t=$(( $(date +%s) - T0 )) s"
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_pairs.py tests/test_cuda_encode_pack.py > $OUT/tests2.log 2>&1; echo "tests2 rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/tests2.log
echo "total $(( $(date +%s) - T0 )) s"
