"""``score_pairs`` from characters on the device with the plan made before the encode's
flags are read: the ``pairs_ahead`` engine of the CUDA backend (issue 22).

The order of :func:`~warpalign.pairs.score_pairs` elsewhere is encode, read the encode's
flags (a sync: is there a bad character, which is the largest code), plan on the host
while the GPU idles, upload the plan, launch, read the scores (a second sync). Here, for
CuPy inputs and a scoring whose word-wise plan is all ``ww_dna`` when the codes are A C
G T (:func:`applies`), :func:`encode_and_score` queues the encode, makes the plan of
codes below 4 on the host while the encode runs (the same
:func:`~.ww_plan.plan_wordwise`, with ``largest=0``), queues its upload, ``ww_ypack`` and
``ww_dna`` on the same stream, and reads the encode's flags, the scores and the
saturation count back in ONE copy.

Why this is exact: the plan depends on the codes only through ``largest < 4``
(:func:`~.ww_plan.score_table`'s DNA choice), and so does the job's choice of method
(bitsliced is ruled out by a code >= 4 only). When the flags read back say every code
is below 4, the plan made is the plan ``score_wordwise`` would make after reading them,
run on the same codes: the scores are its scores. Otherwise (a character without a
code: 255; an N or another IUPAC code: 4 and up) ``ww_ypack`` and ``ww_dna`` found the
guard closed (the flags, on the device) and returned without reading a column, the
scores are not returned, and the caller raises the bad character or reruns the call on
the path that plans after the flags. ``ww_ypack`` also clamps every code to 4, so no
code could make ``ww_dna`` read outside its table even without the guard.
"""

from __future__ import annotations

import numpy as np

from .encode import clear_flags, encode_queued, side_flags
from .loader import require_cupy
from .pairs import Clock, flagged_pairs, launch_wordwise
from .ww_plan import dna_linear, plan_wordwise


def applies(scoring, algorithm: str) -> bool:
    """Whether :func:`encode_and_score` can score this scoring and algorithm: local, linear
    gaps, the DNA table in bytes, 16-bit lanes (every launch ``ww_dna`` when the codes
    are A C G T)."""
    return dna_linear(scoring, algorithm)


def encode_and_score(raws, table: np.ndarray, xoff: np.ndarray, yoff: np.ndarray, scoring,
                     algorithm: str = "local", *, check: bool = True
                     ) -> tuple[list[tuple], tuple | None, dict]:
    """Encode the two sides ``raws`` (1-D ``uint8`` CuPy arrays of characters, read in
    place on the current stream) by ``table`` and score pairs (x_i, y_i) with these
    offsets (pairs + 1 each, from 0) by the word-wise plan of A C G T codes, with one
    device-to-host read of the flags and the scores (a second only for saturated pairs).

    Returns (per side, as the ``encode`` engine's: (device codes, index of the first
    character without a code or -1, None (no counts), largest code)); (scores int32,
    indices of the pairs a 16-bit lane flagged) when every code is below 4, else None
    (nothing scored: the caller raises or plans again); seconds per step ("encode",
    "h2g", "pack", "swa", "g2h")).

    Raises:
        ValueError: a scoring or algorithm :func:`applies` refuses, or other than two
            sides.
        TypeError: a side that is not a 1-D ``uint8`` CuPy array.
    """
    if not applies(scoring, algorithm):
        raise ValueError("pairs_ahead scores DNA local linear-gap scorings only "
                         "(see applies())")
    if len(raws) != 2:
        raise ValueError(f"expected two sides, got {len(raws)}")
    cp = require_cupy("backend 'cuda'")
    npairs = len(xoff) - 1
    # one buffer for the one read: the encode's flags (4 words), then the scores and the
    # saturation count as int32 (zeroed)
    head = np.zeros(4 + (npairs + 2) // 2, np.uint64)
    head[:4] = clear_flags(2)
    clock = Clock(cp)
    clock.mark("encode")
    d_head = cp.asarray(head)
    flags = d_head[:4]
    codes = encode_queued(raws, table, flags)
    clock.mark(None)
    # the host plans while the encode runs: codes assumed A C G T (checked after the read)
    plan = plan_wordwise(xoff, yoff, scoring, algorithm, 0)
    res = d_head[4:].view(cp.int32)[:npairs + 1]
    d_flag = launch_wordwise(cp, plan, codes[0], codes[1], clock, res, guard=flags)
    clock.mark("g2h")
    words = d_head.get()                     # the one read: flags, scores, count
    sides = []
    for k, c in enumerate(codes):
        bad, top = side_flags(words, k, check)
        sides.append((c, bad, None, top))
    scored = None
    if all(bad < 0 and top < 4 for _, bad, _, top in sides):
        result = words[4:].view(np.int32)[:npairs + 1]
        scored = (plan.finish(result[:npairs]), flagged_pairs(d_flag, int(result[npairs])))
    clock.mark(None)
    return sides, scored, clock.finish()
