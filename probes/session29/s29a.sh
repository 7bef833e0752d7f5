#!/usr/bin/env bash
# session 29 call A (4 GPUs): cuda tests touching the search/traceback host changes, then
# the 4-GPU timeline and the scaling A/B of main (f5658a7+) against 146f986 (.carry/b29)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/b29/src:/tmp/site"
ln -sfn $R/.carry .carry/b29/.carry
(env $M timeout 230 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_search.py tests/test_cuda_traceback.py tests/test_cuda_render.py tests/test_concurrency.py tests/test_cuda_cold.py tests/test_pipeline.py tests/test_search.py 2>&1 | tail -15) | tee $OUT/tests.log
cd $R
env $M timeout 240 python3 bench/scaling.py --gpus 1,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode score --mode full --method in-process --repeat 2 --out $OUT/scaling_main.jsonl 2>&1 | grep -o '"gpus": [0-9]*\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*' | paste -sd' ' | sed 's/"gpus"/\n&/g'
env $M timeout 120 python3 .carry/tl29.py $OUT/tl_main.jsonl 4 2 2>&1 | cut -c1-3000 | tail -4
cd $R/.carry/b29
env $B timeout 150 python3 bench/scaling.py --gpus 1,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method in-process --repeat 2 --out $OUT/scaling_base.jsonl 2>&1 | grep -o '"gpus": [0-9]*\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|Error.*' | paste -sd' ' | sed 's/"gpus"/\n&/g'
