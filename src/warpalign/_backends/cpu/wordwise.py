"""Word-wise bulk pair scoring on the CPU: one pair per SIMD lane (inter-pair SIMD).

A group of ``lanes`` pairs of similar lengths runs one Gotoh DP in lock step: lane ``l``
of every working vector belongs to pair ``l`` of the group, the loop over the lanes is the
innermost loop and LLVM turns it into AVX-512 (32 x int16 per zmm register) or AVX2 code.
The layout and loop order are those of the database scan (:mod:`.batch`): blocks of
``BLOCK`` columns (target y), for each row (query x) the block's columns left to right;
the horizontal state of row ``i`` (H, E and the lanes' x symbol) lives in a small heap
array, the vertical state (H and F of the previous row per column, the diagonal, the
block's y symbols) in fixed-size stack buffers (``batch._stack_buffer``), which cannot
alias the heap, so LLVM vectorizes the lane loop without run-time checks and keeps it in
registers. Every operation is followed by an explicit cast to the lane type, so LLVM keeps
16-bit arithmetic (32 lanes per zmm register) instead of widening to 64 bits.
Groups run in parallel over the cores (``prange``, one group at a time, largest first).
Each kernel is one function: a closure-made kernel calling another one would miss
Numba's on-disk cache in every new process (the callee is part of the cache key).

Substitution scores, per lane (both sequences differ between lanes):

* compare path (match/mismatch matrices, the common DNA case): ``x == y ? match :
  mismatch`` -- one compare and one select per cell. Symbols without a match score (N
  and the other ambiguity codes of the DNA alphabet) and padding get codes that never
  compare equal. Match and mismatch reach the kernel as lane-typed scalars: LLVM would
  turn a select of two truncated int64 constants into a select in 64-bit lanes.
* table path (any matrix): per row, the block's scores are gathered into a stack buffer,
  then the DP reads that buffer. With AVX-512F (``GATHER``), 16-bit lanes and alphabets
  of up to 31 symbols: from a pair table ``[y0, y1, x]`` holding two columns' scores per
  int32 (``_gather_pair16``), or, for queries of ``QUAD_MIN_ROWS`` rows and more, from
  a block profile ``[lane, column quad, x]`` built per block from the pair table, four
  scores per int64 (``_gather_quad32``: four ``vpgatherdq`` and a transpose per quad);
  otherwise one score per gathered lane from ``x * (A + 1) + y`` (``_gather16``), or
  scalar loads without AVX-512.

Gaps: affine (H, E, F) or, when ``gap_open == gap_extend``, linear: then E(i, j) =
H(i, j-1) - g and F(i, j) = H(i-1, j) - g exactly (E <= H and F <= H everywhere, the
boundaries included), so one max and one subtraction replace E and F.

Widths:

* local, compare path, small scores and penalties (``INT8_MATCH``, ``INT8_PENALTY``):
  8-bit lanes first (64 pairs per zmm register). A pair whose best exceeds ``127 -
  match`` may have wrapped and is scored again with 16-bit lanes. A probe of the largest
  groups runs first; when more than ``INT8_PROBE_MAX`` of its pairs pass the limit
  (similar sequences), the rest skip the 8-bit pass.
* local: 16-bit lanes that may wrap. A pair whose best cell exceeds ``32767 - max
  substitution score`` *may* have wrapped (every cell before the first one above that
  limit is exact, and the running best never decreases, so the flag is reliable); it is
  reported as saturated and the caller rescores it exactly. Below the limit the score is
  exact. 32-bit lanes when the penalties themselves are too large for 16 bits.
* global/semiglobal: 16-bit lanes when no value of the group can leave
  ``[-INT16_BOUND, INT16_BOUND]`` (bounded by ``(m + n + 2) * max |score or penalty|``),
  32-bit lanes otherwise. Nothing saturates.

Pairs of unequal lengths share a group. A real cell (i <= m_l, j <= n_l) depends only on
real cells, so padding never changes it. Local reads the best cell anywhere: past a
pair's end the substitution score is the mismatch score (<= 0, compare path) or
``-PAD_PENALTY`` (table path), so a padded cell is at most its largest neighbour and the
best is unchanged. Global/semiglobal read each lane's row m_l: after each row that ends
some lane, the block's H values are captured for those lanes (a per-row flag, so groups
of equal query lengths pay for one row only); after the block, global keeps column n_l,
semiglobal the best over columns 1..n_l (column 0 is the start value).
"""

from __future__ import annotations

import time
from functools import cache

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .batch import _stack_buffer
from .pairwise import ALGORITHM_CODES, GLOBAL, LOCAL

#: Pairs per group, by lane width (one AVX-512 register of 8-, 16- or 32-bit lanes).
LANES = {8: 64, 16: 32, 32: 16}
#: Local 16-bit lanes: the largest representable score (saturation limit base).
INT16_CAP = 32767
#: Global/semiglobal use 16-bit lanes only when every value stays within this bound.
INT16_BOUND = 15000
#: "Minus infinity" per width; far enough from the type's limit that subtracting a
#: penalty cannot wrap.
NEG = {8: -64, 16: -16000, 32: -(1 << 29)}
#: Substitution score of a padding symbol on the table path.
PAD_PENALTY = {8: 0, 16: 8000, 32: 1 << 22}
#: Local match/mismatch scoring runs 8-bit lanes first when the match score and every
#: penalty are at most these (no value leaves [-128, 127] before the flag limit).
INT8_MATCH, INT8_PENALTY = 32, 32
#: ... and when every matching code fits an int8 lane apart from the "other" codes.
INT8_CODES = 100
#: Fraction of the probed pairs passing the 8-bit limit above which the rest skip 8 bits.
INT8_PROBE_MAX = 0.25
#: Columns (y positions) per pass over the rows.
BLOCK = {"linear": 16, "affine": 8}
_CX_OTHER, _CY_OTHER = -1, -2   # compare path: codes of x/y symbols without a match score

# Stack buffers (literal sizes; sized for 64 lanes, wider lanes use part of them).
_MAXL = 64
_MAXB = 16
_HUP, _F, _CAP = 0, _MAXB, 2 * _MAXB
_DIAG, _BEST, _ML = 3 * _MAXB, 3 * _MAXB + 1, 3 * _MAXB + 2
_V_ROWS = 3 * _MAXB + 3
_V_SIZE = _V_ROWS * _MAXL
_B_SIZE = _MAXB * _MAXL
_Q_SIZE = 32 * 2 * 32   # 16-bit table path, quad gathers: [lane, column quad, x code]


def _host_gathers() -> bool:
    """Whether the kernels may use AVX-512 gathers (compiled for this host's CPU)."""
    try:
        import llvmlite.binding as ll
        return bool(ll.get_host_cpu_features().get("avx512f")) and not nb.config.CPU_NAME
    except Exception:   # noqa: BLE001 (no feature list: scalar loads)
        return False


#: The table path gathers its scores with AVX-512 ``vpgatherdd`` (else scalar loads).
GATHER = _host_gathers()
#: 16-bit table path: alphabets up to this size (+ padding) gather two columns' scores
#: per int32 from a pair table of (A + 1)^3 entries (80 KB for proteins).
PAIR_TABLE_MAX = 32
#: ... and with queries of at least this many rows on average, four columns' scores per
#: gathered int64 from a block profile built per lane (its build costs ~ 1/m per cell).
QUAD, QUAD_MIN_ROWS = True, 64


@intrinsic
def _gather16(typingctx, table, xrow, ysrc, dst, xo, yo):
    """``dst[yo + k] = table[xrow[xo + k] + ysrc[yo + k]]`` for k < 16 (one AVX-512 gather).

    table, xrow: int32 arrays; ysrc: pointer to int32; the sums are in bounds. dst: pointer
    to int8, int16 or int32 (the gathered values are truncated to it).
    """
    if not isinstance(ysrc, types.CPointer) or not isinstance(dst, types.CPointer):
        return None
    sig = types.void(table, xrow, ysrc, dst, xo, yo)

    def codegen(context, builder, signature, args):
        tab, xr, sp, dp, xo, yo = args
        data = context.make_array(signature.args[0])(context, builder, tab).data
        xdata = context.make_array(signature.args[1])(context, builder, xr).data
        i32 = ir.IntType(32)
        v16 = ir.VectorType(i32, 16)
        m16 = ir.VectorType(ir.IntType(1), 16)
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(v16, [v16, i8p, v16, m16, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty,
                                            "llvm.x86.avx512.mask.gather.dpi.512")
        xv = builder.load(builder.bitcast(builder.gep(xdata, [xo]), v16.as_pointer()), align=4)
        yv = builder.load(builder.bitcast(builder.gep(sp, [yo]), v16.as_pointer()), align=4)
        res = builder.call(fn, [ir.Constant(v16, None), builder.bitcast(data, i8p),
                                builder.add(xv, yv), ir.Constant(m16, [1] * 16),
                                ir.Constant(i32, 4)])
        width = signature.args[3].dtype.bitwidth
        if width != 32:
            res = builder.trunc(res, ir.VectorType(ir.IntType(width), 16))
        builder.store(res, builder.bitcast(builder.gep(dp, [yo]), res.type.as_pointer()),
                      align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _gather_pair16(typingctx, table, xrow, ysrc, dst, xo, yo, lo, hi):
    """Two int16 scores per gathered int32: ``v = table[xrow[xo + k] + ysrc[yo + k]]``,
    ``dst[lo + k] = low half of v``, ``dst[hi + k] = high half`` for k < 16 (dst int16)."""
    if not isinstance(ysrc, types.CPointer) or not isinstance(dst, types.CPointer):
        return None
    sig = types.void(table, xrow, ysrc, dst, xo, yo, lo, hi)

    def codegen(context, builder, signature, args):
        tab, xr, sp, dp, xo, yo, lo, hi = args
        data = context.make_array(signature.args[0])(context, builder, tab).data
        xdata = context.make_array(signature.args[1])(context, builder, xr).data
        i32 = ir.IntType(32)
        v16 = ir.VectorType(i32, 16)
        w16 = ir.VectorType(ir.IntType(16), 16)
        m16 = ir.VectorType(ir.IntType(1), 16)
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(v16, [v16, i8p, v16, m16, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty,
                                            "llvm.x86.avx512.mask.gather.dpi.512")
        xv = builder.load(builder.bitcast(builder.gep(xdata, [xo]), v16.as_pointer()), align=4)
        yv = builder.load(builder.bitcast(builder.gep(sp, [yo]), v16.as_pointer()), align=4)
        res = builder.call(fn, [ir.Constant(v16, None), builder.bitcast(data, i8p),
                                builder.add(xv, yv), ir.Constant(m16, [1] * 16),
                                ir.Constant(i32, 4)])
        low = builder.trunc(res, w16)
        high = builder.trunc(builder.lshr(res, ir.Constant(v16, [16] * 16)), w16)
        builder.store(low, builder.bitcast(builder.gep(dp, [lo]), w16.as_pointer()), align=1)
        builder.store(high, builder.bitcast(builder.gep(dp, [hi]), w16.as_pointer()), align=1)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def _gather_quad32(typingctx, profile, xrow, lbase, dst, g, do):
    """Four columns of 32 int16 lanes from the block profile (four scores per int64):
    ``dst[do + c * 32 + l] = score(c)`` of ``profile[lbase[l] + g * 32 + xrow[l]]`` for
    l < 32, c < 4 (four AVX-512 ``vpgatherdq`` and a transpose)."""
    if not all(isinstance(t, types.CPointer) for t in (profile, lbase, dst)):
        return None
    sig = types.void(profile, xrow, lbase, dst, g, do)

    def codegen(context, builder, signature, args):
        prof, xr, lb, dp, g, do = args
        xdata = context.make_array(signature.args[1])(context, builder, xr).data
        i32 = ir.IntType(32)
        i64 = ir.IntType(64)
        v8 = ir.VectorType(i32, 8)
        q8 = ir.VectorType(i64, 8)
        m8 = ir.VectorType(ir.IntType(1), 8)
        w32 = ir.VectorType(ir.IntType(16), 32)
        i8p = ir.IntType(8).as_pointer()
        fnty = ir.FunctionType(q8, [q8, i8p, v8, m8, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty,
                                            "llvm.x86.avx512.mask.gather.dpq.512")
        g32 = builder.trunc(builder.mul(g, ir.Constant(g.type, 32)), i32)
        gv = builder.insert_element(ir.Constant(v8, None), g32, ir.Constant(i32, 0))
        gv = builder.shuffle_vector(gv, ir.Constant(v8, None), ir.Constant(v8, [0] * 8))
        parts = []
        for k in range(0, 32, 8):
            koff = ir.Constant(i64, k)
            xv = builder.load(builder.bitcast(builder.gep(xdata, [koff]), v8.as_pointer()),
                              align=4)
            bv = builder.load(builder.bitcast(builder.gep(lb, [koff]), v8.as_pointer()),
                              align=4)
            idx = builder.add(builder.add(xv, bv), gv)
            res = builder.call(fn, [ir.Constant(q8, None), builder.bitcast(prof, i8p), idx,
                                    ir.Constant(m8, [1] * 8), ir.Constant(i32, 8)])
            parts.append(builder.bitcast(res, w32))
        both = ir.Constant(ir.VectorType(i32, 64), list(range(64)))
        lo = builder.shuffle_vector(parts[0], parts[1], both)
        hi = builder.shuffle_vector(parts[2], parts[3], both)
        for c in range(4):
            mask = [(l // 8) * 32 + (l % 8) * 4 + c for l in range(32)]
            col = builder.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(i32, 32), mask))
            off = builder.add(do, ir.Constant(do.type, c * 32))
            builder.store(col, builder.bitcast(builder.gep(dp, [off]), w32.as_pointer()),
                          align=1)
        return context.get_dummy_value()

    return sig, codegen


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
def _kernel(bits: int, algorithm: int, compare: bool, linear: bool, gather: int = 0):
    """The kernel for ``bits``-wide lanes, one algorithm, compare/table, linear/affine;
    table path: ``gather`` 0 scalar loads, 1 one score per AVX-512 gather lane, 2 two
    (pair table), 4 four (block profile)."""
    L = LANES[bits]
    DT = {8: np.int8, 16: np.int16, 32: np.int32}[bits]
    LOC = algorithm == LOCAL
    GLO = algorithm == GLOBAL
    CMP = compare
    LIN = linear
    BL = BLOCK["linear" if linear else "affine"] if compare or gather != 4 else 8
    GA = gather == 1 and not compare
    G2 = gather == 2 and not compare and bits == 16
    G4 = gather == 4 and not compare and bits == 16
    NG = BL // 4
    # heap row layout per query row: H, then E (affine), then the x codes (compare)
    EO = L
    XO = L if LIN else 2 * L
    NC = (1 if LIN else 2) + (1 if CMP else 0)

    @nb.njit(nogil=True, cache=True, parallel=True)
    def run(gs, xcodes, xoff, ycodes, yoff, groups, g_m, g_n, match, mismatch, k_match,
            table, a1, gap_open, gap_extend, neg, limit, out, saturated):
        """Score the groups ``gs``; ``groups`` (G, L) holds pair indices (-1: empty lane)."""
        for gi in nb.prange(gs.shape[0]):
            g = gs[gi]
            m = g_m[g]
            n = g_n[g]
            npad = (n + BL - 1) // BL * BL
            go = DT(gap_open)
            ge = DT(gap_extend)
            ng = DT(neg)
            zero = DT(0)
            mt = match        # lane-typed arguments: a select of two truncated int64
            mm = mismatch     # constants would be done in 64-bit lanes
            V = nb.carray(_stack_buffer(_V_SIZE, DT), (_V_ROWS, L))
            Yb = nb.carray(_stack_buffer(_B_SIZE, DT), (BL, L))
            Yp = _stack_buffer(_B_SIZE, np.int32)
            Yi = nb.carray(Yp, (BL, L))
            Wp = _stack_buffer(_B_SIZE, DT)
            Wr = nb.carray(Wp, (BL, L))
            Qp = _stack_buffer(_Q_SIZE, np.int64)
            Q = nb.carray(Qp, (L if G4 else 1, 2, 32))
            LBp = _stack_buffer(_MAXL, np.int32)
            LB = nb.carray(LBp, (L,))
            for l in range(L):
                LB[l] = l * NG * 32
            tab2 = table.reshape((-1, 32)) if G4 else table.reshape((-1, 1))
            ml = np.zeros(L, np.int64)
            nl = np.zeros(L, np.int64)
            HE = np.empty((m + 1, NC * L), DT)
            Y = np.empty((npad, L), DT if CMP else np.int32)
            XS = np.empty((m if not CMP else 0, L), np.int32)
            rowend = np.zeros(m + 1, np.bool_)
            pad = a1 - 1
            for l in range(L):
                p = groups[g, l]
                if p >= 0:
                    ml[l] = xoff[p + 1] - xoff[p]
                    nl[l] = yoff[p + 1] - yoff[p]
                rowend[ml[l]] = True
                x0 = xoff[p] if p >= 0 else 0
                y0 = yoff[p] if p >= 0 else 0
                for i in range(m):
                    if CMP:
                        v = _CX_OTHER
                        if i < ml[l]:
                            c = np.int64(xcodes[x0 + i])
                            v = c if c < k_match else _CX_OTHER
                        HE[i + 1, XO + l] = v
                    else:
                        c = np.int64(xcodes[x0 + i]) if i < ml[l] else pad
                        XS[i, l] = c if (G2 or G4) else c * a1
                for j in range(npad):
                    if CMP:
                        v = _CY_OTHER
                        if j < nl[l]:
                            c = np.int64(ycodes[y0 + j])
                            v = c if c < k_match else _CY_OTHER
                        Y[j, l] = v
                    else:
                        Y[j, l] = np.int64(ycodes[y0 + j]) if j < nl[l] else pad
            for i in range(m + 1):
                v = 0 if (LOC or i == 0) else -(gap_open + (i - 1) * gap_extend)
                for l in range(L):
                    HE[i, l] = v
                    if not LIN:
                        HE[i, EO + l] = ng
            for l in range(L):
                V[_ML, l] = DT(ml[l])
                if LOC or ml[l] == 0:
                    V[_BEST, l] = 0                      # local; H(m_l, 0) when m_l == 0
                else:
                    V[_BEST, l] = -(gap_open + (ml[l] - 1) * gap_extend)   # H(m_l, 0)
            for j0 in range(0, npad, BL):
                if G4:
                    for l in range(L):            # block profile: 4 columns per int64
                        for q in range(NG):
                            c = j0 + 4 * q
                            t0 = tab2[Y[c, l] * a1 + Y[c + 1, l]]
                            t1 = tab2[Y[c + 2, l] * a1 + Y[c + 3, l]]
                            qr = Q[l, q]
                            for a in range(32):
                                qr[a] = (np.int64(t0[a]) & 0xFFFFFFFF) | (np.int64(t1[a]) << 32)
                elif G2:
                    for c in range(0, BL, 2):     # pair table row of columns c, c + 1
                        for l in range(L):
                            Yi[c // 2, l] = (Y[j0 + c, l] * a1 + Y[j0 + c + 1, l]) * a1
                else:
                    for c in range(BL):
                        yr = Y[j0 + c]
                        for l in range(L):
                            if CMP:
                                Yb[c, l] = yr[l]
                            else:
                                Yi[c, l] = yr[l]
                for c in range(BL):
                    top = zero
                    if GLO:
                        top = DT(-(gap_open + (j0 + c) * gap_extend))   # H(0, j0 + c + 1)
                    for l in range(L):
                        V[_HUP + c, l] = top
                        V[_CAP + c, l] = top
                        if not LIN:
                            V[_F + c, l] = ng
                dtop = zero
                if GLO and j0 > 0:
                    dtop = DT(-(gap_open + (j0 - 1) * gap_extend))      # H(0, j0)
                for l in range(L):
                    V[_DIAG, l] = dtop
                for i in range(1, m + 1):
                    row = HE[i]
                    if not CMP:
                        xr = XS[i - 1]
                        if G4:
                            for q in range(NG):
                                _gather_quad32(Qp, xr, LBp, Wp, q, q * 4 * L)
                        elif G2:
                            for c in range(0, BL, 2):
                                for k in range(0, L, 16):
                                    _gather_pair16(table, xr, Yp, Wp, k, (c // 2) * L + k,
                                                   c * L + k, (c + 1) * L + k)
                        elif GA:
                            for c in range(BL):
                                for k in range(0, L, 16):
                                    _gather16(table, xr, Yp, Wp, k, c * L + k)
                        else:
                            for c in range(BL):
                                for l in range(L):
                                    Wr[c, l] = DT(table[xr[l] + Yi[c, l]])
                    for l in range(L):
                        h = row[l]
                        d = V[_DIAG, l]
                        V[_DIAG, l] = h
                        best = V[_BEST, l]
                        xv = row[XO + l] if CMP else zero
                        e = zero if LIN else row[EO + l]
                        for c in range(BL):
                            if CMP:
                                w = mt if xv == Yb[c, l] else mm
                            else:
                                w = Wr[c, l]
                            u = V[_HUP + c, l]
                            if LIN:
                                h = max(DT(d + w), DT(max(h, u) - go))
                            else:
                                e = max(DT(e - ge), DT(h - go))
                                f = max(DT(V[_F + c, l] - ge), DT(u - go))
                                V[_F + c, l] = f
                                h = max(DT(d + w), max(e, f))
                            if LOC:
                                h = max(h, zero)
                                best = max(best, h)
                            d = u
                            V[_HUP + c, l] = h
                        if LOC:
                            V[_BEST, l] = best
                        row[l] = h
                        if not LIN:
                            row[EO + l] = e
                    if not LOC and rowend[i]:
                        ii = DT(i)
                        for c in range(BL):
                            for l in range(L):
                                V[_CAP + c, l] = V[_HUP + c, l] if V[_ML, l] == ii else V[_CAP + c, l]
                if not LOC:
                    for c in range(BL):
                        j = j0 + c + 1
                        for l in range(L):
                            if GLO:
                                if j == nl[l]:
                                    V[_BEST, l] = V[_CAP + c, l]
                            elif j <= nl[l]:
                                V[_BEST, l] = max(V[_BEST, l], V[_CAP + c, l])
            for l in range(L):
                p = groups[g, l]
                if p >= 0:
                    s = np.int64(V[_BEST, l])
                    out[p] = s
                    if LOC and s > limit:
                        saturated[p] = True

    return run


def score_pairs(xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray, yoff: np.ndarray,
                scoring, algorithm: str = "local", *, largest: int | None = None
                ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Scores of pairs (x_i, y_i) given as concatenated codes and offsets.

    Args:
        xcodes, ycodes: uint8 codes in ``scoring.alphabet``; x is the query (rows),
            y the target (columns: semiglobal's free end gaps are on y).
        xoff, yoff: int64 offsets (len = pairs + 1).
        scoring: any :class:`~warpalign.scoring.Scoring`.
        algorithm: "local", "global" or "semiglobal".
        largest: the largest code, when known (:class:`~warpalign._backends.base.PairKernel`;
            not needed here).

    Returns:
        (scores int32 in pair order, indices of pairs that saturated 16-bit lanes (their
        score is not final: rescore them wider), seconds {"swa"}).
    """
    code = ALGORITHM_CODES[algorithm]
    npairs = len(xoff) - 1
    scores = np.zeros(npairs, dtype=np.int32)
    if npairs == 0:
        return scores, np.zeros(0, np.int64), {"swa": 0.0}
    t0 = time.perf_counter()
    xl = np.diff(xoff)
    yl = np.diff(yoff)
    matrix = scoring.matrix.astype(np.int64)
    go, ge = int(scoring.gap_open), int(scoring.gap_extend)
    mm = match_mismatch(matrix)
    compare = mm is not None and (code != LOCAL or mm[1] <= 0)
    linear = go == ge
    biggest = max(int(np.abs(matrix).max()), go, ge, 1)
    top = max(int(matrix.max()), 0)
    if code == LOCAL:
        narrow = go + ge + int(np.abs(matrix).max()) <= 8000
        widths = np.full(npairs, 16 if narrow else 32)
        if (compare and max(go, ge, -mm[1]) <= INT8_PENALTY and top <= INT8_MATCH
                and mm[2] <= INT8_CODES):
            widths[:] = 8
    else:
        widths = np.where((xl + yl + 2) * biggest <= INT16_BOUND, 16, 32)
    order = np.lexsort((xl, yl))[::-1]
    out = np.zeros(npairs, dtype=np.int64)
    saturated = np.zeros(npairs, dtype=np.bool_)
    args = (xcodes, xoff, ycodes, yoff, xl, yl, matrix, mm if compare else None, go, ge, code,
            linear, top, out, saturated)
    for bits in (8, 16, 32):
        sel = order[widths[order] == bits]
        if sel.size == 0:
            continue
        if bits == 8:
            # 8-bit lanes first; pairs whose best passes the 8-bit limit go to 16 bits.
            # A probe of the largest groups decides: when too many pairs score high
            # (similar sequences), the rest go to 16 bits directly.
            probe = min(sel.size, LANES[8] * max(2 * nb.get_num_threads(), sel.size // 512))
            _run(8, sel[:probe], *args)
            high = sel[:probe][saturated[sel[:probe]]]
            rest = sel[probe:]
            if rest.size and high.size <= INT8_PROBE_MAX * probe:
                _run(8, rest, *args)
                high = np.concatenate([high, rest[saturated[rest]]])
            else:
                high = np.concatenate([high, rest])
            saturated[high] = False
            widths[high] = 16
            continue
        _run(bits, sel, *args)
    return out.astype(np.int32), np.flatnonzero(saturated), {"swa": time.perf_counter() - t0}


def _run(bits, sel, xcodes, xoff, ycodes, yoff, xl, yl, matrix, mm, go, ge, code, linear, top,
         out, saturated):
    """Score the pairs ``sel`` (sorted by length) with ``bits``-wide lanes."""
    lanes = LANES[bits]
    groups = np.full(((sel.size + lanes - 1) // lanes) * lanes, -1, dtype=np.int64)
    groups[:sel.size] = sel
    groups = groups.reshape(-1, lanes)
    valid = groups >= 0
    g_m = np.where(valid, xl[np.maximum(groups, 0)], 0).max(axis=1)
    g_n = np.where(valid, yl[np.maximum(groups, 0)], 0).max(axis=1)
    a1 = matrix.shape[0] + 1
    dt = {8: np.int8, 16: np.int16, 32: np.int32}[bits]
    compare = mm is not None
    table = np.full((a1, a1), -PAD_PENALTY[bits], dtype=np.int32)
    table[:-1, :-1] = matrix
    gather = 0
    if GATHER and not compare:
        gather = 1
        if bits == 16 and a1 <= PAIR_TABLE_MAX:
            # pair table [y0, y1, x] = score(x, y0) | score(x, y1) << 16: one gathered
            # int32 gives the scores of two columns
            low = table.T[:, None, :].astype(np.int64) & 0xFFFF
            high = (table.T[None, :, :].astype(np.int64) & 0xFFFF) << 16
            table = (low | high).astype(np.uint32).view(np.int32)
            gather = 2
            if QUAD and g_m.mean() >= QUAD_MIN_ROWS:
                # [y0 * a1 + y1, x] padded to 32 x codes: rows of the block profile
                pad32 = np.zeros((a1 * a1, 32), np.int32)
                pad32[:, :a1] = table.reshape(a1 * a1, a1)
                table = pad32
                gather = 4
    match, mismatch, k_match = mm if compare else (0, 0, 0)
    limit = {8: 127, 16: INT16_CAP, 32: 1 << 62}[bits] - top
    kernel = _kernel(bits, code, compare, linear, gather)
    rest = (xcodes, xoff, ycodes, yoff, groups, g_m, g_n, dt(match), dt(mismatch), k_match,
            table.ravel(), a1, go, ge, NEG[bits], limit, out, saturated)
    with nb.parallel_chunksize(1):
        kernel(np.arange(len(groups)), *rest)
    if bits == 8 and (code, compare, linear) not in _READY16:
        # load (or compile) the 16-bit kernel that scores the pairs passing the 8-bit
        # limit now, with no group to score, so that its first real use costs no time
        _READY16.add((code, compare, linear))
        _run(16, sel[:0], xcodes, xoff, ycodes, yoff, xl, yl, matrix, mm, go, ge, code,
             linear, top, out, saturated)


_READY16: set = set()
