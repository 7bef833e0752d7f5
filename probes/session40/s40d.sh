#!/usr/bin/env bash
# session 40 call D (one H200): p40j (A/B of the CuPy row's host trims against main's files),
# the cuda tests of the pairs paths, pairs_call's CuPy row.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
timeout 150 python3 .carry/p40/p40j.py 24 2>&1 | tail -4; echo "p40j t=$(( $(date +%s) - T0 ))"
timeout 280 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_pairs_ahead.py tests/test_pairs_inputs.py tests/test_pairs_ahead.py tests/test_cuda_encode_pack.py tests/test_cuda_pairs.py tests/test_pairs.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -2 $OUT/tests.log
timeout 80 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 41 --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
python3 -c "
import json
for l in open('$OUT/pc.jsonl'):
    r=json.loads(l); p=r['params']; print(p.get('input'), r.get('scope'), round(r['seconds']*1e3,3), round(r['gcups'],1), r.get('steps'))"
timeout 60 python3 .carry/p40/p40j.py 12 2>&1 | tail -3; echo "p40j(2) t=$(( $(date +%s) - T0 ))"
