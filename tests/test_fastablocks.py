"""The block FASTA parser (``fastablocks``) against the line reader (``io.read_sequences``,
Biopython's parser, then ``io.encode_many``): the same names, codes and lengths, and the
same AlphabetError, at every block size (so every record, header, line and ``\\r\\n`` is
split across blocks at every byte), and ``Database.build`` files equal to the line
reader's build byte for byte."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from warpalign import Database
from warpalign.alphabet import get_alphabet
from warpalign.database import ARRAYS
from warpalign.errors import AlphabetError, InputError
from warpalign.fastablocks import applies, read_batches
from warpalign.io import encode_many, read_sequences

TRICKY = (b">first desc here\nMKVL\nacde\n>\n\n>second\tx\r\nMK\r\nWW\r\n>e1\n>e2 \n"
          b">  lead blank\nmk v l  \nQQ\t\n>tab\theader\nA\n\n\nC\n>caf\xc3\xa9 x\nMM\n"
          b">cr\rRR\rKK\r>x>y z\nY\n>ab\xc2\xa0cd e\nM\n>f\x1cg\x01 h\nK\n>plain caf\xc3\xa9\nW\n"
          b">last\nMKVLWWY")
BAD = b">ok\nMKV\n>second one\nMKVLWW\nMK1V\n>third\nMM\n"


def _oracle(data: bytes, alphabet):
    records = list(read_sequences(io.BytesIO(data)))
    names = [r.name for r in records]
    codes, lengths, _ = encode_many(names, [r.sequence for r in records], alphabet, "in")
    return names, codes.tolist(), lengths.tolist()


def _blocks(data: bytes, alphabet, block: int, threads: int = 1):
    names, codes, lengths = b"", [], []
    name_lengths = []
    for batch in read_batches(io.BytesIO(data), alphabet, "in", block=block, threads=threads):
        names += batch.names
        name_lengths += batch.name_lengths.tolist()
        codes += batch.codes.tolist()
        lengths += batch.lengths.tolist()
    bounds = np.cumsum([0, *name_lengths])
    split = [names[a:b].decode("utf-8", "surrogateescape") for a, b in zip(bounds, bounds[1:])]
    return split, codes, lengths


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("alphabet", ["protein", "bytes"])
def test_every_block_size_equals_the_line_reader(alphabet, threads):
    alpha = get_alphabet(alphabet)
    expected = _oracle(TRICKY, alpha)
    assert expected[0][:4] == ["first", "seq1", "second", "e1"]      # a sanity check
    assert expected[2][:3] == [8, 0, 4]
    assert expected[0][-4:] == ["ab", "f", "plain", "last"]           # str.split's blanks
    for block in range(1, len(TRICKY) + 2):
        assert _blocks(TRICKY, alpha, block, threads) == expected, block


def test_threads_name_unnamed_records_by_their_input_index():
    # unnamed records in many runs parsed at once: each named by its index in the input
    data = b"".join(b">\nMK\n>r%d x\nWW\n" % i for i in range(200))
    alpha = get_alphabet("protein")
    expected = _oracle(data, alpha)
    assert expected[0][:3] == ["seq0", "r0", "seq2"]
    for block in (7, 40, 333):
        for threads in (2, 4, 8):
            assert _blocks(data, alpha, block, threads) == expected, (block, threads)


def test_bytes_alphabet_keeps_file_bytes():
    data = b">n1\nAB\xc3\xa9 \xff\t\xc2\xa0\nCD\x0b\n>n2\n\x01\x7f\n"
    alpha = get_alphabet("bytes")
    expected = _oracle(data, alpha)
    assert expected[2] == [7, 2]          # the line reader strips U+00A0, \t, \x0b at ends
    for block in range(1, len(data) + 2):
        assert _blocks(data, alpha, block) == expected, block


@pytest.mark.parametrize("threads", [1, 4])
def test_bad_character_at_every_block_size(threads):
    alpha = get_alphabet("protein")
    with pytest.raises(AlphabetError) as want:
        _oracle(BAD, alpha)
    assert (want.value.record, want.value.position, want.value.character) == ("second", 8, "1")
    for block in range(1, len(BAD) + 2):
        with pytest.raises(AlphabetError) as got:
            _blocks(BAD, alpha, block, threads)
        assert str(got.value) == str(want.value), block


def test_threads_report_the_first_bad_character_in_input_order():
    # many bad records, in runs parsed at once: the first in the input is the one named
    good = b"".join(b">g%d\nMKVL\n" % i for i in range(50))
    data = good + b">first bad\nMKX1\n" + good + b">second bad\nMK2\n" + good
    alpha = get_alphabet("protein")
    with pytest.raises(AlphabetError) as want:
        _oracle(data, alpha)
    assert want.value.record == "first"
    for block in (5, 64, 1000):
        for threads in (1, 2, 8):
            with pytest.raises(AlphabetError) as got:
                _blocks(data, alpha, block, threads)
            assert str(got.value) == str(want.value), (block, threads)


def test_applies_only_to_a_plain_start():
    assert applies(b">a\nMKV\n")
    assert not applies(b"@r\nACGT\n+\nIIII\n")          # FASTQ
    assert not applies(b"\n>a\nMKV\n")                   # blank lines first
    assert not applies(b"\xef\xbb\xbf>a\nMKV\n")         # byte order mark
    assert not applies(b">a\x00\nMKV\n")                 # binary
    assert not applies(b">\xff\xfe\nMKV\n")              # a non-ASCII first line


def _files(path):
    return {key: (path / f"{key}.npy").read_bytes() for key in ARRAYS}


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("memory", [32 * 7, 32 * 100, 1 << 30])
@pytest.mark.parametrize("gz", [False, True])
def test_build_equals_the_line_reader_build(tmp_path, memory, gz, threads):
    rng = np.random.default_rng(5)
    letters = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWYacdefghiklmnpqrstvwy", np.uint8)
    parts = [TRICKY, b"\r\n"]
    for i in range(300):
        seq = letters[rng.integers(0, len(letters), int(rng.integers(0, 200)))].tobytes()
        end = b"\r\n" if i % 3 == 0 else b"\n"
        lines = [seq[k:k + 50] for k in range(0, len(seq), 50)]
        parts.append(b">r%d some text%s" % (i, end) + b"".join(x + end for x in lines))
    data = b"".join(parts)
    path = tmp_path / ("in.fa.gz" if gz else "in.fa")
    path.write_bytes(gzip.compress(data) if gz else data)
    Database.build(path, tmp_path / "fast.wa", memory=memory, threads=threads)
    with open(tmp_path / "plain.fa", "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(data.decode("utf-8", "surrogateescape"))
    with open(tmp_path / "plain.fa", encoding="utf-8", errors="surrogateescape") as text:
        Database.build(text, tmp_path / "lines.wa", memory=memory)   # a text handle: lines
    assert _files(tmp_path / "fast.wa") == _files(tmp_path / "lines.wa")


def test_build_errors_as_the_line_reader(tmp_path):
    path = tmp_path / "bad.fa"
    path.write_bytes(BAD)
    with open(path) as text, pytest.raises(AlphabetError) as want:
        Database.build(text, tmp_path / "x.wa")
    for memory in (32 * 3, 32 * 17, 1 << 30):
        for threads in (1, 2, 5):
            with pytest.raises(AlphabetError) as got:
                Database.build(path, tmp_path / "x.wa", memory=memory, threads=threads)
            assert str(got.value) == str(want.value)
    truncated = tmp_path / "t.fa.gz"
    truncated.write_bytes(gzip.compress(BAD.replace(b"1", b"L") * 50)[:-30])
    messages = set()
    for threads in (1, 2, 5):
        with pytest.raises(InputError, match="t.fa.gz: truncated or corrupt gzip data") as got:
            Database.build(truncated, tmp_path / "x.wa", memory=32 * 5, threads=threads)
        messages.add(str(got.value))
    assert len(messages) == 1, messages         # the same records counted before it
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.fa", "t.fa.gz"]
