"""A database streamed through a device in chunks (``_backends/stream.py``), on the CPU:
the memory limit as users give it, the chunk plan, the chunk reader (from disk), and the
exact merge of the top-k candidates across chunks, with the CPU backend's scan of the
whole database as the oracle (the CUDA side runs the same plan and merge:
tests/test_cuda_search.py's streamed tests)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from warpalign import Database, Scoring, search
from warpalign._backends import TargetSet, get_backend
from warpalign._backends.base import Candidates
from warpalign._backends.stream import (ChunkReader, candidates, device_order, lane,
                                        merge_candidates, parse_memory, plan_stream,
                                        schedule)
from warpalign.cli import main
from warpalign.offsets import runs_within
from warpalign.database import BUCKET_BOUNDARIES

S = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
# the CUDA backend's costs (cuda/config.py RESIDENT_BYTES, SEQUENCE_BYTES)
COSTS = {"residue_bytes": 12, "sequence_bytes": 64}


def _chunk_cap(limit: int) -> int:
    """Most a chunk may cost without a tail: two chunks are in flight (each with its
    whole resident cost) in 11/16 of the limit."""
    return limit * 11 // 16 // 2


def _database(seed: int = 5, n: int = 160) -> Database:
    """Lengths across several length buckets, and copies of a few sequences (placed far
    apart in the input, so equal scores land in different chunks of the sorted order)."""
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)
    lengths = rng.integers(1, 420, n)
    seqs = [letters[rng.integers(0, 20, m)].tobytes().decode() for m in lengths]
    for i in (3, 40, 77):
        seqs += [seqs[i]] * 4
    seqs += [seqs[5][:60]] * 3 + [seqs[5][:61]] * 2
    return Database.from_sequences(seqs)


# -- the limit ----------------------------------------------------------------------

@pytest.mark.parametrize("value, want", [
    (4096, 4096), ("4096", 4096), ("4G", 4 << 30), ("512m", 512 << 20), ("1.5K", 1536),
    ("2GiB", 2 << 30), (0.5, 0.5), ("0.25", 0.25), (1.0, 1.0), ("1", 1), (None, None)])
def test_parse_memory(value, want):
    got = parse_memory(value)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("value", [0, -5, 1.5, 0.0, "", "4X", "G", "-1G", "half", True,
                                   [4], "0"])
def test_parse_memory_errors_name_the_option(value):
    with pytest.raises(ValueError, match=r"invalid gpu_memory="):
        parse_memory(value)
    with pytest.raises(ValueError, match=r"--gpu-memory"):
        parse_memory(value, "--gpu-memory")


def test_search_rejects_bad_gpu_memory_before_work():
    with pytest.raises(ValueError, match=r"invalid gpu_memory= '4X'"):
        search(["MKV"], ["MKVLA"], S, gpu_memory="4X", backend="cpu")
    with pytest.raises(ValueError, match=r"fraction must be in \(0, 1\]"):
        search(["MKV"], ["MKVLA"], S, gpu_memory=2.5, backend="cpu")


def test_cpu_backend_ignores_gpu_memory():
    db = _database()
    q = [db.alphabet.decode(db.sequence(i)) for i in (3, 9)]
    a = search(q, db, S, top_k=7, mode="end", backend="cpu")
    b = search(q, db, S, top_k=7, mode="end", backend="cpu", gpu_memory="1K")
    for x, y in zip(a, b):
        assert x.targets.tolist() == y.targets.tolist()
        assert x.scores.tolist() == y.scores.tolist()


def test_cli_gpu_memory_errors(tmp_path, capsys):
    q = tmp_path / "q.fa"
    q.write_text(">q\nMKVLAW\n")
    with pytest.raises(SystemExit) as exc:     # argparse: a usage error, exit 2
        main(["search", str(q), str(q), "--gpu-memory", "lots", "--backend", "cpu"])
    assert exc.value.code == 2
    assert "argument --gpu-memory: invalid --gpu-memory 'lots'" in capsys.readouterr().err
    assert main(["search", str(q), str(q), "--gpu-memory", "0.5", "--backend", "cpu",
                 "--mode", "score"]) == 0
    assert capsys.readouterr().out.startswith("q\tq\t")


# -- the plan -----------------------------------------------------------------------

def test_plan_resident_when_it_fits():
    db = _database()
    off = db.targets.offsets
    cost = 12 * db.residues + 64 * len(db)
    p = plan_stream(off, cost * 4 // 3 + 4, **COSTS)
    assert not p.streamed and p.chunks == ((0, len(db)),)
    assert plan_stream(off, cost * 4 // 3 - 400, **COSTS).streamed


@pytest.mark.parametrize("limit", [16_000, 40_000, 250_000])
def test_plan_chunks_cover_and_fit(limit):
    db = _database()
    off = np.asarray(db.targets.offsets)
    p = plan_stream(off, limit, **COSTS)
    assert p.streamed and p.chunks[0][0] == 0 and p.chunks[-1][1] == len(db)
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(p.chunks, p.chunks[1:]))
    costs = [12 * int(off[b] - off[a]) + 64 * (b - a) for a, b in p.chunks]
    assert max(costs) <= _chunk_cap(limit)
    # two chunks in flight, each with a batch's scores and its spare rows
    assert 2 * max(costs) + 2 * (p.score_bytes + p.spare_bytes) <= limit
    # a length bucket ends inside some chunk
    sorted_len = np.diff(off)
    inside = [(a, b) for a, b in p.chunks
              if len(np.unique(np.searchsorted(BUCKET_BOUNDARIES, sorted_len[a:b]))) > 1]
    assert inside


def test_plan_too_small_names_the_option():
    off = np.array([0, 10, 5010])
    with pytest.raises(ValueError, match=r"gpu_memory= or --gpu-memory.*sequence 1.*5000 "
                                         r"residues.*at least 174732 bytes"):
        plan_stream(off, 20_000, **COSTS)
    # the least limit it names holds such a sequence in a chunk (of its own), one less not
    off = np.cumsum([0, 10, 5000, 5000, 5000])
    p = plan_stream(off, 174_732, **COSTS)
    assert p.streamed and (1, 2) in p.chunks
    with pytest.raises(ValueError, match="sequence 1 .*at least 174732 bytes"):
        plan_stream(off, 174_731, **COSTS)


# -- the merge: chunks searched one by one equal one search of everything ------------

def _chunked_candidates(engine, db, q, chunks, top_k):
    """Per chunk the CPU scan of its targets, cut as a device cuts it (every target at
    least the chunk's k-th best), ids in the whole database's sorted numbering."""
    codes, off = np.asarray(db.targets.codes), np.asarray(db.targets.offsets)
    parts = []
    for a, b in chunks:
        ts = TargetSet(codes[off[a]:off[b]], off[a:b + 1] - off[a])
        r = engine.scan(q, engine.prepare(ts), S, algorithm="local", ends=True)
        keep = candidates(r.scores, top_k)
        parts.append(Candidates(r.scores[keep], r.query_ends[keep], r.target_ends[keep],
                                r.saturated, keep + a))
    return merge_candidates(parts, top_k)


def _ranked(c: Candidates, order: np.ndarray, k: int):
    """The job's rule: score descending, then database (original) order; top k."""
    o = np.lexsort((order[c.ids], -c.scores.astype(np.int64)))[:k]
    return [(int(order[c.ids[i]]), int(c.scores[i]), int(c.query_ends[i]),
             int(c.target_ends[i])) for i in o]


@pytest.mark.parametrize("limit", [16_000, 40_000])
@pytest.mark.parametrize("top_k", [1, 3, 5, 12, 60, None])
def test_merge_across_chunks_is_exact(limit, top_k):
    engine = get_backend("cpu")
    db = _database()
    order = np.asarray(db.order)
    plan = plan_stream(db.targets.offsets, limit, **COSTS)
    assert len(plan.chunks) >= 4
    whole = engine.scan  # one scan of the whole database: the oracle
    h = engine.prepare(db.targets)
    tied_across = 0
    for qi in (3, 40, 77, 5, 11):
        q = db.sequence(qi)
        full = whole(q, h, S, algorithm="local", ends=True)
        keep = candidates(full.scores, top_k)
        want = Candidates(full.scores[keep], full.query_ends[keep], full.target_ends[keep],
                          full.saturated, keep)
        got = _chunked_candidates(engine, db, q, plan.chunks, top_k)
        assert got.ids.tolist() == want.ids.tolist()          # the same candidates
        assert got.scores.tolist() == want.scores.tolist()
        assert got.query_ends.tolist() == want.query_ends.tolist()
        assert got.target_ends.tolist() == want.target_ends.tolist()
        k = len(db) if top_k is None else top_k
        assert _ranked(got, order, k) == _ranked(want, order, k)
        # ties at the cut spread over several chunks
        if top_k is not None and top_k < len(db):
            kth = np.sort(full.scores)[::-1][top_k - 1]
            at = np.flatnonzero(full.scores == kth)
            chunk_of = np.searchsorted([b for _, b in plan.chunks], at, side="right")
            tied_across += len(set(chunk_of.tolist())) > 1
    if top_k not in (None, 60):
        assert tied_across       # the data really puts ties at the cut across borders


def test_merge_candidates_keeps_ties_at_the_cut():
    a = Candidates(np.array([7, 5], np.int32), None, None, 1, np.array([0, 1]))
    b = Candidates(np.array([5, 5, 9], np.int32), None, None, 2, np.array([2, 3, 4]))
    got = merge_candidates([a, b], 3)
    assert got.ids.tolist() == [0, 1, 2, 3, 4] and got.saturated == 3
    assert merge_candidates([a, b], 2).ids.tolist() == [0, 4]
    assert merge_candidates([a, b], None).ids.tolist() == [0, 1, 2, 3, 4]


# -- the reader: chunks from disk, ahead, through a few buffers -----------------------

def test_reader_reads_every_chunk_from_disk(tmp_path):
    db = _database()
    built = Database.build([db.alphabet.decode(db.sequence(i)) for i in range(len(db))],
                           tmp_path / "db.wa")
    ts = built.targets
    assert ts.file is not None and ts.file[0].endswith("codes.npy")
    plan = plan_stream(ts.offsets, 16_000, **COSTS)
    off = np.asarray(ts.offsets)
    biggest = max(int(off[b] - off[a]) for a, b in plan.chunks)
    buffers = [np.empty(biggest, np.uint8) for _ in range(3)]
    seen = []
    with ChunkReader(ts, plan.chunks, buffers) as reader:
        for c in reader:
            a, b = plan.chunks[c.index]
            assert (c.start, c.stop) == (a, b)
            np.testing.assert_array_equal(c.codes, ts.codes[off[a]:off[b]])
            np.testing.assert_array_equal(c.offsets, off[a:b + 1] - off[a])
            seen.append(c.index)
            reader.release(c)
    assert seen == list(range(len(plan.chunks)))
    # the path rebuilt since it was opened: the opened database's own bytes, still
    Database.build(["WWWW"] * 3, tmp_path / "db.wa", overwrite=True)
    with ChunkReader(ts, plan.chunks[:2], buffers) as reader:
        for c in reader:
            a, b = plan.chunks[c.index]
            np.testing.assert_array_equal(c.codes, ts.codes[off[a]:off[b]])
            reader.release(c)


def test_reader_errors_and_early_close():
    ts = TargetSet(np.arange(10, dtype=np.uint8), np.array([0, 2, 10]))
    with pytest.raises(ValueError, match="chunk 1 holds 8 residues"):
        with ChunkReader(ts, [(0, 1), (1, 2)], [np.empty(4, np.uint8)]) as reader:
            for c in reader:
                reader.release(c)
    # leaving early (no buffer given back) stops the worker
    with ChunkReader(ts, [(0, 1), (1, 2)], [np.empty(8, np.uint8)]) as reader:
        next(reader)
    assert not any(t.name == "warpalign-chunks" and t.is_alive()
                   for t in threading.enumerate())


def test_reader_reads_through_the_map_without_a_file():
    ts = TargetSet(np.arange(9, dtype=np.uint8), np.array([0, 3, 9]), None)
    with ChunkReader(ts, [(0, 2)], [np.empty(9, np.uint8)]) as reader:
        c = next(reader)
        assert c.codes.tolist() == list(range(9))


# -- the tail, the balance, the schedule (what cuda/streamed.py runs, in order) ---------

LANES = 40.0     # chain_lanes small enough that the test database has long targets


def test_plan_tail_is_the_longest_suffix_and_fits():
    db = _database()
    off = np.asarray(db.targets.offsets, dtype=np.int64)
    lengths = np.diff(off)
    limit = 60_000
    p = plan_stream(off, limit, **COSTS, chain_lanes=LANES)
    assert p.streamed and p.tail is not None and p.tail[1] == len(db)
    s = p.tail[0]
    assert p.chunks[0][0] == 0 and p.chunks[-1][1] == s       # chunks cover the rest
    assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(p.chunks, p.chunks[1:]))
    assert p.parts == (p.tail, *p.chunks)

    def cost(a, b):
        return 12 * int(off[b] - off[a]) + 64 * (b - a)

    tail = cost(s, len(db))
    assert tail <= limit // 8
    assert all(2 * cost(a, b) <= limit * 11 // 16 - tail for a, b in p.chunks)
    # the whole budget: the tail, two chunks in flight (each its whole resident cost),
    # a batch's scores and spare rows for each of the three
    assert tail + 2 * max(cost(a, b) for a, b in p.chunks) \
        + 3 * p.score_bytes + 3 * p.spare_bytes <= limit
    # every tail target is longer than every chunk target (the sorted order's end), and
    # no chunk target is so long that its one-warp chain sets its chunk's time
    assert lengths[s:].min() >= lengths[:s].max()
    longest = _chunk_cap(limit) / (2 * 12 * LANES)
    assert lengths[:s].max() <= longest or tail + 12 * lengths[s - 1] + 64 > limit // 8
    # without chain lanes: no tail, the plan as before
    assert plan_stream(off, limit, **COSTS).tail is None


@pytest.mark.parametrize("limit", [40_000, 100_000, 250_000])
def test_plan_chunks_are_balanced(limit):
    """(Where targets are small beside a chunk: near the limit, greedy cuts.)"""
    off = np.asarray(_database().targets.offsets, dtype=np.int64)
    p = plan_stream(off, limit, **COSTS)
    costs = [12 * int(off[b] - off[a]) + 64 * (b - a) for a, b in p.chunks]
    cost = 12 * off + 64 * np.arange(len(off))
    greedy, start = 0, 0
    while start < len(off) - 1:             # cuts as late as each chunk allows
        start = max(int(np.searchsorted(cost, cost[start] + _chunk_cap(limit), "right"))
                    - 1, start + 1)
        greedy += 1
    assert len(costs) <= greedy                             # no more chunks than greedy
    assert min(costs) >= max(costs) // 2                    # and no small remainder


@pytest.mark.parametrize("tail", [False, True])
@pytest.mark.parametrize("count", [0, 1, 2, 3, 7])
def test_schedule_overlaps_and_reuses_two_buffers_safely(count, tail):
    steps = schedule(count, tail)
    where = {s: i for i, s in enumerate(steps)}
    parts = list(range(count)) + ([count] if tail else [])
    assert len(steps) == 3 * len(parts) == len(where)         # each step once
    for c in parts:
        assert where["upload", c] < where["start", c] < where["finish", c]
    for c in range(count - 1):
        # chunk c+1's kernels are queued before chunk c's results are read
        assert where["start", c + 1] < where["finish", c]
    for c in range(2, count):
        # chunk c reuses chunk c-2's device buffer: uploaded once that chunk finished
        assert where["finish", c - 2] < where["upload", c]
    # at most two chunks hold device buffers at once (the tail has its own)
    held = 0
    for step, c in steps:
        if c != count or not tail:
            held += {"upload": 1, "start": 0, "finish": -1}[step]
            assert held <= 2
    if tail:      # the tail first (its long chains beside every chunk), read back last
        assert steps[:2] == [("upload", count), ("start", count)]
        assert steps[-1] == ("finish", count)
    # finishing order: chunks ascending, then the tail: ids come out ascending
    assert [c for s, c in steps if s == "finish"] == parts


@pytest.mark.parametrize("tail", [False, True])
@pytest.mark.parametrize("count", [1, 2, 3, 4, 9])
def test_device_order_overlaps_neighbours_and_keeps_each_lane_in_order(count, tail):
    """What the device waits for as cuda/streamed.py queues the schedule: chunk c+1
    runs beside chunk c (other lane: buffer, boundary rows, streams), and chunk c+2,
    which reuses chunk c's lane, waits for it."""
    after = device_order(count, tail)
    parts = list(range(count)) + ([count] if tail else [])
    assert set(after) == {(w, c) for c in parts for w in ("upload", "run")}

    def before(x, y):                       # x is done before y begins (a chain of waits)
        seen, todo = set(), [y]
        while todo:
            for z in after[todo.pop()]:
                if z == x:
                    return True
                if z not in seen:
                    seen.add(z)
                    todo.append(z)
        return False

    lanes = [lane(c, count) for c in parts]
    assert lanes[:count] == [c % 2 for c in range(count)]
    assert not tail or lanes[-1] == 2
    for c in parts:
        assert before(("upload", c), ("run", c))
    for c in range(count - 1):
        # neither of two neighbours waits for the other's kernels
        assert not before(("run", c), ("run", c + 1))
        assert not before(("run", c + 1), ("run", c))
        assert not before(("run", c), ("upload", c + 1))
    for x in parts:
        for y in parts:
            if x < y and lanes[x] == lanes[y]:
                # one lane's buffers: the later part's upload and kernels wait for the
                # earlier part's kernels
                assert before(("run", x), ("upload", y)) and before(("run", x), ("run", y))
    if tail:       # the tail beside every chunk: no run waits for another across them
        for c in range(count):
            assert not before(("run", count), ("run", c))
            assert not before(("run", c), ("run", count))


@pytest.mark.parametrize("top_k", [1, 5, 12, None])
def test_scheduled_chunks_and_tail_merge_exactly(top_k):
    """The streamed search as the CUDA driver runs it, emulated on the CPU: the plan's
    tail and chunks searched in the schedule's order, each part's candidates taken as
    the device takes them and merged in finishing order, equal the whole search."""
    engine = get_backend("cpu")
    db = _database()
    codes, off = np.asarray(db.targets.codes), np.asarray(db.targets.offsets)
    plan = plan_stream(off, 60_000, **COSTS, chain_lanes=LANES)
    assert plan.tail is not None and len(plan.chunks) >= 3
    slices = list(plan.chunks) + [plan.tail]           # schedule index -> slice
    whole = engine.prepare(db.targets)
    for qi in (3, 40, 5):
        q = db.sequence(qi)
        full = engine.scan(q, whole, S, algorithm="local", ends=True)
        want = candidates(full.scores, top_k)
        started, parts = {}, []
        for step, c in schedule(len(plan.chunks), True):
            a, b = slices[c]
            if step == "start":
                ts = TargetSet(codes[off[a]:off[b]], off[a:b + 1] - off[a])
                started[c] = engine.scan(q, engine.prepare(ts), S, algorithm="local",
                                         ends=True)
            elif step == "finish":
                r = started.pop(c)
                keep = candidates(r.scores, top_k)
                parts.append(Candidates(r.scores[keep], r.query_ends[keep],
                                        r.target_ends[keep], r.saturated, keep + a))
        got = merge_candidates(parts, top_k)
        assert got.ids.tolist() == want.tolist()
        assert got.scores.tolist() == full.scores[want].tolist()
        assert got.target_ends.tolist() == full.target_ends[want].tolist()


def test_reader_makes_each_layout_on_its_worker():
    ts = TargetSet(np.arange(12, dtype=np.uint8), np.array([0, 2, 5, 12]))
    seen = []

    def layout(chunk):
        seen.append(threading.current_thread().name)
        return ("made", chunk.index, int(chunk.codes.sum()))

    with ChunkReader(ts, [(2, 3), (0, 2)], [np.empty(7, np.uint8)] * 2,
                     layout=layout) as reader:
        got = []
        for c in reader:
            got.append(c.layout)
            reader.release(c)
    assert got == [("made", 0, sum(range(5, 12))), ("made", 1, sum(range(5)))]
    assert seen == ["warpalign-chunks"] * 2

    def broken(chunk):
        raise ValueError(f"no layout for chunk {chunk.index}")

    with pytest.raises(ValueError, match="no layout for chunk 0"):
        with ChunkReader(ts, [(0, 1)], [np.empty(7, np.uint8)], layout=broken) as reader:
            next(reader)


def test_runs_within_cover_every_item_in_order_within_room():
    """runs_within (a streamed search's candidate targets uploaded a chunk at a time):
    consecutive runs covering every item once, each within the room unless one item
    alone, and a new run only where the next item would not fit."""
    rng = np.random.default_rng(5)
    for _ in range(200):
        sizes = rng.integers(0, 40, int(rng.integers(0, 30))).tolist()
        room = int(rng.integers(1, 60))
        runs = runs_within(sizes, room)
        assert [i for lo, hi in runs for i in range(lo, hi)] == list(range(len(sizes)))
        for (lo, hi), nxt in zip(runs, runs[1:] + [None]):
            assert sum(sizes[lo:hi]) <= room or hi - lo == 1
            if nxt is not None:
                assert sum(sizes[lo:hi]) + sizes[nxt[0]] > room
