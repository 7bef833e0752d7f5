"""The striped SIMD kernels of one long pair (``_backends/cpu/striped.py``).

``score_end_striped`` must give exactly ``pairwise.score_end``'s (score, query end,
target end) — the tie rule included — for every algorithm: against the reference DP
(tests/reference.py) on small inputs, against the scalar kernel on inputs that cross the
kernel's lane, segment-block and int16 boundaries, and against parasail's scan kernels
(scores) on real DNA. The adversarial cases: all-equal sequences (ties everywhere),
repeats, gap_open == gap_extend (where a lazy-F loop that stops on the raised value is
wrong), gap_extend == 0, and substitution scores large enough that int16 saturates
mid-way (the kernel then goes on in int32 from that column).
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from conftest import shared_data
from reference import dp
from warpalign import Scoring, align
from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from warpalign._backends.cpu.striped import BLOCK, LANES16, score_end_striped

ALGORITHMS = ("local", "global", "semiglobal")


def scalar(q, t, matrix, go, ge, algorithm):
    return tuple(int(v) for v in score_end(q, t, matrix, go, ge, ALGORITHM_CODES[algorithm]))


def striped(q, t, matrix, go, ge, algorithm):
    return score_end_striped(q, t, matrix, go, ge, ALGORITHM_CODES[algorithm])


def dna_matrix(match, mismatch, size=4):
    m = np.full((size, size), mismatch, np.int32)
    np.fill_diagonal(m, match)
    return m


def pair(rng, kind, m, n, size):
    """Two code arrays: random, all-equal, a repeat unit, or a prefix-related copy."""
    if kind == "random":
        return rng.integers(0, size, m), rng.integers(0, size, n)
    if kind == "equal":
        return np.zeros(m, int), np.zeros(n, int)
    if kind == "repeat":
        unit = rng.integers(0, size, int(rng.integers(1, 5)))
        return np.resize(unit, m), np.resize(unit, n)
    q = rng.integers(0, size, m)
    t = np.concatenate([q, rng.integers(0, size, max(0, n - m))])[:n]
    flip = rng.random(n) < 0.1
    t[flip] = (t[flip] + 1) % size
    return q, t


def gaps(rng, scale=1):
    ge = int(rng.integers(0, 4)) * scale
    go = ge if rng.random() < 0.3 else ge + int(rng.integers(1, 6)) * scale
    return go, ge


@pytest.mark.parametrize("kind", ["random", "equal", "repeat", "related"])
def test_small_against_reference(kind):
    """Every algorithm equals the textbook DP, lengths 1..70 (one to three segments)."""
    rng = np.random.default_rng(22)
    for _ in range(40):
        size = int(rng.integers(1, 5))
        q, t = pair(rng, kind, int(rng.integers(1, 70)), int(rng.integers(1, 70)), size)
        q, t = q.astype(np.uint8), t.astype(np.uint8)
        matrix = rng.integers(-4, 5, (size, size)).astype(np.int32)
        go, ge = gaps(rng)
        for algorithm in ALGORITHMS:
            want = dp(q.tolist(), t.tolist(), matrix.tolist(), go, ge, algorithm)
            assert striped(q, t, matrix, go, ge, algorithm) == want, (kind, algorithm, go, ge)


@pytest.mark.parametrize("kind", ["random", "equal", "repeat", "related"])
def test_blocks_and_lanes_against_scalar(kind):
    """Queries past several snapshot blocks (S > BLOCK segments) and odd lengths."""
    rng = np.random.default_rng(4)
    rows = LANES16 * BLOCK
    for m in (rows - 1, rows + 1, 2 * rows + 37):
        q, t = pair(rng, kind, m, int(rng.integers(200, 700)), 4)
        q, t = q.astype(np.uint8), t.astype(np.uint8)
        go, ge = gaps(rng)
        matrix = dna_matrix(int(rng.integers(1, 6)), -int(rng.integers(1, 5)))
        for algorithm in ALGORITHMS:
            assert striped(q, t, matrix, go, ge, algorithm) == scalar(q, t, matrix, go, ge,
                                                                      algorithm)


@pytest.mark.parametrize("go, ge", [(3, 3), (1, 1), (5, 0), (8, 1)])
def test_linear_and_zero_extend_gaps(go, ge):
    """gap_open == gap_extend and gap_extend == 0, where vertical gaps cross lanes."""
    rng = np.random.default_rng(go * 10 + ge)
    for kind in ("random", "equal", "repeat", "related"):
        q, t = pair(rng, kind, 1500, 900, 4)
        q, t = q.astype(np.uint8), t.astype(np.uint8)
        matrix = dna_matrix(2, -3)
        for algorithm in ALGORITHMS:
            assert striped(q, t, matrix, go, ge, algorithm) == scalar(q, t, matrix, go, ge,
                                                                      algorithm), kind


def test_vertical_gap_across_every_lane():
    """A query with a long insertion: the best path runs a vertical gap through many lanes
    (the lazy-F loop's carry), under cheap and linear gaps."""
    rng = np.random.default_rng(9)
    core = rng.integers(0, 4, 400)
    q = np.concatenate([core[:200], rng.integers(0, 4, 1200), core[200:]]).astype(np.uint8)
    t = core.astype(np.uint8)
    for go, ge in ((10, 1), (2, 2), (4, 0)):
        matrix = dna_matrix(5, -4)
        for algorithm in ALGORITHMS:
            assert striped(q, t, matrix, go, ge, algorithm) == scalar(q, t, matrix, go, ge,
                                                                      algorithm)


@pytest.mark.parametrize("kind", ["equal", "related", "random"])
def test_int16_saturation_goes_on_in_int32(kind):
    """Scores that pass 32767 part-way: int16 columns, then int32 from that column on;
    the result equals the scalar int32 kernel (which never saturates here)."""
    rng = np.random.default_rng(16)
    q, t = pair(rng, kind, 3000, 2500, 4)
    q, t = q.astype(np.uint8), t.astype(np.uint8)
    for match, go, ge in ((40, 60, 20), (4000, 5000, 1000), (5, 8, 1)):
        matrix = dna_matrix(match, -match)
        got = striped(q, t, matrix, go, ge, "local")
        assert got == scalar(q, t, matrix, go, ge, "local")
        assert got[0] > 32767 or kind == "random" or match == 5   # the int32 part ran


def test_largest_narrow_scores_and_ties():
    """Substitution scores at the int16 kernel's limit (4096) and a matrix of equal
    scores everywhere (every cell ties: the end is the first best cell)."""
    rng = np.random.default_rng(5)
    q = rng.integers(0, 4, 700).astype(np.uint8)
    t = rng.integers(0, 4, 700).astype(np.uint8)
    for matrix in (dna_matrix(4096, -4096), np.full((4, 4), 1, np.int32),
                   np.full((4, 4), -1, np.int32), np.zeros((4, 4), np.int32)):
        for go, ge in ((4096, 4096), (1, 1), (0, 0)):
            for algorithm in ALGORITHMS:
                assert striped(q, t, matrix, go, ge, algorithm) == scalar(q, t, matrix, go,
                                                                          ge, algorithm)


def _fasta(path) -> str:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as fh:
        return "".join(line.strip() for line in fh if not line.startswith(">")).upper()


@pytest.mark.parametrize("scoring", [Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1),
                                     Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1),
                                     Scoring(match=2, mismatch=-1, gap_open=2, gap_extend=2)])
def test_real_dna_through_align(scoring):
    """lambda against phiX and lambda against itself shifted, through ``align``
    (mode end and the score pass of mode full): the scalar kernel's cell, and parasail's
    scan score (an independent SW; its striped kernels are wrong with linear gaps)."""
    lam = _fasta(shared_data("dna/lambda_virus.fa.gz"))
    phix = _fasta(shared_data("dna/phix_genome.fa"))
    for a, b in ((phix, lam[:8000]), (lam[3000:9000], lam[:7000])):
        q, t = scoring.encode(a), scoring.encode(b)
        want = scalar(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, "local")
        got = align(a, b, scoring, mode="end", backend="cpu")
        assert (got.score, got.query_end, got.target_end) == want
        try:
            import parasail
        except ImportError:
            continue
        pm = parasail.matrix_create("ACGT", scoring.match, scoring.mismatch)
        res = parasail.sw_scan_32(a, b, scoring.gap_open, scoring.gap_extend, pm)
        assert res.score == want[0]
