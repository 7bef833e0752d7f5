"""score_pairs from CuPy arrays with one read back (issue 22) on a device: the
``pairs_ahead`` engine queues the encode, the kept plan of codes below 4, ww_ypack and
ww_dna (guarded by the encode's flags) and reads flags, scores and saturation count
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
        assert ahead.calls == 1 and ahead.kept == 0
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


def _packed_both_ways(cp, xoff, yoff, ychars, table):
    """Each ww_dna launch's columns packed by ww_ypack from y's encoded codes and by
    ww_ypack_raw from its characters, with the encode's and ww_ypack_raw's flags."""
    from warpalign._backends.cuda import encode as gpu_encode
    from warpalign._backends.cuda import pairs as gpu
    plan, device = gpu.planned_wordwise(cp, None, xoff, None, yoff, PAPER, "local", rows=None,
                                        prefetch=None, largest=3)
    mod = gpu.pairs_module((*plan.names, "ww_ypack_raw"))
    codes = cp.empty(max(ychars.size, 1), dtype=cp.uint8)[:ychars.size]
    by_encode, by_raw = cp.zeros(2, dtype=cp.uint64), cp.zeros(2, dtype=cp.uint64)
    gpu_encode.queue_encode(cp, [ychars], table, [codes], by_encode)
    d_table, open_guard = gpu_encode.device_table(cp, table), cp.zeros(4, dtype=cp.uint64)
    columns = []
    for _, _, g, _, nitems, _, at, pack, _ in plan.launches:
        nall = device[pack].size - 1
        head = (device[1], device[at], np.int32(nitems), np.int32(2 * g), device[pack],
                np.int32(nall))
        size = int(plan.small[pack][-1]) // 4
        one, two = cp.full(size, 7, cp.uint32), cp.full(size, 9, cp.uint32)
        grid = (min(nall, 65535),)
        mod.get_function("ww_ypack")(grid, (128,), (codes, *head, one, open_guard))
        mod.get_function("ww_ypack_raw")(grid, (128,), (ychars, *head, two, d_table, by_raw))
        columns.append((one.get(), two.get()))
    return columns, by_encode.get(), by_raw.get()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_y_packed_from_characters_as_from_codes(seed):
    # ww_ypack_raw (y encoded into ww_dna's columns in one pass) writes ww_ypack's bytes
    # from the encode's codes and the largest code as encode_bytes does (255: a bad
    # character; the first one's index is left to encode_bytes): pairs of any lengths
    # (several launches, odd offsets), y read at an odd address, lowercase, N, IUPAC, bad
    # characters in several pairs
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(90 + seed)
    n = 600
    xl, yl = rng.integers(1, 140, n), rng.integers(0, 2000, n)
    xl[:3], yl[3:6] = (900, 30, 1), 0
    xoff = np.concatenate([[0], np.cumsum(xl)]).astype(np.int64)
    yoff = np.concatenate([[0], np.cumsum(yl)]).astype(np.int64)
    chars = _rows(rng, 1, int(yoff[-1]) + 1, b"ACGTacgt")[0]
    table = PAPER.alphabet.code_table
    cases = {"acgt": chars.copy()}
    cases["n-iupac"] = chars.copy()
    cases["n-iupac"][rng.integers(0, chars.size, 40)] = np.frombuffer(b"NnRY", np.uint8)[
        rng.integers(0, 4, 40)]
    cases["bad"] = cases["n-iupac"].copy()
    cases["bad"][[int(yoff[500]) + 1, int(yoff[17]) + 9, int(yoff[450])]] = ord("#")
    for label, raw in cases.items():
        whole = cp.asarray(raw)
        for ychars in (whole[:-1], whole[1:]):        # aligned, then one byte off
            columns, by_encode, by_raw = _packed_both_ways(cp, xoff, yoff, ychars, table)
            assert len(columns) >= 2, label
            for one, two in columns:
                assert np.array_equal(one, two), label
            assert by_raw.tolist() == [0, by_encode[1]], label
            assert by_raw[1] == int(table[ychars.get()].max()), label   # 255: bad


def test_y_codes_or_not_the_same_batch():
    # encode_and_score with y's codes or packed from its characters: the same scores,
    # saturated pairs, flags and x codes; y's codes made only where the caller needs them
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cuda import pairs_ahead
    rng = np.random.default_rng(95)
    X, Y = _rows(rng, 120, 3400), _rows(rng, 120, 3500)
    Y[:3, 50:3450] = X[:3]                                   # 34,000: past 16-bit lanes
    xoff, yoff = np.arange(121) * 3400, np.arange(121) * 3500
    table = BIG.alphabet.code_table
    raws = [cp.asarray(X.ravel()), cp.asarray(Y.ravel())]
    got = [pairs_ahead.encode_and_score(raws, table, xoff, yoff, BIG, y_codes=y_codes)
           for y_codes in (True, False)]
    (sides_a, (scores_a, flagged_a), _), (sides_b, (scores_b, flagged_b), _) = got
    assert scores_a.tolist() == scores_b.tolist() and flagged_a.tolist() == flagged_b.tolist()
    assert flagged_a.tolist() == [0, 1, 2]                  # so y's codes are there again
    for a, b in zip(sides_a, sides_b):
        assert a[1:] == b[1:] and np.array_equal(a[0].get(), b[0].get())
    unflagged = np.setdiff1d(np.arange(120), flagged_a)
    want = _cpu(X[unflagged], Y[unflagged], BIG).scores
    assert np.array_equal(scores_b[unflagged], want)
    sides, (scores, flagged), _ = pairs_ahead.encode_and_score(
        [raws[0][:3400 * 50], raws[1][:3500 * 50]], table, xoff[:51], yoff[:51], PAPER,
        y_codes=False)
    assert sides[1][0] is None and flagged.size == 0
    assert scores.tolist() == _cpu(X[:50], Y[:50], PAPER).scores.tolist()
