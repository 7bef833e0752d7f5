"""The :class:`~warpalign.results.AlignmentTable` of many traced paths: each path checked
against its job (the score it must reach, the segment it must consume, a start the reverse
pass must have found), then the table's columns from the rendered paths. Shared by every
route of :mod:`warpalign.traceback` that returns a table and by the GPU's chained
``score_pairs(mode="full")`` (:mod:`warpalign.pairs`): a failed check is an internal
error, never a result."""

from __future__ import annotations

import numpy as np

from ._backends.render import running_sums
from .errors import TracebackError
from .results import AlignmentTable, decoded


def check_paths(got, want, best, qlen, tlen, algorithm, where) -> None:
    """Every path scores its job's score and consumes its whole segment (host arrays)."""
    bad = np.flatnonzero((got.scores != want) | (best != want) | (got.used_q != qlen)
                         | (got.used_t != tlen))
    if bad.size:
        k = int(bad[0])
        qs, qe, ts, te, score = (*where(k), int(want[k]))
        raise TracebackError(f"internal error: the {algorithm} score is {score} at ({qe}, {te}) "
                             f"but the path of q[{qs}:{qe}] and t[{ts}:{te}] scores "
                             f"{int(got.scores[k])} (engine: {int(best[k])}) and ends at "
                             f"({qs + int(got.used_q[k])}, {ts + int(got.used_t[k])})")


def paths_table(got, opoff, scores, qs, qe, ts, te, algorithm, keep=None,
                n=None) -> AlignmentTable:
    """The AlignmentTable of rendered paths (``got``: host arrays; ``opoff``: the paths'
    offsets). ``keep``: the rows (of ``n``) the paths belong to; the others are empty (a
    local score of 0)."""
    matches = np.asarray(got.matches, np.int64)      # read only (the table copies it)
    opoff = np.asarray(opoff, np.int64)
    cigoff = np.asarray(got.cigoff, np.int64)
    lengths = np.diff(opoff)
    cols = [np.asarray(v, np.int64) for v in (scores, qs, qe, ts, te)]
    if keep is not None and keep.size < n:      # (every row kept: the columns as they are)
        full = []
        for v in cols:
            out = np.zeros(n, np.int64)
            out[keep] = v
            full.append(out)
        cols = full
        grow = np.zeros(n, np.int64)
        grow[keep] = lengths
        aligned = running_sums(grow)
        grow[keep] = np.diff(cigoff)
        cig = running_sums(grow)
        m = np.zeros(n, np.int64)
        m[keep] = matches
        matches, lengths, opoff, cigoff = m, np.diff(aligned), aligned, cig
    with np.errstate(invalid="ignore", divide="ignore"):
        identity = np.where(lengths > 0, matches / np.maximum(lengths, 1), 0.0)
    return AlignmentTable(scores=cols[0], query_starts=cols[1], query_ends=cols[2],
                          target_starts=cols[3], target_ends=cols[4], identities=identity,
                          lengths=lengths, cigar_text=decoded(got.cigar, "ascii"),
                          cigar_offsets=cigoff, query_text=np.asarray(got.query),
                          target_text=np.asarray(got.target), aligned_offsets=opoff,
                          algorithm=algorithm)


def traced_table(ends: np.ndarray, traced: tuple) -> AlignmentTable:
    """The local :class:`AlignmentTable` of paths traced and rendered in one pass from the
    (n, 3) end cells ``ends`` (score 0: the empty alignment at (0, 0)): ``traced`` is
    (the starts' reversed extents di, dj, the paths' scores, their offsets, the host
    ``Rendered``), as the GPU engine's ``align_local_flat`` and ``render_flat`` or its
    ``trace_local_chain`` give them, every start found (the caller's :func:`unreached`
    ran before the paths were rendered); checked as
    :func:`~warpalign.traceback.align_pairs_table`'s."""
    di, dj, best, opoff, got = traced
    score, qe, te = ends[:, 0], ends[:, 1], ends[:, 2]
    qs, ts = qe - di, te - dj
    check_paths(got, score, best, di, dj, "local",
                lambda k: (int(qs[k]), int(qe[k]), int(ts[k]), int(te[k])))
    return paths_table(got, opoff, score, qs, qe, ts, te, "local")


def chained_table(ends: np.ndarray, traced: tuple) -> AlignmentTable:
    """The local :class:`AlignmentTable` of the GPU's chained route (``traced``:
    ``trace_local_chain``'s answer after the end cells ``ends``: di, dj, the paths'
    scores, offsets, the host ``Rendered``, and the columns and failed checks it made on
    the device), its arrays taken without copies. A failed check runs
    :func:`traced_table`'s on the host, which names the path (a bug, never a result)."""
    di, dj, best, opoff, got, columns = traced
    unreached(di, range(len(ends)), ends[:, 1], ends[:, 2], ends[:, 0])
    if columns["failed"]:
        traced_table(ends, traced[:5])               # raises, naming the path
        raise TracebackError(f"internal error: {columns['failed']} paths of the chained "
                             "traceback failed its checks on the device, none on the host")
    return AlignmentTable._taking(
        scores=ends[:, 0], query_starts=columns["query_starts"], query_ends=ends[:, 1],
        target_starts=columns["target_starts"], target_ends=ends[:, 2],
        identities=columns["identities"], lengths=columns["lengths"],
        cigar_text=decoded(got.cigar, "ascii"), cigar_offsets=got.cigoff,
        query_text=got.query, target_text=got.target, aligned_offsets=opoff)


def unreached(di: np.ndarray, rows, qe, te, score) -> None:
    """A reverse pass that found no start (``di`` < 0: -1 none reaches the score, -2 one
    beats it) is a bug, never a result: TracebackError naming the pair (``rows[k]``)."""
    bad = np.flatnonzero(di < 0)
    if bad.size:
        k = int(bad[0])
        raise TracebackError(f"internal error: the reverse pass of pair {int(rows[k])} from "
                             f"({int(qe[k])}, {int(te[k])}) does not end at score "
                             f"{int(score[k])}: no alignment ending there reaches it, or "
                             "one beats it")
