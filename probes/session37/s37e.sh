#!/usr/bin/env bash
# session 37 call E (one H200): gc37 (mode-full spikes: garbage collections, warm-up size).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s); cat /proc/loadavg
env PYTHONPATH=/tmp/site timeout 120 python3 .carry/p37/gc37.py $OUT/gc.jsonl 2>&1 | cut -c1-3000
echo "t=$(( $(date +%s) - T0 ))"
