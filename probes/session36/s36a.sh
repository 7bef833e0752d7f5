#!/usr/bin/env bash
# session 36 call A (one H200): pfk36 (pairs mode full timeline), fresh36 (fresh locate).
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
env PYTHONPATH=$R/src:/tmp/site timeout 150 python3 .carry/p36/pfk36.py $OUT/pfk.jsonl 5 > $OUT/pfk.txt 2>&1; echo "pfk rc=$? t=$(( $(date +%s) - T0 ))"
grep total_ms $OUT/pfk.jsonl | python3 -c "
import json,sys
for l in sys.stdin:
    r=json.loads(l); print(r['run'], r['total_ms'], r['text_ms'], {k:v for k,v in r['timings'].items()})
"
# fresh locate: build reads and reference as wc35 does (first half only)
env PYTHONPATH=$R/src:/tmp/site timeout 120 python3 - <<'PY'
import gzip, os
from pathlib import Path
import numpy as np
from warpalign.reference import Reference
tmp = Path("/tmp/wc35"); tmp.mkdir(exist_ok=True)
data = Path(os.environ["WARPALIGN_SHARED_DATA"]) / "dna" / "ce2chrX.fa.gz"
with gzip.open(data, "rt") as fh:
    seq = "".join(l.strip() for l in fh if not l.startswith(">")).upper()
Reference.build([seq], tmp / "chrx.ref")
rng = np.random.default_rng(35)
with open(tmp / "reads.fq", "w") as fh:
    for k, at in enumerate(rng.integers(0, len(seq) - 150, 1000)):
        fh.write(f"@r{k}\n{seq[at:at + 150]}\n+\n{'I' * 150}\n")
PY
echo "built t=$(( $(date +%s) - T0 ))"
for r in 1 2 3; do
  s=$(date +%s.%N)
  env PYTHONPATH=$R/src:/tmp/site timeout 60 python3 .carry/p36/fresh36.py $OUT/fresh$r.txt /tmp/wc35/reads.fq /tmp/wc35/chrx.ref
  echo "fresh$r wall $(python3 -c "print(round($(date +%s.%N)-$s,3))")"
done
s=$(date +%s.%N); env PYTHONPATH=$R/src:/tmp/site timeout 60 python3 -X importtime -m warpalign locate /tmp/wc35/reads.fq /tmp/wc35/chrx.ref --format sam --backend cuda --no-progress -o /tmp/o.sam 2> $OUT/importtime.txt; echo "cli wall $(python3 -c "print(round($(date +%s.%N)-$s,3))")"
sort -t'|' -k2 -n -r $OUT/importtime.txt | head -25
echo "total $(( $(date +%s) - T0 )) s"
