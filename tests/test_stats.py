"""Karlin–Altschul statistics: published parameters, BLAST's length adjustment, E-values."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from warpalign import Database, Scoring, search
from warpalign.stats import (
    StatisticsUnavailable,
    apply_statistics,
    bit_scores,
    evalues,
    karlin_altschul,
    length_adjustment,
    search_space,
    supported_gaps,
    supported_nucleotide_scores,
)

LN2 = math.log(2)


# --- parameters: NCBI BLAST blast_stat.c, BLAST's (existence a, extension b) = our (a+b, b)


@pytest.mark.parametrize("matrix, ours, blast, expected", [
    # BLOSUM62 row {11, 1, INT2_MAX, 0.267, 0.041, 0.14, 1.9, -30}: BLAST's default 11/1
    ("BLOSUM62", (12, 1), (11, 1), (0.267, 0.041, 0.14, 1.9, -30)),
    # our benchmark BLOSUM62 11/1 is BLAST's 10/1: {10, 1, ..., 0.243, 0.024, 0.10, 2.5, -44}
    ("BLOSUM62", (11, 1), (10, 1), (0.243, 0.024, 0.10, 2.5, -44)),
    ("BLOSUM62", (13, 2), (11, 2), (0.297, 0.082, 0.27, 1.1, -10)),
    ("BLOSUM45", (16, 2), (14, 2), (0.195, 0.032, 0.10, 1.9, -36)),
    ("BLOSUM50", (15, 2), (13, 2), (0.193, 0.035, 0.12, 1.6, -32)),
    ("BLOSUM80", (11, 1), (10, 1), (0.299, 0.071, 0.27, 1.1, -14)),
    ("PAM30", (10, 1), (9, 1), (0.294, 0.11, 0.61, 0.48, -6)),
    ("PAM70", (11, 1), (10, 1), (0.291, 0.091, 0.41, 0.71, -9)),
    ("PAM250", (16, 2), (14, 2), (0.182, 0.024, 0.073, 2.5, -53)),
])
def test_published_parameters_in_our_gap_convention(matrix, ours, blast, expected):
    # One gap of length k: BLAST a + k*b, ours open + (k-1)*extend -- equal for every k.
    for k in range(1, 6):
        assert blast[0] + k * blast[1] == ours[0] + (k - 1) * ours[1]
    ka = karlin_altschul(Scoring(matrix, gap_open=ours[0], gap_extend=ours[1]))
    assert (ka.lambda_, ka.K, ka.H, ka.alpha, ka.beta) == expected
    assert karlin_altschul(matrix, *ours) == ka


def test_ungapped_rows():
    ka = karlin_altschul("BLOSUM62", gapped=False)
    assert (ka.lambda_, ka.K, ka.H) == (0.3176, 0.134, 0.4012)
    # BLAST_GetAlphaBeta for ungapped searches: alpha/lambda = 1/H, beta = 0
    assert ka.alpha / ka.lambda_ == pytest.approx(1 / 0.4012) and ka.beta == 0
    assert karlin_altschul("PAM30", gapped=False).K == 0.283


def test_every_supported_pair_resolves():
    table = supported_gaps()
    assert set(table) >= {"BLOSUM45", "BLOSUM50", "BLOSUM62", "BLOSUM80", "PAM30", "PAM70",
                          "PAM250"}
    for name, pairs in table.items():
        assert pairs and len(set(pairs)) == len(pairs)
        for o, e in pairs:
            ka = karlin_altschul(Scoring(name, gap_open=o, gap_extend=e))
            assert 0.1 < ka.lambda_ < 0.4 and 0 < ka.K < 0.2 and ka.alpha > 0 and ka.beta < 0


def test_unsupported_gap_pair_lists_the_supported_ones():
    # Paper 003's BLOSUM50 10/2 (BLAST 8/2) is not in BLAST's table: no guessing.
    with pytest.raises(StatisticsUnavailable) as exc:
        karlin_altschul(Scoring("BLOSUM50", gap_open=10, gap_extend=2))
    msg = str(exc.value)
    assert "BLOSUM50" in msg and "gap_open=10" in msg and "15/2" in msg and "16/1" in msg


def test_unsupported_matrices_and_schemes(tmp_path):
    with pytest.raises(StatisticsUnavailable, match="supported matrices: BLOSUM45"):
        karlin_altschul(Scoring("BLASTP", gap_open=10, gap_extend=1))
    with pytest.raises(StatisticsUnavailable, match="'PAM120'"):
        karlin_altschul("PAM120", 10, 1)
    with pytest.raises(StatisticsUnavailable, match="match/mismatch"):
        karlin_altschul(Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1))
    b62 = Scoring("BLOSUM62")
    tampered = np.array(b62.matrix)
    tampered[0, 0] += 1
    with pytest.raises(StatisticsUnavailable, match="named substitution matrix"):
        karlin_altschul(Scoring(tampered, gap_open=11, gap_extend=1, alphabet="protein"))
    # a matrix file that calls itself BLOSUM62 but is not: refused, not trusted by name
    from Bio.Align import substitution_matrices
    bio = substitution_matrices.load("BLOSUM62")
    bio["W", "W"] = 20
    path = tmp_path / "BLOSUM62"
    path.write_text(format(bio))
    fake = Scoring(str(path), gap_open=12, gap_extend=1)
    assert fake.matrix_name == "BLOSUM62"
    with pytest.raises(StatisticsUnavailable, match="differs"):
        karlin_altschul(fake)
    path.write_text(format(substitution_matrices.load("BLOSUM62")))
    assert karlin_altschul(Scoring(str(path), gap_open=12, gap_extend=1)).K == 0.041
    with pytest.raises(StatisticsUnavailable, match="local"):
        apply_statistics([], (100, 1), b62, algorithm="global")


# --- bit scores and E-values, by hand


def test_bit_score_by_hand():
    # BLAST's BLOSUM62 11/1 (our 12/1): S=100 -> (0.267*100 - ln 0.041)/ln 2 = 43.12 bits
    ka = karlin_altschul("BLOSUM62", 12, 1)
    assert ka.bit_score(100) == pytest.approx((26.7 - math.log(0.041)) / LN2)
    assert round(ka.bit_score(100), 1) == 43.1
    assert bit_scores([0, 100], ka).round(2).tolist() == [4.61, 43.13]
    # our default BLOSUM62 11/1 = BLAST 10/1: (0.243*100 - ln 0.024)/ln 2 = 40.44
    assert round(karlin_altschul("BLOSUM62", 11, 1).bit_score(100), 2) == 40.44


def _fixed_point_map(ka, m, n, N, ell):
    return ka.beta + ka.alpha / ka.lambda_ * (math.log(ka.K) + math.log((m - ell) * (n - N * ell)))


def test_length_adjustment_known_case():
    # m=300 against 1e8 residues in 3e5 sequences, BLOSUM62 BLAST 11/1:
    # f(112) = -30 + (1.9/0.267)(ln 0.041 + ln(188 * 66_400_000)) = 112.7 >= 112,
    # f(113) = 112.6 < 113, so BLAST's integer adjustment is 112.
    ka = karlin_altschul("BLOSUM62", 12, 1)
    assert _fixed_point_map(ka, 300, 1e8, 3e5, 112) == pytest.approx(112.7, abs=0.05)
    assert _fixed_point_map(ka, 300, 1e8, 3e5, 113) < 113
    assert length_adjustment(ka, 300, 100_000_000, 300_000) == 112
    ell, m_eff, n_eff = search_space(ka, 300, 100_000_000, 300_000)
    assert (ell, m_eff, n_eff) == (112, 188, 100_000_000 - 300_000 * 112)
    e = evalues([100], ka, 300, 100_000_000, 300_000)[0]
    assert e == pytest.approx(0.041 * 188 * 66_400_000 * math.exp(-26.7))
    # the same number through bits: E = m'n' 2^-S'
    assert e == pytest.approx(188 * 66_400_000 * 2.0 ** -ka.bit_score(100))


def test_length_adjustment_zero_when_search_space_too_small():
    # K m n <= max(m, n): BLAST sets the adjustment to 0.
    ka = karlin_altschul("BLOSUM62", 12, 1)
    assert length_adjustment(ka, 10, 100, 1) == 0
    assert search_space(ka, 10, 100, 1) == (0, 10, 100)
    assert search_space(ka, 0, 100, 1) == (0, 1, 100)  # empty query: m' clamped to 1


@pytest.mark.parametrize("seed", range(3))
def test_length_adjustment_is_floor_of_fixed_point(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        name = rng.choice(list(supported_gaps()))
        o, e = supported_gaps(name)[name][rng.integers(len(supported_gaps(name)[name]))]
        ka = karlin_altschul(name, o, e)
        m = int(rng.integers(20, 5000))
        N = int(rng.integers(1, 1_000_000))
        n = N * int(rng.integers(50, 2000))
        ell = length_adjustment(ka, m, n, N)
        assert ell >= 0
        assert ka.K * (m - ell) * (n - N * ell) > max(m, n)
        assert _fixed_point_map(ka, m, n, N, ell) >= ell
        nxt = ell + 1
        if ka.K * (m - nxt) * (n - N * nxt) > max(m, n):
            assert _fixed_point_map(ka, m, n, N, nxt) < nxt


# --- apply_statistics and search(evalue=)

QUERIES = {"q1": "MKVLAWHEAGAWGHEEPLKRST", "q2": "PAWHEAEWWCY"}
TARGETS = {"t1": "HEAGAWGHEE", "t2": "MKVLAW", "t3": "WWWWPAWHEAEWWW", "t4": "GGGGSSSA",
           "t5": "CYWCYW", "t6": "MKVLAWHEAGAWGHEEPLKRSTAAAA"}


@pytest.fixture(scope="module")
def db():
    return Database.from_sequences(TARGETS)


@pytest.mark.parametrize("mode", ["score", "end", "full"])
def test_apply_statistics_adds_arrays(db, mode):
    s = Scoring("BLOSUM62", gap_open=12, gap_extend=1)
    res = search(QUERIES, db, s, top_k=6, mode=mode)
    out = apply_statistics(res, db, s)
    ka = karlin_altschul(s)
    for h, h0 in zip(out, res):
        assert h.scores.tolist() == h0.scores.tolist()
        want = evalues(h.scores, ka, h.query_length, db.residues, len(db))
        np.testing.assert_allclose(h.evalues, want)
        np.testing.assert_allclose(h.bitscores, (0.267 * h.scores - math.log(0.041)) / LN2)
        assert np.all(np.diff(h.evalues) >= 0)  # best first
        assert h[0].evalue == h.evalues[0] and h[0].bitscore == h.bitscores[0]
        with pytest.raises(ValueError):
            h.evalues[0] = 0.0  # read-only like the other arrays


def test_evalue_cutoff_filters_every_field(db):
    s = Scoring("BLOSUM62", gap_open=12, gap_extend=1)
    res = search(QUERIES, db, s, top_k=6, mode="full")
    everything = apply_statistics(res, db, s)
    cut = float(np.median(everything[0].evalues))
    kept = apply_statistics(res, db, s, evalue=cut)
    for full, k in zip(everything, kept):
        n = int(np.sum(full.evalues <= cut))
        assert len(k) == n
        assert k.names == full.names[:n] and k.targets.tolist() == full.targets[:n].tolist()
        assert k.query_ends.tolist() == full.query_ends[:n].tolist()
        assert [a.cigar for a in k.alignments] == [a.cigar for a in full.alignments[:n]]
        assert np.all(k.evalues <= cut)
    assert 0 < len(kept[0]) < len(everything[0])
    assert all(len(h) == 0 for h in apply_statistics(res, db, s, evalue=0.0))


def test_search_evalue_keyword(db):
    s = Scoring("BLOSUM62", gap_open=12, gap_extend=1)
    via_search = search(QUERIES, db, s, top_k=6, mode="end", evalue=1e-3)
    by_hand = apply_statistics(search(QUERIES, db, s, top_k=6, mode="end"), db, s, evalue=1e-3)
    for a, b in zip(via_search, by_hand):
        assert a.names == b.names and a.evalues.tolist() == b.evalues.tolist()
    assert via_search[0].names[:2] == ["t6", "t1"]
    # an unsupported scheme fails before searching, with the reason
    with pytest.raises(StatisticsUnavailable, match="supported open/extend"):
        search(QUERIES, db, Scoring("BLOSUM50", gap_open=10, gap_extend=2), evalue=10)
    with pytest.raises(ValueError, match="invalid evalue"):
        search(QUERIES, db, s, evalue=-1)


def test_database_size_override_and_merge(db):
    s = Scoring("BLOSUM62", gap_open=12, gap_extend=1)
    res = search(QUERIES, db, s, top_k=6)
    bigger = apply_statistics(res, (10 * db.residues, 10 * len(db)), s)
    same = apply_statistics(res, db, s)
    assert np.all(bigger[0].evalues > same[0].evalues)
    # merging hits that carry statistics keeps them aligned with the scores
    h = same[0]
    merged = h.merge(h)
    order = np.lexsort((np.concatenate([h.targets] * 2), -np.concatenate([h.scores] * 2)))
    np.testing.assert_array_equal(merged.evalues, np.concatenate([h.evalues] * 2)[order][:len(h)])
    assert h.merge(res[0]).evalues is None  # one part without statistics: none


# --- DNA: BLASTN's reward/penalty tables (blast_stat.c's blastn_values_R_P)

BLASTN = Path(__file__).resolve().parent / "data" / "blastn"


def _blastn_rows():
    """blastn 2.12.0's tabular output in tests/data/blastn/blastn.tsv (the commands are in
    its header): ((reward, penalty, gap existence, extension), target, score, bits, E)."""
    out = []
    for line in (BLASTN / "blastn.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            r, p, e, x, name, score, bits, ev = line.split("\t")
            out.append(((int(r), int(p), int(e), int(x)), name, int(score), bits, ev))
    return out


def test_dna_evalues_equal_blastn(tmp_path):
    """E-values and bit scores of a DNA search equal blastn 2.12.0's (-task blastn, both
    strands) on the same hits, for BLASTN's default 2/-3 with 5/2 (odd scores counted as
    the even score below in E-values), 1/-2, 1/-3, 1/-1 and 2/-4 (the 1/-2 table scaled by
    2)."""
    db = Database.build(BLASTN / "db.fa.gz", tmp_path / "db.wa", alphabet="dna")
    rows = _blastn_rows()
    assert any(score % 2 for (r, p, *_), _, score, *_ in rows if (r, p) == (2, -3))
    for scores in dict.fromkeys(key for key, *_ in rows):
        r, p, e, x = scores
        want = [row[1:] for row in rows if row[0] == scores]
        s = Scoring.from_blast(match=r, mismatch=p, existence=e, extension=x)
        hits = search(BLASTN / "query.fa", db, s, top_k=len(want), evalue=10)[0]
        got = {n: (int(sc), b, ev) for n, sc, b, ev in zip(hits.names, hits.scores,
                                                            hits.bitscores, hits.evalues)}
        for name, score, bits, ev in want:
            assert got[name][0] == score, (scores, name)        # blastn found the best path
            assert f"{got[name][2]:.2e}" == ev, (scores, name)
            # blastn prints bit scores above 99.9 truncated to an integer (align_format_util)
            b = got[name][1]
            assert (str(int(b)) if b > 99.9 else f"{b:.1f}") == bits, (scores, name)


def test_dna_statistics_say_where_they_exist():
    ka = karlin_altschul(Scoring.from_blast(match=2, mismatch=-3, existence=5, extension=2))
    assert (ka.lambda_, ka.K, ka.H, ka.alpha, ka.beta, ka.round_down) == (
        0.625, 0.41, 0.78, 0.8, -2, True)        # blast_stat.c: { 5, 2, 0.625, 0.41, ... }
    assert ka.evalue(309, 1e6) == ka.evalue(308, 1e6) > ka.evalue(310, 1e6)
    assert ka.bit_score(309) > ka.bit_score(308)
    ka = karlin_altschul(Scoring(match=3, mismatch=-6, gap_open=12, gap_extend=3))  # 1/-2, 3/1
    assert ka.lambda_ == pytest.approx(1.32 / 3) and ka.alpha == pytest.approx(1.3 / 3)
    assert ka.K == 0.57 and not ka.round_down
    assert supported_nucleotide_scores()[(1, -2)] == [(2, 1), (3, 1), (4, 1), (2, 2), (3, 2),
                                                     (4, 2)]
    with pytest.raises(StatisticsUnavailable, match=r"match 1/mismatch -2 with gap_open=5, "
                                                    r"gap_extend=1.*open/extend 2/1, 3/1"):
        karlin_altschul(Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1))  # paper 002
    with pytest.raises(StatisticsUnavailable, match=r"match 2/mismatch -1: BLASTN's tables "
                                                    r"\(NCBI blast_stat.c\) have match/mismatch"):
        karlin_altschul(Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1))  # paper 000
    with pytest.raises(StatisticsUnavailable, match="protein alphabet has no statistics"):
        karlin_altschul(Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2,
                                alphabet="protein"))
    with pytest.raises(StatisticsUnavailable, match="ungapped"):
        karlin_altschul(Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2), gapped=False)
