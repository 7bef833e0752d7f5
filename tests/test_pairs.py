"""score_pairs (issue 4): every method equals the exact scalar kernel and the reference DP.

Oracles: ``pairwise.score_end`` (exact 32-bit Gotoh), ``tests/reference.py`` (naive DP),
parasail's ``sw_scan_16``/``sw_scan_32`` (not striped: wrong when open == extend).
Inputs: random pairs, identical pairs (maximum scores), real DNA cut from phiX174,
the word/group boundary lengths 0, 1, 31, 32, 33, 63, 64, 65 on either side, unequal
lengths inside a group and pair counts that are not a multiple of 64.
"""

from __future__ import annotations

import argparse
import gzip
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import concat, shared_data
from reference import dp
from warpalign import Scoring
from warpalign._backends.cpu import bitsliced, wordwise
from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from warpalign.cli import pairs as pairs_command
from warpalign.errors import AlphabetError, BackendUnavailable, NotComputed
from warpalign.pairs import PairScores, score_pairs

PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
LINEAR = Scoring(match=1, mismatch=-3, gap_open=2, gap_extend=2)
METHODS = ["bitsliced", "wordwise"]
EDGES = [0, 1, 31, 32, 33, 63, 64, 65]


def exact(xs, ys, scoring, algorithm="local"):
    code = ALGORITHM_CODES[algorithm]
    enc = scoring.alphabet.encode
    return [int(score_end(enc(x), enc(y), scoring.matrix, scoring.gap_open, scoring.gap_extend,
                          code)[0]) for x, y in zip(xs, ys)]


def random_dna(rng, n, alphabet="ACGT"):
    return "".join(rng.choice(list(alphabet), n))


def mutate(rng, seq, rate=0.1):
    out = []
    for c in seq:
        r = rng.random()
        if r < rate / 3:
            continue                                  # deletion
        out.append(rng.choice(list("ACGT")) if r < 2 * rate / 3 else c)
        if r > 1 - rate / 3:
            out.append(rng.choice(list("ACGT")))      # insertion
    return "".join(out)


def phix() -> str:
    lines = shared_data("dna/phix_genome.fa").read_text().splitlines()
    return "".join(l.strip() for l in lines if not l.startswith(">")).upper()


# --------------------------------------------------------------------------- exactness


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scoring", [PAPER, LINEAR], ids=["paper", "1/-3/2"])
def test_random_pairs(method, scoring):
    rng = np.random.default_rng(4)
    n = 150                                           # not a multiple of 64 or 32
    xs = [random_dna(rng, int(rng.integers(0, 80))) for _ in range(n)]
    ys = [random_dna(rng, int(rng.integers(0, 120))) for _ in range(n)]
    ys[10:40] = [mutate(rng, x) for x in xs[10:40]]   # related pairs score high
    res = score_pairs(xs, ys, scoring, method=method, backend="cpu")
    assert res.method == method and res.backend == "cpu"
    assert res.scores.dtype == np.int32 and res.scores.shape == (n,)
    assert res.scores.tolist() == exact(xs, ys, scoring)
    assert res.saturated == 0


@pytest.mark.parametrize("method", METHODS)
def test_edge_lengths_either_side(method):
    rng = np.random.default_rng(5)
    pairs = list(itertools.product(EDGES, EDGES))     # 64 pairs, unequal lengths in a group
    pairs += [(1, 1), (65, 0), (0, 65)]               # 67: one partial group
    xs = [random_dna(rng, a) for a, _ in pairs]
    ys = [random_dna(rng, b) for _, b in pairs]
    ys[5] = xs[5][:20] + ys[5][20:]                   # a shared prefix in one mixed pair
    res = score_pairs(xs, ys, PAPER, method=method, backend="cpu")
    assert res.scores.tolist() == exact(xs, ys, PAPER)


@pytest.mark.parametrize("method", METHODS)
def test_identical_pairs_reach_the_maximum(method):
    rng = np.random.default_rng(6)
    lengths = EDGES + [127, 128, 129, 300]
    xs = [random_dna(rng, n) for n in lengths]
    res = score_pairs(xs, xs, PAPER, method=method, backend="cpu")
    assert res.scores.tolist() == [2 * n for n in lengths]
    homopolymers = ["A" * n for n in lengths]          # every cell of the diagonal band high
    res = score_pairs(homopolymers, homopolymers, PAPER, method=method, backend="cpu")
    assert res.scores.tolist() == [2 * n for n in lengths]


@pytest.mark.parametrize("method", METHODS)
def test_real_dna_pairs_from_phix(method):
    genome = phix()
    rng = np.random.default_rng(7)
    xs, ys = [], []
    for _ in range(70):
        start = int(rng.integers(0, len(genome) - 400))
        m = int(rng.integers(20, 130))
        xs.append(genome[start:start + m])
        shift = int(rng.integers(-40, 40))
        lo = max(0, start + shift)
        ys.append(genome[lo:lo + int(rng.integers(50, 400))])
    res = score_pairs(xs, ys, PAPER, method=method, backend="cpu", threshold=40)
    expected = exact(xs, ys, PAPER)
    assert res.scores.tolist() == expected
    assert res.indices.tolist() == [i for i, s in enumerate(expected) if s >= 40]


def test_methods_agree_with_the_reference_dp_on_lambda():
    path = shared_data("dna/lambda_virus.fa.gz")
    with gzip.open(path, "rt") as fh:
        genome = "".join(l.strip() for l in fh if not l.startswith(">")).upper()
    rng = np.random.default_rng(8)
    xs, ys = [], []
    for _ in range(20):
        a = int(rng.integers(0, len(genome) - 100))
        xs.append(genome[a:a + 30])
        ys.append(mutate(rng, genome[a - 5 if a >= 5 else a:a + 40], 0.15))
    enc = PAPER.alphabet.encode
    expected = [dp(enc(x), enc(y), PAPER.matrix, 1, 1)[0] for x, y in zip(xs, ys)]
    for method in ("auto", *METHODS):
        assert score_pairs(xs, ys, PAPER, method=method).scores.tolist() == expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.text("ACGT", max_size=70), st.text("ACGT", max_size=70)),
                min_size=1, max_size=70))
def test_bitsliced_equals_reference_dp(pairs):
    xs, ys = [p[0] for p in pairs], [p[1] for p in pairs]
    enc = PAPER.alphabet.encode
    got = score_pairs(xs, ys, PAPER, method="bitsliced", backend="cpu").scores.tolist()
    assert got == [dp(enc(x), enc(y), PAPER.matrix, 1, 1)[0] for x, y in zip(xs, ys)]


# --------------------------------------------------------------------------- word-wise: any scoring


@pytest.mark.parametrize("algorithm", ["local", "global", "semiglobal"])
@pytest.mark.parametrize("scoring", [
    Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1),
    Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1),           # paper 004, affine
    Scoring(match=2, mismatch=1, gap_open=3, gap_extend=1),            # mismatch > 0: table path
], ids=["blosum62", "dna-affine", "positive-mismatch"])
def test_wordwise_any_scoring_and_algorithm(scoring, algorithm):
    rng = np.random.default_rng(9)
    letters = scoring.alphabet.symbols[:20] if scoring.alphabet.name == "protein" else "ACGTN"
    n = 45
    xs = [random_dna(rng, int(rng.integers(0, 70)), letters) for _ in range(n)]
    ys = [random_dna(rng, int(rng.integers(0, 90)), letters) for _ in range(n)]
    ys[:10] = [x[3:] + "AC" for x in xs[:10]]
    res = score_pairs(xs, ys, scoring, method="wordwise", algorithm=algorithm, backend="cpu")
    assert res.scores.tolist() == exact(xs, ys, scoring, algorithm)
    enc = scoring.alphabet.encode
    for i in range(0, n, 9):   # and the naive DP, on a few
        assert res.scores[i] == dp(enc(xs[i]), enc(ys[i]), scoring.matrix, scoring.gap_open,
                                   scoring.gap_extend, algorithm)[0]


def test_wordwise_global_long_pairs_use_wide_lanes():
    rng = np.random.default_rng(10)
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    xs = [random_dna(rng, 1500, "ARNDCQEGHILKMFPSTWYV") for _ in range(3)] + ["MKV"]
    ys = [random_dna(rng, 10, "ARNDCQEGHILKMFPSTWYV") for _ in range(3)] + ["MKVW"]
    for algorithm in ("global", "semiglobal"):
        res = score_pairs(xs, ys, scoring, method="wordwise", algorithm=algorithm)
        assert res.scores.tolist() == exact(xs, ys, scoring, algorithm)
        assert min(res.scores[:3]) < -1000   # (m + n) * 11 is past the 16-bit-safe bound


def test_wordwise_saturation_is_detected_and_rescored():
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    big = "W" * 3100                                  # 11 * 3100 = 34,100 > 32,767
    xs = [big, "MKVLA", big[:100]]
    ys = [big, "MKVLA", big[:100]]
    res = score_pairs(xs, ys, scoring, method="wordwise")
    assert res.scores.tolist() == [34100, exact(["MKVLA"], ["MKVLA"], scoring)[0], 1100]
    assert res.saturated == 1


# --------------------------------------------------------------------------- differential: parasail


@pytest.mark.parametrize("method", METHODS)
def test_against_parasail_scan(method):
    parasail = pytest.importorskip("parasail")
    rng = np.random.default_rng(11)
    xs = [random_dna(rng, int(rng.integers(1, 128))) for _ in range(100)]
    ys = [mutate(rng, x, 0.2) + random_dna(rng, int(rng.integers(0, 200))) for x in xs]
    ys = [y or "A" for y in ys]
    res = score_pairs(xs, ys, PAPER, method=method, backend="cpu")
    matrix = parasail.matrix_create("ACGT", 2, -1)
    for fn in (parasail.sw_scan_16, parasail.sw_scan_32):
        theirs = [fn(x, y, 1, 1, matrix).score for x, y in zip(xs, ys)]
        assert res.scores.tolist() == theirs


# --------------------------------------------------------------------------- the kernels' pieces


def test_bit_transpose_round_trip_all_widths():
    rng = np.random.default_rng(12)
    for s in range(1, 65):
        hi = 1 << s
        words = np.array([int(v) % hi for v in rng.integers(0, 1 << 62, 64)], dtype=np.uint64)
        if s == 64:
            words |= np.uint64(1 << 63)
        planes = words.copy()
        bitsliced.transpose_w2b(planes, s)
        naive = [sum(((int(words[k]) >> b) & 1) << k for k in range(64)) for b in range(64)]
        assert planes.tolist() == naive
        bitsliced.transpose_b2w(planes, s)
        assert planes.tolist() == words.tolist()


@pytest.mark.slow   # compiles a second kernel family (~20 s cold)
def test_bitsliced_wider_groups_equal_one_word_groups():
    rng = np.random.default_rng(13)
    xs = [rng.integers(0, 4, int(rng.integers(0, 50))).astype(np.uint8) for _ in range(300)]
    ys = [rng.integers(0, 4, int(rng.integers(0, 50))).astype(np.uint8) for _ in range(300)]
    args = (*concat(xs), *concat(ys), PAPER)
    one, _, steps = bitsliced.score_pairs(*args, words=1)
    eight, _, _ = bitsliced.score_pairs(*args, words=8)
    assert one.tolist() == eight.tolist()
    assert one.tolist() == [int(score_end(x, y, PAPER.matrix, 1, 1, 0)[0]) for x, y in zip(xs, ys)]
    assert set(steps) == {"w2b", "swa", "b2w"}


def test_value_bits_never_saturate():
    assert bitsliced.value_bits(0) == 1
    assert bitsliced.value_bits(255) == 8
    assert bitsliced.value_bits(256) == 9     # paper: m = 128, c1 = 2 needs 9 bits here


def test_match_mismatch_detection():
    assert wordwise.match_mismatch(PAPER.matrix.astype(np.int64)) == (2, -1, 4)
    blosum = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1).matrix.astype(np.int64)
    assert wordwise.match_mismatch(blosum) is None


# --------------------------------------------------------------------------- API


def test_auto_picks_a_method_that_can_score():
    rng = np.random.default_rng(14)
    xs = [random_dna(rng, 40) for _ in range(10)]
    ys = [random_dna(rng, 60) for _ in range(10)]
    res = score_pairs(xs, ys, PAPER)
    assert res.method in METHODS and res.scores.tolist() == exact(xs, ys, PAPER)
    with_n = score_pairs([x + "N" for x in xs], ys, PAPER)              # N: not bitsliceable
    assert with_n.method == "wordwise"
    affine = Scoring(match=2, mismatch=-1, gap_open=3, gap_extend=1)
    assert score_pairs(xs, ys, affine).method == "wordwise"
    assert score_pairs(xs, ys, PAPER, algorithm="global").method == "wordwise"


def test_threshold_and_full_mode_give_the_alignments():
    from warpalign.traceback import align_codes
    rng = np.random.default_rng(15)
    xs = [random_dna(rng, 50) for _ in range(80)]
    ys = [mutate(rng, x, 0.1) if i % 7 == 0 else random_dna(rng, 60) for i, x in enumerate(xs)]
    res = score_pairs(xs, ys, PAPER, threshold=60, mode="full", method="bitsliced")
    expected = [i for i, s in enumerate(exact(xs, ys, PAPER)) if s >= 60]
    assert expected and res.indices.tolist() == expected
    assert len(res.alignments) == len(expected)
    enc = PAPER.alphabet.encode
    for i, aln in zip(res.indices, res.alignments):
        assert aln == align_codes(enc(xs[i]), enc(ys[i]), PAPER)
        assert aln.score == res.scores[i]
    plain = score_pairs(xs, ys, PAPER)
    with pytest.raises(NotComputed):
        _ = plain.indices
    with pytest.raises(NotComputed):
        _ = score_pairs(xs, ys, PAPER, threshold=60).alignments
    with pytest.raises(AttributeError):
        plain.saturated = 3
    assert isinstance(plain, PairScores) and len(plain) == 80
    with pytest.raises(ValueError):
        plain.scores[0] = 1


def test_empty_input():
    res = score_pairs([], [], PAPER, threshold=1)
    assert res.scores.tolist() == [] and res.indices.tolist() == []


def test_bad_inputs():
    with pytest.raises(ValueError, match="as many"):
        score_pairs(["ACGT", "AC"], ["ACGT"], PAPER)
    with pytest.raises(ValueError, match=r"invalid method: 'fast'.*'auto'.*'bitsliced'.*'wordwise'"):
        score_pairs(["ACGT"], ["ACGT"], PAPER, method="fast")
    with pytest.raises(ValueError, match="invalid mode"):
        score_pairs(["ACGT"], ["ACGT"], PAPER, mode="end")
    with pytest.raises(ValueError, match="invalid algorithm"):
        score_pairs(["ACGT"], ["ACGT"], PAPER, algorithm="overlap")
    with pytest.raises(AlphabetError, match=r"ys\[2\].*position 3.*'X'") as info:
        score_pairs(["ACGT"] * 3, ["ACGT", "ACGT", "ACGXT"], PAPER)
    assert info.value.position == 3 and info.value.character == "X"
    with pytest.raises(AlphabetError, match=r"xs\[1\].*position 2.*'N'.*A, C, G, T"):
        score_pairs(["ACGT", "ACNT"], ["ACGT", "ACGT"], PAPER, method="bitsliced")
    with pytest.raises(ValueError, match="linear gaps"):
        score_pairs(["ACGT"], ["ACGT"], Scoring(match=2, mismatch=-1, gap_open=3, gap_extend=1),
                    method="bitsliced")
    with pytest.raises(ValueError, match="local"):
        score_pairs(["ACGT"], ["ACGT"], PAPER, method="bitsliced", algorithm="global")
    with pytest.raises(ValueError, match="invalid backend"):
        score_pairs(["ACGT"], ["ACGT"], PAPER, backend="gpu")


def test_cuda_backend_unavailable_says_why():
    try:
        import cupy  # noqa: F401
    except ImportError:
        with pytest.raises(BackendUnavailable, match="(?i)cupy"):
            score_pairs(["ACGT"], ["ACGT"], PAPER, backend="cuda")
    else:
        pytest.skip("CuPy is installed: tests/test_cuda_pairs.py covers the CUDA backend")


# --------------------------------------------------------------------------- CLI


def _cli(argv):
    parser = argparse.ArgumentParser(prog="warpalign")
    pairs_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.run(args)


def test_cli_pairs(tmp_path, capsys):
    x = tmp_path / "x.fa"
    y = tmp_path / "y.fa"
    x.write_text(">a1\nTACTG\n>a2\nAAAA\n>a3\nACGTN\n")
    y.write_text(">b1\nGAACTGA\n>b2\nCCCC\n>b3\nACGTA\n")
    assert _cli(["pairs", str(x), str(y), "--header"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["#index\txname\tyname\tscore", "0\ta1\tb1\t8", "1\ta2\tb2\t0", "2\ta3\tb3\t8"]
    assert _cli(["pairs", str(x), str(y), "--threshold", "5", "--mode", "full"]) == 0
    rows = [l.split("\t") for l in capsys.readouterr().out.splitlines()]
    assert [r[0] for r in rows] == ["0", "2"]
    assert rows[0][4:] == ["100.00", "4", "2", "5", "3", "6", "4M"]
    out = tmp_path / "out.tsv"
    assert _cli(["pairs", str(x), str(y), "--method", "wordwise", "--match", "1",
                 "--mismatch", "-1", "--gap-open", "2", "--gap-extend", "1", "-o", str(out)]) == 0
    assert out.read_text().splitlines()[0] == "0\ta1\tb1\t4"


def test_cli_pairs_record_counts_must_match(tmp_path):
    x = tmp_path / "x.fa"
    y = tmp_path / "y.fa"
    x.write_text(">a1\nACGT\n>a2\nACGT\n")
    y.write_text(">b1\nACGT\n")
    with pytest.raises(ValueError, match="2 records.*1"):
        _cli(["pairs", str(x), str(y)])


def test_gpu_word_wise_launch_plan_covers_each_pair_once_in_order():
    # the host planner of the CUDA word-wise kernels (pure NumPy, issue 22): each pair in
    # exactly one launch, launches ordered by (bits, G, bands), pairs by (target, query)
    # length descending, ties by index descending (a stable sort reversed)
    from warpalign._backends.cuda.pairs import launch_groups

    rng = np.random.default_rng(22)
    for rows in (16, 24, 32):
        xl = rng.integers(0, 3000, 700)
        yl = rng.integers(0, 40, 700)
        widths = np.where(rng.random(700) < 0.4, 32, 16)
        plan = launch_groups(xl, yl, widths, rows)
        keys = [(bits, g, bands) for bits, g, bands, _ in plan]
        assert keys == sorted(set(keys))
        seen = np.concatenate([order for *_, order in plan])
        assert np.array_equal(np.sort(seen), np.arange(700))
        for bits, g, bands, order in plan:
            need = np.maximum(1, -(-xl[order] // rows))
            assert (widths[order] == bits).all()
            assert (g == np.minimum(32, 1 << np.ceil(np.log2(need)).astype(int))).all()
            assert (bands == np.where(need > 32, -(-xl[order] // (32 * rows)), 1)).all()
            key = [(int(yl[p]), int(xl[p]), int(p)) for p in order]
            assert key == sorted(key, reverse=True)


@pytest.mark.parametrize("seed", range(6))
def test_gpu_word_wise_plan_of_equal_lengths_equals_the_sorted_plan(seed):
    # issue 22: pairs all of one query length, one target length and one lane width (2-D
    # arrays) are planned without a sort; the plan is the general planner's, and the
    # packed-column offsets by arithmetic equal those read from each pair's length
    from warpalign._backends.cuda.pairs import launch_groups, pack_offsets, plan_by_sort

    rng = np.random.default_rng(220 + seed)
    n = int(rng.choice([1, 2, 31, 33, 700, 4097]))
    m, length = int(rng.integers(0, 5000)), int(rng.integers(0, 9000))
    xl, yl = np.full(n, m, np.int64), np.full(n, length, np.int64)
    widths = np.full(n, int(rng.choice([16, 32])))
    for rows in (16, 24, 32):
        fast, slow = launch_groups(xl, yl, widths, rows), plan_by_sort(xl, yl, widths, rows)
        assert len(fast) == len(slow) == 1
        assert fast[0][:3] == slow[0][:3]
        assert np.array_equal(fast[0][3], slow[0][3])
        order = fast[0][3]
        g = fast[0][1]
        items = np.full(-(-n // 2) * 2, -1, np.int32)
        items[:n] = order
        grid = -(-(items.size // 2) * g // 256)
        assert np.array_equal(pack_offsets(items, yl, g, grid, length),
                              pack_offsets(items, yl, g, grid))
    # one pair of another length (or width) takes the general path: the same as sorted
    for i in rng.integers(0, n, 3).tolist():
        for which in range(3):                   # query length, target length, width
            arrays = [xl.copy(), yl.copy(), widths.copy()]
            arrays[which][i] = 48 - arrays[which][i] if which == 2 else arrays[which][i] + 1
            got, want = launch_groups(*arrays, 24), plan_by_sort(*arrays, 24)
            assert [p[:3] for p in got] == [p[:3] for p in want]
            assert all(np.array_equal(a[3], b[3]) for a, b in zip(got, want))


def test_gpu_ends_plan_covers_each_wanted_pair_once():
    # the ENDS launches' host plan (cuda/pair_ends.py, issue 20; pure NumPy): the wanted
    # pairs (batch indices) each in exactly one ww_kernel ENDS launch of its lane width,
    # in launch_groups' order, items padded with -1, the band buffers as wide as the
    # launch's longest target
    from warpalign._backends.cuda.pair_ends import ENDS_ROWS, plan_ends
    from warpalign._backends.cuda.pairs import launch_groups, ww_table

    rng = np.random.default_rng(20)
    n = 900
    xl, yl = rng.integers(0, 2500, n), rng.integers(0, 60, n)
    codes = np.zeros(1, np.uint8)
    for scoring in (Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1),
                    Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)):
        tab = ww_table(scoring, True, codes, codes, 0, ENDS_ROWS)
        pairs = np.sort(rng.choice(n, 600, replace=False))
        widths = np.where(rng.random(600) < 0.3, 32, 16)
        plan = plan_ends(pairs, xl[pairs], yl[pairs], widths, tab)
        groups = launch_groups(xl[pairs], yl[pairs], widths, tab.rows)
        assert [(la.bits, la.g, la.bands) for la in plan] == [k[:3] for k in groups]
        seen = []
        for la in plan:
            per = 2 if la.bits == 16 else 1
            real = la.items[la.items >= 0]
            assert la.items.dtype == np.int32 and la.items.size == la.nitems * per
            assert (la.items[real.size:] == -1).all() and la.items.size - real.size < per
            assert la.grid == -(-la.nitems * la.g // 256)
            assert la.ncols == int(yl[real].max())
            affine = "true" if tab.affine else "false"
            dna = "true" if tab.dna else "false"
            assert la.name == f"ww_kernel<{la.bits}, {tab.rows}, {affine}, 0, {dna}, true>"
            assert (widths[np.searchsorted(pairs, real)] == la.bits).all()
            seen += real.tolist()
        assert sorted(seen) == pairs.tolist()


class _HostCupy:
    """Enough of CuPy for the word-wise planner's upload: NumPy arrays as device arrays,
    device 0, a stream whose synchronize is counted."""

    def __init__(self):
        self.uploads = 0
        self.syncs = 0
        host = self

        class Device:
            id = 0

        class Stream:
            def synchronize(self):
                host.syncs += 1

        self.cuda = type("cuda", (), {"Device": Device,
                                      "get_current_stream": staticmethod(Stream)})

    def asarray(self, a):
        self.uploads += 1
        return np.array(a)


def test_gpu_word_wise_plans_of_one_shape_are_kept(monkeypatch):
    # issue 22: score_wordwise keeps the plan (and its uploaded arrays) of inputs of one
    # query and one target length: the same shape, scoring and code range is planned and
    # uploaded once; any other shape, scoring, algorithm or code range, or offsets that
    # are not arithmetic, plan anew; the least recently used plan goes first; the kept
    # plan is the plan plan_wordwise makes
    from warpalign._backends.cuda import pairs as gpu

    monkeypatch.setattr(gpu, "_plans", type(gpu._plans)())
    monkeypatch.setattr(gpu, "PLAN_CACHE", 3)
    cp = _HostCupy()
    paper = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    affine = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)

    def offsets(n, m):
        return np.arange(n + 1, dtype=np.int64) * m

    def plan(n, m, w, scoring=paper, algorithm="local", largest=3, xoff=None):
        xoff = offsets(n, m) if xoff is None else xoff
        codes = np.zeros(1, np.uint8)
        return gpu.planned_wordwise(cp, codes, xoff, codes, offsets(n, w), scoring, algorithm,
                                    rows=None, prefetch=None, largest=largest)

    first, device = plan(100, 40, 300)
    assert (cp.uploads, cp.syncs) == (1, 1)
    again, device2 = plan(100, 40, 300)
    assert again is first and device2 is device and cp.uploads == 1
    fresh = gpu.plan_wordwise(np.zeros(1, np.uint8), offsets(100, 40), np.zeros(1, np.uint8),
                              offsets(100, 300), paper, "local", rows=None, prefetch=None,
                              largest=3)
    assert first.launches == fresh.launches and first.names == fresh.names
    assert all(np.array_equal(a, b) for a, b in zip(first.small, fresh.small))
    assert all(np.array_equal(a, d) for a, d in zip(first.small, device))
    for other in ({"n": 101}, {"m": 41}, {"w": 301}, {"scoring": affine},
                  {"algorithm": "global"}, {"largest": 4}):
        args = {"n": 100, "m": 40, "w": 300, **other}
        kept = cp.uploads
        assert plan(**args)[0] is not first and cp.uploads == kept + 1, other
    assert len(gpu._plans) == 3                              # the oldest went out
    kept = cp.uploads
    plan(100, 40, 300)
    assert cp.uploads == kept + 1                            # evicted: planned anew
    ragged = offsets(100, 40)
    ragged[50:] += 1                                         # one query of 41
    syncs = cp.syncs
    plan(100, 40, 300, xoff=ragged)
    plan(100, 40, 300, xoff=ragged)
    assert cp.uploads == kept + 3 and cp.syncs == syncs      # not kept, no sync
    assert plan(100, 40, 300, largest=None)[0] is not plan(100, 40, 300, largest=None)[0]


def test_encode_sides_reports_each_side_and_its_largest_code():
    # the CPU encode engine (registry "encode"): both sides in one call, per side the
    # codes, the first bad character, the counts and the largest code written
    from warpalign import Scoring
    from warpalign._backends.cpu.encode import encode, encode_sides

    table = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1).alphabet.code_table
    sides = [np.frombuffer(b"ACGTACGT", np.uint8), np.frombuffer(b"ACNT", np.uint8),
             np.frombuffer(b"AC#T", np.uint8), np.zeros(0, np.uint8)]
    got = encode_sides(sides, table, counts=True)
    assert [bad for _, bad, _, _ in got] == [-1, -1, 2, -1]
    assert [top for *_, top in got] == [3, int(table[ord("N")]), 255, 0]
    for raw, (codes, bad, counted, _) in zip(sides, got):
        want = encode(raw, table, counts=True)
        assert np.array_equal(codes, want[0]) and bad == want[1]
        assert (counted is None) == (want[2] is None)
        assert counted is None or np.array_equal(counted, want[2])


def test_a_character_bitsliced_cannot_take_is_named_as_a_bad_one():
    """method="bitsliced" with an N: the error names the side, record and 0-based position
    as an unknown character's error does, then what bitsliced takes."""
    from warpalign.errors import AlphabetError
    from warpalign.pairs import score_pairs
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1, alphabet="dna")
    with pytest.raises(AlphabetError) as bits:
        score_pairs(["ACGT", "ACGA"], ["ACGT", "ACNT"], s, method="bitsliced", backend="cpu")
    with pytest.raises(AlphabetError) as bad:
        score_pairs(["ACGT", "ACGA"], ["ACGT", "AC#T"], s, backend="cpu")
    assert str(bits.value).startswith("ys[1]: record 'seq1', position 2 (0-based): "
                                      "character 'N' cannot be bitsliced (method 'bitsliced' "
                                      "takes A, C, G, T only")
    assert str(bad.value).startswith("ys[1]: record 'seq1', position 2 (0-based): "
                                     "character '#' is not in the dna alphabet")
    assert (bits.value.record, bits.value.position, bits.value.character) == ("seq1", 2, "N")


def test_pair_ends_fill_takes_whole_columns_or_the_sure_rows():
    # cuda/pair_ends._fill (host only): the ENDS kernel's keys (target end << 32 | query
    # end) into (score, query end, target end) rows, every pair sure and scored (whole
    # columns) or some flagged / of score 0 (those rows stay (0, 0, 0)); a maximum other
    # than the score, or a score > 0 without a key, is a ValueError naming the pair
    from warpalign._backends.cuda.pair_ends import _NONE, _fill
    scores = np.array([5, 7, 3, 9], np.int64)
    keys = np.array([(4 << 32) | 2, (11 << 32) | 6, (1 << 32) | 1, (70 << 32) | 30],
                    np.uint64)
    out = np.zeros((4, 3), np.int64)
    _fill(out, np.arange(4), scores, scores.copy(), keys)
    assert out.tolist() == [[5, 2, 4], [7, 6, 11], [3, 1, 1], [9, 30, 70]]
    some = np.zeros((4, 3), np.int64)
    zero = scores.copy()
    zero[2] = 0
    _fill(some, np.array([0, 2, 3]), zero, zero.copy(), keys)    # pair 1 flagged
    assert some.tolist() == [[5, 2, 4], [0, 0, 0], [0, 0, 0], [9, 30, 70]]
    with pytest.raises(ValueError, match="pair 3: score 9 given, but its best local "
                                         "score is 8"):
        _fill(out, np.arange(4), scores, scores - (np.arange(4) == 3), keys)
    lost = keys.copy()
    lost[1] = _NONE
    with pytest.raises(ValueError, match="pair 1: "):
        _fill(out, np.arange(4), scores, scores.copy(), lost)
