"""Scalar 32-bit Gotoh DP for one pair: score and end cell, every algorithm.

This is the CPU engine's exact workhorse: the rescoring path of the narrow kernels,
the pairwise ``align`` forward pass and the executable specification of the tie rule.
Linear space (two rows), O(mn) time.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ...choices import ALGORITHM_CODES, GLOBAL, LOCAL, SEMIGLOBAL  # noqa: F401 (re-exported)

NEG_INF = np.int32(-(1 << 30))


@nb.njit(nogil=True, cache=True)
def score_end(q, t, matrix, gap_open, gap_extend, algorithm):
    """Return (score, query_end, target_end) of the best alignment of codes q against t.

    Rows are query positions. Local: best cell anywhere, ties to the smallest target end
    then the smallest query end; score 0 gives (0, 0, 0). Global: the corner (m, n).
    Semiglobal (target end gaps free): the best cell of the last row, smallest target end.
    """
    m = q.shape[0]
    n = t.shape[0]
    go = np.int32(gap_open)
    ge = np.int32(gap_extend)
    H = np.empty(n + 1, np.int32)   # row i-1, then row i
    F = np.empty(n + 1, np.int32)   # F of row i-1 per column (vertical gaps)
    neg = NEG_INF
    H[0] = 0
    for j in range(1, n + 1):
        if algorithm == GLOBAL:
            H[j] = -(go + (j - 1) * ge)
        else:
            H[j] = 0
        F[j] = neg
    best = np.int32(0) if algorithm != GLOBAL else neg
    bi = 0
    bj = 0
    if algorithm == SEMIGLOBAL and m == 0:
        best = np.int32(0)
    if algorithm == GLOBAL and m == 0:
        best = H[n]
        bi = 0
        bj = n
    local = algorithm == LOCAL
    for i in range(1, m + 1):
        row = matrix[q[i - 1]]
        diag = H[0]
        if local:
            H[0] = 0
        else:
            H[0] = -(go + (i - 1) * ge)
        e = neg
        left = H[0]
        rbest = np.int32(0)  # best of this row and its first (smallest) column
        rj = 0
        for j in range(1, n + 1):
            e = max(e - ge, left - go)
            f = max(F[j] - ge, H[j] - go)
            h = max(diag + row[t[j - 1]], max(e, f))
            if local:
                h = max(h, 0)
                if h > rbest:
                    rbest = h
                    rj = j
            diag = H[j]
            H[j] = h
            F[j] = f
            left = h
        # tie rule: higher score; equal score -> smaller target end; equal -> earlier row
        if local and rbest > 0 and (rbest > best or (rbest == best and rj < bj)):
            best = rbest
            bi = i
            bj = rj
        if algorithm == SEMIGLOBAL and i == m:
            best = H[0] if n == 0 else neg
            bj = 0
            for j in range(n + 1):
                if H[j] > best:
                    best = H[j]
                    bj = j
            bi = m
        if algorithm == GLOBAL and i == m:
            best = H[n]
            bi = m
            bj = n
    return best, bi, bj


def score_end_py(q: np.ndarray, t: np.ndarray, matrix: np.ndarray, gap_open: int, gap_extend: int,
                 algorithm: str = "local") -> tuple[int, int, int]:
    """Python-facing wrapper: returns plain ints."""
    s, i, j = score_end(q, t, matrix, gap_open, gap_extend, ALGORITHM_CODES[algorithm])
    return int(s), int(i), int(j)
