#!/usr/bin/env bash
# session 33 call A (4 GPUs): issue 25 at main. Tests on 4 GPUs, then bench/scaling.py
# (500 queries in-process 1,2,4 score+full; 20 queries 1,4; dask + cli 1,4; streamed at
# the per-GPU limit 1,4), then the CLI's profile with 1 and 4 GPUs visible.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
T0=$(date +%s)
S='"gpus": [0-9]*\|"mode": "[a-z]*"\|"method": "[a-z-]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
sc() { local lim=$1; shift; env $M timeout $lim python3 bench/scaling.py "$@" 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'; echo "t=$(( $(date +%s) - T0 )) s"; }
env $M timeout 120 python3 -m pytest -m cuda -q -p no:cacheprovider tests/test_concurrency.py tests/test_cuda_stream.py tests/test_cuda_search.py -k "threads or device" > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/tests.log
Q500="--query-file mmseqs2_example_QUERY.fasta.gz"
sc 150 --gpus 1,2,4 $Q500 --mode score --mode full --method in-process --repeat 2 --out $OUT/sc_inproc.jsonl
sc 110 --gpus 1,4 $Q500 --mode full --method dask --method cli --repeat 1 --out $OUT/sc_dask_cli.jsonl
sc 80 --gpus 1,4 $Q500 --mode full --method streamed --streamed-limit gpu --repeat 1 --out $OUT/sc_streamed.jsonl
env $M timeout 120 python3 .carry/p33/cliprof33.py $OUT/prof > $OUT/cliprof.txt 2>&1; echo "cliprof rc=$? t=$(( $(date +%s) - T0 )) s"; grep -E "^(warm|1|4) " $OUT/cliprof.txt
sc 70 --gpus 1,4 --queries 20 --mode score --mode full --method in-process --repeat 3 --out $OUT/sc_20.jsonl
echo "total $(( $(date +%s) - T0 )) s"
