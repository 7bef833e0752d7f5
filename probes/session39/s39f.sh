#!/usr/bin/env bash
# session 39 call F (one H200): the LCS tests at the branch head (cuda, CPU, batch, CLI,
# concurrency and threads tests that touch lcs), no -x.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
git log --oneline -1 2>/dev/null | cut -c1-60
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_lcs.py tests/test_lcs.py tests/test_lcs_batch.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -3 $OUT/tests.log
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_cli.py tests/test_concurrency.py tests/test_threads.py tests/test_bench_cli.py -k "lcs or LCS" > $OUT/tests2.log 2>&1; echo "tests2 rc=$? t=$(( $(date +%s) - T0 ))"
tail -3 $OUT/tests2.log
