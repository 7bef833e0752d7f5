#!/usr/bin/env bash
# session 38 call A (one H200): CUDA tests of e9ebb15/dfb4cc5/2dc2acf, then pairs_full.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s); cat /proc/loadavg
P="env PYTHONPATH=$R/src:/tmp/site"
$P timeout 420 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_encode_pack.py tests/test_encode_pack.py tests/test_cuda_pairs.py tests/test_pairs_inputs.py tests/test_concurrency.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -5 $OUT/tests.log
$P timeout 120 python3 bench/pairs_full.py --repeat 15 --out $OUT/pairs_full.jsonl 2>&1 | tail -1
python3 -c "
import json
for l in open('$OUT/pairs_full.jsonl'):
    r=json.loads(l); print(r['backend'], r['params']['mode'], round(r['seconds']*1e3,3), round(r['gcups'],1), r['runs'])"
echo "total t=$(( $(date +%s) - T0 ))"
