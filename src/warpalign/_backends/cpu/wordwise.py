"""Word-wise bulk pair scoring on the CPU: one pair per SIMD lane (inter-pair SIMD).

A group of ``lanes`` pairs runs one Gotoh DP in lock step: every DP value is a vector
with one narrow integer per pair, and the loop over the lanes is the innermost loop,
which LLVM turns into AVX2/AVX-512 instructions. Groups run in parallel over all cores
(``prange``). Any scoring: substitution matrices (a table lookup per lane) or
match/mismatch (a compare per lane), affine gaps, local/global/semiglobal.

Widths:

* local: 16-bit lanes whatever the lengths. A cell clamps at ``INT16_CAP``; a pair whose
  best cell reaches it is reported as saturated and the caller rescores it with the
  exact 32-bit scalar kernel. Scores below the cap are exact (nothing was clamped).
* global/semiglobal: 16-bit lanes when no value of the group can leave
  ``[-INT16_BOUND, INT16_BOUND]`` (bounded by ``(m + n + 2) * max |score or penalty|``),
  32-bit lanes otherwise. Nothing saturates.

Pairs of unequal lengths share a group. Local: past a pair's end the substitution score
is ``-PAD_PENALTY`` (or the mismatch score, which is <= 0, on the compare path), so a
padded cell is at most its largest neighbour and no score changes. Global/semiglobal
read the pair's own cell (row m, column n or the best of row m up to column n).

The DP runs column by column along y (the target) over a column buffer of x (the query)
symbols, so the working set is ``(len x + 1) * lanes`` values per group.
"""

from __future__ import annotations

from functools import cache

import numba as nb
import numpy as np

from .pairwise import ALGORITHM_CODES, GLOBAL, LOCAL, SEMIGLOBAL

#: Pairs per group, by lane width (one AVX-512 register of 16- or 32-bit lanes).
LANES = {16: 32, 32: 16}
#: Local 16-bit lanes clamp here; reaching it means "saturated, rescore wider".
INT16_CAP = 32767
#: Global/semiglobal use 16-bit lanes only when every value stays within this bound.
INT16_BOUND = 15000
#: "Minus infinity" per width; far enough from the type's limit that subtracting a
#: penalty cannot wrap.
NEG = {16: -16000, 32: -(1 << 29)}
#: Substitution score of a padding symbol on the table path (local only).
PAD_PENALTY = {16: 8000, 32: 1 << 22}
_PAD_X, _PAD_Y = 254, 255   # padding codes on the compare path: never equal, never < K


def match_mismatch(matrix: np.ndarray) -> tuple[int, int, int] | None:
    """(match, mismatch, K) when matrix[a, b] = match if a == b < K else mismatch."""
    size = matrix.shape[0]
    if size < 2:
        return None
    mism = int(matrix[0, 1])
    diag = np.diag(matrix)
    k = int(np.argmax(diag != diag[0])) if np.any(diag != diag[0]) else size
    expected = np.full_like(matrix, mism)
    idx = np.arange(k)
    expected[idx, idx] = diag[0]
    if not np.array_equal(matrix, expected):
        return None
    return int(diag[0]), mism, k


@cache
def _kernel(bits: int, algorithm: int, compare: bool):
    """The group kernel for ``bits``-wide lanes, one algorithm, compare or table path."""
    L = LANES[bits]
    DT = np.int16 if bits == 16 else np.int32
    ALG = algorithm
    CMP = compare

    @nb.njit(nogil=True, cache=True, parallel=True)
    def run(xcodes, xoff, ycodes, yoff, groups, g_m, g_n, match, mismatch, k_match, table, a1,
            gap_open, gap_extend, neg, cap, out, saturated):
        """Score the groups; ``groups`` (G, L) holds pair indices (-1 for an empty lane)."""
        go = np.int64(gap_open)
        ge = np.int64(gap_extend)
        for g in nb.prange(groups.shape[0]):
            m = g_m[g]
            n = g_n[g]
            xt = np.empty((m, L), np.uint8)
            yt = np.empty((n, L), np.uint8)
            ml = np.zeros(L, np.int64)
            nl = np.zeros(L, np.int64)
            padx = _PAD_X if CMP else a1 - 1
            pady = _PAD_Y if CMP else a1 - 1
            for l in range(L):
                p = groups[g, l]
                if p >= 0:
                    ml[l] = xoff[p + 1] - xoff[p]
                    nl[l] = yoff[p + 1] - yoff[p]
                for i in range(m):
                    xt[i, l] = xcodes[xoff[p] + i] if i < ml[l] else padx
                for j in range(n):
                    yt[j, l] = ycodes[yoff[p] + j] if j < nl[l] else pady
            hc = np.empty((m + 1, L), DT)
            ec = np.empty((m + 1, L), DT)
            for l in range(L):
                hc[0, l] = 0
                ec[0, l] = neg
            for i in range(1, m + 1):
                v = 0 if ALG == LOCAL else -(go + (i - 1) * ge)
                for l in range(L):
                    hc[i, l] = v
                    ec[i, l] = neg
            best = np.zeros(L, np.int64)
            if ALG != LOCAL:
                for l in range(L):
                    best[l] = hc[ml[l], l]   # column 0: global when n == 0; semiglobal start
            diag = np.empty(L, np.int64)
            up = np.empty(L, np.int64)
            f = np.empty(L, np.int64)
            w = np.empty(L, np.int64)
            for j in range(1, n + 1):
                top = 0 if ALG != GLOBAL else -(go + (j - 1) * ge)
                for l in range(L):
                    diag[l] = hc[0, l]
                    hc[0, l] = top
                    up[l] = top
                    f[l] = neg
                for i in range(1, m + 1):
                    if CMP:
                        for l in range(L):
                            x = xt[i - 1, l]
                            w[l] = match if (x == yt[j - 1, l]) & (x < k_match) else mismatch
                    else:
                        for l in range(L):
                            w[l] = table[np.int64(xt[i - 1, l]) * a1 + yt[j - 1, l]]
                    for l in range(L):
                        hl = np.int64(hc[i, l])
                        e = max(np.int64(ec[i, l]) - ge, hl - go)
                        ff = max(f[l] - ge, up[l] - go)
                        h = max(diag[l] + w[l], max(e, ff))
                        if ALG == LOCAL:
                            h = min(max(h, 0), cap)
                            best[l] = max(best[l], h)
                        diag[l] = hl
                        hc[i, l] = h
                        ec[i, l] = e
                        up[l] = h
                        f[l] = ff
                if ALG == GLOBAL:
                    for l in range(L):
                        if j == nl[l]:
                            best[l] = hc[ml[l], l]
                elif ALG == SEMIGLOBAL:
                    for l in range(L):
                        if j <= nl[l]:
                            best[l] = max(best[l], np.int64(hc[ml[l], l]))
            for l in range(L):
                p = groups[g, l]
                if p >= 0:
                    out[p] = best[l]
                    if ALG == LOCAL and best[l] >= cap:
                        saturated[p] = True

    return run


def score_pairs(xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray, yoff: np.ndarray,
                scoring, algorithm: str = "local") -> tuple[np.ndarray, np.ndarray, dict]:
    """Scores of pairs (x_i, y_i) given as concatenated codes and offsets.

    Args:
        xcodes, ycodes: uint8 codes in ``scoring.alphabet``; x is the query (rows),
            y the target (columns: semiglobal's free end gaps are on y).
        xoff, yoff: int64 offsets (len = pairs + 1).
        scoring: any :class:`~warpalign.scoring.Scoring`.
        algorithm: "local", "global" or "semiglobal".

    Returns:
        (scores int32 in pair order, indices of pairs that saturated 16-bit lanes (their
        score is not final: rescore them wider), seconds {"swa"}).
    """
    import time

    code = ALGORITHM_CODES[algorithm]
    npairs = len(xoff) - 1
    scores = np.zeros(npairs, dtype=np.int32)
    saturated = np.zeros(npairs, dtype=np.bool_)
    if npairs == 0:
        return scores, np.zeros(0, np.int64), {"swa": 0.0}
    t0 = time.perf_counter()
    xl = np.diff(xoff)
    yl = np.diff(yoff)
    matrix = scoring.matrix.astype(np.int64)
    mm = match_mismatch(matrix)
    compare = mm is not None and (code != LOCAL or mm[1] <= 0)
    biggest = max(int(np.abs(matrix).max()), scoring.gap_open, scoring.gap_extend, 1)
    if code == LOCAL:
        narrow = scoring.gap_open + scoring.gap_extend + int(np.abs(matrix).max()) <= 8000
        widths = np.full(npairs, 16 if narrow else 32)
    else:
        widths = np.where((xl + yl + 2) * biggest <= INT16_BOUND, 16, 32)
    order = np.lexsort((xl, yl))[::-1]
    out = np.zeros(npairs, dtype=np.int64)
    for bits in (16, 32):
        sel = order[widths[order] == bits]
        if sel.size == 0:
            continue
        lanes = LANES[bits]
        groups = np.full(((sel.size + lanes - 1) // lanes) * lanes, -1, dtype=np.int64)
        groups[:sel.size] = sel
        groups = groups.reshape(-1, lanes)
        valid = groups >= 0
        g_m = np.where(valid, xl[np.maximum(groups, 0)], 0).max(axis=1)
        g_n = np.where(valid, yl[np.maximum(groups, 0)], 0).max(axis=1)
        a1 = matrix.shape[0] + 1
        table = np.full((a1, a1), -PAD_PENALTY[bits], dtype=np.int64)
        table[:-1, :-1] = matrix
        match, mismatch, k_match = mm if compare else (0, 0, 0)
        cap = INT16_CAP if bits == 16 else (1 << 31) - 1
        _kernel(bits, code, compare)(xcodes, xoff, ycodes, yoff, groups, g_m, g_n, match,
                                     mismatch, k_match, table.ravel(), a1, scoring.gap_open,
                                     scoring.gap_extend, NEG[bits], cap, out, saturated)
    scores[:] = out
    return scores, np.flatnonzero(saturated), {"swa": time.perf_counter() - t0}
