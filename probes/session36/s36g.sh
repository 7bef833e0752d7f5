#!/usr/bin/env bash
# session 36 call G (4 x H200): diag36 (which hits/alignments differ between shard plans).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 300 python3 .carry/p36/diag36.py $OUT/diag36.txt 2>&1 | grep -v "^ *$" | cut -c1-600 | tail -40
echo "total $(( $(date +%s) - T0 )) s"
