#!/usr/bin/env bash
# session 40 call B (4 x H200): issue 25 at main: the distributed tests on 4 GPUs; Dask and
# `warpalign search --workers N` mode full on 1, 2, 4 GPUs; wp40 (Dask shards, gc pauses).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
T0=$(date +%s)
S='"gpus": [0-9]*\|"method": "[a-z-]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|"runs": \[[0-9., ]*\]\|Error.*'
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 -m pytest -q -p no:cacheprovider tests/test_distributed.py > $OUT/tests_dist.log 2>&1; echo "dist tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests_dist.log
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 bench/scaling.py --gpus 1,2,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method dask --repeat 2 --out $OUT/sc_dask.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'; echo "t=$(( $(date +%s) - T0 )) s"
env PYTHONPATH=$R/src:/tmp/site timeout 170 python3 bench/scaling.py --gpus 1,2,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method cli --repeat 1 --out $OUT/sc_cli.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'; echo "t=$(( $(date +%s) - T0 )) s"
env PYTHONPATH=$R/src:/tmp/site timeout 100 python3 .carry/p40/wp40.py $OUT/wp40.jsonl 2>&1 | grep -v "^ *$" | cut -c1-900 | tail -5; echo "wp rc=$? t=$(( $(date +%s) - T0 )) s"
echo "total $(( $(date +%s) - T0 )) s"
