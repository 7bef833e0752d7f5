"""Session 39 call D: K=1 against K=2 (and 4) for patterns of 1-5 M, text 4M."""
import json
import sys

import numpy as np

import warpalign  # noqa: F401
from warpalign._backends.cuda import lcs as gpu

out = open(sys.argv[1], "a")
rng = np.random.default_rng(11)
acgt = np.frombuffer(b"ACGT", np.uint8)
name = gpu._device().name
txt = acgt[rng.integers(0, 4, 4_000_000)]
for m in (1_000_000, 2_000_000, 3_000_000, 4_000_000, 5_000_000):
    pat = acgt[rng.integers(0, 4, m)]
    ref = None
    for k in (None, 1, 2, 4):
        gpu.final_vector(pat, 0, 1 << 16, txt, 0, 4096, False, k=k)
        best = 9e9
        for _ in range(3):
            gpu.reset_stats()
            v = gpu.final_vector(pat, 0, m, txt, 0, len(txt), False, k=k)
            best = min(best, gpu.STATS["kernel_s"])
        ref = v if ref is None else ref
        rec = dict(what="krule", m=m, k=k, auto=gpu.plan(m)["K"], kernel_s=round(best, 4),
                   tcells=round(m * 4e6 / best / 1e12, 2), same=bool(np.array_equal(v, ref)),
                   device=name)
        out.write(json.dumps(rec) + "\n")
        print(rec, flush=True)
