"""(session 37) The pack of a score_pairs batch: the fill pool (89507ca's _pack_pieces, one
task a slice) against pack_parallel (one Numba prange call a piece), alternated in one
process: (1) the pack alone, 32,768 x 128 + 32,768 x 1,024 characters into a pinned buffer,
threads 16 / 12 / 8; (2) score_pairs mode full and score from NumPy with each, medians.
usage: python pk37.py OUT.jsonl [N]"""
import json, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
import cupy as cp
from warpalign._backends.cuda import encode as gpu
from warpalign._backends.cpu.pack2 import pack_slice
from warpalign._backends.base import usable_cores

out = sys.argv[1]; N = int(sys.argv[2]) if len(sys.argv) > 2 else 15


def old(pieces, threads):
    stops = [np.zeros(1, np.uint8) for _ in pieces]
    total = sum(src.size for src, _ in pieces)
    pool = gpu._fill_pool()
    done = [[pool.submit(pack_slice, src[a:b], out[a // 4:(b + 3) // 4], stop)
             for a, b in gpu._slices(src.size, max(1, round(threads * src.size / total)), 4)
             if a < b] for (src, out), stop in zip(pieces, stops)]
    return [all(f.result() for f in s) for s in done]


new = gpu._pack_pieces
variants = {"pool": old, "prange": new}
P, X, Y = 32768, 128, 1024
rng = np.random.default_rng(37)
acgt = np.frombuffer(b"ACGT", np.uint8)
x = acgt[rng.integers(0, 4, P * X)]; y = acgt[rng.integers(0, 4, P * Y)]
nx, ny = (x.size + 3) // 4, (y.size + 3) // 4
mem = cp.cuda.alloc_pinned_memory(nx + ny)
buf = np.frombuffer(mem, np.uint8, nx + ny)
ref = None
for name, f in variants.items():
    buf[:] = 0
    assert f([(x, buf[:nx]), (y, buf[nx:])], 16) == [True, True]
    ref = buf.copy() if ref is None else ref
    assert np.array_equal(buf, ref), name
import numba
print("layer", numba.threading_layer(), "NUMBA_NUM_THREADS", numba.config.NUMBA_NUM_THREADS,
      "usable", usable_cores(), flush=True)


def emit(rec):
    print(json.dumps(rec), flush=True)
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")


for threads in (16, 12, 8):
    t = {k: [] for k in variants}
    for _ in range(N * 2):
        for name, f in variants.items():
            t0 = time.perf_counter(); f([(x, buf[:nx]), (y, buf[nx:])], threads)
            t[name].append(time.perf_counter() - t0)
    emit(dict(what="pack", threads=threads, **{k: round(float(np.median(v)) * 1e3, 3)
                                               for k, v in t.items()},
              **{k + "_min": round(min(v) * 1e3, 3) for k, v in t.items()}))
# a small round (1 Mi characters: the pool's fixed cost)
small = y[:1 << 20]
t = {k: [] for k in variants}
for _ in range(N * 2):
    for name, f in variants.items():
        t0 = time.perf_counter(); f([(small, buf[:small.size // 4])], 16)
        t[name].append(time.perf_counter() - t0)
emit(dict(what="pack-1Mi", **{k: round(float(np.median(v)) * 1e3, 3) for k, v in t.items()}))

from pairs_full import make
from warpalign import Scoring, score_pairs
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
for mode in ("full", "score"):
    t = {k: [] for k in variants}; enc = {k: [] for k in variants}; got = {}
    for name, f in variants.items():
        gpu._pack_pieces = f
        for _ in range(3):
            got[name] = score_pairs(xs, ys, s, mode=mode, backend="cuda")
    for _ in range(N):
        for name, f in variants.items():
            gpu._pack_pieces = f
            t0 = time.perf_counter(); r = score_pairs(xs, ys, s, mode=mode, backend="cuda")
            t[name].append(time.perf_counter() - t0)
            enc[name].append(r.timings.get("encode", 0.0))
    same = (got["pool"].alignments == got["prange"].alignments) if mode == "full" else \
        got["pool"].scores.tolist() == got["prange"].scores.tolist()
    emit(dict(what="score_pairs", mode=mode, same=bool(same),
              **{k: round(float(np.median(v)) * 1e3, 3) for k, v in t.items()},
              **{k + "_min": round(min(v) * 1e3, 3) for k, v in t.items()},
              **{k + "_encode": round(float(np.median(v)) * 1e3, 3) for k, v in enc.items()},
              gcups_prange=round(P * X * Y / float(np.median(t["prange"])) / 1e9, 1)))
gpu._pack_pieces = new
