#!/usr/bin/env bash
# session 30 call B (one H100): pair-ends cuda tests (kept ENDS plan), the host time inside
# the pairs full call's steps, the call's kernel/host timeline again
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
export PYTHONPATH=$R/src:/tmp/site
(timeout 200 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_pair_ends.py tests/test_cuda_pairs.py 2>&1 | tail -3) | tee $OUT/tests.log
timeout 100 python3 .carry/p30/pff.py 2>&1 | tee $OUT/pff.log | tail -70
timeout 100 python3 .carry/p30/pfk.py $OUT/pfk.jsonl 4 > $OUT/pfk.log 2>&1; echo "pfk rc=$?"
