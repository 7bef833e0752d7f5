"""Tests of the traceback from a known end (``traceback.align_from_end``) and its pruned DP.

``align_from_end(q, t, s, score, qe, te)`` must return exactly the Alignment of
``align_codes(q, t, s)`` (score, four coordinates, CIGAR, aligned strings) whenever
(score, qe, te) is the score pass's answer; in the equality tests that answer comes from
the independent reference DP (tests/reference.py), not from ``score_end``. Knowing the
score, the reverse pass and the small-problem traceback compute only the cells an
alignment of that score can pass (a band of diagonals, pruned by the most the rest can
add): these tests pin that start and path are those of the full DP, also when the
optimal path uses the whole gap budget (the band's edge), and that a wrong score or end
raises.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import chrx
from reference import mutate_dna
from test_traceback import SPROT, cases, check, ref, related, sprot_records
from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from warpalign._backends.cpu.traceback import anchored_start, full_traceback
from warpalign.scoring import Scoring
from warpalign.traceback import TracebackError, align_from_end, global_path

ALGORITHMS = ("local", "global", "semiglobal")
PAPER_002 = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)


def same_as_align_codes(q, t, s, algorithm, **kw):
    """align_from_end from the reference DP's (score, end) equals align_codes, with and
    without the whole reverse pass; returns the alignment."""
    want = check(q, t, s, algorithm, **kw)
    score, qe, te = ref(q, t, s, algorithm)
    if algorithm == "local" and score == 0:
        qe = te = 0
    assert (want.score, want.query_end, want.target_end) == (score, qe, te) or score == 0
    for check_end in (False, True):
        got = align_from_end(q, t, s, score, qe, te, algorithm, check_end=check_end, **kw)
        assert got == want, (algorithm, check_end)
    return want


# --------------------------------------------------------------------------- random


@settings(max_examples=300, deadline=None, derandomize=True)
@given(cases(max_len=30), st.sampled_from(ALGORITHMS), st.sampled_from([None, None, 1, 40]))
def test_from_end_equals_align_codes(case, algorithm, limit):
    q, t, s = case
    same_as_align_codes(q, t, s, algorithm, max_full_cells=limit)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 1), max_size=12), st.lists(st.integers(0, 1), max_size=12),
       st.sampled_from([(0, 0), (1, 0), (1, 1), (2, 1), (3, 3)]), st.sampled_from(ALGORITHMS))
def test_from_end_two_letters_cheap_gaps(q, t, gaps, algorithm):
    # two letters, free or cheap gaps: many co-optimal paths and starts, all tie rules at work
    s = Scoring(match=1, mismatch=-1, gap_open=gaps[0], gap_extend=gaps[1])
    same_as_align_codes(np.array(q, np.uint8), np.array(t, np.uint8), s, algorithm)


# --------------------------------------------------------------------------- adversarial

ADVERSARIAL = [
    ("", ""), ("", "ACGT"), ("ACGT", ""), ("A", "A"), ("A", "C"), ("A", "AAAAAA"),
    ("AAAAAA", "A"), ("AAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAAA"),
    ("AAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAA"), ("ACG" * 20, "ACG" * 31),
    ("ACGACGTTACG" * 4, "TTACGACG" * 9), ("GATTACA" * 6, "GATTTACA" * 5 + "CCCC"),
    ("ACGTACGTAC", "ACGTTTTTTTTTTTTTTTTTACGTAC"), ("AC" * 15 + "G" * 10, "G" * 10 + "AC" * 15),
]
SCORINGS = [
    pytest.param(PAPER_002, id="1/-2/5/1"),
    pytest.param(Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1), id="open=extend"),
    pytest.param(Scoring(match=1, mismatch=-1, gap_open=0, gap_extend=0), id="free-gaps"),
    pytest.param(Scoring(match=3, mismatch=-3, gap_open=2, gap_extend=0), id="free-extend"),
    pytest.param(Scoring(match=1, mismatch=0, gap_open=0, gap_extend=0), id="all-free"),
]


@pytest.mark.parametrize("s", SCORINGS)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("q,t", ADVERSARIAL)
def test_from_end_adversarial(q, t, s, algorithm):
    for limit in (None, 1, 64):
        same_as_align_codes(s.encode(q), s.encode(t), s, algorithm, max_full_cells=limit)


def test_band_edge_is_reached():
    # One reference gap as long as the score allows: the path uses the whole gap budget
    # (the band's edge), in the reverse pass and in the banded traceback alike.
    rng = np.random.default_rng(21)
    s = PAPER_002
    tight = 0
    for trial in range(120):
        q = rng.integers(0, 4, int(rng.integers(8, 60))).astype(np.uint8)
        cut = int(rng.integers(1, len(q)))
        most = max(1, (len(q) - s.gap_open) // s.gap_extend)   # gap length still scoring > 0
        gap = rng.integers(0, 4, int(rng.integers(1, most + 1))).astype(np.uint8)
        t = np.concatenate([rng.integers(0, 4, 5), q[:cut], gap, q[cut:], rng.integers(0, 4, 5)])
        t = t.astype(np.uint8)
        if trial % 2:
            q, t = t[5:-5].copy(), q.copy()   # the gap in the query instead
        a = same_as_align_codes(q, t, s, "local")
        if a.score and a.gap_opens == 1:
            # its gap symbols = the budget (best_sum - score - open) // extend + 1
            qsum = a.query_end - a.query_start
            tsum = a.target_end - a.target_start
            gaps = abs(qsum - tsum)
            tight += gaps == (min(qsum, tsum) - a.score - s.gap_open) // s.gap_extend + 1
    assert tight >= 10


@pytest.mark.parametrize("algorithm", ["local", "semiglobal"])
def test_whole_reverse_pass_finds_the_same_start(algorithm):
    rng = np.random.default_rng(5)
    for trial in range(60):
        s = (PAPER_002, Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1))[trial % 2]
        q, t = related(rng, int(rng.integers(1, 200)))
        if trial % 2:   # protein: 20 letters, 20% substituted
            q = rng.integers(0, 20, len(q)).astype(np.uint8)
            t = np.concatenate([rng.integers(0, 20, 9), q, rng.integers(0, 20, 9)]).astype(np.uint8)
            flip = rng.random(len(t)) < 0.2
            t[flip] = rng.integers(0, 20, int(flip.sum()))
        score, qe, te = (int(v) for v in score_end(q, t, s.matrix, s.gap_open, s.gap_extend,
                                                    ALGORITHM_CODES[algorithm]))
        full_query = algorithm == "semiglobal"
        args = (q, qe, t, te, s.matrix, s.gap_open, s.gap_extend)
        first = anchored_start(*args, score, full_query)
        assert anchored_start(*args, score, full_query, True) == first
        if qe and te and (algorithm == "semiglobal" or score > 0):
            assert first[0] >= 0
            # a score below the end cell's: an alignment ending there beats it
            assert anchored_start(*args, score - 1, full_query, True) == (-1, -1)
            # above the optimum: nothing reaches it
            assert anchored_start(*args, score + 1, full_query) == (-1, -1)


@pytest.mark.parametrize("gaps", [(5, 1), (3, 3), (12, 2), (1, 0)])
def test_banded_traceback_equals_unbanded(gaps):
    rng = np.random.default_rng(8)
    s = Scoring(match=2, mismatch=-3, gap_open=gaps[0], gap_extend=gaps[1])
    for trial in range(40):
        q, t = related(rng, int(rng.integers(1, 400)), sub=0.05 * (trial % 3), indel=0.02)
        if len(t) == 0:
            continue
        score, ops = global_path(q, t, s, 0, len(q), 0, len(t))
        banded = global_path(q, t, s, 0, len(q), 0, len(t), score=score)
        assert banded[0] == score and np.array_equal(banded[1], ops)
        # the kernel itself, told a score above the optimum: a band too narrow gives a
        # lower score (the callers' check fails), never one above the optimum
        best, _ = full_traceback(q, 0, len(q), t, 0, len(t), s.matrix, s.gap_open, s.gap_extend,
                                 False, False, score + 5)
        assert best <= score


# --------------------------------------------------------------------------- real data


def chrx_text(start: int, size: int) -> str:
    return chrx(start, start + size)


def test_real_dna_reads():
    # 256-letter reads of C. elegans chrX with 5% substitutions and a few indels against
    # the ~300-letter segment locate traces on (paper 002's scoring), and Biopython's score.
    from Bio.Align import PairwiseAligner
    ref_text = chrx_text(5_000_000, 60_000)
    rng = np.random.default_rng(1)
    s = PAPER_002
    aligner = PairwiseAligner(mode="local", match_score=1, mismatch_score=-2,
                              open_gap_score=-5, extend_gap_score=-1)
    for trial in range(25):
        at = int(rng.integers(20, len(ref_text) - 300))
        read = mutate_dna(rng, ref_text[at:at + 256], sub=0.05, indels=trial % 4)
        segment = ref_text[at - 20:at + 280]
        a = same_as_align_codes(s.encode(read), s.encode(segment), s, "local")
        assert a.score == int(aligner.score(read, segment))


@pytest.mark.skipif(not SPROT.exists(), reason="needs /work/shared/data")
def test_real_proteins():
    seqs = sprot_records(30)
    rng = np.random.default_rng(3)
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    for _ in range(10):
        x, y = (s.encode(seqs[i]) for i in rng.choice(len(seqs), 2, replace=False))
        for algorithm in ALGORITHMS:
            same_as_align_codes(x, y, s, algorithm)
        # a protein against a mutated copy of itself (a narrow band)
        z = x.copy()
        flip = rng.random(len(z)) < 0.2
        z[flip] = rng.integers(0, 20, int(flip.sum()))
        same_as_align_codes(x, np.concatenate([y[:30], z, y[:30]]), s, "local")


# --------------------------------------------------------------------------- errors


def test_wrong_score_or_end_raises():
    s = PAPER_002
    q, t = s.encode("ACGTACGTTTGACA"), s.encode("GGACGTACGTTTGACAGG")
    score, qe, te = ref(q, t, s, "local")
    with pytest.raises(TracebackError, match="does not end at score"):
        align_from_end(q, t, s, score + 1, qe, te)
    with pytest.raises(TracebackError, match="does not end at score"):
        align_from_end(q, t, s, score - 1, qe, te, check_end=True)
    with pytest.raises(TracebackError, match="does not end at score"):
        align_from_end(q, t, s, score, qe - 1, te)   # no alignment ending there scores that
    with pytest.raises(ValueError, match="outside"):
        align_from_end(q, t, s, score, qe, len(t) + 1)
    with pytest.raises(ValueError, match="cannot end"):
        align_from_end(q, t, s, score, qe - 1, te, "semiglobal")
    with pytest.raises(ValueError, match="cannot end"):
        align_from_end(q, t, s, score, len(q), te, "global")
    with pytest.raises(ValueError, match="never negative"):
        align_from_end(q, t, s, -1, qe, te)
    with pytest.raises(ValueError, match="invalid algorithm"):
        align_from_end(q, t, s, score, qe, te, "glocal")
    with pytest.raises(ValueError, match="outside"):
        align_from_end(np.array([0, 99], np.uint8), t, s, score, 2, te)


@pytest.mark.parametrize("delta", [1, -1])
def test_locate_full_raises_on_a_wrong_scan(delta):
    """A scan whose best score is off by one never becomes a hit of mode "full" (locate's
    "scan" method with its declared ScanKernel replaced by the exact DP, then by a wrong
    one)."""
    from warpalign._backends.registry import using
    from warpalign.locate import locate
    s = PAPER_002
    query, reference = "ACGTACGTACGGATTACA", {"r": "TTTTGGACGTACGTACGGATTACATTTT"}

    def exact(method, q, t, scoring):
        return (*score_end(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend,
                           ALGORITHM_CODES["local"]), 0)

    def wrong(method, q, t, scoring):
        score, qe, te, wide = exact(method, q, t, scoring)
        return score + delta * (score > 0), qe, te, wide

    with using("locate", "cpu", "scan", exact):
        hit = locate(query, reference, s, method="scan", backend="cpu", strand="plus")
    assert hit.score == 18
    with using("locate", "cpu", "scan", wrong), \
            pytest.raises(RuntimeError, match="internal inconsistency"):
        locate(query, reference, s, method="scan", backend="cpu", strand="plus")


@pytest.mark.parametrize("scoring", [Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
                                     Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=2),
                                     Scoring(match=3, mismatch=-2, gap_open=1, gap_extend=1)])
def test_local_table_reverse_pass_on_the_span_segment_equals_the_whole_prefix(scoring,
                                                                              monkeypatch):
    """align_pairs_table's local reverse pass on the last span-bound target symbols
    (_segment_starts) gives the alignments of the pass on the whole prefix: reads planted
    with substitutions and indels (long gaps up to the bound) in long random targets, and
    repeats full of ties."""
    import warpalign.traceback as tb
    rng = np.random.default_rng(7)
    qs, ts = [], []
    for k in range(60):
        q = "".join(rng.choice(list("ACGT"), int(rng.integers(20, 140))))
        t = list(rng.choice(list("ACGT"), int(rng.integers(200, 900))))
        copy = mutate_dna(rng, q, 0.05, int(rng.integers(0, 3)))
        if k % 5 == 0:      # a long insertion in the middle of the copy
            mid = len(copy) // 2
            copy = copy[:mid] + "".join(rng.choice(list("ACGT"), 12)) + copy[mid:]
        if k % 7 == 0:      # repeats: many cells tie
            q, copy = ("ACGTTGCA" * 20)[:len(q)], ("ACGTTGCA" * 24)[:len(copy) + 8]
        at = int(rng.integers(0, len(t) - len(copy)))
        t[at:at + len(copy)] = copy
        qs.append(q)
        ts.append("".join(t))
    qcat, tcat = scoring.encode("".join(qs)), scoring.encode("".join(ts))
    args = (qcat, np.cumsum([0] + [len(q) for q in qs[:-1]]), [len(q) for q in qs], tcat,
            np.cumsum([0] + [len(t) for t in ts[:-1]]), [len(t) for t in ts], scoring)
    banded = tb.align_pairs_table(*args)
    cut = tb._segment_starts(*(np.array(v) for v in (
        banded.query_ends, banded.target_ends, banded.scores)), scoring)
    assert (cut > 0).mean() > 0.5                      # most reverse passes were cut short
    monkeypatch.setattr(tb, "_segment_starts", lambda qe, te, score, s: np.zeros_like(te))
    whole = tb.align_pairs_table(*args)
    assert banded.cigars() == whole.cigars()
    for name in ("scores", "query_starts", "query_ends", "target_starts", "target_ends"):
        assert np.array_equal(getattr(banded, name), getattr(whole, name)), name
