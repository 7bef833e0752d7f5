"""topk.read_cut (the host side of the device's top_select cut, cuda/topk.py) cuts all rows
at once; it must equal the row-by-row cut it replaced, written out here as the
specification: a row's k-th best among its candidates, every candidate at or above it,
ids ascending; a row with more candidates than fit (heavy ties) cut from its whole row.
topk.merged_cut cuts several devices' rows of one query together: it must equal the cut
of the query's whole row over all devices. NumPy only (topk's functions take the array module), no device."""

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


def _device_cuts(rng, queries, sizes, top_k, cap):
    """Score rows of ``queries`` queries over devices holding ``sizes`` targets each
    (disjoint global ids, shuffled), each device's cut as top_select leaves it, rows in
    a device order of their own; and the global score rows."""
    n = sum(sizes)
    S = rng.integers(0, int(rng.integers(3, 60)), (queries, n)).astype(np.int32)
    perm = rng.permutation(n)
    cuts, at = [], 0
    for size in sizes:
        idmap = np.sort(perm[at:at + size])
        at += size
        row_query = rng.permutation(queries)
        local = S[row_query][:, idmap]
        hits = rng.integers(-(1 << 30), 1 << 30, (queries, cap, 2)).astype(np.int32)
        counts = np.zeros(queries, np.int32)
        for r in range(queries):
            kth = np.sort(local[r])[::-1][top_k - 1]
            got = rng.permutation(np.flatnonzero(local[r] >= kth - int(rng.integers(0, 3))))
            counts[r] = got.size
            hits[r, :min(got.size, cap)] = np.stack([got, local[r, got]], axis=1)[:cap]
        cuts.append((hits, counts, row_query.tolist(), idmap))
    return S, cuts


@pytest.mark.parametrize("seed", range(10))
def test_devices_cut_together_equal_the_whole_row_cut(seed):
    rng = np.random.default_rng(100 + seed)
    queries, top_k = int(rng.integers(1, 40)), int(rng.integers(1, 12))
    sizes = [int(rng.integers(top_k + 1, 120)) for _ in range(int(rng.integers(1, 5)))]
    cap = int(rng.integers(120, 200))
    S, cuts = _device_cuts(rng, queries, sizes, top_k, cap)
    assert all(np.all(c[1] < cap) for c in cuts)      # no row filled its cap
    got = topk.merged_cut(cuts, queries, top_k)
    assert got is not None and len(got) == queries
    for qi, g in enumerate(got):
        want = topk.candidate_ids(np, S[qi], S.shape[1], top_k)
        assert g.ids.dtype == np.int64 and g.scores.dtype == np.int32
        assert g.ids.tolist() == want.tolist()
        assert g.scores.tolist() == S[qi, want].tolist()


def test_devices_cut_together_keep_no_junk_slot():
    # every score 0 (the k-th best 0): the slots past each row's count hold junk, some 0
    hits = np.zeros((2, 6, 2), np.int32)
    hits[:, :, 0] = [[3, 1, 0, 0, 0, 0], [2, 0, 9, 9, 9, 9]]
    cuts = [(hits, np.array([2, 2]), [1, 0], np.array([10, 11, 12, 13])),
            (hits, np.array([2, 2]), [0, 1], np.array([20, 21, 22, 23]))]
    got = topk.merged_cut(cuts, 2, 2)
    assert [g.ids.tolist() for g in got] == [[10, 12, 21, 23], [11, 13, 20, 22]]
    assert [g.scores.tolist() for g in got] == [[0] * 4] * 2


def test_devices_cut_together_give_way_to_whole_rows():
    rng = np.random.default_rng(7)
    S, cuts = _device_cuts(rng, 5, [30, 40], 3, 4)   # ties past the cap
    assert any(np.any(c[1] > 4) for c in cuts)
    assert topk.merged_cut(cuts, 5, 3) is None
    S, cuts = _device_cuts(rng, 5, [30, 40], 3, 64)
    assert topk.merged_cut(cuts, 6, 3) is None                       # a query missing
    assert topk.merged_cut([], 5, 3) is None
