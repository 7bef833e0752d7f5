"""``search.search_parts``: a call's hits in parts as they become final (what the CLI's
search writes as it goes). The parts joined are ``search``'s list, object for object; a
part is an engine batch in modes score and end, a traced group in mode full, everything
at once with both strands; arguments are checked before the first part is asked for;
closing the iterator early stops the engine's worker thread (the CLI closes it when a
write fails or on Ctrl-C); an engine error comes from the iteration."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from warpalign import Scoring, search
from warpalign._backends.base import Candidates
from warpalign._backends.cpu import CpuBackend
from warpalign.database import Database
from warpalign.search import TRACE_GROUP, search_parts

BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
BLASTN = Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2, alphabet="dna")
AMINO = "ACDEFGHIKLMNPQRSTVWY"


class Batched(CpuBackend):
    """The CPU engine giving a list per ``size`` queries (as the CUDA engine does per
    packed batch); records the batches it produced, the thread, and whether its
    iterator was closed."""

    def __init__(self, size: int, fail_at: int | None = None):
        super().__init__(threads=1)
        self.size, self.fail_at = size, fail_at
        self.produced = 0
        self.thread: threading.Thread | None = None
        self.closed = False

    def iter_batches(self, queries, handle, scoring, **options):
        self.thread = threading.current_thread()
        queries = list(queries)
        try:
            for k, lo in enumerate(range(0, len(queries), self.size)):
                if k == self.fail_at:
                    raise RuntimeError(f"batch {k} failed")
                self.produced += 1
                yield list(self.search_batches(queries[lo:lo + self.size], handle, scoring,
                                               **options))
        finally:
            self.closed = True


class Candidated(Batched):
    """:class:`Batched` giving, as the CUDA engine does, each query's candidates only:
    every target at or above a bound ``slack`` below its k-th best score, with their
    ``ids`` (the device's top-k cut, many queries' hits then picked and named at once)."""

    def __init__(self, size: int, top_k: int, slack: int):
        super().__init__(size)
        self.top_k, self.slack = top_k, slack

    def iter_batches(self, queries, handle, scoring, **options):
        for got in super().iter_batches(queries, handle, scoring, **options):
            out = []
            for b in got:
                kth = np.sort(b.scores)[::-1][min(self.top_k, len(b.scores)) - 1]
                ids = np.flatnonzero(b.scores >= kth - self.slack)
                out.append(Candidates(b.scores[ids], *(None if a is None else a[ids] for a in
                                                       (b.query_ends, b.target_ends)),
                                      b.saturated, ids))
            yield out


@pytest.fixture(scope="module")
def protein():
    rng = np.random.default_rng(31)
    targets = ["".join(rng.choice(list(AMINO), size=rng.integers(20, 150)))
               for _ in range(60)]
    queries = ["".join(rng.choice(list(AMINO), size=rng.integers(20, 60)))
               for _ in range(150)]
    queries[3] = targets[9][10:50]
    return Database.from_sequences(targets, alphabet=BLOSUM62.alphabet), queries


def _summary(hits):
    return [(h.query_name, h.scores.tolist(), h.targets.tolist(),
             None if h.query_ends is None else h.query_ends.tolist(),
             None if h.alignments is None else [a.cigar for a in h.alignments],
             None if h.evalues is None else h.evalues.tolist(),
             None if h.strands is None else h.strands.tolist()) for h in hits]


@pytest.mark.parametrize(("mode", "options", "sizes"), [
    ("score", {}, [40, 40, 40, 30]),                           # a part per engine batch
    ("end", {"min_score": 30, "evalue": 10.0}, [40, 40, 40, 30]),
    ("full", {}, [80, 70]),                                    # traced groups
])
def test_parts_joined_are_the_whole_call(protein, mode, options, sizes):
    db, queries = protein
    assert 40 < TRACE_GROUP <= 80                  # groups traced after lists 2 and 4
    want = _summary(search(queries, db, BLOSUM62, top_k=3, mode=mode, backend="cpu",
                           threads=1, **options))
    parts = list(search_parts(queries, db, BLOSUM62, top_k=3, mode=mode,
                              backend=Batched(40), threads=1, **options))
    assert [len(p) for p in parts] == sizes
    assert _summary([h for p in parts for h in p]) == want
    if "min_score" in options:                     # the filters ran on every part
        assert all((h.scores >= 30).all() and h.evalues is not None for p in parts for h in p)
        assert sum(len(h.scores) for p in parts for h in p) < 3 * len(queries)


@pytest.mark.parametrize(("mode", "slack"), [("score", 0), ("end", 3), ("score", 50)])
def test_hits_from_candidates_equal_those_from_whole_rows(protein, mode, slack):
    """Hits picked from candidate subsets (many queries sorted and named at once) equal
    those picked from every target's score, ties by database order: half the targets
    are copies, so ties at the k-th best are common."""
    db, queries = protein
    names = [f"t{i}" for i in range(len(db))] + [f"copy {i}" for i in range(len(db))]
    letters = BLOSUM62.alphabet.symbols
    seqs = ["".join(letters[c] for c in codes) for _, codes in db]
    twice = Database.from_sequences(seqs * 2, names=names,
                                    alphabet=BLOSUM62.alphabet)
    want = search(queries, twice, BLOSUM62, top_k=5, mode=mode, backend="cpu", threads=1)
    got = search(queries, twice, BLOSUM62, top_k=5, mode=mode,
                 backend=Candidated(40, 5, slack), threads=1)
    assert _summary(got) == _summary(want)
    assert [h.names for h in got] == [h.names for h in want]
    assert any(h.scores[3] == h.scores[4] for h in want)        # ties at the cut
    assert all(h.names[0].startswith("t") for h in got)   # an original before its copy


@pytest.fixture(scope="module")
def dna():
    rng = np.random.default_rng(32)
    targets = ["".join(rng.choice(list("ACGT"), 150)) for _ in range(12)]
    comp = str.maketrans("ACGT", "TGCA")
    reads = []
    for i in range(30):
        t = targets[i % len(targets)]
        read = t[(i * 7) % 60:(i * 7) % 60 + 50]
        reads.append(read.translate(comp)[::-1] if i % 2 else read)
    return Database.from_sequences(targets, alphabet="dna"), reads


@pytest.mark.parametrize(("strand", "sizes"), [("both", [30]), ("plus", [8, 8, 8, 6]),
                                               ("minus", [8, 8, 8, 6])])
def test_both_strands_come_in_one_last_part(dna, strand, sizes):
    db, reads = dna
    want = _summary(search(reads, db, BLASTN, top_k=2, mode="end", backend="cpu",
                           threads=1, strand=strand))
    parts = list(search_parts(reads, db, BLASTN, top_k=2, mode="end", backend=Batched(8),
                              threads=1, strand=strand))
    assert [len(p) for p in parts] == sizes
    got = [h for p in parts for h in p]
    assert _summary(got) == want
    signs = {s for h in got for s in h.strands.tolist()}
    assert signs == {"both": {1, -1}, "plus": {1}, "minus": {-1}}[strand]


def test_arguments_are_checked_before_the_first_part(protein):
    db, queries = protein
    engine = Batched(40)
    with pytest.raises(ValueError, match="invalid top_k: 0"):
        search_parts(queries, db, BLOSUM62, top_k=0, backend=engine)
    parts = search_parts(queries, db, BLOSUM62, backend=engine, threads=1)
    assert engine.thread is None                   # nothing searched until asked
    parts.close()
    assert engine.thread is None and engine.produced == 0


def test_closing_early_stops_the_engine(protein):
    db, queries = protein
    engine = Batched(10)
    parts = search_parts(queries, db, BLOSUM62, top_k=3, backend=engine, threads=1)
    first = next(parts)
    assert len(first) == 10
    parts.close()                                  # what the CLI does when a write fails
    # the engine's worker was joined: its iterator closed on it, no batch runs after
    assert engine.closed and not engine.thread.is_alive()
    assert engine.thread is not threading.current_thread()
    produced = engine.produced
    assert produced <= 3                           # the one taken, one waiting, one made
    with pytest.raises(StopIteration):
        next(parts)
    assert engine.produced == produced


def test_an_error_in_the_consumer_closes_the_parts(protein):
    # the CLI's loop: ``with contextlib.closing(parts)``; an exception while writing a part
    # ends the search's work before it propagates
    import contextlib

    db, queries = protein
    engine = Batched(10)
    parts = search_parts(queries, db, BLOSUM62, top_k=3, backend=engine, threads=1)
    with pytest.raises(OSError, match="disk full"), contextlib.closing(parts):
        for _ in parts:
            raise OSError("disk full")
    assert engine.closed and not engine.thread.is_alive() and engine.produced <= 3


def test_an_engine_error_comes_from_the_iteration(protein):
    db, queries = protein
    engine = Batched(40, fail_at=2)
    parts = search_parts(queries, db, BLOSUM62, top_k=3, backend=engine, threads=1)
    assert [len(p) for p in (next(parts), next(parts))] == [40, 40]
    with pytest.raises(RuntimeError, match="batch 2 failed"):
        next(parts)
    assert engine.closed and not engine.thread.is_alive()
