"""``score_pairs`` from CuPy arrays with one device-to-host read: the ``pairs_ahead``
engine of the CUDA backend (issue 22).

Elsewhere a batch goes: encode, read the encode's flags (a sync: is there a bad
character, which is the largest code), plan, launch, read the scores (a second sync).
Here, for CuPy inputs and a scoring whose word-wise launches are all ``ww_dna`` when the
codes are A C G T (:func:`applies`), :func:`encode_and_score` queues the encode on the
caller's stream with the plan made for codes below 4 (:func:`~.pairs.planned_wordwise`
with ``largest=3``: kept for inputs of one query and one target length, looked up before
any launch), queues ``ww_ypack`` and ``ww_dna`` after it with the encode's flags as their
guard, and reads the flags, the scores and the saturation count back in ONE copy.

Why this is exact: the plan depends on the codes only through "the largest is below 4"
(:func:`~.pairs.ww_table`'s DNA choice), and the job's choice of method only through the
same (a code >= 4 rules bitsliced out). When the flags read back say every code is below
4, the plan taken is the plan :func:`~.pairs.score_wordwise` makes after reading them,
run on the same codes: the scores are its scores. Otherwise (a character without a code:
255; an N or another IUPAC code: 4 and up) ``ww_ypack`` and ``ww_dna`` found the guard
closed on the device and returned without writing (``ww_ypack_raw``, below, writes its
columns; ww_dna reads none), no scores are returned, and the caller names the bad
character or scores the codes again on the path planned for them.

One buffer holds the x codes, the 4 zero bytes ``ww_dna`` may read past them, the flags
(four words: x's first bad character and largest code, then y's) and the scores with the
saturation count; everything after the x codes is cleared by one memset and read back by
one copy. The y codes have a buffer of their own, the score table stays on the device
(:func:`~.encode.device_table`).

Where the caller does not want y's codes (``y_codes=False``: mode "score"), y is not
encoded on its own: ``ww_ypack_raw`` reads its characters, writes ww_dna's columns and
y's largest code (255 for a character without a code) in one pass, and y's codes (with
the first bad character's index) are made by the encode kernel only when the batch needs
them (nothing scored, or a flagged pair to rescore from codes).
"""

from __future__ import annotations

import functools

import numpy as np

from ..cpu.pairwise import LOCAL
from .encode import check_chars, device_table, new_flags, queue_encode, side_flags
from .loader import require_cupy
from .pairs import (Clock, pairs_module, planned_wordwise, queue_packs, queue_wordwise,
                    ww_table)
from .transfer import pinned

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
                     y_codes: bool = True) -> tuple[list[tuple], tuple | None, dict]:
    """Encode the two sides ``raws`` (1-D ``uint8`` CuPy arrays of characters, read in
    place on the current stream) by ``table`` and score the pairs (x_i, y_i) of these
    offsets (pairs + 1 each, from 0) by the word-wise plan of codes below 4, with one
    device-to-host read of the flags and the scores (a second only for saturated pairs).

    Returns (per side, as the ``encode`` engine's: (device codes, index of the first
    character without a code or -1, None (no counts), largest code)); (scores int32,
    sorted indices of the pairs a 16-bit lane flagged) when every code is below 4, else
    None (nothing scored: the caller names the bad character or scores the codes on the
    path planned for them); seconds per step ("encode", "pack", "swa", "g2h", and "h2g"
    where the plan was not kept)). ``lengths``: each side's one sequence length where the
    caller knows it (a 2-D array's rows), so the kept plan is found without reading the
    offsets (:func:`~.pairs.planned_wordwise`). ``y_codes``: whether the caller wants y's
    codes with the scores (mode "full" aligns them); False: y's characters go straight
    into ww_dna's columns (``ww_ypack_raw``: no code array between the two passes) and
    its codes are made only where the batch needs them (a code above 3, a flagged pair:
    the caller scores those from codes); otherwise y's entry holds None for its codes.

    Raises:
        ValueError: a scoring or algorithm :func:`applies` refuses, other than two sides,
            or no pairs.
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
    xsize, ysize = int(raws[0].size), int(raws[1].size)
    at, scores_at, total = layout(xsize, npairs)
    stream = cp.cuda.get_current_stream()
    clock = Clock(cp)
    clock.mark("h2g")                      # the plan's copy up, when it is not kept
    # planned before any launch: a plan of codes below 4 reads neither side's codes
    plan, device = planned_wordwise(cp, None, np.asarray(xoff, np.int64), None,
                                    np.asarray(yoff, np.int64), scoring, algorithm,
                                    rows=None, prefetch=None, largest=3, lengths=lengths)
    if plan.code != LOCAL or any(pack is None for *_, pack, _ in plan.launches):
        raise RuntimeError("internal error: pairs_ahead's plan has launches without the "
                           "guard (applies() and plan_wordwise disagree)")
    mod = pairs_module(plan.names if y_codes else (*plan.names, "ww_ypack_raw"))
    clock.mark("encode")
    buf = cp.empty(total, dtype=cp.uint8)
    # the pad, the flags and the scores: one memset (by the runtime: ``fill`` took ~17 us
    # of the host's time before the GPU had work)
    cp.cuda.runtime.memsetAsync(buf.data.ptr + xsize, 0, total - xsize, stream.ptr)
    flags = buf[at:scores_at].view(cp.uint64)
    if y_codes:
        d_y = _codes_for(cp, ysize)
        codes = [buf[:xsize], d_y]
        queue_encode(cp, raws, table, codes, flags)
        packed = None                      # by queue_wordwise, from the codes
    else:
        # y first, straight into ww_dna's columns (the GPU's longest work before ww_dna
        # starts while the host queues the rest), then x's encode
        d_y = None
        codes = [buf[:xsize], None]
        check_chars(cp, raws[1:])
        chars = raws[1] if raws[1].flags.c_contiguous else cp.ascontiguousarray(raws[1])
        packed = queue_packs(cp, plan, mod, device, clock,
                             ychars=(chars, device_table(cp, table), flags[2:]))
        clock.mark("encode")
        queue_encode(cp, raws[:1], table, codes[:1], flags[:2])
    res = buf[scores_at:].view(cp.int32)
    d_flag = cp.empty(npairs, dtype=cp.int32)
    queue_wordwise(cp, plan, mod, buf, d_y, device, res[:npairs], d_flag, res[npairs:], clock,
                   guard=flags, packed=packed)
    clock.mark("g2h")
    # the one read (flags, scores, count), into pinned memory by the runtime: no staging
    # copy of the driver, none of ``get``'s checks (~40 us of the host's time between the
    # last launch and the wait, session 40), and the step's end recorded before the wait
    host = pinned(cp, total - xsize, np.uint8)
    cp.cuda.runtime.memcpyAsync(host.ctypes.data, buf.data.ptr + xsize, total - xsize,
                                cp.cuda.runtime.memcpyDeviceToHost, stream.ptr)
    clock.mark(None)
    stream.synchronize()
    words = host[at - xsize:scores_at - xsize].copy().view(np.uint64)
    sides = []
    for k, c in enumerate(codes):
        bad, top = side_flags(words, k, check)
        sides.append((c, bad, None, top))
    scored = None
    nflag = 0
    if all(bad < 0 and top < 4 for _, bad, _, top in sides):
        # a view of the pinned read (it holds the memory; the job copies the scores once)
        result = host[scores_at - xsize:].view(np.int32)
        nflag = int(result[npairs])
        flagged = (np.sort(d_flag[:nflag].get()).astype(np.int64) if nflag
                   else np.zeros(0, np.int64))
        scored = (result[:npairs], flagged)
    if not y_codes and (scored is None or nflag):
        # the caller scores from codes now (or names the first bad character): y's by the
        # encode engine's kernel, its largest code as ww_ypack_raw's
        d_y, own = _codes_for(cp, ysize), new_flags(cp, 1)
        queue_encode(cp, raws[1:], table, [d_y], own)
        bad, top = side_flags(own.get(), 0, check)
        sides[1] = (d_y, bad, None, top)
    return sides, scored, clock.finish()


def _codes_for(cp, size: int):
    """A device array for ``size`` codes (the allocation at least one byte; sliced only
    when empty: a slice of a CuPy array costs ~5 us of host time)."""
    codes = cp.empty(max(size, 1), dtype=cp.uint8)
    return codes if size else codes[:0]
