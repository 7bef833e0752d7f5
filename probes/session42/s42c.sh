#!/usr/bin/env bash
# session 42 call C (4 x H200): p42c.py (the 50-query 4-GPU mode-full tail, phase by phase)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
T0=$(date +%s)
timeout 300 python3 .carry/p42/p42c.py > $OUT/p42c.txt 2>&1; echo "rc=$? t=$(( $(date +%s) - T0 ))"
head -30 $OUT/p42c.txt
