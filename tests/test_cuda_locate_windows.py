"""locate's GPU windows path (``_backends/cuda/windows.cu``): equal to the exact CPU methods.

Every test is cuda-marked and skips where no CUDA device answers. Oracles: the CPU
``dp`` method (exact scalar DP over each whole record) and the CPU ``windows`` method;
for the kernel alone, :func:`~warpalign._backends.cpu.pairwise.score_end` per window.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import chrx as chrx_slice
from reference import mutate_dna, packed_queries
from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign.locate import locate, locate_encoded, span_bound, window_bounds
from warpalign.scoring import Scoring

pytestmark = pytest.mark.cuda

PAPER_002 = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
PAPER_004 = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
LINEAR = Scoring(match=2, mismatch=-3, gap_open=3, gap_extend=3)
BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


@pytest.fixture(scope="module", autouse=True)
def gpu(windows_gpu):
    """The windows module (conftest's ``windows_gpu``), for every test here."""
    return windows_gpu


@pytest.fixture(scope="module")
def chrx() -> str:
    """300 kbp of C. elegans chrX (upper case)."""
    return chrx_slice(5_000_000, 5_300_000)


mutate = mutate_dna


def key(a) -> tuple:
    return (a.record, a.score, a.query_start, a.query_end, a.target_start, a.target_end, a.cigar)


def same_as_cpu(q, ref, s, top=1, mode="full", **kw):
    """GPU windows == CPU dp == CPU windows (every field of every hit); returns the hits."""
    got = locate(q, ref, s, top=top, mode=mode, backend="cuda", **kw)
    for method in ("dp", "windows"):
        want = locate(q, ref, s, top=top, mode=mode, method=method, backend="cpu",
                      **({} if method == "dp" else kw))
        if top == 1:
            assert key(got) == key(want), method
        else:
            assert [key(h) for h in got] == [key(h) for h in want], method
    return got


# ------------------------------------------------------------------------ the kernel


@pytest.mark.parametrize("s", [PAPER_002, PAPER_004, LINEAR, BLOSUM62],
                         ids=["002", "004", "linear", "blosum62"])
@pytest.mark.parametrize("m", [1, 7, 64, 65, 128, 200, 256, 257, 511, 512, 513, 700, 1100])
@pytest.mark.parametrize("packed", [True, False], ids=["packed", "reference"])
def test_window_scores_equal_score_end(gpu, s, m, packed):
    """Every window's 16-bit score equals the exact DP of that window: one band and
    several (m > 512), rows per lane 8 and 16, windows of length 0 and 1, overlapping
    windows, an odd number of windows (an item with one window); one band reads the packed
    columns (win_ypack) or the reference itself."""
    rng = np.random.default_rng(m)
    alpha = 20 if s is BLOSUM62 else 4
    ref = rng.integers(0, alpha, 20_000).astype(np.uint8)
    q = rng.integers(0, alpha, m).astype(np.uint8)
    for at in (100, 7_000, 15_000):            # near copies of the query
        piece = q.copy()
        flip = rng.random(m) < 0.1
        piece[flip] = rng.integers(0, alpha, int(flip.sum()))
        ref[at:at + m] = piece[:len(ref) - at]
    records = [ref[:12_000], ref[12_000:]]
    dev = gpu.DeviceReference(records)
    rec = rng.integers(0, 2, 41)
    length = rng.integers(0, 3_000, 41)
    length[:3] = (0, 1, 2)
    lo = np.array([rng.integers(0, len(records[r]) - min(n, len(records[r])) + 1)
                   for r, n in zip(rec, length)])
    length = np.minimum(length, [len(records[r]) - x for r, x in zip(rec, lo)])
    scores, flagged, _ = gpu.window_scores(dev, q, s, dev.starts[rec] + lo, length,
                                           packed_columns=packed)
    assert len(flagged) == 0
    for k in range(len(rec)):
        t = records[rec[k]][lo[k]:lo[k] + length[k]]
        want = int(score_end(q, t, s.matrix, s.gap_open, s.gap_extend, LOCAL)[0])
        assert scores[k] == want, (k, length[k])


@pytest.mark.parametrize("m", [1, 5, 64, 100, 256, 300, 513, 900])
def test_window_ends_equal_score_end(gpu, m):
    """The ends kernel gives each window's score and end cell by the tie rule (smallest
    reference end, then smallest query end), on repetitive sequences full of ties, one
    band and several."""
    s = PAPER_002 if m % 2 else LINEAR
    rng = np.random.default_rng(m + 1)
    unit = rng.integers(0, 4, int(rng.integers(1, 4))).astype(np.uint8)
    q = np.resize(unit, m)
    ref = np.concatenate([np.resize(unit, 3_000), rng.integers(0, 2, 3_000).astype(np.uint8),
                          rng.integers(0, 4, 3_000).astype(np.uint8)])
    ref[7_000:7_000 + min(m, 2_000)] = q[:2_000]
    dev = gpu.DeviceReference([ref])
    lo = rng.integers(0, 8_000, 25)
    length = np.minimum(rng.integers(0, 1_500, 25), len(ref) - lo)
    length[:2] = (0, 1)
    for rows in (None, 8, 16):   # the scores kernel's plan, and either forced (ENDS_ROWS)
        query = gpu.DeviceQuery(q, s, rows)
        cells, flagged, _ = gpu.window_ends(dev, q, s, lo, length, query=query)
        assert len(flagged) == 0
        for k in range(len(lo)):
            want = score_end(q, ref[lo[k]:lo[k] + length[k]], s.matrix, s.gap_open, s.gap_extend,
                             LOCAL)
            assert tuple(cells[k]) == tuple(int(v) for v in want), (rows, k, lo[k], length[k])


@pytest.mark.parametrize("m", [33, 128, 256, 700])
def test_window_ends_on_long_windows_with_reused_layouts(gpu, m):
    """The end cells come from the scores kernel (per step, not per cell) on windows as long
    as locate's (thousands of columns), paired with windows of other lengths (pad columns),
    with pad rows (m not a multiple of the band) and ties (repeats); a window layout reused
    from the cache (same windows) and a new one with as many windows give exact cells too,
    and the scores-only kernel agrees on every score."""
    s = PAPER_002 if m % 2 else PAPER_004
    rng = np.random.default_rng(m + 7)
    unit = rng.integers(0, 4, 5).astype(np.uint8)
    ref = np.concatenate([rng.integers(0, 4, 30_000).astype(np.uint8), np.resize(unit, 6_000),
                          rng.integers(0, 4, 24_000).astype(np.uint8)])
    q = ref[12_000:12_000 + m].copy()
    q[rng.random(m) < 0.08] = rng.integers(0, 4)
    q[m // 3:m // 3 + 20] = np.resize(unit, 20)
    ref[40_000:40_000 + m] = q
    ref.setflags(write=False)
    dev = gpu.DeviceReference([ref])
    for trial in range(3):
        if trial != 1:   # trial 1 repeats trial 0's windows: the cached layout
            lo = rng.integers(0, len(ref) - 6_000, 21)
            length = rng.integers(3_000, 6_000, 21)
            lo[:4] = (11_500, 28_000, 39_000, 33_000)
        cells, flagged, _ = gpu.window_ends(dev, q, s, lo, length)
        scores, _, _ = gpu.window_scores(dev, q, s, lo, length)
        assert len(flagged) == 0
        assert np.array_equal(scores, cells[:, 0])
        for k in range(len(lo)):
            want = score_end(q, ref[lo[k]:lo[k] + length[k]], s.matrix, s.gap_open,
                             s.gap_extend, LOCAL)
            assert tuple(cells[k]) == tuple(int(v) for v in want), (trial, k, lo[k], length[k])


@pytest.mark.parametrize("m", [20, 128, 256, 257, 600])
def test_best_windows_ends_come_with_the_scores(gpu, m):
    """window_cells(best_ends=True): the windows tied at the best score get their exact end
    cells from the device (win_pick's sub-windows scored by win_ends; several strips past
    256 query rows) with every score unchanged; the others keep -1. More tied
    windows than TIED_MAX: any TIED_MAX of them get ends. Linear gaps (gap_open ==
    gap_extend) and a repeat full of ties at the smallest end."""
    rng = np.random.default_rng(m + 11)
    unit = rng.integers(0, 4, 3).astype(np.uint8)
    ref = rng.integers(0, 4, 60_000).astype(np.uint8)
    ref[20_000:26_000] = np.resize(unit, 6_000)
    q = ref[5_000:5_000 + m].copy()
    q[rng.random(m) < 0.06] = rng.integers(0, 4)
    ref[41_000:41_000 + m] = q
    ref.setflags(write=False)
    dev = gpu.DeviceReference([ref])
    for s, copies in ((PAPER_002, 2), (LINEAR, 2), (PAPER_004, gpu.TIED_MAX + 2)):
        # windows holding the hit at 41,000 (`copies` of them, shifted), and random ones
        lo = np.r_[41_000 - 300 - 7 * np.arange(copies), rng.integers(0, 56_000, 15)]
        length = np.r_[np.full(copies, m + 700), rng.integers(500, 4_000, 15)]
        length = np.minimum(length, len(ref) - lo)
        exact = np.array([score_end(q, ref[a:a + n], s.matrix, s.gap_open, s.gap_extend,
                                    LOCAL) for a, n in zip(lo, length)], np.int64)
        cells, flagged, _ = gpu.window_cells(dev, q, s, lo, length, best_ends=True)
        assert len(flagged) == 0 and np.array_equal(cells[:, 0], exact[:, 0])
        tied = exact[:, 0] == exact[:, 0].max()
        known = cells[:, 1] >= 0
        assert known.sum() == min(tied.sum(), gpu.TIED_MAX) and not (known & ~tied).any()
        assert np.array_equal(cells[known], exact[known]), s
        assert (cells[~known, 1:] == -1).all()
    q = np.resize(unit, m)                  # ties everywhere in the repeat
    lo = np.array([19_000, 21_000, 30_000])
    length = np.array([6_000, 3_000, 2_000])
    exact = np.array([score_end(q, ref[a:a + n], PAPER_002.matrix, 5, 1, LOCAL)
                      for a, n in zip(lo, length)], np.int64)
    cells, _, _ = gpu.window_cells(dev, q, PAPER_002, lo, length, best_ends=True)
    tied = exact[:, 0] == exact[:, 0].max()
    assert np.array_equal(cells[tied], exact[tied])


def test_saturation_is_flagged_and_rescored(gpu):
    """A 400-symbol perfect match at match 100 scores 40,000 (> int16): the window is
    flagged, and locate rescores it exactly (score and ends equal the CPU)."""
    s = Scoring(match=100, mismatch=-100, gap_open=200, gap_extend=100)
    rng = np.random.default_rng(4)
    ref = rng.integers(0, 4, 30_000).astype(np.uint8)
    q = ref[12_345:12_745].copy()
    dev = gpu.DeviceReference([ref])
    scores, flagged, _ = gpu.window_scores(dev, q, s, np.array([0, 12_000, 20_000]),
                                           np.array([10_000, 1_000, 10_000]))
    assert flagged.tolist() == [1]
    assert scores[0] < 32767 and scores[2] < 32767
    text = "".join("ACGT"[c] for c in ref)
    hit = same_as_cpu("".join("ACGT"[c] for c in q), text, s)
    assert (hit.score, hit.target_start, hit.target_end) == (40_000, 12_345, 12_745)
    hits = same_as_cpu("".join("ACGT"[c] for c in q[:300]), text, s, top=3)
    assert hits[0].score == 30_000


# ------------------------------------------------------------------------ locate


@pytest.mark.parametrize("s", [PAPER_002, PAPER_004, LINEAR], ids=["002", "004", "linear"])
def test_mutated_chrx_queries(chrx, s):
    rng = np.random.default_rng(21)
    for m, sub, indels in ((128, 0.05, 0), (256, 0.05, 2), (256, 0.15, 4), (600, 0.1, 3)):
        at = int(rng.integers(0, len(chrx) - m))
        q = mutate(rng, chrx[at:at + m], sub, indels)
        hit = same_as_cpu(q, chrx, s)
        assert abs(hit.target_start - at) < 50
        same_as_cpu(q, chrx, s, mode="end")
        assert locate(q, chrx, s, mode="score", backend="cuda").score == hit.score


def test_query_equal_to_a_window_and_seams(chrx):
    """A query equal to one GPU window, and queries across seams of small windows."""
    s = PAPER_002
    ref = chrx[:60_000]
    rng = np.random.default_rng(8)
    q = ref[10_000:10_300]
    span = span_bound(s.encode(q), s)
    width = span + 37
    hit = same_as_cpu(q, ref, s, window=span)   # windows of exactly span symbols
    assert (hit.score, hit.target_start) == (300, 10_000)
    bounds = window_bounds(len(ref), width, span)
    for lo in bounds[5:40:7, 0]:               # a window seam inside each query
        at = int(lo) - 150 + int(rng.integers(-20, 20))
        q = mutate(rng, ref[at:at + 300], 0.04, 1)
        same_as_cpu(q, ref, s, window=width)
        same_as_cpu(q, ref, s, window=width, top=3)


def test_repeats_tie_to_smallest_end():
    s = PAPER_004
    rng = np.random.default_rng(3)
    unit = "".join(rng.choice(list("ACGT"), 150))
    filler = ["".join(rng.choice(list("ACGT"), n)) for n in (5_000, 333, 8_000, 4_000)]
    ref = filler[0] + unit + filler[1] + unit + filler[2] + unit + unit + filler[3]
    hits = same_as_cpu(unit, ref, s, top=3)
    assert [h.target_start for h in hits] == [5_000, 5_483, 13_633]
    same_as_cpu(unit, ref, s, window=span_bound(s.encode(unit), s) + 3)


def test_multi_record_and_top3_full(chrx):
    s = PAPER_002
    rng = np.random.default_rng(13)
    unit = mutate(rng, chrx[200_000:200_256], 0.03, 1)
    records = {"a": chrx[:50_000], "b": chrx[190_000:210_000], "c": chrx[100_000:101_000] + unit,
               "d": "", "e": chrx[199_000:205_000]}
    hits = same_as_cpu(unit, records, s, top=3)
    assert [h.record for h in hits] == ["c", "b", "e"]


def test_query_longer_than_reference(chrx):
    s = PAPER_004
    rng = np.random.default_rng(5)
    ref = chrx[1_000:1_200]
    q = mutate(rng, chrx[700:1_500], 0.05, 2)
    hit = same_as_cpu(q, ref, s)
    assert hit.score > 300
    same_as_cpu(q, {"x": ref, "y": ref[:50]}, s, top=3)


def test_protein_blosum62():
    rng = np.random.default_rng(6)
    letters = list("ACDEFGHIKLMNPQRSTVWY")
    ref = {"p1": "".join(rng.choice(letters, 30_000)), "p2": "".join(rng.choice(letters, 9_000))}
    core = ref["p2"][4_000:4_300]
    q = "BZX" + core[:100] + "W" + core[100:] + "XXU"
    hits = same_as_cpu(q, ref, BLOSUM62, top=3)
    assert hits[0].record == "p2"


def test_gap_open_equal_gap_extend(chrx):
    s = Scoring(match=5, mismatch=-3, gap_open=2, gap_extend=2)
    rng = np.random.default_rng(9)
    q = mutate(rng, chrx[150_000:150_200], 0.1, 3)
    same_as_cpu(q, chrx[100_000:200_000], s, top=2)


def test_resident_reference_cache(gpu):
    """Read-only records upload once and are reused; writeable records are not cached."""
    s = PAPER_002
    rng = np.random.default_rng(1)
    ref = rng.integers(0, 4, 50_000).astype(np.uint8)
    gpu.clear_cache()
    ro = ref.copy()
    ro.setflags(write=False)
    assert gpu.resident([ro]) is gpu.resident([ro])
    assert gpu.resident([ref]) is not gpu.resident([ref])
    q = ref[20_000:20_200].copy()
    a = locate_encoded(q, ["r"], [ro], s, mode="end", backend="cuda")
    b = locate_encoded(q, ["r"], [ref], s, mode="end", method="dp", backend="cpu")
    assert (a.score, a.query_end, a.target_end) == (b.score, b.query_end, b.target_end) == (
        200, 200, 20_200)


@pytest.mark.parametrize("s", [PAPER_002, PAPER_004, BLOSUM62], ids=["002", "004", "blosum62"])
@pytest.mark.parametrize("m", [8, 40, 64, 65, 100, 150, 200, 256])
def test_packed_queries_equal_each_alone(gpu, s, m):
    """Several queries in one launch (win_s16's heads): every query's scores equal its own
    launch's and the exact DP per window; the best windows' ends found with them are the
    exact cells; read through the packed columns and the reference."""
    from warpalign._backends.cuda.window_plan import pack_capacity
    from warpalign.spans import query_score_bound
    rng = np.random.default_rng(900 + m)
    alpha = 20 if s is BLOSUM62 else 4
    ref = rng.integers(0, alpha, 30_000).astype(np.uint8)
    dev = gpu.resident([ref])
    lo = np.r_[np.arange(0, 28_000, 1_700), 29_990, 5]
    length = np.minimum(np.r_[np.full(len(lo) - 2, 2_000), 10, 0], len(ref) - lo)
    for count in sorted({2, pack_capacity(m)}):
        if count > pack_capacity(m):
            continue
        # one score bound, as locate packs them (BLOSUM62: rotations of one near copy)
        qs = packed_queries(rng, ref, m, count, protein=s is BLOSUM62,
                            n_code=None if s is BLOSUM62 else int(s.encode("N")[0]))
        sq = {query_score_bound(q, s) for q in qs}
        assert len(sq) == 1
        pack = gpu.DevicePack(qs, s, sq=sq.pop())
        for columns in (True, False):
            cells, flagged, _ = gpu.window_cells_packed(dev, pack, s, lo, length,
                                                        best_ends=True, packed_columns=columns)
            for q, c, f in zip(qs, cells, flagged):
                exact = np.array([score_end(q, ref[a:a + n], s.matrix, s.gap_open,
                                            s.gap_extend, LOCAL) for a, n in zip(lo, length)])
                alone, _, _ = gpu.window_cells(dev, q, s, lo, length, best_ends=True,
                                               packed_columns=columns)
                assert len(f) == 0
                assert np.array_equal(c[:, 0], exact[:, 0])
                assert np.array_equal(c[:, 0], alone[:, 0])
                known = c[:, 1] >= 0          # the tied windows the device picked
                assert np.array_equal(c[known], exact[known])
                if exact[:, 0].max() > 0 and s.gap_extend > 0:
                    assert known.any() and (c[known, 0] == exact[:, 0].max()).all()
