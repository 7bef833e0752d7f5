"""Inter-sequence SIMD database scan (SWIPE's layout) in Numba.

One query against a *batch* of ``LANES`` = 32 targets of similar length at once: lane ``l``
of every working vector belongs to target ``l`` of the batch, so the innermost loop runs
over lanes, has no dependencies between iterations, and LLVM turns it into AVX-512 (32 x
int16 per zmm register) or AVX2 code. Shorter targets of a batch are padded with the code
``PAD_CODE``, which scores very negatively against everything; padded cells never exceed
the lane's true best and the ends use a strictly-greater rule, so padding changes nothing.

Loop order per batch: blocks of ``BLOCK`` target columns; for each query row ``i`` the
block's columns are updated left to right. Horizontal state (H and E of row ``i``) lives in
the heap array ``HE[i, :]``; vertical state (H and F of the previous row per column, the
diagonal) and the block's score profile ``P[query residue, column, lane]`` live in
fixed-size stack buffers (``_stack_buffer``). Stack memory cannot alias the heap arrays,
so LLVM vectorizes the lane loop without run-time alias checks and keeps it in registers.

Two kernels:

* ``local16_scan`` -- local alignment in wrapping int16. A lane whose best score exceeds
  ``32767 - max substitution score`` *may* have overflowed (every cell before the first
  one above that limit is exact, so the flag is reliable); the caller rescored those
  targets with the exact 32-bit scalar kernel. Ends optional.
* ``general32_scan`` -- int32, every algorithm (local, global, semiglobal), always ends.

Ends follow the tie rule of :func:`pairwise.score_end`: best score; among equal, the
smallest target end, then the smallest query end. Inside a block the traversal is row by
row, so each column keeps its own maximum and the first row reaching it
(strictly-greater update in row order = smallest query end); after the block the columns
are merged left to right with a strictly-greater update (= smallest target end).
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .pairwise import GLOBAL, LOCAL, NEG_INF, SEMIGLOBAL, score_end

LANES = 32          # targets per batch (32 x int16 = one zmm register)
BLOCK = 4           # target columns updated per pass over the query rows
MAX_CODES = 256     # largest alphabet (bytes); query residues are compacted to < 256 rows
PAD_CODE = MAX_CODES  # target code of padding cells (column MAX_CODES of the profile table)
PAD16 = -32768      # profile score of padding, int16 kernel (d + PAD16 >= -32768 for d >= 0)
PAD32 = -(1 << 20)  # profile score of padding, int32 kernel

# Stack buffer sizes (must be literal constants for the alloca).
_V_ROWS = 4 * BLOCK + 2         # hup[c], f[c], colmax[c], colrow[c], diag, best
_V_SIZE = _V_ROWS * LANES
_P_SIZE = MAX_CODES * BLOCK * LANES
_HUP, _F, _CM, _CI, _DIAG, _BEST = 0, BLOCK, 2 * BLOCK, 3 * BLOCK, 4 * BLOCK, 4 * BLOCK + 1


@intrinsic
def _stack_buffer(typingctx, size, dtype):
    """Pointer to ``size`` (a literal) elements of ``dtype`` on the kernel's stack frame."""
    if not isinstance(size, types.IntegerLiteral):
        return None
    count = size.literal_value
    sig = types.CPointer(dtype.dtype)(size, dtype)

    def codegen(context, builder, signature, args):
        return cgutils.alloca_once(builder, context.get_value_type(dtype.dtype), size=count)

    return sig, codegen


@nb.njit(nogil=True, cache=True)
def local16_scan(qc, cols, batch_start, lane_len, batches, Qx, gap_open, gap_extend,
                 limit, ends, HE, out_score, out_qend, out_tend, out_flag):
    """Local scores (and ends) of query ``qc`` against the batches listed in ``batches``.

    qc: compacted query codes (row of ``Qx``), uint8 [m]. cols: uint16 [total columns,
    LANES], the batches' target codes column by column, batch b at rows batch_start[b]..
    batch_start[b+1] (a multiple of BLOCK). lane_len: int32 [batches, LANES]. Qx: int16
    [D, MAX_CODES + 1] substitution scores of the query's residues (PAD16 in column
    PAD_CODE). limit: a lane whose best exceeds it is flagged (out_flag = 1) for rescoring.
    HE: int16 work array [m + 1, 2 * LANES]. Outputs are int32 [batches, LANES].
    """
    m = qc.shape[0]
    D = Qx.shape[0]
    go = np.int16(gap_open)
    ge = np.int16(gap_extend)
    zero = np.int16(0)
    V = nb.carray(_stack_buffer(_V_SIZE, np.int16), (_V_ROWS, LANES))
    P = nb.carray(_stack_buffer(_P_SIZE, np.int16), (MAX_CODES, BLOCK, LANES))
    bi = np.zeros(LANES, np.int32)
    bj = np.zeros(LANES, np.int32)
    for b in batches:
        for i in range(m + 1):
            for l in range(LANES):
                HE[i, l] = 0
                HE[i, LANES + l] = -go
        for l in range(LANES):
            V[_BEST, l] = 0
            bi[l] = 0
            bj[l] = 0
        for j0 in range(batch_start[b], batch_start[b + 1], BLOCK):
            for c in range(BLOCK):
                tc = cols[j0 + c]
                for a in range(D):
                    for l in range(LANES):
                        P[a, c, l] = Qx[a, tc[l]]
            for l in range(LANES):
                for c in range(BLOCK):
                    V[_HUP + c, l] = 0
                    V[_F + c, l] = -go
                    V[_CM + c, l] = 0
                    V[_CI + c, l] = 0
                V[_DIAG, l] = 0
            if ends:
                for i in range(1, m + 1):
                    Pi = P[qc[i - 1]]
                    row = HE[i]
                    i16 = np.int16(i)
                    for l in range(LANES):
                        h = row[l]
                        e = row[LANES + l]
                        d = V[_DIAG, l]
                        V[_DIAG, l] = h
                        for c in range(BLOCK):
                            e = max(np.int16(e - ge), np.int16(h - go))
                            f = max(np.int16(V[_F + c, l] - ge), np.int16(V[_HUP + c, l] - go))
                            h = max(max(np.int16(d + Pi[c, l]), max(e, f)), zero)
                            d = V[_HUP + c, l]
                            V[_HUP + c, l] = h
                            V[_F + c, l] = f
                            cm = V[_CM + c, l]
                            V[_CI + c, l] = i16 if h > cm else V[_CI + c, l]
                            V[_CM + c, l] = max(cm, h)
                        row[l] = h
                        row[LANES + l] = e
                jcol = j0 - batch_start[b]
                for c in range(BLOCK):
                    for l in range(LANES):
                        if V[_CM + c, l] > V[_BEST, l] and jcol + c < lane_len[b, l]:
                            V[_BEST, l] = V[_CM + c, l]
                            bi[l] = V[_CI + c, l]
                            bj[l] = jcol + c + 1
            else:
                for i in range(1, m + 1):
                    Pi = P[qc[i - 1]]
                    row = HE[i]
                    for l in range(LANES):
                        h = row[l]
                        e = row[LANES + l]
                        d = V[_DIAG, l]
                        V[_DIAG, l] = h
                        best = V[_BEST, l]
                        for c in range(BLOCK):
                            e = max(np.int16(e - ge), np.int16(h - go))
                            f = max(np.int16(V[_F + c, l] - ge), np.int16(V[_HUP + c, l] - go))
                            h = max(max(np.int16(d + Pi[c, l]), max(e, f)), zero)
                            d = V[_HUP + c, l]
                            V[_HUP + c, l] = h
                            V[_F + c, l] = f
                            best = max(best, h)
                        V[_BEST, l] = best
                        row[l] = h
                        row[LANES + l] = e
        for l in range(LANES):
            s = np.int32(V[_BEST, l])
            out_score[b, l] = s
            out_qend[b, l] = bi[l]
            out_tend[b, l] = bj[l]
            out_flag[b, l] = 1 if s > limit else 0


@nb.njit(nogil=True, cache=True)
def general32_scan(qc, cols, batch_start, lane_len, batches, Qx, gap_open, gap_extend,
                   algorithm, HE, out_score, out_qend, out_tend):
    """Exact int32 scores and ends for any algorithm; arguments as :func:`local16_scan`.

    Qx is int32 (PAD32 in column PAD_CODE); HE is an int32 work array [m + 1, 2 * LANES].
    Global reads each lane's corner (m, n_l); semiglobal the best cell of row m over
    columns 0..n_l (smallest column on ties); local the best cell anywhere.
    """
    m = qc.shape[0]
    D = Qx.shape[0]
    go = np.int32(gap_open)
    ge = np.int32(gap_extend)
    neg = np.int32(NEG_INF)
    local = algorithm == LOCAL
    low = np.int32(0) if local else neg   # the local clamp at 0 is max(h, low)
    V = nb.carray(_stack_buffer(_V_SIZE, np.int32), (_V_ROWS, LANES))
    P = nb.carray(_stack_buffer(_P_SIZE, np.int32), (MAX_CODES, BLOCK, LANES))
    bi = np.zeros(LANES, np.int32)
    bj = np.zeros(LANES, np.int32)
    best = np.zeros(LANES, np.int32)
    # H of column 0 at row m (the left edge), the first candidate of semiglobal/global.
    edge = np.int32(0) if (m == 0 or local) else np.int32(-(gap_open + (m - 1) * gap_extend))
    for b in batches:
        for i in range(m + 1):
            for l in range(LANES):
                if local or i == 0:
                    HE[i, l] = 0
                else:
                    HE[i, l] = -(go + (i - 1) * ge)
                HE[i, LANES + l] = neg
        for l in range(LANES):
            best[l] = edge
            bi[l] = 0 if local else m
            bj[l] = 0
        for j0 in range(batch_start[b], batch_start[b + 1], BLOCK):
            jcol = j0 - batch_start[b]   # 0-based target column of the block's first column
            for c in range(BLOCK):
                tc = cols[j0 + c]
                for a in range(D):
                    for l in range(LANES):
                        P[a, c, l] = Qx[a, tc[l]]
            for l in range(LANES):
                for c in range(BLOCK):
                    top = np.int32(0)
                    if algorithm == GLOBAL:
                        top = -(go + (jcol + c) * ge)
                    V[_HUP + c, l] = top            # H(0, j)
                    V[_F + c, l] = neg
                    V[_CM + c, l] = 0
                    V[_CI + c, l] = 0
                if algorithm == GLOBAL and jcol > 0:
                    V[_DIAG, l] = -(go + (jcol - 1) * ge)
                else:
                    V[_DIAG, l] = 0
            for i in range(1, m + 1):
                Pi = P[qc[i - 1]]
                row = HE[i]
                for l in range(LANES):
                    h = row[l]
                    e = row[LANES + l]
                    d = V[_DIAG, l]
                    V[_DIAG, l] = h
                    for c in range(BLOCK):
                        e = max(np.int32(e - ge), np.int32(h - go))
                        f = max(np.int32(V[_F + c, l] - ge), np.int32(V[_HUP + c, l] - go))
                        h = max(max(np.int32(d + Pi[c, l]), max(e, f)), low)
                        d = V[_HUP + c, l]
                        V[_HUP + c, l] = h
                        V[_F + c, l] = f
                        cm = V[_CM + c, l]
                        V[_CI + c, l] = i if h > cm else V[_CI + c, l]
                        V[_CM + c, l] = max(cm, h)
                    row[l] = h
                    row[LANES + l] = e
            for c in range(BLOCK):
                j = jcol + c + 1                       # 1-based column just computed
                for l in range(LANES):
                    if j > lane_len[b, l]:
                        continue
                    if local:
                        if V[_CM + c, l] > best[l]:
                            best[l] = V[_CM + c, l]
                            bi[l] = V[_CI + c, l]
                            bj[l] = j
                    elif algorithm == SEMIGLOBAL:
                        if V[_HUP + c, l] > best[l]:   # H(m, j) after the last row
                            best[l] = V[_HUP + c, l]
                            bj[l] = j
                    elif j == lane_len[b, l]:
                        best[l] = V[_HUP + c, l]
                        bj[l] = j
        for l in range(LANES):
            out_score[b, l] = best[l]
            out_qend[b, l] = bi[l]
            out_tend[b, l] = bj[l]


@nb.njit(nogil=True, cache=True)
def rescore_targets(q, codes, offsets, idx, matrix, gap_open, gap_extend, algorithm,
                    out_score, out_qend, out_tend):
    """Exact 32-bit scalar rescoring (pairwise.score_end) of the targets listed in idx."""
    for k in idx:
        s, i, j = score_end(q, codes[offsets[k]:offsets[k + 1]], matrix, gap_open, gap_extend,
                            algorithm)
        out_score[k] = s
        out_qend[k] = i
        out_tend[k] = j


@nb.njit(nogil=True, cache=True)
def fill_columns(codes, offsets, order, batch_start, cols, lane_len):
    """Write the targets ``order[b * LANES + l]`` column by column into ``cols`` (prepare)."""
    n = order.shape[0]
    for k in range(n):
        b = k // LANES
        l = k % LANES
        t = order[k]
        start = offsets[t]
        length = offsets[t + 1] - start
        lane_len[b, l] = length
        base = batch_start[b]
        for p in range(length):
            cols[base + p, l] = codes[start + p]
