"""The traceback of many alignments at once on the GPU (the ``traceback`` job's CUDA engine).

:func:`warpalign.traceback.align_many` gives it jobs whose score and end cell are known
(a search's top hits, a batch of pairs, located reads) and asks for two things, both exact
and equal to the CPU engine's (``cpu/traceback.py``: same recurrences, same comparisons):

* :meth:`GpuTraceback.ends`: score and end cell of pairs whose scores alone are known
  (``score_pairs``' reported pairs of global and semiglobal alignments, local ones take
  theirs from the pair kernel, :mod:`.pair_ends`; ``tb_end``, one warp a pair; pairs
  over ONE_WARP_CELLS cells by ``cuda/long.py``'s many-warp kernel);

* :meth:`GpuTraceback.starts`: the anchored reverse pass of every job (``traceback.cu``
  ``tb_start``, one warp per job) -> each alignment's start;
* :meth:`GpuTraceback.paths`: the global path of every segment. A segment of at most
  ``max_full_cells`` cells (or one query row) is traced from a direction byte per cell
  kept in device memory (``tb_path``, one warp per job, lane 0 walks the path back); a
  larger one goes through Myers–Miller's splits with GPU half passes (``cuda/long.py``'s
  ``LongPair.path``), whose leaves use the same full-matrix rule: the path is the one the
  CPU reports.
* :meth:`GpuTraceback.align_local_flat`: both for local jobs whose whole rectangles fit the
  direction bytes, in one launch (``tb_align``: the two passes' device functions one after
  the other in each warp), its job arrays made on the device from the end cells
  (``tb_plan``), so the host reads back once before it and once after.

Jobs whose DP values could leave int32's safe range (+-2^28) and segments the long-pair
kernel cannot score exactly run the CPU kernels instead (same answers). Per-call state
(buffers, a stream) belongs to the call: one engine serves many threads.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from ...offsets import running_sums, runs_within
from ..render import Rendered
from .config import ONE_WARP_CELLS
from .loader import get_module, require_cupy
from .transfer import pinned, upload, upload_pinned

_FILE = "traceback.cu"
_WARPS = 4                     # jobs (warps) per block
#: Device bytes of direction matrices (plus rows and ops) per tb_path launch.
DIR_BYTES = 1 << 30
#: Most device bytes of direction matrices (plus rows and ops) of all the jobs that
#: :meth:`GpuTraceback.align_local_flat` takes in one launch: it sizes each job's matrix by
#: its whole rectangle from the origin, before the start is known, so many long segments
#: (a search's top 500 per query: protein spans of thousands of columns) go the two-pass
#: way, whose matrices are the paths' own rectangles.
ONE_PASS_BYTES = DIR_BYTES
#: Largest |DP value| the int32 kernels take (traceback.cu's -2^29 sentinel stays below).
VALUE_LIMIT = 1 << 28


#: Query rows a lane of tb_start and tb_path (traceback.cu's TB_ROWS).
_ROWS = 4


def _dir_bytes(a, b):
    """tb_path's direction bytes of an a x b job (ints or arrays): strips of 32 x
    :data:`_ROWS` rows, b + 31 steps of 32 x :data:`_ROWS` bytes each."""
    return -(-a // (32 * _ROWS)) * (b + 31) * (32 * _ROWS)


def _batches(sizes, budget: int) -> list[np.ndarray]:
    """Indices grouped greedily, largest first, each group's sizes summing to at most
    ``budget`` (a larger item goes alone: :func:`~warpalign.offsets.runs_within`); all in
    one group, in their own order, when they fit (the sort of 32,768 jobs cost ~1 ms of
    host time a pass, with the device idle: session 23's profile of score_pairs full)."""
    sizes = np.asarray(sizes, np.int64)
    if int(sizes.sum()) <= budget:
        return [np.arange(sizes.size)]
    order = np.argsort(-sizes, kind="stable")
    return [order[lo:hi] for lo, hi in runs_within(sizes[order], budget)]


#: The traceback streams' priority: the highest (CUDA clamps a number past its range, 0 to
#: -5 on Hopper with CUDA 12-13, to the range's end; CuPy has no call that reads the range).
_PRIORITY = -5


def _long_pair(q: np.ndarray, t: np.ndarray, scoring):
    """``cuda/long.py``'s LongPair of the codes ``q`` and ``t``, or None where that kernel
    cannot score them exactly (the value range, or an alphabet whose query profile does not
    fit shared memory: its constructor's ValueError)."""
    from .long import LongPair
    try:
        return LongPair(q, t, scoring)
    except ValueError:
        return None


class GpuTraceback:
    """The ``traceback`` job's CUDA engine (:class:`~warpalign._backends.base.ManyTraceback`)."""

    name = "cuda"

    def __init__(self):
        self._cp = require_cupy("the GPU traceback")
        self._lock = threading.Lock()
        self._cpu_engine = None
        self._tables: dict[tuple, object] = {}   # a host table (dtype, shape, bytes) -> device copy
        self._local = threading.local()            # each thread's streams, one per device

    # ------------------------------------------------------------------ helpers
    @property
    def _cpu(self):
        """The CPU engine for the rare jobs the int32 kernels cannot take (made on first
        use, under the lock: it brings Numba, which the GPU paths otherwise never import)."""
        with self._lock:
            if self._cpu_engine is None:
                from ..cpu.traceback import CpuTraceback
                self._cpu_engine = CpuTraceback()
            return self._cpu_engine

    def _stream(self):
        """The calling thread's stream on the current device (a call's work never queues
        behind another thread's; CuPy's memory pool keeps one arena per stream). Every
        device operation of this engine runs on it, none on the legacy default stream: a
        search's packed kernel runs there on its worker thread, and the hits of batch k
        are traced while batch k+1 runs (a copy on the default stream waited for the whole
        batch: docs/gpu-notes.md, session 21). Non-blocking, at the device's highest
        priority: its short kernels take the SMs as the long search passes free them."""
        streams = getattr(self._local, "streams", None)
        if streams is None:
            streams = self._local.streams = {}
        device = self._cp.cuda.Device().id
        if device not in streams:
            streams[device] = self._cp.cuda.Stream(non_blocking=True, priority=_PRIORITY)
        return streams[device]

    def _function(self, name: str):
        return get_module(_FILE, (name,)).get_function(name)

    def _matrix(self, scoring):
        """The scoring's matrix as int32 on the device (built once per matrix)."""
        return self._constant(np.ascontiguousarray(scoring.matrix, dtype=np.int32))

    def _constant(self, host: np.ndarray):
        """A copy of a small host table on the current device, made once per (device,
        dtype, shape, bytes) under a lock and read-only after (one engine serves every
        device: a copy on another device's memory is not for this one's kernels)."""
        key = (self._cp.cuda.Device().id, host.dtype.str, host.shape, host.tobytes())
        with self._lock:
            got = self._tables.get(key)
            if got is None:
                with self._stream() as stream:
                    got = self._cp.asarray(host)
                    stream.synchronize()     # before another thread's stream reads it
                self._tables[key] = got
        return got

    @staticmethod
    def most(scoring) -> int:
        """Largest a + b of a job whose DP values stay within :data:`VALUE_LIMIT`."""
        step = int(np.abs(scoring.matrix).max()) + int(scoring.gap_open) + int(scoring.gap_extend)
        return VALUE_LIMIT // max(step, 1) - 3

    @staticmethod
    def _joined(pieces):
        """One host buffer of ``pieces`` and each piece's offset in it."""
        pos = running_sums([len(p) for p in pieces])
        buf = np.concatenate([np.asarray(p, np.uint8) for p in pieces]) if pieces else None
        return (np.zeros(0, np.uint8) if buf is None else buf), pos[:-1]

    # ------------------------------------------------------------------ passes
    # The job lists of the interface (host sequences) run as array jobs (below): their
    # codes joined into one buffer a side, uploaded once.
    def ends(self, items, scoring, algorithm: int, *, threads: int | None = None) -> np.ndarray:
        """(score, query end, target end) per item ``(q, t)``, as ``cpu.pairwise.score_end``
        (``algorithm``: its code; DESIGN.md's tie rule)."""
        qcat, qpos = self._joined([q for q, _ in items])
        tcat, tpos = self._joined([t for _, t in items])
        return self.ends_flat(qcat, qpos, [len(q) for q, _ in items], tcat, tpos,
                              [len(t) for _, t in items], scoring, algorithm, threads=threads)

    def ends_resident_queue(self, queries, query, ids, codes, offsets, lengths: np.ndarray,
                            scoring, algorithm: int):
        """:meth:`ends` of the pairs (``queries[query[k]]``, target ``ids[k]``) of a
        database resident on the current device (``codes``: its device array; ``offsets``:
        where each target starts in it, a host array or the device's own, read back here;
        ``lengths``: the targets' lengths on the host), all in one launch queued on the
        calling thread's stream, not waited for: :meth:`ends_wait` gives the (len(ids), 3)
        array (the caller queues other work meanwhile). Every pair is non-empty and within
        :meth:`most` (the caller ends the others another way)."""
        query, ids = np.asarray(query, np.int64), np.asarray(ids, np.int64)
        used, where = np.unique(query, return_inverse=True)
        qcat, qat = self._joined([queries[k] for k in used.tolist()])
        qlen = np.fromiter((len(queries[k]) for k in used.tolist()), np.int64, used.size)
        if isinstance(offsets, np.ndarray):
            toff = offsets[ids]
        else:
            with self._stream() as stream:
                toff = self._cp.asnumpy(self._cp.asarray(offsets)[self._cp.asarray(ids)],
                                        stream=stream)
                stream.synchronize()
        return self.ends_queue(qcat, qat[where], qlen[where], codes, toff.astype(np.int64),
                               lengths[ids].astype(np.int64), scoring, algorithm)

    def starts(self, items, scoring, full_query: bool, *, threads: int | None = None) -> np.ndarray:
        """(di, dj) per item ``(q, qe, t, te, target)``, as ``cpu.traceback.anchored_start``
        without ``whole``: the reversed extents of the start; -1 when no alignment ending
        at (qe, te) reaches ``target``, -2 when one beats it."""
        qcat, qpos = self._joined([it[0] for it in items])
        tcat, tpos = self._joined([it[2] for it in items])
        return self.starts_flat(qcat, qpos, [it[1] for it in items], tcat, tpos,
                                [it[3] for it in items], [it[4] for it in items], scoring,
                                full_query, threads=threads)

    def paths(self, items, scoring, max_full_cells: int, *,
              threads: int | None = None) -> list[tuple[int, np.ndarray]]:
        """(score, ops) per item ``(q, qlo, qhi, t, tlo, thi[, score])``: an optimal global
        path of q[qlo:qhi] vs t[tlo:thi] in alignment order, as ``cpu.traceback.MyersMiller``
        (``score``, the optimum when known, only narrows the CPU's work)."""
        qcat, qpos = self._joined([it[0] for it in items])
        tcat, tpos = self._joined([it[3] for it in items])
        known = all(len(it) > 6 for it in items)
        scores, ops, opoff = self.paths_flat(
            qcat, qpos + [it[1] for it in items], [it[2] - it[1] for it in items], tcat,
            tpos + [it[4] for it in items], [it[5] - it[4] for it in items],
            [it[6] for it in items] if known else None, scoring, max_full_cells,
            threads=threads)
        with self._stream() as stream:
            ops = self._cp.asnumpy(ops, stream=stream)
            stream.synchronize()
        return [(int(scores[k]), ops[opoff[k]:opoff[k + 1]].copy()) for k in range(len(items))]

    def render_flat(self, ops, opoff, qcodes, qpos, tcodes, tpos, scoring, symbols):
        """The :class:`~warpalign._backends.render.Rendered` of paths (host arrays, equal
        to ``render_paths``' answer): path k is ops[opoff[k]:opoff[k+1]] from
        qcodes[qpos[k]] and tcodes[tpos[k]]; ``symbols``: the printed byte of each code.
        ``render.cu``'s two launches on this thread's stream, then two copies back
        (:func:`.render.to_host`)."""
        from .render import render_device, to_host
        cp = self._cp
        matrix = self._matrix(scoring)
        printed = self._constant(np.ascontiguousarray(symbols, dtype=np.uint8))
        with self._stream() as stream:
            got = render_device(cp, cp.asarray(ops, dtype=cp.uint8), opoff, self._device(qcodes),
                                qpos, self._device(tcodes), tpos, matrix, int(scoring.gap_open),
                                int(scoring.gap_extend), printed)
            return to_host(cp, got, stream)

    def _long_path(self, item, scoring, max_full_cells):
        """A segment over ``max_full_cells``: Myers–Miller with GPU half passes, or None when
        the long-pair kernel cannot score it exactly."""
        q, qlo, qhi, t, tlo, thi, *_ = item
        qs, ts = np.ascontiguousarray(q[qlo:qhi]), np.ascontiguousarray(t[tlo:thi])
        pair = _long_pair(qs, ts, scoring)
        if pair is None:
            return None
        score, ops = pair.path(0, len(qs), 0, len(ts), max_full_cells)
        return int(score), ops

    # ------------------------------------------------------------------ array jobs
    # The same passes for jobs given as arrays (issue 20): codes stay in the caller's
    # buffers (device arrays: no copy; host arrays: one upload each), job k reads
    # qcodes[qpos[k]:qpos[k] + qlen[k]] and tcodes[tpos[k]:tpos[k] + tlen[k]]. The rare
    # jobs the int32 kernels cannot take (empty, too long) run on the CPU from host copies.

    xp = property(lambda self: self._cp)

    def _device(self, codes):
        cp = self._cp
        return codes if isinstance(codes, cp.ndarray) else cp.asarray(np.asarray(codes, np.uint8))

    def _host_items(self, codes_q, qpos, qlen, codes_t, tpos, tlen, rows):
        """(q, t) host copies of the jobs ``rows`` (few: the CPU's share)."""
        with self._stream() as stream:
            get = (lambda c, a, n: self._cp.asnumpy(c[a:a + n], stream=stream)
                   if isinstance(c, self._cp.ndarray) else np.asarray(c[a:a + n], np.uint8))
            out = [(get(codes_q, int(qpos[k]), int(qlen[k])),
                    get(codes_t, int(tpos[k]), int(tlen[k]))) for k in rows.tolist()]
            stream.synchronize()
        return out

    def _rows(self, sizes_t):
        """Scratch row offsets (2 * (n + 1) ints a job) and the device buffer."""
        roff = running_sums(2 * (np.asarray(sizes_t, np.int64) + 1))
        return roff, self._cp.empty(max(int(roff[-1]), 1), self._cp.int32)

    def ends_flat(self, qcodes, qpos, qlen, tcodes, tpos, tlen, scoring, algorithm: int, *,
                  threads: int | None = None) -> np.ndarray:
        """:meth:`ends` of the array jobs (see above): an (n, 3) int64 array."""
        return self.ends_wait(self.ends_queue(qcodes, qpos, qlen, tcodes, tpos, tlen, scoring,
                                              algorithm, threads=threads))

    def ends_queue(self, qcodes, qpos, qlen, tcodes, tpos, tlen, scoring, algorithm: int, *,
                   threads: int | None = None):
        """:meth:`ends_flat`'s launches queued on the calling thread's stream, not waited
        for (jobs the int32 kernel cannot take are ended on the CPU now, jobs over
        ONE_WARP_CELLS cells by the long-pair kernel now, :meth:`_long_ends`): what
        :meth:`ends_wait` reads."""
        cp = self._cp
        qpos, qlen, tpos, tlen = (np.asarray(v, np.int64) for v in (qpos, qlen, tpos, tlen))
        out = np.zeros((len(qlen), 3), np.int64)
        fits = (qlen > 0) & (tlen > 0) & (qlen + tlen <= self.most(scoring))
        # a pair over ONE_WARP_CELLS would keep one warp (and the launch) busy for its
        # millions of cells: the long-pair kernel ends it, many warps at once, after the
        # warp kernel is queued (a search's merged hits reach 5,000 x 35,000 residues)
        large = fits & (qlen * tlen > ONE_WARP_CELLS)
        on_gpu, long, cpu = fits & ~large, np.flatnonzero(large), np.flatnonzero(~fits)
        if cpu.size:
            out[cpu] = self._cpu.ends(self._host_items(qcodes, qpos, qlen, tcodes, tpos, tlen, cpu),
                                      scoring, algorithm, threads=threads)
        gpu = np.flatnonzero(on_gpu)
        queued = []         # (jobs, results, what the launch reads: kept until it is read)
        stream = None
        if gpu.size:
            end = self._function("tb_end")
            matrix = self._matrix(scoring)
            stream = self._stream()
            with stream:
                qbuf, tbuf = self._device(qcodes), self._device(tcodes)
                for group in _batches(8 * (tlen[gpu] + 1), DIR_BYTES):
                    ks = gpu[group]
                    roff, rows = self._rows(tlen[ks])
                    res = cp.empty((3, len(ks)), cp.int32)
                    dev = upload(cp, [qpos[ks], qlen[ks].astype(np.int32), tpos[ks],
                                      tlen[ks].astype(np.int32), roff[:-1]])
                    end((-(-len(ks) // _WARPS),), (32 * _WARPS,),
                        (qbuf, dev[0], dev[1], tbuf, dev[2], dev[3], dev[4], rows, matrix,
                         np.int32(scoring.matrix.shape[0]), np.int32(scoring.gap_open),
                         np.int32(scoring.gap_extend), np.int32(algorithm), np.int32(len(ks)),
                         res[0], res[1], res[2]))
                    queued.append((ks, res, (qbuf, tbuf, rows, dev)))
        self._long_ends(out, long, qcodes, qpos, qlen, tcodes, tpos, tlen, scoring, algorithm,
                        threads)
        return out, queued, stream

    def _long_ends(self, out, rows, qcodes, qpos, qlen, tcodes, tpos, tlen, scoring,
                   algorithm: int, threads) -> None:
        """``out[rows]``: the end cells of the large jobs ``rows``, one after the other by
        the long-pair kernel (``cuda/long.py``'s ``LongPair.score_end``: the same tie rule),
        or by the CPU kernel where that kernel cannot score a pair exactly."""
        if not rows.size:
            return
        items = self._host_items(qcodes, qpos, qlen, tcodes, tpos, tlen, rows)
        left = []
        for k, (q, t) in zip(rows.tolist(), items):
            pair = _long_pair(q, t, scoring)
            if pair is None:
                left.append((k, q, t))
            else:
                out[k] = pair.score_end(algorithm)
        if left:
            out[[k for k, _, _ in left]] = self._cpu.ends([(q, t) for _, q, t in left],
                                                          scoring, algorithm, threads=threads)

    def ends_wait(self, queued) -> np.ndarray:
        """The (n, 3) answer of :meth:`ends_queue` (its stream waited for)."""
        out, launches, stream = queued
        if stream is not None:
            with stream:
                for ks, res, _ in launches:
                    out[ks] = self._cp.asnumpy(res, stream=stream).T
                stream.synchronize()
        return out

    def starts_flat(self, qcodes, qpos, qe, tcodes, tpos, te, target, scoring, full_query: bool,
                    *, threads: int | None = None) -> np.ndarray:
        """:meth:`starts` of the array jobs: job k ends at (qe[k], te[k]) of its pair, whose
        query starts at qcodes[qpos[k]] and target at tcodes[tpos[k]]; (n, 2) int64."""
        cp = self._cp
        qpos, qe, tpos, te, target = (np.asarray(v, np.int64) for v in (qpos, qe, tpos, te, target))
        go, ge = int(scoring.gap_open), int(scoring.gap_extend)
        out = np.full((len(qe), 2), -1, np.int64)
        on_gpu = (qe > 0) & (te > 0) & (qe + te <= self.most(scoring))
        cpu = np.flatnonzero(~on_gpu)
        if cpu.size:
            items = self._host_items(qcodes, qpos, qe, tcodes, tpos, te, cpu)
            out[cpu] = self._cpu.starts([(q, len(q), t, len(t), int(target[k]))
                                         for (q, t), k in zip(items, cpu.tolist())],
                                        scoring, full_query, threads=threads)
        if full_query:              # H(m, 0): the whole query in one gap
            corner = -(go + (qe - 1) * ge)
            done = on_gpu & (corner >= target)
            out[done & (corner == target)] = np.stack([qe, np.zeros_like(qe)], 1)[
                done & (corner == target)]
            out[done & (corner > target)] = -2
            on_gpu &= ~done
        gpu = np.flatnonzero(on_gpu)
        if not gpu.size:
            return out
        start = self._function("tb_start")
        matrix = self._matrix(scoring)
        with self._stream() as stream:
            qbuf, tbuf = self._device(qcodes), self._device(tcodes)
            for group in _batches(8 * (te[gpu] + 1), DIR_BYTES):
                ks = gpu[group]
                roff, rows = self._rows(te[ks])
                res = cp.empty((2, len(ks)), cp.int32)
                dev = upload(cp, [qpos[ks], qe[ks].astype(np.int32), tpos[ks],
                                  te[ks].astype(np.int32), target[ks].astype(np.int32),
                                  roff[:-1]])
                start((-(-len(ks) // _WARPS),), (32 * _WARPS,),
                      (qbuf, dev[0], dev[1], tbuf, dev[2], dev[3], dev[4], dev[5], rows, matrix,
                       np.int32(scoring.matrix.shape[0]), np.int32(go), np.int32(ge),
                       np.int32(1 if full_query else 0), np.int32(len(ks)), res[0], res[1]))
                out[ks] = cp.asnumpy(res, stream=stream).T
            stream.synchronize()
        return out

    def align_local_flat(self, qcodes, qpos, tcodes, tpos, ends, scoring, max_full_cells: int):
        """The local alignment of every pair from its end cell, starts and paths in one
        launch, planned on the device (``tb_plan``, ``tb_align``, ``tb_pack``): pair k's
        query starts at qcodes[qpos[k]], its target at tcodes[tpos[k]], and its alignment
        of score ``ends[k, 0]`` ends at (``ends[k, 1]``, ``ends[k, 2]``) (host arrays; a
        score of 0: the empty alignment). Each reverse pass runs over the target segment
        of ``align_pairs_table``'s span bound, and each path is traced from a direction byte
        per cell of that whole rectangle from the origin.

        Returns None, having launched only ``tb_plan``, unless every job fits: each
        rectangle within ``max_full_cells`` cells and within :meth:`most`, all of them
        within :data:`ONE_PASS_BYTES` (a search's top 500, protein spans of thousands of
        columns: the two-pass way, whose matrices are the paths' own rectangles). Else
        (di, dj, path scores, ops, opoff, rq, rt, d_opoff): the starts' reversed extents
        (-1 / -2 as :meth:`starts_flat`'s, then nothing else is valid), the paths' ops
        (device) at opoff (host), and on the device where each path starts (rq, rt) and
        opoff: :meth:`render_flat`'s arguments without an upload. Reads back twice: the
        plan's totals, then the starts, scores and op counts (issue 20: the host's planning
        and uploads between the pair kernel's ends and tb_align took ~4 ms around a ~3.3 ms
        kernel for 32,768 pairs of 128 x 1,024 on an H100 host, docs/gpu-notes.md
        session 31)."""
        cp = self._cp
        ends = np.ascontiguousarray(ends, np.int64)
        n = ends.shape[0]
        if n == 0:
            return None
        with self._stream() as stream:
            (d_ends, d_qpos, d_tpos), staging = upload_pinned(
                cp, [ends, np.asarray(qpos, np.int64), np.asarray(tpos, np.int64)], stream)
            job, _ = self._one_pass(stream, self._device(qcodes), d_qpos, self._device(tcodes),
                                    d_tpos, d_ends, scoring, max_full_cells)
            del staging                                   # the copy up is done
            if job is None:
                return None
            got = cp.asnumpy(job.res, stream=stream)
            stream.synchronize()
            di, dj, best, lengths = got
            opoff = running_sums(lengths)
            if (di < 0).any():
                return di, dj, best, None, opoff, None, None, None
            d_opoff = self._pack(job, n)
            ops = job.ops[:int(opoff[-1])]
        return di, dj, best, ops, opoff, job.rq, job.rt, d_opoff

    def trace_local_chain(self, qbuf, d_qpos, tbuf, d_tpos, d_ends, scoring,
                          max_full_cells: int, symbols, after, checks) -> tuple:
        """:meth:`align_local_flat` and :meth:`render_flat` of jobs whose end cells are on
        the device (``d_ends``: (n, 3) int64, score 0 the empty alignment at (0, 0); codes
        and starts on the device too), queued after the event ``after`` (the pass that
        made them, on another stream), with three reads in all: the plan's totals with
        ``checks`` (device int64 counts of the caller's, read along), then every job's
        start, path score and length with the rendered integers, then the texts (issue 20:
        ``score_pairs(mode="full")``'s ends never cross to the host and back).

        Returns (checks read, None) when a check is not 0 or the jobs do not fit the one
        pass (nothing else ran; the caller takes the general route), else (checks, (ends,
        di, dj, best, opoff, rendered, columns)): the end cells read back ((n, 3) int64),
        the starts' reversed extents (-1 / -2 as :meth:`starts_flat`'s: then ``rendered``
        is None), the paths' scores, their offsets, the host
        :class:`~warpalign._backends.render.Rendered`, and the table's other columns made
        on the device (``query_starts``, ``target_starts``, ``lengths``, ``identities``) with
        ``failed``, the count of paths that :func:`warpalign.traced.check_paths` refuses
        (issue 20: on the host they took ~1 ms of a 13 ms call). The host arrays are views
        of two pinned buffers (integers, texts), int64 but the texts: each buffer goes
        back to CuPy's pinned pool when the last view of it goes.
        """
        from .render import render_cigar, render_walk, split
        cp = self._cp
        n = int(d_ends.size) // 3
        matrix = self._matrix(scoring)
        printed = self._constant(np.ascontiguousarray(symbols, dtype=np.uint8))
        go, ge = int(scoring.gap_open), int(scoring.gap_extend)
        with self._stream() as stream:
            stream.wait_event(after)
            job, seen = self._one_pass(stream, qbuf, d_qpos, tbuf, d_tpos, d_ends, scoring,
                                       max_full_cells, checks)
            if job is None:
                return seen, None
            d_opoff = self._pack(job, n)            # ops sized by the slots: no read first
            walked = render_walk(cp, job.ops, d_opoff, qbuf, job.rq, tbuf, job.rt, matrix, go,
                                 ge, printed)
            made = self._columns(job.res, d_ends, d_opoff, walked, n)
            # the CIGAR text into a buffer of its bound (a run of r ops prints at most
            # 2 r bytes), so no read waits for its size
            done = render_cigar(cp, walked, job.ops, d_opoff, 2 * int(job.ops.size))
            # all int64 on the device, so the host's pieces are views of one pinned buffer
            # (the table keeps them: copies of these 16 columns took ~0.43 ms of a 7.7 ms
            # call after the GPU was done, issue 20)
            ints = [job.res.ravel().astype(np.int64), d_ends.ravel(), *made, walked.cigoff,
                    d_opoff]
            host = pinned(cp, sum(int(v.size) for v in ints), np.int64)
            cp.concatenate(ints).get(stream=stream, out=host, blocking=False)
            stream.synchronize()
            total, size = int(host[-1]), int(host[-(n + 2)])    # opoff[-1], cigoff[-1]
            texts = [done.query[:total], done.target[:total], done.cigar[:size]]
            joined = pinned(cp, 2 * total + size, np.uint8)
            if joined.size:
                cp.concatenate(texts).get(stream=stream, out=joined, blocking=False)
            res, ends, scores, used_q, used_t, matches, qs, ts, identity, failed, cigoff, \
                opoff = split(host, ints, copy=False)
            di, dj, best, lengths = res.reshape(4, n)
            stream.synchronize()
            query, target, cigar = split(joined, texts, copy=False)
        got = Rendered(scores, used_q, used_t, matches, query, target, cigar, cigoff)
        columns = dict(query_starts=qs, target_starts=ts, lengths=lengths,
                       identities=identity.view(np.float64), failed=int(failed[0]))
        return seen, (ends.reshape(n, 3), di, dj, best, opoff,
                      None if (di < 0).any() else got, columns)

    def _one_pass(self, stream, qbuf, d_qpos, tbuf, d_tpos, d_ends, scoring,
                  max_full_cells: int, checks=()) -> tuple:
        """``tb_plan`` and ``tb_align`` of the jobs ``d_ends`` on ``stream`` (the current
        one), the plan's totals and ``checks`` read between: (the queued job or None where
        a job does not fit, the checks as host int64). The job's ``res`` holds, per job,
        the start's reversed extents, the path's score and its length (int32 (4, n))."""
        cp = self._cp
        n = int(d_ends.size) // 3
        plan, align = self._function("tb_plan"), self._function("tb_align")
        matrix = self._matrix(scoring)
        go, ge, k = int(scoring.gap_open), int(scoring.gap_extend), int(scoring.matrix.shape[0])
        top = max(int(scoring.matrix.max()), 0)
        ints = cp.empty((3, n), cp.int32)             # qlen, tlen, target
        d_toff = cp.empty(n, cp.int64)
        sizes = cp.empty((3, n), cp.int64)            # direction bytes, row ints, slot
        refused = cp.zeros(1, cp.uint64)
        plan((-(-n // 128),), (128,),
             (d_ends, d_tpos, np.int32(n), np.int64(top), np.int64(go), np.int64(ge),
              np.int32(ge != 0), np.int64(self.most(scoring)), np.int64(max_full_cells),
              ints[0], d_toff, ints[1], ints[2], sizes, refused))
        # what needs no total goes before the read (the GPU idles from it to tb_align)
        offsets = cp.cumsum(sizes, axis=1)
        starts = offsets - sizes                      # where each job's pieces start
        res = cp.empty((4, n), cp.int32)
        totals = cp.asnumpy(cp.concatenate([offsets[:, -1], refused.astype(cp.int64),
                                            *[cp.asarray(c, cp.int64).ravel() for c in checks]]),
                            stream=stream)
        stream.synchronize()
        dir_total, row_total, slot_total, refused = (int(v) for v in totals[:4])
        seen = totals[4:]
        if refused or dir_total + 4 * row_total + slot_total > ONE_PASS_BYTES or seen.any():
            return None, seen
        rows = cp.empty(max(row_total, 1), cp.int32)
        dirs = cp.empty(max(dir_total, 1), cp.uint8)
        slots = cp.empty(max(slot_total, 1), cp.uint8)
        align((-(-n // _WARPS),), (32 * _WARPS,),
              (qbuf, d_qpos, ints[0], tbuf, d_toff, ints[1], ints[2], starts[1], rows,
               starts[0], dirs, starts[2], slots, matrix, np.int32(k), np.int32(go),
               np.int32(ge), np.int32(n), res))
        # the paths' starts (qe - di, te - dj) and a buffer for every op the slots can hold
        return SimpleNamespace(res=res, slots=slots, slot_at=starts[2],
                               ops=cp.empty(max(slot_total, 1), cp.uint8),
                               rq=d_qpos + (ints[0] - res[0]), rt=d_toff + (ints[1] - res[1])
                               ), seen

    def _columns(self, res, d_ends, d_opoff, walked, n: int) -> list:
        """:meth:`trace_local_chain`'s columns made where the paths are (``tb_columns``,
        queued): the rendered scores, consumption and matches, each path's start (query,
        target), identity (float64 as int64 bits) and the count of paths whose rendered
        score or path score is not the job's, or that do not consume the start's extents
        (as :func:`warpalign.traced.check_paths`)."""
        cp = self._cp
        qs, ts = cp.empty(n, cp.int64), cp.empty(n, cp.int64)
        identity = cp.empty(n, cp.float64)
        failed = cp.zeros(1, cp.uint64)
        self._function("tb_columns")((-(-n // 128),), (128,), (
            res, d_ends, d_opoff, walked.scores, walked.used_q, walked.used_t, walked.matches,
            np.int32(n), qs, ts, identity, failed))
        return [walked.scores, walked.used_q, walked.used_t, walked.matches, qs, ts,
                identity.view(cp.int64), failed.view(cp.int64)]

    def _pack(self, job, n: int):
        """``tb_pack`` of :meth:`_one_pass`'s job into ``job.ops`` (queued): the paths'
        offsets there (device, n + 1 entries)."""
        cp = self._cp
        d_opoff = cp.zeros(n + 1, cp.int64)
        d_opoff[1:] = cp.cumsum(job.res[3], dtype=cp.int64)
        self._function("tb_pack")((-(-n // _WARPS),), (32 * _WARPS,),
                                  (job.slots, job.slot_at, job.res[3], d_opoff, np.int32(n),
                                   job.ops))
        return d_opoff

    def paths_flat(self, qcodes, qpos, qlen, tcodes, tpos, tlen, target, scoring,
                   max_full_cells: int, *, threads: int | None = None):
        """:meth:`paths` of the array jobs (segment k: qcodes[qpos[k]:+qlen[k]] against
        tcodes[tpos[k]:+tlen[k]]): (scores, ops, opoff) with ops one device array of every
        path in alignment order, path k at ops[opoff[k]:opoff[k+1]] (opoff on the host).
        The kernel writes each path backwards into a slot of a + b bytes; one gather on
        the device turns the slots around and packs them."""
        from ..render import _path_of
        cp = self._cp
        qpos, a, tpos, b = (np.asarray(v, np.int64) for v in (qpos, qlen, tpos, tlen))
        known = () if target is None else np.asarray(target, np.int64)   # None: not known
        n = len(a)
        scores = np.zeros(n, np.int64)
        lengths = np.zeros(n, np.int64)
        on_cpu = (a == 0) | (b == 0) | (a + b > self.most(scoring))
        small = ~on_cpu & ((a == 1) | ((a + 1) * (b + 1) <= max_full_cells))
        host: dict[int, np.ndarray] = {}
        rest = np.flatnonzero(~small)
        if rest.size:
            items = self._host_items(qcodes, qpos, a, tcodes, tpos, b, rest)
            cpu_items = []
            for k, (q, t) in zip(rest.tolist(), items):
                got = None if on_cpu[k] else self._long_path((q, 0, len(q), t, 0, len(t)), scoring,
                                                             max_full_cells)
                if got is None:
                    cpu_items.append((k, (q, 0, len(q), t, 0, len(t),
                                          *([int(known[k])] if len(known) else []))))
                else:
                    scores[k], host[k] = got
            for (k, _), got in zip(cpu_items, self._cpu.paths([it for _, it in cpu_items], scoring,
                                                              max_full_cells, threads=threads)):
                scores[k], host[k] = got
            for k, ops in host.items():
                lengths[k] = len(ops)
        gpu = np.flatnonzero(small)
        path = self._function("tb_path")
        matrix = self._matrix(scoring)
        go, ge = int(scoring.gap_open), int(scoring.gap_extend)
        done = []
        with self._stream() as stream:
            qbuf, tbuf = self._device(qcodes), self._device(tcodes)
            sizes = _dir_bytes(a[gpu], b[gpu]) + 8 * (b[gpu] + 1) + a[gpu] + b[gpu]
            for group in (_batches(sizes, DIR_BYTES) if gpu.size else []):
                ks = gpu[group]
                ka, kb = a[ks], b[ks]
                roff, rows = self._rows(kb)
                doff = running_sums(_dir_bytes(ka, kb))
                slot = running_sums(ka + kb)
                dirs = cp.empty(max(int(doff[-1]), 1), cp.uint8)
                slots = cp.empty(max(int(slot[-1]), 1), cp.uint8)
                res = cp.empty((2, len(ks)), cp.int32)
                flags = cp.zeros(len(ks), cp.uint8)
                dev = upload(cp, [qpos[ks], ka.astype(np.int32), tpos[ks], kb.astype(np.int32),
                                  roff[:-1], doff[:-1], slot[:-1]])
                path((-(-len(ks) // _WARPS),), (32 * _WARPS,),
                     (qbuf, dev[0], dev[1], tbuf, dev[2], dev[3], flags, dev[4], rows, dev[5],
                      dirs, dev[6], slots, matrix, np.int32(scoring.matrix.shape[0]),
                      np.int32(go), np.int32(ge), np.int32(len(ks)), res[0], res[1]))
                got = cp.asnumpy(res, stream=stream)
                stream.synchronize()
                scores[ks], lengths[ks] = got[0], got[1]
                done.append((ks, slots, dev[6]))
                del dirs, rows
            opoff = running_sums(lengths)
            ops = cp.empty(max(int(opoff[-1]), 1), cp.uint8)
            d_opoff = cp.asarray(opoff)
            for ks, slots, d_slot in done:           # reverse and pack each batch's slots
                blen = lengths[ks]
                bo = running_sums(blen)
                total = int(bo[-1])
                if not total:
                    continue
                d_bo, d_len, d_ks = upload(cp, [bo, blen, np.asarray(ks, np.int64)])
                job = _path_of(d_bo, total, cp)
                r = cp.arange(total, dtype=cp.int64) - d_bo[job]
                ops[d_opoff[d_ks][job] + r] = slots[d_slot[job] + d_len[job] - 1 - r]
            if host:
                ks = np.fromiter(host, np.int64, len(host))
                cat = np.concatenate([host[k] for k in ks.tolist()]).astype(np.uint8)
                if cat.size:
                    at = np.concatenate([np.arange(opoff[k], opoff[k + 1]) for k in ks.tolist()])
                    ops[cp.asarray(at)] = cp.asarray(cat)
            stream.synchronize()
        return scores, ops[:int(opoff[-1])], opoff
