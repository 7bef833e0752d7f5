#!/usr/bin/env bash
# session 38 call L (one H200): pf38b (which live input form slows the CuPy row).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
export PYTHONPATH=$R/src:/tmp/site
timeout 120 python3 .carry/p38/pf38b.py 2>&1 | tail -9
