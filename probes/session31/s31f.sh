#!/usr/bin/env bash
# session 31 call F (one GPU): ncu of pairs mode full's kernels at main (tb_align at 4 rows
# a lane, the scoring and ENDS ww_kernel instances)
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
export PYTHONPATH=$R/src:/tmp/site
timeout 240 ncu --clock-control none -k regex:"tb_align|tb_plan|ww_kernel" --launch-count 4 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section SchedulerStats --section MemoryWorkloadAnalysis python3 .carry/p31/ncu1.py > $OUT/ncu.txt 2>&1; echo "ncu rc=$?"
grep -E "tb_|ww_|Duration|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Warp Cycles Per Issued|Registers Per|Block Limit|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Hit|L2 Hit|Stall" $OUT/ncu.txt | head -120
