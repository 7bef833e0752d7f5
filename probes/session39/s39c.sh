#!/usr/bin/env bash
# session 39 call C (one H200): cuda lcs tests on the split step only, bench/lcs.py rows,
# the K rule (p39c), the CuPy row's host profile (p39c_prof).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 200 python3 -m pytest -q -x -p no:cacheprovider tests/test_cuda_lcs.py > $OUT/tests.log 2>&1; echo "tests rc=$? t=$(( $(date +%s) - T0 ))"
tail -3 $OUT/tests.log
timeout 60 python3 .carry/p39/p39c.py $OUT/p39c.jsonl > $OUT/p39c.log 2>&1; echo "p39c rc=$? t=$(( $(date +%s) - T0 ))"
cut -c1-200 $OUT/p39c.log
cd bench && timeout 170 python3 lcs.py --backend cuda --sizes 500000x500000 20000000x10000000 --lcs-sizes 20000000x10000000 --repeat 3 --cpu-max-cells 3e11 --out $OUT/lcs.jsonl > $OUT/lcs.log 2>&1; echo "bench lcs rc=$? t=$(( $(date +%s) - T0 ))"; cd ..
cut -c1-300 $OUT/lcs.log | tail -8
timeout 60 python3 .carry/p39/p39c_prof.py $OUT/prof.txt > $OUT/prof.log 2>&1; echo "prof rc=$? t=$(( $(date +%s) - T0 ))"
cat $OUT/prof.log
