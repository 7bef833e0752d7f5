"""CUDA backend: database search on the GPU (CuPy + NVRTC kernels in ``search.cu``).

``prepare`` uploads the targets once and sorts them into the length buckets of the
kernel table (``config.py``); ``scan`` scores one query against all of them:

* scores: the 16-bit packed DPX kernel (two targets per group of lanes) per bucket, then
  the 32-bit multi-pass kernel rescores every target that could have saturated;
* ``ends=True``: the 32-bit kernel with per-column maxima, which gives the end cell by the
  tie rule (smallest target end, then smallest query end).

Global and semiglobal alignment run in the same 32-bit kernel (template argument ALG:
no relu, boundary row/column of the algorithm, the last query row read once per tile),
always with end cells; there is no 16-bit pass for them (their scores go far below zero).
Constructing the backend raises :class:`~warpalign.errors.BackendUnavailable` naming the
reason: CuPy missing, no device, or NVRTC missing; it compiles nothing. Each launch compiles
the kernels it needs on first use, several at once, kept on disk across processes
(``loader.py``); a kernel that fails to compile raises BackendUnavailable there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np

# by full name: "from . import config" goes through the package, whose __init__ imports this
import warpalign._backends.cuda.config as config  # noqa: PLR0402
import warpalign._backends.cuda.topk as topk  # noqa: PLR0402

from ...errors import BackendError
from ...pipeline import ahead
from ..base import ALGORITHMS, ScoreBatch, TargetSet, check_choice
from ..stream import StreamPlan, memory_bytes, parse_memory, plan_stream
from .config import KernelConfig
from .loader import require_compiler, require_cupy
from .handles import (Candidates, ChunkedTargets, DeviceTargets, MultiTargets, _Bucket,
                      _empty, ends_after_scores, laid_flat, top_candidates, with_ends)
from .kernels import _SMEM_LIMIT, KernelRuns, _rows
from .layout import Layout, make_layout, resident_layout
from .multi import MultiSearch
from .packed import PackedSearch, largest_code
from .streamed import StreamedSearch

METHODS = ("auto", "warp")


class CudaBackend(PackedSearch, StreamedSearch, MultiSearch, KernelRuns):
    """Smith-Waterman search on one CUDA device (the current CuPy device)."""

    name = "cuda"

    def __init__(self, table: tuple[KernelConfig, ...] | None = None, streams: int = 4, *,
                 devices: tuple[int, ...] | None = None, max_resident: int | None = None,
                 block2: int = config.R2_BLOCK, wait_timeout: float = config.CHAIN_TIMEOUT_S,
                 tuning: config.Tuning = config.Tuning(), device_memory: int | None = None,
                 on_packed: Callable[[int, int], None] | None = None):
        """``devices``: CUDA device ids to split the targets over (default: every visible
        device). ``max_resident``: most residues kept on a device at once; larger target
        sets are streamed in chunks (default: the device memory limit's plan,
        :meth:`prepare`). ``wait_timeout``: seconds a tile of the chained kernel
        waits for the tile before its own; past it the search raises BackendError.
        ``tuning``: the packed search's switches (:class:`config.Tuning`; its
        ``pack_score_bytes`` bounds one packed batch: more queries than fit are searched in
        several batches, the host side of each next batch made while the current one runs).
        ``device_memory``: bytes of a device this backend plans with at most (default:
        all that is free); a search may ask for less (:meth:`prepare`). ``on_packed``:
        called with (targets, queries) of every packed batch as its kernels are queued,
        on the searching thread (a streamed search: once per batch and chunk, and for
        its tail); a seam for tests and measurements, it must be thread-safe where
        several threads search."""
        cupy = require_cupy("CUDA backend")
        ndev = cupy.cuda.runtime.getDeviceCount()
        self._cp = cupy
        self._table = table
        self._nstreams = streams
        self._devices = tuple(range(ndev)) if devices is None else tuple(int(d) for d in devices)
        if not self._devices or any(not 0 <= d < ndev for d in self._devices):
            raise ValueError(f"invalid devices {devices!r}: {ndev} device(s) visible")
        if max_resident is not None and int(max_resident) < 1:
            raise ValueError(f"invalid max_resident: {max_resident!r}")
        self._max_resident = None if max_resident is None else int(max_resident)
        if not wait_timeout > 0:
            raise ValueError(f"invalid wait_timeout: {wait_timeout!r}; expected seconds > 0")
        self._wait_timeout = float(wait_timeout)
        self.tuning = tuning
        if device_memory is not None and int(device_memory) < 0:
            raise ValueError(f"invalid device_memory: {device_memory!r}")
        self._device_memory = None if device_memory is None else int(device_memory)
        if on_packed is not None and not callable(on_packed):
            raise ValueError(f"invalid on_packed: {on_packed!r}; expected a callable or None")
        self._on_packed = on_packed
        self._rows16 = _rows(table, 16)
        self._rows32 = _rows(table, 32)
        self._block2 = int(block2)   # threads per block of the width-16 two-row kernels
        # nothing compiles here: each launch site compiles (or reads from the disk cache)
        # the kernels it launches on first use (KernelRuns._need)
        require_compiler("CUDA backend")
        dev = cupy.cuda.Device()
        self._device_id = dev.id
        self.device_name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
        self._sms = dev.attributes["MultiProcessorCount"]
        self.devices = self._devices
        self._kernels: dict[str, object] = {}
        # Many threads may search through one backend and one handle at once: streams are
        # per thread, the caches kept on the backend and its handles are built under this
        # lock and never change once published (DESIGN.md, "Concurrency and inputs").
        self._lock = threading.RLock()
        self._tb = None             # the GPU traceback engine (tb_end of a packed batch)
        self._local = threading.local()

    def _defines(self) -> tuple[str, ...]:
        return (f"R2_BLOCK={self._block2}",
                f"CHAIN_TIMEOUT_NS={max(1, int(self._wait_timeout * 1e9))}ull")

    @property
    def _streams(self) -> list:
        """The calling thread's streams on this backend's device (concurrent calls from
        other threads queue on streams of their own)."""
        got = getattr(self._local, "streams", None)
        if got is None:
            cp = self._cp
            with cp.cuda.Device(self._device_id):
                got = [cp.cuda.Stream(non_blocking=True) for _ in range(max(1, self._nstreams))]
                self._local.copy = cp.cuda.Stream(non_blocking=True)
            self._local.streams = got
        return got

    @property
    def _copy_stream(self):
        """The calling thread's stream for chunk uploads."""
        self._streams
        return self._local.copy

    def _lane_streams(self, lane: int) -> list:
        """The calling thread's streams of a streamed search's ``lane``
        (:func:`~warpalign._backends.stream.lane`: the chunks alternate between lanes 0
        and 1, the tail has lane 2), as many as :attr:`_streams`, the first the lane's
        main stream: each lane's query groups run beside the other lanes' and beside
        :attr:`_streams`."""
        got = getattr(self._local, "lanes", None)
        if got is None:
            got = self._local.lanes = {}
        if lane not in got:
            cp = self._cp
            with cp.cuda.Device(self._device_id):
                got[lane] = [cp.cuda.Stream(non_blocking=True)
                             for _ in range(len(self._streams))]
        return got[lane]

    # -- preparation ---------------------------------------------------------------------
    def prepare(self, targets: TargetSet, *, device_memory: int | float | str | None = None):
        """Make the targets resident: one device (:class:`DeviceTargets`), several
        (:class:`MultiTargets`), or chunks streamed per search (:class:`ChunkedTargets`).

        ``device_memory``: most device bytes the searches of this handle use, per device:
        bytes, a size ('4G') or a fraction of the device's memory
        (:func:`~warpalign._backends.stream.parse_memory`), at most what is free; by
        default what is free less config.RESIDENT_RESERVE (at most a quarter of it), room
        for other work. A target set whose resident cost exceeds three quarters of it is
        streamed (:func:`~warpalign._backends.stream.plan_stream`). ``max_resident``
        (constructor) overrides it: chunks of that many residues.
        """
        limit = parse_memory(device_memory, "device_memory=")
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        if offsets[0] != 0:
            file = targets.file
            if file is not None:
                file = (file[0], file[1] + int(offsets[0]), file[2])
            targets = TargetSet(targets.codes[offsets[0]:offsets[-1]], offsets - offsets[0],
                                file)
            offsets = offsets - offsets[0]
        if len(self._devices) > 1 and len(targets) > 1:
            return self._prepare_multi(targets, limit)
        with self._cp.cuda.Device(self._devices[0]):
            if self._max_resident is not None:
                if targets.residues > self._max_resident:
                    return self._prepare_chunked(
                        targets, list(targets.chunks(self._max_resident)), None)
                return self._prepare_resident(targets)
            plan = self.plan(offsets, limit)
            if plan.streamed:
                return self._prepare_chunked(targets, list(plan.chunks), plan, plan.tail)
            return self._prepare_resident(targets, score_bytes=plan.score_bytes,
                                          spare_bytes=plan.spare_bytes)

    def plan(self, offsets: np.ndarray, device_memory: int | float | None = None) -> StreamPlan:
        """How targets of ``offsets`` meet the current device's memory: resident or
        streamed, and the chunks (:func:`~warpalign._backends.stream.plan_stream`, with
        config.RESIDENT_BYTES a residue and config.SEQUENCE_BYTES a sequence).
        ``device_memory``: as :meth:`prepare`'s (already parsed)."""
        free = self._free_bytes()
        if device_memory is None:
            limit = free - min(config.RESIDENT_RESERVE, free // 4)
        else:
            total = int(self._cp.cuda.Device().mem_info[1])
            limit = min(memory_bytes(device_memory, total), free)
        return plan_stream(offsets, max(limit, 0), residue_bytes=config.RESIDENT_BYTES,
                           sequence_bytes=config.SEQUENCE_BYTES,
                           chain_lanes=self._warps() / config.CHAIN_SPEED)

    def _warps(self) -> int:
        """Warps resident on the device at once (every kernel's occupancy)."""
        return config.resident_warps(self._sms)

    def _layout(self, offsets, group_min: int | None = None, *, resident: bool = False
                ) -> Layout:
        """The host layout of targets with ``offsets`` (:func:`.layout.make_layout`) for
        this backend's kernel table, device and tuning; ``group_min``: the packed target
        groups' fewest columns (default ``tuning.pair_group_min``); ``resident``: a
        resident target set's, remembered (:func:`.layout.resident_layout`)."""
        if group_min is None:
            group_min = self.tuning.pair_group_min
        make = resident_layout if resident else make_layout
        return make(offsets, self._rows16, self._rows32, warps=self._warps(),
                    group_min=group_min, guide=self.tuning.pair_guide)

    def resident_budget(self, sequences: int = 0) -> int:
        """Residues of ``sequences`` targets that the current device can hold with a
        search's buffers (config.RESIDENT_BYTES per residue and per sequence, and
        config.RESIDENT_RESERVE left free)."""
        return config.resident_budget(self._free_bytes(), sequences)

    def _prepare_chunked(self, targets, chunks, plan: StreamPlan | None, tail=None):
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        biggest = max(int(offsets[b] - offsets[a]) for a, b in [*chunks, *([tail] * bool(tail))])
        return ChunkedTargets(targets, chunks, max(biggest, 1), len(offsets) - 1,
                              int(offsets[-1]),
                              score_bytes=None if plan is None else plan.score_bytes,
                              spare_bytes=None if plan is None else plan.spare_bytes,
                              tail=tail)

    def _prepare_resident(self, targets: TargetSet, sync: bool = True, *, codes=None,
                          score_bytes: int | None = None, spare_bytes: int | None = None,
                          layout: Layout | None = None,
                          max_code: int | None = None) -> DeviceTargets:
        """Upload the targets and their length buckets (:meth:`_layout`; ``layout``: made
        beforehand, e.g. on a streamed search's reader thread), all on the current stream:
        the codes, then every id list in one copy and the offsets and stream starts in
        another. ``codes``: a device buffer to upload the codes into (a streamed chunk's),
        else one is allocated; ``max_code``: the largest code, if known; ``sync``: wait
        for the copies (else they are queued only); ``score_bytes``, ``spare_bytes``:
        :class:`DeviceTargets`'."""
        cp = self._cp
        t0 = time.perf_counter()
        host = np.ascontiguousarray(targets.codes, dtype=np.uint8)
        if layout is None:
            layout = self._layout(targets.offsets, resident=True)
        if codes is None:
            codes = cp.empty(max(host.size, 1), dtype=cp.uint8)
        if host.size:
            codes[:host.size].set(host, stream=cp.cuda.get_current_stream())
        words, longs = cp.asarray(layout.words), cp.asarray(layout.longs)
        if max_code is None:
            max_code = int(host.max()) if host.size else -1

        def bucket(b):
            if b.work is None:
                return _Bucket(b.cfg, words[b.items], b.count, b.max_len)
            return _Bucket(b.cfg, words[b.work], b.count, b.max_len, words[b.items])

        b16 = [bucket(b) for b in layout.buckets16]
        b32 = [bucket(b) for b in layout.buckets32]
        if sync:
            cp.cuda.get_current_stream().synchronize()
        return DeviceTargets(cp.cuda.runtime.getDevice(), layout.n, layout.residues, codes,
                             longs[layout.offsets], layout.lengths, max_code, b16, b32,
                             time.perf_counter() - t0, rows_pairs=words[layout.rows_pairs],
                             warp_ids=words[layout.warp_ids], score_bytes=score_bytes,
                             spare_bytes=spare_bytes, layout=(layout, words, longs))

    # -- scoring -------------------------------------------------------------------------
    def scan(self, query: np.ndarray, handle, scoring, *, algorithm: str = "local",
             ends: bool = False, method: str = "auto") -> ScoreBatch:
        """Scores (and with ``ends`` the end cells) of ``query`` against every target.

        ``method``: "auto" (the 16-bit DPX kernels, 32-bit for ends and rescoring) or
        "warp" (paper 003's kernel: one warp per alignment, 32-bit). ``handle`` may also be
        a chunked or multi-device handle (:meth:`prepare` decides).
        """
        if not isinstance(handle, DeviceTargets):
            got = self.search_batches([query], handle, scoring, algorithm=algorithm, ends=ends,
                                      top_k=None, method=method)[0]
            return got.full(handle.n)
        res = self._scan_device(query, handle, scoring, algorithm=algorithm, ends=ends,
                                method=method)
        cp = self._cp
        if res is None:
            zeros = np.zeros(handle.n, dtype=np.int32)
            return ScoreBatch(zeros, zeros.copy() if ends else None,
                              zeros.copy() if ends else None, 0)
        scores, qends, tends, nsat = res
        return ScoreBatch(cp.asnumpy(scores), None if qends is None else cp.asnumpy(qends),
                          None if tends is None else cp.asnumpy(tends), nsat)

    # -- two queries per pass: sw_rowsq2 (B.2 with a query pair per register) -------------
    def _host_scores(self, res, n) -> ScoreBatch:
        """A device result (scores, -, -, saturated), or None for nothing to score, as a
        host ScoreBatch of n scores."""
        if res is None:
            return ScoreBatch(np.zeros(n, dtype=np.int32), None, None, 0)
        return ScoreBatch(self._cp.asnumpy(res[0]), None, None, res[3])

    def _free_bytes(self) -> int:
        """Device memory this process could still use: free on the device plus what
        CuPy's pool holds unused (at most ``device_memory``)."""
        cp = self._cp
        free = int(cp.cuda.Device().mem_info[0]) + int(cp.get_default_memory_pool().free_bytes())
        return free if self._device_memory is None else min(free, self._device_memory)

    def _check_query(self, q, handle, scoring):
        K = scoring.matrix.shape[0]
        if handle.max_code >= K or (len(q) and int(q.max()) >= K):
            raise ValueError(f"sequence codes must be below the scoring's alphabet size {K} "
                             f"(targets go up to {handle.max_code}, the query to {int(q.max())})")

    def _check_queries(self, qs, handle, scoring, largest: int | None = None):
        """:meth:`_check_query` of each of ``qs`` by their largest code (``largest``, else
        :func:`~.packed.largest_code`: one pass, where a call per query took ~5 us each):
        the queries are read one by one only to name the error."""
        if largest is None:
            largest = largest_code(qs)
        if handle.max_code >= scoring.matrix.shape[0] or largest >= scoring.matrix.shape[0]:
            for q in qs:
                self._check_query(q, handle, scoring)

    def _scan_device(self, query, handle, scoring, *, algorithm="local", ends=False,
                     method="auto"):
        """Device arrays (scores, qends, tends) and the saturated count; None when empty."""
        check_choice("algorithm", algorithm, ALGORITHMS)
        check_choice("method", method, METHODS)
        if algorithm != "local" and method != "auto":
            raise ValueError(f"method={method!r} computes local alignments only, "
                             f"not {algorithm!r}")
        cp = self._cp
        if cp.cuda.runtime.getDevice() != handle.device:
            raise ValueError("scan must run on the device the targets were prepared on")
        q = np.ascontiguousarray(query, dtype=np.uint8)
        n = handle.n
        m = len(q)
        self._check_query(q, handle, scoring)
        if algorithm != "local":
            return self._scan_nonlocal(q, handle, scoring, algorithm, ends)
        if n == 0 or m == 0 or handle.residues == 0:
            return None
        tables = self._tables(handle, scoring)
        scores = cp.zeros(n, dtype=cp.int32)
        qends = tends = None
        if ends:
            qends = cp.zeros(n, dtype=cp.int32)
            tends = cp.zeros(n, dtype=cp.int32)
        if method == "warp":
            self._run_warp(handle, q, tables, scores, qends, tends, ends=ends)
            return scores, qends, tends, 0
        if ends:
            self._run32(handle, handle.buckets32, q, tables, scores, qends, tends, ends=True)
            return scores, qends, tends, 0
        if tables.s16 is None:
            self._run32(handle, handle.buckets32, q, tables, scores, None, None, ends=False)
            return scores, None, None, 0
        flagged = cp.empty(n, dtype=cp.int32)
        nflagged = cp.zeros(1, dtype=cp.int32)
        self._run16(handle, q, tables, scores, flagged, nflagged)
        nsat = int(nflagged.get()[0])
        if nsat:
            multi = self._rows32[-1]
            item = _Bucket(multi, flagged[:nsat], nsat, 0)
            self._run32(handle, [item], q, tables, scores, None, None, ends=False)
        return scores, None, None, nsat

    def _scan_nonlocal(self, q, handle, scoring, algorithm, ends):
        """Global/semiglobal: sw_s32<..., ALG> on every width-32 bucket (scores and ends);
        an empty query has the closed form of cpu/pairwise.score_end."""
        cp = self._cp
        n, m = handle.n, len(q)
        if n == 0:
            return None
        go, ge = int(scoring.gap_open), int(scoring.gap_extend)
        if m == 0:
            # global: H(0, n) = -(go + (n-1) ge), ends (0, n); semiglobal: 0, ends (0, 0)
            lengths = handle.lengths.astype(np.int64)
            if algorithm == "global":
                sc = np.where(lengths > 0, -(go + (lengths - 1) * ge), 0).astype(np.int32)
                te = lengths.astype(np.int32)
            else:
                sc = np.zeros(n, dtype=np.int32)
                te = np.zeros(n, dtype=np.int32)
            return (cp.asarray(sc), cp.zeros(n, dtype=cp.int32) if ends else None,
                    cp.asarray(te) if ends else None, 0)
        tables = self._tables(handle, scoring)
        scores = cp.zeros(n, dtype=cp.int32)
        qends = cp.zeros(n, dtype=cp.int32)
        tends = cp.zeros(n, dtype=cp.int32)
        self._run32(handle, handle.buckets32, q, tables, scores, qends, tends, ends=True,
                    algorithm=algorithm)
        return scores, (qends if ends else None), (tends if ends else None), 0

    # -- whole searches: GPU top-k, chunks, several devices ------------------------------
    def _candidate_ids(self, scores, n, top_k):
        """Device ids of every target scoring at least the k-th best (:mod:`topk`)."""
        return topk.candidate_ids(self._cp, scores, n, top_k)

    def _select(self, res, n, top_k, ids=None):
        """Candidates of one query, selected on the device and copied back alone."""
        return topk.select(self._cp, res, n, top_k, ids)

    def _scan_topk_ends(self, q, handle, scoring, algorithm, top_k):
        """mode="end" with top-k: scores of all targets by the 16-bit kernels, then the
        32-bit end kernel (DESIGN tie rule) on the candidates only."""
        cp = self._cp
        res = self._scan_device(q, handle, scoring, algorithm=algorithm, ends=False)
        if res is None:
            return _empty(handle.n, True)
        scores, _, _, nsat = res
        ids = self._candidate_ids(scores, handle.n, top_k)
        qends = cp.zeros(handle.n, dtype=cp.int32)
        tends = cp.zeros(handle.n, dtype=cp.int32)
        item = _Bucket(self._rows32[-1], ids.astype(cp.int32), int(ids.size), 0)
        self._run32(handle, [item], np.ascontiguousarray(q, dtype=np.uint8),
                    self._tables(handle, scoring), scores, qends, tends, ends=True)
        return self._select((scores, qends, tends, nsat), handle.n, top_k, ids)

    def _traceback(self):
        """The GPU traceback engine whose ``tb_end`` gives a packed batch's end cells (made
        once, under the lock; it keeps no per-call state)."""
        with self._lock:
            if self._tb is None:
                from .traceback import GpuTraceback
                self._tb = GpuTraceback()
            return self._tb

    def _batch_ends(self, qs, handle, scoring, cands: list[Candidates]) -> list[Candidates]:
        """End cells of the top-k candidates of a packed batch's queries (DESIGN tie rule):
        the pairs of at most ``tuning.one_warp_cells`` cells that the warp kernel takes in
        one ``tb_end`` launch (``cuda/traceback.py``, a warp per pair), the others (larger,
        empty, or beyond its value range) by the 32-bit end kernel of
        :meth:`_candidate_ends_start` (many warps per pair), queued while the warp kernel
        runs (one after the other, a device's end cells of the 500-query search took 40-57
        ms on 4 x H200: tb_end 20-41, the 3-10 large pairs 8-20, their launches 10-15 of
        host time; docs/gpu-notes.md, session 29). The scores must equal the packed ones.
        The batch's pairs are sorted out together, not a query at a time (~30 us of host
        work a query, which four device threads took in turns under the GIL: ~40 ms of a
        4-GPU search's end cells, session 28)."""
        bounds, flat, scores, query = laid_flat(cands, handle.n)
        return with_ends(cands, bounds,
                         *self._batch_ends_flat(qs, handle, scoring, query, flat, scores))

    def _batch_ends_flat(self, qs, handle, scoring, query, flat, scores):
        """:meth:`_batch_ends` of pairs given as arrays: pair k is ``qs[query[k]]`` against
        target ``flat[k]`` of ``handle``, its packed score ``scores[k]`` (``query``
        ascending: each query's pairs together). Returns (query ends, target ends), int32
        arrays in the pairs' order. (A multi-device or streamed search hands its merged
        top-k over as such arrays, not as a Candidates per query: ~500 of them a device,
        made and taken apart by four device threads under the GIL; session 42.)"""
        lengths = np.asarray(handle.lengths)
        query = np.asarray(query, np.int64)
        flat = np.asarray(flat, np.int64)
        scores = np.asarray(scores, np.int64)
        qlen = np.fromiter((len(q) for q in qs), np.int64, len(qs))[query]
        tlen = lengths[flat].astype(np.int64)
        tb = self._traceback()
        small = ((qlen * tlen <= self.tuning.one_warp_cells) & (qlen > 0) & (tlen > 0)
                 & (qlen + tlen <= tb.most(scoring)))
        qe = np.zeros(flat.size, np.int32)
        te = np.zeros(flat.size, np.int32)
        at = np.flatnonzero(small)
        # the warp kernel queued first (host offsets: no read back), the large pairs' kernels
        # queued while it runs, then both waited for
        lay = handle.layout
        offsets = handle.offsets if lay is None else lay[0].longs[lay[0].offsets]
        pending = (tb.ends_resident_queue(qs, query[at], flat[at], handle.codes, offsets,
                                          lengths, scoring, 0) if at.size else None)
        rest = np.flatnonzero(~small)          # ascending: each query's pairs together
        big = np.split(rest, np.flatnonzero(np.diff(query[rest])) + 1) if rest.size else []
        try:
            queued = self._candidate_ends_start(
                handle, scoring, [(qs[int(query[p[0]])],
                                   Candidates(scores[p].astype(np.int32), None, None, 0, flat[p]))
                                  for p in big])
        finally:
            e = None if pending is None else tb.ends_wait(pending)
        try:
            if e is not None:
                if not np.array_equal(e[:, 0], scores[at]):
                    raise BackendError("internal error: the end kernel's scores differ from "
                                       "the packed kernel's for "
                                       f"{int((e[:, 0] != scores[at]).sum())} candidates")
                qe[at], te[at] = e[:, 1], e[:, 2]
        except BaseException:
            if queued[1]:       # the large pairs' kernels done before their buffers go
                self._join_streams()
            raise
        ends = self._candidate_ends_finish(*queued)
        for p, e in zip(big, ends):
            qe[p], te[p] = e.query_ends, e.target_ends
        return qe, te

    def _candidate_ends_start(self, handle, scoring, jobs) -> tuple[list, list]:
        """End cells of several queries' candidates, jobs (query, Candidates), queued, not
        waited for: the 32-bit end kernel (DESIGN tie rule) on those targets only, each
        query on a stream of its own (a long pair keeps one block busy for milliseconds:
        queries run side by side), one join for all (:meth:`_candidate_ends_finish`, which
        reads what this returns: (what it reads, the buffers to keep alive until then))."""
        cp = self._cp
        n = handle.n
        tables = self._tables(handle, scoring) if jobs else None
        launched, keep = [], []
        for q, cand in jobs:
            ids = np.arange(n) if cand.ids is None else np.asarray(cand.ids)
            if len(q) == 0 or ids.size == 0:
                launched.append((cand, ids, None))
                continue
            dev = cp.asarray(ids.astype(np.int32))
            arrays = [cp.zeros(n, dtype=cp.int32) for _ in range(3)]   # scores, q/t ends
            item = _Bucket(self._rows32[-1], dev, int(ids.size), 0)
            keep.append(self._run32(handle, [item], np.ascontiguousarray(q, dtype=np.uint8),
                                    tables, *arrays, ends=True, first_stream=len(launched),
                                    join=False))
            launched.append((cand, dev, arrays))
        return launched, keep

    def _candidate_ends_finish(self, launched: list, keep: list) -> list[Candidates]:
        """The streams of :meth:`_candidate_ends_start` joined, its candidates' ends read;
        their scores must equal the packed ones (a difference is a bug, raised, never a
        result)."""
        cp = self._cp
        if keep:
            self._join_streams()
        out = []
        for cand, dev, arrays in launched:
            if arrays is None:
                zero = np.zeros(dev.size, np.int32)
                out.append(Candidates(cand.scores, zero, zero.copy(), cand.saturated, cand.ids))
                continue
            scores, qends, tends = arrays
            got = cp.asnumpy(scores[dev])
            if not np.array_equal(got, np.asarray(cand.scores)):
                raise BackendError("internal error: the end kernel's scores differ from the "
                                   f"packed kernel's for "
                                   f"{int((got != np.asarray(cand.scores)).sum())} candidates")
            out.append(Candidates(cand.scores, cp.asnumpy(qends[dev]), cp.asnumpy(tends[dev]),
                                  cand.saturated, cand.ids))
        return out

    def search_batches(self, queries, handle, scoring, *, algorithm="local", ends=False,
                       top_k=None, method="auto"):
        """One :class:`Candidates` per query: the top-k candidates (all with top_k=None),
        ids in the TargetSet order of ``handle``. Chunked handles stream their chunks
        through two device buffers (upload of the next chunk overlaps the current one's
        kernels; ``streamed.py``); multi-device handles run one thread per device; results
        merge exactly (:mod:`~warpalign._backends.stream`)."""
        return [c for got in self.iter_batches(queries, handle, scoring, algorithm=algorithm,
                                               ends=ends, top_k=top_k, method=method)
                for c in got]

    def iter_batches(self, queries, handle, scoring, *, algorithm="local", ends=False,
                     top_k=None, method="auto"):
        """:meth:`search_batches` as it completes: a list of Candidates per batch of
        queries, in query order (a packed batch, a query searched alone; a chunked or
        multi-device handle gives one list for all). The device work runs as the
        iterator is advanced, on the thread that advances it (``search`` advances it on a
        thread of its own, so hits of one batch are assembled while the next runs)."""
        check_choice("method", method, METHODS)
        check_choice("algorithm", algorithm, ALGORITHMS)
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in queries]
        if isinstance(handle, MultiTargets):
            yield self._search_multi(qs, handle, scoring, algorithm, ends, top_k, method)
            return
        if isinstance(handle, ChunkedTargets):
            with self._cp.cuda.Device(self._devices[0]):
                if ends and ends_after_scores(algorithm, top_k, method):
                    found = self._search_chunked(qs, handle, scoring, algorithm, False,
                                                 top_k, method)
                    yield self._ends_from_host(qs, handle, scoring,
                                               top_candidates(found, top_k))
                else:
                    yield self._search_chunked(qs, handle, scoring, algorithm, ends, top_k,
                                               method)
            return
        with self._cp.cuda.Device(handle.device):
            yield from self._iter_resident(qs, handle, scoring, algorithm, ends, top_k,
                                           method, packed=True)

    def _search_resident(self, qs, handle, scoring, algorithm, ends, top_k, method, *,
                         packed):
        """search_batches on one resident handle (:meth:`_iter_resident`, all batches)."""
        return [c for got in self._iter_resident(qs, handle, scoring, algorithm, ends, top_k,
                                                 method, packed=packed)
                for c in got]

    def _iter_resident(self, qs, handle, scoring, algorithm, ends, top_k, method, *,
                       packed):
        """Candidates per batch on one resident handle, in query order. Local scores of
        several queries go through the packed two-half kernel in batches
        (:meth:`_pack_batches`; the host side of batch k+1 made on a worker thread while
        batch k runs); the rest one query at a time."""
        if not (packed and len(qs) >= 2 and method == "auto" and algorithm == "local"
                and (not ends or top_k is not None)):
            for q in qs:
                yield self._search_each([q], handle, scoring, algorithm, ends, top_k, method)
            return
        batches = self._pack_batches(qs, handle, scoring, tail=ends)
        device = self._cp.cuda.Device(handle.device)

        def host(batch):          # on the worker: profiles and lane tables, no device work
            if len(batch) < 2:
                return None
            with device:
                return self._packed_host([qs[i] for i in batch], handle, scoring)

        prepared = ahead(map(host, batches)) if len(batches) > 1 else None
        try:
            for batch in batches:
                made = host(batch) if prepared is None else next(prepared)
                sub = [qs[i] for i in batch]
                if len(batch) < 2:
                    yield self._search_each(sub, handle, scoring, algorithm, ends, top_k,
                                            method)
                else:
                    got = self.search_packed(sub, handle, scoring, top_k=top_k, host=made)
                    yield self._batch_ends(sub, handle, scoring, got) if ends else got
        finally:
            if prepared is not None:
                prepared.close()

    def _pack_batches(self, qs, handle, scoring, tail: bool = False, coarse: bool = False):
        """Query index batches for the packed kernel (:func:`config.pack_batches`, each
        within ``tuning.pack_score_bytes``); single queries where the scoring has no
        16-bit tables. ``tail``: the last batch cut short (:func:`config.split_tail`: a
        search that reports ends or alignments). ``coarse``: at most a power of two
        queries a batch (a streamed search's chunks: chunks of similar target counts run
        the same batches, their plans and profiles made once)."""
        n = handle.n
        tables = self._tables(handle, scoring) if n and handle.residues else None
        if tables is None or tables.s16 is None:
            return [[i] for i in range(len(qs))]
        budget = self.tuning.pack_score_bytes
        if handle.score_bytes is not None:     # the memory limit's share (prepare)
            budget = min(budget, handle.score_bytes)
        lengths = [len(q) for q in qs]
        per = budget // max(8 * n, 1)
        if coarse and per > 1:
            per = 1 << (per.bit_length() - 1)
        batches = config.pack_batches(lengths, tables.kp, per, _SMEM_LIMIT)
        return config.split_tail(batches, lengths, tables.kp, _SMEM_LIMIT) if tail else batches

    def _search_each(self, qs, handle, scoring, algorithm, ends, top_k, method):
        """One query at a time, each query's kernels finished before the next is queued.
        (A one-query lookahead — queue query i+1 before reading query i's results — ran
        4,228 vs 4,097 GCUPS on an H100 but hung in two of four device runs after a
        packed search; it was taken out undiagnosed, docs/gpu-notes.md.)"""
        out = []
        for q in qs:
            if (ends and method == "auto" and algorithm == "local" and top_k is not None
                    and top_k < handle.n):
                out.append(self._scan_topk_ends(q, handle, scoring, algorithm, top_k))
                continue
            res = self._scan_device(q, handle, scoring, algorithm=algorithm, ends=ends,
                                    method=method)
            out.append(_empty(handle.n, ends) if res is None else self._select(res, handle.n, top_k))
        return out
