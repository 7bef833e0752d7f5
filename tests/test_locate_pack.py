"""Several reads per windows launch (issue 22, item 2), on the CPU: the packing plan
(``_backends/cuda/window_plan.py``), a model of the packed band's DP (a head row takes the
top boundary), ``windows.py``'s packed launch on an emulated device, and the many-reads
path packing its reads' strands with every read's hits its own call's."""

from __future__ import annotations

import contextlib
from types import SimpleNamespace

import numpy as np
import pytest
from reference import mutate_dna, packed_queries
from test_locate import EmulatedCupy, FakeGpuWindows, gpu_windows_as, random_dna
from test_locate_reads import PAPER_002, PAPER_004, cut_reads, phix

from warpalign.scoring import Scoring

from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign._backends.cpu.traceback import CpuTraceback
from warpalign._backends.cuda import window_plan as wp
from warpalign._backends.registry import using
from warpalign.locate import PACK_READS, locate, locate_many_encoded
from warpalign.locate_core import plan_search
from warpalign.spans import query_score_bound


def test_pack_plan():
    assert wp.plan(150) == (16, 16, 1)
    assert wp.pack_capacity(150) == 3                 # 3 x 10 lanes of 16 rows in 32
    r, g, lanes, heads = wp.pack_plan(150, 3)
    assert (r, g, lanes) == (16, 32, 10) and heads == 1 | 1 << 10 | 1 << 20
    assert wp.pack_plan(150, 2) == (16, 32, 10, 1 | 1 << 10)
    assert wp.pack_plan(150, 1) == (16, 16, 16, 1)    # one query: plan's R and G
    assert wp.pack_plan(40, 6) == (8, 32, 5, sum(1 << 5 * k for k in range(6)))
    assert wp.pack_capacity(40) == 6 and wp.pack_plan(8, 2)[1] == 8
    for m in (257, 300, 512, 1000, 0):              # more than 16 lanes, or empty: alone
        assert wp.pack_capacity(m) == 1
    with pytest.raises(ValueError, match="do not fit one band"):
        wp.pack_plan(150, 4)
    with pytest.raises(ValueError, match="fills 2 bands"):
        wp.pack_plan(600, 1)
    with pytest.raises(ValueError, match="invalid count"):
        wp.pack_plan(150, 0)


def test_pack_rows_and_profile():
    s = PAPER_002
    rng = np.random.default_rng(1)
    qs = [rng.integers(0, 4, 150).astype(np.uint8) for _ in range(3)]
    r, g, lanes, _ = wp.pack_plan(150, 3)
    k = s.matrix.shape[0]
    rows = wp.pack_rows(qs, k, r, lanes, g)
    assert len(rows) == g * r == 512
    for i, q in enumerate(qs):
        assert np.array_equal(rows[160 * i:160 * i + 150], q)
        assert (rows[160 * i + 150:160 * (i + 1)] == k).all()
    assert (rows[480:] == k).all()
    # one query's rows give profile()'s profile
    one = wp.pack_rows(qs[:1], k, 16, 16, 16)
    assert np.array_equal(wp.profile_rows(one, s, 16, 16, 1), wp.profile(qs[0], s, 16, 16, 1))
    with pytest.raises(ValueError, match="does not fit"):
        wp.pack_rows([np.zeros(161, np.uint8)], k, r, lanes, g)


def band_dp(rows, heads, r, t, scoring):
    """Per head (query) the best local score of the band's rows against ``t`` as the kernel
    runs them: one DP over every row, a head lane's first row taking the top boundary
    (H = 0, no vertical gap), pad rows (code K) scoring min(0, min S); the maxima over each
    query's lanes (up to the next head)."""
    m = scoring.matrix
    k = m.shape[0]
    pad = min(0, int(m.min()))
    go, ge = scoring.gap_open, scoring.gap_extend
    neg = -(1 << 30)
    h_up = [0] * (len(t) + 1)
    f_up = [neg] * (len(t) + 1)
    best, starts = [], [lane * r for lane in range(32) if heads >> lane & 1]
    for i, c in enumerate(rows.tolist()):
        if i in starts:
            h_up, f_up = [0] * (len(t) + 1), [neg] * (len(t) + 1)
            best.append(0)
        h, e = [0] * (len(t) + 1), neg
        f = [neg] * (len(t) + 1)
        for j in range(1, len(t) + 1):
            s = pad if c == k else int(m[c, t[j - 1]])
            e = max(e - ge, h[j - 1] - go)
            f[j] = max(f_up[j] - ge, h_up[j] - go)
            h[j] = max(0, h_up[j - 1] + s, e, f[j])
            best[-1] = max(best[-1], h[j])
        h_up, f_up = h, f
    return best


BLOSUM62 = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


@pytest.mark.parametrize("s", [PAPER_002, PAPER_004, BLOSUM62], ids=["002", "004", "blosum62"])
def test_packed_band_model_equals_each_query_alone(s):
    """The kernel's packed band, modelled row by row: each query's maximum over its lanes
    (its pad rows included, pad score min(0, min S): -4 for BLOSUM62) is its own best
    local score."""
    rng = np.random.default_rng(7)
    protein = s is BLOSUM62
    t = (rng.integers(0, 20, 90).astype(np.uint8) if protein
         else s.encode(random_dna(rng, 90)))
    for m, count in ((40, 6), (70, 3), (150, 3), (150, 2), (23, 4)):
        qs = []
        for _ in range(count):
            q = rng.integers(0, 20 if protein else 4, m).astype(np.uint8)
            q[:30] = t[20:20 + min(30, m)][:min(30, m)]          # something to find
            if not protein and rng.random() < 0.5:
                q[rng.integers(0, m)] = s.encode("N")[0]        # a read with N
            qs.append(q)
        r, g, lanes, heads = wp.pack_plan(m, count)
        rows = wp.pack_rows(qs, s.matrix.shape[0], r, lanes, g)
        want = [int(score_end(q, t, s.matrix, s.gap_open, s.gap_extend, LOCAL)[0]) for q in qs]
        assert band_dp(rows, heads, r, t.tolist(), s) == want


@contextlib.contextmanager
def _emulated_windows(qs, s):
    """``windows.py`` (yielded) on test_locate's emulated device, its kernels scoring the
    packed queries ``qs`` with ``s``; the module's caches cleared before and after."""
    from warpalign._backends.cuda import windows as gw
    from warpalign._backends.cuda.loader import emulated
    emu = EmulatedCupy(qs[0], s, flag_at=10**9)
    emu.queries = qs
    gw.clear_cache()
    with emulated(emu, lambda f, names, defines=(): SimpleNamespace(get_function=emu.kernel)):
        try:
            yield gw, emu
        finally:
            gw.clear_cache()


def test_packed_launch_plumbing_on_an_emulated_device():
    """windows.py's packed launch (one profile for three queries, heads, every query's
    scores and best ends at its offsets, flagged windows per query) on the emulated device
    of test_locate: each query's cells equal its launch alone."""
    s = PAPER_002
    rng = np.random.default_rng(65)
    ref = random_dna(rng, 12_000)
    qs = [s.encode(mutate_dna(rng, ref[a:a + 150], 0.05, 0)) for a in (700, 5_000, 9_100)]
    codes = s.encode(ref)
    codes.setflags(write=False)
    sq = [query_score_bound(q, s) for q in qs]   # packed queries share one score bound
    assert len(set(sq)) == 1 and {len(q) for q in qs} == {150}
    lo = np.arange(0, 11_000, 1_000)
    length = np.full(len(lo), 1_300)
    length[-1] = len(codes) - lo[-1]
    with _emulated_windows(qs, s) as (gw, emu):
        dev = gw.resident([codes])
        pack = gw.DevicePack(qs, s, sq=sq[0])
        assert pack.count == 3 and pack.g == 32
        cells, flagged, _ = gw.window_cells_packed(dev, pack, s, lo, length, best_ends=True)
        for q, c, f in zip(qs, cells, flagged):
            exact = np.array([score_end(q, codes[a:a + n], s.matrix, s.gap_open,
                                        s.gap_extend, LOCAL) for a, n in zip(lo, length)])
            assert np.array_equal(c[:, 0], exact[:, 0]) and len(f) == 0
            tied = exact[:, 0] == exact[:, 0].max()
            assert np.array_equal(c[tied], exact[tied]) and (c[~tied, 1:] == -1).all()
        assert ("pick", 1) in emu.launches
        emu.flag_at = int(cells[1][:, 0].max())   # query 1's best window: flagged
        cells, flagged, _ = gw.window_cells_packed(dev, pack, s, lo, length, best_ends=True)
        assert [len(f) for f in flagged] == [int((c[:, 0] >= emu.flag_at).sum())
                                             for c in cells]
        assert len(flagged[1]) >= 1 and all((c[:, 1:] == -1).all() for c in cells)


@pytest.mark.parametrize("s", [PAPER_002, PAPER_004, BLOSUM62], ids=["002", "004", "blosum62"])
@pytest.mark.parametrize("m", [8, 65, 150, 256])
def test_packed_queries_on_an_emulated_device(s, m):
    """test_cuda_locate_windows.py::test_packed_queries_equal_each_alone's queries and
    windows through windows.py on the emulated device (the profile of the packed rows, the
    packed columns, every query's scores and tied ends at its offsets): the queries share
    one score bound for every scoring (BLOSUM62's near copies of different pieces do not:
    the device test asserted one bound and so failed for BLOSUM62 at every length)."""
    rng = np.random.default_rng(900 + m)
    protein = s is BLOSUM62
    ref = rng.integers(0, 20 if protein else 4, 30_000).astype(np.uint8)
    ref.setflags(write=False)
    lo = np.r_[np.arange(0, 28_000, 1_700), 29_990, 5]
    length = np.minimum(np.r_[np.full(len(lo) - 2, 2_000), 10, 0], len(ref) - lo)
    for count in sorted({2, wp.pack_capacity(m)}):
        qs = packed_queries(rng, ref, m, count, protein=protein,
                            n_code=None if protein else int(s.encode("N")[0]))
        sq = {query_score_bound(q, s) for q in qs}
        assert len(sq) == 1 and len({q.tobytes() for q in qs}) > 1
        with _emulated_windows(qs, s) as (gw, _):
            dev = gw.resident([ref])
            pack = gw.DevicePack(qs, s, sq=sq.pop())
            cells, flagged, _ = gw.window_cells_packed(dev, pack, s, lo, length,
                                                       best_ends=True)
        for q, c, f in zip(qs, cells, flagged):
            exact = np.array([score_end(q, ref[a:a + n], s.matrix, s.gap_open, s.gap_extend,
                                        LOCAL) for a, n in zip(lo, length)])
            assert len(f) == 0 and np.array_equal(c[:, 0], exact[:, 0])
            known = c[:, 1] >= 0
            assert np.array_equal(c[known], exact[known])
            assert known.any() and (c[known, 0] == exact[:, 0].max()).all()


def test_pack_score_bound_must_cover_every_query():
    """DevicePack's ``sq`` bounds the best windows' sub-windows of every query: one below a
    query's own bound is refused (naming the query), a larger one is taken."""
    from warpalign._backends.cuda import windows as gw
    from warpalign._backends.cuda.loader import emulated
    s = BLOSUM62
    rng = np.random.default_rng(3)
    qs = [rng.integers(0, 20, 40).astype(np.uint8) for _ in range(3)]
    bounds = [query_score_bound(q, s) for q in qs]
    emu = EmulatedCupy(qs[0], s, flag_at=10**9)
    with emulated(emu, lambda f, names, defines=(): SimpleNamespace(get_function=emu.kernel)):
        worst = int(np.argmax(bounds))
        with pytest.raises(ValueError, match=f"packed query {worst} has score bound"):
            gw.DevicePack(qs, s, sq=max(bounds) - 1)
        assert gw.DevicePack(qs, s, sq=max(bounds)).count == 3


class PackingFake(FakeGpuWindows):
    """FakeGpuWindows packing as the device does (window_plan.pack_capacity)."""

    def pack_capacity(self, m):
        return wp.pack_capacity(m)


class FewWindowsFake(PackingFake):
    """A device that a few windows fill (phiX's windows then longer than four overlaps):
    half as many for packed launches, whose items are whole warps."""

    @staticmethod
    def wanted_windows(m, packed=False):
        return 4 if packed else 8


@pytest.mark.parametrize("mode", ["score", "end", "full"])
def test_many_reads_pack_their_strands(mode):
    """The many-reads path packs reads' strands (equal length and score bound) three per
    launch at 150 bp; reads with N, of other lengths, longer than a band's rows, and a
    batch of one read score alone; every read's hits equal the CPU dp method's."""
    rng = np.random.default_rng(224)
    ref = phix()
    reads = cut_reads(rng, ref, 2 * PACK_READS, 150)
    reads[3] = reads[3][:60] + "N" + reads[3][61:]                 # another score bound
    reads += [ref[1000:1070], ref[2000:2300]]                      # 70 bp; 300 bp: alone
    codes = PAPER_002.encode(ref)
    codes.setflags(write=False)
    with gpu_windows_as(FewWindowsFake()) as fake, \
            using("traceback", "cuda", "auto", CpuTraceback()):
        for top in (1, 2):
            got = list(locate_many_encoded([PAPER_002.encode(r) for r in reads], ["phiX"],
                                           [codes], PAPER_002, top=top, mode=mode,
                                           backend="cuda"))
            want = [locate(r, {"phiX": ref}, PAPER_002, top=top, mode=mode, method="dp",
                           backend="cpu") for r in reads]
            assert got == want
        assert fake.packed and max(fake.packed) == 3 and min(fake.packed) >= 2
        # packed launches cut the reference into as many windows as fill the device with
        # whole-warp items (the fake: 4 where one query's launch takes 8), longer ones
        single = plan_search(PAPER_002.encode(reads[0]), [codes], PAPER_002, 1, mode, "auto",
                             "cuda", None, None)
        packed = plan_search(PAPER_002.encode(reads[0]), [codes], PAPER_002, 1, mode, "auto",
                             "cuda", None, None, packed=True)
        assert packed.width > single.width
        assert len(packed.pieces) in fake.packed_windows
        assert len(single.pieces) not in fake.packed_windows
        # one hit with ends: every packed part's ends in one call, none on the launches
        assert (fake.ends_many > 0) == (mode != "score")
        fake.packed = []
        one = locate([reads[0]], {"phiX": ref}, PAPER_002, mode=mode, backend="cuda")
        assert one == [locate(reads[0], {"phiX": ref}, PAPER_002, mode=mode, method="dp",
                              backend="cpu")]
        assert fake.packed == [2]   # one read: its two strands in one launch


@pytest.mark.parametrize("mode", ["score", "full"])
def test_many_reads_second_hit_with_the_ends_in_one_call(mode, monkeypatch):
    """SAM's second score (second=True) on the many-reads path with packing: the first
    hit's ends come from the one ends call, the pieces its cut leaves are scored in one
    call too (no piece scored read by read), the second score is the dp's next hit."""
    from warpalign.locate_core import Search
    alone = []
    score = Search._score
    monkeypatch.setattr(Search, "_score", lambda self, p: (alone.append(len(p)), score(self, p))[1])
    rng = np.random.default_rng(225)
    ref = phix()
    reads = cut_reads(rng, ref, 2 * PACK_READS, 150)
    codes = PAPER_002.encode(ref)
    codes.setflags(write=False)
    with gpu_windows_as(PackingFake()) as fake, \
            using("traceback", "cuda", "auto", CpuTraceback()):
        got = list(locate_many_encoded([PAPER_002.encode(r) for r in reads], ["phiX"], [codes],
                                       PAPER_002, mode=mode, backend="cuda", second=True))
    assert fake.ends_many > 0 and max(fake.packed) == 3 and alone == []
    for (hit, second), read in zip(got, reads):
        want = locate(read, {"phiX": ref}, PAPER_002, top=2, mode=mode, method="dp",
                      backend="cpu")
        assert hit == want[0] and second == (want[1].score if len(want) > 1 else 0)
