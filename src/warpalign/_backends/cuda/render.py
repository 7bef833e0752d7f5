"""Rendering of many traced paths on the GPU: ``render.cu``'s two launches (issue 20).

:func:`render_device` gives exactly what ``_backends/render.py``'s ``render_paths`` gives
(the same :class:`~warpalign._backends.render.Rendered`, field by field: dtypes, lengths,
bytes), in two kernels instead of dozens of array operations: ``render_walk`` (one warp
per path: score, consumption, matches, aligned bytes, the length of the CIGAR text), the
running sums of those lengths (the CIGAR offsets), ``render_cigar`` (the text). One read
back: the total CIGAR length, to size its buffer. :func:`to_host` brings a ``Rendered``
back in two copies through pinned memory (its integers, then its bytes).
"""

from __future__ import annotations

import numpy as np

from ...offsets import running_sums
from ..render import Rendered
from .loader import get_module
from .transfer import pinned

_FILE = "render.cu"
_NAMES = ("render_walk", "render_cigar")
_WARPS = 8                     # paths (warps) per block
_BLOCK = (32 * _WARPS,)


def render_device(cp, ops, opoff, qcat, qpos, tcat, tpos, matrix, gap_open: int, gap_extend: int,
                  symbols) -> Rendered:
    """``render_paths(..., xp=cp)``'s answer (arrays of ``cp``), on the current stream.

    Args:
        cp: CuPy (or a stand-in with its array functions, :func:`.loader.emulated`).
        ops: uint8 device array, the ops of all paths end to end.
        opoff: the paths' offsets in ``ops`` (n + 1 entries, from 0; host or device).
        qcat, tcat: uint8 device arrays of symbol codes the paths index.
        qpos, tpos: where each path starts in ``qcat`` / ``tcat`` (host or device).
        matrix: the substitution matrix as a contiguous int32 device array (K x K).
        gap_open, gap_extend: penalties (positive).
        symbols: uint8 device array, the printed byte of each code (256 entries).

    A path that runs past the end of ``qcat`` or ``tcat`` reads clamped positions, as
    ``render_paths`` does. The results are on the current stream: a reader on another
    stream waits for it first.
    """
    walked = render_walk(cp, ops, opoff, qcat, qpos, tcat, tpos, matrix, gap_open, gap_extend,
                         symbols)
    size = int(walked.cigoff[-1])                # the one read back
    return render_cigar(cp, walked, ops, opoff, size)


def render_walk(cp, ops, opoff, qcat, qpos, tcat, tpos, matrix, gap_open: int,
                gap_extend: int, symbols) -> Rendered:
    """:func:`render_device`'s first launch and the CIGAR offsets, queued (arguments as
    there; ``ops`` may run past the last path: the aligned strings' buffers are as long):
    a :class:`Rendered` whose ``cigar`` is None, nothing read back; :func:`render_cigar`
    completes it once the caller knows ``cigoff[-1]``."""
    ops, qcat, tcat = (cp.ascontiguousarray(v) for v in (ops, qcat, tcat))
    opoff = cp.asarray(opoff, dtype=np.int64)
    n = int(opoff.shape[0]) - 1
    total = int(ops.shape[0])
    qpos = cp.asarray(qpos, dtype=np.int64)
    tpos = cp.asarray(tpos, dtype=np.int64)
    scores, used_q, used_t, matches, text = (cp.empty(n, np.int64) for _ in range(5))
    query = cp.empty(total, np.uint8)
    target = cp.empty(total, np.uint8)
    if n:
        get_module(_FILE, _NAMES).get_function("render_walk")(_grid(n), _BLOCK, (
            ops, opoff, np.int32(n), qcat, np.int64(qcat.shape[0]), qpos, tcat,
            np.int64(tcat.shape[0]), tpos, matrix, np.int32(matrix.shape[0]),
            np.int64(gap_open), np.int64(gap_extend), symbols, scores, used_q, used_t,
            matches, query, target, text))
    return Rendered(scores, used_q, used_t, matches, query, target, None,
                    running_sums(text, cp))


def render_cigar(cp, walked: Rendered, ops, opoff, size: int) -> Rendered:
    """``walked`` (:func:`render_walk`'s) with its CIGAR text, queued, in a buffer of
    ``size`` bytes: its ``cigoff[-1]``, or a bound where the caller does not know it yet
    (twice the ops: the text is then ``cigar[:cigoff[-1]]``)."""
    n = int(walked.cigoff.shape[0]) - 1
    cigar = cp.empty(size, np.uint8)
    if size and n:
        get_module(_FILE, _NAMES).get_function("render_cigar")(
            _grid(n), _BLOCK, (cp.ascontiguousarray(ops), cp.asarray(opoff, dtype=np.int64),
                               np.int32(n), walked.cigoff, cigar))
    return walked._replace(cigar=cigar)


def _grid(n: int) -> tuple[int]:
    return (-(-n // _WARPS),)


def to_host(cp, got: Rendered, stream) -> Rendered:
    """``got`` (device arrays) as host arrays, in two copies on ``stream`` into pinned
    memory (the per-path integers joined, then the aligned strings and the CIGAR text
    joined): eight pageable reads, each a sync, took ~7 ms for 32,768 paths of ~140 ops
    (session 23, one H200). Returns when the copies are done."""
    ints = [got.scores, got.used_q, got.used_t, got.matches, got.cigoff]
    texts = [got.query, got.target, got.cigar]
    host_ints = pinned(cp, sum(int(v.shape[0]) for v in ints), np.int64)
    host_texts = pinned(cp, sum(int(v.shape[0]) for v in texts), np.uint8)
    with stream:
        if host_ints.size:
            cp.concatenate([v.astype(np.int64, copy=False) for v in ints]).get(
                stream=stream, out=host_ints, blocking=False)
        if host_texts.size:
            cp.concatenate(texts).get(stream=stream, out=host_texts, blocking=False)
    stream.synchronize()
    out_ints = split(host_ints, ints, copy=True)
    out_texts = split(host_texts, texts, copy=False)
    return Rendered(*out_ints[:4], *out_texts, out_ints[4])


def split(joined: np.ndarray, parts, copy: bool) -> list[np.ndarray]:
    """``joined``'s consecutive pieces, one per device array of ``parts``, each with its
    part's dtype: copies (``copy``), or views of the pinned buffer, which goes back to the
    pool when the last of them is gone (the strings: the table keeps them until their
    text is first read, :data:`~warpalign.results.LAZY_TEXT_BYTES`; a copy first cost ~9 MB
    of fresh pages for 32,768 paths)."""
    out, at = [], 0
    for v in parts:
        size = int(v.shape[0])
        piece = joined[at:at + size]
        out.append(piece.astype(v.dtype) if copy or piece.dtype != v.dtype else piece)
        at += size
    return out
