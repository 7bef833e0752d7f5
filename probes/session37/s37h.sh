#!/usr/bin/env bash
# session 37 call H (one H200): records on main: bench/pairs_full.py, bench/pairs_call.py.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s); cat /proc/loadavg
P="env PYTHONPATH=$R/src:/tmp/site"
$P timeout 150 python3 bench/pairs_full.py --repeat 15 --out $OUT/pairs_full.jsonl 2>&1 | tail -1
python3 -c "
import json
for l in open('$OUT/pairs_full.jsonl'):
    r=json.loads(l); print(r['backend'], r['params']['mode'], round(r['seconds']*1e3,3), round(r['gcups'],1), r['runs'])"
echo "pairs_full t=$(( $(date +%s) - T0 ))"
$P timeout 200 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs numpy buffer list cupy --repeat 9 --staging packed pinned --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
python3 -c "
import json
for l in open('$OUT/pc.jsonl'):
    r=json.loads(l); p=r['params']; print(p.get('input'), p.get('staging'), round(r['seconds']*1e3,3), round(r['gcups'],1), r.get('gcups_kernel'))"
