"""Session 39 call C: the K rule (auto against the other Ks) at pattern sizes around its
bounds, text 4M, kernel seconds of one pass. argv: out.jsonl"""
import json
import sys

import numpy as np

import warpalign  # noqa: F401
from warpalign._backends.cuda import lcs as gpu

out = open(sys.argv[1], "a")
rng = np.random.default_rng(7)
acgt = np.frombuffer(b"ACGT", np.uint8)
name = gpu._device().name
txt = acgt[rng.integers(0, 4, 4_000_000)]
for m in (5_000_000, 7_000_000, 10_000_000, 11_000_000, 12_900_000):
    pat = acgt[rng.integers(0, 4, m)]
    auto = gpu.plan(m)["K"]
    ref = None
    for k in (None, 1, 2, 4):
        gpu.final_vector(pat, 0, 1 << 16, txt, 0, 4096, False, k=k)
        best = 9e9
        for _ in range(2):
            gpu.reset_stats()
            v = gpu.final_vector(pat, 0, m, txt, 0, len(txt), False, k=k)
            best = min(best, gpu.STATS["kernel_s"])
        ref = v if ref is None else ref
        rec = dict(what="krule", m=m, k=k, auto=auto, kernel_s=round(best, 4),
                   tcells=round(m * 4e6 / best / 1e12, 2), launches=gpu.STATS["launches"],
                   same=bool(np.array_equal(v, ref)), device=name)
        out.write(json.dumps(rec) + "\n")
        print(rec, flush=True)
