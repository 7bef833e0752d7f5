#!/usr/bin/env bash
# session 35 call G (one H100): locate_modes with warm, repeated many-reads rows (8c10f8b)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 300 python3 bench/locate_modes.py --reads 1000 --single 20 --sam-repeat 5 --many-repeat 3 --out $OUT/loc.jsonl 2>&1 | grep -o '"path": "[a-z_0-9]*"\|"mode": "[a-z]*"\|"seconds": [0-9.e-]*\|"runs_s": [^]]*\]\|"ratio_to_score": [0-9.]*' | paste -sd' ' | sed 's/"mode"/\n&/g'
echo "t=$(( $(date +%s) - T0 )) s"
