#!/usr/bin/env bash
# session 42 call B (4 x H200): p42b.py (the bound of overlapping mode full's tail on 4 GPUs)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
lscpu | grep -m1 "Model name"; nproc
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
timeout 420 python3 .carry/p42/p42b.py 2>&1 | tee $OUT/p42b.txt | tail -30
echo "t=$(( $(date +%s) - T0 ))"
