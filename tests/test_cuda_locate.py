"""GPU kernels of locate's "scan", "scan1", "antidiagonal", "blocked" (issue 6).

Each method on the GPU (:func:`~warpalign._backends.cuda.scan.score_end_method_gpu`)
equals the CPU kernel (:func:`~warpalign._backends.cpu.scan.score_end_method`, the
specification: score, both ends and, for "scan", the count of wide rows) and the exact
scalar DP (:func:`~warpalign._backends.cpu.pairwise.score_end`) on: mutated queries cut
from C. elegans chrX, a query equal to a window, repeats (ties), a query longer than the
reference, queries across the seams of the windows and of the row scans' tiles (also
gaps longer than a tile), BLOSUM62 protein, linear gaps, gap_extend = 0, forced narrow to
wide switching (a real int16 overflow and low narrow limits), random small pairs; and
``locate(..., backend="cuda", top=3, mode="full")`` equals the CPU on multi-record input.
Every test is cuda-marked and skips where no CUDA device answers.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import chrx as chrx_slice
from conftest import skip_without_device
from reference import mutate_dna, protein_read, related_case
from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign._backends.cpu.scan import NARROW_LIMIT, score_end_method
from warpalign.locate import default_window, locate, span_bound, window_bounds
from warpalign.scoring import Scoring

pytestmark = pytest.mark.cuda

PAPER_002 = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
PAPER_004 = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
LINEAR = Scoring(match=5, mismatch=-3, gap_open=2, gap_extend=2)
FREE_EXTEND = Scoring(match=2, mismatch=-3, gap_open=4, gap_extend=0)
BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
KERNELS = ("scan", "scan1", "antidiagonal", "blocked")


@pytest.fixture(scope="module", autouse=True)
def cuda():
    from warpalign._backends.cuda.scan import check_device
    skip_without_device(check_device)


@pytest.fixture(scope="module")
def chrx() -> str:
    """200 kbp of C. elegans chrX (upper case)."""
    return chrx_slice(5_000_000, 5_200_000)


def gpu(method, q, t, s, limit=NARROW_LIMIT, packed=True):
    from warpalign._backends.cuda.scan import score_end_method_gpu
    return score_end_method_gpu(method, q, t, s, limit=limit, packed=packed)


def check(q, t, s, methods=KERNELS, limit=NARROW_LIMIT, packed=True):
    """Every method on the GPU equals the CPU kernel and the DP; returns the DP's cell."""
    q = s.encode(q) if isinstance(q, str) else q
    t = s.encode(t) if isinstance(t, str) else t
    want = tuple(int(v) for v in score_end(q, t, s.matrix, s.gap_open, s.gap_extend, LOCAL))
    for method in methods:
        got = gpu(method, q, t, s, limit, packed)
        cpu = score_end_method(method, q, t, s, limit=limit)
        assert got[:3] == want, (method, len(q), len(t), got, want)
        assert got == cpu, (method, "wide rows", got, cpu)
    return want


def random_dna(rng, n):
    return "".join(rng.choice(list("ACGT"), n))


mutate = mutate_dna


# ----------------------------------------------------------------------- C. elegans chrX


@pytest.mark.parametrize("s", [PAPER_002, PAPER_004, LINEAR], ids=["1/-2/5/1", "5/-3/8/1", "linear"])
def test_mutated_chrx_queries(chrx, s):
    rng = np.random.default_rng(2025)
    for length in (64, 128, 256):
        start = int(rng.integers(0, len(chrx) - length))
        q = mutate(rng, chrx[start:start + length], 0.08, 3)
        score, _, te = check(q, chrx, s)
        assert score > 0
        if length == 256:
            assert abs(te - (start + length)) < 40


def test_long_query_runs_in_several_strips(chrx):
    """1,100 query rows: five anti-diagonal strips and two blocked strips."""
    rng = np.random.default_rng(6)
    ref = chrx[:40_000]
    q = mutate(rng, ref[20_000:21_100], 0.1, 6)
    score, _, te = check(q, ref, PAPER_004)
    assert score > 1000 and abs(te - 21_100) < 60


def test_query_equal_to_a_window(chrx):
    ref = chrx[:30_000]
    q = ref[12_345:12_345 + 150]
    assert check(q, ref, PAPER_002) == (150, 150, 12_495)


def test_queries_across_window_and_tile_seams(chrx):
    """Queries ending on, straddling and starting at the seams of the windows the
    windowed kernels cut (the same bound as locate's) and of the row scans' tiles."""
    from warpalign._backends.cuda.scan import TILE
    s = PAPER_002
    ref = chrx[:20_000]
    codes = s.encode(ref)
    q0 = s.encode(ref[:120])
    span = span_bound(q0, s)
    bounds = window_bounds(len(codes), default_window(span, len(codes)), span)
    assert len(bounds) > 3
    seams = [int(x) for x in bounds[1:4, 0]] + [int(x) for x in bounds[1:4, 1]] + [TILE + 1, 3 * TILE]
    for seam in seams:
        for start in (seam - 120, seam - 60, seam - 119, seam, seam - 1):
            q = codes[start:start + 120]
            assert check(q, codes, s) == (120, 120, start + 120), (seam, start)


def test_gap_longer_than_a_tile():
    """The optimal alignment opens a 1,200-symbol reference gap across tiles (the row
    scans' carry looks back over more than one tile), at several offsets."""
    s = PAPER_004
    rng = np.random.default_rng(12)
    x, y = random_dna(rng, 300), random_dna(rng, 300)
    insert = random_dna(rng, 1200)
    for shift in (0, 500, 1023, 1700):
        ref = random_dna(rng, 100 + shift) + x + insert + y + random_dna(rng, 400)
        score, _, te = check(x + y, ref, s)
        # x or y alone scores at most 1,500; joined across the insert at least 1,793
        assert score >= 3000 - 8 - 1199 and abs(te - (shift + 1900)) < 60   # y's end


# ------------------------------------------------------------------------ constructed


def test_repeats_tie_to_the_smallest_end():
    s = PAPER_002
    rng = np.random.default_rng(7)
    unit = random_dna(rng, 80)
    ref = random_dna(rng, 300) + unit + random_dna(rng, 1500) + unit + random_dna(rng, 617) + unit
    assert check(unit, ref, s) == (80, 80, 380)
    homo = "A" * 2000                 # every diagonal ties: smallest end (row 50, column 50)
    assert check("A" * 50, homo, s) == (50, 50, 50)


def test_query_longer_than_reference():
    s = PAPER_004
    rng = np.random.default_rng(3)
    ref = random_dna(rng, 90)
    q = random_dna(rng, 400) + mutate(rng, ref, 0.05, 1) + random_dna(rng, 300)
    assert check(q, ref, s)[0] > 100


def test_protein_blosum62():
    ref, q = protein_read()
    assert check(q, ref, BLOSUM62)[0] > 300


def test_linear_gaps_and_free_extension():
    rng = np.random.default_rng(4)
    x, y = random_dna(rng, 30), random_dna(rng, 30)
    ref = random_dna(rng, 200) + x + random_dna(rng, 3000) + y + random_dna(rng, 200)
    assert span_bound(FREE_EXTEND.encode(x + y), FREE_EXTEND) is None   # one window
    assert check(x + y, ref, FREE_EXTEND) == (116, 60, 3260)
    check(mutate(rng, x + y, 0.1, 2), ref, LINEAR)


def test_empty_and_hopeless_inputs():
    s = PAPER_002
    for q, t in (("", "ACGT"), ("ACGT", ""), ("NNNN", "ACGTNN"), ("GGGG", "TTTT")):
        check(q, t, s)


# --------------------------------------------------------------------- word lengths

# "scan" between narrow rows: 16-bit DPX lanes (two columns per word) or one column per
# 32-bit register
LANES = pytest.mark.parametrize("packed", [True, False], ids=["dpx-lanes", "scalar"])


@LANES
def test_int16_overflow_switches_to_int32(packed):
    """7,000 matches x 5 = 35,000 > 32,767: "scan" goes wide exactly where the CPU does."""
    s = PAPER_004
    rng = np.random.default_rng(8)
    text = random_dna(rng, 7100)
    q, t = s.encode(text[50:7050]), s.encode(text)
    got = gpu("scan", q, t, s, packed=packed)
    assert got == (35_000, 7000, 7050, 7000 - 6554 + 1)
    assert got == score_end_method("scan", q, t, s)
    for method in ("scan1", "antidiagonal", "blocked"):
        assert gpu(method, q, t, s)[:3] == (35_000, 7000, 7050)


@LANES
def test_low_limits_switch_narrow_and_back(packed):
    s = PAPER_002
    rng = np.random.default_rng(8)
    unit = random_dna(rng, 60)
    ref = s.encode(random_dna(rng, 4000) + unit + random_dna(rng, 3000))
    q = s.encode(unit + random_dna(rng, 90))
    for limit in (12, 40, 255):
        got = gpu("scan", q, ref, s, limit, packed)
        assert got == score_end_method("scan", q, ref, s, limit=limit)
    assert 0 < gpu("scan", q, ref, s, 40, packed)[3] < len(q) - 40


def test_gaps_and_scores_past_int16_take_the_scalar_path():
    """gap_open or the matrix's most negative score beyond int16: narrow rows still store
    int16 (every H, F fits) but phase 1 runs in 32-bit registers; equal to the CPU."""
    rng = np.random.default_rng(67)
    text = random_dna(rng, 3000)
    q = PAPER_004.encode(text[700:900])
    t = PAPER_004.encode(text)
    for s in (Scoring(match=5, mismatch=-4, gap_open=40_000, gap_extend=2),
              Scoring(match=5, mismatch=-40_000, gap_open=10, gap_extend=1)):
        got = gpu("scan", q, t, s)
        assert got == score_end_method("scan", q, t, s) and got[0] == 1000


@LANES
def test_random_small_pairs(packed):
    rng = np.random.default_rng(66)
    schemes = [PAPER_002, PAPER_004, BLOSUM62, LINEAR, FREE_EXTEND]
    for trial in range(60):
        s = schemes[trial % len(schemes)]
        q, t = related_case(rng, 20 if s is BLOSUM62 else 4, trial, (1, 3000), 300, (1, 80))
        check(q, t, s, limit=(12, 40, NARROW_LIMIT)[trial % 3], packed=packed)


# -------------------------------------------------------------------------- locate


@pytest.mark.parametrize("method", KERNELS)
def test_locate_top3_full_equals_cpu(chrx, method):
    s = PAPER_004
    rng = np.random.default_rng(9)
    unit = mutate(rng, chrx[3_000:3_120], 0.1, 2)
    records = {"chr1": chrx[:30_000], "chr2": chrx[50_000:52_000] + unit + chrx[60_000:61_000],
               "chr3": "ACGT", "chr4": unit + chrx[70_000:70_500]}
    want = locate(unit, records, s, top=3, mode="full", method=method, backend="cpu")
    got = locate(unit, records, s, top=3, mode="full", method=method, backend="cuda")
    assert len(want) == 3 and got == want
    one = locate(unit, records, s, mode="end", method=method, backend="cuda")
    assert (one.score, one.query_end, one.target_end, one.record) == \
        (want[0].score, want[0].query_end, want[0].target_end, want[0].record)
