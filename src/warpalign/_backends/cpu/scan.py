"""Exact CPU kernels of ``locate``'s row-scan and anti-diagonal methods (issue 6).

Each kernel returns, for the query ``q`` against one reference record ``t`` (codes),
the best local cell ``(score, query_end, reference_end)`` under DESIGN.md's tie rule
(largest score, then smallest reference end, then smallest query end; (0, 0, 0) when
nothing scores above 0), exactly as :func:`~warpalign._backends.cpu.pairwise.score_end`.
They are the executable specification of the CUDA kernels to come: the same recurrences
in the same order of evaluation, run serially where a GPU runs lanes in parallel.

Conventions (as ``score_end``): rows i = query positions, columns j = reference
positions; a gap of k symbols costs ``gop + (k − 1)·gex`` with ``gex ≤ gop``;
E: horizontal gaps (reference symbols against gaps), F: vertical gaps.

**Clamping at 0 (all kernels).** Every stored E, F, H is kept ≥ 0. This is exact for
local alignment: ``H = max(0, …)``, so an E or F ≤ 0 never decides an H, and
``max(max(E, 0) − gex, x, 0) = max(E − gex, x, 0)`` (likewise for F). It also keeps
every stored value in ``[0, rowmax + smax]``, which is what lets the narrow mode work.

**Row scan (paper 002, "scan").** Row i in two phases:

1. ``F[j] = max(F[j] − gex, H[j] − gop, 0)``, ``H̃[j] = max(H[j−1] + S(q_i, t_j), F[j], 0)``
   (previous-row H), and ``rowmax = max_j H̃[j]``.
2. ``E[j] = max(0, max_{k<j} H̃[k] − gop − (j−1−k)·gex)`` is an inclusive max-scan of
   ``x_j = H̃[j−1] − gop`` under ``a ⊕ b = max(a − gex·len(b), b)`` (a (value, length)
   pair scan; ``max(x − gex, y)`` alone is not associative). Using H̃ instead of H is
   exact because gop ≥ gex (KERNELS.md §E; paper 002's Eqs. 5–8 charge one gex more than
   Eqs. 3–4; this follows Eqs. 3–4). Then ``H[j] = max(H̃[j], E[j])``.
   The scan is paper 002's Fig. 4 localized scan: segments of ``SEGMENT`` (32, one warp)
   columns are scanned locally (step 1), each segment's last value is carried to the next
   (steps 2–3, decayed by ``SEGMENT·gex``), and the carry is scattered into the segment
   (step 4) only over the columns it can still raise: its reach is the adaptive window
   ``p_i = ⌊(rowmax_i − gop − 1)/gex⌋ + 1`` (§E; Eq. 11's ``p = ⌊n·Smatch/Ge⌋`` bounds it).
   Phase 2 is skipped when ``rowmax ≤ gop`` (then every E is 0).

   Mixed word length (Eqs. 9–10): rows run "narrow" (H, F, H̃ stored in int16) while
   ``rowmax_{i−1} + smax ≤ limit`` (every value of row i is ≤ that: H̃ ≤ H_prev + smax,
   F ≤ H_prev, E < rowmax), else "wide" (int32); a wide run returns to narrow once
   ``rowmax_{i−1} + smax ≤ limit − T`` with T = 10. ``limit`` is 32767 (int16, Hopper's
   16-bit DPX); 255 reproduces paper 002's 8-bit mode. The kernel counts the wide rows,
   so ``1 − wide_rows/m`` is paper 002 Fig. 6's share of narrow-mode cells.

**Single-stage scan (paper 004, "scan1").** Phase 1 as above (int32); phase 2 is
paper 004's Fig. 7 Hillis–Steele max-scan with decay and double buffering:
``E⁰[j] = H̃[j−1] − gop``; for I = 1, 2, 4, …: ``E[j] = max(E[j], E[j−I] − I·gex)`` for
j > I. After the round with shift I each E[j] covers the 2I nearest terms, so the
rounds stop once 2I ≥ p_i (terms farther than p_i are ≤ 0; paper 004 runs all ⌈log₂ n⌉
rounds; the result is the same).

**Anti-diagonal ("antidiagonal").** Cells (i, j) by anti-diagonals d = i + j (the cells
a GPU computes in parallel), three diagonals of H and one of E and F, indexed by i.

**Blocked anti-diagonal ("blocked").** The matrix in ``BLOCK``×``BLOCK`` tiles processed
by anti-diagonals of tiles (tile row increasing within one), each tile row-major;
tiles pass H/F along their bottom row, H/E along their right column and H at the corner.

The anti-diagonal kernels visit cells out of row order, so they keep the best cell by the
full tie key (score, then smaller j, then smaller i).
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: Columns per segment of the localized scan (one warp's lanes).
SEGMENT = 32
#: Paper 002's hysteresis T (Eq. 10).
SWITCH_BACK = 10
#: Largest value the narrow (int16) mode may hold.
NARROW_LIMIT = 32767
#: Tile side of the blocked anti-diagonal method.
BLOCK = 64


@nb.njit(nogil=True, cache=True, inline="always")
def _better(h, i, j, best, bi, bj):
    return h > best or (h == best and (j < bj or (j == bj and i < bi)))


@nb.njit(nogil=True, cache=True)
def _scan_row(prof, t, H, F, Ht, go, ge, seg):
    """One row of the paper-002 scan on arrays of one word length (int16 or int32).

    H: previous row in, this row out; F: vertical gaps (updated); Ht: workspace.
    Returns (rowmax, first column of rowmax)."""
    n = t.shape[0]
    rowmax = 0
    rj = 0
    # phase 1: no left dependency (every column independent); the row's first maximum
    # is H's too, since every E <= rowmax - gop < rowmax
    Ht[0] = 0
    for j in range(1, n + 1):
        f = max(F[j] - ge, H[j] - go, 0)
        F[j] = f
        h = max(H[j - 1] + prof[t[j - 1]], f, 0)
        Ht[j] = h
        if h > rowmax:
            rowmax = h
            rj = j
    if rowmax <= go:            # every E is 0: H = H̃
        for j in range(1, n + 1):
            H[j] = Ht[j]
        return rowmax, rj
    reach = n + 1 if ge == 0 else (rowmax - go - 1) // ge + 1   # adaptive window p_i
    # phase 2: localized (value, length) max-scan, segment by segment
    carry = 0                  # E at the last column of the previous segment
    s0 = 1
    while s0 <= n:
        s1 = min(s0 + seg, n + 1)
        # step 1: local inclusive scan of x_j = H̃[j-1] - gop within the segment
        loc = 0
        for j in range(s0, s1):
            loc = max(loc - ge, Ht[j - 1] - go, 0)
            H[j] = loc         # H holds the local scan until step 4
        # step 4: scatter the carry over the columns it can raise (its reach <= p_i)
        if carry > 0:
            span = s1 - s0 if ge == 0 else min(s1 - s0, (carry - 1) // ge)
            span = min(span, reach)
            for k in range(span):
                v = carry - (k + 1) * ge
                H[s0 + k] = max(H[s0 + k], v)
        # steps 2-3: the segment's last E is the next segment's carry
        carry = H[s1 - 1]
        s0 = s1
    for j in range(1, n + 1):
        H[j] = max(Ht[j], H[j])
    return rowmax, rj


@nb.njit(nogil=True, cache=True)
def scan_kernel(q, t, matrix, gap_open, gap_extend, limit, seg):
    """Paper 002's mixed-word-length row scan: (score, query_end, ref_end, wide_rows)."""
    m = q.shape[0]
    n = t.shape[0]
    go = np.int32(gap_open)
    ge = np.int32(gap_extend)
    smax = 0
    for a in range(matrix.shape[0]):
        for b in range(matrix.shape[1]):
            smax = max(smax, matrix[a, b])
    Hn = np.zeros(n + 1, np.int16)
    Fn = np.zeros(n + 1, np.int16)
    Tn = np.zeros(n + 1, np.int16)
    Hw = np.zeros(n + 1, np.int32)
    Fw = np.zeros(n + 1, np.int32)
    Tw = np.zeros(n + 1, np.int32)
    prof = np.empty(matrix.shape[1], np.int32)
    narrow = True
    wide_rows = 0
    prev_max = 0
    best = 0
    bi = 0
    bj = 0
    for i in range(1, m + 1):
        need = prev_max + smax     # bound on every value of row i (Eq. 9 with smax)
        if narrow and need > limit:
            for j in range(n + 1):
                Hw[j] = Hn[j]
                Fw[j] = Fn[j]
            narrow = False
        elif not narrow and need <= limit - SWITCH_BACK:   # Eq. 10
            for j in range(n + 1):
                Hn[j] = Hw[j]
                Fn[j] = Fw[j]
            narrow = True
        for c in range(matrix.shape[1]):
            prof[c] = matrix[q[i - 1], c]
        if narrow:
            rmax, rj = _scan_row(prof, t, Hn, Fn, Tn, go, ge, seg)
        else:
            wide_rows += 1
            rmax, rj = _scan_row(prof, t, Hw, Fw, Tw, go, ge, seg)
        prev_max = rmax
        if rmax > 0 and (rmax > best or (rmax == best and rj < bj)):
            best = rmax
            bi = i
            bj = rj
    return best, bi, bj, wide_rows


@nb.njit(nogil=True, cache=True)
def scan1_kernel(q, t, matrix, gap_open, gap_extend):
    """Paper 004's row scan with a single-stage Hillis-Steele phase 2."""
    m = q.shape[0]
    n = t.shape[0]
    go = np.int32(gap_open)
    ge = np.int32(gap_extend)
    H = np.zeros(n + 1, np.int32)
    F = np.zeros(n + 1, np.int32)
    Ht = np.zeros(n + 1, np.int32)
    A = np.zeros(n + 1, np.int32)
    B = np.zeros(n + 1, np.int32)
    best = 0
    bi = 0
    bj = 0
    for i in range(1, m + 1):
        prof = matrix[q[i - 1]]
        rowmax = 0
        for j in range(1, n + 1):            # phase 1
            f = max(F[j] - ge, H[j] - go, 0)
            F[j] = f
            Ht[j] = max(H[j - 1] + prof[t[j - 1]], f, 0)
        for j in range(1, n + 1):
            rowmax = max(rowmax, Ht[j])
        if rowmax > go:                      # phase 2 (else every E is 0)
            reach = n if ge == 0 else (rowmax - go - 1) // ge + 1
            for j in range(1, n + 1):        # iteration 0: E[j] = H̃[j-1] - gop
                A[j] = max(Ht[j - 1] - go, 0)
            w = 1
            while w < reach and w < n:       # iterations I = 1, 2, 4, ...
                dec = w * ge
                for j in range(1, w + 1):
                    B[j] = A[j]
                for j in range(w + 1, n + 1):
                    B[j] = max(A[j], A[j - w] - dec)
                A, B = B, A                  # double buffering
                w *= 2
            for j in range(1, n + 1):
                H[j] = max(Ht[j], A[j])
        else:
            for j in range(1, n + 1):
                H[j] = Ht[j]
        if rowmax > 0 and rowmax >= best:
            for j in range(1, n + 1):
                if H[j] == rowmax:
                    if rowmax > best or j < bj:
                        best = rowmax
                        bi = i
                        bj = j
                    break
    return best, bi, bj


@nb.njit(nogil=True, cache=True)
def antidiagonal_kernel(q, t, matrix, gap_open, gap_extend):
    """Cells by anti-diagonals d = i + j; buffers indexed by the row i."""
    m = q.shape[0]
    n = t.shape[0]
    go = np.int32(gap_open)
    ge = np.int32(gap_extend)
    H1 = np.zeros(m + 1, np.int32)    # diagonal d-1
    H2 = np.zeros(m + 1, np.int32)    # diagonal d-2
    H0 = np.zeros(m + 1, np.int32)    # diagonal d (being computed)
    E1 = np.zeros(m + 1, np.int32)
    F1 = np.zeros(m + 1, np.int32)
    E0 = np.zeros(m + 1, np.int32)
    F0 = np.zeros(m + 1, np.int32)
    best = 0
    bi = 0
    bj = 0
    for d in range(2, m + n + 1):
        lo = max(1, d - n)
        hi = min(m, d - 1)
        # row lo-1 / column 0 boundaries are 0 (H) and 0 (clamped E, F)
        if lo - 1 >= 0:
            H0[lo - 1] = 0
            E0[lo - 1] = 0
            F0[lo - 1] = 0
        for i in range(lo, hi + 1):
            j = d - i
            # left (i, j-1) on d-1 at index i (0 when j-1 == 0)
            hl = H1[i] if j > 1 else 0
            el = E1[i] if j > 1 else 0
            # up (i-1, j) on d-1 at index i-1 (0 when i-1 == 0)
            hu = H1[i - 1] if i > 1 else 0
            fu = F1[i - 1] if i > 1 else 0
            hd = H2[i - 1] if (i > 1 and j > 1) else 0
            e = max(el - ge, hl - go, 0)
            f = max(fu - ge, hu - go, 0)
            h = max(hd + matrix[q[i - 1], t[j - 1]], e, f, 0)
            H0[i] = h
            E0[i] = e
            F0[i] = f
            if h > 0 and _better(h, i, j, best, bi, bj):
                best = h
                bi = i
                bj = j
        H2, H1, H0 = H1, H0, H2
        E1, E0 = E0, E1
        F1, F0 = F0, F1
    return best, bi, bj


@nb.njit(nogil=True, cache=True)
def blocked_kernel(q, t, matrix, gap_open, gap_extend, block):
    """Tiles of block x block by anti-diagonals of tiles, each tile row-major."""
    m = q.shape[0]
    n = t.shape[0]
    go = np.int32(gap_open)
    ge = np.int32(gap_extend)
    hrow = np.zeros(n + 1, np.int32)   # H of the last row computed, per column
    frow = np.zeros(n + 1, np.int32)   # F likewise
    hcol = np.zeros(m + 1, np.int32)   # H of the last column computed, per row
    ecol = np.zeros(m + 1, np.int32)   # E likewise
    corner = np.zeros((n + block - 1) // block + 2, np.int32)
    lh = np.zeros(block + 1, np.int32)
    best = 0
    bi = 0
    bj = 0
    tm = (m + block - 1) // block
    tn = (n + block - 1) // block
    for dd in range(tm + tn - 1):
        for ti in range(max(0, dd - tn + 1), min(tm, dd + 1)):
            tj = dd - ti
            i0 = ti * block + 1
            i1 = min(i0 + block, m + 1)
            j0 = tj * block + 1
            j1 = min(j0 + block, n + 1)
            c = corner[tj] if (ti > 0 and tj > 0) else 0
            # the corner of tile (ti, tj + 1): H(i0 - 1, j1 - 1), before this tile's rows
            corner[tj + 1] = hrow[j1 - 1] if ti > 0 else 0
            # left column H(i, j0 - 1) for the tile's rows, with the corner above it
            lh[0] = c
            for i in range(i0, i1):
                lh[i - i0 + 1] = hcol[i] if tj > 0 else 0
            for i in range(i0, i1):
                prof = matrix[q[i - 1]]
                diag = lh[i - i0]
                left = lh[i - i0 + 1]
                e = ecol[i] if tj > 0 else 0
                for j in range(j0, j1):
                    up = hrow[j] if i > 1 else 0
                    f = max(frow[j] - ge, up - go, 0)
                    e = max(e - ge, left - go, 0)
                    h = max(diag + prof[t[j - 1]], e, f, 0)
                    diag = up
                    hrow[j] = h
                    frow[j] = f
                    left = h
                    if h > 0 and _better(h, i, j, best, bi, bj):
                        best = h
                        bi = i
                        bj = j
                hcol[i] = left
                ecol[i] = e
    return best, bi, bj


# ---------------------------------------------------------------------------- wrappers


def _args(q, t, scoring):
    return (np.ascontiguousarray(q, dtype=np.uint8), np.ascontiguousarray(t, dtype=np.uint8),
            np.ascontiguousarray(scoring.matrix, dtype=np.int32),
            int(scoring.gap_open), int(scoring.gap_extend))


def score_end_method(method: str, q: np.ndarray, t: np.ndarray, scoring,
                     limit: int = NARROW_LIMIT) -> tuple[int, int, int, int]:
    """(score, query_end, reference_end, wide_rows) of ``q`` against one record ``t`` by
    ``method`` ("scan", "scan1", "antidiagonal", "blocked"); wide_rows is 0 except for
    "scan" (rows run in 32-bit mode, narrow ``limit``)."""
    a = _args(q, t, scoring)
    if a[4] > a[3]:
        raise ValueError("the scan methods need gap_extend <= gap_open")
    if method == "scan":
        if not 0 < limit <= NARROW_LIMIT:
            raise ValueError(f"narrow limit {limit} outside 1..{NARROW_LIMIT}")
        s, i, j, w = scan_kernel(*a, int(limit), SEGMENT)
        return int(s), int(i), int(j), int(w)
    if method == "scan1":
        s, i, j = scan1_kernel(*a)
    elif method == "antidiagonal":
        s, i, j = antidiagonal_kernel(*a)
    elif method == "blocked":
        s, i, j = blocked_kernel(*a, BLOCK)
    else:
        raise ValueError(f"unknown scan method {method!r}")
    return int(s), int(i), int(j), 0


KERNEL_METHODS = ("scan", "scan1", "antidiagonal", "blocked")

__all__ = ["BLOCK", "KERNEL_METHODS", "NARROW_LIMIT", "SEGMENT", "SWITCH_BACK",
           "antidiagonal_kernel", "blocked_kernel", "scan1_kernel", "scan_kernel",
           "score_end_method"]
