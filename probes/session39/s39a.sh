#!/usr/bin/env bash
# session 39 call A (one H200): split vs packed LCS step (p39a), then the cuda lcs tests.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 200 python3 .carry/p39/p39a.py $OUT/p39a.jsonl > $OUT/p39a.log 2>&1; echo "p39a rc=$? t=$(( $(date +%s) - T0 ))"
tail -40 $OUT/p39a.log | cut -c1-200
timeout 330 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_lcs.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -5 $OUT/tests.log
