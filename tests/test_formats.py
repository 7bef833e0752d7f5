"""Output formats (BLAST tabular, JSON, SAM), pandas conversion, Biopython inputs."""

from __future__ import annotations

import io
import json
import re

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from warpalign import Alignment, Database, NotComputed, Scoring, align, search
from warpalign.formats import (
    BLAST_TAB_COLUMNS,
    SamRecord,
    format_bitscore,
    format_evalue,
    sam_cigar,
    search_sam_records,
    write_blast_tab,
    write_sam,
    write_search_json,
    write_search_tsv,
)
from warpalign.results import results_to_pandas
from warpalign.stats import apply_statistics

B62 = Scoring("BLOSUM62", gap_open=12, gap_extend=1)   # BLAST's BLOSUM62 11/1
QUERIES = {"q1": "MKVLAWHEAGAWGHEE", "q2": "HEAGAWGHEE"}
TARGETS = {"t1": "HEAGAWGHEE", "t2": "MKVLAW", "t3": "WWWWPAWHEAEWWW", "t4": "GGGG"}


@pytest.fixture(scope="module")
def db():
    return Database.from_sequences(TARGETS)


@pytest.fixture(scope="module")
def full(db):
    return apply_statistics(search(QUERIES, db, B62, top_k=4, mode="full"), db, B62)


# --- BLAST tabular ------------------------------------------------------------------


def test_blast_tab_known_rows(full):
    out = io.StringIO()
    write_blast_tab(full, out)
    rows = [line.split("\t") for line in out.getvalue().splitlines()]
    assert all(len(r) == 12 for r in rows)
    by = {(r[0], r[1]): r for r in rows}
    # q1 = MKVLAW + HEAGAWGHEE: t1 matches q1[6:16] exactly -> 1-based 7..16 / 1..10
    assert by["q1", "t1"][2:10] == ["100.000", "10", "0", "0", "7", "16", "1", "10"]
    # q2 HEAGAWGHEE vs t3 WWWWPAWHEAEWWW: HEAGAW / HEAEWW = 8+5+4-2-3+11 = 23, 4 of 6
    # identical, 2 mismatches, no gap; query 1..6, subject 8..13
    q2t3 = by["q2", "t3"]
    assert q2t3[2:10] == ["66.667", "6", "2", "0", "1", "6", "8", "13"]
    hits = full[1]
    i = hits.names.index("t3")
    assert q2t3[10] == format_evalue(hits.evalues[i])
    assert q2t3[11] == format_bitscore(hits.bitscores[i])
    assert float(q2t3[11]) == pytest.approx((0.267 * hits.scores[i] + 3.194) / 0.693, abs=0.06)


def test_blast_tab_columns_agree_with_aligned_strings(db):
    rng = np.random.default_rng(7)
    letters = np.array(list("ACDEFGHIKLMNPQRSTVWY"))
    targets = {f"t{i}": "".join(rng.choice(letters, rng.integers(20, 60))) for i in range(12)}
    base = "".join(rng.choice(letters, 40))
    queries = [base[:15] + "WW" + base[15:30] + base[33:]]
    targets["src"] = base
    s = Scoring("BLOSUM62", gap_open=11, gap_extend=1)
    res = search(queries, targets, s, top_k=5, mode="full")
    out = io.StringIO()
    write_blast_tab(res, out)
    for line, aln in zip(out.getvalue().splitlines(), res[0].alignments):
        f = dict(zip(BLAST_TAB_COLUMNS, line.split("\t")))
        qa, ta = aln.query_aligned, aln.target_aligned
        ident = sum(a == b for a, b in zip(qa, ta))
        assert f["length"] == str(len(qa))
        assert f["pident"] == f"{100 * ident / len(qa):.3f}"
        assert f["mismatch"] == str(sum(a != b and "-" not in (a, b) for a, b in zip(qa, ta)))
        assert f["gapopen"] == str(len(re.findall("-+", qa)) + len(re.findall("-+", ta)))
        assert (int(f["qend"]) - int(f["qstart"]) + 1) == len(qa.replace("-", ""))
        assert (int(f["send"]) - int(f["sstart"]) + 1) == len(ta.replace("-", ""))
        assert f["evalue"] == f["bitscore"] == "NA"  # statistics not applied


def test_blast_tab_needs_alignments(db):
    res = search(QUERIES, db, B62, mode="end")
    with pytest.raises(NotComputed, match="mode='full'"):
        write_blast_tab(res, io.StringIO())


@pytest.mark.parametrize("value, text", [
    (0.0, "0.0"), (1e-181, "0.0"), (2.4e-150, "2e-150"), (6.1e-42, "6e-42"), (8.9e-4, "9e-04"),
    (0.0009, "0.001"), (0.0456, "0.046"), (0.1, "0.10"), (0.996, "1.00"), (1.0, "1.0"),
    (9.94, "9.9"), (10.0, "10"), (1234.6, "1235"),
])
def test_evalue_text_as_blast(value, text):
    assert format_evalue(value) == text


@pytest.mark.parametrize("value, text", [
    # above 99.9 BLAST prints (long)bits, a truncation: 99.96 -> "99", 152.99 -> "152"
    (4.61, "4.6"), (43.13, "43.1"), (99.9, "99.9"), (99.96, "99"), (152.99, "152"),
    (9999.0, "9999"), (10000.0, "1.000e+04"),
])
def test_bitscore_text_as_blast(value, text):
    assert format_bitscore(value) == text


# --- TSV and JSON ----------------------------------------------------------------------


def test_tsv_unchanged_by_statistics(db, full):
    plain = io.StringIO()
    write_search_tsv(search(QUERIES, db, B62, top_k=4, mode="full"), plain)
    with_stats = io.StringIO()
    write_search_tsv(full, with_stats)
    assert plain.getvalue() == with_stats.getvalue()


def test_json_has_evalue_and_bitscore_when_computed(db, full):
    out = io.StringIO()
    write_search_json(full, out)
    objs = [json.loads(line) for line in out.getvalue().splitlines()]
    hit = objs[0]["hits"][0]
    assert hit["evalue"] == pytest.approx(full[0].evalues[0])
    assert hit["bitscore"] == pytest.approx(full[0].bitscores[0])
    out = io.StringIO()
    write_search_json(search(QUERIES, db, B62), out)
    assert "evalue" not in json.loads(out.getvalue().splitlines()[0])["hits"][0]


# --- SAM ------------------------------------------------------------------------------

pysam = pytest.importorskip("pysam")
DNA = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)


def _mutate(rng, seq: str) -> str:
    out = []
    for c in seq:
        r = rng.random()
        if r < 0.06:
            continue                                       # deletion
        if r < 0.12:
            out.append(rng.choice(list("ACGT")))           # substitution
        else:
            out.append(c)
        if rng.random() < 0.04:
            out.append(rng.choice(list("ACGT")))           # insertion
    return "".join(out)


def _read_sam(text: str, tmp_path):
    path = tmp_path / "out.sam"
    path.write_text(text)
    with pysam.AlignmentFile(str(path), "r") as fh:
        header = [(r, fh.get_reference_length(r)) for r in fh.references]
        return header, list(fh)


def test_sam_round_trip_through_pysam(tmp_path):
    rng = np.random.default_rng(2024)
    refs = {f"chr{i}": "".join(rng.choice(list("ACGT"), int(rng.integers(150, 400))))
            for i in range(3)}
    records = []
    for k in range(40):
        name = f"chr{k % 3}"
        ref = refs[name]
        a = int(rng.integers(0, len(ref) - 60))
        core = _mutate(rng, ref[a:a + int(rng.integers(30, 60))])
        flank = lambda: "".join(rng.choice(list("ACGT"), int(rng.integers(0, 12))))
        query = flank() + core + flank()
        records.append(SamRecord(f"read{k}", query, name, align(query, ref, DNA, mode="full")))
    records.append(SamRecord("empty", "AAAA", "chr0", align("AAAA", "CCCC", DNA, mode="full")))
    out = io.StringIO()
    write_sam(records, out, {n: len(r) for n, r in refs.items()})
    header, reads = _read_sam(out.getvalue(), tmp_path)
    assert header == [(n, len(s)) for n, s in refs.items()]
    assert len(reads) == len(records)
    for rec, read in zip(records, reads):
        aln = rec.alignment
        assert read.query_name == rec.query_name
        assert read.query_sequence == rec.query  # the whole query: ends soft-clipped
        if aln.score == 0:
            assert read.is_unmapped and read.flag == 4 and read.cigarstring is None
            continue
        assert read.flag == 0 and read.mapping_quality == 255
        assert read.reference_name == rec.reference
        assert read.reference_start == aln.target_start and read.reference_end == aln.target_end
        assert read.cigarstring == sam_cigar(aln, len(rec.query))
        assert (read.query_alignment_start, read.query_alignment_end) == (aln.query_start,
                                                                          aln.query_end)
        assert read.get_tag("AS") == aln.score
        # rebuild the aligned strings from what pysam read and compare with ours
        ref = refs[rec.reference]
        qa = "".join("-" if q is None else rec.query[q]
                     for q, t in read.get_aligned_pairs() if q is None or
                     aln.query_start <= q < aln.query_end)
        ta = "".join("-" if t is None else ref[t]
                     for q, t in read.get_aligned_pairs() if q is None or
                     aln.query_start <= q < aln.query_end)
        assert (qa, ta) == (aln.query_aligned, aln.target_aligned)
        assert read.get_tag("NM") == sum(a != b for a, b in zip(qa, ta))


def test_sam_of_search_hits_with_secondary_flags(tmp_path):
    targets = {"a": "TTTTACGTACGTAAAA", "b": "GGACGTACGTGG", "c": "CCCCCCCC"}
    dbn = Database.from_sequences(targets, alphabet="dna")
    queries = ["ACGTACGT", "GGGGGG"]
    res = search(queries, dbn, DNA, top_k=2, mode="full", strand="plus")  # ACGTACGT is its
    out = io.StringIO()                                                    # own reverse complement
    write_sam(search_sam_records(res, queries), out, zip(dbn.names, dbn.lengths))
    header, reads = _read_sam(out.getvalue(), tmp_path)
    assert header == [("a", 16), ("b", 12), ("c", 8)]
    first, second = reads[0], reads[1]
    assert (first.reference_name, first.reference_start, first.cigarstring) == ("a", 4, "8M")
    assert (second.reference_name, second.reference_start, second.cigarstring) == ("b", 2, "8M")
    assert first.flag == 0 and second.flag == 256
    assert first.get_tag("AS") == second.get_tag("AS") == 16
    # the second query: GG scores 4 on b (smallest ends: query 0..2, target 0..2)
    assert reads[2].reference_name == "b" and reads[2].cigarstring == "2M4S"
    assert reads[2].reference_start == 0 and reads[2].flag == 0
    assert len(reads) == 4


def test_sam_protein_cigar_pos_and_score(tmp_path):
    # BAM's 4-bit SEQ cannot hold amino acids, so check the alignment fields only.
    aln = align("HEAGAWGHEE", "PAWHEAE", Scoring("BLOSUM62"), mode="full")
    out = io.StringIO()
    write_sam([("q", "HEAGAWGHEE", "t", aln)], out, {"t": 7})
    _, (read,) = _read_sam(out.getvalue(), tmp_path)
    assert (read.reference_start, read.cigarstring, read.get_tag("AS")) == (1, "4S2M1I2M1S", 17)


def test_sam_errors():
    aln = Alignment(5, 0, 2, 0, 2, "2M", "AC", "AC")
    with pytest.raises(ValueError, match="not in reference_lengths"):
        write_sam([("q", "AC", "nope", aln)], io.StringIO(), {"t": 2})
    with pytest.raises(ValueError, match="twice"):
        write_sam([], io.StringIO(), [("t", 2), ("t", 3)])
    with pytest.raises(NotComputed):
        write_sam([("q", "AC", "t", Alignment(5, None, 2, None, 2))], io.StringIO(), {"t": 2})
    with pytest.raises(ValueError, match="shorter"):
        sam_cigar(aln, 1)
    for seq in ("A*", "A\t", "A "):
        with pytest.raises(ValueError, match="cannot be written as SAM SEQ"):
            write_sam([("q", seq, "t", aln)], io.StringIO(), {"t": 2})
    for qual in ("I ", "I\x7f", "Ié", "I"):     # a space, DEL, non-ASCII, one short
        with pytest.raises(ValueError, match="quality string cannot be written"):
            write_sam([SamRecord("q", "AC", "t", aln, qual)], io.StringIO(), {"t": 2})
    minus = Alignment(5, 0, 2, 0, 2, "2M", "AC", "AC", strand="-")
    with pytest.raises(ValueError, match="'J', which has no complement"):
        write_sam([("q", "aJ", "t", minus)], io.StringIO(), {"t": 2})
    text = io.StringIO()
    write_sam([SamRecord("q", "aCn", "t", minus, "!~I")], text, {"t": 2})
    assert text.getvalue().splitlines()[-1].split("\t")[9:11] == ["nGt", "I~!"]
    text = io.StringIO()
    write_sam([("q", 7, "t", aln)], text, {"t": 2})  # length only: SEQ "*"
    assert text.getvalue().splitlines()[-1].split("\t")[5:10] == ["2M5S", "*", "0", "0", "*"]


def test_sam_names_follow_the_spec_and_pysam_reads_them(tmp_path):
    """QNAME [!-?A-~]{1,254}; RNAME and @SQ SN [0-9A-Za-z!#$%&+./:;?@^_|~-][...*=...]*:
    the longest and oddest valid names round-trip through pysam; an invalid one is an
    error naming it, never a file that samtools rejects or a name silently changed."""
    aln = Alignment(4, 0, 2, 0, 2, "2M", "AC", "AC")
    qname = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) != "@") * 3
    qname = qname[:254]
    rname = "HLA-A*01:01=x|gi#1;%^_~"
    out = io.StringIO()
    write_sam([(qname, "AC", rname, aln)], out, {rname: 2})
    header, (read,) = _read_sam(out.getvalue(), tmp_path)
    assert header == [(rname, 2)] and (read.query_name, read.reference_name) == (qname, rname)
    bad_queries = {"r" * 255: "255 characters, SAM allows at most 254", "": "it is empty",
                   "read 1": "character ' ' at position 4", "r\t1": "character '\\t'",
                   "a@b": "character '@' at position 1", "lé": "character 'é'"}
    for name, why in bad_queries.items():
        with pytest.raises(ValueError, match=re.escape(why)) as err:
            write_sam([(name, "AC", "t", aln)], io.StringIO(), {"t": 2})
        assert "cannot be written as SAM QNAME" in str(err.value)
        assert repr(name[:40]).strip("'") in str(err.value)
    bad_references = {"*x": "cannot start with '*'", "=x": "cannot start with '='",
                      "chr 1": "character ' ' at position 3", "a(b)": "character '('",
                      "x,y": "character ','", "": "it is empty"}
    for name, why in bad_references.items():
        with pytest.raises(ValueError, match=re.escape(why)) as err:
            write_sam([], io.StringIO(), {name: 2})
        assert f"reference name {name!r} cannot be written as SAM RNAME" in str(err.value)


# --- pandas -----------------------------------------------------------------------------


def test_to_pandas_columns_per_mode(db):
    pytest.importorskip("pandas")
    cols = {m: list(search(QUERIES, db, B62, top_k=2, mode=m)[0].to_pandas().columns)
            for m in ("score", "end", "full")}
    assert cols["score"] == ["query", "target", "name", "score"]
    assert cols["end"] == ["query", "target", "name", "score", "query_end", "target_end"]
    assert cols["full"] == ["query", "target", "name", "score", "query_start", "query_end",
                            "target_start", "target_end", "cigar", "identity", "length"]


def test_results_to_pandas_with_statistics(full):
    pd = pytest.importorskip("pandas")
    df = results_to_pandas(full)
    assert len(df) == sum(len(h) for h in full)
    assert df["query"].tolist() == ["q1"] * len(full[0]) + ["q2"] * len(full[1])
    assert df["score"].tolist() == [int(x) for h in full for x in h.scores]
    np.testing.assert_allclose(df["evalue"], np.concatenate([h.evalues for h in full]))
    assert df.loc[0, "cigar"] == full[0].alignments[0].cigar
    assert pd.api.types.is_integer_dtype(df["target_start"])
    assert results_to_pandas([]).empty


# --- Biopython inputs -------------------------------------------------------------------


def test_seqrecords_and_seqio_streams(db):
    from Bio import SeqIO
    from Bio.Seq import Seq
    from Bio.SeqRecord import SeqRecord
    want = search(QUERIES, db, B62, top_k=3, mode="full")
    recs = [SeqRecord(Seq(s), id=n, description="x") for n, s in QUERIES.items()]
    fasta = "".join(f">{n} some description\n{s}\n" for n, s in QUERIES.items())
    tfasta = "".join(f">{n}\n{s}\n" for n, s in TARGETS.items())
    for queries, database in [(recs, db),
                              (SeqIO.parse(io.StringIO(fasta), "fasta"), db),
                              (QUERIES, SeqIO.parse(io.StringIO(tfasta), "fasta")),
                              (recs, [SeqRecord(Seq(s), id=n) for n, s in TARGETS.items()])]:
        got = search(queries, database, B62, top_k=3, mode="full")
        assert [h.query_name for h in got] == ["q1", "q2"]
        for a, b in zip(got, want):
            assert a.names == b.names and a.scores.tolist() == b.scores.tolist()
            assert [x.cigar for x in a.alignments] == [x.cigar for x in b.alignments]


# --- CLI -------------------------------------------------------------------------------


def test_cli_blast6_and_evalue(tmp_path, capsys):
    from warpalign.cli import main
    q = tmp_path / "q.fasta"
    q.write_text("".join(f">{n}\n{s}\n" for n, s in QUERIES.items()))
    t = tmp_path / "t.fasta"
    t.write_text("".join(f">{n}\n{s}\n" for n, s in TARGETS.items()))
    args = ["search", str(q), str(t), "--gap-open", "12", "--gap-extend", "1", "--no-progress"]
    assert main([*args, "--format", "blast6"]) == 0
    rows = [r.split("\t") for r in capsys.readouterr().out.splitlines()]
    assert all(len(r) == 12 for r in rows) and all(r[10] != "NA" for r in rows)
    assert main([*args, "--format", "blast6", "--evalue", "1e-3"]) == 0
    kept = [r.split("\t") for r in capsys.readouterr().out.splitlines()]
    assert 0 < len(kept) < len(rows) and all(float(r[10]) <= 1e-3 for r in kept)
    assert main([*args[:3], "--matrix", "BLOSUM50", "--gap-open", "10", "--gap-extend", "2",
                 "--evalue", "1"]) == 1
    err = capsys.readouterr().err   # in the command line's terms: BLAST's 8/2 is not there
    assert "--evalue: " in err and "gap existence 8, extension 2" in err
    assert "as --blast-gaps EXISTENCE/EXTENSION: " in err and " 12/2 " in err


def _cli_files(tmp_path):
    q = tmp_path / "q.fasta"
    q.write_text("".join(f">{n}\n{s}\n" for n, s in QUERIES.items()))
    t = tmp_path / "t.fasta"
    t.write_text("".join(f">{n}\n{s}\n" for n, s in TARGETS.items()))
    return ["search", str(q), str(t), "--no-progress"]


def test_cli_blast_gaps_are_existence_plus_extension(tmp_path, capsys):
    from warpalign.cli import main
    args = [*_cli_files(tmp_path), "--format", "blast6"]
    assert main([*args, "--gap-open", "12", "--gap-extend", "1"]) == 0
    ours = capsys.readouterr().out
    assert main([*args, "--blast-gaps", "11", "1"]) == 0
    assert capsys.readouterr().out == ours and ours
    assert main([*args, "--blast-gaps", "11", "1", "--gap-open", "12"]) == 1
    assert "give either --blast-gaps or --gap-open/--gap-extend" in capsys.readouterr().err
    assert main([*args, "--blast-gaps", "-1", "1"]) == 1
    assert "--blast-gaps -1 1" in capsys.readouterr().err


def test_cli_blast6_is_comment_free_unless_header_states_the_gaps(tmp_path, capsys):
    from warpalign.cli import main
    args = [*_cli_files(tmp_path), "--format", "blast6", "--blast-gaps", "11", "1"]
    assert main(args) == 0
    assert not any(line.startswith("#") for line in capsys.readouterr().out.splitlines())
    assert main([*args, "--header"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("# Fields: qseqid, sseqid")
    assert lines[1].startswith("# Scoring: BLOSUM62, gap existence 11, extension 1 (BLAST")
    assert "warpalign gap_open 12, gap_extend 1" in lines[1]


def test_cli_blast6_without_statistics_says_so_once(tmp_path, capsys):
    from warpalign.cli import main
    assert main([*_cli_files(tmp_path), "--format", "blast6", "--matrix", "PAM250"]) == 0
    out, err = capsys.readouterr()
    rows = [r.split("\t") for r in out.splitlines()]
    assert len(rows) > 1 and all(r[10:] == ["NA", "NA"] for r in rows)
    notes = err.splitlines()
    assert len(notes) == 1 and "evalue and bitscore columns are NA" in notes[0]
    assert "PAM250 with gap existence 12, extension 2 (--gap-open 14" in notes[0]
    assert main([*_cli_files(tmp_path), "--format", "blast6", "--match", "1", "--mismatch",
                 "-1", "--gap-open", "2", "--gap-extend", "1", "--alphabet", "protein"]) == 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--match/--mismatch scoring 1/-1 on protein has no " \
        "published" in err and "DNA with BLASTN's match/mismatch pairs 1/-5, 1/-4" in err
    assert main([*_cli_files(tmp_path), "--format", "blast6"]) == 0   # statistics: no note
    assert capsys.readouterr().err == ""


def test_cli_dna_statistics_from_blastn_tables(tmp_path, capsys):
    """DNA searches have E-values for BLASTN's reward/penalty tables (the --alphabet dna
    default, 2/-3 with BLAST gaps 5/2, among them); other DNA scorings say once on stderr
    where statistics exist, and --evalue with them is an error before the search."""
    from warpalign.cli import main
    from warpalign.data import example_reads_path, example_reference_path
    base = ["search", str(example_reads_path()), str(example_reference_path()),
            "--no-progress", "--format", "blast6", "--alphabet", "dna", "-k", "1"]
    assert main(base) == 0
    out, err = capsys.readouterr()
    rows = [r.split("\t") for r in out.splitlines()]
    assert err == "" and rows and all(r[10] != "NA" and r[11] != "NA" for r in rows)
    paper = ["--match", "1", "--mismatch", "-2", "--gap-open", "5", "--gap-extend", "1"]
    assert main([*base, *paper]) == 0
    out, err = capsys.readouterr()
    assert all(r.split("\t")[10:] == ["NA", "NA"] for r in out.splitlines())
    assert err.count("\n") == 1 and "no Karlin-Altschul parameters (lambda, K) for --match " \
        "1 --mismatch -2 with gap existence 4, extension 1" in err
    assert "as --blast-gaps EXISTENCE/EXTENSION: 1/1 2/1 3/1 0/2 1/2 2/2" in err
    assert main([*base, *paper, "--evalue", "1e-5"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("warpalign search: error: --evalue: BLASTN's tables")
    assert main([*base, "--match", "1", "--mismatch", "-2", "--blast-gaps", "2", "1",
                 "--evalue", "1e-5"]) == 0
    assert capsys.readouterr().err == ""


def test_cli_help_states_the_gap_and_evalue_conventions(capsys, monkeypatch):
    import pytest

    from warpalign.cli import main
    monkeypatch.setenv("COLUMNS", "2000")   # argparse wraps at hyphens otherwise
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--blast-gaps EXISTENCE EXTENSION" in text
    assert "costs EXISTENCE + k*EXTENSION" in text
    assert "BLAST's 11/1 is --gap-open 12 --gap-extend 1" in text
    assert "only with -comp_based_stats 0" in text


# --- reports people read (issue 24 item 7) ------------------------------------------


def test_align_text_is_blast_pairwise_with_1_based_positions_per_line():
    from warpalign import align
    from warpalign.formats import format_alignment
    s = Scoring(match=2, mismatch=-1, gap_open=3, gap_extend=1)
    a = "ACGTACGTAC" * 8 + "G" * 10 + "TTACGTACGA" * 3      # 10 extra query symbols
    b = "CC" + "ACGTACGTAC" * 8 + "TTACGTACGA" * 3
    aln = align(a, b, s)
    assert (aln.query_start, aln.target_start, aln.cigar) == (0, 2, "80M10I30M")
    text = format_alignment("q", "t", aln, width=30).splitlines()
    assert text[1].startswith("# query 1-120, target 3-112 (1-based inclusive)")
    rows = [line.split() for line in text if line.startswith(("Query", "Sbjct"))]
    assert [(r[0], r[1], r[3]) for r in rows] == [
        ("Query", "1", "30"), ("Sbjct", "3", "32"),
        ("Query", "31", "60"), ("Sbjct", "33", "62"),
        ("Query", "61", "90"), ("Sbjct", "63", "82"),     # 10 gaps in the subject
        ("Query", "91", "120"), ("Sbjct", "83", "112")]
    # residues start in one column on every line, the match line under them
    block = text[2:5]
    assert block[0].index("ACGT") == block[2].index("ACGT") == block[1].index("|")
    assert block[0][:7] == "Query  " and block[2][:7] == "Sbjct  "


def test_cli_align_text_shows_query_and_sbjct_positions(capsys):
    from warpalign.cli import main
    assert main(["align", "--literal", "HEAGAWGHEE", "PAWHEAE"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2].split() == ["Query", "5", "AWGHE", "9"]
    assert out[4].split() == ["Sbjct", "2", "AW-HE", "5"]


def test_empty_to_pandas_has_the_dtypes_of_a_full_one(db):
    pytest.importorskip("pandas")
    for mode in ("score", "end", "full"):
        some = search(QUERIES, db, B62, top_k=2, mode=mode, evalue=1e6)[0].to_pandas()
        none = search(QUERIES, db, B62, top_k=2, mode=mode, evalue=1e-300)[0].to_pandas()
        assert len(some) and none.empty
        assert none.dtypes.to_dict() == some.dtypes.to_dict()
    full = results_to_pandas(search(QUERIES, db, B62, top_k=2))
    empty = results_to_pandas([])
    assert empty.empty and list(empty.columns) == ["query", "target", "name", "score"]
    assert empty.dtypes.to_dict() == full[list(empty.columns)].dtypes.to_dict()


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from("ACGT-é"), st.sampled_from("ACGT-é")),
                max_size=150),
       st.integers(0, 3))
@example([("A", "A")] * 70 + [("-", "-")] * 3 + [("C", "G"), ("-", "T"), ("T", "-")], 0)
def test_alignment_counts_per_column(columns, extra):
    # matches, mismatches, length and identity as the columns define them, whatever the
    # strings' length (short ones and long ones are counted differently), gap-gap
    # columns, non-ASCII symbols and strings of unequal length (zip's reading) included
    qa = "".join(a for a, _ in columns)
    ta = "".join(b for _, b in columns) + "A" * extra
    pairs = [(a, b) for a, b in zip(qa, ta) if a != "-" and b != "-"]
    cigar = f"{len(columns)}M" if columns else ""
    aln = Alignment(score=1, query_start=0, query_end=len(qa), target_start=0,
                    target_end=len(ta), cigar=cigar, query_aligned=qa, target_aligned=ta)
    assert aln.matches == sum(a == b for a, b in pairs)
    assert aln.mismatches == sum(a != b for a, b in pairs)
    assert aln.length == len(columns)
    assert aln.identity == (aln.matches / len(columns) if columns else 0.0)
