#!/usr/bin/env bash
# session 35 call A (one H100): h-groups (score_pairs from host arrays in groups of pairs)
# tests, the group-size sweep, bench/pairs_call.py against main (58b37ad, .carry/t/m35).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 240 python3 -m pytest -q -p no:cacheprovider -x tests/test_cuda_pairs_ahead.py tests/test_pairs_ahead.py tests/test_cuda_encode_pack.py tests/test_encode_pack.py tests/test_pairs_inputs.py tests/test_cuda_pairs.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/tests.log
env PYTHONPATH=$R/src:/tmp/site timeout 120 python3 .carry/p35/pg35.py $OUT/pg35.jsonl 4096 2>&1 | tail -8; echo "t=$(( $(date +%s) - T0 )) s"
pc() { local tree=$1 tag=$2 n=$3; (cd $tree && env PYTHONPATH=$tree/src:/tmp/site timeout 120 python3 bench/pairs_call.py --backend cuda -m 128 -n $n --inputs numpy buffer list cupy --repeat 7 --out $OUT/pc_$tag.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.e-]*\|"gcups": [0-9.]*' | paste -sd' ' | sed 's/"input"/\n&/g'); echo "t=$(( $(date +%s) - T0 )) s"; }
for round in 1 2; do
  echo "== branch $round"; pc $R br$round 4096
  echo "== main $round"; pc $R/.carry/t/m35 main$round 4096
done
echo "== branch n1024"; pc $R br1024 1024
echo "== main n1024"; pc $R/.carry/t/m35 main1024 1024
echo "total $(( $(date +%s) - T0 )) s"
