"""Items laid end to end (sequences in one buffer, paths, names, batches): their offsets,
and their consecutive runs within a budget, one helper each for every module."""

from __future__ import annotations

import numpy as np


def running_sums(values, xp=np):
    """0 then the running sums of ``values`` (int64; one entry more than values): the
    offsets of items of those sizes laid end to end. ``xp``: NumPy or CuPy.

    Example:
        >>> running_sums([3, 0, 2]).tolist()
        [0, 3, 3, 5]
    """
    values = xp.asarray(values)
    out = xp.zeros(values.shape[0] + 1, np.int64)
    xp.cumsum(values, out=out[1:])
    return out


def even_runs(weights, count: int) -> list[tuple[int, int]]:
    """At most ``count`` consecutive runs (lo, hi) of items of ``weights``, cut where the
    running weight crosses each k/count of the whole; items of no weight join a neighbour,
    empty runs are dropped.

    Example:
        >>> even_runs([5, 0, 5, 5, 5], 2)
        [(0, 3), (3, 5)]
    """
    weights = np.asarray(weights, dtype=np.float64)
    n = len(weights)
    edges = np.searchsorted(np.cumsum(weights), float(weights.sum()) * np.arange(1, count)
                            / count, side="left") + 1
    bounds = sorted({0, n, *np.minimum(edges, n).tolist()})
    return [(a, b) for a, b in zip(bounds, bounds[1:]) if b > a]


def runs_within(sizes, room: int) -> list[tuple[int, int]]:
    """Consecutive runs (lo, hi) of items of ``sizes``, in order, covering each once: each
    run as long as its sizes sum to at most ``room`` (an item larger alone is a run of its
    own); by array arithmetic, a step per run.

    Example:
        >>> runs_within([3, 4, 2, 9, 1], 7)
        [(0, 2), (2, 3), (3, 4), (4, 5)]
    """
    through = np.cumsum(np.asarray(sizes, dtype=np.int64))
    out, lo = [], 0
    while lo < len(through):
        base = int(through[lo - 1]) if lo else 0
        hi = max(int(np.searchsorted(through, base + room, side="right")), lo + 1)
        out.append((lo, hi))
        lo = hi
    return out
