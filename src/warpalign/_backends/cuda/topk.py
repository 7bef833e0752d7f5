"""The host side of the search's top-k cut: pure functions over an array module ``xp``
(CuPy on the device, NumPy in the CPU tests), no device state.

A query keeps every target scoring at least its k-th best score, ids ascending (ties at
the cut stay decidable on the host). The cut is taken either from the query's whole
score row (:func:`select`) or from the few candidates per row that the device's
``top_select`` copied back (:func:`read_cut`: ``hits[row, :count]`` holds (id, score) of
every target at or above the row's bound, ``count`` above ``cap`` meaning the row was too
tied to fit and is cut from its whole row instead). ``tests/reference.py`` models
``top_select`` in NumPy, so these functions are tested without a device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .handles import Candidates, _empty, _kernel_cut


def kernel_cut(top_k: int | None, n: int) -> bool:
    """Whether the device's ``top_select`` takes this top-k over ``n`` targets (else
    :func:`select`, query by query: every target, or top_k above config.SELECT_MAX_K)."""
    return _kernel_cut(top_k, n)


def _to_host(xp, a) -> np.ndarray:
    return xp.asnumpy(a) if hasattr(xp, "asnumpy") else np.asarray(a)


def candidate_ids(xp, scores, n: int, top_k: int | None):
    """Ids (``xp`` array, ascending) of every target scoring at least the k-th best of
    the score row ``scores`` (all ``n`` for top_k None or >= n)."""
    if top_k is None or top_k >= n:
        return xp.arange(n, dtype=xp.int64)
    kth = xp.partition(scores, n - top_k)[n - top_k]
    return xp.flatnonzero(scores >= kth)


def select(xp, res, n: int, top_k: int | None, ids=None) -> Candidates:
    """Candidates of one query from its results ``res`` = (scores, query ends or None,
    target ends or None, saturated count): the targets ``ids`` (default
    :func:`candidate_ids`), copied to the host alone."""
    scores, qends, tends, nsat = res
    if ids is None:
        ids = candidate_ids(xp, scores, n, top_k)

    def pick(a):
        return None if a is None else _to_host(xp, a[ids])

    return Candidates(pick(scores), pick(qends), pick(tends), nsat, _to_host(xp, ids))


def read_cut(xp, hits: np.ndarray, counts: np.ndarray, cap: int, row_scores: Sequence,
             n: int, top_k: int, nsat: Sequence[int]) -> list[Candidates]:
    """Candidates per row of a ``top_select`` cut read back (``hits`` [rows, cap, 2] of
    (id, score), ``counts`` [rows]; row r's whole scores ``row_scores[r]``, its saturated
    count ``nsat[r]``): the k-th best taken among the row's candidates on the host; a row
    with more than ``cap`` candidates (heavy ties) is cut from its whole row.

    The rows are cut together, a few array operations for all of them: a streamed search
    reads one cut per batch and chunk, and a row at a time (partition, flatnonzero and
    argsort a row) took ~30 us a query, ~0.4 s of a 500-query streamed search on each
    device thread, the threads of a multi-GPU search taking turns under the GIL (docs/
    gpu-notes.md, session 26)."""
    rows = len(row_scores)
    out: list = [None] * rows
    if not rows:
        return out
    count = np.asarray(counts[:rows], dtype=np.int64)
    # (a row has at least top_k candidates: top_select keeps every target at or above a
    # bound no higher than the k-th best; any other row is cut alone as before)
    fit = (count <= cap) & (count >= top_k)
    for r in np.flatnonzero(~fit).tolist():
        c = int(count[r])
        if c > cap:
            out[r] = select(xp, (row_scores[r], None, None, nsat[r]), n, top_k)
            continue
        ids, sc = hits[r, :c, 0], hits[r, :c, 1]
        kth = np.partition(sc, c - top_k)[c - top_k]
        keep = np.flatnonzero(sc >= kth)
        keep = keep[np.argsort(ids[keep], kind="stable")]
        out[r] = Candidates(sc[keep].astype(np.int32), None, None, nsat[r],
                            ids[keep].astype(np.int64))
    good = np.flatnonzero(fit)
    if not good.size:
        return out
    valid = np.arange(hits.shape[1])[None, :] < count[good, None]
    kept_scores, kept_ids, bounds = _cut_rows(hits[good, :, 0].astype(np.int64),
                                              hits[good, :, 1].astype(np.int64), valid, top_k)
    for j, r in enumerate(good.tolist()):
        a, b = bounds[j], bounds[j + 1]
        out[r] = Candidates(kept_scores[a:b].copy(), None, None, nsat[r],
                            kept_ids[a:b].copy())
    return out


def _cut_rows(ids: np.ndarray, sc: np.ndarray, valid: np.ndarray, top_k: int):
    """Every row's valid slots scoring at least the row's k-th best valid score, by row
    then id (``ids``, ``sc``: int64 [rows, width]; each row holds at least top_k valid
    slots): (scores int32, ids int64, row bounds: a list of rows + 1 offsets)."""
    width = sc.shape[1]
    masked = np.where(valid, sc, np.iinfo(np.int64).min)     # empty slots sort lowest
    kth = np.partition(masked, width - top_k, axis=1)[:, width - top_k]
    keep = valid & (sc >= kth[:, None])
    at_row, at_slot = np.nonzero(keep)
    order = np.lexsort((ids[at_row, at_slot], at_row))       # by row, then id
    at_row, at_slot = at_row[order], at_slot[order]
    bounds = np.searchsorted(at_row, np.arange(sc.shape[0] + 1)).tolist()
    return sc[at_row, at_slot].astype(np.int32), ids[at_row, at_slot], bounds


def cut(xp, got: Sequence, n: int, top_k: int | None,
        device_cut: Callable[[list], tuple[np.ndarray, np.ndarray, int]]
        ) -> list[Candidates]:
    """Candidates of each query from its results (None: an empty query, every target at
    0): one device cut for the batch where :func:`kernel_cut` allows, else query by query
    (:func:`select`). ``device_cut(rows)``: ``top_select`` of the score rows, read back
    as (hits, counts, cap)."""
    live = [res for res in got if res is not None]
    if not live or not kernel_cut(top_k, n):
        return [_empty(n, False) if res is None else select(xp, res, n, top_k) for res in got]
    rows = [res[0] for res in live]
    hits, counts, cap = device_cut(rows)
    picked = iter(read_cut(xp, hits, counts, cap, rows, n, top_k, [res[3] for res in live]))
    return [_empty(n, False) if res is None else next(picked) for res in got]


def packed_cut(xp, queries: int, groups: Sequence[Sequence[int]], group_scores: Sequence,
               n: int, top_k: int, hits: np.ndarray, counts: np.ndarray, cap: int
               ) -> list[Candidates | None]:
    """Candidates per query of a packed batch of ``queries`` queries, in query order
    (None for a query in no group): ``groups`` lists each query group's query indices,
    ``group_scores[g]`` its rows' scores laid end to end (row j at ``[j * n, (j + 1) *
    n)``), and the cut's rows come in group order."""
    order = [qi for sub in groups for qi in sub]
    views = [scores[j * n:(j + 1) * n] for sub, scores in zip(groups, group_scores)
             for j in range(len(sub))]
    out: list = [None] * queries
    for qi, c in zip(order, read_cut(xp, hits, counts, cap, views, n, top_k,
                                     [0] * len(order))):
        out[qi] = c
    return out


def merged_cut(cuts: Sequence[tuple[np.ndarray, np.ndarray, Sequence[int], np.ndarray]],
               queries: int, top_k: int) -> list[Candidates] | None:
    """Candidates per query of one packed batch cut on several devices, in one pass:
    ``cuts`` holds per device (hits [rows, cap, 2] of (local id, score), counts [rows], the
    query of each row, ``ids`` mapping its local ids to the whole TargetSet's). Each
    query's slots over all devices are cut as :func:`read_cut` cuts one device's row (its
    k-th best among them, every slot at or above it, ids ascending): every device's
    top-k is among its slots, so the union holds the query's whole top-k. None where a
    row needs its whole scores (more targets than its cap, fewer than top_k) or a device
    lacks a query: the caller cuts device by device.

    Per device cuts (:func:`packed_cut`) then a concatenation per query took ~3 ms a
    device and ~5 ms for the concatenations of a 500-query batch, after the last kernel
    of a 4-GPU search (docs/gpu-notes.md, session 28)."""
    width = sum(hits.shape[1] for hits, _, _, _ in cuts)
    if not cuts or width < top_k:
        return None
    ids = np.zeros((queries, width), np.int64)
    sc = np.zeros((queries, width), np.int64)
    valid = np.zeros((queries, width), bool)
    at = 0
    for hits, counts, row_query, idmap in cuts:
        rows, cap = hits.shape[0], hits.shape[1]
        count = np.asarray(counts[:rows], dtype=np.int64)
        rq = np.asarray(row_query, dtype=np.int64)
        if (rq.size != queries or np.any(count > cap) or np.any(count < top_k)
                or np.unique(rq).size != queries):
            return None
        mine = np.arange(cap)[None, :] < count[:, None]
        valid[rq, at:at + cap] = mine
        ids[rq, at:at + cap] = np.asarray(idmap)[np.where(mine, hits[:, :, 0], 0)]
        sc[rq, at:at + cap] = hits[:, :, 1]
        at += cap
    kept_scores, kept_ids, bounds = _cut_rows(ids, sc, valid, top_k)
    return [Candidates(kept_scores[a:b], None, None, 0, kept_ids[a:b])
            for a, b in zip(bounds, bounds[1:])]
