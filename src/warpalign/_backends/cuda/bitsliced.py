"""Bulk pair scoring on the GPU by paper 000's bitsliced circuits (``pairs.cu``'s ``bs_*``).

:func:`score_bitsliced` (``method="bitsliced"``, the pair-kernel signature of
:mod:`warpalign.pairs`): 32-bit words, one pair per bit; steps W2B
(``transpose="ballot"``: __ballot_sync, or ``"swap"``: the paper's 32x32 swap/copy
network in registers), SWA (one warp per 32 pairs, 4 rows per lane, 2 or 4 columns per
iteration), B2W (untranspose). ``s`` is chosen from the scoring and lengths so that no
value can saturate (as the CPU version, :mod:`warpalign._backends.cpu.bitsliced`).
Measured figures: :mod:`.pairs`' docstring.
"""

from __future__ import annotations

import time

import numpy as np

from ..cpu.bitsliced import unsupported as bitsliced_unsupported
from ..cpu.bitsliced import value_bits
from .loader import require_cupy
from .pairs import BLOCK, Clock, check_runs, pairs_module, rerun

_BS_BLOCK = 128
_BS_R = 4                    # rows per lane of bs_swa (one band = 128 rows)
#: Columns per iteration of bs_swa (lane t works on columns s - C t .. s - C t + C - 1,
#: so C row chains overlap in one thread; the wavefront pads C * 31 columns): 4 when the
#: longest target has at least this many letters, else 2. H200, 32,768 pairs, m = 128,
#: kernel GCUPS C = 2 / 4: n = 1,024: 4,020 / 3,968; 4,096: 4,059 / 4,166; 16,384:
#: 4,105 / 4,260 (bench/results/pairs_gpu.jsonl).
BS_COLS4_FROM = 4096
#: bs_swa's columns (by columns per iteration): 0 loaded where used, 1 loaded one
#: iteration ahead into registers, 3 that and an L2 prefetch 8 iterations ahead. Kernel
#: GCUPS at n = 1,024 / 4,096 / 16,384, 32,768 pairs, m = 128, one H100, same runs
#: (bench/results/pairs_gpu.jsonl, docs/gpu-notes.md session 16): 0 / 1 / 3: 3,967-3,983 /
#: 4,167-4,169 / 4,261 and 4,238-4,242 / 4,426-4,428 / 4,533 and 4,063 / 4,516-4,517 /
#: 4,623-4,624 (C = 2 below BS_COLS4_FROM, 4 from it).
BS_PREFETCH = {2: 1, 4: 3}
#: W2B/B2W: "ballot" (bs_w2b: three __ballot_sync per position and warp; bs_b2w: a bit
#: gather per pair) or "swap" (bs_w2b_swap / bs_b2w_swap: paper 000's Hacker's Delight
#: 32x32 swap/copy transpose, Table I, in registers). Both stay selectable
#: (``transpose=``) so the paper's scheme can be measured beside the default. "swap" is
#: the default: same run, H200, 32,768 pairs, m = 128 (bench/results/pairs_gpu.jsonl), W2B
#: 0.144 / 0.344 / 0.954 ms at n = 1,024 / 4,096 / 16,384 against the ballot's 0.240 /
#: 0.658 / 2.28 ms; B2W 15 us against 4-5 us; the kernel and scores identical.
BS_TRANSPOSE = "swap"
BS_TRANSPOSES = ("ballot", "swap")


def score_bitsliced(xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray, yoff: np.ndarray,
                    scoring, algorithm: str = "local", *, cols: int | None = None,
                    transpose: str | None = None, prefetch: int | None = None,
                    kernel_runs: int = 1, largest: int | None = None
                    ) -> tuple[np.ndarray, np.ndarray, dict]:
    """Local scores of DNA pairs on the GPU by the bitsliced circuits (32 pairs per word).

    ``cols``: columns per iteration of bs_swa (2 or 4; default by :data:`BS_COLS4_FROM`).
    ``transpose``: W2B/B2W by ``"ballot"`` or ``"swap"`` (default :data:`BS_TRANSPOSE`).
    ``kernel_runs``: as :func:`score_wordwise` (bs_swa launched that many times).
    ``prefetch``: bs_swa's column loads (default :data:`BS_PREFETCH` by ``cols``).
    ``largest``: the largest code, when known (unused: the caller checks A C G T).
    """
    check_runs(kernel_runs)
    transpose = BS_TRANSPOSE if transpose is None else transpose
    if transpose not in BS_TRANSPOSES:
        raise ValueError(f"transpose must be one of {BS_TRANSPOSES}, not {transpose!r}")
    why = bitsliced_unsupported(scoring, algorithm)
    if why is not None:
        raise ValueError(f"method 'bitsliced' cannot score this: {why}")
    cp = require_cupy("backend 'cuda'")
    npairs = len(xoff) - 1
    scores = np.zeros(npairs, dtype=np.int32)
    c1, c2, gap = int(scoring.match), -int(scoring.mismatch), int(scoring.gap_open)
    if npairs == 0 or c1 <= 0:
        return scores, np.zeros(0, np.int64), {}
    xoff = np.asarray(xoff, np.int64)
    yoff = np.asarray(yoff, np.int64)
    xl = np.diff(xoff)
    yl = np.diff(yoff)
    x_short = xl <= yl
    short_len = np.where(x_short, xl, yl)
    long_len = np.where(x_short, yl, xl)
    longest_short = int(short_len.max())
    if longest_short == 0:
        return scores, np.zeros(0, np.int64), {}
    s = value_bits(c1 * longest_short)
    top = (1 << s) - 1
    c2, gap = min(c2, top), min(gap, top)
    idx = np.arange(npairs, dtype=np.int64)
    short_seq = np.where(x_short, idx, npairs + idx)
    long_seq = np.where(x_short, npairs + idx, idx)
    order = np.lexsort((short_len, long_len))[::-1].astype(np.int64)
    groups = -(-npairs // 32)
    lanes = np.full(groups * 32, -1, dtype=np.int64)
    lanes[:npairs] = order
    valid = lanes >= 0
    seq_s = np.where(valid, short_seq[np.maximum(lanes, 0)], -1).astype(np.int32)
    seq_l = np.where(valid, long_seq[np.maximum(lanes, 0)], -1).astype(np.int32)
    g_m = np.where(valid, short_len[np.maximum(lanes, 0)], 0).reshape(groups, 32).max(axis=1)
    g_n = np.where(valid, long_len[np.maximum(lanes, 0)], 0).reshape(groups, 32).max(axis=1)
    xp = cp.get_array_module(xcodes, ycodes)   # codes on the device stay there
    xcodes = xp.ascontiguousarray(xcodes[xoff[0]:xoff[-1]])
    ycodes = xp.ascontiguousarray(ycodes[yoff[0]:yoff[-1]])
    xoff, yoff = xoff - xoff[0], yoff - yoff[0]
    codes = xp.concatenate([xp.asarray(xcodes), xp.asarray(ycodes), xp.zeros(1, xp.uint8)])
    offsets = np.concatenate([xoff[:-1], yoff + len(xcodes)])   # x_i is i, y_i is npairs + i

    def layout(rows):
        off = np.zeros(groups + 1, np.int64)
        np.cumsum(rows, out=off[1:])
        chunks = np.zeros(groups + 1, np.int64)
        np.cumsum(-(-rows // 32), out=chunks[1:])
        return off, chunks

    xo_planes, x_chunks = layout(g_m)
    yo_planes, y_chunks = layout(g_n)
    bands = np.maximum(1, -(-g_m // (32 * _BS_R)))
    bsizes = np.where(bands > 1, (g_n + 2) * s, 0)
    boff = np.zeros(groups, np.int64)
    np.cumsum(bsizes[:-1], out=boff[1:])
    if cols is None:
        cols = 4 if int(g_n.max()) >= BS_COLS4_FROM else 2
    cols = int(cols)
    if cols not in BS_PREFETCH:
        raise ValueError(f"cols must be one of {sorted(BS_PREFETCH)}, not {cols!r}")
    banded = "true" if int(bands.max()) > 1 else "false"
    prefetch = BS_PREFETCH[cols] if prefetch is None else int(prefetch)
    if prefetch not in (0, 1, 3):
        raise ValueError(f"prefetch must be 0, 1 or 3, not {prefetch!r}")
    swa_name = f"bs_swa<{s}, {_BS_R}, {cols}, {c1}, {c2}, {gap}, {banded}, {prefetch}>"
    if transpose == "swap":
        w2b_name, b2w_name = "bs_w2b_swap", f"bs_b2w_swap<{s}>"
    else:
        w2b_name, b2w_name = "bs_w2b", "bs_b2w"
    mod = pairs_module((w2b_name, b2w_name, swa_name))

    t0 = time.perf_counter()
    d_codes = cp.asarray(codes)
    d_off = cp.asarray(offsets)
    cp.cuda.get_current_stream().synchronize()
    h2g = time.perf_counter() - t0
    clock = Clock(cp)
    clock.mark("h2g")      # the small index arrays
    d_seq_s, d_seq_l = cp.asarray(seq_s), cp.asarray(seq_l)
    d_gm = cp.asarray(g_m.astype(np.int32))
    d_gn = cp.asarray(g_n.astype(np.int32))
    d_xo, d_yo = cp.asarray(xo_planes), cp.asarray(yo_planes)
    d_xc, d_yc = cp.asarray(x_chunks), cp.asarray(y_chunks)
    d_boff = cp.asarray(boff)
    d_pair_of = cp.asarray(lanes[:npairs].astype(np.int32))
    xplanes = cp.empty((max(1, int(xo_planes[-1])), 4), dtype=cp.uint32)
    yplanes = cp.empty((max(1, int(yo_planes[-1])), 4), dtype=cp.uint32)
    bound = cp.empty(max(1, int(bsizes.sum())), dtype=cp.uint32)
    result = cp.empty(groups * s, dtype=cp.uint32)
    d_out = cp.zeros(npairs, dtype=cp.int32)
    w2b = mod.get_function(w2b_name)
    clock.mark("w2b")
    for seq, off, chunks, d_chunks, rows, planes in (
            (d_seq_s, d_xo, x_chunks, d_xc, g_m, xplanes),
            (d_seq_l, d_yo, y_chunks, d_yc, g_n, yplanes)):
        nchunks = int(chunks[-1])
        if nchunks == 0:
            continue
        w2b((-(-nchunks * 32 // BLOCK),), (BLOCK,),
            (d_codes, d_off, seq, d_chunks, off, cp.asarray(rows.astype(np.int32)),
             np.int32(groups), np.int64(nchunks), planes))
    for run in range(kernel_runs):
        rerun(clock, None, run)
        mod.get_function(swa_name)((-(-groups * 32 // _BS_BLOCK),), (_BS_BLOCK,),
                                   (xplanes, d_xo, d_gm, yplanes, d_yo, d_gn, np.int32(groups),
                                    bound, d_boff, result))
    clock.mark("b2w")
    if transpose == "swap":
        mod.get_function(b2w_name)((-(-groups // BLOCK),), (BLOCK,),
                                   (result, d_pair_of, np.int32(npairs), d_out))
    else:
        mod.get_function(b2w_name)((-(-npairs // BLOCK),), (BLOCK,),
                                   (result, np.int32(s), d_pair_of, np.int32(npairs), d_out))
    clock.mark("g2h")
    scores[:] = d_out.get()
    clock.mark(None)
    timings = clock.finish()
    timings["h2g"] = timings.get("h2g", 0.0) + h2g
    timings["swa"] = timings.get("swa", 0.0) / kernel_runs
    return scores, np.zeros(0, np.int64), timings
