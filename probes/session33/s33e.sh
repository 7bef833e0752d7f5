#!/usr/bin/env bash
# session 33 call E (one GPU), working tree = main + h-stream (packed staging streamed,
# slots aligned): cuda encode-pack tests; pairs_call numpy/buffer and pairs_full against
# main alternated; pk33 (the streamed staging's timeline).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
ln -sfn $R/.carry .carry/t/main/.carry
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 60 python3 -m pytest -m cuda -q -x -p no:cacheprovider tests/test_cuda_encode_pack.py > $OUT/tests.log 2>&1; echo "tests rc=$? $(( $(date +%s) - T0 )) s"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -5
(env PYTHONPATH=$R/src:/tmp/site timeout 40 python3 .carry/p33/pk33.py > $OUT/pk33.log 2>&1; echo "pk33 rc=$?"; cut -c1-400 $OUT/pk33.log)
dir() { if [ $1 = new ]; then echo $R; else echo $R/.carry/t/$1; fi; }
for who in new main new main; do D=$(dir $who)
  echo "== pairs_call $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 40 python3 bench/pairs_call.py --backend cuda -n 4096 --repeat 9 --inputs numpy buffer --out $OUT/pc_$who.jsonl 2>&1 | grep -o '"input": "[a-z]*"\|"seconds": [0-9.]*\|"encode": [0-9.e-]*' | paste -sd' ' | sed 's/"input"/\n&/g')
done; echo "t=$(( $(date +%s) - T0 ))"
S='"backend": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]'
for who in new main new main; do D=$(dir $who)
  echo "== pairs_full $who"; (cd $D && env PYTHONPATH=$D/src:/tmp/site timeout 40 python3 bench/pairs_full.py --repeat 5 --out $OUT/pf_$who.jsonl 2>&1 | grep -o "$S\|identical.*\|differ.*\|Error.*" | grep -v '"cpu"' | paste -sd' ' | sed 's/"backend"/\n&/g')
done
echo "total $(( $(date +%s) - T0 )) s"
