"""(session 29's tl29b.py, kept for session 34) Wall clocks of the tail of a warm in-process search (mode full, 500 queries) on N GPUs:
every wrapped step's start (from the call's start) and seconds, per thread.
usage: python .carry/tl29b.py OUT N [repeat] [one_warp_cells exponents, e.g. 22,23]"""
import functools, json, sys, tempfile, threading, time
from pathlib import Path
sys.path.insert(0, "bench")
import importlib
from scaling import build_database, same_hits
from search_gpu import _find, read_fasta
from warpalign import Scoring, search
from warpalign._backends.cuda import CudaBackend, config
from warpalign._backends.cuda.traceback import GpuTraceback
sm = importlib.import_module("warpalign.search")
tb = importlib.import_module("warpalign.traceback")
res = importlib.import_module("warpalign.results")
out, n = sys.argv[1], int(sys.argv[2])
rep = int(sys.argv[3]) if len(sys.argv) > 3 else 2
exps = [int(x) for x in sys.argv[4].split(",")] if len(sys.argv) > 4 else [22]
events, T0 = [], [0.0]

def wrap(obj, name):
    real = getattr(obj, name, None)
    if real is None:
        return
    @functools.wraps(real)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            events.append((name, threading.current_thread().name[-12:], round(t - T0[0], 4),
                           round(time.perf_counter() - t, 4)))
    setattr(obj, name, w)

for name in ("_with_alignments", "_top_hits"):
    wrap(sm, name)
wrap(tb, "align_pairs_table")
tr = importlib.import_module("warpalign.traced")
for name in ("traced_table", "paths_table", "check_paths"):
    wrap(tr, name)
for name in ("_batch_ends", "_candidate_ends_many", "_candidate_ends_start",
             "_candidate_ends_finish", "_multi_ends", "_search_multi", "_merged_cut"):
    wrap(CudaBackend, name)
for name in ("ends_resident", "ends_flat", "starts_flat", "paths_flat", "render_flat"):
    wrap(GpuTraceback, name)
s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
ref = None
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    db = build_database(Path(tmp), 2024)
    for e in exps:
        be = CudaBackend(devices=list(range(n)), tuning=config.Tuning(one_warp_cells=1 << e))
        got = search(qs, db, s, top_k=10, backend=be, mode="full")   # warm
        same = ref is None or (same_hits(ref, got) and all(
            a.alignments == b.alignments for a, b in zip(ref, got)))
        ref = ref or got
        times = []
        for r in range(rep):
            events.clear(); T0[0] = time.perf_counter()
            search(qs, db, s, top_k=10, backend=be, mode="full")
            times.append(round(time.perf_counter() - T0[0], 4))
            rec = dict(gpus=n, one_warp_cells=e, run=r, total=times[-1], same=same,
                       events=sorted(events, key=lambda x: x[2]))
            with open(out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
        print(json.dumps(dict(gpus=n, one_warp_cells=e, runs=times, same=same)), flush=True)
