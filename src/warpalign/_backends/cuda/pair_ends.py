"""End cells of local pair alignments by the word-wise pair kernel (issue 20).

``score_pairs(..., mode="full")`` knows every pair's exact score S after its scoring run
(saturated pairs rescored); its traceback needs each local alignment's end cell under
DESIGN.md's tie rule. ``ww_kernel``'s ENDS form (``pairs.cu``) finds it: S is the maximum
of H, so the end is the first column holding S, then the first row in it; each lane notes
that cell as its running maximum reaches S, and the item reduces the lanes' cells. This
replaces a second DP of another kind per pair (the traceback engine's ``tb_end``, one
warp per pair: ~8x the pair kernel's time for 32,768 pairs of 128 x 1,024 on an H100).

Two engines run it:

* :func:`ends_wordwise` (row ``pair_ends``): the ends of pairs of given scores, planned,
  copied up and read on their own (``score_pairs`` with a threshold: the reported pairs).
* :func:`score_ends_wordwise` (row ``pairs_full``): ``score_pairs(mode="full")`` of every
  pair, local, in one DP: the ENDS form without targets (TRACK, ``pairs.cu``) finds each
  pair's maximum and the cell of it the tie rule picks, the scores, the saturation count
  and the end keys back in one read. (Before it, the scoring kernels and the ENDS ones
  ran one after the other with the scoring's device scores as targets: two DPs, 1.49 +
  1.14 ms for 32,768 pairs of 128 x 1,024 on an H100, session 32.)

The ENDS plan (:func:`plan_ends`) is the scoring plan's kind (same tables, tiles and
launch groups), with two differences: every launch is ``ww_kernel`` (DNA included,
``DNA=true``; ww_dna has no end cells), at :data:`ENDS_ROWS` rows per lane; and lanes are
32-bit for a pair whose score reaches the 16-bit threshold (:func:`ends_wordwise`: the
pairs the scoring run flagged and rescored), so no lane can wrap. The one-DP pass cannot
know those pairs up front: it runs every pair in 16-bit lanes where the scoring allows
and flags the pairs that reach the threshold as the scoring kernels do (their scores and
cells are wrong); the job rescores them and takes their ends from there
(``cpu.pairwise.score_end`` gives the end cell with the score).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..cpu.pairwise import LOCAL
from .loader import require_cupy
from .pairs import (BLOCK, Clock, WwTable, band_buffer, device_codes, kept_plan, launch_groups,
                    pairs_module, shape_key, ww_items, ww_name, ww_table, ww_threshold)
from .transfer import upload

_NONE = np.uint64(0xFFFFFFFFFFFFFFFF)   # the kernel's key for "no cell holds S"
#: Rows per lane of the ENDS kernels (every scoring): with 16, no ENDS instance spills
#: (sm_90 ptxas: DNA linear R = 32 and DNA affine R = 24 spill 80 bytes, R = 16 none), and
#: a 128-letter read fills G = 8 lanes without pad rows. Not yet timed against R = 24.
ENDS_ROWS = 16


@dataclass(frozen=True)
class EndsLaunch:
    """One launch of ``ww_kernel``'s ENDS form (:func:`plan_ends`)."""

    name: str             # the ww_kernel instance
    bits: int             # 16 or 32-bit lanes
    g: int                # lanes per item
    bands: int
    items: np.ndarray     # int32 pair indices (two per item for 16-bit lanes, -1: none)
    nitems: int
    grid: int             # blocks of BLOCK threads
    ncols: int            # the longest target of the launch (band buffers)


def plan_ends(pairs: np.ndarray, xl: np.ndarray, yl: np.ndarray, widths: np.ndarray,
              tab: WwTable) -> list[EndsLaunch]:
    """The ENDS launches of ``pairs`` (indices in the batch; ``xl``, ``yl``, ``widths``:
    their query and target lengths and lane bits, in the same order), in
    :func:`~.pairs.launch_groups`' order, ``tab.rows`` rows per lane."""
    out = []
    for bits, g, bands, order in launch_groups(xl, yl, widths, tab.rows):
        items, nitems, grid = ww_items(pairs[order], bits, g)
        out.append(EndsLaunch(ww_name(bits, tab.rows, tab.affine, LOCAL, tab.dna, True), bits,
                              g, bands, items, nitems, grid, int(yl[order].max())))
    return out


def _queue_ends(cp, mod, tab: WwTable, launches: list[EndsLaunch], d_items: list, codes: tuple,
                d_table, d_target, d_out, d_keys, d_flag, d_nflag) -> None:
    """Queue the ENDS launches on the current stream (``d_items``: their items on the
    device; ``codes``: x codes, x offsets, y codes, y offsets there): per pair the
    kernel's maximum into ``d_out``, the end key into ``d_keys`` (left as it is where no
    cell holds the target), its 16-bit flags into ``d_flag``/``d_nflag``."""
    d_x, d_xo, d_y, d_yo = codes
    dummy = cp.zeros(1, dtype=cp.uint32)
    for launch, items in zip(launches, d_items):
        bstride, bound = band_buffer(cp, launch.bands, launch.nitems, launch.ncols, tab.affine,
                                     dummy)
        mod.get_function(launch.name)(
            (launch.grid,), (BLOCK,),
            (d_x, d_xo, d_y, d_yo, items, np.int32(launch.nitems), np.int32(launch.g),
             np.int32(launch.bands), d_table, np.int32(tab.k), np.int32(tab.go),
             np.int32(tab.ge), np.int32(ww_threshold(launch.bits, tab.smax)), np.uint32(1),
             bound, np.int64(bstride), d_out, d_flag, d_nflag, d_target, d_keys),
            shared_mem=int(tab.table.size) * 4)


def _fill(out: np.ndarray, sure: np.ndarray, scores: np.ndarray, got: np.ndarray | None,
          keys: np.ndarray) -> None:
    """Rows ``sure`` of ``out`` from their exact scores and the ENDS kernel's maxima and
    keys (arrays over all pairs; ``got`` None: the maxima are the scores, one DP found
    both); a pair of score 0 keeps (0, 0, 0). A maximum other than the score, or no key
    for a score > 0, is a ValueError. (Every pair sure and scored above 0, the usual
    batch: whole columns, no gathers: 1.4 ms of host time for 32,768 pairs on an H100
    host before, docs/gpu-notes.md session 30.)"""
    every = sure.size == scores.size
    s, k = (v if every else v[sure] for v in (scores, keys))
    positive = s > 0
    wrong = positive & (k == _NONE)
    if got is None:
        got = scores
    else:
        wrong |= (got if every else got[sure]) != s
    bad = np.flatnonzero(wrong)
    if bad.size:
        p = int(sure[bad[0]])
        raise ValueError(f"pair {p}: score {int(scores[p])} given, but its best local score "
                         f"is {int(got[p])}")
    if not (every and positive.all()):
        rows = sure[positive]
        s, k = s[positive], k[positive]
    else:
        rows = slice(None)
    out[rows, 0] = s
    out[rows, 1] = k & np.uint64(0xFFFFFFFF)
    out[rows, 2] = k >> np.uint64(32)


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
    tab = ww_table(scoring, True, xcodes, ycodes, largest, ENDS_ROWS if rows is None else rows)
    stored = scores[need] + (tab.go if tab.affine else 0)
    widths = np.where(tab.narrow & (stored < ww_threshold(16, tab.smax)), 16, 32)
    launches = plan_ends(need, np.diff(xoff)[need], np.diff(yoff)[need], widths, tab)
    mod = pairs_module(launch.name for launch in launches)

    clock = Clock(cp)
    clock.mark(None)
    d_x, d_y = device_codes(cp, xcodes, ycodes)
    device = upload(cp, [xoff, yoff, tab.table, np.where(scores > 0, scores, 0).astype(np.int32)]
                    + [launch.items for launch in launches])
    d_out = cp.zeros(npairs, dtype=cp.int32)
    d_keys = cp.full(npairs, _NONE, dtype=cp.uint64)
    clock.mark("ends")
    _queue_ends(cp, mod, tab, launches, device[4:], (d_x, device[0], d_y, device[1]), device[2],
                device[3], d_out, d_keys, cp.empty(npairs, dtype=cp.int32),
                cp.zeros(1, dtype=cp.int32))
    clock.mark(None)
    got, keys = d_out.get(), d_keys.get()
    timings = clock.finish()
    _fill(out, need, scores, got, keys)
    return out, timings


def score_ends_wordwise(xcodes, xoff: np.ndarray, ycodes, yoff: np.ndarray, scoring, *,
                        largest: int | None = None
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Local scores of pairs as :func:`~.pairs.score_wordwise` and their end cells as
    :func:`ends_wordwise`, in one pass (the module docstring; arguments as there).

    Returns (scores int32, the indices of the pairs the pass flagged (their scores are
    wrong: the caller rescores them), (pairs, 3) int64 ends: (score, query end, target
    end) of every other pair of score > 0, (0, 0, 0) for the rest, flagged pairs
    included, seconds per step: ``h2g`` (the codes' copy up, where on the host), ``swa``
    (the one-DP kernels), ``g2h`` (the read)).

    Raises:
        ValueError: a pair the pass did not flag of score > 0 without an end cell (a bug).
    """
    npairs = len(xoff) - 1
    if npairs == 0:
        return (np.zeros(0, np.int32), np.zeros(0, np.int64), np.zeros((0, 3), np.int64), {})
    return read_score_ends(queue_score_ends(xcodes, xoff, ycodes, yoff, scoring,
                                           largest=largest))


@dataclass
class ScoreEnds:
    """:func:`queue_score_ends`' pass, queued on the caller's stream and not yet read: in
    ``buf``, the end keys (uint64, ``keys``), then as int32 the scores (``scores``) and the
    saturation count (``nflag``); ``flags``: the flagged pairs' indices (the first
    ``nflag``); ``xoff``, ``yoff``: the offsets on the device; ``codes``: both sides'
    codes there."""

    npairs: int
    buf: object
    keys: object
    scores: object
    nflag: object
    flags: object
    xoff: object
    yoff: object
    codes: tuple
    clock: Clock


def queue_score_ends(xcodes, xoff: np.ndarray, ycodes, yoff: np.ndarray, scoring, *,
                     largest: int | None = None, lengths=(None, None)) -> ScoreEnds:
    """:func:`score_ends_wordwise`'s kernels queued on the current stream, nothing read
    (``npairs`` >= 1): :func:`read_score_ends` reads them, or the caller queues more work
    on the device results first (:mod:`.pairs_full`). One DP a pair: ``ww_kernel``'s
    ENDS form without targets (TRACK, ``pairs.cu``) finds each pair's maximum and the
    cell of it the tie rule picks, at :data:`ENDS_ROWS` rows per lane, 16-bit lanes where
    the scoring allows (a pair reaching the threshold is flagged: its score and cell are
    the caller's to make again). ``lengths``: each side's one sequence length where the
    caller knows it (:func:`~.pairs.shape_key` then spares reading that side's offsets)."""
    cp = require_cupy("backend 'cuda'")
    npairs = len(xoff) - 1
    xoff = np.asarray(xoff, np.int64)
    yoff = np.asarray(yoff, np.int64)
    key = shape_key(cp, xoff, yoff, scoring, "local", ENDS_ROWS, None, largest, lengths)

    def make():
        tab = ww_table(scoring, True, xcodes, ycodes, largest, ENDS_ROWS)
        launches = plan_ends(np.arange(npairs, dtype=np.int64), np.diff(xoff), np.diff(yoff),
                             np.full(npairs, 16 if tab.narrow else 32), tab)
        return (tab, launches), [xoff, yoff, tab.table] + [launch.items for launch in launches]
    # the plan kept with its device arrays, as score_wordwise's (~2.6 ms of host time for
    # 32,768 pairs of 128 x 1,024 on an H100 host, the GPU idle: docs/gpu-notes.md, 30)
    kept = None if key is None else (*key, "track")
    (tab, launches), device = kept_plan(cp, kept, make)
    mod = pairs_module(launch.name for launch in launches)

    clock = Clock(cp)
    clock.mark("h2g")
    d_x, d_y = device_codes(cp, xcodes, ycodes)
    clock.mark("swa")
    # the end keys, then as int32 the scores and the saturation count
    buf = cp.zeros((3 * npairs + 2) // 2, dtype=cp.uint64)
    d_keys = buf[:npairs]
    d_keys.fill(_NONE)
    words = buf.view(cp.int32)
    d_out, d_nflag = words[2 * npairs:3 * npairs], words[3 * npairs:3 * npairs + 1]
    d_flag = cp.empty(npairs, dtype=cp.int32)
    _queue_ends(cp, mod, tab, launches, device[3:], (d_x, device[0], d_y, device[1]),
                device[2], np.uint64(0), d_out, d_keys, d_flag, d_nflag)   # target: null
    return ScoreEnds(npairs, buf, d_keys, d_out, d_nflag, d_flag, device[0], device[1],
                     (d_x, d_y), clock)


def read_score_ends(run: ScoreEnds) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """:func:`score_ends_wordwise`'s answer from its queued pass: one read (and a second of
    the flagged pairs' indices where the scoring run flagged any)."""
    npairs = run.npairs
    run.clock.mark("g2h")
    host = run.buf.get()                   # the one sync of a call without saturation
    got = host.view(np.int32)
    scores = got[2 * npairs:3 * npairs].copy()
    nflag = int(got[3 * npairs])
    flagged = (np.sort(run.flags[:nflag].get()).astype(np.int64) if nflag
               else np.zeros(0, np.int64))
    run.clock.mark(None)
    timings = run.clock.finish()
    sure = np.ones(npairs, bool)           # every pair but the flagged
    sure[flagged] = False
    ends = np.zeros((npairs, 3), np.int64)
    _fill(ends, np.flatnonzero(sure), scores, None, host[:npairs])     # one DP: max = score
    return scores, flagged, ends, timings
