#!/usr/bin/env bash
# session 39 call D (one H200): K rule for small patterns (p39d), the CuPy row's host
# timeline (p39d_tl).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 60 python3 .carry/p39/p39d_tl.py $OUT/tl.txt > $OUT/tl.log 2>&1; echo "tl rc=$? t=$(( $(date +%s) - T0 ))"
cat $OUT/tl.log | tail -30
timeout 90 python3 .carry/p39/p39d.py $OUT/p39d.jsonl > $OUT/p39d.log 2>&1; echo "p39d rc=$? t=$(( $(date +%s) - T0 ))"
cut -c1-160 $OUT/p39d.log
