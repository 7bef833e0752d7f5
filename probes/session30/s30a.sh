#!/usr/bin/env bash
# session 30 call A (one H100): pairs mode full breakdown (kernels by events, host steps), ncu
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
export PYTHONPATH=$R/src:/tmp/site
timeout 150 python3 .carry/p30/pfk.py $OUT/pfk.jsonl 4 > $OUT/pfk.log 2>&1; echo "pfk rc=$?"
python3 - <<'PY'
import json
for l in open("out/pfk.jsonl"):
    r = json.loads(l)
    if r["run"] != 3: continue
    print(r["mode"], r["total_ms"], r["timings"])
    for k in r["kernels"]: print("  K", k)
    for h in r["host"]: print("  H", h)
PY
tail -60 $OUT/pfk.log | cut -c1-160
which ncu && timeout 200 ncu --clock-control none -k regex:"tb_start|tb_path|render_walk|ww_" --launch-count 6 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats python3 .carry/p30/ncu1.py > $OUT/ncu.txt 2>&1; echo "ncu rc=$?"
grep -E "tb_|render|ww_|Duration|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers Per|Block Limit|Compute \(SM\) Throughput|Memory Throughput|Stall" $OUT/ncu.txt | head -120
