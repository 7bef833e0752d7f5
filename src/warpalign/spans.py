"""Span math of ``locate``'s windows (paper 002's scan window p, made exact for affine
gaps): how many reference symbols a local alignment of a query can cover, and the windows
that therefore hold every optimal one. Used by :mod:`warpalign.locate` and by the GPU
window kernels (``_backends/cuda/windows.py``, ``_backends/cuda/scan.py``); the exact
maximum and tie rule across windows, the two passes and the lazy ends are derived in
:mod:`warpalign.locate`'s docstring.

**The span bound (why the windows are exact).** Let q be the query (m symbols) and
``Sq = Σ_i max(0, max_c S(q_i, c))``, the most any set of aligned pairs can add. An optimal
local alignment scores S* ≥ 1 (integers; a score of 0 is the empty alignment). Say it has
p ≤ m aligned pairs and leaves L reference symbols against gaps, in k ≥ 1 gaps when L > 0.
Those gaps cost at least ``k·gop + (L − k)·gex ≥ gop + (L − 1)·gex`` (``gex ≤ gop``), so
``1 ≤ S* ≤ Sq − gop − (L − 1)·gex``, i.e. with ``gex > 0``::

    L ≤ max(0, ⌊(Sq − gop − 1) / gex⌋ + 1)      and      span = p + L ≤ m + L.

Every optimal alignment therefore covers at most ``span`` reference symbols. Windows of
length ``W ≥ span`` starting every ``W − (span − 1)`` symbols (the last one ends at the end
of the record) contain every reference interval of at most ``span`` symbols: for an
interval starting at ``a``, take the last window starting at ``s ≤ a``; then
``a < s + W − span + 1``, so the interval ends by ``s + W``. Special cases:

* ``Sq ≤ 0`` (or an empty query): nothing scores above 0; the answer is the empty
  alignment and nothing is scanned.
* ``gex == 0`` and ``Sq > gop``: a gap may be arbitrarily long at no extra cost, so no
  bound exists; each record is then one window (exact, and as slow as ``"dp"`` on the CPU).
"""

from __future__ import annotations

import functools

import numpy as np

from .scoring import Scoring

#: New reference symbols per window on a long reference (or 4 x the overlap when that is
#: larger, so the overlap costs <= 25% more cells); see :func:`default_window`.
DEFAULT_STRIDE = 4096
#: A short reference is cut into about this many windows (lanes to fill), with strides
#: of at least MIN_STRIDE symbols.
MIN_WINDOWS = 256
MIN_STRIDE = 256
#: Two passes (``top`` = 1): the first overlaps the windows for the alignments scoring at
#: least this share of the query's best possible score Sq (a query cut from the
#: reference with up to ~8% of DNA substitutions under paper 002's scoring scores more),
#: which at 256 x 33.5 M cuts 4,478-symbol windows to 4,287 (4.3% of the cells); a
#: query scoring less costs the seams (:mod:`warpalign.locate`, "Two passes").
FIRST_PASS_SHARE = 0.75


def query_score_bound(query: np.ndarray, scoring: Scoring) -> int:
    """``Sq = Σ_i max(0, max_c S(q_i, c))``: no local alignment of ``query`` scores more."""
    q = np.asarray(query)
    if q.size == 0:
        return 0
    return int(_code_best(scoring)[q].sum())


@functools.lru_cache(maxsize=16)
def _code_best(scoring: Scoring) -> np.ndarray:
    """max(0, max_c S(a, c)) per code a, as int64 (per scoring, computed once)."""
    best = np.maximum(scoring.matrix.max(axis=1), 0).astype(np.int64)
    best.setflags(write=False)
    return best


def span_bound(query: np.ndarray, scoring: Scoring, score: int = 1) -> int | None:
    """Most reference symbols a local alignment of ``query`` scoring at least ``score``
    (≥ 1) can cover.

    ``m + max(0, ⌊(Sq − gop − score)/gex⌋ + 1)`` (module docstring, with S* ≥ ``score``);
    0 when nothing can score that much; None when gaps are free to extend
    (``gap_extend == 0``) and so unbounded. ``locate`` cuts its windows with ``score=1``
    and traces a hit of score S* on a segment of ``span_bound(query[:qe], scoring, S*)``.

    Example:
        >>> s = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
        >>> span_bound(s.encode("A" * 256), s)      # KERNELS.md §E: overlap 506
        507
        >>> span_bound(s.encode("A" * 256), s, 230)
        278
    """
    return span_from(query_score_bound(query, scoring), len(query), scoring, score)


def span_from(sq: int, m: int, scoring: Scoring, score: int) -> int | None:
    """:func:`span_bound` of a query of ``m`` symbols with ``Sq = sq``
    (:func:`query_score_bound`, for callers that have it). Arrays of ``sq``, ``m`` and
    ``score`` (one alignment each) give an int64 array, or None where gaps are free to
    extend (``gap_extend == 0``).

    Example:
        >>> s = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
        >>> span_from(256, 256, s, 230), span_from(np.array([256]), 256, s, [230]).tolist()
        (278, [278])
    """
    if np.ndim(sq) or np.ndim(m) or np.ndim(score):
        sq, m, score = (np.asarray(v, np.int64) for v in (sq, m, score))
        score = np.maximum(score, 1)
        slack = sq - scoring.gap_open - score
        if scoring.gap_extend == 0:
            return None
        gaps = np.where(slack < 0, 0, slack // scoring.gap_extend + 1)
        return np.where(sq < score, 0, m + gaps)
    score = max(int(score), 1)
    if sq < score:
        return 0
    slack = sq - scoring.gap_open - score
    if slack < 0:
        gaps = 0
    elif scoring.gap_extend == 0:
        return None
    else:
        gaps = slack // scoring.gap_extend + 1
    return m + gaps


def first_pass_span(query: np.ndarray, scoring: Scoring, top: int = 1, *,
                    sq: int | None = None) -> int | None:
    """The overlap bound of ``locate``'s first pass (:mod:`warpalign.locate`, "Two
    passes"), or None for one pass with the full bound: :func:`span_bound` at
    ``FIRST_PASS_SHARE`` of the query's best possible score, when ``top`` is 1 and that is
    below the full bound (``sq``: :func:`query_score_bound` of the query, when the caller
    has it).

    Example:
        >>> s = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
        >>> first_pass_span(s.encode("A" * 256), s), span_bound(s.encode("A" * 256), s)
        (316, 507)
    """
    sq = query_score_bound(query, scoring) if sq is None else int(sq)
    full = span_from(sq, len(query), scoring, 1)
    if top != 1 or full is None or full <= 1:
        return None
    first = span_from(sq, len(query), scoring, max(1, int(sq * FIRST_PASS_SHARE)))
    return first if first is not None and 1 <= first < full else None


def seam_pieces(pieces: np.ndarray, lengths: list[int], span: int) -> np.ndarray:
    """Seam windows (int64 [k, 5], rows as ``locate``'s pieces: record, lo, hi, seg_lo,
    seg_hi) between consecutive windows of the same record in ``pieces``: ``[hi_w − span,
    lo_(w+1) + span)`` clipped to the record, which holds every interval of at most
    ``span`` symbols that no window of ``pieces`` contains (:mod:`warpalign.locate`, "Two
    passes")."""
    p = np.asarray(pieces)
    nxt = np.flatnonzero(p[1:, 0] == p[:-1, 0])          # window w and w + 1, one record
    rec = p[nxt, 0]
    n = np.asarray(lengths, np.int64)[rec] if len(rec) else np.zeros(0, np.int64)
    out = np.empty((len(nxt), 5), np.int64)
    out[:, 0] = rec
    out[:, 1] = np.maximum(p[nxt, 2] - span, 0)
    out[:, 2] = np.minimum(p[nxt + 1, 1] + span, n)
    out[:, 3] = 0
    out[:, 4] = n
    return out


def window_bounds(length: int, window: int, span: int | None) -> np.ndarray:
    """``[lo, hi)`` (int64 [k, 2]) of the windows over a sequence of ``length`` symbols.

    Windows of ``window`` symbols start every ``window − span + 1`` symbols; the last ends
    at ``length``. One window when ``span`` is None (unbounded) or ``length <= window``.
    """
    if length <= 0:
        return np.zeros((0, 2), np.int64)
    if span is None or length <= window:
        return np.array([[0, length]], np.int64)
    if window < span:
        raise ValueError(f"window ({window}) is shorter than the span bound ({span})")
    stride = window - max(span, 1) + 1
    count = -(-(length - window) // stride) + 1
    lo = np.arange(count, dtype=np.int64) * stride
    return np.stack([lo, np.minimum(lo + window, length)], axis=1)


def default_window(span: int | None, residues: int | None = None,
                   windows: int | None = None) -> int:
    """The window length ``locate`` uses: the overlap (span − 1) plus a stride of new
    symbols.

    By default the stride is max(DEFAULT_STRIDE, 4·overlap), so the overlap costs at most
    25% more cells; for a short reference (``residues`` in all) it shrinks towards
    ``residues / MIN_WINDOWS`` (not below max(MIN_STRIDE, overlap)) so that there are
    enough windows to fill the kernels' lanes. With ``windows`` (how many windows fill the
    device once, the GPU path) the stride is ``residues / windows``, at least
    max(MIN_STRIDE, 4·overlap): one wave of equal windows on a long reference.

    Example:
        >>> default_window(507), default_window(507, 1_000_000)
        (4602, 4413)
        >>> default_window(507, 33_554_432, windows=8448)
        4478
    """
    overlap = max((span or 1) - 1, 0)
    if windows is not None and residues is not None:
        return overlap + max(MIN_STRIDE, 4 * overlap, -(-int(residues) // max(int(windows), 1)))
    stride = max(DEFAULT_STRIDE, 4 * overlap)
    if residues is not None:
        stride = min(stride, max(MIN_STRIDE, overlap, -(-int(residues) // MIN_WINDOWS)))
    return overlap + stride


def sub_window(span: int | None) -> int:
    """Length of the sub-windows the GPU path cuts a window into for its end cell: the
    span bound (of the alignments scoring the window's best score) plus 64, so a window of
    a few thousand symbols becomes dozens of short ones scored in parallel (a group of
    lanes walks its window one column per step: the launch takes about as many steps as a
    sub-window has columns)."""
    return (span or 0) + 64


__all__ = ["default_window", "first_pass_span", "query_score_bound", "seam_pieces",
           "span_bound", "span_from", "sub_window", "window_bounds"]
