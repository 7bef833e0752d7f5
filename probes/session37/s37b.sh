#!/usr/bin/env bash
# session 37 call B (one H200): encode / pairs cuda tests; pf37 (pool fill against
# copy_parallel); pfk36 timeline of mode full; bench/pairs_full.py and bench/pairs_call.py.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
P="env PYTHONPATH=$R/src:/tmp/site"
$P timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_encode_pack.py tests/test_encode_pack.py tests/test_cuda_pairs.py tests/test_pairs_inputs.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests.log
env PYTHONPATH=/tmp/site timeout 90 python3 .carry/p37/pf37.py $OUT/pf.jsonl 11 2>&1 | cut -c1-300; echo "pf t=$(( $(date +%s) - T0 ))"
env PYTHONPATH=/tmp/site timeout 60 python3 .carry/p36/pfk36.py $OUT/pfk.jsonl 5 > $OUT/pfk.txt 2>&1; echo "pfk rc=$? t=$(( $(date +%s) - T0 ))"
grep -o '"total_ms": [0-9.]*' $OUT/pfk.jsonl | tr '\n' ' '; echo
$P timeout 120 python3 bench/pairs_full.py --repeat 9 --out $OUT/pairs_full.jsonl 2>&1 | tail -4 | cut -c1-300; echo "pairs_full t=$(( $(date +%s) - T0 ))"
$P timeout 150 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs numpy buffer list cupy --repeat 7 --staging packed pinned --out $OUT/pc.jsonl 2>&1 | tail -12 | cut -c1-250; echo "pairs_call t=$(( $(date +%s) - T0 ))"
