"""Session 39 call A: the LCS kernel's split step against packed, alternated in one process.
argv: out.jsonl"""
import json
import sys
import time

import numpy as np

import warpalign  # noqa: F401  (the checkout's src first)
from warpalign._backends.cuda import lcs as gpu
from warpalign.lcs import lcs_length

out = open(sys.argv[1], "a")
rng = np.random.default_rng(2014)
acgt = np.frombuffer(b"ACGT", np.uint8)
a = acgt[rng.integers(0, 4, 20_000_000)]
b = acgt[rng.integers(0, 4, 10_000_000)]
pat, txt = b, a
name = gpu._device().name


def run(step, p=pat, t=txt, **kw):
    gpu.reset_stats()
    t0 = time.perf_counter()
    v = gpu.final_vector(p, 0, len(p), t, 0, len(t), False, step=step, **kw)
    return v, time.perf_counter() - t0, gpu.STATS["kernel_s"]


def emit(**kw):
    kw["device"] = name
    out.write(json.dumps(kw) + "\n")
    out.flush()
    print(kw, flush=True)


for st in gpu.STEPS:
    gpu.final_vector(pat, 0, 1 << 16, txt, 0, 4096, False, step=st)
ref, _, _ = run("packed")
v, _, _ = run("split")
assert np.array_equal(v, ref), "split != packed on 20M x 10M"
emit(what="equal", n=int(v.size))
for r in range(4):
    for st in gpu.STEPS:
        _, sec, ks = run(st)
        emit(what="pass20x10", round=r, step=st, sec=round(sec, 4), kernel_s=round(ks, 4),
             tcells=round(2e14 / ks / 1e12, 2))
t2 = txt[:2_000_000]
for B in (132, 528, 1056, 1584, 2112, 2442, 3168, 3696):
    m = B * 4096
    p = pat[:m] if m <= len(pat) else acgt[rng.integers(0, 4, m)]
    for st in gpu.STEPS:
        best = min(run(st, p, t2, k=2)[2] for _ in range(2))
        emit(what="bands", B=B, step=st, kernel_s=round(best, 5),
             ns_step=round(best / 2e6 * 1e9, 2), tcells=round(m * 2e6 / best / 1e12, 2))
for r in range(2):
    for st in gpu.STEPS:
        gpu.STEP = st
        t0 = time.perf_counter()
        L = lcs_length(a.tobytes(), b.tobytes(), backend="cuda")
        sec = time.perf_counter() - t0
        emit(what="lcs_length", round=r, step=st, sec=round(sec, 4),
             tcells=round(2e14 / sec / 1e12, 2), llcs=int(L))
gpu.STEP = "packed"
