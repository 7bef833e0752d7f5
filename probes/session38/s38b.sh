#!/usr/bin/env bash
# session 38 call B (one H200): timelines of pairs mode full (NumPy) and the CuPy score row.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
cd $R && env PYTHONPATH=$R/src:/tmp/site timeout 300 python3 .carry/p38/pfk38.py $OUT/pfk38.jsonl 7 > $OUT/pfk38.txt 2>&1; echo rc=$?
grep total_ms $OUT/pfk38.txt | cut -c1-200
