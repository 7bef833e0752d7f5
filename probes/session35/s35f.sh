#!/usr/bin/env bash
# session 35 call F (one H100): cph35 (the CuPy call's host side) at main
set -u
R=$PWD
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
env PYTHONPATH=$R/src:/tmp/site timeout 120 python3 .carry/p35/cph35.py 2>&1 | tail -60
