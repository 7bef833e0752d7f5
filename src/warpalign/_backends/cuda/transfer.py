"""Host arrays to the device in one copy: the small per-launch arrays of a pass (offsets,
job lists, plans) go up together, not one ``cupy.asarray`` each (~70 us apiece for 32,768
jobs, docs/gpu-notes.md session 23); and host arrays in pinned memory (:func:`pinned`) for
reads that come back by one asynchronous copy."""

from __future__ import annotations

import numpy as np


def _layout(arrays: list[np.ndarray]) -> tuple[list[int], int]:
    """Where each array starts in the joined buffer (256-byte boundaries), and its size."""
    starts, at = [], 0
    for a in arrays:
        starts.append(at)
        at += -(-a.nbytes // 256) * 256
    return starts, max(at, 1)


def _fill(host: np.ndarray, arrays: list[np.ndarray], starts: list[int]) -> None:
    for a, start in zip(arrays, starts):   # the pads between arrays are never read
        host[start:start + a.nbytes] = np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def pinned(cp, size: int, dtype) -> np.ndarray:
    """A host array of ``size`` items in pinned memory (CuPy's pinned pool reuses it)."""
    dtype = np.dtype(dtype)
    memory = cp.cuda.alloc_pinned_memory(max(size, 1) * dtype.itemsize)
    return np.frombuffer(memory, dtype, size)


def upload(cp, arrays: list[np.ndarray]) -> list:
    """Host arrays to the device in one copy (one CuPy array, not one each): a device
    view of each, in order, every one starting on a 256-byte boundary."""
    starts, size = _layout(arrays)
    host = np.empty(size, np.uint8)
    _fill(host, arrays, starts)
    device = cp.asarray(host)
    return [device[start:start + a.nbytes].view(a.dtype) for a, start in zip(arrays, starts)]


def upload_pinned(cp, arrays: list[np.ndarray], stream) -> tuple[list, object]:
    """:func:`upload` through pinned memory, queued on ``stream`` with no wait: (the
    device views, the pinned staging), the staging to be kept until the caller's next
    wait on ``stream`` (a pageable copy of 1.3 MB of job arrays took ~0.6 ms of an H100
    host's time, docs/gpu-notes.md session 31)."""
    starts, size = _layout(arrays)
    staging = cp.cuda.alloc_pinned_memory(size)
    host = np.frombuffer(staging, np.uint8, size)
    _fill(host, arrays, starts)
    device = cp.empty(size, cp.uint8)
    device.set(host, stream=stream)
    return ([device[start:start + a.nbytes].view(a.dtype) for a, start in zip(arrays, starts)],
            staging)
