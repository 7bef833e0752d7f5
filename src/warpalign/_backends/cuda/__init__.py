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
reason: CuPy missing, no device, or the kernels failed to compile.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ...errors import BackendError
from .. import ALGORITHMS, ScoreBatch, TargetSet, check_choice
from . import config
from .config import KernelConfig
from .loader import require_cupy

_FILE = "search.cu"
_S16_LIMIT = 32767
_S32_PAD = -(1 << 28)      # score of a padding letter in 32-bit lanes
_SMEM_LIMIT = 100 * 1024    # keep two blocks per SM


@dataclass
class _Bucket:
    cfg: KernelConfig
    items: object        # device int32: pairs (2 per item) for width 16, ids for width 32
    count: int           # pairs or targets (chained: work items)
    max_len: int
    pairs: object = None # chained: device int32 pairs; items holds (pair, tile) per item


METHODS = ("auto", "warp")


@dataclass
class Candidates(ScoreBatch):
    """Scores (and ends) of some targets only: ``ids`` are their TargetSet indices."""

    ids: np.ndarray | None = None

    @classmethod
    def concat(cls, parts: list[Candidates]) -> Candidates:
        def cat(attr):
            vals = [getattr(p, attr) for p in parts]
            return None if vals[0] is None else np.concatenate(vals)
        return cls(cat("scores"), cat("query_ends"), cat("target_ends"),
                   sum(p.saturated for p in parts), cat("ids"))

    def full(self, n: int) -> ScoreBatch:
        """The plain ScoreBatch over all n targets (ids must cover them all)."""
        def put(a):
            if a is None:
                return None
            out = np.zeros(n, dtype=np.int32)
            out[self.ids] = a
            return out
        return ScoreBatch(put(self.scores), put(self.query_ends), put(self.target_ends),
                          self.saturated)


def _kernel_cut(top_k, n) -> bool:
    """Whether CudaBackend._queue_cut takes this top-k over n targets (else _select, query
    by query: all targets, or top_k above config.SELECT_MAX_K)."""
    return top_k is not None and 1 <= top_k <= config.SELECT_MAX_K and top_k < n


def _empty(n, ends):
    z = np.zeros(n, dtype=np.int32)
    return Candidates(z, z.copy() if ends else None, z.copy() if ends else None, 0,
                      np.arange(n, dtype=np.int64))


@dataclass
class ChunkedTargets:
    """Handle for targets larger than ``max_resident`` residues: kept on the host and
    uploaded chunk by chunk for every search, through pinned double buffers of its own."""

    targets: TargetSet
    chunks: list
    biggest: int         # residues of the largest chunk (each search's pinned buffers)
    n: int
    residues: int
    max_code: int
    cache: dict = field(default_factory=dict)


@dataclass
class _PackedJob:
    """A packed batch queued on one device (CudaBackend._packed_start): its query groups
    (indices into qs), the main stream, the uploaded profiles (with their pinned sources,
    kept until the results are read), per group the stream, ``(launch, passes)``, the
    device results and the passes queued so far; ``cut`` (a :class:`_Cut`) once the top-k
    cut is queued."""

    qs: list
    handle: object
    tables: dict
    groups: list
    main: object
    plans: list
    streams: list = field(default_factory=list)
    launchers: list = field(default_factory=list)
    runs: list = field(default_factory=list)
    queued: list = field(default_factory=list)
    cut: object = None
    leased: list = field(default_factory=list)   # boundary buffers, given back when done


@dataclass
class _Cut:
    """A top-k cut queued on one device (CudaBackend._queue_cut): the pinned buffer its one
    copy lands in (``flags`` saturation counts, then per row ``cap`` (id, score) pairs, then
    per row the count of targets at or above the row's bound), the device buffer (kept
    until read), the event of the copy, the cap and the rows."""

    host: object
    dev: object
    done: object
    cap: int
    rows: int
    flags: int

    def arrays(self):
        """Once the copy is done: (saturation counts, hits [rows, cap, 2], counts)."""
        self.done.synchronize()
        f, hit_words = self.flags, 2 * self.cap * self.rows
        flat = np.frombuffer(self.host, np.int32, f + hit_words + self.rows)
        return (flat[:f], flat[f:f + hit_words].reshape(self.rows, self.cap, 2),
                flat[f + hit_words:])


class _Leases:
    """Device buffers of one kind kept with a shared handle for reuse. A call takes its
    own (a kept one, or a new one) and gives it back once its kernels are done, so calls
    running at once never share one."""

    def __init__(self, make):
        self._make = make
        self._free: list = []
        self._lock = threading.Lock()

    def idle(self) -> int:
        with self._lock:
            return len(self._free)

    def take(self):
        with self._lock:
            if self._free:
                return self._free.pop()
        return self._make()

    def give(self, buffers) -> None:
        with self._lock:
            self._free.extend(buffers)


@dataclass
class _Part:
    device: int
    backend: object
    handle: object
    ids: np.ndarray        # global TargetSet index of each of the part's targets


def split_targets(targets: TargetSet, count: int) -> list[tuple[np.ndarray, TargetSet]]:
    """``count`` parts of ``targets`` for as many devices, by cost (paper 003's balance):
    longest first, each to the part with the fewest residues so far (+1 per sequence).
    Per part: the indices of its targets (ascending) and those targets as a TargetSet."""
    offsets = np.asarray(targets.offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    assign = np.empty(len(lengths), dtype=np.int16)
    load = [0] * count
    for i in np.argsort(-lengths, kind="stable").tolist():
        d = min(range(count), key=load.__getitem__)
        assign[i] = d
        load[d] += int(lengths[i]) + 1
    codes = np.asarray(targets.codes, dtype=np.uint8)
    per_res = np.repeat(assign, lengths)
    out = []
    for d in range(count):
        ids = np.flatnonzero(assign == d)
        off = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(lengths[ids], out=off[1:])
        out.append((ids, TargetSet(np.ascontiguousarray(codes[per_res == d]), off)))
    return out


@dataclass
class MultiTargets:
    """Handle for several devices: targets split by cost (longest first, each to the
    device with the fewest residues so far: paper 003's balance)."""

    parts: list
    n: int
    residues: int
    max_code: int
    targets: TargetSet = None
    cache: dict = field(default_factory=dict)


@dataclass
class DeviceTargets:
    """Handle returned by :meth:`CudaBackend.prepare`: the targets resident on one device."""

    device: int
    n: int
    residues: int
    codes: object
    offsets: object
    lengths: np.ndarray
    max_code: int
    buckets16: list[_Bucket]
    buckets32: list[_Bucket]
    upload_seconds: float
    rows_pairs: object = None   # device int32: all targets in pairs, longest first
    warp_ids: object = None     # device int32: all targets, longest first
    cache: dict = field(default_factory=dict)


class CudaBackend:
    """Smith-Waterman search on one CUDA device (the current CuPy device)."""

    name = "cuda"

    def __init__(self, table: tuple[KernelConfig, ...] | None = None, streams: int = 4,
                 rows_min_len: int | None = config.ROWS_MIN_LEN, *,
                 devices: tuple[int, ...] | None = None, max_resident: int | None = None,
                 block2: int = config.R2_BLOCK, wait_timeout: float = config.CHAIN_TIMEOUT_S):
        """``devices``: CUDA device ids to split the targets over (default: every visible
        device). ``max_resident``: most residues kept on a device at once; larger target
        sets are streamed in chunks (default: what the device's free memory holds,
        :meth:`resident_budget`). ``wait_timeout``: seconds a tile of the chained kernel
        waits for the tile before its own; past it the search raises BackendError."""
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
        self._rows16 = _rows(table, 16)
        self._rows32 = _rows(table, 32)
        self._rows_min_len = rows_min_len
        self._names = tuple(dict.fromkeys(
            [config.kernel_name(c) for c in self._rows16]
            + ([config.rows_kernel_name(r) for r in config.ROWS_REGS]
               if rows_min_len is not None else [])
            + [config.kernel_name(c, ends) for c in self._rows32 for ends in (True, False)]
            + [config.kernel_name(c, True, a) for c in self._rows32
               for a in ("global", "semiglobal")]
            + ["sw_warp<true>", "sw_warp<false>"]))
        from .loader import get_module
        self._block2 = int(block2)   # threads per block of the two-row kernels (variant 3)
        self._module = get_module(_FILE, self._names, self._defines())
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

    # -- preparation ---------------------------------------------------------------------
    def prepare(self, targets: TargetSet):
        """Make the targets resident: one device (:class:`DeviceTargets`), several
        (:class:`MultiTargets`), or chunks streamed per search (:class:`ChunkedTargets`)."""
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        if offsets[0] != 0:
            targets = TargetSet(targets.codes[offsets[0]:offsets[-1]], offsets - offsets[0])
        if len(self._devices) > 1 and len(targets) > 1:
            return self._prepare_multi(targets)
        with self._cp.cuda.Device(self._devices[0]):
            if self._max_resident is not None:
                if targets.residues > self._max_resident:
                    return self._prepare_chunked(targets, self._max_resident)
            else:
                budget = self.resident_budget(len(targets))
                if targets.residues > budget:
                    # two chunks are on the device at once (the next one uploads meanwhile)
                    return self._prepare_chunked(targets, max(1, budget // 2))
            return self._prepare_resident(targets)

    def resident_budget(self, sequences: int = 0) -> int:
        """Residues of ``sequences`` targets that the current device can hold with a
        search's buffers (config.RESIDENT_BYTES per residue and per sequence, and
        config.RESIDENT_RESERVE left free); larger sets are chunked."""
        spare = self._free_bytes() - config.RESIDENT_RESERVE - sequences * config.SEQUENCE_BYTES
        return max(0, spare // config.RESIDENT_BYTES)

    def _prepare_chunked(self, targets, size):
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        chunks = list(TargetSet(targets.codes, offsets).chunks(size))
        biggest = max(int(offsets[b] - offsets[a]) for a, b in chunks)
        codes = np.asarray(targets.codes, dtype=np.uint8)
        max_code = int(codes.max()) if len(codes) else -1
        return ChunkedTargets(TargetSet(codes, offsets), chunks, max(biggest, 1),
                              len(offsets) - 1, int(offsets[-1]), max_code)

    def _prepare_multi(self, targets):
        cp = self._cp
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        codes = np.asarray(targets.codes, dtype=np.uint8)
        parts = []
        for (ids, ts), dev in zip(split_targets(targets, len(self._devices)), self._devices):
            with cp.cuda.Device(dev):
                be = CudaBackend(self._table, self._nstreams, self._rows_min_len,
                                 devices=(dev,), max_resident=self._max_resident,
                                 block2=self._block2, wait_timeout=self._wait_timeout)
                parts.append(_Part(dev, be, be.prepare(ts), ids))
        max_code = int(codes.max()) if len(codes) else -1
        return MultiTargets(parts, len(offsets) - 1, int(offsets[-1]), max_code,
                            TargetSet(codes, offsets))

    def _prepare_resident(self, targets: TargetSet, sync: bool = True) -> DeviceTargets:
        """Upload the targets once and sort them into the kernel table's length buckets."""
        cp = self._cp
        t0 = time.perf_counter()
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        lengths = np.diff(offsets).astype(np.int64)
        host = np.ascontiguousarray(targets.codes, dtype=np.uint8)
        codes = cp.empty(max(host.size, 1), dtype=cp.uint8)
        if host.size:
            codes[:host.size].set(host, stream=cp.cuda.get_current_stream())
        d_offsets = cp.asarray(offsets)
        order = np.argsort(lengths, kind="stable")
        b16 = self._buckets(self._rows16, lengths, order, paired=True)
        b32 = self._buckets(self._rows32, lengths, order, paired=False)
        max_code = int(host.max()) if host.size else -1
        # row-strip kernel: every target, longest first, in pairs (the longer one first)
        desc = order[::-1]
        rp = np.full(2 * ((len(desc) + 1) // 2), -1, dtype=np.int32)
        rp[:len(desc)] = desc
        rows_pairs = cp.asarray(rp)
        warp_ids = cp.asarray(desc.astype(np.int32))   # method="warp": longest first
        if sync:
            cp.cuda.get_current_stream().synchronize()
        return DeviceTargets(cp.cuda.runtime.getDevice(), len(lengths), int(lengths.sum()),
                             codes, d_offsets, lengths, max_code, b16, b32,
                             time.perf_counter() - t0, rows_pairs=rows_pairs,
                             warp_ids=warp_ids)

    def _buckets(self, rows, lengths, order, *, paired):
        cp = self._cp
        sorted_len = lengths[order]
        out = []
        lo = 0
        for cfg in rows:
            hi = (len(order) if cfg.max_len is None
                  else int(np.searchsorted(sorted_len, cfg.max_len, "right")))
            ids = order[lo:hi]
            lo = hi
            if len(ids) == 0:
                continue
            if cfg.multi:
                ids = ids[::-1]   # longest first: the longest items start earliest
            if paired:
                items = np.full(2 * ((len(ids) + 1) // 2), -1, dtype=np.int32)
                items[:len(ids)] = ids
                count = len(items) // 2
            else:
                items = ids.astype(np.int32)
                count = len(items)
            if cfg.chained:
                pl = lengths[items.clip(0)] * (items >= 0)
                ntiles = -(-pl.reshape(-1, 2).max(axis=1) // (cfg.group * cfg.regs))
                work = np.stack([np.repeat(np.arange(count), ntiles),
                                 np.concatenate([np.arange(k) for k in ntiles])], axis=1)
                out.append(_Bucket(cfg, cp.asarray(work.astype(np.int32).ravel()), len(work),
                                   int(lengths[ids].max()), cp.asarray(items)))
                continue
            out.append(_Bucket(cfg, cp.asarray(items), count, int(lengths[ids].max())))
        # multi-pass and long buckets first, so their long items overlap the short ones
        out.sort(key=lambda b: (not b.cfg.multi, -b.max_len))
        return out

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
    @staticmethod
    def pair_by_length(lengths) -> list[tuple[int, int | None]]:
        """Query index pairs for :meth:`scan_pair`: neighbours in length order (the pair
        runs max(m_a, m_b) rows, so similar lengths waste least); with an odd count the
        shortest query runs alone (its second half then scores padding)."""
        order = np.argsort(np.asarray(lengths, dtype=np.int64), kind="stable").tolist()
        out: list[tuple[int, int | None]] = []
        if len(order) % 2:
            out.append((order.pop(0), None))
        out += [(order[k], order[k + 1]) for k in range(0, len(order), 2)]
        return out

    def scan_pair(self, qa, qb, handle, scoring, *, variant=None) -> list[ScoreBatch]:
        """Local scores of two queries (``qb`` may be None) against every target in one
        pass of the two-query kernel: one ScoreBatch per query given. Saturated targets
        are rescored by the 32-bit kernel and counted per query, as in :meth:`scan`.
        ``variant``: the kernel (config.PAIR_VARIANTS; default config.PAIR_VARIANT)."""
        if not isinstance(handle, DeviceTargets):
            return [self.scan(q, handle, scoring) for q in (qa, qb) if q is not None]
        return [self._host_scores(res, handle.n)
                for res in self._scan_pair_device(qa, qb, handle, scoring, variant)]

    def _host_scores(self, res, n) -> ScoreBatch:
        """A device result (scores, -, -, saturated), or None for nothing to score, as a
        host ScoreBatch of n scores."""
        if res is None:
            return ScoreBatch(np.zeros(n, dtype=np.int32), None, None, 0)
        return ScoreBatch(self._cp.asnumpy(res[0]), None, None, res[3])

    def scan_many(self, queries, handle, scoring, *, variant=None) -> list[ScoreBatch]:
        """:meth:`scan_pair` over queries paired by length (:meth:`pair_by_length`); one
        ScoreBatch per query, in the order given."""
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in queries]
        out: list[ScoreBatch | None] = [None] * len(qs)
        for a, b in self.pair_by_length([len(q) for q in qs]):
            got = self.scan_pair(qs[a], None if b is None else qs[b], handle, scoring,
                                 variant=variant)
            out[a] = got[0]
            if b is not None:
                out[b] = got[1]
        return out

    def search_paired(self, queries, handle, scoring, *, top_k=None,
                      variant=None) -> list[Candidates]:
        """``search_batches`` for local scores (no ends, method "auto") on a resident
        handle, queries paired by length through the two-query kernel: one Candidates per
        query, in the order given (the same GPU top-k selection as ``search_batches``)."""
        if not isinstance(handle, DeviceTargets):
            raise TypeError("search_paired needs a resident single-device handle")
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in queries]
        out: list[Candidates | None] = [None] * len(qs)
        for a, b in self.pair_by_length([len(q) for q in qs]):
            got = self._scan_pair_device(qs[a], None if b is None else qs[b], handle, scoring,
                                         variant)
            for qi, res in zip((a, b), got):
                out[qi] = (_empty(handle.n, False) if res is None
                           else self._select(res, handle.n, top_k))
        return out

    def _pair_kernel(self, name, smem):
        """Kernels of the two-query module (compiled on first use, all R at once)."""
        with self._lock:
            if getattr(self, "_pair_module", None) is None:
                from .loader import get_module
                names = tuple(config.pair_kernel_name(r, v) for v in config.PAIR_VARIANTS
                              for r in config.PAIR_REGS)
                names += tuple(config.pack_kernel_name(r) for r in config.PAIR_REGS)
                self._pair_kernels = {}
                self._pair_module = get_module(_FILE, names + ("rowsq2_stream", "top_select"),
                                               self._defines())
        return _function(self._pair_module, self._pair_kernels, name, smem)

    def _pair_stream(self, handle):
        """The target stream of sw_rowsq2 (cached per handle): non-empty targets longest
        first, back to back, first columns marked; groups of whole targets with guided
        sizes (large first, PAIR_GROUP_MIN columns at the end) for the dynamic ticket."""
        got = handle.cache.get("rowsq2")
        if got is not None:
            return got
        with self._lock:
            got = handle.cache.get("rowsq2")
            if got is None:
                got = handle.cache["rowsq2"] = self._build_pair_stream(handle)
        return got

    def _build_pair_stream(self, handle):
        cp = self._cp
        lengths = np.asarray(handle.lengths, dtype=np.int64)
        order = np.argsort(-lengths, kind="stable")
        order = order[lengths[order] > 0]
        sstart = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(lengths[order], out=sstart[1:])
        total = int(sstart[-1])
        warps = self._sms * config.BLOCKS_PER_SM * (config.BLOCK // 32)
        bounds, k = [0], 0
        while k < len(order):
            want = max(config.PAIR_GROUP_MIN, (total - int(sstart[k])) // (config.PAIR_GUIDE * warps))
            k2 = int(np.searchsorted(sstart, sstart[k] + want, "left"))
            k = min(max(k2, k + 1), len(order))
            bounds.append(k)
        bounds = np.asarray(bounds, dtype=np.int64)
        d_ids = cp.asarray(order.astype(np.int32))
        d_sstart = cp.asarray(sstart)
        stream = cp.empty(max(total, 1), dtype=cp.uint8)
        if len(order):
            grid = max(1, min(-(-len(order) // (config.BLOCK // 32)), self._sms * 8))
            self._pair_kernel("rowsq2_stream", 0)(
                (grid,), (config.BLOCK,),
                (handle.codes, handle.offsets, d_ids, d_sstart, np.int32(len(order)), stream))
        got = {"stream": stream, "ids": d_ids, "gstart": cp.asarray(sstart[bounds]),
               "gfirst": cp.asarray(bounds.astype(np.int32)), "ngroups": len(bounds) - 1,
               "total": total,
               "boundary": _Leases(lambda: cp.empty(2 * max(total, 1), dtype=cp.uint32))}
        # complete before any thread's stream reads it
        cp.cuda.get_current_stream().synchronize()
        return got

    def _pair_profile(self, qa, qb, R, strips, tables):
        """prof[strip][a][t][RS]: S[qa[row]][a] (low half) | S[qb[row]][a] << 16, row =
        strip * 32R + t * R + r; rows past a query score the padding letter."""
        kp = tables["kp"]
        P = tables["P16"]
        rows = strips * 32 * R
        RS = config.rows_stride(R)

        def codes(q):
            c = np.full(rows, kp - 1, dtype=np.int64)
            if q is not None:
                c[:len(q)] = q
            return c

        word = ((P[codes(qa)] & 0xFFFF) | ((P[codes(qb)] & 0xFFFF) << 16)).astype(np.uint32)
        prof = np.zeros((strips, kp, 32, RS), dtype=np.uint32)
        prof[..., :R] = word.reshape(strips, 32, R, kp).transpose(0, 3, 1, 2)
        return prof.reshape(strips, -1)

    def _scan_pair_device(self, qa, qb, handle, scoring, variant=None):
        """Device results of :meth:`_scan_device` form, (scores, None, None, saturated) or
        None, for qa and (when given) qb, from one pass of sw_rowsq2 per strip."""
        cp = self._cp
        variant = config.PAIR_VARIANT if variant is None else variant
        config.pair_kernel_name(4, variant)   # ValueError for an unknown variant
        if cp.cuda.runtime.getDevice() != handle.device:
            raise ValueError("scan must run on the device the targets were prepared on")
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in (qa, qb) if q is not None]
        for q in qs:
            self._check_query(q, handle, scoring)
        n = handle.n
        m = max(len(q) for q in qs)
        tables = self._tables(handle, scoring) if n and handle.residues else None
        if tables is None or m == 0 or tables["s16"] is None:
            return [self._scan_device(q, handle, scoring) for q in qs]
        kp = tables["kp"]
        R, strips = config.pair_plan(m, kp, _SMEM_LIMIT)
        prof = cp.asarray(self._pair_profile(qs[0], qs[1] if len(qs) > 1 else None, R,
                                             strips, tables))
        scores, counts = self._row_passes(config.pair_kernel_name(R, variant), prof, None,
                                          qs, handle, tables, slots=2)
        return [(scores[h * n:(h + 1) * n], None, None, counts[h]) for h in range(len(qs))]

    def _row_passes(self, name, prof, info, qs, handle, tables, slots):
        """Launch the two-query row kernel ``name`` (sw_rowsq2/sw_rowsq2k2, or sw_rowsqb
        with its lane table ``info``) once per pass of ``prof`` (one row strip each) over
        the handle's target stream, then rescore in 32 bits the entries it flagged.
        Returns the device scores (``slots`` x n, slot i for qs[i]) and the rescored count
        per slot."""
        leases = self._pair_stream(handle)["boundary"]
        boundary = leases.take() if len(prof) > 1 else None
        try:
            launch, run = self._passes(name, prof, info, handle, tables, slots, boundary)
            for p in range(len(prof)):
                launch(p)
            return self._rescore_flagged(run, qs, handle, tables, slots)   # waits for them
        finally:
            if boundary is not None:
                leases.give([boundary])

    def _passes(self, name, prof, info, handle, tables, slots, boundary):
        """The result buffers of a run of row passes, zeroed on the current stream, and
        ``launch(p)``, which queues pass p on the current stream (passes in order).
        ``boundary``: the boundary-row buffer the passes hand rows on through (the call's
        own, see :class:`_Leases`), None for one pass. Returns (launch, (scores, flagged,
        count of flagged))."""
        cp = self._cp
        n = handle.n
        passes = len(prof)
        st = self._pair_stream(handle)
        if boundary is None:
            boundary = cp.empty(2, dtype=cp.uint32)
        # one buffer, two memsets: scores [slots * n] (zeroed), flagged [slots * n], the
        # flagged count [1] and a ticket per pass (zeroed); per pass the kernel gets raw
        # pointers into it and into the profile (CuPy views cost host time, which the
        # device threads of a multi-GPU search take in turns under the GIL)
        size = slots * n
        buf = cp.empty(2 * size + 1 + passes, dtype=cp.int32)
        base = buf.data.ptr
        stream = cp.cuda.get_current_stream().ptr
        cp.cuda.runtime.memsetAsync(base, 0, 4 * size, stream)
        cp.cuda.runtime.memsetAsync(base + 8 * size, 0, 4 * (1 + passes), stream)
        scores, flagged, nflagged = buf[:size], buf[size:2 * size], buf[2 * size:2 * size + 1]
        ng = st["ngroups"]
        # up to 4 blocks per SM: small R leaves room for more than two (the ticket balances)
        grid = max(1, min(self._sms * 4, -(-ng // (config.BLOCK // 32))))
        smem = prof.shape[1] * 4
        k = self._pair_kernel(name, smem)
        prof_at, prof_step = prof.data.ptr, prof.strides[0]
        head = (st["stream"], st["gstart"], st["gfirst"], st["ids"], np.int32(ng))
        tail = (np.int32(tables["kp"]),)
        rest = (np.uint32(tables["neg_ge"]), np.uint32(tables["bvec"]),
                np.uint32(tables["neg_go_int"]), np.uint32(1), np.int32(tables["go"]),
                np.int32(tables["threshold"]), np.int32(n), scores, flagged, nflagged, boundary)

        def launch(p):
            lanes = () if info is None else (np.uint64(info.data.ptr + p * info.strides[0]),)
            k((grid,), (config.BLOCK,),
              (*head, np.uint64(base + 4 * (2 * size + 1 + p)),
               np.uint64(prof_at + p * prof_step), *lanes, *tail, np.int32(p == 0),
               np.int32(p + 1 == passes), *rest),
              shared_mem=smem)

        return launch, (scores, flagged, nflagged)

    def _rescore_flagged(self, run, qs, handle, tables, slots):
        """Rescore in 32 bits the entries a run of :meth:`_launch_passes` flagged: (the
        device scores, the rescored count per slot)."""
        cp = self._cp
        n = handle.n
        scores, flagged, nflagged = run
        nsat = int(nflagged.get()[0])
        counts = [0] * slots
        if nsat:
            f = flagged[:nsat]
            slot = f // n
            for qi in np.unique(cp.asnumpy(slot)).tolist():
                if qi >= len(qs):        # the pair kernel's empty half B (never flags)
                    continue
                ids = (f[slot == qi] - qi * n).astype(cp.int32)
                counts[qi] = int(ids.size)
                item = _Bucket(self._rows32[-1], ids, counts[qi], 0)
                self._run32(handle, [item], qs[qi], tables, scores[qi * n:(qi + 1) * n], None,
                            None, ends=False)
        return scores, counts

    # -- a packed batch of queries: sw_rowsqb (both halves hold query row streams) --------
    def scan_packed(self, queries, handle, scoring) -> list[ScoreBatch]:
        """Local scores of every query against every target, the whole batch packed into
        the two halves of the two-query kernel (several queries per half, each starting at
        a lane boundary): no pairing padding and one R for all. One ScoreBatch per query,
        in the order given; saturation rescored and counted per query."""
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in queries]
        if not isinstance(handle, DeviceTargets):
            return [self.scan(q, handle, scoring) for q in qs]
        return [self._host_scores(res, handle.n)
                for res in self._scan_packed_device(qs, handle, scoring)]

    def search_packed(self, queries, handle, scoring, *, top_k=None) -> list[Candidates]:
        """:meth:`search_paired` with the packed batch kernel (:meth:`scan_packed`)."""
        if not isinstance(handle, DeviceTargets):
            raise TypeError("search_packed needs a resident single-device handle")
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in queries]
        job = self._packed_start(qs, handle, scoring)
        if job is None:
            return self._cut([self._scan_device(q, handle, scoring) for q in qs], handle.n,
                             top_k)
        with self._packed_run([job]):
            self._packed_launch(job)
            self._packed_cut(job, top_k)
            return self._packed_finish(job, top_k)

    @contextlib.contextmanager
    def _packed_run(self, jobs):
        """Around the launches and the reading of the packed jobs in the list ``jobs``
        (None where a device runs none; the list may grow inside the block): their leased
        boundary buffers go back when the block ends, after every kernel of theirs is done
        (the results were read; on an error the devices are waited for first)."""
        try:
            yield
        except BaseException:
            for job in jobs:
                if job is not None:
                    with self._cp.cuda.Device(job.handle.device):
                        self._cp.cuda.Device().synchronize()
            raise
        finally:
            for job in jobs:
                if job is not None and job.leased:
                    job.handle.cache["rowsq2"]["boundary"].give(job.leased)
                    job.leased = []

    def _cut(self, got, n, top_k):
        """Candidates of each query from its device results (None: an empty query): one
        ``top_select`` cut for the batch where top_k allows (see :meth:`_queue_cut`), else
        query by query (:meth:`_select`)."""
        live = [res for res in got if res is not None]
        if not live or not _kernel_cut(top_k, n):
            return [_empty(n, False) if res is None else self._select(res, n, top_k)
                    for res in got]
        rows = [res[0] for res in live]
        cut = self._queue_cut([(self._cp.stack(rows), len(rows))], n, top_k)
        picked = iter(self._read_cut(cut, rows, n, top_k, [res[3] for res in live]))
        return [_empty(n, False) if res is None else next(picked) for res in got]

    def _queue_cut(self, blocks, n, top_k, flags=()):
        """Queue on the current stream the top-k cut of score rows and one copy of it to
        pinned memory, led by the one-word device counters ``flags``. ``blocks``: (device
        scores, rows) with row r of a block at scores[r * n:]; 1 <= top_k <=
        config.SELECT_MAX_K.

        Kernel ``top_select``, one block of config.SELECT_THREADS per row: thread t's
        targets t, t + SELECT_THREADS, ... form a group, and the k-th largest group maximum
        bounds the k-th best score from below (k disjoint groups hold a score at least that
        high each), so the targets at or above it, at most config.select_cap(top_k) of
        them, hold every answer. Finding the k-th best by partitioning whole rows took 4.8
        ms for 20 x 516 K scores on an H200 (docs/gpu-notes.md, sessions 14 and 15)."""
        cp = self._cp
        rows = sum(r for _, r in blocks)
        cap = config.select_cap(top_k)
        words = rows * (2 * cap + 1)     # (id, score) pairs [rows][cap], then counts [rows]
        dev = cp.empty(words, dtype=cp.int32)
        kern = self._pair_kernel("top_select", 0)
        row = 0
        for scores, r in blocks:
            kern((r,), (config.SELECT_THREADS,),
                 (scores, np.int64(n), np.int32(top_k), np.int32(cap),
                  np.uint64(dev.data.ptr + 4 * (2 * cap * rows + row)),
                  np.uint64(dev.data.ptr + 8 * cap * row)))
            row += r
        stream = cp.cuda.get_current_stream()
        host = cp.cuda.alloc_pinned_memory(4 * (len(flags) + words))
        to_host = cp.cuda.runtime.memcpyDeviceToHost
        for i, counter in enumerate(flags):
            cp.cuda.runtime.memcpyAsync(host.ptr + 4 * i, counter.data.ptr, 4, to_host,
                                        stream.ptr)
        cp.cuda.runtime.memcpyAsync(host.ptr + 4 * len(flags), dev.data.ptr, 4 * words,
                                    to_host, stream.ptr)
        return _Cut(host, dev, stream.record(), cap, rows, len(flags))

    def _read_cut(self, cut, row_scores, n, top_k, nsat):
        """Candidates per row of a queued :class:`_Cut` (row r's device scores
        ``row_scores[r]``, its saturated count ``nsat[r]``): every target scoring at least
        the row's k-th best, ids ascending, the k-th best taken among the row's few
        candidates on the host. A row with more than the cap at or above its bound (heavy
        ties) is cut on the device alone."""
        _, hits, counts = cut.arrays()
        out = []
        for r, (scores, sat) in enumerate(zip(row_scores, nsat)):
            c = int(counts[r])
            if c > cut.cap:
                out.append(self._select((scores, None, None, sat), n, top_k))
                continue
            ids, sc = hits[r, :c, 0], hits[r, :c, 1]
            kth = np.partition(sc, c - top_k)[c - top_k]
            keep = np.flatnonzero(sc >= kth)
            keep = keep[np.argsort(ids[keep], kind="stable")]
            out.append(Candidates(sc[keep].astype(np.int32), None, None, sat,
                                  ids[keep].astype(np.int64)))
        return out

    @staticmethod
    def _pack_lanes(halves, R, passes):
        """Per pass and lane: keep mask, slot A, slot B, flags (bit 0/1: the lane ends its
        query's rows of this pass in half A/B and writes; bit 2/3: that query starts in this
        pass, so no earlier pass wrote), and per half the (query, row) of every row."""
        rows = passes * 32 * R
        owner = np.full((2, rows), -1, dtype=np.int64)
        qrow = np.zeros((2, rows), dtype=np.int64)
        for h in range(2):
            r0 = 0
            for qi, k in halves[h]:
                owner[h, r0:r0 + k] = qi
                qrow[h, r0:r0 + k] = np.arange(k)
                r0 += k
        first = owner[:, ::R].reshape(2, passes, 32)          # owner of each lane's rows
        prev = np.concatenate([np.full((2, 1), -1), owner[:, R - 1:-1:R]], axis=1)
        prev = prev.reshape(2, passes, 32)                    # owner of the row above
        nxt = np.concatenate([first.reshape(2, -1)[:, 1:], np.full((2, 1), -1)], axis=1)
        nxt = nxt.reshape(2, passes, 32)
        nxt[:, :, 31] = -1                                    # a pass's last lane always ends
        live = first >= 0
        keep = (live & (prev == first)).astype(np.int64)
        writes = live & (nxt != first)
        starts = np.zeros((2, passes, 32), dtype=bool)        # the query's row 0 is in this pass
        q0 = qrow[:, ::R].reshape(2, passes, 32) == 0
        for h in range(2):
            for p in range(passes):
                for t in range(32):
                    if writes[h, p, t]:
                        u = t
                        while u > 0 and first[h, p, u - 1] == first[h, p, t]:
                            u -= 1
                        starts[h, p, t] = q0[h, p, u]
        info = np.zeros((passes, 32, 4), dtype=np.int64)
        info[..., 0] = keep[0] * 0xFFFF + keep[1] * 0xFFFF0000
        info[..., 1] = first[0]
        info[..., 2] = first[1]
        info[..., 3] = writes[0] + 2 * writes[1] + 4 * starts[0] + 8 * starts[1]
        return info.astype(np.uint32).view(np.int32), owner, qrow

    def _scan_packed_device(self, qs, handle, scoring):
        """Device results (scores view, None, None, saturated) or None per query."""
        job = self._packed_start(qs, handle, scoring)
        if job is None:
            return [self._scan_device(q, handle, scoring) for q in qs]
        with self._packed_run([job]):
            self._packed_launch(job)
            return self._packed_results(job)

    def _packed_start(self, qs, handle, scoring):
        """A packed batch on the current device, up to its first launch: the profiles
        uploaded and every group's result buffers zeroed. Returns a :class:`_PackedJob`
        (:meth:`_packed_launch` queues its passes), or None where the batch does not run
        packed (no 16-bit table, no residues, every query empty)."""
        cp = self._cp
        if cp.cuda.runtime.getDevice() != handle.device:
            raise ValueError("scan must run on the device the targets were prepared on")
        for q in qs:
            self._check_query(q, handle, scoring)
        lengths = [len(q) for q in qs]
        tables = self._tables(handle, scoring) if handle.n and handle.residues else None
        if tables is None or not any(lengths) or tables["s16"] is None:
            return None
        groups = self._chain_groups(lengths, handle, tables["kp"])
        self._pair_stream(handle)   # built (once) before any group's stream reads it
        # every profile is uploaded on the calling thread's stream before any launch:
        # uploaded inside `with stream:` (likely through CuPy's pinned staging), one
        # device of a 2-GPU search waited for the other before its kernels started (3
        # runs of 6); uploaded between the groups' launches, the groups ran one after
        # the other (docs/gpu-notes.md, session 12)
        plans = []
        main = cp.cuda.get_current_stream()
        for sub in groups:
            R, _, prof, info, pinned = _packed_profile([qs[i] for i in sub], tables["P16"],
                                                       tables["kp"], tables["P16_hash"])
            dev = cp.empty(prof.size + info.size, dtype=cp.uint32)
            cp.cuda.runtime.memcpyAsync(dev.data.ptr, pinned.ptr, 4 * dev.size,
                                        cp.cuda.runtime.memcpyHostToDevice, main.ptr)
            # the pinned source stays referenced here until the results are read back
            # (after the copy), even if the memo drops it meanwhile
            plans.append((R, dev[:prof.size].reshape(prof.shape),
                          dev[prof.size:].view(cp.int32).reshape(info.shape), pinned))
        ready = main.record()
        job = _PackedJob(qs, handle, tables, groups, main, plans)
        leases = handle.cache["rowsq2"]["boundary"]
        for g, (sub, (R, prof, info, _)) in enumerate(zip(groups, plans)):
            stream = main if len(groups) == 1 else self._streams[g]
            stream.wait_event(ready)
            boundary = None
            if len(prof) > 1:
                boundary = leases.take()
                job.leased.append(boundary)
            with stream:
                launch, run = self._passes(config.pack_kernel_name(R), prof, info, handle,
                                           tables, len(sub), boundary)
            job.streams.append(stream)
            job.launchers.append((launch, len(prof)))
            job.runs.append(run)
        job.queued = [0] * len(groups)
        return job

    def _packed_launch(self, job, stop=None):
        """Queue every group's passes up to pass ``stop`` (None: all that are left) on its
        stream; the main stream waits for a group once its last pass is queued."""
        for g, ((launch, passes), stream) in enumerate(zip(job.launchers, job.streams)):
            end = passes if stop is None else min(stop, passes)
            if job.queued[g] >= end:
                continue
            with stream:
                for p in range(job.queued[g], end):
                    launch(p)
            job.queued[g] = end
            if end == passes and stream is not job.main:
                job.main.wait_event(stream.record())

    def _packed_results(self, job):
        """Device results of a launched :class:`_PackedJob`, as :meth:`_scan_packed_device`
        gives them (saturated entries rescored in 32 bits)."""
        n = job.handle.n
        out = [None] * len(job.qs)
        for sub, run in zip(job.groups, job.runs):
            scores, counts = self._rescore_flagged(run, [job.qs[i] for i in sub], job.handle,
                                                   job.tables, len(sub))
            for j, qi in enumerate(sub):
                if len(job.qs[qi]):
                    out[qi] = (scores[j * n:(j + 1) * n], None, None, counts[j])
        return out

    def _packed_cut(self, job, top_k):
        """Queue the top-k cut of a launched job on its main stream (:meth:`_queue_cut`,
        led by the groups' saturation counts). Skipped (the cut then follows the results,
        :meth:`_cut`) for top_k None or >= n, top_k above config.SELECT_MAX_K, or an empty
        query."""
        n = job.handle.n
        if not _kernel_cut(top_k, n) or not all(len(q) for q in job.qs):
            return
        with job.main:
            job.cut = self._queue_cut([(run[0], len(sub)) for sub, run in zip(job.groups,
                                                                              job.runs)],
                                      n, top_k, flags=[run[2] for run in job.runs])

    def _packed_finish(self, job, top_k):
        """Candidates per query of a launched job: from its queued cut where there is one
        and nothing saturated, else by :meth:`_cut` on the rescored results."""
        n = job.handle.n
        if job.cut is None or job.cut.arrays()[0].any():
            return self._cut(self._packed_results(job), n, top_k)
        order = [qi for sub in job.groups for qi in sub]
        views = [run[0][j * n:(j + 1) * n] for sub, run in zip(job.groups, job.runs)
                 for j in range(len(sub))]
        out = [None] * len(job.qs)
        for qi, c in zip(order, self._read_cut(job.cut, views, n, top_k, [0] * len(order))):
            out[qi] = c
        return out

    def _chain_groups(self, lengths, handle, kp):
        """config.chain_groups for this device and handle: at most one group per stream,
        and no more groups than boundary-row buffers (8 bytes per residue each, kept with
        the handle) fit in the device memory left, less config.MEMORY_RESERVE (asked only
        when more buffers are wanted than kept: the query costs a driver call)."""
        share = handle.cache.get("chain_share")
        if share is None:
            warps = self._sms * config.BLOCKS_PER_SM * (config.BLOCK // 32)
            share = int(handle.lengths.max()) * warps / max(handle.residues, 1)
            handle.cache["chain_share"] = share
        groups = config.chain_groups(lengths, share, kp, _SMEM_LIMIT,
                                     min(config.CHAIN_GROUPS, len(self._streams)))
        st = handle.cache.get("rowsq2")
        have = max(1, st["boundary"].idle() if st else 0)
        if len(groups) > have:   # more buffers wanted than kept: as many as the memory holds
            spare = self._free_bytes() - config.MEMORY_RESERVE
            fit = have + max(0, spare // (8 * max(handle.residues, 1)))
            if fit < len(groups):
                groups = config.chain_groups(lengths, share, kp, _SMEM_LIMIT, fit)
        return groups

    def _free_bytes(self) -> int:
        """Device memory this process could still use: free on the device plus what
        CuPy's pool holds unused."""
        cp = self._cp
        return int(cp.cuda.Device().mem_info[0]) + int(cp.get_default_memory_pool().free_bytes())

    def _check_query(self, q, handle, scoring):
        K = scoring.matrix.shape[0]
        if handle.max_code >= K or (len(q) and int(q.max()) >= K):
            raise ValueError(f"sequence codes must be below the scoring's alphabet size {K} "
                             f"(targets go up to {handle.max_code}, the query to {int(q.max())})")

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
        if tables["s16"] is None:
            self._run32(handle, handle.buckets32, q, tables, scores, None, None, ends=False)
            return scores, None, None, 0
        flagged = cp.empty(n, dtype=cp.int32)
        nflagged = cp.zeros(1, dtype=cp.int32)
        if (self._rows_min_len is not None and m >= self._rows_min_len
                and tables["kp"] * 32 * config.rows_stride(config.ROWS_REGS[-1]) * 4
                <= _SMEM_LIMIT):
            self._run_rows(handle, q, tables, scores, flagged, nflagged)
        else:
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
        """Device ids of every target scoring at least the k-th best score (so ties at the
        cut stay decidable on the host)."""
        cp = self._cp
        if top_k is None or top_k >= n:
            return cp.arange(n, dtype=cp.int64)
        kth = cp.partition(scores, n - top_k)[n - top_k]
        return cp.flatnonzero(scores >= kth)

    def _select(self, res, n, top_k, ids=None):
        """Candidates of one query, selected on the device and copied back alone."""
        cp = self._cp
        scores, qends, tends, nsat = res
        if ids is None:
            ids = self._candidate_ids(scores, n, top_k)
        pick = (lambda a: None if a is None else cp.asnumpy(a[ids]))
        return Candidates(pick(scores), pick(qends), pick(tends), nsat, cp.asnumpy(ids))

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

    def search_batches(self, queries, handle, scoring, *, algorithm="local", ends=False,
                       top_k=None, method="auto"):
        """One :class:`Candidates` per query: the top-k candidates (all with top_k=None),
        ids in the TargetSet order of ``handle``. Chunked handles stream their chunks
        through two device buffers (upload of the next chunk overlaps the current one's
        kernels); multi-device handles run one thread per device; results merge exactly."""
        check_choice("method", method, METHODS)
        check_choice("algorithm", algorithm, ALGORITHMS)
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in queries]
        if isinstance(handle, MultiTargets):
            return self._search_multi(qs, handle, scoring, algorithm, ends, top_k, method)
        if isinstance(handle, ChunkedTargets):
            return self._search_chunked(qs, handle, scoring, algorithm, ends, top_k, method)
        return self._search_resident(qs, handle, scoring, algorithm, ends, top_k, method,
                                     packed=config.PAIR_QUERIES)

    def _search_resident(self, qs, handle, scoring, algorithm, ends, top_k, method, *,
                         packed):
        """search_batches on one resident handle. Local scores of several queries go
        through the packed two-half kernel in batches (:meth:`_pack_batches`); the rest
        one query at a time."""
        if packed and len(qs) >= 2 and not ends and method == "auto" and algorithm == "local":
            out: list = [None] * len(qs)
            alone = []
            for batch in self._pack_batches(qs, handle, scoring):
                if len(batch) < 2:
                    alone += batch
                    continue
                got = self.search_packed([qs[i] for i in batch], handle, scoring, top_k=top_k)
                for i, g in zip(batch, got):
                    out[i] = g
            if alone:
                got = self._search_each([qs[i] for i in alone], handle, scoring, algorithm,
                                        ends, top_k, method)
                for i, g in zip(alone, got):
                    out[i] = g
            return out
        return self._search_each(qs, handle, scoring, algorithm, ends, top_k, method)

    def _pack_batches(self, qs, handle, scoring):
        """Query index batches for the packed kernel, in input order, each within
        config.PACK_SCORE_BYTES; a batch whose plan fills less than config.PACK_MIN_FILL of
        its rows with query rows is returned as single queries (run alone)."""
        n = handle.n
        tables = self._tables(handle, scoring) if n and handle.residues else None
        if tables is None or tables["s16"] is None:
            return [[i] for i in range(len(qs))]
        per = max(1, config.PACK_SCORE_BYTES // max(8 * n, 1))
        out = []
        for lo in range(0, len(qs), per):
            batch = list(range(lo, min(lo + per, len(qs))))
            lengths = [len(qs[i]) for i in batch]
            try:
                R, passes, _ = config.pack_plan(lengths, tables["kp"], _SMEM_LIMIT)
            except ValueError:      # the profile does not fit shared memory
                out += [[i] for i in batch]
                continue
            fill = sum(lengths) / (2 * passes * 32 * R)
            out += [batch] if fill >= config.PACK_MIN_FILL else [[i] for i in batch]
        return out

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

    def _search_chunked(self, qs, handle, scoring, algorithm, ends, top_k, method):
        cp = self._cp
        copy = self._copy_stream
        parts = [[] for _ in qs]
        for q in qs:
            self._check_query(q, handle, scoring)
        pinned = [np.frombuffer(cp.cuda.alloc_pinned_memory(handle.biggest), np.uint8,
                                handle.biggest) for _ in range(2)]
        nxt = self._prepare_chunk(handle, 0, copy, pinned[0])
        for c in range(len(handle.chunks)):
            cur, ready = nxt
            if c + 1 < len(handle.chunks):   # overlaps this chunk's work
                nxt = self._prepare_chunk(handle, c + 1, copy, pinned[(c + 1) % 2])
            cp.cuda.get_current_stream().wait_event(ready)
            start = handle.chunks[c][0]
            # not packed: the packed kernel's stream and boundary buffers (9 bytes per
            # residue) would exceed the max_resident budget a chunked handle stands for
            got = self._search_resident(qs, cur, scoring, algorithm, ends, top_k, method,
                                        packed=False)
            for qi, g in enumerate(got):
                g.ids = g.ids + start
                parts[qi].append(g)
            del cur
        return [Candidates.concat(p) for p in parts]

    def _prepare_chunk(self, handle, c, stream, pinned):
        start, stop = handle.chunks[c]
        off = handle.targets.offsets
        lo, hi = int(off[start]), int(off[stop])
        np.copyto(pinned[:hi - lo], handle.targets.codes[lo:hi])
        ts = TargetSet(pinned[:hi - lo], off[start:stop + 1] - lo)
        with stream:
            dev = self._prepare_resident(ts, sync=False)
        return dev, stream.record()

    def _search_multi(self, qs, handle, scoring, algorithm, ends, top_k, method):
        """search_batches over the devices of a MultiTargets handle: one packed batch per
        device from the calling thread (:meth:`_search_multi_packed`) where every device
        runs the queries as one, else one thread per device."""
        if (config.PAIR_QUERIES and len(qs) >= 2 and not ends and method == "auto"
                and algorithm == "local"
                and all(isinstance(p.handle, DeviceTargets) for p in handle.parts)):
            one = [list(range(len(qs)))]
            for part in handle.parts:
                with self._cp.cuda.Device(part.device):
                    if part.backend._pack_batches(qs, part.handle, scoring) != one:
                        break
            else:
                return self._search_multi_packed(qs, handle, scoring, top_k)
        return self._search_threads(qs, handle, scoring, algorithm, ends, top_k, method)

    def _search_multi_packed(self, qs, handle, scoring, top_k):
        """Every device's packed batch queued from this thread: each device's first passes
        (profile upload, buffers, one launch per group) before any device's other passes,
        then each device's top-k cut and copy back, then the results device by device. The
        threads of :meth:`_search_threads` took turns under the GIL: their first launches
        came 3-4 ms into a 4-GPU search and each device's cut took 3.4-5 ms where one
        thread alone takes 1.2 (docs/gpu-notes.md, session 14)."""
        cp = self._cp
        jobs: list = []
        results = []
        with self._packed_run(jobs):
            for part in handle.parts:
                with cp.cuda.Device(part.device):
                    job = part.backend._packed_start(qs, part.handle, scoring)
                    if job is not None:
                        part.backend._packed_launch(job, 1)
                jobs.append(job)
            for part, job in zip(handle.parts, jobs):
                if job is not None:
                    with cp.cuda.Device(part.device):
                        part.backend._packed_launch(job)
                        part.backend._packed_cut(job, top_k)
            for part, job in zip(handle.parts, jobs):
                with cp.cuda.Device(part.device):
                    if job is None:
                        got = part.backend.search_batches(qs, part.handle, scoring,
                                                          top_k=top_k)
                    else:
                        got = part.backend._packed_finish(job, top_k)
                for g in got:
                    g.ids = part.ids[g.ids]
                results.append(got)
        return [Candidates.concat([r[qi] for r in results]) for qi in range(len(qs))]

    def _search_threads(self, qs, handle, scoring, algorithm, ends, top_k, method):
        results = [None] * len(handle.parts)
        errors = []

        def work(k):
            part = handle.parts[k]
            try:
                with self._cp.cuda.Device(part.device):
                    got = part.backend.search_batches(qs, part.handle, scoring,
                                                      algorithm=algorithm, ends=ends,
                                                      top_k=top_k, method=method)
                for g in got:
                    g.ids = part.ids[g.ids]
                results[k] = got
            except Exception as exc:  # noqa: BLE001  (re-raised in the caller's thread)
                errors.append(exc)

        threads = [threading.Thread(target=work, args=(k,)) for k in range(len(handle.parts))]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        if errors:
            raise errors[0]
        return [Candidates.concat([r[qi] for r in results]) for qi in range(len(qs))]

    def _tables(self, handle, scoring):
        """Pair table (16-bit, packed) and profile table (32-bit) of a scoring, cached."""
        key = scoring._key if hasattr(scoring, "_key") else id(scoring)
        got = handle.cache.get(key)
        if got is not None:
            return got
        with self._lock:
            got = handle.cache.get(key)
            if got is None:
                got = handle.cache[key] = self._build_tables(scoring)
        return got

    def _build_tables(self, scoring):
        cp = self._cp
        S = np.asarray(scoring.matrix, dtype=np.int64)
        K = S.shape[0]
        kp = K + 1
        go, ge = int(scoring.gap_open), int(scoring.gap_extend)
        prof = np.full((kp, kp), _S32_PAD, dtype=np.int64)
        prof[:K, :K] = S
        out = {"kp": kp, "go": go, "ge": ge, "s32": cp.asarray(prof.astype(np.int32).ravel())}
        smax = max(int(S.max()), 0)
        smin = min(int(S.min()), 0)
        # 16-bit lanes hold H + go (biased variants): a target whose best reaches
        # 32767 - smax - go may have wrapped and is rescored (the plain variant could go
        # up to 32767 - smax; one threshold serves both, the lower one).
        threshold = _S16_LIMIT - smax - go
        fits = (kp ** 3 * 4 <= _SMEM_LIMIT and go + ge - smin < 8192 and smax < 8192
                and go < 8192)
        if fits:
            P = np.full((kp, kp), -threshold, dtype=np.int64)
            P[:K, :K] = S
            lo = (P[:, :, None] & 0xFFFF).astype(np.uint32)
            hi = (P[:, None, :] & 0xFFFF).astype(np.uint32)
            pair = (lo | (hi << np.uint32(16))).astype(np.uint32)   # [q][a][b]
            out["s16"] = cp.asarray(pair.ravel())
            # variant 4: two copies interleaved by 16 words (search.cu pair_offset<true>)
            flat = pair.reshape(kp, kp * kp)
            nblk = -(-(kp * kp) // 16)
            blocks = np.zeros((kp, nblk * 16), dtype=np.uint32)
            blocks[:, :kp * kp] = flat
            blocks = blocks.reshape(kp, nblk, 1, 16)
            il = np.concatenate([blocks, blocks], axis=2)           # [q][blk][h][16]
            out["s16il"] = cp.asarray(il.ravel())
            out["il_stride"] = nblk * 32
            out["threshold"] = threshold
            out["neg_go"] = _pack2(-go)
            out["neg_ge"] = _pack2(-ge)
            out["bvec"] = _pack2(go)
            out["P16"] = P
            # P's hash, for the packed-profile memo key (once per table, not per batch)
            out["P16_hash"] = hashlib.blake2b(P.tobytes(), digest_size=16)
            out["neg_go_int"] = (-(go * 65537)) & 0xFFFFFFFF
        else:
            out["s16"] = None
        cp.cuda.get_current_stream().synchronize()   # uploaded before another thread reads
        return out

    def _kernel(self, name, smem):
        return _function(self._module, self._kernels, name, smem)

    def _block(self, cfg):
        if cfg.width == 16 and cfg.variant == 4:
            return 512
        return self._block2 if (cfg.width == 16 and cfg.variant == 3) else config.BLOCK

    def _grid(self, count, group, multi, block=config.BLOCK):
        per_block = block // group
        blocks = (count + per_block - 1) // per_block
        cap = self._sms * config.BLOCKS_PER_SM * (1 if multi else 8)
        return max(1, min(blocks, cap))

    def _qrow(self, q, stride, kp):
        rows = np.full(len(q) + 2 * config.QPAD, (kp - 1) * stride * 4, dtype=np.int32)
        rows[config.QPAD:config.QPAD + len(q)] = q.astype(np.int32) * (stride * 4)
        return self._cp.asarray(rows)

    def _run16(self, handle, q, tables, scores, flagged, nflagged):
        cp = self._cp
        kp = tables["kp"]
        il = any(b.cfg.variant == 4 for b in handle.buckets16)
        if il and tables["s16il"].size * 4 > 200 * 1024:
            raise ValueError("variant 4 needs the interleaved pair table in 200 KB")
        qrow = self._qrow(q, tables["il_stride"] if il else kp * kp, kp)
        table = tables["s16il"] if il else tables["s16"]
        smem = table.size * 4
        m = len(q)
        mr = m + (m & 1)   # boundary slot length (two-row kernels store row pairs)
        keep = []          # boundary buffers stay alive until every stream has joined
        chained = []       # (kernel, its failure word) of the chained launches
        main = cp.cuda.get_current_stream()
        ready = main.record()
        consts = (np.uint32(tables["neg_go"]), np.uint32(tables["neg_ge"]),
                  np.uint32(tables["bvec"]), np.uint32(tables["neg_go_int"]), np.uint32(1),
                  np.int32(tables["go"]), np.int32(tables["threshold"]))
        common = (np.int32(m), table, np.int32(table.size), np.int32(kp), *consts,
                  scores, flagged, nflagged)
        rest = self._streams[1:] or self._streams
        k = 0
        for b in handle.buckets16:
            g = b.cfg.group
            if b.cfg.chained:   # alone on the first stream: it runs longest
                s = self._streams[0]
                bk = self._block(b.cfg)
                grid = max(1, min(-(-b.count // (bk // 32)), self._sms * config.BLOCKS_PER_SM))
                # progress per item, the ticket, then the failure word (search.cu chain_wait)
                counters = cp.zeros(b.count + 2, dtype=cp.int32)
                boundary = cp.empty(b.count * mr * 2, dtype=cp.uint32)
                keep += [counters, boundary]
                chained.append((config.kernel_name(b.cfg), counters[b.count + 1:]))
                s.wait_event(main.record())   # after the counters' memset (queued on main)
                with s:
                    self._kernel(config.kernel_name(b.cfg), smem)(
                        (grid,), (bk,),
                        (handle.codes, handle.offsets, b.pairs, b.items, np.int32(b.count),
                         counters[b.count:], counters[:b.count], qrow, *common, boundary),
                        shared_mem=smem)
                continue
            bk = self._block(b.cfg)
            grid = self._grid(b.count, g, b.cfg.multi, bk)
            boundary = (cp.empty(grid * (bk // g) * 2 * mr * 2, dtype=cp.uint32)
                        if b.cfg.multi else cp.empty(2, dtype=cp.uint32))
            keep.append(boundary)
            s = rest[k % len(rest)]
            k += 1
            s.wait_event(ready)
            with s:
                self._kernel(config.kernel_name(b.cfg), smem)(
                    (grid,), (bk,),
                    (handle.codes, handle.offsets, b.items, np.int32(b.count), qrow, *common,
                     boundary),
                    shared_mem=smem)
        for s in self._streams:
            main.wait_event(s.record())
        main.synchronize()
        for name, failed in chained:
            if int(failed.get()[0]):
                raise BackendError(f"search.cu {name}: a warp waited more than "
                                   f"{self._wait_timeout} s for the tile before its own "
                                   "(the GPU is stalled or shared with a kernel that holds it)")
        del keep

    def _run_rows(self, handle, q, tables, scores, flagged, nflagged):
        """Row-strip kernel: strips of 32*R query rows, one launch per strip, in order."""
        cp = self._cp
        m = len(q)
        kp = tables["kp"]
        plan = config.rows_plan(m)
        P = tables["P16"]
        profs, row0 = [], 0
        for R in plan:
            RS = config.rows_stride(R)
            rows = row0 + np.arange(32 * R).reshape(32, R)
            qc = np.where(rows < m, q[np.minimum(rows, m - 1)], kp - 1)
            prof = np.zeros((kp, 32, RS), dtype=np.uint32)
            prof[..., :R] = (P[qc] & 0xFFFF).astype(np.uint32).transpose(2, 0, 1)
            profs.append(prof.ravel())
            row0 += 32 * R
        sizes = [p.size for p in profs]
        d_prof = cp.asarray(np.concatenate(profs))
        boundary = cp.empty(2 * max(handle.residues, 1) if len(plan) > 1 else 2,
                            dtype=cp.uint32)
        tickets = cp.zeros(len(plan), dtype=cp.int32)
        npairs = handle.rows_pairs.size // 2
        grid = max(1, min(self._sms * config.BLOCKS_PER_SM, -(-npairs // (config.BLOCK // 32))))
        off = 0
        for strip, R in enumerate(plan):
            smem = sizes[strip] * 4
            k = self._kernel(config.rows_kernel_name(R), smem)
            k((grid,), (config.BLOCK,),
              (handle.codes, handle.offsets, handle.rows_pairs, np.int32(npairs),
               tickets[strip:], d_prof[off:], np.int32(kp), np.int32(strip),
               np.int32(len(plan)), np.uint32(tables["neg_ge"]), np.uint32(tables["bvec"]),
               np.uint32(tables["neg_go_int"]), np.uint32(1), np.int32(tables["go"]),
               np.int32(tables["threshold"]), scores, flagged, nflagged, boundary),
              shared_mem=smem)
            off += sizes[strip]
        cp.cuda.get_current_stream().synchronize()
        del d_prof, tickets

    def _run_warp(self, handle, q, tables, scores, qends, tends, *, ends):
        """Paper 003's kernel: one warp per target, 32-column strips, query in shared memory."""
        cp = self._cp
        kp = tables["kp"]
        m = len(q)
        smem = -(-(kp * kp * 4 + m + 64) // 16) * 16
        if smem > 200 * 1024:
            raise ValueError(f"method='warp' keeps the query in shared memory: {m} residues "
                             f"is too long; use method='auto'")
        grid = self._sms * config.BLOCKS_PER_SM
        warps = grid * (config.BLOCK // 32)
        boundary = cp.empty(warps * 2 * m * 2, dtype=cp.int32)
        dummy = cp.empty(1, dtype=cp.int32)
        k = self._kernel(f"sw_warp<{'true' if ends else 'false'}>", smem)
        k((grid,), (config.BLOCK,),
          (handle.codes, handle.offsets, handle.warp_ids, np.int32(handle.n), cp.asarray(q),
           np.int32(m), tables["s32"], np.int32(kp), np.int32(tables["go"]),
           np.int32(tables["ge"]), scores, qends if ends else dummy, tends if ends else dummy,
           boundary), shared_mem=smem)
        cp.cuda.get_current_stream().synchronize()
        del boundary

    def _run32(self, handle, buckets, q, tables, scores, qends, tends, *, ends,
               algorithm="local"):
        cp = self._cp
        kp = tables["kp"]
        qrow = self._qrow(q, kp, kp)
        table = tables["s32"]
        smem = table.size * 4
        m = len(q)
        dummy = cp.empty(1, dtype=cp.int32)
        keep = []          # boundary buffers stay alive until every stream has joined
        main = cp.cuda.get_current_stream()
        ready = main.record()
        for k, b in enumerate(buckets):
            g = b.cfg.group
            grid = self._grid(b.count, g, b.cfg.multi)
            boundary = (cp.empty(grid * (config.BLOCK // g) * 2 * m * 2, dtype=cp.int32)
                        if b.cfg.multi else cp.empty(2, dtype=cp.int32))
            keep.append(boundary)
            s = self._streams[k % len(self._streams)]
            s.wait_event(ready)
            with s:
                self._kernel(config.kernel_name(b.cfg, ends, algorithm), smem)(
                    (grid,), (config.BLOCK,),
                    (handle.codes, handle.offsets, b.items, np.int32(b.count), qrow, np.int32(m),
                     table, np.int32(table.size), np.int32(kp), np.int32(tables["go"]),
                     np.int32(tables["ge"]), scores,
                     qends if ends else dummy, tends if ends else dummy, boundary),
                    shared_mem=smem)
        for s in self._streams:
            main.wait_event(s.record())
        main.synchronize()
        del keep


_PACKED_CACHE: dict = {}
_PACKED_LOCK = threading.Lock()


def _packed_profile(qs, P, kp, P_hash):
    """(R, passes, profile, lane info, pinned memory) of a packed query batch on the host:
    pack_plan's layout, prof[pass][a][t][RS] = S[half A row][a] | S[half B row][a] << 16
    (rows past a query score the padding letter); profile and lane info are consecutive
    views into the pinned memory. Memoized for the last few batches and shared by the
    threads of a multi-device search, so each device only uploads it (building it takes
    tens of ms, which the devices would otherwise pay one after another). ``P_hash``: the
    blake2b state after P's bytes (kept with the scoring's tables)."""
    lengths = [len(q) for q in qs]
    digest = P_hash.copy()
    for q in qs:
        digest.update(len(q).to_bytes(8, "little"))
        digest.update(q.tobytes())
    key = (kp, digest.hexdigest())
    with _PACKED_LOCK:
        got = _PACKED_CACHE.get(key)
        if got is not None:
            return got
        R, passes, halves = config.pack_plan(lengths, kp, _SMEM_LIMIT)
        info, owner, qrow = CudaBackend._pack_lanes(halves, R, passes)
        codes = np.full(owner.shape, kp - 1, dtype=np.intp)
        for h in range(2):
            for qi, _ in halves[h]:
                sel = owner[h] == qi
                rr = qrow[h, sel]
                codes[h, sel] = np.where(rr < lengths[qi],
                                         qs[qi][np.minimum(rr, lengths[qi] - 1)], kp - 1)
        low = (P & 0xFFFF).astype(np.uint32)
        word = low[codes[0]] | (low[codes[1]] << np.uint32(16))
        RS = config.rows_stride(R)
        # profile and lane info in one pinned buffer: every device uploads it with one
        # asynchronous copy (from pageable memory CuPy first copies into pinned staging on
        # the host, ~0.15 ms a megabyte that the device threads take in turns)
        words = passes * kp * 32 * RS
        import cupy
        pinned = cupy.cuda.alloc_pinned_memory(4 * (words + info.size))
        flat = np.frombuffer(pinned, np.uint32, words + info.size)
        prof = flat[:words].reshape(passes, kp, 32, RS)
        prof[...] = 0
        prof[..., :R] = word.reshape(passes, 32, R, kp).transpose(0, 3, 1, 2)
        flat[words:] = info.reshape(-1).view(np.uint32)
        got = (R, passes, prof.reshape(passes, -1), flat[words:].view(np.int32).reshape(passes, -1),
               pinned)
        if len(_PACKED_CACHE) >= 8:
            _PACKED_CACHE.pop(next(iter(_PACKED_CACHE)))
        _PACKED_CACHE[key] = got
        return got


def _function(module, cache, name, smem):
    """A kernel of ``module`` (memoized in ``cache``) allowed ``smem`` bytes of dynamic
    shared memory (above 48 KB only by opting in)."""
    k = cache.get(name)
    if k is None:
        k = cache.setdefault(name, module.get_function(name))
    if smem > 48 * 1024 and k.max_dynamic_shared_size_bytes < smem:
        with _FUNCTION_LOCK:   # raised only, so a concurrent launch never loses its room
            if k.max_dynamic_shared_size_bytes < smem:
                k.max_dynamic_shared_size_bytes = smem
    return k


_FUNCTION_LOCK = threading.Lock()


def _pack2(v: int) -> int:
    h = v & 0xFFFF
    return h | (h << 16)


def _rows(table, width):
    if table is None:
        return config.rows(width)
    sel = tuple(c for c in table if c.width == width)
    bounded = sorted((c for c in sel if c.max_len is not None), key=lambda c: c.max_len)
    last = [c for c in sel if c.max_len is None]
    if len(last) != 1:
        raise ValueError(f"a kernel table needs exactly one unbounded row of width {width}")
    if width == 16 and last[0].group != 32:
        raise ValueError("the unbounded width-16 row runs the chained kernel: group must be 32")
    return (*bounded, last[0])
