"""Session 39 call J: the CuPy row with this branch's three trims (largest side encoded
first, a runtime memset, no slice of a whole side) against main's files loaded under other
names, alternated in blocks of 25 calls (12 rounds each, method auto)."""
import importlib.util
import sys
import time

import numpy as np

import warpalign  # noqa: F401
import cupy as cp
from warpalign import Scoring
from warpalign import pairs as pp
from warpalign._backends.cuda import pairs_ahead as pa


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


old_enc = load("warpalign._backends.cuda.encode_old39", ".carry/t/old39b/encode.py")
old_pa = load("warpalign._backends.cuda.pairs_ahead_old39", ".carry/t/old39b/pairs_ahead.py")
old_pa.queue_encode = old_enc.queue_encode
old_pp = load("warpalign.pairs_old39", ".carry/t/old39b/pairs.py")
new = (pp.score_pairs, pa.encode_and_score)
old = (old_pp.score_pairs, old_pa.encode_and_score)
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))])
cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
times = {}
ref = None
for r in range(24):
    for label, (sp, eas) in (("new", new), ("old", old)) if r % 2 == 0 else (
            ("old", old), ("new", new)):
        pa.encode_and_score = eas
        for k in range(26):
            t0 = time.perf_counter()
            res = sp(cx, cy, s2, backend="cuda")
            dt = time.perf_counter() - t0
            if k:
                times.setdefault(label, []).append(dt)
            ref = res.scores.copy() if ref is None else ref
            assert np.array_equal(res.scores, ref) and res.method == "wordwise"
pa.encode_and_score = new[1]
for label, ts in sorted(times.items()):
    print(f"{label}: median {np.median(ts) * 1e3:.3f} ms  p10 {np.percentile(ts, 10) * 1e3:.3f}"
          f"  p90 {np.percentile(ts, 90) * 1e3:.3f}  n={len(ts)}  GCUPS "
          f"{P * 128 * 4096 / np.median(ts) / 1e9:.0f}", flush=True)
