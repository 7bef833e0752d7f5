"""A database streamed through one device (:class:`~.handles.ChunkedTargets`): each
chunk read from the host (from disk for a memory-mapped database) into pinned buffers on
a worker thread, uploaded on the copy stream into one of two device buffers while the
previous chunk is searched, then searched as a resident handle of its own by the same
code as a database that fits (the packed multi-query kernel for a batch of queries), and
the candidates of every query merged across chunks exactly (``stream.merge_candidates``).

When the copy hides behind compute (PCIe, H100): a chunk of r residues and s sequences
uploads 1 byte per residue and about 24 per sequence (offsets, the two buckets' id
lists, the row kernel's pairs, the warp kernel's ids), 1.07 bytes per residue at
Swiss-Prot's mean length of 362, so at ~25 GB/s the copy takes r * 1.07 / 25e9 s.
Searching the chunk for queries of Q residues in all takes r * Q / 5e12 s at the packed
kernel's ~5,000 GCUPS. The copy hides once Q >= 5e12 * 1.07 / 25e9, about 210 query
residues: a single protein of average length; the 20 standard queries (41,752 residues)
leave the copy 0.5% of the compute. The chunk's upload runs on the copy stream while
the previous chunk computes, so above that it costs nothing. What does not overlap is
per chunk: the host side of its upload (length order and bucket lists, a few ms per
50 K sequences), the packed target stream built on the device, and each batch's top-k
cut and copy back: at a limit of 1/8 of the Swiss-Prot-sized database's resident cost
(16 chunks) that is of the order of 16 x 5 ms against ~1.6 s of compute. Reading from
disk runs on the reader thread ahead of the device (``READ_AHEAD`` chunks): from an
NVMe disk at ~3 GB/s it hides for Q >= 5e12 / 3e9, about 1,700 query residues (from
the page cache, at ~10 GB/s, about 500).
"""

from __future__ import annotations

import numpy as np

from ..base import TargetSet
from ..stream import ChunkReader, merge_candidates
from .handles import _Tables

#: Chunks read ahead of the one being uploaded (each a pinned buffer of the largest chunk).
READ_AHEAD = 2


class StreamedSearch:
    """The chunked search of :class:`~warpalign._backends.cuda.search.CudaBackend` (a
    mixin: it reads the backend's streams and its resident search)."""

    def _search_chunked(self, qs, handle, scoring, algorithm, ends, top_k, method):
        """Candidates per query over every chunk of ``handle`` (ids in its TargetSet
        order), equal to one search over the whole target set (``stream`` module)."""
        cp = self._cp
        for q in qs:
            self._check_query(q, handle, scoring)
        copy = self._copy_stream
        main = cp.cuda.get_current_stream()
        size = max(int(handle.biggest), 1)
        pinned = [np.frombuffer(cp.cuda.alloc_pinned_memory(size), np.uint8, size)
                  for _ in range(READ_AHEAD + 1)]
        device = [cp.empty(size, dtype=cp.uint8) for _ in range(2)]
        searched = [None, None]   # per device buffer: the event after the search reading it
        tables: dict = {}         # the scoring's tables, made once, used by every chunk
        parts: list[list] = [[] for _ in qs]
        count = len(handle.chunks)
        with ChunkReader(handle.targets, handle.chunks, pinned) as reader:
            nxt = self._upload_chunk(next(reader), handle, device[0], None, copy)
            for c in range(count):
                chunk, cur, ready = nxt
                main.wait_event(ready)
                ready.synchronize()            # its pinned buffer may be read again
                reader.release(chunk)
                if c + 1 < count:              # uploads while this chunk is searched
                    nxt = self._upload_chunk(next(reader), handle, device[(c + 1) % 2],
                                             searched[(c + 1) % 2], copy)
                cur.cache.update(tables)
                got = self._search_resident(qs, cur, scoring, algorithm, ends, top_k,
                                            method, packed=True)
                tables.update((k, v) for k, v in cur.cache.items() if isinstance(v, _Tables))
                searched[c % 2] = main.record()
                for qi, g in enumerate(got):
                    g.ids = np.asarray(g.ids, dtype=np.int64) + chunk.start
                    parts[qi].append(g)
                del cur
        return [merge_candidates(p, top_k) for p in parts]

    def _upload_chunk(self, chunk, handle, buffer, after, stream):
        """Queue ``chunk``'s upload into the device ``buffer`` on ``stream`` (once the
        event ``after``, the last search that read the buffer, is done) and make its
        resident handle. Returns (chunk, handle, the upload's event)."""
        ts = TargetSet(chunk.codes, chunk.offsets)
        if after is not None:
            stream.wait_event(after)
        with stream:
            dev = self._prepare_resident(ts, sync=False, codes=buffer,
                                         score_bytes=handle.score_bytes,
                                         spare_bytes=handle.spare_bytes)
        return chunk, dev, stream.record()
