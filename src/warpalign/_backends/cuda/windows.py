"""locate's windows on the GPU: one query against windows of a device-resident reference.

:class:`DeviceReference` uploads the records once (concatenated ``uint8`` codes); a window
is then only a (start, length) pair into them, so no window is ever copied.
:func:`window_scores` scores one query against any set of windows with ``win_s16``
(``windows.cu``: lanes own query rows, the windows stream through the group, two windows
per 32-bit register as 16-bit DPX halves, the query profile in shared memory read by
conflict-free LDS.128) and returns each window's best local score. Windows whose 16-bit
maximum could have saturated are returned as ``flagged``: their score is not exact and the
caller rescores them wider (``locate`` does so through ``CudaBackend.scan(ends=True)``).

:func:`window_ends` is the same kernel with each window's end cell (tie rule), tracked per
step rather than per cell (~20% dearer on long windows, so ``locate`` runs it only on short
sub-windows of the windows tied at the best score); :func:`window_cells` is either, as
cells. A :class:`DeviceQuery` (plan and profile) serves several launches of one query.
The window layout (starts, lengths, the pairing of windows) is uploaded once per resident
reference and reused by later queries over the same windows (:func:`_layout`).

``window_cells(best_ends=True)`` also gives the end cells of the windows tied at the best
score, queued on the device right after the scores (``win_pick`` cuts them into locate's
sub-windows, ``win_ends`` scores those with ends, one warp per sub-window): ``locate``
needs no second round trip for its first hit.

Scores-only launches of one band (queries up to 512 symbols) read the windows' symbols
from packed columns (``win_ypack``, built once per window layout) and run two columns per
iteration (``windows.cu``'s ``win_packed``); the others read the reference (one column
per step, ends or several bands).

Measured (bench/results/locate_gpu.jsonl, paper 002's 1/-2/5/1, m x n cells, H100, session
14): the scores kernel 4,605-4,617 GCUPS at 256 x 33.5 M over locate's first-pass windows
(3,583 reading the reference, same windows and run); the whole ``locate`` call with the
reference resident: mode "score" 4,184, "end" 3,861, "full" 3,737 (2,800-3,200 before this
session); docs/gpu-notes.md has the breakdown.

:func:`resident` keeps the last uploaded references per device, keyed on the identity of
read-only record arrays (a :class:`~warpalign.database.Database`'s memory map, or arrays the
caller marked ``setflags(write=False)``): read-only arrays are taken as immutable, so a
later ``locate`` on the same records reuses the upload. Writeable arrays are uploaded per
call (a copy costs ~1 ms per 10 MB; it is the kernel that matters).
"""

from __future__ import annotations

import threading
import time

import numpy as np

from ..base import ReadOnlyMemo, readonly_key
from ...offsets import running_sums
from .loader import get_module, require_cupy
from .transfer import upload_pinned
from .window_plan import (  # noqa: F401 (plan, profile, supports: this module's API too)
    NARROW_LIMIT,
    R8_MAX_QUERY,
    facts,
    pack_capacity,
    pack_plan,
    pack_rows,
    plan,
    profile,
    profile_rows,
    supports,
)

_FILE = "windows.cu"
_BLOCK = 256
#: Blocks of ``_BLOCK`` threads resident per SM (``__launch_bounds__(256, 2)``).
_BLOCKS_PER_SM = 2
#: Rows per lane of the ends launch (``locate``'s sub-windows): a few hundred columns of a
#: few dozen windows, so the launch is one wave whose time is its steps times the latency of
#: a lane's row chain; R = 8 halves that chain against the scores kernel's R = 16.
ENDS_ROWS = 8
#: Resident references kept per process (least recently used dropped first).
CACHE_SIZE = 2
#: Front pad of the packed columns (windows.cu's WIN_FRONT: at least 2 (G - 1), even), and
#: their slack behind the longest window (the skew and the read-ahead included).
_YFRONT = 64
_YSLACK = 2 * _YFRONT + 8

_lock = threading.Lock()
_SMS: dict[int, int] = {}          # SM count per device id
_cache = ReadOnlyMemo(CACHE_SIZE)   # resident references by records and device


def wanted_windows(m: int, packed: bool = False) -> int:
    """Windows that fill the current device once: two per item, items of G lanes, 2 blocks
    of 256 threads per SM. ``packed``: for launches of several queries (:func:`pack_plan`:
    an item is a whole warp, whatever one query's G), where queries of ``m`` symbols pack;
    so fewer, longer windows, and less of the reference scored twice in their overlaps."""
    cp = require_cupy("locate on the GPU")
    dev = cp.cuda.Device().id
    sms = _SMS.get(dev)
    if sms is None:
        sms = _SMS[dev] = cp.cuda.Device(dev).attributes["MultiProcessorCount"]
    _, g, _ = plan(m)
    if packed and pack_capacity(m) > 1:
        g = 32
    return 2 * sms * _BLOCKS_PER_SM * _BLOCK // g


class DeviceReference:
    """Reference records uploaded once to the current device: codes and record starts.

    Attributes:
        starts: int64 [records + 1], where each record begins in the device codes.
        seconds: wall time of the concatenation and upload.
        device: the CUDA device id.
    """

    def __init__(self, records: list[np.ndarray]):
        cp = require_cupy("locate on the GPU")
        t0 = time.perf_counter()
        lengths = np.array([len(r) for r in records], np.int64)
        self.starts = running_sums(lengths)
        codes = np.concatenate(records).astype(np.uint8, copy=False) if records else None
        if codes is None or codes.size == 0:
            codes = np.zeros(1, np.uint8)
        self.codes = cp.asarray(codes)
        cp.cuda.Device().synchronize()
        self.seconds = time.perf_counter() - t0
        self.device = cp.cuda.Device().id
        self.nbytes = int(self.codes.nbytes)


def resident(records: list[np.ndarray]) -> DeviceReference:
    """The :class:`DeviceReference` of ``records`` on the current device: cached when every
    record is a read-only array (module docstring), else uploaded now."""
    cp = require_cupy("locate on the GPU")
    return _cache.get(records, cp.cuda.Device().id, lambda: DeviceReference(records))


def worker_stream():
    """A non-blocking CUDA stream of the current device for one thread of a many-reads
    ``locate`` (enter it with ``with``): the thread's launches, copies and waits then
    queue there, so several reads' kernels overlap and a wait covers only its own work.
    Everything this module shares between calls (resident references, window layouts and
    their packed columns) is complete on the device before another thread can find it."""
    cp = require_cupy("locate on the GPU")
    return cp.cuda.Stream(non_blocking=True)


def clear_cache() -> None:
    """Forget every resident reference (their device memory is freed with them) and the
    kernels looked up."""
    _cache.clear()
    _FUNCTIONS.clear()


class DeviceQuery:
    """A query prepared for the windows kernel on the current device: its plan (R, G,
    bands), its profile uploaded once, the kernel constants. Made by :func:`_launch` per
    call, or once by the caller (``locate`` scores with one and resolves ends with another,
    ``rows`` = :data:`ENDS_ROWS`). One upload holds the profile, the query codes and the
    int32 matrix (the latter two for the best windows' ends, ``win_ends``)."""

    def __init__(self, q: np.ndarray, scoring, rows: int | None = None, *,
                 sq: int | None = None):
        cp = require_cupy("locate on the GPU")
        f = facts(scoring)
        if not f.supported:
            raise ValueError(f"scores or gap penalties above {NARROW_LIMIT}, or an alphabet of "
                             "more than 47 codes, do not fit the 16-bit windows kernel")
        q = np.asarray(q, np.uint8)
        if len(q) and int(q.max()) >= f.k:
            raise ValueError(f"query code {int(q.max())} is outside the scoring's {f.k} codes")
        self.m = len(q)
        self.r, self.g, self.bands = plan(self.m, rows)
        self.k, self.go, self.ge, self.thr = f.k, f.go, f.ge, f.thr
        self.bvec, self.neg_bias, self.neg_ge = f.bvec, f.neg_bias, f.neg_ge
        if sq is None:   # the query's score bound (locate passes the one it has)
            from ...spans import query_score_bound
            sq = query_score_bound(q, scoring)
        self.sq = int(sq)                         # bounds the ends' sub-window spans
        prof = profile(q, scoring, self.r, self.g, self.bands).view(np.uint8).ravel()
        at_q = len(prof)                  # a multiple of 128 (a profile column)
        at_m = at_q + -(-max(self.m, 1) // 16) * 16
        host = np.empty(at_m + f.mat32.nbytes, np.uint8)
        host[:at_q] = prof
        host[at_q:at_q + self.m] = q
        host[at_m:] = f.mat32.view(np.uint8).ravel()
        (self._dev,), self._staging = upload_pinned(cp, [host], cp.cuda.get_current_stream())
        base = self._dev.data.ptr          # raw pointers: CuPy views cost host time
        self.prof = np.uint64(base)
        self.codes = np.uint64(base + at_q)
        self.matrix = np.uint64(base + at_m)
        self.count, self.heads, self.qstride = 1, 1, 0   # one query (DevicePack: several)


class DevicePack:
    """Several queries of one length prepared for one launch of the windows kernel
    (:func:`pack_plan`): their rows packed in one band's profile, their codes (for the best
    windows' ends, ``qstride`` bytes apart) and the int32 matrix, in one upload. Has
    :class:`DeviceQuery`'s attributes (``m``; ``sq``: a score bound of every query), with
    ``count`` queries and the kernel's ``heads``. ``locate`` packs queries of one bound (a
    larger ``sq`` only widens the best windows' sub-windows); a query whose bound exceeds
    ``sq`` raises ValueError (its sub-windows could miss its best cell)."""

    def __init__(self, queries: list[np.ndarray], scoring, *, sq: int):
        cp = require_cupy("locate on the GPU")
        f = facts(scoring)
        if not f.supported:
            raise ValueError(f"scores or gap penalties above {NARROW_LIMIT}, or an alphabet of "
                             "more than 47 codes, do not fit the 16-bit windows kernel")
        queries = [np.asarray(q, np.uint8) for q in queries]
        self.m = len(queries[0]) if queries else 0
        if any(len(q) != self.m for q in queries) or self.m == 0:
            raise ValueError("packed queries must be non-empty and of one length")
        if any(int(q.max()) >= f.k for q in queries):
            raise ValueError(f"a packed query has a code outside the scoring's {f.k} codes")
        from ...spans import query_score_bound
        for i, q in enumerate(queries):   # win_pick's sub-windows must cover each query's spans
            if query_score_bound(q, scoring) > int(sq):
                raise ValueError(f"packed query {i} has score bound "
                                 f"{query_score_bound(q, scoring)}, above the pack's sq={sq}")
        self.count = len(queries)
        self.r, self.g, self.lanes, self.heads = pack_plan(self.m, self.count)
        self.bands = 1
        self.k, self.go, self.ge, self.thr = f.k, f.go, f.ge, f.thr
        self.bvec, self.neg_bias, self.neg_ge = f.bvec, f.neg_bias, f.neg_ge
        self.sq = int(sq)
        rows = pack_rows(queries, f.k, self.r, self.lanes, self.g)
        prof = profile_rows(rows, scoring, self.r, self.g, 1).view(np.uint8).ravel()
        at_q = len(prof)
        self.qstride = -(-self.m // 16) * 16
        at_m = at_q + self.count * self.qstride
        host = np.zeros(at_m + f.mat32.nbytes, np.uint8)
        host[:at_q] = prof
        for i, q in enumerate(queries):
            host[at_q + i * self.qstride:at_q + i * self.qstride + self.m] = q
        host[at_m:] = f.mat32.view(np.uint8).ravel()
        (self._dev,), self._staging = upload_pinned(cp, [host], cp.cuda.get_current_stream())
        base = self._dev.data.ptr
        self.prof = np.uint64(base)
        self.codes = np.uint64(base + at_q)
        self.matrix = np.uint64(base + at_m)


def window_scores(ref: DeviceReference, q: np.ndarray, scoring, starts: np.ndarray,
                  lengths: np.ndarray, *, query: DeviceQuery | None = None,
                  packed_columns: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
    """Best local score of ``q`` in each window ``[starts[w], starts[w] + lengths[w])`` of
    ``ref``'s concatenated codes (16-bit DPX); ``query``: ``q`` already prepared.
    ``packed_columns``: one band reads the windows' symbols from packed columns
    (``win_ypack``, built once per window layout, about a byte per window symbol; two
    columns per iteration: 1.876 ms vs 2.398 reading the reference on an H100, 256 x
    33.5 M, docs/gpu-notes.md), where the device has room for them; False: the reference.

    Returns (scores int64 [windows], flagged window indices int64, kernel seconds). A flagged
    window's score is not exact (its 16-bit maximum could have saturated); every other
    score is.
    """
    cells, flagged, seconds = window_cells(ref, q, scoring, starts, lengths, query=query,
                                           packed_columns=packed_columns)
    return cells[:, 0], flagged, seconds


def window_ends(ref: DeviceReference, q: np.ndarray, scoring, starts: np.ndarray,
                lengths: np.ndarray, *, query: DeviceQuery | None = None,
                keep_layout: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`window_scores` with end cells: (cells int64 [windows, 3] = score, query end,
    reference end within the window by DESIGN.md's tie rule, (0, 0) for score 0; flagged
    window indices, whose cells are not exact; kernel seconds). The end cells are tracked
    per step, not per cell, yet cost ~20% over the scores on long windows (H100), so
    ``locate`` asks for them only on short sub-windows of the windows tied at the best
    score."""
    return window_cells(ref, q, scoring, starts, lengths, query=query, ends=True,
                        keep_layout=keep_layout)


def window_cells_packed(ref: DeviceReference, pack: DevicePack, scoring, starts: np.ndarray,
                        lengths: np.ndarray, *, best_ends: bool = False, timed: bool = True,
                        packed_columns: bool = True
                        ) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """:func:`window_cells` (scores, ``best_ends``) of every query of ``pack`` over the
    same windows, in one launch of ``win_s16`` (then one ``win_pick`` and one ``win_ends``
    for all): (cells of each query, int64 [windows, 3]; flagged window indices of each
    query; kernel seconds). Each query's cells are exactly what :func:`window_cells` gives
    it alone, except that a window flagged for any query leaves every query's best ends
    to the caller (-1, as for a flagged launch of one query)."""
    cells, flagged, seconds = _launch(ref, None, scoring, starts, lengths, False, pack, True,
                                      best_ends, timed, packed_columns)
    return cells, flagged, seconds


def window_cells(ref: DeviceReference, q: np.ndarray, scoring, starts: np.ndarray,
                 lengths: np.ndarray, *, query: DeviceQuery | None = None, ends: bool = False,
                 keep_layout: bool = True, best_ends: bool = False, timed: bool = True,
                 packed_columns: bool = True) -> tuple[np.ndarray, np.ndarray, float]:
    """One launch of ``win_s16``: (cells int64 [windows, 3], flagged, kernel seconds) as
    :func:`window_ends`, with the ends -1 unless ``ends``. ``keep_layout=False``: one-off
    windows, not remembered on ``ref``.

    ``best_ends`` (with ``ends=False``): also the end cells of the windows tied at the
    best score (up to :data:`TIED_MAX` of them), found on the device right after the scores
    with no round trip to the host (``win_pick`` cuts them into locate's sub-windows,
    ``win_ends`` scores those in 32 bits with ends); the other windows' ends
    stay -1. Skipped (every end -1) when a window was flagged or ``gap_extend`` is 0.
    ``timed=False``: no CUDA events (the kernel seconds come back as 0.0).
    ``packed_columns``: as in :func:`window_scores`."""
    return _launch(ref, q, scoring, starts, lengths, ends, query, keep_layout,
                   best_ends and not ends, timed, packed_columns)


class _Layout:
    """A set of windows on the device, in one buffer of int32 words: starts (int64, as word
    pairs), lengths, then items (pairs of window ids, the longest windows first). Kept on
    their :class:`DeviceReference` so that queries over the same windows upload nothing but
    their profile."""

    def __init__(self, starts: np.ndarray, lengths: np.ndarray, stream):
        self.starts, self.lengths = starts.copy(), lengths.copy()
        n = len(starts)
        order = np.argsort(-lengths, kind="stable").astype(np.int32)
        self.nitems = -(-n // 2)
        words = np.full(3 * n + 2 * self.nitems, -1, np.int32)
        words[:2 * n] = self.starts.view(np.int32)
        words[2 * n:3 * n] = lengths
        words[3 * n:3 * n + n] = order
        self.longest = int(lengths.max(initial=0))
        cp = require_cupy("locate on the GPU")
        (self.dev,), self._staging = upload_pinned(cp, [words], stream)
        base = self.dev.data.ptr
        self.starts_ptr = np.uint64(base)
        self.lengths_ptr = np.uint64(base + 8 * n)
        self.items_ptr = np.uint64(base + 12 * n)
        self.arrays = (None, None)
        self.fixed = False        # made for read-only arrays (_layout)
        self._columns = {}

    def columns(self, ref: DeviceReference, k: int):
        """(device pointer, stride) of this layout's packed columns for an alphabet of
        ``k`` codes (windows.cu's ``win_ypack``, built on the first call and kept with the
        layout): item i's column j at word i * stride + j + _YFRONT. None when the device
        has no room for them (about a byte per window symbol): the kernel then reads the
        reference."""
        with _lock:   # built once, whichever threads ask at once
            return self._columns_locked(ref, k)

    def _columns_locked(self, ref: DeviceReference, k: int):
        if k not in self._columns:
            cp = require_cupy("locate on the GPU")
            stride = -(-(self.longest + _YSLACK) // 8) * 8
            try:
                cols = cp.empty(max(self.nitems * stride, 1), dtype=cp.uint16)
            except cp.cuda.memory.OutOfMemoryError:
                self._columns[k] = None
                return None
            grid = max(1, min(-(-self.nitems * stride // _BLOCK), 65535))
            _function("win_ypack")((grid,), (_BLOCK,),
                                   (ref.codes, self.starts_ptr, self.lengths_ptr, self.items_ptr,
                                    np.int32(self.nitems), np.int32(k), np.int64(stride), cols))
            # written before another thread (maybe on a stream of its own) can read them
            cp.cuda.get_current_stream().synchronize()
            self._columns[k] = (cols, np.uint64(cols.data.ptr), np.int64(stride))
        got = self._columns[k]
        return None if got is None else got[1:]

    def matches(self, starts: np.ndarray, lengths: np.ndarray) -> bool:
        return np.array_equal(self.starts, starts) and np.array_equal(self.lengths, lengths)


#: Window layouts kept per resident reference (most recent last).
LAYOUTS_KEPT = 4


def _layout(ref: DeviceReference, starts: np.ndarray, lengths: np.ndarray, stream,
            keep: bool) -> _Layout:
    """The layout of these windows: a kept one (the very same read-only arrays, as
    :func:`windows_of` gives, or equal values), else a new one."""
    if not keep:
        return _Layout(starts, lengths, stream)
    fixed = not (starts.flags.writeable or lengths.flags.writeable)
    with _lock:
        layouts = ref.__dict__.setdefault("layouts", [])
        hit = [k for k, lay in enumerate(layouts)
               if fixed and lay.arrays[0] is starts and lay.arrays[1] is lengths]
        if not hit:
            hit = [k for k, lay in enumerate(layouts) if lay.matches(starts, lengths)]
        if hit:
            lay = layouts.pop(hit[0])
            layouts.append(lay)
            return lay
    lay = _Layout(starts, lengths, stream)
    lay.arrays = (starts, lengths)   # the read-only arrays found by identity next time
    lay.fixed = fixed
    stream.synchronize()             # uploaded before another thread can find it
    with _lock:
        layouts.append(lay)
        while len(layouts) > LAYOUTS_KEPT:
            # one-off windows (writable arrays: a read's seams, its clipped windows) go
            # first: they never push out the windows every read of a reference shares
            # (whose packed columns cover the whole reference)
            oldest = next((k for k, kept in enumerate(layouts) if not kept.fixed), 0)
            del layouts[oldest]
    return lay


def windows_of(ref: DeviceReference, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(starts in ``ref``'s codes, lengths) of the windows ``rows`` = (record, lo, hi),
    as read-only arrays remembered on ``ref`` when ``rows`` is read-only (locate's window
    table), so a later query over the same windows finds its layout at once."""
    key = readonly_key([rows])
    kept = ref.__dict__.setdefault("window_sets", {})
    got = kept.get(key) if key is not None else None
    if got is None:
        starts = ref.starts[rows[:, 0]] + rows[:, 1]
        lengths = rows[:, 2] - rows[:, 1]
        starts.setflags(write=False)
        lengths.setflags(write=False)
        got = (starts, lengths, rows)      # rows kept alive with its key
        if key is not None:
            with _lock:
                kept[key] = got
                while len(kept) > LAYOUTS_KEPT:
                    kept.pop(next(iter(kept)))
    return got[0], got[1]


#: Windows tied at the best score whose end cells ``best_ends`` finds on the device.
TIED_MAX = 4
#: Query rows per launch of ``win_ends`` (one warp per slot, up to 8 rows per lane);
#: longer queries run in strips.
END_ROWS = 256
#: Sub-windows of the best windows' ends: the span bound plus this many symbols, one
#: every ENDS_EXTRA + 1 (H100, 256 x 33.5 M, the window tied at the best score, kernel
#: time of scan.cu's window_antidiagonal over its sub-windows: +16: 114 us, +32: 103,
#: +64: 107; probe lprof2.py at 4c0062b).
ENDS_EXTRA = 32


class _BestEnds:
    """The device work of ``best_ends`` for one launch: per query, its slots (TIED_MAX
    windows x ``per`` sub-windows); its words in the result buffer (per query: S, count,
    window ids; then per query a (score, query end, reference end) cell per slot) and the
    launches."""

    #: a query's words before the cells: S, count, the window ids
    SPEC = 2 + TIED_MAX

    def __init__(self, dq: DeviceQuery | DevicePack, lay: _Layout):
        m, self.extra = dq.m, ENDS_EXTRA
        narrow = m + self.extra               # the narrowest sub-window (span >= m)
        stride = self.extra + 1
        self.per = 1 if lay.longest <= narrow else -(-(lay.longest - narrow) // stride) + 1
        self.slots = TIED_MAX * self.per
        self.count = dq.count
        self.words = self.count * (self.SPEC + 3 * self.slots)

    def launch(self, dq: DeviceQuery, lay: _Layout, ref: DeviceReference, n: int, base: int,
               at: int, stream) -> None:
        """Queue win_pick and win_ends (in strips) on ``stream``: scores at ``base``,
        the flagged count at word 2n, this plan's words from word ``at`` of the buffer."""
        cp = require_cupy("locate on the GPU")
        i32 = np.int32
        nq, slots = self.count, self.count * self.slots   # every query's slots
        spec = base + 4 * at
        cells = spec + 4 * nq * self.SPEC
        sub_start = cp.empty(slots, dtype=cp.int64)
        sub_len = cp.empty(slots, dtype=cp.int32)
        pick = _function("win_pick")
        pick((nq,), (1024,), (np.uint64(base), np.uint64(base + 8 * n * nq), i32(n),
                              lay.starts_ptr, lay.lengths_ptr, i32(dq.m), i32(dq.sq),
                              i32(dq.go), i32(dq.ge), i32(self.extra), i32(TIED_MAX),
                              i32(self.per), np.uint64(spec), sub_start, sub_len,
                              i32(self.SPEC)))
        cp.cuda.runtime.memsetAsync(cells, 0, 12 * slots, stream.ptr)
        if dq.m > END_ROWS:        # strips: the bottom rows (H, F) of every slot
            stride = lay.longest + 1
            row_h = cp.zeros(slots * stride, dtype=cp.int32)
            row_f = cp.zeros(slots * stride, dtype=cp.int32)
            rows_h, rows_f = row_h.data.ptr, row_f.data.ptr
        else:
            row_h = row_f = None
            stride, rows_h, rows_f = 0, 0, 0
        # the scratch buffers live as long as the plan, i.e. past the wait for the results
        self._scratch = (sub_start, sub_len, row_h, row_f)
        a = dq.k
        for r0 in range(0, dq.m, END_ROWS):
            rows = min(END_ROWS, dq.m - r0)
            r = 1
            while 32 * r < rows:
                r *= 2
            ends = _function(f"win_ends<{r}>")
            ends((-(-slots // 4),), (128,),
                 (ref.codes, sub_start, sub_len, i32(slots), dq.codes, i32(r0), i32(rows),
                  dq.matrix, i32(a), i32(dq.go), i32(dq.ge), np.uint64(rows_h),
                  np.uint64(rows_f), np.int64(stride), np.uint64(cells), i32(self.slots),
                  np.int64(dq.qstride)),
                 shared_mem=(a + 1) * a * 4)

    def read(self, host: np.ndarray, at: int, cells: np.ndarray, query: int = 0) -> None:
        """Fill ``cells``' ends (query ``query``'s cells) from this plan's words at
        ``host[at:]``: each picked window's best sub-window cell by the tie rule, in window
        coordinates."""
        own = at + query * self.SPEC
        best, count = int(host[own]), int(host[own + 1])
        if best <= 0:
            return
        k = min(count, TIED_MAX)
        ids = host[own + 2:own + 2 + k].astype(np.intp)
        first = at + self.count * self.SPEC + query * 3 * self.slots
        sub = host[first:first + 3 * self.slots].reshape(TIED_MAX, self.per, 3)[:k]
        pick = _window_cells(sub, self.extra + 1, best)
        if (pick[:, 0] != best).any() or (cells[ids, 0] != best).any():
            raise RuntimeError(   # two exact kernels disagree: a bug, never a result
                f"internal inconsistency in locate's GPU ends: windows {ids.tolist()} "
                f"scored {cells[ids, 0].tolist()}, the best {best}, their sub-windows "
                f"{pick[:, 0].tolist()}")
        cells[ids, 1:] = pick[:, 1:]


def window_ends_many(ref: DeviceReference, queries: list[np.ndarray], scoring,
                     items: np.ndarray) -> np.ndarray:
    """Exact end cells of windows of several queries of one length m (1 <= m <=
    :data:`END_ROWS`) in one launch of ``win_ends``: ``items`` int64 [n, 4] = (query index,
    window start in ``ref``'s codes, window length, span), span a bound on the symbols an
    alignment scoring the window's best score covers (``span_bound`` at that score). Each
    window is cut as ``win_pick`` cuts the best windows (sub-windows of span +
    :data:`ENDS_EXTRA` symbols, one every ENDS_EXTRA + 1: consecutive ones overlap by at least
    span − 1, so every alignment of that score lies within one), every sub-window scored in
    32 bits with its end cell, and the window's cell is the best by the tie rule (score,
    then smallest end, then smallest query end): int64 [n, 3] (score, query end, end
    within the window). Gap extension must be > 0 and every query's score bound below
    2^29 (``win_ends``'s pad rows); locate batches the ends of the hits of many reads here."""
    cp = require_cupy("locate on the GPU")
    f = facts(scoring)
    items = np.asarray(items, np.int64).reshape(-1, 4)
    out = np.zeros((len(items), 3), np.int64)
    if not len(items):
        return out
    m = len(queries[0])
    if not 1 <= m <= END_ROWS or any(len(q) != m for q in queries) or f.ge <= 0:
        raise ValueError("window_ends_many takes queries of one length 1..END_ROWS and a "
                         "gap extension above 0")
    stride = ENDS_EXTRA + 1
    width = items[:, 3] + ENDS_EXTRA
    length = items[:, 2]
    count = np.where(length <= width, 1, -(-(length - width) // stride) + 1)
    per = int(count.max())
    a = np.arange(per, dtype=np.int64) * stride                   # sub-window offsets
    sub_len = np.minimum(a[None, :] + width[:, None], length[:, None]) - a[None, :]
    sub_len[np.arange(per)[None, :] >= count[:, None]] = 0        # past a window's last
    sub_start = items[:, 1:2] + a[None, :]
    qstride = -(-m // 16) * 16
    codes = np.zeros((len(items), qstride), np.uint8)
    codes[:, :m] = np.stack([np.asarray(q, np.uint8) for q in queries])[items[:, 0]]
    slots = len(items) * per
    r = 1
    while 32 * r < m:
        r *= 2
    stream = cp.cuda.get_current_stream()
    starts_d, lens_d = cp.asarray(sub_start.ravel()), cp.asarray(sub_len.ravel().astype(np.int32))
    codes_d, matrix_d = cp.asarray(codes.ravel()), cp.asarray(f.mat32.ravel())
    cells = cp.empty(3 * slots, dtype=cp.int32)
    cp.cuda.runtime.memsetAsync(cells.data.ptr, 0, 12 * slots, stream.ptr)   # empty slots: 0
    _function(f"win_ends<{r}>")(
        (-(-slots // 4),), (128,),
        (ref.codes, starts_d, lens_d, np.int32(slots), np.uint64(codes_d.data.ptr), np.int32(0),
         np.int32(m), np.uint64(matrix_d.data.ptr), np.int32(f.k), np.int32(f.go),
         np.int32(f.ge), np.uint64(0), np.uint64(0), np.int64(0), np.uint64(cells.data.ptr),
         np.int32(per), np.int64(qstride)),
        shared_mem=(f.k + 1) * f.k * 4)
    host = np.empty(3 * slots, np.int32)
    cp.cuda.runtime.memcpyAsync(host.ctypes.data, cells.data.ptr, host.nbytes,
                                cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()     # (the device buffers above stay referenced until here)
    out[:] = _window_cells(host.reshape(len(items), per, 3), stride)
    return out


def _window_cells(sub: np.ndarray, stride: int, best=None) -> np.ndarray:
    """Each window's end cell from its sub-windows' cells ``sub`` [windows, per, 3] (score,
    query end, end within the sub-window; sub-window j starts ``j * stride`` into its
    window): the best score (``best``, else each window's largest), then the smallest
    end, then the smallest query end (ends < 2**31), in window coordinates; int64."""
    sub = sub.astype(np.int64)
    sub[:, :, 2] += np.arange(sub.shape[1]) * stride            # sub-window -> window
    if best is None:
        best = sub[:, :, 0].max(axis=1)
    top = np.reshape(best, (-1, 1))
    rank = np.where(sub[:, :, 0] == top, (sub[:, :, 2] << 31) + sub[:, :, 1], 1 << 62)
    return sub[np.arange(len(sub)), rank.argmin(axis=1)]


def _launch(ref, q, scoring, starts, lengths, want_ends, query, keep_layout,
            best_ends=False, timed=True, packed_columns=True):
    cp = require_cupy("locate on the GPU")
    starts = np.asarray(starts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    n = len(starts)
    if query is None and not supports(scoring):
        raise ValueError(f"scores or gap penalties above {NARROW_LIMIT}, or an alphabet of "
                         "more than 47 codes, do not fit the 16-bit windows kernel")
    packed = isinstance(query, DevicePack)   # several queries: lists of cells and flagged
    if packed and want_ends:
        raise ValueError("packed queries give scores (and the best windows' ends) only")
    if n == 0 or (not packed and len(q) == 0):
        if packed:
            return ([np.zeros((n, 3), np.int64)] * query.count,
                    [np.zeros(0, np.int64)] * query.count, 0.0)
        return np.zeros((n, 3), np.int64), np.zeros(0, np.int64), 0.0
    stream = cp.cuda.get_current_stream()
    dq = query if query is not None else DeviceQuery(q, scoring)
    nq = dq.count
    big = nq * n                             # scores (and flagged) of every query
    lay = _layout(ref, starts, lengths, stream, keep_layout)
    if lay.longest >= 1 << 31:
        raise ValueError("a window is longer than 2**31 - 1 symbols")
    cols = lay.columns(ref, dq.k) if packed_columns and not want_ends and dq.bands == 1 else None
    ycol, ystride = (np.uint64(0), np.int64(0)) if cols is None else cols
    fn = _function(f"win_s16<{dq.r}, {'true' if want_ends else 'false'}, "
                   f"{'false' if cols is None else 'true'}>")
    if dq.bands > 1:
        bstride = 2 * (lay.longest + 2)
        bound = cp.empty(lay.nitems * bstride, dtype=cp.uint32)
    else:
        bstride, bound = 0, np.uint64(0)
    # (win_ends: gap_extend > 0 for the span bound, scores below 2^29 for its pad rows)
    plan = _BestEnds(dq, lay) if best_ends and dq.ge > 0 and dq.sq < 1 << 29 else None
    # one result buffer (one copy back): scores [nq * n] (query k's at k * n), flagged
    # [nq * n], count [1], then query ends [n] and reference ends [n] (want_ends, one
    # query) or the best windows' ends (plan); every window's score (and ends) is written,
    # only the count zeroed
    words = 4 * n + 1 if want_ends else 2 * big + 1 + (plan.words if plan else 0)
    res = cp.empty(max(words, 4 * n + 1), dtype=cp.int32)
    base = res.data.ptr
    cp.cuda.runtime.memsetAsync(base + 8 * big, 0, 4, stream.ptr)
    if timed:
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record(stream)
    fn((-(-lay.nitems * dq.g // _BLOCK),), (_BLOCK,),
       (ref.codes, lay.starts_ptr, lay.lengths_ptr, lay.items_ptr, np.int32(lay.nitems),
        np.int32(dq.g), np.int32(dq.bands), dq.prof, np.int32(dq.k), np.int32(dq.go),
        np.int32(dq.ge), np.int32(dq.thr), np.uint32(1), bound, np.int64(bstride),
        np.uint64(base), np.uint64(base + 4 * big), np.uint64(base + 8 * big),
        np.uint64(base + 4 * (2 * n + 1)), np.uint64(base + 4 * (3 * n + 1)), ycol, ystride,
        dq.bvec, dq.neg_bias, dq.neg_ge, np.uint32(dq.heads), np.int32(n)),
       shared_mem=(dq.k + 1) * dq.g * dq.r * 2)
    if timed:
        stop.record(stream)
    if plan is not None:
        plan.launch(dq, lay, ref, n, base, 2 * big + 1, stream)
    pinned = cp.cuda.alloc_pinned_memory(4 * words)
    host = np.frombuffer(pinned, np.int32, words)
    cp.cuda.runtime.memcpyAsync(host.ctypes.data, base, 4 * words,
                                cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    stream.synchronize()
    seconds = cp.cuda.get_elapsed_time(start, stop) / 1e3 if timed else 0.0
    count = int(host[2 * big])
    flat = np.sort(host[big:big + count]).astype(np.int64) if count else np.zeros(0, np.int64)
    out_cells, out_flagged = [], []
    for k in range(nq):
        cells = np.full((n, 3), -1, np.int64)
        cells[:, 0] = host[k * n:(k + 1) * n]
        if want_ends:
            cells[:, 1] = host[2 * n + 1:3 * n + 1]
            cells[:, 2] = host[3 * n + 1:]
        if plan is not None:
            plan.read(host, 2 * big + 1, cells, k)
        out_cells.append(cells)
        mine = flat[(flat >= k * n) & (flat < (k + 1) * n)]
        out_flagged.append(mine - k * n)
    if packed:
        return out_cells, out_flagged, seconds
    return out_cells[0], out_flagged[0], seconds


_FUNCTIONS: dict = {}


def _function(name: str):
    """The kernel ``name`` of windows.cu on the current device, looked up once."""
    cp = require_cupy("locate on the GPU")
    key = (cp.cuda.runtime.getDevice(), name)
    fn = _FUNCTIONS.get(key)
    if fn is None:
        fn = _FUNCTIONS[key] = get_module(_FILE, (name,)).get_function(name)
    return fn
