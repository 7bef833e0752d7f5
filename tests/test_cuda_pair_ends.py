"""End cells of local pair alignments by the word-wise pair kernel (issue 20).

``cuda.pair_ends.ends_wordwise`` (ww_kernel's ENDS form) against the exact CPU kernel
``cpu.pairwise.score_end``, tests/reference.py's DP (small pairs) and the traceback
engine's ``tb_end`` (``GpuTraceback.ends_flat``), all under DESIGN.md's tie rule; and
``cuda.pair_ends.score_ends_wordwise`` (the scoring kernels and the ENDS form in one
pass); ``score_pairs(mode="full")`` on the GPU, which takes its ends from there, against
the CPU backend. Inputs: random pairs of varied lengths (empty sides, m > n, m = 1), repeats
against themselves shifted and all-equal pairs (the best score in many cells of many
columns and rows), queries of several bands (m > 32 lanes x R rows), DNA linear (the
PRMT path, DNA=true) and affine, DNA with N (the table path), protein BLOSUM62 11/1,
16-bit lanes and 32-bit ones (pairs past the 16-bit threshold, scorings too large for
16 bits), rows per lane 16 / 24 / 32.

Every test is cuda-marked and skips where no CUDA device answers.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import concat
from reference import dp
from warpalign import Scoring, score_pairs
from warpalign._backends.cpu.pairwise import score_end

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("pairs_device")]

PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)    # DNA linear (PRMT path)
LINEAR = Scoring(match=1, mismatch=-3, gap_open=2, gap_extend=2)
AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)   # DNA affine (PRMT path)
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
#: 16-bit lanes whose threshold (32767 - 80 - 2 stored) a 600-letter identical pair passes:
#: those pairs run in 32-bit lanes (DNA linear and affine, PRMT path)
HIGH_LINEAR = Scoring(match=60, mismatch=-30, gap_open=20, gap_extend=20)
HIGH_AFFINE = Scoring(match=60, mismatch=-30, gap_open=50, gap_extend=10)
#: too large for 16-bit lanes at all (4 x 1000 + 800 > INT16_SMALL): every pair 32-bit
WIDE = Scoring(match=1000, mismatch=-500, gap_open=800, gap_extend=300)
SCORINGS = [PAPER, LINEAR, AFFINE, BLOSUM, HIGH_LINEAR, HIGH_AFFINE, WIDE]
IDS = ["paper", "linear", "affine", "blosum", "high-linear", "high-affine", "wide"]


def _letters(scoring) -> str:
    return "ACDEFGHIKLMNPQRSTVWY" if scoring is BLOSUM else "ACGT"


def _pairs(rng, scoring, count=160, top=700):
    """(query, target) strings: random, related (a mutated piece of the target), repeats
    against themselves shifted, all-equal, and the edge shapes."""
    letters = list(_letters(scoring))
    out = []
    for k in range(count):
        m, n = (int(v) for v in rng.integers(0, top, 2))
        t = "".join(rng.choice(letters, n))
        if k % 5 == 0 and n:
            a = int(rng.integers(0, n))
            piece = list(t[a:a + max(m, 1)])
            for i in np.flatnonzero(rng.random(len(piece)) < 0.1):
                piece[i] = letters[int(rng.integers(0, len(letters)))]
            q = "".join(piece)
        elif k % 5 == 1:
            unit = "".join(rng.choice(letters, int(rng.integers(1, 6))))
            q = (unit * (m // len(unit) + 1))[:m]
            t = (unit * (n // len(unit) + 2))[int(rng.integers(0, len(unit))):][:n]
        elif k % 5 == 2:
            q, t = letters[0] * m, letters[0] * n
        else:
            q = "".join(rng.choice(letters, m))
        out.append((q, t))
    a = letters[0]
    out += [("", "ACGT"[:3]), (a * 3, ""), ("", ""), (a, a * 40), (a * 40, a), (a, a),
            ("ACGT" * 300, "ACGT" * 20), ("ACGTACGT" * 80, "CGTACGTA" * 90),  # bands, m > n
            (a * 1100, a * 300), (a * 600, a * 600)]                         # 32-bit at HIGH_*
    if scoring is BLOSUM:
        out = [(q.replace("ACGT", "WKPD"), t.replace("ACGT", "WKPD")) for q, t in out]
    return out


def _codes(pairs, scoring):
    enc = scoring.alphabet.encode
    xc, xo = concat([enc(q) for q, _ in pairs])
    yc, yo = concat([enc(t) for _, t in pairs])
    return xc, xo, yc, yo


def _exact(pairs, scoring):
    enc = scoring.alphabet.encode
    return np.array([score_end(enc(q), enc(t), scoring.matrix, scoring.gap_open,
                               scoring.gap_extend, 0) for q, t in pairs], np.int64)


def _ends(pairs, scoring, scores, **kwargs):
    from warpalign._backends.cuda.pair_ends import ends_wordwise
    got, timings = ends_wordwise(*_codes(pairs, scoring), scoring, scores, **kwargs)
    assert got.dtype == np.int64 and got.shape == (len(pairs), 3)
    return got, timings


def _same(got, want, pairs):
    bad = np.flatnonzero((got != want).any(axis=1))
    assert bad.size == 0, (f"{bad.size}/{len(pairs)} differ, e.g. pair {bad[0]} (lengths "
                           f"{len(pairs[bad[0]][0])}, {len(pairs[bad[0]][1])}): kernel "
                           f"{got[bad[0]].tolist()}, exact {want[bad[0]].tolist()}")


@pytest.mark.parametrize("scoring", SCORINGS, ids=IDS)
def test_kernel_ends_equal_the_exact_ends(scoring):
    rng = np.random.default_rng(hash(scoring.gap_open * 7 + scoring.gap_extend) % 2 ** 32)
    pairs = _pairs(rng, scoring)
    want = _exact(pairs, scoring)
    got, timings = _ends(pairs, scoring, want[:, 0])
    _same(got, want, pairs)
    assert set(timings) == {"ends"}


@pytest.mark.parametrize("rows", [16, 24, 32])
@pytest.mark.parametrize("scoring", [PAPER, AFFINE], ids=["linear", "affine"])
def test_kernel_ends_any_rows_per_lane(scoring, rows):
    """The DNA path's rows per lane change the tiles (G, bands, pad rows), not the ends."""
    rng = np.random.default_rng(rows)
    pairs = _pairs(rng, scoring, count=80, top=1200)
    want = _exact(pairs, scoring)
    _same(_ends(pairs, scoring, want[:, 0], rows=rows)[0], want, pairs)


def test_kernel_ends_equal_the_reference_dp_and_tb_end():
    """Small pairs full of ties: the ends are tests/reference.py's and tb_end's."""
    from warpalign._backends.cuda.traceback import GpuTraceback
    rng = np.random.default_rng(21)
    for scoring in (PAPER, AFFINE, BLOSUM):
        pairs = _pairs(rng, scoring, count=60, top=40)[:60]
        enc = scoring.alphabet.encode
        want = np.array([dp(list(enc(q)), list(enc(t)), scoring.matrix.tolist(),
                            scoring.gap_open, scoring.gap_extend) for q, t in pairs], np.int64)
        got, _ = _ends(pairs, scoring, want[:, 0])
        _same(got, want, pairs)
        xc, xo, yc, yo = _codes(pairs, scoring)
        tb = GpuTraceback().ends_flat(xc, xo[:-1], np.diff(xo), yc, yo[:-1], np.diff(yo),
                                      scoring, 0)
        _same(got, tb, pairs)


def test_kernel_ends_dna_with_n_take_the_table_path():
    rng = np.random.default_rng(22)
    pairs = [(q.replace("A", "N", 3), t.replace("C", "N", 2))
             for q, t in _pairs(rng, AFFINE, count=60, top=300)]
    for scoring in (PAPER, AFFINE):
        want = _exact(pairs, scoring)
        _same(_ends(pairs, scoring, want[:, 0])[0], want, pairs)


def test_kernel_ends_of_device_codes_and_unwanted_pairs():
    """Codes already on the device are read in place; a pair given score 0 gets no end."""
    import cupy
    rng = np.random.default_rng(23)
    pairs = _pairs(rng, AFFINE, count=50, top=300)
    want = _exact(pairs, AFFINE)
    scores = want[:, 0].copy()
    scores[::3] = 0
    xc, xo, yc, yo = _codes(pairs, AFFINE)
    from warpalign._backends.cuda.pair_ends import ends_wordwise
    got, _ = ends_wordwise(cupy.asarray(xc), xo, cupy.asarray(yc), yo, AFFINE, scores)
    want[::3] = 0
    _same(got, want, pairs)


def test_kernel_ends_reject_a_score_that_is_not_the_best():
    rng = np.random.default_rng(24)
    pairs = [p for p in _pairs(rng, PAPER, count=20, top=200) if p[0] and p[1]]
    want = _exact(pairs, PAPER)
    k = int(np.flatnonzero(want[:, 0] > 2)[0])
    for delta in (1, -1):
        scores = want[:, 0].copy()
        scores[k] += delta
        with pytest.raises(ValueError, match=f"pair {k}: score {scores[k]} given"):
            _ends(pairs, PAPER, scores)
    with pytest.raises(ValueError, match="pairs"):
        _ends(pairs, PAPER, want[:-1, 0])


@pytest.mark.parametrize("scoring", [PAPER, AFFINE, BLOSUM, HIGH_LINEAR, WIDE],
                         ids=["paper", "affine", "blosum", "high-linear", "wide"])
def test_score_pairs_full_on_the_gpu_equals_the_cpu(scoring, monkeypatch):
    """score_pairs mode full on the GPU (local: the pair kernel's ends, no tb_end pass;
    without a threshold scores, ends and alignments chained on the device (the
    ``pairs_aligned`` row), a batch with saturated 16-bit pairs (HIGH_LINEAR) or jobs past
    the one pass taking the general route from the fused pass's read (saturated pairs
    rescored with their ends on the host); with a threshold, saturated pairs rescored,
    then ended in 32-bit lanes) equals the CPU backend."""
    from warpalign._backends.cuda import traceback as cuda_tb
    from warpalign._backends.cuda.pairs_full import score_align_wordwise
    from warpalign._backends.registry import using
    rng = np.random.default_rng(25)
    pairs = _pairs(rng, scoring, count=100, top=500)
    xs, ys = [q for q, _ in pairs], [t for _, t in pairs]
    calls, chained = [], []

    def aligned(*args, **kwargs):        # the real engine, counted
        calls.append(len(args[1]) - 1)
        got = score_align_wordwise(*args, **kwargs)
        chained.append(got[4] is not None)
        return got

    every = None
    saturates = scoring is HIGH_LINEAR
    with using("pairs_aligned", "cuda", "wordwise", aligned):
        for threshold in (None, 40):
            gpu = score_pairs(xs, ys, scoring, mode="full", threshold=threshold, backend="cuda")
            cpu = score_pairs(xs, ys, scoring, mode="full", threshold=threshold, backend="cpu")
            assert calls == [len(pairs)]       # the fused pass without a threshold only
            assert chained == [not saturates]
            assert gpu.scores.tolist() == cpu.scores.tolist()
            assert gpu.indices.tolist() == cpu.indices.tolist()
            assert gpu.alignments == cpu.alignments
            assert np.array_equal(gpu.alignments.identities, cpu.alignments.identities)
            # the one-DP pass's kernels count as "swa"; a threshold's ends pass as "ends"
            assert ("ends" in gpu.timings) == (threshold is not None)
            assert "swa" in gpu.timings and "tb_ends" not in gpu.timings
            assert ("tb_chain" in gpu.timings) == (threshold is None and not saturates)
            assert (gpu.saturated > 0) == saturates
            every = cpu if threshold is None else every
        for method in ("wordwise", "bitsliced") if scoring is PAPER else ():
            got = score_pairs(xs, ys, scoring, mode="full", method=method, backend="cuda")
            assert got.alignments == every.alignments        # every pair (no threshold)
        assert calls == [len(pairs)] * (2 if scoring is PAPER else 1)   # not bitsliced
        monkeypatch.setattr(cuda_tb, "ONE_PASS_BYTES", 1 << 12)         # past the one pass
        got = score_pairs(xs, ys, scoring, mode="full", backend="cuda")
        assert chained[-1] is False and got.alignments == every.alignments


@pytest.mark.parametrize("scoring", SCORINGS, ids=IDS)
def test_fused_scores_and_ends_equal_the_exact_ones(scoring):
    """score_ends_wordwise (ww_kernel's ENDS form without targets: one DP finds each
    pair's maximum and its cell): the scores of the pairs it does not flag and their ends
    are the exact ones; it flags the pairs the scoring kernels flag (16-bit lanes past the
    threshold: HIGH_*), which have no end; codes on the device are read in place."""
    import cupy
    from warpalign._backends.cuda.pair_ends import score_ends_wordwise
    from warpalign._backends.cuda.pairs import score_wordwise
    rng = np.random.default_rng(27)
    pairs = _pairs(rng, scoring, count=120, top=700)
    want = _exact(pairs, scoring)
    xc, xo, yc, yo = _codes(pairs, scoring)
    scores, flagged, ends, timings = score_ends_wordwise(xc, xo, yc, yo, scoring)
    plain, plain_flagged, _ = score_wordwise(xc, xo, yc, yo, scoring)
    assert scores.dtype == np.int32 and flagged.dtype == np.int64 and ends.dtype == np.int64
    assert flagged.tolist() == plain_flagged.tolist()        # the pairs reaching 16 bits
    assert (flagged.size > 0) == (scoring in (HIGH_LINEAR, HIGH_AFFINE))
    sure = np.ones(len(pairs), bool)
    sure[flagged] = False
    assert scores[sure].tolist() == plain[sure].tolist()
    assert (scores[sure] == want[sure, 0]).all()
    want[~sure] = 0
    _same(ends, want, pairs)
    assert set(timings) == {"h2g", "swa", "g2h"}
    on_device = score_ends_wordwise(cupy.asarray(xc), xo, cupy.asarray(yc), yo, scoring)
    assert on_device[0].tolist() == scores.tolist()
    assert np.array_equal(on_device[2], ends)


def test_fused_plans_of_one_shape_are_kept_and_exact(monkeypatch):
    """Pairs of one query and one target length: score_ends_wordwise keeps its plan (the
    ENDS launches without targets, ENDS_ROWS rows a lane) with its device arrays under
    the word-wise plans' key and "track"; a second call of the shape runs from the kept
    plan, two scorings interleaved keep one each, and every call's scores and ends are
    the exact ones."""
    from warpalign._backends.cuda import pairs as gpu
    from warpalign._backends.cuda.pair_ends import ENDS_ROWS, score_ends_wordwise
    monkeypatch.setattr(gpu, "_plans", type(gpu._plans)())
    rng = np.random.default_rng(30)
    for scoring in (PAPER, AFFINE, PAPER, AFFINE):
        letters = np.array(list(_letters(scoring)))
        pairs = []
        for _ in range(70):
            t = "".join(rng.choice(letters, 300))
            at = int(rng.integers(0, 240))
            q = t[at:at + 60]
            q = q[:20] + "".join(rng.choice(letters, 3)) + q[23:]
            pairs.append((q, t))
        want = _exact(pairs, scoring)
        xc, xo, yc, yo = _codes(pairs, scoring)
        scores, flagged, ends, _ = score_ends_wordwise(xc, xo, yc, yo, scoring, largest=3)
        assert flagged.size == 0 and scores.tolist() == want[:, 0].tolist()
        _same(ends, want, pairs)
    kept = [k for k in gpu._plans if k[-1] == "track"]
    assert len(kept) == 2 and {k[4] for k in kept} == {PAPER, AFFINE}
    assert all(k[5:7] == ("local", ENDS_ROWS) for k in kept)


@pytest.mark.parametrize("algorithm", ["global", "semiglobal"])
def test_score_pairs_full_global_keeps_its_end_pass(algorithm):
    rng = np.random.default_rng(26)
    pairs = _pairs(rng, AFFINE, count=40, top=200)
    xs, ys = [q for q, _ in pairs], [t for _, t in pairs]
    gpu = score_pairs(xs, ys, AFFINE, mode="full", algorithm=algorithm, backend="cuda")
    cpu = score_pairs(xs, ys, AFFINE, mode="full", algorithm=algorithm, backend="cpu")
    assert gpu.alignments == cpu.alignments
    assert "tb_ends" in gpu.timings and "ends" not in gpu.timings


@pytest.mark.parametrize("scoring", [PAPER, AFFINE, BLOSUM, HIGH_LINEAR],
                         ids=["paper", "affine", "blosum", "high-linear"])
def test_grouped_pass_equals_the_cpu_backend(scoring, monkeypatch):
    """score_pairs(mode="full") from host sides in groups (``pairs_grouped``:
    GROUP_RESIDUES lowered so that 100 pairs make four groups, each group's pass queued
    before the next is encoded, one traceback of them all; DNA with an N in one group:
    that group's pass takes the table path): the CPU backend's scores and alignments,
    and one group's; saturating pairs (HIGH_LINEAR) and jobs past the one traceback pass
    take the general route from the groups' reads."""
    import warpalign.pairs as wp
    from warpalign._backends.cuda import pairs_full
    from warpalign._backends.cuda import traceback as cuda_tb
    from warpalign._backends.registry import using
    rng = np.random.default_rng(36)
    pairs = _pairs(rng, scoring, count=100, top=500)
    xs, ys = [q for q, _ in pairs], [t for _, t in pairs]
    if scoring is not BLOSUM:
        k = next(i for i in range(80, 100) if len(ys[i]) > 10)
        ys[k] = ys[k][:4] + "NN" + ys[k][6:]
    cpu = score_pairs(xs, ys, scoring, mode="full", backend="cpu")
    one = score_pairs(xs, ys, scoring, mode="full", backend="cuda")
    sizes = []

    def counted(groups, *args, **kwargs):       # the real engine, its groups counted
        def seen():
            for group in groups:
                sizes.append(len(group[1]) - 1)
                yield group
        return pairs_full.score_align_groups(seen(), *args, **kwargs)

    monkeypatch.setattr(wp, "GROUP_RESIDUES", sum(len(x) + len(y) for x, y in pairs) // 4)
    with using("pairs_grouped", "cuda", "wordwise", counted):
        got = score_pairs(xs, ys, scoring, mode="full", backend="cuda")
        assert len(sizes) == 4 and sum(sizes) == len(pairs) and min(sizes) > 0
        assert got.scores.tolist() == cpu.scores.tolist() == one.scores.tolist()
        assert got.alignments == cpu.alignments == one.alignments
        assert ("tb_chain" in got.timings) == (scoring is not HIGH_LINEAR)
        assert (got.saturated > 0) == (scoring is HIGH_LINEAR)
        monkeypatch.setattr(cuda_tb, "ONE_PASS_BYTES", 1 << 12)         # past the one pass
        past = score_pairs(xs, ys, scoring, mode="full", backend="cuda")
        assert "tb_chain" not in past.timings and past.alignments == cpu.alignments
        assert len(sizes) == 8


def test_grouped_pass_raises_the_first_bad_character_of_the_batch(monkeypatch):
    """A bad character in a group ends the grouped pass: the batch, encoded whole, names
    its first bad character as the CPU backend does (the xs side's before the ys side's,
    though an earlier group's y holds one too)."""
    import warpalign.pairs as wp
    from warpalign.errors import AlphabetError
    rng = np.random.default_rng(37)
    xs = ["".join(rng.choice(list("ACGT"), 30)) for _ in range(40)]
    ys = ["".join(rng.choice(list("ACGT"), 80)) for _ in range(40)]
    ys[3] = ys[3][:5] + "!" + ys[3][6:]
    xs[35] = xs[35][:2] + "@" + xs[35][3:]
    monkeypatch.setattr(wp, "GROUP_RESIDUES", 40 * 110 // 4)
    with pytest.raises(AlphabetError) as gpu:
        score_pairs(xs, ys, PAPER, mode="full", backend="cuda")
    with pytest.raises(AlphabetError) as cpu:
        score_pairs(xs, ys, PAPER, mode="full", backend="cpu")
    assert str(gpu.value) == str(cpu.value) and "xs[35]" in str(gpu.value)
