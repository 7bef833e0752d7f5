"""SAM from `warpalign locate` and `warpalign pairs`, read back with pysam."""

from __future__ import annotations

import pytest

from warpalign import Scoring, align
from warpalign.cli import main
from warpalign.formats import sam_cigar

pysam = pytest.importorskip("pysam")

REF = ">r1\nACGTACGTTTGACCAGTAGGATCCAAGTGCATGCA\n>r2\nGGGGGGGGGGTTTTTTTTAAAA\n"
QUERIES = ">q1\nTTGACCAGTAGCATCC\n>q2\nGTTTTTTTTAA\n"
PAPER_002 = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)   # locate's default


def read_sam(path):
    with pysam.AlignmentFile(str(path), "r", check_sq=False) as fh:
        return [(r.query_name, r.reference_name, r.reference_start, r.cigarstring,
                 r.get_tag("AS"), r.query_sequence) for r in fh]


def test_locate_sam_round_trip(tmp_path, capsys):
    (tmp_path / "ref.fa").write_text(REF)
    (tmp_path / "q.fa").write_text(QUERIES)
    out = tmp_path / "hits.sam"
    assert main(["locate", str(tmp_path / "q.fa"), str(tmp_path / "ref.fa"), "--format", "sam",
                 "-o", str(out)]) == 0
    rows = read_sam(out)
    assert [r[:2] for r in rows] == [("q1", "r1"), ("q2", "r2")]
    for (qname, rname, pos, cigar, score, seq), query in zip(rows, ("TTGACCAGTAGCATCC",
                                                                   "GTTTTTTTTAA")):
        record = REF.split(f">{rname}\n")[1].split("\n")[0]
        aln = align(query, record, PAPER_002)
        assert (pos, score, seq) == (aln.target_start, aln.score, query)
        assert cigar == sam_cigar(aln, len(query))


def test_pairs_sam_needs_full_mode_and_round_trips(tmp_path, capsys):
    (tmp_path / "x.fa").write_text(">a\nACGTTGCA\n>b\nGGGG\n")
    (tmp_path / "y.fa").write_text(">t1\nACGTAGCA\n>t2\nGGGA\n")
    assert main(["pairs", str(tmp_path / "x.fa"), str(tmp_path / "y.fa"), "--format", "sam"]) == 1
    assert "--mode full" in capsys.readouterr().err
    out = tmp_path / "pairs.sam"
    assert main(["pairs", str(tmp_path / "x.fa"), str(tmp_path / "y.fa"), "--mode", "full",
                 "--format", "sam", "-o", str(out)]) == 0
    rows = read_sam(out)
    assert [(r[0], r[1], r[2], r[3], r[4]) for r in rows] == [
        ("a", "t1", 0, "8M", 13), ("b", "t2", 0, "3M1S", 6)]


@pytest.mark.parametrize("command", ["locate", "pairs"])
def test_sam_names_samtools_rejects_are_errors_naming_the_record(tmp_path, capsys, command):
    """A 300-character read name made SAM that pysam/samtools cannot parse (QNAME is at
    most 254 characters): the command fails, names the record, and writes no file."""
    long_name = "read_" + "x" * 295
    (tmp_path / "q.fa").write_text(f">{long_name}\nTTGACCAGTAGCATCC\n>q2\nGTTTTTTTTAA\n")
    (tmp_path / "ref.fa").write_text(REF)
    out = tmp_path / "hits.sam"
    args = {"locate": ["locate", str(tmp_path / "q.fa"), str(tmp_path / "ref.fa")],
            "pairs": ["pairs", str(tmp_path / "q.fa"), str(tmp_path / "ref.fa"), "--mode",
                      "full"]}[command]
    assert main([*args, "--format", "sam", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"query name '{long_name[:40]}...' cannot be written as SAM QNAME: 300 " in err
    assert err.count("\n") == 1 and not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.fa", "ref.fa"]
    (tmp_path / "q.fa").write_text(f">{long_name[:254]}\nTTGACCAGTAGCATCC\n>q2\nGTTTTTTTTAA\n")
    assert main([*args, "--format", "sam", "-o", str(out)]) == 0
    assert read_sam(out)[0][0] == long_name[:254]
