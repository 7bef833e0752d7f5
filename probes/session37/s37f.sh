#!/usr/bin/env bash
# session 37 call F (one H200): encode / pairs cuda tests at d2d8fc6 (no flags read); ab36
# (working tree against main c8e64f5, alternated); bench/pairs_full.py old and new against
# main's src and the new bench on the working tree.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s); cat /proc/loadavg
P="env PYTHONPATH=$R/src:/tmp/site"
$P timeout 230 python3 -m pytest -q -p no:cacheprovider tests/test_cuda_encode_pack.py tests/test_encode_pack.py tests/test_cuda_pairs.py tests/test_pairs_inputs.py tests/test_cuda_pair_ends.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"; tail -1 $OUT/tests.log
ab() { env PYTHONPATH=/tmp/site timeout 70 python3 .carry/p36/ab36.py $1 $2 $OUT/ab.jsonl 15 2>&1 | cut -c1-200; }
for round in 1 2; do
  ab $R/src new$round
  ab $R/.carry/t/m37c/src main$round
done
echo "ab t=$(( $(date +%s) - T0 ))"
pf() { env PYTHONPATH=/tmp/site timeout 100 python3 $1/bench/pairs_full.py --repeat 9 --out $OUT/pf_$2.jsonl 2>&1 | tail -1; python3 -c "
import json
for l in open('$OUT/pf_$2.jsonl'):
    r=json.loads(l)
    if r['backend']=='cuda': print('$2', r['params']['mode'], round(r['seconds']*1e3,3), r['runs'])"; }
pf $R/.carry/t/m37c oldbench_main
pf $R/.carry/t/m37c2 newbench_main
pf $R newbench_new
echo "total $(( $(date +%s) - T0 ))"
