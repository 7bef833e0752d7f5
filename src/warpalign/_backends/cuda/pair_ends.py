"""End cells of local pair alignments by the word-wise pair kernel (issue 20).

``score_pairs(..., mode="full")`` knows every pair's exact score S after its scoring run
(saturated pairs rescored); its traceback needs each local alignment's end cell under
DESIGN.md's tie rule. :func:`ends_wordwise` runs ``ww_kernel`` once more in its ENDS form
(``pairs.cu``): S is the maximum of H, so the end is the first column holding S, then the
first row in it; each lane notes that cell as its running maximum reaches S, and the
item reduces the lanes' cells. This replaces a second DP of another kind per pair (the
traceback engine's ``tb_end``, one warp per pair: ~8x the pair kernel's time for 32,768
pairs of 128 x 1,024 on an H100).

The plan is :func:`~.pairs.score_wordwise`'s (same tables, tiles and launch groups),
with two differences: every launch is ``ww_kernel`` (DNA included, ``DNA=true``; ww_dna
has no end cells), and a pair runs in 32-bit lanes when its stored score reaches the
16-bit threshold (the pairs the scoring run flagged and rescored), so no lane can wrap.
Pairs with S == 0 are not launched (a local alignment of score 0 has no cell).
"""

from __future__ import annotations

import numpy as np

from ..cpu.pairwise import LOCAL
from .loader import get_module, require_cupy
from .pairs import (BLOCK, Clock, band_buffer, device_codes, launch_groups, ww_items, ww_name,
                    ww_table, ww_threshold)
from .transfer import upload

_NONE = np.uint64(0xFFFFFFFFFFFFFFFF)   # the kernel's key for "no cell holds S"
#: Rows per lane of the ENDS kernels (every scoring): with 16, no ENDS instance spills
#: (sm_90 ptxas: DNA linear R = 32 and DNA affine R = 24 spill 80 bytes, R = 16 none), and
#: a 128-letter read fills G = 8 lanes without pad rows. Not yet timed against R = 24.
ENDS_ROWS = 16


def ends_wordwise(xcodes, xoff: np.ndarray, ycodes, yoff: np.ndarray, scoring,
                  scores: np.ndarray, *, largest: int | None = None,
                  rows: int | None = None) -> tuple[np.ndarray, dict]:
    """(score, query end, target end) of each pair's best local alignment, as
    ``cpu.pairwise.score_end`` gives them, from the pairs' exact scores.

    ``xcodes``/``ycodes``, ``xoff``/``yoff``: the pair kernels' layout (codes on the host
    or the device). ``scores``: each pair's exact local score, or 0 for a pair whose end
    is not wanted (its row is then (0, 0, 0), as for a pair of score 0). ``largest``: as
    :func:`~.pairs.score_wordwise`; ``rows``: rows per lane of the DNA path (default
    :data:`ENDS_ROWS`; tests).
    Ends are half-open (the cell (i, j) of the DP is (i, j)). Returns the (pairs, 3)
    int64 array and the seconds of the kernels ("ends").

    Raises:
        ValueError: a score that is not its pair's local maximum (the kernel's maximum
            differs, or no cell holds it).
    """
    cp = require_cupy("backend 'cuda'")
    xoff = np.asarray(xoff, np.int64)
    yoff = np.asarray(yoff, np.int64)
    npairs = len(xoff) - 1
    scores = np.asarray(scores, np.int64)
    if scores.shape != (npairs,) or len(yoff) != npairs + 1:
        raise ValueError(f"scores and offsets must be of {npairs} pairs: got {scores.size} "
                         f"scores and {len(yoff) - 1} target offsets")
    out = np.zeros((npairs, 3), np.int64)
    need = np.flatnonzero(scores > 0)
    if need.size == 0:
        return out, {}
    xl, yl = np.diff(xoff)[need], np.diff(yoff)[need]
    tab = ww_table(scoring, True, xcodes, ycodes, largest, ENDS_ROWS if rows is None else rows)
    stored = scores[need] + (tab.go if tab.affine else 0)
    widths = np.where(tab.narrow & (stored < ww_threshold(16, tab.smax)), 16, 32)
    launches, small = [], [xoff, yoff, tab.table, np.where(scores > 0, scores, 0).astype(np.int32)]
    for bits, g, bands, order in launch_groups(xl, yl, widths, tab.rows):
        items, nitems, grid = ww_items(need[order], bits, g)
        small.append(items)
        launches.append((ww_name(bits, tab.rows, tab.affine, LOCAL, tab.dna, True), bits, g,
                         bands, nitems, grid, int(yl[order].max()), len(small) - 1))
    mod = get_module("pairs.cu", tuple(sorted({launch[0] for launch in launches})))

    clock = Clock(cp)
    clock.mark(None)
    d_x, d_y = device_codes(cp, xcodes, ycodes)
    device = upload(cp, small)
    d_xo, d_yo, d_table, d_target = device[:4]
    d_out = cp.zeros(npairs, dtype=cp.int32)
    d_keys = cp.full(npairs, _NONE, dtype=cp.uint64)
    d_flag = cp.empty(npairs, dtype=cp.int32)
    d_nflag = cp.zeros(1, dtype=cp.int32)
    dummy = cp.zeros(1, dtype=cp.uint32)
    clock.mark("ends")
    for name, bits, g, bands, nitems, grid, ncols, at in launches:
        bstride, bound = band_buffer(cp, bands, nitems, ncols, tab.affine, dummy)
        mod.get_function(name)(
            (grid,), (BLOCK,),
            (d_x, d_xo, d_y, d_yo, device[at], np.int32(nitems), np.int32(g), np.int32(bands),
             d_table, np.int32(tab.k), np.int32(tab.go), np.int32(tab.ge),
             np.int32(ww_threshold(bits, tab.smax)), np.uint32(1), bound, np.int64(bstride),
             d_out, d_flag, d_nflag, d_target, d_keys),
            shared_mem=int(tab.table.size) * 4)
    clock.mark(None)
    got, keys = d_out.get()[need], d_keys.get()[need]
    timings = clock.finish()
    bad = np.flatnonzero((got != scores[need]) | (keys == _NONE))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"pair {int(need[k])}: score {int(scores[need[k]])} given, but its "
                         f"best local score is {int(got[k])}")
    out[need, 0] = scores[need]
    out[need, 1] = (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)
    out[need, 2] = (keys >> np.uint64(32)).astype(np.int64)
    return out, timings
