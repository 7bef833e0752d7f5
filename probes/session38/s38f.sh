#!/usr/bin/env bash
# session 38 call F (one H200): ord38 (the CuPy row after a NumPy row), cuda encode tests.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 120 python3 .carry/p38/ord38.py 2>&1 | tail -9
echo "ord t=$(( $(date +%s) - T0 ))"
timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_encode_pack.py tests/test_cuda_pair_ends.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -2 $OUT/tests.log
