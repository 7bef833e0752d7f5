"""Read mapping output (issue 24): `warpalign locate` and `warpalign search --format sam`
on reads from both strands of lambda and phiX, read back, sorted and indexed with pysam
(samtools); MAPQ from the best two scores; unmapped reads; the strand flags' errors."""

from __future__ import annotations

import numpy as np
import pytest

from test_strands import PAPER_002, cut_reads, genomes, oracle, rc  # noqa: F401 (fixture)
from warpalign.cli import main
from warpalign.formats import mapping_quality

pysam = pytest.importorskip("pysam")


def write_fastq(path, reads) -> list[str]:
    """Reads as FASTQ with a distinct quality string each; returns the qualities."""
    quals = []
    with open(path, "w") as fh:
        for k, (name, seq) in enumerate(reads):
            qual = "".join(chr(33 + (i * 7 + k) % 41) for i in range(len(seq)))
            quals.append(qual)
            fh.write(f"@{name}\n{seq}\n+\n{qual}\n")
    return quals


def write_fasta(path, records) -> None:
    with open(path, "w") as fh:
        fh.writelines(f">{name}\n{seq}\n" for name, seq in records.items())


@pytest.fixture
def mapping(tmp_path, genomes):  # noqa: F811
    """reads.fq (8 reads cut from both strands, 2 random ones) and ref.fa."""
    cut = cut_reads(genomes, 8, seed=7)
    rng = np.random.default_rng(8)
    randoms = ["".join(rng.choice(list("ACGT"), 150)) for _ in range(2)]
    reads = [(f"read{k}", r[0]) for k, r in enumerate(cut)] + [
        (f"random{k}", r) for k, r in enumerate(randoms)]
    quals = write_fastq(tmp_path / "reads.fq", reads)
    write_fasta(tmp_path / "ref.fa", genomes)
    return tmp_path, cut, reads, quals


def test_locate_sam_maps_both_strands_and_leaves_random_reads_unmapped(mapping, genomes):  # noqa: F811
    tmp, cut, reads, quals = mapping
    out = tmp / "reads.sam"
    assert main(["locate", str(tmp / "reads.fq"), str(tmp / "ref.fa"), "--format", "sam",
                 "--min-score", "40", "-o", str(out)]) == 0
    with pysam.AlignmentFile(str(out), "r") as fh:
        assert [(r, fh.get_reference_length(r)) for r in fh.references] == [
            (n, len(s)) for n, s in genomes.items()]
        records = list(fh)
    assert [r.query_name for r in records] == [name for name, _ in reads]
    for rec, (name, seq), qual, (_, record, start, end, strand) in zip(records, reads, quals,
                                                                        cut):
        score, o_strand, o_name, _, te = oracle(seq, genomes, PAPER_002)
        assert (o_strand, o_name) == (strand, record)
        assert rec.flag == (16 if strand == "-" else 0) and rec.is_reverse == (strand == "-")
        assert (rec.reference_name, rec.reference_end, rec.get_tag("AS")) == (record, te, score)
        # SEQ and QUAL as SAM stores a reverse-strand read: reverse-complemented, reversed
        assert rec.query_sequence == (rc(seq) if strand == "-" else seq)
        want_qual = qual[::-1] if strand == "-" else qual
        assert pysam.qualities_to_qualitystring(rec.query_qualities) == want_qual
        assert rec.get_forward_sequence() == seq
        assert rec.mapping_quality == 60     # nothing else in lambda or phiX scores 40
        aligned = "".join(rec.query_sequence[q] for q, _ in rec.get_aligned_pairs()
                          if q is not None and rec.query_alignment_start <= q
                          < rec.query_alignment_end)
        assert aligned == rec.query_alignment_sequence
        assert min(rec.reference_end, end) - max(rec.reference_start, start) >= 0.8 * (end - start)
    for rec in records[len(cut):]:           # random reads score below 40: unmapped
        assert rec.is_unmapped and rec.flag == 4 and rec.reference_name is None
        assert rec.reference_start == -1 and rec.cigarstring is None
        assert rec.mapping_quality == 0
    # samtools: quickcheck, sort to BAM, index, fetch a region
    pysam.quickcheck(str(out))
    bam = tmp / "reads.bam"
    pysam.sort("-o", str(bam), str(out))
    pysam.index(str(bam))
    with pysam.AlignmentFile(str(bam), "rb") as fh:
        assert fh.mapped == len(cut) and fh.unmapped == 2
        record, start, end = cut[0][1:4]
        assert cut[0][0] in {seq for seq in (r.get_forward_sequence()
                                             for r in fh.fetch(record, start, end))}


def test_mapq_of_a_repeated_read_and_secondary_hits(tmp_path):
    """A read from a segment present twice: MAPQ 0, the copy secondary (FLAG 256); a
    read whose second-best hit is weaker: MAPQ by the formula."""
    rng = np.random.default_rng(9)
    unit = "".join(rng.choice(list("ACGT"), 120))
    other = "".join(rng.choice(list("ACGT"), 120))
    weak = list(other)
    for i in range(5, 120, 12):
        weak[i] = "A" if weak[i] != "A" else "C"
    filler = lambda n: "".join(rng.choice(list("ACGT"), n))  # noqa: E731
    ref = filler(300) + unit + filler(200) + rc(unit) + filler(200) + other + filler(100) \
        + "".join(weak) + filler(50)
    write_fasta(tmp_path / "ref.fa", {"chr": ref})
    write_fastq(tmp_path / "reads.fq", [("twice", unit), ("lead", other)])
    out = tmp_path / "out.sam"
    assert main(["locate", str(tmp_path / "reads.fq"), str(tmp_path / "ref.fa"), "--format",
                 "sam", "-n", "2", "-o", str(out)]) == 0
    with pysam.AlignmentFile(str(out), "r") as fh:
        recs = [(r.query_name, r.flag, r.reference_start, r.mapping_quality, r.get_tag("AS"))
                for r in fh]
    assert recs[0] == ("twice", 0, 300, 0, 120)
    assert recs[1] == ("twice", 256 | 16, 620, 0, 120)
    second = recs[3][4]
    assert recs[2][:4] == ("lead", 0, 940, mapping_quality(120, second))
    assert recs[3][:2] == ("lead", 256) and 0 < second < 120
    assert 0 < mapping_quality(120, second) < 60


def test_mapping_quality_formula():
    assert [mapping_quality(b, s) for b, s in ((100, 0), (100, 100), (100, 120), (100, 50),
                                                (100, 99), (3, 1), (0, 0))] == [
        60, 0, 0, 30, 1, 40, 0]


def test_search_sam_through_pysam(tmp_path, genomes):  # noqa: F811
    cut = cut_reads(genomes, 4, seed=5)
    write_fastq(tmp_path / "reads.fq", [(f"r{k}", c[0]) for k, c in enumerate(cut)]
                + [("none", "ACGT" * 3)])
    write_fasta(tmp_path / "db.fa", {**genomes, "unused": "ACGTTTGA" * 20})
    assert main(["makedb", str(tmp_path / "db.fa"), str(tmp_path / "db"), "--alphabet",
                 "dna"]) == 0
    out = tmp_path / "hits.sam"
    assert main(["search", str(tmp_path / "reads.fq"), str(tmp_path / "db"), "--alphabet",
                 "dna", "--format", "sam", "-k", "1", "--min-score", "60", "-o",
                 str(out)]) == 0
    with pysam.AlignmentFile(str(out), "r") as fh:
        # the hit targets only, in database order
        assert list(fh.references) == [n for n in genomes]
        recs = list(fh)
    assert [r.query_name for r in recs] == ["r0", "r1", "r2", "r3", "none"]
    for rec, (read, record, _, _, strand) in zip(recs, cut):
        assert (rec.reference_name, rec.is_reverse, rec.is_secondary) == (record, strand == "-",
                                                                          False)
        assert rec.get_forward_sequence() == read and rec.mapping_quality > 50
    assert recs[-1].is_unmapped
    pysam.quickcheck(str(out))
    pysam.sort("-o", str(tmp_path / "hits.bam"), str(out))
    pysam.index(str(tmp_path / "hits.bam"))


def test_tables_write_minus_strand_hits_as_blastn(tmp_path, genomes):  # noqa: F811
    ref = genomes["phix"]
    write_fasta(tmp_path / "ref.fa", {"phix": ref})
    write_fasta(tmp_path / "q.fa", {"fwd": ref[100:160], "rev": "GG" + rc(ref[300:360])})
    out = tmp_path / "hits.tsv"
    assert main(["locate", str(tmp_path / "q.fa"), str(tmp_path / "ref.fa"), "-o",
                 str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert [r[:3] + r[5:9] for r in rows] == [
        ["fwd", "phix", "60", "1", "60", "101", "160"],
        ["rev", "phix", "60", "3", "62", "360", "301"]]   # sstart > send, as blastn
    assert main(["locate", str(tmp_path / "q.fa"), str(tmp_path / "ref.fa"), "--mode", "end",
                 "-o", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert [r[5:9] for r in rows] == [["NA", "60", "NA", "160"], ["3", "NA", "360", "NA"]]
    assert main(["makedb", str(tmp_path / "ref.fa"), str(tmp_path / "db"), "--alphabet",
                 "dna"]) == 0
    assert main(["search", str(tmp_path / "q.fa"), str(tmp_path / "db"), "--alphabet", "dna",
                 "--format", "blast6", "-k", "1", "-o", str(out)]) == 0
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert [r[6:10] for r in rows] == [["1", "60", "101", "160"], ["3", "62", "360", "301"]]


@pytest.mark.parametrize("argv,code,message", [
    (["--strand", "minus"], 1, "--strand minus: the scoring is protein (BLOSUM62), which has "
                               "no strands"),
    (["--strand", "reverse"], 2, "argument --strand: invalid choice: 'reverse'"),
    (["--min-score", "high"], 2, "argument --min-score: invalid int value: 'high'"),
    (["--format", "sam", "--mode", "end"], 1, "--format sam needs --mode full"),
])
def test_search_strand_flags_errors(tmp_path, capsys, argv, code, message):
    write_fasta(tmp_path / "q.fa", {"q": "HEAGAWGHEE"})
    write_fasta(tmp_path / "db.fa", {"t": "PAWHEAE"})
    assert main(["search", str(tmp_path / "q.fa"), str(tmp_path / "db.fa"), *argv]) == code \
        if code == 1 else _exit_code(["search", str(tmp_path / "q.fa"),
                                      str(tmp_path / "db.fa"), *argv]) == code
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_locate_strand_flag_errors(tmp_path, capsys):
    write_fasta(tmp_path / "q.fa", {"q": "HEAGAWGHEE"})
    write_fasta(tmp_path / "r.fa", {"t": "PAWHEAE"})
    assert main(["locate", str(tmp_path / "q.fa"), str(tmp_path / "r.fa"), "--matrix",
                 "BLOSUM62", "--strand", "minus"]) == 1
    assert "--strand minus: the scoring is protein" in capsys.readouterr().err
    assert main(["locate", str(tmp_path / "q.fa"), str(tmp_path / "r.fa"), "--matrix",
                 "BLOSUM62", "-n", "0"]) == 1
    assert "--top 0: expected an integer >= 1" in capsys.readouterr().err


def _exit_code(argv) -> int:
    """argparse's own errors exit (status 2) from inside main."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    return exc.value.code


def test_bundled_example_reads_map_as_the_data_readme_says(tmp_path):
    from warpalign.data import example_reads_path, example_reference_path
    out = tmp_path / "reads.sam"
    assert main(["locate", str(example_reads_path()), str(example_reference_path()),
                 "--format", "sam", "--min-score", "60", "-o", str(out)]) == 0
    with pysam.AlignmentFile(str(out), "r") as fh:
        got = [(r.query_name, r.flag, r.reference_start + 1, r.mapping_quality) for r in fh]
    starts = [1265, 4135, 1612, 3280, 67, 4846, 4604, 3373]   # src/warpalign/data/README.md
    assert got == [(f"read{k + 1}", 16 * (k % 2), s, 60) for k, s in enumerate(starts)] + [
        ("random1", 4, 0, 0), ("random2", 4, 0, 0)]
