"""A database streamed through the GPU in chunks (``search(gpu_memory=...)``) gives exactly
the resident search's hits: same targets, same order, same ends (mode "end"), same
alignments (mode "full"), with the packed multi-query kernel run per chunk. The CPU
backend is the oracle too. Every test is cuda-marked (run on the GPU machine)."""

from __future__ import annotations

import threading
from collections import Counter

import numpy as np
import pytest

from warpalign import Database, Scoring, search

pytestmark = pytest.mark.cuda

S = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
LETTERS = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)


def _seqs(seed=23):
    """~1,200 sequences over every length bucket (0 to 3,000 residues; a few empty),
    copies far apart in the input (ties across chunk borders), pieces of the queries
    planted in some (strong hits), and the queries."""
    rng = np.random.default_rng(seed)

    def rand(m):
        return LETTERS[rng.integers(0, 20, m)].tobytes().decode()

    lengths = np.concatenate([rng.integers(1, 600, 1000), rng.integers(600, 3000, 150),
                              [0, 0, 0, 1, 2]])
    seqs = [rand(int(m)) for m in lengths]
    queries = [rand(int(m)) for m in (40, 150, 300, 333, 512, 700)]
    for i, q in enumerate(queries):
        for j in range(4):
            k = int(rng.integers(0, len(seqs)))
            cut = q[j * 7: j * 7 + 30 + 20 * i]
            seqs[k] = seqs[k][:50] + cut + seqs[k][50:]
    for i in (3, 100, 500, 1100):
        seqs += [seqs[i]] * 5
    order = rng.permutation(len(seqs))
    return [seqs[i] for i in order], queries


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    seqs, queries = _seqs()
    db = Database.build(seqs, tmp_path_factory.mktemp("stream") / "db.wa")
    return db, queries


def _limit(db, parts=8):
    """A device memory limit that streams ``db`` in about ``parts`` chunks."""
    from warpalign._backends.cuda import config
    cost = config.RESIDENT_BYTES * db.residues + config.SEQUENCE_BYTES * len(db)
    return 2 * cost // parts


def _same(a, b, mode):
    for x, y in zip(a, b, strict=True):
        assert x.targets.tolist() == y.targets.tolist()
        assert x.scores.tolist() == y.scores.tolist()
        if mode != "score":
            assert x.query_ends.tolist() == y.query_ends.tolist()
            assert x.target_ends.tolist() == y.target_ends.tolist()
        if mode == "full":
            assert [(h.query_start, h.target_start, h.cigar) for h in x.alignments] == \
                   [(h.query_start, h.target_start, h.cigar) for h in y.alignments]


def test_the_limit_streams_a_database_that_does_not_fit(cuda, data):
    from warpalign._backends.cuda import ChunkedTargets, CudaBackend, DeviceTargets
    db, _ = data
    be = CudaBackend(devices=(0,))
    assert isinstance(be.prepare(db.targets), DeviceTargets)            # default: fits
    assert isinstance(be.prepare(db.targets, device_memory=0.5), DeviceTargets)
    h = be.prepare(db.targets, device_memory=_limit(db))
    # two chunks in flight share 11/16 of the limit (stream.plan_stream): 14 on an H100
    assert isinstance(h, ChunkedTargets) and 10 <= len(h.chunks) <= 18
    # the longest targets stay resident beside the chunks (the sorted order's end)
    assert h.tail is not None and h.tail[1] == len(db) and h.chunks[-1][1] == h.tail[0]
    assert h.targets.file is not None                       # read from disk, not the map
    with pytest.raises(ValueError, match="gpu_memory= or --gpu-memory"):
        be.prepare(db.targets, device_memory=4096)


@pytest.mark.parametrize("mode", ["score", "end", "full"])
@pytest.mark.parametrize("top_k", [1, 5, 40])
def test_streamed_equals_resident(cuda, data, mode, top_k):
    db, queries = data
    resident = search(queries, db, S, top_k=top_k, mode=mode, backend="cuda")
    streamed = search(queries, db, S, top_k=top_k, mode=mode, backend="cuda",
                      gpu_memory=_limit(db))
    _same(streamed, resident, mode)
    _same(streamed, search(queries, db, S, top_k=top_k, mode=mode, backend="cpu"), mode)
    # tiny chunks: many chunk borders, each chunk a few sequences
    tiny = search(queries, db, S, top_k=top_k, mode=mode, backend="cuda",
                  gpu_memory=_limit(db, 60))
    _same(tiny, resident, mode)


def test_streamed_runs_the_packed_kernel_per_chunk(cuda, data):
    from warpalign._backends.cuda import CudaBackend
    db, queries = data
    calls = []        # (targets, queries) of each packed batch (the backend's on_packed)
    be = CudaBackend(devices=(0,), on_packed=lambda n, q: calls.append((n, q)))
    h = be.prepare(db.targets, device_memory=_limit(db))
    got = search(queries, db, S, top_k=10, backend=be, gpu_memory=_limit(db))
    # every chunk and the tail ran at least one packed batch (of 2 queries or more)
    want = Counter(b - a for a, b in [*h.chunks, h.tail])
    assert Counter(n for n, _ in calls) >= want and all(q >= 2 for _, q in calls)
    _same(got, search(queries, db, S, top_k=10, backend="cpu"), "score")
    with pytest.raises(ValueError, match="on_packed"):
        CudaBackend(devices=(0,), on_packed=3)


def test_chunks_group_their_targets_by_chunk_group_min(cuda, data):
    """The streamed chunks' layouts end their packed target groups at
    Tuning.chunk_group_min columns, the resident search's at pair_group_min; the hits
    are the same whatever the groups."""
    from warpalign._backends.cuda import CudaBackend, DeviceTargets, config
    db, queries = data
    be = CudaBackend(devices=(0,), tuning=config.Tuning(pair_group_min=4096,
                                                        chunk_group_min=64))

    def columns(layout):          # columns of each packed target group, the last aside
        return np.diff(layout.longs[layout.gstart])[:-1]

    resident = be.prepare(db.targets)
    assert isinstance(resident, DeviceTargets)
    assert len(columns(resident.layout[0])) and columns(resident.layout[0]).min() >= 4096
    h = be.prepare(db.targets, device_memory=_limit(db))
    got = be.search_batches([S.encode(q) for q in queries], h, S, top_k=10)
    kept = {(k[1], k[2]): v[0] for k, v in h.cache.items()
            if isinstance(k, tuple) and k[0] == "layout"}
    assert sorted(kept) == sorted([*h.chunks, h.tail])
    for a, b in h.chunks:
        cols = columns(kept[a, b])
        assert len(cols) and cols.min() >= 64 and cols.min() < 4096
    want = be.search_batches([S.encode(q) for q in queries], resident, S, top_k=10)
    for x, y in zip(got, want, strict=True):
        assert x.ids.tolist() == y.ids.tolist() and x.scores.tolist() == y.scores.tolist()
    _same(search(queries, db, S, top_k=10, backend=be, gpu_memory=_limit(db)),
          search(queries, db, S, top_k=10, backend="cpu"), "score")


def test_streamed_global_and_one_query(cuda, data):
    db, queries = data
    for algorithm in ("global", "semiglobal"):
        a = search(queries[:2], db, S, top_k=7, mode="end", algorithm=algorithm,
                   backend="cuda", gpu_memory=_limit(db))
        _same(a, search(queries[:2], db, S, top_k=7, mode="end", algorithm=algorithm,
                        backend="cpu"), "end")
    one = search(queries[3:4], db, S, top_k=9, mode="end", backend="cuda",
                 gpu_memory=_limit(db, 20))
    _same(one, search(queries[3:4], db, S, top_k=9, mode="end", backend="cpu"), "end")


def test_threads_with_different_limits_share_the_backend(cuda, data):
    db, queries = data
    want = search(queries, db, S, top_k=10, mode="end", backend="cuda")
    got, errors = {}, []

    def work(k, limit):
        try:
            got[k] = search(queries, db, S, top_k=10, mode="end", backend="cuda",
                            gpu_memory=limit)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    limits = [_limit(db), None, _limit(db, 30), 0.5]
    threads = [threading.Thread(target=work, args=(k, v)) for k, v in enumerate(limits)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(len(limits)):
        _same(got[k], want, "end")


@pytest.mark.parametrize("top_k", [300, "all"])
def test_streamed_cut_on_the_host_after_the_next_chunk_started(cuda, data, top_k):
    """top_k above the device cut's limit (or every target): each chunk's candidates are
    cut from its whole score rows, read once the next chunk's kernels are queued."""
    db, queries = data
    top_k = len(db) if top_k == "all" else top_k
    resident = search(queries, db, S, top_k=top_k, mode="score", backend="cuda")
    _same(search(queries, db, S, top_k=top_k, mode="score", backend="cuda",
                 gpu_memory=_limit(db)), resident, "score")


def test_streamed_layouts_are_made_once_and_kept(cuda, data):
    from warpalign._backends.cuda import CudaBackend
    db, queries = data
    be = CudaBackend(devices=(0,))
    h = be.prepare(db.targets, device_memory=_limit(db))
    queries = [S.encode(q) for q in queries]
    first = be.search_batches(queries, h, S, top_k=10)
    kept = {k: v for k, v in h.cache.items() if isinstance(k, tuple) and k[0] == "layout"}
    assert sorted((k[1], k[2]) for k in kept) == sorted([*h.chunks, h.tail])
    for (_, a, b, *_), (lay, max_code) in kept.items():
        assert lay.n == b - a and not lay.words.flags.writeable
        off = np.asarray(db.targets.offsets)
        assert max_code == int(np.asarray(db.targets.codes)[off[a]:off[b]].max())
    again = be.search_batches(queries, h, S, top_k=10)
    assert all(h.cache[k] is v for k, v in kept.items())        # the same objects
    for x, y in zip(first, again, strict=True):
        assert x.ids.tolist() == y.ids.tolist() and x.scores.tolist() == y.scores.tolist()


def test_chunks_run_batches_of_a_power_of_two_queries(cuda, data, monkeypatch):
    """A streamed chunk's query batches hold at most a power of two queries (the largest
    within its score budget), so chunks of similar target counts run the same batches,
    their pack plans and profiles made once (sized per chunk, 500 queries were re-planned
    ~5 batches a chunk)."""
    from warpalign._backends.cuda import CudaBackend, config
    db, queries = data
    be = CudaBackend(devices=(0,))
    h = be.prepare(db.targets, device_memory=_limit(db, 40))
    counts = [b - a for a, b in [h.tail, *h.chunks]]
    seen = []
    plan = config.pack_batches
    monkeypatch.setattr(config, "pack_batches",
                        lambda lengths, kp, per, smem: seen.append(per) or
                        plan(lengths, kp, per, smem))
    got = search(queries * 3, db, S, top_k=5, backend=be, gpu_memory=_limit(db, 40))
    budget = min(be.tuning.pack_score_bytes, h.score_bytes or be.tuning.pack_score_bytes)
    exact = [budget // (8 * n) for n in counts]
    assert len(seen) == len(counts)
    for per, most in zip(sorted(seen), sorted(exact)):
        assert per == most if most <= 1 else (per & (per - 1) == 0 and most // 2 < per <= most)
    assert len(set(seen)) < len(set(exact))
    _same(got, search(queries * 3, db, S, top_k=5, backend="cpu"), "score")
