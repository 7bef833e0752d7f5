#!/usr/bin/env bash
# session 30 call G (one GPU): host trims (_fill columns, views of one launch, no ends copies) on 7680d41:
# cuda tests, then pairs mode full main vs 01bea1d alternated, and the timeline probe
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/b31/src:/tmp/site"
ln -sfn $R/.carry .carry/b31/.carry
(env $M timeout 170 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_traceback.py tests/test_cuda_pair_ends.py 2>&1 | tail -4) | tee $OUT/tests.log
S='"text_read": [0-9.]*\|"backend": "[a-z]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]\|"gcups": [0-9.]*'
for who in main base main; do
  if [ $who = main ]; then P=$M; D=$R; else P=$B; D=$R/.carry/b31; fi
  echo "== $who"; (cd $D && env $P timeout 60 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*" | paste -sd' ' | sed 's/"backend"/\n&/g')
done
