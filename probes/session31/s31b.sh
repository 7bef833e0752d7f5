#!/usr/bin/env bash
# session 31 call B (one GPU): glibc M_TOP_PAD at import (WARPALIGN_MALLOC_TOP_PAD=0: off)
# against the default, alternated: pairs mode full, pairs from cupy/numpy/buffer, locate SAM
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
export PYTHONPATH=$R/src:/tmp/site
S='"text_read": [0-9.]*\|"backend": "[a-z]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]\|"gcups": [0-9.]*'
for pad in 0 d 0 d; do
  if [ $pad = 0 ]; then export WARPALIGN_MALLOC_TOP_PAD=0; else unset WARPALIGN_MALLOC_TOP_PAD; fi
  echo "== pad $pad pairs_full"; timeout 80 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$pad.jsonl 2>&1 | grep -o "$S\|identical.*" | paste -sd' ' | sed 's/"backend"/\n&/g'
  echo "== pad $pad pairs_call"; timeout 60 python3 bench/pairs_call.py --backend cuda -n 4096 --repeat 9 --inputs cupy numpy buffer --out $OUT/pc_$pad.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.]*\|"gcups": [0-9.]*\|"scope": "[a-z]*"' | paste -sd' ' | sed 's/"scope"/\n&/g'
done
for pad in 0 d; do
  if [ $pad = 0 ]; then export WARPALIGN_MALLOC_TOP_PAD=0; else unset WARPALIGN_MALLOC_TOP_PAD; fi
  echo "== pad $pad locate_modes"; timeout 100 python3 bench/locate_modes.py --reads 1000 --single 20 --sam-repeat 5 --out $OUT/loc_$pad.jsonl 2>&1 | tail -3
  grep -o '"path": "[a-z_0-9]*"\|"seconds": [0-9.]*\|"gcups": [0-9.]*' $OUT/loc_$pad.jsonl | paste -sd' ' | sed 's/"path"/\n&/g'
done
unset WARPALIGN_MALLOC_TOP_PAD
timeout 60 python3 .carry/p31/pfk.py $OUT/pfk.jsonl 3 > $OUT/pfk.log 2>&1; echo "pfk rc=$?"
grep '"full"' $OUT/pfk.log | tail -2
