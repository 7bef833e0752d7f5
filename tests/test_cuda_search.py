"""GPU database search (CUDA backend) against the exact CPU kernel, bit for bit.

Every test is cuda-marked and skips where no CUDA device answers. The oracle is
``_backends.cpu.pairwise.score_end`` (scores, and ends by the DESIGN tie rule).
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import numpy as np
import pytest

from warpalign._backends import TargetSet
from warpalign._backends.cpu.pairwise import score_end
from warpalign.scoring import Scoring

pytestmark = pytest.mark.cuda

_ROOT = Path(__file__).resolve().parents[1]
_DATA = [_ROOT / ".carry", _ROOT.parent / "shared" / "data" / "protein"]


def _data(name: str) -> Path:
    for d in _DATA:
        if (d / name).exists():
            return d / name
    pytest.skip(f"{name} not found")


def _fasta(path: Path) -> list[str]:
    seqs, cur = [], []
    for line in path.read_text().splitlines():
        if line.startswith(">"):
            if cur:
                seqs.append("".join(cur))
            cur = []
        elif line.strip():
            cur.append(line.strip())
    if cur:
        seqs.append("".join(cur))
    return seqs


def _check(cuda, query, targets, scoring, *, ends=True):
    ts = TargetSet.from_list(targets)
    handle = cuda.prepare(ts)
    got = cuda.scan(query, handle, scoring, algorithm="local", ends=False)
    want = np.array([score_end(query, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, 0)
                     for t in targets], dtype=np.int64).reshape(-1, 3)
    assert got.scores.dtype == np.int32
    bad = np.flatnonzero(got.scores != want[:, 0])
    assert bad.size == 0, (f"{bad.size} score mismatches, e.g. target {bad[0]} "
                           f"(len {len(targets[bad[0]])}): gpu {got.scores[bad[0]]} "
                           f"cpu {want[bad[0], 0]}")
    if ends:
        e = cuda.scan(query, handle, scoring, algorithm="local", ends=True)
        np.testing.assert_array_equal(e.scores, want[:, 0])
        np.testing.assert_array_equal(e.query_ends, want[:, 1])
        np.testing.assert_array_equal(e.target_ends, want[:, 2])
    return got


def _bucket_lengths():
    from warpalign._backends.cuda import config
    bounds = sorted({c.max_len for c in config.TABLE if c.max_len})
    out = {0, 1, 2, 3}
    for b in bounds:
        out.update((b - 1, b, b + 1))
    return sorted(out)


BLOSUM62 = {"matrix": "BLOSUM62", "gap_open": 11, "gap_extend": 1}
BLOSUM50 = {"matrix": "BLOSUM50", "gap_open": 10, "gap_extend": 2}


@pytest.mark.parametrize("params", [BLOSUM62, BLOSUM50], ids=["blosum62", "blosum50"])
@pytest.mark.parametrize("m", [1, 7, 64, 333])
def test_bucket_boundaries(cuda, params, m):
    s = Scoring(**params)
    rng = np.random.default_rng(m)
    K = s.matrix.shape[0]
    lengths = _bucket_lengths() + list(rng.integers(0, 1500, 40)) + [3000]
    targets = [rng.integers(0, K, n).astype(np.uint8) for n in lengths]
    rng.shuffle(targets)
    query = rng.integers(0, K, m).astype(np.uint8)
    _check(cuda, query, targets, s)


def test_related_sequences_and_exact_codes(cuda):
    """Targets built from the query (high scores, many ties) with B Z X * U O everywhere."""
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(7)
    query = rng.integers(0, 26, 200).astype(np.uint8)
    targets = []
    for n in range(60):
        t = query.copy()
        t[rng.integers(0, len(t), n)] = rng.integers(20, 26, n)   # ambiguity/rare codes
        cut = rng.integers(0, 100)
        parts = [rng.integers(0, 26, cut), t[cut:], t[:cut]]
        targets.append(np.concatenate(parts).astype(np.uint8))
    targets += [np.repeat(query[:5], 40), query[::-1].copy(), query[:1].copy()]
    _check(cuda, query, targets, s)


def test_real_swissprot(cuda):
    s = Scoring(**BLOSUM62)
    seqs = [s.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    for qi in (0, 17, 101):
        _check(cuda, seqs[qi], seqs, s)


@pytest.mark.parametrize("params", [{"match": 2, "mismatch": -1, "gap_open": 1, "gap_extend": 1},
                                    {"match": 5, "mismatch": -3, "gap_open": 8, "gap_extend": 1}],
                         ids=["dna-linear", "dna-affine"])
def test_dna(cuda, params):
    s = Scoring(**params)
    rng = np.random.default_rng(3)
    query = rng.integers(0, 4, 500).astype(np.uint8)
    targets = [rng.integers(0, 15, n).astype(np.uint8) for n in _bucket_lengths()]
    targets += [np.concatenate([rng.integers(0, 4, 300), query[100:400]]).astype(np.uint8)]
    _check(cuda, query, targets, s)


def test_saturation_rescored_exactly(cuda):
    s = Scoring(**BLOSUM62)
    W = s.encode("W")[0]
    rng = np.random.default_rng(11)
    query = np.full(5000, W, dtype=np.uint8)
    near = query.copy()
    near[rng.integers(0, 5000, 250)] = rng.integers(0, 20, 250)
    half = query[:2600].copy()
    targets = [query.copy(), near, half, rng.integers(0, 20, 5000).astype(np.uint8),
               np.full(3000, W, np.uint8), np.full(200, W, np.uint8)]
    got = _check(cuda, query, targets, s, ends=True)
    assert got.saturated >= 3
    assert got.scores[0] == 5000 * 11


def test_long_target_and_query(cuda):
    """No length cap: a 35,213-residue target and a 5,478-residue query."""
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(5)
    query = rng.integers(0, 20, 5478).astype(np.uint8)
    long = rng.integers(0, 20, 35213).astype(np.uint8)
    long[20000:21000] = query[3000:4000]
    targets = [long, rng.integers(0, 20, 9000).astype(np.uint8), query[::2].copy()]
    _check(cuda, query, targets, s)


def test_wide_scoring_uses_32_bit(cuda):
    """Scores too large for 16-bit lanes run in the 32-bit kernel."""
    base = Scoring(**BLOSUM62)
    s = Scoring(matrix=base.matrix * 1000, gap_open=11000, gap_extend=1000, alphabet="protein")
    rng = np.random.default_rng(2)
    query = rng.integers(0, 26, 120).astype(np.uint8)
    targets = [rng.integers(0, 26, n).astype(np.uint8) for n in (0, 1, 50, 120, 700, 2000)]
    targets.append(query.copy())
    _check(cuda, query, targets, s)


def test_empty_inputs(cuda):
    s = Scoring(**BLOSUM62)
    h = cuda.prepare(TargetSet.from_list([np.zeros(0, np.uint8), np.zeros(5, np.uint8)]))
    r = cuda.scan(np.zeros(0, np.uint8), h, s, ends=True)
    assert r.scores.tolist() == [0, 0] and r.query_ends.tolist() == [0, 0]
    h0 = cuda.prepare(TargetSet.from_list([]))
    assert cuda.scan(np.zeros(3, np.uint8), h0, s).scores.size == 0


# -- global and semiglobal (sw_s32<..., ALG>): scores and ends equal score_end ----------

_ALG = {"global": 1, "semiglobal": 2}


def _check_alg(cuda, query, targets, scoring, algorithm, handle=None):
    """Both modes (score only, and ends) of one algorithm against score_end."""
    h = cuda.prepare(TargetSet.from_list(targets)) if handle is None else handle
    want = np.array([score_end(query, t, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                               _ALG[algorithm]) for t in targets], dtype=np.int64).reshape(-1, 3)
    got = cuda.scan(query, h, scoring, algorithm=algorithm, ends=False)
    assert got.scores.dtype == np.int32 and got.query_ends is None
    bad = np.flatnonzero(got.scores != want[:, 0])
    assert bad.size == 0, (f"{algorithm}: {bad.size} score mismatches, e.g. target {bad[0]} "
                           f"(len {len(targets[bad[0]])}, m {len(query)}): gpu "
                           f"{got.scores[bad[0]]} cpu {want[bad[0], 0]}")
    e = cuda.scan(query, h, scoring, algorithm=algorithm, ends=True)
    np.testing.assert_array_equal(e.scores, want[:, 0])
    np.testing.assert_array_equal(e.query_ends, want[:, 1])
    np.testing.assert_array_equal(e.target_ends, want[:, 2])
    assert e.saturated == 0


@pytest.mark.parametrize("algorithm", ["global", "semiglobal"])
@pytest.mark.parametrize("params", [BLOSUM62, BLOSUM50], ids=["blosum62", "blosum50"])
@pytest.mark.parametrize("m", [0, 1, 2, 31, 64, 333])
def test_global_semiglobal_bucket_boundaries(cuda, algorithm, params, m):
    """Random proteins of lengths 0, 1 and every bucket bound +-1 (single- and multi-pass
    rows of both widths), plus a few long ones; the query from empty to several tiles."""
    s = Scoring(**params)
    rng = np.random.default_rng(100 + m)
    K = s.matrix.shape[0]
    lengths = _bucket_lengths() + list(rng.integers(0, 1500, 20)) + [3000, 4097]
    targets = [rng.integers(0, K, n).astype(np.uint8) for n in lengths]
    query = rng.integers(0, K, m).astype(np.uint8)
    # related targets: the semiglobal best sits inside the target, ties in the last row
    if m:
        targets += [np.concatenate([rng.integers(0, K, 40), query, rng.integers(0, K, 25)])
                    .astype(np.uint8), np.tile(query, 3), query.copy()]
    rng.shuffle(targets)
    _check_alg(cuda, query, targets, s, algorithm)


@pytest.mark.parametrize("algorithm", ["global", "semiglobal"])
def test_global_semiglobal_long_target(cuda, algorithm):
    """No length cap: a 35,213-residue target (many tiles of the multi-pass row)."""
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(55)
    query = rng.integers(0, 20, 1500).astype(np.uint8)
    long = rng.integers(0, 20, 35213).astype(np.uint8)
    long[20000:21500] = query
    targets = [long, rng.integers(0, 20, 9000).astype(np.uint8), query[::2].copy(),
               np.zeros(0, np.uint8), query[:1].copy()]
    _check_alg(cuda, query, targets, s, algorithm)
    _check_alg(cuda, query[:7].copy(), targets, s, algorithm)


@pytest.mark.parametrize("algorithm", ["global", "semiglobal"])
@pytest.mark.parametrize("params", [{"match": 2, "mismatch": -1, "gap_open": 1, "gap_extend": 1},
                                    {"match": 1, "mismatch": -2, "gap_open": 3, "gap_extend": 3},
                                    {"match": 5, "mismatch": -3, "gap_open": 8, "gap_extend": 1}],
                         ids=["dna-linear", "dna-linear3", "dna-affine"])
def test_global_semiglobal_dna(cuda, algorithm, params):
    """DNA with linear gaps (gap_open == gap_extend) and affine, IUPAC codes in targets."""
    s = Scoring(**params)
    rng = np.random.default_rng(13)
    for m in (1, 17, 500):
        query = rng.integers(0, 4, m).astype(np.uint8)
        targets = [rng.integers(0, 15, n).astype(np.uint8) for n in _bucket_lengths()]
        targets += [np.concatenate([rng.integers(0, 4, 300), query, rng.integers(0, 4, 7)])
                    .astype(np.uint8), np.full(600, query[0], np.uint8)]
        _check_alg(cuda, query, targets, s, algorithm)


@pytest.mark.parametrize("algorithm", ["global", "semiglobal"])
def test_global_semiglobal_wide_scores_and_real_data(cuda, algorithm):
    """Scores far below zero (matrix x1000), and Swiss-Prot against itself."""
    base = Scoring(**BLOSUM62)
    wide = Scoring(matrix=base.matrix * 1000, gap_open=11000, gap_extend=1000,
                   alphabet="protein")
    rng = np.random.default_rng(2)
    query = rng.integers(0, 26, 120).astype(np.uint8)
    targets = [rng.integers(0, 26, n).astype(np.uint8) for n in (0, 1, 50, 120, 700, 2000)]
    _check_alg(cuda, query, targets + [query.copy()], wide, algorithm)
    seqs = [base.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    h = cuda.prepare(TargetSet.from_list(seqs))
    for qi in (0, 17):
        _check_alg(cuda, seqs[qi], seqs, base, algorithm, handle=h)


@pytest.mark.parametrize("algorithm", ["global", "semiglobal"])
def test_global_semiglobal_chunked_and_search(cuda, algorithm):
    """Chunked handles (several uploads) and search()'s GPU top-k give the CPU's hits."""
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(17)
    targets = [rng.integers(0, 20, n).astype(np.uint8) for n in rng.integers(0, 900, 80)]
    targets += [np.zeros(0, np.uint8), targets[3].copy(), targets[3].copy()]
    query = targets[3][10:200].copy()
    be = _chunk_backend(devices=cuda.devices[:1], max_resident=2000)
    h = be.prepare(TargetSet.from_list(targets))
    assert len(h.chunks) > 1
    _check_alg(be, query, targets, s, algorithm, handle=h)
    seqs = [s.alphabet.decode(t) for t in targets]
    for k in (1, 5, 200):
        _search_both([seqs[3][10:200], seqs[40][:50], ""], seqs, s, top_k=k, mode="end",
                     algorithm=algorithm)
        _search_both([seqs[3][10:200]], seqs, s, top_k=k, algorithm=algorithm)


def test_global_semiglobal_options(cuda):
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(9)
    targets = [rng.integers(0, 20, n).astype(np.uint8) for n in (0, 1, 7, 40)]
    q = rng.integers(0, 20, 12).astype(np.uint8)
    h = cuda.prepare(TargetSet.from_list(targets))
    for algorithm in ("global", "semiglobal"):
        with pytest.raises(ValueError, match="local"):
            cuda.scan(q, h, s, algorithm=algorithm, method="warp")
        empty = cuda.scan(q, cuda.prepare(TargetSet.from_list([])), s, algorithm=algorithm,
                          ends=True)
        assert empty.scores.size == 0
    with pytest.raises(ValueError, match="invalid algorithm"):
        cuda.scan(np.zeros(3, np.uint8), h, s, algorithm="nope")


def test_random_sets_hypothesis(cuda):
    hyp = pytest.importorskip("hypothesis")
    st = pytest.importorskip("hypothesis.strategies")
    s = Scoring(**BLOSUM50)

    @hyp.settings(max_examples=40, deadline=None, derandomize=True)
    @hyp.given(q=st.lists(st.integers(0, 25), max_size=80),
               ts=st.lists(st.lists(st.integers(0, 4), max_size=300), max_size=12))
    def run(q, ts):
        targets = [np.array(t, np.uint8) for t in ts]
        if not targets:
            return
        _check(cuda, np.array(q, np.uint8), targets, s)

    run()


# -- method="warp" (paper 003's kernel) ---------------------------------------------------

def _want(query, targets, s):
    return np.array([score_end(query, t, s.matrix, s.gap_open, s.gap_extend, 0)
                     for t in targets], dtype=np.int64).reshape(-1, 3)


@pytest.mark.parametrize("params", [BLOSUM62, BLOSUM50], ids=["blosum62", "blosum50"])
def test_warp_method_exact(cuda, params):
    s = Scoring(**params)
    rng = np.random.default_rng(31)
    query = rng.integers(0, 26, 97).astype(np.uint8)
    lengths = [0, 1, 2, 31, 32, 33, 63, 64, 65, 200, 1000]
    targets = [rng.integers(0, 26, n).astype(np.uint8) for n in lengths]
    targets += [np.concatenate([rng.integers(0, 26, 50), query, rng.integers(0, 26, 40)]).astype(np.uint8),
                np.repeat(query[:7], 9)]
    h = cuda.prepare(TargetSet.from_list(targets))
    want = _want(query, targets, s)
    got = cuda.scan(query, h, s, method="warp")
    np.testing.assert_array_equal(got.scores, want[:, 0])
    e = cuda.scan(query, h, s, ends=True, method="warp")
    np.testing.assert_array_equal(e.scores, want[:, 0])
    np.testing.assert_array_equal(e.query_ends, want[:, 1])
    np.testing.assert_array_equal(e.target_ends, want[:, 2])
    with pytest.raises(ValueError, match="method"):
        cuda.scan(query, h, s, method="nope")


def test_warp_method_real(cuda):
    s = Scoring(**BLOSUM50)
    seqs = [s.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    h = cuda.prepare(TargetSet.from_list(seqs))
    for qi in (3, 77):
        auto = cuda.scan(seqs[qi], h, s)
        warp = cuda.scan(seqs[qi], h, s, method="warp")
        np.testing.assert_array_equal(warp.scores, auto.scores)
        np.testing.assert_array_equal(warp.scores, _want(seqs[qi], seqs, s)[:, 0])


# -- whole-search flow: GPU top-k, chunks, several devices -------------------------------

def _search_both(queries, targets, s, method="auto", gpu_backend="cuda", **kw):
    from warpalign import search
    cpu = search(queries, targets, s, backend="cpu", **kw)
    gpu = search(queries, targets, s, backend=gpu_backend, method=method, **kw)
    for a, b in zip(cpu, gpu):
        np.testing.assert_array_equal(a.scores, b.scores)
        np.testing.assert_array_equal(a.targets, b.targets)
        if a.query_ends is not None:
            np.testing.assert_array_equal(a.query_ends, b.query_ends)
            np.testing.assert_array_equal(a.target_ends, b.target_ends)
    return gpu


def test_search_topk_on_gpu_matches_cpu(cuda):
    """GPU top-k candidates give the host's hits: score desc, ties by database index."""
    s = Scoring(**BLOSUM62)
    seqs = _fasta(_data("uniprot_sprot196.fasta"))
    rng = np.random.default_rng(4)
    # many exact ties: copies of a few sequences scattered through the database
    db = list(seqs) + [seqs[i] for i in rng.integers(0, len(seqs), 60)]
    queries = [seqs[0], seqs[5], seqs[40][:30]]
    for k in (1, 3, 10, 500):
        _search_both(queries, db, s, top_k=k)
    _search_both(queries, db, s, top_k=7, mode="end")
    got = _search_both(queries[:1], db, s, top_k=4, method="warp")
    assert len(got[0]) == 4


@pytest.mark.parametrize("one_warp_cells", [0, 60_000], ids=["all-many-warp", "mixed"])
def test_search_end_cells_of_many_queries_side_by_side(cuda, one_warp_cells):
    """Mode end with every candidate on the many-warp 32-bit end kernel (one_warp_cells=0),
    or the pairs over 60,000 cells there beside the others on the warp kernel (the warp
    kernel queued first, the large pairs' kernels while it runs, then both waited for): the
    queries of a packed batch run side by side on the thread's streams, joined once; end
    cells equal the CPU's (the tie rule), for many queries and ties."""
    from warpalign import search
    s = Scoring(**BLOSUM62)
    seqs = _fasta(_data("uniprot_sprot196.fasta"))
    rng = np.random.default_rng(9)
    db = list(seqs) + [seqs[i] for i in rng.integers(0, len(seqs), 40)]
    queries = [seqs[i] for i in rng.integers(0, len(seqs), 12)] + [seqs[3][5:60], ""]
    be = _pair_backend(cuda, one_warp_cells=one_warp_cells)
    for k in (1, 6):
        cpu = search(queries, db, s, backend="cpu", top_k=k, mode="end")
        gpu = search(queries, db, s, backend=be, top_k=k, mode="end")
        for a, b in zip(cpu, gpu, strict=True):
            np.testing.assert_array_equal(a.targets, b.targets)
            np.testing.assert_array_equal(a.scores, b.scores)
            np.testing.assert_array_equal(a.query_ends, b.query_ends)
            np.testing.assert_array_equal(a.target_ends, b.target_ends)
    if one_warp_cells:      # both kinds of pairs among the hits
        cells = [len(q) * len(db[t]) for q, h in zip(queries, gpu) for t in h.targets.tolist()]
        assert min(cells) <= one_warp_cells < max(cells)


def test_search_method_needs_cuda(cuda):
    from warpalign import search
    s = Scoring(**BLOSUM62)
    with pytest.raises(ValueError, match="CUDA"):
        search(["HEAG"], ["PAWHEAE"], s, backend="cpu", method="warp")
    with pytest.raises(ValueError, match="method"):
        search(["HEAG"], ["PAWHEAE"], s, backend="cuda", method="fast")


def _topk(c, k):
    """(ids, scores) of the k best candidates: score desc, ties by index."""
    o = np.lexsort((c.ids, -c.scores.astype(np.int64)))[:k]
    return np.stack([c.ids[o], c.scores[o]])


def _kept_ends(c, k):
    """(id, score, query end, target end) of the candidates a top-k keeps: every one at or
    above the k-th best score (ties kept), by id."""
    cut = np.sort(c.scores)[::-1][min(k, len(c.scores)) - 1]
    keep = c.scores >= cut
    return sorted(zip(c.ids[keep].tolist(), c.scores[keep].tolist(),
                      c.query_ends[keep].tolist(), c.target_ends[keep].tolist()))


def _chunk_backend(**kw):
    from warpalign._backends.cuda import CudaBackend
    return CudaBackend(**kw)


@pytest.mark.parametrize("max_resident", [1, 700, 5000])
def test_chunked_database_identical(cuda, max_resident):
    """A database larger than max_resident streams through the device in chunks."""
    from warpalign._backends.cuda import ChunkedTargets
    s = Scoring(**BLOSUM62)
    seqs = [s.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    ts = TargetSet.from_list(seqs)
    full = cuda.scan(seqs[9], cuda.prepare(ts), s)
    be = _chunk_backend(devices=cuda.devices[:1], max_resident=max_resident)
    h = be.prepare(ts)
    assert isinstance(h, ChunkedTargets) and len(h.chunks) > 1
    got = be.scan(seqs[9], h, s)
    np.testing.assert_array_equal(got.scores, full.scores)
    e = be.scan(seqs[9], h, s, ends=True)
    np.testing.assert_array_equal(e.scores, full.scores)
    want = _want(seqs[9], seqs, s)
    np.testing.assert_array_equal(e.query_ends, want[:, 1])
    np.testing.assert_array_equal(e.target_ends, want[:, 2])
    top = be.search_batches([seqs[9], seqs[30]], h, s, top_k=5)
    ref = cuda.search_batches([seqs[9], seqs[30]], cuda.prepare(ts), s, top_k=5)
    for a, b in zip(top, ref):
        # each chunk sends its own candidates (a superset); the top 5 must agree
        np.testing.assert_array_equal(_topk(a, 5), _topk(b, 5))
    # end cells after the scores: the merged top-k's targets uploaded from the host a
    # chunk's residues at a time (max_resident 1: one target at a time), one query alone
    for qs, k in (([seqs[9], seqs[30], seqs[2]], 5), ([seqs[9]], 12), ([seqs[30]], 1)):
        ref = cuda.search_batches(qs, cuda.prepare(ts), s, top_k=k, ends=True)
        for a, b in zip(be.search_batches(qs, h, s, top_k=k, ends=True), ref):
            assert _kept_ends(a, k) == _kept_ends(b, k)


def test_default_budget_chunks_what_does_not_fit(cuda):
    """Without max_resident, a target set beyond what the device memory given holds (a
    device_memory of its resident cost here: the default limit, three quarters of that,
    streams it) streams in chunks; searches equal the resident ones."""
    from warpalign._backends.cuda import ChunkedTargets, DeviceTargets, config
    s = Scoring(**BLOSUM62)
    seqs = [s.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    ts = TargetSet.from_list(seqs)
    queries = [seqs[9], seqs[30], seqs[77]]
    ref = cuda.search_batches(queries, cuda.prepare(ts), s, top_k=5)
    be = _chunk_backend(devices=cuda.devices[:1])
    assert isinstance(be.prepare(ts), DeviceTargets)                 # fits: resident
    free = len(ts) * config.SEQUENCE_BYTES + ts.residues * config.RESIDENT_BYTES
    be = _chunk_backend(devices=cuda.devices[:1], device_memory=free)
    assert be.plan(ts.offsets).streamed
    h = be.prepare(ts)
    assert isinstance(h, ChunkedTargets) and len(h.chunks) > 1
    for a, b in zip(be.search_batches(queries, h, s, top_k=5), ref):
        np.testing.assert_array_equal(_topk(a, 5), _topk(b, 5))


def test_two_devices_identical(cuda):
    """The database split over 2 devices (longest-first balance) merges exactly."""
    import cupy
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs 2 CUDA devices")
    from warpalign._backends.cuda import CudaBackend, MultiTargets
    s = Scoring(**BLOSUM62)
    seqs = [s.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    rng = np.random.default_rng(8)
    seqs += [rng.integers(0, 20, n).astype(np.uint8) for n in (0, 1, 5000, 12000)]
    ts = TargetSet.from_list(seqs)
    one = CudaBackend(devices=(0,))
    two = CudaBackend(devices=(0, 1))
    h1, h2 = one.prepare(ts), two.prepare(ts)
    assert isinstance(h2, MultiTargets) and len(h2.parts) == 2
    loads = [p.handle.residues for p in h2.parts]
    assert abs(loads[0] - loads[1]) <= 12000 + len(seqs)
    for qi in (0, 50):
        a, b = one.scan(seqs[qi], h1, s), two.scan(seqs[qi], h2, s)
        np.testing.assert_array_equal(a.scores, b.scores)
        a, b = one.scan(seqs[qi], h1, s, ends=True), two.scan(seqs[qi], h2, s, ends=True)
        np.testing.assert_array_equal(a.query_ends, b.query_ends)
        np.testing.assert_array_equal(a.target_ends, b.target_ends)
    ra = one.search_batches([seqs[0], seqs[2]], h1, s, top_k=6)
    rb = two.search_batches([seqs[0], seqs[2]], h2, s, top_k=6)
    for a, b in zip(ra, rb):
        np.testing.assert_array_equal(_topk(a, 6), _topk(b, 6))
    # equal-length queries: one packed batch per device, queued from the calling thread
    batch = [rng.integers(0, 20, 256).astype(np.uint8) for _ in range(8)]   # fill 1.0
    near = seqs[40][:150]
    batch[2][:len(near)] = near
    ra = one.search_batches(batch, h1, s, top_k=7)
    threads = []          # threads started meanwhile (kernel compiles aside)
    threading.setprofile(lambda *args: threads.append(threading.current_thread().name))
    try:
        rb = two.search_batches(batch, h2, s, top_k=7)
    finally:
        threading.setprofile(None)
    assert not [t for t in threads if not t.startswith("warpalign-nvrtc")], \
        "the packed batch went through the per-device threads"
    for a, b in zip(ra, rb):   # (each device's candidates: those >= its own k-th best)
        np.testing.assert_array_equal(_topk(a, 7), _topk(b, 7))
    # end cells: the merged top-k, each candidate ended on its target's device; a query
    # (near, repeated) whose best targets lie on both devices, one with none on device 1
    for qs in (batch, [batch[2]], [seqs[40], seqs[0], seqs[40][:60]]):
        ea = one.search_batches(qs, h1, s, top_k=7, ends=True)
        eb = two.search_batches(qs, h2, s, top_k=7, ends=True)
        for a, b in zip(ea, eb):
            assert _kept_ends(a, 7) == _kept_ends(b, 7)
        assert {int(h2.owner[i]) for b in eb for i in b.ids} == {0, 1}
    # the second device failing after the first one launched (its part's targets are
    # resident on the first device: a real error of _packed_start): the error comes
    # through once the first device's kernels are done, and the next search is exact
    elsewhere = one.prepare(TargetSet.from_list([seqs[i] for i in h2.parts[1].ids]))
    broken = dataclasses.replace(
        h2, parts=[h2.parts[0], dataclasses.replace(h2.parts[1], handle=elsewhere)],
        cache={})
    with pytest.raises(ValueError, match="device the targets were prepared on"):
        two.search_batches(batch, broken, s, top_k=7)
    for a, b in zip(ra, two.search_batches(batch, h2, s, top_k=7)):
        np.testing.assert_array_equal(_topk(a, 7), _topk(b, 7))
    # two devices, each streaming chunks; end cells of the merged top-k from the host's
    # targets on the device of each (a chunk's residues at a time)
    both = CudaBackend(devices=(0, 1), max_resident=3000)
    hb = both.prepare(ts)
    c = both.scan(seqs[7], hb, s)
    np.testing.assert_array_equal(c.scores, one.scan(seqs[7], h1, s).scores)
    for qs in (batch, [seqs[40], seqs[0]], [seqs[3]]):
        for a, b in zip(one.search_batches(qs, h1, s, top_k=7, ends=True),
                        both.search_batches(qs, hb, s, top_k=7, ends=True)):
            assert _kept_ends(a, 7) == _kept_ends(b, 7)


# -- the packed-batch kernel through scan_packed (lanes own query rows, targets streamed) --

def _pair_backend(cuda, **tuning):
    """A one-device backend; ``tuning``: config.Tuning's fields (default its defaults)."""
    from warpalign._backends.cuda import CudaBackend, config
    return CudaBackend(devices=cuda.devices[:1], tuning=config.Tuning(**tuning))


#: Target groups of one target each (every target ends a group), for group_min=1.
ONE_TARGET_GROUPS = {"pair_group_min": 1, "pair_guide": 10 ** 9}


def _check_many(be, queries, targets, s, handle=None):
    """scan_packed equals score_end for every query; returns the ScoreBatches."""
    h = be.prepare(TargetSet.from_list(targets)) if handle is None else handle
    got = be.scan_packed(queries, h, s)
    assert len(got) == len(queries)
    for q, g in zip(queries, got):
        want = _want(q, targets, s)[:, 0]
        bad = np.flatnonzero(g.scores != want)
        assert bad.size == 0, (f"m={len(q)}: {bad.size} mismatches, e.g. target {bad[0]} "
                               f"(len {len(targets[bad[0]])}): gpu {g.scores[bad[0]]} "
                               f"cpu {want[bad[0]]}")
    return got


@pytest.mark.parametrize("group_min", [None, 1], ids=["groups-default", "groups-tiny"])
@pytest.mark.parametrize("params", [BLOSUM62, BLOSUM50], ids=["blosum62", "blosum50"])
def test_pair_kernel_bucket_bounds(cuda, params, group_min):
    """Every bucket bound +-1, lengths 0-3, random lengths and a 35,213-residue target;
    query pairs of equal and of very different lengths, one strip and several; with the
    default guided groups and with one target per group (every target ends a group)."""
    be = _pair_backend(cuda, **(ONE_TARGET_GROUPS if group_min else {}))
    s = Scoring(**params)
    rng = np.random.default_rng(31)
    K = s.matrix.shape[0]
    lengths = _bucket_lengths() + list(rng.integers(0, 1500, 30)) + [35213]
    targets = [rng.integers(0, K, n).astype(np.uint8) for n in lengths]
    rng.shuffle(targets)
    queries = [rng.integers(0, K, m).astype(np.uint8) for m in (1, 2, 64, 127, 896, 897, 1900)]
    queries.append(np.concatenate([targets[5][:300], rng.integers(0, K, 40)]).astype(np.uint8))
    _check_many(be, queries, targets, s)


def test_pair_kernel_real_proteins(cuda):
    """Swiss-Prot 196 against itself: scan_packed equals score_end and scan."""
    be = _pair_backend(cuda)
    s = Scoring(**BLOSUM62)
    seqs = [s.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    queries = [seqs[i] for i in (0, 17, 101, 150, 195)]
    h = be.prepare(TargetSet.from_list(seqs))
    got = _check_many(be, queries, seqs, s, handle=h)
    for q, g in zip(queries, got):
        np.testing.assert_array_equal(g.scores, be.scan(q, h, s).scores)


def _saturating(s, rng):
    """A 5,000-W query (saturates 16 bits against itself), a near copy (5% substituted), and
    targets: both, a prefix, a random protein, W runs of 3,000 and 200, an empty one."""
    W = s.encode("W")[0]
    query = np.full(5000, W, dtype=np.uint8)
    near = query.copy()
    near[rng.integers(0, 5000, 250)] = rng.integers(0, 20, 250)
    targets = [query.copy(), near, query[:2600].copy(), rng.integers(0, 20, 5000).astype(np.uint8),
               np.full(3000, W, np.uint8), np.full(200, W, np.uint8), np.zeros(0, np.uint8)]
    return query, near, targets


def test_pair_kernel_saturation(cuda):
    """A 5,000-residue query against itself and near copies: flagged, rescored in 32 bits,
    counted per query; its batch partner (a short query) stays exact and unsaturated."""
    be = _pair_backend(cuda)
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(12)
    query, near, targets = _saturating(s, rng)
    short = rng.integers(0, 20, 4000).astype(np.uint8)
    h = be.prepare(TargetSet.from_list(targets))
    for qb in (short, None):
        got = be.scan_packed([query] if qb is None else [query, qb], h, s)
        assert len(got) == (2 if qb is not None else 1)
        np.testing.assert_array_equal(got[0].scores, _want(query, targets, s)[:, 0])
        assert got[0].saturated >= 3
        assert got[0].scores[0] == 5000 * 11
        if qb is not None:
            np.testing.assert_array_equal(got[1].scores, _want(qb, targets, s)[:, 0])
            assert got[1].saturated == 0
    # two saturating queries in one batch
    got = be.scan_packed([near, query], h, s)
    np.testing.assert_array_equal(got[0].scores, _want(near, targets, s)[:, 0])
    np.testing.assert_array_equal(got[1].scores, _want(query, targets, s)[:, 0])
    assert got[0].saturated >= 2 and got[1].saturated >= 3


def test_pair_kernel_odd_counts_and_unequal_lengths(cuda):
    """Odd numbers of queries, empty queries, and queries of very different lengths (one
    pass beside seven); results in the order given."""
    be = _pair_backend(cuda)
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(13)
    targets = [rng.integers(0, 26, n).astype(np.uint8) for n in (0, 1, 3, 33, 300, 2000, 5000)]
    for ms in ((7,), (1, 6000), (0, 40, 900), (0,), (3000, 12, 500, 2, 4100)):
        queries = [rng.integers(0, 26, m).astype(np.uint8) for m in ms]
        got = _check_many(be, queries, targets, s)
        assert all(g.saturated == 0 for g in got)
    h = be.prepare(TargetSet.from_list(targets))
    a, b = rng.integers(0, 26, 6000).astype(np.uint8), rng.integers(0, 26, 5).astype(np.uint8)
    got = be.scan_packed([a, b], h, s)
    np.testing.assert_array_equal(got[0].scores, _want(a, targets, s)[:, 0])
    np.testing.assert_array_equal(got[1].scores, _want(b, targets, s)[:, 0])
    empty = be.prepare(TargetSet.from_list([]))
    assert [g.scores.size for g in be.scan_packed([a, b, a], empty, s)] == [0, 0, 0]


# -- a packed batch (sw_rowsqb: several queries per half, each from a lane boundary) ------

@pytest.mark.parametrize("chains", ["auto", "one"])
@pytest.mark.parametrize("group_min", [None, 1], ids=["groups-default", "groups-tiny"])
def test_packed_kernel_exact(cuda, group_min, chains):
    """scan_packed equals score_end: batches of many short queries (several per half and
    pass), long ones running over several passes, empty ones, odd counts; targets at every
    bucket bound +-1, lengths 0-3 and a 35,213-residue one. The 35,213 residues are most
    of the set, so "auto" runs each batch as query groups on several streams
    (config.chain_groups); "one" keeps every batch in one group."""
    be = _pair_backend(cuda, **(ONE_TARGET_GROUPS if group_min else {}),
                       **({"chain_groups": 1} if chains == "one" else {}))
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(41)
    lengths = _bucket_lengths() + list(rng.integers(0, 1500, 20)) + [35213]
    targets = [rng.integers(0, 26, n).astype(np.uint8) for n in lengths]
    rng.shuffle(targets)
    h = be.prepare(TargetSet.from_list(targets))
    for ms in ((1, 2, 3, 31, 32, 33, 100, 250, 0), (3000, 1900, 5, 897, 40),
               (144, 189, 222, 375, 464, 567, 657), (7,)):
        queries = [rng.integers(0, 26, m).astype(np.uint8) for m in ms]
        queries[-1] = np.concatenate([targets[3][:ms[-1]], queries[-1]])[:ms[-1]].astype(np.uint8)
        got = be.scan_packed(queries, h, s)
        for q, g in zip(queries, got):
            np.testing.assert_array_equal(g.scores, _want(q, targets, s)[:, 0])
            assert g.saturated == 0


@pytest.mark.parametrize("chains", ["auto", "one"])
def test_packed_kernel_saturation_and_search(cuda, chains):
    """Saturating queries inside a packed batch are rescored and counted per query; the
    packed search gives the same top-k as search_batches on real proteins. Both sets are
    small beside their longest target, so "auto" splits the batches into query groups."""
    be = _pair_backend(cuda, **({"chain_groups": 1} if chains == "one" else {}))
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(42)
    query, near, targets = _saturating(s, rng)
    h = be.prepare(TargetSet.from_list(targets))
    batch = [rng.integers(0, 20, 300).astype(np.uint8), query, near[:4000],
             rng.integers(0, 20, 2000).astype(np.uint8)]
    got = be.scan_packed(batch, h, s)
    for q, g in zip(batch, got):
        np.testing.assert_array_equal(g.scores, _want(q, targets, s)[:, 0])
    assert got[1].saturated >= 3 and got[2].saturated >= 1
    assert got[0].saturated == 0 and got[3].saturated == 0
    for k in (1, 3):                          # saturated entries: cut after rescoring
        a = _one_at_a_time(be, batch, h, s, k)
        b = be.search_packed(batch, h, s, top_k=k)
        for x, y, g in zip(a, b, got):
            np.testing.assert_array_equal(_topk(x, k), _topk(y, k))
            assert y.saturated == g.saturated
    seqs = [s.encode(x) for x in _fasta(_data("uniprot_sprot196.fasta"))]
    db = seqs + seqs[:60]
    h = be.prepare(TargetSet.from_list(db))
    queries = [seqs[3], seqs[40][:50], seqs[77], seqs[120][5:400], np.zeros(0, np.uint8)]
    for k in (1, 10, 500):
        for qset in (queries, queries[:4]):   # with an empty query: cut after the results
            a = _one_at_a_time(be, qset, h, s, k)
            b = be.search_packed(qset, h, s, top_k=k)
            for x, y in zip(a, b):
                np.testing.assert_array_equal(_topk(x, k), _topk(y, k))
                np.testing.assert_array_equal(np.sort(x.ids), np.sort(y.ids))


def _one_at_a_time(be, queries, handle, s, k):
    """search_batches one query per call (no packed batch): each query's candidates."""
    return [be.search_batches([q], handle, s, top_k=k)[0] for q in queries]


@pytest.mark.parametrize("packed", [True, False], ids=["packed", "each"])
def test_search_loop_batches(cuda, packed):
    """search() over many queries: packed batches (split by the score budget, a low-fill
    batch run query by query) or one query at a time; hits equal the CPU backend's."""
    from warpalign._backends.cuda import CudaBackend, config

    s = Scoring(**BLOSUM62)
    seqs = _fasta(_data("uniprot_sprot196.fasta"))
    rng = np.random.default_rng(7)
    db = list(seqs) + [seqs[i] for i in rng.integers(0, len(seqs), 40)]
    queries = [seqs[i] for i in rng.integers(0, len(seqs), 9)] + [seqs[3][:12], "", seqs[8]]
    if packed:   # ~4 queries per batch: several batches, each packed
        be = CudaBackend(devices=(0,), tuning=config.Tuning(pack_score_bytes=8 * len(db) * 4))
    for k in (1, 5, 300):
        if packed:
            _search_both(queries, db, s, top_k=k, gpu_backend=be)
        else:                # one query per call: the query-by-query path
            for q in queries:
                _search_both([q], db, s, top_k=k)
    # two very unequal queries: the plan's fill is low, so each runs alone
    long_q = "".join(seqs[:12])[:3000]
    _search_both([long_q, seqs[5][:40]], db, s, top_k=3)


def test_search_full_defers_end_cells(cuda):
    """Mode full on a device: the packed batches before the last come without end cells
    (``iter_batches(defer_ends=True)``: the search's CPU tracing finds them beside the next
    batch), the last with them; with two devices the one batch a device is cut in two, the
    first piece without them. Hits, end cells and alignments equal the CPU backend's."""
    import cupy

    from warpalign import search
    from warpalign._backends.cuda import CudaBackend, config

    s = Scoring(**BLOSUM62)
    seqs = _fasta(_data("uniprot_sprot196.fasta"))
    rng = np.random.default_rng(9)
    db = list(seqs) + [seqs[i] for i in rng.integers(0, len(seqs), 40)]
    ts = TargetSet.from_list([s.encode(x) for x in db])
    long_enough = [x for x in seqs if len(x) >= 150]
    queries = [long_enough[i][:150] for i in rng.integers(0, len(long_enough), 16)]
    codes = [s.encode(q) for q in queries]
    small = config.Tuning(pack_score_bytes=8 * len(db) * 4)       # 4 queries a batch
    backends = [CudaBackend(devices=(0,), tuning=small)]
    if cupy.cuda.runtime.getDeviceCount() >= 2:
        backends.append(CudaBackend(devices=(0, 1)))
    cpu = search(queries, db, s, top_k=5, mode="full", backend="cpu")
    for be in backends:
        h = be.prepare(ts)
        lists = list(be.iter_batches(codes, h, s, ends=True, top_k=5, defer_ends=True))
        assert sum(map(len, lists)) == len(codes) and len(lists) >= 2
        assert all(c.query_ends is None for got in lists[:-1] for c in got)
        assert all(c.query_ends is not None for c in lists[-1])
        if len(be._devices) > 1:
            assert [len(got) for got in lists] == [12, 4]         # config.cut_short
        got = search(queries, db, s, top_k=5, mode="full", backend=be)
        for a, b in zip(cpu, got):
            assert a.targets.tolist() == b.targets.tolist()
            assert a.query_ends.tolist() == b.query_ends.tolist()
            assert a.target_ends.tolist() == b.target_ends.tolist()
            assert a.alignments == b.alignments


def test_top_select_kernel_matches_its_model(cuda):
    """search.cu's top_select (the packed search's top-k cut) writes what its NumPy model
    (tests/reference.py) does: the count per row and, below the cap, the same (id, score)
    set, for rows shorter and longer than its 1,024 groups, heavy ties and every k."""
    import cupy

    from reference import top_select
    from warpalign._backends.cuda import config
    from warpalign._backends.cuda.loader import get_functions

    kern = get_functions("search.cu", ["top_select"])["top_select"]
    rng = np.random.default_rng(12)
    for n in (5, 1000, 1024, 1025, 70001):
        rows = [rng.integers(0, hi, n) for hi in (3, 60, 10 ** 6)]
        rows += [np.zeros(n, np.int64), np.repeat(rng.integers(0, 40, -(-n // 1024)), 1024)[:n]]
        S = np.stack(rows).astype(np.int32)
        for k in (1, 10, 256):
            if k >= n:
                continue
            cap = config.select_cap(k)
            want_counts, want_hits = top_select(S, k, cap, config.SELECT_THREADS, rng)
            counts = cupy.zeros(len(S), cupy.int32)
            hits = cupy.zeros((len(S), cap, 2), cupy.int32)
            kern((len(S),), (config.SELECT_THREADS,),
                 (cupy.asarray(S), np.int64(n), np.int32(k), np.int32(cap), counts, hits))
            np.testing.assert_array_equal(counts.get(), want_counts)
            got = hits.get()
            for r, c in enumerate(want_counts):
                if c <= cap:
                    assert sorted(map(tuple, got[r, :c])) == sorted(map(tuple, want_hits[r, :c]))


def test_packed_search_of_no_queries(cuda):
    be = _pair_backend(cuda)
    s = Scoring(**BLOSUM62)
    h = be.prepare(TargetSet.from_list([np.arange(20, dtype=np.uint8)] * 5))
    assert be.search_packed([], h, s, top_k=3) == [] and be.scan_packed([], h, s) == []


def test_packed_search_all_targets_tied(cuda):
    """Every target scoring the same: more candidates than the packed cut brings back, so
    each query is cut on its own; the hits equal a one-query-at-a-time search."""
    be = _pair_backend(cuda)
    s = Scoring(**BLOSUM62)
    rng = np.random.default_rng(13)
    target = rng.integers(0, 20, 120).astype(np.uint8)
    h = be.prepare(TargetSet.from_list([target] * 3000))
    queries = [target[10:90].copy(), rng.integers(0, 20, 90).astype(np.uint8),
               target[:85].copy()]
    for k in (1, 10, 200):
        a = _one_at_a_time(be, queries, h, s, k)
        b = be.search_packed(queries, h, s, top_k=k)
        for x, y in zip(a, b):
            np.testing.assert_array_equal(_topk(x, k), _topk(y, k))
            np.testing.assert_array_equal(np.sort(x.ids), np.sort(y.ids))
            assert len(y.ids) == 3000


def test_a_stalled_chained_wait_raises(cuda):
    """A chained tile that waits past its bound for the tile before fails the search with
    BackendError naming the kernel (a 1 ns bound: every real wait exceeds it); with the
    default bound the same search is exact."""
    from warpalign._backends.cuda import CudaBackend
    from warpalign.errors import BackendError
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    rng = np.random.default_rng(21)
    targets = [rng.integers(0, 20, 12_000).astype(np.uint8) for _ in range(6)]
    query = rng.integers(0, 20, 700).astype(np.uint8)
    stalled = CudaBackend(devices=(0,), wait_timeout=1e-9)
    handle = stalled.prepare(TargetSet.from_list(targets))
    with pytest.raises(BackendError, match="chain"):
        stalled.scan(query, handle, s, algorithm="local", ends=False)
    _check(cuda, query, targets, s, ends=False)
