"""(session 37) score_pairs mode full, 32,768 x 128 x 1,024 (bench/pairs_full.py's pairs),
three calls: for ncu. usage: python one37.py"""
import sys
sys.path[:0] = ["bench", "src"]
import numpy as np
from pairs_full import make
from warpalign import Scoring, score_pairs
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
P, X, Y = 32768, 128, 1024
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
for _ in range(3):
    r = score_pairs(xs, ys, s, mode="full", backend="cuda")
print("ok", int(r.scores.sum()))
