"""A database streamed through one device (:class:`~.handles.ChunkedTargets`), in the
order of :func:`~warpalign._backends.stream.schedule`: each chunk read from the host
(from disk for a memory-mapped database, by ``pread``) into pinned buffers on a reader
thread, which also makes the chunk's layout (length order, bucket lists, the packed
kernel's target stream plan: :mod:`.layout`, with ``tuning.chunk_group_min``; once per
chunk and handle, kept); uploaded on the copy stream into its lane's device buffer
(codes, then the index in two copies, then its target stream written by a kernel
there) while the previous chunk computes; its kernels and top-k cut queued on its
lane's streams behind that upload's event (no host wait) before the previous chunk's
cut is read back, so the device is never left waiting for the host between chunks;
searched as a resident handle of its own by the packed multi-query kernel; and the
candidates of every query merged across chunks exactly (``stream.merge_candidates``).
Consecutive chunks run in different lanes (``stream.lane``: device buffer, boundary
rows, streams), so chunk c+1's kernels run beside chunk c's and fill the device while
chunk c's passes drain; chunk c+2 waits for chunk c (``stream.device_order``). The
plan's tail (the longest targets, whose one-warp chains would set a chunk's time) stays
resident and runs in a lane of its own beside all the chunks.

The copy hides behind compute on PCIe (~25 GB/s pinned) once a batch holds about 220
query residues: a chunk uploads about 1.10 bytes per residue (its codes, and 36 bytes of
index per sequence at Swiss-Prot's mean length of 362) against r * Q / 5e12 s of packed
kernel for r residues and Q query residues (docs/ARCHITECTURE.md, "Databases larger
than the GPU").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..base import TargetSet
from ...offsets import runs_within
from ..stream import LANES, Chunk, ChunkReader, lane, merge_candidates, schedule
from .handles import _Leases, gather_targets, laid_flat, with_ends
from .kernels import table_key

#: Chunks read ahead of the one being uploaded (each a pinned buffer of the largest chunk).
READ_AHEAD = 2


@dataclass
class _InFlight:
    """A chunk (or the tail) of one streamed search between its upload and its finish:
    what was read (its pinned buffer is given back at the finish), its resident handle,
    the upload's event, and the batches started (:meth:`StreamedSearch._chunk_start`)."""

    chunk: Chunk
    handle: object
    ready: object
    pending: list = field(default_factory=list)


class StreamedSearch:
    """The chunked search of :class:`~warpalign._backends.cuda.search.CudaBackend` (a
    mixin: it reads the backend's streams and its resident search)."""

    def _chunk_layout(self, handle, chunk: Chunk):
        """(layout, largest code) of a chunk (or the tail) as read, made on the reader
        thread once per handle and slice and kept in ``handle.cache`` (immutable; under
        the lock); its packed target groups end at ``tuning.chunk_group_min`` columns."""
        group_min = self.tuning.chunk_group_min
        key = ("layout", chunk.start, chunk.stop, self._warps(), group_min,
               self.tuning.pair_guide, self._rows16, self._rows32)
        got = handle.cache.get(key)
        if got is None:
            made = (self._layout(chunk.offsets, group_min=group_min),
                    int(chunk.codes.max()) if len(chunk.codes) else -1)
            with self._lock:
                got = handle.cache.setdefault(key, made)
        return got

    def _search_chunked(self, qs, handle, scoring, algorithm, ends, top_k, method):
        """Candidates per query over every chunk of ``handle`` (ids in its TargetSet
        order), equal to one search over the whole target set (``stream`` module)."""
        cp = self._cp
        self._check_queries(qs, handle, scoring)
        count = len(handle.chunks)
        tail = count if handle.tail else None          # the tail's index in the schedule
        parts = ([handle.tail] if handle.tail else []) + list(handle.chunks)
        size = max(int(handle.biggest), 1)
        pinned = [np.frombuffer(cp.cuda.alloc_pinned_memory(size), np.uint8, size)
                  for _ in range(READ_AHEAD + 1 + (tail is not None))]
        tables = {table_key(scoring): self._tables(handle, scoring)}
        # per chunk lane (stream.lane; the tail has buffers of its own): a device buffer,
        # the event after the last work that read it (recorded on the lane's first stream
        # when a chunk finishes), and the boundary-row buffers, given back once a chunk's
        # kernels are queued: the next chunk of the lane queues behind them on the lane's
        # streams (its query groups wait for an event recorded on the first)
        device = [cp.empty(size, dtype=cp.uint8) for _ in range(LANES)]
        last = [None] * LANES
        shared = [_Leases(lambda: cp.empty(2 * size, dtype=cp.uint32)) for _ in range(LANES)]
        copy = self._copy_stream
        streams = [self._lane_streams(k) for k in range(LANES + (tail is not None))]
        live: dict[int, _InFlight] = {}
        got: list[list] = [[] for _ in qs]
        with ChunkReader(handle.targets, parts, pinned,
                         layout=lambda chunk: self._chunk_layout(handle, chunk)) as reader:
            try:
                for step, c in schedule(count, tail is not None):
                    k = lane(c, count)
                    own = k < LANES          # a chunk's lane (else the tail's)
                    if step == "upload":
                        live[c] = self._upload_chunk(
                            next(reader), handle, tables, device[k] if own else None,
                            last[k] if own else None, copy, shared[k] if own else None)
                    elif step == "start":
                        with streams[k][0]:
                            live[c].pending = self._chunk_start(
                                qs, live[c], scoring, algorithm, ends, top_k, method,
                                streams[k], shared[k] if own else None)
                    else:
                        part = live.pop(c)
                        with streams[k][0]:
                            found = self._chunk_finish(qs, part, scoring, algorithm, ends,
                                                       top_k, method)
                            if own:
                                last[k] = streams[k][0].record()
                        part.ready.synchronize()       # (done: its pinned buffer is free)
                        reader.release(part.chunk)
                        for qi, g in enumerate(found):
                            g.ids = np.asarray(g.ids, dtype=np.int64) + part.chunk.start
                            got[qi].append(g)
                        del part
            except BaseException:
                cp.cuda.Device().synchronize()    # nothing queued still reads a buffer
                raise
        return [merge_candidates(p, top_k) for p in got]

    def _ends_from_host(self, qs, handle, scoring, keep: list) -> list:
        """End cells of a streamed search's merged top-k (``keep``: each query's
        Candidates at or above its k-th best, ties kept; ids in ``handle``'s TargetSet
        order), by :meth:`_ends_from_host_flat`. (Each chunk ending its own top-k ended
        chunks x k pairs a query, every chunk's in the stream's path.)"""
        bounds, flat, scores, query = laid_flat(keep)
        return with_ends(keep, bounds,
                         *self._ends_from_host_flat(qs, handle, scoring, query, flat, scores))

    def _ends_from_host_flat(self, qs, handle, scoring, query, flat, scores):
        """End cells of pairs given as arrays (``_batch_ends_flat``'s: ``query`` ascending,
        ``flat`` ids in ``handle``'s TargetSet order) of a streamed handle: their targets
        read from the host (a memory-mapped database: from disk), made resident on the
        current device together, at most a chunk's residues at a time
        (:func:`~warpalign.offsets.runs_within`), and ended there. Returns (query ends,
        target ends). (A query at a time, the four device threads of a 4-GPU search
        making and taking apart ~500 Candidates each under the GIL, this ran 86-98 ms a
        device; as arrays the 4-GPU streamed search of 500 queries, mode full, ran ~15 ms
        shorter, the same hits: docs/gpu-notes.md, session 42.)"""
        query, flat, scores = (np.asarray(a, np.int64) for a in (query, flat, scores))
        qe = np.zeros(flat.size, np.int32)
        te = np.zeros(flat.size, np.int32)
        ids = np.unique(flat)
        offsets = np.asarray(handle.targets.offsets, dtype=np.int64)
        lengths = offsets[ids + 1] - offsets[ids]
        for lo, hi in runs_within(lengths, int(handle.biggest)):
            part = ids[lo:hi]      # ascending, consecutive among the ids: a range of them
            dev = self._prepare_resident(gather_targets(handle.targets, part))
            at = np.flatnonzero((flat >= part[0]) & (flat <= part[-1]))
            qe[at], te[at] = self._batch_ends_flat(qs, dev, scoring, query[at],
                                                   np.searchsorted(part, flat[at]), scores[at])
        return qe, te

    def _upload_chunk(self, chunk, handle, tables, buffer, after, stream, boundary):
        """Queue ``chunk``'s upload on ``stream`` (once the event ``after``, the last work
        that read the device ``buffer``, is done): its codes into ``buffer`` (None: a new
        one), its layout's index, and its packed target stream (``rowsq2_stream``), with
        ``boundary`` the leases of its boundary rows (None: its own). Returns the chunk
        in flight, its handle's caches holding ``tables`` and the target stream."""
        layout, max_code = chunk.layout
        ts = TargetSet(chunk.codes, chunk.offsets)
        if after is not None:
            stream.wait_event(after)
        with stream:
            dev = self._prepare_resident(ts, sync=False, codes=buffer,
                                         score_bytes=handle.score_bytes,
                                         spare_bytes=handle.spare_bytes, layout=layout,
                                         max_code=max_code)
            dev.cache.update(tables)
            dev.cache["rowsq2"] = self._build_pair_stream(dev, sync=False, boundary=boundary)
        return _InFlight(chunk, dev, stream.record())

    @staticmethod
    def _packs(qs, algorithm, ends, top_k, method) -> bool:
        """Whether a resident search of ``qs`` runs packed batches (as
        :meth:`~.search.CudaBackend._iter_resident` decides)."""
        return (len(qs) >= 2 and method == "auto" and algorithm == "local"
                and (not ends or top_k is not None))

    def _chunk_start(self, qs, part, scoring, algorithm, ends, top_k, method, streams,
                     shared):
        """Queue on the current stream (its lane's first), behind ``part``'s upload,
        every packed batch of its chunk: profiles, passes and top-k cut (query groups on
        ``streams``, its lane's); boundary buffers from ``shared`` go back at once (the
        lane's next chunk queues behind these kernels). The batches hold a power of two
        queries at most (``_pack_batches(coarse=True)``): sized by each chunk's own target
        count, the 500 mmseqs2 queries' ~5 batches differed from chunk to chunk (~1,400
        pack plans and 130 profiles a search, ~2.5 s of Python per device thread, four
        threads taking turns; session 26 call D); sized by the largest chunk's, every
        chunk ran 18 (call E). Returns the batches as (query
        indices, job or None: searched at the finish); [(None, None)] where the search
        does not run packed (all of it at the finish)."""
        dev = part.handle
        self._cp.cuda.get_current_stream().wait_event(part.ready)
        if not self._packs(qs, algorithm, ends, top_k, method):
            return [(None, None)]
        pending = []
        for batch in self._pack_batches(qs, dev, scoring, coarse=True):
            job = None
            if len(batch) >= 2:
                job = self._packed_start([qs[i] for i in batch], dev, scoring, top_k,
                                         streams=streams)
            if job is not None:
                self._packed_launch(job)
                self._packed_cut(job, top_k)
                if shared is not None and job.leased:
                    shared.give(job.leased)
                    job.leased = []
            pending.append((batch, job))
        return pending

    def _chunk_finish(self, qs, part, scoring, algorithm, ends, top_k, method):
        """Candidates per query of a started chunk (ids in its own numbering): each packed
        batch's cut read back (:meth:`_packed_finish`; end cells for ``ends``), the rest
        searched here as :meth:`_iter_resident` searches them."""
        dev = part.handle
        out: list = [None] * len(qs)
        for batch, job in part.pending:
            if batch is None:
                return self._search_resident(qs, dev, scoring, algorithm, ends, top_k,
                                             method, packed=True)
            sub = [qs[i] for i in batch]
            if len(batch) < 2:
                found = self._search_each(sub, dev, scoring, algorithm, ends, top_k, method)
            else:
                if job is None:
                    found = self._cut([self._scan_device(q, dev, scoring) for q in sub],
                                      dev.n, top_k)
                else:
                    with self._packed_run([job]):
                        found = self._packed_finish(job, top_k)
                if ends:
                    found = self._batch_ends(sub, dev, scoring, found)
            for qi, g in zip(batch, found):
                out[qi] = g
        return out

