"""Striped SIMD kernels for one long pair (Farrar 2007) in Numba: ``align``'s passes.

One sequence (the *striped* one) is laid out in ``L`` lanes of ``S = ceil(len / L)``
segments: row ``r`` (0-based) sits in segment ``r % S`` of lane ``r // S``. The other
sequence is walked one *column* at a time; each column is a loop over the S segments
whose body is a loop over the L lanes with no dependency between lanes, which LLVM
turns into packed instructions (``vpaddw``/``vpmaxsw`` on int16, ``vpaddd``/``vpmaxsd``
on int32; L fills 64 bytes: one zmm register or two ymm ones). The vertical-gap chain
runs across segments inside a lane; what it carries from the bottom of lane l into the
top of lane l+1 is added afterwards by the *lazy-F* pass: the carries of all lanes first
(a scalar prefix over the L lanes), then one pass down the lanes that applies them until
no lane can raise a value any more (Farrar's loop re-runs up to L passes instead: L times
a column when a high score's vertical gap crosses every lane below it). Every value
stored is exact (the same H and E as the scalar Gotoh of
:func:`~warpalign._backends.cpu.pairwise.score_end`), so the results are.

Exactness notes:

* **Lazy-F stop.** The pass stops at segment s when in every lane the carry going on,
  ``f - gap_extend``, is at most ``max(H(s) - gap_open, low)`` with H(s) the value
  *before* the carry was applied: that value's own vertical gap was propagated by the
  first pass, so the carry adds nothing below. Testing the raised value instead (as
  parasail's striped kernels do) stops too early when ``gap_open == gap_extend``. The
  lazy pass also raises E for the next column.
* **End cell.** DESIGN.md's tie rule (best score, smallest target end, smallest query
  end): each column keeps per lane its running maximum and, every ``BLOCK`` segments, a
  snapshot of it (maxima of the lazy-F raises included). A column whose maximum beats the
  best so far finds its first row of that value from the snapshots (lowest lane, first
  block, first segment): a few hundred scalar reads, not a pass over the column.
* **Narrow (int16, local).** All values stay in ``[-gap_open - gap_extend, 32767]`` while
  the column maximum is at most ``32767 - max substitution score``; the first column above
  that is still exact, and the kernel returns there. The caller converts the state to
  int32 and goes on from the next column (no rescoring from the start).

The same kernel, with the roles of query and target exchanged and global boundaries,
computes the last row of Myers–Miller's half passes (:func:`last_row_striped`).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

from .batch import _stack_buffer
from .pairwise import GLOBAL, LOCAL, SEMIGLOBAL, score_end

#: Lanes per vector: 64 bytes of int16 or int32.
LANES16 = 32
LANES32 = 16
#: Segments between two snapshots of the column maxima (the end-cell search). Each block
#: ends the vectorized segment loop (its vectors stored, the loop's remainder run): at 64
#: that cost a 100 kbp pair ~20% of its time on one core (Zen 4, session 40; 256-1024
#: within the noise of each other), where the search reads at most a block of a lane.
BLOCK = 512
#: Smallest value the int32 kernel stores ("-inf"); real values stay above NEG32 + 2**28.
NEG32 = -(1 << 29)
#: Pairs of fewer cells (or a striped sequence shorter than this) run the scalar kernel.
MIN_CELLS = 1 << 16
MIN_ROWS = 64

# kernel modes (what each column reports)
_PLAIN, _BEST_CELL, _LAST_ROW = 0, 1, 2
# kernel status
_DONE, _SATURATED = 0, 1
_V_ROWS = 5   # stack vectors: diagonal, vertical gap carry, column max, shift scratch,
#              lazy max
_V_SIZE = _V_ROWS * 32


def _lanes_of(W):
    """Lanes of a state array (a compile-time constant inside kernels)."""
    return LANES16 if W.dtype == np.int16 else LANES32


@overload(_lanes_of, inline="always")
def _lanes_of_impl(W):
    lanes = LANES16 if W.dtype == types.int16 else LANES32
    return lambda W: lanes


@nb.njit(nogil=True, cache=True)
def _columns(P, tc, S, W, snap, go, ge, low, top_open, top_ext, jfirst, mode,
             rlast, limit, best, bi, bj):
    """Run the striped DP over columns ``jfirst .. jfirst + len(tc) - 1`` (1-based).

    P: the profile, flat ``[codes, S, L]``; ``tc[k]`` is the profile block of column
    ``jfirst + k``. W: the state, flat ``[S, 2, L]`` (H of the previous column, E of the
    next one), updated in place. snap: ``[ceil(S / BLOCK), L]`` scratch. ``go``, ``ge``:
    the gap penalties.
    ``low``: every H is at least this (0 local, NEG32 otherwise). Row 0 of column j holds
    ``-(top_open + (j - 1) * top_ext)`` (0 for j = 0). Modes: ``_BEST_CELL`` keeps the best
    cell by the tie rule and stops after the first column above ``limit``; ``_LAST_ROW``
    keeps the best cell of row ``rlast`` (smallest column); ``_PLAIN`` runs.

    Returns (status, best, best row 1-based, best column, last column run).
    """
    L = _lanes_of(W)
    T = W.dtype.type
    V = nb.carray(_stack_buffer(_V_SIZE, W.dtype), (_V_ROWS, 32))
    # two more stack vectors of their own: scalar loops over an alloca keep LLVM from
    # forwarding or vectorizing its other accesses (the profile copy went scalar)
    Pv = _stack_buffer(32, W.dtype)
    C = _stack_buffer(32, W.dtype)
    uL = np.uint64(L)
    uL2 = np.uint64(2 * L)
    go = T(go)
    ge = T(ge)
    low = T(low)
    lowest = T(-32768) if W.itemsize == 2 else T(NEG32)
    floor = max(T(low - go), lowest)          # a vertical gap carry never goes below this
    nblk = (S + BLOCK - 1) // BLOCK
    last = np.uint64(S - 1) * uL2
    lane_of_last = rlast // S
    at_last = np.uint64(rlast % S) * uL2 + np.uint64(lane_of_last)
    j = jfirst - 1
    for k in range(tc.shape[0]):
        j = jfirst + k
        pb = np.uint64(tc[k]) * np.uint64(S) * uL
        top_d = T(0) if j == 1 else T(-(top_open + (j - 2) * top_ext))
        top_j = T(-(top_open + (j - 1) * top_ext))
        # segment 0's diagonal: the previous column's last segment, one lane down
        for l in range(L):
            V[3, l] = W[last + np.uint64(l)]
        V[0, 0] = top_d
        for l in range(1, L):
            V[0, l] = V[3, l - 1]
        for l in range(L):
            V[1, l] = floor
            V[2, l] = lowest
        V[1, 0] = max(T(top_j - go), floor)
        for b in range(nblk):
            for s in range(b * BLOCK, min(S, (b + 1) * BLOCK)):
                po = pb + np.uint64(s) * uL
                wo = np.uint64(s) * uL2
                # the profile goes through the stack: loads from P in the loop below
                # would need a run-time alias check against W (and a scalar fallback)
                for l in range(L):
                    Pv[l] = P[po + np.uint64(l)]
                for l in range(L):
                    ul = np.uint64(l)
                    h = T(V[0, l] + Pv[l])
                    e = W[wo + uL + ul]
                    f = V[1, l]
                    h = max(max(h, e), max(f, low))
                    V[0, l] = W[wo + ul]
                    W[wo + ul] = h
                    V[2, l] = max(V[2, l], h)
                    ho = T(h - go)
                    W[wo + uL + ul] = max(T(e - ge), ho)
                    V[1, l] = max(T(f - ge), ho)
            for l in range(L):
                snap[b * L + l] = V[2, l]
        # lazy F. What enters lane l from lane l-1 is exact at once: the carry leaving a
        # lane is the larger of its own first-pass F and the carry that entered it,
        # decayed over its S rows (a value the carry raised opens no better gap); one
        # pass then applies each lane's carry down the lane until none can raise a value
        for l in range(L):
            C[l] = V[1, l]
        carry = np.int64(floor)
        for l in range(L):
            out = np.int64(C[l])
            C[l] = T(carry)
            carry = max(out, carry - S * np.int64(ge), np.int64(floor))
        for l in range(L):
            V[1, l] = C[l]
        for l in range(L):
            V[4, l] = lowest
        stop = S - 1
        for s in range(S):
            wo = np.uint64(s) * uL2
            acc = T(-1)
            for l in range(L):
                ul = np.uint64(l)
                f = V[1, l]
                old = W[wo + ul]
                h = max(old, f)
                W[wo + ul] = h
                V[4, l] = max(V[4, l], h)
                W[wo + uL + ul] = max(W[wo + uL + ul], T(h - go))
                f = max(T(f - ge), floor)
                V[1, l] = f
                acc = max(acc, T(f - max(T(old - go), low)))
            if acc <= 0:
                stop = s
                break
            if (s + 1) % BLOCK == 0:
                b = s // BLOCK
                for l in range(L):
                    snap[b * L + l] = max(snap[b * L + l], V[4, l])
        for b in range(stop // BLOCK, nblk):
            for l in range(L):
                snap[b * L + l] = max(snap[b * L + l], V[4, l])
        if mode == _BEST_CELL:
            top = nblk - 1
            cm = snap[top * L]
            for l in range(1, L):
                cm = max(cm, snap[top * L + l])
            if cm > best:
                lane = 0
                while snap[top * L + lane] != cm:
                    lane += 1
                b = 0
                while snap[b * L + lane] != cm:
                    b += 1
                s = b * BLOCK
                while W[np.uint64(s) * uL2 + np.uint64(lane)] != cm:
                    s += 1
                best = np.int64(cm)
                bi = lane * S + s + 1
                bj = j
            if cm > limit:
                return _SATURATED, best, bi, bj, j
        elif mode == _LAST_ROW:
            h = np.int64(W[at_last])
            if h > best:
                best = h
                bj = j
    return _DONE, best, bi, bj, j


def _lanes(dtype) -> int:
    return LANES16 if np.dtype(dtype) == np.int16 else LANES32


def profile(seq: np.ndarray, scores: np.ndarray, dtype, pad: int) -> tuple[np.ndarray, int]:
    """Striped profile of ``seq``: flat ``[codes, S, L]`` with ``P[c, s, l] =
    scores[seq[l * S + s], c]`` (``pad`` past the end). Returns (P, S)."""
    L = _lanes(dtype)
    m = seq.size
    S = max(1, -(-m // L))
    codes = scores.shape[1]
    P = np.full((codes, S * L), pad, dtype)
    P[:, :m] = scores[seq].T
    return np.ascontiguousarray(P.reshape(codes, L, S).transpose(0, 2, 1)).reshape(-1), S


def stripe(rows: np.ndarray, L: int, S: int, fill) -> np.ndarray:
    """``[S, L]`` striped copy of a per-row array (``fill`` past its end)."""
    out = np.full(S * L, fill, rows.dtype)
    out[:rows.size] = rows
    return out.reshape(L, S).T


def unstripe(W: np.ndarray, L: int, S: int, which: int, m: int) -> np.ndarray:
    """Rows 0..m-1 of H (``which`` 0) or E (1) from a flat ``[S, 2, L]`` state."""
    return W.reshape(S, 2, L)[:, which, :].T.reshape(-1)[:m]


def _state(h_rows: np.ndarray, e_rows: np.ndarray, dtype, S: int, h_fill: int,
           e_fill: int) -> np.ndarray:
    """Flat ``[S, 2, L]`` kernel state from per-row H and E (fills past the last row)."""
    L = _lanes(dtype)
    W = np.empty((S, 2, L), dtype)
    W[:, 0, :] = stripe(h_rows.astype(dtype), L, S, h_fill)
    W[:, 1, :] = stripe(e_rows.astype(dtype), L, S, e_fill)
    return W.reshape(-1)


def _compact(t: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The walked sequence's codes as profile blocks, and the score columns they need."""
    used, tc = np.unique(t, return_inverse=True)
    return tc.astype(np.uint16).reshape(-1), np.ascontiguousarray(scores[:, used])


def _fits32(m: int, n: int, matrix: np.ndarray, go: int, ge: int) -> bool:
    """Every value of an m x n pass stays far inside the int32 kernel's range."""
    worst = max(int(np.abs(matrix).max(initial=0)), go, ge)
    return 4 * go + (m + n + 2) * worst < (1 << 28)


def score_end_striped(q: np.ndarray, t: np.ndarray, matrix: np.ndarray, gap_open: int,
                      gap_extend: int, algorithm: int) -> tuple[int, int, int]:
    """:func:`~warpalign._backends.cpu.pairwise.score_end` on the striped kernels.

    Same (score, query end, target end) for every input (local, global, semiglobal).
    Local alignment runs int16 while its scores fit and goes on in int32 from the column
    where they stop fitting; global and semiglobal run int32. Empty sequences and pairs
    whose values could leave the int32 kernel's range run the scalar kernel.
    """
    q = np.ascontiguousarray(q, dtype=np.uint8)
    t = np.ascontiguousarray(t, dtype=np.uint8)
    matrix = np.ascontiguousarray(matrix, dtype=np.int32)
    go, ge = int(gap_open), int(gap_extend)
    m, n = q.size, t.size
    if m == 0 or n == 0 or not _fits32(m, n, matrix, go, ge):
        s, i, j = score_end(q, t, matrix, go, ge, algorithm)
        return int(s), int(i), int(j)
    tc, cols = _compact(t, matrix)
    top = int(matrix.max())
    if algorithm == LOCAL:
        h0 = np.zeros(m, np.int64)
        e0 = np.full(m, -go, np.int64)
        best, bi, bj, jdone = 0, 0, 0, 0
        if top <= 4096 and int(matrix.min()) >= -32767 and go + ge <= 32767:
            P, S = profile(q, cols, np.int16, -32768)
            W = _state(h0, e0, np.int16, S, 0, -go)
            snap = np.empty(-(-S // BLOCK) * LANES16, np.int16)
            status, best, bi, bj, jdone = _columns(P, tc, S, W, snap, go, ge, 0, 0, 0,
                                                   1, _BEST_CELL, 0, 32767 - top, 0, 0, 0)
            if status == _DONE:
                return int(best), int(bi), int(bj)
            h0 = unstripe(W, LANES16, S, 0, m).astype(np.int64)
            e0 = unstripe(W, LANES16, S, 1, m).astype(np.int64)
        P, S = profile(q, cols, np.int32, NEG32)
        W = _state(h0, e0, np.int32, S, 0, -go)
        snap = np.empty(-(-S // BLOCK) * LANES32, np.int32)
        _, best, bi, bj, _ = _columns(P, tc[jdone:], S, W, snap, go, ge, 0, 0, 0,
                                      jdone + 1, _BEST_CELL, 0, 1 << 30, best, bi, bj)
        return int(best), int(bi), int(bj)
    rows = np.arange(m, dtype=np.int64)
    h0 = -(go + rows * ge)                     # column 0: a vertical gap from the origin
    P, S = profile(q, cols, np.int32, NEG32)
    W = _state(h0, h0 - go, np.int32, S, NEG32, NEG32)
    snap = np.empty(-(-S // BLOCK) * LANES32, np.int32)
    if algorithm == SEMIGLOBAL:
        # row 0 is free (0); the best of row m, smallest column, from column 0 on
        _, best, _, bj, _ = _columns(P, tc, S, W, snap, go, ge, NEG32, 0, 0, 1,
                                     _LAST_ROW, m - 1, 0, int(h0[-1]), m, 0)
        return int(best), m, int(bj)
    _columns(P, tc, S, W, snap, go, ge, NEG32, go, ge, 1, _PLAIN, m - 1, 0, 0, 0,
             0)
    return int(unstripe(W, LANES32, S, 0, m)[m - 1]), m, n


def score_end_long(q: np.ndarray, t: np.ndarray, matrix: np.ndarray, gap_open: int,
                   gap_extend: int, algorithm: int) -> tuple[int, int, int]:
    """``score_end`` for one pair of any size: the striped kernels for long pairs, the
    scalar kernel for short ones (where striping costs more than it saves)."""
    if q.size < MIN_ROWS or q.size * t.size < MIN_CELLS:
        s, i, j = score_end(np.ascontiguousarray(q, dtype=np.uint8),
                            np.ascontiguousarray(t, dtype=np.uint8), matrix, gap_open,
                            gap_extend, algorithm)
        return int(s), int(i), int(j)
    return score_end_striped(q, t, matrix, gap_open, gap_extend, algorithm)


__all__ = ["GLOBAL", "LOCAL", "SEMIGLOBAL", "score_end_long", "score_end_striped"]
