#!/usr/bin/env bash
# session 30 call F (4 GPUs): h-defer3 (a9ef935 on main 7680d41: deferred end cells found
# by the CPU beside the next batch): its cuda search tests, then in-process mode full on
# 1 and 4 GPUs, main / h-defer3 / main
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
D="PYTHONPATH=$R/.carry/d30/src:/tmp/site"
ln -sfn $R/.carry .carry/d30/.carry
S='"gpus": [0-9]*\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [][0-9., ]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
rm -rf /tmp/dt && cp -r tests /tmp/dt && cp .carry/d30/tests/test_cuda_search.py /tmp/dt/
(env $D timeout 200 python3 -m pytest -m cuda -q -p no:cacheprovider -x /tmp/dt/test_cuda_search.py 2>&1 | tail -4) | tee $OUT/tests.log
Q="--query-file mmseqs2_example_QUERY.fasta.gz --mode full --method in-process"
env $M timeout 130 python3 bench/scaling.py --gpus 1,4 $Q --repeat 2 --out $OUT/sc_main.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'
(cd .carry/d30 && env $D timeout 130 python3 bench/scaling.py --gpus 1,4 $Q --repeat 2 --out $OUT/sc_defer.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g')
env $M timeout 60 python3 bench/scaling.py --gpus 4 $Q --repeat 3 --out $OUT/sc_main2.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'
