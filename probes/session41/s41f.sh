#!/usr/bin/env bash
# session 41 call F (one H200): p41f (the SAM CLI row against the in-process call).
set -u
R=$PWD
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
lscpu | grep -m1 "Model name"
timeout 200 python3 .carry/p41/p41f.py 2>&1 | cut -c1-160 | head -120
