"""A pure-Python model of the GPU LLCS band loop (``run_band`` in ``_backends/cuda/lcs.cu``)
for both of its shuffle layouts (issue 22: ``LCS_ONESHFL``), bit for bit against the CPU
kernel. It runs here, without a GPU: it checks the layouts' bit packing, lane 0's feed and
the skew, not the compiled kernel (tests/test_cuda_lcs.py runs that on a device).

The model follows the kernel line by line: 32 lanes of ``K`` words each, lane ``l`` on text
column ``r - l`` at step ``r``, every lane's shuffle reading the values of the step before;
the top lane's carry words feed the band above (the ring, here a list).

- "two": lane ``l`` gets lane ``l-1``'s ``out`` (carry bit 31, code bits 0..30), lane 0 gets
  lane ``i``'s feed of the chunk (carry bit 31, code bits 0..30) by a second shuffle.
- "one": every lane publishes ``x = out | feed``, ``out`` = carry bit 31 and code bits
  16..30, ``feed`` = carry bit 15 and code bits 0..14; one shuffle from lane
  ``lane == 0 ? i : lane - 1``; lane 0 takes ``x << 16``, the others ``x``.
"""

from __future__ import annotations

import numpy as np
import pytest

from warpalign._backends.cpu import lcs as cpu

M32, M64 = (1 << 32) - 1, (1 << 64) - 1

#: layout: (where the code sits in in/out, bits it keeps, the carry's bit in a feed)
LAYOUTS = {"two": (0, 0x7FFFFFFF, 31), "one": (16, 0x7FFF0000, 15)}


def brev(x: int) -> int:
    return int(f"{x:032b}"[::-1], 2)


def step(v: list[int], mk: list[int], inp: int, keep: int) -> int:
    """Step<K>::run: the carry in is bit 31 of ``inp`` (``add.cc t, in, 0x80000000``)."""
    cf = inp >> 31
    for k in range(len(v)):
        s = v[k] + (v[k] & mk[k]) + cf
        cf = s >> 64
        v[k] = (s & M64) | (v[k] & ~mk[k] & M64)
    return (inp & keep) | (cf << 31)


def run_band(pcodes, tcodes, K: int, b: int, below: list[int] | None, shfl: str, trace=None):
    """Band ``b``'s 32*K words after the whole text and its top lane's carry words (one a
    chunk of 32 columns); ``below``: the band below's words (None for band 0). ``trace``,
    when a list, receives each lane's (carry in, code of the next column) per step."""
    shift, keep, feed_carry = LAYOUTS[shfl]
    m, n = len(pcodes), len(tcodes)
    nq = (n + 62) // 32
    sm = {}                                    # (code, k, lane) -> mask; code 0: none
    for lane in range(32):
        for k in range(K):
            p0 = ((b * 32 + lane) * K + k) * 64
            for j in range(max(0, min(64, m - p0))):
                c = int(pcodes[p0 + j])
                if c:
                    sm[c, k, lane] = sm.get((c, k, lane), 0) | (1 << j)

    def txt(j):
        return int(tcodes[j]) if j < n else 0

    def below_word(j):
        return below[j] if below is not None and j < nq else 0

    v = [[M64] * K for _ in range(32)]
    code0 = txt(0)
    code = [code0] + [0] * 31                  # the code whose masks the next step loads
    out = [code0 << shift] + [0] * 31
    tnext = [txt(lane + 1) for lane in range(32)]
    w_cur, w_next = below_word(0), below_word(1)
    acc, words = 0, []
    for q in range(nq):
        fw = ((brev(w_next) << 1) | (brev(w_cur) >> 31)) & M32
        w_cur, w_next = w_next, below_word(q + 2)
        feed = [tnext[lane] | ((fw >> lane) & 1) << feed_carry for lane in range(32)]
        tnext = [txt((q + 1) * 32 + lane + 1) for lane in range(32)]
        if shfl == "one":
            assert all(o & 0xFFFF == 0 and f >> 16 == 0 for o, f in zip(out, feed))
            x = [o | f for o, f in zip(out, feed)]
        for i in range(32):
            if shfl == "two":
                ins = [feed[i]] + out[:31]
            else:
                ins = [(x[i] << 16) & M32] + x[:31]
            for lane in range(32):
                inp = ins[lane]
                mk = [sm.get((code[lane], k, lane), 0) for k in range(K)]
                code_in = inp & keep
                code[lane] = code_in >> shift
                out[lane] = step(v[lane], mk, inp, keep)
                if shfl == "one":
                    x[lane] = code_in | feed[lane] | (out[lane] >> 31 << 31)
                if trace is not None:
                    trace.append((inp >> 31, code[lane]))
            acc = (acc * 2 + (out[31] >> 31)) & M32
        words.append(acc)
    return [w for lane in v for w in lane], words


def model_vector(p: bytes, t: bytes, K: int, shfl: str, cmap=None) -> np.ndarray:
    """The pattern's vector by the model, bands chained; codes as the driver makes them
    (the pattern's bytes numbered 1..sigma, other bytes 0) unless ``cmap`` is given."""
    pa, ta = np.frombuffer(p, np.uint8), np.frombuffer(t, np.uint8)
    if cmap is None:
        present = np.zeros(256, bool)
        present[pa] = True
        cmap = np.zeros(256, np.int64)
        cmap[present] = np.arange(1, int(present.sum()) + 1)
    pcodes, tcodes = cmap[pa], cmap[ta]
    W = (len(p) + 63) // 64
    V, below = [], None
    for b in range(-(-W // (32 * K))):
        words, below = run_band(pcodes, tcodes, K, b, below, shfl)
        V += words
    return np.array(V[:W], np.uint64)


def cpu_vector(p: bytes, t: bytes) -> np.ndarray:
    return cpu.final_vector(np.frombuffer(p, np.uint8), 0, len(p),
                            np.frombuffer(t, np.uint8), 0, len(t), False)


def rand(rng, n, sigma, base=0):
    return (rng.integers(0, sigma, n) + base).astype(np.uint8).tobytes()


@pytest.mark.parametrize("shfl", ["two", "one"])
@pytest.mark.parametrize("K,m,n,sigma", [(1, 1, 1, 4), (1, 64, 31, 4), (1, 2047, 33, 4),
                                         (1, 2049, 95, 4), (2, 4097, 70, 4),
                                         (1, 4500, 64, 200), (2, 300, 129, 200),
                                         (3, 6200, 40, 20), (4, 9000, 20, 256)])
def test_model_equals_cpu(shfl, K, m, n, sigma):
    """Both layouts give the CPU's vector: one band and several (carries through the top
    lanes' words), lengths around a band (2048 symbols at K=1) and a chunk (32 columns),
    DNA, 20 and 200 symbols, every byte."""
    rng = np.random.default_rng(m * 31 + n + sigma)
    p, t = rand(rng, m, sigma), rand(rng, n, sigma)
    assert np.array_equal(model_vector(p, t, K, shfl), cpu_vector(p, t))


def test_layouts_hand_over_the_same_carries_and_codes():
    """Every lane gets the same (carry in, next code) at every step in both layouts."""
    rng = np.random.default_rng(22)
    p, t = rand(rng, 2100, 200), rand(rng, 75, 200)
    pa, ta = np.frombuffer(p, np.uint8), np.frombuffer(t, np.uint8)
    traces = {}
    for shfl in LAYOUTS:
        below = None
        traces[shfl] = []
        for b in range(2):
            _, below = run_band(pa.astype(np.int64) + 1, ta.astype(np.int64) + 1, 1, b, below,
                                shfl, traces[shfl])
    assert traces["one"] == traces["two"]
    assert sum(c for c, _ in traces["one"]) > 100          # carries really move


def test_one_shuffle_code_bound():
    """Codes up to 0x7fff travel in 15 bits (lcs.cu's bound; shared memory keeps real
    alphabets under 1000 codes); 0x8000 would lose its top bit, and its matches."""
    rng = np.random.default_rng(15)
    p, t = rand(rng, 700, 3, 65), rand(rng, 120, 3, 65)
    exp = cpu_vector(p, t)
    cmap = np.zeros(256, np.int64)
    cmap[65:68] = (1, 0x4000, 0x7FFF)
    assert np.array_equal(model_vector(p, t, 1, "one", cmap), exp)
    cmap[65:68] = (1, 0x4000, 0x8000)
    assert np.array_equal(model_vector(p, t, 1, "two", cmap), exp)
    assert not np.array_equal(model_vector(p, t, 1, "one", cmap), exp)
