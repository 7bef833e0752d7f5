#!/usr/bin/env bash
# session 32 call C (one GPU): chain with the texts queued early and the table taking its
# columns: cuda tests (pair ends, traceback, render, pairs), pairs mode full vs 01ad645
# alternated, timeline, the packed staging's parts
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
env $M timeout 200 python3 -m pytest -m cuda -q -x -p no:cacheprovider tests/test_cuda_pair_ends.py tests/test_cuda_traceback.py tests/test_cuda_render.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -15
S='"text_read": [0-9.]*\|"backend": "[a-z]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]\|"gcups": [0-9.]*'
for who in new base new base; do
  if [ $who = new ]; then P=$M; D=$R; else P=$B; D=$R/.carry/bm; fi
  echo "== $who"; (cd $D && env $P timeout 70 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*\|differ.*\|Error.*" | grep -v '"cpu"' | paste -sd' ' | sed 's/"backend"/\n&/g')
done
env $M timeout 60 python3 .carry/p32/pfk32.py $OUT/pfk.jsonl 5 > $OUT/pfk.log 2>&1; echo "pfk rc=$?"
env $M timeout 60 python3 .carry/p32/pk32.py 2>&1 | tail -20
echo "total $(( $(date +%s) - T0 )) s"
