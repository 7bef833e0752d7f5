"""session 35: the host side of score_pairs from CuPy (32,768 x 128 x 4,096): wall clocks of
its parts (wrapped) and cProfile over 40 warm calls. usage: python cph35.py"""
import cProfile
import io
import pstats
import time

import cupy as cp
import numpy as np

import warpalign.pairs as P
import warpalign.buffers as B
from warpalign import Scoring, score_pairs
from warpalign._backends.cuda import pairs_ahead as A

S = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
rng = np.random.default_rng(0)
L = np.frombuffer(b"ACGT", np.uint8)
X = cp.asarray(L[rng.integers(0, 4, (32768, 128))])
Y = cp.asarray(L[rng.integers(0, 4, (32768, 4096))])
marks = []


def wrap(mod, name):
    real = getattr(mod, name)

    def w(*a, **k):
        marks.append((name + ">", time.perf_counter()))
        r = real(*a, **k)
        marks.append((name + "<", time.perf_counter()))
        return r
    setattr(mod, name, w)


for mod, name in ((P, "gather"), (P, "_choose_method"), (P, "_ahead_engine"), (P, "_batches"),
                  (A, "queue_encode"), (A, "planned_wordwise"), (A, "queue_wordwise"),
                  (P, "_merge")):
    wrap(mod, name)
for _ in range(5):
    score_pairs(X, Y, S, backend="cuda")
rows = []
for _ in range(40):
    marks.clear()
    t0 = time.perf_counter()
    score_pairs(X, Y, S, backend="cuda")
    t1 = time.perf_counter()
    rows.append([(n, 1e3 * (t - t0)) for n, t in marks] + [("end", 1e3 * (t1 - t0))])
med = {}
for row in rows:
    for k, (n, v) in enumerate(row):
        med.setdefault((k, n), []).append(v)
print("median ms from the call's start:")
print("  ".join(f"{n} {np.median(v):.3f}" for (k, n), v in sorted(med.items())))
pr = cProfile.Profile()
pr.enable()
for _ in range(40):
    score_pairs(X, Y, S, backend="cuda")
pr.disable()
s = io.StringIO()
pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25)
print("\n".join(line[:150] for line in s.getvalue().splitlines()[:45]))
