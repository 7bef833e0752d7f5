"""Bitsliced bulk Smith-Waterman (paper 000, BPBC) on the CPU with 64-bit words.

Each group of ``64 * words`` pairs is scored at once: bit ``k`` of a ``uint64`` word
belongs to pair ``k``, and every DP value is stored as ``s`` bit-planes (plane ``b`` holds
bit ``b`` of the value of all 64 pairs). The DP cell is the paper's circuit

    SW(up, left, diag, x, y) = max_B(matching_B(diag, x, y), SSub_B(max_B(up, left), gap))

built from the s-bit circuits greaterthan/max_B, add_B, SSub_B (saturating subtract)
and matching_B (section IV.A), evaluated with bitwise operations on whole words. The
constants (match c1, mismatch c2, gap) are baked into the compiled kernel, so their
bits cost no work (the add/subtract of a constant bit is one operation per bit).

Steps, named as the paper's Table IV columns:

* **W2B** -- bit-transpose of the inputs: per position, 64 words ``code | pad << 2``
  (A C G T = 0..3, the pad bit set beyond a pair's length) become three planes (low
  bit, high bit, pad) by the Hacker's Delight swap/copy network of the paper's Table I
  (copies while the block size is at least the number of significant bits, swaps after).
* **SWA** -- the DP, column by column over the longer sequence of each pair, the
  shorter one (at most a few hundred symbols in the paper's setting) held as a column of
  bit-sliced cells, with a running max per row.
* **B2W** -- bit-untranspose of the ``s`` result planes: the same network backwards.

Exactness:

* ``s`` is the bit length of ``c1 * max(min(len x, len y))`` over the group; a local
  score of a cell never exceeds ``c1 * min(i, j)``, so no value can saturate.
* Pairs of unequal lengths share a group. Each pair's shorter sequence goes down the
  rows and its longer one along the columns (the local score under a symmetric
  match/mismatch matrix and linear gaps does not change under the swap). Positions past
  a pair's end carry the pad bit, which forces a mismatch. A valid cell depends only on
  cells above and to its left, which are valid too; a padded cell is at most the largest
  of its neighbours (a mismatch and a gap only lower a value, and 0 is never above the
  best), so padding changes no score.

Scoring: DNA A/C/G/T, ``match > 0``, ``mismatch <= 0``, linear gaps, local alignment.
"""

from __future__ import annotations

import time
from functools import cache

import numba as nb
import numpy as np

from ...offsets import running_sums

#: Symbols per bit plane group: 64 pairs per uint64 word.
WORD_BITS = 64
#: Codes A, C, G, T in the DNA alphabet; anything else cannot be bitsliced.
DNA_CODES = 4
#: Bits of one input symbol after W2B: low code bit, high code bit, pad bit.
INPUT_BITS = 3
#: Bytes of bit planes per chunk of groups (inputs), to bound memory at any size.
CHUNK_BYTES = 1 << 26

_MASKS = np.array([0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
                   0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF],
                  dtype=np.uint64)  # index log2(k): the low k bits of every 2k-bit block


def unsupported(scoring, algorithm: str) -> str | None:
    """Why the bitsliced method cannot score this scoring/algorithm (None when it can)."""
    if algorithm != "local":
        return f"it computes local alignment only (got algorithm={algorithm!r})"
    if scoring.alphabet.name != "dna" or scoring.match is None:
        return "it needs DNA match/mismatch scoring (Scoring(match=..., mismatch=...))"
    if not scoring.linear:
        return (f"it needs linear gaps (gap_open == gap_extend), got gap_open="
                f"{scoring.gap_open}, gap_extend={scoring.gap_extend}")
    if scoring.mismatch > 0:
        return f"it needs mismatch <= 0, got {scoring.mismatch}"
    return None


# --------------------------------------------------------------------------- transposes


@nb.njit(nogil=True, cache=True)
def transpose_w2b(a, s):
    """In-place 64x64 bit transpose of ``a`` (64 uint64) whose words use only bits < s.

    Afterwards word ``b`` holds bit ``b`` of every input word (bit ``k`` from word
    ``k``); words ``>= s`` are zero. Hacker's Delight's swap network with the paper's
    copy shortcut (Table I): while the block size k is at least s, the upper half of
    every 2k-bit block is empty, so a swap is a copy and the lower rows die.
    """
    live = 64
    k = 32
    lg = 5
    while k >= 1:
        m = _MASKS[lg]
        sh = np.uint64(k)
        for r in range(live):
            if r & k == 0:
                if k >= s:   # copy(A[r], A[r+k], k, m)
                    a[r] = (a[r] & m) | ((a[r + k] & m) << sh)
                    a[r + k] = np.uint64(0)
                else:        # swap(A[r], A[r+k], k, m)
                    c = ((a[r] >> sh) ^ a[r + k]) & m
                    a[r] ^= c << sh
                    a[r + k] ^= c
        if k >= s:
            live = k
        k >>= 1
        lg -= 1


@nb.njit(nogil=True, cache=True)
def transpose_b2w(a, s):
    """Inverse of :func:`transpose_w2b`: ``s`` bit planes back to 64 words (in place).

    The same operations in reverse order; a copy's inverse splits a word in two.
    """
    live = 64
    k = 32
    while k >= s and k >= 1:
        live = k
        k >>= 1
    k = 1
    lg = 0
    while k <= 32:
        m = _MASKS[lg]
        sh = np.uint64(k)
        if k >= s:
            live = 2 * k
        for r in range(live):
            if r & k == 0:
                if k >= s:
                    a[r + k] = (a[r] >> sh) & m
                    a[r] &= m
                else:
                    c = ((a[r] >> sh) ^ a[r + k]) & m
                    a[r] ^= c << sh
                    a[r + k] ^= c
        k <<= 1
        lg += 1


@nb.njit(nogil=True, cache=True, parallel=True)
def _w2b(codes, offsets, seq, g_first, g_count, g_rows, g_offset, words, planes):
    """Bit-transpose the sequences ``seq[p]`` of every group into ``planes``.

    Group g holds pairs ``g_first[g] .. + g_count[g]`` of ``seq`` (indices into
    ``offsets``); it fills rows ``g_offset[g] .. + g_rows[g]`` of ``planes``
    ``(rows, INPUT_BITS, words)``. Positions past a sequence's end get the pad bit.
    """
    for g in nb.prange(g_first.shape[0]):
        buf = np.empty(64, np.uint64)
        first = g_first[g]
        count = g_count[g]
        for w in range(words):
            lo = w * 64
            for i in range(g_rows[g]):
                for k in range(64):
                    v = np.uint64(4)
                    if lo + k < count:
                        p = seq[first + lo + k]
                        start = offsets[p]
                        if i < offsets[p + 1] - start:
                            v = np.uint64(codes[start + i])
                    buf[k] = v
                transpose_w2b(buf, 3)
                row = g_offset[g] + i
                planes[row, 0, w] = buf[0]
                planes[row, 1, w] = buf[1]
                planes[row, 2, w] = buf[2]


@nb.njit(nogil=True, cache=True, parallel=True)
def _b2w(result, s, g_first, g_count, pair_of, out):
    """Bit-untranspose ``result`` (groups, s, words) into ``out[pair_of[...]]``."""
    words = result.shape[2]
    for g in nb.prange(result.shape[0]):
        buf = np.empty(64, np.uint64)
        for w in range(words):
            for b in range(64):
                buf[b] = result[g, b, w] if b < s else np.uint64(0)
            transpose_b2w(buf, s)
            for k in range(64):
                idx = w * 64 + k
                if idx < g_count[g]:
                    out[pair_of[g_first[g] + idx]] = np.int32(buf[k])


# --------------------------------------------------------------------------- the DP


@cache
def _kernel(s: int, words: int, c1: int, c2: int, gap: int):
    """The SWA kernel for s-bit values, ``words`` words per group, constants baked in."""
    S, W, C1, C2, G = s, words, c1, c2, gap
    ZERO = np.uint64(0)

    @nb.njit(nogil=True, cache=True, parallel=True)
    def swa(pa, a_off, pb, b_off, out):
        """Max SW score planes of every group: pa/pb (rows, 3, W), out (groups, S, W)."""
        for g in nb.prange(a_off.shape[0] - 1):
            a0 = a_off[g]
            m = a_off[g + 1] - a0
            b0 = b_off[g]
            n = b_off[g + 1] - b0
            col = np.zeros((m, S, W), np.uint64)    # column j-1, then j
            rmax = np.zeros((m, S, W), np.uint64)   # running max of each row
            up = np.empty((S, W), np.uint64)
            diag = np.empty((S, W), np.uint64)
            t = np.empty((S, W), np.uint64)
            r = np.empty((S, W), np.uint64)
            d = np.empty((S, W), np.uint64)
            e = np.empty(W, np.uint64)
            p = np.empty(W, np.uint64)
            c = np.empty(W, np.uint64)
            for j in range(n):
                for b in range(S):
                    for w in range(W):
                        up[b, w] = ZERO
                        diag[b, w] = ZERO
                for i in range(m):
                    # e: 1 where the symbols differ or either is padding (matching_B's flag)
                    for w in range(W):
                        e[w] = ((pa[a0 + i, 0, w] ^ pb[b0 + j, 0, w])
                                | (pa[a0 + i, 1, w] ^ pb[b0 + j, 1, w])
                                | pa[a0 + i, 2, w] | pb[b0 + j, 2, w])
                    # t = max_B(up, left): p is greaterthan's borrow of up - left
                    for w in range(W):
                        p[w] = ~up[0, w] & col[i, 0, w]
                    for b in range(1, S):
                        for w in range(W):
                            x = up[b, w]
                            y = col[i, b, w]
                            p[w] = (~x & (y | p[w])) | (y & p[w])
                    for b in range(S):
                        for w in range(W):
                            x = up[b, w]
                            t[b, w] = x ^ ((x ^ col[i, b, w]) & p[w])
                    # t = SSub_B(t, gap): max(t - gap, 0)
                    for w in range(W):
                        p[w] = ZERO
                    for b in range(S):
                        for w in range(W):
                            x = t[b, w]
                            if (G >> b) & 1:
                                t[b, w] = ~(x ^ p[w])
                                p[w] = ~x | p[w]
                            else:
                                t[b, w] = x ^ p[w]
                                p[w] = ~x & p[w]
                    for b in range(S):
                        for w in range(W):
                            t[b, w] &= ~p[w]
                    # r = matching_B(diag): add_B(diag, c1) where e == 0, SSub_B(diag, c2) where e == 1
                    for w in range(W):
                        c[w] = ZERO
                        p[w] = ZERO
                    for b in range(S):
                        for w in range(W):
                            x = diag[b, w]
                            if (C1 >> b) & 1:
                                add = ~(x ^ c[w])
                                c[w] = x | c[w]
                            else:
                                add = x ^ c[w]
                                c[w] = x & c[w]
                            if (C2 >> b) & 1:
                                sub = ~(x ^ p[w])
                                p[w] = ~x | p[w]
                            else:
                                sub = x ^ p[w]
                                p[w] = ~x & p[w]
                            r[b, w] = add ^ ((add ^ sub) & e[w])
                    for b in range(S):
                        for w in range(W):
                            r[b, w] &= ~(p[w] & e[w])
                    # d = max_B(r, t)
                    for w in range(W):
                        p[w] = ~r[0, w] & t[0, w]
                    for b in range(1, S):
                        for w in range(W):
                            x = r[b, w]
                            y = t[b, w]
                            p[w] = (~x & (y | p[w])) | (y & p[w])
                    for b in range(S):
                        for w in range(W):
                            x = r[b, w]
                            d[b, w] = x ^ ((x ^ t[b, w]) & p[w])
                    # the old left value is the next row's diagonal; store d; row max
                    for w in range(W):
                        p[w] = ~rmax[i, 0, w] & d[0, w]
                    for b in range(S):
                        for w in range(W):
                            diag[b, w] = col[i, b, w]
                            col[i, b, w] = d[b, w]
                            up[b, w] = d[b, w]
                    for b in range(1, S):
                        for w in range(W):
                            x = rmax[i, b, w]
                            y = d[b, w]
                            p[w] = (~x & (y | p[w])) | (y & p[w])
                    for b in range(S):
                        for w in range(W):
                            x = rmax[i, b, w]
                            rmax[i, b, w] = x ^ ((x ^ d[b, w]) & p[w])
            # the group's maximum over all rows
            for b in range(S):
                for w in range(W):
                    out[g, b, w] = ZERO
            for i in range(m):
                for w in range(W):
                    p[w] = ~out[g, 0, w] & rmax[i, 0, w]
                for b in range(1, S):
                    for w in range(W):
                        x = out[g, b, w]
                        y = rmax[i, b, w]
                        p[w] = (~x & (y | p[w])) | (y & p[w])
                for b in range(S):
                    for w in range(W):
                        x = out[g, b, w]
                        out[g, b, w] = x ^ ((x ^ rmax[i, b, w]) & p[w])

    return swa


# --------------------------------------------------------------------------- driver


def value_bits(max_value: int) -> int:
    """Bits that hold every value 0..max_value (at least 1)."""
    return max(1, int(max_value).bit_length())


def score_pairs(xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray, yoff: np.ndarray,
                scoring, algorithm: str = "local", *, words: int = 1,
                largest: int | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Local scores of pairs (x_i, y_i) given as concatenated DNA codes and offsets.

    Args:
        xcodes, ycodes: uint8 codes (A C G T = 0..3 only; the caller checks).
        xoff, yoff: int64 offsets (len = pairs + 1).
        scoring: DNA match/mismatch, linear gaps (see :func:`unsupported`).
        algorithm: "local".
        words: 64-bit words per group (64 * words pairs share one DP).
        largest: the largest code, when known (unused: the caller checks A C G T).

    Returns:
        (scores int32 in pair order, indices of saturated pairs (always empty: s is wide
        enough), seconds per step {"w2b", "swa", "b2w"}).
    """
    why = unsupported(scoring, algorithm)
    if why is not None:
        raise ValueError(f"method 'bitsliced' cannot score this: {why}")
    npairs = len(xoff) - 1
    scores = np.zeros(npairs, dtype=np.int32)
    timings = {"w2b": 0.0, "swa": 0.0, "b2w": 0.0}
    c1, c2, gap = int(scoring.match), -int(scoring.mismatch), int(scoring.gap_open)
    if npairs == 0 or c1 <= 0:
        return scores, np.zeros(0, np.int64), timings
    xl = np.diff(xoff)
    yl = np.diff(yoff)
    x_short = xl <= yl
    short_len = np.where(x_short, xl, yl)
    long_len = np.where(x_short, yl, xl)
    # sequences as one index space: x_i is i, y_i is npairs + i
    codes = np.concatenate([xcodes, ycodes])
    offsets = np.concatenate([xoff[:-1], yoff + len(xcodes)]).astype(np.int64)
    idx = np.arange(npairs, dtype=np.int64)
    short_seq = np.where(x_short, idx, npairs + idx)
    long_seq = np.where(x_short, npairs + idx, idx)
    # groups of similar lengths: sort by the longer, then the shorter length
    order = np.lexsort((short_len, long_len))[::-1].astype(np.int64)
    per = WORD_BITS * words
    groups = (npairs + per - 1) // per
    g_first = np.arange(groups, dtype=np.int64) * per
    g_count = np.minimum(per, npairs - g_first)
    g_m = np.maximum.reduceat(short_len[order], g_first)
    g_n = np.maximum.reduceat(long_len[order], g_first)
    # chunks of groups with one s each (s from the chunk's longest shorter sequence)
    row_bytes = INPUT_BITS * words * 8
    start = 0
    while start < groups:
        stop = start + 1
        used = (g_m[start] + g_n[start]) * row_bytes
        while stop < groups and used + (g_m[stop] + g_n[stop]) * row_bytes <= CHUNK_BYTES:
            used += (g_m[stop] + g_n[stop]) * row_bytes
            stop += 1
        _score_chunk(codes, offsets, order, short_seq, long_seq, g_first[start:stop],
                     g_count[start:stop], g_m[start:stop], g_n[start:stop],
                     int(g_m[start:stop].max()), words, c1, c2, gap, scores, timings)
        start = stop
    return scores, np.zeros(0, np.int64), timings


def _score_chunk(codes, offsets, order, short_seq, long_seq, g_first, g_count, g_m, g_n,
                 longest_short, words, c1, c2, gap, scores, timings) -> None:
    if longest_short == 0:
        return   # every pair has an empty sequence: scores stay 0
    s = value_bits(c1 * longest_short)
    top = (1 << s) - 1
    # a constant at least 2**s acts as 2**s - 1: max(v - c, 0) == 0 for every s-bit v
    c2, gap = min(c2, top), min(gap, top)
    a_off = running_sums(g_m)
    b_off = running_sums(g_n)
    t0 = time.perf_counter()
    pa = np.empty((a_off[-1], INPUT_BITS, words), np.uint64)
    pb = np.empty((b_off[-1], INPUT_BITS, words), np.uint64)
    _w2b(codes, offsets, short_seq[order], g_first, g_count, g_m, a_off[:-1], words, pa)
    _w2b(codes, offsets, long_seq[order], g_first, g_count, g_n, b_off[:-1], words, pb)
    t1 = time.perf_counter()
    result = np.empty((len(g_m), s, words), np.uint64)
    _kernel(s, words, c1, c2, gap)(pa, a_off, pb, b_off, result)
    t2 = time.perf_counter()
    _b2w(result, s, g_first, g_count, order, scores)
    t3 = time.perf_counter()
    timings["w2b"] += t1 - t0
    timings["swa"] += t2 - t1
    timings["b2w"] += t3 - t2
