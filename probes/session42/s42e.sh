#!/usr/bin/env bash
# session 42 call E (4 x H200): tl42s.py (the streamed 4-GPU full search: idle gaps, host after the last chunk)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
T0=$(date +%s)
timeout 300 python3 .carry/p42/tl42s.py $OUT/tl42s.json > $OUT/tl42s.txt 2>&1; echo "rc=$? t=$(( $(date +%s) - T0 ))"
grep -v "^ *$" $OUT/tl42s.txt | cut -c1-160 | head -120
