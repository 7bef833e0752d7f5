#!/usr/bin/env bash
# session 35 call E (one H100): issue 22/20 rows at main 65c42d7 (PACKED_STAGE_BYTES)
# against 58b37ad (.carry/t/m35) alternated: pairs_call 128 x 4,096 by input form;
# pairs_full (mode full, issue 20); locate_modes (SAM CLI, issue 22) at main.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader; nproc
T0=$(date +%s)
pc() { local tree=$1 tag=$2; (cd $tree && env PYTHONPATH=$tree/src:/tmp/site timeout 120 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs numpy buffer list cupy --repeat 9 --out $OUT/pc_$tag.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.e-]*\|"encode": [0-9.e-]*' | paste -sd' ' | sed 's/"input"/\n&/g'); echo "t=$(( $(date +%s) - T0 )) s"; }
for round in 1 2; do echo "== new $round"; pc $R new$round; echo "== main $round"; pc $R/.carry/t/m35 main$round; done
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf.jsonl 2>&1 | grep -o '"mode": "[a-z]*"\|"seconds": [0-9.e-]*\|"gcups": [0-9.]*\|"backend": "[a-z]*"' | paste -sd' '; echo "t=$(( $(date +%s) - T0 )) s"
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 bench/locate_modes.py --reads 1000 --single 20 --sam-repeat 5 --out $OUT/loc.jsonl 2>&1 | grep -o '"path": "[a-z_]*"\|"mode": "[a-z]*"\|"seconds": [0-9.e-]*\|"gcups": [0-9.]*' | paste -sd' ' | sed 's/"path"/\n&/g'
echo "total $(( $(date +%s) - T0 )) s"
