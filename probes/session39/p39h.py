"""Session 39 call H: the CuPy row with this session's two host trims (gather's one-pass
offsets, no second copy of the scores) against main's (old files loaded under other
names), alternated in one process: 12 rounds x 25 calls each, method auto and wordwise."""
import importlib.util
import sys
import time

import numpy as np

import warpalign  # noqa: F401
import cupy as cp
from warpalign import Scoring, score_pairs
from warpalign import pairs as pp
from warpalign._backends.cuda import pairs_ahead as pa


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


old_b = load("warpalign.buffers_old39", ".carry/t/old39/buffers.py")
old_pa = load("warpalign._backends.cuda.pairs_ahead_old39", ".carry/t/old39/pairs_ahead.py")
new = (pp.gather, pa.encode_and_score)
old = (old_b.gather, old_pa.encode_and_score)
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))])
cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
times = {}
ref = None
for method in ("wordwise", "auto"):
    for r in range(12):
        for label, (gat, eas) in (("new", new), ("old", old)) if r % 2 == 0 else (
                ("old", old), ("new", new)):
            pp.gather, pa.encode_and_score = gat, eas
            for k in range(26):
                t0 = time.perf_counter()
                res = score_pairs(cx, cy, s2, backend="cuda", method=method)
                dt = time.perf_counter() - t0
                if k:
                    times.setdefault((method, label), []).append(dt)
                if ref is None:
                    ref = res.scores.copy()
                assert np.array_equal(res.scores, ref)
pp.gather, pa.encode_and_score = new
for (method, label), ts in sorted(times.items()):
    print(f"{method:9s} {label}: median {np.median(ts) * 1e3:.3f} ms  p10 "
          f"{np.percentile(ts, 10) * 1e3:.3f}  n={len(ts)}  "
          f"GCUPS {P * 128 * 4096 / np.median(ts) / 1e9:.0f}", flush=True)
