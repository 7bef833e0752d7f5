"""session 35: score_pairs 32,768 x 128 x 4,096 from NumPy at each GROUP_BYTES (the host
route of pairs_ahead), alternated; whole-call wall and the call's own step timings."""
import json
import sys
import time

import numpy as np

from warpalign import Scoring, score_pairs
from warpalign._backends.cuda import pairs as gpu_pairs
from warpalign._backends.cuda import pairs_ahead

gpu_pairs.PLAN_CACHE = 64
S = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
rng = np.random.default_rng(0)
L = np.frombuffer(b"ACGT", np.uint8)
n = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
X, Y = L[rng.integers(0, 4, (32768, 128))], L[rng.integers(0, 4, (32768, n))]
sizes = [1 << 30, 1 << 27, 1 << 26, 1 << 25, 1 << 24, 1 << 23]
for g in sizes:
    pairs_ahead.GROUP_BYTES = g
    score_pairs(X, Y, S, backend="cuda")
want = score_pairs(X[:512], Y[:512], S, backend="cpu").scores
got = {g: [] for g in sizes}
for r in range(9):
    for g in sizes:
        pairs_ahead.GROUP_BYTES = g
        t = time.perf_counter()
        out = score_pairs(X, Y, S, backend="cuda")
        dt = time.perf_counter() - t
        assert np.array_equal(out.scores[:512], want)
        got[g].append((dt, dict(out.timings)))
with open(sys.argv[1], "w") as fh:
    for g in sizes:
        w = sorted(d for d, _ in got[g])
        steps = {k: float(np.median([t.get(k, 0.0) for _, t in got[g]]))
                 for k in ("encode", "pack", "swa", "g2h")}
        cuts = pairs_ahead.group_cuts(np.arange(32769) * 128, np.arange(32769) * n, g)
        line = {"group_bytes": g, "groups": int(cuts.size - 1), "n": n,
                "median_ms": 1e3 * w[len(w) // 2], "min_ms": 1e3 * w[0],
                "gcups": 32768 * 128 * n / w[len(w) // 2] / 1e9,
                "steps_ms": {k: round(1e3 * v, 3) for k, v in steps.items()}}
        print(json.dumps(line))
        fh.write(json.dumps(line) + "\n")
