#!/usr/bin/env bash
# session 40 call F (one H200): the CPU striped kernel (BLOCK 512) against parasail on this
# host's core (bench/align_cpu.py, one core), and the CuPy row once more on this host.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
nvidia-smi --query-gpu=name --format=csv,noheader; lscpu | grep "Model name"
T0=$(date +%s)
cd bench
NUMBA_NUM_THREADS=1 timeout 200 taskset -c 2 python3 align_cpu.py --repeat 3 --out $OUT/al.jsonl > $OUT/al.txt 2>&1; echo "align rc=$? t=$(( $(date +%s) - T0 ))"
timeout 60 python3 pairs_call.py --backend cuda -m 128 -n 4096 --inputs cupy --repeat 41 --out $OUT/pc.jsonl > /dev/null 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
python3 - $OUT <<'PY'
import json, sys
for f in ("al", "pc"):
    for l in open(f"{sys.argv[1]}/{f}.jsonl"):
        r = json.loads(l); p = r["params"]
        print(f, r["scope"], r["method"], p.get("data"), p.get("scoring"), p.get("input"), r["seconds"], r.get("gcups"))
PY
