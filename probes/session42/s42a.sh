#!/usr/bin/env bash
# session 42 call A (one H200): the cuda pairs + locate tests at main (ypack_item fold, the
# s41 mend), then issue 22's rows on one host (s41e.sh without the A/B).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
lscpu | grep -m1 "Model name"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
timeout 240 python3 -m pytest -q -x -m cuda tests/test_cuda_pairs.py tests/test_cuda_pairs_ahead.py tests/test_cuda_encode_pack.py tests/test_cuda_pair_ends.py tests/test_cuda_locate.py tests/test_cuda_locate_reads.py tests/test_cuda_locate_windows.py -p no:cacheprovider > $OUT/tests.txt 2>&1
echo "tests rc=$? t=$(( $(date +%s) - T0 ))"; tail -3 $OUT/tests.txt
cd bench
timeout 100 python3 pairs_call.py --backend cuda -m 128 -n 4096 --inputs codes list numpy buffer cupy --repeat 9 --out $OUT/pc.jsonl > $OUT/pc.txt 2>&1; echo "pairs_call rc=$? t=$(( $(date +%s) - T0 ))"
timeout 60 python3 pairs_call.py --backend cuda -m 128 -n 1024 --inputs codes --cli-pairs 1000000 --repeat 1 --out $OUT/pc_cli.jsonl > $OUT/pc_cli.txt 2>&1; echo "pairs cli rc=$? t=$(( $(date +%s) - T0 ))"
timeout 120 python3 locate_modes.py --reads 1000 --single 20 --sam-repeat 5 --many-repeat 3 --out $OUT/loc.jsonl > $OUT/loc.txt 2>&1; echo "locate rc=$? t=$(( $(date +%s) - T0 ))"
timeout 100 python3 lcs.py --backend cuda --sizes 500000x500000 20000000x10000000 --lcs-sizes 20000000x10000000 --repeat 2 --no-rapidfuzz --cpu-max-cells 3e11 --out $OUT/lcs.jsonl > $OUT/lcs.txt 2>&1; echo "lcs rc=$? t=$(( $(date +%s) - T0 ))"
python3 - $OUT <<'PY'
import json, sys
out = sys.argv[1]
for f in ("pc", "pc_cli", "loc", "lcs"):
    try:
        rows = [json.loads(l) for l in open(f"{out}/{f}.jsonl") if l.strip()]
    except OSError:
        print(f, "missing"); continue
    for r in rows:
        p = r.get("params", {})
        print(f, r.get("scope"), r.get("backend"), r.get("method"), {k: p.get(k) for k in ("input", "path", "mode", "a_len", "threads") if k in p},
              r.get("seconds"), r.get("gcups"), r.get("per_read_ms"), r.get("rss_mb"), r.get("ratio_to_score"))
PY
