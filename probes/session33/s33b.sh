#!/usr/bin/env bash
# session 33 call B (one GPU), working tree = h-both (h-track32 + h-rows32 on main):
# cuda pair-ends, pairs, traceback, render tests; bench/pairs_full.py alternated between
# main, both, rows alone, track alone; bench/pairs_call.py -n 4096 main vs both.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
for t in main h-rows32 h-track32; do ln -sfn $R/.carry .carry/t/$t/.carry; done
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 240 python3 -m pytest -m cuda -q -x -p no:cacheprovider tests/test_cuda_pair_ends.py tests/test_cuda_pairs.py tests/test_cuda_traceback.py tests/test_cuda_render.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -15
S='"backend": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]\|"gcups": [0-9.]*'
pf() { local who=$1 D; if [ $who = both ]; then D=$R; else D=$R/.carry/t/$who; fi
  echo "== $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 60 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*\|differ.*\|Error.*" | grep -v '"cpu"' | paste -sd' ' | sed 's/"backend"/\n&/g'); }
for who in main both h-rows32 h-track32 main both; do pf $who; echo "t=$(( $(date +%s) - T0 ))"; done
for who in main both main both; do
  if [ $who = both ]; then D=$R; else D=$R/.carry/t/$who; fi
  echo "== pairs_call $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 50 python3 bench/pairs_call.py --backend cuda -n 4096 --repeat 9 --inputs numpy cupy --out $OUT/pc_$who.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.]*\|"gcups": [0-9.]*\|"scope": "[a-z]*"' | paste -sd' ' | sed 's/"scope"/\n&/g')
done
echo "total $(( $(date +%s) - T0 )) s"
