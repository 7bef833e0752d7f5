"""CPU backend: Numba database scan, exact, on every core.

``prepare`` sorts the targets by length and lays them out column by column in batches of
``batch.LANES`` lanes (query independent, done once per target set). ``scan`` runs one
query over all batches on a thread pool (the kernels release the GIL):

* local alignment with small scores -> the int16 kernel; lanes that may have overflowed
  are rescored with the exact 32-bit scalar kernel and counted in ``ScoreBatch.saturated``;
* everything else (global, semiglobal, large scores or penalties) -> the int32 kernel.

Scores and ends are identical to :func:`pairwise.score_end` for every target.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ..base import (
    ALGORITHMS,
    ScanEngine,
    ScoreBatch,
    TargetSet,
    check_choice,
    resolve_threads,
    usable_cores,
)
from . import batch as _k
from .pairwise import ALGORITHM_CODES
from .striped import score_end_long
from ...offsets import running_sums

#: Largest substitution score / gap penalties the int16 kernel takes (beyond: int32).
_MAX16_SCORE = 4096
_MAX16_GAPS = 32768


@dataclass(frozen=True)
class CpuTargets:
    """A TargetSet laid out for the batch kernels (the handle ``prepare`` returns).

    ``cols[batch_start[b]:batch_start[b+1], l]`` are the codes of target
    ``lane_target[b, l]`` (-1: empty lane), padded with ``PAD_CODE`` to a multiple of
    ``BLOCK`` columns; ``lane_len[b, l]`` its length. Batches hold targets of similar length.
    """

    targets: TargetSet
    cols: np.ndarray          # uint16 [total columns, LANES]
    batch_start: np.ndarray   # int64 [batches + 1]
    lane_len: np.ndarray      # int32 [batches, LANES]
    lane_target: np.ndarray   # int64 [batches, LANES]
    chunks: tuple             # int64 arrays of batch ids, balanced by columns, one per task

    @property
    def n_batches(self) -> int:
        return self.lane_len.shape[0]


class CpuBackend(ScanEngine):
    """Numba backend. ``threads``: worker threads (default: ``NUMBA_NUM_THREADS`` when set,
    else the CPUs this process may use). ``scan(..., threads=n)`` uses n for one call
    (the backend itself is shared between threads and never changes).

    Example:
        >>> import numpy as np
        >>> from warpalign import Scoring
        >>> from warpalign._backends import TargetSet
        >>> s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
        >>> be = CpuBackend(threads=1)
        >>> h = be.prepare(TargetSet.from_list([s.encode("HEAGAWGHEE"), s.encode("PAW")]))
        >>> r = be.scan(s.encode("PAWHEAE"), h, s, algorithm="local", ends=True)
        >>> r.scores.tolist(), r.query_ends.tolist(), r.target_ends.tolist()
        ([17, 22], [6, 3], [3, 3])
    """

    name = "cpu"

    def __init__(self, threads: int | None = None):
        self.threads = resolve_threads(threads)
        self._pools: dict[int, ThreadPoolExecutor] = {}
        self._lock = threading.Lock()

    def _executor(self, threads: int) -> ThreadPoolExecutor:
        """The pool of ``threads`` workers (one per size asked for, made once)."""
        with self._lock:
            pool = self._pools.get(threads)
            if pool is None:
                pool = self._pools[threads] = ThreadPoolExecutor(
                    threads, thread_name_prefix="warpalign-cpu")
            return pool

    def _run(self, tasks, threads: int) -> None:
        """Run callables, on a pool of ``threads`` when that and the tasks are more than one."""
        if threads == 1 or len(tasks) <= 1:
            for task in tasks:
                task()
            return
        for future in [self._executor(threads).submit(task) for task in tasks]:
            future.result()

    # ------------------------------------------------------------------ prepare
    def prepare(self, targets: TargetSet) -> CpuTargets:
        """Sort ``targets`` by length into batches of LANES and lay them out by column."""
        lengths = targets.lengths.astype(np.int64)
        n = len(lengths)
        order = np.argsort(lengths, kind="stable").astype(np.int64)
        n_batches = -(-n // _k.LANES)
        padded = np.zeros(n_batches * _k.LANES, np.int64)
        padded[:n] = lengths[order]
        widest = padded.reshape(n_batches, _k.LANES).max(axis=1) if n_batches else padded[:0]
        ncols = -(-widest // _k.BLOCK) * _k.BLOCK
        batch_start = running_sums(ncols)
        cols = np.full((int(batch_start[-1]), _k.LANES), _k.PAD_CODE, np.uint16)
        lane_len = np.zeros((n_batches, _k.LANES), np.int32)
        offsets = np.ascontiguousarray(targets.offsets, dtype=np.int64)
        codes = np.ascontiguousarray(targets.codes, dtype=np.uint8)
        if n:
            _k.fill_columns(codes, offsets, order, batch_start, cols, lane_len)
        lane_target = np.full(n_batches * _k.LANES, -1, np.int64)
        lane_target[:n] = order
        lane_target = lane_target.reshape(n_batches, _k.LANES)
        return CpuTargets(targets, cols, batch_start, lane_len, lane_target,
                          self._chunks(ncols))

    def _chunks(self, ncols: np.ndarray) -> tuple:
        """Split batch ids into contiguous runs of about equal work (columns), several per
        thread so that threads finishing early take more (enough for every core: a call
        may ask for more threads than the backend's default)."""
        n_batches = len(ncols)
        if n_batches == 0:
            return ()
        parts = min(n_batches, 8 * max(self.threads, usable_cores()))
        work = np.cumsum(ncols + 1)
        cuts = np.searchsorted(work, work[-1] * np.arange(1, parts) / parts)
        ids = np.arange(n_batches, dtype=np.int64)
        return tuple(c for c in np.split(ids, np.unique(cuts)) if len(c))

    # --------------------------------------------------------------------- scan
    def scan(self, query: np.ndarray, handle: CpuTargets, scoring, *,
             algorithm: str = "local", ends: bool = False,
             threads: int | None = None) -> ScoreBatch:
        """Scores (and ends) of ``query`` (uint8 codes) against every target of ``handle``,
        in the TargetSet's order; ``threads``: this call's threads (default the backend's)."""
        check_choice("algorithm", algorithm, ALGORITHMS)
        threads = self.threads if threads is None else resolve_threads(threads)
        if not isinstance(handle, CpuTargets):
            raise TypeError(f"expected a handle from CpuBackend.prepare, got {type(handle).__name__}")
        q = np.ascontiguousarray(query, dtype=np.uint8)
        matrix = np.ascontiguousarray(scoring.matrix, dtype=np.int32)
        go, ge = int(scoring.gap_open), int(scoring.gap_extend)
        m = len(q)
        n = len(handle.targets)
        shape = (handle.n_batches, _k.LANES)
        out_score = np.zeros(shape, np.int32)
        out_qend = np.zeros(shape, np.int32)
        out_tend = np.zeros(shape, np.int32)
        residues, qc = np.unique(q, return_inverse=True)
        qc = qc.astype(np.uint8).reshape(-1)
        hi = int(matrix.max(initial=0))
        narrow = (algorithm == "local" and hi <= _MAX16_SCORE
                  and int(matrix.min(initial=0)) >= -32768 and go + ge <= _MAX16_GAPS
                  and (not ends or m <= 32767))
        flags = None
        if narrow:
            Qx = np.full((len(residues), _k.MAX_CODES + 1), _k.PAD16, np.int16)
            Qx[:, :matrix.shape[1]] = matrix[residues]
            limit = 32767 - max(hi, 0)
            flags = np.zeros(shape, np.uint8)

            def task(ids):
                HE = np.empty((m + 1, 2 * _k.LANES), np.int16)
                _k.local16_scan(qc, handle.cols, handle.batch_start, handle.lane_len, ids, Qx,
                                go, ge, limit, bool(ends), HE, out_score, out_qend, out_tend,
                                flags)
        else:
            Qx = np.full((len(residues), _k.MAX_CODES + 1), _k.PAD32, np.int32)
            Qx[:, :matrix.shape[1]] = matrix[residues]
            code = ALGORITHM_CODES[algorithm]

            def task(ids):
                HE = np.empty((m + 1, 2 * _k.LANES), np.int32)
                _k.general32_scan(qc, handle.cols, handle.batch_start, handle.lane_len, ids,
                                  Qx, go, ge, code, HE, out_score, out_qend, out_tend)

        self._run([lambda ids=ids: task(ids) for ids in handle.chunks], threads)

        valid = handle.lane_target >= 0
        where = handle.lane_target[valid]
        scores = np.empty(n, np.int32)
        qends = np.empty(n, np.int32)
        tends = np.empty(n, np.int32)
        scores[where] = out_score[valid]
        qends[where] = out_qend[valid]
        tends[where] = out_tend[valid]
        saturated = 0
        if flags is not None:
            redo = handle.lane_target[valid & (flags != 0)]
            saturated = len(redo)
            if saturated:
                self._rescore(q, handle.targets, redo, matrix, go, ge, scores, qends, tends,
                              threads)
        if not ends:
            return ScoreBatch(scores, saturated=saturated)
        return ScoreBatch(scores, qends, tends, saturated=saturated)

    def _rescore(self, q, targets: TargetSet, idx, matrix, go, ge, scores, qends, tends,
                 threads: int) -> None:
        """Exact 32-bit rescoring of the targets ``idx`` (local), in place."""
        codes = np.ascontiguousarray(targets.codes, dtype=np.uint8)
        offsets = np.ascontiguousarray(targets.offsets, dtype=np.int64)
        idx = np.sort(np.asarray(idx, dtype=np.int64))
        parts = np.array_split(idx, min(len(idx), threads))
        code = ALGORITHM_CODES["local"]
        self._run([lambda p=p: _k.rescore_targets(q, codes, offsets, p, matrix, go, ge, code,
                                                  scores, qends, tends) for p in parts],
                  threads)


class ScalarBackend(ScanEngine):
    """One pair's DP target by target, on the calling thread: for one or a few targets,
    where ``CpuBackend``'s lanes would stay empty (``align``'s score pass). Long pairs run
    the striped SIMD kernels (:func:`striped.score_end_long`), short ones the scalar
    :func:`pairwise.score_end`; the results are the same."""

    name = "cpu"

    def prepare(self, targets: TargetSet) -> TargetSet:
        return targets

    def scan(self, query: np.ndarray, handle: TargetSet, scoring, *,
             algorithm: str = "local", ends: bool = False,
             threads: int | None = None) -> ScoreBatch:
        """Scores (and ends) of ``query`` against every target of ``handle``, on the
        calling thread (``threads`` is not needed)."""
        check_choice("algorithm", algorithm, ALGORITHMS)
        q = np.ascontiguousarray(query, dtype=np.uint8)
        cells = np.zeros((len(handle), 3), np.int32)
        for k in range(len(handle)):
            cells[k] = score_end_long(q, np.ascontiguousarray(handle[k], dtype=np.uint8),
                                      scoring.matrix, scoring.gap_open, scoring.gap_extend,
                                      ALGORITHM_CODES[algorithm])
        if not ends:
            return ScoreBatch(cells[:, 0].copy())
        return ScoreBatch(cells[:, 0].copy(), cells[:, 1].copy(), cells[:, 2].copy())


__all__ = ["CpuBackend", "CpuTargets", "ScalarBackend"]
