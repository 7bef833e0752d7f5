"""score_pairs from CuPy arrays with one read back (issue 22) on a device: the
``pairs_ahead`` engine queues x's encode, the kept plan of codes below 4, ww_ypack_chars
(y's columns packed from its characters, y's flags found there) and ww_dna (guarded by
the flags) and reads flags, scores and saturation count once, y's codes made after only
where they are read; every outcome, and y's flags and codes, equal the CPU backend's and
the other input forms'. Its host side is checked on the CPU (tests/test_pairs_ahead.py,
an emulated device)."""

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


# ------------------------------------- ww_ypack_chars: y packed from its characters


def _engine(cp, xs, ys, scoring=PAPER, codes=False):
    """The pairs_ahead engine itself on lists of rows (1-D uint8 arrays of characters):
    (sides, scored, timings), and the flat y characters on the host."""
    from warpalign._backends.cuda import pairs_ahead
    flat = [np.concatenate(side) if len(side) else np.zeros(0, np.uint8) for side in (xs, ys)]
    offs = [np.concatenate([[0], np.cumsum([len(s) for s in side])]).astype(np.int64)
            for side in (xs, ys)]
    got = pairs_ahead.encode_and_score([cp.asarray(f) for f in flat],
                                       scoring.alphabet.code_table, *offs, scoring, "local",
                                       codes=codes)
    return got, flat


def _encoded(cp, flat, scoring=PAPER):
    """Per side (codes on the host, first bad index, largest code) by the CPU encode
    engine, and (first bad index, largest code) by the CUDA encode engine: what
    pairs_ahead's y side must report though y is never encoded before ww_ypack_chars."""
    from warpalign._backends.cpu.encode import encode_sides as cpu_sides
    from warpalign._backends.cuda.encode import encode_sides as gpu_sides
    table = scoring.alphabet.code_table
    cpu = [(codes, bad, top) for codes, bad, _, top in cpu_sides(flat, table)]
    gpu = [(bad, top) for _, bad, _, top in gpu_sides([cp.asarray(f) for f in flat], table)]
    assert gpu == [(bad, top) for _, bad, top in cpu]
    return cpu


def _check_sides(sides, want, made):
    """pairs_ahead's per-side answer against the encode engines' (``_encoded``); y's codes
    present exactly where ``made``."""
    for k, ((codes, bad, counted, top), (wcodes, wbad, wtop)) in enumerate(zip(sides, want)):
        assert (bad, top, counted) == (wbad, wtop, None), k
        if k == 1 and not made:
            assert codes is None
        else:
            assert np.array_equal(codes.get(), wcodes), k


@pytest.mark.parametrize("spots", [
    [(0, 0)], [(399, 299)], [(200, 0)], [(200, 299)], [(199, 299), (200, 0)],
    [(350, 3), (121, 0), (120, 299), (300, 10), (120, 150)],     # the smallest: (120, 150)
], ids=["first", "last", "pair-first", "pair-last", "pair-edge", "several"])
@pytest.mark.parametrize("char", [b"#", b"N"])
def test_y_flags_found_by_ww_ypack_chars(spots, char):
    # a bad character (255) or an N (4) in y only: ww_ypack_chars writes y's flags as the
    # encode would (the smallest bad index, the largest code), ww_dna writes nothing, and
    # y's codes are made after the read for the caller
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(86)
    X, Y = _rows(rng, 400, 50), _rows(rng, 400, 300)
    for row, col in spots:
        Y[row, col] = char[0]
    (sides, scored, timings), flat = _engine(cp, list(X), list(Y))
    want = _encoded(cp, flat)
    assert scored is None and want[1][2] == (255 if char == b"#" else 4)
    if char == b"#":
        assert want[1][1] == min(r * 300 + c for r, c in spots)
    _check_sides(sides, want, made=True)
    assert {"encode", "pack", "swa", "g2h"} <= set(timings)


@pytest.mark.parametrize("x_char, y_spots", [
    (b"#", [(3, 0)]), (b"#", [(390, 299), (12, 7)]), (b"N", [(0, 0)]), (b"#", []),
])
def test_y_flags_found_where_x_closed_the_guard(x_char, y_spots):
    # x's bad character or N closes ww_ypack_chars' guard (no column stored), but it still
    # reads every y character: y's flags come back in the same one read, exact
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(87)
    X, Y = _rows(rng, 400, 50), _rows(rng, 400, 300)
    X[77, 13] = x_char[0]
    for row, col in y_spots:
        Y[row, col] = ord("#")
    (sides, scored, _), flat = _engine(cp, list(X), list(Y))
    assert scored is None
    _check_sides(sides, _encoded(cp, flat), made=True)


def test_clean_y_is_never_encoded_unless_asked():
    # A C G T (either case) only: the scores of the CPU, y's codes not made in mode
    # "score" (None) and made, equal to the encode's, when the caller asks
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(88)
    X, Y = _rows(rng, 1000, 128, b"ACGTacgt"), _rows(rng, 1000, 900, b"ACGTacgt")
    Y[:200, 100:228] = X[:200]
    want = _cpu(X, Y, PAPER).scores.tolist()
    for codes in (False, True):
        (sides, scored, _), flat = _engine(cp, list(X), list(Y), codes=codes)
        assert scored[0].tolist() == want and scored[1].size == 0
        _check_sides(sides, _encoded(cp, flat), made=codes)


def test_flagged_pairs_get_y_codes_for_the_rescore():
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(89)
    X, Y = _rows(rng, 40, 3400), _rows(rng, 40, 3500)
    Y[:3, 50:3450] = X[:3]                                   # 34,000: past 16-bit lanes
    (sides, scored, _), flat = _engine(cp, list(X), list(Y), BIG)
    scores, flagged = scored
    assert flagged.tolist() == [0, 1, 2]
    keep = np.setdiff1d(np.arange(40), flagged)
    assert scores[keep].tolist() == np.asarray(_cpu(X, Y, BIG).scores)[keep].tolist()
    _check_sides(sides, _encoded(cp, flat, BIG), made=True)


def _buffer(cp, rows):
    """A device SequenceBuffer of these rows (1-D uint8 arrays of characters)."""
    from warpalign.buffers import SequenceBuffer
    off = np.concatenate([[0], np.cumsum([len(r) for r in rows])])
    return SequenceBuffer(cp.asarray(np.concatenate(rows)), off)


def test_several_launches_with_n_or_bad_character_in_a_later_one():
    # queries of several lengths: several ww_ypack_chars / ww_dna launches (short queries
    # first), an earlier ww_dna running before a later ww_ypack_chars finds y's N or bad
    # character; the caller still gets the CPU's scores or error
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(90)
    lengths = rng.choice([20, 130, 700], 300)
    xs = [_rows(rng, 1, int(n))[0] for n in lengths]
    ys = [_rows(rng, 1, int(n))[0] for n in rng.integers(100, 900, 300)]
    longest = int(np.flatnonzero(lengths == 700)[-1])        # a pair of the last launch
    for letter in (b"N", b"#"):
        y = [row.copy() for row in ys]
        y[longest][-1] = letter[0]
        (sides, scored, _), flat = _engine(cp, xs, y)
        assert scored is None
        _check_sides(sides, _encoded(cp, flat), made=True)
        with _counted() as ahead:
            if letter == b"#":
                with pytest.raises(AlphabetError) as gpu:
                    score_pairs(_buffer(cp, xs), _buffer(cp, y), PAPER, backend="cuda")
                with pytest.raises(AlphabetError) as cpu:
                    score_pairs(_texts(xs), _texts(y), PAPER, backend="cpu")
                assert str(gpu.value) == str(cpu.value)
            else:
                res = score_pairs(_buffer(cp, xs), _buffer(cp, y), PAPER, backend="cuda")
                assert res.scores.tolist() == _cpu(_texts(xs), _texts(y), PAPER).scores.tolist()
        assert ahead.calls == 1 and ahead.kept == 0


def test_mode_full_with_a_threshold_aligns_from_the_codes():
    # mode "full" with a threshold takes pairs_ahead and aligns the reported pairs from
    # both sides' codes (asked for: made after the read): the CPU's alignments
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng(91)
    X, Y = _rows(rng, 600, 100), _rows(rng, 600, 500)
    Y[:150, 30:130] = X[:150]
    Y[150:160, 0:100] = X[150:160]                            # from the first y character
    Y[160:170, 400:500] = X[160:170]                          # to the last
    cpu = score_pairs(X, Y, PAPER, backend="cpu", threshold=60, mode="full")
    with _counted() as ahead:
        gpu = score_pairs(cp.asarray(X), cp.asarray(Y), PAPER, backend="cuda",
                          threshold=60, mode="full")
    assert ahead.calls == ahead.kept == 1
    assert gpu.scores.tolist() == cpu.scores.tolist() and len(gpu.indices) >= 170
    assert gpu.indices.tolist() == cpu.indices.tolist()
    assert gpu.alignments == cpu.alignments


def test_non_contiguous_y_views():
    # a strided CuPy buffer (a SequenceBuffer of every other byte) and a 2-D view of every
    # other column: ww_ypack_chars reads a contiguous copy; the CPU's scores or error
    cp = pytest.importorskip("cupy")
    from warpalign.buffers import SequenceBuffer

    rng = np.random.default_rng(92)
    X, Y = _rows(rng, 300, 64), _rows(rng, 300, 400)
    Y[:60, 100:164] = X[:60]
    withn, bad = Y.copy(), Y.copy()
    withn[7, 399] = ord("N")
    bad[5, 17] = ord("#")

    def every_other(rows):
        wide = np.full((rows.shape[0], 2 * rows.shape[1]), ord("#"), np.uint8)
        wide[:, ::2] = rows
        return cp.asarray(wide)

    with _counted() as ahead:
        for rows in (Y, withn):
            strided = SequenceBuffer(every_other(rows).ravel()[::2], np.arange(301) * 400)
            assert not strided.buffer.flags.c_contiguous
            got = score_pairs(cp.asarray(X), strided, PAPER, backend="cuda")
            assert got.scores.tolist() == _cpu(X, rows, PAPER).scores.tolist()
        view = every_other(Y)[:, ::2]
        assert not view.flags.c_contiguous
        got = score_pairs(cp.asarray(X), view, PAPER, backend="cuda")
        assert got.scores.tolist() == _cpu(X, Y, PAPER).scores.tolist()
        strided = SequenceBuffer(every_other(bad).ravel()[::2], np.arange(301) * 400)
        with pytest.raises(AlphabetError) as caught:
            score_pairs(cp.asarray(X), strided, PAPER, backend="cuda")
        assert str(caught.value).startswith("ys[5]: record 'seq5', position 17 (0-based)")
    assert ahead.calls == 4 and ahead.kept == 2
