"""The packed multi-query search (``sw_rowsqb``): a batch of queries packed into the two
16-bit halves of a row kernel, the targets streamed through it, query groups on streams
of the call's own, the top-k cut on the device (``top_select``) and the saturated
entries rescored in 32 bits."""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field

import numpy as np

# by full name: "from . import config" goes through the package, whose __init__ imports this
import warpalign._backends.cuda.config as config  # noqa: PLR0402
import warpalign._backends.cuda.topk as topk  # noqa: PLR0402

from ...offsets import running_sums
from ..base import ScoreBatch
from .handles import Candidates, DeviceTargets, _Bucket, _kernel_cut, _Leases
from .kernels import _SMEM_LIMIT


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
    """A top-k cut queued on one device (CudaBackend._queue_cut; read by :mod:`topk`): the pinned buffer its one
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


class PackedSearch:
    """The packed-batch methods of :class:`~warpalign._backends.cuda.search.CudaBackend`
    (a mixin: it reads the backend's streams, kernels and device facts)."""

    def _pair_stream(self, handle):
        """The target stream of sw_rowsq2 (cached per handle): non-empty targets longest
        first, back to back, first columns marked; groups of whole targets with guided
        sizes (large first, ``tuning.pair_group_min`` columns at the end) for the dynamic
        ticket."""
        got = handle.cache.get("rowsq2")
        if got is not None:
            return got
        with self._lock:
            got = handle.cache.get("rowsq2")
            if got is None:
                got = handle.cache["rowsq2"] = self._build_pair_stream(handle)
        return got

    def _build_pair_stream(self, handle, *, sync=True, boundary=None):
        """The target stream of ``handle`` (its layout's plan, :mod:`.layout`) written on
        the current stream by ``rowsq2_stream``. ``sync``: wait for it (else a search
        must wait for the current stream's work first, as a streamed chunk's upload
        event gives); ``boundary``: the :class:`_Leases` of boundary-row buffers to use
        (default: the handle's own)."""
        cp = self._cp
        lay, words, longs = handle.layout
        total = lay.total
        d_ids, d_sstart = words[lay.pair_ids], longs[lay.sstart]
        stream = cp.empty(max(total, 1), dtype=cp.uint8)
        if lay.pair_count:
            grid = max(1, min(-(-lay.pair_count // (config.BLOCK // 32)), self._sms * 8))
            self._kernel("rowsq2_stream", 0)(
                (grid,), (config.BLOCK,),
                (handle.codes, handle.offsets, d_ids, d_sstart, np.int32(lay.pair_count),
                 stream))
        if boundary is None:
            boundary = _Leases(lambda: cp.empty(2 * max(total, 1), dtype=cp.uint32))
        got = {"stream": stream, "ids": d_ids, "gstart": longs[lay.gstart],
               "gfirst": words[lay.gfirst], "ngroups": lay.ngroups, "total": total,
               "boundary": boundary}
        if sync:    # complete before any thread's stream reads it
            cp.cuda.get_current_stream().synchronize()
        return got

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
        k = self._kernel(name, smem)
        prof_at, prof_step = prof.data.ptr, prof.strides[0]
        head = (st["stream"], st["gstart"], st["gfirst"], st["ids"], np.int32(ng))
        tail = (np.int32(tables.kp),)
        rest = (np.uint32(tables.neg_ge), np.uint32(tables.bvec),
                np.uint32(tables.neg_go_int), np.uint32(1), np.int32(tables.go),
                np.int32(tables.threshold), np.int32(n), scores, flagged, nflagged, boundary)

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

    def search_packed(self, queries, handle, scoring, *, top_k=None,
                      host=None) -> list[Candidates]:
        """:meth:`search_paired` with the packed batch kernel (:meth:`scan_packed`).
        ``host``: the batch's host side made beforehand (:meth:`_packed_host`, e.g. on
        another thread while the previous batch ran), else made here."""
        if not isinstance(handle, DeviceTargets):
            raise TypeError("search_packed needs a resident single-device handle")
        qs = [np.ascontiguousarray(q, dtype=np.uint8) for q in queries]
        job = self._packed_start(qs, handle, scoring, top_k, host)
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
        ``top_select`` cut for the batch where top_k allows (:meth:`_queue_cut`), else
        query by query (:func:`topk.cut`)."""
        def on_device(rows):
            done = self._queue_cut([(self._cp.stack(rows), len(rows))], n, top_k)
            _, hits, counts = done.arrays()
            return hits, counts, done.cap

        return topk.cut(self._cp, got, n, top_k, on_device)

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
        kern = self._kernel("top_select", 0)
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

    def _packed_host(self, qs, handle, scoring, seen=None):
        """The host side of a packed batch, no device work: its query groups and each
        group's profile and lane info in pinned memory (:func:`_packed_profile`), or None
        where the batch does not run packed (no 16-bit table, no residues, every query
        empty). Another thread may make it while earlier batches run
        (:meth:`_iter_resident`); the scoring's tables are then already made. ``seen``: a
        dict the devices of one multi-device search share (the same queries and scoring;
        their own dict, one thread): the queries' largest code and each query group's
        profile, made for the first device, taken by the others (checking the 500 mmseqs2
        queries one by one and hashing them for the memo: ~4 ms a device on the dev box)."""
        seen = {} if seen is None else seen
        if "largest" not in seen:
            seen["largest"] = largest_code(qs)
        self._check_queries(qs, handle, scoring, seen["largest"])
        lengths = [len(q) for q in qs]
        tables = self._tables(handle, scoring) if handle.n and handle.residues else None
        if tables is None or not any(lengths) or tables.s16 is None:
            return None
        groups = self._chain_groups(lengths, handle, tables.kp)
        profiles = []
        for sub in groups:
            key = ("profile", tables.kp, tuple(sub))
            if key not in seen:
                seen[key] = _packed_profile([qs[i] for i in sub], tables.P16, tables.kp,
                                            tables.P16_hash)
            profiles.append(seen[key])
        return tables, groups, profiles

    def _packed_start(self, qs, handle, scoring, top_k=None, host=None, streams=None,
                      seen=None):
        """A packed batch on the current device, up to its first launch: the profiles
        uploaded and every group's result buffers zeroed. Returns a :class:`_PackedJob`
        (:meth:`_packed_launch` queues its passes), or None where the batch does not run
        packed (:meth:`_packed_host`). ``top_k``: the cut to come, so its kernel compiles
        with the others; ``host``: the batch's :meth:`_packed_host`, else made here;
        ``streams``: the query groups' streams where there are several (default
        :attr:`_streams`); ``seen``: as :meth:`_packed_host`'s."""
        cp = self._cp
        if cp.cuda.runtime.getDevice() != handle.device:
            raise ValueError("scan must run on the device the targets were prepared on")
        if host is None:
            host = self._packed_host(qs, handle, scoring, seen)
        if host is None:
            return None
        tables, groups, profiles = host
        # the kernels this batch launches, compiled at once where missing
        names = ["rowsq2_stream"] + [config.pack_kernel_name(p[0]) for p in profiles]
        if _kernel_cut(top_k, handle.n) and all(len(q) for q in qs):
            names.append("top_select")
        self._need(names)
        self._pair_stream(handle)   # built (once) before any group's stream reads it
        # every profile is uploaded on the calling thread's stream before any launch:
        # uploaded inside `with stream:` (likely through CuPy's pinned staging), one
        # device of a 2-GPU search waited for the other before its kernels started (3
        # runs of 6); uploaded between the groups' launches, the groups ran one after
        # the other (docs/gpu-notes.md, session 12)
        plans = []
        main = cp.cuda.get_current_stream()
        for R, _, prof, info, pinned in profiles:
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
            stream = main if len(groups) == 1 else (streams or self._streams)[g]
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
        if self._on_packed is not None:
            self._on_packed(handle.n, len(qs))
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
        and nothing saturated (:func:`topk.packed_cut`), else by :meth:`_cut` on the
        rescored results."""
        n = job.handle.n
        flags, hits, counts = (None, None, None) if job.cut is None else job.cut.arrays()
        if job.cut is None or flags.any():
            return self._cut(self._packed_results(job), n, top_k)
        return topk.packed_cut(self._cp, len(job.qs), job.groups,
                               [run[0] for run in job.runs], n, top_k, hits, counts,
                               job.cut.cap)

    def _chain_groups(self, lengths, handle, kp):
        """config.device_chain_groups for this device and handle: at most one group per
        stream (and ``tuning.chain_groups``), the boundary buffers kept with the handle."""
        share = handle.cache.get("chain_share")
        if share is None:
            share = config.chain_share(int(handle.lengths.max()), handle.residues, self._sms)
            handle.cache["chain_share"] = share
        st = handle.cache.get("rowsq2")
        free_bytes = self._free_bytes
        if handle.spare_bytes is not None:     # the memory limit's share (prepare)
            def free_bytes():
                return min(self._free_bytes(), config.MEMORY_RESERVE + handle.spare_bytes)
        return config.device_chain_groups(
            lengths, share, kp, _SMEM_LIMIT,
            most=min(self.tuning.chain_groups, len(self._streams)),
            buffers=st["boundary"].idle() if st else 0, residues=handle.residues,
            free_bytes=free_bytes)


def largest_code(qs) -> int:
    """The largest code of the queries ``qs`` (-1 where all are empty), in one pass over
    them joined."""
    joined = np.concatenate([np.asarray(q).reshape(-1) for q in qs]) if len(qs) else ()
    return int(joined.max()) if len(joined) else -1


_PACKED_CACHE: dict = {}
_PACKED_LOCK = threading.Lock()
#: The profile memo's bounds: entries and pinned bytes (least recently used out). A
#: streamed search runs the same batches chunk after chunk (``_pack_batches(coarse=
#: True)``), each batch one profile per query group: the 500 mmseqs2 queries take ~10 a
#: chunk, which 8 entries would rebuild for every chunk (7-11 ms each; a 4-GPU search's
#: device threads build them in turns under the lock: session 26 call B built 132 a
#: search). A profile costs ~50 bytes a query residue.
PACKED_MEMO_ENTRIES = 64
PACKED_MEMO_BYTES = 256 << 20


def _packed_profile(qs, P, kp, P_hash):
    """(R, passes, profile, lane info, pinned memory) of a packed query batch on the host:
    pack_plan's layout, prof[pass][a][t][RS] = S[half A row][a] | S[half B row][a] << 16
    (rows past a query score the padding letter); profile and lane info are consecutive
    views into the pinned memory (read-only). Memoized (:data:`PACKED_MEMO_ENTRIES`,
    :data:`PACKED_MEMO_BYTES`) and shared by the threads of a multi-device search, so each
    device only uploads it (building it takes tens of ms, which the devices would
    otherwise pay one after another). ``P_hash``: the blake2b state after P's bytes (kept
    with the scoring's tables)."""
    lengths = [len(q) for q in qs]
    digest = P_hash.copy()
    for q in qs:
        digest.update(len(q).to_bytes(8, "little"))
        digest.update(q.tobytes())
    key = (kp, digest.hexdigest())
    with _PACKED_LOCK:
        got = _PACKED_CACHE.pop(key, None)
        if got is not None:
            _PACKED_CACHE[key] = got          # (the most recently used last)
            return got
        R, passes, halves = config.pack_plan(lengths, kp, _SMEM_LIMIT)
        info, owner, qrow = PackedSearch._pack_lanes(halves, R, passes)
        # every row's letter at once (rows past a query's end, and rows of no query, take
        # the padding letter): the queries' codes joined, read at (start of owner) + row
        size = np.asarray(lengths + [0], np.int64)          # owner -1 reads a length of 0
        start = running_sums(size)[:-1]
        joined = np.concatenate([*(np.asarray(q, np.intp) for q in qs), [kp - 1]])
        real = qrow < size[owner]
        codes = np.where(real, joined[np.where(real, start[owner] + qrow, -1)], kp - 1)
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
        for view in got[2:4]:
            view.setflags(write=False)        # shared by every device and thread
        size = 4 * flat.size
        while _PACKED_CACHE and (len(_PACKED_CACHE) >= PACKED_MEMO_ENTRIES or size + sum(
                4 * v[2].size + 4 * v[3].size for v in _PACKED_CACHE.values())
                > PACKED_MEMO_BYTES):
            _PACKED_CACHE.pop(next(iter(_PACKED_CACHE)))
        _PACKED_CACHE[key] = got
        return got
