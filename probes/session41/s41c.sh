#!/usr/bin/env bash
# session 41 call C (one H200): cuda tests of the pairs paths; A/B of ww_ypack_raw in one
# process (p41a); pairs_call's CuPy row at main 9187526 (.carry/old41) and now, alternated.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
NEW=$R/src:/tmp/site
OLD=$R/.carry/old41/src:/tmp/site
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
lscpu | grep -m1 "Model name"
T0=$(date +%s)
PYTHONPATH=$NEW timeout 240 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_pairs_ahead.py tests/test_pairs_ahead.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -3 $OUT/tests.log
PYTHONPATH=$NEW timeout 60 python3 .carry/p41/p41b.py 2>&1 | tail -4; echo "p41b t=$(( $(date +%s) - T0 ))"
PYTHONPATH=$NEW timeout 120 python3 .carry/p41/p41a.py 12 2>&1 | tail -4; echo "p41a t=$(( $(date +%s) - T0 ))"
for arm in old new old new old new; do
  P=$OLD; [ $arm = new ] && P=$NEW
  PYTHONPATH=$P timeout 60 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 41 --out $OUT/pc_$arm.jsonl > /dev/null 2>&1
  echo "pairs_call $arm rc=$? t=$(( $(date +%s) - T0 ))"
done
for arm in old new; do python3 -c "
import json
for l in open('$OUT/pc_$arm.jsonl'):
    r=json.loads(l); p=r['params']; print('$arm', p.get('input'), round(r['seconds']*1e3,3), round(r['gcups'],1), r.get('gcups_kernel'), r.get('steps'))"; done
PYTHONPATH=$NEW timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_pairs.py tests/test_pairs_inputs.py > $OUT/tests2.log 2>&1; echo "tests2 rc=$? t=$(( $(date +%s) - T0 ))"
tail -3 $OUT/tests2.log
