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
