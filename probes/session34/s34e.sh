#!/usr/bin/env bash
# session 34 call E (one GPU): wp34 (the Dask second round's trace in a worker against the
# client) at h-dask3.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 .carry/p34/wp34b.py $OUT/wpb.jsonl 2>&1 | grep -v "^ *$" | tail -8
echo "total $(( $(date +%s) - T0 )) s"
