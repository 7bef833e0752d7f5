#!/usr/bin/env bash
# session 31 call A (one GPU): the cuda pairs tests (bitsliced engine moved, s30) and the
# timeline + cProfile of pairs mode full at main
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
export PYTHONPATH=$R/src:/tmp/site
(timeout 200 python3 -m pytest -m cuda -q -p no:cacheprovider tests/test_cuda_pairs.py 2>&1 | tail -4) | tee $OUT/tests.log
timeout 120 python3 .carry/p31/pfk.py $OUT/pfk.jsonl 4 > $OUT/pfk.log 2>&1; echo "pfk rc=$?"
tail -60 $OUT/pfk.log
