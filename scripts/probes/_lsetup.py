"""Shared set-up of the session-13 locate probes (issue 6): ce2chrX repeated to 33.5 M as
bench/locate.py builds it (read-only, so the GPU path keeps it resident), paper 002's
scoring, and bench/locate.py's queries (cut at random, 5% substituted, seed 2). Run
from the repository root."""

import importlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, "bench")

import locate as bench_locate
from warpalign.scoring import Scoring

L = importlib.import_module("warpalign.locate")   # the package attribute is the function
SCORING = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
N = 1 << 25


def reference() -> np.ndarray:
    ref = bench_locate.load_reference(Path(bench_locate.CHRX), N, SCORING)
    ref.setflags(write=False)
    return ref


def queries(ref: np.ndarray, lengths=(256, 128), seed: int = 2):
    """(m, query) for each length, drawn as bench/locate.py draws them."""
    rng = np.random.default_rng(seed)
    for m in lengths:
        start = int(rng.integers(0, N - m))
        q = ref[start:start + m].copy()
        flip = rng.random(m) < 0.05
        q[flip] = (q[flip] + 1) % 4
        yield m, q


def call(q, ref, mode: str):
    """One locate call on the GPU windows path."""
    return L.locate_encoded(q, ["ref"], [ref], SCORING, mode=mode, method="windows",
                            backend="cuda")
