#!/usr/bin/env bash
# session 36 call H (4 x H200): main 15ab37f (the pick's index field by the largest index):
# diag36 again (shard plans against one GPU), the distributed tests on 4 GPUs.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 .carry/p36/diag36.py $OUT/diag36.txt 2>&1 | grep -v "^ *$" | cut -c1-400 | tail -12
echo "t=$(( $(date +%s) - T0 )) s"
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_distributed.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/tests.log
