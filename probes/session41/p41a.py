"""Session 41 A/B in one process: score_pairs from CuPy 2-D arrays (32,768 x 128 x 4,096),
y packed from its characters (ww_ypack_raw, y_codes=False: the job's path now) against y
encoded first (y_codes=True: the previous path), blocks alternated; whole-call medians."""
import sys
import time

import numpy as np
import cupy as cp

from warpalign import Scoring, score_pairs
from warpalign._backends.cuda import pairs_ahead
from warpalign._backends.registry import using


class Forced:
    def __init__(self, y_codes):
        self.y_codes = y_codes

    def applies(self, scoring, algorithm):
        return pairs_ahead.applies(scoring, algorithm)

    def encode_and_score(self, *args, **kwargs):
        kwargs["y_codes"] = self.y_codes
        return pairs_ahead.encode_and_score(*args, **kwargs)


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 12
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))])
cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
arms = {"codes": Forced(True), "raw": Forced(False)}
times = {k: [] for k in arms}
steps = {k: [] for k in arms}
ref = None
for r in range(rounds):
    for name, eng in (arms.items() if r % 2 == 0 else reversed(list(arms.items()))):
        with using("pairs_ahead", "cuda", "wordwise", eng):
            for i in range(27):
                t0 = time.perf_counter()
                res = score_pairs(cx, cy, s2, backend="cuda")
                t1 = time.perf_counter()
                if i >= 2:
                    times[name].append(t1 - t0)
                    steps[name].append(res.timings)
                if ref is None:
                    ref = res.scores.copy()
                assert np.array_equal(res.scores, ref)
cells = P * 128 * 4096
for name in arms:
    med = float(np.median(times[name]))
    st = {k: round(float(np.median([s.get(k, 0) for s in steps[name]]) * 1e6), 1)
          for k in steps[name][0]}
    print(f"{name}: median {med * 1e3:.3f} ms = {cells / med / 1e9:.0f} GCUPS, "
          f"p10 {np.percentile(times[name], 10) * 1e3:.3f}, n={len(times[name])}, steps us {st}")
