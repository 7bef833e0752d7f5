"""What the CUDA search keeps and passes around: resident target handles (one device,
several devices, chunks streamed from the host), length buckets, a scoring's tables,
candidate results, and the leases of device buffers that calls running at once must not
share."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

import numpy as np

# by full name: "from . import config" goes through the package, whose __init__ imports this
import warpalign._backends.cuda.config as config  # noqa: PLR0402

from ..base import Candidates, TargetSet
from ..stream import candidates
from .config import KernelConfig
from ...offsets import running_sums
from .layout import stable_order


@dataclass(frozen=True)
class _Tables:
    """A scoring's tables on one device (built once per handle, CudaBackend._tables):
    the 32-bit profile table, and where the scoring fits 16 bits the pair table of the
    width-16 kernels with its constants (both halves packed) and the host profile P16 of
    the packed-batch kernel (P16_hash: the blake2b state after its bytes, the packed
    profiles' memo key)."""

    kp: int                   # alphabet size + the padding letter
    go: int
    ge: int
    s32: object               # device int32 [kp * kp]
    s16: object = None        # device uint32 [kp * kp * kp], None: no 16-bit pass
    threshold: int = 0        # a 16-bit score at or above it may have wrapped: rescored
    neg_go: int = 0
    neg_ge: int = 0
    bvec: int = 0
    P16: np.ndarray | None = None
    P16_hash: object = None
    neg_go_int: int = 0


@dataclass
class _Bucket:
    cfg: KernelConfig
    items: object        # device int32: pairs (2 per item) for width 16, ids for width 32
    count: int           # pairs or targets (chained: work items)
    max_len: int
    pairs: object = None # chained: device int32 pairs; items holds (pair, tile) per item


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
    """Handle for targets beyond what the device may hold (``prepare``'s plan, or
    ``max_resident`` residues): kept on the host (a memory-mapped database stays on
    disk) and streamed chunk by chunk for every search (``cuda/streamed.py``), each
    chunk searched as a resident handle of its own. ``max_code`` is -1: each chunk's
    codes are checked as it is uploaded. ``score_bytes``/``spare_bytes``: as
    :class:`DeviceTargets`', for every chunk. ``tail``: the plan's tail
    (:class:`~warpalign._backends.stream.StreamPlan`), searched beside the chunks.
    ``cache`` keeps, per (start, stop) slice, its :class:`~.layout.Layout` and largest
    code (made once by the first search's reader thread; immutable)."""

    targets: TargetSet
    chunks: list
    biggest: int         # residues of the largest chunk or tail (each search's buffers)
    n: int
    residues: int
    max_code: int = -1
    score_bytes: int | None = None
    spare_bytes: int | None = None
    tail: tuple | None = None
    cache: dict = field(default_factory=dict)


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
    Per part: the indices of its targets (ascending) and those targets as a TargetSet
    (:func:`split_ids`, then :func:`gather_targets`)."""
    return [(ids, gather_targets(targets, ids)) for ids in split_ids(targets, count)]


def split_ids(targets: TargetSet, count: int) -> list[np.ndarray]:
    """The indices (ascending) of each part of :func:`split_targets`: longest first, each
    to the part with the fewest residues + sequences so far (ties to the lowest part),
    each part's targets of one length one block of consecutive indices.

    Computed a run of equal lengths at a time: within a run every target costs the same c,
    so part d's successive offers are load_d, load_d + c, load_d + 2c, ..., and the greedy
    choice (the smallest (load, part) each time) gives part d as many of the run's k
    targets as it has among the k smallest offers of all parts, by (offer, part). Which of
    the run's targets a part takes changes neither its load nor its lengths, so each part
    takes its count as one block, the blocks in part order: a database sorted by length
    then splits into a few thousand runs of consecutive targets a part (one per length),
    which :func:`gather_targets` copies a slice each (the greedy's own order interleaved
    the parts: ~97,000 runs a quarter of a Swiss-Prot-sized set, 0.12 s of slice copies a
    part on a device host). Swiss-Prot-sized (516,371 targets, 3,204 lengths) on the
    2-core machine: 0.14 s where a heap step per target took 0.35 s (4 parts)."""
    lengths = np.diff(np.asarray(targets.offsets, dtype=np.int64))
    order = stable_order(lengths, descending=True)
    costs = lengths[order] + 1
    starts = np.flatnonzero(np.r_[True, costs[1:] != costs[:-1]]) if len(costs) else costs
    bounds = np.r_[starts, len(costs)].astype(np.int64)
    load = np.zeros(count, dtype=np.int64)
    parts = np.arange(count, dtype=np.int64)
    assigned = np.empty(len(costs), dtype=np.int32)
    for a, b, c in zip(bounds[:-1].tolist(), bounds[1:].tolist(), costs[bounds[:-1]].tolist()):
        k = b - a
        if k == 1:      # (most runs of a long tail of lengths)
            d = int(np.argmin(load))      # the first smallest: ties to the lowest part
            assigned[a] = d
            load[d] += c
            continue
        # offer x of part d as one key x * count + d: key order is (offer, part) order
        keys = ((load[:, None] + c * np.arange(k, dtype=np.int64)) * count
                + parts[:, None]).ravel()
        took = np.bincount(np.sort(keys)[:k] % count, minlength=count)
        assigned[a:b] = np.repeat(parts, took)
        load += c * took
    part = np.empty(len(lengths), dtype=np.int32)
    part[order] = assigned
    return [np.flatnonzero(part == d) for d in range(count)]


def gather_targets(targets: TargetSet, ids: np.ndarray) -> TargetSet:
    """The targets ``ids`` (ascending) of ``targets`` as a TargetSet of their own, their
    codes copied back to back a run of consecutive ids at a time (a slice copy each: a
    Swiss-Prot-sized quarter in ~90 ms on a 2-core machine, where an index array built
    for every residue and one take needed ~320 ms)."""
    offsets = np.asarray(targets.offsets, dtype=np.int64)
    codes = np.asarray(targets.codes, dtype=np.uint8)
    ids = np.asarray(ids, dtype=np.int64)
    off = running_sums(offsets[ids + 1] - offsets[ids])
    out = np.empty(int(off[-1]), dtype=np.uint8)
    if len(ids):
        cut = np.flatnonzero(np.diff(ids) != 1) + 1
        lo = np.concatenate([[0], cut])
        hi = np.concatenate([cut, [len(ids)]])
        for a, b, src in zip(off[lo].tolist(), off[hi].tolist(), offsets[ids[lo]].tolist()):
            out[a:b] = codes[src:src + b - a]
    return TargetSet(out, off)


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
    owner: np.ndarray | None = None    # each target's part (int32), global order
    local: np.ndarray | None = None    # each target's index within its part

    def __post_init__(self):
        if self.owner is None:
            self.owner = np.empty(self.n, np.int32)
            self.local = np.empty(self.n, np.int64)
            for k, part in enumerate(self.parts):
                self.owner[part.ids] = k
                self.local[part.ids] = np.arange(len(part.ids))


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
    # the memory limit's shares (stream.StreamPlan; None: the tuning's, what is free)
    score_bytes: int | None = None   # most score and flag bytes of one packed batch
    spare_bytes: int | None = None   # most bytes of more query groups' boundary rows
    # (layout.Layout, its words and longs on the device): the index lists are views
    layout: tuple | None = None


def ends_after_scores(algorithm: str, top_k, method: str) -> bool:
    """Whether a multi-device or streamed search finds its end cells after its scores,
    for the merged top-k only (``multi.py``, ``streamed.py``): local, a top-k, method
    auto."""
    return top_k is not None and method == "auto" and algorithm == "local"


def top_candidates(found: list[Candidates], top_k: int) -> list[Candidates]:
    """Each query's candidates at or above its k-th best score (ties kept)."""
    return [c.take(candidates(c.scores, top_k)) for c in found]


def laid_flat(cands: list[Candidates], n: int | None = None):
    """Each query's Candidates laid end to end, as the end-cell passes take them: (bounds,
    ids, scores, query), query q's pairs at ``bounds[q]:bounds[q + 1]``, ``ids`` int64
    (all ``n`` targets where a Candidates has none), ``scores`` int64, ``query`` each
    pair's query index (ascending)."""
    ids = [np.arange(n) if c.ids is None else np.asarray(c.ids, np.int64) for c in cands]
    counts = np.fromiter((len(i) for i in ids), np.int64, len(ids))
    flat = np.concatenate(ids) if ids else np.zeros(0, np.int64)
    scores = (np.concatenate([np.asarray(c.scores, np.int64) for c in cands]) if cands
              else np.zeros(0, np.int64))
    return running_sums(counts).tolist(), flat, scores, np.repeat(np.arange(len(cands)), counts)


def with_ends(cands: list[Candidates], bounds, qe: np.ndarray, te: np.ndarray
              ) -> list[Candidates]:
    """``cands`` with the end cells ``qe``, ``te`` of :func:`laid_flat`'s pairs."""
    return [Candidates(c.scores, qe[lo:hi], te[lo:hi], c.saturated, c.ids)
            for c, lo, hi in zip(cands, bounds, bounds[1:])]
