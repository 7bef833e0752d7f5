"""``score_pairs`` from CuPy arrays with one device-to-host read: the ``pairs_ahead``
engine of the CUDA backend (issue 22).

Elsewhere a batch goes: encode, read the encode's flags (a sync: is there a bad
character, which is the largest code), plan, launch, read the scores (a second sync).
Here, for CuPy inputs and a scoring whose word-wise launches are all ``ww_dna`` when the
codes are A C G T (:func:`applies`), :func:`encode_and_score` queues on the caller's
stream the x encode (``encode_bytes``), takes the plan made for codes below 4
(:func:`~.pairs.planned_wordwise` with ``largest=3``: kept for inputs of one query and
one target length), queues per launch ``ww_ypack_chars`` (pairs.cu: the y CHARACTERS
looked up in the encode table as they are packed, leaving y's flags as ``encode_bytes``
would) and ``ww_dna`` with the flags as its guard, and reads the flags, the scores and
the saturation count back in ONE copy (into pinned memory). The y side is not encoded
to codes (134 MB written and read straight back at 32,768 pairs of 128 x 4,096) unless
its codes are wanted after the scores:

* the caller asks (``codes=True``: mode "full" traces alignments from the codes): then
  both sides are encoded first and ``ww_ypack`` packs y's codes, as before;
* the flags read back close the guard (the caller names the bad character from the
  flags, or scores the codes again on the path planned for them), or a 16-bit lane
  flagged pairs (the caller rescores them from host copies of the codes): then y is
  encoded after the read, on the same stream, into the same flag words (atomicMax:
  they do not change).
Otherwise the y codes returned are None, and the caller reads nothing of them (its
threshold and result need the scores only).

Why this is exact: the plan depends on the codes only through "the largest is below 4"
(:func:`~.pairs.ww_table`'s DNA choice), and the job's choice of method only through the
same (a code >= 4 rules bitsliced out). When the flags read back say every code is below
4, the plan taken is the plan :func:`~.pairs.score_wordwise` makes after reading them,
run on the same codes: the scores are its scores. Otherwise (a character without a code:
255; an N or another IUPAC code: 4 and up) ``ww_dna`` found the guard closed on the
device and returned without writing, or, with several launches, an earlier launch's
``ww_dna`` ran before a later ``ww_ypack_chars`` met the code; either way no scores are
returned (all are discarded) and the caller names the bad character or scores the codes
again. The y flags are those ``encode_bytes`` leaves: every y character is read by
exactly one ``ww_ypack_chars`` of the plan (pairs.cu says why).

One buffer holds the x codes, the 4 zero bytes ``ww_dna`` may read past them, the flags
(four words: x's first bad character and largest code, then y's) and the scores with the
saturation count; everything after the x codes is cleared by one memset and read back by
one copy. The y codes, when made, have a buffer of their own; the encode table stays on
the device (:func:`~.encode.device_table`).

Timings: ``encode`` (the memset and the x encode; y's, when made, too), ``h2g`` (the plan
and its copy up, where it was not kept), ``pack`` (``ww_ypack_chars``: y's lookups
within it; or ``ww_ypack``), ``swa`` (``ww_dna``), ``g2h`` (the read back).
"""

from __future__ import annotations

import functools

import numpy as np

from ..cpu.pairwise import LOCAL
from .encode import device_chars, device_table, queue_encode, side_flags
from .loader import require_cupy
from .pairs import Clock, pairs_module, planned_wordwise, queue_wordwise, ww_table

_FLAGS = 32                      # bytes of the flags: two uint64 words per side


@functools.lru_cache(maxsize=64)
def applies(scoring, algorithm: str) -> bool:
    """Whether :func:`encode_and_score` can score this: local, and the scoring's plan for
    codes below 4 all ``ww_dna`` launches (the DNA table in bytes, linear gaps, 16-bit
    lanes), the only kernels that read the guard."""
    if algorithm != "local":
        return False
    tab = ww_table(scoring, True, None, None, 3, None)
    return tab.dna and not tab.affine and tab.narrow


def layout(xsize: int, npairs: int) -> tuple[int, int, int]:
    """(where the flags start, where the scores start, total bytes) of the one buffer:
    the x codes from 0, 4 zero bytes after them, the flags on an 8-byte boundary, then
    the scores and the saturation count (int32, pairs + 1)."""
    at = -(-(xsize + 4) // 8) * 8
    return at, at + _FLAGS, at + _FLAGS + 4 * (npairs + 1)


def encode_and_score(raws, table: np.ndarray, xoff: np.ndarray, yoff: np.ndarray, scoring,
                     algorithm: str = "local", *, check: bool = True, codes: bool = False
                     ) -> tuple[list[tuple], tuple | None, dict]:
    """Encode the x side of ``raws`` (two 1-D ``uint8`` CuPy arrays of characters, read in
    place on the current stream) by ``table`` and score the pairs (x_i, y_i) of these
    offsets (pairs + 1 each, from 0; contiguous: pair i's characters end where pair i + 1's
    start) by the word-wise plan of codes below 4, the y characters packed and checked
    by ``ww_ypack_chars``, with one device-to-host read of the flags and the scores (a
    second only for saturated pairs). ``codes``: the caller needs y's codes afterwards
    (they are encoded first, as x's); without it they are encoded only where the result
    asks (module docstring).

    Returns (per side, as the ``encode`` engine's: (device codes, or None for y's where
    they were not needed; index of the first character without a code or -1; None (no
    counts); largest code)); (scores int32, sorted indices of the pairs a 16-bit lane
    flagged) when every code is below 4, else None (nothing scored: the caller names the
    bad character or scores the codes on the path planned for them; y's codes are given);
    seconds per step ("encode", "pack", "swa", "g2h", and "h2g" where the plan was not
    kept)).

    Raises:
        ValueError: a scoring or algorithm :func:`applies` refuses, other than two sides,
            no pairs, or y offsets that do not run from 0 to y's size (ww_ypack_chars
            checks the characters of the pairs only).
        TypeError: a side that is not a 1-D ``uint8`` CuPy array.
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
    raws = [device_chars(cp, raw) for raw in raws]
    xsize, ysize = int(raws[0].size), int(raws[1].size)
    if int(yoff[0]) != 0 or int(yoff[-1]) != ysize:
        raise ValueError(f"pairs_ahead: y offsets must run from 0 to y's size {ysize}, got "
                         f"{int(yoff[0])} to {int(yoff[-1])}")
    at, scores_at, total = layout(xsize, npairs)
    clock = Clock(cp)
    clock.mark("encode")
    buf = cp.empty(total, dtype=cp.uint8)
    buf[xsize:].fill(0)                    # the pad, the flags and the scores: one memset
    flags = buf[at:scores_at].view(cp.uint64)
    xcodes = buf[:xsize]
    if codes:                              # both sides encoded; ww_ypack packs y's codes
        d_y = cp.empty(max(ysize, 1), dtype=cp.uint8)
        ycodes, chars = d_y[:ysize], None
        queue_encode(cp, raws, table, [xcodes, ycodes], flags)
    else:                                  # ww_ypack_chars packs and checks y's characters
        d_y = raws[1] if ysize else cp.zeros(1, dtype=cp.uint8)
        ycodes, chars = None, (device_table(cp, table), flags[2:])
        queue_encode(cp, raws[:1], table, [xcodes], flags)
    clock.mark("h2g")                      # the plan's copy up, when it is not kept
    plan, device = planned_wordwise(cp, xcodes, np.asarray(xoff, np.int64), ycodes,
                                    np.asarray(yoff, np.int64), scoring, algorithm,
                                    rows=None, prefetch=None, largest=3)
    if plan.code != LOCAL or any(pack is None for *_, pack, _ in plan.launches):
        raise RuntimeError("internal error: pairs_ahead's plan has launches without the "
                           "guard (applies() and plan_wordwise disagree)")
    names = plan.names if codes else (
        tuple(n for n in plan.names if n != "ww_ypack") + ("ww_ypack_chars",))
    mod = pairs_module(names)
    res = buf[scores_at:].view(cp.int32)
    d_flag = cp.empty(npairs, dtype=cp.int32)
    queue_wordwise(cp, plan, mod, buf, d_y, device, res[:npairs], d_flag, res[npairs:], clock,
                   guard=flags, chars=chars)
    clock.mark("g2h")
    host = _read_back(cp, buf[xsize:])     # the one read: flags, scores, count
    words = host[at - xsize:scores_at - xsize].copy().view(np.uint64)
    found = [side_flags(words, k, check) for k in range(2)]
    scored = None
    if all(bad < 0 and top < 4 for bad, top in found):
        result = host[scores_at - xsize:].copy().view(np.int32)
        nflag = int(result[npairs])
        flagged = (np.sort(d_flag[:nflag].get()).astype(np.int64) if nflag
                   else np.zeros(0, np.int64))
        scored = (result[:npairs], flagged)
    del host                               # the pinned block back to its pool
    if ycodes is None and (scored is None or scored[1].size):
        clock.mark("encode")               # the caller reads y's codes: made now
        ycodes = cp.empty(max(ysize, 1), dtype=cp.uint8)[:ysize]
        queue_encode(cp, raws[1:], table, [ycodes], flags[2:])
    clock.mark(None)
    sides = [(c, bad, None, top) for c, (bad, top) in zip((xcodes, ycodes), found)]
    return sides, scored, clock.finish()


def _read_back(cp, device) -> np.ndarray:
    """A host copy of the 1-D ``uint8`` device array ``device``, made through pinned memory
    (CuPy's pinned pool reuses the block) on the current stream, once the work queued
    there is done."""
    stream = cp.cuda.get_current_stream()
    host = np.frombuffer(cp.cuda.alloc_pinned_memory(max(device.size, 1)), np.uint8,
                         device.size)
    device.get(out=host, stream=stream, blocking=False)
    stream.synchronize()
    return host
