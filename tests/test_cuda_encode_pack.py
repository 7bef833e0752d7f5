"""Packed staging on the device (issue 22): host DNA characters cross as 2-bit codes and
``encode.cu``'s ``unpack_dna`` writes the codes ``encode_bytes`` writes. The encode
engine with staging "packed" equals "pinned", "pageable" and the CPU engine (codes, first
bad character, largest code), over several chunks shared by the sides, slices and a
fallback in any chunk;
``score_pairs`` from 2-D NumPy arrays and SequenceBuffers equals the CPU backend with
packing on and off. The host side's logic without a GPU: tests/test_encode_pack.py."""

from __future__ import annotations

import numpy as np
import pytest

from warpalign import Scoring
from warpalign.buffers import SequenceBuffer
from warpalign.errors import AlphabetError
from warpalign.pairs import score_pairs

from test_encode_pack import joint_chunks

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("pairs_device")]

PAPER = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)  # paper 004
ACGT = np.frombuffer(b"ACGTacgt", np.uint8)


def sides(rng):
    acgt = ACGT[rng.integers(0, 4, 250_001)]
    mixed = ACGT[rng.integers(0, 8, 250_003)]
    late_n = mixed.copy()
    late_n[[200_002, 240_000]] = ord("N")
    broken = mixed.copy()
    broken[[123_457, 200_000]] = [ord("#"), ord("n")]
    first_n = acgt.copy()
    first_n[0] = ord("n")
    return [acgt, mixed, late_n, broken, first_n, ACGT[:6].copy(), np.zeros(0, np.uint8)]


@pytest.mark.parametrize("chunk, threads", [(1000, 1), (4099, 3), (99_999, 8), (None, None)])
def test_packed_staging_equals_every_staging_and_the_cpu(chunk, threads, unpacked):
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cpu import encode as cpu_encode
    from warpalign._backends.cuda import encode as gpu

    rng = np.random.default_rng(80)
    raws = sides(rng)
    table = PAPER.alphabet.code_table
    want = cpu_encode.encode_sides(raws, table)
    assert [w[1] for w in want] == [-1, -1, -1, 123_457, -1, -1, -1]
    assert [w[3] for w in want] == [3, 3, 4, 255, 4, 3, 0]
    # packed: the sides share the chunks; each side's pieces up to its first piece with
    # another character
    size = gpu.PACKED_STAGE_BYTES if chunk is None else chunk - chunk % 4
    packed = sum(hi - lo for pieces in joint_chunks(dict(enumerate(raws)), size)
                 for _, lo, hi, ok in pieces if ok)
    for staging in gpu.STAGINGS:
        unpacked.clear()
        got = gpu.encode_sides(raws, table, staging=staging, chunk=chunk, threads=threads)
        for k, ((codes, bad, counted, top), (wc, wb, _, wt)) in enumerate(zip(got, want)):
            assert isinstance(codes, cp.ndarray) and np.array_equal(codes.get(), wc), (
                staging, k)
            assert (bad, top, counted) == (wb, wt, None), (staging, k)
        covered = sum(hi - lo for _, lo, hi in unpacked)
        assert covered == (packed if staging == "packed" else 0), staging
    # the first bad character in any chunk, as the byte path names it
    for spots in ([250_002], [0], [1000, 999], [123_456, 200_000, 4096], [99_999, 99_998]):
        broken = raws[1].copy()
        broken[spots] = ord("#")
        assert gpu.encode(broken, table, chunk=chunk, threads=threads)[1] == min(spots)


def test_unpack_kernel_alone():
    # unpack_dna on its own: n not a multiple of 4, codes at an unaligned address (the
    # byte stores), past one grid (the grid-stride loop), flags[0] left as it is
    cp = pytest.importorskip("cupy")
    from warpalign._backends.cpu.pack2 import pack_slice
    from warpalign._backends.cuda import encode as gpu

    rng = np.random.default_rng(81)
    kernels = gpu._kernels(True)
    for n, offset, letters in ((1, 0, b"T"), (7, 1, b"ACG"), (4 * 300_000 + 3, 0, b"ACGT"),
                               (5_000_001, 3, b"ACGT"), (10_003, 2, b"AC")):
        chars = np.frombuffer(letters, np.uint8)[rng.integers(0, len(letters), n)]
        packed = np.zeros((n + 3) // 4, np.uint8)
        assert pack_slice(chars, packed, np.zeros(1, np.uint8))
        codes = cp.full(n + offset, 99, dtype=cp.uint8)
        flags = cp.asarray(np.array([12345, 0], np.uint64))
        gpu._unpacker(kernels, codes[offset:], flags)(cp.asarray(packed), 0, n)
        want = PAPER.alphabet.code_table[chars]
        assert np.array_equal(codes[offset:].get(), want), (n, offset)
        assert (codes[:offset].get() == 99).all()
        assert flags.get().tolist() == [12345, int(want.max())]


def _buffer(rows: np.ndarray) -> SequenceBuffer:
    return SequenceBuffer(rows.reshape(-1), np.arange(len(rows) + 1) * rows.shape[1])


@pytest.mark.parametrize("form", ["numpy-2d", "buffer"])
def test_score_pairs_with_packing_on_and_off_equal_the_cpu(form, monkeypatch, unpacked):
    # several staging chunks a side (STAGE_BYTES and PACKED_STAGE_BYTES not multiples of
    # 4), the chunks filled by several threads; rows of 61 and 303 (no multiple of 4);
    # lower case, an N, a bad character named as the CPU backend names it
    pytest.importorskip("cupy")
    from warpalign._backends.cuda import encode as gpu

    monkeypatch.setattr(gpu, "STAGE_BYTES", 10_002)
    monkeypatch.setattr(gpu, "PACKED_STAGE_BYTES", 10_002)
    monkeypatch.setattr(gpu, "_SPLIT_FROM", 2_000)
    rng = np.random.default_rng(82)
    X = ACGT[rng.integers(0, 4, (500, 61))]
    Y = ACGT[rng.integers(0, 4, (500, 303))]
    Y[:100, 50:111] = X[:100]
    lower = np.where(rng.random(Y.shape) < 0.5, Y | 0x20, Y).astype(np.uint8)
    withn = Y.copy()
    withn[321, 17] = ord("N")
    put = (lambda a: a) if form == "numpy-2d" else _buffer
    for staging in ("packed", "pinned"):
        monkeypatch.setattr(gpu, "STAGING", staging)
        for x, y, scoring, mode in ((X, Y, PAPER, "score"), (X, lower, PAPER, "score"),
                                    (X, withn, PAPER, "score"), (X, lower, AFFINE, "score"),
                                    (X, Y, PAPER, "full")):
            unpacked.clear()
            got = score_pairs(put(x), put(y), scoring, backend="cuda", mode=mode)
            want = score_pairs(x, y, scoring, backend="cpu", mode=mode)
            assert got.scores.tolist() == want.scores.tolist(), (staging, scoring, mode)
            assert max(want.scores) >= 100
            if mode == "full":
                assert [a.cigar for a in got.alignments] == [a.cigar for a in want.alignments]
            # all of x packs; y up to its piece with the N (x and y share the chunks of
            # 10,000 characters: y's pieces start at 0, 9,500, 19,500, ...)
            expect = sum(hi - lo for pieces in joint_chunks({0: x.ravel(), 1: y.ravel()},
                                                            10_000)
                         for _, lo, hi, ok in pieces if ok)
            assert expect == x.size + (89_500 if y is withn else y.size)
            covered = sum(hi - lo for _, lo, hi in unpacked)
            assert covered == (expect if staging == "packed" else 0), staging
        bad = lower.copy()
        bad[444, 302] = ord("!")
        with pytest.raises(AlphabetError, match=r"ys\[444\]: record 'seq444', position 302.*'!'"):
            score_pairs(put(X), put(bad), PAPER, backend="cuda")
