"""``score_pairs`` from CuPy arrays with one device-to-host read: the ``pairs_ahead``
engine of the CUDA backend (issue 22).

Elsewhere a batch goes: encode, read the encode's flags (a sync: is there a bad
character, which is the largest code), plan, launch, read the scores (a second sync).
Here, for CuPy inputs and a scoring whose word-wise launches are all ``ww_dna`` when the
codes are A C G T (:func:`applies`), :func:`encode_and_score` queues the encode on the
caller's stream, takes the plan made for codes below 4 (:func:`~.pairs.planned_wordwise`
with ``largest=3``: kept for inputs of one query and one target length), queues
``ww_ypack`` and ``ww_dna`` after the encode with the encode's flags as their guard, and
reads the flags, the scores and the saturation count back in ONE copy.

Why this is exact: the plan depends on the codes only through "the largest is below 4"
(:func:`~.pairs.ww_table`'s DNA choice), and the job's choice of method only through the
same (a code >= 4 rules bitsliced out). When the flags read back say every code is below
4, the plan taken is the plan :func:`~.pairs.score_wordwise` makes after reading them,
run on the same codes: the scores are its scores. Otherwise (a character without a code:
255; an N or another IUPAC code: 4 and up) ``ww_ypack`` and ``ww_dna`` found the guard
closed on the device and returned without writing, no scores are returned, and the caller
names the bad character or scores the codes again on the path planned for them.

Host (NumPy) sides staged as 2-bit codes (:func:`~.encode.packed_staging`) take the same
plan in groups of consecutive pairs (:data:`GROUP_BYTES`): the staging packs and copies
group g + 1 while the caller's stream runs group g's ``ww_ypack`` and ``ww_dna``, each
group's kernels waiting for its codes (:func:`~.encode.stage_groups`), and one copy reads
everything back. The guard is exact here too: the flags only ever grow, so when the flags
read at the end say every code is below 4, every group's kernels found the guard open.
A side with a character outside ACGTacgt goes up as characters after every group, and
the groups from the one holding it on get no kernels: the scores are then discarded
whatever the flags say (a table may give such a character a code below 4).

One buffer holds the x codes, the 4 zero bytes ``ww_dna`` may read past them, the flags
(four words: x's first bad character and largest code, then y's) and the scores with the
saturation counts (one a group); everything after the x codes is cleared by one memset
and read back by one copy. The y codes have a buffer of their own, the score table stays on the device
(:func:`~.encode.device_table`).
"""

from __future__ import annotations

import functools
import time

import numpy as np

from ..cpu.pairwise import LOCAL
from .encode import packed_staging, queue_encode, side_flags, stage_groups
from .loader import require_cupy
from .pairs import Clock, pairs_module, planned_wordwise, queue_wordwise, ww_table
from .transfer import upload

_FLAGS = 32                      # bytes of the flags: two uint64 words per side
#: Host characters (both sides) per group of pairs of host sides: one group's kernels run
#: while the next is packed, so a call takes about its packing plus the last group's
#: kernels (a group is also one pool round of packing and at least one staging chunk).
GROUP_BYTES = 1 << 26


@functools.lru_cache(maxsize=64)
def applies(scoring, algorithm: str) -> bool:
    """Whether :func:`encode_and_score` can score this: local, and the scoring's plan for
    codes below 4 all ``ww_dna`` launches (the DNA table in bytes, linear gaps, 16-bit
    lanes), the only kernels that read the guard."""
    if algorithm != "local":
        return False
    tab = ww_table(scoring, True, None, None, 3, None)
    return tab.dna and not tab.affine and tab.narrow


def stages(table: np.ndarray) -> bool:
    """Whether :func:`encode_and_score` takes host (NumPy) sides encoded by ``table``:
    those the encode engine stages as 2-bit codes (:func:`~.encode.packed_staging`)."""
    return packed_staging(table)


def layout(xsize: int, npairs: int, groups: int = 1) -> tuple[int, int, int]:
    """(where the flags start, where the scores start, total bytes) of the one buffer:
    the x codes from 0, 4 zero bytes after them, the flags on an 8-byte boundary, then
    the scores and a saturation count per group (int32, pairs + groups)."""
    at = -(-(xsize + 4) // 8) * 8
    return at, at + _FLAGS, at + _FLAGS + 4 * (npairs + groups)


def group_cuts(xoff: np.ndarray, yoff: np.ndarray, limit: int | None = None) -> np.ndarray:
    """Pair indices 0 = c_0 < ... < c_G = pairs cutting the pairs into G groups: as many
    as :data:`GROUP_BYTES` (``limit``) of characters of both sides fill (rounded up), each
    of the same count of pairs but the last (so that a kept plan serves them)."""
    limit = GROUP_BYTES if limit is None else max(1, int(limit))
    npairs = len(xoff) - 1
    chars = int(xoff[-1] - xoff[0] + yoff[-1] - yoff[0])
    groups = max(1, min(npairs, -(-chars // limit)))
    per = -(-npairs // groups)
    return np.append(np.arange(0, npairs, per), npairs)


def encode_and_score(raws, table: np.ndarray, xoff: np.ndarray, yoff: np.ndarray, scoring,
                     algorithm: str = "local", *, check: bool = True,
                     lengths: tuple = (None, None)) -> tuple[list[tuple], tuple | None, dict]:
    """Encode the two sides ``raws`` (1-D ``uint8`` CuPy arrays of characters, read in
    place on the current stream; or both NumPy arrays, staged in groups of pairs where
    :func:`stages` takes ``table``) by ``table`` and score the pairs (x_i, y_i) of these
    offsets (pairs + 1 each, from 0) by the word-wise plan of codes below 4, with one
    device-to-host read of the flags and the scores (a second only for saturated pairs).

    Returns (per side, as the ``encode`` engine's: (device codes, index of the first
    character without a code or -1, None (no counts), largest code)); (scores int32,
    sorted indices of the pairs a 16-bit lane flagged) when every code is below 4, else
    None (nothing scored: the caller names the bad character or scores the codes on the
    path planned for them); seconds per step ("encode", "pack", "swa", "g2h", and "h2g"
    where the plan was not kept)). ``lengths``: each side's one sequence length where the
    caller knows it (a 2-D array's rows), so the kept plan is found without reading the
    offsets (:func:`~.pairs.planned_wordwise`).

    Raises:
        ValueError: a scoring or algorithm :func:`applies` refuses, other than two sides,
            no pairs, or host sides of a table :func:`stages` refuses.
        TypeError: one side on the device and one on the host, or a device side that is
            not a 1-D ``uint8`` CuPy array.
    """
    if not applies(scoring, algorithm):
        raise ValueError("pairs_ahead scores local DNA scorings of linear gaps whose plan "
                         "is all ww_dna launches only (see applies())")
    if len(raws) != 2:
        raise ValueError(f"expected two sides, got {len(raws)}")
    npairs = len(xoff) - 1
    if npairs < 1:
        raise ValueError("pairs_ahead needs at least one pair")
    cp = require_cupy("backend 'cuda'")
    if not any(isinstance(raw, cp.ndarray) for raw in raws):
        return _staged(cp, raws, table, xoff, yoff, scoring, algorithm, check, lengths)
    xsize, ysize = int(raws[0].size), int(raws[1].size)
    at, scores_at, total = layout(xsize, npairs)
    clock = Clock(cp)
    clock.mark("encode")
    buf = cp.empty(total, dtype=cp.uint8)
    buf[xsize:].fill(0)                    # the pad, the flags and the scores: one memset
    flags = buf[at:scores_at].view(cp.uint64)
    d_y = cp.empty(max(ysize, 1), dtype=cp.uint8)
    codes = [buf[:xsize], d_y[:ysize]]
    queue_encode(cp, raws, table, codes, flags)
    clock.mark("h2g")                      # the plan's copy up, when it is not kept
    plan, device, mod = _guarded_plan(cp, np.asarray(xoff, np.int64),
                                      np.asarray(yoff, np.int64), scoring, algorithm, lengths)
    res = buf[scores_at:].view(cp.int32)
    d_flag = cp.empty(npairs, dtype=cp.int32)
    queue_wordwise(cp, plan, mod, buf, d_y, device, res[:npairs], d_flag, res[npairs:], clock,
                   guard=flags)
    clock.mark("g2h")
    host = buf[xsize:].get()               # the one read: flags, scores, count
    sides, scored = _answer(host, codes, at - xsize, scores_at - xsize, npairs, d_flag,
                            np.array([0, npairs]), check, True)
    clock.mark(None)
    return sides, scored, clock.finish()


def _guarded_plan(cp, xoff: np.ndarray, yoff: np.ndarray, scoring, algorithm: str,
                  lengths: tuple) -> tuple:
    """(plan, its arrays on the device, its module) of these pairs (offsets int64 from 0)
    for codes below 4 (:func:`~.pairs.planned_wordwise`, kept for arithmetic offsets),
    every launch one that reads the guard."""
    plan, device = planned_wordwise(cp, None, xoff, None, yoff, scoring, algorithm, rows=None,
                                    prefetch=None, largest=3, lengths=lengths)
    if plan.code != LOCAL or any(pack is None for *_, pack, _ in plan.launches):
        raise RuntimeError("internal error: pairs_ahead's plan has launches without the "
                           "guard (applies() and plan_wordwise disagree)")
    return plan, device, pairs_module(plan.names)


def _answer(host: np.ndarray, codes: list, at: int, scores_at: int, npairs: int, d_flag,
            cuts: np.ndarray, check: bool, packed: bool) -> tuple[list[tuple], tuple | None]:
    """(per side as the ``encode`` engine's tuple, (scores, sorted flagged pairs) or None)
    from the one read ``host`` (the buffer from the x codes' end: flags at ``at``, then
    the scores and a saturation count per group of ``cuts``), reading each group's
    flagged pairs from ``d_flag`` (group-relative indices at the group's first pair).
    ``packed``: whether every group's codes were complete before its kernels ran."""
    words = host[at:scores_at].copy().view(np.uint64)
    sides = []
    for k, c in enumerate(codes):
        bad, top = side_flags(words, k, check)
        sides.append((c, bad, None, top))
    if not packed or not all(bad < 0 and top < 4 for _, bad, _, top in sides):
        return sides, None
    groups = cuts.size - 1
    result = host[scores_at:scores_at + 4 * (npairs + groups)].copy().view(np.int32)
    flagged = [np.sort(d_flag[lo:lo + n].get()).astype(np.int64) + lo
               for lo, n in zip(cuts[:-1].tolist(), result[npairs:].tolist()) if n]
    return sides, (result[:npairs], np.concatenate(flagged) if flagged
                   else np.zeros(0, np.int64))


def _device_offsets(cp, offsets: list, lengths: tuple) -> list:
    """Both sides' offsets (from 0) on the device, by arithmetic where a side's one length
    is known, the others up in one copy."""
    out = [None if n is None else cp.arange(off.size, dtype=cp.int64) * int(n)
           for off, n in zip(offsets, lengths)]
    missing = [off for off, got in zip(offsets, out) if got is None]
    sent = iter(upload(cp, missing) if missing else ())
    return [next(sent) if got is None else got for got in out]


def _staged(cp, raws, table: np.ndarray, xoff: np.ndarray, yoff: np.ndarray, scoring,
            algorithm: str, check: bool, lengths: tuple) -> tuple[list[tuple], tuple | None, dict]:
    """:func:`encode_and_score` of host sides: planned per group of pairs
    (:func:`group_cuts`) before anything is staged, then :func:`~.encode.stage_groups`
    packs and copies the groups in order on the staging stream while this thread's stream
    runs each group's kernels after its codes (the module docstring says why the guard
    stays exact); the step "encode" is the host's staging time."""
    if not stages(table):
        raise ValueError("pairs_ahead takes host sides only where they are staged as 2-bit "
                         "codes (see stages())")
    xoff, yoff = np.asarray(xoff, np.int64), np.asarray(yoff, np.int64)
    npairs = xoff.size - 1
    cuts = group_cuts(xoff, yoff)
    bounds = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
    plans = []
    for lo, hi in bounds:                  # before any kernel: a plan's upload may sync
        plans.append(_guarded_plan(cp, xoff[lo:hi + 1] - xoff[lo], yoff[lo:hi + 1] - yoff[lo],
                                   scoring, algorithm, lengths))
    xsize, ysize = int(raws[0].size), int(raws[1].size)
    at, scores_at, total = layout(xsize, npairs, len(bounds))
    current = cp.cuda.get_current_stream()
    clock = Clock(cp)
    buf = cp.empty(total, dtype=cp.uint8)
    buf[xsize:].fill(0)                    # the pad, the flags and the scores: one memset
    flags = buf[at:scores_at].view(cp.uint64)
    d_y = cp.empty(max(ysize, 1), dtype=cp.uint8)
    codes = [buf[:xsize], d_y[:ysize]]
    res = buf[scores_at:].view(cp.int32)
    d_flag = cp.empty(npairs, dtype=cp.int32)
    d_xo, d_yo = _device_offsets(cp, [xoff, yoff], lengths)

    def then(g: int, event) -> None:
        lo, hi = bounds[g]
        plan, device, mod = plans[g]
        with current:
            current.wait_event(event)
            queue_wordwise(cp, plan, mod, buf, d_y, [d_xo[lo:], d_yo[lo:], *device[2:]],
                           res[lo:hi], d_flag[lo:hi], res[npairs + g:npairs + g + 1], clock,
                           guard=flags)
            clock.mark(None)

    started = time.perf_counter()
    packed, done = stage_groups(raws, table, codes, flags,
                                [(off[cuts] - off[0]).tolist() for off in (xoff, yoff)], then,
                                after=current.record())
    staging = time.perf_counter() - started
    current.wait_event(done)
    clock.mark("g2h")
    host = buf[xsize:].get()               # the one read: flags, scores, counts
    sides, scored = _answer(host, codes, at - xsize, scores_at - xsize, npairs, d_flag, cuts,
                            check, packed)
    clock.mark(None)
    timings = clock.finish()
    timings["encode"] = timings.get("encode", 0.0) + staging
    return sides, scored, timings
