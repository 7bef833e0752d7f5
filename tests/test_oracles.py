"""align() against independent tools: the reference DP, parasail and Biopython.

parasail's striped kernels are wrong when gap_open == gap_extend, so only its scan, diag
and serial kernels serve as oracles. parasail's sg_dx (free end gaps on the database
sequence) and Biopython's global aligner with free end deletions are our "semiglobal".
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import shared_data
from reference import dp
from warpalign import Scoring, align
from warpalign.io import load_sequences

parasail = pytest.importorskip("parasail")
Align = pytest.importorskip("Bio.Align")

AMINO = "ACDEFGHIKLMNPQRSTVWY"
# alphabet="protein": the random inputs are protein even where they read as DNA (poly-A)
SCHEMES = [
    Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1, alphabet="protein"),
    Scoring(matrix="BLOSUM50", gap_open=10, gap_extend=2, alphabet="protein"),
    # linear gaps: striped parasail is wrong here
    Scoring(matrix="PAM30", gap_open=5, gap_extend=5, alphabet="protein"),
    Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1, alphabet="protein"),
]
PARASAIL = {"local": ["sw_scan_32", "sw_diag_32", "sw"],
            "global": ["nw_scan_32", "nw_diag_32", "nw"],
            "semiglobal": ["sg_dx_scan_32", "sg_dx_diag_32", "sg_dx"]}


def parasail_matrix(scoring):
    letters = scoring.alphabet.symbols
    pm = parasail.matrix_create(letters, 0, 0)
    for i in range(len(letters)):
        for j in range(len(letters)):
            pm[i, j] = int(scoring.matrix[i, j])
    return pm


def biopython_score(q, t, scoring, algorithm):
    from Bio.Align import substitution_matrices
    letters = scoring.alphabet.symbols
    matrix = substitution_matrices.Array(letters, dims=2,
                                         data=np.asarray(scoring.matrix, dtype=float))
    aligner = Align.PairwiseAligner(mode="local" if algorithm == "local" else "global",
                                    substitution_matrix=matrix,
                                    open_gap_score=-scoring.gap_open,
                                    extend_gap_score=-scoring.gap_extend)
    if algorithm == "semiglobal":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            aligner.end_deletion_score = 0.0
    return int(aligner.score(t, q)) if q and t else None


def check(q, t, scoring, algorithm):
    got = align(q, t, scoring, mode="end", algorithm=algorithm, backend="cpu")
    full = align(q, t, scoring, mode="full", algorithm=algorithm, backend="cpu")
    ref = dp(scoring.encode(q), scoring.encode(t), scoring.matrix, scoring.gap_open,
             scoring.gap_extend, algorithm)
    assert (got.score, got.query_end, got.target_end) == ref
    assert (full.score, full.query_end, full.target_end) == ref
    if q and t:
        pm = parasail_matrix(scoring)
        for fn in PARASAIL[algorithm]:
            res = getattr(parasail, fn)(q, t, scoring.gap_open, scoring.gap_extend, pm)
            assert res.score == ref[0], fn
        assert biopython_score(q, t, scoring, algorithm) == ref[0]


seqs = st.text(alphabet=AMINO, min_size=0, max_size=40)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(q=seqs, t=seqs, scheme=st.sampled_from(range(len(SCHEMES))),
       algorithm=st.sampled_from(["local", "global", "semiglobal"]))
def test_random_pairs_agree_with_every_oracle(q, t, scheme, algorithm):
    check(q, t, SCHEMES[scheme], algorithm)


@settings(max_examples=60, deadline=None)
@given(unit=st.text(alphabet="AW", min_size=1, max_size=3), reps=st.integers(1, 20),
       algorithm=st.sampled_from(["local", "global", "semiglobal"]))
def test_repeats_and_identical_sequences(unit, reps, algorithm):
    s = unit * reps
    check(s, s, SCHEMES[0], algorithm)
    check(s, s[1:] + "W", SCHEMES[2], algorithm)


@pytest.mark.parametrize("q, t", [("", ""), ("A", ""), ("", "A"), ("A", "A"), ("A", "W"),
                                  ("W", "WWWWWW"), ("MKV", "MKV")])
@pytest.mark.parametrize("algorithm", ["local", "global", "semiglobal"])
def test_edge_cases(q, t, algorithm):
    for scoring in SCHEMES:
        check(q, t, scoring, algorithm)


def test_real_proteins_agree_with_parasail_and_biopython():
    names, codes = load_sequences(shared_data("protein/uniprot_sprot196.fasta"), SCHEMES[0].alphabet)
    rng = np.random.default_rng(11)
    pairs = rng.choice(len(codes), size=(12, 2))
    for scoring in SCHEMES[:3]:
        pm = parasail_matrix(scoring)
        for i, j in pairs:
            q, t = (scoring.alphabet.decode(codes[k]) for k in (i, j))
            for algorithm in ("local", "global", "semiglobal"):
                got = align(q, t, scoring, mode="full", algorithm=algorithm, backend="cpu")
                res = getattr(parasail, PARASAIL[algorithm][0])(q, t, scoring.gap_open,
                                                                scoring.gap_extend, pm)
                assert got.score == res.score, (names[i], names[j], algorithm)
                assert biopython_score(q, t, scoring, algorithm) == got.score


# The papers' worked examples (scores as printed in the papers).
@pytest.mark.parametrize("q, t, scoring, score", [
    # paper 000, Table II: match 2, mismatch -1, gap 1 (linear)
    ("TACTG", "GAACTGA", Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1), 8),
    # paper 002, Fig. 1: same scoring
    ("CTGTAC", "TGTCGAT", Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1), 7),
    # paper 004, Fig. 3: match 5, mismatch -3, open 8, extend 1
    ("ATGCTCATAGA", "ATGCCTCACTGA", Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1), 31),
])
def test_papers_worked_examples(q, t, scoring, score):
    for mode in ("score", "end", "full"):
        assert align(q, t, scoring, mode=mode, backend="cpu").score == score
