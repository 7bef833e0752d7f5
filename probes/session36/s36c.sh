#!/usr/bin/env bash
# session 36 call C (one H200): cuda tests of the pairs inputs / pair ends; ab36 (working tree
# against main cf89c52 in .carry/t/m36, alternated, separate processes).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 260 python3 -m pytest -q -p no:cacheprovider -x tests/test_pairs_inputs.py tests/test_cuda_pair_ends.py tests/test_cuda_pairs.py tests/test_kernel_cache.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests.log
ab() { env PYTHONPATH=/tmp/site timeout 90 python3 .carry/p36/ab36.py $1 $2 $OUT/ab.jsonl 15 $3 2>&1 | cut -c1-200; }
for round in 1 2; do
  ab $R/src new$round --batches
  ab $R/.carry/t/m36/src main$round
done
echo "total $(( $(date +%s) - T0 )) s"
