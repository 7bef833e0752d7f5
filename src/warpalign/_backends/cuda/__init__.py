"""CUDA backend: database search on the GPU (CuPy + NVRTC kernels in ``search.cu``).

``prepare`` uploads the targets once and sorts them into the length buckets of the
kernel table (``config.py``); ``scan`` scores one query against all of them:

* scores: the 16-bit packed DPX kernel (two targets per group of lanes) per bucket, then
  the 32-bit multi-pass kernel rescores every target that could have saturated;
* ``ends=True``: the 32-bit kernel with per-column maxima, which gives the end cell by the
  tie rule (smallest target end, then smallest query end).

Only local alignment runs here so far; global and semiglobal raise ``ValueError``.
Constructing the backend raises :class:`~warpalign.errors.BackendUnavailable` naming the
reason: CuPy missing, no device, or the kernels failed to compile.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...errors import BackendUnavailable
from .. import ALGORITHMS, ScoreBatch, TargetSet, check_choice
from . import config
from .config import KernelConfig

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
    cache: dict = field(default_factory=dict)


class CudaBackend:
    """Smith-Waterman search on one CUDA device (the current CuPy device)."""

    name = "cuda"

    def __init__(self, table: tuple[KernelConfig, ...] | None = None, streams: int = 4):
        try:
            import cupy
        except Exception as exc:  # ImportError, or a CuPy that cannot load its CUDA libraries
            raise BackendUnavailable(
                f"CUDA backend needs CuPy (pip install warpalign[cuda]): {exc}") from exc
        try:
            ndev = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:
            raise BackendUnavailable(f"no CUDA device answers: {exc}") from exc
        if ndev < 1:
            raise BackendUnavailable("no CUDA device answers (device count is 0)")
        self._cp = cupy
        self._rows16 = _rows(table, 16)
        self._rows32 = _rows(table, 32)
        self._names = tuple(dict.fromkeys(
            [config.kernel_name(c) for c in self._rows16]
            + [config.kernel_name(c, ends) for c in self._rows32 for ends in (True, False)]))
        from .loader import get_module
        self._module = get_module(_FILE, self._names)
        dev = cupy.cuda.Device()
        self.device_name = cupy.cuda.runtime.getDeviceProperties(dev.id)["name"].decode()
        self._sms = dev.attributes["MultiProcessorCount"]
        self._streams = [cupy.cuda.Stream(non_blocking=True) for _ in range(max(1, streams))]
        self._kernels: dict[str, object] = {}

    # -- preparation ---------------------------------------------------------------------
    def prepare(self, targets: TargetSet) -> DeviceTargets:
        """Upload the targets once and sort them into the kernel table's length buckets."""
        cp = self._cp
        t0 = time.perf_counter()
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        lengths = np.diff(offsets).astype(np.int64)
        codes = cp.asarray(np.ascontiguousarray(targets.codes, dtype=np.uint8))
        if codes.size == 0:
            codes = cp.zeros(1, dtype=cp.uint8)
        d_offsets = cp.asarray(offsets)
        order = np.argsort(lengths, kind="stable")
        b16 = self._buckets(self._rows16, lengths, order, paired=True)
        b32 = self._buckets(self._rows32, lengths, order, paired=False)
        max_code = int(targets.codes.max()) if len(targets.codes) else -1
        cp.cuda.Device().synchronize()
        return DeviceTargets(cp.cuda.runtime.getDevice(), len(lengths), int(lengths.sum()),
                             codes, d_offsets, lengths, max_code, b16, b32,
                             time.perf_counter() - t0)

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
    def scan(self, query: np.ndarray, handle: DeviceTargets, scoring, *,
             algorithm: str = "local", ends: bool = False) -> ScoreBatch:
        """Scores (and with ``ends`` the end cells) of ``query`` against every target."""
        check_choice("algorithm", algorithm, ALGORITHMS)
        if algorithm != "local":
            raise ValueError(f"the CUDA backend computes local alignments only so far, "
                             f"not {algorithm!r}; use backend='cpu'")
        cp = self._cp
        if cp.cuda.runtime.getDevice() != handle.device:
            raise ValueError("scan must run on the device the targets were prepared on")
        q = np.ascontiguousarray(query, dtype=np.uint8)
        n = handle.n
        m = len(q)
        if n == 0 or m == 0 or handle.residues == 0:
            zeros = np.zeros(n, dtype=np.int32)
            return ScoreBatch(zeros, zeros.copy() if ends else None,
                              zeros.copy() if ends else None, 0)
        K = scoring.matrix.shape[0]
        if handle.max_code >= K or int(q.max()) >= K:
            raise ValueError(f"sequence codes must be below the scoring's alphabet size {K} "
                             f"(targets go up to {handle.max_code}, the query to {int(q.max())})")
        tables = self._tables(handle, scoring)
        scores = cp.zeros(n, dtype=cp.int32)
        if ends:
            qends = cp.zeros(n, dtype=cp.int32)
            tends = cp.zeros(n, dtype=cp.int32)
            self._run32(handle, handle.buckets32, q, tables, scores, qends, tends, ends=True)
            cp.cuda.get_current_stream().synchronize()
            return ScoreBatch(cp.asnumpy(scores), cp.asnumpy(qends), cp.asnumpy(tends), 0)
        if tables["s16"] is None:
            self._run32(handle, handle.buckets32, q, tables, scores, None, None, ends=False)
            return ScoreBatch(cp.asnumpy(scores), None, None, 0)
        flagged = cp.empty(n, dtype=cp.int32)
        nflagged = cp.zeros(1, dtype=cp.int32)
        self._run16(handle, q, tables, scores, flagged, nflagged)
        nsat = int(nflagged.get()[0])
        if nsat:
            multi = self._rows32[-1]
            item = _Bucket(multi, flagged[:nsat], nsat, 0)
            self._run32(handle, [item], q, tables, scores, None, None, ends=False)
        return ScoreBatch(cp.asnumpy(scores), None, None, nsat)

    def _tables(self, handle, scoring):
        """Pair table (16-bit, packed) and profile table (32-bit) of a scoring, cached."""
        key = scoring._key if hasattr(scoring, "_key") else id(scoring)
        got = handle.cache.get(key)
        if got is not None:
            return got
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
        threshold = _S16_LIMIT - smax
        fits = (kp ** 3 * 4 <= _SMEM_LIMIT and go + ge - smin < 8192 and smax < 8192)
        if fits:
            P = np.full((kp, kp), -threshold, dtype=np.int64)
            P[:K, :K] = S
            lo = (P[:, :, None] & 0xFFFF).astype(np.uint32)
            hi = (P[:, None, :] & 0xFFFF).astype(np.uint32)
            pair = (lo | (hi << np.uint32(16))).astype(np.uint32)   # [q][a][b]
            out["s16"] = cp.asarray(pair.ravel())
            out["threshold"] = threshold
            out["neg_go"] = _pack2(-go)
            out["neg_ge"] = _pack2(-ge)
        else:
            out["s16"] = None
        handle.cache[key] = out
        return out

    def _kernel(self, name, smem):
        k = self._kernels.get(name)
        if k is None:
            k = self._module.get_function(name)
            self._kernels[name] = k
        if smem > 48 * 1024 and k.max_dynamic_shared_size_bytes < smem:
            k.max_dynamic_shared_size_bytes = smem
        return k

    def _grid(self, count, group, multi):
        per_block = config.BLOCK // group
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
        qrow = self._qrow(q, kp * kp, kp)
        table = tables["s16"]
        smem = table.size * 4
        m = len(q)
        keep = []          # boundary buffers stay alive until every stream has joined
        main = cp.cuda.get_current_stream()
        ready = main.record()
        common = (np.int32(m), table, np.int32(table.size), np.int32(kp),
                  np.uint32(tables["neg_go"]), np.uint32(tables["neg_ge"]),
                  np.int32(tables["threshold"]), scores, flagged, nflagged)
        rest = self._streams[1:] or self._streams
        k = 0
        for b in handle.buckets16:
            g = b.cfg.group
            if b.cfg.chained:   # alone on the first stream: it runs longest
                s = self._streams[0]
                s.wait_event(ready)
                grid = max(1, min((b.count + 7) // 8, self._sms * config.BLOCKS_PER_SM))
                counters = cp.zeros(b.count + 1, dtype=cp.int32)
                boundary = cp.empty(b.count * m * 2, dtype=cp.uint32)
                keep += [counters, boundary]
                with s:
                    self._kernel(config.kernel_name(b.cfg), smem)(
                        (grid,), (config.BLOCK,),
                        (handle.codes, handle.offsets, b.pairs, b.items, np.int32(b.count),
                         counters[b.count:], counters[:b.count], qrow, *common, boundary),
                        shared_mem=smem)
                continue
            grid = self._grid(b.count, g, b.cfg.multi)
            boundary = (cp.empty(grid * (config.BLOCK // g) * 2 * m * 2, dtype=cp.uint32)
                        if b.cfg.multi else cp.empty(2, dtype=cp.uint32))
            keep.append(boundary)
            s = rest[k % len(rest)]
            k += 1
            s.wait_event(ready)
            with s:
                self._kernel(config.kernel_name(b.cfg), smem)(
                    (grid,), (config.BLOCK,),
                    (handle.codes, handle.offsets, b.items, np.int32(b.count), qrow, np.int32(m),
                     table, np.int32(table.size), np.int32(kp), np.uint32(tables["neg_go"]),
                     np.uint32(tables["neg_ge"]), np.int32(tables["threshold"]), scores,
                     flagged, nflagged, boundary),
                    shared_mem=smem)
        for s in self._streams:
            main.wait_event(s.record())
        main.synchronize()
        del keep

    def _run32(self, handle, buckets, q, tables, scores, qends, tends, *, ends):
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
                self._kernel(config.kernel_name(b.cfg, ends), smem)(
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
