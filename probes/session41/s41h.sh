#!/usr/bin/env bash
# session 41 call H (one H200): the SAM CLI row and many-reads mode full with/without the
# next score at main 9187526 (.carry/old41) and now, alternated (p41h); the cuda locate tests.
set -u
R=$PWD
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
lscpu | grep -m1 "Model name"
T0=$(date +%s)
for arm in old new old new; do
  P=$R/.carry/old41/src:/tmp/site; [ $arm = new ] && P=$R/src:/tmp/site
  echo "== $arm"; PYTHONPATH=$P timeout 80 python3 .carry/p41/p41h.py 2>&1 | tail -9
  echo "t=$(( $(date +%s) - T0 ))"
done
PYTHONPATH=$R/src:/tmp/site timeout 250 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_locate.py tests/test_cuda_locate_reads.py tests/test_cuda_locate_windows.py tests/test_locate_lazy.py tests/test_sam_cli.py > /tmp/lt.log 2>&1; echo "locate tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -4 /tmp/lt.log
