"""``score_pairs(..., mode="full")`` of every pair, local, on the device from end to end
(the ``pairs_aligned`` engine, issue 20).

:func:`score_align_wordwise` queues the fused scores-and-ends pass
(:func:`~.pair_ends.queue_score_ends`), turns its end keys into the traceback's job rows
on the device (:func:`end_rows`), and hands them to the GPU traceback's chained route
(:meth:`~.traceback.GpuTraceback.trace_local_chain`: ``tb_plan``, ``tb_align``,
``tb_pack``, the render kernels and ``tb_columns``), so the end cells never cross to the
host and back, and the host reads three times in all: the plan's totals with this pass's
checks, the paths' integers, their texts. Before, the pass's read back, ``_fill``, the
ends' checks and copy up, and the traceback's own read between ``tb_align`` and
``tb_pack`` left the GPU idle ~3 ms of a ~17 ms call (32,768 pairs of 128 x 1,024, one
H100; docs/gpu-notes.md session 31).

The checks that the host made on the pass's answer run on the device and are read with
the plan's totals: pairs the pass flagged (16-bit saturation: their scores are wrong),
pairs of a positive score without an end cell, cells outside their pair. Any of them, or
a job past the one pass's bounds, and the batch takes the general route: the pass is read
as :func:`~.pair_ends.score_ends_wordwise` reads it (which names a pair without a cell)
and :func:`warpalign.traceback.align_pairs_table` goes on from its ends. Nothing is
computed twice.
"""

from __future__ import annotations

import time

import numpy as np

from .loader import require_cupy
from .pair_ends import queue_score_ends, read_score_ends, score_ends_wordwise

#: :func:`end_rows`' ElementwiseKernel, made on first use (immutable after).
_ROWS: dict = {}


def _rows_kernel(cp):
    """The ElementwiseKernel of :func:`end_rows` (made once; CuPy caches its binary)."""
    kernel = _ROWS.get("kernel")
    if kernel is None:
        kernel = _ROWS.setdefault("kernel", cp.ElementwiseKernel(
            "raw int32 score, raw uint64 keys, raw int64 xoff, raw int64 yoff",
            "raw int64 ends, raw uint64 bad",
            """
            const int s = score[i];
            const unsigned long long key = keys[i];
            const bool pos = s > 0;
            const long long qe = pos ? (long long)(key & 0xffffffffull) : 0;
            const long long te = pos ? (long long)(key >> 32) : 0;
            ends[3 * i] = pos ? s : 0;
            ends[3 * i + 1] = qe;
            ends[3 * i + 2] = te;
            if (s < 0 || (pos && (key == ~0ull || qe > xoff[i + 1] - xoff[i]
                                  || te > yoff[i + 1] - yoff[i])))
                atomicAdd(&bad[0], 1ull);
            """, "warpalign_end_rows"))
    return kernel


def end_rows(cp, run):
    """The (pairs, 3) int64 job rows (score, query end, target end) of the queued pass
    ``run`` (its key: target end << 32 | query end; a score of 0 the empty alignment at
    (0, 0)) and a device count of the pairs the host's ``_fill`` would refuse (a positive
    score without a cell) or whose cell lies outside their pair, both queued on the
    current stream."""
    ends = cp.empty((run.npairs, 3), cp.int64)
    bad = cp.zeros(1, cp.uint64)
    _rows_kernel(cp)(run.scores, run.keys, run.xoff, run.yoff, ends, bad,
                     size=run.npairs)
    return ends, bad


def score_align_wordwise(xcodes, xoff: np.ndarray, ycodes, yoff: np.ndarray, scoring, traceback,
                         *, max_full_cells: int, symbols: np.ndarray,
                         largest: int | None = None, lengths=(None, None)) -> tuple:
    """Scores, end cells and alignments of every pair (local), chained on the device.

    Arguments as :func:`~.pair_ends.score_ends_wordwise`'s, and: ``traceback`` the GPU
    traceback engine, ``max_full_cells`` and ``symbols`` as its ``trace_local_chain``
    takes them, ``lengths`` as :func:`~.pair_ends.queue_score_ends`'. Returns (scores,
    flagged pairs, (pairs, 3) int64 ends, seconds per step, traced): ``traced`` is
    ``trace_local_chain``'s answer for :func:`warpalign.traced.chained_table`, or None where
    the batch takes the general route (the other four then as
    :func:`~.pair_ends.score_ends_wordwise` gives them).

    Raises:
        ValueError: as :func:`~.pair_ends.score_ends_wordwise`.
    """
    cp = require_cupy("backend 'cuda'")
    npairs = len(xoff) - 1
    if npairs == 0 or not hasattr(traceback, "trace_local_chain"):
        return (*score_ends_wordwise(xcodes, xoff, ycodes, yoff, scoring, largest=largest),
                None)
    run = queue_score_ends(xcodes, xoff, ycodes, yoff, scoring, largest=largest,
                           lengths=lengths)
    ends, bad = end_rows(cp, run)
    run.clock.mark(None)
    t0 = time.perf_counter()
    d_x, d_y = run.codes
    seen, traced = traceback.trace_local_chain(
        d_x, run.xoff[:-1], d_y, run.yoff[:-1], ends, scoring, max_full_cells, symbols,
        cp.cuda.get_current_stream().record(), [run.nflag, bad])
    if traced is None:
        return (*read_score_ends(run), None)
    timings = run.clock.finish()
    timings["tb_chain"] = time.perf_counter() - t0
    rows = traced[0]
    return (rows[:, 0].astype(np.int32), np.zeros(0, np.int64), rows, timings, traced[1:])
