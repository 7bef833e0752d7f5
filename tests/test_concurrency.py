"""Concurrent calls on shared objects return what serial calls return (DESIGN.md,
"Concurrency and inputs").

Every public job is called from several threads at once on one shared ``Database``,
``Scoring`` and backend, several rounds, and each thread's results are compared with the
same calls made one after another. On the GPU this covers the packed multi-query search
(its per-call boundary buffers and streams) and the per-query path.
"""

from __future__ import annotations

import threading
from importlib import resources

import numpy as np
import pytest

from warpalign import Database, Scoring, align, lcs, lcs_length, locate, score_pairs, search

BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
DNA = Scoring(match=2, mismatch=-1, gap_open=3, gap_extend=1)
THREADS = 4
ROUNDS = 3


def _run_threads(calls):
    """Run each zero-argument call in its own thread, all released at once; their
    results in order (an exception in a thread is raised here)."""
    start = threading.Barrier(len(calls))
    out: list = [None] * len(calls)
    errors: list = []

    def work(i):
        try:
            start.wait()
            out[i] = calls[i]()
        except BaseException as exc:  # noqa: BLE001  (re-raised below, in the test's thread)
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not any(t.is_alive() for t in threads), "a concurrent call did not finish"
    if errors:
        raise errors[0]
    return out


def _check_concurrent(calls, summary):
    serial = [summary(c()) for c in calls]
    for _ in range(ROUNDS):
        got = [summary(r) for r in _run_threads(calls)]
        for i, (want, have) in enumerate(zip(serial, got)):
            assert have == want, f"thread {i} differs from the serial call"


def _hits(res):
    return [(h.query_name, h.scores.tolist(), h.targets.tolist(),
             None if h.query_ends is None else h.query_ends.tolist(),
             None if h.target_ends is None else h.target_ends.tolist(),
             None if h.alignments is None else [a.cigar for a in h.alignments])
            for h in res]


def _aln(a):
    return (a.score, a.query_start, a.query_end, a.target_start, a.target_end, a.cigar)


@pytest.fixture(scope="module")
def protein_db():
    path = resources.files("warpalign") / "data" / "example_db.fasta.gz"
    with resources.as_file(path) as p:
        return Database.from_sequences(str(p), alphabet=BLOSUM62.alphabet)


def _queries(db, count, seed):
    """Slices of database sequences with a few substitutions: queries with real hits
    (ties among near-duplicates included), lengths 40-600."""
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)
    out = []
    for _ in range(count):
        i = int(rng.integers(len(db)))
        seq = np.frombuffer(BLOSUM62.alphabet.decode(db.sequence(i)).encode(), np.uint8).copy()
        n = int(rng.integers(40, 601))
        lo = int(rng.integers(0, max(1, len(seq) - n)))
        q = seq[lo:lo + n].copy()
        flip = rng.random(len(q)) < 0.1
        q[flip] = rng.choice(letters, int(flip.sum()))
        out.append(q.tobytes().decode())
    return out


@pytest.mark.parametrize("mode", ["score", "end", "full"])
def test_search_threads(backend, protein_db, mode):
    queries = _queries(protein_db, 20 if mode == "score" else 8, seed=3)
    per = len(queries) // THREADS
    calls = [lambda qs=queries[i * per:(i + 1) * per]: search(
        qs, protein_db, BLOSUM62, top_k=5, mode=mode, backend=backend)
        for i in range(THREADS)]
    _check_concurrent(calls, _hits)


def test_search_threads_one_query_each(backend, protein_db):
    queries = _queries(protein_db, THREADS, seed=4)
    calls = [lambda q=q: search([q], protein_db, BLOSUM62, top_k=3, backend=backend)
             for q in queries]
    _check_concurrent(calls, _hits)


def _dna(rng, n):
    return "".join(rng.choice(list("ACGT"), n))


def _pair_results(r):
    if r.mode != "full":
        return r.scores.tolist()
    t = r.alignments
    return (r.scores.tolist(), t.cigars(), t.query_starts.tolist(), t.target_starts.tolist(),
            t.query_ends.tolist(), t.target_ends.tolist(), t.query_text, t.target_text)


@pytest.mark.parametrize("mode", ["score", "full"])
def test_score_pairs_threads(backend, mode):
    """Mode full without a threshold takes, on the GPU, the chained route (its kept plans,
    the shared traceback engine, per-call streams and pinned buffers)."""
    rng = np.random.default_rng(5)
    sets = []
    for _ in range(THREADS):
        xs = [_dna(rng, 64) for _ in range(200)]
        ys = [x[10:50] + _dna(rng, 300) if k % 3 else _dna(rng, 300)
              for k, x in enumerate(xs)]
        sets.append((xs, ys))
    calls = [lambda xs=xs, ys=ys: score_pairs(xs, ys, DNA, mode=mode, backend=backend)
             for xs, ys in sets]
    _check_concurrent(calls, _pair_results)


def test_locate_threads(backend):
    rng = np.random.default_rng(6)
    reference = _dna(rng, 60_000)
    reads = []
    for _ in range(THREADS):
        at = int(rng.integers(0, 59_000))
        read = list(reference[at:at + 150])
        for j in rng.integers(0, 150, 5):
            read[j] = "ACGT"[(("ACGT".index(read[j])) + 1) % 4]
        reads.append("".join(read))
    calls = [lambda r=r: locate(r, reference, DNA, backend=backend) for r in reads]
    _check_concurrent(calls, _aln)


def test_align_threads(backend):
    rng = np.random.default_rng(8)
    pairs = []
    for _ in range(THREADS):
        a = _dna(rng, 2_000)
        b = a[300:1700] + _dna(rng, 200)
        pairs.append((a, b))
    calls = [lambda a=a, b=b: align(a, b, DNA, backend=backend) for a, b in pairs]
    _check_concurrent(calls, _aln)


def test_lcs_threads(backend):
    rng = np.random.default_rng(9)
    pairs = [(rng.integers(0, 4, 3_000, dtype=np.uint8).tobytes(),
              rng.integers(0, 4, 2_500, dtype=np.uint8).tobytes()) for _ in range(THREADS)]
    calls = [lambda a=a, b=b: (lcs(a, b, backend=backend), lcs_length(a, b, backend=backend))
             for a, b in pairs]
    _check_concurrent(calls, lambda r: r)


WORKQUEUE_SCRIPT = """
import threading
import numpy as np
import numba
from warpalign import Scoring, score_pairs
s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
rng = np.random.default_rng(5)
acgt = np.frombuffer(b"ACGT", np.uint8)
xs, ys = acgt[rng.integers(0, 4, (600, 48))], acgt[rng.integers(0, 4, (600, 300))]
want = {m: score_pairs(xs, ys, s, backend="cpu", method=m).scores for m in ("wordwise", "bitsliced")}
assert numba.threading_layer() == "workqueue", numba.threading_layer()
got, start = [], threading.Barrier(6)
def work(m):
    start.wait()
    for _ in range(3):
        got.append(np.array_equal(score_pairs(xs, ys, s, backend="cpu", method=m).scores, want[m]))
threads = [threading.Thread(target=work, args=(m,)) for m in ("wordwise", "bitsliced") * 3]
[t.start() for t in threads]
[t.join() for t in threads]
assert len(got) == 18 and all(got), got
print("ok")
"""


def test_cpu_pairs_threads_under_the_workqueue_layer():
    # Numba's workqueue layer (a machine without OpenMP or TBB) terminates the process when
    # two threads run parallel code at once: numba_threads keeps it to one thread at a time
    # (a fresh process: the layer is chosen once)
    import os
    import subprocess
    import sys
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue")
    done = subprocess.run([sys.executable, "-c", WORKQUEUE_SCRIPT], env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
