#!/usr/bin/env bash
# session 29 call C (4 GPUs): the large pairs' end kernels beside tb_end: cuda tests, the
# tail's wall clocks (tl29b, one-warp limit 2^22 / 2^23), in-process A/B against 146f986
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/b29/src:/tmp/site"
S='"gpus": [0-9]*\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [][0-9., ]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
(env $M timeout 200 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_search.py tests/test_concurrency.py tests/test_cuda_cold.py tests/test_cuda_traceback.py::test_one_engine_on_two_devices tests/test_cuda_traceback.py::test_search_full_gpu_equals_cpu 2>&1 | tail -6) | tee $OUT/tests.log
env $M timeout 100 python3 .carry/tl29b.py $OUT/tl.jsonl 4 2 22,23 2>&1 | tail -3
env $M timeout 200 python3 bench/scaling.py --gpus 1,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode score --mode full --method in-process --repeat 2 --out $OUT/scaling_main.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'
cd $R/.carry/b29
env $B timeout 60 python3 bench/scaling.py --gpus 4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method in-process --repeat 3 --out $OUT/scaling_base.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'
cd $R
env $M timeout 60 python3 bench/scaling.py --gpus 4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method in-process --repeat 3 --out $OUT/scaling_main2.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'
