"""The packed kernel's host profile (``cuda/packed.py`` ``_packed_profile``) on the CPU: every
row of both halves holds its query's letter where the query has one, the padding letter
elsewhere (rows past a query's end, rows of no query). No device: CuPy's pinned memory is
stood in for by host bytes."""

from __future__ import annotations

import hashlib
import sys
import types

import numpy as np
import pytest

from warpalign._backends.cuda import config, packed


@pytest.fixture
def host_pinned(monkeypatch):
    fake = types.ModuleType("cupy")
    fake.cuda = types.SimpleNamespace(alloc_pinned_memory=lambda size: bytearray(size))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(packed, "_PACKED_CACHE", {})


def _expected(qs, P, kp):
    """The profile row by row, from pack_plan's halves (the specification)."""
    lengths = [len(q) for q in qs]
    R, passes, halves = config.pack_plan(lengths, kp, packed._SMEM_LIMIT)
    rows = passes * 32 * R
    codes = np.full((2, rows), kp - 1, np.int64)
    for h in range(2):
        r0 = 0
        for qi, k in halves[h]:
            for row in range(k):
                if row < lengths[qi]:
                    codes[h, r0 + row] = qs[qi][row]
            r0 += k
    low = (P & 0xFFFF).astype(np.uint32)
    word = low[codes[0]] | (low[codes[1]] << np.uint32(16))    # [row, letter]
    RS = config.rows_stride(R)
    prof = np.zeros((passes, kp, 32, RS), np.uint32)
    for p in range(passes):
        for lane in range(32):
            for r in range(R):
                prof[p, :, lane, r] = word[(p * 32 + lane) * R + r]
    return R, passes, prof.reshape(passes, -1)


@pytest.mark.parametrize("seed", range(6))
def test_profile_rows_hold_each_querys_letters_and_padding(host_pinned, seed):
    rng = np.random.default_rng(seed)
    kp = 26
    count = int(rng.integers(2, 40))
    lengths = rng.integers(0, 300, count)
    lengths[0] = max(int(lengths[0]), 1)                   # one query with rows at least
    qs = [rng.integers(0, kp - 1, int(n)).astype(np.uint8) for n in lengths]
    P = rng.integers(0, 1 << 20, (kp, kp)).astype(np.int64)
    R, passes, prof, info, _ = packed._packed_profile(qs, P, kp, hashlib.blake2b(P.tobytes()))
    want_R, want_passes, want = _expected(qs, P, kp)
    assert (R, passes) == (want_R, want_passes)
    np.testing.assert_array_equal(prof, want)
    lanes = packed.PackedSearch._pack_lanes(config.pack_plan([len(q) for q in qs], kp,
                                                             packed._SMEM_LIMIT)[2], R, passes)[0]
    np.testing.assert_array_equal(info.reshape(-1), lanes.reshape(-1))


def test_memo_keeps_a_streamed_searchs_batches_and_its_bounds(host_pinned, monkeypatch):
    # a streamed search builds each chunk's batches in turn: a cycle of 12 query groups
    # must be built once, not once a chunk (8 entries rebuilt every one, session 26)
    rng = np.random.default_rng(5)
    kp = 26
    P = rng.integers(0, 1 << 20, (kp, kp)).astype(np.int64)
    h = hashlib.blake2b(P.tobytes())
    groups = [[rng.integers(0, kp - 1, int(n)).astype(np.uint8) for n in rng.integers(20, 90, 6)]
              for _ in range(12)]
    built = []
    plan = config.pack_plan
    monkeypatch.setattr(config, "pack_plan", lambda *a: built.append(1) or plan(*a))
    first = [packed._packed_profile(g, P, kp, h) for g in groups]
    for _ in range(3):                                   # three more chunks
        again = [packed._packed_profile(g, P, kp, h) for g in groups]
        assert all(a is b for a, b in zip(first, again))
    assert len(built) == 12
    prof, info = first[0][2], first[0][3]
    assert not prof.flags.writeable and not info.flags.writeable
    with pytest.raises(ValueError):
        prof[0, 0] = 1
    # the bounds: entries, then pinned bytes (the least recently used out)
    monkeypatch.setattr(packed, "PACKED_MEMO_ENTRIES", 4)
    packed._PACKED_CACHE.clear()
    for g in groups[:6]:
        packed._packed_profile(g, P, kp, h)
    assert len(packed._PACKED_CACHE) == 4 and len(built) == 18
    packed._packed_profile(groups[2], P, kp, h)          # kept: the 4 last made
    assert len(built) == 18
    one = 4 * (first[0][2].size + first[0][3].size)
    monkeypatch.setattr(packed, "PACKED_MEMO_BYTES", one)
    packed._packed_profile(groups[0], P, kp, h)
    assert len(packed._PACKED_CACHE) == 1 and len(built) == 19


def test_largest_code_of_a_batch():
    # the one-pass largest code a packed batch's queries are checked by (-1: all empty)
    rng = np.random.default_rng(5)
    qs = [rng.integers(0, 20, n).astype(np.uint8) for n in (0, 7, 300, 1, 0, 45)]
    assert packed.largest_code(qs) == max(int(q.max()) for q in qs if len(q))
    qs[3][0] = 24
    assert packed.largest_code(qs) == 24
    assert packed.largest_code([np.zeros(0, np.uint8)] * 3) == -1
    assert packed.largest_code([]) == -1
