"""Wall-clock timeline of a warm in-process search (mode full) on N GPUs, 500 queries:
when each wrapped step starts/ends relative to the call's start.
usage: python .carry/tl29.py OUT N [repeat]"""
import functools, json, sys, tempfile, threading, time
from pathlib import Path
sys.path.insert(0, "bench")
import importlib
from scaling import build_database
from search_gpu import _find, read_fasta
from warpalign import Scoring, search
from warpalign._backends.cuda import CudaBackend
sm = importlib.import_module("warpalign.search")
cs = importlib.import_module("warpalign._backends.cuda.search")
mu = importlib.import_module("warpalign._backends.cuda.multi")
out, n = sys.argv[1], int(sys.argv[2])
rep = int(sys.argv[3]) if len(sys.argv) > 3 else 2
events, T0 = [], [0.0]

def wrap(obj, name, label=None):
    real = getattr(obj, name)
    @functools.wraps(real)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            events.append((label or name, threading.current_thread().name,
                           round(t - T0[0], 4), round(time.perf_counter() - T0[0], 4),
                           str(a[5] if name == "_with_alignments" else "")))
    setattr(obj, name, w)

wrap(sm, "_with_alignments"); wrap(sm, "_top_hits"); wrap(sm, "_hit_ends")
wrap(CudaBackend, "_search_multi"); wrap(CudaBackend, "_multi_ends")
wrap(CudaBackend, "_batch_ends"); wrap(CudaBackend, "search_packed")
wrap(CudaBackend, "_merged_cut")
s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    db = build_database(Path(tmp), 2024)
    be = CudaBackend(devices=list(range(n)))
    for mode in ("score", "full"):
        search(qs, db, s, top_k=10, backend=be, mode=mode)
        for r in range(rep):
            events.clear(); T0[0] = time.perf_counter()
            search(qs, db, s, top_k=10, backend=be, mode=mode)
            total = time.perf_counter() - T0[0]
            rec = dict(n=n, mode=mode, run=r, total=round(total, 4), events=sorted(events, key=lambda e: e[2]))
            print(json.dumps(rec), flush=True)
            with open(out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
