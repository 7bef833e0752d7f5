"""Host bytes copied on Numba's threads: the fill of the CUDA encode engine's pinned
staging buffers (``cuda/encode.py``, issue 22).

``copy_parallel(src, dst, cuts)`` copies the slices between ``cuts`` side by side
(``prange``) in one call. The engine filled a buffer by one pool task a slice before
(``np.copyto``); a pool round cost ~0.5-0.7 ms however little it copied (threads woken and
joined under the GIL; docs/gpu-notes.md, sessions 27 and 37).
"""

from __future__ import annotations

import numba as nb


@nb.njit(nogil=True, cache=True, parallel=True)
def copy_parallel(src, dst, cuts) -> None:
    """``dst[cuts[k]:cuts[k + 1]] = src[cuts[k]:cuts[k + 1]]`` for every k, the slices on
    Numba's threads side by side (``cuts`` ascending from 0 to ``src.size``).

    Example:
        >>> import numpy as np
        >>> dst = np.zeros(5, np.uint8)
        >>> copy_parallel(np.arange(5, dtype=np.uint8), dst, np.array([0, 2, 5]))
        >>> dst.tolist()
        [0, 1, 2, 3, 4]
    """
    for k in nb.prange(cuts.size - 1):
        a, b = cuts[k], cuts[k + 1]
        dst[a:b] = src[a:b]
