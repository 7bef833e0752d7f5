#!/usr/bin/env bash
# session 38 call J (one H200): abc38 (the CuPy row, main vs s38-cupy, alternated in one
# process), the cuda pairs_ahead tests, pairs_call's CuPy row alone.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 90 python3 .carry/p38/abc38.py 301 2>&1 | tail -3; echo "abc t=$(( $(date +%s) - T0 ))"
timeout 150 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_pairs_ahead.py tests/test_pairs_ahead.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -2 $OUT/tests.log
timeout 60 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 41 --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
python3 -c "
import json
for l in open('$OUT/pc.jsonl'):
    r=json.loads(l); p=r['params']; print(p.get('input'), round(r['seconds']*1e3,3), round(r['gcups'],1), r.get('gcups_kernel'), r['steps'])"
