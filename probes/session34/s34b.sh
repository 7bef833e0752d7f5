#!/usr/bin/env bash
# session 34 call B (4 GPUs): h34 (split_ids blocks + gathers on the device threads; Dask
# second round) against main dfd6afa (.carry/t/main). Tests on 4 GPUs, then
# bench/scaling.py 500 queries mode full: dask, cli (--workers), cli-gpus; 1 and 4 GPUs.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
T0=$(date +%s)
S='"gpus": [0-9]*\|"method": "[a-z-]*"\|"seconds": [0-9.]*\|"speedup": [0-9.]*\|same_hits": [a-z]*\|Error.*'
sc() { local tree=$1 lim=$2; shift 2; (cd $tree && env PYTHONPATH=$tree/src:/tmp/site timeout $lim python3 bench/scaling.py "$@" 2>&1 | grep -o "$S" | paste -sd' ' | sed 's/"gpus"/\n&/g'); echo "t=$(( $(date +%s) - T0 )) s"; }
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_distributed.py tests/test_search.py > $OUT/tests_dist.log 2>&1; echo "dist tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests_dist.log
env PYTHONPATH=$R/src:/tmp/site timeout 120 python3 -m pytest -m cuda -q -p no:cacheprovider tests/test_concurrency.py tests/test_cuda_search.py -k "threads or device or multi or pairs" > $OUT/tests_cuda.log 2>&1; echo "cuda tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests_cuda.log
Q500="--query-file mmseqs2_example_QUERY.fasta.gz"
for round in 1; do
  echo "== h34"; sc $R 150 --gpus 1,4 $Q500 --mode full --method dask --method cli --method cli-gpus --repeat 1 --out $OUT/sc_h34.jsonl
  echo "== main"; sc $R/.carry/t/main 150 --gpus 1,4 $Q500 --mode full --method dask --method cli --method cli-gpus --repeat 1 --out $OUT/sc_main.jsonl
done
echo "total $(( $(date +%s) - T0 )) s"
