"""GPU kernels of ``locate``'s methods "scan", "scan1", "antidiagonal", "blocked" (issue 6).

:func:`score_end_method_gpu` has the meaning of the CPU specification
:func:`warpalign._backends.cpu.scan.score_end_method`: the best local cell
``(score, query_end, reference_end, wide_rows)`` of a query against one reference record,
ties broken by DESIGN.md's rule (largest score, then smallest reference end, then
smallest query end). Kernels in ``scan.cu`` (its header describes them):

* "scan" (paper 002) and "scan1" (paper 004) run the whole record a row at a time over
  tiles of ``TILE`` columns: phase 1 (F, H̃), a one-block reduction (row maximum, the next
  row's word length), phase 2 (the max-scan for E inside each tile plus a carry looked up
  over the earlier tiles within the row's reach ``p_i = ⌊(rowmax_i − gop − 1)/gex⌋ + 1``,
  paper 002's Eq. 11 window made adaptive). "scan" fuses phase 2 of row i with phase 1 of
  row i + 1 in one launch (H stays in shared memory; two launches per row) and keeps F
  and H̃ in int16 while ``rowmax_{i−1} + smax ≤ limit``, in int32 otherwise (Eqs. 9/10,
  back to narrow at ``≤ limit − 10``), decided on the device from the previous row; it
  counts the wide rows exactly as the CPU kernel does. Narrow rows store 16-bit words;
  between two narrow rows phase 1 computes two columns per 32-bit word in 16-bit DPX
  lanes (``NARROW_PACKED``; Hopper's s16x2 instructions in place of the paper's 8-bit video
  instructions), the E scan in 32-bit registers. "scan1" is int32, three launches per row, with
  paper 004's Hillis–Steele rounds (shared memory, double-buffered) as the in-tile scan.
  A record longer than ``MAX_COLUMNS`` is cut into windows of that length by locate's
  exact span bound (``window_bounds``); then ``wide_rows`` sums over the windows.
* "antidiagonal" and "blocked" cut the record into windows by the same exact bound
  (``default_window``/``window_bounds`` of :mod:`warpalign.spans`), one thread block per
  window, wavefronts inside it: one query row per thread and one cell per anti-diagonal
  step, or ``BR``×``BC`` tiles per thread per step. Queries longer than one strip
  (``AD_ROWS`` / ``BLOCKED_ROWS`` rows) run strip after strip, the bottom row passing
  through global memory. With ``gap_extend == 0`` (no bound) a record is one window.

The window maxima combine exactly (locate's module docstring): the best of
(−score, reference end, query end) over windows in record coordinates.
"""

from __future__ import annotations

import numpy as np

from ..cpu.scan import KERNEL_METHODS, NARROW_LIMIT
from .loader import get_module, require_cupy

_FILE = "scan.cu"
_NAMES = ("row_scan_fused", "row_reduce", "row_phase1", "row_phase2_scan1",
          "window_antidiagonal", "window_blocked")
#: Threads per tile of the row scans and columns per thread (SCAN_VEC, passed to scan.cu);
#: a tile is TILE = SCAN_THREADS x SCAN_VEC columns.
SCAN_THREADS = 256
SCAN_VEC = 8
TILE = SCAN_THREADS * SCAN_VEC
#: Largest alphabet (matrix side) the kernels hold in shared memory (MAX_ALPHABET in scan.cu).
MAX_ALPHABET = 64
#: "scan": phase 1 of a row after a narrow row in 16-bit DPX lanes, two columns per word
#: (False: one column per 32-bit register, the earlier form, kept for comparison).
NARROW_PACKED = True
#: Longest record a row scan takes whole (18 bytes of device memory per column for "scan").
MAX_COLUMNS = 1 << 29
#: Window residues per launch of the windowed methods (bounds their row buffers).
CHUNK_RESIDUES = 1 << 26
#: Query rows per launch: one thread each ("antidiagonal"); BR per thread ("blocked").
AD_ROWS = 256
BR, BC = 8, 8
BLOCKED_THREADS = 128
BLOCKED_ROWS = BR * BLOCKED_THREADS

__all__ = ["MAX_COLUMNS", "TILE", "check_device", "score_end_method_gpu"]


def _cupy():
    return require_cupy("the CUDA locate kernels")


def check_device() -> None:
    """Raise :class:`~warpalign.errors.BackendUnavailable` unless a CUDA device answers."""
    _cupy()


def _kernels(vec: int = SCAN_VEC):
    mod = get_module(_FILE, _NAMES, (f"SCAN_VEC={int(vec)}",))
    return {n: mod.get_function(n) for n in _NAMES}


def _round32(x: int) -> int:
    return max(32, -(-x // 32) * 32)


def score_end_method_gpu(method: str, q: np.ndarray, t: np.ndarray, scoring,
                         limit: int = NARROW_LIMIT, *, packed: bool = NARROW_PACKED
                         ) -> tuple[int, int, int, int]:
    """(score, query_end, reference_end, wide_rows) of ``q`` against one record ``t`` by
    ``method`` on the current CUDA device; the same values as the CPU ``score_end_method``
    (``wide_rows``: rows "scan" ran in int32 with narrow ``limit``; 0 for the others).
    ``packed``: "scan"'s narrow rows in 16-bit DPX lanes (:data:`NARROW_PACKED`)."""
    if method not in KERNEL_METHODS:
        raise ValueError(f"invalid method: {method!r}; expected one of "
                         f"{', '.join(map(repr, KERNEL_METHODS))}")
    q = np.ascontiguousarray(q, dtype=np.uint8)
    t = np.ascontiguousarray(t, dtype=np.uint8)
    mat = np.ascontiguousarray(scoring.matrix, dtype=np.int32)
    go, ge = int(scoring.gap_open), int(scoring.gap_extend)
    if ge > go:
        raise ValueError("the scan methods need gap_extend <= gap_open")
    if method == "scan" and not 0 < limit <= NARROW_LIMIT:
        raise ValueError(f"narrow limit {limit} outside 1..{NARROW_LIMIT}")
    a = mat.shape[0]
    if a > MAX_ALPHABET:
        raise ValueError(f"alphabet of {a} symbols: the CUDA locate kernels take at most "
                         f"{MAX_ALPHABET}")
    m, n = len(q), len(t)
    smax = max(int(mat.max()), 0)
    if m == 0 or n == 0:   # no cells; "scan" still decides every row's word length
        wide = m if (method == "scan" and smax > limit) else 0
        return 0, 0, 0, wide
    from ...spans import default_window, span_bound, window_bounds
    span = span_bound(q, scoring)
    if method in ("scan", "scan1"):
        if n > MAX_COLUMNS and span is not None and 0 < span <= MAX_COLUMNS:
            bounds = window_bounds(n, MAX_COLUMNS, span)
        else:
            bounds = np.array([[0, n]], np.int64)
        cells, wide = [], 0
        for lo, hi in bounds.tolist():
            s, i, j, w = _row_scan(method == "scan", q, t[lo:hi], mat, go, ge, smax, limit,
                                   packed=packed)
            cells.append((s, i, j + lo))
            wide += w
        return (*_best(cells), wide)
    if span == 0:          # nothing can score above 0
        return 0, 0, 0, 0
    bounds = window_bounds(n, default_window(span, n), span)
    return (*_windows(method, q, t, bounds, mat, go, ge), 0)


def _best(cells) -> tuple[int, int, int]:
    """DESIGN.md's tie rule over (score, query end, reference end) cells."""
    c = np.array(cells, np.int64).reshape(-1, 3)
    k = int(np.lexsort((c[:, 1], c[:, 2], -c[:, 0]))[0])
    if c[k, 0] <= 0:
        return 0, 0, 0
    return int(c[k, 0]), int(c[k, 1]), int(c[k, 2])


def _row_scan(narrow: bool, q, t, mat, go, ge, smax, limit, vec: int = SCAN_VEC, *,
              packed: bool = NARROW_PACKED):
    """One record (or window) by rows: (score, query end, reference end, wide rows);
    "scan" (``narrow``: int16 rows while they fit; ``packed``: in DPX lanes) or "scan1"
    (int32); ``vec`` columns per thread (tiles of SCAN_THREADS x vec columns)."""
    cp = _cupy()
    k = _kernels(vec)
    m, n, a = len(q), len(t), mat.shape[0]
    ntiles = -(-n // (SCAN_THREADS * vec))
    i32 = np.int32
    d_t, d_q, d_mat = cp.asarray(t), cp.asarray(q), cp.asarray(mat)
    rowmax, rowj = cp.zeros(m + 1, cp.int32), cp.zeros(m + 1, cp.int32)
    modes = cp.zeros(m + 2, cp.int32)      # word length of each row (0: int16, 1: int32)
    carry = cp.zeros(ntiles, cp.int32)
    grid, block = (ntiles,), (SCAN_THREADS,)
    if narrow:
        lim = int(limit)
        modes[1] = 1 if smax > lim else 0
        # per parity p (row i uses p = i % 2): H~ in both word lengths, tile aggregates.
        # The int16 buffers start one element in, so that the packed kernel's words of
        # columns (j, j + 1), j odd, are 4-byte aligned; two spare elements at the end.
        ht16 = [cp.zeros(n + 3, cp.int16)[1:] for _ in range(2)]
        ht32 = [cp.zeros(n + 1, cp.int32) for _ in range(2)]
        f16, f32 = cp.zeros(n + 3, cp.int16)[1:], cp.zeros(n + 1, cp.int32)
        # DPX lanes only while go, ge and -smin fit int16 (then no lane can wrap)
        packed = i32(packed and go <= 32767 and int(mat.min()) >= -32767)
        agg = [[cp.zeros(ntiles, cp.int32) for _ in range(4)] for _ in range(2)]  # max, j, G, G2

        def fused(i):   # phase 2 of row i (none for row 0) and phase 1 of row i + 1
            c, nx = i % 2, (i + 1) % 2
            k["row_scan_fused"](grid, block, (
                d_t, i32(n), d_q, i32(i), i32(m), d_mat, i32(a), i32(go), i32(ge), packed, modes,
                rowmax, carry, agg[c][2], agg[c][3], ht16[c], ht32[c], ht16[nx], ht32[nx],
                f16, f32, *agg[nx]))
        fused(0)
        for i in range(1, m + 1):
            tmax, tj, tg, _ = agg[i % 2]
            k["row_reduce"]((1,), (1024,), (i32(ntiles), i32(i), i32(smax), i32(lim), i32(ge),
                                            tmax, tj, tg, rowmax, rowj, modes, carry))
            if i < m:      # the last row's H is never needed (its maximum is H~'s)
                fused(i)
    else:                  # "scan1": int32 rows (modes all 1; the limit keeps them so)
        modes.fill(1)
        null = np.uint64(0)
        h32, f32, t32 = (cp.zeros(n + 1, cp.int32) for _ in range(3))
        tmax, tj, tg = (cp.zeros(ntiles, cp.int32) for _ in range(3))
        for i in range(1, m + 1):
            k["row_phase1"](grid, block, (d_t, i32(n), d_q, i32(i), d_mat, i32(a), i32(go),
                                          i32(ge), modes, null, null, null, h32, f32, t32,
                                          tmax, tj, tg))
            k["row_reduce"]((1,), (1024,), (i32(ntiles), i32(i), i32(smax), i32(-(1 << 30)),
                                            i32(ge), tmax, tj, tg, rowmax, rowj, modes, carry))
            k["row_phase2_scan1"](grid, block, (i32(n), i32(i), i32(go), i32(ge), rowmax, tg,
                                                carry, h32, t32))
    rm, rj, md = (x.get()[1:m + 1].astype(np.int64) for x in (rowmax, rowj, modes))
    rows = np.arange(1, m + 1, dtype=np.int64)
    s, i, j = _best(np.stack([rm, rows, rj], axis=1))
    return s, i, j, int(md.sum()) if narrow else 0


def _windows(method: str, q, t, bounds, mat, go, ge) -> tuple[int, int, int]:
    """Best cell over the windows ``bounds`` of record ``t`` (record coordinates)."""
    cp = _cupy()
    kern = _kernels()["window_antidiagonal" if method == "antidiagonal" else "window_blocked"]
    m, a = len(q), mat.shape[0]
    i32, i64 = np.int32, np.int64
    d_q, d_mat = cp.asarray(q), cp.asarray(mat)
    strip = AD_ROWS if method == "antidiagonal" else BLOCKED_ROWS
    cells = []
    start = 0
    while start < len(bounds):
        stop, size = start, 0
        while stop < len(bounds) and (stop == start or size + bounds[stop, 1] - bounds[stop, 0]
                                      <= CHUNK_RESIDUES):
            size += int(bounds[stop, 1] - bounds[stop, 0])
            stop += 1
        b = bounds[start:stop]
        base = int(b[0, 0])
        d_t = cp.asarray(t[base:int(b[-1, 1])])
        lens = (b[:, 1] - b[:, 0]).astype(np.int32)
        d_lo = cp.asarray((b[:, 0] - base).astype(np.int64))
        d_len = cp.asarray(lens)
        nw = len(b)
        out = cp.zeros((nw, 3), cp.int32)
        if m > strip:      # the strips' bottom rows (H, F) per window
            stride = int(lens.max()) + 1
            row_h, row_f = cp.zeros(nw * stride, cp.int32), cp.zeros(nw * stride, cp.int32)
        else:
            stride, row_h, row_f = 0, np.uint64(0), np.uint64(0)
        for r0 in range(0, m, strip):
            rows = min(strip, m - r0)
            if method == "antidiagonal":
                threads = _round32(rows)
                smem = (a * a + 4 * threads) * 4
            else:
                threads = _round32(-(-rows // BR))
                smem = (a * a + 4 * threads * BC) * 4
            kern((nw,), (threads,), (d_t, d_lo, d_len, d_q, i32(r0), i32(rows), d_mat, i32(a),
                                     i32(go), i32(ge), row_h, row_f, i64(stride), out),
                 shared_mem=smem)
        res = out.get().astype(np.int64)
        res[:, 2] += b[:, 0]
        cells.extend(res[res[:, 0] > 0].tolist())
        start = stop
    return _best(cells) if cells else (0, 0, 0)
