"""A, C, G, T characters to 2-bit codes, four to a byte: the host half of the CUDA encode
engine's packed staging (``cuda/encode.py``, issue 22).

``pack_slice(src, out, stop)`` writes the codes of ``src`` (characters, either case)
into ``out``, byte i holding characters 4i..4i+3 as ``c0 | c1 << 2 | c2 << 4 | c3 << 6``
(the last byte padded with code 0), and says whether every character was one of
``ACGTacgt``. The code of such a character is :func:`code` ``((ch >> 1) ^ (ch >> 2)) & 3``:
A 0, C 1, G 2, T 3 (the DNA alphabet's codes; the caller checks its table against
:data:`LETTERS`).

The loop reads eight characters as one little-endian 64-bit word and works on all eight
bytes at once (no carry crosses a byte), branch free, so LLVM vectorizes it: the codes
and their validity are a few shifts, masks and adds per word, and a character is valid
exactly when its case-folded byte equals the lower-case letter of its own code. It reads
``src`` once and writes a quarter of its bytes. ``pack_codes`` also answers the largest
code packed (so the engine needs no read from the device to know it), and
``pack_parallel(src, out, cuts, stop)`` packs the slices between ``cuts`` on Numba's
threads (``prange``), one call: the CUDA engine's staging packs a chunk's pieces so.
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: The characters that pack, by code (their lower case packs to the same codes).
LETTERS = b"ACGT"
#: Characters between two looks at ``stop`` (a multiple of 8): a slice with a character
#: outside ACGTacgt, or whose neighbour found one, stops within this many characters.
_BLOCK = 1 << 16

_ONES = np.uint64(0x0101010101010101)
_TWOS = np.uint64(0x0303030303030303)
_FOLD = np.uint64(0x2020202020202020)    # a letter's lower case
_LOW_A = np.uint64(0x6161616161616161)   # 'a' in each byte
_NIBBLES = np.uint64(0x000F000F000F000F)
_HIGH_NIBBLES = np.uint64(0x00F000F000F000F0)


def code(ch):
    """The 2-bit code :func:`pack_slice` gives character ``ch`` (meaningful for
    ACGTacgt only); ``ch`` an int or a ``uint8`` array."""
    return ((ch >> 1) ^ (ch >> 2)) & 3


@nb.njit(nogil=True, cache=True)
def pack_slice(src, out, stop) -> bool:
    """``out[:(src.size + 3) // 4]`` = the 2-bit codes of ``src``; True when every
    character is one of ACGTacgt. Else False, ``stop[0]`` set to 1 and ``out`` undefined;
    a slice that finds ``stop[0]`` set (by another slice of the same chunk) returns False
    at its next block. Slices that run side by side give each its own part of ``out``.

    Example:
        >>> out = np.zeros(2, np.uint8)
        >>> pack_slice(np.frombuffer(b"ACgtT", np.uint8), out, np.zeros(1, np.uint8))
        True
        >>> out.tolist()    # 0 | 1 << 2 | 2 << 4 | 3 << 6, then T and padding
        [228, 3]
    """
    return pack_codes(src, out, stop) >= 0


@nb.njit(nogil=True, cache=True)
def pack_codes(src, out, stop) -> int:
    """:func:`pack_slice`, answering the largest code packed (0 for none) where it answers
    True and -1 where it answers False: the encode engine's "largest code" without a read
    from the device.

    Example:
        >>> out = np.zeros(1, np.uint8)
        >>> [pack_codes(np.frombuffer(t, np.uint8), out, np.zeros(1, np.uint8))
        ...  for t in (b"", b"aC", b"GAg", b"cT", b"AN")]
        [0, 1, 2, 3, -1]
    """
    n = src.size
    words = n >> 3
    w = src[:8 * words].view(np.uint64)
    o = out[:2 * words].view(np.uint16)
    step = _BLOCK >> 3
    seen = np.uint64(0)                 # the codes met, OR-ed byte by byte
    ts = np.uint64(0)                   # a 1 in each byte where a T was met
    for first in range(0, words, step):
        if stop[0]:
            return -1
        last = min(words, first + step)
        bad, codes, t = _pack_words(w[first:last], o[first:last])
        if bad:
            stop[0] = 1
            return -1
        seen |= codes
        ts |= t
    for j in range(2 * words, (n + 3) >> 2):
        out[j] = 0
    for j in range(8 * words, n):
        c = src[j]
        u = c | 0x20
        if u != 0x61 and u != 0x63 and u != 0x67 and u != 0x74:
            stop[0] = 1
            return -1
        k = ((c >> 1) ^ (c >> 2)) & 3
        out[j >> 2] |= np.uint8(k << (2 * (j & 3)))
        seen |= np.uint64(k)
        ts |= np.uint64(k == 3)
    if ts:
        return 3
    # no T: the largest of 0, 1, 2 met is 2 where a byte has its high bit set
    return 2 if seen & (_ONES << np.uint64(1)) else (1 if seen else 0)


@nb.njit(nogil=True, cache=True, parallel=True)
def pack_parallel(src, out, cuts, stop) -> int:
    """:func:`pack_codes` of each slice ``src[cuts[k]:cuts[k + 1]]`` into its own part of
    ``out``, the slices on Numba's threads; every cut but the last a multiple of 4 (a
    packed byte is never shared). The largest code packed (0 for none) when every
    character was one of ACGTacgt; else -1, ``stop[0]`` set and ``out`` undefined (the
    slices share ``stop``: the first other character stops them all within a block).

    Example:
        >>> out = np.zeros(3, np.uint8)
        >>> chars = np.frombuffer(b"ACGTacgtG", np.uint8)
        >>> pack_parallel(chars, out, np.array([0, 4, 9]), np.zeros(1, np.uint8))
        3
        >>> out.tolist()
        [228, 228, 2]
    """
    tops = np.empty(cuts.size - 1, np.int64)
    for k in nb.prange(cuts.size - 1):
        a, b = cuts[k], cuts[k + 1]
        tops[k] = pack_codes(src[a:b], out[a >> 2:(b + 3) >> 2], stop)
    if stop[0]:
        return -1
    return tops.max() if tops.size else 0


@nb.njit(nogil=True, cache=True, parallel=True)
def pack_parallel2(src_a, out_a, cuts_a, stop_a, src_b, out_b, cuts_b, stop_b):
    """:func:`pack_parallel` of two pieces (a chunk's end of x and start of y, say) in one
    parallel loop over the slices of both: one start and join of the threads, not two.
    Returns each piece's answer (its largest code, or -1), each with its own stop flag.

    Example:
        >>> a, b = np.frombuffer(b"ACGA", np.uint8), np.frombuffer(b"ACNA", np.uint8)
        >>> out = np.zeros(2, np.uint8)
        >>> pack_parallel2(a, out[:1], np.array([0, 4]), np.zeros(1, np.uint8),
        ...                b, out[1:], np.array([0, 4]), np.zeros(1, np.uint8))
        (2, -1)
    """
    na, nb_ = cuts_a.size - 1, cuts_b.size - 1
    tops = np.empty(na + nb_, np.int64)
    for k in nb.prange(na + nb_):
        if k < na:
            a, b = cuts_a[k], cuts_a[k + 1]
            tops[k] = pack_codes(src_a[a:b], out_a[a >> 2:(b + 3) >> 2], stop_a)
        else:
            a, b = cuts_b[k - na], cuts_b[k - na + 1]
            tops[k] = pack_codes(src_b[a:b], out_b[a >> 2:(b + 3) >> 2], stop_b)
    top_a = -1 if stop_a[0] else (tops[:na].max() if na else 0)
    top_b = -1 if stop_b[0] else (tops[na:].max() if nb_ else 0)
    return top_a, top_b


@nb.njit(nogil=True, cache=True)
def _pack_words(w, o):
    """``o[i]`` = the two packed bytes of the eight characters of word ``w[i]``. Returns
    (nonzero when a character is not one of ACGTacgt, the codes OR-ed byte by byte, a 1 in
    each byte where a T was met). (A loop from 0 over its own slices: LLVM vectorizes it
    so, and not as a loop from a block's first word.)"""
    bad = np.uint64(0)
    seen = np.uint64(0)
    ts = np.uint64(0)
    for i in range(w.size):
        x = w[i]
        k = ((x >> np.uint64(1)) ^ (x >> np.uint64(2))) & _TWOS    # a code per byte
        b1 = (k >> np.uint64(1)) & _ONES
        t = k & b1                                                 # 1 for T
        # the lower-case letter of each code, a + 2 k + 2 b1 + 11 t: a c g t (shifts and
        # adds: a 64-bit vector multiply is slow or missing)
        letter = _LOW_A + ((k + b1) << np.uint64(1)) + t + (t << np.uint64(1)) \
            + (t << np.uint64(3))
        bad |= (x | _FOLD) ^ letter
        seen |= k
        ts |= t
        p = k | (k >> np.uint64(6))    # bytes 0, 2, 4, 6: c0 | c1 << 2, c2 | c3 << 2, ...
        p = (p & _NIBBLES) | ((p >> np.uint64(12)) & _HIGH_NIBBLES)
        o[i] = np.uint16((p & np.uint64(0xFF)) | ((p >> np.uint64(24)) & np.uint64(0xFF00)))
    return bad, seen, ts
