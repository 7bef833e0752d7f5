"""A database streamed through a device that cannot hold it: the memory limit, the chunk
plan, the chunks read from disk ahead of the device, and the exact merge of the top-k
candidates across chunks. Nothing here touches a device, so CI tests all of it.

The search keeps, per query, every target scoring at least its k-th best score (so ties
at the cut stay decidable on the host). A chunk's k-th best is at most the whole
database's (the chunk holds a subset), so each chunk's candidates hold every target of
that chunk scoring at least the database's k-th best: the candidates of all chunks,
cut again at their own k-th best (:func:`merge_candidates`), are exactly the resident
search's candidates, and the job orders them by the one rule (score descending, then
database order) whatever chunk each came from.
"""

from __future__ import annotations

import os
import queue
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .base import Candidates, TargetSet

#: Chunks on the device at once (:func:`lane`): chunk c+1 computes beside chunk c, and
#: chunk c+2 reuses chunk c's device buffers once chunk c is finished.
LANES = 2
#: The fraction of a streamed search's memory limit that the chunks in flight (LANES of
#: them, each with its whole resident cost) and the tail share (:func:`plan_stream`).
CHUNKS_SHARE = (11, 16)

#: Size suffixes of a memory limit (powers of 1024): '4G' is 4 GiB.
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)


def parse_memory(value: object, option: str = "gpu_memory=") -> int | float | None:
    """A device memory limit as the user gives it: bytes (an integer >= 1, or a size such
    as '4G', '512M', '1.5T': powers of 1024), a fraction of the device's memory (a
    number in (0, 1], also as a string: '0.5'), or None (the default). Returns the bytes
    (int) or the fraction (float).

    Raises:
        ValueError: anything else, naming ``option`` ("gpu_memory=" or "--gpu-memory").

    Example:
        >>> parse_memory("4G"), parse_memory(0.5), parse_memory(1 << 20), parse_memory("0.25")
        (4294967296, 0.5, 1048576, 0.25)
    """
    if value is None:
        return None
    expected = ("expected bytes (an integer >= 1), a size such as '4G' or '512M' (powers of "
                "1024), or a fraction of the device's memory in (0, 1] such as 0.5")
    bad = ValueError(f"invalid {option} {value!r}; {expected}")
    if isinstance(value, bool):
        raise bad
    if isinstance(value, (int, np.integer)):
        if value < 1:
            raise bad
        return int(value)
    if isinstance(value, (float, np.floating)):
        if not 0 < value <= 1:
            raise ValueError(f"invalid {option} {value!r}: a fraction must be in (0, 1] "
                             "(give bytes as an integer or a size such as '4G')")
        return float(value)
    if not isinstance(value, str):
        raise bad
    m = _SIZE.match(value)
    if m is None:
        raise bad
    number, unit = m[1], m[2].upper()
    if not unit and "." in number:
        return parse_memory(float(number), option)
    got = int(float(number) * _UNITS[unit]) if "." in number else int(number) * _UNITS[unit]
    return parse_memory(got, option)


def memory_bytes(limit: int | float, total: int) -> int:
    """The bytes of a :func:`parse_memory` limit on a device of ``total`` bytes."""
    return int(limit * total) if isinstance(limit, float) else int(limit)


@dataclass(frozen=True)
class StreamPlan:
    """How a target set meets a device memory limit of ``limit`` bytes.

    ``chunks``: (start, stop) slices of the targets, consecutive, covering each once
    (up to ``tail``'s start); one chunk spanning all of them means resident. ``tail``:
    None, or the (start, stop) slice of the longest targets (the end of a database's
    sorted order), resident for the whole search and searched beside the chunks on
    streams of its own. ``score_bytes``: most bytes of scores and flags one batch of
    queries holds on the device (per part: a chunk, the tail); ``spare_bytes``: what is
    left for more (query groups' boundary rows), per part."""

    limit: int
    chunks: tuple[tuple[int, int], ...]
    score_bytes: int
    spare_bytes: int
    tail: tuple[int, int] | None = None

    @property
    def streamed(self) -> bool:
        return len(self.chunks) > 1 or self.tail is not None

    @property
    def parts(self) -> tuple[tuple[int, int], ...]:
        """The slices in the order they are read and uploaded: the tail first."""
        return ((self.tail,) if self.tail else ()) + self.chunks


def plan_stream(offsets: np.ndarray, limit: int, *, residue_bytes: int,
                sequence_bytes: int, chain_lanes: float = 0.0) -> StreamPlan:
    """The plan for targets of ``offsets`` (n + 1, from 0) within ``limit`` device bytes,
    a resident target set costing ``residue_bytes`` a residue and ``sequence_bytes`` a
    sequence.

    Resident when that cost is at most three quarters of the limit (the last quarter
    holds a batch's scores). Otherwise chunks of consecutive targets (a length bucket
    may end inside one, and one chunk may hold several; as few chunks as fit, of about
    equal cost). Two chunks are on the device at once, each with its whole resident cost
    (:data:`LANES`: chunk c+1 is uploaded and computes beside chunk c, with its own code
    buffer, target stream and boundary rows), so the chunks in flight (and the tail)
    share CHUNKS_SHARE (11/16) of the limit: a chunk costs at most half of it. Each part
    in flight (the two chunks, the tail) holds a batch's scores in a sixteenth of the
    limit and has a thirty-second spare (more query groups' boundary rows): 15/16 of the
    limit in all, 31/32 with a tail.

    ``chain_lanes``: the device's resident warps over how much faster one warp runs
    alone (``config.CHAIN_SPEED``), 0 for no tail. A target scanned by one warp sets a
    pass's time once its length times ``chain_lanes`` passes the residues of its chunk
    (the chunk's other warps are done first); the targets from the last one no longer
    than half a full chunk's residues / ``chain_lanes`` (the end of a database's sorted
    order) form the tail, or the longest of them that cost at most an eighth of the
    limit: resident beside the chunks (which then share what the tail leaves of
    CHUNKS_SHARE).

    Raises:
        ValueError: one target alone costs more than a chunk may.

    Example:
        >>> p = plan_stream(np.arange(0, 70, 10), 64, residue_bytes=1, sequence_bytes=0)
        >>> p.chunks, p.score_bytes, p.tail
        (((0, 2), (2, 4), (4, 6)), 4, None)
        >>> off = np.cumsum([0] + [5] * 16 + [12])       # one long target last
        >>> p = plan_stream(off, 100, residue_bytes=1, sequence_bytes=0, chain_lanes=3.0)
        >>> p.tail, p.chunks
        ((16, 17), ((0, 4), (4, 8), (8, 12), (12, 16)))
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n = len(offsets) - 1
    limit = int(limit)
    cost = offsets * int(residue_bytes) + np.arange(n + 1, dtype=np.int64) * int(sequence_bytes)
    if int(cost[-1]) <= limit - limit // 4:
        return StreamPlan(limit, ((0, n),), limit // 4, limit - limit // 4 - int(cost[-1]))
    share = limit * CHUNKS_SHARE[0] // CHUNKS_SHARE[1]
    cap = share // LANES
    steps = np.diff(cost)
    if n and int(steps.max()) > cap:
        i = int(np.argmax(steps))
        # the least limit whose chunks may hold it: share // LANES >= step
        need = -(-LANES * int(steps[i]) * CHUNKS_SHARE[1] // CHUNKS_SHARE[0])
        raise ValueError(f"the device memory limit ({limit} bytes; gpu_memory= or "
                         f"--gpu-memory) is too small for this database: sequence {i} of "
                         f"the sorted order ({int(offsets[i + 1] - offsets[i])} residues) "
                         f"needs {int(steps[i])} bytes in a chunk, of which two share "
                         f"{CHUNKS_SHARE[0]}/{CHUNKS_SHARE[1]} of the limit; give at "
                         f"least {need} bytes")
    end, tail = n, None
    if chain_lanes > 0 and n:
        longest = cap / (2 * max(int(residue_bytes), 1) * float(chain_lanes))
        short = np.flatnonzero(np.diff(offsets) <= longest)
        start = int(short[-1]) + 1 if len(short) else 0
        # at most an eighth of the limit: the longest of them where all cost more
        start = max(start, int(np.searchsorted(cost, cost[n] - limit // 8, side="left")))
        rest = (share - int(cost[n] - cost[start])) // LANES
        # (every chunk's target must still fit what the tail leaves a chunk)
        if 0 < start < n and int(steps[:start].max()) <= rest:
            end, tail, cap = start, (start, n), rest
    chunks = _balanced(cost[:end + 1], cap)
    return StreamPlan(limit, tuple(chunks), limit // 16, limit // 32, tail)


def _greedy(cost: np.ndarray, cap: int) -> list[tuple[int, int]]:
    """Chunks of consecutive items (item i costs cost[i + 1] - cost[i]), each as long as
    ``cap`` allows (an item costing more is a chunk alone)."""
    chunks, start, n = [], 0, len(cost) - 1
    while start < n:
        stop = int(np.searchsorted(cost, cost[start] + cap, side="right")) - 1
        stop = min(max(stop, start + 1), n)
        chunks.append((start, stop))
        start = stop
    return chunks


def _balanced(cost: np.ndarray, cap: int) -> list[tuple[int, int]]:
    """As few chunks as :func:`_greedy` cuts within ``cap`` (the fewest), each at most
    the least cost that still allows so few: of about equal cost, with no small last
    chunk (which would hold the longest targets of its part with few others)."""
    fewest = len(_greedy(cost, cap))
    lo, hi = 1, int(cap)         # the least bound that keeps `fewest` chunks, in [lo, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        if len(_greedy(cost, mid)) <= fewest:
            hi = mid
        else:
            lo = mid + 1
    return _greedy(cost, hi)


def lane(c: int, count: int) -> int:
    """The lane of part ``c`` of a :func:`schedule` of ``count`` chunks: the device code
    buffer, boundary-row buffers and streams it uses. Chunks alternate between lanes 0
    and 1 (:data:`LANES`), so chunk c+1 never waits for chunk c on the device; the tail
    (index ``count``) has lane LANES, of its own.

    Example:
        >>> [lane(c, 3) for c in range(4)]
        [0, 1, 0, 2]
    """
    return LANES if c == count else c % LANES


def schedule(count: int, tail: bool = False) -> list[tuple[str, int]]:
    """The order in which the streamed search (``cuda/streamed.py``) runs the steps of
    ``count`` chunks on the host, one copy stream and each part's lane (:func:`lane`):
    ("upload", c) queues chunk c's codes and index into its lane's device buffer on the
    copy stream (after the event that lane's last finished chunk recorded), ("start",
    c) queues its kernels and top-k cut on its lane's streams (after its upload's event),
    ("finish", c) reads its cut back (the host waits for its kernels), records the lane's
    event and lets its buffers go. Chunk c is started before chunk c - 1 is finished, so
    the device has chunk c queued while the host reads chunk c - 1's results, and chunk
    c + 1 uploads (into chunk c - 1's buffer) while chunk c computes. On the device,
    chunk c+1's kernels follow only its upload and chunk c - 1 (its lane), not chunk c:
    they fill the device while chunk c's passes drain (:func:`device_order`). With
    ``tail``, the tail (index ``count``) is uploaded and started first, in its lane
    beside the chunks, and finished last.

    Example:
        >>> schedule(3)
        [('upload', 0), ('start', 0), ('upload', 1), ('start', 1), ('finish', 0), \
('upload', 2), ('start', 2), ('finish', 1), ('finish', 2)]
    """
    steps: list[tuple[str, int]] = []
    if tail:
        steps += [("upload", count), ("start", count)]
    if count:
        steps.append(("upload", 0))
    for c in range(count):
        steps.append(("start", c))
        if c:
            steps.append(("finish", c - 1))
        if c + 1 < count:
            steps.append(("upload", c + 1))
    if count:
        steps.append(("finish", count - 1))
    if tail:
        steps.append(("finish", count))
    return steps


def device_order(count: int, tail: bool = False) -> dict[tuple[str, int], set]:
    """What the device work of a :func:`schedule` waits for, as the streamed search
    queues it: per node ("upload", c) (its copy) and ("run", c) (its kernels and cut),
    the nodes that finish before it begins (direct: the copy stream's order, its lane's
    event, its upload's event, its lane's streams' order, and the host, which queues
    nothing after a ("finish", d) step before chunk d's run is done). Chunks sharing
    a lane share buffers; this graph says whether that is safe (tests/test_stream.py).

    Example:
        >>> sorted(device_order(3)[("run", 2)])
        [('run', 0), ('upload', 2)]
    """
    after: dict[tuple[str, int], set] = {}
    last_upload, last_run, finished = None, {}, []
    lane_event: dict[int, tuple[str, int]] = {}
    for step, c in schedule(count, tail):
        k = lane(c, count)
        if step == "finish":
            finished.append(("run", c))
            if k < LANES:
                lane_event[k] = ("run", c)
            continue
        node = ("upload" if step == "upload" else "run", c)
        waits = set(finished)
        if step == "upload":
            if last_upload is not None:
                waits.add(last_upload)
            if k in lane_event:
                waits.add(lane_event[k])
            last_upload = node
        else:
            waits.add(("upload", c))
            if k in last_run:
                waits.add(last_run[k])
            last_run[k] = node
        after[node] = waits
    return after


def candidates(scores: np.ndarray, top_k: int | None) -> np.ndarray:
    """Positions (ascending) of every score at least the ``top_k``-th best: all of them
    when ``top_k`` is None or not below their number.

    Example:
        >>> candidates(np.array([5, 9, 7, 9, 7]), 3).tolist()
        [1, 2, 3, 4]
    """
    n = len(scores)
    if top_k is None or top_k >= n:
        return np.arange(n, dtype=np.int64)
    kth = np.partition(scores, n - top_k)[n - top_k]
    return np.flatnonzero(scores >= kth)


def merge_candidates(parts: Sequence[Candidates], top_k: int | None) -> Candidates:
    """One query's candidates from several chunks (``ids`` already in the whole target
    set's numbering, each part holding every target of its chunk scoring at least the
    chunk's k-th best), cut to every target scoring at least the k-th best of them all:
    exactly the candidates of one search over the whole target set (module docstring).
    Saturation counts add up.

    Example:
        >>> a = Candidates(np.array([9, 4], np.int32), ids=np.array([0, 1]))
        >>> b = Candidates(np.array([4, 4, 2], np.int32), ids=np.array([2, 3, 4]))
        >>> merge_candidates([a, b], 2).ids.tolist()
        [0, 1, 2, 3]
    """
    joined = Candidates.concat(list(parts))
    return joined.take(candidates(joined.scores, top_k))


def runs_within(sizes, room: int) -> list[tuple[int, int]]:
    """Consecutive runs (lo, hi) of items of ``sizes``, each run's sizes summing to at
    most ``room`` (an item larger than ``room`` is a run of its own).

    Example:
        >>> runs_within([3, 4, 2, 9, 1], 7)
        [(0, 2), (2, 3), (3, 4), (4, 5)]
    """
    cuts, used = [0], 0
    for i, n in enumerate(np.asarray(sizes, dtype=np.int64).tolist()):
        if used + n > room and i > cuts[-1]:
            cuts.append(i)
            used = 0
        used += n
    return [(lo, hi) for lo, hi in zip(cuts, cuts[1:] + [len(sizes)]) if hi > lo]


# -- reading chunks ahead of the device -----------------------------------------------

@dataclass(frozen=True)
class Chunk:
    """One chunk as read: its index in the plan, its (start, stop) slice of the targets,
    its codes (a view into one of the reader's buffers) and offsets (from 0), and what
    the reader's ``layout`` made of it (None without one)."""

    index: int
    start: int
    stop: int
    codes: np.ndarray
    offsets: np.ndarray
    buffer: int
    layout: object = None


class ChunkReader:
    """The chunks of ``targets`` read into ``buffers`` (host arrays, e.g. pinned memory,
    each big enough for the largest chunk) on a worker thread, in order, as buffers come
    free: the reading of chunk c+1 (from disk for a memory-mapped database, with
    ``pread`` where ``targets.file`` says where its codes lie and that path is still
    that file, else through the mapping: the same bytes) overlaps the use of chunk c. The consumer gives each chunk's buffer back with :meth:`release` once nothing
    reads it any more (e.g. its upload to the device is done). ``layout``: called on the
    worker with each chunk as read, its result given with the chunk (``Chunk.layout``):
    host work of chunk c+1 (its length order and bucket lists) done while chunk c is
    used. Use as a context manager: leaving it stops the worker.

    Example:
        >>> ts = TargetSet(np.arange(6, dtype=np.uint8), np.array([0, 2, 3, 6]))
        >>> bufs = [np.empty(3, np.uint8) for _ in range(2)]
        >>> with ChunkReader(ts, [(0, 2), (2, 3)], bufs) as r:
        ...     for c in r:
        ...         print(c.index, c.codes.tolist(), c.offsets.tolist()); r.release(c)
        0 [0, 1, 2] [0, 2, 3]
        1 [3, 4, 5] [0, 3]
    """

    _POLL_S = 0.05

    def __init__(self, targets: TargetSet, chunks: Sequence[tuple[int, int]],
                 buffers: Sequence[np.ndarray],
                 layout: Callable[[Chunk], object] | None = None):
        if not buffers:
            raise ValueError("ChunkReader needs at least one buffer")
        self._layout = layout
        self._targets = targets
        self._offsets = np.asarray(targets.offsets, dtype=np.int64)
        self._chunks = list(chunks)
        self._buffers = list(buffers)
        self._free: queue.Queue = queue.Queue()
        for b in range(len(self._buffers)):
            self._free.put(b)
        self._ready: queue.Queue = queue.Queue()
        self._closing = threading.Event()
        self._taken = 0
        self._thread = threading.Thread(target=self._work, name="warpalign-chunks",
                                        daemon=True)
        self._thread.start()

    def _work(self) -> None:
        fd = None
        try:
            fd = self._open()
            for c, (start, stop) in enumerate(self._chunks):
                b = self._take()
                if b is None:
                    return
                chunk = self._read(c, start, stop, b, fd)
                if self._layout is not None:
                    chunk = replace(chunk, layout=self._layout(chunk))
                self._ready.put((True, chunk))
        except BaseException as exc:  # noqa: BLE001  (raised in the consumer's thread)
            self._ready.put((False, exc))
        finally:
            if fd is not None:
                os.close(fd)

    def _open(self) -> int | None:
        """A descriptor of the file ``targets.file`` names, or None (no file, or that
        path now names another file: a database rebuilt since it was opened)."""
        if self._targets.file is None:
            return None
        path, _, identity = self._targets.file
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return None
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) != tuple(identity):
            os.close(fd)
            return None
        return fd

    def _take(self) -> int | None:
        while not self._closing.is_set():
            try:
                return self._free.get(timeout=self._POLL_S)
            except queue.Empty:
                continue
        return None

    def _read(self, c: int, start: int, stop: int, b: int, fd: int | None) -> Chunk:
        lo, hi = int(self._offsets[start]), int(self._offsets[stop])
        buf = self._buffers[b]
        if hi - lo > len(buf):
            raise ValueError(f"chunk {c} holds {hi - lo} residues, more than a buffer's "
                             f"{len(buf)}")
        view = buf[:hi - lo]
        if fd is None:
            np.copyto(view, self._targets.codes[lo:hi])
        else:
            at, done = self._targets.file[1] + lo, 0
            mem = memoryview(view).cast("B")
            while done < hi - lo:
                got = os.preadv(fd, [mem[done:]], at + done)
                if got <= 0:
                    raise OSError(f"{self._targets.file[0]}: ended {hi - lo - done} bytes "
                                  f"early while reading chunk {c}")
                done += got
        return Chunk(c, start, stop, view, self._offsets[start:stop + 1] - lo, b)

    def __iter__(self) -> Iterator[Chunk]:
        return self

    def __next__(self) -> Chunk:
        if self._taken >= len(self._chunks):
            raise StopIteration
        ok, got = self._ready.get()
        if not ok:
            raise got
        self._taken += 1
        return got

    def release(self, chunk: Chunk) -> None:
        """Give ``chunk``'s buffer back for the chunks still to read."""
        self._free.put(chunk.buffer)

    def close(self) -> None:
        self._closing.set()
        self._thread.join()

    def __enter__(self) -> ChunkReader:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
