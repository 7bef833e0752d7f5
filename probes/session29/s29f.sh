#!/usr/bin/env bash
# session 29 call F (4 GPUs): end cells from one thread: multi-device cuda tests, then
# 4-GPU full A/B against 75dced1 (.carry/b75), alternated
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/b75/src:/tmp/site"
ln -sfn $R/.carry .carry/b75/.carry
S='"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [][0-9., ]*\|same_hits": [a-z]*\|Error.*'
(env $M timeout 110 python3 -m pytest -m cuda -q -p no:cacheprovider -x "tests/test_cuda_search.py::test_two_devices_identical" "tests/test_cuda_search.py::test_search_end_cells_of_many_queries_side_by_side" tests/test_concurrency.py "tests/test_cuda_traceback.py::test_search_full_gpu_equals_cpu" 2>&1 | tail -4) | tee $OUT/tests.log
grep -q " passed" $OUT/tests.log && ! grep -q "failed\|error" $OUT/tests.log || exit 3
A="--gpus 4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method in-process --repeat 3"
env $M timeout 60 python3 bench/scaling.py $A --out $OUT/ab_main.jsonl 2>&1 | grep -o "$S" | paste -sd' '
cd $R/.carry/b75; env $B timeout 60 python3 bench/scaling.py $A --out $OUT/ab_base.jsonl 2>&1 | grep -o "$S" | paste -sd' '; cd $R
env $M timeout 60 python3 bench/scaling.py $A --out $OUT/ab_main.jsonl 2>&1 | grep -o "$S" | paste -sd' '
