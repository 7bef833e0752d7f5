#!/usr/bin/env bash
# session 36 call B (4 x H200): pft36 (GPU 0: pairs mode full host timeline), wp36 (Dask scan
# round pieces, 4 workers then 1), scaling in-process + streamed mode full 1 vs 4 GPUs.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env CUDA_VISIBLE_DEVICES=0 PYTHONPATH=$R/src:/tmp/site timeout 90 python3 .carry/p36/pft36.py $OUT/pft36.txt; echo "pft rc=$? t=$(( $(date +%s) - T0 ))"
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 .carry/p36/wp36.py $OUT/wp36.jsonl 2>&1 | grep -v "^ *$" | cut -c1-400 | tail -12; echo "wp rc=$? t=$(( $(date +%s) - T0 ))"
S='"gpus": [0-9]*\|"method": "[a-z-]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|"runs": \[[0-9., ]*\]\|Error.*'
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 bench/scaling.py --gpus 1,4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method in-process --method streamed --repeat 2 --out $OUT/sc.jsonl 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'
echo "total $(( $(date +%s) - T0 )) s"
