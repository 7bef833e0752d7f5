"""Tests of ``locate`` (issue 6): every method equals the exact DP over the whole record.

The oracle is :func:`~warpalign._backends.cpu.pairwise.score_end` over each whole record
(DESIGN.md's tie rule: best score, then earliest record, smallest reference end, smallest
query end) and :func:`~warpalign.traceback.align_codes` over the winning record for the
alignment; for ``top=N`` an independent greedy over free segments (cut each hit's
reference interval out, rescore the pieces as separate sequences).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools

import numpy as np
import pytest

from conftest import chrx as chrx_slice
from reference import mutate_dna, protein_read, related_case
from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign._backends.cpu.scan import NARROW_LIMIT, score_end_method
from warpalign.cli import locate as locate_command
from warpalign.errors import AlphabetError, BackendUnavailable
from warpalign.locate import (
    default_window,
    first_pass_span,
    locate,
    query_score_bound,
    seam_pieces,
    span_bound,
    window_bounds,
)
from warpalign.results import Alignment
from warpalign.scoring import Scoring
from warpalign.traceback import align_codes

PAPER_002 = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
PAPER_004 = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA_SCORINGS = [pytest.param(PAPER_002, id="1/-2/5/1"), pytest.param(PAPER_004, id="5/-3/8/1"),
                pytest.param(Scoring(match=5, mismatch=-3, gap_open=2, gap_extend=2), id="linear")]  # 004's constant gap
#: The kernels of issue 6 (CPU here; their GPU versions are tested in test_cuda_locate.py).
KERNELS = ("scan", "scan1", "antidiagonal", "blocked")
METHODS = ("windows", "dp", *KERNELS)
SLICE = (5_000_000, 5_200_000)   # 200 kbp of C. elegans chrX as the test reference


# ----------------------------------------------------------------------------- oracles


def oracle(q: np.ndarray, records: list[np.ndarray], s: Scoring) -> tuple[int, int, int, int]:
    """(score, record, query end, reference end) of the best cell over all records."""
    best = (0, 0, 0, 0)
    for r, t in enumerate(records):
        score, qe, te = (int(v) for v in score_end(q, t, s.matrix, s.gap_open, s.gap_extend, LOCAL))
        if score > best[0]:   # records in order: a later record never wins a tie
            best = (score, r, qe, te)
    return best


def oracle_top(q, records, s, top):
    """Greedy disjoint hits: [(record, Alignment)] with record coordinates."""
    free = [(r, 0, len(t)) for r, t in enumerate(records) if len(t)]
    hits = []
    while len(hits) < top and free:
        cells = []
        for k, (r, lo, hi) in enumerate(free):
            score, qe, te = score_end(q, records[r][lo:hi], s.matrix, s.gap_open, s.gap_extend, LOCAL)
            cells.append((-int(score), r, lo + int(te), int(qe), k))
        neg, r, _, _, k = min(cells)
        if neg >= 0:
            break
        _, lo, hi = free.pop(k)
        a = align_codes(q, records[r][lo:hi], s)
        ts, te = a.target_start + lo, a.target_end + lo
        hits.append((r, (a.score, a.query_start, a.query_end, ts, te, a.cigar)))
        free += [(r, x, y) for x, y in ((lo, ts), (te, hi)) if y > x]
    return hits


def key(a: Alignment) -> tuple:
    return (a.score, a.query_start, a.query_end, a.target_start, a.target_end, a.cigar)


def methods(backend: str) -> tuple[str, ...]:
    return METHODS if backend == "cpu" else ("windows", "dp")


def check(q_text: str, records: dict[str, str], s: Scoring, backend: str, **kw) -> Alignment:
    """locate with every method equals the oracle (score, record, both coordinates, path)."""
    names = list(records)
    codes = [s.encode(t) for t in records.values()]
    q = s.encode(q_text)
    score, r, qe, te = oracle(q, codes, s)
    expected = key(align_codes(q, codes[r], s)) if score else (0, 0, 0, 0, 0, "")
    for method in methods(backend):
        a = locate(q_text, records, s, method=method, backend=backend, strand="plus", **kw)
        assert key(a) == expected, method
        assert (a.query_end, a.target_end) == ((qe, te) if score else (0, 0))
        assert a.record == (names[r] if score else None)
        if method in KERNELS:   # "full" already checked the kernel's cell; "end" is generic
            continue
        e = locate(q_text, records, s, method=method, backend=backend, mode="end",
                   strand="plus", **kw)
        assert (e.score, e.query_end, e.target_end, e.query_start) == (score, *a_ends(a), None)
    return a


def a_ends(a: Alignment) -> tuple[int, int]:
    return a.query_end, a.target_end


mutate = mutate_dna


def random_dna(rng: np.random.Generator, n: int) -> str:
    return "".join(rng.choice(list("ACGT"), n))


@pytest.fixture(scope="module")
def chrx() -> str:
    """200 kbp of C. elegans chrX (upper case)."""
    return chrx_slice(*SLICE)


# ------------------------------------------------------------------------------ bounds


def test_span_bound_values():
    # KERNELS.md §E: DNA 1/-2/5/1 with m=256 needs an overlap of 506.
    assert span_bound(PAPER_002.encode("ACGT" * 64), PAPER_002) == 507
    # Sq = 5*100 = 500, L <= (500-8-1)//1 + 1 = 492.
    assert span_bound(PAPER_004.encode("A" * 100), PAPER_004) == 592
    assert span_bound(PAPER_002.encode(""), PAPER_002) == 0
    assert span_bound(PAPER_002.encode("NNNN"), PAPER_002) == 0          # N only mismatches
    assert query_score_bound(PAPER_002.encode("ANNA"), PAPER_002) == 2    # negatives dropped
    assert span_bound(PAPER_002.encode("AAAAA"), PAPER_002) == 5         # Sq <= gop: no gaps
    free = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=0)
    assert span_bound(free.encode("A" * 10), free) is None                # unbounded gaps
    assert span_bound(free.encode("A" * 5), free) == 5                    # ... unless Sq <= gop


def test_window_bounds_cover_every_short_interval():
    for n, w, span in [(1000, 50, 20), (1000, 20, 20), (37, 10, 4), (10, 50, 20), (101, 30, 1)]:
        b = window_bounds(n, w, span)
        assert b[0, 0] == 0 and b[-1, 1] == n and np.all(b[:, 1] - b[:, 0] <= w)
        for a in range(n):
            stop = min(n, a + span)
            assert np.any((b[:, 0] <= a) & (b[:, 1] >= stop)), (n, w, span, a)
    assert default_window(507) == 506 + 4096
    assert window_bounds(0, 10, 3).shape == (0, 2)


def test_tight_gap_across_every_seam(backend):
    """An optimal alignment with a long reference gap, near the span bound, placed across
    every seam of windows as short as the bound allows."""
    s = PAPER_002
    rng = np.random.default_rng(11)
    x, y = random_dna(rng, 50), random_dna(rng, 50)
    insert = random_dna(rng, 45)            # gap of 45: 100 - 5 - 44 = 51 > 50 (x or y alone)
    q = x + y
    span = span_bound(s.encode(q), s)
    window = span + 6
    for shift in range(0, 40, 3):
        ref = random_dna(rng, 120 + shift) + x + insert + y + random_dna(rng, 150)
        a = check(q, {"r": ref}, s, backend, window=window)
        assert a.score == 51 and a.cigar == "50M45D50M"


def _best_window(q, ref, s, width, overlap):
    """(score, reference end) of the best window of window_bounds(len(ref), width, overlap)
    by the exact DP: what the windows hold without seams."""
    best = (0, 0)
    for lo, hi in window_bounds(len(ref), width, overlap).tolist():
        score, _, te = score_end(q, ref[lo:hi], s.matrix, s.gap_open, s.gap_extend, LOCAL)
        best = max(best, (int(score), -(lo + int(te))))
    return best[0], -best[1]


def test_windows_exact_down_to_the_true_span():
    """With the overlap set from the optimal alignment's own span (145), the windows stay
    exact at every seam; one symbol less and the alignment is cut. (The span bound is
    looser: an optimal alignment must also beat its own parts.)"""
    s = PAPER_002
    rng = np.random.default_rng(12)
    x, y, insert = random_dna(rng, 50), random_dna(rng, 50), random_dna(rng, 45)
    q = s.encode(x + y)
    for span, exact in ((145, True), (144, False)):
        for shift in range(16):   # every offset against the window starts
            ref = s.encode(random_dna(rng, 120 + shift) + x + insert + y + random_dna(rng, 150))
            window = span + 6 if exact else span   # windows too short to hold it whole
            score, end = _best_window(q, ref, s, window, span)
            if exact:
                assert (score, end) == (51, 120 + shift + 145)
            else:
                assert score < 51


def test_two_passes_close_the_seams(backend):
    """The first pass overlaps its windows only for alignments scoring >= 3/4 of Sq (146
    symbols for this 120-symbol query); the best alignment here scores 66 with a
    50-symbol gap (span 170), so placed against every window start it is sometimes cut
    by the first pass's windows and must come from the seams. The first pass's windows
    alone (scored by the exact DP) show that those placements really needed them."""
    s = PAPER_002
    rng = np.random.default_rng(21)
    x, y, insert = random_dna(rng, 60), random_dna(rng, 60), random_dna(rng, 50)
    q = x + y
    assert (first_pass_span(s.encode(q), s), span_bound(s.encode(q), s)) == (146, 235)
    background = random_dna(rng, 4000)
    starts = range(1000, 1600, 3)
    refs = [background[:a] + x + insert + y + background[a:] for a in starts]
    for a, ref in zip(starts, refs):
        got = locate(q, ref, s, backend=backend, mode="end")
        assert (got.score, got.query_end, got.target_end) == (66, 120, a + 170), a
    full = locate(q, refs[3], s, backend=backend)
    assert key(full) == key(align_codes(s.encode(q), s.encode(refs[3]), s))
    first = first_pass_span(s.encode(q), s)
    cut = [a for a, ref in zip(starts, refs)
           if _best_window(s.encode(q), s.encode(ref), s, default_window(first, len(ref)),
                           first)[0] != 66]
    assert cut   # the first pass alone misses the alignment at some placements


def test_seam_pieces_hold_every_interval_no_window_holds():
    """Every interval of at most `span` symbols that no window contains lies in a seam."""
    for n, width, first, span in ((1000, 60, 20, 35), (777, 100, 41, 90), (300, 50, 10, 50)):
        b = window_bounds(n, width, first)
        pieces = np.zeros((len(b), 5), np.int64)
        pieces[:, 1:3], pieces[:, 4] = b, n
        seams = seam_pieces(pieces, [n], span)
        assert len(seams) == len(b) - 1
        for lo in range(n):
            for hi in range(lo + 1, min(n, lo + span) + 1):
                inside = np.any((b[:, 0] <= lo) & (b[:, 1] >= hi))
                assert inside or np.any((seams[:, 1] <= lo) & (seams[:, 2] >= hi)), (n, lo, hi)


def test_two_passes_only_for_one_hit_and_a_bounded_span():
    s = PAPER_002
    q = s.encode("ACGT" * 64)
    assert first_pass_span(q, s) == 316 and first_pass_span(q, s, top=2) is None
    assert first_pass_span(q, Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=0)) is None
    assert first_pass_span(s.encode("ACG"), s) is None      # nothing below the full bound


# ----------------------------------------------------------------------- C. elegans chrX


@pytest.mark.parametrize("s", DNA_SCORINGS)
def test_mutated_queries_equal_dp(chrx, s, backend):
    rng = np.random.default_rng(2024)
    for length in (64, 128, 256):
        start = int(rng.integers(0, len(chrx) - length))
        q = mutate(rng, chrx[start:start + length], sub=0.08, indels=3)
        a = check(q, {"chrX": chrx}, s, backend)
        assert a.score > 0
        if length == 256:   # long enough that the mutated origin beats repeats elsewhere
            assert abs(a.target_start - start) < 40


def test_exact_window_of_reference_and_seams(chrx, backend):
    s = PAPER_002
    ref = chrx[:30_000]
    q = ref[12_345:12_345 + 150]
    a = check(q, {"chrX": ref}, s, backend)
    assert (a.score, a.target_start, a.target_end, a.cigar) == (150, 12_345, 12_495, "150M")
    # Small windows: the query straddles a seam (starts in one window's private part and
    # ends in the next window's), and sits exactly on a window's last column.
    window = span_bound(s.encode(q), s) + 50
    bounds = window_bounds(len(ref), window, span_bound(s.encode(q), s))
    for lo, hi in bounds[3:6].tolist():
        for start in (hi - 150, hi - 75, hi - 149, lo):
            q = ref[start:start + 150]
            a = check(q, {"chrX": ref}, s, backend, window=window)
            assert (a.target_start, a.target_end) == (start, start + 150)


def test_top_hits_equal_greedy_oracle(chrx, backend):
    s = PAPER_004
    ref = chrx[40_000:70_000]
    rng = np.random.default_rng(5)
    q = mutate(rng, ref[10_000:10_120], sub=0.15, indels=2)
    codes = s.encode(ref)
    expected = oracle_top(s.encode(q), [codes], s, 6)
    small = span_bound(s.encode(q), s) + 100
    for method in methods(backend):
        for window in (None, small):
            hits = locate(q, ref, s, top=6, method=method, backend=backend, window=window,
                          strand="plus")
            assert [(0, key(h)) for h in hits] == expected, (method, window)
            assert all(h.record == "record0" for h in hits)
    spans = sorted((h.target_start, h.target_end) for h in hits)
    assert all(b[0] >= a[1] for a, b in itertools.pairwise(spans))


# ------------------------------------------------------------------------ constructed


def test_repeats_tie_to_smallest_end(backend):
    """The same 80-mer three times, in different windows and in an overlap: the
    smallest reference end wins; top=3 lists all three by score then end."""
    s = PAPER_002
    rng = np.random.default_rng(7)
    unit = random_dna(rng, 80)
    span = span_bound(s.encode(unit), s)
    window = span + 40
    parts = [random_dna(rng, 300), unit, random_dna(rng, 131), unit, random_dna(rng, 617), unit,
             random_dna(rng, 90)]
    ref = "".join(parts)
    starts = [300, 300 + 80 + 131, 300 + 80 + 131 + 80 + 617]
    for w in (None, window, span):
        a = check(unit, {"r": ref}, s, backend, window=w)
        assert (a.score, a.target_start) == (80, starts[0])
        for method in methods(backend):
            hits = locate(unit, ref, s, top=3, method=method, backend=backend, window=w)
            assert [(h.score, h.target_start) for h in hits] == [(80, x) for x in starts]


def test_query_longer_than_reference(backend):
    s = PAPER_004
    rng = np.random.default_rng(3)
    ref = random_dna(rng, 90)
    q = random_dna(rng, 40) + mutate(rng, ref, 0.05, 1) + random_dna(rng, 60)
    a = check(q, {"short": ref}, s, backend)
    assert a.score > 100
    check(q, {"short": ref}, s, backend, window=len(q) * 7)


def test_empty_inputs(backend):
    s = PAPER_002
    for method in methods(backend):
        a = locate("", "ACGTACGT", s, method=method, backend=backend)
        assert key(a) == (0, 0, 0, 0, 0, "") and a.record is None
        assert locate("", "ACGT", s, top=3, method=method, backend=backend) == []
        assert locate("ACGT", {"e": ""}, s, method=method, backend=backend).score == 0
        assert locate("GGGG", "TTTT", s, method=method, backend=backend, mode="score") \
            == Alignment(score=0)
    assert check("NNNN", {"r": "ACGTNNNN"}, s, backend).score == 0


def test_multi_record_reference_names_the_record(backend):
    s = PAPER_002
    rng = np.random.default_rng(9)
    unit = random_dna(rng, 60)
    records = {"chr1": random_dna(rng, 3000), "chr2": random_dna(rng, 500) + unit + random_dna(rng, 900),
               "chr3": random_dna(rng, 10), "chr4": random_dna(rng, 100) + unit}
    a = check(unit, records, s, backend, window=span_bound(s.encode(unit), s) + 30)
    assert (a.record, a.target_start, a.target_end) == ("chr2", 500, 560)   # tie: earlier record
    for method in methods(backend):
        hits = locate(unit, records, s, top=2, method=method, backend=backend)
        assert [(h.record, h.target_start) for h in hits] == [("chr2", 500), ("chr4", 100)]
    # A window never spans two records: a query across the junction of chr1 and chr2
    # aligns only its part inside one record.
    joint = records["chr1"][-40:] + records["chr2"][:40]
    a = check(joint, records, s, backend, window=span_bound(s.encode(joint), s) + 30)
    assert a.score <= 40 + 20


def test_protein_blosum62(backend):
    s = BLOSUM62
    ref, q = protein_read()
    a = check(q, {"p": ref}, s, backend)
    assert a.score > 300
    check(q, {"p": ref}, s, backend, window=span_bound(s.encode(q), s) + 100)


def test_zero_gap_extend_falls_back_to_one_window(backend):
    s = Scoring(match=2, mismatch=-3, gap_open=4, gap_extend=0)
    rng = np.random.default_rng(4)
    x, y = random_dna(rng, 30), random_dna(rng, 30)
    ref = random_dna(rng, 200) + x + random_dna(rng, 3000) + y + random_dna(rng, 200)
    assert span_bound(s.encode(x + y), s) is None
    a = check(x + y, {"r": ref}, s, backend, window=500)
    assert a.score == 120 - 4 and "M3000D" in a.cigar


def test_random_small_cases_equal_dp(backend):
    rng = np.random.default_rng(123)
    for trial in range(40):
        s = (PAPER_002, PAPER_004)[trial % 2]
        ref = random_dna(rng, int(rng.integers(50, 900)))
        start = int(rng.integers(0, len(ref)))
        q = mutate(rng, ref[start:start + int(rng.integers(5, 60))] or "A", 0.1, 1) or "C"
        span = span_bound(s.encode(q), s)
        check(q, {"r": ref, "s": ref[::-1]}, s, backend, window=max(span, 1) + int(rng.integers(0, 40)))


# ------------------------------------------------------------------- the CPU kernels


def test_kernels_equal_score_end_on_random_pairs():
    """Every kernel equals score_end (score and tie-broken end) on small random and related
    pairs, for affine, linear, zero-extension and BLOSUM62 scoring; "scan" also with narrow
    limits low enough to switch rows between 16- and 32-bit."""
    rng = np.random.default_rng(66)
    schemes = [PAPER_002, PAPER_004, BLOSUM62, Scoring(match=2, mismatch=-3, gap_open=3, gap_extend=3),
               Scoring(match=2, mismatch=-3, gap_open=4, gap_extend=0)]
    for trial in range(250):
        s = schemes[trial % len(schemes)]
        q, t = related_case(rng, 20 if s is BLOSUM62 else 4, trial, (0, 250), 150, (0, 80),
                            cut=True)
        want = tuple(int(v) for v in score_end(q, t, s.matrix, s.gap_open, s.gap_extend, LOCAL))
        for method in KERNELS:
            for limit in ((12, 40, NARROW_LIMIT) if method == "scan" else (NARROW_LIMIT,)):
                got = score_end_method(method, q, t, s, limit=limit)
                assert got[:3] == want, (trial, method, limit)


def test_scan_switches_narrow_to_wide_and_back():
    s = PAPER_002
    rng = np.random.default_rng(8)
    unit = random_dna(rng, 60)
    ref = s.encode(random_dna(rng, 400) + unit + random_dna(rng, 300))
    q = s.encode(unit + random_dna(rng, 90))     # rows 41.. exceed 40; then scores decay
    want = tuple(int(v) for v in score_end(q, ref, s.matrix, s.gap_open, s.gap_extend, LOCAL))
    *cell, wide = score_end_method("scan", q, ref, s, limit=40)
    assert tuple(cell) == want and want[0] >= 60
    assert 0 < wide < len(q) - 40                 # switched up, and back (Eq. 10, T = 10)
    assert score_end_method("scan", q, ref, s)[3] == 0          # int16: never wide
    # A real int16 overflow: 7000 matches x 5 = 35000 > 32767.
    s = PAPER_004
    text = random_dna(rng, 7100)
    ref, q = s.encode(text), s.encode(text[50:7050])
    *cell, wide = score_end_method("scan", q, ref, s)
    assert tuple(cell) == (35_000, 7000, 7050)
    assert wide == 7000 - 6554 + 1          # row i is wide once 5(i - 1) + 5 > 32767
    a = locate(text[50:7050], text, s, method="scan", backend="cpu", mode="end")
    assert (a.score, a.query_end, a.target_end) == (35_000, 7000, 7050)


# ------------------------------------------------------------------------------ errors


def test_bad_inputs():
    s = PAPER_002
    with pytest.raises(AlphabetError, match=r"'chrB'.*position 3.*'J'"):
        locate("ACGT", {"chrA": "ACGT", "chrB": "ACGJT"}, s)
    with pytest.raises(AlphabetError, match=r"position 1.*'!'"):
        locate("A!GT", "ACGT", s)
    with pytest.raises(ValueError, match="invalid top: 0; expected an integer >= 1"):
        locate("ACGT", "ACGT", s, top=0)
    with pytest.raises(ValueError, match="invalid top"):
        locate("ACGT", "ACGT", s, top=True)
    with pytest.raises(ValueError, match=r"invalid method: 'fast'; expected one of 'auto', "
                                         r"'windows', 'dp', 'scan'"):
        locate("ACGT", "ACGT", s, method="fast")
    with pytest.raises(ValueError, match="invalid mode"):
        locate("ACGT", "ACGT", s, mode="all")
    with pytest.raises(ValueError, match="invalid algorithm"):
        locate("ACGT", "ACGT", s, algorithm="global")
    with pytest.raises(ValueError, match="invalid backend"):
        locate("ACGT", "ACGT", s, backend="tpu", method="dp")
    with pytest.raises(ValueError, match=r"shorter than the span bound .*\(35\)"):
        locate("ACGT" * 5, "ACGT" * 100, s, window=10)
    assert len(locate(["ACGT", "ACGT"], "ACGT", s)) == 2   # a list is many reads
    try:   # the kernel methods run on the GPU where a device answers (test_cuda_locate.py)
        from warpalign._backends.cuda.scan import check_device
        check_device()
    except BackendUnavailable:
        for method in KERNELS:
            with pytest.raises(BackendUnavailable, match="CUDA locate kernels"):
                locate("ACGT", "ACGT", s, method=method, backend="cuda")


def test_fasta_path_and_cli(tmp_path):
    ref = tmp_path / "ref.fa"
    ref.write_text(">one first\nTTTTTTTTTTTTTTTT\n>two\nGGGACGTACGTAGG\nGACGTACGTAGGG\n")
    hit = locate("ACGTACGTA", str(ref), PAPER_002)
    assert (hit.record, hit.score, hit.target_start, hit.target_end) == ("two", 9, 3, 12)
    qf = tmp_path / "q.fa"
    qf.write_text(">q1\nACGTACGTA\n>q2\nTTTTTTTT\n")
    parser = argparse.ArgumentParser()
    locate_command.add_parser(parser.add_subparsers(dest="command"))
    out = tmp_path / "out.tsv"
    args = parser.parse_args(["locate", str(qf), str(ref), "-n", "2", "--method", "windows",
                              "--backend", "cpu", "-o", str(out)])
    assert args.run(args) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert rows[0][:3] == ["q1", "two", "9"] and rows[0][7:] == ["4", "12", "9M"]
    assert rows[1][:3] == ["q1", "two", "9"] and rows[1][7:9] == ["16", "24"]
    assert rows[2][:3] == ["q2", "one", "8"]


# ------------------------------------------------------- the traceback segment of a hit


def test_span_bound_at_a_score_covers_every_alignment_that_scores_it():
    """An alignment scoring S spans at most span_bound(query[:query_end], s, S) reference
    symbols (the segment "full" traces on): random pairs, many with long gaps, some with
    the bound attained exactly (one gap as long as the score allows)."""
    rng = np.random.default_rng(61)
    tight = 0
    for trial in range(300):
        s = (PAPER_002, PAPER_004, Scoring(match=2, mismatch=-3, gap_open=3, gap_extend=3))[trial % 3]
        q = random_dna(rng, int(rng.integers(4, 40)))
        gap = random_dna(rng, int(rng.integers(0, 30)))
        cut = int(rng.integers(0, len(q) + 1))
        t = random_dna(rng, int(rng.integers(0, 20))) + q[:cut] + gap + q[cut:] + random_dna(rng, 5)
        a = align_codes(s.encode(q), s.encode(t), s)
        if a.score == 0:
            continue
        bound = span_bound(s.encode(q)[:a.query_end], s, a.score)
        assert a.target_end - a.target_start <= bound, (trial, q, t)
        tight += a.target_end - a.target_start == bound
        assert span_bound(s.encode(q), s, a.score + 10**6) == 0
    assert tight >= 5   # the bound is attained, not only respected


@pytest.mark.parametrize("backend", ["cpu"])
def test_full_mode_on_the_score_bounded_segment(backend):
    """mode "full" traces on a segment bounded by the hit's score; its alignment equals the
    traceback over the whole record (align_codes), with gaps as long as the score allows
    and repetitive sequences where many cells tie."""
    rng = np.random.default_rng(62)
    for trial in range(40):
        s = (PAPER_002, PAPER_004)[trial % 2]
        q = random_dna(rng, int(rng.integers(20, 80)))
        if trial % 4 == 3:
            q = ("ACG" * 40)[:len(q)]
        cut = int(rng.integers(1, len(q)))
        # a reference gap of up to the longest the match can pay for
        most = max(1, (len(q) * int(s.matrix.max()) - s.gap_open) // s.gap_extend)
        gap = random_dna(rng, int(rng.integers(1, most + 1)))
        ref = random_dna(rng, 300) + q[:cut] + gap + q[cut:] + random_dna(rng, 300)
        if trial % 4 == 3:
            ref = ("ACG" * 400)[:len(ref)]
        check(q, {"r": ref}, s, backend)


class FakeGpuWindows:
    """CPU stand-in for ``_backends.cuda.windows`` (same functions, exact DP per window):
    runs locate's GPU path (scores, then ends on score-bounded sub-windows) without a GPU.
    Counts the sub-windows scored with ends and the launches with a sub-window longer than
    the score allows."""

    def __init__(self):
        self.sub_windows = 0
        self.too_long = 0
        self.best_ends = 0
        self.rng = np.random.default_rng(5)

    @staticmethod
    def supports(scoring):
        return True

    @staticmethod
    def wanted_windows(m, packed=False):
        return 32 if packed else 64

    def resident(self, records):
        from types import SimpleNamespace
        starts = np.zeros(len(records) + 1, np.int64)
        np.cumsum([len(r) for r in records], out=starts[1:])
        codes = np.concatenate(records) if records else np.zeros(0, np.uint8)
        return SimpleNamespace(starts=starts, codes=codes)

    ENDS_ROWS = 8
    worker_stream = staticmethod(contextlib.nullcontext)   # no streams on the CPU

    @staticmethod
    def DeviceQuery(q, scoring, rows=None, *, sq=None):   # the class it stands for
        return None

    def _cells(self, ref, q, s, starts, lengths):
        return np.array([score_end(q, ref.codes[a:a + n], s.matrix, s.gap_open, s.gap_extend,
                                   LOCAL) for a, n in zip(starts.tolist(), lengths.tolist())],
                        np.int64).reshape(-1, 3)

    @staticmethod
    def windows_of(ref, rows):
        return ref.starts[rows[:, 0]] + rows[:, 1], rows[:, 2] - rows[:, 1]

    def window_cells(self, ref, q, s, starts, lengths, query=None, ends=False, keep_layout=True,
                     best_ends=False, timed=True):
        if ends:
            return self.window_ends(ref, q, s, starts, lengths)
        exact = self._cells(ref, q, s, starts, lengths)
        cells = exact.copy()
        cells[:, 1:] = -1
        if best_ends and len(cells) and s.gap_extend > 0 and cells[:, 0].max() > 0:
            # as the device: the ends of any TIED_MAX of the windows tied at the best score
            from warpalign._backends.cuda.windows import TIED_MAX
            tied = np.flatnonzero(cells[:, 0] == cells[:, 0].max())
            tied = self.rng.permutation(tied)[:TIED_MAX]
            cells[tied] = exact[tied]
            self.best_ends += len(tied)
        return cells, np.zeros(0, np.int64), 0.0

    pack_room = 3   # queries per packed launch (windows.pack_capacity: 150 bp)

    def pack_capacity(self, m):
        return self.pack_room

    @staticmethod
    def DevicePack(queries, scoring, *, sq):   # the class it stands for
        from types import SimpleNamespace
        return SimpleNamespace(queries=list(queries), count=len(queries), sq=sq)

    def window_cells_packed(self, ref, pack, s, starts, lengths, best_ends=False, timed=True):
        """Each query's window_cells (so subclasses' engines apply); the launch noted."""
        self.packed = getattr(self, "packed", []) + [pack.count]
        self.packed_windows = getattr(self, "packed_windows", []) + [len(starts)]
        got = [self.window_cells(ref, q, s, starts, lengths, best_ends=best_ends, timed=timed)
               for q in pack.queries]
        return [c for c, _, _ in got], [f for _, f, _ in got], 0.0

    END_ROWS = 256
    ends_many = 0     # window_ends_many calls (locate's one launch for many reads' ends)

    def window_ends_many(self, ref, queries, s, items):
        """Each item's window end cell by the exact DP of the whole window (what the
        device's sub-windows give, module docstring of locate_core)."""
        self.ends_many += 1
        items = np.asarray(items, np.int64).reshape(-1, 4)
        return np.array([score_end(queries[int(i)], ref.codes[a:a + n], s.matrix, s.gap_open,
                                   s.gap_extend, LOCAL) for i, a, n, _ in items.tolist()],
                        np.int64).reshape(-1, 3)

    def window_ends(self, ref, q, s, starts, lengths, query=None, keep_layout=True):
        self.sub_windows += len(starts)
        cells = self._cells(ref, q, s, starts, lengths)
        # sub-windows as short as the best score allows: span_bound at that score + 64
        self.too_long += int(np.max(lengths) > span_bound(q, s, int(cells[:, 0].max())) + 64)
        return cells, np.zeros(0, np.int64), 0.0


@contextlib.contextmanager
def gpu_windows_as(kernels):
    """locate's CUDA rows for a ``with`` block: ``kernels`` (base.WindowKernels) for its
    resident windows, the CPU search engine under the name "cuda" for its exact rescoring."""
    from warpalign._backends.cpu import CpuBackend
    from warpalign._backends.registry import using

    class CpuNamedCuda(CpuBackend):
        name = "cuda"

    with using("locate", "cuda", "windows", CpuNamedCuda()), \
            using("locate", "cuda", "windows16", kernels):
        yield kernels


class LazyWindows(FakeGpuWindows):
    """A lazy scorer as locate's GPU path is (scores first, ends on demand), each window
    by the exact DP, with no ends coming with the scores (``best_ends`` ignored): keeps
    the reference positions (concatenated records) whose ends locate asks for in
    ``asked``; ``score_offset`` is added to every positive score of the scores pass (a
    wrong engine)."""

    def __init__(self, score_offset=0):
        super().__init__()
        self.asked = set()
        self.score_offset = score_offset

    def window_cells(self, ref, q, s, starts, lengths, query=None, ends=False,
                     keep_layout=True, best_ends=False, timed=True):
        if ends:
            for a, n in zip(starts.tolist(), lengths.tolist()):
                self.asked.update(range(a, a + n))
            return self.window_ends(ref, q, s, starts, lengths)
        cells = self._cells(ref, q, s, starts, lengths)
        cells[:, 0] += self.score_offset * (cells[:, 0] > 0)
        cells[:, 1:] = -1
        return cells, np.zeros(0, np.int64), 0.0


@pytest.mark.parametrize("mode", ["score", "end", "full"])
def test_lazy_ends_equal_eager_search(mode):
    """Scores of every window first, ends only for the windows tied at the best score of
    the earliest record (locate's GPU path through its declared WindowKernels, each
    window by the exact DP): the same hits (record, score, ends, path) as the exact DP
    over whole records, with repeats tying across windows, seams and records; ends are
    asked for on a part of the reference only (none for the top hit's score)."""
    s = PAPER_002
    rng = np.random.default_rng(11)
    unit = random_dna(rng, 70)
    width = span_bound(s.encode(unit), s) + 25             # many windows, many seams
    recs = [random_dna(rng, 400) + unit + random_dna(rng, 333) + unit + random_dna(rng, 50),
            random_dna(rng, 90) + unit,
            random_dna(rng, 700) + mutate(rng, unit, 0.05, 1) + random_dna(rng, 200)]
    records = {f"r{i}": r for i, r in enumerate(recs)}
    residues = sum(map(len, recs))
    for top in (1, 3, 5):
        with gpu_windows_as(LazyWindows()) as lazy:
            got = locate(unit, records, s, top=top, mode=mode, window=width, backend="cuda",
                         strand="plus")
        want = locate(unit, records, s, top=top, mode=mode, method="dp", backend="cpu",
                      strand="plus")
        got, want = ([got], [want]) if top == 1 else (got, want)
        assert [(h.record, *key(h)) for h in got] == [(h.record, *key(h)) for h in want], top
        assert [(h.record, h.score) for h in got][:3] == [("r0", 70), ("r0", 70),
                                                          ("r1", 70)][:top]
        if mode == "score" and top == 1:
            assert not lazy.asked
        else:
            # past the unit's three copies (top 5) the hits tie among random windows
            part = 0.35 if top <= 3 else 0.7
            assert 0 < len(lazy.asked) < part * residues, (top, len(lazy.asked), residues)


def test_lazy_ends_raise_on_disagreeing_engines():
    """A 16-bit score that the exact ends path contradicts is an error, never a hit."""
    s = PAPER_002
    with gpu_windows_as(LazyWindows(score_offset=1)), \
            pytest.raises(RuntimeError, match="internal inconsistency"):
        locate("ACGTACGTAC", {"r": "TTTTACGTACGTACTTTT"}, s, mode="end", backend="cuda",
               strand="plus")


def test_gpu_path_ends_on_score_bounded_sub_windows():
    """locate's GPU path logic on the CPU (windows.py replaced by exact DP per window): the
    end cells found on sub-windows overlapping by span_bound(query, scoring, S) - 1 equal the
    whole record's, for every mode and top, with ties (repeats) and gaps; the sub-windows
    are as short as the score allows."""
    with gpu_windows_as(FakeGpuWindows()) as fake:
        _gpu_path_trials()
    assert fake.sub_windows > 0 and fake.best_ends > 0 and fake.too_long == 0


def _gpu_path_trials():
    rng = np.random.default_rng(63)
    for trial in range(24):
        s = (PAPER_002, PAPER_004)[trial % 2]
        ref = random_dna(rng, int(rng.integers(2_000, 6_000)))
        at = int(rng.integers(0, len(ref) - 120))
        q = mutate(rng, ref[at:at + int(rng.integers(30, 120))], 0.06, trial % 3)
        if trial % 6 == 5:   # tandem repeats: many cells tie at the best score
            ref = ("ACGTTGCA" * 800)[:len(ref)]
            q = ("ACGTTGCA" * 20)[:len(q)]
        records = {"a": ref, "b": ref[::-1][:1_500]}
        for top, mode in ((1, "end"), (1, "full"), (3, "full"), (2, "end")):
            got = locate(q, records, s, top=top, mode=mode, backend="cuda")
            want = locate(q, records, s, top=top, mode=mode, method="dp", backend="cpu")
            got, want = ([got], [want]) if top == 1 else (got, want)
            assert [(h.record, *key(h)) for h in got] == [(h.record, *key(h)) for h in want], (
                trial, top, mode)


class EmulatedCupy:
    """Just enough of CuPy for ``_backends/cuda/windows.py`` on the CPU: device arrays are
    NumPy arrays, pointers their addresses, copies ``ctypes.memmove``; the kernel
    ``win_s16`` is emulated by the exact DP per window, reading its windows and writing its
    results through the pointers it is given (so the buffer layouts, offsets and result
    parsing of windows.py are what is tested)."""

    uint8, uint16, uint32, int32, int64 = np.uint8, np.uint16, np.uint32, np.int32, np.int64

    def __init__(self, q, scoring, flag_at):
        import ctypes
        from types import SimpleNamespace
        self.q, self.scoring, self.flag_at, self.ct = q, scoring, flag_at, ctypes
        self.queries = [q]   # a packed launch's queries (heads != 1), in order
        stream = SimpleNamespace(ptr=0, synchronize=lambda: None)
        runtime = SimpleNamespace(
            memcpyHostToDevice=1, memcpyDeviceToHost=2, getDevice=lambda: 0,
            memsetAsync=lambda ptr, v, size, s: ctypes.memset(ptr, v, size),
            memcpyAsync=lambda dst, src, size, kind, s: ctypes.memmove(dst, src, size))
        self.no_room_for = None   # a dtype whose allocations fail as out of device memory
        self.cuda = SimpleNamespace(
            memory=SimpleNamespace(OutOfMemoryError=MemoryError),
            runtime=runtime, get_current_stream=lambda: stream, alloc_pinned_memory=self._pinned,
            Event=lambda: SimpleNamespace(record=lambda s=None: None),
            get_elapsed_time=lambda a, b: 0.0,
            Device=lambda *a: SimpleNamespace(id=0, synchronize=lambda: None,
                                              attributes={"MultiProcessorCount": 4}))
        self.launches = []

    class Array:
        def __init__(self, a):
            from types import SimpleNamespace
            self.a = np.ascontiguousarray(a)
            self.nbytes, self.shape, self.dtype = self.a.nbytes, self.a.shape, self.a.dtype
            self.data = SimpleNamespace(ptr=self.a.ctypes.data)

        def __getitem__(self, key):        # views share the memory, as on the device
            return type(self)(self.a[key])

        def view(self, dtype):
            return type(self)(self.a.view(dtype))

        def reshape(self, *shape):
            return type(self)(self.a.reshape(*shape))

        def set(self, host, stream=None):  # a copy up from host memory (pinned staging)
            assert host.nbytes == self.nbytes
            self.a[...] = np.asarray(host).view(self.dtype).reshape(self.shape)

    def empty(self, shape, dtype):
        if self.no_room_for is not None and np.dtype(dtype) == np.dtype(self.no_room_for):
            raise MemoryError("out of device memory (emulated)")
        return self.Array(np.empty(shape, dtype))

    def asarray(self, a):
        return self.Array(np.array(a))

    @staticmethod
    def _pinned(n):
        return _Pinned(n)

    def read(self, ptr, dtype, count):
        raw = (self.ct.c_char * (np.dtype(dtype).itemsize * count)).from_address(int(ptr))
        return np.frombuffer(raw, dtype, count)

    def kernel(self, name):
        if name == "win_pick":
            return self._pick
        if name == "win_ypack":
            return self._ypack
        if name.startswith("win_ends<"):
            return self._ends
        r_rows, ends, packed = name[name.index("<") + 1:-1].split(", ")
        ends, packed = ends == "true", packed == "true"

        def launch(grid, block, args, shared_mem=0):
            codes, starts_p, lengths_p, items_p, nitems, g, bands, prof_p, k = args[:9]
            out_p, flagged_p, count_p, qend_p, tend_p, ycol_p, ystride = args[15:22]
            heads, nwin = int(args[25]), int(args[26])
            queries = [self.q] if heads == 1 else self.queries
            if heads != 1:   # packed queries: the profile holds each at its lanes' rows
                from warpalign._backends.cuda.window_plan import (
                    pack_plan,
                    pack_rows,
                    profile_rows,
                )
                r, gg, lanes, hh = pack_plan(len(queries[0]), len(queries))
                assert (r, gg, hh, int(bands)) == (int(r_rows), int(g), heads, 1) and not ends
                want = profile_rows(pack_rows(queries, int(k), r, lanes, gg), self.scoring,
                                    r, gg, 1)
                got = self.read(prof_p, np.uint16, want.size)
                assert np.array_equal(got, want.ravel())
            items = self.read(items_p, np.int32, 2 * int(nitems))
            ids = items[items >= 0]
            s = self.scoring
            if packed:   # the packed columns hold every item's two windows, pads around
                cols = self.read(ycol_p, np.uint16, int(nitems) * int(ystride))
                for i, (pa, pb) in enumerate(items.reshape(-1, 2).tolist()):
                    row = cols[i * int(ystride):(i + 1) * int(ystride)]
                    for half, w in ((0, pa), (8, pb)):
                        a = int(self.read(starts_p + 8 * w, np.int64, 1)[0]) if w >= 0 else 0
                        n = int(self.read(lengths_p + 4 * w, np.int32, 1)[0]) if w >= 0 else 0
                        want = np.full(int(ystride), s.matrix.shape[0], np.int64)
                        want[64:64 + n] = codes.a[a:a + n]
                        assert np.array_equal((row >> half) & 0xFF, want), (i, w)
            assert int(ids.max()) < nwin
            out = self.read(out_p, np.int32, len(queries) * nwin)
            qend = self.read(qend_p, np.int32, int(ids.max()) + 1)
            tend = self.read(tend_p, np.int32, int(ids.max()) + 1)
            count = self.read(count_p, np.int32, 1)
            assert count[0] == 0   # zeroed before the launch
            for slot, q in enumerate(queries):
                for w in ids.tolist():
                    a = int(self.read(starts_p + 8 * w, np.int64, 1)[0])
                    n = int(self.read(lengths_p + 4 * w, np.int32, 1)[0])
                    cell = score_end(q, codes.a[a:a + n], s.matrix, s.gap_open, s.gap_extend,
                                     LOCAL)
                    out[slot * nwin + w] = cell[0]
                    if ends:
                        qend[w], tend[w] = cell[1], cell[2]
                    if cell[0] >= self.flag_at:   # as the kernel flags a saturated window
                        self.read(flagged_p + 4 * int(count[0]), np.int32, 1)[0] = slot * nwin + w
                        count[0] += 1
            self.launches.append((ends, len(ids) * len(queries)))
        return launch


    def _ypack(self, grid, block, args, shared_mem=0):
        """windows.cu's win_ypack: per item and column, code a | code b << 8 (K: pad)."""
        codes, starts_p, lengths_p, items_p, nitems, k, stride, cols = args
        items = self.read(items_p, np.int32, 2 * int(nitems)).reshape(-1, 2)
        out = cols.a.reshape(-1)
        out[:] = int(k) * 0x101
        for i, pair in enumerate(items.tolist()):
            for half, w in zip((0, 8), pair):
                if w < 0:
                    continue
                a = int(self.read(starts_p + 8 * w, np.int64, 1)[0])
                n = int(self.read(lengths_p + 4 * w, np.int32, 1)[0])
                at = i * int(stride) + 64
                keep = out[at:at + n] & (0xFF00 >> half)
                out[at:at + n] = keep | (codes.a[a:a + n].astype(np.uint16) << half)
        self.launches.append(("ypack", len(items)))

    def _pick(self, grid, block, args, shared_mem=0):
        """windows.cu's win_pick: the best score, the windows holding it, their
        sub-windows in slots of ``per``."""
        (scores_p, nflag_p, n, starts_p, lengths_p, m, sq, go, ge, extra, most, per, spec_p,
         sub_start, sub_len, spec_stride) = args
        n, most, per, extra = int(n), int(most), int(per), int(extra)
        sub_start.a[:], sub_len.a[:] = 0, 0
        for b in range(grid[0]):   # block b: packed query b
            scores = self.read(scores_p + 4 * b * n, np.int32, n)
            best = 0 if self.read(nflag_p, np.int32, 1)[0] else int(scores.max(initial=0))
            tied = np.flatnonzero(scores == best)[::-1] if best > 0 else np.zeros(0, np.int64)
            spec = self.read(spec_p + 4 * b * int(spec_stride), np.int32, 2 + most)
            spec[0], spec[1] = best, len(tied)
            spec[2:2 + min(len(tied), most)] = tied[:most]   # any order (the kernel's atomics)
            slack = int(sq) - int(go) - best
            span = int(m) + (max(0, slack // int(ge) + 1) if slack >= 0 else 0)
            for k, w in enumerate(tied[:most].tolist()):
                a = int(self.read(starts_p + 8 * w, np.int64, 1)[0])
                length = int(self.read(lengths_p + 4 * w, np.int32, 1)[0])
                bounds = window_bounds(length, span + extra, span)
                assert len(bounds) <= per
                at = (b * most + k) * per
                sub_start.a[at:at + len(bounds)] = a + bounds[:, 0]
                sub_len.a[at:at + len(bounds)] = bounds[:, 1] - bounds[:, 0]
            self.launches.append(("pick", len(tied)))

    def _ends(self, grid, block, args, shared_mem=0):
        """windows.cu's win_ends over whole-query strips: each slot's best cell
        (zero-length slots left alone)."""
        (codes, lo, length, slots, q_p, r0, rows, mat_p, a, go, ge, _, _, _, out_p, per_query,
         qstride) = args
        assert grid[0] * block[0] // 32 >= int(slots)
        queries = self.queries if int(per_query) < int(slots) else [self.q]
        mat = self.read(mat_p, np.int32, int(a) ** 2).reshape(int(a), int(a))
        assert int(r0) == 0 and int(rows) == len(queries[0])
        assert np.array_equal(mat, self.scoring.matrix)
        out = self.read(out_p, np.int32, 3 * int(slots)).reshape(-1, 3)
        for w in range(int(slots)):
            st, n = int(lo.a[w]), int(length.a[w])
            which = w // int(per_query)
            q = self.read(q_p + which * int(qstride), np.uint8, len(queries[which]))
            assert np.array_equal(q, queries[which])
            if n > 0:
                out[w] = score_end(q, codes.a[st:st + n], mat, int(go), int(ge), LOCAL)
        self.launches.append(("ends", int((length.a > 0).sum())))


class _Pinned(bytearray):
    """Pinned memory stand-in: a buffer of garbage (as fresh pinned memory may hold) with
    an address (``ptr``)."""

    def __init__(self, n):
        import ctypes
        super().__init__(b"\xa5" * n)
        self.ptr = ctypes.addressof(ctypes.c_char.from_buffer(self))


@pytest.mark.parametrize("mode", ["end", "full"])
def test_gpu_windows_plumbing_on_an_emulated_device(mode):
    """windows.py's buffers (packed window layout, pinned uploads, one result buffer read
    back at offsets) and locate's GPU path around it, with the kernel emulated by the exact
    DP: the cells equal score_end per window, flagged windows come back, a cached layout
    is reused, and locate's hits equal the CPU dp method's."""
    from warpalign.locate import locate_encoded
    with _emulated_windows(64) as e:
        _windows_plumbing(e.gw, e.emu, e.q, e.s, e.codes, e.rng, mode, locate_encoded)


@contextlib.contextmanager
def _emulated_windows(seed):
    """windows.py on an emulated device (EmulatedCupy, paper 002's scoring) for a ``with``
    block: a 12,000-symbol reference (read-only codes), a 150-symbol query from near 7,000,
    the module's caches cleared around the block."""
    from types import SimpleNamespace

    from warpalign._backends.cuda import windows as gw
    from warpalign._backends.cuda.loader import emulated
    s = PAPER_002
    rng = np.random.default_rng(seed)
    ref = random_dna(rng, 12_000)
    q = s.encode(mutate(rng, ref[7_000:7_150], 0.05, 1))
    codes = s.encode(ref)
    codes.setflags(write=False)
    emu = EmulatedCupy(q, s, flag_at=10**9)
    gw.clear_cache()
    with emulated(emu, lambda f, names, defines=(): SimpleNamespace(get_function=emu.kernel)):
        try:
            yield SimpleNamespace(gw=gw, emu=emu, s=s, q=q, codes=codes, rng=rng)
        finally:
            gw.clear_cache()


@pytest.mark.parametrize("s", [PAPER_002, PAPER_004], ids=["002", "004"])
def test_window_ends_many_on_an_emulated_device(s):
    """windows.window_ends_many (locate's one launch for many reads' hits): each window,
    short (one sub-window) or long (many), of any of several queries of one length, gets
    the exact DP's end cell of the whole window by the tie rule, repeats full of ties
    included (emulated device: win_ends by the exact DP per sub-window)."""
    from types import SimpleNamespace

    from warpalign._backends.cuda import windows as gw
    from warpalign._backends.cuda.loader import emulated
    rng = np.random.default_rng(66)
    ref = random_dna(rng, 9_000)[:6_000] + "ACGTTGCA" * 250 + random_dna(rng, 3_000)
    codes = s.encode(ref)
    codes.setflags(write=False)
    queries = [s.encode(mutate(rng, ref[at:at + 90], 0.05, 0)[:90].ljust(90, "A"))
               for at in (1_000, 4_000, 6_100)]
    queries = [q[:90] for q in queries]
    items = []
    for qi, (lo, n) in enumerate([(900, 300), (3_500, 2_000), (6_000, 1_500)]):
        for a, L in ((lo, n), (lo + 40, 120), (200, 90)):
            score = int(score_end(queries[qi], codes[a:a + L], s.matrix, s.gap_open,
                                  s.gap_extend, LOCAL)[0])
            items.append((qi, a, L, span_bound(queries[qi], s, max(score, 1))))
    items = np.array(items, np.int64)
    emu = EmulatedCupy(queries[0], s, flag_at=10**9)
    emu.queries = [queries[i] for i in items[:, 0].tolist()]     # a query per window
    gw.clear_cache()
    with emulated(emu, lambda f, names, defines=(): SimpleNamespace(get_function=emu.kernel)):
        try:
            dev = gw.resident([codes])
            got = gw.window_ends_many(dev, queries, s, items)
        finally:
            gw.clear_cache()
    want = np.array([score_end(queries[i], codes[a:a + n], s.matrix, s.gap_open, s.gap_extend,
                               LOCAL) for i, a, n, _ in items.tolist()], np.int64)
    assert np.array_equal(got, want)
    assert any(n > span + gw.ENDS_EXTRA for _, _, n, span in items.tolist())   # cut windows


def test_one_off_window_layouts_never_push_out_the_shared_one():
    """The kept window layouts of a resident reference: layouts of one-off windows
    (writable arrays, as a read's seams) go first when more are kept than LAYOUTS_KEPT, so
    the layout of read-only windows every read shares stays (emulated device)."""
    with _emulated_windows(65) as e:
        gw, s, q, rng = e.gw, e.s, e.q, e.rng
        dev = gw.resident([e.codes])
        shared_lo, shared_len = np.arange(0, 11_000, 1_000), np.full(11, 1_000)
        for a in (shared_lo, shared_len):
            a.setflags(write=False)
        gw.window_scores(dev, q, s, shared_lo, shared_len)
        for k in range(2 * gw.LAYOUTS_KEPT):          # one-off windows, each new
            lo = rng.integers(0, 11_000, 5)
            gw.window_scores(dev, q, s, lo, np.minimum(300 + k, len(e.codes) - lo))
        assert len(dev.layouts) == gw.LAYOUTS_KEPT
        assert any(lay.arrays[0] is shared_lo for lay in dev.layouts)


def _windows_plumbing(gw, emu, q, s, codes, rng, mode, locate_encoded):
    """The body of test_gpu_windows_plumbing_on_an_emulated_device, on ``emu``."""
    dev = gw.resident([codes])
    lo = rng.integers(0, 11_000, 9)
    length = np.minimum(rng.integers(0, 3_000, 9), len(codes) - lo)
    want = np.array([score_end(q, codes[a:a + n], s.matrix, s.gap_open, s.gap_extend, LOCAL)
                     for a, n in zip(lo, length)], np.int64)
    for keep in (True, True, False):   # the second call reuses the kept layout
        cells, flagged, _ = gw.window_ends(dev, q, s, lo, length, keep_layout=keep)
        assert np.array_equal(cells, want) and len(flagged) == 0
    assert len(dev.layouts) == 1
    scores, flagged, _ = gw.window_scores(dev, q, s, lo, length, query=gw.DeviceQuery(q, s))
    assert np.array_equal(scores, want[:, 0])
    emu.flag_at = int(np.sort(want[:, 0])[-3])   # the three best windows come back flagged
    scores, flagged, _ = gw.window_scores(dev, q, s, lo, length)
    assert flagged.tolist() == sorted(np.flatnonzero(want[:, 0] >= emu.flag_at).tolist())
    # best_ends: the windows tied at the best score get their ends (found on sub-windows
    # by the pick and ends kernels), the others none; none at all once flagged
    emu.flag_at = 10**9
    same = np.r_[lo, 6_900, 6_880]                   # two windows tie: both hold the hit
    same_len = np.r_[length, 400, 450]
    exact = np.array([score_end(q, codes[a:a + n], s.matrix, s.gap_open, s.gap_extend, LOCAL)
                      for a, n in zip(same, same_len)], np.int64)
    cells, flagged, _ = gw.window_cells(dev, q, s, same, same_len, best_ends=True)
    tied = exact[:, 0] == exact[:, 0].max()
    assert np.array_equal(cells[:, 0], exact[:, 0]) and len(flagged) == 0
    assert tied.sum() == 2 and np.array_equal(cells[tied], exact[tied])
    assert (cells[~tied, 1:] == -1).all()
    emu.flag_at = int(exact[:, 0].max())
    cells, flagged, _ = gw.window_cells(dev, q, s, same, same_len, best_ends=True)
    assert len(flagged) and (cells[:, 1:] == -1).all()
    emu.flag_at = 10**9
    emu.launches.clear()
    with gpu_windows_as(gw):
        for top in (1, 2):
            got = locate_encoded(q, ["r"], [codes], s, top=top, mode=mode, backend="cuda",
                                 strand="plus")   # the emulated kernel knows this query
            exp = locate_encoded(q, ["r"], [codes], s, top=top, mode=mode, method="dp",
                                 backend="cpu", strand="plus")
            got, exp = ([got], [exp]) if top == 1 else (got, exp)
            assert [key(h) for h in got] == [key(h) for h in exp]
    kinds = {k for k, _ in emu.launches}
    assert {"pick", "ends"} <= kinds   # the best windows' ends came with the scores
    assert "ypack" in kinds   # scores from packed columns (checked by the emulated kernel)
    gw.clear_cache()
    emu.no_room_for = np.uint16   # no room for packed columns: the reference is read
    emu.launches.clear()
    dev = gw.resident([codes])
    cells, flagged, _ = gw.window_cells(dev, q, s, same, same_len)
    assert np.array_equal(cells[:, 0], exact[:, 0]) and len(flagged) == 0
    assert "ypack" not in {k for k, _ in emu.launches}


def test_read_only_memo():
    """Values from read-only arrays are remembered (most recently used kept); writeable
    arrays are computed every time."""
    from warpalign._backends import ReadOnlyMemo

    memo, calls = ReadOnlyMemo(2), []

    def compute(a):
        calls.append(1)
        return int(a.sum())

    ro = [np.arange(5 + k, dtype=np.uint8) for k in range(3)]
    for a in ro:
        a.setflags(write=False)
    rw = np.arange(5, dtype=np.uint8)
    assert memo.get([rw], None, lambda: compute(rw)) == 10
    assert memo.get([rw], None, lambda: compute(rw)) == 10 and len(calls) == 2
    assert memo.get([ro[0]], "x", lambda: compute(ro[0])) == 10 and len(calls) == 3
    assert memo.get([ro[0]], "x", lambda: compute(ro[0])) == 10 and len(calls) == 3
    assert memo.get([ro[0]], "y", lambda: compute(ro[0])) == 10 and len(calls) == 4
    memo.get([ro[1]], None, lambda: compute(ro[1]))          # evicts the least recent ("x")
    assert len(calls) == 5
    memo.get([ro[0]], "y", lambda: compute(ro[0]))           # still kept
    memo.get([ro[0]], "x", lambda: compute(ro[0]))           # recomputed
    assert len(calls) == 6
    memo.clear()
    memo.get([ro[0]], "y", lambda: compute(ro[0]))
    assert len(calls) == 7
