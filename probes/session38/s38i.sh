#!/usr/bin/env bash
# session 38 call I (2 x H200): the two-device tests, dev1.py (mode full on device 1 and
# two threads a device at once).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 200 python3 -m pytest -q -p no:cacheprovider "tests/test_cuda_traceback.py::test_one_engine_on_two_devices" "tests/test_cuda_search.py::test_two_devices_identical" tests/test_concurrency.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -3 $OUT/tests.log
timeout 150 python3 .carry/p38/dev1.py 2>&1 | tail -3; echo "dev1 rc=$? t=$(( $(date +%s) - T0 ))"
