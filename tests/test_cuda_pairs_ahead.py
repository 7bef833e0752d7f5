"""score_pairs from CuPy arrays with one read back (issue 22) on a device: the
``pairs_ahead`` engine queues the x encode, the kept plan of codes below 4,
ww_ypack_chars (y's characters packed, y's encode flags; ww_ypack from y's codes in mode
full) and ww_dna (guarded by the flags) and reads flags, scores and saturation count
once; every outcome equals the CPU backend's and the other input forms'. Its host side
is checked on the CPU (tests/test_pairs_ahead.py, an emulated device)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from warpalign import Scoring
from warpalign._backends.registry import using
from warpalign.errors import AlphabetError
from warpalign.pairs import score_pairs

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("pairs_device")]

PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
BIG = Scoring(match=10, mismatch=-10, gap_open=20, gap_extend=20)   # saturates 16 bits


class CountingAhead:
    """The pairs_ahead engine, its calls and kept results counted (registry.using: no
    global patched)."""

    def __init__(self):
        from warpalign._backends.cuda import pairs_ahead
        self.engine, self.calls, self.kept = pairs_ahead, 0, 0

    def applies(self, scoring, algorithm):
        return self.engine.applies(scoring, algorithm)

    def encode_and_score(self, *args, **kwargs):
        self.calls += 1
        out = self.engine.encode_and_score(*args, **kwargs)
        self.kept += out[1] is not None
        return out


def _counted():
    return using("pairs_ahead", "cuda", "wordwise", CountingAhead())


def _rows(rng, rows, length, letters=b"ACGT"):
    alphabet = np.frombuffer(letters, np.uint8)
    return alphabet[rng.integers(0, len(alphabet), (rows, length))]


def _texts(rows):
    return [row.tobytes().decode() for row in rows]


def _cpu(x, y, scoring, **kwargs):
    return score_pairs(x, y, scoring, backend="cpu", method="wordwise", **kwargs)


def test_cupy_2d_with_one_read_equal_the_cpu():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(80)
    X, Y = _rows(rng, 3000, 128), _rows(rng, 3000, 700)
    Y[:500, 200:328] = X[:500]                               # planted reads: high scores
    Y[500:520, 10:138] = X[500:520] + 32                    # lowercase (a = A + 32)
    X[600:610] += 32
    want = _cpu(X, Y, PAPER).scores.tolist()
    assert max(want) == 256
    with _counted() as ahead:
        for method in ("auto", "wordwise"):
            res = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda",
                              method=method)
            assert res.method == "wordwise" and res.scores.tolist() == want, method
            assert res.saturated == 0
        res = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda", threshold=200)
        assert res.indices.tolist() == [i for i, v in enumerate(want) if v >= 200]
        res = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda",
                          threshold=200, mode="full")
        assert res.scores.tolist() == want
        assert res.alignments.scores.tolist() == [v for v in want if v >= 200]
        res = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda",
                          batch_residues=300_000)                # several batches
        assert res.scores.tolist() == want
        calls = ahead.calls
        assert calls == ahead.kept >= 6
        # other input forms, scorings, methods and the fused mode keep the flags-first
        # order, with the same scores
        for x, y in ((X, Y), (_texts(X), _texts(Y)), (cp.asarray(X), _texts(Y))):
            assert score_pairs(x, y, PAPER, backend="cuda").scores.tolist() == want
        assert score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda",
                           method="bitsliced").scores.tolist() == want
        full = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda", mode="full")
        assert full.scores.tolist() == want
        for scoring, algorithm in ((AFFINE, "local"), (PAPER, "global")):
            got = score_pairs(cp.asarray(X[:300]), cp.asarray(Y[:300]), scoring,
                              backend="cuda", algorithm=algorithm)
            assert got.scores.tolist() == _cpu(X[:300], Y[:300], scoring,
                                               algorithm=algorithm).scores.tolist()
        assert ahead.calls == calls


@pytest.mark.parametrize("shape", [(1, 1, 1), (33, 1, 7), (5, 0, 9), (7, 9, 0), (64, 65, 31),
                                   (40, 800, 900)])
def test_cupy_2d_edge_shapes(shape):
    cp = pytest.importorskip("cupy")
    n, m, w = shape
    rng = np.random.default_rng(84)
    X, Y = _rows(rng, n, m), _rows(rng, n, w)
    k = min(m, w)
    Y[: n // 2, :k] = X[: n // 2, :k]
    want = _cpu(X, Y, PAPER).scores.tolist()
    with _counted() as ahead:
        res = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda")
    assert res.scores.tolist() == want and ahead.calls == ahead.kept == 1


def test_cupy_2d_saturation_is_rescored():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(81)
    X, Y = _rows(rng, 300, 128), _rows(rng, 300, 4000)
    Y[:4, 1000:1128] = X[:4]
    Xl, Yl = _rows(rng, 40, 3400), _rows(rng, 40, 3500)
    Yl[:3, 50:3450] = Xl[:3]                                 # 34,000: past 16-bit lanes
    with _counted() as ahead:
        for x, y in ((X, Y), (Xl, Yl)):
            want = _cpu(x, y, BIG).scores.tolist()
            res = score_pairs(cp.asarray(x), cp.asarray(y), BIG, backend="cuda")
            assert res.scores.tolist() == want
        assert res.saturated >= 3 and max(want) == 34_000
        assert ahead.calls == ahead.kept == 2


#: Bad characters (side, row, column; negative: from the end), the first one last (the xs
#: side's first when both have one); "y-everywhere": column 5 of every y row.
BAD_SPOTS = {"x-first-row": [("x", 0, 0)], "x-last-row": [("x", -1, -1)],
             "y-first-row": [("y", 0, 17)], "y-first-char": [("y", 0, 0)],
             "y-last-row": [("y", -1, -1)],
             "y-several": [("y", -1, 0), ("y", -2, 3), ("y", 7, -1), ("y", 7, -2)],
             "y-everywhere": [("y", 0, 5)], "both-sides": [("y", 3, 5), ("x", 250, 9)]}


# 140,000 pairs of 16 x 24: ww_ypack_chars' grid (at most 65,535 blocks) strides over
# 70,000 items of G = 1, so a block reduces the bad characters of several items
@pytest.mark.parametrize("shape", [(400, 50, 300), (140_000, 16, 24)], ids=["400", "140000"])
@pytest.mark.parametrize("where", list(BAD_SPOTS))
def test_cupy_2d_bad_character_as_every_form(where, shape):
    # the same AlphabetError (record, position, character) as the NumPy and list forms; y's
    # through ww_ypack_chars' flags
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(82)
    n, m, w = shape
    X, Y = _rows(rng, n, m), _rows(rng, n, w)
    spots = [(X if side == "x" else Y, row % n, col % (m if side == "x" else w))
             for side, row, col in BAD_SPOTS[where]]
    if where == "y-everywhere":
        Y[:, 5] = ord("#")
    for array, row, col in spots:
        array[row, col] = ord("#")
    errors = []
    with _counted() as ahead:
        for x, y in ((cp.asarray(X), cp.asarray(Y)), (X, Y), (_texts(X), _texts(Y))):
            with pytest.raises(AlphabetError) as caught:
                score_pairs(x, y, PAPER, backend="cuda")
            errors.append(str(caught.value))
        assert ahead.calls == 1 and ahead.kept == 0
    with pytest.raises(AlphabetError) as caught:
        score_pairs(X, Y, PAPER, backend="cpu")
    assert errors == [str(caught.value)] * 3
    side = "xs" if spots[-1][0] is X else "ys"
    assert errors[0].startswith(f"{side}[{spots[-1][1]}]: record 'seq{spots[-1][1]}', "
                                f"position {spots[-1][2]} (0-based)")


#: Query lengths that make several word-wise launches (G = 1, 2, 4, 32 and two bands).
XLENS = (20, 60, 100, 700, 1100)
#: Codes placed in the widest target of a launch counted from the end: (launch, column,
#: character) each.
LATE = {"clean": [], "N-late": [(-1, 10, "N")], "#-late": [(-1, 10, "#")],
        "#-in-two": [(-1, 10, "#"), (-2, 5, "#")], "N-and-#": [(-1, 10, "#"), (-2, 5, "N")]}


@pytest.mark.parametrize("late", list(LATE))
def test_cupy_buffer_of_several_launches(late):
    # a CuPy SequenceBuffer of several query lengths: one engine call of several launches
    # (each ww_ypack_chars + ww_dna); an N or a bad character in the last launches only
    # (earlier launches' ww_dna ran with the guard open) is still a rerun or the CPU's error
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cuda import pairs as gpu
    from warpalign.buffers import SequenceBuffer

    rng = np.random.default_rng(86)
    letters = np.frombuffer(b"ACGTacgt", np.uint8)
    xlens = np.array(XLENS)[rng.integers(0, len(XLENS), 600)]
    ylens = rng.integers(0, 1500, 600)
    xs = [letters[rng.integers(0, 8, int(k))] for k in xlens]
    ys = [letters[rng.integers(0, 8, int(k))] for k in ylens]
    for x, y in zip(xs[::3], ys[::3]):
        k = min(x.size // 2, y.size)
        y[:k] = x[:k]
    xoff, yoff = (np.concatenate([[0], np.cumsum([len(r) for r in rows])]) for rows in (xs, ys))
    plan = gpu.plan_wordwise(None, xoff, None, yoff, PAPER, "local", rows=None, prefetch=None,
                             largest=3)
    launches = [[int(p) for p in plan.small[at] if p >= 0] for *_, at, _, _ in plan.launches]
    assert len(launches) >= 4
    for k, col, letter in LATE[late]:
        ys[max(launches[k], key=lambda p: ys[p].size)][col] = ord(letter)
    X, Y = np.concatenate(xs), np.concatenate(ys)
    try:
        want = _cpu(SequenceBuffer(X, xoff), SequenceBuffer(Y, yoff), PAPER).scores.tolist()
    except AlphabetError as exc:
        want = str(exc)
    with _counted() as ahead:
        try:
            got = score_pairs(SequenceBuffer(cp.asarray(X), xoff),
                              SequenceBuffer(cp.asarray(Y), yoff), PAPER,
                              backend="cuda").scores.tolist()
        except AlphabetError as exc:
            got = str(exc)
    assert got == want and ahead.calls == 1 and ahead.kept == (late == "clean")
    assert isinstance(want, str) == ("#" in late)


def test_cupy_2d_with_n_and_iupac_rerun_as_planned_after_the_flags():
    # codes >= 4: the first pass writes nothing, the codes are scored on the table path
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(83)
    X, Y = _rows(rng, 500, 100), _rows(rng, 500, 400)
    Y[:100, 50:150] = X[:100]
    for letters in (b"N", b"n", b"RYKM"):
        x, y = X.copy(), Y.copy()
        at = rng.integers(0, 400, 30)
        y[at, at % 400] = np.frombuffer(letters, np.uint8)[at % len(letters)]
        x[499, 99] = letters[0]
        want = _cpu(x, y, PAPER).scores.tolist()
        with _counted() as ahead:
            res = score_pairs(cp.asarray(x), cp.asarray(y), PAPER, backend="cuda")
        assert res.method == "wordwise" and res.scores.tolist() == want, letters
        assert ahead.calls == 1 and ahead.kept == 0
    with _counted() as ahead:                      # and the next call takes the path again
        res = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda")
    assert res.scores.tolist() == _cpu(X, Y, PAPER).scores.tolist() and ahead.kept == 1


def test_one_read_paths_serve_every_thread(monkeypatch):
    # eight threads at once, CuPy rows of three shapes, two scorings, an N or a bad
    # character in some, room for two kept plans: each gets the CPU's scores or error
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cuda import pairs as gpu

    monkeypatch.setattr(gpu, "_plans", type(gpu._plans)())
    monkeypatch.setattr(gpu, "PLAN_CACHE", 2)
    rng = np.random.default_rng(85)
    cases = []
    for k in range(24):
        n, m, w = ((96, 40, 300), (64, 33, 257), (130, 64, 128))[k % 3]
        x, y = _rows(rng, n, m, b"ACGTacgt"), _rows(rng, n, w)
        y[: n // 2, 10:10 + m] = x[: n // 2]
        if k % 4 == 1:
            y[n - 1, w - 1] = ord("N")
        if k % 8 == 3:
            x[n // 3, 5] = ord("!")
        scoring = (PAPER, BIG)[k % 2]
        try:
            want = _cpu(x, y, scoring).scores.tolist()
        except AlphabetError as exc:
            want = str(exc)
        cases.append((x, y, scoring, want))

    def run(case):
        x, y, scoring, want = case
        for _ in range(2):
            try:
                got = score_pairs(cp.asarray(x), cp.asarray(y), scoring,
                                  backend="cuda").scores.tolist()
            except AlphabetError as exc:
                got = str(exc)
            assert got == want
        return True

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(run, cases))
    assert 1 <= len(gpu._plans) <= 2
