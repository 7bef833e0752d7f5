"""locate's windows on the GPU: one query against windows of a device-resident reference.

:class:`DeviceReference` uploads the records once (concatenated ``uint8`` codes); a window
is then only a (start, length) pair into them, so no window is ever copied.
:func:`window_scores` scores one query against any set of windows with ``win_s16``
(``windows.cu``: lanes own query rows, the windows stream through the group, two windows
per 32-bit register as 16-bit DPX halves, the query profile in shared memory read by
conflict-free LDS.128) and returns each window's best local score. Windows whose 16-bit
maximum could have saturated are returned as ``flagged``: their score is not exact and the
caller rescores them wider (``locate`` does so through ``CudaBackend.scan(ends=True)``).

:func:`window_ends` is the same kernel with end cells (tie rule); ``locate`` runs it only on
sub-windows of the few windows tied at the best score (module docstring of
:mod:`warpalign.locate`, "Lazy ends").

Measured on one NVIDIA H200 (bench/results/locate_gpu.jsonl, paper 002's 1/-2/5/1, m x n
cells): the scores kernel 3,445 GCUPS at 256 x 33.5 M and 3,348 at 128 x 33.5 M; the whole
``locate`` call with the reference resident (mode "end") 1,556 and 1,012 (the GPU path
before this kernel: 207 and 111); docs/gpu-notes.md has the breakdown.

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

from .loader import get_module, require_cupy

_FILE = "windows.cu"
_BLOCK = 256
#: Blocks of ``_BLOCK`` threads resident per SM (``__launch_bounds__(256, 2)``).
_BLOCKS_PER_SM = 2
#: Largest |score|, gap_open or gap_extend the 16-bit kernel takes (else the 32-bit path).
NARROW_LIMIT = 4000
#: Rows per lane: 8 for queries up to this length, else 16 (bands of 512 rows). Kernel
#: time on an H200, 33.5 M reference, one wave of windows: m = 128: R = 16 (G = 8) 3,442
#: GCUPS vs R = 8 (G = 16) 3,320; m = 256: R = 16 (G = 16) 3,494 vs R = 8 (G = 32) 3,360.
R8_MAX_QUERY = 64
#: Resident references kept per process (least recently used dropped first).
CACHE_SIZE = 2

_lock = threading.Lock()
_SMS: dict[int, int] = {}          # SM count per device id
_cache: list[tuple[tuple, DeviceReference]] = []


def supports(scoring) -> bool:
    """Whether the 16-bit windows kernel takes this scoring: small scores and penalties,
    and a profile band of (K + 1) codes x 512 rows within 48 KB of shared memory."""
    matrix = np.asarray(scoring.matrix)
    biggest = max(int(np.abs(matrix).max()), int(scoring.gap_open), int(scoring.gap_extend))
    return biggest <= NARROW_LIMIT and (matrix.shape[0] + 1) * 512 * 2 <= 48 * 1024


def plan(m: int) -> tuple[int, int, int]:
    """(rows per lane R, lanes per item G, bands) for a query of ``m`` symbols: G a power of
    two in 8..32, bands of G*R rows (G*R*2 bytes, a multiple of 128, is a profile column)."""
    r = 8 if m <= R8_MAX_QUERY else 16
    need = max(1, -(-m // r))
    g = 8
    while g < 32 and g < need:
        g *= 2
    bands = max(1, -(-m // (g * r)))
    return r, g, bands


def wanted_windows(m: int) -> int:
    """Windows that fill the current device once: two per item, items of G lanes, 2 blocks
    of 256 threads per SM."""
    cp = require_cupy("locate on the GPU")
    dev = cp.cuda.Device().id
    sms = _SMS.get(dev)
    if sms is None:
        sms = _SMS[dev] = cp.cuda.Device(dev).attributes["MultiProcessorCount"]
    _, g, _ = plan(m)
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
        self.starts = np.zeros(len(records) + 1, np.int64)
        np.cumsum(lengths, out=self.starts[1:])
        codes = np.concatenate(records).astype(np.uint8, copy=False) if records else None
        if codes is None or codes.size == 0:
            codes = np.zeros(1, np.uint8)
        self.codes = cp.asarray(codes)
        cp.cuda.Device().synchronize()
        self.seconds = time.perf_counter() - t0
        self.device = cp.cuda.Device().id
        self.nbytes = int(self.codes.nbytes)


def _key(records: list[np.ndarray]) -> tuple | None:
    if any(not isinstance(r, np.ndarray) or r.flags.writeable for r in records):
        return None
    return tuple((r.__array_interface__["data"][0], r.size, r.strides) for r in records)


def resident(records: list[np.ndarray]) -> DeviceReference:
    """The :class:`DeviceReference` of ``records`` on the current device: cached when every
    record is a read-only array (module docstring), else uploaded now."""
    cp = require_cupy("locate on the GPU")
    key = _key(records)
    if key is None:
        return DeviceReference(records)
    key = (cp.cuda.Device().id, key)
    with _lock:
        for k, (kk, ref) in enumerate(_cache):
            if kk == key:
                _cache.append(_cache.pop(k))
                return ref
    ref = DeviceReference(records)
    ref.records = list(records)     # keeps the arrays (and so their addresses) alive
    with _lock:
        _cache.append((key, ref))
        del _cache[:-CACHE_SIZE]
    return ref


def clear_cache() -> None:
    """Forget every resident reference (their device memory is freed with them)."""
    with _lock:
        _cache.clear()


def profile(q: np.ndarray, scoring, r: int, g: int, bands: int) -> np.ndarray:
    """uint16 [bands, K + 1, G*R]: S(q_row, c) per band, code column c (c = K: the pad
    column) and row, rows in the chunk order of ``windows.cu`` (lane t's k-th run of 8 rows
    is chunk k*G + t). Rows past the query and the pad column score min(0, min S)."""
    matrix = np.asarray(scoring.matrix, np.int64)
    k = matrix.shape[0]
    pad = min(0, int(matrix.min()))
    gr = g * r
    rows = np.full((bands * gr, k + 1), pad, np.int64)
    rows[:len(q), :k] = matrix[np.asarray(q, np.intp)]
    local = np.arange(gr)
    lane, within = local // r, local % r
    pos = ((within // 8) * g + lane) * 8 + within % 8
    out = np.empty((bands, k + 1, gr), np.int64)
    out[:, :, pos] = rows.reshape(bands, gr, k + 1).transpose(0, 2, 1)
    return out.astype(np.int16).view(np.uint16)


def window_scores(ref: DeviceReference, q: np.ndarray, scoring, starts: np.ndarray,
                  lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Best local score of ``q`` in each window ``[starts[w], starts[w] + lengths[w])`` of
    ``ref``'s concatenated codes (16-bit DPX).

    Returns (scores int64 [windows], flagged window indices int64, kernel seconds). A flagged
    window's score is not exact (its 16-bit maximum could have saturated); every other
    score is.
    """
    scores, _, flagged, seconds = _launch(ref, q, scoring, starts, lengths, False)
    return scores, flagged, seconds


def window_ends(ref: DeviceReference, q: np.ndarray, scoring, starts: np.ndarray,
                lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """:func:`window_scores` with end cells: (cells int64 [windows, 3] = score, query end,
    reference end within the window by DESIGN.md's tie rule, (0, 0) for score 0; flagged
    window indices, whose cells are not exact; kernel seconds). The kernel walks a window
    column by column on one group of lanes, so callers give it short windows."""
    scores, ends, flagged, seconds = _launch(ref, q, scoring, starts, lengths, True)
    return np.column_stack([scores, ends]), flagged, seconds


def _launch(ref, q, scoring, starts, lengths, want_ends):
    cp = require_cupy("locate on the GPU")
    starts = np.asarray(starts, np.int64)
    lengths = np.asarray(lengths, np.int64)
    n = len(starts)
    if not supports(scoring):
        raise ValueError(f"scores or gap penalties above {NARROW_LIMIT}, or an alphabet of "
                         "more than 47 codes, do not fit the 16-bit windows kernel")
    if n == 0 or len(q) == 0:
        return np.zeros(n, np.int64), np.zeros((n, 2), np.int64), np.zeros(0, np.int64), 0.0
    if lengths.max(initial=0) >= 1 << 31:
        raise ValueError("a window is longer than 2**31 - 1 symbols")
    r, g, bands = plan(len(q))
    k = int(np.asarray(scoring.matrix).shape[0])
    prof = profile(q, scoring, r, g, bands)
    go, ge = int(scoring.gap_open), int(scoring.gap_extend)
    smax = max(int(np.asarray(scoring.matrix).max()), 0)
    thr = 32767 - smax - 2
    order = np.argsort(-lengths, kind="stable").astype(np.int32)
    items = np.full(-(-n // 2) * 2, -1, np.int32)
    items[:n] = order
    nitems = items.size // 2
    bstride = 0
    if bands > 1:
        bstride = 2 * (int(lengths.max()) + 2)
    name = f"win_s16<{r}, {'true' if want_ends else 'false'}>"
    mod = get_module(_FILE, (name,))
    d_starts = cp.asarray(starts)
    d_ints = cp.asarray(np.concatenate([lengths.astype(np.int32), items]))  # lengths, items
    d_prof = cp.asarray(prof)
    bound = cp.empty(max(1, nitems * bstride), dtype=cp.uint32)
    # one result buffer (one copy back): scores [n], flagged [n], count [1], query ends [n],
    # reference ends [n]
    res = cp.zeros(4 * n + 1, dtype=cp.int32)
    grid = -(-nitems * g // _BLOCK)
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    mod.get_function(name)(
        (grid,), (_BLOCK,),
        (ref.codes, d_starts, d_ints[:n], d_ints[n:], np.int32(nitems), np.int32(g),
         np.int32(bands), d_prof, np.int32(k), np.int32(go), np.int32(ge), np.int32(thr),
         np.uint32(1), bound, np.int64(bstride), res[:n], res[n:2 * n], res[2 * n:2 * n + 1],
         np.int32(len(q)), res[2 * n + 1:3 * n + 1], res[3 * n + 1:]),
        shared_mem=(k + 1) * g * r * 2)
    stop.record()
    host = res.get()
    seconds = cp.cuda.get_elapsed_time(start, stop) / 1e3
    scores = host[:n].astype(np.int64)
    flagged = np.sort(host[n:n + int(host[2 * n])]).astype(np.int64)
    ends = np.zeros((n, 2), np.int64)
    if want_ends:
        ends[:, 0] = host[2 * n + 1:3 * n + 1]
        ends[:, 1] = host[3 * n + 1:]
    return scores, ends, flagged, seconds
