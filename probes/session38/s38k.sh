#!/usr/bin/env bash
# session 38 call K (one H200): pf38 (the CuPy row's page faults by process state).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
export PYTHONPATH=$R/src:/tmp/site
timeout 120 python3 .carry/p38/pf38.py 2>&1 | tail -6
timeout 60 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 21 2>&1 | tail -1 | cut -c1-200
