"""GPU long-pair kernel (issue 6 item 2): every pass equals its exact CPU counterpart.

The staged traceback (``long.Staged``: special rows, strips between them, segments) is
run with special rows every 1,024 or 2,048 query rows, so pairs of 10^4-10^5 cross tens
of them; its score, start and end must be the CPU ``align``'s and its path must rescore to
the score (the path itself may be another optimal one). Cases: related pairs, gaps longer
than the special-row spacing in either sequence (crosspoints inside a vertical gap),
tandem repeats and one-letter runs (ties between many optimal alignments), linear and
affine gaps, BLOSUM62, 16-bit profile entries.

Every test is cuda-marked and skips where no CUDA device answers. Oracles: ``score_end``
(``_backends/cpu/pairwise.py``: score and end cell under DESIGN.md's tie rule),
``cpu.traceback.anchored_start`` and ``cpu.traceback.last_row`` (the reverse and
Myers–Miller passes), and the CPU ``align`` for whole alignments (score, coordinates, CIGAR; the CIGAR
is also rescored). Inputs: lengths 0, 1, 31, 32, 33, the stripe height (1,024) and the
progress granularity (128 columns) +-1, several stripes, 10^4-10^5 letters, near-identical
pairs (substitutions and indels), tandem repeats and one-letter runs (many ties), linear
gaps, zero gaps, protein BLOSUM62, and scores that need 16-bit profile entries.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from warpalign import Scoring, align
from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from warpalign.errors import BackendUnavailable

pytestmark = pytest.mark.cuda
align_mod = importlib.import_module("warpalign.align")   # the module (the package exports the function)

AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)     # paper 004
LINEAR = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=8)     # paper 004, constant
PAPER000 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
ZERO_GAP = Scoring(match=1, mismatch=-1, gap_open=0, gap_extend=0)
WIDE = Scoring(match=200, mismatch=-90, gap_open=70, gap_extend=9)   # S + go needs 16 bits
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
ALGOS = ["local", "global", "semiglobal"]
EDGES = [0, 1, 31, 32, 33, 127, 128, 129, 1023, 1024, 1025, 2049]


@pytest.fixture(scope="module")
def gpu():
    try:
        from warpalign._backends.cuda import long as gpu_long
        gpu_long.device_name()
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA device: {exc}")
    return gpu_long


def related(rng, a, sub=0.08, indels=8, alphabet=4):
    b = a.copy()
    flip = rng.random(len(b)) < sub
    b[flip] = (b[flip] + rng.integers(1, alphabet, int(flip.sum()))) % alphabet
    b = list(b)
    for _ in range(indels):
        at, size = int(rng.integers(0, len(b) + 1)), int(rng.integers(1, 7))
        if rng.random() < 0.5:
            del b[at:at + size]
        else:
            b[at:at] = list(rng.integers(0, alphabet, size))
    return np.asarray(b, np.uint8)


def check(gpu, q, t, s, algorithm):
    code = ALGORITHM_CODES[algorithm]
    got = gpu.LongPair(q, t, s).score_end(code)
    want = tuple(int(v) for v in score_end(q, t, s.matrix, s.gap_open, s.gap_extend, code))
    assert got == want, f"{algorithm} m={len(q)} n={len(t)}: gpu {got} cpu {want}"
    return got


@pytest.mark.parametrize("algorithm", ALGOS)
def test_edge_lengths(gpu, algorithm):
    rng = np.random.default_rng(6)
    for m in EDGES:
        for n in EDGES:
            if m * n > 1_500_000:
                continue
            q = rng.integers(0, 4, m).astype(np.uint8)
            t = rng.integers(0, 4, n).astype(np.uint8)
            check(gpu, q, t, AFFINE, algorithm)


@pytest.mark.parametrize("lane_rows", [32, 16, 8, 4])
def test_every_lane_rows(gpu, lane_rows):
    """Each stripe height (long.cu's R: 32 R rows per warp) gives the CPU's score and end,
    the anchored start, and the last row; partial last stripes of every height."""
    rng = np.random.default_rng(60 + lane_rows)
    stripe = 32 * lane_rows
    for m in (1, stripe - 1, stripe, stripe + 1, 3 * stripe + 5, 2500):
        a = rng.integers(0, 4, m).astype(np.uint8)
        b = related(rng, a) if m > 50 else rng.integers(0, 4, 40).astype(np.uint8)
        b = np.concatenate([rng.integers(0, 4, 90).astype(np.uint8), b])
        for s, algorithm in ((AFFINE, "local"), (LINEAR, "global"), (WIDE, "semiglobal"),
                             (BLOSUM, "local")):
            if s is BLOSUM:
                a, b = a % 20, b % 20
            code = ALGORITHM_CODES[algorithm]
            pair = gpu.LongPair(a, b, s)
            pair.fixed_lane_rows = lane_rows
            assert pair.lane_rows(len(a)) == lane_rows
            got = pair.score_end(code)
            want = tuple(int(v) for v in score_end(a, b, s.matrix, s.gap_open, s.gap_extend, code))
            assert got == want, f"R={lane_rows} {algorithm} m={m}: gpu {got} cpu {want}"
            if algorithm == "local" and want[0] > 0:
                from warpalign._backends.cpu.traceback import anchored_start
                ref = anchored_start(a, want[1], b, want[2], s.matrix, s.gap_open, s.gap_extend,
                                     want[0], False)
                assert pair.anchored_start(want[1], want[2], want[0], False) == tuple(map(int, ref))


def test_lane_rows_policy(gpu):
    """Whole long pairs keep 32 rows per lane; short passes (a strip of 16,384 rows, a
    1 M slice) take 16."""
    import cupy
    pair = gpu.LongPair(np.zeros(8, np.uint8), np.zeros(8, np.uint8), AFFINE)
    sms = cupy.cuda.Device().attributes["MultiProcessorCount"]   # (the pair's device)
    many = gpu.MANY_STRIPES * sms * gpu.ROWS
    assert pair.lane_rows(4_600_000) == 32
    assert pair.lane_rows(many) == 32
    assert pair.lane_rows(many - gpu.ROWS) == 16
    assert pair.lane_rows(16_384) == 16
    pair.fixed_lane_rows = 8
    assert pair.lane_rows(4_600_000) == 8
    with pytest.raises(ValueError, match="lane_rows"):
        pair.launch(pair.q, pair.t, gpu.MODE_LOCAL, lane_rows=5)


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, PAPER000, ZERO_GAP, WIDE],
                         ids=["affine", "linear", "paper000", "zero_gap", "wide16"])
def test_related_pairs(gpu, scoring, algorithm):
    rng = np.random.default_rng(7)
    for m in (700, 3000, 5121):
        a = rng.integers(0, 4, m).astype(np.uint8)
        b = related(rng, a)
        check(gpu, a, b, scoring, algorithm)
        check(gpu, b, a, scoring, algorithm)
        # the related part in the middle of unrelated flanks (a local optimum inside)
        flank = rng.integers(0, 4, 1500).astype(np.uint8)
        check(gpu, np.concatenate([flank, a, flank[::-1]]), b, scoring, algorithm)


@pytest.mark.parametrize("algorithm", ALGOS)
def test_repeats_and_ties(gpu, algorithm):
    rng = np.random.default_rng(8)
    unit = rng.integers(0, 4, 7).astype(np.uint8)
    rep = np.tile(unit, 400)
    for q, t in [(np.zeros(1500, np.uint8), np.zeros(2100, np.uint8)),
                 (rep, rep[3:]), (rep[:1030], rep),
                 (np.tile(np.array([0, 1], np.uint8), 700), np.tile(np.array([1, 0], np.uint8), 900))]:
        for s in (AFFINE, LINEAR, ZERO_GAP):
            check(gpu, q, t, s, algorithm)


@pytest.mark.parametrize("algorithm", ALGOS)
def test_protein(gpu, algorithm):
    rng = np.random.default_rng(9)
    k = BLOSUM.matrix.shape[0]
    for m, n in [(1, 1), (33, 1025), (1025, 33), (2500, 3100)]:
        q = rng.integers(0, k, m).astype(np.uint8)
        t = related(rng, q, sub=0.3, alphabet=20)[: max(n, 1)] if m == n else \
            rng.integers(0, k, n).astype(np.uint8)
        check(gpu, q, t, BLOSUM, algorithm)
    a = rng.integers(0, 20, 3000).astype(np.uint8)
    check(gpu, a, related(rng, a, sub=0.25, alphabet=20), BLOSUM, algorithm)


def test_long_pairs(gpu):
    rng = np.random.default_rng(10)
    a = rng.integers(0, 4, 100_000).astype(np.uint8)
    b = related(rng, a[20_000:50_000], sub=0.05, indels=40)
    check(gpu, a, b, AFFINE, "local")
    check(gpu, b, a, AFFINE, "semiglobal")
    c = related(rng, a[:20_000], sub=0.02, indels=20)
    check(gpu, a[:20_000], c, LINEAR, "global")
    check(gpu, a[:20_000], c, AFFINE, "local")


@pytest.mark.parametrize("full_query", [False, True])
def test_anchored_start(gpu, full_query):
    from warpalign._backends.cpu.traceback import anchored_start
    rng = np.random.default_rng(11)
    for m in (1, 40, 1024, 2600):
        a = rng.integers(0, 4, m).astype(np.uint8)
        b = related(rng, a)
        if b.size == 0:
            continue
        code = ALGORITHM_CODES["semiglobal" if full_query else "local"]
        s, qe, te = (int(v) for v in score_end(a, b, AFFINE.matrix, 8, 1, code))
        if qe == 0 or te == 0:
            continue
        want = tuple(int(v) for v in anchored_start(a, qe, b, te, AFFINE.matrix, 8, 1, s, full_query))
        got = gpu.LongPair(a, b, AFFINE).anchored_start(qe, te, s, full_query)
        assert got == want


@pytest.mark.parametrize("gaps", [(False, False), (True, False), (False, True), (True, True)])
def test_myers_miller_halves(gpu, gaps):
    from warpalign._backends.cpu.traceback import last_row
    rng = np.random.default_rng(12)
    a = rng.integers(0, 4, 3000).astype(np.uint8)
    b = related(rng, a)
    start_in_gap, end_in_gap = gaps
    pair = gpu.LongPair(a, b, AFFINE)
    for qlo, qhi, tlo, thi in [(0, 3000, 0, b.size), (17, 2900, 5, 2950), (1000, 1003, 9, 2100)]:
        mid = (qhi - qlo) // 2
        got = pair.halves(qlo, qhi, mid, tlo, thi, start_in_gap, end_in_gap)
        nb = thi - tlo
        hf, ff, hr, fr = (np.empty(nb + 1, np.int64) for _ in range(4))
        last_row(a, qlo, 1, mid, b, tlo, 1, nb, AFFINE.matrix, 8, 1, 1 if start_in_gap else 8, hf, ff)
        last_row(a, qhi - 1, -1, qhi - qlo - mid, b, thi - 1, -1, nb, AFFINE.matrix, 8, 1,
                  1 if end_in_gap else 8, hr, fr)
        for g, w, what in zip(got, (hf, ff, hr, fr), ("hf", "ff", "hr", "fr")):
            np.testing.assert_array_equal(g, w, err_msg=what)


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, BLOSUM], ids=["affine", "linear", "blosum62"])
def test_full_alignment_equals_cpu(gpu, scoring, algorithm):
    """align_codes with the GPU passes as its engine (thresholds lowered; the unstaged
    route: anchored start pass, then Myers–Miller) = align_codes on the CPU, CIGAR included."""
    from warpalign._backends.cpu.traceback import path_score
    from warpalign.traceback import align_codes
    rng = np.random.default_rng(13)
    k = 20 if scoring is BLOSUM else 4
    a = rng.integers(0, k, 4000).astype(np.uint8)
    b = np.concatenate([rng.integers(0, k, 300).astype(np.uint8),
                        related(rng, a[500:3500], sub=0.1, indels=12, alphabet=k)])
    before = gpu.STATS["launches"]
    pair = gpu.LongPair(a, b, scoring, staged=False, min_cells=1 << 16)
    got = align_codes(a, b, scoring, algorithm, max_full_cells=1 << 16, engine=pair)
    assert gpu.STATS["launches"] > before + 2          # score/end, start, and MM splits on the GPU
    want = align_codes(a, b, scoring, algorithm, max_full_cells=1 << 16)   # MM on the CPU
    for key in ("score", "query_start", "query_end", "target_start", "target_end", "cigar"):
        assert getattr(got, key) == getattr(want, key), key
    ops = np.frombuffer(got.query_aligned.encode(), np.uint8)
    ops = np.where(ops == ord("-"), 2, np.where(np.frombuffer(got.target_aligned.encode(), np.uint8)
                                                == ord("-"), 1, 0)).astype(np.uint8)
    s, qe, te = path_score(ops, a, got.query_start, b, got.target_start, scoring.matrix,
                           scoring.gap_open, scoring.gap_extend)
    assert (int(s), int(qe), int(te)) == (got.score, got.query_end, got.target_end)


def test_score_and_end_modes_through_align(gpu):
    """A pair of at least LONG_PAIR_CELLS cells: align(backend="cuda") runs its passes on
    the long-pair engine; score and ends equal the CPU's."""
    rng = np.random.default_rng(14)
    a = rng.integers(0, 4, 9000).astype(np.uint8)
    b = related(rng, a)
    assert len(a) * len(b) >= align_mod.LONG_PAIR_CELLS
    sa, sb = AFFINE.alphabet.decode(a), AFFINE.alphabet.decode(b)
    for algorithm in ALGOS:
        for mode in ("score", "end"):
            before = gpu.STATS["launches"]
            got = align(sa, sb, AFFINE, mode=mode, algorithm=algorithm, backend="cuda")
            assert gpu.STATS["launches"] > before
            want = align(sa, sb, AFFINE, mode=mode, algorithm=algorithm, backend="cpu")
            assert (got.score, got.query_end, got.target_end) == \
                (want.score, want.query_end, want.target_end)


def test_unsupported_scoring_is_refused(gpu):
    huge = Scoring(match=40000, mismatch=-1, gap_open=1, gap_extend=1)
    assert gpu.score_width(huge) is None
    with pytest.raises(ValueError, match="cannot score this pair exactly"):
        gpu.LongPair(np.zeros(10, np.uint8), np.zeros(10, np.uint8), huge)


def _rescored(aln, a, b, scoring):
    from warpalign._backends.cpu.traceback import path_score
    qa = np.frombuffer(aln.query_aligned.encode(), np.uint8)
    ta = np.frombuffer(aln.target_aligned.encode(), np.uint8)
    ops = np.where(qa == ord("-"), 2, np.where(ta == ord("-"), 1, 0)).astype(np.uint8)
    s, qe, te = path_score(ops, a, aln.query_start, b, aln.target_start, scoring.matrix,
                           scoring.gap_open, scoring.gap_extend)
    return int(s), int(qe), int(te)


def staged_check(gpu, a, b, scoring, algorithm, rows=1024, min_strips=2):
    """The staged full alignment of (a, b) on the GPU against the CPU's align."""
    from warpalign.traceback import align_codes
    # special rows every `rows`; stage 3's splits on the GPU too
    pair = gpu.LongPair(a, b, scoring, stage_rows=rows, min_cells=1 << 16)
    assert pair.staged
    got = align_codes(a, b, scoring, algorithm, max_full_cells=1 << 16, engine=pair)
    want = align_codes(a, b, scoring, algorithm)
    key = ("score", "query_start", "query_end", "target_start", "target_end")
    assert tuple(getattr(got, k) for k in key) == tuple(getattr(want, k) for k in key)
    assert _rescored(got, a, b, scoring) == (got.score, got.query_end, got.target_end)
    run = pair.last_staged                                 # the staged route ran
    if got.score:
        assert pair.special == rows and run.strips >= min_strips
    return got, want, run


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, WIDE], ids=["affine", "linear", "wide16"])
def test_staged_related(gpu, scoring, algorithm):
    rng = np.random.default_rng(20)
    a = rng.integers(0, 4, 14_000).astype(np.uint8)
    b = related(rng, a, sub=0.06, indels=30)
    staged_check(gpu, a, b, scoring, algorithm, min_strips=10)
    flank = rng.integers(0, 4, 3000).astype(np.uint8)      # local optimum inside unrelated flanks
    c = np.concatenate([flank, b[3000:12_000], flank[::-1]])
    staged_check(gpu, a, c, scoring, algorithm, rows=2048, min_strips=4)


@pytest.mark.parametrize("algorithm", ALGOS)
@pytest.mark.parametrize("swap", [False, True], ids=["query_gap", "target_gap"])
def test_staged_long_gaps(gpu, algorithm, swap):
    """Gaps of 2,500 and 3,000 letters against special rows every 1,024: the path crosses
    special rows inside a vertical gap (or runs along one in a horizontal gap)."""
    rng = np.random.default_rng(21)
    a = rng.integers(0, 4, 16_000).astype(np.uint8)
    b = np.concatenate([a[:5000], a[8000:12_000], a[14_500:]])
    b = related(rng, b, sub=0.03, indels=10)
    if swap:
        a, b = b, a
    for scoring in (AFFINE, PAPER000):
        got, _, run = staged_check(gpu, a, b, scoring, algorithm, min_strips=10)
        if not swap and scoring is AFFINE:
            assert any(gap for _, _, gap in run.points), "no crosspoint inside a vertical gap"
        assert "I" in got.cigar if not swap else "D" in got.cigar


@pytest.mark.parametrize("algorithm", ALGOS)
def test_staged_repeats_and_ties(gpu, algorithm):
    rng = np.random.default_rng(22)
    unit = rng.integers(0, 4, 7).astype(np.uint8)
    rep = np.tile(unit, 1200)
    cases = [(rep, rep[3:7000]), (rep[:6000], related(rng, rep, sub=0.01, indels=6)),
             (np.zeros(6000, np.uint8), np.zeros(7100, np.uint8)),
             (np.tile(np.array([0, 1], np.uint8), 4000), np.tile(np.array([1, 0], np.uint8), 4500))]
    for a, b in cases:
        for scoring in (AFFINE, LINEAR, ZERO_GAP):
            staged_check(gpu, a, b, scoring, algorithm, min_strips=1)


def test_staged_protein_and_long(gpu):
    rng = np.random.default_rng(23)
    a = rng.integers(0, 20, 12_000).astype(np.uint8)
    for algorithm in ALGOS:
        staged_check(gpu, a, related(rng, a, sub=0.25, alphabet=20), BLOSUM, algorithm,
                     min_strips=8)
    q = rng.integers(0, 4, 100_000).astype(np.uint8)       # 10^5 query, a 12,000 local match
    t = np.concatenate([rng.integers(0, 4, 500).astype(np.uint8),
                        related(rng, q[61_000:73_000], sub=0.05, indels=20)])
    got, _, run = staged_check(gpu, q, t, AFFINE, "local", min_strips=10)
    assert got.query_start > 60_000 and run.strips < 40      # strips stop above the start


def test_staged_through_align(gpu):
    """align(backend="cuda", mode="full") takes the staged route for long pairs (the
    registry's long-pair row set, for this test, to a LongPair that records its calls)."""
    from types import SimpleNamespace

    from warpalign._backends.registry import using
    rng = np.random.default_rng(24)
    a = rng.integers(0, 4, 9000).astype(np.uint8)
    b = related(rng, a, indels=20)
    assert len(a) * len(b) >= align_mod.LONG_PAIR_CELLS
    sa, sb = AFFINE.alphabet.decode(a), AFFINE.alphabet.decode(b)
    pairs, calls = [], []

    class Recording(gpu.LongPair):
        def __init__(self, q, t, scoring):
            super().__init__(q, t, scoring, stage_rows=1024)
            pairs.append(self)

        def anchored_start(self, *args):
            calls.append(args)
            return super().anchored_start(*args)

    with using("align", "cuda", "long", SimpleNamespace(supported=gpu.supported,
                                                        LongPair=Recording)):
        got = align(sa, sb, AFFINE, backend="cuda")
    want = align(sa, sb, AFFINE, backend="cpu")
    assert len(pairs) == 1 and pairs[0].last_staged.strips >= 1
    assert not calls                                         # no whole-matrix start pass
    assert (got.score, got.query_start, got.query_end, got.target_start, got.target_end) == \
        (want.score, want.query_start, want.query_end, want.target_start, want.target_end)
    assert _rescored(got, a, b, AFFINE) == (got.score, got.query_end, got.target_end)


def test_a_stalled_wait_raises(gpu):
    """A warp that waits past its bound for the stripe above fails the pass with
    BackendError naming the kernel (a 1 ns bound: every real wait exceeds it)."""
    from warpalign.errors import BackendError
    rng = np.random.default_rng(12)
    a = rng.integers(0, 4, 20_000).astype(np.uint8)
    pair = gpu.LongPair(a, related(rng, a), AFFINE)
    pair.wait_timeout = 1e-9
    with pytest.raises(BackendError, match="long_pass"):
        pair.score_end(ALGORITHM_CODES["local"])
    check(gpu, a[:5000], related(rng, a[:5000]), AFFINE, "local")   # the default bound
