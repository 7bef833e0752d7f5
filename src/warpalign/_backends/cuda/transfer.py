"""Host arrays to the device in one copy: the small per-launch arrays of a pass (offsets,
job lists, plans) go up together, not one ``cupy.asarray`` each (~70 us apiece for 32,768
jobs, docs/gpu-notes.md session 23)."""

from __future__ import annotations

import numpy as np


def upload(cp, arrays: list[np.ndarray]) -> list:
    """Host arrays to the device in one copy (one CuPy array, not one each): a device
    view of each, in order, every one starting on a 256-byte boundary."""
    starts, at = [], 0
    for a in arrays:
        starts.append(at)
        at += -(-a.nbytes // 256) * 256
    host = np.empty(max(at, 1), np.uint8)     # the pads between arrays are never read
    for a, start in zip(arrays, starts):
        host[start:start + a.nbytes] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)
    device = cp.asarray(host)
    return [device[start:start + a.nbytes].view(a.dtype) for a, start in zip(arrays, starts)]
