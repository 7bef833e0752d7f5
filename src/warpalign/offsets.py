"""Offsets of items laid end to end (sequences in one buffer, paths, names, batches): one
helper every module uses instead of its own zeros-then-cumsum."""

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
