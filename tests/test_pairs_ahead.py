"""score_pairs from CuPy arrays with one read back (issue 22), on the CPU: the
``pairs_ahead`` engine (``_backends/cuda/pairs_ahead.py``) and the job's use of it on an
emulated device (``loader.emulated``): encode, the kept plan of codes below 4, ww_ypack
and ww_dna queued with the encode's flags as their guard, one read; a closed guard (a
bad character, an N) writes nothing. The kernels are stand-ins written from the comments
of encode.cu and pairs.cu; the device tests (test_cuda_pairs.py) run the real ones."""

from __future__ import annotations

import ctypes
from collections import OrderedDict
from types import SimpleNamespace

import numpy as np
import pytest

from warpalign import Scoring
from warpalign._backends.cpu.encode import encode as cpu_encode
from warpalign._backends.cpu.encode import encode_sides as cpu_encode_sides
from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign._backends.cpu.wordwise import score_pairs as cpu_wordwise
from warpalign._backends.cuda import encode as gpu_encode
from warpalign._backends.cuda import pairs as gpu_pairs
from warpalign._backends.cuda import pairs_ahead
from warpalign._backends.cuda.loader import emulated
from warpalign._backends.registry import using
from warpalign.errors import AlphabetError
from warpalign.pairs import score_pairs

PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
WIDE = Scoring(match=1000, mismatch=-1, gap_open=1, gap_extend=1)   # 32-bit lanes
BIG = Scoring(match=10, mismatch=-10, gap_open=20, gap_extend=20)   # saturates 16 bits
MASK = (1 << 64) - 1


@pytest.fixture(autouse=True)
def _fresh_caches(monkeypatch):
    """Kept plans and tables of this test only (the emulated device is device 0)."""
    monkeypatch.setattr(gpu_pairs, "_plans", OrderedDict())
    monkeypatch.setattr(gpu_encode, "_tables", {})


class DevArray(np.ndarray):
    """An array of the emulated device: a NumPy array whose copies to the host (``get``)
    are counted, and that the job takes for a CuPy array (``buffers.is_device_array``)."""

    def get(self, stream=None, out=None, blocking=True):
        self.owner.reads += 1
        if out is None:
            return np.array(self)
        out[...] = self
        return out

    def set(self, host, stream=None):
        self[...] = host

    @property
    def __cuda_array_interface__(self):
        return {}

    @property
    def data(self):
        """The device pointer (here the host address: the runtime's memset below)."""
        return SimpleNamespace(ptr=self.ctypes.data)

    def __array_finalize__(self, obj):
        self.owner = getattr(obj, "owner", None)


DevArray.__module__ = "cupy._emulated"


class _Stream:
    """The emulated device's one stream (a context manager, as CuPy's)."""

    ptr = 0

    def synchronize(self):
        pass

    def record(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Device:
    """Just enough of CuPy for the pairs_ahead engine: arrays, the current stream, events
    and the three kernels it launches (encode_bytes, ww_ypack, ww_dna), each emulated from
    the comments of encode.cu and pairs.cu. ``launched``: (kernel, ran) in order."""

    uint8, int32, uint32, uint64, int64 = np.uint8, np.int32, np.uint32, np.uint64, np.int64
    ndarray = DevArray

    def __init__(self, scoring):
        self.scoring, self.reads, self.uploads, self.launched = scoring, 0, 0, []
        stream = _Stream()
        event = SimpleNamespace(record=lambda stream=None: None, synchronize=lambda: None)
        self.cuda = SimpleNamespace(get_current_stream=lambda: stream, Event=lambda: event,
                                    get_elapsed_time=lambda a, b: 0.0,
                                    Device=lambda: SimpleNamespace(id=0),
                                    alloc_pinned_memory=bytearray,
                                    runtime=SimpleNamespace(memsetAsync=self._memset,
                                                            memcpyAsync=self._memcpy,
                                                            memcpyDeviceToHost=2))

    @staticmethod
    def _memset(ptr, value, size, stream):
        ctypes.memset(ptr, value, size)

    def _memcpy(self, dst, src, size, kind, stream):
        """The runtime's copy (pointers are host addresses here); a copy to the host
        counts as a read, as ``get`` does."""
        self.reads += kind == 2
        ctypes.memmove(dst, src, size)

    def put(self, a):
        out = np.array(a).view(DevArray)
        out.owner = self
        return out

    def asarray(self, a, dtype=None):
        if isinstance(a, DevArray):
            return a
        self.uploads += 1
        return self.put(np.asarray(a, dtype))

    def ascontiguousarray(self, a):
        return a

    def empty(self, n, dtype):
        junk = np.full(n * np.dtype(dtype).itemsize, 0xAB, np.uint8)   # never zero
        return self.put(junk.view(dtype))

    def zeros(self, n, dtype):
        return self.put(np.zeros(n, dtype))

    def module(self, filename, names, defines=()):
        return SimpleNamespace(get_function=self.kernel)

    def kernel(self, name):
        if name == "encode_bytes":
            return self._encode
        if name == "ww_ypack":
            return self._ypack
        if name == "ww_ypack_raw":
            return self._ypack_raw
        assert name.startswith("ww_dna<"), name       # pairs_ahead launches no other
        return self._dna

    def _encode(self, grid, block, args):
        chars, n, table, codes, base, flags = args
        codes[:n] = table[chars[:n]]
        bad = np.flatnonzero(codes[:n] == 255)
        if bad.size:                                  # ~index, by atomicMax (0: none)
            flags[0] = max(int(flags[0]), ~(int(base) + int(bad[0])) & MASK)
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
        self._columns(y, yo, items, nitems, front, ypoff, nall, ypk)

    def _ypack_raw(self, grid, block, args):
        """ww_ypack from characters: y's codes by the table, its largest code (of the
        items' pairs) into the second flag word (not the first bad index), the columns
        written whatever the codes (no guard)."""
        raw, yo, items, nitems, front, ypoff, nall, ypk, table, flags = args
        self.launched.append(("ww_ypack_raw", True))
        codes = np.asarray(table)[np.asarray(raw)]
        mine = np.zeros(codes.size, bool)               # the characters of its pairs
        for p in np.asarray(items[:2 * int(nitems)]).tolist():
            if p >= 0:
                mine[int(yo[p]):int(yo[p + 1])] = True
        flags[1] = max(int(flags[1]), int(codes[mine].max(initial=0)))
        self._columns(codes, yo, items, nitems, front, ypoff, nall, ypk)

    @staticmethod
    def _columns(y, yo, items, nitems, front, ypoff, nall, ypk):
        """ww_ypack's bytes: per item slot and column, 8 * (5 * a + b), codes clamped to 4
        (4 also outside a pair)."""
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
        # the scoring's table of ww_dna (words of 4 byte scores, then the pad's)
        want = gpu_pairs.ww_table(self.scoring, True, None, None, 3, None).table
        assert np.array_equal(np.asarray(table), want)
        if self._closed(guard):
            return
        end = int(xo[-1])
        assert (np.asarray(x[end:end + 4]) == 0).all()  # rows are read as whole words
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
                if score + int(ge) >= int(thr):         # a saturated lane: flagged, wrong
                    out[p] = -1
                    flagged[nflag[0]] = p
                    nflag[0] += 1
                else:
                    out[p] = score


def _ahead(device, xs: np.ndarray, ys: np.ndarray, scoring=PAPER, y_codes=True,
           offsets=None):
    """pairs_ahead on the emulated device for 2-D arrays of characters (host arrays), or
    1-D ones with ``offsets`` (x's, y's)."""
    table = scoring.alphabet.code_table
    if offsets is None:
        offsets = (np.arange(xs.shape[0] + 1) * xs.shape[1],
                   np.arange(ys.shape[0] + 1) * ys.shape[1])
    with emulated(device, device.module):
        raws = [device.put(xs.ravel()), device.put(ys.ravel())]
        return pairs_ahead.encode_and_score(raws, table, *offsets, scoring, "local",
                                            y_codes=y_codes)


def _rows(rng, rows, length, letters=b"ACGTacgt"):
    alphabet = np.frombuffer(letters, np.uint8)
    return alphabet[rng.integers(0, len(alphabet), (rows, length))]


def _texts(rows):
    return [row.tobytes().decode() for row in rows]


def _exact(xs, ys, scoring):
    enc = scoring.alphabet.encode
    return [int(score_end(enc(x.tobytes().decode()), enc(y.tobytes().decode()),
                          scoring.matrix, scoring.gap_open, scoring.gap_extend, LOCAL)[0])
            for x, y in zip(xs, ys)]


def test_which_scorings_take_the_path():
    # exactly those whose plan for codes below 4 is all ww_dna launches
    assert pairs_ahead.applies(PAPER, "local") and pairs_ahead.applies(BIG, "local")
    for scoring, algorithm in ((PAPER, "global"), (PAPER, "semiglobal"), (AFFINE, "local"),
                               (BLOSUM, "local"), (WIDE, "local")):
        assert not pairs_ahead.applies(scoring, algorithm), (scoring, algorithm)
    for scoring in (PAPER, AFFINE, WIDE, BIG):
        xoff, yoff = np.arange(4) * 30, np.arange(4) * 70
        plan = gpu_pairs.plan_wordwise(None, xoff, None, yoff, scoring, "local", rows=None,
                                       prefetch=None, largest=3)
        all_dna = all(name.startswith("ww_dna<") for name, *_ in plan.launches)
        assert all_dna == pairs_ahead.applies(scoring, "local"), scoring


def test_layout_of_the_one_buffer():
    for xsize in (0, 1, 3, 4, 5, 8, 4093):
        at, scores_at, total = pairs_ahead.layout(xsize, 10)
        assert at % 8 == 0 and at >= xsize + 4 and at - xsize < 12
        assert scores_at == at + 32 and total == scores_at + 44


def test_flags_read_back():
    # encode.cu keeps ~index of the first bad character (0: none) so that a memset clears
    words = np.array([0, 3, ~17 & MASK, 255], np.uint64)
    assert gpu_encode.side_flags(words, 0) == (-1, 3)
    assert gpu_encode.side_flags(words, 1) == (17, 255)
    assert gpu_encode.side_flags(words, 1, check=False) == (-1, 255)
    assert gpu_encode.side_flags([~0 & MASK, 0], 0) == (0, 0)


def test_the_table_is_kept_per_device_and_bytes():
    device = Device(PAPER)
    table = PAPER.alphabet.code_table
    with emulated(device, device.module):
        first = gpu_encode.device_table(device, table)
        assert gpu_encode.device_table(device, table.copy()) is first
        other = gpu_encode.device_table(device, BLOSUM.alphabet.code_table)
        assert other is not first and device.uploads == 2
        assert np.array_equal(np.asarray(first), table)
    with emulated(device, device.module):
        for k in range(gpu_encode.TABLES_KEPT - 2):            # kept: TABLES_KEPT in all
            gpu_encode.device_table(device, np.full(256, k, np.uint8))
        assert device.uploads == gpu_encode.TABLES_KEPT
        spare = np.arange(256, dtype=np.uint8)
        a, b = gpu_encode.device_table(device, spare), gpu_encode.device_table(device, spare)
        assert a is not b and device.uploads == gpu_encode.TABLES_KEPT + 2   # not kept
        assert np.array_equal(np.asarray(a), spare)
        assert gpu_encode.device_table(device, table) is first    # never dropped
    assert device.uploads == gpu_encode.TABLES_KEPT + 2


def test_encode_sides_of_device_arrays_report_as_the_cpu_engine():
    # the flags-first encode (N, bad characters, empty sides) with the flags cleared by a
    # memset: the same first bad character and largest code as the CPU engine's
    rng = np.random.default_rng(69)
    table = PAPER.alphabet.code_table
    acgt = np.frombuffer(b"ACGTacgt", np.uint8)[rng.integers(0, 8, 5001)]
    withn = np.frombuffer(b"ACGTN", np.uint8)[rng.integers(0, 5, 7000)]
    broken = acgt.copy()
    broken[[4321, 400, 4000]] = ord("!")
    sides = [acgt, withn, broken, np.zeros(0, np.uint8), broken[:1]]
    want = [(bad, top) for _, bad, _, top in cpu_encode_sides(sides, table)]
    assert want[2] == (400, 255)
    device = Device(PAPER)
    with emulated(device, device.module):
        got = gpu_encode.encode_sides([device.put(s) for s in sides], table)
    assert [(bad, top) for _, bad, _, top in got] == want
    assert all(np.array_equal(np.asarray(c), cpu_encode(s, table)[0])
               for (c, *_), s in zip(got, sides))
    assert device.uploads == 1                                 # the table; flags: a memset


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
    assert flagged.size == 0 and {"encode", "pack", "swa", "g2h"} <= set(timings)
    for (codes, bad, counted, top), raw in zip(sides, (xs, ys)):
        want = cpu_encode(raw.ravel(), PAPER.alphabet.code_table)[0]
        assert np.array_equal(np.asarray(codes), want)
        assert bad == -1 and counted is None and top == 3
    uploads = device.uploads                                   # the plan and the table
    device.launched.clear()
    again = _ahead(device, xs, ys)
    assert device.uploads == uploads and device.reads == 2     # both kept: no copy up
    assert again[1][0].tolist() == scores.tolist()


def test_ahead_packs_y_from_its_characters_without_codes():
    # y_codes=False: y is encoded by ww_ypack_raw into ww_dna's columns (no code array),
    # the same scores with one read; its flags as the encode engine's
    rng = np.random.default_rng(86)
    xs, ys = _rows(rng, 29, 33), _rows(rng, 29, 131)
    ys[:9, 20:53] = xs[:9]
    device = Device(PAPER)
    sides, (scores, flagged), timings = _ahead(device, xs, ys, y_codes=False)
    # y first (the longest work before ww_dna), then x's encode
    assert [name for name, _ in device.launched] == ["ww_ypack_raw", "encode_bytes", "ww_dna"]
    assert device.reads == 1 and flagged.size == 0 and {"pack", "swa"} <= set(timings)
    assert scores.tolist() == _exact(xs, ys, PAPER) and max(scores) >= 66
    assert sides[1][0] is None and sides[1][1:] == (-1, None, 3)
    assert np.array_equal(np.asarray(sides[0][0]), cpu_encode(xs.ravel(),
                                                               PAPER.alphabet.code_table)[0])


def test_ahead_packs_y_of_any_lengths_in_several_launches():
    # pairs of many lengths (one 1-D buffer each side, offsets of their own): several
    # ww_dna launches, each packing its own pairs' characters; y's codes or not, the same
    rng = np.random.default_rng(87)
    xl, yl = rng.integers(0, 70, 41), rng.integers(0, 300, 41)
    xl[0], yl[1] = 200, 0                                   # several bands; an empty target
    xoff, yoff = np.concatenate([[0], np.cumsum(xl)]), np.concatenate([[0], np.cumsum(yl)])
    xs, ys = _rows(rng, 1, int(xoff[-1]))[0], _rows(rng, 1, int(yoff[-1]))[0]
    want = [int(score_end(cpu_encode(xs[a:b], PAPER.alphabet.code_table)[0],
                          cpu_encode(ys[c:d], PAPER.alphabet.code_table)[0], PAPER.matrix,
                          PAPER.gap_open, PAPER.gap_extend, LOCAL)[0])
            for a, b, c, d in zip(xoff, xoff[1:], yoff, yoff[1:])]
    got = []
    for y_codes in (True, False):
        device = Device(PAPER)
        _, (scores, _), _ = _ahead(device, xs, ys, y_codes=y_codes, offsets=(xoff, yoff))
        packs = [n for n, _ in device.launched if n.startswith("ww_ypack")]
        assert len(packs) >= 2 and set(packs) == {"ww_ypack" if y_codes else "ww_ypack_raw"}
        got.append(scores.tolist())
    assert got == [want, want]
    ys[int(yoff[30]) + 3] = ord("#")                       # and the first bad one named
    ys[int(yoff[7]) + 5] = ord("#")
    sides, scored, _ = _ahead(Device(PAPER), xs, ys, y_codes=False, offsets=(xoff, yoff))
    assert scored is None and sides[1][1] == int(yoff[7]) + 5


@pytest.mark.parametrize("y_codes", [True, False])
def test_ahead_saturated_pairs_are_read_in_a_second_copy(y_codes):
    rng = np.random.default_rng(71)
    xs = _rows(rng, 5, 3400, b"ACGT")            # 34,000: past the 16-bit threshold
    ys = xs.copy()
    ys[4, 100:] = _rows(rng, 1, 3300, b"ACGT")[0]
    device = Device(BIG)
    sides, (scores, flagged), _ = _ahead(device, xs, ys, BIG, y_codes=y_codes)
    assert flagged.tolist() == [0, 1, 2, 3] and device.reads == 3 - y_codes
    assert (scores[:4] == -1).all() and scores[4] == _exact(xs[4:], ys[4:], BIG)[0]
    # the caller rescores the flagged pairs from y's codes: there either way
    assert np.array_equal(np.asarray(sides[1][0]),
                          cpu_encode(ys.ravel(), BIG.alphabet.code_table)[0])


def _closed_launches(y_codes: bool) -> list:
    """The launches when a code above 3 closed the guard: ww_ypack and ww_dna return at
    once; ww_ypack_raw (no guard: it makes y's flags) packs, first, then y is encoded for
    the caller."""
    if y_codes:
        return [("encode_bytes", True)] * 2 + [("ww_ypack", False), ("ww_dna", False)]
    return [("ww_ypack_raw", True), ("encode_bytes", True), ("ww_dna", False),
            ("encode_bytes", True)]


@pytest.mark.parametrize("y_codes", [True, False])
@pytest.mark.parametrize("where", ["x-first", "x-last", "y-first", "y-last", "both"])
def test_ahead_bad_character_scores_nothing(where, y_codes):
    # an invalid character closes the guard: ww_dna returns at once, the read (y_codes:
    # the one read) reports the first bad character of each side as the encode engine does
    rng = np.random.default_rng(72)
    xs, ys = _rows(rng, 20, 30), _rows(rng, 20, 90)
    spots = {"x-first": [("x", 0, 0)], "x-last": [("x", 19, 29)], "y-first": [("y", 0, 3)],
             "y-last": [("y", 19, 89)], "both": [("x", 4, 7), ("x", 9, 1), ("y", 2, 5)]}[where]
    for side, row, col in spots:
        (xs if side == "x" else ys)[row, col] = ord("#")
    device = Device(PAPER)
    sides, scored, _ = _ahead(device, xs, ys, y_codes=y_codes)
    assert scored is None and device.reads == 2 - y_codes
    assert device.launched == _closed_launches(y_codes)
    for (_, bad, _, top), raw in zip(sides, (xs, ys)):
        want = cpu_encode(raw.ravel(), PAPER.alphabet.code_table)[1]
        assert bad == want and (top == 255) == (want >= 0)
    assert sides[0][1] == (-1 if where.startswith("y") else
                           min(r * 30 + c for s, r, c in spots if s == "x"))


@pytest.mark.parametrize("y_codes", [True, False])
def test_ahead_codes_above_3_score_nothing(y_codes):
    # an N (code 4) or another IUPAC letter: no bad character, nothing written; y's
    # codes there for the caller's second pass either way
    rng = np.random.default_rng(73)
    xs, ys = _rows(rng, 9, 30), _rows(rng, 9, 60)
    ys[8, 59] = ord("n")
    device = Device(PAPER)
    sides, scored, _ = _ahead(device, xs, ys, y_codes=y_codes)
    assert scored is None and device.reads == 2 - y_codes
    assert [(bad, top) for _, bad, _, top in sides] == [(-1, 3), (-1, 4)]
    assert device.launched == _closed_launches(y_codes)
    assert np.array_equal(np.asarray(sides[1][0]),
                          cpu_encode(ys.ravel(), PAPER.alphabet.code_table)[0])
    xs[0, 0] = ord("R")
    sides, scored, _ = _ahead(Device(PAPER), xs, ys, y_codes=y_codes)
    assert scored is None and sides[0][3] == int(PAPER.alphabet.code_table[ord("R")]) > 4


def test_ahead_refuses_what_it_cannot_plan():
    rng = np.random.default_rng(74)
    xs = _rows(rng, 2, 10)
    for scoring in (AFFINE, BLOSUM, WIDE):
        with pytest.raises(ValueError, match="all ww_dna"):
            _ahead(Device(scoring), xs, xs, scoring)
    device = Device(PAPER)
    with emulated(device, device.module), pytest.raises(TypeError, match="CuPy"):
        pairs_ahead.encode_and_score([xs.ravel(), device.put(xs.ravel())],
                                     PAPER.alphabet.code_table, np.array([0, 10, 20]),
                                     np.array([0, 10, 20]), PAPER)


# ------------------------------------------------------- the job on the emulated device


class Job:
    """score_pairs(backend="cuda") on the emulated device: the registry rows it takes
    swapped for the ``with`` block (no global patched). The pairs_ahead engine is the real
    one on the device; the flags-first encode must not run; the word-wise kernel of the
    scoring after the flags is the CPU's (its ``largest`` recorded)."""

    def __init__(self, scoring):
        self.device = Device(scoring)
        self.reruns = []
        self.ahead_calls = 0

    def applies(self, scoring, algorithm):
        return pairs_ahead.applies(scoring, algorithm)

    def encode_and_score(self, *args, **kwargs):
        self.ahead_calls += 1
        with emulated(self.device, self.device.module):
            return pairs_ahead.encode_and_score(*args, **kwargs)

    def rerun(self, xcodes, xoff, ycodes, yoff, scoring, algorithm="local", *, largest=None):
        self.reruns.append(largest)
        return cpu_wordwise(np.asarray(xcodes), xoff, np.asarray(ycodes), yoff, scoring,
                            algorithm, largest=largest)

    @staticmethod
    def no_encode(*args, **kwargs):
        raise AssertionError("the flags-first encode ran")

    def __enter__(self):
        from contextlib import ExitStack
        self._stack = ExitStack()
        for row, engine in ((("pairs", "cuda", "auto"), self.rerun),
                            (("pairs", "cuda", "wordwise"), self.rerun),
                            (("encode", "cuda", "auto"), self.no_encode),
                            (("pairs_ahead", "cuda", "wordwise"), self)):
            self._stack.enter_context(using(*row, engine))
        return self

    def __exit__(self, *exc):
        return self._stack.__exit__(*exc)

    def score(self, xs, ys, scoring, **kwargs):
        return score_pairs(self.device.put(xs), self.device.put(ys), scoring, backend="cuda",
                           **kwargs)


def test_job_scores_cupy_rows_with_one_read():
    rng = np.random.default_rng(75)
    xs, ys = _rows(rng, 40, 30), _rows(rng, 40, 120)
    ys[:8, 40:70] = xs[:8]
    want = score_pairs(xs, ys, PAPER, backend="cpu").scores.tolist()
    with Job(PAPER) as job:
        res = job.score(xs, ys, PAPER)
        assert res.scores.tolist() == want and res.method == "wordwise"
        assert job.device.reads == 1 and job.ahead_calls == 1 and job.reruns == []
        res = job.score(xs, ys, PAPER, threshold=40)
        assert res.indices.tolist() == [i for i, s in enumerate(want) if s >= 40]
        assert job.ahead_calls == 2 and job.reruns == []


def test_job_rescores_saturated_pairs():
    rng = np.random.default_rng(76)
    xs = _rows(rng, 4, 3400, b"ACGT")
    ys = xs.copy()
    ys[3] = _rows(rng, 1, 3400, b"ACGT")[0]
    with Job(BIG) as job:
        res = job.score(xs, ys, BIG)
    assert res.scores.tolist() == _exact(xs, ys, BIG) and res.saturated == 3
    assert res.scores[0] == 34_000 and job.reruns == []


@pytest.mark.parametrize("letter", [b"N", b"n", b"R"])
def test_job_reruns_codes_above_3_planned_after_the_flags(letter):
    rng = np.random.default_rng(77)
    xs, ys = _rows(rng, 30, 20), _rows(rng, 30, 80)
    ys[:5, 10:30] = xs[:5]
    ys[3, 17] = letter[0]
    want = score_pairs(xs, ys, PAPER, backend="cpu").scores.tolist()
    with Job(PAPER) as job:
        res = job.score(xs, ys, PAPER)
    assert res.scores.tolist() == want and res.method == "wordwise"
    assert job.ahead_calls == 1
    assert job.reruns == [int(PAPER.alphabet.code_table[letter[0]])]   # the real largest


@pytest.mark.parametrize("spots", [[("x", 3, 4)], [("y", 29, 79)], [("y", 0, 0), ("x", 7, 2)]])
def test_job_names_a_bad_character_as_the_cpu_does(spots):
    rng = np.random.default_rng(78)
    xs, ys = _rows(rng, 30, 20), _rows(rng, 30, 80)
    for side, row, col in spots:
        (xs if side == "x" else ys)[row, col] = ord("#")
    with pytest.raises(AlphabetError) as cpu:
        score_pairs(xs, ys, PAPER, backend="cpu")
    with Job(PAPER) as job, pytest.raises(AlphabetError) as gpu:
        job.score(xs, ys, PAPER)
    assert str(gpu.value) == str(cpu.value) and job.reruns == []
    assert (gpu.value.record, gpu.value.position) == (cpu.value.record, cpu.value.position)


def test_job_keeps_the_flags_first_order_elsewhere():
    # other scorings, algorithms, methods, mode full without a threshold: not this path
    # (the flags-first encode runs: here it raises)
    rng = np.random.default_rng(79)
    xs, ys = _rows(rng, 6, 20), _rows(rng, 6, 40)
    for scoring, kwargs in ((AFFINE, {}), (PAPER, {"algorithm": "global"}),
                            (PAPER, {"method": "bitsliced"}), (PAPER, {"mode": "full"})):
        with Job(scoring) as job, pytest.raises(AssertionError, match="flags-first"):
            job.score(xs, ys, scoring, **kwargs)
        assert job.ahead_calls == 0, (scoring, kwargs)


def test_job_batches_each_take_the_path():
    rng = np.random.default_rng(80)
    xs, ys = _rows(rng, 12, 20), _rows(rng, 12, 50)
    ys[5, 3] = ord("N")                                       # batch 2 of 3 reruns
    want = score_pairs(xs, ys, PAPER, backend="cpu").scores.tolist()
    with Job(PAPER) as job:
        res = job.score(xs, ys, PAPER, batch_residues=280)
    assert res.scores.tolist() == want
    assert job.ahead_calls == 3 and job.reruns == [4]


def test_job_shapes_of_one_pair_count_keep_plans_of_their_own():
    # 2-D rows say their length (Gathered.length): the kept plan is found without reading
    # the offsets, and rows of other lengths but as many pairs never take it
    rng = np.random.default_rng(81)
    uploads = []
    with Job(PAPER) as job:
        for m, n in [(24, 60), (24, 61), (25, 60), (24, 60)]:
            xs, ys = _rows(rng, 16, m), _rows(rng, 16, n)
            ys[:4, 5:5 + m] = xs[:4]
            res = job.score(xs, ys, PAPER)
            assert res.scores.tolist() == _exact(xs, ys, PAPER), (m, n)
            uploads.append(job.device.uploads)
        assert job.ahead_calls == 4 and job.reruns == []
    # a plan (and the table, first) goes up for each new shape; the first shape's again: none
    assert uploads[1] > uploads[0] and uploads[2] > uploads[1] and uploads[3] == uploads[2]
