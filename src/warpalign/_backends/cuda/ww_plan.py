"""The host plan of the word-wise pair kernels (``pairs.cu``): pure NumPy, no device.

:func:`plan_wordwise` makes every decision of a word-wise call before anything is
launched: the score table and the DNA choice (:func:`score_table`), the lane width of
each pair, the launch groups (:func:`launch_groups`), each launch's items and, for
``ww_dna``, its packed-column offsets (:func:`pack_offsets`), and the small host arrays
that go up in one copy. :func:`~.pairs.score_wordwise` plans here after the largest code
is known; :mod:`.pairs_ahead` plans here, with the same function, before it is read
(issue 22: the plan depends on the largest code only through ``largest < 4``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cpu.pairwise import ALGORITHM_CODES, GLOBAL, LOCAL, SEMIGLOBAL

BLOCK = 256
#: Word-wise DNA-path rows per lane (linear gaps: ww_dna; affine: ww_kernel); the table
#: path (any other scoring) uses 16 rows, one chain. ww_dna on an H200, 32,768 pairs,
#: m = 128, n = 16,384, kernel time: R = 32: 8,182 GCUPS, R = 16: 7,729.
WW_DNA_ROWS = {False: 32, True: 24}
#: ww_dna's column bytes, loaded one iteration ahead, are also prefetched to L2 2,048
#: bytes ahead (True). Kernel GCUPS at n = 1,024 / 4,096 / 16,384, 32,768 pairs, m = 128,
#: one H100 (bench/results/pairs_gpu.jsonl, docs/gpu-notes.md session 16): without /
#: with the prefetch 7,752 / 7,881 / 7,923 and 7,867 / 8,006 / 8,073.
WW_DNA_PREFETCH = True
#: Global/semiglobal pairs use 16-bit lanes when every value stays within this bound.
INT16_BOUND = 14000
#: Local 16-bit lanes: scores and penalties must stay this small (else 32-bit lanes).
INT16_SMALL = 4000
#: The kernels' guard (``ww_ypack``, ``ww_dna``): the encode engine's flags, per side
#: (first bad character, largest code); this one lets every launch run (no bad
#: character, largest code 0). :mod:`.pairs_ahead` passes the encode's own flags instead.
OPEN_GUARD = np.array([(1 << 64) - 1, 0, (1 << 64) - 1, 0], np.uint64)
OPEN_GUARD.setflags(write=False)

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
    """A scoring as the word-wise kernels take it (:func:`score_table`)."""

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


def needs_largest(scoring, local: bool) -> bool:
    """Whether :func:`score_table` needs the largest code (the DNA path is possible)."""
    return local and np.asarray(scoring.matrix).shape[0] >= 4


def score_table(scoring, local: bool, largest: int | None, rows: int | None) -> WwTable:
    """The score table, the DNA choice and the rows per lane of ``scoring`` for the
    word-wise kernels; ``largest``: the largest code of both sides (None only where
    :func:`needs_largest` says it is not needed: the choice reads nothing else of the
    codes, and only whether it is below 4); ``rows``: the DNA path's rows per lane
    (default :data:`WW_DNA_ROWS`)."""
    matrix = np.asarray(scoring.matrix, dtype=np.int64)
    go, ge = int(scoring.gap_open), int(scoring.gap_extend)
    affine = go != ge
    bias = go if affine else ge
    alpha = matrix.shape[0]
    biggest = max(int(np.abs(matrix).max()), go, ge, 1)
    shift = 0 if affine else bias               # S' = S + g on linear gaps
    dna_table = matrix[:4, :4] + shift
    if largest is None and needs_largest(scoring, local):
        raise ValueError("score_table: the largest code is needed for a local DNA scoring")
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


@dataclass(frozen=True)
class Launch:
    """One DP kernel launch of a plan; ``items`` and ``pack`` index :attr:`WwPlan.small`."""

    name: str             # ww_dna<...> (after ww_ypack) or ww_kernel<...>
    bits: int             # lane width
    g: int                # lanes per item
    bands: int
    nitems: int
    grid: int             # blocks of BLOCK threads
    items: int            # where the launch's items are in ``small``
    pack: int | None      # where ww_ypack's column offsets are (ww_dna), else None
    ncols: int            # the widest target of the launch


@dataclass(frozen=True)
class WwPlan:
    """Every launch of a word-wise call, decided on the host (:func:`plan_wordwise`)."""

    tab: WwTable
    code: int             # the algorithm's code (cpu.pairwise)
    xl: np.ndarray        # query and target lengths
    yl: np.ndarray
    launches: tuple[Launch, ...]
    small: tuple[np.ndarray, ...]   # up in one copy: xoff, yoff, table, OPEN_GUARD, launches'
    names: tuple[str, ...]          # every kernel the launches take (ww_ypack included)

    @property
    def npairs(self) -> int:
        return self.xl.size

    def finish(self, raw: np.ndarray) -> np.ndarray:
        """The scores from the kernels' (int32, one per pair): global and semiglobal take
        the last row's column 0, which no lane holds."""
        scores = np.array(raw, dtype=np.int32)
        if self.code != LOCAL:
            tab = self.tab
            col0 = np.where(self.xl > 0, -(tab.go + (self.xl - 1) * tab.ge), 0)   # H[m][0]
            if self.code == GLOBAL:
                scores[:] = np.where(self.yl == 0, col0, scores)
            elif self.code == SEMIGLOBAL:
                scores[:] = np.maximum(scores, col0)
        return scores


def plan_wordwise(xoff: np.ndarray, yoff: np.ndarray, scoring, algorithm: str,
                  largest: int | None, *, rows: int | None = None,
                  prefetch: bool | None = None) -> WwPlan:
    """The plan of a word-wise call over pairs with these offsets (pairs + 1 each):
    ``largest``, ``rows`` as :func:`score_table`; ``prefetch``: ww_dna's L2 prefetch
    (default :data:`WW_DNA_PREFETCH`). DNA local scoring with linear gaps in 16-bit lanes
    runs ``ww_dna`` after ``ww_ypack``, the rest ``ww_kernel``."""
    code = ALGORITHM_CODES[algorithm]
    local = code == LOCAL
    xoff = np.asarray(xoff, np.int64)
    yoff = np.asarray(yoff, np.int64)
    xl, yl = np.diff(xoff), np.diff(yoff)
    npairs = xl.size
    ylen = int(yl[0]) if npairs and _uniform(yl) else None   # one target length: arithmetic
    tab = score_table(scoring, local, largest, rows)
    if local:
        widths = np.full(npairs, 16 if tab.narrow else 32)
    else:
        widths = np.where((xl + yl + 2) * tab.biggest + tab.bias <= INT16_BOUND, 16, 32)
    launches, names = [], []
    small = [xoff, yoff, tab.table, OPEN_GUARD]
    for bits, g, bands, order in launch_groups(xl, yl, widths, tab.rows):
        items, nitems, grid = ww_items(order, bits, g)
        small.append(items)
        at, pack = len(small) - 1, None
        if bits == 16 and tab.dna and not tab.affine:
            pf = WW_DNA_PREFETCH if prefetch is None else bool(prefetch)
            name = (f"ww_dna<{tab.rows}, {'true' if bands > 1 else 'false'}, "
                    f"{'true' if pf else 'false'}>")
            names.append("ww_ypack")
            small.append(pack_offsets(items, yl, g, grid, ylen))
            pack = len(small) - 1
        else:
            name = ww_name(bits, tab.rows, tab.affine, code, tab.dna, False)
        names.append(name)
        ncols = ylen if ylen is not None else int(yl[order].max())
        launches.append(Launch(name, bits, g, bands, nitems, grid, at, pack, ncols))
    return WwPlan(tab, code, xl, yl, tuple(launches), tuple(small), tuple(sorted(set(names))))


def dna_linear(scoring, algorithm: str) -> bool:
    """Whether every launch of :func:`plan_wordwise` with codes all below 4 is ``ww_dna``
    (local, linear gaps, the DNA table in bytes, 16-bit lanes): the calls whose plan
    :mod:`.pairs_ahead` may make before the largest code is read."""
    if algorithm != "local":
        return False
    tab = score_table(scoring, True, 0, None)
    return tab.dna and not tab.affine and tab.narrow
