"""``threads=`` on every CPU path and ``--threads`` in the command line (issue 24 item 4):
the same results whatever the count, one error naming the argument, ``NUMBA_NUM_THREADS``
honoured when unset, and the count seen where it is observable (the CPU backend's pool
threads, Numba's per-thread count restored)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest

from warpalign import Scoring, align, lcs, lcs_length, locate, score_pairs, search
from warpalign._backends import resolve_threads, usable_cores
from warpalign.cli import main

PROTEIN = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
AMINO = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)


def _random(rng, alphabet, n, lo, hi) -> list[str]:
    return [rng.choice(alphabet, rng.integers(lo, hi)).tobytes().decode() for _ in range(n)]


@pytest.fixture(scope="module")
def proteins():
    rng = np.random.default_rng(24)
    return _random(rng, AMINO, 3, 20, 60), _random(rng, AMINO, 300, 10, 200)


def test_search_threads_1_equals_default(proteins):
    queries, targets = proteins
    for mode in ("score", "full"):
        want = search(queries, targets, PROTEIN, top_k=5, mode=mode, backend="cpu")
        got = search(queries, targets, PROTEIN, top_k=5, mode=mode, backend="cpu", threads=1)
        two = search(queries, targets, PROTEIN, top_k=5, mode=mode, backend="cpu", threads=2)
        for w, g, t in zip(want, got, two, strict=True):
            assert g.scores.tolist() == w.scores.tolist() == t.scores.tolist()
            assert g.targets.tolist() == w.targets.tolist() == t.targets.tolist()
            if mode == "full":
                assert [h.cigar for h in g] == [h.cigar for h in w]


def test_score_pairs_threads_1_equals_default():
    rng = np.random.default_rng(7)
    dna = np.frombuffer(b"ACGT", np.uint8)
    xs, ys = _random(rng, dna, 200, 1, 80), _random(rng, dna, 200, 1, 300)
    for method in ("wordwise", "bitsliced"):
        want = score_pairs(xs, ys, DNA, method=method, backend="cpu").scores
        got = score_pairs(xs, ys, DNA, method=method, backend="cpu", threads=1).scores
        assert got.tolist() == want.tolist()
    full = score_pairs(xs, ys, DNA, backend="cpu", threshold=20, mode="full", threads=1)
    assert [a.cigar for a in full.alignments] == [
        a.cigar for a in score_pairs(xs, ys, DNA, backend="cpu", threshold=20,
                                     mode="full").alignments]


def test_locate_and_align_threads_1_equal_default():
    rng = np.random.default_rng(11)
    reference = rng.choice(np.frombuffer(b"ACGT", np.uint8), 20_000).tobytes().decode()
    query = reference[12_000:12_090]
    want = locate(query, reference, DNA, top=3, backend="cpu")
    got = locate(query, reference, DNA, top=3, backend="cpu", threads=1)
    assert [(h.score, h.target_start, h.cigar) for h in got] == [
        (h.score, h.target_start, h.cigar) for h in want]
    a, b = reference[:3000], reference[1500:4000]   # 7.5M cells: Myers-Miller's halves
    for algorithm in ("local", "global"):           # run at once on 2 threads
        one = align(a, b, DNA, algorithm=algorithm, threads=1)
        assert one == align(a, b, DNA, algorithm=algorithm, threads=2)
        assert one == align(a, b, DNA, algorithm=algorithm)


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_invalid_threads_is_a_value_error_naming_it(bad):
    calls = [lambda: search(["HEAGAWGHEE"], ["PAWHEAE"], PROTEIN, threads=bad),
             lambda: score_pairs(["ACGT"], ["ACGT"], DNA, threads=bad),
             lambda: locate("ACGT", "TTACGTT", DNA, threads=bad),
             lambda: align("HEAGAWGHEE", "PAWHEAE", PROTEIN, threads=bad),
             lambda: lcs("abc", "abd", threads=bad),
             lambda: lcs_length("abc", "abd", threads=bad)]
    for call in calls:
        with pytest.raises(ValueError, match=r"invalid threads: "):
            call()


def test_default_honours_numba_num_threads(monkeypatch):
    monkeypatch.delenv("NUMBA_NUM_THREADS", raising=False)
    assert resolve_threads() == usable_cores()
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    assert resolve_threads() == 3
    assert resolve_threads(5) == 5   # an explicit count wins
    monkeypatch.setenv("NUMBA_NUM_THREADS", "zero")
    with pytest.raises(ValueError, match="invalid NUMBA_NUM_THREADS: 'zero'"):
        search(["HEAGAWGHEE"], ["PAWHEAE"], PROTEIN)


def test_concurrent_calls_with_different_counts(proteins):
    from concurrent.futures import ThreadPoolExecutor
    queries, targets = proteins
    want = [h.scores.tolist() for h in search(queries, targets, PROTEIN, backend="cpu")]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda n: [h.scores.tolist() for h in search(
            queries, targets, PROTEIN, backend="cpu", threads=n)], [1, 2, 1, 2, 3, 1]))
    assert got == [want] * 6


def test_numba_thread_count_is_restored_after_a_call():
    previous = numba.get_num_threads()
    score_pairs(["ACGTACGT"] * 70, ["ACGTTACGT"] * 70, DNA, method="wordwise",
                backend="cpu", threads=1)
    assert numba.get_num_threads() == previous


# The CPU backend's pool threads are named warpalign-cpu_N; a search on one thread runs
# its tasks in the calling thread and starts none. Checked in a fresh process, where no
# earlier call has started the pool.
_POOL_PROBE = textwrap.dedent("""
    import sys, threading
    import numpy as np
    from warpalign import Scoring, search
    rng = np.random.default_rng(1)
    aa = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)
    targets = [rng.choice(aa, int(n)).tobytes().decode() for n in rng.integers(10, 200, 300)]
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    kw = {} if sys.argv[1] == "unset" else {"threads": int(sys.argv[1])}
    search(["HEAGAWGHEEMKVLAW"], targets, s, backend="cpu", **kw)
    print(sum(t.name.startswith("warpalign-cpu") for t in threading.enumerate()))
""")


def _pool_threads(threads: str, numba_threads: str | None) -> int:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    if numba_threads is not None:
        env["NUMBA_NUM_THREADS"] = numba_threads
    proc = subprocess.run([sys.executable, "-c", _POOL_PROBE, threads], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return int(proc.stdout.split()[-1])


def test_one_thread_starts_no_pool_threads():
    assert _pool_threads("2", None) == 2          # the probe sees a pool when there is one
    assert _pool_threads("1", None) == 0
    assert _pool_threads("unset", "1") == 0       # NUMBA_NUM_THREADS=1 and threads unset


# ------------------------------------------------------------------------------ CLI

QUERIES = ">q1\nMKVLAWHEAGAWGHEE\n>q2\nPAWHEAE\n"
TARGETS = ">t1\nHEAGAWGHEE\n>t2\nMKVLAW\n>t3\nWWWWPAWHEAEWWW\n>t4\nGGGG\n"


@pytest.mark.parametrize("command", ["search", "align", "pairs", "locate", "lcs"])
@pytest.mark.parametrize("value", ["0", "two"])
def test_cli_invalid_threads_names_the_flag(command, value, capsys, tmp_path):
    a, b = tmp_path / "a.fa", tmp_path / "b.fa"
    a.write_text(QUERIES)
    b.write_text(TARGETS)
    with pytest.raises(SystemExit) as exc:
        main([command, str(a), str(b), "--threads", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --threads: expected an integer >= 1" in err and repr(value) in err


def test_cli_threads_1_same_output_and_runs_under_numba_num_threads_1(tmp_path):
    q, t = tmp_path / "q.fa", tmp_path / "t.fa"
    q.write_text(QUERIES)
    t.write_text(TARGETS)
    env = {**os.environ, "NUMBA_NUM_THREADS": "1"}

    def cli(*argv):
        proc = subprocess.run([sys.executable, "-m", "warpalign", *map(str, argv)], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    default = cli("search", q, t, "--backend", "cpu", "-k", "3")
    assert default and cli("search", q, t, "--backend", "cpu", "-k", "3",
                           "--threads", "1") == default
    # more threads than Numba was started with: Numba's share is capped, no error
    assert cli("search", q, t, "--backend", "cpu", "-k", "3", "--threads", "2") == default
    x, y = tmp_path / "x.fa", tmp_path / "y.fa"
    x.write_text(">x0\nACGTACGTTAGC\n>x1\nTTTTGGGGCCCC\n")
    y.write_text(">y0\nACGTTCGTTAGCA\n>y1\nACGTACGTACGT\n")
    pairs = cli("pairs", x, y, "--backend", "cpu")
    assert cli("pairs", x, y, "--backend", "cpu", "--threads", "2") == pairs
