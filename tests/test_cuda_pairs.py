"""GPU score_pairs (issue 4): both CUDA methods equal the exact CPU kernel, pair by pair.

Every test is cuda-marked and skips where no CUDA device answers. The oracle is
``_backends.cpu.pairwise.score_end`` (exact 32-bit Gotoh). Inputs: random pairs, identical
pairs (maximum scores), lengths 0, 1, 31, 32, 33, 63, 64, 65 on either side, unequal
lengths inside a group of 32, pair counts that are not a multiple of 32, queries longer
than one tile (several bands), 16-bit saturation (rescored), global/semiglobal in 16- and
32-bit lanes, protein and affine scorings, real pairs cut from phiX174.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from conftest import concat
from warpalign import Scoring
from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from warpalign.pairs import score_pairs

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("pairs_device")]

_ROOT = Path(__file__).resolve().parents[1]
PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
LINEAR = Scoring(match=1, mismatch=-3, gap_open=2, gap_extend=2)
AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)  # paper 004
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
EDGES = [0, 1, 31, 32, 33, 63, 64, 65]
METHODS = ["wordwise", "bitsliced"]


def exact(xs, ys, scoring, algorithm="local"):
    code = ALGORITHM_CODES[algorithm]
    enc = scoring.alphabet.encode
    return [int(score_end(enc(x), enc(y), scoring.matrix, scoring.gap_open, scoring.gap_extend,
                          code)[0]) for x, y in zip(xs, ys)]


def check(xs, ys, scoring, method, algorithm="local"):
    res = score_pairs(xs, ys, scoring, method=method, backend="cuda", algorithm=algorithm)
    assert res.backend == "cuda" and res.method == method
    want = np.array(exact(xs, ys, scoring, algorithm))
    bad = np.flatnonzero(res.scores != want)
    assert bad.size == 0, (f"{bad.size}/{len(xs)} mismatches, e.g. pair {bad[0]} "
                           f"(lengths {len(xs[bad[0]])}, {len(ys[bad[0]])}): gpu "
                           f"{res.scores[bad[0]]} cpu {want[bad[0]]}")
    return res


def random_seq(rng, n, alphabet="ACGT"):
    return "".join(rng.choice(list(alphabet), n))


def mutate(rng, seq, rate=0.1, alphabet="ACGT"):
    out = []
    for c in seq:
        r = rng.random()
        if r < rate / 3:
            continue
        out.append(rng.choice(list(alphabet)) if r < 2 * rate / 3 else c)
        if r > 1 - rate / 3:
            out.append(rng.choice(list(alphabet)))
    return "".join(out)


def phix() -> str:
    for path in (_ROOT / ".carry" / "phix_genome.fa",
                 _ROOT.parent / "shared" / "data" / "dna" / "phix_genome.fa"):
        if path.exists():
            lines = path.read_text().splitlines()
            return "".join(l.strip() for l in lines if not l.startswith(">")).upper()
    pytest.skip("phix_genome.fa not found (.carry/ or ../shared/data/dna)")


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scoring", [PAPER, LINEAR], ids=["paper", "1/-3/2"])
def test_random_pairs(method, scoring):
    rng = np.random.default_rng(40)
    n = 150                                            # not a multiple of 32
    xs = [random_seq(rng, int(rng.integers(0, 150))) for _ in range(n)]
    ys = [random_seq(rng, int(rng.integers(0, 400))) for _ in range(n)]
    ys[10:60] = [mutate(rng, x) for x in xs[10:60]]
    res = check(xs, ys, scoring, method)
    assert res.saturated == 0


@pytest.mark.parametrize("method", METHODS)
def test_edge_lengths_either_side(method):
    rng = np.random.default_rng(41)
    pairs = list(itertools.product(EDGES, EDGES)) + [(1, 1), (65, 0), (0, 65)]
    xs = [random_seq(rng, a) for a, _ in pairs]
    ys = [random_seq(rng, b) for _, b in pairs]
    ys[5] = xs[5][:20] + ys[5][20:]
    check(xs, ys, PAPER, method)
    check(ys, xs, PAPER, method)


@pytest.mark.parametrize("method", METHODS)
def test_identical_pairs_reach_the_maximum(method):
    rng = np.random.default_rng(42)
    lengths = EDGES + [127, 128, 129, 300, 1100]
    xs = [random_seq(rng, n) for n in lengths]
    res = score_pairs(xs, xs, PAPER, method=method, backend="cuda")
    assert res.scores.tolist() == [2 * n for n in lengths]
    homo = ["A" * n for n in lengths]
    res = score_pairs(homo, homo, PAPER, method=method, backend="cuda")
    assert res.scores.tolist() == [2 * n for n in lengths]


@pytest.mark.parametrize("method", METHODS)
def test_long_queries_span_several_bands(method):
    rng = np.random.default_rng(43)
    xs = [random_seq(rng, int(k)) for k in (1030, 1500, 129, 2100, 700)]
    ys = [mutate(rng, x) if k % 2 else random_seq(rng, 900) for k, x in enumerate(xs)]
    check(xs, ys, PAPER, method)
    check(ys, xs, PAPER, method)


def test_wordwise_saturation_is_flagged_and_rescored():
    big = Scoring(match=10, mismatch=-10, gap_open=20, gap_extend=20)
    rng = np.random.default_rng(44)
    x = random_seq(rng, 3400)                     # identical: 34,000 > int16
    xs = [x, x[:100], random_seq(rng, 500)]
    ys = [x, x[:100], random_seq(rng, 600)]
    res = check(xs, ys, big, "wordwise")
    assert res.saturated >= 1 and res.scores[0] == 34000


@pytest.mark.parametrize("fn", ["score_wordwise", "score_bitsliced"])
def test_kernel_runs_repeat_the_same_result(fn):
    """The benchmarks' back-to-back launches (kernel_runs) change no score or flag."""
    from warpalign._backends.cuda import bitsliced
    from warpalign._backends.cuda import pairs as gpu

    engine = {"score_wordwise": gpu.score_wordwise,
              "score_bitsliced": bitsliced.score_bitsliced}[fn]
    big = Scoring(match=10, mismatch=-10, gap_open=20, gap_extend=20)
    rng = np.random.default_rng(45)
    x = random_seq(rng, 3400)                     # saturates int16 in the word-wise path
    xs = [x] + [random_seq(rng, int(k)) for k in rng.integers(0, 300, 70)]
    ys = [x] + [mutate(rng, s) for s in xs[1:]]
    scoring = PAPER if fn == "score_bitsliced" else big
    enc = [scoring.alphabet.encode(s) for s in xs], [scoring.alphabet.encode(s) for s in ys]
    args = (*concat(enc[0]), *concat(enc[1]), scoring)
    once = engine(*args)
    thrice = engine(*args, kernel_runs=3)
    assert np.array_equal(once[0], thrice[0]) and np.array_equal(once[1], thrice[1])
    # raw kernel scores: exact except the flagged pairs (score_pairs rescores those)
    ok = np.setdiff1d(np.arange(len(xs)), once[1])
    assert once[0][ok].tolist() == np.asarray(exact(xs, ys, scoring))[ok].tolist()
    assert fn == "score_bitsliced" or 0 in once[1].tolist()
    with pytest.raises(ValueError, match="kernel_runs"):
        engine(*args, kernel_runs=0)


@pytest.mark.parametrize("algorithm", ["local", "global", "semiglobal"])
@pytest.mark.parametrize("scoring", [PAPER, AFFINE], ids=["linear", "affine"])
def test_wordwise_dna_algorithms(scoring, algorithm):
    rng = np.random.default_rng(45)
    pairs = list(itertools.product(EDGES, [0, 1, 33, 100])) + [(300, 340), (1100, 1000)]
    xs = [random_seq(rng, a) for a, _ in pairs]
    ys = [mutate(rng, x) if k % 3 == 0 else random_seq(rng, b)
          for k, (x, (_, b)) in enumerate(zip(xs, pairs))]
    check(xs, ys, scoring, "wordwise", algorithm)
    nx = [random_seq(rng, a, "ACGTN") for a, _ in pairs]          # N: the table path
    check(nx, ys, scoring, "wordwise", algorithm)


@pytest.mark.parametrize("algorithm", ["local", "global", "semiglobal"])
def test_wordwise_protein(algorithm):
    rng = np.random.default_rng(46)
    aa = "ACDEFGHIKLMNPQRSTVWY"
    lengths = [(0, 5), (1, 1), (31, 40), (64, 65), (150, 120), (700, 800), (520, 90)]
    xs = [random_seq(rng, a, aa) for a, _ in lengths] * 3
    ys = [random_seq(rng, b, aa) for _, b in lengths]
    ys += [mutate(rng, x, 0.2, aa) for x in xs[len(lengths):2 * len(lengths)]]
    ys += [random_seq(rng, b, aa) for _, b in lengths]
    check(xs, ys, BLOSUM, "wordwise", algorithm)      # (700, 800): 32-bit lanes if not local


@pytest.mark.parametrize("method", METHODS)
def test_real_dna_pairs_from_phix(method):
    genome = phix()
    rng = np.random.default_rng(47)
    xs, ys = [], []
    for _ in range(100):
        start = int(rng.integers(0, len(genome) - 1200))
        m = int(rng.integers(20, 200))
        xs.append(genome[start:start + m])
        lo = max(0, start + int(rng.integers(-60, 60)))
        ys.append(genome[lo:lo + int(rng.integers(50, 1100))])
    res = check(xs, ys, PAPER, method)
    assert res.scores.max() > 100


def test_auto_on_cuda_is_exact():
    rng = np.random.default_rng(48)
    xs = [random_seq(rng, 128) for _ in range(70)]
    ys = [random_seq(rng, 1024) for _ in range(70)]
    res = score_pairs(xs, ys, PAPER, backend="cuda")
    assert res.backend == "cuda" and res.method in METHODS
    assert res.scores.tolist() == exact(xs, ys, PAPER)


VARIANTS = [("wordwise", {"rows": 32}), ("wordwise", {"rows": 16}),
            ("bitsliced", {"cols": 2, "transpose": "ballot"}),
            ("bitsliced", {"cols": 4, "transpose": "ballot"}),
            ("bitsliced", {"cols": 2, "transpose": "swap"}),   # paper 000's Table I transpose
            ("bitsliced", {"cols": 4, "transpose": "swap"}),
            # column loads: ww_dna without its L2 prefetch; bs_swa loading where used (0),
            # one iteration ahead (1), and that with the L2 prefetch (3) at both C
            ("wordwise", {"rows": 32, "prefetch": False}),
            ("bitsliced", {"cols": 2, "prefetch": 0}), ("bitsliced", {"cols": 4, "prefetch": 0}),
            ("bitsliced", {"cols": 2, "prefetch": 3}), ("bitsliced", {"cols": 4, "prefetch": 1})]
VARIANT_IDS = ["ww-r32", "ww-r16", "bs-c2-ballot", "bs-c4-ballot",
               "bs-c2-swap", "bs-c4-swap", "ww-r32-nopf", "bs-c2-pf0", "bs-c4-pf0", "bs-c2-pf3",
               "bs-c4-pf1"]


# the bitsliced circuits take linear gaps only: no (bitsliced, affine) case
KERNEL_CASES = [pytest.param(v, sc, id=f"{vid}-{sid}")
                for sc, sid in ((PAPER, "linear"), (AFFINE, "affine"))
                for v, vid in zip(VARIANTS, VARIANT_IDS)
                if not (v[0] == "bitsliced" and sc is AFFINE)]


@pytest.mark.parametrize(("variant", "scoring"), KERNEL_CASES)
def test_kernel_variants(variant, scoring):
    from warpalign._backends.cuda import bitsliced
    from warpalign._backends.cuda import pairs as gpu

    method, kwargs = variant
    if scoring is AFFINE and kwargs.get("rows") == 32:
        kwargs = dict(kwargs, rows=24)
    rng = np.random.default_rng(49)
    lengths = [(int(a), int(b)) for a, b in rng.integers(0, 700, (90, 2))]
    lengths += [(m, n) for m in EDGES for n in (0, 1, 64, 65)] + [(1100, 300), (128, 2000)]
    xs = [random_seq(rng, a) for a, _ in lengths]
    ys = [mutate(rng, x) if k % 2 else random_seq(rng, b)
          for k, (x, (_, b)) in enumerate(zip(xs, lengths))]
    enc = scoring.alphabet.encode
    xc, xo = concat([enc(x) for x in xs])
    yc, yo = concat([enc(y) for y in ys])
    fn = gpu.score_wordwise if method == "wordwise" else bitsliced.score_bitsliced
    scores, saturated, _ = fn(xc, xo, yc, yo, scoring, "local", **kwargs)
    assert saturated.size == 0
    want = np.array(exact(xs, ys, scoring))
    bad = np.flatnonzero(scores != want)
    assert bad.size == 0, (f"{bad.size} mismatches, e.g. pair {bad[0]} {lengths[bad[0]]}: "
                           f"gpu {scores[bad[0]]} cpu {want[bad[0]]}")


def test_kernel_variant_choices_are_checked():
    from warpalign._backends.cuda import bitsliced

    xc, xo = concat([PAPER.alphabet.encode("ACGT" * 10)])
    for kwargs, word in (({"prefetch": 2}, "prefetch"), ({"cols": 3}, "cols")):
        with pytest.raises(ValueError, match=word):
            bitsliced.score_bitsliced(xc, xo, xc, xo, PAPER, "local", **kwargs)


@pytest.mark.parametrize("variant", VARIANTS, ids=VARIANT_IDS)
def test_kernel_variants_one_band(variant):
    """The bulk shape (m <= 128: one band, the kernels without band-buffer code), uneven n
    within warps, pairs with one empty side, and an odd pair count (a half-empty item)."""
    from warpalign._backends.cuda import bitsliced
    from warpalign._backends.cuda import pairs as gpu

    method, kwargs = variant
    rng = np.random.default_rng(50)
    lengths = [(128, int(b)) for b in rng.integers(100, 400, 60)]
    lengths += [(int(a), int(b)) for a, b in rng.integers(0, 129, (40, 2))]
    lengths += [(0, 5), (7, 0), (128, 1), (1, 128)]
    xs = [random_seq(rng, a) for a, _ in lengths]
    ys = [mutate(rng, x) if k % 3 == 0 else random_seq(rng, b)
          for k, (x, (_, b)) in enumerate(zip(xs, lengths))]
    enc = PAPER.alphabet.encode
    xc, xo = concat([enc(x) for x in xs])
    yc, yo = concat([enc(y) for y in ys])
    fn = gpu.score_wordwise if method == "wordwise" else bitsliced.score_bitsliced
    scores, saturated, _ = fn(xc, xo, yc, yo, PAPER, "local", **kwargs)
    assert saturated.size == 0
    want = np.array(exact(xs, ys, PAPER))
    bad = np.flatnonzero(scores != want)
    assert bad.size == 0, (f"{bad.size} mismatches, e.g. pair {bad[0]} {lengths[bad[0]]}: "
                           f"gpu {scores[bad[0]]} cpu {want[bad[0]]}")


@pytest.mark.parametrize("scoring", [PAPER, LINEAR], ids=["paper", "linear"])
def test_bitsliced_transposes_agree(scoring):
    """W2B/B2W by __ballot_sync and by the 32x32 swap/copy network give the same scores as
    the oracle: edge lengths on either side, identical pairs (the most result bits, so
    B2W sees every plane set), random pairs, and a pair count that is not a multiple of 32."""
    from warpalign._backends.cuda import bitsliced

    rng = np.random.default_rng(51)
    lengths = [(a, b) for a in EDGES for b in EDGES]
    lengths += [(int(a), int(b)) for a, b in rng.integers(0, 300, (37, 2))]
    xs = [random_seq(rng, a) for a, _ in lengths]
    ys = [random_seq(rng, b) for _, b in lengths]
    xs += [random_seq(rng, n) for n in (65, 128, 200)]
    ys += xs[-3:]
    enc = scoring.alphabet.encode
    xc, xo = concat([enc(x) for x in xs])
    yc, yo = concat([enc(y) for y in ys])
    want = np.array(exact(xs, ys, scoring))
    for transpose in ("ballot", "swap"):
        scores, saturated, steps = bitsliced.score_bitsliced(xc, xo, yc, yo, scoring, "local",
                                                       transpose=transpose)
        assert saturated.size == 0 and {"w2b", "b2w"} <= set(steps)
        bad = np.flatnonzero(scores != want)
        assert bad.size == 0, (f"{transpose}: {bad.size} mismatches, e.g. pair {bad[0]}: "
                               f"gpu {scores[bad[0]]} cpu {want[bad[0]]}")
    with pytest.raises(ValueError):
        bitsliced.score_bitsliced(xc, xo, yc, yo, scoring, "local", transpose="shuffle")


# --------------------------------------------------------------------------- device inputs
# issue 22: CuPy arrays are read on the device (no host round trip), host arrays go up
# through pinned staging; every form equals the list-of-str form and the exact oracle.

LETTERS = np.frombuffer(b"ACGT", np.uint8)


def _rows(rng, rows, length, letters=LETTERS):
    return letters[rng.integers(0, len(letters), (rows, length))]


def _texts(rows):
    return [row.tobytes().decode() for row in rows]


@pytest.mark.parametrize("method", METHODS)
def test_cupy_inputs_equal_the_list_form(method):
    cp = pytest.importorskip("cupy")
    from warpalign.buffers import SequenceBuffer

    rng = np.random.default_rng(60)
    X, Y = _rows(rng, 300, 60), _rows(rng, 300, 150)
    Y[:40, 20:80] = X[:40]                                  # related pairs score high
    xs, ys = _texts(X), _texts(Y)
    want = exact(xs, ys, PAPER)
    d_x, d_y = cp.asarray(X), cp.asarray(Y)
    forms = {
        "list": (xs, ys),
        "numpy-2d": (X, Y),
        "cupy-2d": (d_x, d_y),
        "cupy-buffer": (SequenceBuffer(d_x.ravel(), cp.arange(301) * 60),
                        SequenceBuffer(d_y.ravel(), np.arange(301) * 150)),
        "cupy-and-list": (d_x, ys),
        "cupy-batches": (d_x, d_y),
    }
    for name, (x, y) in forms.items():
        batch = 3000 if name == "cupy-batches" else None
        res = score_pairs(x, y, PAPER, method=method, backend="cuda", batch_residues=batch)
        assert res.backend == "cuda" and res.scores.tolist() == want, name
    assert max(want) >= 80
    assert cp.array_equal(d_x, cp.asarray(X)) and cp.array_equal(d_y, cp.asarray(Y))  # unchanged
    assert score_pairs(d_x, d_y, PAPER).backend == "cuda"     # auto: the arrays' device


@pytest.mark.parametrize("scoring, letters", [(PAPER, b"ACGTNacgtn"), (AFFINE, b"ACGT"),
                                              (BLOSUM, b"ARNDCQEGHILKMFPSTWYV")],
                         ids=["paper", "affine", "blosum62"])
def test_cupy_buffer_of_unequal_lengths(scoring, letters):
    cp = pytest.importorskip("cupy")
    from warpalign.buffers import SequenceBuffer

    rng = np.random.default_rng(61)
    alphabet = np.frombuffer(letters, np.uint8)
    xs = [alphabet[rng.integers(0, len(alphabet), int(n))].tobytes().decode()
          for n in rng.integers(0, 130, 90)]
    ys = [alphabet[rng.integers(0, len(alphabet), int(n))].tobytes().decode()
          for n in rng.integers(0, 700, 90)]

    def device_buffer(seqs):
        off = np.concatenate([[0], np.cumsum([len(s) for s in seqs])])
        return SequenceBuffer(cp.asarray(np.frombuffer("".join(seqs).encode(), np.uint8)),
                              cp.asarray(off))

    res = score_pairs(device_buffer(xs), device_buffer(ys), scoring, backend="cuda",
                      method="wordwise", threshold=20, mode="full")
    want = exact(xs, ys, scoring)
    assert res.scores.tolist() == want
    assert res.indices.tolist() == [i for i, s in enumerate(want) if s >= 20]


def test_cupy_errors():
    cp = pytest.importorskip("cupy")
    from warpalign.errors import AlphabetError

    rng = np.random.default_rng(62)
    X = _rows(rng, 8, 30)
    with pytest.raises(ValueError, match=r"xs is a CuPy array on the GPU.*cupy.asnumpy\(xs\)"):
        score_pairs(cp.asarray(X), X, PAPER, backend="cpu")
    clean = _texts(X)
    X[5, 11] = ord("X")
    with pytest.raises(AlphabetError, match=r"ys\[5\]: record 'seq5', position 11.*'X'"):
        score_pairs(clean, cp.asarray(X), PAPER, backend="cuda")


def test_staging_and_device_encoding_equal_the_cpu_encoding():
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cpu import encode as cpu_encode
    from warpalign._backends.cuda import encode as gpu

    rng = np.random.default_rng(63)
    raw = np.frombuffer(b"ACGTNacgtnRY", np.uint8)[rng.integers(0, 12, 100_003)]
    table = PAPER.alphabet.code_table
    want, bad, counts = cpu_encode.encode(raw, table, counts=True)
    assert bad == -1
    for chunk, threads in ((1000, 1), (4096, 3), (99_999, None), (None, 8)):
        assert np.array_equal(gpu.stage(raw, chunk, threads).get(), raw)
    for source, staging in ((raw, "pinned"), (raw, "pageable"), (cp.asarray(raw), None)):
        codes, got_bad, got_counts = gpu.encode(source, table, counts=True, staging=staging)
        assert isinstance(codes, cp.ndarray) and got_bad == -1
        assert np.array_equal(codes.get(), want) and np.array_equal(got_counts, counts)
    broken = raw.copy()
    broken[[77_777, 90_000]] = ord("!")
    assert gpu.encode(broken, table)[1] == cpu_encode.encode(broken, table)[1] == 77_777
    with pytest.raises(ValueError, match="invalid staging"):
        gpu.encode(raw, table, staging="mapped")


@pytest.mark.parametrize("chunk, threads", [(1000, 1), (4096, 3), (99_999, 8), (None, None)])
def test_chunked_encoding_finds_the_first_bad_character_in_any_chunk(chunk, threads):
    # issue 22: host characters are encoded chunk by chunk on the device (encode.cu);
    # the first INVALID over all chunks is reported, whichever chunk's kernel ends first
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cpu import encode as cpu_encode
    from warpalign._backends.cuda import encode as gpu

    rng = np.random.default_rng(64)
    raw = np.frombuffer(b"ACGTNacgtn", np.uint8)[rng.integers(0, 10, 250_001)]
    table = PAPER.alphabet.code_table
    want = cpu_encode.encode(raw, table)[0]
    codes, bad, _ = gpu.encode(raw, table, chunk=chunk, threads=threads)
    assert bad == -1 and np.array_equal(codes.get(), want)
    for spots in ([250_000], [0], [1000, 999], [123_456, 200_000, 4096], [99_999, 99_998]):
        broken = raw.copy()
        broken[spots] = ord("#")
        first = min(spots)
        assert gpu.encode(broken, table, chunk=chunk, threads=threads)[1] == first
        assert gpu.encode(cp.asarray(broken), table)[1] == first
        assert cpu_encode.encode(broken, table)[1] == first
    # the "bytes" alphabet has no invalid character: 0xFF is a code like any other
    every = np.arange(256, dtype=np.uint8).repeat(1000)
    ident = np.arange(256, dtype=np.uint8)
    codes, bad, _ = gpu.encode(every, ident, check=False, chunk=chunk, threads=threads)
    assert bad == -1 and np.array_equal(codes.get(), every)
    assert len(gpu.encode(np.zeros(0, np.uint8), table)[0]) == 0


def test_device_encoding_at_every_place_of_a_16_character_word():
    # encode.cu takes 16 characters at a time where the characters and the codes both start
    # on 16 bytes, the rest byte by byte: a bad character at each place of the first words
    # and of the tail, with another bad one after it, is the one reported, whether the
    # slice starts on the 16-byte mark (offsets 0, 16) or off it (the byte path)
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cpu import encode as cpu_encode
    from warpalign._backends.cuda import encode as gpu

    rng = np.random.default_rng(65)
    table = PAPER.alphabet.code_table
    raw = np.frombuffer(b"ACGTNacgtn", np.uint8)[rng.integers(0, 10, 4_133)]
    for off in (0, 1, 4, 15, 16):
        side = raw[off:]
        codes, bad, _ = gpu.encode(cp.asarray(raw)[off:], table)
        assert bad == -1 and np.array_equal(codes.get(), cpu_encode.encode(side, table)[0])
        for spot in [*range(40), *range(len(side) - 40, len(side))]:
            broken = side.copy()
            broken[spot] = ord("#")
            broken[min(spot + 17, len(side) - 1)] = ord("@")
            dev = cp.asarray(np.concatenate([raw[:off], broken]))[off:]
            codes, bad, _ = gpu.encode(dev, table, check=True)
            assert bad == spot == cpu_encode.encode(broken, table)[1], (off, spot)
            assert np.array_equal(codes.get(), cpu_encode.encode(broken, table, check=False)[0])


def test_host_forms_in_many_staging_chunks_equal_the_list_form():
    # whole score_pairs calls whose host inputs span several batches (the next batch
    # staged while one is scored; 38 MB of ys, packed chunks of at most STREAM_BYTES =
    # 4 MiB: the character path's several chunks of one array are
    # test_chunked_encoding_finds_the_first_bad_character_in_any_chunk's), and
    # a bad character at the end named as on the CPU
    pytest.importorskip("cupy")
    from warpalign.buffers import SequenceBuffer
    from warpalign.errors import AlphabetError

    rng = np.random.default_rng(65)
    X, Y = _rows(rng, 36_000, 64), _rows(rng, 36_000, 1_000)
    Y[:3000, 100:164] = X[:3000]
    want = score_pairs(X, Y, PAPER, backend="cpu", method="wordwise").scores.tolist()
    assert max(want) >= 128
    for batch in (None, 10_000_000):
        for name, (x, y) in {"numpy": (X, Y), "list": (_texts(X), _texts(Y)),
                             "buffer": (SequenceBuffer(X.ravel(), np.arange(36_001) * 64),
                                        SequenceBuffer(Y.ravel(), np.arange(36_001) * 1000))
                             }.items():
            got = score_pairs(x, y, PAPER, backend="cuda", method="wordwise",
                              batch_residues=batch)
            assert got.scores.tolist() == want, (name, batch)
    Y[35_999, 650] = ord("!")
    with pytest.raises(AlphabetError, match=r"ys\[35999\]: record 'seq35999', position 650.*'!'"):
        score_pairs(X, Y, PAPER, backend="cuda")


@pytest.mark.parametrize("device", [True, False], ids=["cupy-2d", "numpy-2d"])
def test_equal_length_rows_on_every_path(device):
    # issue 22's host path for 2-D inputs: one launch planned without a sort, the largest
    # code from the encode engine (no reduction), one read of scores and saturation count;
    # ACGT rows run ww_dna, an N the table kernel, global the width test, a saturating
    # scoring the flagged read; a bad character is still named and nothing is returned
    cp = pytest.importorskip("cupy")
    from warpalign.errors import AlphabetError

    rng = np.random.default_rng(66)
    X, Y = _rows(rng, 257, 40), _rows(rng, 257, 300)
    Y[:50, 100:140] = X[:50]
    big = Scoring(match=100, mismatch=-100, gap_open=200, gap_extend=200)
    Xs, Ys = _rows(rng, 70, 400), _rows(rng, 70, 500)
    Ys[:3, 50:450] = Xs[:3]                                  # 40,000: past 16-bit lanes
    withn = Y.copy()
    withn[7, 250] = ord("N")
    put = cp.asarray if device else np.asarray
    for x, y, scoring, algorithm, method in (
            (X, Y, PAPER, "local", "auto"), (X, withn, PAPER, "local", "auto"),
            (X, Y, AFFINE, "local", "wordwise"), (X, Y, PAPER, "global", "wordwise"),
            (X, Y, PAPER, "semiglobal", "wordwise"), (X, Y, PAPER, "local", "bitsliced"),
            (Xs, Ys, big, "local", "wordwise")):
        res = score_pairs(put(x), put(y), scoring, method=method, backend="cuda",
                          algorithm=algorithm)
        want = exact(_texts(x), _texts(y), scoring, algorithm)
        assert res.scores.tolist() == want, (scoring, algorithm, method)
    assert res.saturated >= 3 and max(want) == 40_000       # the last case: flagged, rescored
    with pytest.raises(AlphabetError, match=r"ys\[7\]: record 'seq7', position 250 \(0-based\): "
                                            r"character 'N' cannot be bitsliced"):
        score_pairs(put(X), put(withn), PAPER, method="bitsliced", backend="cuda")
    bad = X.copy()
    bad[9, 33] = ord("#")
    with pytest.raises(AlphabetError, match=r"xs\[9\]: record 'seq9', position 33.*'#'"):
        score_pairs(put(bad), put(withn), PAPER, backend="cuda")


def test_wordwise_largest_code_given_or_found_alike():
    # the kernel's ``largest`` (from the encode engine) picks the same path as its own
    # reductions: ww_dna for A C G T, the table kernel from code 4 (N) on
    from warpalign._backends.cuda import pairs as gpu

    rng = np.random.default_rng(67)
    xs = [random_seq(rng, 40) for _ in range(64)]
    ys = [random_seq(rng, 200, "ACGTN" if i == 5 else "ACGT") for i in range(64)]
    enc = [PAPER.alphabet.encode(s) for s in xs], [PAPER.alphabet.encode(s) for s in ys]
    args = (*concat(enc[0]), *concat(enc[1]), PAPER)
    top = int(max(max(c.max() for c in enc[0]), max(c.max() for c in enc[1])))
    assert top == 4
    found = gpu.score_wordwise(*args)
    given = gpu.score_wordwise(*args, largest=top)
    assert found[0].tolist() == given[0].tolist() == exact(xs, ys, PAPER)


def test_encode_sides_reads_every_side_in_one_call():
    # the CUDA encode engine: sides on the device, on the host, or one of each give the
    # CPU engine's codes, first bad character, counts and largest code
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cpu import encode as cpu_encode
    from warpalign._backends.cuda import encode as gpu

    rng = np.random.default_rng(68)
    table = PAPER.alphabet.code_table
    acgt = np.frombuffer(b"ACGTacgt", np.uint8)[rng.integers(0, 8, 50_001)]
    withn = np.frombuffer(b"ACGTN", np.uint8)[rng.integers(0, 5, 70_000)]
    broken = acgt.copy()
    broken[[4321, 40_000]] = ord("!")
    sides = [acgt, withn, broken, np.zeros(0, np.uint8)]
    want = cpu_encode.encode_sides(sides, table, counts=True)
    assert [w[3] for w in want] == [3, 4, 255, 0] and want[2][1] == 4321
    for where in ("host", "device", "mixed"):
        raws = [cp.asarray(s) if where == "device" or (where == "mixed" and k % 2) else s
                for k, s in enumerate(sides)]
        got = gpu.encode_sides(raws, table, counts=True, chunk=20_000)
        for (codes, bad, counted, top), (wc, wb, wn, wt) in zip(got, want):
            assert isinstance(codes, cp.ndarray) and np.array_equal(codes.get(), wc), where
            assert (bad, top) == (wb, wt), where
            assert (counted is None) == (wn is None)
            assert counted is None or np.array_equal(counted, wn)


def test_kept_plans_serve_every_thread_and_shape(monkeypatch):
    # issue 22: score_wordwise keeps the plan of one query and one target length with its
    # device arrays (planned_wordwise); eight threads scoring 2-D inputs of three shapes
    # and two scorings at once, with room for only two plans (plans made, taken and
    # evicted while other threads launch from them), each get the exact scores
    from concurrent.futures import ThreadPoolExecutor

    cp = pytest.importorskip("cupy")
    from warpalign._backends.cuda import pairs as gpu

    monkeypatch.setattr(gpu, "_plans", type(gpu._plans)())
    monkeypatch.setattr(gpu, "PLAN_CACHE", 2)
    rng = np.random.default_rng(71)
    cases = []
    for k in range(24):
        n, m, w = ((96, 40, 300), (64, 33, 257), (130, 64, 128))[k % 3]
        x, y = _rows(rng, n, m), _rows(rng, n, w)
        y[: n // 2, 10:10 + m] = x[: n // 2]
        scoring = (PAPER, AFFINE)[k % 2]
        cases.append((x, y, scoring, exact(_texts(x), _texts(y), scoring)))

    def run(case):
        x, y, scoring, want = case
        for put in (cp.asarray, np.asarray):
            got = score_pairs(put(x), put(y), scoring, method="wordwise", backend="cuda")
            assert got.scores.tolist() == want
        return True

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(run, cases))
    assert 1 <= len(gpu._plans) <= 2
