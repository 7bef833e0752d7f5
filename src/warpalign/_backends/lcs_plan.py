"""Batched LCS row passes: one Hirschberg level's passes as descriptors, and their waves.

``warpalign.lcs`` hands a whole level's forward and backward passes to a backend's
``Resident`` runner at once (``base.LcsKernels``). A pass is a row ``(pattern_is_a, p_lo,
p_hi, t_lo, t_hi, backward)``: the pattern is ``a[p_lo:p_hi]`` when ``pattern_is_a`` else
``b[p_lo:p_hi]``, the text the other string's ``[t_lo:t_hi]``, and ``backward`` reads both
from their ends (``cpu/lcs.final_vector``'s meaning). With the two strings laid end to end
(``a`` at ``[0, |a|)``, ``b`` at ``[|a|, |a|+|b|)``), a pass becomes a descriptor of 8 int64
(:data:`FIELDS`): symbol ``j`` of its oriented pattern is ``codes[pstart + j*dir]``, of its
oriented text ``codes[tstart + j*dir]``; its vector is ``words`` uint64 at ``voff`` of one
output array for the level; its oriented text, zero-padded to :func:`padded_text` symbols
(the kernel reads up to 32 columns past the end), sits at ``toff`` of one text buffer for
the level (:func:`gather_texts`). ``cuda/lcs.cu``'s ``lcs_gather_texts`` and ``llcs_batch``
read exactly these fields; :func:`run_descriptors` is their CPU reading (the CPU stand-in
and the tests' oracle).

A GPU launch needs every band of every pass in it resident at once (a band waits for the
band below it and, through a small ring, for the one above), so a level whose bands exceed
the GPU's capacity runs as several *waves* (:func:`waves`): contiguous ranges of the passes
sorted largest first, each at most ``capacity`` bands, balanced so that two waves of a level
twice the capacity get half each (the GPU's throughput saturates well below its capacity).
Nothing here imports CuPy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["FIELDS", "bands", "describe", "gather_texts", "padded_text", "run_descriptors",
           "shared_alphabet", "waves"]

#: The descriptor's columns, in order.
FIELDS = ("pstart", "dir", "m", "tstart", "n", "voff", "words", "toff")


def padded_text(n):
    """Symbols kept for an oriented text of ``n`` symbols: the kernel runs ``nq = (n + 62)
    // 32`` chunks of 32 steps (the top lane ends 31 columns after the last) and reads the
    codes of the next chunk ahead, up to index ``32*nq + 32`` (as ``llcs_bands``' host pads)."""
    return 32 * ((n + 62) // 32 + 2) + 64


def describe(passes: Sequence[Sequence[int]], na: int) -> np.ndarray:
    """(P, 8) int64 descriptors (:data:`FIELDS`) of ``passes`` over ``a`` (length ``na``)
    and ``b`` laid end to end; vectors and padded texts laid end to end in pass order."""
    p = np.asarray(passes, dtype=np.int64).reshape(-1, 6)
    pat_is_a, p_lo, p_hi, t_lo, t_hi, backward = p.T
    if ((p_hi < p_lo) | (t_hi < t_lo) | (p_lo < 0) | (t_lo < 0)).any():
        raise ValueError("lcs passes: every range must have lo <= hi, lo >= 0")
    bw = backward != 0
    pbase = np.where(pat_is_a != 0, 0, na)
    tbase = np.where(pat_is_a != 0, na, 0)
    m = p_hi - p_lo
    n = t_hi - t_lo
    words = (m + 63) // 64
    voff = np.zeros_like(words)
    np.cumsum(words[:-1], out=voff[1:])
    toff = np.zeros_like(n)
    np.cumsum(padded_text(n)[:-1], out=toff[1:])
    return np.stack([pbase + np.where(bw, p_hi - 1, p_lo), np.where(bw, -1, 1), m,
                     tbase + np.where(bw, t_hi - 1, t_lo), n, voff, words, toff], axis=1)


def bands(desc: np.ndarray, k: int) -> np.ndarray:
    """Bands of ``32*k`` words per pass (0 for a pass with an empty pattern or text: its
    vector is all ones and nothing runs)."""
    b = -(-desc[:, 6] // (32 * k))
    return np.where((desc[:, 2] > 0) & (desc[:, 4] > 0), b, 0)


def waves(counts: Sequence[int], capacity: int) -> list[tuple[int, int]]:
    """Contiguous ranges ``[p0, p1)`` of passes with ``counts`` bands each (already in launch
    order), each range at most ``capacity`` bands, as even as a greedy cut makes them:
    ``w = ceil(total / capacity)`` waves of about ``total / w`` bands. Every pass must fit."""
    counts = [int(c) for c in counts]
    if capacity < 1 or any(c > capacity for c in counts):
        raise ValueError(f"lcs waves: a pass of {max(counts, default=0)} bands exceeds the "
                         f"capacity of {capacity} bands")
    total = sum(counts)
    if total == 0:
        return []
    w = -(-total // capacity)
    limit = min(capacity, max(max(counts), -(-total // w)))
    out, start, load = [], 0, 0
    for i, c in enumerate(counts):
        if load + c > limit and load > 0:
            out.append((start, i))
            start, load = i, 0
        load += c
    out.append((start, len(counts)))
    return out


def shared_alphabet(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """(cmap, sigma): the bytes present in both strings numbered 1..sigma in byte order,
    every other byte 0 (it can match nothing: the GPU kernel sets no mask bit for code 0)."""
    present = (np.bincount(a, minlength=256) > 0) & (np.bincount(b, minlength=256) > 0)
    sigma = int(present.sum())
    cmap = np.zeros(256, np.uint16)
    cmap[present] = np.arange(1, sigma + 1, dtype=np.uint16)
    return cmap, sigma


def gather_texts(codes: np.ndarray, desc: np.ndarray) -> np.ndarray:
    """The level's text buffer: each pass's oriented text at ``toff``, zeros up to
    :func:`padded_text` (what ``lcs.cu``'s ``lcs_gather_texts`` writes on the device)."""
    if len(desc) == 0:
        return np.zeros(0, codes.dtype)
    out = np.zeros(int((desc[:, 7] + padded_text(desc[:, 4])).max()), codes.dtype)
    for tstart, d, n, toff in desc[:, [3, 1, 4, 7]].tolist():
        out[toff:toff + n] = codes[tstart + d * np.arange(n)]
    return out


def run_descriptors(codes: np.ndarray, desc: np.ndarray,
                    final_vector: Callable[..., np.ndarray]) -> list[np.ndarray]:
    """Each descriptor's vector by a row kernel with ``cpu/lcs.final_vector``'s signature,
    reading the fields as the GPU kernel does: the pattern from ``pstart`` by ``dir``, the
    text from the gathered buffer at ``toff``, both then read forward."""
    texts = gather_texts(codes, desc)
    out = []
    for pstart, d, m, _tstart, n, _voff, _words, toff in desc.tolist():
        if d not in (1, -1):
            raise ValueError(f"lcs descriptor: direction {d}")
        pat = codes[pstart + d * np.arange(m)]
        out.append(final_vector(pat, 0, m, texts, toff, toff + n, False))
    return out
