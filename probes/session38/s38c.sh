#!/usr/bin/env bash
# session 38 call C (one H200): prof38 (cProfile per call, tail, D2H bandwidth).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
env PYTHONPATH=$R/src:/tmp/site timeout 300 python3 .carry/p38/prof38.py > $OUT/prof38.txt 2>&1; echo rc=$?
grep -E "median|tail run|d2h|no stream" $OUT/prof38.txt | cut -c1-300
