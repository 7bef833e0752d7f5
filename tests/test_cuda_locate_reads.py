"""Many reads against a resident reference on the GPU (issue 22, item 2): the many-reads
path (worker threads with a CUDA stream each, one device copy of the reference, batched
GPU tracebacks) gives exactly the per-read calls' hits and the CPU's."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from conftest import chrx
from test_locate_reads import PAPER_002, cut_reads, read_sam

from warpalign.cli import main
from warpalign.locate import locate
from warpalign.reference import Reference

pytestmark = [pytest.mark.cuda, pytest.mark.usefixtures("windows_gpu")]




@pytest.fixture(scope="module")
def chrx_ref(tmp_path_factory):
    text = chrx(2_000_000, 3_000_000)
    path = tmp_path_factory.mktemp("ref") / "chrx.ref"
    return text, Reference.build([text], path)


@pytest.mark.parametrize("mode", ["score", "end", "full"])
@pytest.mark.parametrize("top", [1, 2])
def test_many_reads_on_the_gpu_equal_per_read_calls_and_the_cpu(chrx_ref, mode, top):
    text, ref = chrx_ref
    reads = cut_reads(np.random.default_rng(300 + top), text, 40, 150, junk=3)
    got = locate(reads, ref, PAPER_002, top=top, mode=mode, backend="cuda")
    single = [locate(r, ref, PAPER_002, top=top, mode=mode, backend="cuda") for r in reads]
    cpu = locate(reads, ref, PAPER_002, top=top, mode=mode, backend="cpu")
    assert got == single == cpu
    best = got if top == 1 else [h[0] for h in got if h]
    assert sum(h.score >= 100 for h in best) >= 38


def test_one_reference_from_many_threads(chrx_ref):
    """Concurrent many-read calls on one Reference (one device copy) equal serial calls."""
    text, ref = chrx_ref
    batches = [cut_reads(np.random.default_rng(310 + k), text, 12, 150) for k in range(4)]
    serial = [locate(b, ref, PAPER_002, backend="cuda") for b in batches]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda b: locate(b, ref, PAPER_002, backend="cuda"),
                             batches)) == serial


def test_cli_sam_on_the_gpu_equals_the_cpu(chrx_ref, tmp_path):
    text, ref = chrx_ref
    reads = cut_reads(np.random.default_rng(320), text, 30, 150)
    with open(tmp_path / "reads.fq", "w") as fh:
        for k, r in enumerate(reads):
            fh.write(f"@read{k}\n{r}\n+\n{'I' * len(r)}\n")
    rows = []
    for backend in ("cuda", "cpu"):
        out = tmp_path / f"{backend}.sam"
        assert main(["locate", str(tmp_path / "reads.fq"), str(ref.path), "--format", "sam",
                     "--backend", backend, "-o", str(out)]) == 0
        rows.append(read_sam(out))
    assert rows[0] == rows[1] and len(rows[0]) == len(reads)
