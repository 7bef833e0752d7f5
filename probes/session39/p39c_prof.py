"""Session 39 call C: where the CuPy row's host time goes (cProfile of 200 calls, then 201
plain calls timed). argv: out.txt"""
import cProfile
import io
import pstats
import sys
import time

import numpy as np

import warpalign  # noqa: F401
import cupy as cp
from warpalign import Scoring, score_pairs

P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))])
cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])


def call():
    return score_pairs(cx, cy, s2, backend="cuda", method="wordwise")


for _ in range(5):
    call()
ts = []
for _ in range(201):
    t = time.perf_counter()
    r = call()
    ts.append(time.perf_counter() - t)
    del r
print("plain median ms", round(float(np.median(ts)) * 1e3, 3), "p10",
      round(float(np.percentile(ts, 10)) * 1e3, 3), flush=True)
pr = cProfile.Profile()
pr.enable()
for _ in range(200):
    call()
pr.disable()
buf = io.StringIO()
st = pstats.Stats(pr, stream=buf)
st.sort_stats("tottime").print_stats(45)
st.sort_stats("cumulative").print_stats(60)
open(sys.argv[1], "w").write(buf.getvalue())
