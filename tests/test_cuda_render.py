"""GPU rendering of traced paths (issue 20): ``cuda/render.py``'s two kernels (render.cu)
give render_paths' answer byte for byte, and the GPU engine's ``align_pairs_table``
(rendered by them) equals the CPU engine's table.

The host side of render.py runs on the CPU against an emulation of the kernels
(tests/test_render.py); here the kernels themselves run. Every test is cuda-marked.
"""

from __future__ import annotations

import numpy as np
import pytest

from reference import render_cases
from warpalign import Scoring
from warpalign._backends.render import render_paths

pytestmark = pytest.mark.cuda

AFFINE = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
BLOSUM = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


@pytest.fixture(scope="module")
def gpu(traceback_gpu):
    return traceback_gpu


def _symbols(scoring):
    return np.frombuffer(scoring.alphabet.symbols.encode().ljust(256, b"\0"), np.uint8)


def _cases(scoring, short):
    rng = np.random.default_rng(31 + short)
    size = 20 if scoring is BLOSUM else 4
    return render_cases(rng, size, count=2_000, short=short)


def _same(want, got, device=True):
    """Every field equal, dtype and shape too; ``got``'s arrays on the device (else on the
    host)."""
    import cupy
    for field, a, b in zip(want._fields, want, got):
        assert isinstance(b, cupy.ndarray) == device, field
        b = cupy.asnumpy(b)
        assert a.dtype == b.dtype and a.shape == b.shape, field
        assert np.array_equal(a, b), field


@pytest.mark.parametrize("short", [0, 7], ids=["exact", "past-the-end"])
@pytest.mark.parametrize("scoring", [AFFINE, BLOSUM], ids=["dna", "protein"])
def test_render_kernels_equal_render_paths(gpu, scoring, short):
    """render_device on 2,000 paths (empty, all-gap, one-op, random, runs of 31-65 ops
    around a warp's chunk, 1000M, 12345I, 100000D) equals render_paths on the host, field
    by field; no paths, only empty paths, and paths read past the codes' ends (clamped)."""
    import cupy
    from warpalign._backends.cuda.render import render_device
    sym = _symbols(scoring)
    matrix = cupy.asarray(np.ascontiguousarray(scoring.matrix, np.int32))
    for case in _cases(scoring, short):
        want = render_paths(*case, scoring.matrix, scoring.gap_open, scoring.gap_extend, sym)
        dev = [cupy.asarray(v) for v in case]
        got = render_device(cupy, *dev, matrix, scoring.gap_open, scoring.gap_extend,
                            cupy.asarray(sym))
        _same(want, got)
    text = render_paths(*_cases(scoring, short)[0], scoring.matrix, scoring.gap_open,
                        scoring.gap_extend, sym).cigar.tobytes().decode()
    assert "1000M" in text and "12345I" in text and "100000D3M" in text


def test_engine_render_flat_gives_host_arrays(gpu):
    """GpuTraceback.render_flat from host or device arrays, called under a stream of the
    caller's: host arrays (two copies back through pinned memory), every field equal to
    render_paths'; twice, so the second reuses the pinned pool's blocks."""
    import cupy
    sym = _symbols(BLOSUM)
    ops, opoff, qcat, qpos, tcat, tpos = _cases(BLOSUM, 0)[0]
    want = render_paths(ops, opoff, qcat, qpos, tcat, tpos, BLOSUM.matrix, BLOSUM.gap_open,
                        BLOSUM.gap_extend, sym)
    for to in (np.asarray, cupy.asarray):
        with cupy.cuda.Stream(non_blocking=True):
            for _ in range(2):
                got = gpu.render_flat(to(ops), opoff, to(qcat), qpos, to(tcat), tpos, BLOSUM,
                                      sym)
                _same(want, got, device=False)


@pytest.mark.parametrize("algorithm", ["local", "semiglobal", "global"])
@pytest.mark.parametrize("scoring", [AFFINE, BLOSUM], ids=["dna", "protein"])
def test_align_pairs_table_gpu_equals_cpu(gpu, scoring, algorithm):
    """align_pairs_table on the GPU engine (rendered by render.cu) equals the CPU
    engine's table: 600 related, random and identical pairs (long M runs: 3-4 digit
    counts), codes on the device."""
    import cupy
    from warpalign._backends.cpu.traceback import CpuTraceback
    from warpalign.traceback import align_pairs_table
    rng = np.random.default_rng([("local", "semiglobal", "global").index(algorithm),
                                 scoring.gap_open])
    size = 20 if scoring is BLOSUM else 4
    pairs = []
    for k in range(600):
        q = rng.integers(0, size, int(rng.integers(1, 160))).astype(np.uint8)
        if k % 3 == 0:
            t = rng.integers(0, size, int(rng.integers(1, 400))).astype(np.uint8)
        elif k % 3 == 1:
            t = q.copy()
            t[rng.random(t.size) < 0.1] = rng.integers(0, size)
            t = np.concatenate([t[:len(t) // 2], rng.integers(0, size, 3).astype(np.uint8),
                                t[len(t) // 2 + 2:]])
        else:
            t = q.copy()
        pairs.append((q, t))
    pairs.append((rng.integers(0, size, 1500).astype(np.uint8),) * 2)     # 1500M
    qcat = np.concatenate([q for q, _ in pairs])
    tcat = np.concatenate([t for _, t in pairs])
    ql, tl = np.array([len(q) for q, _ in pairs]), np.array([len(t) for _, t in pairs])
    qs, ts = np.cumsum(ql) - ql, np.cumsum(tl) - tl
    want = align_pairs_table(qcat, qs, ql, tcat, ts, tl, scoring, algorithm,
                             engine=CpuTraceback(), threads=1)
    got = align_pairs_table(cupy.asarray(qcat), qs, ql, cupy.asarray(tcat), ts, tl, scoring,
                            algorithm, engine=gpu)
    assert got == want
    assert got.identities.tolist() == want.identities.tolist()
    assert "1500M" in got.cigar_text
