#!/usr/bin/env bash
# session 29 call B (4 GPUs): the one-warp limit of the end cells swept (owc29), then the
# streamed per-GPU-limit scaling at main
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data" PYTHONPATH=$R/src:/tmp/site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
timeout 240 python3 .carry/owc29.py $OUT/owc.jsonl 4 22,21,20,19,18 3 2>&1 | tail -12
timeout 200 python3 bench/scaling.py --gpus 1,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode score --mode full --method streamed --streamed-limit gpu --repeat 2 --out $OUT/streamed.jsonl 2>&1 | grep -o '"gpus": [0-9]*\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*' | paste -sd' ' | sed 's/"gpus"/\n&/g'
