#!/usr/bin/env bash
# session 35 call C (one H100): PACKED_STAGE_BYTES (working tree) against main 58b37ad
# (.carry/t/m35): cuda tests, bench/pairs_call.py alternated; pk35b; wc35 (h-warmcli).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 200 python3 -m pytest -q -p no:cacheprovider -x tests/test_cuda_encode_pack.py tests/test_cuda_pairs_ahead.py tests/test_pairs_inputs.py tests/test_encode_pack.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -2 $OUT/tests.log
pc() { local tree=$1 tag=$2 n=$3; (cd $tree && env PYTHONPATH=$tree/src:/tmp/site timeout 120 python3 bench/pairs_call.py --backend cuda -m 128 -n $n --inputs numpy buffer list cupy --repeat 7 --out $OUT/pc_$tag.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.e-]*\|"gcups": [0-9.]*\|"encode": [0-9.e-]*' | paste -sd' ' | sed 's/"input"/\n&/g'); echo "t=$(( $(date +%s) - T0 )) s"; }
for round in 1 2; do
  echo "== new $round"; pc $R new$round 4096
  echo "== main $round"; pc $R/.carry/t/m35 main$round 4096
done
echo "== new n1024"; pc $R new1024 1024
echo "== main n1024"; pc $R/.carry/t/m35 main1024 1024
env PYTHONPATH=$R/src:/tmp/site timeout 60 python3 .carry/p35/pk35b.py $OUT/pk35b.jsonl 2>&1 | cut -c1-300; echo "t=$(( $(date +%s) - T0 )) s"
timeout 220 python3 .carry/p35/wc35.py $OUT/wc35.jsonl $R/.carry/t/m35/src $R/.carry/t/wc35/src 2>&1 | tail -20
echo "total $(( $(date +%s) - T0 )) s"
