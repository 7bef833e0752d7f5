"""Packed staging of the CUDA encode engine (issue 22), on the CPU: DNA characters cross
to the device as 2-bit codes, four to a byte (``cpu/pack2.py``, Numba), and
``encode.cu``'s ``unpack_dna`` writes the byte codes the byte path writes.

* ``pack_slice`` against the DNA alphabet's own table: every byte 0..255 at every place
  of a word and of the tail, lower case, lengths past every word and block boundary, an
  empty input, the stop flag between slices;
* the choice of path (:func:`~warpalign._backends.cuda.encode.packs`: the table itself);
* ``encode_sides`` on a stand-in device (NumPy arrays for CuPy's, the two kernels
  transcribed in NumPy): codes, first bad character, largest code and counts equal the CPU
  engine's for every staging, chunk size and thread count, and the bytes that cross are
  the packed ones exactly where packing applies: the host sides of a call share one
  sequence of chunks (:func:`joint_chunks`), each piece of a chunk packed by one parallel call,
  and from its first piece with another character on a side carries characters.

The kernels themselves run in tests/test_cuda_pairs.py (cuda-marked)."""

from __future__ import annotations

import contextvars
import threading
from types import SimpleNamespace

import numpy as np
import pytest

from warpalign import Scoring
from warpalign._backends.cpu import encode as cpu_encode
from warpalign._backends.cpu.pack2 import LETTERS, code, pack_slice
from warpalign._backends.cuda import encode as gpu
from warpalign._backends.cuda.loader import emulated

DNA = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1).alphabet
PROTEIN = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1).alphabet
ACGT = np.frombuffer(b"ACGTacgt", np.uint8)
VALID = set(b"ACGTacgt")


def packed_reference(src: np.ndarray) -> np.ndarray:
    """The packed bytes of ``src`` from the alphabet's table (not from pack2's formula)."""
    c = DNA.code_table[src]
    assert c.max(initial=0) <= 3
    c = np.concatenate([c, np.zeros(-c.size % 4, np.uint8)]).reshape(-1, 4).astype(np.uint8)
    return c[:, 0] | c[:, 1] << 2 | c[:, 2] << 4 | c[:, 3] << 6


def pack(src: np.ndarray, stop=None):
    out = np.full((src.size + 3) // 4, 0xA5, np.uint8)     # garbage where nothing is written
    stop = np.zeros(1, np.uint8) if stop is None else stop
    return bool(pack_slice(src, out, stop)), out, stop


def test_the_formula_gives_the_alphabet_codes():
    assert LETTERS == b"ACGT"
    letters = np.frombuffer(b"ACGTacgt", np.uint8)
    assert code(letters).tolist() == DNA.code_table[letters].tolist() == [0, 1, 2, 3] * 2
    assert [code(int(c)) for c in letters] == [0, 1, 2, 3] * 2


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33,
                               (1 << 16) - 1, 1 << 16, (1 << 16) + 5, 3 * (1 << 16) + 13])
def test_random_acgt_of_every_length_pack_as_the_table(n):
    rng = np.random.default_rng(n)
    src = ACGT[rng.integers(0, 8, n)]
    ok, out, stop = pack(src)
    assert ok and stop[0] == 0
    assert np.array_equal(out, packed_reference(src))


def test_the_largest_code_packed():
    # pack_codes answers the table's largest code (0 for none) of every valid input, the
    # sets of letters and the place of the largest in a word or the tail, and -1 with the
    # stop flag set for another character; pack_parallel the same over its slices
    from warpalign._backends.cpu.pack2 import pack_codes, pack_parallel
    rng = np.random.default_rng(38)
    for letters in (b"Aa", b"ACa", b"AGag", b"ACGc", b"T", b"ACGTacgt", b"CGcg"):
        pool = np.frombuffer(letters, np.uint8)
        for n in (0, 1, 7, 8, 9, 64, 1000, (1 << 16) + 9):
            src = pool[rng.integers(0, pool.size, n)]
            want = int(DNA.code_table[src].max(initial=0))
            out = np.zeros((n + 3) // 4, np.uint8)
            assert pack_codes(src, out, np.zeros(1, np.uint8)) == want, (letters, n)
            cuts = np.array([0, 4 * (n // 8), n], np.int64)
            assert pack_parallel(src, out, cuts, np.zeros(1, np.uint8)) == want, (letters, n)
            assert np.array_equal(out, packed_reference(src))
    for place in (0, 5, 8, 20):                   # one T in a word of A, or in the tail
        src = np.full(21, ord("A"), np.uint8)
        src[place] = ord("t")
        assert pack_codes(src, np.zeros(6, np.uint8), np.zeros(1, np.uint8)) == 3, place
    src = np.frombuffer(b"ACGTACGTACGN", np.uint8)
    stop = np.zeros(1, np.uint8)
    assert pack_codes(src, np.zeros(3, np.uint8), stop) == -1 and stop[0] == 1
    stop[0] = 0
    assert pack_parallel(src, np.zeros(3, np.uint8), np.array([0, 8, 12]), stop) == -1


def test_read_only_and_offset_inputs():
    raw = np.frombuffer(b"xACGTTGCAacgtA", np.uint8)        # read-only, odd offsets
    for lo in range(1, 4):
        src = raw[lo:]
        ok, out, _ = pack(src)
        assert ok == all(c in VALID for c in src)
    ok, out, _ = pack(raw[1:])
    assert ok and np.array_equal(out, packed_reference(raw[1:]))


@pytest.mark.parametrize("n", [8, 13, 64, 70])
def test_every_byte_at_every_place_is_checked(n):
    # each of the 256 bytes at each place of the first word, the last whole word and the
    # tail: packing succeeds exactly for ACGTacgt, and then equals the table
    rng = np.random.default_rng(100 + n)
    base = ACGT[rng.integers(0, 8, n)]
    places = sorted({0, 1, 3, 7, min(n - 1, 8), n - (n % 8 or 8), n - 1})
    for place in places:
        for ch in range(256):
            src = base.copy()
            src[place] = ch
            ok, out, stop = pack(src)
            assert ok == (ch in VALID), (place, ch)
            assert stop[0] == (0 if ok else 1)
            if ok:
                assert np.array_equal(out, packed_reference(src)), (place, ch)


def test_a_bad_character_in_a_later_block_and_the_stop_flag():
    rng = np.random.default_rng(7)
    src = ACGT[rng.integers(0, 8, 5 * (1 << 16) + 3)]
    src[4 * (1 << 16) + 11] = ord("N")
    assert pack(src)[0] is False
    src[4 * (1 << 16) + 11] = ord("a")
    assert pack(src)[0] is True
    # a neighbour's stop: the slice gives up at its next block, however clean it is
    assert pack(src, np.ones(1, np.uint8))[0] is False
    ok, out, stop = pack(np.zeros(0, np.uint8))
    assert ok and out.size == 0 and stop[0] == 0


def test_packs_reads_the_table_itself():
    assert gpu.packs(DNA.code_table)
    assert not gpu.packs(PROTEIN.code_table)
    assert not gpu.packs(np.arange(256, dtype=np.uint8))          # "bytes"
    for change in ((ord("a"), 255), (ord("T"), 4), (ord("c"), 2), (ord("G"), 1)):
        table = DNA.code_table.copy()
        table[change[0]] = change[1]
        assert not gpu.packs(table), change
    assert not gpu.packs(DNA.code_table[:128])


# ------------------------------------------------------------------ stand-in device
# encode.py's host side (chunks, pinned buffers, fills, launches, flags) with NumPy arrays
# for CuPy's and the two kernels of encode.cu transcribed in NumPy.


def stand_in(log: list):
    class DeviceArray(np.ndarray):
        def set(self, host, stream=None):
            assert host.size == self.size and host.dtype == self.dtype
            log.append(("copy", int(host.size)))
            self[...] = host

        def get(self, stream=None):
            log.append(("read", int(self.size)))
            return np.array(self)

    class Stream:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def record(self):
            return SimpleNamespace(synchronize=lambda: None, done=True)

        def wait_event(self, event):
            log.append(("wait", 0))

        def synchronize(self):
            pass

    cuda = SimpleNamespace(Device=lambda: SimpleNamespace(id=0),
                           Stream=lambda non_blocking=False: Stream(),
                           get_current_stream=Stream, alloc_pinned_memory=bytearray)
    return SimpleNamespace(
        ndarray=DeviceArray, uint8=np.uint8, int32=np.int32, uint64=np.uint64, cuda=cuda,
        empty=lambda n, dtype: np.empty(n, dtype).view(DeviceArray),
        zeros=lambda n, dtype: np.zeros(n, dtype).view(DeviceArray),
        asarray=lambda a: np.array(a).view(DeviceArray),
        ascontiguousarray=lambda a: np.ascontiguousarray(a).view(DeviceArray),
        bincount=lambda a, minlength=0: np.bincount(np.asarray(a),
                                                    minlength=minlength).view(DeviceArray))


def encode_bytes(grid, block, args):
    chars, n, table, codes, base, flags = args
    n = int(n)
    assert chars.size >= n and codes.size == n and grid[0] * block[0] > 0
    c = np.asarray(table)[np.asarray(chars[:n])]
    codes[...] = c
    bad = np.flatnonzero(c == gpu.INVALID)
    if bad.size:
        # the first bad character's index, complemented (atomicMax; 0: none)
        flags[0] = max(int(flags[0]), ~(int(base) + int(bad[0])) & 0xFFFFFFFFFFFFFFFF)
    flags[1] = max(int(flags[1]), int(c.max(initial=0)))


def unpack_dna(grid, block, args):
    packed, n, codes, flags = args
    n = int(n)
    assert packed.size == (n + 3) // 4 and codes.size == n
    assert grid[0] * block[0] > 0 and codes.ctypes.data % 4 == 0   # chunks at 4-char marks
    p = np.asarray(packed)
    c = ((p[:, None] >> np.array([0, 2, 4, 6], np.uint8)) & 3).astype(np.uint8).ravel()[:n]
    codes[...] = c
    flags[1] = max(int(flags[1]), int(c.max(initial=0)))


@pytest.fixture
def device(monkeypatch):
    """(stand-in CuPy, the log of copies and launches) for the test's calls."""
    log = []
    kernels = {"encode_bytes": encode_bytes, "unpack_dna": unpack_dna}

    def modules(filename, names, defines=()):
        assert filename == "encode.cu"
        return SimpleNamespace(get_function=lambda name: (
            lambda grid, block, args: (log.append((name, int(args[1]))),
                                       kernels[name](grid, block, args))))

    monkeypatch.setattr(gpu, "_staging", threading.local())   # no stand-in stream kept
    monkeypatch.setattr(gpu, "_tables", {})                   # nor a stand-in table
    monkeypatch.setattr(gpu, "_SPLIT_FROM", 64)               # slices on small chunks too
    monkeypatch.setattr(gpu, "_SLICE", 64)
    with emulated(stand_in(log), modules) as cp:
        yield cp, log


def sides(rng):
    """Host sides: ACGT, mixed case of odd length, an N late, a bad character late, an
    N at the start, empty."""
    acgt = ACGT[rng.integers(0, 4, 50_000)]
    mixed = ACGT[rng.integers(0, 8, 70_001)]
    late_n = mixed.copy()
    late_n[[60_003, 65_000]] = ord("N")
    broken = mixed.copy()
    broken[[40_001, 69_999]] = [ord("!"), ord("n")]
    first_n = acgt.copy()
    first_n[0] = ord("n")
    return [acgt, mixed, late_n, broken, first_n, np.zeros(0, np.uint8)]


def copied(log) -> list[int]:
    return [size for what, size in log if what == "copy"]


def joint_chunks(hosts: dict, size: int) -> list[list[tuple]]:
    """The chunks of packed staging: lists of pieces (side, lo, hi, packs) over the host
    sides ``hosts`` (side -> characters) in order, at most ``size`` characters a chunk (a
    multiple of 4), a piece cut at a multiple of 4 characters of its side unless it ends
    the side; a side's first piece with a character outside ACGTacgt is its last."""
    chunks, room = [[]], size
    for k, raw in hosts.items():
        lo = 0
        while lo < raw.size:
            left = raw.size - lo
            take = left if left <= room else room - room % 4
            if take == 0:
                chunks.append([])
                room = size
                continue
            ok = bool(np.isin(raw[lo:lo + take], ACGT).all())
            chunks[-1].append((k, lo, lo + take, ok))
            lo, room = lo + take, room - take
            if not ok:
                break
    return [c for c in chunks if c]


def assert_as_cpu(cp, got, raws) -> None:
    """``got`` (encode_sides of ``raws``, DNA) is the CPU engine's answer."""
    want = cpu_encode.encode_sides(raws, DNA.code_table)
    assert len(got) == len(want)
    for k, ((codes, bad, counted, top), (wc, wb, _, wt)) in enumerate(zip(got, want)):
        assert isinstance(codes, cp.ndarray) and np.array_equal(codes.get(), wc), k
        assert (bad, top, counted) == (wb, wt, None), k


def assert_staged_as_planned(log, unpacked, hosts: dict, got, chunk,
                             device_sizes=()) -> list[list[tuple]]:
    """One packed call's copies and launches are those of :func:`joint_chunks` over the
    host sides ``hosts``: per chunk one copy of the packed pieces up to its last piece
    that packed (none when none did), each such piece unpacked into its own side's codes;
    then each side from its piece that did not pack, as characters in chunks of ``chunk``,
    each chunk encoded (after the device sides of ``device_sizes``, encoded whole).
    Returns the plan."""
    size = gpu.PACKED_STAGE_BYTES if chunk is None else max(4, chunk - chunk % 4)
    plan = joint_chunks(hosts, size)
    packed_copies = []
    for pieces in plan:
        last = max((i for i, (*_, ok) in enumerate(pieces) if ok), default=-1)
        if last >= 0:
            packed_copies.append(sum((hi - lo + 3) // 4 for _, lo, hi, _ in pieces[:last + 1]))
    step = gpu.STAGE_BYTES if chunk is None else chunk
    chars = []
    for k, lo, _, ok in (piece for pieces in plan for piece in pieces):
        if not ok:
            rest = hosts[k].size - lo
            chars += [min(step, rest - a) for a in range(0, rest, step)]
    assert copied(log) == packed_copies + chars
    assert [n for what, n in log if what == "encode_bytes"] == list(device_sizes) + chars
    for k in hosts:
        assert [(lo, hi) for codes, lo, hi in unpacked if codes is got[k][0]] == [
            (lo, hi) for pieces in plan for side, lo, hi, ok in pieces if side == k and ok], k
    assert len(unpacked) == sum(ok for pieces in plan for *_, ok in pieces)
    return plan


@pytest.mark.parametrize("chunk, threads", [(1000, 1), (4099, 3), (20_000, 8), (None, 4)])
def test_packed_staging_equals_the_byte_path(device, unpacked, chunk, threads):
    cp, log = device
    rng = np.random.default_rng(20)
    raws = sides(rng)
    table = DNA.code_table
    want = cpu_encode.encode_sides(raws, table)
    assert [w[1] for w in want] == [-1, -1, -1, 40_001, -1, -1]
    assert [w[3] for w in want] == [3, 3, 4, 255, 4, 0]
    for staging in gpu.STAGINGS:
        log.clear()
        unpacked.clear()
        got = gpu.encode_sides(raws, table, staging=staging, chunk=chunk, threads=threads)
        assert_as_cpu(cp, got, raws)
        if staging != "packed":     # "pageable": one cupy.asarray a side, no staging
            assert not unpacked
            assert sum(copied(log)) == (0 if staging == "pageable" else sum(map(len, raws)))
            continue
        # what crossed: the sides' pieces packed in shared chunks up to each side's first
        # piece with a character outside ACGTacgt, then that side's characters from there
        plan = assert_staged_as_planned(log, unpacked, dict(enumerate(raws)), got, chunk)
        assert sum(hi - lo for _, lo, hi in unpacked) >= 50_000 + 60_000
        assert any(len({side for side, *_ in pieces}) > 1 for pieces in plan)


@pytest.mark.parametrize("lengths", [(1001,), (1000, 2003), (1001, 2003), (1001, 0, 2003, 7),
                                     (0, 5, 3)])
@pytest.mark.parametrize("chunk", [4, 97, 1000, 1002, 1004, 1500, 3100, 10_000])
def test_host_sides_share_chunks(device, unpacked, lengths, chunk):
    # chunks (rounded down to 4 characters) that cut inside the first side (97, 1000 and
    # 1002 of 1,001), end with it (1000 of 1,000; 1004 of 1,001: y's first piece would be
    # shorter than 4), cut inside the second (1500) or hold every side (3100, 10_000)
    cp, log = device
    rng = np.random.default_rng(sum(lengths) + chunk)
    raws = [ACGT[rng.integers(0, 8, n)] for n in lengths]       # upper and lower case
    size = max(4, chunk - chunk % 4)
    for threads in (1, 3):
        log.clear()
        unpacked.clear()
        got = gpu.encode_sides(raws, DNA.code_table, chunk=chunk, threads=threads)
        assert_as_cpu(cp, got, raws)
        plan = assert_staged_as_planned(log, unpacked, dict(enumerate(raws)), got, chunk)
        # every character packed once, each chunk at most ``size`` characters, a side's
        # pieces at multiples of 4 of its characters
        assert all(ok for pieces in plan for *_, ok in pieces)
        assert sorted((k, lo, hi) for k, raw in enumerate(raws) for codes, lo, hi in unpacked
                      if codes is got[k][0]) == [(k, lo, hi) for pieces in plan
                                                 for k, lo, hi, _ in pieces]
        assert sum(hi - lo for _, lo, hi in unpacked) == sum(lengths)
        assert all(lo % 4 == 0 for _, lo, _ in unpacked)
        assert all(sum(hi - lo for _, lo, hi, _ in pieces) <= size for pieces in plan)
        # sides that fit in one chunk together cross in one copy
        assert (len(copied(log)) == 1) == (0 < sum(lengths) <= size)


@pytest.mark.parametrize("spots", [
    [(0, 0, "N")],                       # the first character of the first side
    [(0, 999, "!")],                     # the first side, in its last piece
    [(1, 0, "n")],                       # the second side's first character
    [(1, 1777, "#")],                    # the second side, in a later chunk
    [(1, 2002, "R")],                    # the last character of the second side
    [(0, 500, "y"), (1, 10, "N")],       # both sides
    [(2, 6, "N"), (0, 3, "\0")],         # the last side's last character, and the first
])
@pytest.mark.parametrize("chunk", [400, 1000, 1500, 4000])
def test_other_characters_in_any_side_and_chunk(device, unpacked, spots, chunk):
    cp, log = device
    rng = np.random.default_rng(30 + chunk)
    raws = [ACGT[rng.integers(0, 8, n)] for n in (1001, 2003, 7)]
    for k, at, ch in spots:
        raws[k][at] = ord(ch)
    got = gpu.encode_sides(raws, DNA.code_table, chunk=chunk, threads=3)
    assert_as_cpu(cp, got, raws)
    plan = assert_staged_as_planned(log, unpacked, dict(enumerate(raws)), got, chunk)
    # a side falls back from its piece that holds its first other character; every other
    # side packs whole (another side's other character stops none of its slices)
    fallen = {k: (lo, hi) for pieces in plan for k, lo, hi, ok in pieces if not ok}
    for k, raw in enumerate(raws):
        other = np.flatnonzero(~np.isin(raw, ACGT))
        mine = sum(hi - lo for codes, lo, hi in unpacked if codes is got[k][0])
        if other.size:
            lo, hi = fallen[k]
            assert lo <= other[0] < hi and mine == lo, k
        else:
            assert k not in fallen and mine == raw.size, k


@pytest.mark.parametrize("chunk", [1000, 1500, None])
def test_host_sides_beside_a_device_side(device, unpacked, chunk):
    cp, log = device
    rng = np.random.default_rng(32)
    x, y, z = (ACGT[rng.integers(0, 8, n)] for n in (1001, 2003, 30))
    z[29] = ord("N")
    got = gpu.encode_sides([x, cp.asarray(y), z], DNA.code_table, chunk=chunk, threads=2)
    assert_as_cpu(cp, got, [x, y, z])
    # the device side is encoded where it is; x and z share the chunks
    plan = assert_staged_as_planned(log, unpacked, {0: x, 2: z}, got, chunk,
                                    device_sizes=[y.size])
    assert not [1 for codes, *_ in unpacked if codes is got[1][0]]
    assert [side for side, *_ in plan[-1]] == [0, 2]


class Packs:
    """``pack2.pack_parallel`` that notes each call: (characters, slices)."""

    def __init__(self, real) -> None:
        self.real, self.calls = real, []

    def __call__(self, src, out, cuts, stop):
        assert cuts[0] == 0 and cuts[-1] == src.size and (np.diff(cuts) >= 0).all()
        assert (cuts[:-1] % 4 == 0).all()             # a packed byte is never shared
        self.calls.append((src.size, cuts.size - 1))
        return self.real(src, out, cuts, stop)


def test_one_pack_call_a_piece(device, monkeypatch):
    # the sides of a call share the chunks; each piece of a chunk is packed by one
    # pack_parallel call, its slices side by side: x of 4 units and y in one chunk, two
    # calls; x and a y that spans two chunks, three; 756 characters in all, the calling
    # thread alone
    from warpalign._backends.cpu import pack2
    cp, log = device
    packs = Packs(pack2.pack_parallel)
    monkeypatch.setattr(pack2, "pack_parallel", packs)
    monkeypatch.setattr(gpu, "_SPLIT_FROM", 1024)       # x alone would be one thread's
    rng = np.random.default_rng(31)
    x = ACGT[rng.integers(0, 8, 4 * 64)]
    for n, calls in ((3001, [(256, 4), (3001, 46)]),       # slices of _SLICE (64) characters
                     (6001, [(256, 4), (3840, 60), (6001 - 3840, 33)]), (500, [])):
        y = ACGT[rng.integers(0, 8, n)]
        packs.calls.clear()
        log.clear()
        got = gpu.encode_sides([x, y], DNA.code_table, chunk=4096, threads=8)
        assert_as_cpu(cp, got, [x, y])
        assert packs.calls == calls, n
        assert len(copied(log)) == max(1, len(calls) - 1)


def test_one_sides_other_character_stops_only_its_own_slices(device, unpacked, monkeypatch):
    # x's slices run first and meet the N at once: a stop flag shared with y's slices would
    # make them give up before their first block
    cp, log = device
    rng = np.random.default_rng(34)
    x, y = ACGT[rng.integers(0, 8, 800)], ACGT[rng.integers(0, 8, 3001)]
    x[0] = ord("N")
    for threads in (1, 4):
        unpacked.clear()
        got = gpu.encode_sides([x, y], DNA.code_table, chunk=8192, threads=threads)
        assert_as_cpu(cp, got, [x, y])
        assert [(lo, hi) for codes, lo, hi in unpacked if codes is got[1][0]] == [(0, 3001)]
        assert not [1 for codes, *_ in unpacked if codes is got[0][0]]


def test_calls_from_many_threads_get_their_own_sides(device):
    # calls at once from several threads pack in turn, each with its own buffers,
    # pieces and fallbacks
    cp, _ = device
    rng = np.random.default_rng(35)
    calls = []
    for t in range(8):
        raws = [ACGT[rng.integers(0, 8, n)] for n in rng.integers(1, 5000, 2 + t % 2)]
        if t % 2:
            raws[t % 3 % len(raws)][rng.integers(0, 1000) % raws[0].size] = ord("N")
        calls.append(raws)
    results = [[] for _ in calls]

    def run(t: int) -> None:
        for chunk in (999, 4000, None):
            results[t].append(gpu.encode_sides(calls[t], DNA.code_table, chunk=chunk,
                                               threads=4))

    threads = [threading.Thread(target=contextvars.copy_context().run, args=(run, t))
               for t in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for raws, got in zip(calls, results):
        assert len(got) == 3
        for answer in got:
            assert_as_cpu(cp, answer, raws)


def test_counts_and_device_sides_take_the_byte_path(device):
    cp, log = device
    rng = np.random.default_rng(21)
    raws = sides(rng)[:3]
    want = cpu_encode.encode_sides(raws, DNA.code_table, counts=True)
    got = gpu.encode_sides(raws, DNA.code_table, counts=True, chunk=4096, threads=2)
    assert not [e for e in log if e[0] == "unpack_dna"]
    for (codes, bad, counted, top), (wc, wb, wn, wt) in zip(got, want):
        assert np.array_equal(codes.get(), wc) and (bad, top) == (wb, wt)
        assert np.array_equal(counted, wn)
    # a device side is encoded where it is; the host side beside it packs
    log.clear()
    got = gpu.encode_sides([cp.asarray(raws[0]), raws[1]], DNA.code_table, chunk=4096)
    assert [n for what, n in log if what == "encode_bytes"] == [raws[0].size]
    assert sum(n for what, n in log if what == "unpack_dna") == raws[1].size
    assert np.array_equal(got[1][0].get(), want[1][0]) and got[1][3] == 3
    # a protein table never packs, whatever its letters
    log.clear()
    protein = np.frombuffer(b"ACGTacgtWY", np.uint8)[rng.integers(0, 10, 9000)]
    want = cpu_encode.encode_sides([protein], PROTEIN.code_table)
    got = gpu.encode_sides([protein], PROTEIN.code_table, chunk=4096)
    assert not [e for e in log if e[0] == "unpack_dna"]
    assert np.array_equal(got[0][0].get(), want[0][0]) and got[0][3] == want[0][3]


def test_stage_and_the_default(device):
    _, log = device
    raw = ACGT[np.random.default_rng(22).integers(0, 8, 10_001)]
    assert np.array_equal(gpu.stage(raw, 999, 3).get(), raw)     # characters, as ever
    assert sum(copied(log)) == raw.size
    assert gpu.STAGING == "packed"
    with pytest.raises(ValueError, match="invalid staging: 'mapped'"):
        gpu.encode_sides([raw], DNA.code_table, staging="mapped")


def test_slices_of_one_chunk_pack_as_one(device, monkeypatch):
    # a chunk is packed in slices cut at multiples of 4 characters: any thread count gives
    # the codes of one pass, and a character outside ACGTacgt in any slice sends the whole
    # chunk up as characters (chunk=n + 3: one chunk, rounded down to 4 characters)
    _, log = device
    monkeypatch.setattr(gpu, "_SPLIT_FROM", 16)               # slices from 16 characters
    monkeypatch.setattr(gpu, "_SLICE", 4)
    rng = np.random.default_rng(23)
    for n in (16, 17, 99, 1003, 40_001):
        src = ACGT[rng.integers(0, 8, n)]
        want = cpu_encode.encode(src, DNA.code_table)[0]
        for threads in (1, 2, 3, 7, 16):
            log.clear()
            (codes, bad, _, top), = gpu.encode_sides([src], DNA.code_table, chunk=n + 3,
                                                     threads=threads)
            assert np.array_equal(codes.get(), want) and (bad, top) == (-1, 3), (n, threads)
            assert copied(log) == [(n + 3) // 4] and ("unpack_dna", n) in log, (n, threads)
        for spot in (0, n // 3, n - 1):
            withn = src.copy()
            withn[spot] = ord("N")
            log.clear()
            (codes, bad, _, top), = gpu.encode_sides([withn], DNA.code_table, chunk=n + 3,
                                                     threads=5)
            assert copied(log) == [n] and ("encode_bytes", n) in log, (n, spot)
            assert not [e for e in log if e[0] == "unpack_dna"], (n, spot)
            assert np.array_equal(codes.get(), cpu_encode.encode(withn, DNA.code_table)[0])
            assert (bad, top) == (-1, 4)


def test_sides_that_pack_whole_need_no_read(device):
    # every host side packed whole: no bad character, the largest codes from the pack (all
    # A: 0, A C: 1, A C G: 2, with T: 3, empty: 0), no read of the flags; the caller's
    # stream waits for the unpacks. A side with an N: the flags are read, as before
    cp, log = device
    rng = np.random.default_rng(36)
    letters = [b"Aa", b"ACac", b"ACGacg", b"ACGTacgt"]
    raws = [np.frombuffer(t, np.uint8)[rng.integers(0, len(t), n)]
            for t, n in zip(letters, (3001, 999, 4096, 2001))] + [np.zeros(0, np.uint8)]
    for chunk in (1000, None):
        log.clear()
        got = gpu.encode_sides(raws, DNA.code_table, chunk=chunk, threads=4)
        assert not [e for e in log if e[0] == "read"] and ("wait", 0) in log, chunk
        assert_as_cpu(cp, got, raws)
        assert [top for *_, top in got] == [0, 1, 2, 3, 0]
    withn = raws[2].copy()
    withn[4000] = ord("N")
    log.clear()
    got = gpu.encode_sides([raws[0], withn], DNA.code_table, threads=4)
    assert [e for e in log if e[0] == "read"] == [("read", 4)]      # the flags, once
    assert_as_cpu(cp, got, [raws[0], withn])


def test_pinned_buffers_are_held_until_their_copies_are_done(device, monkeypatch):
    # _alternate returns once its last copies are queued; their pinned buffers stay held
    # (per device) until the copies' events are done, then the next call lets them go
    monkeypatch.setattr(gpu, "_held", {})
    running = SimpleNamespace(done=False)
    buffers = [bytearray(8)]
    gpu._hold([running], buffers)
    gpu._hold([], [bytearray(8)])                    # nothing queued: nothing held
    gpu._release_done()
    assert gpu._held == {0: [([running], buffers)]}
    running.done = True
    gpu._release_done()
    assert gpu._held == {0: []}


def test_a_score_pairs_batch_is_one_packed_chunk():
    # a batch of score_pairs (at most BATCH_RESIDUES characters of both sides) packs in
    # one chunk, one pack call a side (PACKED_STAGE_BYTES says why), and the
    # pinned buffers of a chunk stay a quarter of it
    from warpalign.pairs import BATCH_RESIDUES
    assert gpu.PACKED_STAGE_BYTES >= BATCH_RESIDUES["cuda"]
    assert gpu.PACKED_STAGE_BYTES % 4 == 0 and gpu.PACKED_STAGE_BYTES // 4 <= 1 << 26
