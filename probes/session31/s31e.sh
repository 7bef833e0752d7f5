#!/usr/bin/env bash
# session 31 call E (one GPU): h-chain31 with host trims: cuda tests (traceback, render,
# pair ends, pairs, search), pairs mode full vs main 1e5126f alternated, timeline
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/bm/src:/tmp/site"
ln -sfn $R/.carry .carry/bm/.carry
env $M timeout 240 python3 -m pytest -m cuda -q -p no:cacheprovider tests/test_cuda_traceback.py tests/test_cuda_render.py tests/test_cuda_search.py > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -15
S='"text_read": [0-9.]*\|"backend": "[a-z]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]\|"gcups": [0-9.]*'
for who in new base new; do
  if [ $who = new ]; then P=$M; D=$R; else P=$B; D=$R/.carry/bm; fi
  echo "== $who"; (cd $D && env $P timeout 70 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*" | paste -sd' ' | sed 's/"backend"/\n&/g')
done
env $M timeout 60 python3 .carry/p31/pfk31.py $OUT/pfk.jsonl 5 > $OUT/pfk.log 2>&1; echo "pfk rc=$?"
grep '"full"' $OUT/pfk.log | tail -3
echo "== pairs_call main"; env $M timeout 60 python3 bench/pairs_call.py --backend cuda -n 4096 --repeat 9 --inputs cupy numpy buffer --out $OUT/pc.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.]*\|"gcups": [0-9.]*\|"scope": "[a-z]*"' | paste -sd' ' | sed 's/"scope"/\n&/g'
echo "== locate_modes main"; env $M timeout 100 python3 bench/locate_modes.py --reads 1000 --single 20 --sam-repeat 5 --out $OUT/loc.jsonl > /dev/null 2>&1; grep -o '"path": "[a-z_0-9]*"\|"seconds": [0-9.]*\|"gcups": [0-9.]*' $OUT/loc.jsonl | paste -sd' ' | sed 's/"path"/\n&/g'
