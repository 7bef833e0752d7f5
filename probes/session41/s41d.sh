#!/usr/bin/env bash
# session 41 call D (one H200): statement timeline of score_pairs from CuPy (p41c).
set -u
R=$PWD
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 100 python3 .carry/p41/p41c.py 2>&1 | tail -80
