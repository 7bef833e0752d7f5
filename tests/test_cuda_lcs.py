"""GPU LLCS passes (issue 5, ``_backends/cuda/lcs.cu``) against the exact CPU kernel, bit for bit.

Every test is cuda-marked and skips where no CUDA device answers. The oracle is the CPU
``final_vector`` (itself checked against rapidfuzz and the textbook DP in test_lcs.py); where
rapidfuzz is installed, lengths are also checked against ``LCSseq.similarity``. The full LCS
with ``backend="cuda"`` must be a common subsequence of the right length and the very string
the CPU returns (same Hirschberg driver and tie rule).
"""

from __future__ import annotations

import importlib
import zlib

import numpy as np
import pytest

from warpalign._backends.cpu import lcs as cpu
from warpalign.errors import BackendUnavailable
from warpalign.lcs import Cutoffs, lcs, lcs_length

pytestmark = pytest.mark.cuda


@pytest.fixture(scope="module")
def gpu():
    try:
        return importlib.import_module("warpalign._backends.cuda.lcs")
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA LCS backend: {exc}")


#: Every bit-parallel pass of lcs()/lcs_length() on the GPU, however small.
ALL_ON_GPU = Cutoffs(gpu_cells=0)


def rapidfuzz_llcs(a: bytes, b: bytes):
    try:
        from rapidfuzz.distance import LCSseq
    except ImportError:
        return None
    return LCSseq.similarity(a, b)


def same_vector(gpu, p, t, backward=False, **kw):
    p = np.frombuffer(p, np.uint8) if isinstance(p, bytes) else p
    t = np.frombuffer(t, np.uint8) if isinstance(t, bytes) else t
    exp = cpu.final_vector(p, 0, len(p), t, 0, len(t), backward)
    got = gpu.final_vector(p, 0, len(p), t, 0, len(t), backward, **kw)   # a timeout raises
    assert got.dtype == np.uint64 and got.shape == exp.shape
    bad = np.flatnonzero(got != exp)
    assert bad.size == 0, f"words differ from {bad[:8]} (of {exp.size}), kw={kw}"
    return int(cpu.zeros_below(exp, len(p)))


def is_subsequence(s: bytes, t: bytes) -> bool:
    it = iter(t)
    return all(c in it for c in s)


def rand(rng, n, sigma=4, base=65):
    return (rng.integers(0, sigma, n) + base).astype(np.uint8).tobytes()


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("m,n", [(1, 1), (5, 300), (63, 63), (64, 64), (65, 65),
                                 (127, 1000), (128, 7), (129, 129), (2047, 3000),
                                 (2048, 2048), (2049, 2049), (4095, 4095), (4096, 4096),
                                 (4097, 4097), (70000, 5000), (300, 70000)])
def test_vectors_word_boundaries(gpu, m, n, backward):
    rng = np.random.default_rng(m * 7919 + n)
    same_vector(gpu, rand(rng, m), rand(rng, n), backward)


@pytest.mark.parametrize("k", [1, 2, 4])
@pytest.mark.parametrize("max_bands", [None, 1, 3])
def test_vectors_every_k_and_launch_split(gpu, k, max_bands):
    """Each K, and patterns cut into several launches (carries through cin/cout); a text
    longer than the ring (64 chunks of 32 columns) exercises the back-pressure."""
    rng = np.random.default_rng(k * 10 + (max_bands or 0))
    p, t = rand(rng, 40000), rand(rng, 9000)
    same_vector(gpu, p, t, False, k=k, max_bands=max_bands)
    same_vector(gpu, p, t, True, k=k, max_bands=max_bands)


def test_all_256_byte_values(gpu):
    rng = np.random.default_rng(256)
    p = rng.integers(0, 256, 20000).astype(np.uint8)
    t = rng.integers(0, 256, 20000).astype(np.uint8)
    p[:256] = np.arange(256)
    t[-256:] = np.arange(256)[::-1]
    llcs = same_vector(gpu, p, t)
    same_vector(gpu, p, t, True)
    for k in (1, 2):
        same_vector(gpu, p, t, k=k, max_bands=2)
    ref = rapidfuzz_llcs(p.tobytes(), t.tobytes())
    assert ref is None or ref == llcs


@pytest.mark.parametrize("kind", ["random", "periodic", "identical", "disjoint", "one-empty",
                                  "text-not-in-pattern", "random-long"])
def test_lengths(gpu, kind):
    rng = np.random.default_rng(zlib.crc32(kind.encode()))
    if kind == "random":
        a, b = rand(rng, 50000), rand(rng, 50000)
    elif kind == "random-long":
        a, b = rand(rng, 300000), rand(rng, 200000)
    elif kind == "periodic":
        a, b = b"ACGTTGCA" * 8000, b"ACGGT" * 11000
    elif kind == "identical":
        a = rand(rng, 80000)
        b = a
    elif kind == "disjoint":
        a, b = rand(rng, 30000, 4, 65), rand(rng, 30000, 4, 97)
    elif kind == "one-empty":
        a, b = rand(rng, 30000), b""
    else:
        a, b = rand(rng, 30000, 4, 65), rand(rng, 30000, 8, 65)   # E..H absent from... a
    exp = lcs_length(a, b, backend="cpu")
    assert lcs_length(a, b, backend="cuda", cutoffs=ALL_ON_GPU) == exp
    assert lcs_length(b, a, backend="cuda", cutoffs=ALL_ON_GPU) == exp
    ref = rapidfuzz_llcs(a, b)
    assert ref is None or ref == exp
    if kind == "identical":
        assert exp == len(a)
    if kind in ("disjoint", "one-empty"):
        assert exp == 0


@pytest.mark.parametrize("na,nb,sigma", [(60000, 40000, 4), (30000, 90000, 20),
                                         (50000, 50000, 256)])
def test_full_lcs_identical_to_cpu(gpu, na, nb, sigma):
    rng = np.random.default_rng(na + nb + sigma)
    a = rng.integers(0, sigma, na).astype(np.uint8).tobytes()
    b = rng.integers(0, sigma, nb).astype(np.uint8).tobytes()
    before = gpu.STATS["passes"]
    s_gpu = lcs(a, b, backend="cuda", cutoffs=ALL_ON_GPU)
    assert gpu.STATS["passes"] > before               # the GPU really ran
    s_cpu = lcs(a, b, backend="cpu")
    assert s_gpu == s_cpu
    assert len(s_gpu) == lcs_length(a, b, backend="cpu")
    assert is_subsequence(s_gpu, a) and is_subsequence(s_gpu, b)


def test_paper_examples_and_types(gpu):
    assert lcs_length("BCAEDAC", "EABEDCBAAC", backend="cuda", cutoffs=ALL_ON_GPU) == 5
    assert lcs("abcdefghijkl", "cflorux", backend="cuda", cutoffs=ALL_ON_GPU) == "cfl"
    assert lcs(b"BCAEDAC", b"EABEDCBAAC", backend="cuda", cutoffs=ALL_ON_GPU) == b"AEDAC"


def test_auto_uses_gpu_above_min_cells(gpu):
    rng = np.random.default_rng(5)
    a, b = rand(rng, 20000), rand(rng, 20000)       # 4e8 cells >= MIN_CELLS
    assert len(a) * len(b) >= gpu.MIN_CELLS
    before = gpu.STATS["passes"]
    assert lcs_length(a, b, backend="auto") == lcs_length(a, b, backend="cpu")
    assert gpu.STATS["passes"] == before + 1


def test_concurrent_passes(gpu):
    """Many passes from threads at once share the GPU's capacity without deadlock."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(9)
    jobs = [(rand(rng, int(m)), rand(rng, int(n))) for m, n in
            zip(rng.integers(1000, 400000, 24), rng.integers(100, 20000, 24))]
    with ThreadPoolExecutor(12) as pool:
        got = list(pool.map(lambda pt: gpu.final_vector(
            np.frombuffer(pt[0], np.uint8), 0, len(pt[0]), np.frombuffer(pt[1], np.uint8), 0,
            len(pt[1]), False), jobs))
    for (p, t), v in zip(jobs, got):
        exp = cpu.final_vector(np.frombuffer(p, np.uint8), 0, len(p),
                               np.frombuffer(t, np.uint8), 0, len(t), False)
        assert np.array_equal(v, exp)


def test_a_stalled_band_raises(gpu):
    """A band that waits past its bound for the band below fails the pass with
    BackendError naming the kernel, never a silent CPU answer (a 1 ns bound)."""
    from warpalign.errors import BackendError
    rng = np.random.default_rng(13)
    p, t = rand(rng, 300_000), rand(rng, 20_000)
    with pytest.raises(BackendError, match="llcs_bands"):
        gpu.final_vector(np.frombuffer(p, np.uint8), 0, len(p), np.frombuffer(t, np.uint8),
                          0, len(t), False, timeout_s=1e-9)
    same_vector(gpu, p, t)


# --- batched Hirschberg levels (issue 22: cuda/lcs.Resident, lcs.cu llcs_batch) -----------

def pass_rows(rng, na, nb, count):
    """Pass rows (lcs_plan): either string as the pattern, both directions, whole strings,
    empty and one-symbol ranges."""
    rows = [(0, 0, nb, 0, na, 0), (0, 0, nb, 0, na, 1), (1, 0, na, 0, nb, 0),
            (1, 0, na, 0, nb, 1), (0, 5, 5, 0, na, 0), (1, 0, na, 7, 7, 1), (0, 3, 4, 9, 10, 1)]
    while len(rows) < count:
        pat_is_a = int(rng.integers(0, 2))
        np_, nt = (na, nb) if pat_is_a else (nb, na)
        p_lo, p_hi = sorted(int(x) for x in rng.integers(0, np_ + 1, 2))
        t_lo, t_hi = sorted(int(x) for x in rng.integers(0, nt + 1, 2))
        rows.append((pat_is_a, p_lo, p_hi, t_lo, t_hi, int(rng.integers(0, 2))))
    return rows


def same_vectors(gpu, a, b, rows, **kw):
    res = gpu.Resident(a, b, **kw)
    try:
        got = res.final_vectors(rows)
    finally:
        res.close()
    assert len(got) == len(rows)
    for row, v in zip(rows, got):
        pat_is_a, p_lo, p_hi, t_lo, t_hi, backward = row
        pat, txt = (a, b) if pat_is_a else (b, a)
        exp = cpu.final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, bool(backward))
        assert v.dtype == np.uint64 and v.shape == exp.shape, (row, kw)
        bad = np.flatnonzero(v != exp)
        assert bad.size == 0, f"pass {row}: words differ from {bad[:8]}, kw={kw}"


@pytest.mark.parametrize("k,max_bands", [(None, None), (1, None), (2, None), (4, None),
                                         (1, 3), (2, 2), (4, 1)])
def test_batched_vectors_bit_exact(gpu, k, max_bands):
    """A level's passes in one launch (or several waves when max_bands is small; passes
    larger than a wave go alone through final_vector): each vector equals the CPU kernel's.
    'N' only in a and 'Z' only in b get code 0 (no mask bit): they must match nothing."""
    rng = np.random.default_rng(22 + (k or 0) * 10 + (max_bands or 0))
    a = np.frombuffer(rand(rng, 70000), np.uint8).copy()
    b = np.frombuffer(rand(rng, 45000), np.uint8).copy()
    a[rng.integers(0, a.size, 500)] = ord("N")
    b[rng.integers(0, b.size, 500)] = ord("Z")
    before = gpu.STATS["launches"]
    same_vectors(gpu, a, b, pass_rows(rng, a.size, b.size, 48), k=k, max_bands=max_bands)
    assert gpu.STATS["launches"] > before


def test_batched_vectors_256_symbols(gpu):
    """257 codes: the masks need 64 KiB per block at K=1 (few blocks per SM, K=4 does not
    fit), and code 0 is unused."""
    rng = np.random.default_rng(256)
    a = rng.integers(0, 256, 30000).astype(np.uint8)
    b = rng.integers(0, 256, 20000).astype(np.uint8)
    a[:256] = np.arange(256)
    b[-256:] = np.arange(256)[::-1]
    same_vectors(gpu, a, b, pass_rows(rng, a.size, b.size, 20))
    same_vectors(gpu, a, b, pass_rows(rng, a.size, b.size, 20), max_bands=2)


def test_batched_vectors_disjoint_strings(gpu):
    """No shared symbol: sigma = 0, every code 0, every vector all ones."""
    rng = np.random.default_rng(7)
    a = np.frombuffer(rand(rng, 9000, 4, 65), np.uint8)
    b = np.frombuffer(rand(rng, 7000, 4, 97), np.uint8)
    same_vectors(gpu, a, b, pass_rows(rng, a.size, b.size, 12))


@pytest.mark.parametrize("na,nb", [(400_000, 300_000), (150_000, 500_000)])
def test_full_lcs_default_cutoffs_batched(gpu, na, nb):
    """The default path of lcs(backend="cuda"): levels batched from BATCH_MIN_CELLS up, a
    launch per wave rather than per pass, the CPU string exactly (a longer b: b is split)."""
    rng = np.random.default_rng(na + nb)
    a, b = rand(rng, na), rand(rng, nb)
    p0, l0 = gpu.STATS["passes"], gpu.STATS["launches"]
    s_gpu = lcs(a, b, backend="cuda")
    passes, launches = gpu.STATS["passes"] - p0, gpu.STATS["launches"] - l0
    assert passes > 50 and launches < passes / 4
    assert s_gpu == lcs(a, b, backend="cpu")
    assert len(s_gpu) == lcs_length(a, b, backend="cpu")


@pytest.mark.parametrize("sync", ["flag", "tagged"])
@pytest.mark.parametrize("k,warps,max_bands", [(1, 1, None), (2, 2, None), (3, 1, None),
                                               (3, 4, 3), (4, 4, None), (2, 1, 2),
                                               (1, 4, 5)])
def test_vectors_every_variant(gpu, sync, k, warps, max_bands):
    """Each ring hand-off, K = 3, several bands per block, and launches cut in several (the
    tagged ring zeroed between launches), on a text longer than the ring, forward and
    backward, bit for bit against the CPU."""
    rng = np.random.default_rng(k * 100 + warps * 10 + (max_bands or 0))
    p, t = rand(rng, 40_000), rand(rng, 9_000)
    for backward in (False, True):
        kw = dict(k=k, warps=warps, max_bands=max_bands, sync=sync)
        llcs = same_vector(gpu, p, t, backward, **kw)
    ref = rapidfuzz_llcs(p, t)
    assert ref is None or llcs == ref


@pytest.mark.parametrize("m,n", [(1, 1), (70, 1), (64 * 64, 31), (64 * 64 + 1, 32),
                                 (5000, 33), (20_000, 64 * 32 + 1)])
def test_vectors_short_texts(gpu, m, n):
    """Texts of one chunk or a few columns over one and several bands (the text ring starts
    with zero columns; lane 0's first carries come through lane 31), alphabets of 1 to 256
    symbols, forward and backward."""
    rng = np.random.default_rng(m + n)
    for sigma in (1, 4, 20, 256):
        p = rng.integers(0, sigma, m, dtype=np.uint8).tobytes()
        t = rng.integers(0, sigma, n, dtype=np.uint8).tobytes()
        for backward in (False, True):
            same_vector(gpu, p, t, backward, k=1)
            same_vector(gpu, p, t, backward, k=2, max_bands=2)


@pytest.mark.parametrize("staging", ["pinned", "pageable"])
def test_vectors_staging_and_alphabet_on_device(gpu, staging):
    """Both uploads; the alphabet found on the device: every byte value, a pattern byte
    absent from the text and text bytes absent from the pattern."""
    rng = np.random.default_rng(5)
    p = bytes(range(256)) + rng.integers(0, 256, 20_000, dtype=np.uint8).tobytes()
    t = rng.integers(0, 200, 30_000, dtype=np.uint8).tobytes() + b"\xff" * 5
    same_vector(gpu, p, t, False, staging=staging)
    same_vector(gpu, b"AC" * 3000, b"GT" * 2000 + b"CA", True, staging=staging)


def test_band_placement_reported(gpu):
    """``where`` gets one (smid << 8 | warp slot) per band of the launch."""
    rng = np.random.default_rng(9)
    p, t = rand(rng, 64 * 32 * 10), rand(rng, 5000)   # 320 words: 10 bands of K=1
    where = []
    same_vector(gpu, p, t, False, k=1, warps=2, where=where)
    assert len(where) == 10 and all(0 <= (x >> 8) < 1024 for x in where)


def test_plan_keeps_bands_per_sm_low(gpu):
    """K grows before an SM holds more than _BANDS_PER_SM[K] bands (132 SMs, 32 blocks an
    SM): DNA patterns of 3 M -> 1, 4 M and 10 M -> 2, 11 M and 30 M -> 4 (several launches
    only past 4 words a lane); an explicit k is kept."""
    class Dev:
        sms = 132

        def blocks_per_sm(self, k, smem, warps=1, sync=None):
            return 32

    def k_of(m, k=None):
        K, bands, _ = gpu._plan(Dev(), (m + 63) // 64, 5, k, None)
        assert bands <= int(132 * gpu._SAFETY) * 32
        return K

    assert [k_of(m) for m in (3_000_000, 4_000_000, 10_000_000, 11_000_000, 30_000_000)] \
        == [1, 2, 2, 4, 4]
    assert k_of(10_000_000, k=1) == 1


def test_bad_tuning_is_an_error(gpu):
    p = np.frombuffer(b"ACGT" * 100, np.uint8)
    for kw in ({"warps": 3}, {"sync": "fence"}, {"staging": "mapped"}):
        with pytest.raises(ValueError):
            gpu.final_vector(p, 0, len(p), p, 0, len(p), False, **kw)
