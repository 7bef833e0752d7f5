"""session 38 abc38: the CuPy row (32,768 x 128 x 4,096, score_pairs from 2-D CuPy arrays) with
pairs_ahead.encode_and_score and pairs._score_codes of main (old) against the branch's (new),
alternated call by call in one process; medians, means, p10 of each and the scores equal."""
import importlib.util, sys, time
sys.path[:0] = ["src"]
import numpy as np
import cupy as cp
import warpalign.pairs as wp
import warpalign._backends.cuda.pairs_ahead as pa
from warpalign import Scoring, score_pairs

def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    m = importlib.util.module_from_spec(spec); sys.modules[name] = m; spec.loader.exec_module(m)
    return m
old_wp = load("warpalign.pairs_old38", ".carry/t/old38/pairs.py")
old_pa = load("warpalign._backends.cuda.pairs_ahead_old38", ".carry/t/old38/pairs_ahead.py")
sets = {"old": (old_wp._score_codes, old_pa.encode_and_score),
        "new": (wp._score_codes, pa.encode_and_score)}
def use(k):
    wp._score_codes, pa.encode_and_score = sets[k]
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))]); cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
call = lambda: score_pairs(cx, cy, s2, backend="cuda", method="wordwise")
ref = {}
for k in sets:
    use(k); call(); ref[k] = call().scores
assert np.array_equal(ref["old"], ref["new"])
ts = {k: [] for k in sets}
for r in range(int(sys.argv[1]) if len(sys.argv) > 1 else 201):
    for k in (("old", "new") if r % 2 else ("new", "old")):
        use(k)
        t = time.perf_counter(); x = call(); ts[k].append(time.perf_counter() - t); del x
for k, v in ts.items():
    v = np.sort(np.array(v)) * 1e3
    print(k, "median", round(float(np.median(v)), 4), "mean", round(float(v.mean()), 4),
          "p10", round(float(v[len(v) // 10]), 4), "n", len(v))
