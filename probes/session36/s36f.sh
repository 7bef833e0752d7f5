#!/usr/bin/env bash
# session 36 call F (4 x H200): wp36b, Dask shard plans alternated (pieces / pieces256 / split).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 300 python3 .carry/p36/wp36b.py $OUT/wp36b.jsonl 2>&1 | grep -v "^ *$" | cut -c1-300 | tail -25
echo "total $(( $(date +%s) - T0 )) s"
