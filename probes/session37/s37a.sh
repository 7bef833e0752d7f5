#!/usr/bin/env bash
# session 37 call A (one H200): cuda traceback / kernel cache / encode pack tests; pk37 (pool
# against pack_parallel, one process); ab36 (working tree against 89507ca in .carry/t/m37).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 280 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_traceback.py tests/test_kernel_cache.py tests/test_cuda_encode_pack.py tests/test_encode_pack.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -3 $OUT/tests.log
env PYTHONPATH=/tmp/site timeout 150 python3 .carry/p37/pk37.py $OUT/pk.jsonl 15 2>&1 | cut -c1-400; echo "pk t=$(( $(date +%s) - T0 ))"
ab() { env PYTHONPATH=/tmp/site timeout 70 python3 .carry/p36/ab36.py $1 $2 $OUT/ab.jsonl 15 2>&1 | cut -c1-200; }
for round in 1 2; do
  ab $R/src new$round
  ab $R/.carry/t/m37/src main$round
done
echo "total $(( $(date +%s) - T0 )) s"
