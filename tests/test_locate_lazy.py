"""locate's lazy seams (``locate_core``, "Two passes, lazily"): with both strands and one
hit, a strand whose bound is below the other strand's exact best keeps its seams unscored;
the hits equal the exact DP's and the eager two passes' on every input."""

from __future__ import annotations

import numpy as np
import pytest

from reference import mutate_dna
from warpalign import Scoring
from warpalign.alphabet import reverse_complement
from warpalign.locate import locate_encoded, locate_many_encoded
from warpalign.locate_core import Search, unseen_bound
from warpalign.spans import first_pass_span, span_from

DNA = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)


@pytest.mark.parametrize("scoring", [DNA, Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2),
                                     Scoring(match=1, mismatch=-1, gap_open=3, gap_extend=3)])
def test_unseen_bound_is_below_the_least_score_that_fits(scoring):
    rng = np.random.default_rng(0)
    for _ in range(300):
        m = int(rng.integers(1, 300))
        sq = int(rng.integers(0, 3 * m + 1))
        span = int(rng.integers(0, 2 * m + 40))
        got = unseen_bound(sq, m, scoring, span)
        fits = [x for x in range(1, sq + 2)
                if (w := span_from(sq, m, scoring, x)) is not None and w <= span]
        assert got == min(fits) - 1


def test_unseen_bound_of_a_150_symbol_read_under_paper_002s_scoring():
    q = DNA.encode("ACGT" * 37 + "AC")
    s1 = first_pass_span(q, DNA)
    assert (s1, unseen_bound(150, 150, DNA, s1)) == (184, 111)


def _reference_and_reads(seed, count=24):
    """A random reference and reads of 150: two in three copied from it with 3%
    substitutions and an indel, half of them reverse-complemented; the rest random."""
    rng = np.random.default_rng(seed)
    text = "".join(rng.choice(list("ACGT"), 60_000))
    reads = []
    for k in range(count):
        at = int(rng.integers(0, len(text) - 150))
        read = (mutate_dna(rng, text[at:at + 150], 0.03, 1) if k % 3
                else "".join(rng.choice(list("ACGT"), 150)))
        codes = DNA.encode(read)
        reads.append(reverse_complement(codes, DNA.alphabet) if k % 2 else codes)
    return DNA.encode(text), reads


@pytest.mark.parametrize("mode", ["score", "end", "full"])
def test_lazy_seams_give_the_dp_hits_and_skip_the_beaten_strands_seams(monkeypatch, mode):
    ref, reads = _reference_and_reads(1)
    closed = []
    close = Search.close_seams
    monkeypatch.setattr(Search, "close_seams",
                        lambda self: (closed.append(1), close(self))[1])
    got = [locate_encoded(r, ["ref"], [ref], DNA, mode=mode, backend="cpu") for r in reads]
    lazy_closes = len(closed)
    want = [locate_encoded(r, ["ref"], [ref], DNA, mode=mode, backend="cpu", method="dp")
            for r in reads]
    assert got == want
    # every read is searched on two strands; a read found on one (two in three here) leaves
    # the other strand's seams unscored
    assert lazy_closes < 2 * len(reads) - len(reads) // 2
    many = list(locate_many_encoded(reads, ["ref"], [ref], DNA, mode=mode, backend="cpu"))
    assert many == want


def test_a_strand_that_can_still_win_has_its_seams_closed(monkeypatch):
    """Random reads (no planted copy): no strand's best beats the other's bound, so both
    strands' seams are scored where the windows need them, and the hits stay the DP's."""
    rng = np.random.default_rng(5)
    ref = DNA.encode("".join(rng.choice(list("ACGT"), 40_000)))
    reads = [DNA.encode("".join(rng.choice(list("ACGT"), 150))) for _ in range(8)]
    got = [locate_encoded(r, ["ref"], [ref], DNA, mode="end", backend="cpu") for r in reads]
    want = [locate_encoded(r, ["ref"], [ref], DNA, mode="end", backend="cpu", method="dp")
            for r in reads]
    assert got == want


def test_a_seam_crossing_alignment_on_the_weaker_strand_still_wins():
    """Adversarial: the + strand holds an exact copy of the read's first 101 symbols (101)
    inside a window; the - strand a copy of the whole read with 42 symbols inserted (103),
    192 symbols long, placed across a first-pass seam sticking out 4 and 5 symbols on
    either side of the windows' overlap, so that the - strand's first pass sees 99 at
    most. The unseen bound (111) keeps the - strand open: its seams are scored and its
    alignment is the hit."""
    from warpalign.locate_core import plan_search
    rng = np.random.default_rng(11)
    read = "".join(rng.choice(list("ACGT"), 150))
    text = list("".join(rng.choice(list("ACGT"), 60_000)))
    q = DNA.encode(read)
    plan = plan_search(q, [DNA.encode("".join(text))], DNA, 1, "score", "auto", "cpu",
                       None, None)
    assert plan.two_pass and plan.span == 184
    p = plan.pieces
    seam = int(p[1, 1])                      # where the second window starts
    assert int(p[0, 2]) - seam == 183        # windows overlap by span - 1
    gapped = read[:75] + "".join(rng.choice(list("ACGT"), 42)) + read[75:]
    minus = DNA.alphabet.decode(reverse_complement(DNA.encode(gapped), DNA.alphabet))
    text[seam - 4:seam - 4 + 192] = minus    # [seam - 4, seam + 188): no window holds it
    far = int(p[len(p) // 2, 1]) + 1000
    text[far:far + 101] = read[:101]
    ref = DNA.encode("".join(text))
    search = plan_search(reverse_complement(q, DNA.alphabet), [ref], DNA, 1, "score", "auto",
                         "cpu", None, None).search(lazy=True)
    assert search.seams_open and search.piece_best() < 101 <= search.head_bound()
    got = locate_encoded(q, ["ref"], [ref], DNA, mode="full", backend="cpu")
    want = locate_encoded(q, ["ref"], [ref], DNA, mode="full", backend="cpu", method="dp")
    assert got == want
    assert (got.strand, got.target_start) == ("-", seam - 4) and got.score > 101
    assert got.target_end - got.target_start > plan.span     # held by no first-pass window


def test_a_cut_left_unscored_scores_itself_or_takes_the_cells_given():
    """Search.cut(score=False): the clipped pieces wait (unscored rows), and either the next
    head scores them itself or put_unscored takes their exact cells: the same next hit as
    an eager cut."""
    from warpalign.locate_core import make_search
    ref, reads = _reference_and_reads(3, count=6)
    for q in reads:
        def fresh():
            return make_search(q, [ref], DNA, 2, "end", "auto", "cpu", None, None)
        eager, alone, given = fresh(), fresh(), fresh()
        for search in (eager, alone, given):
            hit = search.pop()
            search.cut(hit, score=search is eager)
        assert eager.unscored() is None and alone.unscored() is not None
        rows = given.unscored()
        given.put_unscored(given.scorer([ref[lo:hi] for _, lo, hi in rows.tolist()]))
        want = eager.pop()
        assert alone.pop() == want and alone.unscored() is None     # scored itself
        assert given.pop() == want


def _cut_as_before(p, best, r, seg_lo, seg_hi, ts, te, fresh_best):
    """Search._cut's table before session 41 (boolean rows, masked writes): the oracle of
    the sliced one. Returns (pieces, best, unscored rows)."""
    p = p.copy()
    same = (p[:, 0] == r) & (p[:, 3] == seg_lo)
    left = same & (p[:, 2] <= ts)
    right = same & (p[:, 1] >= te)
    p[left, 4] = ts
    p[right, 3] = te
    hit = same & ~left & ~right
    new = []
    for _, lo, hi, _, _ in p[hit].tolist():
        if lo < ts:
            new.append((r, lo, ts, seg_lo, ts))
        if hi > te:
            new.append((r, te, hi, te, seg_hi))
    fresh = np.array(new, np.int64).reshape(-1, 5)
    return (np.concatenate([p[~hit], fresh]),
            np.concatenate([best[~hit], fresh_best(fresh)]), len(fresh))


@pytest.mark.parametrize("seed", range(4))
def test_cut_keeps_the_pieces_table_of_before(seed):
    # cuts at random places of random free segments (three records, windows overlapping,
    # several cuts in a row, some clipping two windows): the same pieces, in the same
    # order, the same cells and the same unscored rows as the table the cut made before
    rng = np.random.default_rng(seed)

    def scored(p):
        return np.stack([(p[:, 1] * 7 + p[:, 2]) % 97, p[:, 1] % 5, p[:, 2] - 1], axis=1)

    class Table(Search):
        def __init__(self, p):          # only the table: no query, no scorer
            self.p, self.best, self._unscored = p, scored(p), None

        def _score(self, p):
            return scored(p)

    parts = []
    for r, n in enumerate((50_000, 7_000, 30_000)):
        lo = np.arange(0, n - 300, 900)
        part = np.stack([np.full(lo.size, r), lo, np.minimum(lo + 1_000, n),
                         np.zeros(lo.size, np.int64), np.full(lo.size, n)], axis=1)
        parts.append(part)
    table = np.concatenate(parts).astype(np.int64)
    table.setflags(write=False)               # as the shared piece tables are
    for score in (True, False):
        search = Table(table)
        p, best = table, scored(table)
        for _ in range(25):
            k = int(rng.integers(len(p)))
            r, lo, hi, seg_lo, seg_hi = (int(v) for v in p[k])
            ts = int(rng.integers(max(lo, seg_lo), min(hi, seg_hi)))
            te = int(rng.integers(ts + 1, min(seg_hi, ts + 2_500) + 1))
            p, best, fresh = _cut_as_before(p, best, r, seg_lo, seg_hi, ts, te,
                                            scored if score else
                                            lambda f: np.zeros((len(f), 3), np.int64))
            search._cut(r, seg_lo, seg_hi, ts, te, score)
            assert np.array_equal(search.p, p) and np.array_equal(search.best, best)
            if not score and fresh:
                assert search._unscored.tolist() == list(range(len(p) - fresh, len(p)))
                search._score_unscored()       # as the next head() would
                best = best.copy()
                best[len(p) - fresh:] = scored(p[len(p) - fresh:])
        assert table.flags.writeable is False and len(p) > len(table) - 30
