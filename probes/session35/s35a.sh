#!/usr/bin/env bash
# prepared in session 34 for session 35 (4-GPU kind): the Dask tasks' results as bytes
# (6c6e919, not yet timed on a device) against 3cc5cb5's tree (.carry/t/b35), and wp35
# (where the trace round's 0.1-0.25 s goes). Run from the repo root at main; ~5 minutes.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv
T0=$(date +%s)
S='"gpus": [0-9]*\|"method": "[a-z-]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
sc() { local tree=$1 lim=$2; shift 2; (cd $tree && env PYTHONPATH=$tree/src:/tmp/site timeout $lim python3 bench/scaling.py "$@" 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'); echo "t=$(( $(date +%s) - T0 )) s"; }
env PYTHONPATH=$R/src:/tmp/site timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_distributed.py -k "trace or cli_workers or cluster or gpu" > /tmp/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 /tmp/tests.log
env PYTHONPATH=$R/src:/tmp/site timeout 100 python3 .carry/p35/wp35.py $OUT/wp35.jsonl 2>&1 | grep -v "^ *$" | tail -8; echo "t=$(( $(date +%s) - T0 )) s"
Q500="--query-file mmseqs2_example_QUERY.fasta.gz"
echo "== main"; sc $R 110 --gpus 1,4 $Q500 --mode full --method dask --method cli --repeat 1 --out $OUT/sc_main.jsonl
echo "== 3cc5cb5"; sc $R/.carry/t/b35 110 --gpus 1,4 $Q500 --mode full --method dask --method cli --repeat 1 --out $OUT/sc_b35.jsonl
echo "total $(( $(date +%s) - T0 )) s"
pc() { local tree=$1 tag=$2; (cd $tree && env CUDA_VISIBLE_DEVICES=0 PYTHONPATH=$tree/src:/tmp/site timeout 120 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs numpy buffer cupy --repeat 7 --out $OUT/pc_$tag.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.e-]*\|"encode": [0-9.e-]*' | paste -sd' ' | sed 's/"input"/\n&/g'); }
for round in 1 2; do echo "== pairs new $round"; pc $R new$round; echo "== pairs main $round"; pc $R/.carry/t/m35 main$round; done
echo "total $(( $(date +%s) - T0 )) s"
