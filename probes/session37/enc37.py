"""(session 37) Where encode_sides of a score_pairs batch (32,768 x 128 + 32,768 x 1,024 DNA
characters from NumPy) spends its time: host wall clock of its steps (wrapped module
functions, cupy.empty, alloc_pinned_memory, the copy's set), medians of 30 calls.
usage: python enc37.py OUT.jsonl"""
import functools, json, sys, time
sys.path[:0] = ["src"]
import numpy as np
import cupy as cp
from warpalign import Scoring
from warpalign._backends.cuda import encode as gpu

out = sys.argv[1]
T = {}


def wrap(obj, name, label=None):
    real = getattr(obj, name)
    label = label or name

    @functools.wraps(real)
    def w(*a, **k):
        t = time.perf_counter()
        try:
            return real(*a, **k)
        finally:
            T[label] = T.get(label, 0.0) + time.perf_counter() - t
    setattr(obj, name, w)


for n in ("_kernels", "device_table", "new_flags", "_stage_packed", "_pack_pieces", "_alternate",
          "_results", "_staging_stream", "packs", "_unpacker", "_launcher"):
    wrap(gpu, n)
wrap(cp, "empty", "cp.empty")
wrap(cp.cuda, "alloc_pinned_memory", "alloc_pinned")
real_sync = cp.cuda.Event.synchronize
P = 32768
rng = np.random.default_rng(37)
acgt = np.frombuffer(b"ACGT", np.uint8)
x = acgt[rng.integers(0, 4, P * 128)]; y = acgt[rng.integers(0, 4, P * 1024)]
table = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2).alphabet.code_table
for _ in range(3):
    gpu.encode_sides([x, y], table)
rows = []
for _ in range(30):
    T.clear()
    cp.cuda.runtime.deviceSynchronize()
    t0 = time.perf_counter()
    gpu.encode_sides([x, y], table)
    T["total"] = time.perf_counter() - t0
    rows.append(dict(T))
keys = rows[0].keys()
rec = dict(what="encode_sides steps (ms, medians of 30)",
           **{k: round(float(np.median([r.get(k, 0) for r in rows])) * 1e3, 3) for k in keys})
print(json.dumps(rec), flush=True)
open(out, "a").write(json.dumps(rec) + "\n")
