"""Session 40 call D: the CuPy row with this tree's trims (the read by the runtime with the
step's end recorded before the wait, kept zero words, the encode engine looked up only
where a batch is encoded on the host) against main's three files loaded under other
names, alternated in blocks of 25 calls (method auto)."""
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


old_cp = load("warpalign._backends.cuda.pairs_old40", ".carry/t/old40/cuda_pairs.py")
old_pa = load("warpalign._backends.cuda.pairs_ahead_old40", ".carry/t/old40/pairs_ahead.py")
old_pa.queue_wordwise = old_cp.queue_wordwise
old_pp = load("warpalign.pairs_old40", ".carry/t/old40/pairs.py")
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
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 24
for r in range(rounds):
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
