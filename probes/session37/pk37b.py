"""(session 37) How steady the pack / fill on Numba's threads is: the pool (89507ca's, a task
a slice) against pack_parallel / copy_parallel with 16, 15, 12 threads (static: one slice a
thread) and 16 threads over 256 KiB slices taken dynamically (parallel_chunksize 1);
alternated, 40 rounds: median, p90, max, min (ms). usage: python pk37b.py OUT.jsonl"""
import json, sys, time
sys.path[:0] = ["src"]
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import numba
import cupy as cp
from warpalign._backends.cuda import encode as gpu
from warpalign._backends.cpu.pack2 import pack_slice, pack_parallel
from warpalign._backends.cpu.fill import copy_parallel
from warpalign._backends.base import numba_threads

out = sys.argv[1]
POOL = ThreadPoolExecutor(16)


def cuts(n, k, unit):
    return np.array([a for a, _ in gpu._slices(n, k, unit)] + [n], np.int64)


def pool_pack(pieces):
    stops = [np.zeros(1, np.uint8) for _ in pieces]
    total = sum(s.size for s, _ in pieces)
    done = [[POOL.submit(pack_slice, s[a:b], o[a // 4:(b + 3) // 4], st)
             for a, b in gpu._slices(s.size, max(1, round(16 * s.size / total)), 4) if a < b]
            for (s, o), st in zip(pieces, stops)]
    return [all(f.result() for f in d) for d in done]


def numba_pack(threads, slice_chars=None):
    def f(pieces):
        with numba_threads(threads):
            res = []
            for s, o in pieces:
                k = threads if slice_chars is None else max(1, s.size // slice_chars)
                c = cuts(s.size, k, 4)
                if slice_chars is None:
                    res.append(bool(pack_parallel(s, o, c, np.zeros(1, np.uint8))))
                else:
                    with numba.parallel_chunksize(1):
                        res.append(bool(pack_parallel(s, o, c, np.zeros(1, np.uint8))))
            return res
    return f


def pool_fill(view, src):
    for f in [POOL.submit(np.copyto, view[a:b], src[a:b]) for a, b in gpu._slices(src.size, 16)]:
        f.result()


def numba_fill(threads, slice_chars=None):
    def f(view, src):
        with numba_threads(threads):
            k = threads if slice_chars is None else max(1, src.size // slice_chars)
            if slice_chars is None:
                copy_parallel(src, view, cuts(src.size, k, 1))
            else:
                with numba.parallel_chunksize(1):
                    copy_parallel(src, view, cuts(src.size, k, 1))
    return f


def emit(rec):
    print(json.dumps(rec), flush=True)
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")


def stats(v):
    v = np.array(v) * 1e3
    return dict(med=round(float(np.median(v)), 3), p90=round(float(np.percentile(v, 90)), 3),
                max=round(float(v.max()), 3), min=round(float(v.min()), 3))


P = 32768
rng = np.random.default_rng(37)
acgt = np.frombuffer(b"ACGT", np.uint8)
x = acgt[rng.integers(0, 4, P * 128)]; y = acgt[rng.integers(0, 4, P * 1024)]
nx, ny = (x.size + 3) // 4, (y.size + 3) // 4
mem = cp.cuda.alloc_pinned_memory(1 << 26); buf = np.frombuffer(mem, np.uint8, 1 << 26)
packs = {"pool": pool_pack, "n16": numba_pack(16), "n15": numba_pack(15), "n12": numba_pack(12),
         "n16dyn": numba_pack(16, 1 << 18)}
pieces = [(x, buf[:nx]), (y, buf[nx:nx + ny])]
for f in packs.values():
    f(pieces)
t = {k: [] for k in packs}
for _ in range(40):
    for k, f in packs.items():
        t0 = time.perf_counter(); f(pieces); t[k].append(time.perf_counter() - t0)
emit(dict(what="pack 4+32 MiB", **{k: stats(v) for k, v in t.items()}))
big = acgt[rng.integers(0, 4, P * (128 + 4096))]
fills = {"pool": pool_fill, "n16": numba_fill(16), "n15": numba_fill(15), "n12": numba_fill(12),
         "n16dyn": numba_fill(16, 1 << 18)}
for f in fills.values():
    f(buf[:1 << 22], big[:1 << 22])
t = {k: [] for k in fills}
for _ in range(20):
    for k, f in fills.items():
        t0 = time.perf_counter()
        for lo in range(0, big.size, 1 << 26):
            hi = min(big.size, lo + (1 << 26)); f(buf[:hi - lo], big[lo:hi])
        t[k].append(time.perf_counter() - t0)
emit(dict(what="fill 138 MB in 64 MiB", **{k: stats(v) for k, v in t.items()}))
