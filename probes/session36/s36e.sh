#!/usr/bin/env bash
# session 36 call E (one H200): cuda tests touched by the loader memo; bench/pairs_call.py
# (n 4,096, every input form) main cf89c52 (.carry/t/m36) against the working tree,
# alternated; bench/pairs_full.py (mode full, CPU baseline) on the working tree.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 -m pytest -q -p no:cacheprovider tests/test_kernel_cache.py tests/test_cuda_render.py --deselect tests/test_kernel_cache.py::test_a_device_search_path_loads_no_numba > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests.log
pc() { local tree=$1 tag=$2; (cd $tree && env PYTHONPATH=$tree/src:/tmp/site timeout 120 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs numpy buffer list cupy --repeat 7 --out $OUT/pc_$tag.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.e-]*\|"gcups": [0-9.]*' | paste -sd' ' | sed 's/"input"/\n&/g'); echo "t=$(( $(date +%s) - T0 )) s"; }
for round in 1 2; do
  echo "== new $round"; pc $R new$round
  echo "== main $round"; pc $R/.carry/t/m36 main$round
done
env PYTHONPATH=$R/src:/tmp/site timeout 120 python3 bench/pairs_full.py --repeat 9 --out $OUT/pairs_full.jsonl 2>&1 | grep -o '"mode": "[a-z]*"\|"backend": "[a-z]*"\|"seconds": [0-9.e-]*\|"gcups": [0-9.]*\|identical.*' | paste -sd' '
echo "total $(( $(date +%s) - T0 )) s"
