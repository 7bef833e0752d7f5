"""topk.read_cut (the host side of the device's top_select cut, cuda/topk.py) cuts all rows
at once; it must equal the row-by-row cut it replaced, written out here as the
specification: a row's k-th best among its candidates, every candidate at or above it,
ids ascending; a row with more candidates than fit (heavy ties) cut from its whole row.
NumPy only (topk's functions take the array module), no device."""

from __future__ import annotations

import numpy as np
import pytest

from warpalign._backends.cuda import topk


def _row_by_row(hits, counts, cap, row_scores, n, top_k, nsat):
    out = []
    for r, (scores, sat) in enumerate(zip(row_scores, nsat)):
        c = int(counts[r])
        if c > cap:
            out.append(topk.select(np, (scores, None, None, sat), n, top_k))
            continue
        ids, sc = hits[r, :c, 0], hits[r, :c, 1]
        kth = np.partition(sc, c - top_k)[c - top_k]
        keep = np.flatnonzero(sc >= kth)
        keep = keep[np.argsort(ids[keep], kind="stable")]
        out.append((sc[keep].astype(np.int32), ids[keep].astype(np.int64), sat))
    return out


def _case(rng, rows, n, top_k, cap):
    """Score rows with heavy ties (few distinct scores) and their cut as top_select
    leaves it: the candidates at or above a bound at most the k-th best, in any order,
    at most cap of them, junk in the slots after each row's count."""
    S = rng.integers(0, int(rng.integers(2, 40)), (rows, n)).astype(np.int32)
    hits = rng.integers(-(1 << 30), 1 << 30, (rows, cap, 2)).astype(np.int32)   # junk
    counts = np.zeros(rows, np.int32)
    for r in range(rows):
        kth = np.sort(S[r])[::-1][top_k - 1]
        bound = kth - int(rng.integers(0, 3))          # top_select's bound: <= the k-th
        ids = rng.permutation(np.flatnonzero(S[r] >= bound))
        counts[r] = ids.size
        got = ids[:cap]
        hits[r, :got.size] = np.stack([got, S[r, got]], axis=1)
    return S, hits, counts


@pytest.mark.parametrize("seed", range(12))
def test_rows_cut_together_equal_the_row_by_row_cut(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 400))
    top_k = int(rng.integers(1, min(n - 1, 40)))
    cap = int(rng.integers(top_k, 3 * top_k + 8))
    rows = int(rng.integers(1, 60))
    S, hits, counts = _case(rng, rows, n, top_k, cap)
    nsat = rng.integers(0, 3, rows).tolist()
    got = topk.read_cut(np, hits, counts, cap, list(S), n, top_k, nsat)
    want = _row_by_row(hits, counts, cap, list(S), n, top_k, nsat)
    assert len(got) == rows
    for r, (g, w) in enumerate(zip(got, want)):
        if counts[r] > cap:                               # cut from the whole row
            assert g.ids.tolist() == w.ids.tolist() and g.scores.tolist() == w.scores.tolist()
            continue
        sc, ids, sat = w
        assert g.ids.dtype == np.int64 and g.scores.dtype == np.int32
        assert g.ids.tolist() == ids.tolist() and g.scores.tolist() == sc.tolist()
        assert g.saturated == sat and g.query_ends is None and g.target_ends is None
        # each row's arrays are its own (a caller may shift its ids in place)
        assert g.ids.base is None or g.ids.base.size == g.ids.size


def test_edge_rows():
    # exactly top_k candidates, one candidate with top_k 1, a full row, an empty batch
    hits = np.zeros((3, 4, 2), np.int32)
    hits[0, :2] = [[7, 5], [3, 5]]
    hits[1, :1] = [[9, -2]]
    hits[2] = [[4, 1], [2, 3], [8, 3], [1, 0]]
    S = [np.zeros(10, np.int32)] * 3
    got = topk.read_cut(np, hits, np.array([2, 1, 4]), 4, S, 10, 1, [0, 0, 1])
    assert [g.ids.tolist() for g in got] == [[3, 7], [9], [2, 8]]
    assert [g.scores.tolist() for g in got] == [[5, 5], [-2], [3, 3]]
    got = topk.read_cut(np, hits, np.array([2, 1, 4]), 4, S, 10, 2, [0, 0, 1])
    assert [g.ids.tolist() for g in got[::2]] == [[3, 7], [2, 8]]
    assert topk.read_cut(np, hits[:0], np.zeros(0), 4, [], 10, 1, []) == []
