"""score_pairs with one read back (issue 22) on a device: the ``pairs_ahead`` engine
queues the encode (CuPy inputs; host inputs are staged in groups of pairs), the kept plan
of codes below 4, ww_ypack and ww_dna (guarded by the encode's flags) and reads flags,
scores and saturation counts once; every outcome equals the CPU backend's and the other
input forms'. Its host side is checked on the CPU (tests/test_pairs_ahead.py, an
emulated device)."""

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

    def stages(self, table):
        return self.engine.stages(table)

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
        for x, y in ((X, Y), (_texts(X), _texts(Y))):          # host sides: in groups
            assert score_pairs(x, y, PAPER, backend="cuda").scores.tolist() == want
        calls += 2
        assert ahead.calls == ahead.kept == calls
        # mixed sides, other scorings, methods and the fused mode keep the flags-first
        # order, with the same scores
        assert score_pairs(cp.asarray(X), _texts(Y), PAPER,
                           backend="cuda").scores.tolist() == want
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


@pytest.mark.parametrize("where", ["x-first-row", "x-last-row", "y-first-row", "y-last-row",
                                   "both-sides"])
def test_cupy_2d_bad_character_as_every_form(where):
    # the same AlphabetError (record, position, character) as the NumPy and list forms
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(82)
    X, Y = _rows(rng, 400, 50), _rows(rng, 400, 300)
    spots = {"x-first-row": [(X, 0, 0)], "x-last-row": [(X, 399, 49)],
             "y-first-row": [(Y, 0, 17)], "y-last-row": [(Y, 399, 299)],
             "both-sides": [(Y, 3, 5), (X, 250, 9)]}[where]
    for array, row, col in spots:
        array[row, col] = ord("#")
    errors = []
    with _counted() as ahead:
        for x, y in ((cp.asarray(X), cp.asarray(Y)), (X, Y), (_texts(X), _texts(Y))):
            with pytest.raises(AlphabetError) as caught:
                score_pairs(x, y, PAPER, backend="cuda")
            errors.append(str(caught.value))
        assert ahead.calls == 3 and ahead.kept == 0
    with pytest.raises(AlphabetError) as caught:
        score_pairs(X, Y, PAPER, backend="cpu")
    assert errors == [str(caught.value)] * 3
    side = "xs" if spots[-1][0] is X else "ys"
    assert errors[0].startswith(f"{side}[{spots[-1][1]}]: record 'seq{spots[-1][1]}', "
                                f"position {spots[-1][2]} (0-based)")


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


def _ragged(rng, count, lo, hi, letters=b"ACGT"):
    return [_rows(rng, 1, int(n), letters)[0] for n in rng.integers(lo, hi, count)]


@pytest.mark.parametrize("group", [None, 200_000, 9_999])
def test_host_sides_in_groups_equal_the_cpu(monkeypatch, group):
    # NumPy rows and ragged lists in groups of pairs (the default: one group here), each
    # group's kernels queued after its staged codes: scores, saturation, N and bad
    # characters as the CPU backend's
    from warpalign._backends.cuda import pairs_ahead
    if group is not None:
        monkeypatch.setattr(pairs_ahead, "GROUP_BYTES", group)
    rng = np.random.default_rng(86)
    X, Y = _rows(rng, 2000, 128, b"ACGTacgt"), _rows(rng, 2000, 600)
    Y[:300, 100:228] = X[:300]
    xs, ys = _ragged(rng, 1500, 1, 200), _ragged(rng, 1500, 0, 900, b"ACGTacgt")
    for i in range(0, 1500, 7):
        ys[i] = np.concatenate([ys[i], xs[i]])
    texts = ([r.tobytes().decode() for r in xs], [r.tobytes().decode() for r in ys])
    with _counted() as ahead:
        for x, y in ((X, Y), texts):
            want = _cpu(x, y, PAPER).scores.tolist()
            assert score_pairs(x, y, PAPER, backend="cuda").scores.tolist() == want
        assert ahead.calls == ahead.kept == 2
        Xl, Yl = _rows(rng, 40, 3400), _rows(rng, 40, 3500)
        Yl[[0, 17, 39], 50:3450] = Xl[[0, 17, 39]]            # 34,000: past 16-bit lanes
        res = score_pairs(Xl, Yl, BIG, backend="cuda")
        assert res.scores.tolist() == _cpu(Xl, Yl, BIG).scores.tolist()
        assert res.saturated >= 3 and ahead.kept == 3
        y = Y.copy()
        y[1999, 599] = ord("n")                               # the last group's last code
        assert score_pairs(X, y, PAPER, backend="cuda").scores.tolist() == _cpu(
            X, y, PAPER).scores.tolist()
        y[1000, 3] = ord("#")
        with pytest.raises(AlphabetError) as gpu_error:
            score_pairs(X, y, PAPER, backend="cuda")
        assert ahead.calls == 5 and ahead.kept == 3
    with pytest.raises(AlphabetError) as cpu_error:
        score_pairs(X, y, PAPER, backend="cpu")
    assert str(gpu_error.value) == str(cpu_error.value)


def test_host_groups_serve_every_thread(monkeypatch):
    # eight threads staging host rows at once (a staging stream each), several groups
    from warpalign._backends.cuda import pairs_ahead
    monkeypatch.setattr(pairs_ahead, "GROUP_BYTES", 30_000)
    rng = np.random.default_rng(87)
    cases = []
    for k in range(16):
        n, m, w = ((300, 40, 300), (200, 33, 257))[k % 2]
        x, y = _rows(rng, n, m, b"ACGTacgt"), _rows(rng, n, w)
        y[: n // 2, 10:10 + m] = x[: n // 2]
        if k % 4 == 1:
            y[n - 1, w - 1] = ord("N")
        cases.append((x, y, _cpu(x, y, PAPER).scores.tolist()))

    def run(case):
        x, y, want = case
        return all(score_pairs(x, y, PAPER, backend="cuda").scores.tolist() == want
                   for _ in range(2))

    with ThreadPoolExecutor(8) as pool:
        assert all(pool.map(run, cases))
