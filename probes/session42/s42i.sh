#!/usr/bin/env bash
# session 42 call I (4 x H200): laid_flat/with_ends fold: the cuda stream/search tests and
# one p42f.py run (its digests against call F's 07a6d448e36db9b8)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
T0=$(date +%s)
timeout 200 python3 -m pytest -q -x -m cuda -p no:cacheprovider tests/test_cuda_stream.py tests/test_cuda_search.py > $OUT/tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - T0 ))"; tail -2 $OUT/tests.txt
timeout 80 python3 .carry/p42/p42f.py new > $OUT/ab.jsonl 2> $OUT/ab.err; echo "p42f rc=$? t=$(( $(date +%s) - T0 ))"; cut -c1-400 $OUT/ab.jsonl
