#!/usr/bin/env bash
# session 39 call B (one H200): p39b (full lcs and sizes by step), ncu of both steps.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
export PYTHONPATH=$R/src:/tmp/site
timeout 240 python3 .carry/p39/p39b.py $OUT/p39b.jsonl > $OUT/p39b.log 2>&1; echo "p39b rc=$? t=$(( $(date +%s) - T0 ))"
cut -c1-220 $OUT/p39b.log | tail -30
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -1)
timeout 240 $NCU --clock-control none --kernel-name regex:llcs_bands --launch-skip 2 --launch-count 4 --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,regex:sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active,regex:sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active" python3 .carry/p39/p39b_ncu.py > $OUT/ncu.txt 2>&1; echo "ncu rc=$? t=$(( $(date +%s) - T0 ))"
grep -E "llcs_bands|stalled|pipe_|Duration|Issue Slots Busy|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Executed Ipc A|Pipe|SM Busy|Stall|Compute \(SM\)" $OUT/ncu.txt | grep -vE " 0(\.0+)?$| 0\.0[0-9]$" | head -150
