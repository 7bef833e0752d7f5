"""Characters to codes by one table: the ``encode`` engine of the CPU backend.

``encode(raw, table)`` maps every byte of ``raw`` (a 1-D ``uint8`` array of characters)
through ``table`` (``uint8[256]``, :data:`INVALID` where a character has no code) in one
pass, and reports the first byte without a code.
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: The table's entry for a character outside the alphabet (no alphabet has 256 codes
#: except "bytes", which has no invalid character and is encoded with ``check=False``).
INVALID = 255


@nb.njit(nogil=True, cache=True)
def _lookup(raw, table, out):
    """out[i] = table[raw[i]]; the largest code written (INVALID when any is)."""
    top = np.uint8(0)
    for i in range(raw.size):
        c = table[raw[i]]
        out[i] = c
        top = max(top, c)
    return top


def encode(raw: np.ndarray, table: np.ndarray, check: bool = True, counts: bool = False
           ) -> tuple[np.ndarray, int, np.ndarray | None]:
    """(codes, index of the first character without a code or -1, how often each code
    occurs when ``counts`` else None) of the characters ``raw``
    (one side of :func:`encode_sides`).

    Raises:
        TypeError: ``raw`` is not a NumPy array (a device array goes to the CUDA backend).

    Example:
        >>> table = np.full(256, INVALID, np.uint8); table[list(b"ACGT")] = range(4)
        >>> codes, bad, _ = encode(np.frombuffer(b"GATTACA", np.uint8), table)
        >>> codes.tolist(), bad
        ([2, 0, 3, 3, 0, 1, 0], -1)
        >>> encode(np.frombuffer(b"GAXA", np.uint8), table)[1]
        2
    """
    codes, bad, counted, _ = _encode_one(raw, table, check, counts)
    return codes, bad, counted


def encode_sides(raws, table: np.ndarray, check: bool = True, counts: bool = False
                 ) -> list[tuple[np.ndarray, int, np.ndarray | None, int]]:
    """:func:`encode` of each array in ``raws``: per array (codes, first bad index or -1,
    counts or None, largest code (0 for none)). The ``encode`` engine
    (:class:`~warpalign._backends.base.EncodeKernel`)."""
    return [_encode_one(raw, table, check, counts) for raw in raws]


def _encode_one(raw, table, check: bool, counts: bool):
    if not isinstance(raw, np.ndarray):
        raise TypeError(f"the CPU backend encodes NumPy arrays, got {type(raw).__module__}."
                        f"{type(raw).__name__}")
    raw = np.ascontiguousarray(raw, dtype=np.uint8).reshape(-1)
    out = np.empty(raw.size, np.uint8)
    # one core: the loop runs at memory speed (a prange version measured 3-4 times
    # slower on the 2-core development machine)
    top = int(_lookup(raw, np.ascontiguousarray(table, dtype=np.uint8), out))
    bad = int(np.argmax(out == INVALID)) if check and top == INVALID else -1
    counted = np.bincount(out, minlength=256) if counts and bad < 0 else None
    return out, bad, counted, top
