"""The CUDA search's per-query launches (``search.cu``): the width-16 target kernels
(``sw_s16x2r2`` per length bucket, ``sw_s16x2r2_chain`` for the longest targets), the
32-bit kernel (``sw_s32``: rescoring, ends, global and semiglobal) and paper 003's
warp-per-alignment kernel (``sw_warp``), with the scoring's tables they read."""

from __future__ import annotations

import hashlib
import threading

import numpy as np

# by full name: "from . import config" goes through the package, whose __init__ imports this
import warpalign._backends.cuda.config as config  # noqa: PLR0402

from ...errors import BackendError
from .handles import _Tables
from .loader import get_functions

_FILE = "search.cu"
_S16_LIMIT = 32767
_S32_PAD = -(1 << 28)      # score of a padding letter in 32-bit lanes
_SMEM_LIMIT = 100 * 1024    # keep two blocks per SM


class KernelRuns:
    """The launches of :class:`~warpalign._backends.cuda.search.CudaBackend` for one query
    (a mixin: it reads the backend's streams, kernels and device facts)."""

    def _tables(self, handle, scoring):
        """Pair table (16-bit, packed) and profile table (32-bit) of a scoring, cached."""
        key = table_key(scoring)
        got = handle.cache.get(key)
        if got is not None:
            return got
        with self._lock:
            got = handle.cache.get(key)
            if got is None:
                got = handle.cache[key] = self._build_tables(scoring)
        return got

    def _build_tables(self, scoring) -> _Tables:
        cp = self._cp
        S = np.asarray(scoring.matrix, dtype=np.int64)
        K = S.shape[0]
        kp = K + 1
        go, ge = int(scoring.gap_open), int(scoring.gap_extend)
        prof = np.full((kp, kp), _S32_PAD, dtype=np.int64)
        prof[:K, :K] = S
        s32 = cp.asarray(prof.astype(np.int32).ravel())
        smax = max(int(S.max()), 0)
        smin = min(int(S.min()), 0)
        # 16-bit lanes hold H + go: a target whose best reaches 32767 - smax - go may have
        # wrapped and is rescored
        threshold = _S16_LIMIT - smax - go
        fits = (kp ** 3 * 4 <= _SMEM_LIMIT and go + ge - smin < 8192 and smax < 8192
                and go < 8192)
        if not fits:
            cp.cuda.get_current_stream().synchronize()
            return _Tables(kp, go, ge, s32)
        P = np.full((kp, kp), -threshold, dtype=np.int64)
        P[:K, :K] = S
        lo = (P[:, :, None] & 0xFFFF).astype(np.uint32)
        hi = (P[:, None, :] & 0xFFFF).astype(np.uint32)
        pair = (lo | (hi << np.uint32(16))).astype(np.uint32)   # [q][a][b]
        tables = _Tables(kp, go, ge, s32, s16=cp.asarray(pair.ravel()), threshold=threshold,
                         neg_go=_pack2(-go), neg_ge=_pack2(-ge), bvec=_pack2(go), P16=P,
                         P16_hash=hashlib.blake2b(P.tobytes(), digest_size=16),
                         neg_go_int=(-(go * 65537)) & 0xFFFFFFFF)
        cp.cuda.get_current_stream().synchronize()   # uploaded before another thread reads
        return tables

    def _kernel(self, name, smem):
        """A kernel of ``search.cu`` (compiled on first use, :meth:`_need`) allowed ``smem``
        bytes of dynamic shared memory (above 48 KB only by opting in)."""
        k = self._kernels.get(name)
        if k is None:
            k = self._need([name])[name]
        if smem > 48 * 1024 and k.max_dynamic_shared_size_bytes < smem:
            with _FUNCTION_LOCK:   # raised only, so a concurrent launch never loses its room
                if k.max_dynamic_shared_size_bytes < smem:
                    k.max_dynamic_shared_size_bytes = smem
        return k

    def _need(self, names):
        """The backend's kernels, with ``names`` among them: those not loaded yet are
        compiled (all at once) or read from the disk cache (``loader.get_functions``)."""
        missing = [n for n in dict.fromkeys(names) if n not in self._kernels]
        if missing:
            got = get_functions(_FILE, missing, self._defines())
            with self._lock:
                for n, k in got.items():
                    self._kernels.setdefault(n, k)
        return self._kernels

    def _block(self, cfg):
        return self._block2 if cfg.width == 16 else config.BLOCK

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
        kp = tables.kp
        qrow = self._qrow(q, kp * kp, kp)
        table = tables.s16
        smem = table.size * 4
        m = len(q)
        mr = m + (m & 1)   # boundary slot length (two-row kernels store row pairs)
        keep = []          # boundary buffers stay alive until every stream has joined
        chained = []       # (kernel, its failure word) of the chained launches
        main = cp.cuda.get_current_stream()
        ready = main.record()
        consts = (np.uint32(tables.neg_go), np.uint32(tables.neg_ge),
                  np.uint32(tables.bvec), np.uint32(tables.neg_go_int), np.uint32(1),
                  np.int32(tables.go), np.int32(tables.threshold))
        common = (np.int32(m), table, np.int32(table.size), np.int32(kp), *consts,
                  scores, flagged, nflagged)
        rest = self._streams[1:] or self._streams
        self._need([config.kernel_name(b.cfg) for b in handle.buckets16])
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

    def _run_warp(self, handle, q, tables, scores, qends, tends, *, ends):
        """Paper 003's kernel: one warp per target, 32-column strips, query in shared memory."""
        cp = self._cp
        kp = tables.kp
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
           np.int32(m), tables.s32, np.int32(kp), np.int32(tables.go),
           np.int32(tables.ge), scores, qends if ends else dummy, tends if ends else dummy,
           boundary), shared_mem=smem)
        cp.cuda.get_current_stream().synchronize()
        del boundary

    def _run32(self, handle, buckets, q, tables, scores, qends, tends, *, ends,
               algorithm="local", first_stream=0, join=True):
        """The 32-bit kernels of ``buckets`` on the calling thread's streams (bucket k on
        stream first_stream + k). ``join=False`` returns without waiting: the caller joins
        the streams and keeps the returned buffers alive until then."""
        cp = self._cp
        kp = tables.kp
        qrow = self._qrow(q, kp, kp)
        table = tables.s32
        smem = table.size * 4
        m = len(q)
        dummy = cp.empty(1, dtype=cp.int32)
        # the query row and boundary buffers stay alive until every stream has joined (a
        # buffer freed early goes back to the pool and the next allocation reuses it)
        keep = [qrow, dummy]
        self._need([config.kernel_name(b.cfg, ends, algorithm) for b in buckets])
        main = cp.cuda.get_current_stream()
        ready = main.record()
        for k, b in enumerate(buckets):
            g = b.cfg.group
            grid = self._grid(b.count, g, b.cfg.multi)
            boundary = (cp.empty(grid * (config.BLOCK // g) * 2 * m * 2, dtype=cp.int32)
                        if b.cfg.multi else cp.empty(2, dtype=cp.int32))
            keep.append(boundary)
            s = self._streams[(first_stream + k) % len(self._streams)]
            s.wait_event(ready)
            with s:
                self._kernel(config.kernel_name(b.cfg, ends, algorithm), smem)(
                    (grid,), (config.BLOCK,),
                    (handle.codes, handle.offsets, b.items, np.int32(b.count), qrow, np.int32(m),
                     table, np.int32(table.size), np.int32(kp), np.int32(tables.go),
                     np.int32(tables.ge), scores,
                     qends if ends else dummy, tends if ends else dummy, boundary),
                    shared_mem=smem)
        if not join:
            return keep
        self._join_streams()
        del keep
        return None

    def _join_streams(self):
        """The current stream waits for the calling thread's streams, then the host for it."""
        main = self._cp.cuda.get_current_stream()
        for s in self._streams:
            main.wait_event(s.record())
        main.synchronize()


_FUNCTION_LOCK = threading.Lock()


def table_key(scoring):
    """The key of a scoring's :class:`_Tables` in a handle's cache."""
    return scoring._key if hasattr(scoring, "_key") else id(scoring)


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
