#!/usr/bin/env bash
# session 39 call G (one H200): the CuPy row's host pieces alone (p39g).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python3 .carry/p39/p39g.py 2>&1 | tail -40
