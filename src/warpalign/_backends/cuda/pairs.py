"""Bulk pair scoring on the GPU (paper 000): word-wise DPX (``pairs.cu``); the bitsliced
BPBC engine is :mod:`.bitsliced`.

Both engines have the pair-kernel signature of :mod:`warpalign.pairs`::

    score_pairs(xcodes, xoff, ycodes, yoff, scoring, algorithm)
        -> (scores int32 [pairs], saturated pair indices int64, seconds per step dict)

* :func:`score_wordwise` (``method="wordwise"``): any scoring, local/global/semiglobal.
  Pairs are bucketed by query length into tiles of G lanes x R rows (G a power of two,
  several bands of 32 R rows past that), sorted by target length and packed two per
  32-bit register (16-bit DPX) where the values fit: local always (a pair whose maximum
  reaches the 16-bit threshold is flagged and rescored exactly by the caller), global and
  semiglobal when ``(m + n + 2) * max|score or penalty|`` stays under ``INT16_BOUND``;
  otherwise one pair per register (32-bit DPX). DNA local scoring (codes A/C/G/T only,
  scores fitting a byte) looks scores up with one PRMT per cell pair; any other scoring
  reads a K x K table in shared memory. DNA local with linear gaps runs ``ww_dna`` (two
  columns per iteration over columns packed by ``ww_ypack``).
* ``score_bitsliced`` (``method="bitsliced"``): paper 000's circuits on 32-bit words, one
  pair per bit, in :mod:`.bitsliced` (its W2B/SWA/B2W steps and knobs are there).

``score_pairs(mode="full")``'s local end cells come from ww_kernel's ENDS form
(:mod:`.pair_ends`, planned by the helpers here: :func:`ww_table`, :func:`launch_groups`,
:func:`ww_items`); without a threshold in one pass with the scoring kernels, which
:func:`score_wordwise` plans (:func:`plan_wordwise`) and queues (:func:`queue_wordwise`)
for it too.

The pair kernels take the codes where they are (device arrays from the ``encode``
engine, :mod:`.encode`: no copy to the host). For CuPy inputs :mod:`.pairs_ahead` queues
the kept plan's packing (``ww_ypack_raw`` from y's characters: :func:`queue_packs`), x's
encode and ww_dna at once, ww_dna guarded by the encode's flags.

Timings (seconds): ``h2g`` (inputs to the GPU), ``pack`` (ww_ypack, or ww_ypack_raw with
y's encode), ``w2b``, ``swa``,
``b2w``, ``g2h`` (scores back), by CUDA events around each step.

Measured (bench/results/pairs_gpu.jsonl; paper 000's setting: 32,768 random DNA pairs,
m = 128, n = 1,024 / 2,048 / 4,096 / 8,192 / 16,384, 2/-1/1), DP kernel, session 16: on
one NVIDIA H100 word-wise 7,867 / 7,984 / 8,006 / 8,039 / 8,073 GCUPS and bitsliced
4,226 / 4,344 / 4,517 / 4,588 / 4,624; on one H200 7,641 / 7,977 / 7,997 / 8,043 / 8,078
and 4,253 / 4,337 / 4,515 / 4,587 / 4,624 (paper 000: 2,197 on a GTX TITAN X). The
kernels before their column prefetch (same runs): word-wise 7,469-7,752 / 7,822-7,860 /
7,880-7,881 / 7,907-7,913 / 7,923-7,925, bitsliced 3,955-4,017 / 4,001-4,003 / 4,167-
4,169 / 4,228-4,230 / 4,260-4,262; before the two-column loops (H200): 5,693 / - /
6,108 / - / 6,207 and 3,372 / - / 3,391 / - / 3,413. With the pageable host-to-GPU copy
of the inputs the whole call is ~500-600 and ~230-290 GCUPS.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from ..cpu.pairwise import ALGORITHM_CODES, GLOBAL, LOCAL, SEMIGLOBAL
from .loader import require_cupy
from .transfer import upload

_FILE = "pairs.cu"
BLOCK = 256
#: Word-wise DNA-path rows per lane (linear gaps: ww_dna; affine: ww_kernel); the table
#: path (any other scoring) uses 16 rows, one chain. ww_dna on an H200, 32,768 pairs,
#: m = 128, n = 16,384, kernel time: R = 32: 8,182 GCUPS, R = 16: 7,729.
WW_DNA_ROWS = {False: 32, True: 24}
#: ww_dna's column bytes, loaded one iteration ahead, are also prefetched to L2 2,048
#: bytes ahead (True). Kernel GCUPS at n = 1,024 / 4,096 / 16,384, 32,768 pairs, m = 128,
#: one H100, same runs (bench/results/pairs_gpu.jsonl, docs/gpu-notes.md session 16):
#: without / with the prefetch 7,752 / 7,881 / 7,923 and 7,867 / 8,006 / 8,073.
WW_DNA_PREFETCH = True
#: Global/semiglobal pairs use 16-bit lanes when every value stays within this bound.
INT16_BOUND = 14000
#: Local 16-bit lanes: scores and penalties must stay this small (else 32-bit lanes).
INT16_SMALL = 4000


def _cupy():
    return require_cupy("backend 'cuda'")


def _top(codes) -> int:
    """The largest code (0 for none), on the host or the device."""
    return int(codes.max()) if codes.size else 0


def check_device() -> None:
    """Raise :class:`BackendUnavailable` (naming the reason) unless a CUDA device answers."""
    _cupy()


def device_name() -> str:
    cp = _cupy()
    return cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()


def pairs_module(names):
    """The module of ``pairs.cu`` holding the kernels ``names`` (compiled once each)."""
    from .loader import get_module
    return get_module(_FILE, tuple(sorted(set(names))))


class Clock:
    """CUDA events around steps; seconds per step after :meth:`finish`."""

    def __init__(self, cp):
        self._cp = cp
        self._marks = []

    def mark(self, name: str | None) -> None:
        ev = self._cp.cuda.Event()
        ev.record()
        self._marks.append((name, ev))

    def finish(self) -> dict:
        self._marks[-1][1].synchronize()
        out: dict[str, float] = {}
        for (name, a), (_, b) in zip(self._marks, self._marks[1:]):
            if name is not None:
                out[name] = out.get(name, 0.0) + self._cp.cuda.get_elapsed_time(a, b) / 1e3
        return out


def check_runs(kernel_runs) -> None:
    if isinstance(kernel_runs, bool) or not isinstance(kernel_runs, int) or kernel_runs < 1:
        raise ValueError(f"invalid kernel_runs: {kernel_runs!r}; expected an integer >= 1")


def rerun(clock: Clock, nflag, run: int) -> None:
    """Before a DP kernel launch: run 0 starts the ``swa`` clock; a repeated run (the
    ``kernel_runs`` knob) first clears the saturation counter outside the clock."""
    if run:
        clock.mark(None)
        if nflag is not None:
            nflag.fill(0)
    clock.mark("swa")


# --------------------------------------------------------------------------- word-wise


_POWERS = np.array([1, 2, 4, 8, 16, 32], np.int64)   # group sizes G


def _tiles(m: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Group size G (power of two <= 32) and band count per query length."""
    need = np.maximum(1, -(-m // rows))                       # lanes of R rows
    g = _POWERS[np.searchsorted(_POWERS, np.minimum(need, 32))]  # smallest power >= need
    bands = np.where(need > 32, -(-m // (32 * rows)), 1)
    return g, bands


def launch_groups(xl: np.ndarray, yl: np.ndarray, widths: np.ndarray, rows: int
                  ) -> list[tuple[int, int, int, np.ndarray]]:
    """(bits, G, bands, pairs) per word-wise launch, in launch order (16-bit lanes first,
    then G, then bands ascending); each launch's pairs by target length, then query
    length, both descending (ties: higher index first). Pairs all of one query length,
    one target length and one lane width (a 2-D array on each side) are one launch, in
    descending index order, planned without a sort (issue 22: the sort took ~1 ms of
    host time per call of 32,768 pairs on an H100's host, the GPU idle meanwhile); any
    other input goes to :func:`plan_by_sort`, which gives the same plan for them."""
    if xl.size and _uniform(xl) and _uniform(yl) and _uniform(widths):
        g, bands = _tiles(xl[:1], rows)
        return [(32 if int(widths[0]) == 32 else 16, int(g[0]), int(bands[0]),
                 np.arange(xl.size - 1, -1, -1, dtype=np.int64))]
    return plan_by_sort(xl, yl, widths, rows)


def _uniform(values: np.ndarray) -> bool:
    """Whether every value equals the first (True for none)."""
    return values.size == 0 or bool((values == values[0]).all())


def plan_by_sort(xl: np.ndarray, yl: np.ndarray, widths: np.ndarray, rows: int
                 ) -> list[tuple[int, int, int, np.ndarray]]:
    """:func:`launch_groups` for any lengths: one stable sort for all launches and one
    pass per launch (the planner of a call of 32,768 pairs took ~4 ms of host time with
    a sort and an ``np.unique`` per (bits, G), 2-core development machine)."""
    g_of, bands_of = _tiles(xl, rows)
    top = int(bands_of.max(initial=1)) + 1
    group = ((widths == 32) * 6 + np.searchsorted(_POWERS, g_of)) * top + bands_of
    longest = int(xl.max(initial=0)) + 1
    if int(yl.max(initial=0)) < (1 << 62) // longest:     # one key: yl major, xl minor
        ascending = np.argsort(yl * longest + xl, kind="stable")
    else:
        ascending = np.lexsort((xl, yl))
    grouped = group[ascending]
    out = []
    for key in np.flatnonzero(np.bincount(group)).tolist():
        rest, bands = divmod(key, top)
        out.append((32 if rest >= 6 else 16, 1 << (rest % 6), bands,
                    ascending[grouped == key][::-1]))
    return out


def pack_offsets(items: np.ndarray, yl: np.ndarray, g: int, grid: int,
                 length: int | None = None) -> np.ndarray:
    """``ww_ypack``'s byte offsets (int64, item slots + 1) of each item slot's packed
    columns: the grid's ``grid * BLOCK // g`` slots (``items``: pairs of pair indices,
    -1 for none, filling the first slots) each get (its warp's widest item + 4 G + 4)
    bytes rounded up to words, the last 2,048 more (ww_dna's prefetch reads up to 2,048
    bytes ahead). ``length``: the target length when every pair has it (then no pair's
    length is read: the same offsets by arithmetic)."""
    nitems = items.size // 2
    nall = grid * BLOCK // g
    per_warp = 32 // g
    if length is not None:
        # every item slot holds a pair of this length; slots of a warp with one are wide
        wide = -(-nitems // per_warp) * per_warp
        full = (int(length) + 4 * g + 4 + 3) // 4 * 4
        empty = (4 * g + 4 + 3) // 4 * 4
        at = np.arange(nall + 1, dtype=np.int64)
        ypoff = np.where(at <= wide, at * full, wide * full + (at - wide) * empty)
        ypoff[-1] += 2048
        return ypoff
    cols = np.zeros(nall, np.int64)
    pair = items.reshape(-1, 2)
    cols[:nitems] = np.maximum(np.where(pair[:, 0] >= 0, yl[pair[:, 0]], 0),
                               np.where(pair[:, 1] >= 0, yl[pair[:, 1]], 0))
    wmax = np.repeat(cols.reshape(-1, per_warp).max(axis=1), per_warp)
    sizes = (wmax + 4 * g + 4 + 3) // 4 * 4
    sizes[-1] += 2048
    ypoff = np.zeros(nall + 1, np.int64)
    np.cumsum(sizes, out=ypoff[1:])
    return ypoff


@dataclass(frozen=True)
class WwTable:
    """A scoring as the word-wise kernels take it (:func:`ww_table`)."""

    table: np.ndarray     # int32 words: DNA 5 (4 bytes each, then the pad column), else K*K
    k: int                # K: the table's side (4 for DNA: codes A C G T)
    dna: bool             # scores by PRMT (local, codes A/C/G/T, scores fitting a byte)
    rows: int             # rows per lane
    smax: int             # the largest stored score S' (the 16-bit threshold)
    go: int
    ge: int
    affine: bool
    bias: int             # g (linear) or go (affine): stored H' = H + bias
    biggest: int          # the largest |score| or penalty (at least 1)
    narrow: bool          # local: 16-bit lanes (else 32-bit)


def ww_table(scoring, local: bool, xcodes, ycodes, largest: int | None,
             rows: int | None) -> WwTable:
    """The score table, the DNA choice and the rows per lane of ``scoring`` for the
    word-wise kernels; ``largest``: the largest code when known (else read from the codes
    where it matters); ``rows``: the DNA path's rows per lane (default
    :data:`WW_DNA_ROWS`)."""
    matrix = np.asarray(scoring.matrix, dtype=np.int64)
    go, ge = int(scoring.gap_open), int(scoring.gap_extend)
    affine = go != ge
    bias = go if affine else ge
    alpha = matrix.shape[0]
    biggest = max(int(np.abs(matrix).max()), go, ge, 1)
    shift = 0 if affine else bias               # S' = S + g on linear gaps
    dna_table = matrix[:4, :4] + shift
    if largest is None and local and alpha >= 4:
        largest = max(_top(xcodes), _top(ycodes))
    dna = (local and alpha >= 4 and largest < 4
           and int(dna_table.min()) >= -128 and int(dna_table.max()) <= 127)
    if dna:
        words = [int(sum((int(dna_table[x, y]) & 0xFF) << (8 * x) for x in range(4)))
                 for y in range(4)] + [0xFFFFFFFF]
        table = np.array(words, dtype=np.uint32).view(np.int32)
        k = 4
        rows = WW_DNA_ROWS[affine] if rows is None else int(rows)
    else:
        k = alpha + 1
        pad = -(go + ge + 1)
        tab = np.full((k, k), pad, dtype=np.int64)
        tab[:alpha, :alpha] = matrix
        table = (tab + shift).astype(np.int32).ravel()
        rows = 16
    smax = int(table.view(np.int8).max()) if dna else int(table.max())
    return WwTable(table, k, dna, rows, smax, go, ge, affine, bias, biggest,
                   4 * biggest + bias <= INT16_SMALL)


def ww_threshold(bits: int, smax: int) -> int:
    """The stored value from which a local 16-bit lane flags its item (no value can
    wrap below it); 32-bit lanes: never."""
    return 32767 - max(smax, 0) - 2 if bits == 16 else (1 << 30)


def ww_items(order: np.ndarray, bits: int, g: int) -> tuple[np.ndarray, int, int]:
    """A launch's items (pairs of pair indices for 16-bit lanes, -1 for none), their
    count and the grid's blocks."""
    per = 2 if bits == 16 else 1
    items = np.full(-(-order.size // per) * per, -1, dtype=np.int32)
    items[:order.size] = order
    nitems = items.size // per
    return items, nitems, -(-nitems * g // BLOCK)


def ww_name(bits: int, rows: int, affine: bool, code: int, dna: bool, ends: bool) -> str:
    """The name of a ww_kernel instance."""
    flag = {True: "true", False: "false"}
    return f"ww_kernel<{bits}, {rows}, {flag[affine]}, {code}, {flag[dna]}, {flag[ends]}>"


def band_buffer(cp, bands: int, nitems: int, ncols: int, affine: bool, dummy):
    """(stride, buffer) of a launch's band buffers (``dummy`` for one band)."""
    if bands == 1:
        return 0, dummy
    bstride = (ncols + 2) * (2 if affine else 1)
    return bstride, cp.empty(nitems * bstride, dtype=cp.uint32)


def device_codes(cp, xcodes, ycodes):
    """Both sides' codes on the device (a device array is used in place for y; x is
    copied with 4 zero bytes past its end: ww_dna reads the x rows of a lane as whole
    32-bit words)."""
    d_x = cp.empty(xcodes.size + 4, dtype=cp.uint8)
    d_x[xcodes.size:] = 0
    if isinstance(xcodes, cp.ndarray):      # codes on the device already: no host copy
        d_x[:xcodes.size] = xcodes
    elif xcodes.size:
        d_x[:xcodes.size].set(np.ascontiguousarray(xcodes, dtype=np.uint8))
    d_y = cp.asarray(ycodes if ycodes.size else np.zeros(1, np.uint8))
    return d_x, d_y


@dataclass(frozen=True)
class WwPlan:
    """:func:`score_wordwise`'s launches, planned on the host before any copy
    (:func:`plan_wordwise`); :func:`queue_wordwise` queues them."""

    tab: WwTable
    code: int                 # the algorithm's kernel code
    launches: list            # (name, bits, G, bands, nitems, grid, at, pack, ncols) each
    names: tuple              # the kernels to load (``pairs_module``)
    small: list               # host arrays that go up in one copy (``at``/``pack`` index it)


def plan_wordwise(xcodes, xoff: np.ndarray, ycodes, yoff: np.ndarray, scoring, algorithm: str,
                  *, rows: int | None, prefetch: bool | None, largest: int | None) -> WwPlan:
    """The plan of :func:`score_wordwise` (arguments as there; offsets int64, pairs >= 1):
    per launch its kernel, items and (ww_dna) column layout; ``small`` starts with the
    offsets and the score table, then each launch's items (and packed-column offsets)."""
    code = ALGORITHM_CODES[algorithm]
    xl = np.diff(xoff)
    yl = np.diff(yoff)
    ylen = int(yl[0]) if _uniform(yl) else None     # one target length: plans by arithmetic
    local = code == LOCAL
    tab = ww_table(scoring, local, xcodes, ycodes, largest, rows)
    if local:
        widths = np.full(xl.size, 16 if tab.narrow else 32)
    else:
        widths = np.where((xl + yl + 2) * tab.biggest + tab.bias <= INT16_BOUND, 16, 32)
    launches = []
    names = []
    small = [xoff, yoff, tab.table]
    for bits, g, bands, order in launch_groups(xl, yl, widths, tab.rows):
        items, nitems, grid = ww_items(order, bits, g)
        pack = None
        if bits == 16 and tab.dna and not tab.affine:
            pf = WW_DNA_PREFETCH if prefetch is None else bool(prefetch)
            name = (f"ww_dna<{tab.rows}, {'true' if bands > 1 else 'false'}, "
                    f"{'true' if pf else 'false'}>")
            names.append("ww_ypack")
            pack = len(small) + 1               # where its offsets go in ``small``
            small += [items, pack_offsets(items, yl, g, grid, ylen)]
        else:
            name = ww_name(bits, tab.rows, tab.affine, code, tab.dna, False)
            small.append(items)
        names.append(name)
        ncols = ylen if ylen is not None else int(yl[order].max())
        launches.append((name, bits, g, bands, nitems, grid, len(small) - 1 - (pack is not None),
                         pack, ncols))
    return WwPlan(tab, code, launches, tuple(names), small)


#: Plans of :func:`score_wordwise` kept with their arrays on the device, for inputs of one
#: query length and one target length (2-D arrays, fixed-size batches): the plan and its
#: upload took ~1.1 ms of host time of a 4.5 ms call (32,768 pairs of 128 x 4,096 from
#: CuPy arrays, one H200, session 24), the GPU idle meanwhile. At most this many plans
#: (least recently used out first); each holds ~1 MB of device memory per 32,768 pairs.
PLAN_CACHE = 8
_plans: OrderedDict = OrderedDict()
_plans_lock = threading.Lock()


def shape_key(cp, xoff: np.ndarray, yoff: np.ndarray, scoring, algorithm: str, rows,
              prefetch, largest, lengths=(None, None)) -> tuple | None:
    """The cache key of a plan whose offsets are arithmetic (both sides of one length
    each, from 0), or None (not kept: other offsets, or the largest code unknown). A side's
    ``lengths`` entry, where the caller knows it, spares reading its offsets."""
    if largest is None or xoff.size < 2 or xoff[0] != 0 or yoff[0] != 0:
        return None
    got = []
    for off, length in zip((xoff, yoff), lengths):
        steps = np.diff(off) if length is None else None
        if steps is not None and not _uniform(steps):
            return None
        got.append(int(steps[0] if length is None else length))
    return (cp.cuda.Device().id, xoff.size - 1, *got, scoring, algorithm,
            tuple(WW_DNA_ROWS.items()) if rows is None else int(rows),
            WW_DNA_PREFETCH if prefetch is None else bool(prefetch), BLOCK, int(largest) < 4)


def planned_wordwise(cp, xcodes, xoff: np.ndarray, ycodes, yoff: np.ndarray, scoring,
                     algorithm: str, *, rows, prefetch, largest,
                     lengths=(None, None)) -> tuple[WwPlan, list]:
    """(:func:`plan_wordwise`, its ``small`` arrays on the current device). Plans of
    arithmetic offsets (:func:`shape_key`) are kept (:func:`kept_plan`). The key holds
    the largest code only as below 4 or not: the only use the plan makes of it (the DNA
    path). ``lengths``: as :func:`shape_key`'s."""
    key = shape_key(cp, xoff, yoff, scoring, algorithm, rows, prefetch, largest, lengths)

    def make():
        plan = plan_wordwise(xcodes, xoff, ycodes, yoff, scoring, algorithm, rows=rows,
                             prefetch=prefetch, largest=largest)
        return plan, plan.small
    return kept_plan(cp, key, make)


def kept_plan(cp, key: tuple | None, make) -> tuple:
    """``make()``'s (plan, host arrays) as (plan, the arrays on the current device), kept
    under ``key`` (:data:`PLAN_CACHE`, least recently used out first; None: not kept) and
    shared by every thread: a plan is frozen, its device arrays are only read by the
    kernels, and their upload is complete before they are kept (read from any stream
    after)."""
    if key is not None:
        with _plans_lock:
            kept = _plans.get(key)
            if kept is not None:
                _plans.move_to_end(key)
                return kept
    plan, small = make()
    device = upload(cp, small)
    if key is not None:
        cp.cuda.get_current_stream().synchronize()
        with _plans_lock:
            _plans[key] = (plan, device)
            while len(_plans) > PLAN_CACHE:
                _plans.popitem(last=False)
    return plan, device


_ZERO_WORDS = bytes(32)


def zero_words(cp):
    """Four zero ``uint64`` words on the current device, kept with the code tables
    (:func:`~.encode.device_table`: made once, complete before kept; a fresh ``cp.zeros``
    took ~14 us of the host's time a call before ww_dna's launch, session 40): the open
    guard and the unused buffer arguments of :func:`queue_wordwise`'s kernels, which no
    kernel writes (one band has no band buffer; the score-only kernels no targets or
    ends)."""
    from .encode import device_table
    return device_table(cp, np.frombuffer(_ZERO_WORDS, np.uint8)).view(cp.uint64)


def queue_packs(cp, plan: WwPlan, mod, device: list, clock: Clock, *, d_y=None, guard=None,
                ychars=None) -> list:
    """Each ``ww_dna`` launch's packed columns of ``plan`` (None for other launches),
    queued on the current stream (``mod``, ``device``: as :func:`queue_wordwise`'s): by
    ``ww_ypack`` from y's codes ``d_y`` (``guard``: the encode's flags, None: open), or by
    ``ww_ypack_raw`` from ``ychars``: (y's characters, the code table on the device, y's
    two flag words; ``mod`` holds it too), which encodes y on the way and leaves its
    largest code in the flags (no code array). Step ``pack`` on ``clock``."""
    d_yo = device[1]
    out = []
    for _, _, g, _, nitems, _, at, pack, _ in plan.launches:
        if pack is None:
            out.append(None)
            continue
        d_ypoff = device[pack]
        nall = d_ypoff.size - 1
        ypk = cp.empty(int(plan.small[pack][-1]) // 4, dtype=cp.uint32)
        clock.mark("pack")
        head = (d_yo, device[at], np.int32(nitems), np.int32(2 * g), d_ypoff, np.int32(nall),
                ypk)
        if ychars is None:
            mod.get_function("ww_ypack")((min(nall, 65535),), (128,),
                                         (d_y, *head, zero_words(cp) if guard is None else guard))
        else:
            chars, code_table, yflags = ychars
            mod.get_function("ww_ypack_raw")((min(nall, 65535),), (128,),
                                             (chars, *head, code_table, yflags))
        out.append(ypk)
    return out


def queue_wordwise(cp, plan: WwPlan, mod, d_x, d_y, device: list, d_out, d_flag, d_nflag,
                   clock: Clock, kernel_runs: int = 1, guard=None, packed=None) -> None:
    """Queue ``plan``'s kernels on the current stream (``mod``: a module of its
    ``names``; ``device``: ``plan.small`` uploaded): each pair's score into ``d_out``
    (int32, real units before :func:`score_wordwise`'s global/semiglobal readout), the
    flagged pairs into ``d_flag`` and their count into ``d_nflag``; steps ``pack`` and
    ``swa`` on ``clock``. ``guard``: the encode's device flags, read by ww_ypack and
    ww_dna (pairs.cu: they write nothing when a code is above 3); None: always open.
    ``packed``: :func:`queue_packs`' columns, queued by the caller already (None: packed
    here from ``d_y``, first)."""
    tab = plan.tab
    d_xo, d_yo, d_table = device[:3]
    dummy = zero_words(cp)                      # unused buffers, and the open guard
    guard = dummy if guard is None else guard
    if packed is None:
        packed = queue_packs(cp, plan, mod, device, clock, d_y=d_y, guard=guard)
    for (name, bits, g, bands, nitems, grid, at, pack, ncols), ypk in zip(plan.launches,
                                                                            packed):
        thr = ww_threshold(bits, tab.smax)
        bstride, bound = band_buffer(cp, bands, nitems, ncols, tab.affine, dummy)
        kern = mod.get_function(name)
        d_items = device[at]
        if pack is not None:
            for run in range(kernel_runs):
                rerun(clock, d_nflag, run)
                kern((grid,), (BLOCK,),
                     (d_x, d_xo, d_yo, ypk, device[pack], d_items, np.int32(nitems),
                      np.int32(g), np.int32(bands), d_table, np.int32(tab.ge), np.int32(thr),
                      np.uint32(1), bound, np.int64(bstride), d_out, d_flag, d_nflag, guard))
            continue
        for run in range(kernel_runs):
            rerun(clock, d_nflag, run)
            kern((grid,), (BLOCK,),
                 (d_x, d_xo, d_y, d_yo, d_items, np.int32(nitems), np.int32(g),
                  np.int32(bands), d_table, np.int32(tab.k), np.int32(tab.go), np.int32(tab.ge),
                  np.int32(thr), np.uint32(1), bound, np.int64(bstride), d_out, d_flag,
                  d_nflag, dummy, dummy),
                 shared_mem=int(tab.table.size) * 4)


def score_wordwise(xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray, yoff: np.ndarray,
                   scoring, algorithm: str = "local", *, rows: int | None = None,
                   prefetch: bool | None = None, kernel_runs: int = 1,
                   largest: int | None = None) -> tuple[np.ndarray, np.ndarray, dict]:
    """Scores of pairs (x_i, y_i) on the GPU, one pair per 16- or 32-bit DPX lane.

    ``rows``: rows per lane of the DNA path (default :data:`WW_DNA_ROWS`; for
    measurements and tests);
    ``prefetch``: ww_dna's L2 prefetch of its columns (default :data:`WW_DNA_PREFETCH`).
    ``kernel_runs`` (benchmarks): launch each DP kernel that many times back to back;
    the result is the same and ``swa`` is the mean time per run, i.e. the kernel with
    the GPU already busy rather than just after the host-to-device copy.
    ``largest``: the largest code of both sides, when the caller knows it (else two
    reductions over the codes, each a sync, find it).
    DNA local scoring with linear gaps (16-bit lanes) runs ``ww_dna`` (packed columns by
    ``ww_ypack``, timed as step ``pack``), the rest ww_kernel.

    The host plans every launch before any copy (no sync on the way); the offsets, the
    score table and each launch's items and packed-column offsets go up in one copy (a
    plan of one query and one target length is kept with them: :func:`planned_wordwise`),
    and the scores come back with the saturation count in one read (the flagged pairs,
    when there are any, in a second).
    """
    cp = _cupy()
    check_runs(kernel_runs)
    npairs = len(xoff) - 1
    scores = np.zeros(npairs, dtype=np.int32)
    if npairs == 0:
        return scores, np.zeros(0, np.int64), {}
    xoff = np.asarray(xoff, np.int64)
    yoff = np.asarray(yoff, np.int64)
    plan, device = planned_wordwise(cp, xcodes, xoff, ycodes, yoff, scoring, algorithm,
                                    rows=rows, prefetch=prefetch, largest=largest)
    mod = pairs_module(plan.names)

    clock = Clock(cp)
    clock.mark("h2g")
    d_x, d_y = device_codes(cp, xcodes, ycodes)
    clock.mark(None)
    d_res = cp.zeros(npairs + 1, dtype=cp.int32)  # the scores, then the saturation count
    d_out, d_nflag = d_res[:npairs], d_res[npairs:]
    d_flag = cp.empty(npairs, dtype=cp.int32)
    queue_wordwise(cp, plan, mod, d_x, d_y, device, d_out, d_flag, d_nflag, clock, kernel_runs)
    clock.mark("g2h")
    result = d_res.get()                        # the one sync of a call without saturation
    scores[:] = result[:npairs]
    nflag = int(result[npairs])
    flagged = (np.sort(d_flag[:nflag].get()).astype(np.int64) if nflag
               else np.zeros(0, np.int64))
    clock.mark(None)
    timings = clock.finish()
    timings["swa"] = timings.get("swa", 0.0) / kernel_runs
    if plan.code != LOCAL:
        xl, yl = np.diff(xoff), np.diff(yoff)
        go, ge = plan.tab.go, plan.tab.ge
        col0 = np.where(xl > 0, -(go + (xl - 1) * ge), 0)   # H[m][0]
        if plan.code == GLOBAL:
            scores[:] = np.where(yl == 0, col0, scores)
        elif plan.code == SEMIGLOBAL:
            scores[:] = np.maximum(scores, col0)
    return scores, flagged, timings


# --------------------------------------------------------------------------- bitsliced
