"""The host side of a resident target set's layout: its length buckets (one per row of the
kernel table), the row and warp kernels' id lists, and the packed kernel's target stream
plan (non-empty targets longest first, in groups of guided sizes). Pure NumPy, no device:
the streamed search makes the layout of chunk c+1 on its reader thread while chunk c is
searched, keeps it with the handle (immutable: every search of the handle reads the same
one), and CI tests it.

Every int32 list lies in one array (``words``) and every int64 list in another
(``longs``), each list at a multiple of :data:`ALIGN` elements, so a target set's index
uploads as two copies and each list is a view of them on the device.

Example:
    >>> from warpalign._backends.cuda import config
    >>> lay = make_layout(np.array([0, 3, 3, 10]), config.rows(16), config.rows(32),
    ...                   warps=8, group_min=4, guide=2)
    >>> lay.n, lay.residues, lay.pair_count, lay.total
    (3, 10, 2, 10)
    >>> lay.words[lay.pair_ids].tolist(), lay.longs[lay.sstart].tolist()
    ([2, 0], [0, 7, 10])
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..base import ReadOnlyMemo
from .config import KernelConfig, Tuning, resident_warps, rows
from ...offsets import running_sums

#: Elements each list of ``words`` (int32) and ``longs`` (int64) starts at a multiple of
#: (256 bytes of words), as a separate allocation would.
ALIGN = 64


@dataclass(frozen=True)
class BucketLayout:
    """One length bucket: ``items`` (a slice of the layout's words) holds the pairs (2 per
    item, -1 pads) of a width-16 row or the ids of a width-32 row; ``count`` pairs or
    targets; a chained row's ``work`` slice holds (pair, tile) per work item and ``count``
    is their number."""

    cfg: KernelConfig
    items: slice
    count: int
    max_len: int
    work: slice | None = None


@dataclass(frozen=True)
class Layout:
    """A target set's layout (:func:`make_layout`); the arrays are read-only."""

    n: int
    residues: int
    lengths: np.ndarray           # int64 [n]
    words: np.ndarray             # int32: every id list below
    longs: np.ndarray             # int64: offsets, then the target stream's starts
    buckets16: tuple[BucketLayout, ...]
    buckets32: tuple[BucketLayout, ...]
    rows_pairs: slice             # all targets in pairs, longest first (-1 pads)
    warp_ids: slice               # all targets, longest first
    pair_ids: slice               # the target stream: non-empty targets, longest first
    gfirst: slice                 # first stream position of each group (ngroups + 1)
    offsets: slice                # longs: n + 1 offsets from 0
    sstart: slice                 # longs: start column of each stream target (+ total)
    gstart: slice                 # longs: start column of each group (ngroups + 1)
    pair_count: int
    ngroups: int
    total: int                    # columns of the target stream (non-empty residues)


class _Lists:
    """Lists laid end to end, each at a multiple of ALIGN elements."""

    def __init__(self, dtype):
        self._dtype = dtype
        self._parts: list[np.ndarray] = []
        self._size = 0

    def add(self, a) -> slice:
        a = np.asarray(a, dtype=self._dtype).ravel()
        at = -(-self._size // ALIGN) * ALIGN
        if at > self._size:
            self._parts.append(np.zeros(at - self._size, dtype=self._dtype))
        self._parts.append(a)
        self._size = at + len(a)
        return slice(at, at + len(a))

    def array(self) -> np.ndarray:
        out = np.concatenate(self._parts) if self._parts else np.zeros(0, self._dtype)
        out.setflags(write=False)
        return out


def pair_groups(sstart: np.ndarray, group_min: int, span: int) -> np.ndarray:
    """Group bounds (indices into the stream's targets, from 0 to their count) of the
    packed kernel's target stream with target starts ``sstart`` (count + 1, from 0): each
    group of whole targets at least max(``group_min``, columns left / ``span``) columns
    (the last ones may be shorter), so groups shrink toward the end for the dynamic
    ticket. ``span``: the guide times the device's resident warps.

    Example:
        >>> pair_groups(np.array([0, 50, 90, 100, 105, 108]), 10, 2).tolist()
        [0, 2, 3, 5]
    """
    s = np.asarray(sstart, dtype=np.int64)
    count, total = len(s) - 1, int(s[-1])
    # where a group starting at each target would end (one searchsorted for all: its
    # size depends on its start only), then the chain from target 0 followed (element by
    # element: ~43,000 groups of a Swiss-Prot-sized database, 30 ms where a list of all
    # 570,000 ends took 57)
    at = s[:-1]
    ends = np.searchsorted(s, at + np.maximum((total - at) // span, group_min), "left")
    np.clip(ends, np.arange(1, count + 1), count, out=ends)
    bounds = np.empty(count + 1, dtype=np.int64)
    bounds[0] = 0
    k = g = 0
    step = ends.item
    while k < count:
        k = step(k)
        g += 1
        bounds[g] = k
    return bounds[:g + 1].copy()


def _buckets(rows, lengths, order, words: _Lists, *, paired) -> list[BucketLayout]:
    sorted_len = lengths[order]
    out, lo = [], 0
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
        top = int(lengths[ids].max())
        if cfg.chained:
            pl = lengths[items.clip(0)] * (items >= 0)
            ntiles = -(-pl.reshape(-1, 2).max(axis=1) // (cfg.group * cfg.regs))
            work = np.stack([np.repeat(np.arange(count), ntiles),
                             np.concatenate([np.arange(k) for k in ntiles])], axis=1)
            out.append(BucketLayout(cfg, words.add(items), len(work), top,
                                    words.add(work.astype(np.int32))))
            continue
        out.append(BucketLayout(cfg, words.add(items), count, top))
    # multi-pass and long buckets first, so their long items overlap the short ones
    out.sort(key=lambda b: (not b.cfg.multi, -b.max_len))
    return out


def stable_order(lengths: np.ndarray, descending: bool = False) -> np.ndarray:
    """``np.argsort(lengths)`` (``-lengths`` when ``descending``) with ``kind="stable"``,
    by NumPy's radix sort on 16-bit keys where every length fits (a Swiss-Prot-sized
    database: ~10 ms instead of ~50 for each order; the same indices).

    Example:
        >>> stable_order(np.array([3, 1, 3, 0]), descending=True).tolist()
        [0, 2, 1, 3]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size and 0 <= int(lengths.min()) and int(lengths.max()) <= 0xFFFF:
        key = lengths.astype(np.uint16)
        return np.argsort(0xFFFF - key if descending else key, kind="stable")
    return np.argsort(-lengths if descending else lengths, kind="stable")


def make_layout(offsets, rows16, rows32, *, warps: int, group_min: int,
                guide: int) -> Layout:
    """The layout of targets with ``offsets`` (n + 1, from 0) for the kernel table's rows
    of width 16 and 32 (``config.rows``) on a device of ``warps`` resident warps, the
    target stream grouped by :func:`pair_groups` (``group_min``, ``guide``: the backend's
    tuning)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    words, longs = _Lists(np.int32), _Lists(np.int64)
    order = stable_order(lengths)
    b16 = _buckets(rows16, lengths, order, words, paired=True)
    b32 = _buckets(rows32, lengths, order, words, paired=False)
    desc = order[::-1]
    rp = np.full(2 * ((len(desc) + 1) // 2), -1, dtype=np.int32)
    rp[:len(desc)] = desc
    rows_pairs, warp_ids = words.add(rp), words.add(desc)
    # the packed kernel's stream: non-empty targets longest first, back to back
    stream = stable_order(lengths, descending=True)
    stream = stream[lengths[stream] > 0]
    sstart = running_sums(lengths[stream])
    bounds = pair_groups(sstart, group_min, guide * warps)
    pair_ids, gfirst = words.add(stream), words.add(bounds)
    off, ss, gs = longs.add(offsets - offsets[0]), longs.add(sstart), longs.add(sstart[bounds])
    lengths.setflags(write=False)
    return Layout(len(lengths), int(lengths.sum()), lengths, words.array(), longs.array(),
                  tuple(b16), tuple(b32), rows_pairs, warp_ids, pair_ids, gfirst, off, ss,
                  gs, len(stream), len(bounds) - 1, int(sstart[-1]))


#: Resident layouts of read-only offsets (an opened database's memory map), per rows,
#: warps and tuning: made once per process, so that one made ahead (:func:`prefetch`)
#: serves the engine's upload, and a later handle of the same database skips it.
_resident = ReadOnlyMemo(2)


def resident_layout(offsets, rows16, rows32, *, warps: int, group_min: int,
                    guide: int) -> Layout:
    """:func:`make_layout`, remembered for read-only ``offsets``
    (:class:`~warpalign._backends.base.ReadOnlyMemo`: computed once however many threads
    ask at once)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    key = (tuple(rows16), tuple(rows32), int(warps), int(group_min), int(guide))
    return _resident.get([offsets], key, lambda: make_layout(
        offsets, rows16, rows32, warps=warps, group_min=group_min, guide=guide))


def prefetch(offsets, multiprocessors: int) -> Layout:
    """The resident layout a default ``CudaBackend`` (the configuration's kernel table and
    :class:`~.config.Tuning`) makes for ``offsets`` on a device of ``multiprocessors``
    SMs, made now (remembered for read-only offsets). The command line's search makes it
    on its main thread while CuPy loads on the warm-up thread (~0.12 s of the 500-query
    search's start on an H100 host, session 24), the device's SM count from the driver
    (:func:`~warpalign._backends.registry.device_facts`)."""
    tuning = Tuning()
    return resident_layout(offsets, rows(16), rows(32), warps=resident_warps(multiprocessors),
                           group_min=tuning.pair_group_min, guide=tuning.pair_guide)
