#!/usr/bin/env bash
# session 37 call C (one H200): pk37b (pack / fill steadiness); nvcc resource usage of the
# traceback kernels; ncu of tb_align (and ww_kernel) in a mode-full call.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
T0=$(date +%s)
nproc; cat /proc/loadavg
env PYTHONPATH=/tmp/site timeout 150 python3 .carry/p37/pk37b.py $OUT/pk37b.jsonl 2>&1 | cut -c1-900; echo "pk37b t=$(( $(date +%s) - T0 ))"
cat /proc/loadavg
nvcc --version | tail -2; which ncu nsys
nvcc -cubin -arch=sm_90 -std=c++17 --resource-usage -o /tmp/tb.cubin src/warpalign/_backends/cuda/traceback.cu > $OUT/res.txt 2>&1; grep -B1 -A2 "tb_align\|tb_start\b\|_Z.*tb_path" $OUT/res.txt | head -30
NCU=$(which ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
if [ -n "$NCU" ]; then
  env PYTHONPATH=/tmp/site timeout 300 $NCU --kernel-name regex:"tb_align|ww_kernel" --launch-skip 2 --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats python3 .carry/p37/one37.py > $OUT/ncu.txt 2>&1; echo "ncu rc=$? t=$(( $(date +%s) - T0 ))"
  grep -v "^==PROF==" $OUT/ncu.txt | grep -E "tb_align|ww_kernel|Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit|Stall|Issued Warp|No Eligible|Active Warps Per|Eligible Warps|Compute \(SM\) Throughput|Memory Throughput|Warp Cycles Per Issued|Shared Memory Config" | head -60
fi
echo "total $(( $(date +%s) - T0 )) s"
