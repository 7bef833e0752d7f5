#!/usr/bin/env bash
# session 30 call D (one GPU): the ONE_PASS_BYTES route test, then issue 20's search modes
# (20 queries, top 10: hits take tb_align now) main vs 01bea1d alternated
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/b30/src:/tmp/site"
ln -sfn $R/.carry .carry/b30/.carry
(env $M timeout 200 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_traceback.py -k "one_pass or score_pairs or search_full" 2>&1 | tail -3) | tee $OUT/tests.log
S='"mode": "[a-z]*"\|"top_k": [0-9]*\|"seconds": [0-9.]*\|"ratio_to_score": [0-9.]*'
A="--top-k 10 --top-k 500 --repeat 3"
for who in main base main; do
  if [ $who = main ]; then P=$M; D=$R; else P=$B; D=$R/.carry/b30; fi
  echo "== $who"; (cd $D && env $P timeout 120 python3 bench/search_modes.py $A --out $OUT/sm_$who.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"mode"/\n&/g')
done
