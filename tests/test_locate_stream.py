"""The many-reads path as a stream (issue 22): parts of reads scanned by a pool of worker
threads while the hits of earlier reads are traced in groups of ``TRACE_READS`` and given
back, on the emulated GPU path (``FakeGpuWindows``: exact DP per window, the worker
threads and packed launches as on the device) and on the CPU. Every read's result is
``locate_encoded``'s for that read alone; a stream longer than one chunk and one trace
group; an error in a later part's scan comes out of the iterator, and the pool's threads
end with it."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from test_locate import gpu_windows_as
from test_locate_pack import PackingFake
from test_locate_reads import PAPER_002, cut_reads, phix

from warpalign._backends.cpu.traceback import CpuTraceback
from warpalign._backends.registry import using
from warpalign.locate import (
    CHUNK_READS,
    PACK_READS,
    TRACE_READS,
    locate_encoded,
    locate_many_encoded,
)

LENGTH = 48   # short reads: more than a chunk of them stays cheap on the CPU


class Boom(RuntimeError):
    pass


class FailingFake(PackingFake):
    """PackingFake whose packed launch fails when it holds the read ``marker`` (a scan
    worker's error)."""

    def __init__(self, marker):
        super().__init__()
        self.marker = marker

    def window_cells_packed(self, ref, pack, s, starts, lengths, best_ends=False, timed=True):
        if any(len(q) == len(self.marker) and np.array_equal(q, self.marker)
               for q in pack.queries):
            raise Boom("the scan of a later part failed")
        return super().window_cells_packed(ref, pack, s, starts, lengths, best_ends, timed)


def pool_threads() -> list[str]:
    return [t.name for t in threading.enumerate()
            if t.name.startswith("warpalign-locate") and t.is_alive()]


@pytest.fixture(scope="module")
def stream():
    """More than one chunk of reads (both strands, a few junk reads among them), their
    codes, the reference, and each read's top-2 hits by locate_encoded alone."""
    n = CHUNK_READS + TRACE_READS + 3 * PACK_READS + 5
    assert n > CHUNK_READS + TRACE_READS and n % PACK_READS   # a short last part
    rng = np.random.default_rng(2201)
    ref = phix()
    reads = cut_reads(rng, ref, n - 40, LENGTH, junk=40)
    order = rng.permutation(n)
    reads = [reads[k] for k in order]
    codes = PAPER_002.encode(ref)
    codes.setflags(write=False)
    queries = [PAPER_002.encode(r) for r in reads]
    want = [locate_encoded(q, ["phiX"], [codes], PAPER_002, top=2, backend="cpu")
            for q in queries]
    assert {h[0].strand for h in want if h} == {"+", "-"}
    return queries, codes, want


def check(got, want, top, second):
    assert len(got) == len(want)
    for item, hits in zip(got, want):
        if top == 2:
            assert item == hits
            continue
        hit, after = item if second else (item, None)
        if hits:
            assert hit == hits[0]
        else:
            assert hit.score == 0 and hit.record is None
        if second:
            assert after == (hits[1].score if len(hits) > 1 else 0)


@pytest.mark.parametrize("top, second", [(1, False), (2, False), (1, True)])
def test_stream_on_the_emulated_gpu_equals_per_read_calls(stream, top, second):
    queries, codes, want = stream
    pulled = []

    def reads():
        for q in queries:
            pulled.append(1)
            yield q

    with gpu_windows_as(PackingFake()) as fake, \
            using("traceback", "cuda", "auto", CpuTraceback()):
        results = locate_many_encoded(reads(), ["phiX"], [codes], PAPER_002, top=top,
                                      second=second, backend="cuda")
        got = [next(results)]
        # the first result: its trace group's scans are done, and the pool was handed
        # parts as they came back, about one chunk ahead of them
        assert CHUNK_READS <= len(pulled) <= CHUNK_READS + TRACE_READS + PACK_READS
        got += list(results)
    assert max(fake.packed) >= 2     # reads' strands packed several per launch
    check(got, want, top, second)
    assert pool_threads() == []


@pytest.mark.parametrize("top, second", [(1, True), (2, False)])
def test_stream_on_the_cpu_equals_per_read_calls(stream, top, second):
    queries, codes, want = stream
    got = list(locate_many_encoded(iter(queries), ["phiX"], [codes], PAPER_002, top=top,
                                   second=second, backend="cpu"))
    check(got, want, top, second)


def test_error_in_a_later_part_propagates(stream):
    """A worker's error in a part past the first chunk comes out of the iterator after the
    results before it (given back as their groups were traced); the parts not started are
    cancelled and the pool's threads end."""
    queries, codes, want = stream
    at = CHUNK_READS + TRACE_READS // 2
    fake = FailingFake(queries[at])
    got = []
    with gpu_windows_as(fake), using("traceback", "cuda", "auto", CpuTraceback()):
        with pytest.raises(Boom, match="later part failed"):
            for hit in locate_many_encoded(queries, ["phiX"], [codes], PAPER_002,
                                           backend="cuda"):
                got.append(hit)
        assert pool_threads() == []
        # the groups before the failing part's came out, each read's own result
        assert CHUNK_READS <= len(got) <= at and len(got) % TRACE_READS == 0
        check(got, want[:len(got)], 1, False)
        # leaving early: closing the iterator ends the pool too
        results = locate_many_encoded(queries[:at], ["phiX"], [codes], PAPER_002,
                                      backend="cuda")
        check([next(results)], want[:1], 1, False)
        assert pool_threads()
        results.close()
        assert pool_threads() == []
