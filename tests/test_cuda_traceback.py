"""GPU traceback of many alignments (issue 20): every start and path equals the CPU's.

``align_many`` with the ``traceback`` job's CUDA engine (``cuda/traceback.py``) against
the same call with the CPU engine and against ``align_codes`` (one pair at a time): same
score, coordinates, CIGAR and aligned strings, for local, semiglobal and global
alignment; random, related, repetitive (ties everywhere) and real pairs; linear, affine
and zero gaps; a forced Myers–Miller route (``max_full_cells`` small) and the 35,213 x
5,478 pair the issue names. Then ``search``/``score_pairs``/``locate`` in mode full on
the GPU against the CPU backend. Every test is cuda-marked.
"""

from __future__ import annotations

import numpy as np
import pytest

from warpalign import Scoring, search
from warpalign.traceback import align_codes, align_many

pytestmark = pytest.mark.cuda

AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
LINEAR = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
ZERO_GAP = Scoring(match=1, mismatch=-1, gap_open=0, gap_extend=0)
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


@pytest.fixture(scope="module")
def gpu(traceback_gpu):
    return traceback_gpu


def _related(rng, m, size, rate=0.1):
    a = rng.integers(0, size, m).astype(np.uint8)
    b = a.copy()
    out = []
    for x in b:
        r = rng.random()
        if r < rate / 3:
            continue                                   # deletion
        out.append(x if r > rate else rng.integers(0, size))
        if rng.random() < rate / 3:
            out.extend(rng.integers(0, size, rng.integers(1, 6)))
    return a, np.array(out, np.uint8)


def _pairs(rng, size, count, longest):
    pairs = []
    for k in range(count):
        kind = k % 4
        m, n = int(rng.integers(1, longest)), int(rng.integers(1, 2 * longest))
        if kind == 0:
            q, t = rng.integers(0, size, m).astype(np.uint8), rng.integers(0, size, n).astype(np.uint8)
        elif kind == 1:
            q, t = _related(rng, m, size)
            t = np.concatenate([rng.integers(0, size, n // 3).astype(np.uint8), t,
                                rng.integers(0, size, n // 3).astype(np.uint8)])
        elif kind == 2:                                 # tandem repeats: ties everywhere
            unit = rng.integers(0, size, int(rng.integers(1, 4))).astype(np.uint8)
            q = np.resize(unit, m)
            t = np.resize(unit, n)
        else:                                           # one letter: every path ties
            q, t = np.zeros(m, np.uint8), np.zeros(n, np.uint8)
        pairs.append((q, t))
    for m, n in ((1, 1), (1, 40), (40, 1), (31, 33), (32, 32), (33, 31), (64, 97), (65, 200)):
        pairs.append((rng.integers(0, size, m).astype(np.uint8), rng.integers(0, size, n).astype(np.uint8)))
    return pairs


def _jobs(pairs, scoring, algorithm):
    refs = [align_codes(q, t, scoring, algorithm) for q, t in pairs]
    jobs = [(q, t, a.score, a.query_end, a.target_end) for (q, t), a in zip(pairs, refs)]
    return jobs, refs


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, ZERO_GAP, BLOSUM], ids=["affine", "linear", "zero", "blosum"])
def test_gpu_equals_cpu(gpu, scoring, algorithm):
    rng = np.random.default_rng(hash((algorithm, scoring.gap_open, scoring.gap_extend)) % 2 ** 32)
    size = 20 if scoring is BLOSUM else 4
    jobs, refs = _jobs(_pairs(rng, size, 120, 150), scoring, algorithm)
    got = align_many(jobs, scoring, algorithm, engine=gpu)
    cpu = align_many(jobs, scoring, algorithm)
    assert got == refs
    assert cpu == refs


def test_one_engine_on_two_devices(gpu):
    """The shared engine traces on whichever device is current: its device copies of the
    scoring's tables are made per device (a copy made on device 0 and read by device 1's
    kernels would be another GPU's memory)."""
    import cupy
    if cupy.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs 2 CUDA devices")
    rng = np.random.default_rng(17)
    jobs, refs = _jobs(_pairs(rng, 20, 40, 120), BLOSUM, "local")
    for device in (0, 1, 0):
        with cupy.cuda.Device(device):
            assert align_many(jobs, BLOSUM, "local", engine=gpu) == refs
            ends = gpu.ends([(q, t) for q, t, *_ in jobs], BLOSUM, 0)
            assert ends.tolist() == [[a.score, a.query_end, a.target_end] for a in refs]


def test_forced_myers_miller(gpu):
    """Segments over max_full_cells take the long-pair engine's splits, whose leaves are
    traced by the CPU rule: the same alignment as the CPU with the same limit."""
    rng = np.random.default_rng(7)
    pairs = [_related(rng, 3000, 4, 0.15) for _ in range(3)]
    for algorithm in ("local", "global"):
        refs = [align_codes(q, t, AFFINE, algorithm, max_full_cells=1 << 16) for q, t in pairs]
        jobs = [(q, t, a.score, a.query_end, a.target_end) for (q, t), a in zip(pairs, refs)]
        assert align_many(jobs, AFFINE, algorithm, engine=gpu, max_full_cells=1 << 16) == refs


def test_big_protein_pair(gpu):
    """The issue's 35,213 x 5,478 target/query pair (related sequences): traced on the GPU,
    equal to the CPU's alignment."""
    rng = np.random.default_rng(11)
    q, t = _related(rng, 5478, 20, 0.2)
    t = np.concatenate([rng.integers(0, 20, 15000).astype(np.uint8), t,
                        rng.integers(0, 20, 35213 - 15000 - len(t)).astype(np.uint8)])
    assert len(t) == 35213
    ref = align_codes(q, t, BLOSUM)
    got = align_many([(q, t, ref.score, ref.query_end, ref.target_end)], BLOSUM, engine=gpu)
    assert got == [ref]


def test_search_full_gpu_equals_cpu(gpu):
    from warpalign.data import example_database_path, example_queries_path
    s = BLOSUM
    for k in (10, 200):
        cpu = search(example_queries_path(), example_database_path(), s, top_k=k, mode="full",
                     backend="cpu")
        gpu = search(example_queries_path(), example_database_path(), s, top_k=k, mode="full",
                     backend="cuda")
        for a, b in zip(cpu, gpu):
            assert a.targets.tolist() == b.targets.tolist()
            assert a.alignments == b.alignments


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, BLOSUM], ids=["affine", "linear", "blosum"])
def test_gpu_ends_equal_score_end(gpu, scoring, algorithm):
    """tb_end: score and end cell of each pair under DESIGN.md's tie rule (ties placed on
    purpose: repeats, one-letter runs), as cpu.pairwise.score_end."""
    from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
    rng = np.random.default_rng(3)
    size = 20 if scoring is BLOSUM else 4
    pairs = _pairs(rng, size, 160, 120)
    code = ALGORITHM_CODES[algorithm]
    got = gpu.ends(pairs, scoring, code)
    want = [score_end(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, code)
            for q, t in pairs]
    assert got.tolist() == [[int(v) for v in w] for w in want]


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
@pytest.mark.parametrize("scoring", [AFFINE, BLOSUM], ids=["affine", "blosum"])
def test_large_pairs_end_by_the_long_kernel(gpu, scoring, algorithm, monkeypatch):
    """Pairs over ONE_WARP_CELLS (lowered here to 2,000 cells) are ended by the long-pair
    kernel, the others by tb_end, host and device codes alike: every end cell is
    cpu.pairwise.score_end's (ties placed on purpose), in the jobs' order."""
    import cupy

    from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
    from warpalign._backends.cuda import long as long_module
    from warpalign._backends.cuda import traceback as tb_module
    monkeypatch.setattr(tb_module, "ONE_WARP_CELLS", 2_000)
    ran = []
    real = long_module.LongPair.score_end
    monkeypatch.setattr(long_module.LongPair, "score_end",
                        lambda self, *a, **k: ran.append(1) or real(self, *a, **k))
    rng = np.random.default_rng(31)
    size = 20 if scoring is BLOSUM else 4
    pairs = _pairs(rng, size, 40, 150)
    code = ALGORITHM_CODES[algorithm]
    want = [[int(v) for v in score_end(q, t, scoring.matrix, scoring.gap_open,
                                       scoring.gap_extend, code)] for q, t in pairs]
    large = sum(len(q) * len(t) > 2_000 for q, t in pairs)
    assert 10 < large < len(pairs) - 10
    qcat, tcat = np.concatenate([q for q, _ in pairs]), np.concatenate([t for _, t in pairs])
    ql, tl = np.array([len(q) for q, _ in pairs]), np.array([len(t) for _, t in pairs])
    qs, ts = np.cumsum(ql) - ql, np.cumsum(tl) - tl
    for q_codes, t_codes in ((qcat, tcat), (cupy.asarray(qcat), cupy.asarray(tcat))):
        ran.clear()
        got = gpu.ends_flat(q_codes, qs, ql, t_codes, ts, tl, scoring, code)
        assert got.tolist() == want
        assert len(ran) == large


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
def test_end_kernel_strip_edges(gpu, algorithm):
    """tb_end (4 query rows a lane, strips of 128 rows): score and end cell of DESIGN.md's
    tie rule as cpu.pairwise.score_end, for queries ending at and around the strips' edges,
    a lane's rows cut by the query's end, and ties everywhere (repeats, one letter)."""
    from warpalign._backends.cpu.pairwise import ALGORITHM_CODES, score_end
    rng = np.random.default_rng(44)
    code = ALGORITHM_CODES[algorithm]
    edge = 128
    for scoring, size in ((AFFINE, 4), (BLOSUM, 20)):
        pairs = []
        for m in sorted({1, 2, 3, 4, 5, 31, 33, edge - 1, edge, edge + 1, 2 * edge + 3, 300}):
            for n in (1, 7, 40, 257):
                kind = len(pairs) % 4
                if kind == 0:
                    q, t = rng.integers(0, size, m), rng.integers(0, size, n)
                elif kind == 1:                     # t holds a copy of part of q
                    q = rng.integers(0, size, m)
                    mid = q[: n // 2]
                    t = np.concatenate([rng.integers(0, size, n // 3), mid,
                                        rng.integers(0, size, n - n // 3 - len(mid))])
                elif kind == 2:                     # tandem repeats: ties everywhere
                    unit = rng.integers(0, size, int(rng.integers(1, 4)))
                    q, t = np.resize(unit, m), np.resize(unit, n)
                else:                               # one letter: every cell ties
                    q, t = np.zeros(m), np.zeros(n)
                pairs.append((q.astype(np.uint8), t.astype(np.uint8)))
        got = gpu.ends(pairs, scoring, code)
        want = [score_end(q, t, scoring.matrix, scoring.gap_open, scoring.gap_extend, code)
                for q, t in pairs]
        assert got.tolist() == [[int(v) for v in w] for w in want]


def test_score_pairs_full_gpu_equals_cpu(gpu):
    from warpalign import score_pairs
    rng = np.random.default_rng(5)
    xs, ys = [], []
    for _ in range(300):
        q, t = _related(rng, int(rng.integers(20, 128)), 4, 0.1)
        xs.append("".join("ACGT"[c] for c in q))
        ys.append("".join("ACGT"[c] for c in np.concatenate([rng.integers(0, 4, 40), t])))
    for threshold in (None, 30):
        cpu = score_pairs(xs, ys, AFFINE, mode="full", threshold=threshold, backend="cpu")
        gpu = score_pairs(xs, ys, AFFINE, mode="full", threshold=threshold, backend="cuda")
        assert gpu.scores.tolist() == cpu.scores.tolist()
        assert gpu.alignments == cpu.alignments


def _flat(pairs):
    qcat = np.concatenate([q for q, _ in pairs])
    tcat = np.concatenate([t for _, t in pairs])
    ql, tl = np.array([len(q) for q, _ in pairs]), np.array([len(t) for _, t in pairs])
    return qcat, np.cumsum(ql) - ql, ql, tcat, np.cumsum(tl) - tl, tl


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, ZERO_GAP, BLOSUM], ids=["affine", "linear", "zero", "blosum"])
def test_align_pairs_table_gpu_equals_align_codes(gpu, scoring, algorithm):
    """The array-driven GPU path (ends/starts/paths_flat, device codes read in place,
    slots packed on the device, rendered by render.cu) gives align_codes' alignments; empty
    pairs and a subset in another order included."""
    import cupy
    from warpalign.traceback import align_pairs_table
    rng = np.random.default_rng(hash((algorithm, scoring.gap_open, 20)) % 2 ** 32)
    size = 20 if scoring is BLOSUM else 4
    pairs = _pairs(rng, size, 120, 150) + [(np.zeros(0, np.uint8), np.zeros(5, np.uint8)),
                                             (np.zeros(3, np.uint8), np.zeros(0, np.uint8))]
    want = [align_codes(q, t, scoring, algorithm) for q, t in pairs]
    qcat, qs, ql, tcat, ts, tl = _flat(pairs)
    host = align_pairs_table(qcat, qs, ql, tcat, ts, tl, scoring, algorithm, engine=gpu)
    dev = align_pairs_table(cupy.asarray(qcat), qs, ql, cupy.asarray(tcat), ts, tl, scoring,
                            algorithm, engine=gpu)
    assert host == want
    assert dev == host
    pick = np.arange(len(pairs))[::-3]
    sub = align_pairs_table(cupy.asarray(qcat), qs[pick], ql[pick], cupy.asarray(tcat),
                            ts[pick], tl[pick], scoring, algorithm, engine=gpu)
    assert sub == [want[k] for k in pick]


@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, ZERO_GAP, BLOSUM], ids=["affine", "linear", "zero", "blosum"])
def test_local_starts_and_paths_in_one_pass(gpu, scoring, monkeypatch):
    """Local pairs whose rectangles all fit run tb_plan / tb_align (start and path of each
    in one launch, timed as "tb_align", no "tb_starts"/"tb_paths"): the CPU engine's table,
    pairs of score 0 among them (the empty alignment at (0, 0), wherever a given end of
    score 0 lies); a given end that no alignment of its score ends at is a
    TracebackError, as on the two-pass route; past ONE_PASS_BYTES or past the cells of
    max_full_cells, the two passes."""
    import cupy
    from warpalign._backends.cuda import traceback as cuda_tb
    from warpalign.errors import TracebackError
    from warpalign.traceback import align_pairs_table
    rng = np.random.default_rng(hash(("one pass", scoring.gap_open)) % 2 ** 32)
    size = 20 if scoring is BLOSUM else 4
    a, b = np.argwhere(scoring.matrix[:size, :size] < 0)[0]
    nothing = (np.full(7, a, np.uint8), np.full(9, b, np.uint8))     # best local score 0
    pairs = _pairs(rng, size, 120, 150)
    pairs[5:5] = [nothing]
    pairs.append(nothing)
    qcat, qs, ql, tcat, ts, tl = _flat(pairs)
    args = (cupy.asarray(qcat), qs, ql, cupy.asarray(tcat), ts, tl, scoring, "local")
    want = align_pairs_table(qcat, qs, ql, tcat, ts, tl, scoring, "local", threads=2)
    timings: dict = {}
    got = align_pairs_table(*args, engine=gpu, timings=timings)
    assert "tb_align" in timings and not {"tb_starts", "tb_paths"} & set(timings)
    assert got == want
    ends = np.stack([want.scores, want.query_ends, want.target_ends], 1)
    zero = np.flatnonzero(want.scores == 0)
    assert zero.size >= 2
    given = ends.copy()
    given[zero, 1:] = 1             # a score of 0 ends anywhere: the row stays (0, 0, 0, 0)
    assert align_pairs_table(*args, engine=gpu, ends=given) == want
    k = int(np.flatnonzero(want.scores > 2)[0])
    wrong = ends.copy()
    wrong[k, 0] += 1                # above the best: no alignment ending there reaches it
    with pytest.raises(TracebackError, match=f"pair {k} "):
        align_pairs_table(*args, engine=gpu, ends=wrong)
    for patch, cells in ((1 << 16, None), (cuda_tb.ONE_PASS_BYTES, 2000)):
        monkeypatch.setattr(cuda_tb, "ONE_PASS_BYTES", patch)     # more than one pass takes
        timings = {}
        # (segments over max_full_cells take Myers-Miller's splits: the CPU engine's there)
        assert align_pairs_table(*args, engine=gpu, timings=timings, max_full_cells=cells) == (
            want if cells is None else align_pairs_table(qcat, qs, ql, tcat, ts, tl, scoring,
                                                         "local", threads=2,
                                                         max_full_cells=cells))
        assert "tb_align" not in timings and {"tb_starts", "tb_paths"} <= set(timings)


@pytest.mark.parametrize("scoring", [AFFINE, LINEAR, ZERO_GAP, BLOSUM], ids=["affine", "linear", "zero", "blosum"])
def test_tb_plan_segments_are_the_hosts(gpu, scoring):
    """tb_plan's target segments (toff - tpos = the segment start, tlen) are
    _segment_starts' on random ends, its sizes _dir_bytes' and the scratch and slot sizes,
    and a score of 0 is an empty job."""
    import cupy
    from warpalign._backends.cuda import traceback as cuda_tb
    from warpalign.traceback import _segment_starts
    rng = np.random.default_rng(31)
    n = 3000
    qe = rng.integers(1, 400, n)
    te = rng.integers(1, 5000, n)
    score = rng.integers(0, int(max(scoring.matrix.max(), 1)) * qe + 1)
    tpos = rng.integers(0, 1 << 20, n)
    ends = np.stack([score, qe, te], 1).astype(np.int64)
    kernel = gpu._function("tb_plan")
    top, go, ge = int(max(scoring.matrix.max(), 0)), scoring.gap_open, scoring.gap_extend

    def plan(most, cells):
        ints = cupy.zeros((3, n), cupy.int32)
        toff = cupy.zeros(n, cupy.int64)
        sizes = cupy.zeros((3, n), cupy.int64)
        refused = cupy.zeros(1, cupy.uint64)
        kernel(((n + 127) // 128,), (128,),
               (cupy.asarray(ends), cupy.asarray(tpos), np.int32(n), np.int64(top),
                np.int64(go), np.int64(ge), np.int32(ge != 0), np.int64(most), np.int64(cells),
                ints[0], toff, ints[1], ints[2], sizes, refused))
        return ints, toff, sizes, refused

    ints, toff, sizes, refused = plan(1 << 40, 1 << 60)
    on = score > 0
    lo = _segment_starts(qe[on], te[on], score[on], scoring)
    qlen, tlen, target = ints.get()
    assert (toff.get()[on] - tpos[on]).tolist() == lo.tolist()
    assert tlen[on].tolist() == (te[on] - lo).tolist() and qlen[on].tolist() == qe[on].tolist()
    assert target.tolist() == score.tolist()
    got = sizes.get()
    seg = te[on] - lo
    assert got[0, on].tolist() == cuda_tb._dir_bytes(qe[on], seg).tolist()
    assert got[1, on].tolist() == (2 * (seg + 1)).tolist()
    assert got[2, on].tolist() == (qe[on] + seg).tolist()
    assert not (qlen[~on].any() or tlen[~on].any() or got[:, ~on].any())
    assert int(refused.get()[0]) == 0
    over = (qe[on] + seg > 600) | ((qe[on] + 1) * (seg + 1) > 50_000)
    assert 0 < over.sum() < on.sum()
    assert int(plan(600, 50_000)[3].get()[0]) == int(over.sum())


def test_align_pairs_table_gpu_forced_myers_miller(gpu):
    """Segments over max_full_cells go the long-pair route on host copies; their ops are
    spliced into the packed device array beside the small segments' ones."""
    import cupy
    from warpalign.traceback import align_pairs_table
    rng = np.random.default_rng(8)
    pairs = [_related(rng, 3000, 4, 0.15) for _ in range(2)] + _pairs(rng, 4, 20, 60)
    qcat, qs, ql, tcat, ts, tl = _flat(pairs)
    for algorithm in ("local", "global"):
        want = [align_codes(q, t, AFFINE, algorithm, max_full_cells=1 << 16) for q, t in pairs]
        got = align_pairs_table(cupy.asarray(qcat), qs, ql, cupy.asarray(tcat), ts, tl, AFFINE,
                                algorithm, engine=gpu, max_full_cells=1 << 16)
        assert got == want


def test_render_paths_cupy_equals_numpy(gpu):
    import cupy
    from warpalign._backends.render import render_paths
    rng = np.random.default_rng(4)
    lens = rng.integers(0, 300, 500)
    opoff = np.concatenate([[0], np.cumsum(lens)])
    ops = rng.choice(np.array([0, 1, 2], np.uint8), int(opoff[-1]), p=[0.8, 0.1, 0.1])
    cq = np.concatenate([[0], np.cumsum(ops != 2)])[opoff]
    ct = np.concatenate([[0], np.cumsum(ops != 1)])[opoff]
    qcat = rng.integers(0, 20, int(cq[-1])).astype(np.uint8)
    tcat = rng.integers(0, 20, int(ct[-1])).astype(np.uint8)
    sym = np.frombuffer(BLOSUM.alphabet.symbols.encode().ljust(256, b"\0"), np.uint8)
    args = (BLOSUM.matrix, BLOSUM.gap_open, BLOSUM.gap_extend, sym)
    want = render_paths(ops, opoff, qcat, cq[:-1], tcat, ct[:-1], *args)
    got = render_paths(*(cupy.asarray(v) for v in (ops, opoff, qcat, cq[:-1], tcat, ct[:-1])),
                       *args, xp=cupy)
    for a, b in zip(want, got):
        assert a.tolist() == cupy.asnumpy(b).tolist()


def test_score_pairs_full_from_arrays_gpu_equals_cpu(gpu):
    """score_pairs(mode="full") from a 2-D NumPy array (the bench's input form): the
    GPU's table equals the CPU backend's, with and without a threshold."""
    from warpalign import score_pairs
    rng = np.random.default_rng(9)
    xs = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (400, 64))]
    ys = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, (400, 200))]
    ys[:, 50:114] = xs
    ys[::3, 60] = ord("N")
    for threshold in (None, 100):
        cpu = score_pairs(xs, ys, AFFINE, mode="full", threshold=threshold, backend="cpu")
        got = score_pairs(xs, ys, AFFINE, mode="full", threshold=threshold, backend="cuda")
        assert got.indices.tolist() == cpu.indices.tolist()
        assert got.alignments == cpu.alignments
        assert got.alignments.identities.tolist() == [a.identity for a in cpu.alignments]
