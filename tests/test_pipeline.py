"""The producer/consumer step (``warpalign.pipeline.ahead``) and ``search`` run through it:
an engine that gives its results batch by batch (as the CUDA engine's ``iter_batches``)
runs on a thread of its own while the caller assembles hits, and the hits are those of
the plain CPU search, however many batches."""

from __future__ import annotations

import dataclasses
import importlib
import threading
import time

import numpy as np
import pytest

from warpalign import Scoring, search
from warpalign._backends.cpu import CpuBackend
from warpalign._backends.cpu.traceback import CpuTraceback
from warpalign._backends.registry import REGISTRY
from warpalign.database import Database
from warpalign.pipeline import ahead

BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def test_items_in_order_on_one_worker_thread():
    threads = set()

    def produce():
        for i in range(50):
            threads.add(threading.get_ident())
            yield i

    with ahead(produce(), depth=3) as it:
        assert list(it) == list(range(50))
    assert len(threads) == 1 and threading.get_ident() not in threads


def test_production_runs_ahead_by_at_most_depth():
    produced = []

    def produce():
        for i in range(20):
            produced.append(i)
            yield i

    with ahead(produce(), depth=2) as it:
        for i in it:
            time.sleep(0.01)            # the consumer is slow: the producer waits for room
            # items waiting (depth) plus the one in production, beyond the one just taken
            assert len(produced) <= i + 1 + 2 + 1
        # and it did run ahead of the consumer
    assert produced == list(range(20))


def test_the_producers_error_comes_in_its_place():
    def produce():
        yield 1
        yield 2
        raise KeyError("batch 3")

    got = []
    with pytest.raises(KeyError, match="batch 3"), ahead(produce()) as it:
        for x in it:
            got.append(x)
    assert got == [1, 2]


def test_leaving_early_stops_and_cleans_up_the_producer():
    state = {"produced": 0, "closed_on": None}

    def produce():
        try:
            while True:
                state["produced"] += 1
                yield state["produced"]
        finally:
            state["closed_on"] = threading.get_ident()

    with ahead(produce(), depth=1) as it:
        assert next(it) == 1
    # close() waited for the worker: the generator's cleanup has run, on the worker
    assert state["closed_on"] not in (None, threading.get_ident())
    assert state["produced"] <= 3
    with pytest.raises(StopIteration):
        next(it)


def test_depth_is_checked():
    with pytest.raises(ValueError, match="invalid depth: 0"):
        ahead(iter(()), depth=0)


class BatchedCpu(CpuBackend):
    """The CPU engine, giving its results a list per ``size`` queries (as the CUDA engine
    does per packed batch) and recording the thread that produced each batch; with
    ``defer_ends`` (search in mode full on a device engine) every list but the last comes
    without end cells, as the CUDA engine's packed batches do."""

    def __init__(self, size: int, fail_at: int | None = None):
        super().__init__(threads=1)
        self.size, self.fail_at = size, fail_at
        self.ran_on: list[int] = []

    def iter_batches(self, queries, handle, scoring, *, defer_ends=False, **options):
        queries = list(queries)
        starts = range(0, len(queries), self.size)
        self.deferred = 0
        for k, lo in enumerate(starts):
            if k == self.fail_at:
                raise RuntimeError(f"batch {k} failed")
            self.ran_on.append(threading.get_ident())
            got = list(self.search_batches(queries[lo:lo + self.size], handle, scoring,
                                           **options))
            if defer_ends and k + 1 < len(starts):
                got = [dataclasses.replace(b, query_ends=None, target_ends=None) for b in got]
                self.deferred += 1
            yield got


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(21)
    targets = ["".join(rng.choice(list(AMINO), size=rng.integers(1, 150))) for _ in range(120)]
    targets[7] = targets[40] = targets[90]             # ties broken by database order
    queries = ["".join(rng.choice(list(AMINO), size=rng.integers(0, 90))) for _ in range(23)]
    queries[3] = targets[90][10:70]
    return Database.from_sequences(targets, alphabet=BLOSUM62.alphabet), queries


def _summary(res):
    return [(h.query_name, h.scores.tolist(), h.targets.tolist(),
             None if h.query_ends is None else h.query_ends.tolist(),
             None if h.target_ends is None else h.target_ends.tolist(),
             None if h.alignments is None else [a.cigar for a in h.alignments])
            for h in res]


@pytest.mark.parametrize("mode", ["score", "end", "full"])
@pytest.mark.parametrize("size", [1, 4, 23])
def test_search_in_batches_equals_one_batch(data, mode, size):
    db, queries = data
    want = _summary(search(queries, db, BLOSUM62, top_k=5, mode=mode, backend="cpu",
                           threads=1))
    engine = BatchedCpu(size)
    got = _summary(search(queries, db, BLOSUM62, top_k=5, mode=mode, backend=engine,
                          threads=1, progress=True))
    assert got == want
    assert len(engine.ran_on) == -(-len(queries) // size)
    # the batches ran on one thread, not the caller's (which assembled the hits meanwhile)
    assert len(set(engine.ran_on)) == 1 and threading.get_ident() not in engine.ran_on


def test_an_engine_error_in_a_later_batch_reaches_the_caller(data):
    db, queries = data
    with pytest.raises(RuntimeError, match="batch 2 failed"):
        search(queries, db, BLOSUM62, top_k=5, backend=BatchedCpu(4, fail_at=2), threads=1)


def test_full_mode_traces_whole_batches(data, monkeypatch):
    """Mode full traces the hits found so far once TRACE_GROUP queries wait and the
    engine's batch is complete: never part of a batch (the device's batch k+1 runs
    meanwhile), the rest at the end; the alignments equal one call's."""
    search_module = importlib.import_module("warpalign.search")   # (the package's
    db, queries = data                                               # `search` is the function)
    want = _summary(search(queries, db, BLOSUM62, top_k=5, mode="full", backend="cpu",
                           threads=1))
    traced = []
    real = search_module._with_alignments

    def recording(results, *args, **kwargs):
        traced.append(len(results))
        return real(results, *args, **kwargs)

    monkeypatch.setattr(search_module, "_with_alignments", recording)
    monkeypatch.setattr(search_module, "TRACE_GROUP", 6)
    got = _summary(search(queries, db, BLOSUM62, top_k=5, mode="full", backend=BatchedCpu(4),
                          threads=1))
    assert got == want
    # 23 queries in lists of 4: traced after lists 2, 4 and 6 (8, 8 and the last 7)
    assert traced == [8, 8, 7]


class DeviceLike(BatchedCpu):
    """BatchedCpu as search() sees a device engine (its hits traced by the "cuda" row)."""

    name = "cuda"


class RecordingTraceback(CpuTraceback):
    """The CPU traceback engine, recording how many paths each call traced."""

    def __init__(self):
        super().__init__()
        self.calls: list[int] = []
        self.ended: list[int] = []      # the end pass's pairs, a call at a time

    def paths(self, items, *args, **kwargs):
        self.calls.append(len(items))
        return super().paths(items, *args, **kwargs)

    def ends(self, items, *args, **kwargs):
        items = list(items)
        self.ended.append(len(items))
        return super().ends(items, *args, **kwargs)


def _trace_beside(data, count: int, seed: int, beside, device) -> None:
    """Search ``count`` random queries in mode full on DeviceLike(40) (lists of 40) with
    the traceback rows "cpu" and "cuda" set to ``beside`` and ``device``; the alignments
    must equal a CPU search's."""
    db, _ = data
    rng = np.random.default_rng(seed)
    queries = ["".join(rng.choice(list(AMINO), size=int(n)))
               for n in rng.integers(20, 60, count)]
    want = _summary(search(queries, db, BLOSUM62, top_k=1, mode="full", backend="cpu",
                           threads=1))
    with REGISTRY.using("traceback", "cpu", "auto", beside), \
            REGISTRY.using("traceback", "cuda", "auto", device):
        got = _summary(search(queries, db, BLOSUM62, top_k=1, mode="full",
                              backend=DeviceLike(40), threads=1))
    assert got == want


def test_device_search_traces_batches_found_while_others_run_on_the_cpu(data):
    """Mode full on a device engine: the hits found while later batches run are traced
    by the CPU's traceback engine (the device is busy with the next batch), the last
    batch's by the device's; the alignments equal a CPU search's."""
    beside, device = RecordingTraceback(), RecordingTraceback()
    _trace_beside(data, 150, 5, beside, device)
    # lists of 40, 40, 40, 30: traced after the second (80 queries, two lists still to
    # come: on the CPU) and after the last (70: on the device); one path per query
    # (every query scores above 0 against some target here); the lists before the last
    # came without end cells: the tracing's end pass found those of lists 1-3
    assert [beside.calls, device.calls] == [[80], [70]]
    assert [beside.ended, device.ended] == [[80], [40]]


class SlowTraceback(RecordingTraceback):
    """A CPU traceback engine slower than any of the test engine's batches."""

    def paths(self, items, *args, **kwargs):
        time.sleep(0.5)
        return super().paths(items, *args, **kwargs)


def test_a_cpu_tracing_slower_than_the_device_batch_hands_the_rest_back(data):
    """Mode full on a device engine: once a CPU tracing took longer than the device's
    batch before it, the rest of the call is traced on the device (a slow host must not
    hold the search back); the alignments still equal a CPU search's."""
    beside, device = SlowTraceback(), RecordingTraceback()
    _trace_beside(data, 230, 6, beside, device)
    # lists of 40 (five) and 30: traced after lists 2 (80: on the CPU, slowly), 4 (80:
    # handed back, on the device) and 6 (70, the last: on the device)
    assert [beside.calls, device.calls] == [[80], [80, 70]]
    assert [beside.ended, device.ended] == [[80], [80, 40]]
