#!/usr/bin/env bash
# session 31 call C (one GPU): h-chain31 (tb_start/tb_path at 4 rows a lane; tb_plan on the
# device, one launch, render from device arrays): cuda tests, pairs mode full vs main
# (daa0bd2 = 907199f's code) alternated, timeline, search_modes rows
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/bm/src:/tmp/site"
ln -sfn $R/.carry .carry/bm/.carry
(env $M timeout 280 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_traceback.py tests/test_cuda_render.py tests/test_cuda_pair_ends.py 2>&1 | tail -5) | tee $OUT/tests.log
S='"text_read": [0-9.]*\|"backend": "[a-z]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]\|"gcups": [0-9.]*'
for who in new base new; do
  if [ $who = new ]; then P=$M; D=$R; else P=$B; D=$R/.carry/bm; fi
  echo "== $who"; (cd $D && env $P timeout 70 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*" | paste -sd' ' | sed 's/"backend"/\n&/g')
done
env $M timeout 60 python3 .carry/p31/pfk.py $OUT/pfk.jsonl 3 > $OUT/pfk.log 2>&1; echo "pfk rc=$?"
grep '"full"' $OUT/pfk.log | tail -2
for who in new base; do
  if [ $who = new ]; then P=$M; D=$R; else P=$B; D=$R/.carry/bm; fi
  echo "== search_modes $who"; (cd $D && env $P timeout 100 python3 bench/search_modes.py --top-k 10 --top-k 500 --repeat 2 --out $OUT/sm_$who.jsonl 2>&1 | tail -4)
done
