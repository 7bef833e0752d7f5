"""Session 39 call B, under ncu: one pass of each step at 3,696 and 2,442 bands (K=2)."""
import numpy as np

import warpalign  # noqa: F401
from warpalign._backends.cuda import lcs as gpu

rng = np.random.default_rng(1)
acgt = np.frombuffer(b"ACGT", np.uint8)
txt = acgt[rng.integers(0, 4, 1_000_000)]
for st in gpu.STEPS:
    gpu.final_vector(txt, 0, 1 << 16, txt, 0, 4096, False, step=st, k=2)   # compile: skipped
for B in (3696, 2442):
    pat = acgt[rng.integers(0, 4, B * 4096)]
    for st in gpu.STEPS:
        gpu.final_vector(pat, 0, len(pat), txt, 0, len(txt), False, step=st, k=2)
