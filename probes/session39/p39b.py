"""Session 39 call B: full lcs 20M x 10M packed vs split (alternated), and pattern sizes
by step and K (kernel seconds of one pass, text 4M). argv: out.jsonl"""
import json
import sys
import time

import numpy as np

import warpalign  # noqa: F401  (the checkout's src first)
from warpalign._backends.cuda import lcs as gpu
from warpalign.lcs import lcs

out = open(sys.argv[1], "a")
rng = np.random.default_rng(2014)
acgt = np.frombuffer(b"ACGT", np.uint8)
name = gpu._device().name


def emit(**kw):
    kw["device"] = name
    out.write(json.dumps(kw) + "\n")
    out.flush()
    print(kw, flush=True)


a = acgt[rng.integers(0, 4, 20_000_000)].tobytes()
b = acgt[rng.integers(0, 4, 10_000_000)].tobytes()
lcs(a[:300_000], b[:200_000], backend="cuda")
ref = None
for r in range(2):
    for st in gpu.STEPS:
        gpu.STEP = st
        lcs(a[:300_000], b[:200_000], backend="cuda")     # compile this step's kernels
        gpu.reset_stats()
        t0 = time.perf_counter()
        s = lcs(a, b, backend="cuda")
        sec = time.perf_counter() - t0
        ref = s if ref is None else ref
        emit(what="lcs20x10", round=r, step=st, sec=round(sec, 3), same=s == ref,
             length=len(s), gpu_kernel_s=round(gpu.STATS["kernel_s"], 3),
             launches=gpu.STATS["launches"])
gpu.STEP = "packed"
txt = acgt[rng.integers(0, 4, 4_000_000)]
for m in (10_000_000, 12_900_000, 15_100_000, 20_000_000, 30_000_000):
    pat = acgt[rng.integers(0, 4, m)]
    refv = None
    for st, k in (("packed", None), ("split", None), ("packed", 4), ("split", 4)):
        gpu.final_vector(pat, 0, 1 << 16, txt, 0, 4096, False, step=st, k=k)
        best = 9e9
        for _ in range(2):
            gpu.reset_stats()
            v = gpu.final_vector(pat, 0, m, txt, 0, len(txt), False, step=st, k=k)
            best = min(best, gpu.STATS["kernel_s"])
        refv = v if refv is None else refv
        emit(what="sizes", m=m, step=st, k=k, plan=gpu.plan(m)["K"], kernel_s=round(best, 4),
             tcells=round(m * 4e6 / best / 1e12, 2), same=bool(np.array_equal(v, refv)))
