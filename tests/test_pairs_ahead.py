"""score_pairs' plan before the encode's flags (issue 22), on the CPU: the word-wise plan
(``_backends/cuda/ww_plan.py``) depends on the codes only through "all below 4", and the
``pairs_ahead`` engine (``_backends/cuda/pairs_ahead.py``) on an emulated device: encode,
plan, ww_ypack and ww_dna queued, one read back; a closed guard (a bad character, an N)
scores nothing. The kernels are stand-ins written from pairs.cu's and encode.cu's
comments; the device tests (test_cuda_pairs.py) run the real ones."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from warpalign import Scoring
from warpalign._backends.cpu.encode import encode as cpu_encode
from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign._backends.cuda import pairs_ahead
from warpalign._backends.cuda.loader import emulated
from warpalign._backends.cuda.ww_plan import (OPEN_GUARD, dna_linear, plan_wordwise,
                                              score_table)

PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
WIDE = Scoring(match=1000, mismatch=-1, gap_open=1, gap_extend=1)   # past 16-bit lanes


def _same_plan(a, b) -> bool:
    return _same_table(a.tab, b.tab) and (
        a.launches == b.launches and a.names == b.names and len(a.small) == len(b.small)
        and all(np.array_equal(p, q) for p, q in zip(a.small, b.small)))


def _same_table(a, b) -> bool:
    return np.array_equal(a.table, b.table) and (a.k, a.dna, a.rows, a.smax, a.narrow) == (
        b.k, b.dna, b.rows, b.smax, b.narrow)


@pytest.mark.parametrize("seed", range(4))
def test_the_plan_of_codes_below_4_is_one_plan(seed):
    # why pairs_ahead may plan before reading the largest code: every largest code below
    # 4 gives the same plan, and 4 (an N) another (the table kernel)
    rng = np.random.default_rng(300 + seed)
    n = int(rng.choice([1, 33, 500]))
    uniform = seed % 2 == 0
    xl = np.full(n, 128) if uniform else rng.integers(0, 1500, n)
    yl = np.full(n, 4096) if uniform else rng.integers(0, 3000, n)
    xoff, yoff = np.r_[0, np.cumsum(xl)], np.r_[0, np.cumsum(yl)]
    for scoring, algorithm in ((PAPER, "local"), (AFFINE, "local"), (PAPER, "global")):
        plans = [plan_wordwise(xoff, yoff, scoring, algorithm, top) for top in (0, 1, 2, 3)]
        assert all(_same_plan(plans[0], p) for p in plans[1:])
        dna = [p for p in plans[0].launches if p.name.startswith("ww_dna")]
        assert bool(dna) == (scoring is PAPER and algorithm == "local")
        assert all(p.pack is not None for p in dna)
        assert np.array_equal(plans[0].small[3], OPEN_GUARD)
        with_n = plan_wordwise(xoff, yoff, scoring, algorithm, 4)
        assert not any(p.name.startswith("ww_dna") for p in with_n.launches)
        assert "ww_ypack" not in with_n.names
    # every pair is in exactly one launch
    plan = plans[0]
    items = np.concatenate([plan.small[p.items] for p in plan.launches])
    assert np.array_equal(np.sort(items[items >= 0]), np.arange(n))


def test_which_scorings_plan_ahead():
    assert dna_linear(PAPER, "local")
    assert not dna_linear(PAPER, "global") and not dna_linear(PAPER, "semiglobal")
    assert not dna_linear(AFFINE, "local")           # ww_kernel's DNA form
    assert not dna_linear(BLOSUM, "local")           # the table path
    assert not dna_linear(WIDE, "local")             # 32-bit lanes
    with pytest.raises(ValueError, match="largest code is needed"):
        score_table(PAPER, True, None, None)
    assert not score_table(PAPER, False, None, None).dna   # global: no code read


def test_global_scores_take_the_last_row_column_0():
    xoff, yoff = np.array([0, 3, 3, 8]), np.array([0, 0, 4, 4])
    plan = plan_wordwise(xoff, yoff, PAPER, "global", None)
    assert plan.finish(np.array([7, 5, -9])).tolist() == [-3, 5, -5]
    plan = plan_wordwise(xoff, yoff, PAPER, "semiglobal", None)
    assert plan.finish(np.array([-7, 5, -9])).tolist() == [-3, 5, -5]


# --------------------------------------------------------------------- emulated device


class DevArray(np.ndarray):
    """A device array of the emulated device: a NumPy array whose copies to the host
    (``get``) are counted."""

    def get(self, stream=None):
        self.owner.reads += 1
        return np.array(self)

    def set(self, host, stream=None):
        self[...] = host

    def __array_finalize__(self, obj):
        self.owner = getattr(obj, "owner", None)


class Device:
    """Just enough of CuPy for the pairs_ahead engine: arrays, the current stream, events
    and the three kernels it launches (encode_bytes, ww_ypack, ww_dna), each emulated
    from the comments of encode.cu and pairs.cu. ``launched``: (kernel, ran) in order."""

    uint8, int32, uint32, uint64, int64 = np.uint8, np.int32, np.uint32, np.uint64, np.int64
    ndarray = DevArray

    def __init__(self, scoring):
        self.scoring, self.reads, self.launched = scoring, 0, []
        stream = SimpleNamespace(synchronize=lambda: None, record=lambda: None)
        event = SimpleNamespace(record=lambda stream=None: None, synchronize=lambda: None)
        self.cuda = SimpleNamespace(get_current_stream=lambda: stream, Event=lambda: event,
                                    get_elapsed_time=lambda a, b: 0.0)

    def _dev(self, a):
        out = np.array(a).view(DevArray)
        out.owner = self
        return out

    def asarray(self, a, dtype=None):
        return a if isinstance(a, DevArray) else self._dev(np.asarray(a, dtype))

    def ascontiguousarray(self, a):
        return a

    def empty(self, n, dtype):
        return self._dev(np.full(n, 0xAB, np.uint8).view(dtype) if dtype == np.uint8 else
                         np.full(n, 7, dtype))       # not zero: nothing may rely on it

    def zeros(self, n, dtype):
        return self._dev(np.zeros(n, dtype))

    def module(self, filename, names, defines=()):
        return SimpleNamespace(get_function=self.kernel)

    def kernel(self, name):
        if name == "encode_bytes":
            return self._encode
        if name == "ww_ypack":
            return self._ypack
        assert name.startswith("ww_dna<"), name
        return self._dna

    def _encode(self, grid, block, args):
        chars, n, table, codes, base, flags = args
        codes[:n] = table[chars[:n]]
        bad = np.flatnonzero(codes[:n] == 255)
        if bad.size:
            flags[0] = min(int(flags[0]), int(base) + int(bad[0]))
        flags[1] = max(int(flags[1]), int(codes[:n].max(initial=0)))
        self.launched.append(("encode_bytes", True))

    @staticmethod
    def _closed(guard) -> bool:
        return int(guard[1]) > 3 or int(guard[3]) > 3

    def _ypack(self, grid, block, args):
        y, yo, items, nitems, front, ypoff, nall, ypk, guard = args
        self.launched.append(("ww_ypack", not self._closed(guard)))
        if self._closed(guard):
            return
        out = ypk.view(np.uint8)
        for i in range(int(nall)):
            pair = items[2 * i:2 * i + 2] if i < nitems else [-1, -1]
            cols = []
            for p in pair:
                col = np.full(int(ypoff[i + 1] - ypoff[i]), 4, np.int64)
                if p >= 0:
                    n = int(yo[p + 1] - yo[p])
                    col[front:front + n] = np.minimum(y[yo[p]:yo[p] + n], 4)
                cols.append(col)
            out[ypoff[i]:ypoff[i + 1]] = 8 * (5 * cols[0] + cols[1])

    def _dna(self, grid, block, args):
        (x, xo, yo, ypk, ypoff, items, nitems, g, bands, table, ge, thr, one, bound,
         bstride, out, flagged, nflag, guard) = args
        self.launched.append(("ww_dna", not self._closed(guard)))
        if self._closed(guard):
            return
        s = self.scoring
        packed = ypk.view(np.uint8)
        for i in range(int(nitems)):
            for half, p in enumerate(items[2 * i:2 * i + 2].tolist()):
                if p < 0:
                    continue
                n = int(yo[p + 1] - yo[p])
                at = int(ypoff[i]) + 2 * int(g)         # column 0 of the item
                code = packed[at:at + n].astype(np.int64) // 8
                ycol = code // 5 if half == 0 else code % 5
                assert (ycol < 4).all()                 # open guard: A C G T only
                score = score_end(np.asarray(x[xo[p]:xo[p + 1]]), ycol.astype(np.uint8),
                                  s.matrix, s.gap_open, s.gap_extend, LOCAL)[0]
                out[p] = score
                if score >= thr:
                    flagged[nflag[0]] = p
                    nflag[0] += 1


def _ahead(device, xs: np.ndarray, ys: np.ndarray, scoring=PAPER):
    """pairs_ahead on the emulated device for 2-D arrays of characters (host arrays)."""
    table = scoring.alphabet.code_table
    xoff = np.arange(xs.shape[0] + 1) * xs.shape[1]
    yoff = np.arange(ys.shape[0] + 1) * ys.shape[1]
    with emulated(device, device.module):
        raws = [device.asarray(xs.ravel()), device.asarray(ys.ravel())]
        return pairs_ahead.encode_and_score(raws, table, xoff, yoff, scoring, "local")


def _rows(rng, rows, length, letters=b"ACGTacgt"):
    alphabet = np.frombuffer(letters, np.uint8)
    return alphabet[rng.integers(0, len(alphabet), (rows, length))]


def _exact(xs, ys, scoring):
    enc = scoring.alphabet.encode
    return [int(score_end(enc(x.tobytes().decode()), enc(y.tobytes().decode()),
                          scoring.matrix, scoring.gap_open, scoring.gap_extend, LOCAL)[0])
            for x, y in zip(xs, ys)]


def test_ahead_scores_with_one_read_back():
    rng = np.random.default_rng(70)
    xs, ys = _rows(rng, 37, 40), _rows(rng, 37, 150)
    ys[:10, 30:70] = xs[:10]                                  # planted: high scores
    device = Device(PAPER)
    sides, scored, timings = _ahead(device, xs, ys)
    assert device.reads == 1                                   # flags, scores and count
    assert [name for name, _ in device.launched] == ["encode_bytes", "encode_bytes",
                                                     "ww_ypack", "ww_dna"]
    assert all(ran for _, ran in device.launched)
    scores, flagged = scored
    assert scores.tolist() == _exact(xs, ys, PAPER) and max(scores) >= 80
    assert flagged.size == 0 and {"encode", "h2g", "pack", "swa", "g2h"} <= set(timings)
    for (codes, bad, counted, top), raw in zip(sides, (xs, ys)):
        want = cpu_encode(raw.ravel(), PAPER.alphabet.code_table)[0]
        assert np.array_equal(np.asarray(codes), want)
        assert bad == -1 and counted is None and top == 3


def test_ahead_saturated_pairs_are_read_in_a_second_copy():
    # a flagged pair (score at the 16-bit threshold) is listed; its indices take a read
    rng = np.random.default_rng(71)
    xs = _rows(rng, 5, 3400, b"ACGT")            # 34,000: past the 16-bit threshold
    big = Scoring(match=10, mismatch=-10, gap_open=20, gap_extend=20)
    ys = xs.copy()
    device = Device(big)
    _, (_, flagged), _ = _ahead(device, xs, ys, big)
    assert flagged.tolist() == [0, 1, 2, 3, 4] and device.reads == 2


@pytest.mark.parametrize("where", ["x-first", "x-last", "y-first", "y-last", "both"])
def test_ahead_bad_character_scores_nothing(where):
    # an invalid character closes the guard: ww_ypack and ww_dna return at once, the one
    # read reports the first bad character of each side as the encode engine does
    rng = np.random.default_rng(72)
    xs, ys = _rows(rng, 20, 30), _rows(rng, 20, 90)
    spots = {"x-first": [("x", 0, 0)], "x-last": [("x", 19, 29)], "y-first": [("y", 0, 3)],
             "y-last": [("y", 19, 89)], "both": [("x", 4, 7), ("y", 2, 5)]}[where]
    for side, row, col in spots:
        (xs if side == "x" else ys)[row, col] = ord("#")
    device = Device(PAPER)
    sides, scored, _ = _ahead(device, xs, ys)
    assert scored is None and device.reads == 1
    assert device.launched[2:] == [("ww_ypack", False), ("ww_dna", False)]
    for (_, bad, _, top), raw in zip(sides, (xs, ys)):
        assert bad == cpu_encode(raw.ravel(), PAPER.alphabet.code_table)[1]
    for side, row, col in spots:
        k = 0 if side == "x" else 1
        assert sides[k][1] == row * (xs if k == 0 else ys).shape[1] + col


def test_ahead_codes_above_3_score_nothing():
    # an N (code 4) or another IUPAC letter: no bad character, nothing scored (the job
    # scores these codes again, planned for the table kernel)
    rng = np.random.default_rng(73)
    xs, ys = _rows(rng, 9, 30), _rows(rng, 9, 60)
    ys[8, 59] = ord("n")
    device = Device(PAPER)
    sides, scored, _ = _ahead(device, xs, ys)
    assert scored is None and device.reads == 1
    assert [(bad, top) for _, bad, _, top in sides] == [(-1, 3), (-1, 4)]
    assert device.launched[2:] == [("ww_ypack", False), ("ww_dna", False)]
    xs[0, 0] = ord("R")
    sides, scored, _ = _ahead(Device(PAPER), xs, ys)
    assert scored is None and sides[0][3] == int(PAPER.alphabet.code_table[ord("R")]) > 4


def test_ahead_refuses_what_it_cannot_plan():
    rng = np.random.default_rng(74)
    xs = _rows(rng, 2, 10)
    for scoring in (AFFINE, BLOSUM):
        with pytest.raises(ValueError, match="DNA local linear"):
            _ahead(Device(scoring), xs, xs, scoring)
    device = Device(PAPER)
    with emulated(device, device.module), pytest.raises(TypeError, match="CuPy"):
        pairs_ahead.encode_and_score([xs.ravel(), device.asarray(xs.ravel())],
                                     PAPER.alphabet.code_table, np.array([0, 10, 20]),
                                     np.array([0, 10, 20]), PAPER)
