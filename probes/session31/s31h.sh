#!/usr/bin/env bash
# session 31 call H (one GPU): main (largest code given to align_pairs_table) vs 96cfd18
# timelines alternated, pairs mode full once with the CPU comparison, cProfile of the CuPy row
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
M="PYTHONPATH=$R/src:/tmp/site"
B="PYTHONPATH=$R/.carry/bm/src:/tmp/site"
for who in new base new base; do
  if [ $who = new ]; then P=$M; D=$R; else P=$B; D=$R/.carry/bm; fi
  (cd $D && env $P timeout 50 python3 $R/.carry/p31/pfk31.py $OUT/pfk_$who.jsonl 5 > /dev/null 2>&1)
done
python3 - $OUT <<'PY'
import json, sys, statistics as st
for who in ("new", "base"):
    tot, chk = [], []
    for l in open(f"{sys.argv[1]}/pfk_{who}.jsonl"):
        r = json.loads(l)
        if r["run"] == 0: continue
        tot.append(r["total_ms"])
        chk.append(sum(d for n, a, d in r["host"] if n == "_check_codes"))
    print(who, "call ms median", st.median(tot), sorted(tot), "_check_codes ms", round(sum(chk), 3))
PY
S='"text_read": [0-9.]*\|"backend": "[a-z]*"\|"mode": "[a-z]*"\|"seconds": [0-9.]*\|"runs": [^]]*\]\|"gcups": [0-9.]*'
env $M timeout 60 python3 bench/pairs_full.py --repeat 3 --out $OUT/pf_new.jsonl 2>&1 | grep -o "$S\|identical.*" | paste -sd' ' | sed 's/"backend"/\n&/g'
env $M timeout 60 python3 .carry/p31/cphost31.py > $OUT/cphost.log 2>&1; echo "cphost rc=$?"; head -3 $OUT/cphost.log
