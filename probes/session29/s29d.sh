#!/usr/bin/env bash
# session 29 call D (4 GPUs): tb_end_rows<R> and the end cells' launch order: cuda tests,
# the END_ROWS sweep (rows29), then 4-GPU full A/B: main at R=4 against 146f986, alternated
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/b29/src:/tmp/site"
ln -sfn $R/.carry .carry/b29/.carry
S='"gpus": [0-9]*\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [][0-9., ]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
(env $M timeout 220 python3 -m pytest -m cuda -q -p no:cacheprovider -x tests/test_cuda_traceback.py tests/test_cuda_search.py tests/test_concurrency.py 2>&1 | tail -6) | tee $OUT/tests.log
env $M timeout 150 python3 .carry/rows29.py $OUT/rows.jsonl 4 1,2,4,8 3 2>&1 | tail -16
A="bench/scaling.py --gpus 4 --query-file mmseqs2_example_QUERY.fasta.gz --mode full --method in-process --repeat 3"
env $M timeout 50 python3 .carry/withrows.py 4 $A --out $OUT/ab_main.jsonl 2>&1 | grep -o "$S" | paste -sd' '
cd $R/.carry/b29; env $B timeout 50 python3 bench/scaling.py ${A#bench/scaling.py } --out $OUT/ab_base.jsonl 2>&1 | grep -o "$S" | paste -sd' '; cd $R
env $M timeout 50 python3 .carry/withrows.py 4 $A --out $OUT/ab_main.jsonl 2>&1 | grep -o "$S" | paste -sd' '
cd $R/.carry/b29; env $B timeout 50 python3 bench/scaling.py ${A#bench/scaling.py } --out $OUT/ab_base.jsonl 2>&1 | grep -o "$S" | paste -sd' '; cd $R
