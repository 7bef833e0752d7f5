#!/usr/bin/env bash
# session 33 call D (one GPU), working tree = h-track32 (the fused mode full pass as one
# DP, on main): cuda pair-ends tests; pairs_full and pairs_call (numpy, cupy) alternated
# with main; pk33 (h-stream's streamed staging, why it lost in call C).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
for t in main h-stream; do ln -sfn $R/.carry .carry/t/$t/.carry; done
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 100 python3 -m pytest -m cuda -q -x -p no:cacheprovider tests/test_cuda_pair_ends.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -5
dir() { if [ $1 = new ]; then echo $R; else echo $R/.carry/t/$1; fi; }
S='"backend": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]'
for who in new main new main new main; do D=$(dir $who)
  echo "== pairs_full $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 50 python3 bench/pairs_full.py --repeat 7 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*\|differ.*\|Error.*" | grep -v '"cpu"' | paste -sd' ' | sed 's/"backend"/\n&/g')
done; echo "t=$(( $(date +%s) - T0 ))"
for who in new main new main; do D=$(dir $who)
  echo "== pairs_call $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 40 python3 bench/pairs_call.py --backend cuda -n 4096 --repeat 9 --inputs numpy cupy --out $OUT/pc_$who.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.]*' | paste -sd' ' | sed 's/"input"/\n&/g')
done; echo "t=$(( $(date +%s) - T0 ))"
(cd .carry/t/h-stream && env PYTHONPATH=$R/.carry/t/h-stream/src:/tmp/site timeout 60 python3 $R/.carry/p33/pk33.py > $OUT/pk33.log 2>&1; echo "pk33 rc=$?"; cat $OUT/pk33.log | cut -c1-700)
echo "total $(( $(date +%s) - T0 )) s"
