"""``score_pairs`` from CuPy arrays with one device-to-host read: the ``pairs_ahead``
engine of the CUDA backend (issue 22).

Elsewhere a batch goes: encode, read the encode's flags (a sync: is there a bad
character, which is the largest code), plan, launch, read the scores (a second sync).
Here, for CuPy inputs and a scoring whose word-wise launches are all ``ww_dna`` when the
codes are A C G T (:func:`applies`), :func:`encode_and_score` queues the x side's encode
on the caller's stream, takes the plan made for codes below 4
(:func:`~.pairs.planned_wordwise` with ``largest=3``: kept for inputs of one query and
one target length), queues ``ww_ypack_chars`` and ``ww_dna`` after it with the flags as
their guard, and reads the flags, the scores and the saturation count back in ONE copy.

The y side is not encoded first: ``ww_ypack_chars`` reads y's characters through the
code table (in shared memory) and writes y's flags as the encode writes them (the first
bad character, the largest code), so y's 134 MB of byte codes (32,768 pairs of
128 x 4,096) are neither written nor read again just to be packed. Its guard is x's half
of the flags; ``ww_dna``, queued after it, reads both halves. The y codes are made (the
encode, after the read) only where something reads them: nothing was scored (the caller
names the bad character or scores the codes again), a 16-bit lane flagged pairs (the
caller rescores them from the codes), or the caller asked for them (``codes``: mode
"full" aligns the pairs it reports). The ``pack`` step times ``ww_ypack_chars``; the
``encode`` step the x side's encode and, where it runs, y's.

Why this is exact: the plan depends on the codes only through "the largest is below 4"
(:func:`~.pairs.ww_table`'s DNA choice), and the job's choice of method only through the
same (a code >= 4 rules bitsliced out). When the flags read back say every code is below
4, the plan taken is the plan :func:`~.pairs.score_wordwise` makes after reading them,
run on the same codes (``ww_ypack_chars`` packs what ``ww_ypack`` packs from the encoded
codes): the scores are its scores. y's flags are the encode's because its pairs cover its
characters from the first to the last (checked), each character read once. Otherwise (a
character without a code: 255; an N or another IUPAC code: 4 and up) ``ww_dna`` found the
guard closed on the device and returned without writing, no scores are returned, and the
caller names the bad character or scores the codes again on the path planned for them.

One buffer holds the x codes, the 4 zero bytes ``ww_dna`` may read past them, the flags
(four words: x's first bad character and largest code, then y's) and the scores with the
saturation count; everything after the x codes is cleared by one memset and read back by
one copy. The code table stays on the device (:func:`~.encode.device_table`).
"""

from __future__ import annotations

import functools

import numpy as np

from ..cpu.pairwise import LOCAL
from .encode import check_chars, device_table, queue_encode, side_flags
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
                     algorithm: str = "local", *, check: bool = True,
                     lengths: tuple = (None, None),
                     codes: bool = True) -> tuple[list[tuple], tuple | None, dict]:
    """Encode the two sides ``raws`` (1-D ``uint8`` CuPy arrays of characters, read in
    place on the current stream) by ``table`` and score the pairs (x_i, y_i) of these
    offsets (pairs + 1 each, from 0; y's to its last character) by the word-wise plan of
    codes below 4, with one device-to-host read of the flags and the scores (a second only
    for saturated pairs).

    Returns (per side, as the ``encode`` engine's: (device codes, index of the first
    character without a code or -1, None (no counts), largest code), y's codes None where
    not made (below); (scores int32, sorted indices of the pairs a 16-bit lane flagged)
    when every code is below 4, else None (nothing scored: the caller names the bad
    character or scores the codes on the path planned for them); seconds per step
    ("encode", "pack", "swa", "g2h", and "h2g" where the plan was not kept)). ``lengths``:
    each side's one sequence length where the caller knows it (a 2-D array's rows), so the
    kept plan is found without reading the offsets (:func:`~.pairs.planned_wordwise`).
    ``codes``: the caller reads both sides' codes whatever the outcome; False: y's are
    made only when nothing was scored or pairs were flagged (module docstring).

    Raises:
        ValueError: a scoring or algorithm :func:`applies` refuses, other than two sides,
            no pairs, or y's offsets not from 0 to its size.
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
    check_chars(cp, raws)
    xsize, ysize = int(raws[0].size), int(raws[1].size)
    if int(yoff[0]) != 0 or int(yoff[-1]) != ysize:
        # ww_ypack_chars finds y's flags over its pairs' characters only
        raise ValueError(f"pairs_ahead: y's offsets must run from 0 to its {ysize} "
                         f"characters, got {int(yoff[0])} to {int(yoff[-1])}")
    at, scores_at, total = layout(xsize, npairs)
    clock = Clock(cp)
    clock.mark("encode")
    buf = cp.empty(total, dtype=cp.uint8)
    buf[xsize:].fill(0)                    # the pad, the flags and the scores: one memset
    flags = buf[at:scores_at].view(cp.uint64)
    queue_encode(cp, raws[:1], table, [buf[:xsize]], flags)
    clock.mark("h2g")                      # the plan's copy up, when it is not kept
    plan, device = planned_wordwise(cp, None, np.asarray(xoff, np.int64), None,
                                    np.asarray(yoff, np.int64), scoring, algorithm,
                                    rows=None, prefetch=None, largest=3, lengths=lengths)
    if plan.code != LOCAL or any(pack is None for *_, pack, _ in plan.launches):
        raise RuntimeError("internal error: pairs_ahead's plan has launches without the "
                           "guard (applies() and plan_wordwise disagree)")
    mod = pairs_module(["ww_ypack_chars" if n == "ww_ypack" else n for n in plan.names])
    res = buf[scores_at:].view(cp.int32)
    d_flag = cp.empty(npairs, dtype=cp.int32)
    ychars = cp.ascontiguousarray(raws[1]) if ysize else cp.zeros(1, dtype=cp.uint8)
    queue_wordwise(cp, plan, mod, buf, ychars, device, res[:npairs], d_flag, res[npairs:],
                   clock, guard=flags, table=device_table(cp, table))
    clock.mark("g2h")
    host = buf[xsize:].get()               # the one read: flags, scores, count
    words = host[at - xsize:scores_at - xsize].copy().view(np.uint64)
    found = [side_flags(words, k, check) for k in range(2)]
    scored = None
    if all(bad < 0 and top < 4 for bad, top in found):
        result = host[scores_at - xsize:].copy().view(np.int32)
        nflag = int(result[npairs])
        flagged = (np.sort(d_flag[:nflag].get()).astype(np.int64) if nflag
                   else np.zeros(0, np.int64))
        scored = (result[:npairs], flagged)
    d_y = None
    if codes or scored is None or scored[1].size:
        clock.mark("encode")
        d_y = cp.empty(ysize, dtype=cp.uint8)
        # y's flag words were read already: the encode leaves them as they are (the same
        # values by atomicMax)
        queue_encode(cp, [ychars[:ysize]], table, [d_y], flags[2:])
    clock.mark(None)
    sides = [(c, bad, None, top) for c, (bad, top) in zip((buf[:xsize], d_y), found)]
    return sides, scored, clock.finish()
