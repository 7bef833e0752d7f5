#!/usr/bin/env bash
# session 40 call C (one H200): p40i (statement timeline of the CuPy row, main), pairs_call's CuPy row.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
timeout 100 python3 .carry/p40/p40i.py > $OUT/p40i.txt 2>&1; echo "p40i rc=$? t=$(( $(date +%s) - T0 ))"
timeout 80 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 41 --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
python3 -c "
import json
for l in open('$OUT/pc.jsonl'):
    r=json.loads(l); p=r['params']; print(p.get('input'), r.get('scope'), round(r['seconds']*1e3,3), round(r['gcups'],1), r.get('steps'))"
