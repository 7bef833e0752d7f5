"""session 38 pf38: the CuPy row's per-call time and minor page faults (ru_minflt) in a fresh
process, then after building the bench's input forms (pairs_call.forms, codes lists), then
after gc.collect(). usage: python pf38.py (repo root)"""
import gc, resource, sys, time
sys.path[:0] = ["src", "bench"]
import numpy as np
import cupy as cp
from warpalign import Scoring, score_pairs
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
hx, hy = L[g.integers(0, 4, (P, 128))], L[g.integers(0, 4, (P, 4096))]
cx, cy = cp.asarray(hx), cp.asarray(hy)
call = lambda: score_pairs(cx, cy, s2, backend="cuda", method="wordwise")
def run(label, n=41):
    ts, fl = [], []
    for _ in range(n):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t = time.perf_counter(); r = call(); ts.append(time.perf_counter() - t)
        fl.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0); del r
    print(label, "median ms", round(float(np.median(ts)) * 1e3, 3), "faults/call median",
          int(np.median(fl)), "max", max(fl), flush=True)
call(); call()
run("fresh")
from pairs_call import forms
held = forms(hx, hy, "cuda")
table = s2.alphabet.code_table
codes = list(table[hx]), list(table[hy])
run("after forms")
gc.collect()
run("after forms + gc")
t = time.perf_counter()
for _ in range(100): a = np.arange(32769, dtype=np.int64); a *= 4096; del a
print("arange+mul us", round((time.perf_counter() - t) * 1e4, 2))
