#!/usr/bin/env bash
# session 37 call D (one H200): encode tests; enc37 (encode_sides steps); ab36 (working tree
# 153cef4 against main 3985b90 in .carry/t/m37b, alternated); pairs_full / pairs_call records.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s); cat /proc/loadavg
P="env PYTHONPATH=$R/src:/tmp/site"
$P timeout 100 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_encode_pack.py tests/test_encode_pack.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -1 $OUT/tests.log
env PYTHONPATH=/tmp/site timeout 60 python3 .carry/p37/enc37.py $OUT/enc.jsonl 2>&1 | cut -c1-700
ab() { env PYTHONPATH=/tmp/site timeout 70 python3 .carry/p36/ab36.py $1 $2 $OUT/ab.jsonl 15 2>&1 | cut -c1-200; }
for round in 1 2; do
  ab $R/src new$round
  ab $R/.carry/t/m37b/src main$round
done
echo "ab t=$(( $(date +%s) - T0 ))"
$P timeout 120 python3 bench/pairs_full.py --repeat 9 --out $OUT/pairs_full.jsonl 2>&1 | tail -1 | cut -c1-300; echo "pairs_full t=$(( $(date +%s) - T0 ))"
$P timeout 150 python3 bench/pairs_call.py --backend cuda -m 128 -n 4096 --inputs numpy buffer list cupy --repeat 7 --staging packed pinned --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
cat /proc/loadavg
