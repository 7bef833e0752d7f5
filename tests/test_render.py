"""The array renderer (``_backends/render.py``) and the columnar result (issue 20).

``render_paths`` against the one-path definition (``cpu.traceback.path_score``) and
Numba's ``render_many`` on random paths and on the paths ``align_codes`` traces for every
algorithm; ``align_pairs_table`` and ``AlignmentTable`` against ``align_codes`` (the
oracle the traceback tests tie to tests/reference.py); ``score_pairs(mode="full")``'s
table: indexing, iteration, equality, columns, to_pandas.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from reference import dp
from warpalign import Scoring, score_pairs
from warpalign._backends.cpu.render import render_many
from warpalign._backends.cpu.traceback import path_score
from warpalign._backends.render import cigar_text, render_paths
from warpalign.errors import TracebackError
from warpalign.results import Alignment, AlignmentTable, _pair_counts
from warpalign.traceback import align_codes, align_pairs, align_pairs_table, cigar_string

AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
SYMBOLS = {id(s): np.frombuffer(s.alphabet.symbols.encode().ljust(256, b"\0"), np.uint8)
           for s in (AFFINE, BLOSUM)}


def _random_paths(rng, count, size):
    """Random op strings (empty ones too, long runs, every op first) with segments that
    fit them exactly."""
    lens = rng.integers(0, 40, count)
    lens[::7] = 0
    opoff = np.zeros(count + 1, np.int64)
    np.cumsum(lens, out=opoff[1:])
    ops = rng.choice(np.array([0, 1, 2], np.uint8), int(opoff[-1]), p=[0.6, 0.2, 0.2])
    ops[opoff[1:-1][::5]] = 1
    ops = np.where(rng.random(ops.size) < 0.3, np.roll(ops, 1), ops).astype(np.uint8)
    takes_q, takes_t = ops != 2, ops != 1
    cq = np.concatenate([[0], np.cumsum(takes_q)])[opoff]
    ct = np.concatenate([[0], np.cumsum(takes_t)])[opoff]
    qcat = rng.integers(0, size, int(cq[-1])).astype(np.uint8)
    tcat = rng.integers(0, size, int(ct[-1])).astype(np.uint8)
    return ops, opoff, qcat, cq, tcat, ct


@pytest.mark.parametrize("scoring", [AFFINE, BLOSUM], ids=["affine", "blosum"])
def test_render_paths_equals_path_score_and_render_many(scoring):
    rng = np.random.default_rng(17)
    size = 20 if scoring is BLOSUM else 4
    ops, opoff, qcat, qoff, tcat, toff = _random_paths(rng, 300, size)
    sym = SYMBOLS[id(scoring)]
    args = (scoring.matrix, scoring.gap_open, scoring.gap_extend)
    got = render_paths(ops, opoff, qcat, qoff[:-1], tcat, toff[:-1], *args, sym)
    scores, used_q, used_t, qa, ta, lengths, kinds, runoff = render_many(
        ops, opoff, qcat, qoff, tcat, toff, *args, sym)
    assert got.scores.tolist() == scores.tolist()
    assert got.used_q.tolist() == used_q.tolist() and got.used_t.tolist() == used_t.tolist()
    assert got.query.tolist() == qa.tolist() and got.target.tolist() == ta.tolist()
    text = got.cigar.tobytes().decode()
    for k in range(len(opoff) - 1):
        path = ops[opoff[k]:opoff[k + 1]]
        s, qe, te = path_score(path, qcat, qoff[k], tcat, toff[k], *args)
        assert (int(s), int(qe) - qoff[k], int(te) - toff[k]) == (
            got.scores[k], got.used_q[k], got.used_t[k])
        assert text[got.cigoff[k]:got.cigoff[k + 1]] == cigar_string(path)
        a, b = got.query[opoff[k]:opoff[k + 1]], got.target[opoff[k]:opoff[k + 1]]
        assert got.matches[k] == int(((a == b) & (a != 45)).sum())


def test_render_paths_clamps_an_inconsistent_path():
    """A path longer than its segment reads clamped positions (never outside) and
    reports what it consumed, so the caller sees it."""
    ops = np.zeros(5, np.uint8)
    got = render_paths(ops, np.array([0, 5]), np.zeros(3, np.uint8), np.array([0]),
                       np.zeros(3, np.uint8), np.array([0]), AFFINE.matrix, 8, 1,
                       SYMBOLS[id(AFFINE)])
    assert got.used_q.tolist() == [5] and got.scores.tolist() == [25]


def test_cigar_text_of_long_runs():
    lengths = np.array([1, 9, 10, 99, 100, 12345, 10 ** 12, 7])
    kinds = np.array([0, 1, 2, 0, 1, 2, 0, 1], np.uint8)
    text, off = cigar_text(lengths, kinds, np.array([0, 3, 3, 8]))
    text = text.tobytes().decode()
    assert [text[off[k]:off[k + 1]] for k in range(3)] == [
        "1M9I10D", "", "99M100I12345D1000000000000M7I"]


def _pairs(rng, count, size):
    pairs = []
    for k in range(count):
        m, n = int(rng.integers(0, 50)), int(rng.integers(0, 100))
        if k % 4 == 0:
            q, t = np.zeros(m, np.uint8), np.zeros(n, np.uint8)        # ties everywhere
        elif k % 4 == 1:
            q = rng.integers(0, size, m).astype(np.uint8)
            t = np.concatenate([rng.integers(0, size, n).astype(np.uint8), q[::-1], q])
        else:
            q = rng.integers(0, size, m).astype(np.uint8)
            t = rng.integers(0, size, n).astype(np.uint8)
        pairs.append((q, t))
    return pairs


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
@pytest.mark.parametrize("scoring", [AFFINE, BLOSUM], ids=["affine", "blosum"])
def test_align_pairs_table_equals_align_codes(scoring, algorithm):
    rng = np.random.default_rng(5)
    pairs = _pairs(rng, 50, 20 if scoring is BLOSUM else 4)
    want = [align_codes(q, t, scoring, algorithm) for q, t in pairs]
    qcat = np.concatenate([q for q, _ in pairs])
    tcat = np.concatenate([t for _, t in pairs])
    ql, tl = np.array([len(q) for q, _ in pairs]), np.array([len(t) for _, t in pairs])
    qs, ts = np.cumsum(ql) - ql, np.cumsum(tl) - tl
    table = align_pairs_table(qcat, qs, ql, tcat, ts, tl, scoring, algorithm, threads=1)
    assert table == want
    assert list(table) == want == align_pairs(pairs, scoring, algorithm, threads=1)
    assert table.identities.tolist() == [a.identity for a in want]
    assert table.lengths.tolist() == [a.length for a in want]
    assert table.cigars() == [a.cigar for a in want]
    # an alignment taken from the table carries its counts from the columns: as its
    # strings and CIGAR give them
    for a in table:
        assert a.length == sum(n for n, _ in a.operations())
        assert (a.matches, a.mismatches) == _pair_counts(a.query_aligned, a.target_aligned)
    # a subset in another order reads the same codes in place
    pick = np.arange(len(pairs))[::-3]
    sub = align_pairs_table(qcat, qs[pick], ql[pick], tcat, ts[pick], tl[pick], scoring,
                            algorithm, threads=1)
    assert sub == [want[k] for k in pick]


def test_align_pairs_table_rejects_bad_input():
    s = AFFINE
    with pytest.raises(ValueError, match="pair 1, position 2"):
        align_pairs_table(np.array([0, 1, 0, 0, 200], np.uint8), [0, 2], [2, 3],
                          np.zeros(4, np.uint8), [0, 2], [2, 2], s)
    with pytest.raises(ValueError, match="reach outside the 4 codes"):
        align_pairs_table(np.zeros(4, np.uint8), [0, 2], [2, 3], np.zeros(4, np.uint8),
                          [0, 2], [2, 2], s)
    with pytest.raises(ValueError, match="one entry per pair"):
        align_pairs_table(np.zeros(4, np.uint8), [0], [2, 2], np.zeros(4, np.uint8),
                          [0, 2], [2, 2], s)


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
@pytest.mark.parametrize("scoring", [AFFINE, BLOSUM], ids=["affine", "blosum"])
def test_align_pairs_table_given_ends_equal_its_own_end_pass(scoring, algorithm):
    """Ends given (as score_pairs' pair kernel gives them on the GPU): no end pass, the same
    table. The ends are tests/reference.py's DP (DESIGN.md's tie rule), the pairs those of
    the table test (all-equal pairs: ties in many cells; repeats; empty sides)."""
    rng = np.random.default_rng(6)
    pairs = _pairs(rng, 24, 20 if scoring is BLOSUM else 4)
    qcat = np.concatenate([q for q, _ in pairs])
    tcat = np.concatenate([t for _, t in pairs])
    ql, tl = np.array([len(q) for q, _ in pairs]), np.array([len(t) for _, t in pairs])
    qs, ts = np.cumsum(ql) - ql, np.cumsum(tl) - tl
    args = (qcat, qs, ql, tcat, ts, tl, scoring, algorithm)
    ends = np.array([dp(q.tolist(), t.tolist(), scoring.matrix.tolist(), scoring.gap_open,
                        scoring.gap_extend, algorithm) for q, t in pairs], np.int64)
    timings: dict = {}
    given = align_pairs_table(*args, threads=1, ends=ends, timings=timings)
    assert "tb_ends" not in timings and "tb_starts" in timings
    assert given == align_pairs_table(*args, threads=1)
    assert given.scores.tolist() == ends[:, 0].tolist()
    keep = ends[:, 0] != 0 if algorithm == "local" else slice(None)
    assert given.query_ends[keep].tolist() == ends[keep, 1].tolist()
    assert given.target_ends[keep].tolist() == ends[keep, 2].tolist()


def test_align_pairs_table_rejects_wrong_given_ends():
    """An end cell no alignment of the given score ends at, or a score an alignment ending
    there beats, is an error, never a table; so are ends outside their pair, of the wrong
    shape, or off the corner (global) or the last row (semiglobal)."""
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    q, t = s.encode("TACTGAC"), s.encode("GAACTGAGGTT")
    args = (q, [0], [7], t, [0], [11], s)
    assert align_pairs_table(*args, ends=[[10, 6, 7]]).cigars() == ["5M"]   # ACTGA
    for wrong in ([10, 6, 6], [10, 5, 7], [11, 6, 7], [9, 6, 7], [4, 2, 2]):
        with pytest.raises(TracebackError):
            align_pairs_table(*args, ends=[wrong])
    for wrong, word in (([[10, 6]], "shape"), ([[10, 8, 7]], "no local end"),
                        ([[10, 6, 12]], "no local end"), ([[-1, 0, 0]], "no local end"),
                        ([[10.0, 6, 7]], "integer")):
        with pytest.raises(ValueError, match=word):
            align_pairs_table(*args, ends=wrong)
    with pytest.raises(ValueError, match="no global end of a 7 x 11 pair"):
        align_pairs_table(*args, "global", ends=[[0, 7, 10]])
    with pytest.raises(ValueError, match="no semiglobal end"):
        align_pairs_table(*args, "semiglobal", ends=[[0, 6, 10]])
    # a local score of 0 has no cell: its row is empty whatever the cell says
    assert align_pairs_table(*args, ends=[[0, 3, 3]])[0].cigar == ""


def test_score_pairs_full_table():
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    xs = ["TACTG", "AAAA", "ACGTACGT", ""]
    ys = ["GAACTGA", "CCCC", "ACGAACGT", "ACGT"]
    res = score_pairs(xs, ys, s, mode="full", backend="cpu")
    table = res.alignments
    assert isinstance(table, AlignmentTable) and len(table) == 4
    want = [align_codes(s.encode(x), s.encode(y), s) for x, y in zip(xs, ys)]
    assert table == want and table[-1] == want[-1] and table[1:3] == want[1:3]
    # a row's Alignment is made with its fields set directly: every field, none forgotten
    assert {f.name for f in dataclasses.fields(Alignment)} <= set(vars(table[0]))
    assert {f.name for f in dataclasses.fields(Alignment)} <= set(vars(next(iter(table))))
    assert table[1] == Alignment(score=0, query_start=0, query_end=0, target_start=0,
                                 target_end=0, cigar="", query_aligned="", target_aligned="")
    assert table.scores.tolist() == res.scores.tolist()
    assert table.query_starts.tolist() == [a.query_start for a in want]
    assert table.target_ends.tolist() == [a.target_end for a in want]
    assert table.cigar_text == "".join(a.cigar for a in want)
    with pytest.raises(IndexError):
        table[4]
    with pytest.raises(ValueError):
        table.scores[0] = 1
    # batches merge into one table
    parts = score_pairs(xs, ys, s, mode="full", backend="cpu", batch_residues=12)
    assert parts.alignments == table
    assert AlignmentTable.from_alignments(want) == table
    picked = score_pairs(xs, ys, s, mode="full", backend="cpu", threshold=5)
    assert picked.indices.tolist() == [0, 2]
    assert picked.alignments == [want[0], want[2]]


def test_alignment_table_decodes_its_aligned_text_when_first_read(monkeypatch):
    """A table made with the aligned strings as byte arrays (align_pairs_table's, on the
    GPU views of the pinned buffer they came back in) keeps them undecoded until first
    read, counted against LAZY_TEXT_BYTES while it lives; reading both (rows, text, ==)
    or dropping the table gives them back; past the bound a table decodes at once; many
    threads reading one table see the same rows; a pickle carries the text."""
    import gc
    import pickle
    import threading
    from warpalign import results
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    rng = np.random.default_rng(30)
    xs = ["".join(rng.choice(list("ACGT"), 40)) for _ in range(60)]
    ys = ["".join(rng.choice(list("ACGT"), 90)) for _ in range(60)]
    want = score_pairs(xs, ys, s, mode="full", backend="cpu").alignments
    cols = {k: getattr(want, k) for k in ("scores", "query_starts", "query_ends",
                                          "target_starts", "target_ends", "identities",
                                          "lengths", "cigar_text", "cigar_offsets",
                                          "aligned_offsets")}
    qb = np.frombuffer(want.query_text.encode("latin-1"), np.uint8)
    tb = np.frombuffer(want.target_text.encode("latin-1"), np.uint8)
    size = qb.nbytes + tb.nbytes

    def lazy():
        return AlignmentTable(**cols, query_text=qb, target_text=tb)

    base = results._held_bytes[0]
    table = lazy()
    assert results._held_bytes[0] == base + size
    assert not isinstance(table._texts["query_text"], str)
    assert table[3] == want[3]                     # a row reads both texts
    assert results._held_bytes[0] == base
    assert table == want and pickle.loads(pickle.dumps(table)) == want
    dropped = lazy()
    assert results._held_bytes[0] == base + size
    del dropped
    gc.collect()
    assert results._held_bytes[0] == base
    shared, rows = lazy(), {}

    def read(k):
        rows[k] = list(shared)
    threads = [threading.Thread(target=read, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == list(want) for r in rows.values())
    assert results._held_bytes[0] == base
    copied = pickle.loads(pickle.dumps(lazy()))
    assert copied == want and copied._held is None and results._held_bytes[0] == base
    monkeypatch.setattr(results, "LAZY_TEXT_BYTES", base + size - 1)
    eager = lazy()
    assert isinstance(eager._texts["query_text"], str) and eager._held is None
    assert results._held_bytes[0] == base and eager == want


def test_alignment_table_taking_its_columns_copies_none():
    """``AlignmentTable._taking`` (the traceback's own fresh arrays): the same table as the
    constructor's, its columns the arrays given (no copies), read-only; the constructor
    copies (a caller's array changed later leaves its table as it was)."""
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    want = score_pairs(["TACTG", "ACGT", "GGA"], ["GAACTGA", "ACGT", "TTT"], s, mode="full",
                       backend="cpu").alignments
    ints = {k: np.array(getattr(want, k)) for k in AlignmentTable._INTS}
    texts = dict(identities=np.array(want.identities), cigar_text=want.cigar_text,
                 query_text=want.query_text, target_text=want.target_text)
    taken = AlignmentTable._taking(**ints, **texts)
    copied = AlignmentTable(**ints, **texts)
    assert taken == copied == want and taken.algorithm == "local"
    for k, given in ints.items():
        assert getattr(taken, k) is given and not given.flags.writeable
        assert not np.shares_memory(getattr(copied, k), given)
    with pytest.raises(ValueError, match="different lengths"):
        AlignmentTable._taking(**dict(ints, scores=ints["scores"][:2]), **texts)


def test_score_pairs_full_takes_its_ends_from_the_pair_ends_engine():
    """Where the backend has a ``pair_ends`` engine (the GPU's pair kernel), mode full
    (local) asks it for the end cells of the reported pairs (the others' scores given as
    0) and runs no end pass; an engine that finds no cell for a score is an internal
    error; global alignments keep the end pass. Here a stand-in engine on the CPU row."""
    from warpalign._backends.cpu.pairwise import score_end
    from warpalign._backends.registry import using
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    xs = ["TACTG", "AAAA", "ACGTACGT", "", "GATTACA"]
    ys = ["GAACTGA", "CCCC", "ACGAACGT", "ACGT", "TTGATTACAGG"]
    asked = []

    def ends(xcodes, xoff, ycodes, yoff, scoring, scores, *, largest=None):
        asked.append(scores.tolist())
        got = [score_end(xcodes[xoff[k]:xoff[k + 1]], ycodes[yoff[k]:yoff[k + 1]],
                         scoring.matrix, scoring.gap_open, scoring.gap_extend, 0)
               if scores[k] else (0, 0, 0) for k in range(len(scores))]
        return np.array(got, np.int64), {"ends": 0.5}

    plain = score_pairs(xs, ys, s, mode="full", backend="cpu", threshold=9)
    with using("pair_ends", "cpu", "wordwise", ends):
        got = score_pairs(xs, ys, s, mode="full", backend="cpu", threshold=9)
        assert asked == [[0, 0, 13, 0, 14]]
        assert got.alignments == plain.alignments and got.indices.tolist() == [2, 4]
        assert got.timings["ends"] == 0.5 and "tb_ends" not in got.timings
        glob = score_pairs(xs, ys, s, mode="full", backend="cpu", algorithm="global")
        assert len(asked) == 1 and "tb_ends" in glob.timings

    def wrong(*args, **kwargs):
        raise ValueError("pair 2: score 13 given, but its best local score is 12")

    with using("pair_ends", "cpu", "wordwise", wrong):
        with pytest.raises(RuntimeError, match="internal error: .* pair 2: score 13 given"):
            score_pairs(xs, ys, s, mode="full", backend="cpu")


def test_score_pairs_full_takes_scores_and_ends_from_one_fused_pass():
    """Where the backend has a ``pairs_full`` engine for the method (the GPU's word-wise
    kernels, issue 20), mode full of every pair (no threshold, local) takes scores,
    saturated pairs and end cells from it in one call and asks no ``pair_ends`` engine;
    a saturated pair (its score and end from the pass discarded) is rescored on the host
    and its end taken from the rescoring. With a threshold, another algorithm or method,
    today's path runs. A pass that finds no end for a score of its own is an internal
    error. Here stand-in engines on the CPU rows."""
    from warpalign._backends.cpu.pairwise import score_end
    from warpalign._backends.registry import using
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    xs = ["TACTG", "AAAA", "ACGTACGT", "", "GATTACA"]
    ys = ["GAACTGA", "CCCC", "ACGAACGT", "ACGT", "TTGATTACAGG"]
    fused, ended = [], []

    def exact(xcodes, xoff, ycodes, yoff, k):
        return score_end(xcodes[xoff[k]:xoff[k + 1]], ycodes[yoff[k]:yoff[k + 1]], s.matrix,
                         s.gap_open, s.gap_extend, 0)

    def one_pass(xcodes, xoff, ycodes, yoff, scoring, *, largest=None):
        fused.append(len(xoff) - 1)
        found = np.array([exact(xcodes, xoff, ycodes, yoff, k) for k in range(len(xoff) - 1)],
                         np.int64)
        scores = found[:, 0].astype(np.int32)
        last = len(xoff) - 2                  # saturated: a wrong score, no end
        scores[last] = 7
        found[last] = 0
        return scores, np.array([last]), found, {"swa": 0.25, "ends": 0.5}

    def ends(xcodes, xoff, ycodes, yoff, scoring, scores, *, largest=None):
        ended.append(scores.tolist())
        return np.array([exact(xcodes, xoff, ycodes, yoff, k) if scores[k] else (0, 0, 0)
                         for k in range(len(scores))], np.int64), {"ends": 0.125}

    plain = score_pairs(xs, ys, s, mode="full", backend="cpu")
    with using("pairs_full", "cpu", "wordwise", one_pass), \
            using("pair_ends", "cpu", "wordwise", ends):
        got = score_pairs(xs, ys, s, mode="full", backend="cpu", method="wordwise")
        assert fused == [5] and ended == []
        assert got.scores.tolist() == plain.scores.tolist() == [8, 0, 13, 0, 14]
        assert got.alignments == plain.alignments and got.saturated == 1
        assert got.timings["ends"] == 0.5 and got.timings["swa"] == 0.25
        assert "rescore" in got.timings and "tb_ends" not in got.timings
        parts = score_pairs(xs, ys, s, mode="full", backend="cpu", method="wordwise",
                            batch_residues=20)            # one pass per batch
        assert fused[1:] == [2, 2, 1] and parts.alignments == plain.alignments
        assert parts.saturated == 3
        del fused[1:]
        picked = score_pairs(xs, ys, s, mode="full", backend="cpu", threshold=9)
        assert fused == [5] and ended == [[0, 0, 13, 0, 14]]
        assert picked.alignments == [plain.alignments[2], plain.alignments[4]]
        glob = score_pairs(xs, ys, s, mode="full", backend="cpu", algorithm="global")
        assert fused == [5] and "tb_ends" in glob.timings
        bits = score_pairs(xs, ys, s, mode="full", backend="cpu", method="bitsliced")
        assert fused == [5] and len(ended) == 2 and bits.alignments == plain.alignments

    def wrong(*args, **kwargs):
        raise ValueError("pair 2: score 13 given, but its best local score is 12")

    with using("pairs_full", "cpu", "wordwise", wrong):
        with pytest.raises(RuntimeError, match="internal error: .* pair 2: score 13 given"):
            score_pairs(xs, ys, s, mode="full", backend="cpu", method="wordwise")


def test_alignment_table_to_pandas():
    pytest.importorskip("pandas")
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    table = score_pairs(["TACTG", "ACGTACGT"], ["GAACTGA", "ACGAACGT"], s, mode="full",
                        backend="cpu").alignments
    df = table.to_pandas()
    assert df["cigar"].tolist() == table.cigars()
    assert df["identity"].tolist() == [a.identity for a in table]
    assert df["query_start"].tolist() == table.query_starts.tolist()


# ------------------------------------------------------------- render.cu, emulated
# The GPU renderer's host side (cuda/render.py: buffers, launch arguments, the CIGAR
# offsets, the one read back) on a stand-in device: NumPy arrays, and render.cu's two
# kernels transcribed lane by lane (a warp per path, chunks of 32 ops: ballots are boolean
# vectors, popcounts sums), so their run and position logic is checked here too; the
# kernels themselves run in tests/test_cuda_render.py.

def _code(cat, size, at):
    return 0 if size <= 0 else int(cat[min(max(at, 0), size - 1)])


def _chunk(ops, hi, base, before):
    """One chunk's lanes: ops (-2 past the path), next ops (-1 past it), run heads."""
    p = base + np.arange(32)
    inside = p < hi
    op = np.where(inside, ops[np.minimum(p, hi - 1)], -2).astype(np.int64)
    after = np.where(p + 1 < hi, ops[np.minimum(p + 1, hi - 1)], -1)
    prev = np.concatenate([[before], op[:-1]])
    return p, inside, op, after, prev, inside & (op != prev)


def _run_start(heads, lane, base, open_):
    mine = np.flatnonzero(heads[:lane + 1])
    return base + int(mine[-1]) if mine.size else open_


def _emulated_walk(grid, block, args):
    (ops, opoff, n, qcat, qsize, qpos, tcat, tsize, tpos, matrix, K, go, ge, symbols,
     scores, used_q, used_t, matches, query, target, text) = args
    assert block[0] % 32 == 0 and grid[0] * block[0] >= 32 * int(n)
    assert matrix.dtype == np.int32 and all(a.dtype == np.int64 for a in (opoff, qpos, tpos))
    flat = matrix.ravel()
    for path in range(int(n)):
        lo, hi = int(opoff[path]), int(opoff[path + 1])
        i, j, open_, before = int(qpos[path]), int(tpos[path]), lo, -1
        score = chars = same = 0
        for base in range(lo, hi, 32):
            p, inside, op, after, prev, heads = _chunk(ops, hi, base, before)
            takes_q, takes_t = inside & (op != 2), inside & (op != 1)
            qi, tj = i + np.cumsum(takes_q) - takes_q, j + np.cumsum(takes_t) - takes_t
            for lane in np.flatnonzero(inside).tolist():
                qc = _code(qcat, int(qsize), int(qi[lane]))
                tc = _code(tcat, int(tsize), int(tj[lane]))
                qb = symbols[qc] if op[lane] != 2 else 45
                tb = symbols[tc] if op[lane] != 1 else 45
                if op[lane] == 0:
                    score += int(flat[min(qc * int(K) + tc, flat.size - 1)])
                else:
                    score -= int(ge) if op[lane] == prev[lane] else int(go)
                same += int(qb == tb and qb != 45 and tb != 45)
                query[p[lane]], target[p[lane]] = qb, tb
                if op[lane] != after[lane]:
                    chars += 1 + len(str(int(p[lane]) - _run_start(heads, lane, base, open_) + 1))
            if heads.any():
                open_ = base + int(np.flatnonzero(heads)[-1])
            i, j, before = i + int(takes_q.sum()), j + int(takes_t.sum()), int(op[31])
        scores[path], used_q[path], used_t[path] = score, i - int(qpos[path]), j - int(tpos[path])
        matches[path], text[path] = same, chars


def _emulated_cigar(grid, block, args):
    ops, opoff, n, cigoff, cigar = args
    assert block[0] % 32 == 0 and grid[0] * block[0] >= 32 * int(n)
    for path in range(int(n)):
        lo, hi = int(opoff[path]), int(opoff[path + 1])
        at, open_, before = int(cigoff[path]), lo, -1
        for base in range(lo, hi, 32):
            p, inside, op, after, prev, heads = _chunk(ops, hi, base, before)
            words = [b""] * 32
            for lane in np.flatnonzero(inside & (op != after)).tolist():
                run = int(p[lane]) - _run_start(heads, lane, base, open_) + 1
                words[lane] = str(run).encode() + b"MID"[op[lane]:op[lane] + 1]
            end = np.cumsum([len(w) for w in words])       # the warp's inclusive scan
            for lane, word in enumerate(words):
                if word:
                    lo_at = at + int(end[lane]) - len(word)
                    cigar[lo_at:lo_at + len(word)] = np.frombuffer(word, np.uint8)
            at += int(end[31])
            if heads.any():
                open_ = base + int(np.flatnonzero(heads)[-1])
            before = int(op[31])


@pytest.mark.parametrize("short", [0, 7], ids=["exact", "past-the-end"])
@pytest.mark.parametrize("scoring", [AFFINE, BLOSUM], ids=["dna", "protein"])
def test_gpu_render_host_side_on_an_emulated_device(scoring, short):
    """cuda/render.py's render_device with render.cu emulated lane by lane: the same
    Rendered as render_paths, field by field (dtypes and lengths included), for empty,
    all-gap, one-op and long-run paths (1000M, 12345I, 100000D) and paths read past the
    codes' ends; no paths, and only empty paths (no CIGAR launch)."""
    from types import SimpleNamespace

    from reference import render_cases
    from warpalign._backends.cuda.loader import emulated
    from warpalign._backends.cuda.render import render_device
    launched = []

    def modules(filename, names, defines=()):
        assert filename == "render.cu"
        kernels = {"render_walk": _emulated_walk, "render_cigar": _emulated_cigar}
        return SimpleNamespace(get_function=lambda name: (
            lambda grid, block, args: (launched.append(name), kernels[name](grid, block, args))))

    rng = np.random.default_rng(23)
    size = 20 if scoring is BLOSUM else 4
    sym = SYMBOLS[id(scoring)]
    args = (scoring.matrix, scoring.gap_open, scoring.gap_extend)
    cases = render_cases(rng, size, short=short)
    with emulated(np, modules):
        for case in cases:
            launched.clear()
            want = render_paths(*case, *args, sym)
            got = render_device(np, *case, np.ascontiguousarray(scoring.matrix, np.int32),
                                *args[1:], sym)
            for field, a, b in zip(want._fields, want, got):
                assert a.dtype == b.dtype and a.shape == b.shape, field
                assert np.array_equal(a, b), field
            assert launched == (["render_walk"] if len(case[1]) > 1 else []) + (
                ["render_cigar"] if len(case[0]) else [])
    first = render_paths(*cases[0], *args, sym)
    text = first.cigar.tobytes().decode()
    assert "1000M" in text and "12345I" in text and "100000D3M" in text
    # the case holds what it says: with codes cut off, the last path reads past the end
    _, _, qcat, qpos, _, _ = cases[0]
    assert (qpos[-1] + first.used_q[-1] > qcat.size) == bool(short)
