"""Reading FASTA/FASTQ (plain, gzip) and encoding sequences from every accepted source."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pytest
from Bio import SeqIO
from Bio.Seq import Seq
from Bio.SeqRecord import SeqRecord
from hypothesis import given, settings
from hypothesis import strategies as st

from warpalign.alphabet import DNA, PROTEIN
from warpalign.errors import AlphabetError, InputError
from warpalign.io import Record, load_sequences, read_sequences

FASTA = """\
>sp|P1|ONE first protein
MKVLA
AGW

>two
WWW
>empty record here
>
acdef
"""

FASTQ = """\
@r1 read one
ACGTN
+
IIIII
@r2
acg
+r2
@II
"""


def _write(path, text: str, compress: bool = False):
    data = text.encode()
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return path


def test_fasta_records_names_descriptions_empty_and_unnamed(tmp_path):
    records = list(read_sequences(_write(tmp_path / "a.fasta", FASTA)))
    assert records == [
        Record("sp|P1|ONE", "first protein", "MKVLAAGW"),
        Record("two", "", "WWW"),
        Record("empty", "record here", ""),
        Record("seq3", "", "acdef"),  # blank header: seq<0-based index>
    ]


@pytest.mark.parametrize("name", ["a.fasta", "a.fasta.gz", "noext"])
@pytest.mark.parametrize("compress", [False, True])
def test_gzip_detected_by_magic_not_extension(tmp_path, name, compress):
    path = _write(tmp_path / name, FASTA, compress)
    names, codes = load_sequences(path, "protein")
    assert names == ["sp|P1|ONE", "two", "empty", "seq3"]
    assert [PROTEIN.decode(c) for c in codes] == ["MKVLAAGW", "WWW", "", "ACDEF"]


@pytest.mark.parametrize("compress", [False, True])
def test_fastq(tmp_path, compress):
    path = _write(tmp_path / "r.fq", FASTQ, compress)
    records = list(read_sequences(path, "dna"))
    assert [(r.name, r.description, r.quality) for r in records] == [
        ("r1", "read one", "IIIII"), ("r2", "", "@II")]
    assert DNA.decode(records[1].sequence) == "ACG"  # lower case folds
    names, codes = load_sequences(str(path), "dna")
    assert names == ["r1", "r2"] and [len(c) for c in codes] == [5, 3]


def test_text_and_binary_handles_are_left_open():
    text = io.StringIO(FASTA)
    assert len(list(read_sequences(text))) == 4
    assert not text.closed
    binary = io.BytesIO(gzip.compress(FASTQ.encode()))
    assert [r.name for r in read_sequences(binary)] == ["r1", "r2"]
    assert not binary.closed


def test_crlf_bom_and_leading_blank_lines(tmp_path):
    path = tmp_path / "w.fa"
    path.write_bytes(b"\xef\xbb\xbf\r\n\r\n>x desc\r\nMK\r\nV\r\n")
    assert list(read_sequences(path)) == [Record("x", "desc", "MKV")]


def test_explicit_format_must_match(tmp_path):
    path = _write(tmp_path / "a.fa", FASTA)
    assert len(list(read_sequences(path, format="fasta"))) == 4
    with pytest.raises(InputError, match=r"line 1: expected a FASTQ record"):
        list(read_sequences(path, format="fastq"))
    with pytest.raises(ValueError, match="invalid format: 'genbank'"):
        list(read_sequences(path, format="genbank"))


# --- bad inputs ----------------------------------------------------------------------

def test_missing_path_names_the_path(tmp_path):
    missing = tmp_path / "nope.fasta"
    with pytest.raises(InputError, match="nope.fasta: no such file"):
        load_sequences(missing, "protein")
    with pytest.raises(InputError, match="nope.fasta"):
        load_sequences(str(missing), "protein")  # a str with '.' is a path


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(InputError, match="is a directory"):
        list(read_sequences(tmp_path))


@pytest.mark.parametrize("content", [b"", b"\n  \n\t\n", gzip.compress(b"", mtime=0),
                                     gzip.compress(b"\n\n", mtime=0)])
def test_empty_file_has_no_sequences(tmp_path, content):
    path = tmp_path / "empty.fa"
    path.write_bytes(content)
    with pytest.raises(InputError, match=r"empty\.fa: no sequences"):
        load_sequences(path, "protein")


def test_truncated_gzip(tmp_path):
    rng = np.random.default_rng(3)
    text = "".join(f">r{i}\n" + "".join(rng.choice(list("ACDEFGHIKL"), 2000)) + "\n"
                   for i in range(20))
    data = gzip.compress(text.encode(), mtime=0)
    path = tmp_path / "cut.fa.gz"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.fa\.gz: truncated or corrupt gzip"):
        load_sequences(path, "protein")
    path.write_bytes(data[:5])  # cut inside the gzip header
    with pytest.raises(InputError, match=r"cut\.fa\.gz: truncated or corrupt gzip"):
        load_sequences(path, "protein")


def test_corrupt_gzip_stream(tmp_path):
    data = bytearray(gzip.compress(FASTA.encode() * 50, mtime=0))
    data[30:40] = b"\xff" * 10
    path = tmp_path / "bad.gz"
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match=r"bad\.gz: truncated or corrupt gzip"):
        load_sequences(path, "protein")


def test_not_fasta_names_file_and_line(tmp_path):
    path = _write(tmp_path / "notes.txt", "\n\nhello world\n>a\nMKV\n")
    with pytest.raises(InputError, match=r"notes\.txt: line 3: expected a FASTA .* 'hello world'"):
        load_sequences(path, "protein")


def test_binary_file_is_refused(tmp_path):
    rng = np.random.default_rng(7)
    blob = rng.integers(0, 256, 3000, dtype=np.uint8).tobytes()
    cases = [("bin.dat", b">" + blob + b"\x00"), ("png.dat", b"\x89PNG\r\n\x1a\n" + blob)]
    for name, data in cases:
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError, match=rf"{name}: line 1: binary data"):
            load_sequences(path, "protein")


def test_invalid_residue_names_record_position_character(tmp_path):
    path = _write(tmp_path / "bad.fa", ">ok\nMKV\n>broken one\nMKVL\nAAJW\n")
    with pytest.raises(AlphabetError) as info:
        load_sequences(path, "protein")
    err = info.value
    assert (err.record, err.position, err.character) == ("broken", 6, "J")
    msg = str(err)
    assert "bad.fa" in msg and "'broken'" in msg and "position 6 (0-based)" in msg and "'J'" in msg
    with pytest.raises(AlphabetError, match=r"record 'broken', position 6 \(0-based\)"):
        list(read_sequences(path, "protein"))
    assert [r.sequence for r in read_sequences(path)][1] == "MKVLAAJW"  # no alphabet, no check


def test_first_bad_record_in_file_order_is_reported():
    # the long bad record sorts after the short one; the file's first bad one is named
    with pytest.raises(AlphabetError) as info:
        load_sequences(io.StringIO(">long\nMKVLAAAAAAAA1\n>short\n2\n"), "protein")
    assert (info.value.record, info.value.position, info.value.character) == ("long", 12, "1")


def test_non_ascii_residue(tmp_path):
    path = tmp_path / "u.fa"
    path.write_bytes(">u\nMK\u00e9V\n".encode())
    with pytest.raises(AlphabetError) as info:
        load_sequences(path, "protein")
    assert (info.value.record, info.value.position, info.value.character) == ("u", 2, "\u00e9")
    with pytest.raises(AlphabetError, match=r"record 'seq1', position 1 \(0-based\)"):
        load_sequences(["MKV", "M\u00e9"], "protein")


def test_dna_alphabet_rejects_protein_letters():
    with pytest.raises(AlphabetError, match=r"record 'p', position 1 \(0-based\): character 'E'"):
        load_sequences({"d": "ACGT", "p": "MEV"}, "dna")


def test_truncated_fastq_names_line(tmp_path):
    path = _write(tmp_path / "cut.fq", "@r1\nACGT\n+\nIIII\n@r2\nACGT\n+\nII")
    with pytest.raises(InputError, match=r"cut\.fq: line 8: invalid FASTQ record 2"):
        load_sequences(path, "dna")
    path = _write(tmp_path / "noqual.fq", "@r1\nACGT\n")
    with pytest.raises(InputError, match=r"noqual\.fq: .*invalid FASTQ record 1"):
        load_sequences(path, "dna")


# --- in-memory sources ---------------------------------------------------------------

def test_every_in_memory_source_kind():
    arr = np.frombuffer(b"wyv", dtype=np.uint8)
    sources = ["MKV", b"MKV", np.frombuffer(b"MKV", dtype=np.uint8), Seq("MKV"),
               SeqRecord(Seq("MKV"), id="rec")]
    for src in sources:
        names, codes = load_sequences(src, "protein")
        assert len(codes) == 1 and PROTEIN.decode(codes[0]) == "MKV"
    names, codes = load_sequences(["MKV", b"ac", arr, SeqRecord(Seq("W"), id="r3"), ""], "protein")
    assert names == ["seq0", "seq1", "seq2", "r3", "seq4"]
    assert [PROTEIN.decode(c) for c in codes] == ["MKV", "AC", "WYV", "W", ""]
    assert codes[0].dtype == np.uint8
    names, codes = load_sequences({"x": "ACGT", "y": "tt"}, "dna")
    assert names == ["x", "y"] and DNA.decode(codes[1]) == "TT"
    assert load_sequences([], "protein") == ([], [])
    assert load_sequences(["M", SeqRecord(Seq("W"), id="r")], "protein",
                          default_name="query")[0] == ["query0", "r"]
    assert [r.name for r in read_sequences(io.StringIO(">\nM\n"), default_name="q")] == ["q0"]


def test_seqio_iterator(tmp_path):
    path = _write(tmp_path / "a.fa", FASTA)
    with open(path) as handle:
        names, codes = load_sequences(SeqIO.parse(handle, "fasta"), "protein")
    assert names == ["sp|P1|ONE", "two", "empty", "seq3"]  # SeqIO gives "" as the last id
    assert PROTEIN.decode(codes[0]) == "MKVLAAGW"


def test_str_source_is_sequence_unless_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert load_sequences("QUERY", "protein")[0] == ["seq0"]  # no such file: a sequence
    _write(tmp_path / "QUERY", ">q\nMKV\n")
    assert load_sequences("QUERY", "protein")[0] == ["q"]  # an existing file wins
    assert load_sequences(Path("QUERY"), "protein")[0] == ["q"]
    with pytest.raises(InputError, match="QUERIES: no such file"):
        load_sequences(Path("QUERIES"), "protein")  # a Path is a file whatever its name


def test_str_naming_a_directory_is_not_a_sequence(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "seqdir").mkdir()
    with pytest.raises(InputError, match="seqdir: is a directory"):
        load_sequences("seqdir", "protein")


@pytest.mark.parametrize("text", ["reads.fq", "reads.FASTA.gz", "out/x", "db.wa"])
def test_bytes_alphabet_path_look_is_an_error(tmp_path, monkeypatch, text):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match=f"{text}: no such file"):
        load_sequences(text, "bytes")
    assert load_sequences("hello.world", "bytes")[0] == ["seq0"]  # no file ending: a text
    assert load_sequences(b"reads.fq", "bytes")[0] == ["seq0"]    # bytes are never paths


def test_align_and_locate_read_one_record_files(tmp_path):
    from warpalign import Scoring, align, locate
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    one = _write(tmp_path / "a.fa", ">a\nTACTG\n")
    two = _write(tmp_path / "b.fa", ">b1\nGAACTGA\n>b2\nTT\n")
    assert align(str(one), "GAACTGA", s).score == 8
    hits = locate(one, "GAACTGA", s)       # a file of reads: one result per read
    assert len(hits) == 1 and hits[0].score == 8
    with pytest.raises(InputError, match="b.fa: expected one target sequence, got 2"):
        align("TACTG", str(two), s)
    with pytest.raises(InputError, match="missing.fa: no such file"):
        align(str(tmp_path / "missing.fa"), "GAACTGA", s)


def test_bad_item_type():
    with pytest.raises(InputError, match=r"record 'seq1': expected a sequence"):
        load_sequences(["MKV", 17], "protein")
    with pytest.raises(InputError, match="dtype uint8"):
        load_sequences([np.zeros(3, dtype=np.int32)], "protein")
    with pytest.raises(TypeError, match="got int"):
        load_sequences(5, "protein")


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.text("ACDEFGHIKLMNPQRSTVWYacdefghiklmnpqrstvwy", max_size=90),
                          st.integers(1, 80)), max_size=12),
       st.booleans())
def test_fasta_round_trip(items, compress):
    seqs = [s for s, _ in items]
    text = "".join(f">r{i} d\n" + "\n".join(s[j:j + w] for j in range(0, len(s), w)) + "\n"
                   for i, (s, w) in enumerate(items))
    if not seqs:
        return
    data = gzip.compress(text.encode()) if compress else text.encode()
    names, codes = load_sequences(io.BytesIO(data), "protein")
    assert names == [f"r{i}" for i in range(len(seqs))]
    assert [PROTEIN.decode(c) for c in codes] == [s.upper() for s in seqs]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.one_of(st.sampled_from([">", ">a b", "> x\t", "", " ", "\r", "\t>c"]),
                          st.text(">ACGT acgt\r\t*-", max_size=12)), max_size=14),
       st.booleans())
def test_fasta_records_read_as_biopython(lines, last_newline):
    # fasta_records replaces Bio.SeqIO's SimpleFastaParser (whose import costs ~0.25 s):
    # the same (title, sequence) pairs for any lines, text before the first record, blank
    # lines, spaces, tabs and carriage returns included
    from Bio.SeqIO.FastaIO import SimpleFastaParser

    from warpalign.io import fasta_records
    text = "\n".join(lines) + ("\n" if last_newline else "")
    got = list(fasta_records(io.StringIO(text, newline="")))
    assert got == list(SimpleFastaParser(io.StringIO(text, newline="")))


def test_reading_fasta_loads_no_biopython(tmp_path):
    # Biopython loads for FASTQ only; Seq and SeqRecord inputs are still recognised
    import subprocess
    import sys
    fasta = tmp_path / "q.fa"
    fasta.write_text(">a\nMKV\n>b\nWW\n")
    code = ("import sys\n"
            "from warpalign.io import load_sequences, read_sequences\n"
            f"assert [r.name for r in read_sequences({str(fasta)!r})] == ['a', 'b']\n"
            "assert not [m for m in sys.modules if m.split('.')[0] == 'Bio'], 'Bio loaded'\n"
            "from Bio.Seq import Seq\nfrom Bio.SeqRecord import SeqRecord\n"
            "names, codes = load_sequences([SeqRecord(Seq('MKV'), id='r'), Seq('W')], 'protein')\n"
            "assert names == ['r', 'seq1'] and [len(c) for c in codes] == [3, 1]\n")
    subprocess.run([sys.executable, "-c", code], check=True)
