"""(session 37) The fill of pinned staging: the pool (3985b90's _fill, np.copyto a task)
against copy_parallel, alternated in one process: (1) 138 MB (32,768 x (128 + 4,096)) into
a 64 MiB pinned buffer chunk by chunk as _upload does, threads 16; (2) score_pairs from
NumPy 32,768 x 128 x 4,096 with staging "pinned" and each fill, medians.
usage: python pf37.py OUT.jsonl [N]"""
import json, sys, time
sys.path[:0] = ["bench", "src"]
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import cupy as cp
from warpalign._backends.cuda import encode as gpu

out = sys.argv[1]; N = int(sys.argv[2]) if len(sys.argv) > 2 else 11
POOL = ThreadPoolExecutor(16)


def old(view, src, threads):
    if threads <= 1 or src.size < gpu._SPLIT_FROM:
        np.copyto(view, src); return
    done = [POOL.submit(np.copyto, view[a:b], src[a:b]) for a, b in gpu._slices(src.size, threads)]
    for f in done:
        f.result()


new = gpu._fill
variants = {"pool": old, "numba": new}


def emit(rec):
    print(json.dumps(rec), flush=True)
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")


P, X, Y = 32768, 128, 4096
rng = np.random.default_rng(37)
acgt = np.frombuffer(b"ACGT", np.uint8)
x = acgt[rng.integers(0, 4, (P, X))]; y = acgt[rng.integers(0, 4, (P, Y))]
both = np.concatenate([x.ravel(), y.ravel()])
size = gpu.STAGE_BYTES
mem = cp.cuda.alloc_pinned_memory(size); buf = np.frombuffer(mem, np.uint8, size)
for f in variants.values():
    f(buf[:1 << 22], both[:1 << 22], 16)
t = {k: [] for k in variants}
for _ in range(N):
    for name, f in variants.items():
        t0 = time.perf_counter()
        for lo in range(0, both.size, size):
            hi = min(both.size, lo + size)
            f(buf[:hi - lo], both[lo:hi], 16)
        t[name].append(time.perf_counter() - t0)
emit(dict(what="fill-138MB", **{k: round(float(np.median(v)) * 1e3, 3) for k, v in t.items()},
          **{k + "_min": round(min(v) * 1e3, 3) for k, v in t.items()}))
from warpalign import Scoring, score_pairs
s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
t = {k: [] for k in variants}; got = {}
gpu.STAGING = "pinned"
for name, f in variants.items():
    gpu._fill = f
    for _ in range(2):
        got[name] = score_pairs(x, y, s, backend="cuda").scores
for _ in range(N):
    for name, f in variants.items():
        gpu._fill = f
        t0 = time.perf_counter(); score_pairs(x, y, s, backend="cuda")
        t[name].append(time.perf_counter() - t0)
emit(dict(what="score_pairs-pinned", pairs=P, m=X, n=Y,
          same=bool(np.array_equal(got["pool"], got["numba"])),
          **{k: round(float(np.median(v)) * 1e3, 3) for k, v in t.items()},
          gcups_numba=round(P * X * Y / float(np.median(t["numba"])) / 1e9, 1)))
gpu._fill = new; gpu.STAGING = "packed"
