"""The CPU database-scan engine (``_backends/cpu``: batch kernels) against the spec.

Every score and end coordinate must equal ``pairwise.score_end`` (the scalar exact kernel,
tie rule included) for every target; on small inputs also ``reference.dp`` (the naive
oracle); on real proteins also parasail's scores.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import shared_data
from reference import dp
from warpalign import Scoring
from warpalign._backends import TargetSet
from warpalign._backends.cpu import CpuBackend
from warpalign._backends.cpu import batch as kernels
from warpalign._backends.cpu.pairwise import score_end_py

ALGORITHMS = ("local", "global", "semiglobal")
BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
LINEAR = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
FREE_GAPS = Scoring(match=1, mismatch=-1, gap_open=0, gap_extend=0)
SCORINGS = {"blosum62": BLOSUM62, "dna": DNA, "linear": LINEAR, "free": FREE_GAPS}

ONE = CpuBackend(threads=1)
TWO = CpuBackend(threads=2)


def expected(q, seqs, scoring, algorithm):
    return [score_end_py(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, algorithm)
            for t in seqs]


def check(backend, q, seqs, scoring, algorithm, ends, handle=None):
    """Scan and compare every target with pairwise.score_end; return the ScoreBatch."""
    handle = handle if handle is not None else backend.prepare(TargetSet.from_list(seqs))
    got = backend.scan(q, handle, scoring, algorithm=algorithm, ends=ends)
    assert got.scores.dtype == np.int32 and got.scores.shape == (len(seqs),)
    want = expected(q, seqs, scoring, algorithm)
    if ends:
        triples = list(zip(got.scores.tolist(), got.query_ends.tolist(), got.target_ends.tolist()))
        assert triples == want
    else:
        assert got.query_ends is None and got.target_ends is None
        assert got.scores.tolist() == [w[0] for w in want]
    return got


def random_seqs(rng, count, lengths, letters):
    return [rng.integers(0, letters, int(n)).astype(np.uint8)
            for n in rng.choice(lengths, size=count)]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("ends", [False, True])
@pytest.mark.parametrize("scoring", list(SCORINGS), ids=list(SCORINGS))
def test_boundary_lengths(scoring, algorithm, ends):
    """Targets of lengths at and around every lane/block boundary, unsorted, with empties."""
    s = SCORINGS[scoring]
    rng = np.random.default_rng(7)
    letters = 20 if s is BLOSUM62 else 4
    lengths = [0, 1, 2, 3, 4, 5, 31, 32, 33, 63, 64, 65]
    seqs = random_seqs(rng, 70, lengths, letters)
    handle = TWO.prepare(TargetSet.from_list(seqs))
    for m in (0, 1, 4, 33):
        q = rng.integers(0, letters, m).astype(np.uint8)
        check(TWO, q, seqs, s, algorithm, ends, handle)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_unequal_lengths_in_one_batch(algorithm):
    """One long target among 31 short ones (all in one batch), near-copies of the query."""
    rng = np.random.default_rng(11)
    q = rng.integers(0, 20, 120).astype(np.uint8)
    long = np.concatenate([rng.integers(0, 20, 200), q, rng.integers(0, 20, 97)]).astype(np.uint8)
    seqs = [long] + [q[rng.integers(0, 60):][:rng.integers(0, 40)].copy() for _ in range(31)]
    for ends in (False, True):
        check(ONE, q, seqs, BLOSUM62, algorithm, ends)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threads_and_order(threads):
    """Results come back in the TargetSet's order whatever the thread count."""
    rng = np.random.default_rng(3)
    seqs = random_seqs(rng, 300, np.arange(0, 150), 20)
    q = rng.integers(0, 20, 90).astype(np.uint8)
    backend = CpuBackend(threads=threads)
    check(backend, q, seqs, BLOSUM62, "local", True)
    check(backend, q, seqs, BLOSUM62, "semiglobal", True)


def test_empty_target_set_and_empty_query():
    empty = TargetSet.from_list([])
    for algorithm in ALGORITHMS:
        r = TWO.scan(BLOSUM62.encode("MKV"), TWO.prepare(empty), BLOSUM62,
                     algorithm=algorithm, ends=True)
        assert r.scores.shape == (0,) and r.query_ends.shape == (0,) and r.saturated == 0
    seqs = [BLOSUM62.encode("MKVLA"), np.zeros(0, np.uint8)]
    for algorithm in ALGORITHMS:
        check(TWO, np.zeros(0, np.uint8), seqs, BLOSUM62, algorithm, True)


def test_ties_take_smallest_target_end_then_query_end():
    """Repeats make many cells share the best score; the tie rule picks one of them."""
    s = LINEAR
    q = s.encode("ACAC")
    seqs = [s.encode("ACACACAC"), s.encode("GGACGGAC"), s.encode("CACA"), s.encode("AAAA")]
    for algorithm in ALGORITHMS:
        got = check(ONE, q, seqs, s, algorithm, True)
        for k, t in enumerate(seqs):
            assert (got.scores[k], got.query_ends[k], got.target_ends[k]) == \
                dp(q.tolist(), t.tolist(), s.matrix.tolist(), s.gap_open, s.gap_extend, algorithm)


def test_saturation_rescored_exactly():
    """A 5000-residue poly-W query scores 55000 against itself: far past int16."""
    s = BLOSUM62
    q = s.encode("W" * 5000)
    rng = np.random.default_rng(5)
    mutant = q.copy()
    mutant[2500] = s.encode("A")[0]
    seqs = [q.copy(), q[:3000].copy(), mutant, q[:2970].copy(), s.encode("W" * 100)]
    seqs += [rng.integers(0, 20, 300).astype(np.uint8) for _ in range(30)]
    for ends in (False, True):
        got = check(TWO, q, seqs, s, "local", ends)
        assert got.saturated == 3       # 55000, 33000, 54986; 2970 W (32670) still fits
        assert got.scores[:3].tolist() == [55000, 33000, 54986]


def test_int32_paths_for_large_scores():
    """Penalties or scores too large for int16 go to the exact int32 kernel."""
    rng = np.random.default_rng(9)
    seqs = random_seqs(rng, 40, [0, 1, 17, 40], 4)
    q = rng.integers(0, 4, 30).astype(np.uint8)
    for s in (Scoring(match=5000, mismatch=-7000, gap_open=20000, gap_extend=9000),
              Scoring(match=3, mismatch=-2, gap_open=40000, gap_extend=1)):
        for ends in (False, True):
            assert check(TWO, q, seqs, s, "local", ends).saturated == 0


def test_bytes_alphabet():
    s = Scoring(match=3, mismatch=-2, gap_open=4, gap_extend=1, alphabet="bytes")
    rng = np.random.default_rng(2)
    seqs = random_seqs(rng, 40, [0, 5, 33, 70], 256)
    q = rng.integers(0, 256, 50).astype(np.uint8)
    q[10:30] = seqs[-1][:20] if len(seqs[-1]) >= 20 else q[10:30]
    for algorithm in ALGORITHMS:
        check(ONE, q, seqs, s, algorithm, True)


def test_invalid_algorithm():
    handle = ONE.prepare(TargetSet.from_list([BLOSUM62.encode("MKV")]))
    with pytest.raises(ValueError, match="invalid algorithm"):
        ONE.scan(BLOSUM62.encode("MKV"), handle, BLOSUM62, algorithm="glocal", ends=False)


@st.composite
def problems(draw):
    protein = draw(st.booleans())
    letters = 24 if protein else 5
    if protein:
        scoring = Scoring(matrix=draw(st.sampled_from(["BLOSUM62", "BLOSUM50", "PAM30"])),
                          gap_open=(go := draw(st.integers(0, 12))),
                          gap_extend=draw(st.integers(0, go)))
    else:
        go = draw(st.integers(0, 6))
        scoring = Scoring(match=draw(st.integers(1, 4)), mismatch=draw(st.integers(-5, 0)),
                          gap_open=go, gap_extend=draw(st.integers(0, go)))
    seq = st.lists(st.integers(0, letters - 1), max_size=24)
    q = draw(seq)
    targets = draw(st.lists(seq, min_size=1, max_size=40))
    return scoring, q, targets, draw(st.sampled_from(ALGORITHMS))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_random_against_reference(problem):
    scoring, q, targets, algorithm = problem
    qa = np.array(q, np.uint8)
    seqs = [np.array(t, np.uint8) for t in targets]
    got = check(TWO, qa, seqs, scoring, algorithm, True)
    S = scoring.matrix.tolist()
    for k, t in enumerate(targets):
        assert (got.scores[k], got.query_ends[k], got.target_ends[k]) == \
            dp(q, t, S, scoring.gap_open, scoring.gap_extend, algorithm)


def _read_fasta(path):
    seqs, parts = [], []
    with open(path) as fh:
        for line in fh:
            if line.startswith(">"):
                if parts:
                    seqs.append("".join(parts))
                parts = []
            else:
                parts.append(line.strip())
    if parts:
        seqs.append("".join(parts))
    return seqs


def _parasail_matrix(parasail, scoring):
    symbols = scoring.alphabet.symbols
    matrix = parasail.matrix_create(symbols, 0, 0)
    for a in range(len(symbols)):
        for b in range(len(symbols)):
            matrix[a, b] = int(scoring.matrix[a, b])
    return matrix


@pytest.mark.parametrize("gaps", [(11, 1), (10, 10)])
def test_real_proteins_against_parasail(gaps):
    """Scores on Swiss-Prot proteins equal parasail's sw_scan_32 (an independent SW)."""
    parasail = pytest.importorskip("parasail")
    seqs = _read_fasta(shared_data("protein/uniprot_sprot196.fasta"))
    s = Scoring(matrix="BLOSUM62", gap_open=gaps[0], gap_extend=gaps[1])
    matrix = _parasail_matrix(parasail, s)
    codes = [s.encode(x) for x in seqs]
    handle = TWO.prepare(TargetSet.from_list(codes))
    for qi in (0, 57, 133):
        got = TWO.scan(codes[qi], handle, s, algorithm="local", ends=False)
        want = [parasail.sw_scan_32(seqs[qi], t, gaps[0], gaps[1], matrix).score for t in seqs]
        assert got.scores.tolist() == want
        assert got.saturated == 0


def test_layout_pads_to_blocks():
    """prepare: batches of similar length, padded to whole blocks with PAD_CODE."""
    rng = np.random.default_rng(4)
    seqs = random_seqs(rng, 100, np.arange(0, 90), 20)
    h = ONE.prepare(TargetSet.from_list(seqs))
    assert h.cols.shape[1] == kernels.LANES
    assert np.all(np.diff(h.batch_start) % kernels.BLOCK == 0)
    lens = np.array([len(x) for x in seqs])
    assert sorted(h.lane_target[h.lane_target >= 0].tolist()) == list(range(100))
    assert np.array_equal(h.lane_len[h.lane_target >= 0], lens[h.lane_target[h.lane_target >= 0]])
    assert np.all(np.diff(lens[h.lane_target.ravel()[:100]]) >= 0)   # sorted by length
    for b in range(h.n_batches):
        block = h.cols[h.batch_start[b]:h.batch_start[b + 1]]
        for lane in range(kernels.LANES):
            k = h.lane_target[b, lane]
            n = 0 if k < 0 else lens[k]
            if k >= 0:
                assert np.array_equal(block[:n, lane], seqs[k])
            assert np.all(block[n:, lane] == kernels.PAD_CODE)
