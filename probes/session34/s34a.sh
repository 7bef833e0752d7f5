#!/usr/bin/env bash
# prepared in session 33 for issue 25 (4 GPUs of one host): where the mode full tail and
# the CLI's start-up go at main. tl34 on 4 and 1 GPUs, cliprof34 (plain and --workers).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
T0=$(date +%s)
env $M timeout 150 python3 .carry/p34/tl34.py $OUT/tl.jsonl 4 3 2>&1 | tail -3; echo "t=$(( $(date +%s) - T0 ))"
env $M timeout 100 python3 .carry/p34/tl34.py $OUT/tl.jsonl 1 2 2>&1 | tail -2; echo "t=$(( $(date +%s) - T0 ))"
env $M timeout 150 python3 .carry/p34/cliprof34.py $OUT/prof 1,4 2>&1 | tail -3; echo "t=$(( $(date +%s) - T0 ))"
env $M timeout 150 python3 .carry/p34/cliprof34.py $OUT/profw 1,4 --workers 2>&1 | tail -3
echo "total $(( $(date +%s) - T0 )) s"
