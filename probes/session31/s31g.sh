#!/usr/bin/env bash
# session 31 call G (one GPU): h-dpx31 (tb_cell / tb_path's H by DPX): cuda traceback
# tests, kernel times (pfk31) against main 7159efb alternated
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/bm/src:/tmp/site"
env $M timeout 150 python3 -m pytest -m cuda -q -p no:cacheprovider tests/test_cuda_traceback.py > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "passed|failed|FAILED|Error" $OUT/tests.log | tail -8
for who in new base new base; do
  if [ $who = new ]; then P=$M; D=$R; else P=$B; D=$R/.carry/bm; fi
  (cd $D && env $P timeout 50 python3 $R/.carry/p31/pfk31.py $OUT/pfk_$who.jsonl 5 > /dev/null 2>&1)
done
python3 - $OUT <<'PY'
import json, sys, statistics as st
for who in ("new", "base"):
    ka, ks, tot = [], [], []
    for l in open(f"{sys.argv[1]}/pfk_{who}.jsonl"):
        r = json.loads(l)
        if r["run"] == 0: continue
        tot.append(r["total_ms"])
        for n, at, dur, _ in r["kernels"]:
            if n == "tb_align": ka.append(dur)
    print(who, "tb_align ms", sorted(ka), "call ms median", st.median(tot), sorted(tot))
PY
