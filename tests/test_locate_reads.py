"""Many reads against one reference (issue 22, item 2): ``locate(reads, reference)``,
:func:`locate_many_encoded`, :class:`Reference`, and ``warpalign locate`` streaming SAM.

The oracle of a read's hits is independent of the many-reads path and of its strand
merge: one call per read and strand (``strand="plus"``, ``"minus"``), merged by
:func:`~warpalign.strands.merge_alignments` and cut at ``min_score``; the windows' answer
is itself checked against the exact DP method in test_locate.py.
"""

from __future__ import annotations

import gzip
import importlib.resources
import threading

import numpy as np
import pytest
from conftest import chrx
from reference import mutate_dna
from test_locate import FakeGpuWindows, gpu_windows_as

from warpalign import Scoring
from warpalign._backends.cpu.traceback import CpuTraceback
from warpalign._backends.registry import using
from warpalign.cli import main
from warpalign.errors import ScoringError
from warpalign.formats import mapping_quality, sam_cigar
from warpalign.locate import CHUNK_READS, locate, locate_many_encoded
from warpalign.reference import Reference
from warpalign.strands import merge_alignments

PAPER_002 = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
PAPER_004 = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)


def reverse_complement_text(text: str) -> str:
    return text[::-1].translate(str.maketrans("ACGT", "TGCA"))


def phix() -> str:
    text = importlib.resources.files("warpalign.data").joinpath("phix.fasta").read_text()
    return "".join(line.strip() for line in text.splitlines()[1:]).upper()


def cut_reads(rng, ref: str, n: int, length: int, junk: int = 2) -> list[str]:
    """Reads cut from ``ref`` with 4% substitutions and an indel now and then, every other
    one reverse-complemented, and ``junk`` random reads (nothing good to find)."""
    reads = []
    for k in range(n):
        at = int(rng.integers(0, len(ref) - length))
        read = mutate_dna(rng, ref[at:at + length], 0.04, k % 3 == 0)
        reads.append(reverse_complement_text(read) if k % 2 else read)
    reads += ["".join(rng.choice(list("ACGT"), length)) for _ in range(junk)]
    return reads


def oracle(read, reference, s, top, mode, min_score=None, **kw):
    """One call per strand, merged as the strands module defines it."""
    per = []
    for sign, strand in (("+", "plus"), ("-", "minus")):
        got = locate(read, reference, s, top=top, mode=mode, strand=strand, **kw)
        per.append((sign, [got] if top == 1 else got))
    hits = [h for h in merge_alignments(per, top) if h.score > 0
            and (min_score is None or h.score >= min_score)]
    if top == 1:
        return hits[0] if hits else locate("", reference, s, mode=mode, **kw)
    return hits


@pytest.mark.parametrize("mode", ["score", "end", "full"])
@pytest.mark.parametrize("top", [1, 3])
def test_many_reads_equal_one_call_per_read_and_strand(mode, top):
    rng = np.random.default_rng(220 + top)
    ref = phix()
    records = {"phiX": ref, "other": ref[2_000:3_500][::-1]}
    reads = cut_reads(rng, ref, 10, 80)
    min_score = 40 if top == 3 else None
    got = locate(reads, records, PAPER_002, top=top, mode=mode, min_score=min_score,
                 backend="cpu")
    assert len(got) == len(reads)
    want = [oracle(r, records, PAPER_002, top, mode, min_score, backend="cpu") for r in reads]
    assert got == want
    single = [locate(r, records, PAPER_002, top=top, mode=mode, min_score=min_score,
                     backend="cpu") for r in reads]
    assert got == single
    found = got if top == 1 else [h[0] if h else None for h in got]
    assert sum(h is not None and h.score >= 60 for h in found) >= 8   # the cut reads
    assert {h.strand for h in found if h is not None and h.score > 0} == {"+", "-"}
    if min_score is not None:   # the junk reads: nothing reaches min_score
        assert got[-1] == [] and got[-2] == []


def test_many_reads_on_chrx_against_a_built_reference(tmp_path):
    text = chrx(1_000_000, 1_150_000)
    ref = Reference.build([text], tmp_path / "chrx.ref")
    rng = np.random.default_rng(221)
    reads = cut_reads(rng, text, 6, 150, junk=1)
    got = locate(reads, ref, PAPER_002, top=2, backend="cpu")
    want = [oracle(r, {"seq0": text}, PAPER_002, 2, "full", backend="cpu") for r in reads]
    assert [[(h.record, h.strand, h.score, h.target_start, h.target_end, h.cigar)
             for h in hits] for hits in got] == [
        [("seq0", h.strand, h.score, h.target_start, h.target_end, h.cigar) for h in hits]
        for hits in want]
    # the directory path works as the Reference does (opened once, memory-mapped)
    assert locate(reads[:2], str(tmp_path / "chrx.ref"), PAPER_002, top=2,
                  backend="cpu") == got[:2]


def test_reference_build_open_and_inputs(tmp_path):
    fasta = tmp_path / "ref.fa.gz"
    with gzip.open(fasta, "wt") as fh:
        fh.write(">phiX174 the phage\n" + phix() + "\n>short\nACGTACGTTTGACCAGTAGG\n")
    ref = Reference.build(str(fasta), tmp_path / "ref")
    again = Reference.open(tmp_path / "ref")
    for r in (ref, again):
        assert r.names == ["phiX174", "short"] and r.alphabet.name == "dna"
        assert r.lengths.tolist() == [len(phix()), 20]
        assert all(not c.flags.writeable for c in r.records)
        assert r.records is r.records   # the same arrays on every access
    assert again.max_code == 3
    reads = cut_reads(np.random.default_rng(222), phix(), 4, 60, junk=0)
    as_dict = locate(reads, {"phiX174": phix(), "short": "ACGTACGTTTGACCAGTAGG"},
                     PAPER_002, backend="cpu")
    assert locate(reads, again, PAPER_002, backend="cpu") == as_dict
    assert locate(reads, str(tmp_path / "ref"), PAPER_002, backend="cpu") == as_dict
    assert locate(iter(reads), again, PAPER_002, backend="cpu") == as_dict
    rows = np.frombuffer("".join(reads[1:3]).encode(), np.uint8).reshape(2, 60)  # no indels
    assert locate(rows, again, PAPER_002, backend="cpu") == as_dict[1:3]
    reads_fa = tmp_path / "reads.fa"
    reads_fa.write_text("".join(f">r{k}\n{r}\n" for k, r in enumerate(reads)))
    assert locate(str(reads_fa), again, PAPER_002, backend="cpu") == as_dict
    with pytest.raises(ScoringError, match="alphabet"):
        locate(reads, again, Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1))
    with pytest.raises(ValueError, match=r"query 1: code 200 is outside the dna alphabet"):
        list(locate_many_encoded([np.zeros(5, np.uint8), np.full(5, 200, np.uint8)],
                                 again.names, again.records, PAPER_002, backend="cpu"))


def test_reads_stream_in_chunks():
    """locate_many_encoded pulls at most CHUNK_READS queries before its first result."""
    s = PAPER_004
    ref = s.encode("TTTTGATTACATTTTCCGGAACCTTTT")
    ref.setflags(write=False)
    pulled = []

    def reads():
        for k in range(CHUNK_READS + 5):
            pulled.append(k)
            yield s.encode("GATTACA" if k % 2 else "CCGGAACC")

    results = locate_many_encoded(reads(), ["r"], [ref], s, mode="end", method="dp",
                                  backend="cpu")
    first = next(results)
    assert len(pulled) == CHUNK_READS and (first.score, first.target_end) == (40, 23)
    rest = list(results)
    assert len(rest) == CHUNK_READS + 4 and (rest[0].score, rest[0].target_end) == (35, 11)


def test_second_score_is_the_next_hit():
    s = PAPER_004
    records = {"a": "CCGATTACATTGATTTACAGG", "b": "GGGGGGG"}
    names, recs = list(records), [s.encode(v) for v in records.values()]
    reads = [s.encode("GATTACA"), s.encode("TTTTTTT")]
    got = list(locate_many_encoded(reads, names, recs, s, second=True, backend="cpu"))
    for (hit, second), read in zip(got, ("GATTACA", "TTTTTTT")):
        want = oracle(read, records, s, 2, "full", backend="cpu")
        assert hit == want[0] and second == (want[1].score if len(want) > 1 else 0)
    with pytest.raises(ValueError, match="second=True needs top=1"):
        next(locate_many_encoded(reads, names, recs, s, top=2, second=True))


class ThreadedFake(FakeGpuWindows):
    """FakeGpuWindows that notes which threads score windows."""

    def __init__(self):
        super().__init__()
        self.threads = set()

    def window_cells(self, *args, **kw):
        self.threads.add(threading.current_thread().name)
        return super().window_cells(*args, **kw)


@pytest.mark.parametrize("mode", ["end", "full"])
def test_many_reads_gpu_path_emulated(mode):
    """The GPU path (resident windows, worker threads with a stream each, one batched
    traceback) with the windows kernel replaced by exact DP: the same hits as the CPU."""
    rng = np.random.default_rng(223)
    ref = phix()
    reads = cut_reads(rng, ref, 12, 70)
    codes = PAPER_002.encode(ref)
    codes.setflags(write=False)
    with gpu_windows_as(ThreadedFake()) as fake, \
            using("traceback", "cuda", "auto", CpuTraceback()):
        for top in (1, 2):
            got = locate_many_encoded([PAPER_002.encode(r) for r in reads], ["phiX"], [codes],
                                      PAPER_002, top=top, mode=mode, backend="cuda")
            want = [locate(r, {"phiX": ref}, PAPER_002, top=top, mode=mode, method="dp",
                           backend="cpu") for r in reads]
            assert list(got) == want
    assert any(name.startswith("warpalign-locate") for name in fake.threads)


def read_sam(path):
    pysam = pytest.importorskip("pysam")
    with pysam.AlignmentFile(str(path), "r", check_sq=False) as fh:
        return [(r.query_name, r.flag, r.reference_name, r.reference_start, r.cigarstring,
                 r.mapping_quality, r.get_tag("AS") if r.has_tag("AS") else None,
                 r.query_sequence, r.qual) for r in fh]


def test_cli_sam_streams_reads_against_a_reference_directory(tmp_path, capsys):
    pytest.importorskip("pysam")
    rng = np.random.default_rng(224)
    ref = phix()
    (tmp_path / "ref.fa").write_text(f">phiX\n{ref}\n")
    reads = cut_reads(rng, ref, 8, 90)
    with open(tmp_path / "reads.fq", "w") as fh:
        for k, r in enumerate(reads):
            fh.write(f"@read{k}\n{r}\n+\n{'I' * len(r)}\n")
    assert main(["makedb", str(tmp_path / "ref.fa"), str(tmp_path / "ref.db"),
                 "--alphabet", "dna"]) == 0
    outs = []
    for source in ("ref.fa", "ref.db"):
        out = tmp_path / f"{source}.sam"
        assert main(["locate", str(tmp_path / "reads.fq"), str(tmp_path / source),
                     "--format", "sam", "--min-score", "45", "--backend", "cpu",
                     "-o", str(out)]) == 0
        outs.append(read_sam(out))
    assert outs[0] == outs[1]
    rows = outs[0]
    assert [r[0] for r in rows] == [f"read{k}" for k in range(len(reads))]
    for row, read in zip(rows, reads):
        name, flag, rname, pos, cigar, mapq, score, seq, qual = row
        hits = oracle(read, {"phiX": ref}, PAPER_002, 2, "full", backend="cpu")
        if not hits or hits[0].score < 45:
            assert flag & 4 and rname is None   # unmapped: below --min-score
            continue
        best = hits[0]
        second = hits[1].score if len(hits) > 1 and hits[1].score >= 45 else 0
        assert (rname, pos, score, mapq) == ("phiX", best.target_start, best.score,
                                             mapping_quality(best.score, second))
        assert bool(flag & 16) == (best.strand == "-")
        assert cigar == sam_cigar(best, len(read))
    assert sum(r[1] & 4 for r in rows) >= 2 * 4 * 1   # the two junk reads at least
