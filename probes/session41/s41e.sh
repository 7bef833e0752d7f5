#!/usr/bin/env bash
# session 41 call E (one H200): issue 22's rows at main 67e2471 on one host (the CuPy row
# also in three more processes, alternated with main 9187526's): score_pairs from
# every input form, the pairs CLI on 1,000,000 pairs, locate's many-reads / SAM CLI / single
# read rows, lcs_length and full lcs.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
lscpu | grep -m1 "Model name"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
cd bench
for arm in old new old new old new; do
  P=$R/.carry/old41/src:/tmp/site; [ $arm = new ] && P=$R/src:/tmp/site
  PYTHONPATH=$P timeout 60 python3 pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 41 --out $OUT/pcx_$arm.jsonl > /dev/null 2>&1
  echo "cupy $arm rc=$? t=$(( $(date +%s) - T0 ))"
done
timeout 150 python3 pairs_call.py --backend cuda -m 128 -n 4096 --inputs codes list numpy buffer cupy --repeat 9 --out $OUT/pc.jsonl > $OUT/pc.txt 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
timeout 150 python3 pairs_call.py --backend cuda -m 128 -n 1024 --inputs codes --cli-pairs 1000000 --repeat 1 --out $OUT/pc_cli.jsonl > $OUT/pc_cli.txt 2>&1; echo "pairs cli rc=$? t=$(( $(date +%s) - T0 ))"
timeout 200 python3 locate_modes.py --reads 1000 --single 20 --sam-repeat 5 --many-repeat 3 --out $OUT/loc.jsonl > $OUT/loc.txt 2>&1; echo "locate rc=$? t=$(( $(date +%s) - T0 ))"
timeout 150 python3 lcs.py --backend cuda --sizes 500000x500000 20000000x10000000 --lcs-sizes 20000000x10000000 --repeat 2 --no-rapidfuzz --cpu-max-cells 3e11 --out $OUT/lcs.jsonl > $OUT/lcs.txt 2>&1; echo "lcs rc=$? t=$(( $(date +%s) - T0 ))"
python3 - $OUT <<'PY'
import json, sys
out = sys.argv[1]
for f in ("pcx_old", "pcx_new", "pc", "pc_cli", "loc", "lcs"):
    try:
        rows = [json.loads(l) for l in open(f"{out}/{f}.jsonl") if l.strip()]
    except OSError:
        print(f, "missing"); continue
    for r in rows:
        p = r.get("params", {})
        print(f, r.get("scope"), r.get("backend"), r.get("method"), {k: p.get(k) for k in ("input", "path", "mode", "a_len", "threads") if k in p},
              r.get("seconds"), r.get("gcups"), r.get("per_read_ms"), r.get("rss_mb"), r.get("ratio_to_score"))
PY
