#!/usr/bin/env bash
# session 34 call G (4 GPUs): h-dask3 (trace-only second round, long-kernel ends, packed task arguments) against main
# f359157 (.carry/t/main). Tests; dk34 (Dask full, 4 GPUs: round 1 and 2 clocks); scaling dask and cli (--workers) full 1,4 for both trees.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
T0=$(date +%s)
S='"gpus": [0-9]*\|"method": "[a-z-]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
sc() { local tree=$1 lim=$2; shift 2; (cd $tree && env PYTHONPATH=$tree/src:/tmp/site timeout $lim python3 bench/scaling.py "$@" 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'); echo "t=$(( $(date +%s) - T0 )) s"; }
env PYTHONPATH=$R/src:/tmp/site timeout 90 python3 -m pytest -q -p no:cacheprovider tests/test_distributed.py -k "trace or cli_workers or cluster or gpu" > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests.log
env PYTHONPATH=$R/src:/tmp/site timeout 45 python3 .carry/p34/dk34.py $OUT/dk.jsonl 2>&1 | grep -v "^ *$" | tail -12; echo "t=$(( $(date +%s) - T0 )) s"
Q500="--query-file mmseqs2_example_QUERY.fasta.gz"
echo "== h-dask3"; sc $R 110 --gpus 1,4 $Q500 --mode full --method dask --method cli --repeat 1 --out $OUT/sc_h.jsonl
echo "== main"; sc $R/.carry/t/main 110 --gpus 1,4 $Q500 --mode full --method dask --method cli --repeat 1 --out $OUT/sc_main.jsonl
echo "total $(( $(date +%s) - T0 )) s"
