#!/usr/bin/env bash
# session 39 call E (one H200): the cuda and CPU lcs tests at the branch head, bench/lcs.py
# (LLCS and full LCS of 20 M x 10 M, 500 K^2 with CPU and rapidfuzz baselines, E. coli).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_lcs.py tests/test_lcs.py tests/test_lcs_batch.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -3 $OUT/tests.log
cd bench && timeout 250 python3 lcs.py --backend cuda --sizes 500000x500000 20000000x10000000 --lcs-sizes 20000000x10000000 --ecoli --ecoli-lcs --repeat 3 --cpu-max-cells 3e11 --out $OUT/lcs.jsonl > $OUT/lcs.log 2>&1; echo "bench lcs rc=$? t=$(( $(date +%s) - T0 ))"; cd ..
python3 -c "
import json
for l in open('$OUT/lcs.jsonl'):
    r=json.loads(l); p=r['params']
    print(r['scope'], r['method'][:34], p['a_len'], p['b_len'], r['seconds'], r['gcups'], p.get('mode'), p.get('kernel_gcups'), p.get('K'), p.get('total_s'), p.get('lcs_len') or p.get('llcs'))"
