#!/usr/bin/env bash
# session 39 call I (one H200): p39i (statement-level host timeline of the CuPy row).
set -u
R=$PWD
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 100 python3 .carry/p39/p39i.py 2>&1 | tail -80
