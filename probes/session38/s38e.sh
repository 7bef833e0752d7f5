#!/usr/bin/env bash
# session 38 call E (one H200): A/B old (2dc2acf) vs new tree (a0a20f2), alternated
# processes; pairs_call's CuPy row alone.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=/tmp/site
for i in 1 2 3; do
  timeout 60 python3 .carry/p38/ab38.py $R/.carry/t/m38/src old 41 2>&1 | tail -1
  timeout 60 python3 .carry/p38/ab38.py $R/src new 41 2>&1 | tail -1
done
echo "ab t=$(( $(date +%s) - T0 ))"
export PYTHONPATH=$R/src:/tmp/site
timeout 100 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 41 --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
python3 -c "
import json
for l in open('$OUT/pc.jsonl'):
    r=json.loads(l); p=r['params']; print(p.get('input'), round(r['seconds']*1e3,3), round(r['gcups'],1), r.get('gcups_kernel'), r['runs'][:5], r['runs'][-3:])"
