#!/usr/bin/env bash
# session 32 call D (one GPU): main 230d6bb: cuda search, pairs, concurrency tests;
# search_modes rows (top 10 / 500); pairs_call from NumPy/buffer/CuPy vs 01ad645 alternated
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/bm/src:/tmp/site"
ln -sfn $R/.carry .carry/bm/.carry
T0=$(date +%s)
env $M timeout 260 python3 -m pytest -m cuda -q -p no:cacheprovider tests/test_cuda_search.py tests/test_cuda_pairs.py tests/test_concurrency.py tests/test_cuda_encode_pack.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -15
echo "== search_modes main"; env $M timeout 110 python3 bench/search_modes.py --top-k 10 --top-k 500 --repeat 2 --out $OUT/sm_new.jsonl 2>&1 | tail -4
echo "after search_modes $(( $(date +%s) - T0 )) s"
for who in new base new base; do
  if [ $who = new ]; then P=$M; D=$R; else P=$B; D=$R/.carry/bm; fi
  echo "== pairs_call $who"; (cd $D && env $P timeout 60 python3 bench/pairs_call.py --backend cuda -n 4096 --repeat 9 --inputs numpy buffer cupy --out $OUT/pc_$who.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.]*\|"gcups": [0-9.]*\|"scope": "[a-z]*"' | paste -sd' ' | sed 's/"scope"/\n&/g')
done
echo "total $(( $(date +%s) - T0 )) s"
