"""CPU traceback: the alignment path of one pair (``mode="full"``), in linear space.

Three steps, each exact and deterministic, so every backend reports the same
coordinates:

1. **End.** :func:`~warpalign._backends.cpu.pairwise.score_end` gives the score and
   the end cell under DESIGN.md's tie rule (local, semiglobal; global ends at (m, n)).
2. **Start.** An *anchored reverse pass* runs the same Gotoh recurrence backwards from
   the end cell over the reversed prefixes ``q[:qe][::-1]``, ``t[:te][::-1]``: the
   alignment must begin at the reversed origin (the end cell) and may stop anywhere
   (local) or anywhere on the last query row (semiglobal: the whole query is used).
   Among the cells whose value equals the score it takes the smallest reversed target
   extent, then the smallest reversed query extent: the shortest such alignment.
   The pass goes column by column and stops at the first column that reaches the score.
3. **Path.** A global affine-gap (Gotoh, three states) alignment of the segments
   ``q[qs:qe]`` and ``t[ts:te]``, whose optimum equals the score found in step 1
   (checked; a mismatch is an internal error). Small problems store one direction
   byte per cell and trace back through the H, E and F states; large ones use the
   Myers–Miller (1988) divide and conquer in linear space, splitting on the middle
   query row (a vertical gap crossing it is charged one open, not two) and passing the
   "starts/ends inside a vertical gap" boundary conditions down the recursion.

Conventions as everywhere in warpalign: rows are query positions, columns target
positions; a gap of length k costs ``gap_open + (k - 1) * gap_extend``. CIGAR ops are
M (query symbol against target symbol), I (query symbol against a gap) and D (target
symbol against a gap).

Example:
    >>> from warpalign.scoring import Scoring
    >>> s = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
    >>> q, t = s.encode("ATGCTCATAGA"), s.encode("ATGCCTCACTGA")
    >>> a = align_codes(q, t, s)
    >>> a.score, a.cigar
    (31, '3M1D8M')
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numba as nb
import numpy as np

from ._backends.cpu.pairwise import ALGORITHM_CODES, GLOBAL, LOCAL, SEMIGLOBAL, score_end
from .results import Alignment
from .scoring import Scoring

#: Largest DP matrix, in cells ``(len_a + 1) * (len_b + 1)``, traced back from a stored
#: direction matrix (one byte per cell); larger (sub)problems are split by Myers–Miller.
FULL_MATRIX_CELLS = 1 << 24
#: Myers–Miller splits of at least this many cells run their forward and reverse
#: passes on two threads (the Numba kernels release the GIL).
PARALLEL_CELLS = 1 << 22

OP_M, OP_I, OP_D = 0, 1, 2
_OP_CHARS = "MID"
# Direction byte of _full_traceback: bits 0-1 the source of H (0 diagonal, 1 E, 2 F);
# bit 2 (4): E here extends the horizontal gap of the cell to the left;
# bit 3 (8): F here extends the vertical gap of the cell above.


class TracebackError(RuntimeError):
    """An internal inconsistency in the traceback (a bug: please report it)."""


# --------------------------------------------------------------------------- kernels


@nb.njit(nogil=True, cache=True)
def _anchored_start(q, qe, t, te, matrix, gap_open, gap_extend, target, full_query):
    """Reverse pass from the end cell (qe, te); returns (query extent, target extent).

    Runs Gotoh on A = q[:qe] reversed (rows) and B = t[:te] reversed (columns), anchored
    at A/B's origin (gaps there cost as usual), column by column. Returns the first cell
    (smallest column, then smallest row) whose value equals ``target``; with
    ``full_query`` only the last row counts. (-1, -1) when no cell does. No anchored
    alignment scores above the local/semiglobal optimum ``target``, so a column reaches
    it exactly when its maximum does; the inner loop only tracks that maximum.
    """
    m = qe
    n = te
    go = np.int64(gap_open)
    ge = np.int64(gap_extend)
    neg = np.int64(-(1 << 60))
    H = np.empty(m + 1, np.int64)   # column j-1, then column j
    E = np.empty(m + 1, np.int64)   # horizontal-gap state per row, column j-1 then j
    H[0] = 0
    E[0] = neg
    for i in range(1, m + 1):
        H[i] = -(go + (i - 1) * ge)
        E[i] = neg
    top = H[m] if full_query else np.int64(0)   # column 0: the origin's 0 is the column maximum
    j = 0
    while True:
        if top == target:
            if full_query:
                return m, j
            for i in range(m + 1):
                if H[i] == target:
                    return i, j
        if j == n:
            return -1, -1
        c = t[te - 1 - j]
        j += 1
        diag = H[0]
        H[0] = -(go + (j - 1) * ge)
        up = H[0]
        f = neg
        top = H[0]
        for i in range(1, m + 1):
            e = max(E[i] - ge, H[i] - go)
            f = max(f - ge, up - go)
            h = max(diag + matrix[q[qe - i], c], max(e, f))
            diag = H[i]
            H[i] = h
            E[i] = e
            up = h
            top = max(top, h)
        if full_query:
            top = H[m]


@nb.njit(nogil=True, cache=True)
def _last_row(q, q0, qstep, a, t, t0, tstep, b, matrix, gap_open, gap_extend, first_open, HH, FF):
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
def _full_traceback(q, qlo, a, t, tlo, b, matrix, gap_open, gap_extend, start_in_gap, end_in_gap):
    """Global Gotoh of q[qlo:qlo+a] vs t[tlo:tlo+b] with a direction byte per cell.

    ``start_in_gap``/``end_in_gap``: a vertical gap at the start/end continues one that is
    already open outside (its first position costs ``gap_extend``). Needs a, b >= 1.
    Returns (score, ops) with ops in alignment order (OP_M, OP_I, OP_D).
    """
    go = np.int64(gap_open)
    ge = np.int64(gap_extend)
    neg = np.int64(-(1 << 60))
    first_open = ge if start_in_gap else go
    bits = np.zeros((a + 1, b + 1), np.uint8)
    H = np.empty(b + 1, np.int64)
    F = np.empty(b + 1, np.int64)
    H[0] = 0
    F[0] = neg
    for j in range(1, b + 1):
        H[j] = -(go + (j - 1) * ge)
        F[j] = neg
    for i in range(1, a + 1):
        row = matrix[q[qlo + i - 1]]
        diag = H[0]
        H[0] = -(first_open + (i - 1) * ge)
        left = H[0]
        e = neg
        for j in range(1, b + 1):
            d = np.uint8(0)
            e_open = left - go
            e_ext = e - ge
            if e_ext > e_open:
                e = e_ext
                d |= np.uint8(4)
            else:
                e = e_open
            f_open = H[j] - go
            f_ext = F[j] - ge
            if f_ext > f_open:
                f = f_ext
                d |= np.uint8(8)
            else:
                f = f_open
            h = diag + row[t[tlo + j - 1]]
            if e > h:
                h = e
                d = (d & np.uint8(12)) | np.uint8(1)
            if f > h:
                h = f
                d = (d & np.uint8(12)) | np.uint8(2)
            bits[i, j] = d
            diag = H[j]
            H[j] = h
            F[j] = f
            left = h
    score = H[b]
    state = 0           # 0: H, 1: E (horizontal gap, D), 2: F (vertical gap, I)
    if end_in_gap and F[b] + go - ge > score:
        score = F[b] + go - ge
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
        elif state == 0:
            src = bits[i, j] & np.uint8(3)
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
            if (bits[i, j] & np.uint8(4)) == 0:
                state = 0
            j -= 1
        else:
            ops[k] = 1
            k += 1
            if (bits[i, j] & np.uint8(8)) == 0:
                state = 0
            i -= 1
    return score, ops[:k][::-1].copy()


@nb.njit(nogil=True, cache=True)
def _path_score(ops, q, qlo, t, tlo, matrix, gap_open, gap_extend):
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


# --------------------------------------------------------------------------- path


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="warpalign-mm")
        return _pool


class _Path:
    """Myers–Miller over one segment pair; collects ops (arrays) left to right."""

    def __init__(self, q, t, matrix, gap_open, gap_extend, max_full_cells, engine=None):
        self.q, self.t, self.matrix = q, t, matrix
        self.engine = engine          # GPU passes (cuda/long.py LongPair) for large splits
        self.go, self.ge = int(gap_open), int(gap_extend)
        self.max_full_cells = max_full_cells
        self.pieces: list[np.ndarray] = []

    def _gap_only(self, op: int, n: int, open_cost: int) -> int:
        if n:
            self.pieces.append(np.full(n, op, np.uint8))
        return 0 if n == 0 else -(open_cost + (n - 1) * self.ge)

    def solve(self, qlo: int, qhi: int, tlo: int, thi: int, start_in_gap: bool, end_in_gap: bool) -> int:
        """Append an optimal path of q[qlo:qhi] vs t[tlo:thi]; return its score."""
        a, b = qhi - qlo, thi - tlo
        go, ge = self.go, self.ge
        if b == 0:  # one vertical gap, joined to an open one on either side if any
            return self._gap_only(OP_I, a, ge if (start_in_gap or end_in_gap) else go)
        if a == 0:
            return self._gap_only(OP_D, b, go)
        if a == 1 or (a + 1) * (b + 1) <= self.max_full_cells:
            score, ops = _full_traceback(self.q, qlo, a, self.t, tlo, b, self.matrix, go, ge,
                                         start_in_gap, end_in_gap)
            self.pieces.append(ops)
            return int(score)
        mid = a // 2
        hf, ff = np.empty(b + 1, np.int64), np.empty(b + 1, np.int64)
        hr, fr = np.empty(b + 1, np.int64), np.empty(b + 1, np.int64)
        fwd = (self.q, qlo, 1, mid, self.t, tlo, 1, b, self.matrix, go, ge,
               ge if start_in_gap else go, hf, ff)
        rev = (self.q, qhi - 1, -1, a - mid, self.t, thi - 1, -1, b, self.matrix, go, ge,
               ge if end_in_gap else go, hr, fr)
        if self.engine is not None and a * b >= self.engine.min_cells:
            hf, ff, hr, fr = self.engine.halves(qlo, qhi, mid, tlo, thi, start_in_gap, end_in_gap)
        elif a * b >= PARALLEL_CELLS:
            job = _executor().submit(_last_row, *fwd)
            _last_row(*rev)
            job.result()
        else:
            _last_row(*fwd)
            _last_row(*rev)
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
        return np.concatenate(self.pieces) if self.pieces else np.empty(0, np.uint8)


def global_path(q: np.ndarray, t: np.ndarray, scoring: Scoring, qlo: int, qhi: int, tlo: int, thi: int,
                *, max_full_cells: int | None = None, engine=None) -> tuple[int, np.ndarray]:
    """Optimal global affine-gap path of q[qlo:qhi] vs t[tlo:thi]: (score, ops).

    ops is a uint8 array of OP_M / OP_I / OP_D in alignment order. Linear space when the
    segment has more than ``max_full_cells`` cells (default :data:`FULL_MATRIX_CELLS`).
    ``engine`` (optional, e.g. a GPU ``LongPair``) runs the half passes of large splits.
    """
    limit = FULL_MATRIX_CELLS if max_full_cells is None else int(max_full_cells)
    if engine is not None and hasattr(engine, "path"):     # e.g. the GPU's level-parallel MM
        score, ops = engine.path(qlo, qhi, tlo, thi, limit)
    else:
        path = _Path(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, limit, engine)
        score = path.solve(qlo, qhi, tlo, thi, False, False)
        ops = path.ops()
    check, qend, tend = _path_score(ops, q, qlo, t, tlo, scoring.matrix, scoring.gap_open,
                                    scoring.gap_extend)
    if (int(check), int(qend), int(tend)) != (score, qhi, thi):
        raise TracebackError(f"internal error: the traced path scores {int(check)} and ends at "
                             f"({int(qend)}, {int(tend)}); the DP says {score} at ({qhi}, {thi})")
    return score, ops


# --------------------------------------------------------------------------- public


def cigar_string(ops: np.ndarray) -> str:
    """Run-length CIGAR (M/I/D) of an ops array."""
    if ops.size == 0:
        return ""
    starts = np.flatnonzero(np.concatenate(([True], ops[1:] != ops[:-1])))
    lengths = np.diff(np.append(starts, ops.size))
    return "".join(f"{n}{_OP_CHARS[op]}" for n, op in zip(lengths.tolist(), ops[starts].tolist()))


def _aligned(codes: np.ndarray, ops: np.ndarray, gap_op: int, scoring: Scoring) -> str:
    chars = np.frombuffer(scoring.alphabet.decode(codes).encode("latin-1"), dtype=np.uint8)
    out = np.full(ops.size, ord("-"), dtype=np.uint8)
    out[ops != gap_op] = chars
    return out.tobytes().decode("latin-1")


def align_codes(q: np.ndarray, t: np.ndarray, scoring: Scoring, algorithm: str = "local", *,
                max_full_cells: int | None = None, engine=None) -> Alignment:
    """Best alignment of encoded sequences q (query) and t (target), with its path.

    Args:
        q: query codes (uint8, in ``scoring.alphabet``).
        t: target codes.
        scoring: substitution matrix and gap penalties.
        algorithm: "local", "global" or "semiglobal" (target end gaps free).
        max_full_cells: largest (sub)problem traced back from a full direction matrix;
            larger ones go through Myers–Miller (default :data:`FULL_MATRIX_CELLS`).
        engine: optional object running the exact passes elsewhere (the GPU's
            ``_backends.cuda.long.LongPair``): with a true ``staged`` attribute its
            ``full_alignment(code, max_full_cells)`` gives everything (score, both
            coordinates, ops); otherwise ``score_end(code)``,
            ``anchored_start(qe, te, score, full_query)``, and either ``path(...)`` (the
            whole Myers–Miller path, as :func:`global_path`) or ``halves(...)`` for the
            splits of at least ``engine.min_cells`` cells.

    Returns:
        An :class:`~warpalign.results.Alignment` with score, 0-based half-open
        coordinates, CIGAR and aligned strings. A local alignment of score 0 is empty.

    Example:
        >>> from warpalign.scoring import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> a = align_codes(s.encode("TACTG"), s.encode("GAACTGA"), s)
        >>> a.score, a.query_start, a.query_end, a.target_start, a.target_end, a.cigar
        (8, 1, 5, 2, 6, '4M')
    """
    if algorithm not in ALGORITHM_CODES:
        raise ValueError(f"invalid algorithm: {algorithm!r}; expected one of {sorted(ALGORITHM_CODES)}")
    q = np.ascontiguousarray(q, dtype=np.uint8)
    t = np.ascontiguousarray(t, dtype=np.uint8)
    size = scoring.matrix.shape[0]
    for name, codes in (("query", q), ("target", t)):
        if codes.size and int(codes.max()) >= size:
            raise ValueError(f"{name} code {int(codes.max())} is outside the {scoring.alphabet.name} "
                             f"alphabet ({size} codes)")
    matrix, go, ge = scoring.matrix, scoring.gap_open, scoring.gap_extend
    m, n = q.size, t.size
    code = ALGORITHM_CODES[algorithm]
    if engine is not None and getattr(engine, "staged", False) and m and n:
        # the GPU's staged traceback (cuda/long.py Staged): score pass with special rows,
        # then strips between them; its path is checked against the score inside
        limit = FULL_MATRIX_CELLS if max_full_cells is None else int(max_full_cells)
        s, qs, qe, ts, te, ops = engine.full_alignment(code, limit)
        if code == LOCAL and s == 0:
            return Alignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0,
                             cigar="", query_aligned="", target_aligned="", algorithm=algorithm)
        return Alignment(score=s, query_start=qs, query_end=qe, target_start=ts, target_end=te,
                         cigar=cigar_string(ops),
                         query_aligned=_aligned(q[qs:qe], ops, OP_D, scoring),
                         target_aligned=_aligned(t[ts:te], ops, OP_I, scoring),
                         algorithm=algorithm)
    if code == GLOBAL:
        qs, qe, ts, te = 0, m, 0, n
        expected = None
    else:
        if engine is not None:
            s, qe, te = engine.score_end(code)
        else:
            s, qe, te = (int(v) for v in score_end(q, t, matrix, go, ge, code))
        if code == LOCAL and s == 0:
            return Alignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0,
                             cigar="", query_aligned="", target_aligned="", algorithm=algorithm)
        if engine is not None:
            di, dj = engine.anchored_start(qe, te, s, code == SEMIGLOBAL)
        else:
            di, dj = (int(v) for v in _anchored_start(q, qe, t, te, matrix, go, ge, s, code == SEMIGLOBAL))
        if di < 0:
            raise TracebackError(f"internal error: the reverse pass from ({qe}, {te}) does not "
                                 f"reach score {s}")
        qs, ts = qe - di, te - dj
        expected = s
    score, ops = global_path(q, t, scoring, qs, qe, ts, te, max_full_cells=max_full_cells,
                             engine=engine)
    if expected is not None and score != expected:
        raise TracebackError(f"internal error: the {algorithm} score is {expected} but the global "
                             f"alignment of q[{qs}:{qe}] and t[{ts}:{te}] scores {score}")
    return Alignment(score=score, query_start=qs, query_end=qe, target_start=ts, target_end=te,
                     cigar=cigar_string(ops),
                     query_aligned=_aligned(q[qs:qe], ops, OP_D, scoring),
                     target_aligned=_aligned(t[ts:te], ops, OP_I, scoring),
                     algorithm=algorithm)
