"""CPU kernels of the traceback (Numba; :mod:`warpalign.traceback` runs them): the anchored
reverse pass that finds an alignment's start, the last-row passes and the stored-direction
traceback of Myers–Miller's recursion (:class:`MyersMiller`), and the rescoring of a path
(its rendering: ``cpu/render.py``). :mod:`warpalign.traceback`'s docstring explains the three
steps and why the pruning never changes a result; ``_backends/cuda/long.py`` runs the same
passes on the GPU and uses these for its small subproblems and checks.

Conventions as everywhere in warpalign: rows are query positions, columns target
positions; a gap of length k costs ``gap_open + (k - 1) * gap_extend``. Ops: ``OP_M``
(query symbol against target symbol), ``OP_I`` (query symbol against a gap), ``OP_D``
(target symbol against a gap).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

from .render import render_rows
from .striped import score_end_long
from ...offsets import running_sums

#: Myers–Miller splits of at least this many cells run their forward and reverse
#: passes on two threads (the Numba kernels release the GIL).
PARALLEL_CELLS = 1 << 22

OP_M, OP_I, OP_D = 0, 1, 2
# Direction byte of full_traceback: bits 0-1 the source of H (0 diagonal, 1 E, 2 F);
# bit 2 (4): E here extends the horizontal gap of the cell to the left;
# bit 3 (8): F here extends the vertical gap of the cell above.


@nb.njit(nogil=True, cache=True)
def _symbol_best(matrix, by_row):
    """Most one symbol can add to an alignment: max(0, its best substitution score), for
    each code as a row of ``matrix`` (query symbols) or as a column (target symbols)."""
    size = matrix.shape[0]
    best = np.zeros(size, np.int64)
    for a in range(size):
        for b in range(size):
            best[a] = max(best[a], matrix[a, b] if by_row else matrix[b, a])
    return best


@nb.njit(nogil=True, cache=True)
def _gap_budget(best_sum, score, gap_open, gap_extend, most):
    """Most gap symbols (I and D together) an alignment scoring ``score`` can hold.

    Its aligned pairs add at most ``best_sum``, and G >= 1 gap symbols cost at least
    ``gap_open + (G - 1) * gap_extend`` (``gap_extend <= gap_open``), so
    ``G <= (best_sum - score - gap_open) // gap_extend + 1``; no gap fits when
    ``best_sum - score < gap_open``. Capped at ``most`` (also when ``gap_extend`` is 0).
    """
    slack = best_sum - score
    if slack < gap_open:
        return 0
    if gap_extend == 0:
        return most
    return min(most, (slack - gap_open) // gap_extend + 1)


@nb.njit(nogil=True, cache=True)
def anchored_start(q, qe, t, te, matrix, gap_open, gap_extend, target, full_query, whole=False):
    """Reverse pass from the end cell (qe, te); returns (query extent, target extent).

    Runs Gotoh on A = q[:qe] reversed (rows) and B = t[:te] reversed (columns), anchored
    at A/B's origin (gaps there cost as usual), column by column. Returns the first cell
    (smallest column, then smallest row) whose value equals ``target``; with
    ``full_query`` only the last row counts. (-1, -1) when no cell does, or when one
    exceeds it: ``target`` must be the local (semiglobal) optimum of q and t, which no
    anchored alignment beats, so a column reaches it exactly when its maximum does.
    The pass stops at that first column; with ``whole`` it runs on while any cell can
    still reach ``target``, so that (-1, -1) also means that some alignment ending at
    (qe, te) scores above ``target``.

    Only cells that can lead to ``target`` are computed: rows i+1..m of A add at most
    ``R(i)``, the sum of their best substitution scores, so a path through a cell of
    value ``h < target - R(i)`` scores below ``target`` wherever it ends. Each column
    keeps the rows lo..hi between its first and last cell above that bound; the next
    column computes rows lo..hi+1 and the vertical gaps running on below, all else counts
    as -inf. Every cell on a path scoring ``target`` or more passes the bound, so by
    induction along the path it is computed exactly; any other value is that of some
    path, never above the true one. Hence the cells equal to (above) ``target`` are the
    same as without pruning, and the pass ends when a column keeps no row.
    """
    m = qe
    n = te
    go = np.int64(gap_open)
    ge = np.int64(gap_extend)
    neg = np.int64(-(1 << 60))
    best = _symbol_best(matrix, True)
    by_symbol = np.ascontiguousarray(matrix.T)   # by_symbol[c][x] = matrix[x, c]
    qr = np.zeros(m + 1, np.uint8)               # qr[i] = A's row i = q[qe - i]
    low = np.empty(m + 1, np.int64)              # low[i] = target - R(i)
    low[m] = target
    for i in range(m, 0, -1):
        qr[i] = q[qe - i]
        low[i - 1] = low[i] - best[qr[i]]
    H = np.empty(m + 1, np.int64)   # column j-1, then column j (rows lo..hi)
    E = np.empty(m + 1, np.int64)   # horizontal-gap state per row, column j-1 then j
    H[0] = 0
    E[0] = neg
    lo = 0
    hi = 0
    for i in range(1, m + 1):       # column 0: one vertical gap from the origin
        h = -(go + (i - 1) * ge)
        if h < low[i]:
            break
        H[i] = h
        E[i] = neg
        hi = i
    if full_query:
        top = H[m] if hi == m else neg
    else:
        top = np.int64(0)   # column 0: the origin's 0 is the column maximum
    di = -1
    dj = -1
    j = 0
    while True:
        if top >= target:
            if top > target:
                return -1, -1
            if dj < 0:
                if full_query:
                    di = m
                else:
                    for i in range(lo, hi + 1):
                        if H[i] == target:
                            di = i
                            break
                dj = j
                if not whole:
                    return di, dj
        if j == n:
            return di, dj
        col = by_symbol[t[te - 1 - j]]
        j += 1
        if lo == 0:
            diag = H[0]
            H[0] = -(go + (j - 1) * ge)
            up = H[0]
            top = H[0]
            first = 1
        else:               # the cells above row lo, in both columns, count as -inf
            diag = neg
            up = neg
            top = neg
            first = lo
        if hi < m:          # row hi+1 continues row hi diagonally; its left cell is -inf
            hi += 1
            H[hi] = neg
            E[hi] = neg
        f = max(neg - ge, up - go)
        # the f chain alone carries the column: f(i+1) = max(f(i) - ge, x(i) - go) with
        # x = max(diag + s, e), as h(i) - go = max(x(i), f(i)) - go and f(i) - go <= f(i) - ge
        Hs = H[first:hi + 1]
        Es = E[first:hi + 1]
        rows = qr[first:hi + 1]
        for k in range(hi + 1 - first):
            e = max(Es[k] - ge, Hs[k] - go)
            x = max(diag + col[rows[k]], e)
            h = max(x, f)
            diag = Hs[k]
            Hs[k] = h
            Es[k] = e
            f = max(f - ge, x - go)
            top = max(top, h)
        while hi < m and f >= low[hi + 1]:   # a vertical gap running on below row hi
            hi += 1
            H[hi] = f
            E[hi] = neg
            top = max(top, f)
            f -= ge
        while lo <= hi and H[lo] < low[lo]:
            lo += 1
        while hi >= lo and H[hi] < low[hi]:
            hi -= 1
        if lo > hi:         # no cell of this column leads to target: none further will
            return di, dj
        if full_query:
            top = H[m] if hi == m else neg


@nb.njit(nogil=True, cache=True)
def last_row(q, q0, qstep, a, t, t0, tstep, b, matrix, gap_open, gap_extend, first_open, HH, FF):
    """Gotoh over a rows x b columns; fills HH (best) and FF (vertical-gap state) of the last row.

    Row i uses symbol q[q0 + (i-1)*qstep], column j uses t[t0 + (j-1)*tstep] (step -1 walks
    a segment backwards). A vertical gap starting at the origin (column 0) opens at
    ``first_open`` instead of ``gap_open`` (``gap_extend`` when it continues a gap).
    Rows go two at a time: two dependency chains per column keep the core busier.
    """
    go = np.int64(gap_open)
    ge = np.int64(gap_extend)
    neg = np.int64(-(1 << 60))
    HH[0] = 0
    FF[0] = neg
    for j in range(1, b + 1):
        HH[j] = -(go + (j - 1) * ge)
        FF[j] = neg
    i = 1
    while i + 1 <= a:
        row1 = matrix[q[q0 + (i - 1) * qstep]]
        row2 = matrix[q[q0 + i * qstep]]
        diag1 = HH[0]
        left1 = -(first_open + (i - 1) * ge)
        left2 = -(first_open + i * ge)
        diag2 = left1
        e1 = neg
        e2 = neg
        for j in range(1, b + 1):
            c = t[t0 + (j - 1) * tstep]
            up = HH[j]
            e1 = max(e1 - ge, left1 - go)
            f1 = max(FF[j] - ge, up - go)
            h1 = max(diag1 + row1[c], max(e1, f1))
            diag1 = up
            e2 = max(e2 - ge, left2 - go)
            f2 = max(f1 - ge, h1 - go)
            h2 = max(diag2 + row2[c], max(e2, f2))
            diag2 = h1
            left1 = h1
            left2 = h2
            HH[j] = h2
            FF[j] = f2
        HH[0] = -(first_open + i * ge)
        FF[0] = HH[0]
        i += 2
    if i == a:
        row = matrix[q[q0 + (i - 1) * qstep]]
        diag = HH[0]
        HH[0] = -(first_open + (i - 1) * ge)
        FF[0] = HH[0]
        left = HH[0]
        e = neg
        for j in range(1, b + 1):
            e = max(e - ge, left - go)
            f = max(FF[j] - ge, HH[j] - go)
            h = max(diag + row[t[t0 + (j - 1) * tstep]], max(e, f))
            diag = HH[j]
            HH[j] = h
            FF[j] = f
            left = h


@nb.njit(nogil=True, cache=True)
def full_traceback(q, qlo, a, t, tlo, b, matrix, gap_open, gap_extend, start_in_gap, end_in_gap,
                   score=None):
    """Global Gotoh of q[qlo:qlo+a] vs t[tlo:tlo+b] with a direction byte per cell.

    ``start_in_gap``/``end_in_gap``: a vertical gap at the start/end continues one that is
    already open outside (its first position costs ``gap_extend``). Needs a, b >= 1.
    Returns (score, ops) with ops in alignment order (OP_M, OP_I, OP_D).

    ``score``, when given (and neither end is in a gap), is the optimum, and only cells
    an alignment of that score can pass are computed. (1) A band of diagonals: such a
    path holds at most G = :func:`_gap_budget` gap symbols (its pairs add at most the best
    scores of the segment's rows, of its columns, and ``max(matrix) * (a + b - G) / 2``),
    so its offset k = row - column keeps ``|2k - (a - b)| <= G``. (2) Per row, the columns
    between the first and last cell whose value h can still lead to ``score``:
    ``h + min(rows after i, columns after j) - gap_extend * |(a - i) - (b - j)|``, the
    most the rest of a path can add (best substitution scores; the offset still to cover
    costs at least ``gap_extend`` a symbol), reaches it. The next row computes columns
    lo..hi+1 and the horizontal gap running on right of them; all else counts as -inf.
    Each cell of an optimal path passes both tests, so by induction along the path its
    values are exact; any other value is that of some path, never above the true one. So
    every comparison the traceback makes (is this candidate the maximum?) comes out as
    without pruning: same path. A wrong ``score`` gives another score (-2**60 when the
    pruned region loses the end cell), never a silent pass.
    """
    go = np.int64(gap_open)
    ge = np.int64(gap_extend)
    neg = np.int64(-(1 << 60))
    first_open = ge if start_in_gap else go
    kmin = -b
    kmax = a
    prune = False
    s = np.int64(0)
    # rq[i]: most rows i+1..a add; rt[j]: most columns j+1..b add (pruning only)
    rq = np.zeros(a + 1, np.int64)
    rt = np.zeros(b + 1, np.int64)
    if score is not None and not start_in_gap and not end_in_gap:
        prune = True
        s = np.int64(score)
        qb = _symbol_best(matrix, True)
        tb = _symbol_best(matrix, False)
        for i in range(a, 0, -1):
            rq[i - 1] = rq[i] + qb[q[qlo + i - 1]]
        for j in range(b, 0, -1):
            rt[j - 1] = rt[j] + tb[t[tlo + j - 1]]
        band = _gap_budget(min(rq[0], rt[0]), s, go, ge, a + b)
        top = np.int64(matrix.max())
        if top > 0:
            band = min(band, max(0, (top * (a + b) - 2 * s - 2 * go + 2 * ge) // (top + 2 * ge)))
        band = max(band, abs(a - b))
        kmin = max(kmin, -((b - a + band) // 2))
        kmax = min(kmax, (a - b + band) // 2)
    width = kmax - kmin + 1
    bits = np.empty((a + 1, width), np.uint8)
    H = np.empty(b + 1, np.int64)
    F = np.empty(b + 1, np.int64)
    H[0] = 0
    F[0] = neg
    lo = 0
    hi = min(b, -kmin)
    for j in range(1, hi + 1):
        H[j] = -(go + (j - 1) * ge)
        F[j] = neg
    if prune:
        while hi >= 0 and H[hi] < s - min(rq[0], rt[hi]) + abs(a - b + hi) * ge:
            hi -= 1
        if hi < 0:
            return neg, np.empty(0, np.uint8)
    for i in range(1, a + 1):
        row = matrix[q[qlo + i - 1]]
        plo = lo
        phi = hi
        lo = max(plo, i - kmax)
        hi = min(b, phi + 1, i - kmin)
        if lo == 0:
            diag = H[0]
            H[0] = -(first_open + (i - 1) * ge)
            left = H[0]
            first = 1
        elif lo > plo:          # clamped by the band: (i-1, lo-1) is in the previous interval
            diag = H[lo - 1]
            left = neg
            first = lo
        else:
            diag = neg
            left = neg
            first = lo
        if hi > phi:
            H[hi] = neg
            F[hi] = neg
        e = neg
        x = left
        Hs = H[first:hi + 1]
        Fs = F[first:hi + 1]
        cols = t[tlo + first - 1:tlo + hi]
        out = bits[i, first - i + kmax:hi - i + kmax + 1]
        for k in range(hi + 1 - first):
            e_ext = e - ge
            d = 4 * (e_ext > left - go)
            e = max(e_ext, x - go)
            up = Hs[k]
            f_open = up - go
            f_ext = Fs[k] - ge
            d += 8 * (f_ext > f_open)
            f = max(f_ext, f_open)
            s0 = diag + row[cols[k]]
            x = max(s0, f)
            h = max(x, e)
            d += max(2 * (f > max(s0, e)), 1 * (e > s0))
            out[k] = d
            diag = up
            Hs[k] = h
            Fs[k] = f
            left = h
        if prune:
            # a horizontal gap running on right of hi (nothing above or diagonal there)
            last = min(b, i - kmin)
            while hi < last:
                e_ext = e - ge
                e_next = max(e_ext, x - go)
                j = hi + 1
                if e_next < s - min(rq[i], rt[j]) + abs(a - i - b + j) * ge:
                    break
                hi = j
                bits[i, j - i + kmax] = 4 * (e_ext > left - go) + 1
                e = e_next
                x = neg
                H[j] = e
                F[j] = neg
                left = e
            while lo <= hi and H[lo] < s - min(rq[i], rt[lo]) + abs(a - i - b + lo) * ge:
                lo += 1
            while hi >= lo and H[hi] < s - min(rq[i], rt[hi]) + abs(a - i - b + hi) * ge:
                hi -= 1
            if lo > hi:
                return neg, np.empty(0, np.uint8)
    score_out = H[b]
    if prune and hi < b:
        return neg, np.empty(0, np.uint8)
    state = 0
    if end_in_gap and F[b] + go - ge > score_out:
        score_out = F[b] + go - ge
        state = 2
    ops = np.empty(a + b, np.uint8)
    k = 0
    i = a
    j = b
    while i > 0 or j > 0:
        if i == 0:
            ops[k] = 2
            j -= 1
            k += 1
        elif j == 0:
            ops[k] = 1
            i -= 1
            k += 1
        else:
            c = j - i + kmax
            if c < 0 or c >= width:    # left the band: only with a wrong score
                return neg, np.empty(0, np.uint8)
            if state == 0:
                src = bits[i, c] & np.uint8(3)
                if src == 0:
                    ops[k] = 0
                    i -= 1
                    j -= 1
                    k += 1
                else:
                    state = src
            elif state == 1:
                ops[k] = 2
                k += 1
                if (bits[i, c] & np.uint8(4)) == 0:
                    state = 0
                j -= 1
            else:
                ops[k] = 1
                k += 1
                if (bits[i, c] & np.uint8(8)) == 0:
                    state = 0
                i -= 1
    return score_out, ops[:k][::-1].copy()


@nb.njit(nogil=True, cache=True)
def path_score(ops, q, qlo, t, tlo, matrix, gap_open, gap_extend):
    """Score of an alignment path from its ops; returns (score, query end, target end)."""
    s = np.int64(0)
    i = qlo
    j = tlo
    prev = -1
    for k in range(ops.shape[0]):
        op = ops[k]
        if op == 0:
            s += matrix[q[i], t[j]]
            i += 1
            j += 1
        elif op == 1:
            s -= gap_extend if prev == 1 else gap_open
            i += 1
        else:
            s -= gap_extend if prev == 2 else gap_open
            j += 1
        prev = op
    return s, i, j


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warpalign-mm")
        return _pool


class MyersMiller:
    """Myers–Miller over one segment pair; collects ops (arrays) left to right.

    ``solve`` appends an optimal global path of a segment pair and returns its score;
    ``ops`` gives the path so far. Used by ``warpalign.traceback.global_path`` and, for the
    small subproblems of its level-parallel recursion, by the GPU's ``cuda/long.py``."""

    def __init__(self, q, t, matrix, gap_open, gap_extend, max_full_cells, threads: int = 2):
        self.q, self.t, self.matrix = q, t, matrix
        self.threads = threads        # >= 2: the two half passes of a large split at once
        self.go, self.ge = int(gap_open), int(gap_extend)
        self.max_full_cells = max_full_cells
        self.pieces: list[np.ndarray] = []

    def _gap_only(self, op: int, n: int, open_cost: int) -> int:
        if n:
            self.pieces.append(np.full(n, op, np.uint8))
        return 0 if n == 0 else -(open_cost + (n - 1) * self.ge)

    def solve(self, qlo: int, qhi: int, tlo: int, thi: int, start_in_gap: bool, end_in_gap: bool,
              score: int | None = None) -> int:
        """Append an optimal path of q[qlo:qhi] vs t[tlo:thi]; return its score.

        ``score``: that optimum when the caller knows it (a full-matrix problem is then
        computed on a band of diagonals; the path is the same)."""
        a, b = qhi - qlo, thi - tlo
        go, ge = self.go, self.ge
        if b == 0:  # one vertical gap, joined to an open one on either side if any
            return self._gap_only(OP_I, a, ge if (start_in_gap or end_in_gap) else go)
        if a == 0:
            return self._gap_only(OP_D, b, go)
        if a == 1 or (a + 1) * (b + 1) <= self.max_full_cells:
            best, ops = full_traceback(self.q, qlo, a, self.t, tlo, b, self.matrix, go, ge,
                                       start_in_gap, end_in_gap, score)
            self.pieces.append(ops)
            return int(best)
        mid = a // 2
        hf, ff = np.empty(b + 1, np.int64), np.empty(b + 1, np.int64)
        hr, fr = np.empty(b + 1, np.int64), np.empty(b + 1, np.int64)
        fwd = (self.q, qlo, 1, mid, self.t, tlo, 1, b, self.matrix, go, ge,
               ge if start_in_gap else go, hf, ff)
        rev = (self.q, qhi - 1, -1, a - mid, self.t, thi - 1, -1, b, self.matrix, go, ge,
               ge if end_in_gap else go, hr, fr)
        if a * b >= PARALLEL_CELLS and self.threads >= 2:
            job = _executor().submit(last_row, *fwd)
            last_row(*rev)
            job.result()
        else:
            last_row(*fwd)
            last_row(*rev)
        through = hf + hr[::-1]                 # path passes cell (mid, j)
        crossing = ff + fr[::-1] + (go - ge)    # a vertical gap crosses rows mid -> mid+1 at j
        j1 = int(np.argmax(through))
        j2 = int(np.argmax(crossing))
        best = max(int(through[j1]), int(crossing[j2]))
        if through[j1] >= crossing[j2]:
            self.solve(qlo, qlo + mid, tlo, tlo + j1, start_in_gap, False)
            self.solve(qlo + mid, qhi, tlo + j1, thi, False, end_in_gap)
        else:
            self.solve(qlo, qlo + mid - 1, tlo, tlo + j2, start_in_gap, True)
            self.pieces.append(np.full(2, OP_I, np.uint8))
            self.solve(qlo + mid + 1, qhi, tlo + j2, thi, True, end_in_gap)
        return best

    def ops(self) -> np.ndarray:
        if len(self.pieces) == 1:
            return self.pieces[0]
        return np.concatenate(self.pieces) if self.pieces else np.empty(0, np.uint8)


class CpuTraceback:
    """The ``traceback`` job's CPU engine (:class:`~warpalign._backends.base.ManyTraceback`):
    the passes above for many independent jobs, spread over ``threads`` threads (the
    kernels release the GIL). Holds no per-call state."""

    name = "cpu"

    #: Runs of consecutive items a thread takes at a time, per thread: one future per item
    #: cost ~50 us of pool traffic and GIL hand-offs, as much as a 300 x 400 protein job
    #: (2,000 jobs: 0.19 s in futures of one job, 0.084 s in runs; 2-core machine).
    RUNS_PER_THREAD = 8

    @classmethod
    def _map(cls, fn, items, threads):
        """``[fn(item) for item in items]``, on ``threads`` threads: runs of consecutive
        items (``RUNS_PER_THREAD`` a thread), taken by the threads as they come free; on
        the calling thread alone when ``threads`` is None or 1 (the protocol's rule)."""
        if threads is None or threads <= 1 or len(items) < 2:
            return [fn(it) for it in items]
        runs = min(len(items), threads * cls.RUNS_PER_THREAD)
        cut = [len(items) * k // runs for k in range(runs + 1)]

        def run(k):
            return [fn(it) for it in items[cut[k]:cut[k + 1]]]

        with ThreadPoolExecutor(max_workers=min(threads, runs),
                                thread_name_prefix="warpalign-tb") as pool:
            return [got for part in pool.map(run, range(runs)) for got in part]

    def ends(self, items, scoring, algorithm: int, *, threads: int | None = None) -> np.ndarray:
        """(score, query end, target end) per item ``(q, t)``: ``pairwise.score_end`` (by
        the striped kernel for long pairs, ``striped.score_end_long``)."""
        matrix, go, ge = scoring.matrix, scoring.gap_open, scoring.gap_extend
        got = self._map(lambda it: score_end_long(it[0], it[1], matrix, go, ge, algorithm),
                        list(items), threads)
        return np.array(got, np.int64).reshape(len(got), 3)

    def starts(self, items, scoring, full_query: bool, *, threads: int | None = None) -> np.ndarray:
        """(di, dj) per item ``(q, qe, t, te, target)``: :func:`anchored_start`'s answer;
        (-1, -1) when no alignment ending at (qe, te) scores ``target`` or one beats it."""
        matrix, go, ge = scoring.matrix, scoring.gap_open, scoring.gap_extend

        def one(item):
            q, qe, t, te, target = item
            return anchored_start(q, qe, t, te, matrix, go, ge, target, full_query)

        got = self._map(one, list(items), threads)
        return np.array(got, np.int64).reshape(len(got), 2)

    def paths(self, items, scoring, max_full_cells: int, *,
              threads: int | None = None) -> list[tuple[int, np.ndarray]]:
        """(score, ops) per item ``(q, qlo, qhi, t, tlo, thi[, score])``: :class:`MyersMiller`'s
        optimal global path of q[qlo:qhi] vs t[tlo:thi] (with its optimum ``score`` when
        known, a full-matrix segment computes only a band: the same path)."""
        matrix, go, ge = scoring.matrix, scoring.gap_open, scoring.gap_extend
        inner = 2 if threads is None or threads >= 2 else 1

        def one(item):
            q, qlo, qhi, t, tlo, thi, *known = item
            path = MyersMiller(q, t, matrix, go, ge, max_full_cells, inner if len(items) == 1 else 1)
            best = path.solve(qlo, qhi, tlo, thi, False, False, known[0] if known else None)
            return int(best), path.ops()

        return self._map(one, list(items), threads)

    # ------------------------------------------------------------------ array jobs
    # The interface of the GPU engine's array jobs (cuda/traceback.py): job k reads
    # qcodes[qpos[k]:qpos[k] + qlen[k]] and tcodes[tpos[k]:tpos[k] + tlen[k]].

    xp = np

    @staticmethod
    def _slices(qcodes, qpos, qlen, tcodes, tpos, tlen):
        qcodes, tcodes = np.asarray(qcodes, np.uint8), np.asarray(tcodes, np.uint8)
        return [(qcodes[a:a + m], tcodes[b:b + n]) for a, m, b, n in
                zip(np.asarray(qpos).tolist(), np.asarray(qlen).tolist(),
                    np.asarray(tpos).tolist(), np.asarray(tlen).tolist())]

    def ends_flat(self, qcodes, qpos, qlen, tcodes, tpos, tlen, scoring, algorithm: int, *,
                  threads: int | None = None) -> np.ndarray:
        """:meth:`ends` of the array jobs: an (n, 3) int64 array."""
        return self.ends(self._slices(qcodes, qpos, qlen, tcodes, tpos, tlen), scoring,
                         algorithm, threads=threads)

    def starts_flat(self, qcodes, qpos, qe, tcodes, tpos, te, target, scoring, full_query: bool,
                    *, threads: int | None = None) -> np.ndarray:
        """:meth:`starts` of the array jobs (job k ends at (qe[k], te[k]) of its pair)."""
        items = self._slices(qcodes, qpos, qe, tcodes, tpos, te)
        return self.starts([(q, len(q), t, len(t), int(s))
                            for (q, t), s in zip(items, np.asarray(target).tolist())],
                           scoring, full_query, threads=threads)

    def paths_flat(self, qcodes, qpos, qlen, tcodes, tpos, tlen, target, scoring,
                   max_full_cells: int, *, threads: int | None = None):
        """:meth:`paths` of the array jobs: (scores, ops, opoff), every path in one array."""
        items = self._slices(qcodes, qpos, qlen, tcodes, tpos, tlen)
        got = self.paths([(q, 0, len(q), t, 0, len(t), int(s))
                          for (q, t), s in zip(items, np.asarray(target).tolist())],
                         scoring, max_full_cells, threads=threads)
        scores = np.array([s for s, _ in got], np.int64)
        opoff = running_sums([len(o) for _, o in got])
        ops = np.concatenate([o for _, o in got]) if got else np.zeros(0, np.uint8)
        return scores, ops.astype(np.uint8, copy=False), opoff

    def render_flat(self, ops, opoff, qcodes, qpos, tcodes, tpos, scoring, symbols):
        """The ``Rendered`` of paths (``_backends/render.py``; host arrays): path k is
        ops[opoff[k]:opoff[k+1]] from qcodes[qpos[k]] and tcodes[tpos[k]]; ``symbols``:
        the printed byte of each code. By Numba's ``render_many`` (``cpu/render.py``)."""
        return render_rows(np.asarray(ops, np.uint8), np.asarray(opoff, np.int64),
                           np.asarray(qcodes, np.uint8), np.asarray(qpos, np.int64),
                           np.asarray(tcodes, np.uint8), np.asarray(tpos, np.int64),
                           scoring.matrix, scoring.gap_open, scoring.gap_extend, symbols)
