"""Tuning(one_warp_cells) swept for the warm in-process search of 500 queries, mode full
(and end), N GPUs; wall clocks of each device's _batch_ends / ends_resident /
_candidate_ends_many and of the whole call.  usage: owc29.py OUT N "18,20,22" [repeat]"""
import functools, json, sys, tempfile, threading, time
from pathlib import Path
sys.path.insert(0, "bench")
import importlib
from scaling import build_database, same_hits
from search_gpu import _find, read_fasta
from warpalign import Scoring, search
from warpalign._backends.cuda import CudaBackend, config
from warpalign._backends.cuda.traceback import GpuTraceback
out, n = sys.argv[1], int(sys.argv[2])
exps = [int(x) for x in sys.argv[3].split(",")]
rep = int(sys.argv[4]) if len(sys.argv) > 4 else 3
events, T0 = [], [0.0]

def wrap(obj, name):
    real = getattr(obj, name)
    @functools.wraps(real)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            events.append((name, threading.current_thread().name, round(t - T0[0], 4),
                           round(time.perf_counter() - t, 4)))
    setattr(obj, name, w)

for name in ("_batch_ends", "_candidate_ends_many", "_multi_ends"):
    wrap(CudaBackend, name)
wrap(GpuTraceback, "ends_resident")
s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
ref = {}
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    db = build_database(Path(tmp), 2024)
    for e in exps:
        be = CudaBackend(devices=list(range(n)), tuning=config.Tuning(one_warp_cells=1 << e))
        for mode in ("full", "end"):
            got = search(qs, db, s, top_k=10, backend=be, mode=mode)   # warm
            same = True
            if mode in ref:
                same = same_hits(ref[mode], got) and all(
                    a.query_ends.tolist() == b.query_ends.tolist() and
                    a.target_ends.tolist() == b.target_ends.tolist() and
                    (mode != "full" or a.alignments == b.alignments) for a, b in zip(ref[mode], got))
            else:
                ref[mode] = got
            times, evs = [], []
            for r in range(rep):
                events.clear(); T0[0] = time.perf_counter()
                search(qs, db, s, top_k=10, backend=be, mode=mode)
                times.append(round(time.perf_counter() - T0[0], 4))
                evs.append(sorted(events, key=lambda x: x[2]))
            rec = dict(gpus=n, one_warp_cells=e, mode=mode, runs=times, same=same,
                       median=sorted(times)[len(times) // 2], events=evs[-1])
            print(json.dumps({k: v for k, v in rec.items() if k != "events"}), flush=True)
            with open(out, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
