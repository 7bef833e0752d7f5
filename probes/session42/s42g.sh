#!/usr/bin/env bash
# session 42 call G (4 x H200): where `warpalign search --workers N` spends its fixed cost:
# import times, the CLI timed with 1 and 4 workers (stdout as scaling.py takes it), and a
# cProfile of the client process with 4 workers.
set -u
R=$PWD
OUT=${OUT:-$R/out}; mkdir -p $OUT
export PYTHONUNBUFFERED=1 WARPALIGN_SHARED_DATA="$R/.carry/data"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl > /dev/null 2>&1
export PYTHONPATH=$R/src:/tmp/site
T0=$(date +%s)
W=/tmp/p42g; mkdir -p $W
python3 - $W <<'PY'
import sys; sys.path.insert(0, "bench")
from pathlib import Path
from scaling import build_database, _fasta_text
from search_gpu import _find, read_fasta
w = Path(sys.argv[1])
db = build_database(w, 2024)
(w / "q.fasta").write_text(_fasta_text(read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]))
print("db", db.path)
PY
echo "built t=$(( $(date +%s) - T0 ))"
for m in "warpalign" "warpalign.cli" "cupy" "distributed" "numba"; do
  python3 -c "import time; t=time.perf_counter(); import $m; print('import $m', round(time.perf_counter()-t, 3))"
done
python3 -c "import time; t=time.perf_counter(); import cupy; cupy.cuda.runtime.getDeviceCount(); cupy.zeros(1); print('cuda context', round(time.perf_counter()-t, 3))"
A="search $W/q.fasta $W/db.wa --mode full --top-k 10 --no-progress"
CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m warpalign $A --workers 4 > $W/o4.tsv 2> $W/e4.txt; echo "warm rc=$?"
for n in 4 1 4 1; do
  D=0,1,2,3; [ $n = 1 ] && D=0
  t=$(date +%s.%N); CUDA_VISIBLE_DEVICES=$D python3 -m warpalign $A --workers $n > $W/o$n.tsv 2>> $W/e$n.txt
  echo "workers $n rc=$? $(python3 -c "print(round($(date +%s.%N) - $t, 3))") s"
done
t=$(date +%s.%N); CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m warpalign $A > $W/oin.tsv; echo "one process 4 GPUs rc=$? $(python3 -c "print(round($(date +%s.%N) - $t, 3))") s"
cmp -s $W/o4.tsv $W/oin.tsv && echo "same output" || echo "outputs differ"
CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m cProfile -o $OUT/cli4.prof -m warpalign $A --workers 4 > /dev/null 2>&1; echo "prof rc=$?"
python3 -c "
import pstats; s = pstats.Stats('$OUT/cli4.prof'); s.sort_stats('cumulative').print_stats(45)" | grep -v "^$" | cut -c1-150 | head -70
echo "total t=$(( $(date +%s) - T0 ))"
