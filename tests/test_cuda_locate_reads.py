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


def _genome(name: str) -> str:
    from conftest import shared_data
    path = shared_data(f"dna/{name}")
    import gzip
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return "".join(line.strip() for line in fh if not line.startswith(">")).upper()


@pytest.mark.parametrize("genome", ["lambda_virus.fa.gz", "phix_genome.fa"])
@pytest.mark.parametrize("mode", ["score", "end", "full"])
def test_packed_reads_equal_per_read_calls_and_the_cpu(genome, mode):
    """Reads' strands packed several per windows launch (150 bp: three) give every read
    its own call's hits and the CPU's: both strands, reads with N (another score bound),
    reads of 70 and 300 bp (300: more lanes than a pack holds, alone), random reads, a
    batch of one read."""
    text = _genome(genome)
    rng = np.random.default_rng(330)
    reads = cut_reads(rng, text, 25, 150, junk=3)
    for k in (2, 7, 11):
        at = int(rng.integers(0, 150))
        reads[k] = reads[k][:at] + "N" + reads[k][at + 1:]
    reads += cut_reads(rng, text, 4, 70, junk=0) + cut_reads(rng, text, 3, 300, junk=1)
    for top in (1, 2):
        got = locate(reads, {"g": text}, PAPER_002, top=top, mode=mode, backend="cuda")
        single = [locate(r, {"g": text}, PAPER_002, top=top, mode=mode, backend="cuda")
                  for r in reads]
        cpu = locate(reads, {"g": text}, PAPER_002, top=top, mode=mode, backend="cpu")
        assert got == single == cpu
    one = locate(reads[:1], {"g": text}, PAPER_002, mode=mode, backend="cuda")
    assert one == [locate(reads[0], {"g": text}, PAPER_002, mode=mode, backend="cpu")]
