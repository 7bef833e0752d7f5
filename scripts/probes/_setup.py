"""Shared set-up of the session-12 probes: the 20 standard queries, the Swiss-Prot-sized
database of bench/search_gpu.py, and the four shards a 4-GPU split makes of it
(``split_targets``, as CudaBackend._prepare_multi). Run from the repository root."""

import sys
import time

import numpy as np

sys.path.insert(0, "bench")

from search_gpu import _find, make_database, read_fasta
from warpalign import Scoring
from warpalign._backends import TargetSet
from warpalign.alphabet import PROTEIN

SCORING = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def queries() -> list[np.ndarray]:
    _, text = read_fasta(_find("standard_queries20.fasta"))
    return [PROTEIN.encode(q) for q in text]


def database():
    return make_database(2024)


def shards(targets, count: int = 4) -> list[TargetSet]:
    from warpalign._backends.cuda import split_targets
    return [ts for _, ts in split_targets(targets, count)]


def timed(fn, repeat: int = 3):
    """(min, median) seconds of ``repeat`` calls after one untimed call, device synced."""
    import cupy as cp
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        cp.cuda.Device().synchronize()
        ts.append(time.perf_counter() - t0)
    return min(ts), float(np.median(ts))
