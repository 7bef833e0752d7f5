"""END_ROWS (tb_end rows a lane) swept: (a) the end kernel alone on the 500 queries' top-10
pairs (ends_flat on one device, all 5,000 pairs at once and the ~1,250 of a quarter);
(b) the warm 4-GPU search, modes end and full, with per-device wall clocks.
usage: rows29.py OUT N "1,2,4,8" [repeat]"""
import functools, importlib, json, sys, tempfile, threading, time
from pathlib import Path
import numpy as np
sys.path.insert(0, "bench")
from scaling import build_database, same_hits
from search_gpu import _find, read_fasta
from warpalign import Scoring, search
from warpalign._backends.cuda import CudaBackend
tbm = importlib.import_module("warpalign._backends.cuda.traceback")
from warpalign._backends.registry import engine_for
out, n = sys.argv[1], int(sys.argv[2])
rows = [int(x) for x in sys.argv[3].split(",")]
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
            events.append((name, threading.current_thread().name[-10:], round(t - T0[0], 4),
                           round(time.perf_counter() - t, 4)))
    setattr(obj, name, w)

for name in ("_batch_ends", "_multi_ends", "_candidate_ends_start", "_candidate_ends_finish"):
    wrap(CudaBackend, name)
for name in ("ends_wait", "ends_resident_queue"):
    wrap(tbm.GpuTraceback, name)
s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
def emit(rec):
    print(json.dumps({k: v for k, v in rec.items() if k != "events"}), flush=True)
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
    db = build_database(Path(tmp), 2024)
    be = CudaBackend(devices=list(range(n)))
    hits = search(qs, db, s, top_k=10, backend=be, mode="end")
    # (a) the kernel alone: every hit's (query, target) pair, codes on the host
    codes = [s.encode(q) for q in qs]
    pq = [codes[i] for i, h in enumerate(hits) for _ in range(len(h))]

    stored = db.targets
    tseq = [stored.codes[stored.offsets[db.rank[t]]:stored.offsets[db.rank[t] + 1]]
            for h in hits for t in h.targets.tolist()]
    cells = np.array([len(a) * len(b) for a, b in zip(pq, tseq)])
    small = np.flatnonzero(cells <= (1 << 22))
    tb = engine_for("traceback", "cuda", "auto")
    for label, pick in (("all small", small), ("quarter", small[::4])):
        items = [(pq[k], tseq[k]) for k in pick.tolist()]
        ref = None
        for r in rows:
            tbm.END_ROWS = r
            tb.ends(items, s, 0)
            times = []
            for _ in range(rep):
                t = time.perf_counter(); got = tb.ends(items, s, 0); times.append(round(time.perf_counter() - t, 5))
            same = ref is None or got.tolist() == ref
            ref = ref or got.tolist()
            emit(dict(part="kernel", pairs=label, count=len(items), max_cells=int(cells[pick].max()),
                      rows=r, runs=times, same=same))
    # (b) the search
    refs = {}
    for r in rows:
        tbm.END_ROWS = r
        for mode in ("end", "full"):
            got = search(qs, db, s, top_k=10, backend=be, mode=mode)
            same = True
            if mode in refs:
                same = all(a.scores.tolist() == b.scores.tolist() and a.targets.tolist() == b.targets.tolist()
                           and a.query_ends.tolist() == b.query_ends.tolist()
                           and a.target_ends.tolist() == b.target_ends.tolist()
                           and (mode != "full" or a.alignments == b.alignments)
                           for a, b in zip(refs[mode], got))
            else:
                refs[mode] = got
            times = []
            for _ in range(rep):
                events.clear(); T0[0] = time.perf_counter()
                search(qs, db, s, top_k=10, backend=be, mode=mode)
                times.append(round(time.perf_counter() - T0[0], 4))
            emit(dict(part="search", gpus=n, rows=r, mode=mode, runs=times, same=same,
                      events=sorted(events, key=lambda e: e[2])))
