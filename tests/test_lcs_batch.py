"""Batched Hirschberg levels (issue 22): a level's passes as descriptors over the two strings
laid end to end (``_backends/lcs_plan.py``), their waves, and the driver's batched path run
with the CPU stand-in (``Cutoffs(gpu_cells=...)`` with ``backend="cpu"``). The oracle for
every vector is the CPU kernel called on the plain slices; for every LCS, the unbatched CPU
driver's string (the same one whatever the cut-offs) and rapidfuzz's length."""

from __future__ import annotations

import numpy as np
import pytest
from rapidfuzz.distance import LCSseq

from warpalign._backends import lcs_plan
from warpalign._backends.cpu import lcs as kernels
from warpalign.lcs import Cutoffs, lcs, lcs_length


def is_subsequence(s: bytes, t: bytes) -> bool:
    it = iter(t)
    return all(c in it for c in s)


def random_passes(rng, na, nb, count):
    """Pass rows over a (na) and b (nb): either string as the pattern, both directions,
    empty and one-symbol ranges included."""
    rows = []
    for i in range(count):
        pat_is_a = int(rng.integers(0, 2))
        np_, nt = (na, nb) if pat_is_a else (nb, na)
        p_lo, p_hi = sorted(int(x) for x in rng.integers(0, np_ + 1, 2))
        t_lo, t_hi = sorted(int(x) for x in rng.integers(0, nt + 1, 2))
        if i == 0:
            p_lo, p_hi = 0, np_           # whole strings
            t_lo, t_hi = 0, nt
        elif i == 1:
            p_hi = p_lo                   # empty pattern
        elif i == 2:
            t_hi = t_lo                   # empty text
        elif i == 3:
            p_hi, t_hi = min(p_lo + 1, np_), min(t_lo + 1, nt)
        rows.append((pat_is_a, p_lo, p_hi, t_lo, t_hi, int(rng.integers(0, 2))))
    return rows


@pytest.mark.parametrize("na,nb,sigma", [(300, 200, 4), (1000, 70, 3), (130, 1200, 256)])
def test_descriptors_read_the_passes(na, nb, sigma):
    rng = np.random.default_rng(na * 7 + nb)
    a = rng.integers(0, sigma, na).astype(np.uint8)
    b = rng.integers(0, sigma, nb).astype(np.uint8)
    passes = random_passes(rng, na, nb, 40)
    desc = lcs_plan.describe(passes, na)
    assert desc.shape == (40, len(lcs_plan.FIELDS)) and desc.dtype == np.int64
    got = lcs_plan.run_descriptors(np.concatenate((a, b)), desc, kernels.final_vector)
    words = 0
    for row, d, v in zip(passes, desc, got):
        pat_is_a, p_lo, p_hi, t_lo, t_hi, backward = row
        pat, txt = (a, b) if pat_is_a else (b, a)
        exp = kernels.final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, bool(backward))
        assert np.array_equal(v, exp), row
        assert d[5] == words and d[6] == exp.size     # vectors laid end to end
        words += exp.size


def test_gathered_texts_are_oriented_and_zero_padded():
    rng = np.random.default_rng(3)
    a = rng.integers(1, 9, 500).astype(np.uint8)
    b = rng.integers(1, 9, 400).astype(np.uint8)
    passes = [(0, 0, 400, 0, 250, 0), (0, 0, 400, 250, 500, 1), (1, 3, 90, 10, 10, 0),
              (1, 0, 500, 37, 400, 1)]
    desc = lcs_plan.describe(passes, len(a))
    codes = np.concatenate((a, b))
    buf = lcs_plan.gather_texts(codes, desc)
    for (pat_is_a, _, _, t_lo, t_hi, bw), d in zip(passes, desc):
        text = (b if pat_is_a else a)[t_lo:t_hi]
        n, toff = int(d[4]), int(d[7])
        pad = int(lcs_plan.padded_text(n))
        assert pad >= 32 * ((n + 62) // 32) + 33        # the kernel's last read ahead
        assert np.array_equal(buf[toff:toff + n], text[::-1] if bw else text)
        assert not buf[toff + n:toff + pad].any()


def test_waves_fit_cover_and_balance():
    assert lcs_plan.waves([1221] * 4, 3776) == [(0, 2), (2, 4)]   # a level's K=2 bands
    assert lcs_plan.waves([2441, 2441], 3776) == [(0, 1), (1, 2)]
    assert lcs_plan.waves([5, 0, 0], 10) == [(0, 3)]
    assert lcs_plan.waves([0, 0], 10) == []
    rng = np.random.default_rng(4)
    for _ in range(200):
        counts = sorted(rng.integers(0, 50, int(rng.integers(1, 60))).tolist(), reverse=True)
        cap = int(rng.integers(max(1, max(counts)), 200))
        ws = lcs_plan.waves(counts, cap)
        flat = [i for p0, p1 in ws for i in range(p0, p1)]
        if sum(counts):
            assert flat == list(range(len(counts)))
        assert all(sum(counts[p0:p1]) <= cap for p0, p1 in ws)
        assert len(ws) <= 2 * -(-sum(counts) // cap) + 1
    with pytest.raises(ValueError, match="exceeds the capacity"):
        lcs_plan.waves([11, 3], 10)


def test_bands_per_pass():
    desc = lcs_plan.describe([(0, 0, 64 * 64 + 1, 0, 9, 0), (0, 0, 5, 0, 0, 0),
                              (0, 0, 0, 0, 5, 1)], 20)
    assert lcs_plan.bands(desc, 1).tolist() == [3, 0, 0]
    assert lcs_plan.bands(desc, 2).tolist() == [2, 0, 0]


def test_shared_alphabet():
    a = np.frombuffer(b"ACGTNxxy", np.uint8)
    b = np.frombuffer(b"TTGACz", np.uint8)
    cmap, sigma = lcs_plan.shared_alphabet(a, b)
    assert sigma == 4
    assert [int(cmap[c]) for c in b"ACGT"] == [1, 2, 3, 4]
    assert [int(cmap[c]) for c in b"Nxyz"] == [0, 0, 0, 0]


def dna(rng, n):
    return bytes(np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, n)])


@pytest.mark.parametrize("case", ["dna", "dna-b-longer", "periodic", "bytes", "equal",
                                  "disjoint", "empty"])
def test_batched_driver_gives_the_same_lcs(case):
    """Every pass of at least gpu_cells cells through the batched stand-in, small cut-offs
    so that many levels batch: the very string of the unbatched driver, for any threads."""
    rng = np.random.default_rng(len(case))
    a, b = {
        "dna": lambda: (dna(rng, 3000), dna(rng, 2200)),
        "dna-b-longer": lambda: (dna(rng, 700), dna(rng, 4100)),
        "periodic": lambda: (b"ACGTTGCA" * 300, b"ACGGT" * 400),
        "bytes": lambda: (bytes(rng.integers(0, 256, 2500).astype(np.uint8)),
                          bytes(rng.integers(0, 256, 1900).astype(np.uint8))),
        "equal": lambda: (b"Q" * 1500, b"Q" * 1300),
        "disjoint": lambda: (b"AC" * 800, b"GT" * 700),
        "empty": lambda: (b"", dna(rng, 100)),
    }[case]()
    expected = lcs(a, b, backend="cpu")
    assert len(expected) == LCSseq.similarity(a, b)
    for gpu_cells in (0, 5000, 200_000):
        for threads in (1, 3):
            cut = Cutoffs(tiny_cells=64, small_words=16, gpu_cells=gpu_cells)
            got = lcs(a, b, backend="cpu", threads=threads, cutoffs=cut)
            assert got == expected, (gpu_cells, threads)
    assert is_subsequence(expected, a) and is_subsequence(expected, b)
    assert lcs_length(a, b, backend="cpu", cutoffs=Cutoffs(gpu_cells=0)) == len(expected)
