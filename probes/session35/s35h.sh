#!/usr/bin/env bash
# session 35 call H (one H100): the cuda locate tests at h-upload (windows' uploads through
# transfer.upload_pinned)
set -u
R=$PWD
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 250 python3 -m pytest -q -p no:cacheprovider -x tests/test_cuda_locate_windows.py tests/test_cuda_locate.py tests/test_cuda_locate_reads.py 2>&1 | tail -4
echo "t=$(( $(date +%s) - T0 )) s"
