"""search(): one test body over every backend and mode, against a brute-force oracle."""

from __future__ import annotations

import numpy as np
import pytest

from reference import top_select
from warpalign import DatabaseError, Scoring, ScoringError
from warpalign._backends.cpu.pairwise import score_end_py
from warpalign.database import Database
from warpalign.search import search

BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
AMINO = "ACDEFGHIKLMNPQRSTVWY"


def random_proteins(rng, n, lo=0, hi=120):
    return ["".join(rng.choice(list(AMINO), size=rng.integers(lo, hi + 1))) for _ in range(n)]


def brute_force(query, targets, scoring, algorithm="local"):
    q = scoring.encode(query)
    rows = [score_end_py(q, scoring.encode(t), scoring.matrix, scoring.gap_open,
                         scoring.gap_extend, algorithm) + (i,) for i, t in enumerate(targets)]
    return sorted(rows, key=lambda r: (-r[0], r[3]))


@pytest.mark.parametrize("mode", ["score", "end", "full"])
@pytest.mark.parametrize("algorithm", ["local", "global", "semiglobal"])
def test_search_matches_brute_force(backend, mode, algorithm):
    rng = np.random.default_rng(7)
    targets = random_proteins(rng, 150)
    # near-copies and exact duplicates make ties that must break by database order
    targets[10] = targets[20] = targets[3]
    queries = random_proteins(rng, 3, 5, 80) + [targets[3][5:60]]
    db = Database.from_sequences(targets, alphabet=BLOSUM62.alphabet)
    res = search(queries, db, BLOSUM62, top_k=12, mode=mode, algorithm=algorithm, backend=backend)
    assert len(res) == len(queries)
    for query, hits in zip(queries, res):
        want = brute_force(query, targets, BLOSUM62, algorithm)[:12]
        assert hits.scores.tolist() == [r[0] for r in want]
        assert hits.targets.tolist() == [r[3] for r in want]
        assert hits.names == [db.name(r[3]) for r in want]
        if mode == "score":
            assert hits.query_ends is None
        else:
            assert hits.query_ends.tolist() == [r[1] for r in want]
            assert hits.target_ends.tolist() == [r[2] for r in want]
        if mode == "full":
            for hit in hits:
                aln = hit.alignment
                assert aln.score == hit.score
                assert (aln.query_end, aln.target_end) == (hit.query_end, hit.target_end)
                assert aln.query_aligned.replace("-", "") == query[aln.query_start:aln.query_end]
                assert aln.target_aligned.replace("-", "") == \
                    targets[hit.target][aln.target_start:aln.target_end]


def test_ties_break_by_database_order(backend):
    targets = ["MKVLAW", "WWWW", "MKVLAW", "MKVLAW"]
    res = search(["MKVLAW"], targets, BLOSUM62, top_k=3, backend=backend)[0]
    assert res.targets.tolist() == [0, 2, 3]
    assert len(set(res.scores.tolist())) == 1


def test_top_k_larger_than_database(backend):
    res = search(["MKV"], ["MKV", "AAA"], BLOSUM62, top_k=50, backend=backend)[0]
    assert len(res) == 2
    assert next(iter(res)).name == res.names[0]


def test_empty_query_and_empty_target(backend):
    res = search(["", "MKV"], ["", "MKV"], BLOSUM62, top_k=2, mode="end", backend=backend)
    assert res[0].scores.tolist() == [0, 0]
    assert res[0].query_ends.tolist() == [0, 0]
    assert res[1].scores.tolist()[0] == int(BLOSUM62.matrix[BLOSUM62.encode("MKV")][:, BLOSUM62.encode("MKV")].trace())


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_top_k_must_be_positive_integer(bad):
    with pytest.raises(ValueError, match="top_k"):
        search(["MKV"], ["MKV"], BLOSUM62, top_k=bad)


def test_invalid_options_name_allowed_values():
    with pytest.raises(ValueError, match=r"invalid mode: 'fast'.*'score'"):
        search(["MKV"], ["MKV"], BLOSUM62, mode="fast")
    with pytest.raises(ValueError, match=r"invalid backend: 'tpu'"):
        search(["MKV"], ["MKV"], BLOSUM62, backend="tpu")
    with pytest.raises(ValueError, match=r"invalid algorithm"):
        search(["MKV"], ["MKV"], BLOSUM62, algorithm="fuzzy")


def test_database_argument_is_never_a_sequence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for missing in ("mydb", "ex.wa", tmp_path / "gone"):
        with pytest.raises(DatabaseError, match=f"{missing}: no such database or file"):
            search("HEAGAWGHEE", missing, BLOSUM62)
    (tmp_path / "db.fa").write_text(">t1\nPAWHEAE\n>t2\nHEAGAWGHEE\n")
    assert search("HEAGAWGHEE", "db.fa", BLOSUM62)[0].names == ["t2", "t1"]


def test_scoring_alphabet_must_match_database():
    dna = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    db = Database.from_sequences(["MKV"], alphabet=BLOSUM62.alphabet)
    with pytest.raises(ScoringError, match="alphabet"):
        search(["ACGT"], db, dna)


def test_asking_for_uncomputed_fields_raises():
    hits = search(["MKVLAW"], ["MKVLAW"], BLOSUM62, mode="score")[0]
    assert hits[0].query_end is None and hits[0].alignment is None
    from warpalign.errors import NotComputed
    import io

    from warpalign.formats import write_blast_tab
    with pytest.raises(NotComputed, match="mode='score'"):
        write_blast_tab([hits], io.StringIO())


def test_merge_combines_batches_exactly():
    rng = np.random.default_rng(3)
    targets = random_proteins(rng, 60, 10, 60)
    query = targets[0][:40]
    db_all = Database.from_sequences(targets, alphabet=BLOSUM62.alphabet)
    whole = search([query], db_all, BLOSUM62, top_k=8, mode="end")[0]
    a = search([query], targets[:30], BLOSUM62, top_k=8, mode="end")[0]
    b = search([query], targets[30:], BLOSUM62, top_k=8, mode="end")[0]
    b = type(b)(b.query_name, b.query_length, b.scores, b.targets + 30, b.names, b.mode,
                b.query_ends, b.target_ends)
    merged = a.merge(b, top_k=8)
    assert merged.scores.tolist() == whole.scores.tolist()
    assert merged.targets.tolist() == whole.targets.tolist()
    assert merged.target_ends.tolist() == whole.target_ends.tolist()


def test_chain_groups_rule():
    """How the CUDA backend splits a packed batch into query groups run at once (no device
    needed): the 20 standard queries in two groups on a whole database (pass tails), three
    once the longest target's chain would set the time; two short queries stay together
    (a group of one wastes half its rows); every index once, empty queries in group 0."""
    from warpalign._backends.cuda import config

    std = [144, 189, 222, 375, 464, 567, 657, 729, 850, 1000, 1500, 2005, 2504, 3005, 3564,
           4061, 4548, 4743, 5147, 5478]
    kp, smem = 27, 100 * 1024

    def sizes(lengths, share):
        groups = config.chain_groups(lengths, share, kp, smem)
        assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
        assert all(g == sorted(g) for g in groups)
        return [sum(lengths[i] for i in g) for g in groups]

    assert sizes(std, 0.40) == [20910, 20842]
    assert len(sizes(std, 1.6)) == 2 and len(sizes(std, 3.2)) == 3
    assert sizes([300, 400], 0.4) == [700] and sizes([300, 400], 1.2) == [700]
    assert len(sizes([300, 400], 50.0)) == 2
    assert config.chain_groups([0, 300, 0, 400], 50.0, kp, smem) == [[0, 2, 3], [1]]
    assert config.chain_groups([0, 0], 50.0, kp, smem) == [[0, 1]]
    assert config.chain_groups(std, 3.2, kp, smem, most=1) == [list(range(20))]
    # no more groups than streams, nor than boundary buffers fit in free device memory
    warps = 132 * config.BLOCKS_PER_SM * (config.BLOCK // 32)
    residues = 35213 * warps // 5                          # share 5: four groups wanted
    share = config.chain_share(35213, residues, 132)
    assert share == pytest.approx(5, rel=1e-6)

    def on_device(streams, free, buffers=0):
        return len(config.device_chain_groups(
            std, share, kp, smem, most=min(config.CHAIN_GROUPS, streams), buffers=buffers,
            residues=residues, free_bytes=lambda: config.MEMORY_RESERVE + free))

    assert on_device(2, 1 << 40) == 2
    assert on_device(4, 1 << 40) == 4
    assert on_device(4, 16 * residues) == 3
    assert on_device(4, 8 * residues) == 2
    assert on_device(4, 0) == 1
    assert on_device(4, 0, buffers=2) == 2                # two idle buffers there already
    assert on_device(4, 0, buffers=1) == 1


def test_pack_batches_fill_rule():
    """Which queries the CUDA backend's search loop packs together (no device needed):
    batches in input order of at most per_batch queries; a batch whose packed plan would
    be mostly padding (two very unequal queries), or whose profile does not fit shared
    memory, runs as single queries."""
    from warpalign._backends.cuda import config

    kp, smem = 25, 100 * 1024          # BLOSUM62's 24 letters + the padding letter
    assert config.pack_batches([400, 410, 390, 405], kp, 100, smem) == [[0, 1, 2, 3]]
    assert config.pack_batches([3000, 40], kp, 100, smem) == [[0], [1]]
    R, passes, _ = config.pack_plan([3000, 40], kp, smem)
    assert (3000 + 40) / (2 * passes * 32 * R) < config.PACK_MIN_FILL
    assert config.pack_batches([400, 410, 390, 405, 400], kp, 2, smem) == [[0, 1], [2, 3],
                                                                             [4]]
    assert config.pack_batches([400, 410], 10_000, 100, smem) == [[0], [1]]   # no room
    assert config.pack_batches([], kp, 100, smem) == []


def test_split_tail_rule():
    """A search reporting ends or alignments cuts its last packed batch short (no device
    needed): the last quarter of its queries a batch of their own, where there are several
    batches and both pieces pack; otherwise the batches as they were."""
    from warpalign._backends.cuda import config

    kp, smem = 25, 100 * 1024
    lengths = [300 + (7 * i) % 40 for i in range(40)]
    batches = config.pack_batches(lengths, kp, 16, smem)
    assert batches == [list(range(0, 16)), list(range(16, 32)), list(range(32, 40))]
    split = config.split_tail(batches, lengths, kp, smem)
    assert split == batches[:2] + [list(range(32, 38)), [38, 39]]
    assert sorted(i for b in split for i in b) == list(range(40))
    assert config.split_tail(batches[:1], lengths, kp, smem) == batches[:1]   # one batch
    assert config.split_tail([[0, 1], [2, 3]], lengths, kp, smem) == [[0, 1], [2, 3]]
    assert config.split_tail([[0, 1, 2], [3], [4]], lengths, kp, smem) == [[0, 1, 2], [3], [4]]
    uneven = [300] * 16 + [3000, 3000, 3000, 3000, 3000, 3000, 40, 40]
    got = config.split_tail(config.pack_batches(uneven, kp, 16, smem), uneven, kp, smem)
    assert got == [list(range(16)), list(range(16, 24))]      # [..., 40, 40] would not pack


def test_resident_budget_rule():
    """Residues the CUDA backend keeps resident by default (no device needed): free memory
    less the reserve and the per-sequence bytes, over the bytes per residue; never below 0."""
    from warpalign._backends.cuda import config

    budget = config.resident_budget

    r = config.RESIDENT_RESERVE
    assert budget(r + 12 * config.RESIDENT_BYTES, 0) == 12
    assert budget(r + 12 * config.RESIDENT_BYTES + 3 * config.SEQUENCE_BYTES, 3) == 12
    assert budget(r - 1, 0) == 0 and budget(0, 10) == 0
    assert budget(80 << 30, 516_371) > 186_717_374 * 20   # Swiss-Prot stays resident on an H100


def test_split_targets_for_devices():
    """The multi-GPU split (no device needed): every target in exactly one part with its
    own codes, longest first to the part with the fewest residues (+1 per sequence)."""
    from warpalign._backends import TargetSet
    from warpalign._backends.cuda import split_targets

    rng = np.random.default_rng(5)
    seqs = [rng.integers(0, 20, n).astype(np.uint8) for n in (50, 10, 40, 30, 20, 5, 7, 0)]
    parts = split_targets(TargetSet.from_list(seqs), 3)
    assert sorted(int(i) for ids, _ in parts for i in ids) == list(range(len(seqs)))
    for ids, ts in parts:
        assert list(ids) == sorted(ids)
        for k, i in enumerate(ids):
            np.testing.assert_array_equal(ts.codes[ts.offsets[k]:ts.offsets[k + 1]], seqs[i])
    assert [list(ids) for ids, _ in parts] == [[0, 6], [1, 2, 5], [3, 4, 7]]


@pytest.mark.parametrize("count", [2, 3, 4])
def test_split_ids_is_the_greedy_balance_and_gather_copies_every_part(count):
    """split_ids gives every part the targets of the greedy scan it replaced (longest
    first, ties in index order, each to the part with the fewest residues + sequences,
    ties to the lowest part) length by length: the same number of each length, so the
    same loads; a part's targets of one length are one block of the run (in index order,
    the parts' blocks in part order), so a set sorted by length splits into one run of
    consecutive ids per length and part. gather_targets copies each part's codes exactly
    (runs of consecutive ids, a long target, empty targets)."""
    from warpalign._backends import TargetSet
    from warpalign._backends.cuda.handles import gather_targets, split_ids

    rng = np.random.default_rng(count)
    lengths = np.concatenate([rng.integers(0, 400, 20_000), [0, 0, 5_000_000],
                              rng.choice([7, 7, 7, 50], 3_000)])
    rng.shuffle(lengths)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    codes = rng.integers(0, 20, int(offsets[-1])).astype(np.uint8)
    targets = TargetSet(codes, offsets)
    part, load = np.empty(len(lengths), np.int64), [0] * count
    for i in np.argsort(-lengths, kind="stable").tolist():
        d = min(range(count), key=load.__getitem__)
        part[i] = d
        load[d] += int(lengths[i]) + 1
    got = split_ids(targets, count)
    assert sorted(np.concatenate(got).tolist()) == list(range(len(lengths)))
    for d, ids in enumerate(got):
        assert ids.tolist() == sorted(ids.tolist())
        np.testing.assert_array_equal(np.sort(lengths[ids]), np.sort(lengths[part == d]))
    owner = np.empty(len(lengths), np.int64)
    for d, ids in enumerate(got):
        owner[ids] = d
    for n in np.unique(lengths).tolist():       # each length's run: blocks in part order
        run = owner[np.flatnonzero(lengths == n)]
        assert run.tolist() == sorted(run.tolist())
    # sorted by length (as a database is): one run of consecutive ids per length and part
    ranked = np.sort(lengths)
    by_length = TargetSet(codes, np.concatenate([[0], np.cumsum(ranked)]))
    for ids in split_ids(by_length, count):
        runs = 1 + int(np.count_nonzero(np.diff(ids) != 1))
        assert runs <= len(np.unique(ranked[ids]))
    assert len(gather_targets(targets, np.zeros(0, np.int64)).codes) == 0
    for ids in got:
        ts = gather_targets(targets, ids)
        np.testing.assert_array_equal(np.diff(ts.offsets), lengths[ids])
        want = np.concatenate([codes[offsets[i]:offsets[i + 1]] for i in ids])
        np.testing.assert_array_equal(ts.codes, want)


def test_candidates_laid_flat_for_the_end_cells_and_back():
    """laid_flat lays each query's Candidates end to end (ids int64, all n targets where a
    Candidates has none, scores int64, query indices ascending, empty queries too);
    with_ends hands each query back its slice of the end cells, scores and ids as given."""
    from warpalign._backends.base import Candidates
    from warpalign._backends.cuda.handles import laid_flat, with_ends

    cands = [Candidates(np.array([5, 3], np.int32), None, None, 1, np.array([7, 2])),
             Candidates(np.zeros(0, np.int32), None, None, 0, np.zeros(0, np.int64)),
             Candidates(np.array([4, 4, 9], np.int32), None, None, 2, None)]
    bounds, ids, scores, query = laid_flat(cands, 3)
    assert bounds == [0, 2, 2, 5]
    assert ids.dtype == scores.dtype == np.int64
    assert ids.tolist() == [7, 2, 0, 1, 2] and scores.tolist() == [5, 3, 4, 4, 9]
    assert query.tolist() == [0, 0, 2, 2, 2]
    qe, te = np.arange(5, dtype=np.int32), np.arange(10, 15, dtype=np.int32)
    got = with_ends(cands, bounds, qe, te)
    assert [g.query_ends.tolist() for g in got] == [[0, 1], [], [2, 3, 4]]
    assert [g.target_ends.tolist() for g in got] == [[10, 11], [], [12, 13, 14]]
    assert [g.saturated for g in got] == [1, 0, 2] and got[2].ids is None
    assert got[0].scores is cands[0].scores
    empty = laid_flat([])
    assert empty[0] == [0] and empty[1].size == empty[2].size == empty[3].size == 0


def test_parallel_starts_each_call_as_it_is_taken_and_raises_after_all_end():
    """multi.parallel: a device's thread starts as soon as its call is taken (the caller
    makes the next one meanwhile, as _prepare_multi gathers each part's codes); the first
    error comes back once every started call has ended, an error of the iterable too."""
    import threading
    import time

    from warpalign._backends.cuda.multi import parallel

    log, lock = [], threading.Lock()

    def made(k):
        with lock:
            log.append(("made", k))
        time.sleep(0.05)          # the started thread logs meanwhile
        return k

    def run(k):
        with lock:
            log.append(("run", k))

    parallel(lambda k=k: run(k) for k in (made(j) for j in range(3)))
    assert log == [("made", 0), ("run", 0), ("made", 1), ("run", 1), ("made", 2), ("run", 2)]
    ended = []

    def slow_then_fail():
        time.sleep(0.05)
        ended.append(1)
        raise KeyError("device 1")

    with pytest.raises(KeyError, match="device 1"):
        parallel([slow_then_fail, lambda: ended.append(2)])
    assert sorted(ended) == [1, 2]

    def calls():
        yield slow_then_fail
        raise ValueError("no part 2")

    ended.clear()
    with pytest.raises(ValueError, match="no part 2"):
        parallel(calls())
    assert ended == [1]            # the started call ended before the error came back


def _model_cut(threads, rng):
    """``device_cut`` for topk.cut without a device: top_select's NumPy model
    (``threads`` groups) on the stacked score rows."""
    from warpalign._backends.cuda import config

    def device_cut(rows, top_k):
        cap = config.select_cap(top_k)
        counts, hits = top_select(np.stack(rows), top_k, cap, threads, rng)
        return hits, counts, cap

    return device_cut


def test_top_k_cut_of_device_results():
    """topk.cut (the cut after the results: a packed batch with saturated entries,
    queries scanned one by one) on NumPy with top_select's model: every target scoring at
    least the k-th best, ids ascending, ties kept, each query's saturated count kept;
    empty queries (None) give every target at 0; top_k above config.SELECT_MAX_K goes
    query by query (the device cut is not asked)."""
    from warpalign._backends.cuda import config, topk

    rng = np.random.default_rng(9)
    model = _model_cut(64, rng)
    for n in (5, 40, 64, 3 * 64 + 7, 40 * 64 + 3):
        for top_k in (1, 3, 10, config.SELECT_MAX_K + 44):
            if top_k >= n:
                continue
            asked = []

            def device_cut(rows, top_k=top_k, asked=asked):
                asked.append(len(rows))
                return model(rows, top_k)

            rows = [rng.integers(0, hi, n).astype(np.int32) for hi in (3, 50, 10 ** 6)]
            rows.append(np.zeros(n, np.int32))                       # every target tied
            got = [(r, None, None, k) for k, r in enumerate(rows)]
            got.insert(2, None)                                      # an empty query
            out = topk.cut(np, got, n, top_k, device_cut)
            assert asked == ([] if top_k > config.SELECT_MAX_K else [len(rows)])
            assert len(out) == len(got)
            assert out[2].ids.tolist() == list(range(n)) and not out[2].scores.any()
            for res, c in zip(got, out):
                if res is None:
                    continue
                r, nsat = res[0], res[3]
                kth = np.sort(r)[::-1][top_k - 1]
                want = np.flatnonzero(r >= kth)
                assert c.ids.tolist() == want.tolist(), (n, top_k)
                assert c.scores.tolist() == r[want].tolist() and c.saturated == nsat
    assert topk.cut(np, [None], 10, 3, model)[0].ids.tolist() == list(range(10))


def test_packed_top_k_cut_from_the_kernel_output():
    """topk.packed_cut on top_select's output (NumPy model; no device needed): every
    target scoring at least the k-th best, ids ascending, ties kept; rows past the cap
    (all tied) are cut on their own; rows whose group maxima tie heavily; fewer targets
    than groups; queries spread over groups, rows in group order."""
    from warpalign._backends.cuda import config, topk

    rng = np.random.default_rng(11)
    T = 64                                   # the model's threads (the kernel has 1024)
    for n in (5, 40, T, 3 * T + 7, 40 * T + 3):
        for top_k in (1, 3, 10):
            if top_k >= n:
                continue
            cap = config.select_cap(top_k)
            rows = [rng.integers(0, hi, n) for hi in (3, 50, 10 ** 6)]
            rows.append(np.zeros(n, np.int64))                        # every target tied
            rows.append(np.repeat(rng.integers(0, 40, -(-n // T)), T)[:n])  # tied maxima
            S = np.stack(rows).astype(np.int32)
            counts, hits = top_select(S, top_k, cap, T, rng)
            groups = [[0, 3], [1, 2, 4]]     # two query groups: rows in group order
            order = [qi for sub in groups for qi in sub]
            out = topk.packed_cut(np, len(S), groups, [S[sub].ravel() for sub in groups], n,
                                  top_k, hits[order], counts[order], cap)
            for r, c in zip(S, out):
                kth = np.sort(r)[::-1][top_k - 1]
                want = np.flatnonzero(r >= kth)
                assert c.ids.tolist() == want.tolist(), (n, top_k)
                assert c.scores.tolist() == r[want].tolist() and c.saturated == 0
            assert counts.max() > cap or n <= cap    # the all-tied row took the other path


def test_picks_of_many_queries_rank_by_score_then_database_index_for_any_order():
    """search._picks_together (the hits of many queries in one sort of a packed key) with
    an ``order`` naming a few sequences of a larger database, as a Dask shard's does: each
    query's top k by score, then database index, none taken from another query (session
    36: the index field sized by len(order) spilled into the score and query fields)."""
    from warpalign._backends.base import Candidates
    from warpalign.search import _picks_together

    rng = np.random.default_rng(36)
    order = np.sort(rng.choice(10 ** 6, 300, replace=False)).astype(np.int64)   # 300 of 1 M
    batches, want = [], []
    for _ in range(7):
        ids = rng.permutation(300)[:40]
        scores = rng.integers(50, 58, 40).astype(np.int32)    # close: the index decides ties
        batches.append(Candidates(scores, None, None, 0, ids))
        ranked = sorted(zip(-scores.astype(np.int64), order[ids]))[:10]
        want.append(([-s for s, _ in ranked], [int(t) for _, t in ranked]))
    got = _picks_together(batches, order, 10)
    assert [(p[0].tolist(), p[1].tolist()) for p in got] == want
