"""session 38: does a NumPy-input row before it slow the CuPy row (32,768 x 128 x 4,096)?
cupy x21, numpy x9, cupy x21, sleep 1 s, cupy x21, numpy x9 + gc.collect, cupy x21."""
import gc, sys, time
sys.path[:0] = ["src"]
import numpy as np
import cupy as cp
from warpalign import Scoring, score_pairs
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
hx, hy = L[g.integers(0, 4, (P, 128))], L[g.integers(0, 4, (P, 4096))]
cx, cy = cp.asarray(hx), cp.asarray(hy)
def med(call, n):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); r = call(); ts.append(time.perf_counter() - t); del r
    ts.sort(); return round(ts[n // 2] * 1e3, 3), round(ts[0] * 1e3, 3)
cu = lambda: score_pairs(cx, cy, s2, backend="cuda", method="wordwise")
nu = lambda: score_pairs(hx, hy, s2, backend="cuda", method="wordwise")
cu(); cu()
print("cupy first", med(cu, 21))
nu()
print("numpy", med(nu, 9))
print("cupy after numpy", med(cu, 21))
time.sleep(1)
print("cupy after 1 s", med(cu, 21))
print("numpy", med(nu, 9)); gc.collect()
print("cupy after numpy+gc", med(cu, 21))
import numba; print("layer", numba.threading_layer())
