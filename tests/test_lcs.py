"""LCS (issue 5, paper 001): lengths against rapidfuzz and a tiny DP, the returned string
checked to be a common subsequence of that length, the bit-vector row derivation, the tie
rule's independence from cut-offs and threads, input types, errors and the CLI."""

from __future__ import annotations

import argparse
import gzip
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import LCSseq

from conftest import shared_data
from warpalign._backends.cpu import lcs as kernels
from warpalign.cli import lcs as lcs_command
from warpalign.cli.lcs import read_sequence
from warpalign.errors import AlphabetError, BackendUnavailable, InputError
from warpalign.lcs import Cutoffs, lcs, lcs_length


def ref_table(a: bytes, b: bytes) -> list[list[int]]:
    """The textbook DP table L[i][j] = LLCS(a[:i], b[:j]) (paper 001, rules R1-R3)."""
    L = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            L[i][j] = (L[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1]
                       else max(L[i][j - 1], L[i - 1][j]))
    return L


def ref_llcs(a: bytes, b: bytes) -> int:
    return ref_table(a, b)[len(a)][len(b)]


def is_subsequence(s: bytes, t: bytes) -> bool:
    it = iter(t)
    return all(c in it for c in s)


def check(a: bytes, b: bytes, *, dp: bool = True, **kw) -> bytes:
    """lcs/lcs_length of a, b agree with rapidfuzz (and the DP when small); returns the LCS."""
    expected = LCSseq.similarity(a, b)
    if dp:
        assert ref_llcs(a, b) == expected
    assert lcs_length(a, b, backend="cpu", **kw) == expected
    assert lcs_length(b, a, backend="cpu", **kw) == expected
    s = lcs(a, b, backend="cpu", **kw)
    assert isinstance(s, bytes)
    assert len(s) == expected
    assert is_subsequence(s, a) and is_subsequence(s, b)
    return s


def dna(rng, n: int) -> bytes:
    return bytes(np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, n)])


# --- the papers' examples --------------------------------------------------------------

def test_paper_fig1_length():
    # paper 001, §2.2 and Fig. 1: LLCS("BCAEDAC", "EABEDCBAAC") is five.
    assert lcs_length("BCAEDAC", "EABEDCBAAC") == 5
    assert len(lcs("BCAEDAC", "EABEDCBAAC")) == 5


def test_paper_fig1_last_row_from_bit_vector():
    # Fig. 1's last row (L[7][0..10]; the paper's text copy drops one of the 4s), obtained
    # from the final bit-vector by prefix counts of zero bits.
    a = np.frombuffer(b"BCAEDAC", np.uint8)
    b = np.frombuffer(b"EABEDCBAAC", np.uint8)
    v = kernels.final_vector(b, 0, 10, a, 0, 7, False)
    assert kernels.row_from_vector(v, 10).tolist() == [0, 1, 2, 2, 2, 3, 4, 4, 4, 4, 5]


def test_paper_lcs_example():
    # Paper 001 §2.1 states LCS("abcdefghij", "cflorux") = "cfl", but "l" is not among a..j:
    # the LCS is "cf" (rapidfuzz agrees). With the alphabet up to "l" it is "cfl".
    assert LCSseq.similarity("abcdefghij", "cflorux") == 2
    assert lcs("abcdefghij", "cflorux") == "cf"
    assert lcs("abcdefghijkl", "cflorux") == "cfl"


def test_tie_rule():
    # Paper 001 §2.1: "ad", "ae", "bd" and "be" are all LCSs of these; the documented rule
    # (smallest prefix of b at every prefix of a) gives "be".
    assert lcs("abcde", "baexd") == "be"
    assert lcs("100", "010") == "00"


# --- the bit-vector kernels ---------------------------------------------------------------

@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.binary(max_size=150), st.binary(max_size=150), st.integers(1, 256))
def test_forward_and_backward_rows(p, t, sigma):
    p = bytes(c % sigma for c in p)
    t = bytes(c % sigma for c in t)
    pa = np.frombuffer(p, np.uint8)
    ta = np.frombuffer(t, np.uint8)
    fwd = kernels.row_from_vector(kernels.final_vector(pa, 0, len(p), ta, 0, len(t), False), len(p))
    assert fwd.tolist() == [row[len(t)] for row in ref_table(p, t)]
    bwd = kernels.row_from_vector(kernels.final_vector(pa, 0, len(p), ta, 0, len(t), True), len(p))
    rev = ref_table(p[::-1], t[::-1])
    assert bwd.tolist() == [row[len(t)] for row in rev]


def test_sub_ranges_without_copies():
    rng = np.random.default_rng(5)
    p = rng.integers(0, 3, 300).astype(np.uint8)
    t = rng.integers(0, 3, 200).astype(np.uint8)
    for backward in (False, True):
        v = kernels.final_vector(p, 37, 230, t, 11, 150, backward)
        ps, ts = p[37:230].tobytes(), t[11:150].tobytes()
        if backward:
            ps, ts = ps[::-1], ts[::-1]
        assert kernels.row_from_vector(v, 193).tolist() == [r[len(ts)] for r in ref_table(ps, ts)]


def test_best_split():
    rng = np.random.default_rng(6)
    p = rng.integers(0, 4, 500).astype(np.uint8)
    t = rng.integers(0, 4, 300).astype(np.uint8)
    v1 = kernels.final_vector(p, 0, 500, t, 0, 140, False)
    v2 = kernels.final_vector(p, 0, 500, t, 140, 300, True)
    l1 = kernels.row_from_vector(v1, 500)
    l2 = kernels.row_from_vector(v2, 500)
    sums = [l1[k] + l2[500 - k] for k in range(501)]
    best = max(sums)
    assert best == LCSseq.similarity(p.tobytes(), t.tobytes())
    assert kernels.best_split(v1, v2, 500, False) == (sums.index(best), best)
    assert kernels.best_split(v1, v2, 500, True) == (500 - sums[::-1].index(best), best)


def _bits(rng, n, density):
    w = (n + 63) // 64
    bits = (rng.random(w * 64) < density).reshape(w, 64)
    return np.packbits(bits, axis=1, bitorder="little").view(np.uint64).ravel()


@pytest.mark.parametrize("density1,density2", [(0.5, 0.5), (0.0, 0.0), (1.0, 1.0), (0.9, 0.1),
                                               (0.1, 0.9), (0.35, 0.35)])
def test_best_split_blocks_and_ties(density1, density2):
    """The word-wise best_split (blocks skipped by their popcount bound) against the row
    sums for every k, both tie rules; flat vectors make every k a tie."""
    rng = np.random.default_rng(int(density1 * 10 + density2 * 100))
    for n in [1, 2, 63, 64, 65, 127, 128, 129, 500, 4097] + rng.integers(0, 3000, 20).tolist():
        v1, v2 = _bits(rng, n, density1), _bits(rng, n, density2)
        l1, l2 = kernels.row_from_vector(v1, n), kernels.row_from_vector(v2, n)
        sums = [int(l1[k] + l2[n - k]) for k in range(n + 1)]
        best = max(sums)
        assert kernels.best_split(v1, v2, n, False) == (sums.index(best), best)
        assert kernels.best_split(v1, v2, n, True) == (n - sums[::-1].index(best), best)


# --- exactness on families of inputs -------------------------------------------------------

@settings(max_examples=80, deadline=None, derandomize=True)
@given(st.integers(0, 300), st.sampled_from([1, 2, 4, 20, 256]), st.integers(0, 2**32 - 1))
def test_random_equal_lengths(n, sigma, seed):
    rng = np.random.default_rng(seed)
    a = bytes(rng.integers(0, sigma, n).astype(np.uint8))
    b = bytes(rng.integers(0, sigma, n).astype(np.uint8))
    check(a, b)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.binary(max_size=200), st.binary(max_size=200))
def test_random_any_bytes(a, b):
    check(a, b)


@pytest.mark.parametrize("na", [1, 63, 64, 65, 127, 128, 129])
@pytest.mark.parametrize("nb", [1, 63, 64, 65, 127, 128, 129])
def test_word_boundaries(na, nb):
    rng = np.random.default_rng(na * 1000 + nb)
    check(dna(rng, na), dna(rng, nb))


def test_stripe_boundaries():
    # patterns past one stripe of STRIPE_WORDS words (carries between stripes), odd texts
    rng = np.random.default_rng(7)
    w = kernels.STRIPE_WORDS * 64
    for n in (w - 1, w, w + 1, 2 * w + 65):
        a, b = dna(rng, n), dna(rng, 777)
        check(a, b, dp=False)
        check(b, a, dp=False)


@pytest.mark.parametrize("a, b", [
    (b"ACGT" * 100, b"ACGT" * 80),                  # periodic, same period
    (b"AAC" * 150, b"AC" * 190),                    # periodic, different periods
    (b"AB" * 300, b"BA" * 300),
    (b"Q" * 500, b"Q" * 321),                       # all equal
    (bytes(range(256)) * 2, bytes(range(255, -1, -1)) * 2),   # all 256 byte values
    (bytes(range(256)), bytes(range(256))),
])
def test_structured(a, b):
    check(a, b)


def test_identical():
    rng = np.random.default_rng(8)
    a = dna(rng, 3000)
    assert lcs(a, a) == a
    assert lcs_length(a, a) == 3000


def test_disjoint_alphabets():
    rng = np.random.default_rng(9)
    a = bytes(rng.integers(0, 128, 2000).astype(np.uint8))
    b = bytes(rng.integers(128, 256, 1500).astype(np.uint8))
    assert lcs_length(a, b) == 0
    assert lcs(a, b) == b""


@pytest.mark.parametrize("a, b", [("", ""), ("", "ACGT"), ("ACGT", ""), ("A", "A"), ("A", "C")])
def test_empty_and_single(a, b):
    expected = LCSseq.similarity(a, b)
    assert lcs_length(a, b) == expected
    assert len(lcs(a, b)) == expected


def test_answer_independent_of_cutoffs_and_threads():
    rng = np.random.default_rng(10)
    cases = [(dna(rng, 700), dna(rng, 650)), (b"AB" * 200, b"BA" * 210),
             (bytes(rng.integers(0, 3, 1200).astype(np.uint8)),
              bytes(rng.integers(0, 3, 90).astype(np.uint8)))]
    expected = [lcs(a, b, threads=1) for a, b in cases]
    for tiny, small in [(0, 0), (0, 1 << 30), (1 << 30, 0), (64, 8)]:
        cutoffs = Cutoffs(tiny_cells=tiny, small_words=small)
        for (a, b), e in zip(cases, expected):
            assert lcs(a, b, threads=1, cutoffs=cutoffs) == e
            assert lcs(a, b, threads=3, cutoffs=cutoffs) == e
            assert lcs_length(a, b, cutoffs=cutoffs) == len(e)


def test_large_random_against_rapidfuzz():
    rng = np.random.default_rng(11)
    a, b = dna(rng, 60_000), dna(rng, 45_000)
    check(a, b, dp=False)
    check(a, b, dp=False, threads=2)


def _ecoli(name: str) -> bytes:
    from Bio.SeqIO.FastaIO import SimpleFastaParser

    with gzip.open(shared_data(f"dna/{name}.fasta.gz"), "rt") as fh:
        return next(SimpleFastaParser(fh))[1].encode("ascii")


def test_ecoli_slices():
    a = _ecoli("ecoli_K12_W3110")[1_000_000:1_030_000]
    b = _ecoli("ecoli_EC590")[1_000_000:1_025_000]
    check(a, b, dp=False)


# --- inputs, outputs and errors ----------------------------------------------------------

def test_types_follow_a():
    assert lcs("xAyBz", "AB") == "AB"
    assert lcs(b"xAyBz", "AB") == b"AB"
    assert lcs(bytearray(b"xAyBz"), b"AB") == b"AB"
    arr = lcs(np.frombuffer(b"xAyBz", np.uint8), b"AB")
    assert isinstance(arr, np.ndarray) and arr.dtype == np.uint8 and arr.tobytes() == b"AB"
    assert lcs("ÿéA", "éAÿ") == "éA"   # latin-1: one byte per code point
    assert lcs_length(np.frombuffer(b"ACGT" * 3, np.uint8)[::2], "AGAGAG") == 6


def test_bad_inputs():
    with pytest.raises(AlphabetError, match="position 1"):
        lcs("a€b", "ab")
    with pytest.raises(TypeError, match="uint8"):
        lcs_length(np.zeros(3, np.int32), b"a")
    with pytest.raises(ValueError, match="invalid backend"):
        lcs("a", "b", backend="gpu")
    with pytest.raises(ValueError, match="invalid threads"):
        lcs("a", "b", threads=0)


def test_cuda_backend_not_yet_there():
    try:
        import warpalign._backends.cuda.lcs  # noqa: F401
    except ImportError:
        pass
    except BackendUnavailable:
        pass
    else:
        pytest.skip("the CUDA LCS kernel exists")
    with pytest.raises(BackendUnavailable, match="CUDA LCS"):
        lcs("ab", "ba", backend="cuda")
    assert lcs("ab", "ba", backend="auto") == "b"


# --- CLI ---------------------------------------------------------------------------------

def _cli(argv):
    parser = argparse.ArgumentParser(prog="warpalign")
    lcs_command.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return args.run(args)


def test_cli_literals_and_output(tmp_path, capsys):
    out = tmp_path / "lcs.txt"
    assert _cli(["lcs", "--literal", "BCAEDAC", "EABEDCBAAC", "-o", str(out)]) == 0
    assert capsys.readouterr().out == "5\n"
    assert out.read_bytes() == lcs(b"BCAEDAC", b"EABEDCBAAC")
    with pytest.raises(InputError, match="BCAEDAC: no such file"):
        _cli(["lcs", "BCAEDAC", "EABEDCBAAC"])   # without --literal the arguments are files


def test_cli_files(tmp_path, capsys):
    fa = tmp_path / "a.fa.gz"
    with gzip.open(fa, "wt") as fh:
        fh.write(">one first\nACGT\nACGT\n>two\nTTTT\n")
    raw = tmp_path / "b.txt"
    raw.write_bytes(b"AGGT")
    assert read_sequence(str(fa)) == b"ACGTACGT"
    assert read_sequence(str(raw)) == b"AGGT"
    assert _cli(["lcs", str(fa), str(raw)]) == 0
    assert capsys.readouterr().out == "4\n"


def test_cli_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_sequence(str(tmp_path / "missing.fa"))
    empty = tmp_path / "e.fa"
    empty.write_bytes(b">only\n")
    with pytest.raises(InputError, match="empty"):
        read_sequence(str(empty))


# --- memory (slow) -----------------------------------------------------------------------

@pytest.mark.slow
def test_memory_linear_2M_by_1M():
    # Peak RSS of a fresh process running the full LCS of 2 M × 1 M random DNA. Inputs and
    # the result mask are 4 MB; the O(m·n) bit matrix would be 250 GB.
    code = textwrap.dedent("""
        import time, numpy as np
        from warpalign.lcs import lcs, lcs_length
        def peak():   # this process's own peak RSS in kB (VmHWM, per address space: a
            with open("/proc/self/status") as fh:   # forked child's ru_maxrss starts
                return int(fh.read().split("VmHWM:")[1].split()[0])   # from its parent's)
        rng = np.random.default_rng(12)
        acgt = np.frombuffer(b"ACGT", np.uint8)
        # compile before measuring, and on a GPU host start CUDA and load its kernels (a
        # 20 k x 20 k LCS reaches the GPU's batched levels), which hold ~130 MiB of RSS
        lcs(acgt[rng.integers(0, 4, 20_000)].tobytes(), acgt[rng.integers(0, 4, 20_000)].tobytes())
        base = peak()
        a = acgt[rng.integers(0, 4, 2_000_000)].tobytes()
        b = acgt[rng.integers(0, 4, 1_000_000)].tobytes()
        t = time.perf_counter()
        s = lcs(a, b)
        dt = time.perf_counter() - t
        print(len(s), base, peak(), dt)
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    length, base_kb, peak_kb, seconds = out.stdout.split()
    assert int(length) > 600_000
    print(f"2M x 1M LCS: {float(seconds):.1f} s, peak RSS {int(peak_kb) / 1024:.0f} MiB "
          f"(after import and compile {int(base_kb) / 1024:.0f} MiB)")
    assert int(peak_kb) - int(base_kb) < 100 * 1024
