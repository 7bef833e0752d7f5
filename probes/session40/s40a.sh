#!/usr/bin/env bash
# session 40 call A (4 x H200): issue 25 at main. Multi-device tests on 4 GPUs, then
# bench/scaling.py 500 queries: in-process score+full and streamed (gpu limit) full on
# 1, 2, 4 GPUs; then tl40 (CUPTI timelines of the 4-GPU streamed and resident searches).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
T0=$(date +%s)
S='"gpus": [0-9]*\|"method": "[a-z-]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 -m pytest -m cuda -q -p no:cacheprovider tests/test_concurrency.py tests/test_cuda_search.py tests/test_cuda_stream.py -k "thread or device or multi or concurren or stream" > $OUT/tests_cuda.log 2>&1; echo "cuda tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests_cuda.log
env PYTHONPATH=$R/src:/tmp/site timeout 260 python3 bench/scaling.py --gpus 1,2,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode score --mode full --method in-process --repeat 2 --out $OUT/sc_inproc.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'; echo "t=$(( $(date +%s) - T0 )) s"
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 bench/scaling.py --gpus 1,2,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method streamed --streamed-limit gpu --repeat 2 --out $OUT/sc_streamed.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'; echo "t=$(( $(date +%s) - T0 )) s"
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 .carry/p40/tl40.py $OUT/tl40.json 2>&1 | grep -v "^ *$" | cut -c1-1500 | tail -12; echo "tl rc=$? t=$(( $(date +%s) - T0 )) s"
echo "total $(( $(date +%s) - T0 )) s"
