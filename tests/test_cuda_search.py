"""GPU database search (CUDA backend) against the exact CPU kernel, bit for bit.

Every test is cuda-marked and skips where no CUDA device answers. The oracle is
``_backends.cpu.pairwise.score_end`` (scores, and ends by the DESIGN tie rule).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from warpalign._backends import TargetSet, get_backend
from warpalign._backends.cpu.pairwise import score_end
from warpalign.errors import BackendUnavailable
from warpalign.scoring import Scoring

pytestmark = pytest.mark.cuda

_ROOT = Path(__file__).resolve().parents[1]
_DATA = [_ROOT / ".carry", _ROOT.parent / "shared" / "data" / "protein"]


@pytest.fixture(scope="module")
def cuda():
    try:
        return get_backend("cuda")
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA backend: {exc}")


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


def test_unsupported_algorithm(cuda):
    s = Scoring(**BLOSUM62)
    h = cuda.prepare(TargetSet.from_list([np.zeros(5, np.uint8)]))
    with pytest.raises(ValueError, match="local"):
        cuda.scan(np.zeros(3, np.uint8), h, s, algorithm="global")
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
