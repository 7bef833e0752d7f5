"""Traceback: the alignment path of one pair (``mode="full"``), in linear space.

The steps below run as CPU kernels (``_backends/cpu/traceback.py``) or, given a
:class:`~warpalign._backends.base.TracebackEngine` (the GPU's long-pair engine), there.

Three steps, each exact and deterministic, so every backend reports the same
coordinates:

1. **End.** :func:`~warpalign._backends.cpu.pairwise.score_end` gives the score and
   the end cell under DESIGN.md's tie rule (local, semiglobal; global ends at (m, n));
   long pairs run it on the striped SIMD kernels (:mod:`~warpalign._backends.cpu.striped`).
2. **Start.** An *anchored reverse pass* runs the same Gotoh recurrence backwards from
   the end cell over the reversed prefixes ``q[:qe][::-1]``, ``t[:te][::-1]``: the
   alignment must begin at the reversed origin (the end cell) and may stop anywhere
   (local) or anywhere on the last query row (semiglobal: the whole query is used).
   Among the cells whose value equals the score it takes the smallest reversed target
   extent, then the smallest reversed query extent: the shortest such alignment.
   The pass goes column by column and stops at the first column that reaches the score;
   knowing the score, it computes only the cells that can still lead to it (pruned by
   the most the remaining query rows can add; :func:`~warpalign._backends.cpu.traceback.anchored_start`).
3. **Path.** A global affine-gap (Gotoh, three states) alignment of the segments
   ``q[qs:qe]`` and ``t[ts:te]``, whose optimum equals the score found in step 1
   (checked; a mismatch is an internal error). Small problems store one direction
   byte per cell and trace back through the H, E and F states, computing only the cells
   an alignment of that score can pass (a band of diagonals, pruned row by row;
   :func:`~warpalign._backends.cpu.traceback.full_traceback`); large ones use the Myers–Miller (1988) divide and conquer
   in linear space, splitting on the middle query row (a vertical gap crossing it is
   charged one open, not two) and passing the "starts/ends inside a vertical gap"
   boundary conditions down the recursion.

**The path rule** (one rule, every backend). Among the optimal paths from the start to the
end cell, the one reported is defined on the segment ``q[qs:qe]`` x ``t[ts:te]``:

* a segment of at most ``max_full_cells`` cells (:data:`FULL_MATRIX_CELLS`), or of one
  query row, is walked back from its end cell taking, at each cell, a substitution (M) if
  it is optimal there, else a gap in the query (D, horizontal) if that is, else a gap in
  the target (I, vertical); inside a gap the walk leaves it as soon as opening it at that
  cell is as good as extending it (the gap is as short as ties allow, seen from the end);
* a larger segment is split at its middle query row: the path crosses it at the first
  column where forward + reverse scores are best, through that cell rather than inside a
  vertical gap when both are equally good; each half follows the rule again.

The CPU kernels (``cpu/traceback.py``) and the GPU's (``cuda/traceback.cu`` for many hits
at once, ``cuda/long.py`` for one long pair) make exactly these comparisons, so every
backend reports the same CIGAR, not only the same score (tests/test_cuda_traceback.py).

:func:`align_codes` runs the three steps; :func:`align_from_end` runs steps 2 and 3 for a
caller that already has step 1's answer (``locate``'s exact scan of a long reference);
:func:`align_many` and :func:`align_pairs` run them for many jobs at once through the
``traceback`` job's engine (on the GPU: a few launches for every reported hit).
The pruning never changes a result: every cell of an optimal path is computed exactly,
every other value is that of some path (never above the true one), so each comparison
that picks the start and the path comes out the same.

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

import functools
import time
from typing import TYPE_CHECKING

import numpy as np

from ._backends import resolve_threads
from .choices import ALGORITHM_CODES, GLOBAL, LOCAL, SEMIGLOBAL
from ._backends.render import render_paths, running_sums
from .errors import TracebackError
from .results import Alignment, AlignmentTable
from .scoring import Scoring
from .spans import span_from
from .traced import check_paths, paths_table, traced_table, unreached

if TYPE_CHECKING:
    from ._backends.base import ManyTraceback, TracebackEngine

#: Largest DP matrix, in cells ``(len_a + 1) * (len_b + 1)``, traced back from a stored
#: direction matrix (one byte per cell); larger (sub)problems are split by Myers–Miller.
FULL_MATRIX_CELLS = 1 << 24

_OP_CHARS = "MID"


# --------------------------------------------------------------------------- path


def global_path(q: np.ndarray, t: np.ndarray, scoring: Scoring, qlo: int, qhi: int, tlo: int, thi: int,
                *, max_full_cells: int | None = None, engine: TracebackEngine | None = None,
                score: int | None = None, threads: int | None = None) -> tuple[int, np.ndarray]:
    """Optimal global affine-gap path of q[qlo:qhi] vs t[tlo:thi]: (score, ops).

    ops is a uint8 array of ``cpu.traceback``'s OP_M / OP_I / OP_D in alignment order.
    Linear space when the segment has more than ``max_full_cells`` cells (default
    :data:`FULL_MATRIX_CELLS`). ``engine`` (optional, a
    :class:`~warpalign._backends.base.TracebackEngine` such as the GPU's ``LongPair``)
    runs the whole Myers–Miller recursion (its ``path``). ``score``: the optimum, when
    known (from a score pass): a segment traced back from a full matrix then computes
    only the cells an alignment of that score can pass (``cpu.traceback.full_traceback``).
    Same path; with a wrong ``score`` the returned score differs from it (callers compare).
    ``threads``: 1 runs the half passes of a large split one after the other (default
    :func:`~warpalign._backends.resolve_threads`).
    """
    from ._backends.cpu.traceback import MyersMiller, path_score
    limit = FULL_MATRIX_CELLS if max_full_cells is None else int(max_full_cells)
    if engine is not None:
        best, ops = engine.path(qlo, qhi, tlo, thi, limit)
    else:
        path = MyersMiller(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, limit,
                           resolve_threads(threads))
        best = path.solve(qlo, qhi, tlo, thi, False, False, score)
        ops = path.ops()
    check, qend, tend = path_score(ops, q, qlo, t, tlo, scoring.matrix, scoring.gap_open,
                                   scoring.gap_extend)
    if (int(check), int(qend), int(tend)) != (best, qhi, thi):
        raise TracebackError(f"internal error: the traced path scores {int(check)} and ends at "
                             f"({int(qend)}, {int(tend)}); the DP says {best} at ({qhi}, {thi})")
    return best, ops


# --------------------------------------------------------------------------- public




def _cigar(lengths: np.ndarray, kinds: np.ndarray) -> str:
    return "".join(f"{n}{_OP_CHARS[op]}" for n, op in zip(lengths.tolist(), kinds.tolist()))


def cigar_string(ops: np.ndarray) -> str:
    """Run-length CIGAR (M/I/D) of an ops array."""
    ops = np.ascontiguousarray(ops, dtype=np.uint8)
    if ops.size == 0:
        return ""
    starts = np.flatnonzero(np.concatenate(([True], ops[1:] != ops[:-1])))
    return _cigar(np.diff(np.append(starts, ops.size)), ops[starts])


@functools.cache
def _symbol_bytes(name: str, symbols: str) -> np.ndarray:
    """The byte of each code's symbol (every byte for the "bytes" alphabet)."""
    if name == "bytes":
        return np.arange(256, dtype=np.uint8)
    lut = np.zeros(256, np.uint8)   # codes past the alphabet never reach here (_codes)
    lut[:len(symbols)] = np.frombuffer(symbols.encode("ascii"), dtype=np.uint8)
    return lut


def _codes_many(pairs, scoring: Scoring) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_codes` of many (q, t) pairs, the alphabet checked in one pass over all."""
    out = [(np.ascontiguousarray(q, dtype=np.uint8), np.ascontiguousarray(t, dtype=np.uint8))
           for q, t in pairs]
    size = scoring.matrix.shape[0]
    for side, name in ((0, "query"), (1, "target")):
        parts = [p[side] for p in out if p[side].size]
        if parts and int(np.concatenate(parts).max()) >= size:
            k = next(k for k, p in enumerate(out) if p[side].size and int(p[side].max()) >= size)
            _codes(*out[k], scoring)           # raises, naming the code
    return out


def _codes(q: np.ndarray, t: np.ndarray, scoring: Scoring) -> tuple[np.ndarray, np.ndarray]:
    q = np.ascontiguousarray(q, dtype=np.uint8)
    t = np.ascontiguousarray(t, dtype=np.uint8)
    size = scoring.matrix.shape[0]
    for name, codes in (("query", q), ("target", t)):
        if codes.size and int(codes.max()) >= size:
            raise ValueError(f"{name} code {int(codes.max())} is outside the {scoring.alphabet.name} "
                             f"alphabet ({size} codes)")
    return q, t


def _algorithm_code(algorithm: str) -> int:
    if algorithm not in ALGORITHM_CODES:
        raise ValueError(f"invalid algorithm: {algorithm!r}; expected one of {sorted(ALGORITHM_CODES)}")
    return ALGORITHM_CODES[algorithm]


def _alignment(q, t, scoring, algorithm, score, qs, qe, ts, te, ops) -> Alignment:
    if ALGORITHM_CODES[algorithm] == LOCAL and score == 0:
        return Alignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0,
                         cigar="", query_aligned="", target_aligned="", algorithm=algorithm)
    return _finish([(q, qs, qe, t, ts, te, score)], [(score, ops)], scoring, algorithm,
                   numba=False)[0]


def _from_end(q, t, scoring, algorithm, score, qe, te, max_full_cells, engine, whole,
              threads=None) -> Alignment:
    """Steps 2 and 3 (module docstring) for validated codes and a score pass's result."""
    from ._backends.cpu.traceback import anchored_start
    code = ALGORITHM_CODES[algorithm]
    if code == LOCAL and score == 0:
        return _alignment(q, t, scoring, algorithm, 0, 0, 0, 0, 0, None)
    if code == GLOBAL:
        di, dj = qe, te
    elif engine is not None and not whole:
        di, dj = engine.anchored_start(qe, te, score, code == SEMIGLOBAL)
    else:
        di, dj = (int(v) for v in anchored_start(q, qe, t, te, scoring.matrix, scoring.gap_open,
                                                 scoring.gap_extend, score, code == SEMIGLOBAL,
                                                 whole))
    if di < 0:
        raise TracebackError(f"internal error: the reverse pass from ({qe}, {te}) does not end at "
                             f"score {score}: no alignment ending there reaches it, or one beats it")
    qs, ts = qe - di, te - dj
    path_score, ops = global_path(q, t, scoring, qs, qe, ts, te, max_full_cells=max_full_cells,
                                  engine=engine, score=score, threads=threads)
    if path_score != score:
        raise TracebackError(f"internal error: the {algorithm} score is {score} but the global "
                             f"alignment of q[{qs}:{qe}] and t[{ts}:{te}] scores {path_score}")
    return _alignment(q, t, scoring, algorithm, score, qs, qe, ts, te, ops)


def align_codes(q: np.ndarray, t: np.ndarray, scoring: Scoring, algorithm: str = "local", *,
                max_full_cells: int | None = None, engine: TracebackEngine | None = None,
                threads: int | None = None) -> Alignment:
    """Best alignment of encoded sequences q (query) and t (target), with its path.

    Args:
        q: query codes (uint8, in ``scoring.alphabet``).
        t: target codes.
        scoring: substitution matrix and gap penalties.
        algorithm: "local", "global" or "semiglobal" (target end gaps free).
        max_full_cells: largest (sub)problem traced back from a full direction matrix;
            larger ones go through Myers–Miller (default :data:`FULL_MATRIX_CELLS`).
        engine: optional :class:`~warpalign._backends.base.TracebackEngine` running the
            exact passes elsewhere (the GPU's ``_backends.cuda.long.LongPair``): when
            ``engine.staged``, its ``full_alignment(code, max_full_cells)`` gives
            everything (score, both coordinates, ops); otherwise ``score_end(code)``,
            ``anchored_start(qe, te, score, full_query)`` and ``path(...)`` (the whole
            Myers–Miller path, as :func:`global_path`).
        threads: CPU threads (at most 2 are used: the half passes of a large split);
            default :func:`~warpalign._backends.resolve_threads`.

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
    from ._backends.cpu.striped import score_end_long
    code = _algorithm_code(algorithm)
    q, t = _codes(q, t, scoring)
    m, n = q.size, t.size
    if engine is not None and engine.staged and m and n:
        # the GPU's staged traceback (cuda/long.py Staged): score pass with special rows,
        # then strips between them; its path is checked against the score inside
        limit = FULL_MATRIX_CELLS if max_full_cells is None else int(max_full_cells)
        s, qs, qe, ts, te, ops = engine.full_alignment(code, limit)
        return _alignment(q, t, scoring, algorithm, s, qs, qe, ts, te, ops)
    if code == GLOBAL:
        score, ops = global_path(q, t, scoring, 0, m, 0, n, max_full_cells=max_full_cells,
                                 engine=engine, threads=threads)
        return _alignment(q, t, scoring, algorithm, score, 0, m, 0, n, ops)
    if engine is not None:
        s, qe, te = engine.score_end(code)
    else:
        s, qe, te = score_end_long(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                                   code)
    return _from_end(q, t, scoring, algorithm, s, qe, te, max_full_cells, engine, False,
                     threads)


def align_from_end(q: np.ndarray, t: np.ndarray, scoring: Scoring, score: int, query_end: int,
                   target_end: int, algorithm: str = "local", *, max_full_cells: int | None = None,
                   engine: TracebackEngine | None = None, check_end: bool = False,
                   threads: int | None = None) -> Alignment:
    """The alignment :func:`align_codes` returns, given the score and end cell it would find.

    For callers that already ran the score pass (step 1 of the module docstring), e.g. an
    exact scan of a long reference (``locate``): only the reverse pass to the start and
    the path remain. ``(score, query_end, target_end)`` must be what
    :func:`~warpalign._backends.cpu.pairwise.score_end` gives for q, t and ``algorithm``
    (DESIGN.md's tie rule); the result is then exactly :func:`align_codes`'s.

    Checked (:class:`TracebackError` otherwise): some alignment ending at the end cell
    scores ``score``, none found on the way to its start scores more, and the path scores
    ``score`` and ends at the end cell. With ``check_end`` the reverse pass runs on to
    t's start (on the CPU, a band of ``query_end`` rows at most), which proves that no
    alignment ending at the end cell scores more than ``score``. Never checked: that
    the tie rule picks this end cell among equal-scoring ones (that takes the score pass).

    Args:
        q: query codes (uint8, in ``scoring.alphabet``).
        t: target codes.
        scoring: substitution matrix and gap penalties.
        score: the best score.
        query_end: its end in q (``len(q)`` for "semiglobal" and "global").
        target_end: its end in t (``len(t)`` for "global").
        algorithm: "local", "global" or "semiglobal".
        max_full_cells: as for :func:`align_codes`.
        engine: as for :func:`align_codes` (its ``anchored_start`` and ``path``).
        check_end: run the reverse pass over all of t[:target_end] (see above).
        threads: as for :func:`align_codes`.

    Returns:
        An :class:`~warpalign.results.Alignment`; a local alignment of score 0 is empty.

    Example:
        >>> from warpalign.scoring import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> a = align_from_end(s.encode("TACTG"), s.encode("GAACTGA"), s, 8, 5, 6)
        >>> a.query_start, a.target_start, a.cigar
        (1, 2, '4M')
    """
    code = _algorithm_code(algorithm)
    q, t = _codes(q, t, scoring)
    score, qe, te = _check_end(q, t, code, algorithm, score, query_end, target_end)
    return _from_end(q, t, scoring, algorithm, score, qe, te, max_full_cells, engine, check_end,
                     threads)


def _check_end(q, t, code, algorithm, score, query_end, target_end) -> tuple[int, int, int]:
    score, qe, te = int(score), int(query_end), int(target_end)
    m, n = q.size, t.size
    if not (0 <= qe <= m and 0 <= te <= n):
        raise ValueError(f"end cell ({qe}, {te}) is outside the {m} x {n} matrix")
    if (code == GLOBAL and (qe, te) != (m, n)) or (code == SEMIGLOBAL and qe != m):
        raise ValueError(f"a {algorithm} alignment of a {m} x {n} matrix cannot end at ({qe}, {te})")
    if code == LOCAL and score < 0:
        raise ValueError(f"a local score is never negative, got {score}")
    return score, qe, te


def align_many(jobs, scoring: Scoring, algorithm: str = "local", *,
               engine: ManyTraceback | None = None, max_full_cells: int | None = None,
               threads: int | None = None) -> list[Alignment]:
    """The alignments of many jobs at once: for each ``(q, t, score, query_end,
    target_end)``, exactly what :func:`align_from_end` returns (the same start, the same
    path; see "The path rule" in the module docstring).

    ``engine``: the ``traceback`` job's engine (a
    :class:`~warpalign._backends.base.ManyTraceback` from the registry: the GPU's runs
    every start and path of the batch in a few launches); default the CPU's, on
    ``threads`` threads. Every path is re-scored here and must give its job's score and
    end cell (:class:`TracebackError` otherwise).

    Example:
        >>> from warpalign.scoring import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> [a.cigar for a in align_many([(s.encode("TACTG"), s.encode("GAACTGA"), 8, 5, 6)], s)]
        ['4M']
    """
    code = _algorithm_code(algorithm)
    jobs = list(jobs)
    codes = _codes_many([(job[0], job[1]) for job in jobs], scoring)
    checked = [(q, t, *_check_end(q, t, code, algorithm, score, qe, te))
               for (q, t), (_, _, score, qe, te) in zip(codes, jobs)]
    return _align_checked(checked, scoring, algorithm, engine, max_full_cells, threads)


def _finish(segments, paths, scoring, algorithm, numba: bool = True) -> list[Alignment]:
    """The Alignments of traced paths, each re-scored (one pass over all of them): a path
    must score its job's score and end at its end cell (:class:`TracebackError`
    otherwise). ``numba``: render with ``cpu/render.py``'s ``render_many`` (fastest on the
    CPU), else with the array renderer (``_backends/render.py``: no Numba compile on
    the GPU engines' path; the same output)."""
    if not segments:
        return []

    opoff = running_sums([len(ops) for _, ops in paths])
    qoff = running_sums([seg[2] - seg[1] for seg in segments])
    toff = running_sums([seg[5] - seg[4] for seg in segments])
    cat = (lambda parts: np.concatenate(parts) if parts else np.zeros(0, np.uint8))
    ops = cat([np.asarray(o, np.uint8) for _, o in paths])
    qcat = cat([seg[0][seg[1]:seg[2]] for seg in segments])
    tcat = cat([seg[3][seg[4]:seg[5]] for seg in segments])
    want = np.array([seg[6] for seg in segments], np.int64)
    best = np.array([b for b, _ in paths], np.int64)
    got = _render(numba, ops, opoff, qcat, qoff[:-1], tcat, toff[:-1], scoring)
    check_paths(got, want, best, np.diff(qoff), np.diff(toff), algorithm,
                lambda k: (segments[k][1], segments[k][2], segments[k][4], segments[k][5]))
    table = paths_table(got, opoff, want, [seg[1] for seg in segments],
                        [seg[2] for seg in segments], [seg[4] for seg in segments],
                        [seg[5] for seg in segments], algorithm)
    return list(table)


def printed_bytes(scoring) -> np.ndarray:
    """The printed byte of each code of ``scoring``'s alphabet (256 entries)."""
    return _symbol_bytes(scoring.alphabet.name, scoring.alphabet.symbols)


def _render(numba: bool, ops, opoff, qcat, qpos, tcat, tpos, scoring):
    """render_paths' answer (``_backends/render.py``; host arrays), by Numba's
    render_many (``cpu/render.py``) when asked."""
    args = (ops, opoff, qcat, qpos, tcat, tpos, scoring.matrix, scoring.gap_open,
            scoring.gap_extend, printed_bytes(scoring))
    if not numba:
        return render_paths(*args)
    from ._backends.cpu.render import render_rows
    return render_rows(*args)


def _align_checked(checked, scoring, algorithm, engine, max_full_cells, threads) -> list[Alignment]:
    """:func:`align_many` of jobs whose codes and end cells were checked."""
    code = ALGORITHM_CODES[algorithm]
    if engine is None:
        from ._backends.cpu.traceback import CpuTraceback
        engine = CpuTraceback()
    threads = resolve_threads(threads)
    limit = FULL_MATRIX_CELLS if max_full_cells is None else int(max_full_cells)
    out: list = [None] * len(checked)
    todo = []
    for k, (q, t, score, qe, te) in enumerate(checked):
        if code == LOCAL and score == 0:
            out[k] = _alignment(q, t, scoring, algorithm, 0, 0, 0, 0, 0, None)
        else:
            todo.append(k)
    if code == GLOBAL:
        starts = np.array([checked[k][3:5] for k in todo], np.int64).reshape(len(todo), 2)
    else:
        starts = engine.starts([(checked[k][0], checked[k][3], checked[k][1], checked[k][4],
                                 checked[k][2]) for k in todo], scoring, code == SEMIGLOBAL,
                               threads=threads)
    segments = []
    for k, (di, dj) in zip(todo, starts.tolist()):
        q, t, score, qe, te = checked[k]
        if di < 0:
            raise TracebackError(f"internal error: the reverse pass from ({qe}, {te}) does not "
                                 f"end at score {score}: no alignment ending there reaches it, "
                                 "or one beats it")
        segments.append((q, qe - di, qe, t, te - dj, te, score))
    paths = engine.paths(segments, scoring, limit, threads=threads)
    for k, alignment in zip(todo, _finish(segments, paths, scoring, algorithm,
                                          numba=engine.name == "cpu")):
        out[k] = alignment
    return out


def align_pairs(pairs, scoring: Scoring, algorithm: str = "local", *,
                engine: ManyTraceback | None = None, max_full_cells: int | None = None,
                threads: int | None = None) -> list[Alignment]:
    """:func:`align_codes` of many ``(q, t)`` pairs at once: the engine's score and end
    passes (``ends``), then :func:`align_many`. Same alignments as one pair at a time.

    Example:
        >>> from warpalign.scoring import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> [a.cigar for a in align_pairs([(s.encode("TACTG"), s.encode("GAACTGA"))], s)]
        ['4M']
    """
    code = _algorithm_code(algorithm)
    if engine is None:
        from ._backends.cpu.traceback import CpuTraceback
        engine = CpuTraceback()
    threads = resolve_threads(threads)
    checked = _codes_many(pairs, scoring)
    ends = engine.ends(checked, scoring, code, threads=threads)
    return _align_checked([(q, t, *end) for (q, t), end in zip(checked, ends.tolist())],
                          scoring, algorithm, engine, max_full_cells, threads)



def align_pairs_table(qcodes, qstarts, qlens, tcodes, tstarts, tlens, scoring: Scoring,
                      algorithm: str = "local", *, engine: ManyTraceback | None = None,
                      max_full_cells: int | None = None, threads: int | None = None,
                      timings: dict | None = None, ends=None,
                      largest: int | None = None) -> AlignmentTable:
    """:func:`align_pairs` of pairs given as arrays, as an :class:`AlignmentTable`.

    Pair k is ``qcodes[qstarts[k]:qstarts[k] + qlens[k]]`` against
    ``tcodes[tstarts[k]:tstarts[k] + tlens[k]]`` (codes of ``scoring.alphabet``; starts
    and lengths: host integer arrays). With the GPU engine the codes may be device
    arrays: they stay there, every pass reads them in place, and the paths are rendered
    on the device and come back in two copies (the engine's ``render_flat``). Same alignments as
    :func:`align_pairs`, without work per pair in Python on the GPU's path. ``timings``:
    a dict that receives the seconds of each step ("tb_ends", "tb_starts", "tb_paths",
    "tb_render": rendering, checks and the copy back; "tb_align" for both starts and paths
    where an engine runs them in one pass, the GPU's ``align_local_flat`` when every pair
    fits it). ``ends``: each pair's (score, query end, target end) when the caller has them
    (``score_pairs``' pair kernel on the GPU), an (n, 3) integer array: then no end pass
    runs (no "tb_ends"). They are checked as far as the later passes can: each end cell
    must end an alignment of exactly that score (else
    :class:`~warpalign.errors.TracebackError`) and lie inside its pair (global: at (m, n);
    semiglobal: on row m; else ``ValueError``); that the score is the pair's best and the
    cell the tie rule's is the caller's word. ``largest``: the largest code of both sides
    when the caller knows it (``score_pairs``' encode reports it): below the alphabet's
    size, the codes are not read again to check them (on the GPU, two reductions and syncs).

    Example:
        >>> from warpalign.scoring import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> q, t = s.encode("TACTGACGT"), s.encode("GAACTGAACGT")
        >>> table = align_pairs_table(q, [0, 5], [5, 4], t, [0, 7], [7, 4], s)
        >>> table.cigars(), table.scores.tolist()
        (['4M', '4M'], [8, 8])
    """
    code = _algorithm_code(algorithm)
    if engine is None:
        from ._backends.cpu.traceback import CpuTraceback
        engine = CpuTraceback()
    threads = resolve_threads(threads)
    limit = FULL_MATRIX_CELLS if max_full_cells is None else int(max_full_cells)
    qpos, qlen, tpos, tlen = (np.asarray(v, np.int64).ravel()
                              for v in (qstarts, qlens, tstarts, tlens))
    if not qpos.size == qlen.size == tpos.size == tlen.size:
        raise ValueError(f"starts and lengths must hold one entry per pair: got {qpos.size}, "
                         f"{qlen.size}, {tpos.size} and {tlen.size}")
    n = qpos.size
    for name, pos, length, codes in (("query", qpos, qlen, qcodes), ("target", tpos, tlen, tcodes)):
        if n and (int(pos.min()) < 0 or int(length.min()) < 0
                  or int((pos + length).max()) > codes.shape[0]):
            raise ValueError(f"{name} starts and lengths reach outside the {codes.shape[0]} codes")
    clock = _Clock(timings)
    if largest is None or not 0 <= int(largest) < scoring.matrix.shape[0]:
        _check_codes(qcodes, qpos, qlen, tcodes, tpos, tlen, scoring)
    if ends is None:
        ends = engine.ends_flat(qcodes, qpos, qlen, tcodes, tpos, tlen, scoring, code,
                                threads=threads)
        clock("tb_ends")
    else:
        ends = _given_ends(ends, qlen, tlen, algorithm)
    if code == LOCAL and hasattr(engine, "align_local_flat"):
        done = engine.align_local_flat(qcodes, qpos, tcodes, tpos, ends, scoring, limit)
        if done is not None:        # starts and paths in one pass (the GPU's tb_align)
            return _one_pass_table(engine, done, ends, qcodes, tcodes, scoring, clock)
    keep = np.flatnonzero(ends[:, 0] != 0) if code == LOCAL else np.arange(n)
    score, qe, te = ends[keep].T
    if code == GLOBAL:
        di, dj = qe, te
    else:
        # local: the reverse pass from (qe, te) on the last `span` target symbols only (an
        # alignment ending there that scores S covers at most span_from(Sq, qe, S) of them,
        # locate_core's "The alignment"; Sq = qe x the best any code has, no pass over the
        # codes); the start comes back as distances from the end, unchanged by the cut
        lo = np.zeros_like(te) if code != LOCAL else _segment_starts(qe, te, score, scoring)
        starts = engine.starts_flat(qcodes, qpos[keep], qe, tcodes, tpos[keep] + lo, te - lo,
                                    score, scoring, code == SEMIGLOBAL, threads=threads)
        di, dj = starts[:, 0], starts[:, 1]
    unreached(di, keep, qe, te, score)
    qs, ts = qe - di, te - dj
    clock("tb_starts")
    best, ops, opoff = engine.paths_flat(qcodes, qpos[keep] + qs, di, tcodes, tpos[keep] + ts,
                                         dj, score, scoring, limit, threads=threads)
    clock("tb_paths")
    got = engine.render_flat(ops, opoff, qcodes, qpos[keep] + qs, tcodes, tpos[keep] + ts,
                             scoring, printed_bytes(scoring))
    check_paths(got, score, np.asarray(best, np.int64), di, dj, algorithm,
                lambda k: (int(qs[k]), int(qe[k]), int(ts[k]), int(te[k])))
    table = paths_table(got, opoff, score, qs, qe, ts, te, algorithm, keep=keep, n=n)
    clock("tb_render")
    return table


def _one_pass_table(engine, done, ends, qcodes, tcodes, scoring, clock) -> AlignmentTable:
    """:func:`align_pairs_table`'s local table from ``align_local_flat``'s answer ``done``
    (a score of 0 the empty alignment at (0, 0)), rendered where the engine left it."""
    di, dj, best, ops, opoff, rq, rt, at = done
    if (ends[:, 0] == 0).any():     # the empty alignment's cell, wherever the caller put it
        ends = np.where(ends[:, :1] == 0, 0, ends)
    unreached(di, np.arange(len(ends)), ends[:, 1], ends[:, 2], ends[:, 0])
    clock("tb_align")
    got = engine.render_flat(ops, at, qcodes, rq, tcodes, rt, scoring, printed_bytes(scoring))
    table = traced_table(ends, (di, dj, best, opoff, got))
    clock("tb_render")
    return table


def _given_ends(ends, qlen: np.ndarray, tlen: np.ndarray, algorithm: str) -> np.ndarray:
    """``align_pairs_table``'s ``ends`` as an (n, 3) int64 array, each cell inside its
    pair (global: the corner; semiglobal: the last query row; local, score 0: anywhere)."""
    got = np.asarray(ends)
    if got.shape != (qlen.size, 3) or not np.issubdtype(got.dtype, np.integer):
        raise ValueError(f"ends must be an integer array of shape ({qlen.size}, 3) (score, "
                         f"query end, target end per pair): got {got.dtype} {got.shape}")
    got = got.astype(np.int64, copy=False)      # read only here and by the caller
    code = ALGORITHM_CODES[algorithm]
    score, qe, te = got[:, 0], got[:, 1], got[:, 2]
    bad = (qe < 0) | (qe > qlen) | (te < 0) | (te > tlen)
    if code == LOCAL:
        bad = (score < 0) | ((score > 0) & bad)
    else:
        bad |= qe != qlen
        if code == GLOBAL:
            bad |= te != tlen
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(f"ends of pair {k}: ({int(score[k])}, {int(qe[k])}, {int(te[k])}) is "
                         f"no {algorithm} end of a {int(qlen[k])} x {int(tlen[k])} "
                         "pair")
    return got


def _segment_starts(qe: np.ndarray, te: np.ndarray, score: np.ndarray, scoring: Scoring
                    ) -> np.ndarray:
    """Where the target segment of each local alignment's reverse pass begins (from the
    target's start): ``te - span``, span the :func:`~warpalign.spans.span_from` of the
    alignment's score with ``Sq = qe × the best score any code has``, at least 0; the
    whole prefix where gaps are free to extend (no bound)."""
    span = span_from(qe * int(max(scoring.matrix.max(), 0)), qe, scoring, score)
    return np.zeros_like(te) if span is None else np.maximum(te - span, 0)


class _Clock:
    """Adds the seconds since the last call to ``timings[step]`` (nothing without a dict)."""

    def __init__(self, timings: dict | None):
        self.timings, self.last = timings, time.perf_counter()

    def __call__(self, step: str) -> None:
        if self.timings is not None:
            now = time.perf_counter()
            self.timings[step] = self.timings.get(step, 0.0) + now - self.last
            self.last = now


def _check_codes(qcodes, qpos, qlen, tcodes, tpos, tlen, scoring) -> None:
    """Every code of every pair inside the alphabet (a reduction per side over the codes;
    only when one is outside, a look for the pair to name)."""
    size = scoring.matrix.shape[0]
    for name, codes, pos, length in (("query", qcodes, qpos, qlen),
                                     ("target", tcodes, tpos, tlen)):
        if not codes.shape[0] or int(codes.max()) < size:
            continue
        for k in np.flatnonzero(length).tolist():
            part = codes[int(pos[k]):int(pos[k] + length[k])]
            if int(part.max()) >= size:
                at = int((part >= size).argmax())
                raise ValueError(f"{name} code {int(part[at])} is outside the "
                                 f"{scoring.alphabet.name} alphabet ({size} codes): pair {k}, "
                                 f"position {at}")
