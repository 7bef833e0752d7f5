"""Rendering of many traced paths at once, in array operations (issue 20).

A path is a run of ops (``OP_M`` 0: a query symbol against a target symbol, ``OP_I`` 1:
a query symbol against a gap, ``OP_D`` 2: a target symbol against a gap). Path k is
``ops[opoff[k]:opoff[k+1]]``, starting at ``qcat[qpos[k]]`` and ``tcat[tpos[k]]``.
:func:`render_paths` gives, with no loop per path or per op (so the same code runs on
NumPy or, with ``xp=cupy``, on the GPU where the ops were traced):

* each path's score re-checked (substitution scores from the matrix; a gap op costs
  ``gap_open`` where it differs from the previous op of its path, else ``gap_extend``);
* the query and target symbols it consumes (callers compare them with the segment);
* the aligned strings of all paths (one byte per op at the op's own offset, ``-``
  against a gap) and the matching columns per path (identity = matches / ops);
* the CIGAR runs (a run starts where an op differs from the previous op of its path)
  and their text, all paths' CIGARs in one byte buffer with offsets
  (:func:`cigar_text`).

``cpu/traceback.py``'s ``path_score`` is the one-path definition these equal
(tests/test_render.py compares them on random paths). The engines render their own
paths with the same output (``render_flat``): the CPU's by Numba (``cpu/render.py``),
the GPU's in two kernels (``cuda/render.cu``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ..offsets import running_sums  # noqa: F401 (render's users import it here too)

_GAP = 45            # "-"
_LETTERS = np.frombuffer(b"MID", np.uint8)
_POW10 = 10 ** np.arange(19, dtype=np.int64)


class Rendered(NamedTuple):
    """What :func:`render_paths` gives (arrays of ``xp``)."""

    scores: Any      # int64 per path
    used_q: Any      # int64 per path: query symbols consumed
    used_t: Any      # int64 per path
    matches: Any     # int64 per path: columns with two equal symbols
    query: Any       # uint8 per op: the aligned query string of every path
    target: Any      # uint8 per op
    cigar: Any       # uint8: the CIGAR text of every path
    cigoff: Any      # int64 per path + 1: path k's CIGAR is cigar[cigoff[k]:cigoff[k+1]]


def _path_of(offsets, total: int, xp):
    """The path index of each of ``total`` items laid out at ``offsets`` (n + 1 entries,
    from 0 to ``total``; empty paths allowed): a count of the path ends at or before it."""
    if total == 0:
        return xp.zeros(0, np.int64)
    # (not a cumsum of bincount: CuPy's bincount imports cupyx and with it SciPy, ~0.2 s
    # on its first call in a process, paid at the end of a command line's search)
    return xp.searchsorted(offsets[1:-1], xp.arange(total), side="right")


def _gather(codes, at, xp):
    """codes[at], positions past the end clamped to the last (an inconsistent path)."""
    if codes.shape[0] == 0:
        return xp.zeros(at.shape[0], np.uint8)
    return codes[xp.minimum(at, codes.shape[0] - 1)]


def render_paths(ops, opoff, qcat, qpos, tcat, tpos, matrix, gap_open: int, gap_extend: int,
                 symbols, *, xp=np) -> Rendered:
    """Score, consumption, aligned strings and CIGAR of many paths (module docstring).

    Args:
        ops: uint8 ops of all paths, end to end.
        opoff: int64 offsets of the paths in ``ops`` (n + 1 entries, from 0).
        qcat, tcat: uint8 symbol codes (any buffers the paths index).
        qpos, tpos: int64, where each path starts in ``qcat`` / ``tcat``.
        matrix: the substitution matrix (K x K).
        gap_open, gap_extend: penalties (positive).
        symbols: uint8 array, the printed byte of each code (256 entries).
        xp: the array module of all array arguments (NumPy or CuPy).

    A path that runs past the end of ``qcat`` or ``tcat`` (an inconsistent path: the
    caller sees it by ``used_q``/``used_t``) reads clamped positions, never outside.
    """
    total = int(ops.shape[0])
    ops = ops.astype(np.int8, copy=False)
    path = _path_of(opoff, total, xp)
    first = xp.zeros(total, bool)
    starts = opoff[:-1][opoff[:-1] < opoff[1:]]
    first[starts] = True
    prev = xp.empty(total, np.int8)
    if total:
        prev[0] = -1
        prev[1:] = ops[:-1]
    prev[first] = -1
    takes_q = (ops != 2).astype(np.int64)
    takes_t = (ops != 1).astype(np.int64)
    cq = running_sums(takes_q, xp)
    ct = running_sums(takes_t, xp)
    # the op's position in qcat: the path's start + the query symbols before it in the path
    qc = _gather(qcat, (qpos - cq[opoff[:-1]])[path] + cq[:-1], xp)
    tc = _gather(tcat, (tpos - ct[opoff[:-1]])[path] + ct[:-1], xp)
    size = matrix.shape[0]
    flat = xp.asarray(np.ascontiguousarray(matrix, dtype=np.int64).ravel())
    pair = flat[qc.astype(np.int64) * size + tc.astype(np.int64)]
    gap = xp.where(ops == prev, -int(gap_extend), -int(gap_open))
    value = xp.where(ops == 0, pair, gap)
    scores = xp.diff(running_sums(value, xp)[opoff])
    used_q = xp.diff(cq[opoff])
    used_t = xp.diff(ct[opoff])
    sym = xp.asarray(symbols)
    query = xp.where(takes_q == 1, sym[qc], np.uint8(_GAP)).astype(np.uint8)
    target = xp.where(takes_t == 1, sym[tc], np.uint8(_GAP)).astype(np.uint8)
    same = ((query == target) & (query != _GAP) & (target != _GAP)).astype(np.int64)
    matches = xp.diff(running_sums(same, xp)[opoff])
    # CIGAR runs: an op starts one where it differs from the previous op of its path
    heads = xp.flatnonzero(ops != prev)
    lengths = xp.diff(xp.concatenate([heads, xp.asarray([total], dtype=heads.dtype)]))
    kinds = ops[heads]
    runoff = xp.searchsorted(heads, opoff, side="left")
    cigar, cigoff = cigar_text(lengths, kinds, runoff, xp=xp)
    return Rendered(scores, used_q, used_t, matches, query, target, cigar, cigoff)


def cigar_text(lengths, kinds, runoff, *, xp=np):
    """The CIGAR text of runs (``lengths`` >= 1, ``kinds`` ops 0/1/2) grouped by
    ``runoff`` (path k holds runs runoff[k]..runoff[k+1]-1): one uint8 buffer of every
    path's text and the int64 offsets of each path's text in it."""
    lengths = lengths.astype(np.int64)
    pow10 = xp.asarray(_POW10)
    digits = xp.ones(lengths.shape[0], np.int64)
    top = int(lengths.max()) if lengths.shape[0] else 0
    for power in range(1, 19):
        if top < int(_POW10[power]):
            break
        digits += lengths >= int(_POW10[power])
    width = digits + 1
    start = running_sums(width, xp)
    total = int(start[-1]) if start.shape[0] else 0
    run = _path_of(start, total, xp)
    at = xp.arange(total, dtype=np.int64) - start[:-1][run]
    place = digits[run] - 1 - at            # the digit's power of ten; -1 for the op letter
    digit = (lengths[run] // pow10[xp.maximum(place, 0)]) % 10 + 48
    letters = xp.asarray(_LETTERS)
    text = xp.where(place >= 0, digit, letters[kinds[run].astype(np.int64)]).astype(np.uint8)
    return text, start[runoff]
