#!/usr/bin/env bash
# session 35 call B (one H100): pk35 (encode_sides' host staging, main tree)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt; nproc; lscpu | grep -i 'model name\|L3\|NUMA node(s)'
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 .carry/p35/pk35.py $OUT/pk35.jsonl 2>&1 | cut -c1-400
echo "total $(( $(date +%s) - T0 )) s"
