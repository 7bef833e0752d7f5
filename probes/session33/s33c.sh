#!/usr/bin/env bash
# session 33 call C (one GPU), working tree = main + h-stream (packed staging streamed)
# + h-ypack (pairs_ahead's y encode in ww_ypack): cuda encode-pack, pairs-ahead, pairs
# tests; pairs_call -n 4096 (numpy, buffer, cupy) new vs main alternated; pairs_full new
# vs main; pfk32 kernel timelines of main and h-track32 (the fused one-DP ENDS pass).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
for t in main h-track32; do ln -sfn $R/.carry .carry/t/$t/.carry; done
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 230 python3 -m pytest -m cuda -q -x -p no:cacheprovider tests/test_cuda_encode_pack.py tests/test_cuda_pairs_ahead.py tests/test_cuda_pairs.py tests/test_cuda_pair_ends.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -15
dir() { if [ $1 = new ]; then echo $R; else echo $R/.carry/t/$1; fi; }
for who in new main new main; do D=$(dir $who)
  echo "== pairs_call $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 50 python3 bench/pairs_call.py --backend cuda -n 4096 --repeat 9 --inputs numpy buffer cupy --out $OUT/pc_$who.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.]*\|"steps": {[^}]*}' | paste -sd' ' | sed 's/"input"/\n&/g')
done; echo "t=$(( $(date +%s) - T0 ))"
S='"backend": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]'
for who in new main new; do D=$(dir $who)
  echo "== pairs_full $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 60 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*\|differ.*\|Error.*" | grep -v '"cpu"' | paste -sd' ' | sed 's/"backend"/\n&/g')
done; echo "t=$(( $(date +%s) - T0 ))"
for who in main h-track32 new; do D=$(dir $who)
  (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 60 python3 $R/.carry/p32/pfk32.py $OUT/pfk_$who.jsonl 5 > $OUT/pfk_$who.log 2>&1; echo "pfk $who rc=$?")
done
echo "total $(( $(date +%s) - T0 )) s"
