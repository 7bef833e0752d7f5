"""Bit-parallel longest common subsequence kernels (paper 001; KERNELS.md §D), Numba.

Notation. The *pattern* ``P = pat[p_lo:p_hi]`` (length ``np_``) is held as a bit-vector
``V`` of ``W = ceil(np_ / 64)`` little-endian ``uint64`` words; the *text*
``T = txt[t_lo:t_hi]`` is read one symbol per step. After the first ``t`` text symbols,
bit ``p`` of ``V`` is ``1 - (L[p+1][t] - L[p][t])`` where ``L[p][t]`` is the LLCS of
``P[:p]`` and ``T[:t]``: a zero bit marks a row where the column's LCS length grows.
Each text symbol ``c`` advances ``V`` by the recurrence of Crochemore et al. / Allison–Dix::

    U = V & M[c]                    # M[c]: bit p set iff P[p] == c
    V = (V + U) | (V & ~M[c])       # (paper 001's Listing 3 reads M of the previous
                                    #  symbol in the second term: a typo)

with the carry of ``+`` passed from word to word (``llvm.uadd.with.overflow``, i.e. ADC).

Row of the DP from the bit-vector (what Hirschberg's split needs). ``V`` after all of ``T``
is the last DP *column* over the pattern, and a pattern prefix is a DP row index, so

    L(P[:k], T) = k - popcount(V & (2**k - 1))          (number of zero bits below k)

for every ``k`` in ``0..np_``: prefix popcounts of the final vector give the whole row of
LLCS values of ``T`` against every prefix of ``P`` (``row_from_vector``). Padding bits above
``np_`` have an all-zero match mask, so they start at one and stay one (``V | ...``) and
never count; a carry out of the top word is dropped.

Backward (the paper's llcs'): bit ``k`` stands for ``P[np_-1-k]`` and the text is read from
its end, so the same recurrence yields ``L(P[np_-k:], T[s:])``, the LLCS of suffixes, without
reversed copies of either string: only the indexing changes.

Layout for speed and memory. The words are processed in stripes of ``STRIPE_WORDS`` words;
a stripe runs over the whole text with its match-mask table (256 × stripe words, rows of
absent symbols never touched) and the stripe's ``V`` hot in L1, reading the carry into its
lowest word for each text step from a bit array written by the stripe below (the paper's
block-step carries, here sequential). Two text symbols are advanced per pass over the
words (the second lags by one word), which halves the loads and stores of ``V`` and gives
two independent carry chains. Memory: ``V`` (np_/8 bytes), the carry bits (|T|/8 bytes)
and one 128 KiB mask table; nothing grows with ``np_ * |T|``.

Every kernel is ``nogil``: Hirschberg's independent subproblems run in a thread pool.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .. import lcs_plan

#: Words per stripe (4096 pattern symbols). Measured on Zen 4: 16 → 78, 32 → 84, 64 → 87
#: G cells/s per core on random DNA; the table of a stripe is 256 × 64 words (128 KiB), of
#: which only the rows of symbols present are touched.
STRIPE_WORDS = 64
#: Passes of any size run here (``base.LcsKernels``: the GPU's module keeps its own floor).
MIN_CELLS = 0
#: ``lcs`` batches no pass here by default: the pool runs them one per task. With
#: ``Cutoffs(gpu_cells=...)`` the passes of at least that many cells go through
#: :class:`Resident` instead (the GPU runner's interface; a test of the batching).
BATCH_MIN_CELLS = None

_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@intrinsic
def _addc(typingctx, x, y, c):
    """(x + y + c) mod 2**64 and its carry out (0 or 1); c must be 0 or 1. Compiles to ADC."""
    sig = types.UniTuple(types.uint64, 2)(types.uint64, types.uint64, types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.LiteralStructType([i64, ir.IntType(1)]), [i64, i64])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.uadd.with.overflow.i64")
        r1 = builder.call(fn, [args[0], args[1]])
        r2 = builder.call(fn, [builder.extract_value(r1, 0), args[2]])
        carry = builder.zext(builder.or_(builder.extract_value(r1, 1),
                                         builder.extract_value(r2, 1)), i64)
        return context.make_tuple(builder, signature.return_type,
                                  [builder.extract_value(r2, 0), carry])

    return sig, codegen


@intrinsic
def _popcount(typingctx, x):
    """Number of one bits of a uint64 (POPCNT)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64]),
                                            "llvm.ctpop.i64")
        return builder.call(fn, [args[0]])

    return sig, codegen


@nb.njit(nogil=True, cache=True, inline="always")
def _sym(s, lo, hi, k, backward):
    """The k-th symbol of s[lo:hi], counted from the end when ``backward``."""
    return s[hi - 1 - k] if backward else s[lo + k]


@nb.njit(nogil=True, cache=True)
def _set_masks(PM, pat, p_lo, p_hi, backward, w0, w1, value):
    """Set (value=True) or clear the match masks of pattern words w0..w1 in PM[sym, w - w0]."""
    end = min(p_hi - p_lo, w1 * 64)
    for k in range(w0 * 64, end):
        c = _sym(pat, p_lo, p_hi, k, backward)
        if value:
            PM[c, (k >> 6) - w0] |= np.uint64(1) << np.uint64(k & 63)
        else:
            PM[c, (k >> 6) - w0] = 0


@nb.njit(nogil=True, cache=True)
def _advance_stripe(V, w0, w1, PM, txt, t_lo, t_hi, backward, carry):
    """Advance words V[w0:w1] over the whole text; carry bit i in/out of step i (in place)."""
    T = t_hi - t_lo
    sw = w1 - w0
    one = np.uint64(1)
    for tb in range(0, T, 64):
        cw = carry[tb >> 6]
        ncw = np.uint64(0)
        te = min(T, tb + 64)
        i = tb
        while i + 1 < te:                      # two text symbols per pass over the words
            c1 = _sym(txt, t_lo, t_hi, i, backward)
            c2 = _sym(txt, t_lo, t_hi, i + 1, backward)
            s = np.uint64(i - tb)
            ca = (cw >> s) & one
            cb = (cw >> (s + one)) & one
            for w in range(sw):
                x = V[w0 + w]
                m1 = PM[c1, w]
                m2 = PM[c2, w]
                sm, ca = _addc(x, x & m1, ca)
                y = sm | (x & ~m1)
                sm, cb = _addc(y, y & m2, cb)
                V[w0 + w] = sm | (y & ~m2)
            ncw |= (ca << s) | (cb << (s + one))
            i += 2
        if i < te:
            c1 = _sym(txt, t_lo, t_hi, i, backward)
            s = np.uint64(i - tb)
            ca = (cw >> s) & one
            for w in range(sw):
                x = V[w0 + w]
                m1 = PM[c1, w]
                sm, ca = _addc(x, x & m1, ca)
                V[w0 + w] = sm | (x & ~m1)
            ncw |= ca << s
        carry[tb >> 6] = ncw


@nb.njit(nogil=True, cache=True)
def final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, backward):
    """The bit-vector V after the whole text (the last DP column over the pattern).

    Forward: bit k ↔ pat[p_lo + k], text read from t_lo up. Backward: bit k ↔ pat[p_hi-1-k],
    text read from t_hi-1 down (LLCS of suffixes). Returns ceil((p_hi-p_lo)/64) uint64 words;
    LLCS = number of zero bits. This is the row kernel a GPU backend replaces.
    """
    np_ = p_hi - p_lo
    W = (np_ + 63) // 64
    V = np.full(W, _ONES, np.uint64)
    T = t_hi - t_lo
    if W == 0 or T == 0:
        return V
    carry = np.zeros((T + 63) // 64, np.uint64)
    PM = np.zeros((256, STRIPE_WORDS), np.uint64)
    for w0 in range(0, W, STRIPE_WORDS):
        w1 = min(W, w0 + STRIPE_WORDS)
        _set_masks(PM, pat, p_lo, p_hi, backward, w0, w1, True)
        _advance_stripe(V, w0, w1, PM, txt, t_lo, t_hi, backward, carry)
        _set_masks(PM, pat, p_lo, p_hi, backward, w0, w1, False)
    return V


@nb.njit(nogil=True, cache=True)
def zeros_below(V, k):
    """Number of zero bits of V among bits 0..k-1 (the LLCS of the pattern prefix of length k)."""
    full = k >> 6
    ones = np.uint64(0)
    for w in range(full):
        ones += _popcount(V[w])
    r = k & 63
    if r:
        ones += _popcount(V[full] & ((np.uint64(1) << np.uint64(r)) - np.uint64(1)))
    return k - np.int64(ones)


@nb.njit(nogil=True, cache=True)
def row_from_vector(V, np_):
    """The DP row from a final vector: out[k] = LLCS(pattern prefix of length k, text)."""
    out = np.empty(np_ + 1, np.int64)
    out[0] = 0
    for k in range(np_):
        out[k + 1] = out[k] + 1 - np.int64((V[k >> 6] >> np.uint64(k & 63)) & np.uint64(1))
    return out


@nb.njit(nogil=True, cache=True, inline="always")
def _ones_range(V, lo, hi):
    """Number of one bits of V among bits lo..hi-1 (0 <= hi - lo <= 64)."""
    if hi <= lo:
        return np.int64(0)
    one = np.uint64(1)
    w0 = lo >> 6
    w1 = (hi - 1) >> 6
    x = V[w0] >> np.uint64(lo & 63)
    if w0 == w1:
        n = hi - lo
        if n < 64:
            x &= (one << np.uint64(n)) - one
        return np.int64(_popcount(x))
    y = V[w1]
    r = hi - 64 * w1
    if r < 64:
        y &= (one << np.uint64(r)) - one
    return np.int64(_popcount(x)) + np.int64(_popcount(y))


@nb.njit(nogil=True, cache=True)
def best_split(V1, V2, np_, prefer_last):
    """Hirschberg's split from a forward and a backward final vector over one pattern.

    V1: forward over the pattern against the first text half: L1[k] = LLCS(P[:k], T1).
    V2: backward over the same pattern against the second half: L2[r] = LLCS(P[np_-r:], T2).
    Returns (k, best) with best = max_k L1[k] + L2[np_ - k] (the LLCS of P and T1 T2) and k
    the smallest such k, or the largest when ``prefer_last``. O(np_ / 64) words plus 64
    bits per block that may hold the maximum, O(np_ / 64) space: L1[k] = k - pop1(k) and
    L2[np_-k] = np_ - k - (ones2 - pop2(k)), where pop1(k) counts ones of V1 below k,
    pop2(k) ones of V2 in [np_ - k, np_) and ones2 ones of V2 below np_, so the sum is
    L2[np_] + d(k) with d(k) = pop2(k) - pop1(k). d only grows through pop2, so a block of
    64 k's starting at d0 with c ones of V2 in its window stays <= d0 + c: a first sweep
    takes d at every block start (a lower bound m0 of the maximum); the second scans bit by
    bit only the blocks with d0 + c >= m0, in order (those skipped hold no maximum).
    """
    zeros2 = zeros_below(V2, np_)      # = L2[np_]; padding bits above np_ are not counted
    nblk = (np_ + 63) // 64
    d0 = np.empty(nblk + 1, np.int64)  # d at k = 64 w
    c2 = np.empty(nblk, np.int64)      # ones of V2 at positions np_ - k, k in block w
    d0[0] = 0
    m0 = np.int64(0)
    for w in range(nblk):
        k_lo = 64 * w
        k_hi = min(k_lo + 64, np_)
        c2[w] = _ones_range(V2, np_ - k_hi, np_ - k_lo)
        d0[w + 1] = d0[w] + c2[w] - _ones_range(V1, k_lo, k_hi)
        m0 = max(m0, d0[w + 1])
    one = np.uint64(1)
    best_k = 0
    best = np.int64(0)                 # d(0)
    for w in range(nblk):
        if d0[w] + c2[w] < m0:
            continue
        k_lo = 64 * w
        k_hi = min(k_lo + 64, np_)
        d = d0[w]
        for k in range(k_lo + 1, k_hi + 1):
            r = np_ - k
            d += np.int64((V2[r >> 6] >> np.uint64(r & 63)) & one)
            d -= np.int64((V1[(k - 1) >> 6] >> np.uint64((k - 1) & 63)) & one)
            if d > best or (prefer_last and d == best):
                best = d
                best_k = k
    return best_k, zeros2 + best


@nb.njit(nogil=True, cache=True)
def lcs_base_bits(a, a_lo, a_hi, b, b_lo, b_hi, mask):
    """LCS of a[a_lo:a_hi] and b[b_lo:b_hi] from the stored bit matrix; marks mask[i] = 1.

    Pattern = b (bits), text = a; keeps every column's vector ((|a|+1) × ceil(|b|/64) words)
    and traces back from the corner with the tie rule of ``lcs_base_dp``. With L[i][j] the
    LLCS of a[:i], b[:j] (relative), bit j-1 of column i is 1 - (L[i][j] - L[i][j-1]), so the
    rule's first test is one bit; the match test is R2 (a match always gives L[i-1][j-1] + 1).
    Returns the number of matches.
    """
    na = a_hi - a_lo
    nbl = b_hi - b_lo
    W = (nbl + 63) // 64
    if na == 0 or W == 0:
        return 0
    M = np.empty((na + 1, W), np.uint64)
    M[0, :] = _ONES
    carry = np.zeros(na, np.uint8)
    PM = np.zeros((256, STRIPE_WORDS), np.uint64)
    for w0 in range(0, W, STRIPE_WORDS):
        w1 = min(W, w0 + STRIPE_WORDS)
        _set_masks(PM, b, b_lo, b_hi, False, w0, w1, True)
        for t in range(na):
            c = a[a_lo + t]
            cin = np.uint64(carry[t])
            for w in range(w0, w1):
                x = M[t, w]
                mk = PM[c, w - w0]
                sm, cin = _addc(x, x & mk, cin)
                M[t + 1, w] = sm | (x & ~mk)
            carry[t] = np.uint8(cin)
        _set_masks(PM, b, b_lo, b_hi, False, w0, w1, False)
    one = np.uint64(1)
    i = na
    j = nbl
    count = 0
    while i > 0 and j > 0:
        q = j - 1
        if (M[i, q >> 6] >> np.uint64(q & 63)) & one:
            j -= 1
        elif a[a_lo + i - 1] == b[b_lo + q]:
            i -= 1
            j -= 1
            mask[a_lo + i] = 1
            count += 1
        else:
            i -= 1
    return count


@nb.njit(nogil=True, cache=True)
def lcs_base_dp(a, a_lo, a_hi, b, b_lo, b_hi, mask):
    """Plain DP with a full table for tiny subproblems; marks mask[i] = 1 for matched a[i].

    The tie rule (shared by every base case, so cut-offs never change the answer): from the
    corner, skip b[j-1] when L[i][j] == L[i][j-1], else take the match when a[i-1] == b[j-1]
    (then L[i][j] = L[i-1][j-1] + 1 by R2), else skip a[i-1] (then L[i][j] = L[i-1][j] by R3).
    Preferring the moves that lower j, it traces the optimal path with the smallest j at
    every i. Returns the number of matches.
    """
    na = a_hi - a_lo
    nbl = b_hi - b_lo
    if na == 0 or nbl == 0:
        return 0
    L = np.zeros((na + 1, nbl + 1), np.int32)
    for i in range(1, na + 1):
        ai = a[a_lo + i - 1]
        for j in range(1, nbl + 1):
            if ai == b[b_lo + j - 1]:
                L[i, j] = L[i - 1, j - 1] + 1
            else:
                L[i, j] = max(L[i, j - 1], L[i - 1, j])
    i = na
    j = nbl
    count = 0
    while i > 0 and j > 0:
        if L[i, j] == L[i, j - 1]:
            j -= 1
        elif a[a_lo + i - 1] == b[b_lo + j - 1]:
            i -= 1
            j -= 1
            mask[a_lo + i] = 1
            count += 1
        else:
            i -= 1
    return count


@nb.njit(nogil=True, cache=True)
def llcs_dp(a, b):
    """LLCS by the textbook two-row DP (paper 001's Listing 1); the small-input path."""
    n = b.shape[0]
    K = np.zeros(n + 1, np.int32)
    for i in range(a.shape[0]):
        diag = 0
        ai = a[i]
        for j in range(1, n + 1):
            up = K[j]
            if ai == b[j - 1]:
                K[j] = diag + 1
            elif K[j - 1] > up:
                K[j] = K[j - 1]
            diag = up
    return int(K[n])


class Resident:
    """Stand-in for ``cuda/lcs.Resident``: the two strings of one ``lcs`` call end to end,
    and a level's passes run from their descriptors (``lcs_plan``) one after another by
    :func:`final_vector` on the calling thread. Used only when ``Cutoffs.gpu_cells`` is
    given with ``backend="cpu"``: the driver's batching, checked without a GPU."""

    def __init__(self, a: np.ndarray, b: np.ndarray):
        self.na = len(a)
        self.codes = np.concatenate((a, b))

    def final_vectors(self, passes) -> list[np.ndarray]:
        """Vectors of ``passes`` (rows ``(pattern_is_a, p_lo, p_hi, t_lo, t_hi, backward)``)."""
        return lcs_plan.run_descriptors(self.codes, lcs_plan.describe(passes, self.na),
                                        final_vector)

    def close(self) -> None:
        self.codes = None
