"""session 38: cProfile per call (us) of the CuPy score row and pairs mode full, the
tail of trace_local_chain timed by wrappers, and the D2H bandwidth of a 10 MB pinned copy.
usage: python prof38.py   (repo root)"""
import cProfile, functools, io, pstats, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
import cupy as cp
from pairs_full import make
from warpalign import Scoring, score_pairs
import warpalign._backends.cuda.render as crd

def prof(label, call, n):
    call(); call()
    pr = cProfile.Profile(); pr.enable()
    for _ in range(n): call()
    pr.disable()
    st = pstats.Stats(pr)
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:45]
    print(f"== {label}: {n} calls; tottime us/call, cumtime us/call, ncalls/call, function")
    for (f, line, name), (cc, nc, tt, ct, _) in rows:
        print(f"{tt / n * 1e6:9.1f} {ct / n * 1e6:9.1f} {nc / n:6.1f}  {f.split('/')[-1]}:{line}({name})")
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][3])[:40]
    print(f"-- {label} by cumtime")
    for (f, line, name), (cc, nc, tt, ct, _) in rows:
        print(f"{tt / n * 1e6:9.1f} {ct / n * 1e6:9.1f} {nc / n:6.1f}  {f.split('/')[-1]}:{line}({name})")
    ts = []
    for _ in range(15):
        cp.cuda.runtime.deviceSynchronize(); t = time.perf_counter(); r = call(); ts.append(time.perf_counter() - t); del r
    print(label, "median ms", round(sorted(ts)[7] * 1e3, 3))

P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))]); cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
prof("cupy", lambda: score_pairs(cx, cy, s2, backend="cuda"), 300)

s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
xs, ys = make(np.random.default_rng(3), P, 128, 1024)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, 128)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, 1024)
full = lambda: score_pairs(xs, ys, s, mode="full", backend="cuda")
prof("full", full, 40)

# the tail of trace_local_chain
T = []
def wrap(obj, name):
    real = getattr(obj, name)
    @functools.wraps(real)
    def w(*a, **k):
        t = time.perf_counter()
        try: return real(*a, **k)
        finally: T.append((name, t, time.perf_counter()))
    setattr(obj, name, w)
for n in ("split", "pinned", "render_cigar"): wrap(crd, n)
try:
    wrap(cp.cuda.Stream, "synchronize")
except Exception as e:
    print("no stream wrap", e)
for r in range(6):
    T.clear(); cp.cuda.runtime.deviceSynchronize(); t0 = time.perf_counter()
    res = full(); t1 = time.perf_counter()
    print("tail run", r, round((t1 - t0) * 1e3, 3), [(n, round((a - t0) * 1e3, 3), round((b - a) * 1e3, 3)) for n, a, b in T])
    del res
# D2H bandwidth, 10 MB and 4.5 MB into pinned memory
for size in (10 << 20, 9 << 19):
    d = cp.zeros(size, cp.uint8); h = crd.pinned(cp, size, np.uint8); st = cp.cuda.Stream(non_blocking=True)
    ts = []
    for _ in range(20):
        st.synchronize(); t = time.perf_counter(); d.get(stream=st, out=h, blocking=False); st.synchronize(); ts.append(time.perf_counter() - t)
    ts.sort(); print("d2h", size, "ms", round(ts[10] * 1e3, 3), "GB/s", round(size / ts[10] / 1e9, 1))
