"""Session 31: cProfile of score_pairs from CuPy 2-D arrays, 32,768 x 128 x 4,096 (issue 22's
CuPy row), 40 warm calls; wall clock per call too. usage: python cphost31.py"""
import cProfile, io, pstats, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
import cupy as cp
from warpalign import Scoring, score_pairs
s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
rng = np.random.default_rng(0)
P, M, N = 32768, 128, 4096
xs = cp.asarray(np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (P, M))])
ys = cp.asarray(np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (P, N))])
for _ in range(5): score_pairs(xs, ys, s, backend="cuda")
walls = []
for _ in range(20):
    cp.cuda.runtime.deviceSynchronize(); t = time.perf_counter()
    score_pairs(xs, ys, s, backend="cuda"); walls.append((time.perf_counter() - t) * 1e3)
print("wall ms", sorted(round(w, 3) for w in walls))
pr = cProfile.Profile(); pr.enable()
for _ in range(40): score_pairs(xs, ys, s, backend="cuda")
pr.disable()
for key in ("tottime", "cumtime"):
    sio = io.StringIO(); pstats.Stats(pr, stream=sio).sort_stats(key).print_stats(30)
    print(sio.getvalue()[:7000])
