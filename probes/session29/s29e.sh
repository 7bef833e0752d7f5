#!/usr/bin/env bash
# session 29 call E (one H100): cuda tests with tb_end_r4 the default (traceback, pair ends,
# render), then issue 20's search modes (20 queries, top 10 / 500), main against 146f986
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/b29/src:/tmp/site"
ln -sfn $R/.carry .carry/b29/.carry
(env $M timeout 200 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_traceback.py tests/test_cuda_pair_ends.py tests/test_cuda_render.py 2>&1 | tail -4) | tee $OUT/tests.log
S='"mode": "[a-z]*"\|"top_k": [0-9]*\|"seconds": [0-9.]*\|"ratio_to_score": [0-9.]*'
A="--top-k 10 --top-k 500 --repeat 3"
env $M timeout 90 python3 bench/search_modes.py $A --out $OUT/sm_main.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"mode"/\n&/g'
cd $R/.carry/b29; env $B timeout 90 python3 bench/search_modes.py $A --out $OUT/sm_base.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"mode"/\n&/g'; cd $R
env $M timeout 90 python3 bench/search_modes.py $A --out $OUT/sm_main.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"mode"/\n&/g'
