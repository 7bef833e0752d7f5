#!/usr/bin/env bash
# session 38 call H (one H200): cuda search / locate / stream tests at main (d13c47d+),
# then pairs_full and pairs_call records.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 380 python3 -m pytest -q -p no:cacheprovider --durations=5 tests/test_cuda_search.py tests/test_cuda_locate.py tests/test_cuda_locate_reads.py tests/test_cuda_stream.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -12 $OUT/tests.log
timeout 100 python3 bench/pairs_full.py --repeat 15 --out $OUT/pairs_full.jsonl 2>&1 | tail -1
timeout 90 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy numpy buffer list --repeat 9 --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
python3 -c "
import json
for f in ('$OUT/pairs_full.jsonl', '$OUT/pc.jsonl'):
  for l in open(f):
    r=json.loads(l); p=r['params']; print(r['backend'], p.get('mode'), p.get('input'), round(r['seconds']*1e3,3), round(r['gcups'],1), r.get('gcups_kernel'))"
echo "total t=$(( $(date +%s) - T0 ))"
