"""Tests of the CPU traceback (warpalign.traceback.align_codes, mode="full")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference import dp
from warpalign.results import Alignment
from warpalign.scoring import Scoring
from warpalign.errors import TracebackError
from warpalign.traceback import align_codes

ALGORITHMS = ("local", "global", "semiglobal")
SPROT = Path("/work/shared/data/protein/uniprot_sprot196.fasta")


def rescore(alignment: Alignment, q: np.ndarray, t: np.ndarray, scoring: Scoring) -> int:
    """Score of an alignment recomputed from its CIGAR and aligned strings.

    Also checks that the CIGAR consumes exactly q[query_start:query_end] and
    t[target_start:target_end] and that the aligned strings spell the same columns.
    """
    a = alignment
    qs, qe, ts, te = a.query_start, a.query_end, a.target_start, a.target_end
    assert 0 <= qs <= qe <= len(q) and 0 <= ts <= te <= len(t)
    qseg = scoring.alphabet.decode(q[qs:qe])
    tseg = scoring.alphabet.decode(t[ts:te])
    assert len(a.query_aligned) == len(a.target_aligned) == a.length
    assert a.query_aligned.replace("-", "") == qseg
    assert a.target_aligned.replace("-", "") == tseg
    score, i, j, col = 0, qs, ts, 0
    for count, op in a.operations():
        assert count > 0
        if op == "M":
            for _ in range(count):
                assert a.query_aligned[col] != "-" and a.target_aligned[col] != "-"
                score += int(scoring.matrix[q[i], t[j]])
                i, j, col = i + 1, j + 1, col + 1
        else:
            score -= scoring.gap_cost(count)
            for _ in range(count):
                if op == "I":
                    assert a.target_aligned[col] == "-"
                    i += 1
                else:
                    assert a.query_aligned[col] == "-"
                    j += 1
                col += 1
    assert (i, j) == (qe, te), "the CIGAR does not consume the aligned segments"
    ops = a.operations()
    assert all(x[1] != y[1] for x, y in pairwise(ops)), "CIGAR runs are not merged"
    return score


def check(q, t, scoring, algorithm, **kw) -> Alignment:
    """align_codes with every invariant that holds for any input."""
    a = align_codes(q, t, scoring, algorithm, **kw)
    assert a.algorithm == algorithm
    assert rescore(a, q, t, scoring) == a.score
    if algorithm == "global":
        assert (a.query_start, a.query_end, a.target_start, a.target_end) == (0, len(q), 0, len(t))
    if algorithm == "semiglobal":
        assert (a.query_start, a.query_end) == (0, len(q))
    if algorithm == "local" and a.score == 0:
        assert (a.query_start, a.query_end, a.target_start, a.target_end, a.cigar) == (0, 0, 0, 0, "")
    return a


def ref(q, t, scoring, algorithm):
    return dp(q.tolist(), t.tolist(), scoring.matrix.tolist(), scoring.gap_open,
              scoring.gap_extend, algorithm)


def brute_start(q, t, scoring, algorithm, score, qe, te):
    """The start the tie rule asks for, by trying every segment (tiny inputs only).

    Among starts whose segment's global score equals the score: the smallest target
    extent te - ts, then the smallest query extent qe - qs.
    """
    qstarts = range(qe, -1, -1) if algorithm == "local" else [0]
    for ts in range(te, -1, -1):
        for qs in qstarts:
            if ref(q[qs:qe], t[ts:te], scoring, "global")[0] == score:
                return qs, ts
    raise AssertionError("no start reaches the score")


# --------------------------------------------------------------------------- strategies

DNA_S = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
PROT_S = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


@st.composite
def scorings(draw):
    if draw(st.booleans()):
        ge = draw(st.integers(0, 4))
        go = draw(st.integers(ge, ge + 8))
        return Scoring(match=draw(st.integers(1, 6)), mismatch=draw(st.integers(-6, 0)),
                       gap_open=go, gap_extend=ge)
    ge = draw(st.integers(1, 3))
    return Scoring(matrix=draw(st.sampled_from(["BLOSUM62", "BLOSUM50", "PAM30"])),
                   gap_open=draw(st.integers(ge, 12)), gap_extend=ge)


@st.composite
def cases(draw, max_len=14):
    s = draw(scorings())
    k = 4 if s.alphabet.name == "dna" else 20
    q = np.array(draw(st.lists(st.integers(0, k - 1), max_size=max_len)), np.uint8)
    if draw(st.booleans()) and len(q):   # a related target: q with some edits
        t = q.copy()
        for _ in range(draw(st.integers(0, 4))):
            pos = draw(st.integers(0, len(t)))
            what = draw(st.sampled_from(["sub", "ins", "del"]))
            if what == "ins":
                t = np.insert(t, pos, draw(st.integers(0, k - 1))).astype(np.uint8)
            elif len(t) and pos < len(t):
                if what == "del":
                    t = np.delete(t, pos)
                else:
                    t[pos] = draw(st.integers(0, k - 1))
    else:
        t = np.array(draw(st.lists(st.integers(0, k - 1), max_size=max_len)), np.uint8)
    return q, t, s


# --------------------------------------------------------------------------- against the oracle


@settings(max_examples=250, deadline=None, derandomize=True)
@given(cases(), st.sampled_from(ALGORITHMS))
def test_matches_reference(case, algorithm):
    q, t, s = case
    a = check(q, t, s, algorithm)
    score, qe, te = ref(q, t, s, algorithm)
    assert (a.score, a.query_end, a.target_end) == (score, qe, te) or (
        algorithm == "local" and score == 0 and a.score == 0)


@settings(max_examples=120, deadline=None, derandomize=True)
@given(cases(max_len=9), st.sampled_from(["local", "semiglobal"]))
def test_start_is_the_shortest_optimal(case, algorithm):
    q, t, s = case
    a = check(q, t, s, algorithm)
    if algorithm == "local" and a.score == 0:
        return
    assert (a.query_start, a.target_start) == brute_start(q, t, s, algorithm, a.score,
                                                          a.query_end, a.target_end)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 3), max_size=8), st.lists(st.integers(0, 3), max_size=8),
       st.sampled_from([(0, 0), (1, 0), (2, 1)]), st.sampled_from(["local", "semiglobal"]))
def test_start_tie_rule_with_cheap_gaps(q, t, gaps, algorithm):
    # Free or cheap gaps make many starts reach the same score: the tie rule must pick
    # the smallest target extent, then the smallest query extent.
    s = Scoring(match=1, mismatch=-1, gap_open=gaps[0], gap_extend=gaps[1])
    q, t = np.array(q, np.uint8), np.array(t, np.uint8)
    a = check(q, t, s, algorithm)
    if algorithm == "local" and a.score == 0:
        return
    assert (a.query_start, a.target_start) == brute_start(q, t, s, algorithm, a.score,
                                                          a.query_end, a.target_end)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(cases(max_len=40), st.sampled_from(ALGORITHMS), st.sampled_from([1, 6, 30, 200]))
def test_linear_space_path_equals_full_matrix_path(case, algorithm, limit):
    q, t, s = case
    full = check(q, t, s, algorithm)
    linear = check(q, t, s, algorithm, max_full_cells=limit)
    assert linear.score == full.score
    assert (linear.query_start, linear.query_end, linear.target_start, linear.target_end) == (
        full.query_start, full.query_end, full.target_start, full.target_end)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("gaps", [(5, 2), (3, 3), (12, 1), (0, 0)])
def test_myers_miller_on_related_sequences(algorithm, gaps):
    rng = np.random.default_rng(7)
    s = Scoring(match=2, mismatch=-3, gap_open=gaps[0], gap_extend=gaps[1])
    q, t = related(rng, 1500)
    score, qe, te = ref_fast(q, t, s, algorithm)
    full = check(q, t, s, algorithm)
    for limit in (1, 64, 4096):
        linear = check(q, t, s, algorithm, max_full_cells=limit)
        assert (linear.score, linear.query_end, linear.target_end) == (score, qe, te)
        assert (linear.query_start, linear.target_start) == (full.query_start, full.target_start)


def ref_fast(q, t, s, algorithm):
    from warpalign._backends.cpu.pairwise import score_end_py
    return score_end_py(q, t, s.matrix, s.gap_open, s.gap_extend, algorithm)


def related(rng, n, sub=0.08, indel=0.02):
    """A random DNA sequence and a mutated copy (substitutions, short indels)."""
    a = rng.integers(0, 4, n).astype(np.uint8)
    out, i = [], 0
    while i < n:
        r = rng.random()
        if r < sub:
            out.append(rng.integers(0, 4))
            i += 1
        elif r < sub + indel / 2:
            i += int(rng.integers(1, 10))
        elif r < sub + indel:
            out.extend(rng.integers(0, 4, int(rng.integers(1, 10))).tolist())
        else:
            out.append(a[i])
            i += 1
    return a, np.array(out, np.uint8)


# --------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("q,t", [("", ""), ("", "ACGT"), ("ACGT", ""), ("A", "A"), ("A", "C"),
                                 ("A", "ACGTA"), ("GATTACA", "C"), ("ACGTACGT", "ACGTACGT")])
@pytest.mark.parametrize("limit", [None, 1])
def test_edge_cases(algorithm, q, t, limit):
    for s in (DNA_S, Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)):
        qc, tc = s.encode(q), s.encode(t)
        a = check(qc, tc, s, algorithm, max_full_cells=limit)
        score, qe, te = ref(qc, tc, s, algorithm)
        assert a.score == score
        if not (algorithm == "local" and score == 0):
            assert (a.query_end, a.target_end) == (qe, te)


def test_empty_and_identical():
    s = DNA_S
    a = align_codes(s.encode(""), s.encode("ACGT"), s, "local")
    assert (a.score, a.cigar, a.query_aligned, a.target_aligned) == (0, "", "", "")
    a = align_codes(s.encode(""), s.encode("ACGT"), s, "global")
    assert (a.score, a.cigar, a.target_aligned, a.query_aligned) == (-4, "4D", "ACGT", "----")
    a = align_codes(s.encode("ACG"), s.encode(""), s, "semiglobal")
    assert (a.score, a.cigar, a.target_start, a.target_end) == (-3, "3I", 0, 0)
    seq = PROT_S.encode("MKVLAAGIVGLLLAWQHSTA")
    for algorithm in ALGORITHMS:
        a = check(seq, seq, PROT_S, algorithm)
        assert a.cigar == f"{len(seq)}M" and a.identity == 1.0
        assert a.query_aligned == a.target_aligned == "MKVLAAGIVGLLLAWQHSTA"


def test_local_score_zero_is_empty():
    s = Scoring(match=1, mismatch=-1, gap_open=2, gap_extend=1)
    a = align_codes(s.encode("AAAA"), s.encode("CCCC"), s, "local")
    assert a == Alignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0,
                          cigar="", query_aligned="", target_aligned="", algorithm="local")


def test_affine_gap_is_one_gap():
    # One long gap (open 10 + 4 * extend 1 = 14) beats five short ones; a 3-state
    # traceback that forgets its state would split it.
    s = Scoring(match=5, mismatch=-4, gap_open=10, gap_extend=1)
    q, t = s.encode("ACGTACGTAAAAACCCGGGTTT"), s.encode("ACGTACGTCCCGGGTTT")
    for limit in (None, 1, 20):
        a = check(q, t, s, "global", max_full_cells=limit)
        assert a.score == 17 * 5 - 14
        assert a.gap_opens == 1


def test_gap_open_equals_gap_extend():
    rng = np.random.default_rng(3)
    s = Scoring(match=1, mismatch=-1, gap_open=1, gap_extend=1)
    for _ in range(20):
        q, t = related(rng, int(rng.integers(1, 60)), sub=0.2, indel=0.1)
        for algorithm in ALGORITHMS:
            a = check(q, t, s, algorithm, max_full_cells=int(rng.integers(1, 100)))
            assert (a.score, a.query_end, a.target_end) == ref(q, t, s, algorithm) or a.score == 0


def test_invalid_arguments():
    with pytest.raises(ValueError, match="invalid algorithm"):
        align_codes(DNA_S.encode("A"), DNA_S.encode("A"), DNA_S, "glocal")
    with pytest.raises(ValueError, match="outside"):
        align_codes(np.array([0, 99], np.uint8), DNA_S.encode("A"), DNA_S)


# --------------------------------------------------------------------------- pinned numbers


def test_paper_004_fig3():
    # Paper 004, Fig. 3: ATGCTCATAGA vs ATGCCTCACTGA, match 5 / mismatch -3 / open 8 / extend 1.
    s = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
    q, t = s.encode("ATGCTCATAGA"), s.encode("ATGCCTCACTGA")
    for limit in (None, 1):
        assert check(q, t, s, "local", max_full_cells=limit).score == 31


def test_paper_000_table2():
    # Paper 000, Table II: TACTG vs GAACTGA, match 2 / mismatch -1 / gap 1 (linear).
    a = check(DNA_S.encode("TACTG"), DNA_S.encode("GAACTGA"), DNA_S, "local")
    assert a.score == 8
    assert (a.query_start, a.query_end, a.target_start, a.target_end, a.cigar) == (1, 5, 2, 6, "4M")


def test_paper_002_fig1():
    # Paper 002, Fig. 1: CTGTAC vs TGTCGAT, same scoring as paper 000.
    assert check(DNA_S.encode("CTGTAC"), DNA_S.encode("TGTCGAT"), DNA_S, "local").score == 7


# --------------------------------------------------------------------------- Biopython


def sprot_records(limit=40):
    from Bio import SeqIO
    ok = set("ARNDCQEGHILKMFPSTWYV")
    out = []
    for rec in SeqIO.parse(str(SPROT), "fasta"):
        seq = str(rec.seq)
        if set(seq) <= ok and len(seq) <= 600:
            out.append(seq)
        if len(out) == limit:
            break
    return out


@pytest.mark.skipif(not SPROT.exists(), reason="needs /work/shared/data")
@pytest.mark.parametrize("matrix,go,ge", [("BLOSUM62", 11, 1), ("BLOSUM50", 10, 2)])
def test_biopython_scores(matrix, go, ge):
    from Bio.Align import PairwiseAligner, substitution_matrices
    seqs = sprot_records()
    rng = np.random.default_rng(11)
    s = Scoring(matrix=matrix, gap_open=go, gap_extend=ge)
    aligners = {}
    for mode in ("local", "global"):
        al = PairwiseAligner(mode=mode, substitution_matrix=substitution_matrices.load(matrix),
                             open_gap_score=-go, extend_gap_score=-ge)
        aligners[mode] = al
    for k in range(8):
        x, y = (seqs[i] for i in rng.choice(len(seqs), 2, replace=False))
        qc, tc = s.encode(x), s.encode(y)
        for mode, al in aligners.items():
            expected = int(al.score(x, y))
            a = check(qc, tc, s, mode, max_full_cells=None if k % 2 else 5000)
            assert a.score == expected, (mode, x, y)


# --------------------------------------------------------------------------- long sequences

LONG_SCRIPT = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    sys.path.insert(0, {tests!r})
    from test_traceback import related
    from warpalign.scoring import Scoring
    from warpalign.traceback import align_codes
    n, limit = {n}, {limit}
    q, t = related(np.random.default_rng(5), n, sub=0.08, indel=0.02)
    s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    align_codes(q[:64], t[:64], s, "local", max_full_cells=16)   # compile
    out = {{"n": [len(q), len(t)]}}
    for algorithm in ("global", "local"):
        t0 = time.perf_counter()
        a = align_codes(q, t, s, algorithm, max_full_cells=limit)
        out[algorithm] = dict(seconds=time.perf_counter() - t0, score=a.score,
                              coords=[a.query_start, a.query_end, a.target_start, a.target_end],
                              length=a.length)
    # this process's own peak (VmHWM, per address space): ru_maxrss would start from the
    # peak of the test process that forked it
    with open("/proc/self/status") as fh:
        out["peak_rss_mib"] = int(fh.read().split("VmHWM:")[1].split()[0]) / 1024
    print(json.dumps(out))
""")


def run_long(n, limit):
    """Align two related n-bp sequences globally and locally in a fresh process."""
    code = LONG_SCRIPT.format(tests=str(Path(__file__).parent), n=n, limit=limit)
    env = dict(os.environ)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_linear_space_quick():
    # 3 kbp with a 4096-cell full-matrix limit: deep Myers–Miller recursion, checked
    # against the scalar DP's score and ends and the full-matrix path's coordinates.
    rng = np.random.default_rng(9)
    s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    q, t = related(rng, 3000)
    for algorithm in ALGORITHMS:
        linear = check(q, t, s, algorithm, max_full_cells=4096)
        full = check(q, t, s, algorithm)
        assert (linear.score, linear.query_end, linear.target_end) == ref_fast(q, t, s, algorithm)
        assert (linear.query_start, linear.target_start) == (full.query_start, full.target_start)


@pytest.mark.slow
def test_100kbp_in_linear_space():
    # Two related 100 kbp DNA sequences, globally and locally, under 1 GiB peak RSS.
    out = run_long(100_000, "None")
    print(json.dumps(out))
    assert out["peak_rss_mib"] < 1024
    assert out["global"]["coords"] == [0, out["n"][0], 0, out["n"][1]]
    assert out["local"]["score"] >= out["global"]["score"]


def test_align_many_and_align_pairs_equal_one_at_a_time():
    """The batched job (CPU engine, several threads) gives exactly align_codes' alignments,
    for every algorithm, on random, related and tie-rich pairs."""
    from warpalign.traceback import align_many, align_pairs
    rng = np.random.default_rng(21)
    s = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
    pairs = []
    for k in range(60):
        m, n = int(rng.integers(1, 60)), int(rng.integers(1, 120))
        if k % 3 == 0:
            q, t = np.zeros(m, np.uint8), np.zeros(n, np.uint8)
        elif k % 3 == 1:
            q = rng.integers(0, 4, m).astype(np.uint8)
            t = np.concatenate([rng.integers(0, 4, n).astype(np.uint8), q])
        else:
            q, t = rng.integers(0, 4, m).astype(np.uint8), rng.integers(0, 4, n).astype(np.uint8)
        pairs.append((q, t))
    for algorithm in ("local", "semiglobal", "global"):
        want = [align_codes(q, t, s, algorithm) for q, t in pairs]
        jobs = [(q, t, a.score, a.query_end, a.target_end) for (q, t), a in zip(pairs, want)]
        assert align_many(jobs, s, algorithm, threads=2) == want
        assert align_pairs(pairs, s, algorithm, threads=1) == want
    bad = [(pairs[1][0], pairs[1][1], want[1].score + 1, want[1].query_end, want[1].target_end)]
    with pytest.raises(TracebackError):
        align_many(bad, s, "global")


@pytest.mark.parametrize("count", [0, 1, 2, 7, 16, 17, 130])
@pytest.mark.parametrize("threads", [None, 1, 2, 3, 8])
def test_cpu_engine_runs_keep_the_items_order(count, threads):
    """The CPU traceback engine's threads take runs of consecutive jobs: every item once,
    in order, whatever the thread and item counts; an error in any run reaches the
    caller."""
    from warpalign._backends.cpu.traceback import CpuTraceback
    seen = []
    got = CpuTraceback._map(lambda x: seen.append(x) or x * x, list(range(count)), threads)
    assert got == [x * x for x in range(count)] and sorted(seen) == list(range(count))

    def boom(x):
        if x == count - 1:
            raise ValueError(f"job {x}")
        return x
    if count:
        with pytest.raises(ValueError, match=f"job {count - 1}"):
            CpuTraceback._map(boom, list(range(count)), threads)


# ------------------------------------------------- tb_align's host side, emulated
# GpuTraceback.align_local_flat (cuda/traceback.py: the plan's totals and offsets, scratch,
# direction and slot buffers, the read backs, the packing of each path into place, where
# each rendered path starts) on a stand-in device: NumPy arrays, and tb_plan / tb_align /
# tb_pack done by the host's and the CPU engine's functions with the kernels' argument
# layout, each job's buffers checked to fit what the host sized. The kernels themselves
# run in tests/test_cuda_traceback.py.

class _Device(np.ndarray):
    """A NumPy array standing in for a device array (``set``: a copy up; ``get``: down)."""

    def set(self, arr, stream=None):
        self[...] = arr

    def get(self, stream=None, out=None, blocking=True):
        if out is None:
            return np.array(self)
        out[...] = self
        return out


class _StandInCupy:
    """Enough of CuPy for GpuTraceback on the host: NumPy arrays as device arrays."""

    uint8, int32, int64, uint64, ndarray = np.uint8, np.int32, np.int64, np.uint64, np.ndarray
    float64 = np.float64
    zeros, asarray = staticmethod(np.zeros), staticmethod(np.asarray)
    cumsum, ascontiguousarray = staticmethod(np.cumsum), staticmethod(np.ascontiguousarray)

    @staticmethod
    def concatenate(arrays):
        return np.concatenate(arrays).view(_Device)

    @staticmethod
    def empty(*args, **kwargs):
        return np.empty(*args, **kwargs).view(_Device)

    def __init__(self):
        class Device:
            id = 0

        class Stream:
            def __init__(self, non_blocking=False, priority=0):
                pass

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def synchronize(self):
                pass

            def wait_event(self, event):
                assert event == "queued"           # the caller's pass, recorded

        self.cuda = type("cuda", (), {"Device": Device, "Stream": Stream,
                                      "alloc_pinned_memory": staticmethod(bytearray)})

    @staticmethod
    def asnumpy(a, stream=None):
        return np.array(a)


def _emulated_tb_plan(scoring):
    from warpalign._backends.cuda.traceback import _dir_bytes
    from warpalign.traceback import _segment_starts

    def run(grid, block, args):
        (ends, tpos, jobs, top, go, ge, bounded, most, cells, qlen, toff, tlen, target, sizes,
         refused) = args
        jobs = int(jobs)
        assert grid[0] * block[0] >= jobs and ends.size == 3 * jobs    # by rows
        ends = ends.reshape(jobs, 3)
        assert (int(top), int(go), int(ge), bool(bounded)) == (
            max(int(scoring.matrix.max()), 0), scoring.gap_open, scoring.gap_extend,
            scoring.gap_extend != 0)
        score, qe, te = ends.T
        on = score > 0
        lo = np.zeros(jobs, np.int64)
        lo[on] = _segment_starts(qe[on], te[on], score[on], scoring)
        seg = np.where(on, te - lo, 0)
        m = np.where(on, qe, 0)
        qlen[:], toff[:], tlen[:], target[:] = m, tpos + lo, seg, np.where(on, score, 0)
        sizes[0] = np.where(on, _dir_bytes(m, seg), 0)
        sizes[1] = np.where(on, 2 * (seg + 1), 0)
        sizes[2] = m + seg
        refused[0] = int((on & ((m == 0) | (seg == 0) | (m + seg > int(most))
                                | ((m + 1) * (seg + 1) > int(cells)))).sum())
    return run


def _emulated_tb_align(grid, block, args):
    from warpalign._backends.cpu.traceback import anchored_start, full_traceback
    from warpalign._backends.cuda.traceback import _dir_bytes
    (qbuf, qoff, qlen, tbuf, toff, tlen, target, roff, rows, doff, dirs, slot, slots, matrix,
     k, go, ge, jobs, out) = args
    jobs, flat = int(jobs), out.reshape(-1)
    assert block[0] % 32 == 0 and grid[0] * block[0] >= 32 * jobs
    table = matrix.reshape(int(k), int(k))
    for job in range(jobs):
        m, n = int(qlen[job]), int(tlen[job])
        di = dj = score = length = 0
        if int(target[job]) > 0:
            assert int(roff[job]) + 2 * (n + 1) <= rows.size
            assert int(doff[job]) + _dir_bytes(m, n) <= dirs.size
            assert int(slot[job]) + m + n <= slots.size
            q = qbuf[int(qoff[job]):int(qoff[job]) + m]
            t = tbuf[int(toff[job]):int(toff[job]) + n]
            di, dj = anchored_start(q, m, t, n, table, int(go), int(ge), int(target[job]),
                                    False)
        if di > 0 and dj > 0:
            score, ops = full_traceback(q, m - di, di, t, n - dj, dj, table, int(go), int(ge),
                                        False, False)
            length = len(ops)
            slots[int(slot[job]):int(slot[job]) + length] = ops[::-1]   # written backwards
        for row, value in enumerate((di, dj, score, length)):
            flat[row * jobs + job] = value


def _emulated_tb_pack(grid, block, args):
    ops, slot, lengths, at, jobs, out = args
    for job in range(int(jobs)):
        a, n = int(slot[job]), int(lengths[job])
        out[int(at[job]):int(at[job]) + n] = ops[a:a + n][::-1]


def test_gpu_local_one_pass_host_side_on_an_emulated_device(monkeypatch):
    """align_local_flat with tb_plan / tb_align / tb_pack emulated: the CPU engine's starts
    and paths (same extents, scores, ops and offsets; where each path starts, to render
    it), pairs of score 0 the empty alignment; None (the plan only) where a job is past
    the cells or all are past ONE_PASS_BYTES."""
    from types import SimpleNamespace

    from warpalign._backends.cpu.traceback import CpuTraceback
    from warpalign._backends.cuda import traceback as cuda_tb
    from warpalign._backends.cuda.loader import emulated
    from warpalign.traceback import FULL_MATRIX_CELLS, _segment_starts
    launched = []

    def modules(filename, names, defines=()):
        assert filename == "traceback.cu"
        return SimpleNamespace(get_function=lambda name: (
            lambda grid, block, args: (launched.append(name), kernels[name](grid, block, args))))

    s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    rng = np.random.default_rng(30)
    pairs = []
    for m, n in ((1, 1), (31, 33), (32, 32), (33, 90), (64, 65), (70, 200)) * 4:
        q = rng.integers(0, 4, m).astype(np.uint8)
        t = rng.integers(0, 4, n).astype(np.uint8)
        at = int(rng.integers(0, n))
        t[at:at + m] = q[:n - at]                   # q's head inside t, often
        pairs.append((q, t))
    qcat, tcat = np.concatenate([q for q, _ in pairs]), np.concatenate([t for _, t in pairs])
    ql, tl = np.array([len(q) for q, _ in pairs]), np.array([len(t) for _, t in pairs])
    qs, ts = np.cumsum(ql) - ql, np.cumsum(tl) - tl
    kernels = {"tb_plan": _emulated_tb_plan(s), "tb_align": _emulated_tb_align,
               "tb_pack": _emulated_tb_pack}
    cpu = CpuTraceback()
    ends = cpu.ends_flat(qcat, qs, ql, tcat, ts, tl, s, 0, threads=1)
    ends[3] = ends[11] = 0                          # two pairs of score 0
    keep = np.flatnonzero(ends[:, 0] > 0)
    score, qe, te = ends[keep, 0], ends[keep, 1], ends[keep, 2]
    lo = _segment_starts(qe, te, score, s)
    starts = cpu.starts_flat(qcat, qs[keep], qe, tcat, ts[keep] + lo, te - lo, score, s, False,
                             threads=1)
    want = cpu.paths_flat(qcat, qs[keep] + qe - starts[:, 0], starts[:, 0], tcat,
                          ts[keep] + te - starts[:, 1], starts[:, 1], score, s,
                          FULL_MATRIX_CELLS, threads=1)
    with emulated(_StandInCupy(), modules):
        gpu = cuda_tb.GpuTraceback()
        assert gpu.align_local_flat(qcat, qs, tcat, ts, ends, s, 100) is None   # past the cells
        assert launched == ["tb_plan"]
        di, dj, best, ops, opoff, rq, rt, at = gpu.align_local_flat(qcat, qs, tcat, ts, ends, s,
                                                                    FULL_MATRIX_CELLS)
        monkeypatch.setattr(cuda_tb, "ONE_PASS_BYTES", 1 << 10)
        assert gpu.align_local_flat(qcat, qs, tcat, ts, ends, s, FULL_MATRIX_CELLS) is None
    empty = np.setdiff1d(np.arange(len(pairs)), keep)
    assert di[keep].tolist() == starts[:, 0].tolist() and dj[keep].tolist() == starts[:, 1].tolist()
    assert best[keep].tolist() == want[0].tolist() == score.tolist()
    assert not (di[empty].any() or dj[empty].any() or best[empty].any())
    lengths = np.diff(opoff)
    assert lengths[keep].tolist() == np.diff(want[2]).tolist() and not lengths[empty].any()
    assert ops.tolist() == want[1].tolist() and np.asarray(at).tolist() == opoff.tolist()
    assert rq[keep].tolist() == (qs[keep] + qe - starts[:, 0]).tolist()
    assert rt[keep].tolist() == (ts[keep] + te - starts[:, 1]).tolist()
    assert launched == ["tb_plan", "tb_plan", "tb_align", "tb_pack", "tb_plan"]


def _emulated_render(kind):
    """render.cu's two kernels by ``render_paths`` (the paths' own ops only: the buffer of
    the chained route runs past the last path)."""
    from warpalign._backends.render import render_paths

    def walk(grid, block, args):
        (ops, opoff, n, qcat, qsize, qpos, tcat, tsize, tpos, matrix, k, go, ge, symbols,
         scores, used_q, used_t, matches, query, target, text) = args
        assert grid[0] * block[0] >= 32 * int(n) and qsize == qcat.size and tsize == tcat.size
        got = render_paths(ops[:int(opoff[-1])], opoff, qcat, qpos, tcat, tpos,
                           matrix.reshape(int(k), int(k)), int(go), int(ge), symbols)
        for out, value in zip((scores, used_q, used_t, matches, text),
                              (*got[:4], np.diff(got.cigoff))):
            out[:] = value
        query[:got.query.size], target[:got.target.size] = got.query, got.target

    def cigar(grid, block, args):
        ops, opoff, n, cigoff, out = args
        got = render_paths(ops[:int(opoff[-1])], opoff, np.zeros(1, np.uint8), np.zeros(
            int(n), np.int64), np.zeros(1, np.uint8), np.zeros(int(n), np.int64),
            np.zeros((1, 1), np.int32), 1, 1, np.zeros(256, np.uint8))
        assert got.cigoff.tolist() == cigoff.tolist() and out.size >= got.cigar.size
        out[:got.cigar.size] = got.cigar      # the buffer may be a bound (the chained route)
    return walk if kind == "render_walk" else cigar


def _emulated_tb_columns(grid, block, args):
    res, ends, opoff, scores, used_q, used_t, matches, jobs, qs, ts, identity, failed = args
    jobs = int(jobs)
    assert grid[0] * block[0] >= jobs
    di, dj, best = res.reshape(4, jobs)[:3].astype(np.int64)
    ends = ends.reshape(jobs, 3)
    qs[:], ts[:] = ends[:, 1] - di, ends[:, 2] - dj
    lengths = np.diff(opoff)
    identity[:] = [m / n if n > 0 else 0.0 for m, n in zip(matches.tolist(), lengths.tolist())]
    failed[0] = int(((scores != ends[:, 0]) | (best != ends[:, 0]) | (used_q != di)
                     | (used_t != dj)).sum())


def test_gpu_chained_local_table_on_an_emulated_device():
    """trace_local_chain (ends, codes and starts on the device, three reads) with every
    kernel emulated: the same table as align_pairs_table's on the CPU engine, empty
    alignments for score 0; a check the caller reads along that is not 0, or a job past
    the cells, and nothing past tb_plan runs (None: the general route)."""
    from types import SimpleNamespace

    from warpalign._backends.cuda import traceback as cuda_tb
    from warpalign._backends.cuda.loader import emulated
    from warpalign.traceback import FULL_MATRIX_CELLS, align_pairs_table, printed_bytes
    from warpalign.errors import TracebackError
    from warpalign.traced import chained_table, traced_table
    launched = []
    s = Scoring(match=3, mismatch=-1, gap_open=3, gap_extend=1)  # mismatches and gaps
    kernels = {"tb_plan": _emulated_tb_plan(s), "tb_align": _emulated_tb_align,
               "tb_pack": _emulated_tb_pack, "tb_columns": _emulated_tb_columns,
               "render_walk": _emulated_render("render_walk"),
               "render_cigar": _emulated_render("render_cigar")}

    def modules(filename, names, defines=()):
        assert filename in ("traceback.cu", "render.cu")
        return SimpleNamespace(get_function=lambda name: (
            lambda grid, block, args: (launched.append(name), kernels[name](grid, block, args))))

    rng = np.random.default_rng(32)
    pairs = []
    for m, n in ((1, 1), (31, 33), (40, 90), (70, 200), (5, 3)) * 3:
        q = rng.integers(0, 4, m).astype(np.uint8)
        t = rng.integers(0, 4, n).astype(np.uint8)
        at = int(rng.integers(0, n))
        copy = q[:n - at].copy()
        copy[::7] = rng.integers(0, 4, copy[::7].size)     # substitutions
        t[at:at + m] = copy
        pairs.append((q, np.delete(t, slice(at + 5, at + 7)) if n > at + 12 else t))
    pairs[4] = pairs[9] = (np.zeros(6, np.uint8), np.ones(9, np.uint8))     # score 0
    qcat, tcat = np.concatenate([q for q, _ in pairs]), np.concatenate([t for _, t in pairs])
    ql, tl = np.array([len(q) for q, _ in pairs]), np.array([len(t) for _, t in pairs])
    qs, ts = np.cumsum(ql) - ql, np.cumsum(tl) - tl
    want = align_pairs_table(qcat, qs, ql, tcat, ts, tl, s)
    ends = np.stack([want.scores, want.query_ends, want.target_ends], 1).astype(np.int64)
    assert (ends[:, 0] == 0).any() and (ends[:, 0] > 0).any()
    assert want.query_text != want.target_text and "D" in want.cigar_text
    stand_in = _StandInCupy()
    dev = [np.asarray(v, np.int64).view(_Device) for v in (qs, ts)]

    def chain(cells, checks):
        return gpu.trace_local_chain(qcat.view(_Device), dev[0], tcat.view(_Device), dev[1],
                                     ends.copy().view(_Device), s, cells, printed_bytes(s),
                                     "queued", checks)
    with emulated(stand_in, modules):
        gpu = cuda_tb.GpuTraceback()
        seen, traced = chain(FULL_MATRIX_CELLS, [np.zeros(1, np.int32), np.zeros(1, np.uint64)])
        assert seen.tolist() == [0, 0] and launched == [
            "tb_plan", "tb_align", "tb_pack", "render_walk", "tb_columns", "render_cigar"]
        for cells, checks in ((100, []), (FULL_MATRIX_CELLS, [np.array([0, 2])])):
            launched.clear()
            seen, none = chain(cells, checks)
            assert none is None and launched == ["tb_plan"]
            assert seen.tolist() == [int(c) for c in np.concatenate(checks or [[]])]
    assert traced[0].tolist() == ends.tolist() and traced[-1]["failed"] == 0
    chained = chained_table(traced[0], traced[1:])
    assert traced_table(traced[0], traced[1:6]) == want == chained
    assert np.array_equal(chained.identities, want.identities)
    rendered = traced[5]
    broken = rendered._replace(scores=rendered.scores + (np.arange(len(pairs)) == 7))
    columns = dict(traced[-1], failed=1)       # the device's count: the host names the path
    with pytest.raises(TracebackError, match=r"the local score is \d+ at .* path of q\["):
        chained_table(traced[0], (*traced[1:5], broken, columns))
    with pytest.raises(TracebackError, match="1 paths of the chained traceback failed"):
        chained_table(traced[0], (*traced[1:6], columns))


def test_align_pairs_table_given_largest_code():
    """A largest code the caller gives below the alphabet's size spares the check of the
    codes; one at or past it (or none) checks them: a code outside is named."""
    from warpalign.traceback import align_pairs_table
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    q, t = s.encode("TACTGACGT"), s.encode("GAACTGAACGT")
    want = align_pairs_table(q, [0, 5], [5, 4], t, [0, 7], [7, 4], s)
    assert align_pairs_table(q, [0, 5], [5, 4], t, [0, 7], [7, 4], s, largest=3) == want
    bad = t.copy()
    bad[2] = 20                                    # the DNA alphabet has 15 codes
    for largest in (None, 20, 40):
        with pytest.raises(ValueError, match="target code 20 is outside .* pair 0, position 2"):
            align_pairs_table(q, [0, 5], [5, 4], bad, [0, 7], [7, 4], s, largest=largest)
