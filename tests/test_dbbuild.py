"""``Database.build`` from a file in bounded memory (``dbbuild.py``): the files equal an
in-memory build's byte for byte, however small the memory budget (many length groups,
lengths too big for one group, empty sequences), and errors are the in-memory build's."""

from __future__ import annotations

import gzip
import hashlib
import os

import numpy as np
import pytest

from warpalign import Database
from warpalign.database import ARRAYS
from warpalign.errors import AlphabetError, AlphabetMismatch, InputError

LETTERS = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)


def _records(seed=1):
    rng = np.random.default_rng(seed)
    lengths = np.concatenate([rng.integers(0, 300, 400), [1000] * 5, [7] * 60, [0] * 4])
    rng.shuffle(lengths)
    return [(f"s{i}" if i % 9 else "", LETTERS[rng.integers(0, 20, m)].tobytes().decode())
            for i, m in enumerate(lengths)]


def _write_fasta(path, records, width=60):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt") as f:
        for name, seq in records:
            f.write(f">{name} some description\n" if name else ">\n")
            for k in range(0, len(seq), width):
                f.write(seq[k:k + width] + "\n")


def _files(path):
    return {key: (path / f"{key}.npy").read_bytes() for key in ARRAYS}


@pytest.mark.parametrize("threads", [1, 2, 4])
@pytest.mark.parametrize("memory", [32 * 50, 32 * 3000, 1 << 30])
@pytest.mark.parametrize("suffix", [".fa", ".fa.gz"])
def test_streamed_build_equals_in_memory(tmp_path, memory, suffix, threads):
    records = _records()
    fasta = tmp_path / f"in{suffix}"
    _write_fasta(fasta, records)
    streamed = Database.build(fasta, tmp_path / "s.wa", memory=memory, threads=threads)
    in_memory = Database.build([seq for _, seq in records], tmp_path / "m.wa")
    a, b = _files(tmp_path / "s.wa"), _files(tmp_path / "m.wa")
    for key in ("codes", "offsets", "order"):
        assert a[key] == b[key], key
    names = [name or f"seq{i}" for i, (name, _) in enumerate(records)]
    assert streamed.names == names
    assert [streamed.alphabet.decode(streamed.sequence(i)) for i in range(len(records))] == \
           [seq for _, seq in records]
    assert streamed.meta["buckets"] == in_memory.meta["buckets"]
    assert streamed.meta["source"] == str(fasta)
    assert sorted(os.listdir(tmp_path)) == sorted(["in" + suffix, "s.wa", "m.wa"])
    sums = {name: info["blake2b"] for name, info in streamed.meta["files"].items()}
    assert sums == {name: _chunked((tmp_path / "s.wa" / name).read_bytes())
                    for name in sums}
    assert {info["blake2b_chunk"] for info in streamed.meta["files"].values()} == {1 << 24}


def _chunked(data, chunk=1 << 24):
    """The chunked checksum, by hand: BLAKE2b-256 of the chunks' BLAKE2b-256 digests."""
    return hashlib.blake2b(b"".join(hashlib.blake2b(data[lo:lo + chunk], digest_size=32)
                                    .digest() for lo in range(0, len(data), chunk)),
                           digest_size=32).hexdigest()


@pytest.mark.parametrize("threads", [1, 3])
def test_streamed_build_of_several_checksum_chunks(tmp_path, threads):
    # codes.npy spans three 16 MiB chunks (written and hashed on threads, cut anywhere
    # by the writes): its checksum is the chunked one, and it verifies when opened
    rng = np.random.default_rng(5)
    lengths = rng.integers(1_500_000, 3_000_000, 24)
    records = [(f"s{i}", LETTERS[rng.integers(0, 20, m)].tobytes().decode())
               for i, m in enumerate(lengths)]
    fasta = tmp_path / "in.fa"
    _write_fasta(fasta, records, width=80)
    db = Database.build(fasta, tmp_path / "s.wa", memory=64 << 20, threads=threads)
    data = (tmp_path / "s.wa" / "codes.npy").read_bytes()
    assert len(data) > 2 * (1 << 24)
    assert db.meta["files"]["codes.npy"]["blake2b"] == _chunked(data)
    assert db.meta["files"]["codes.npy"]["size"] == len(data)
    reopened = Database.open(tmp_path / "s.wa", verify=True)
    order = sorted(range(len(records)), key=lambda i: (len(records[i][1]), i))
    assert reopened.order.tolist() == order
    assert reopened.alphabet.decode(reopened.sequence(int(order[-1]))) == records[order[-1]][1]


def test_streamed_build_is_the_same_at_every_thread_count(tmp_path):
    # every thread count, a budget of one group and of many: the same files, byte for byte
    records = _records(seed=7) * 3
    fasta = tmp_path / "in.fa"
    _write_fasta(fasta, records, width=37)
    files = set()
    for memory in (32 * 40, 32 * 900, 1 << 30):
        for threads in (1, 2, 3, 7):
            db = Database.build(fasta, tmp_path / "t.wa", memory=memory, threads=threads,
                                overwrite=True)
            meta = {k: v for k, v in db.meta.items() if k != "created_by"}
            files.add((tuple(sorted(_files(tmp_path / "t.wa").items())), repr(meta)))
    assert len(files) == 1


def test_cli_makedb_threads(tmp_path):
    from warpalign.cli import main
    fasta = tmp_path / "in.fa"
    _write_fasta(fasta, _records())
    assert main(["makedb", str(fasta), str(tmp_path / "one.wa"), "--threads", "1"]) == 0
    assert main(["makedb", str(fasta), str(tmp_path / "four.wa"), "--threads", "4",
                 "--memory", "4000"]) == 0
    assert _files(tmp_path / "one.wa") == _files(tmp_path / "four.wa")
    with pytest.raises(SystemExit):
        main(["makedb", str(fasta), str(tmp_path / "x.wa"), "--threads", "0"])
    with pytest.raises(ValueError, match="invalid threads: 0"):
        Database.build(fasta, tmp_path / "x.wa", threads=0)


def test_streamed_build_fastq_and_handles(tmp_path):
    fq = tmp_path / "r.fq"
    fq.write_text("@a x\nMKVL\n+\nIIII\n@b\nWW\n+\nII\n")
    db = Database.build(fq, tmp_path / "q.wa", memory=64)
    assert db.names == ["a", "b"] and db.lengths.tolist() == [4, 2]
    with open(fq, "rb") as handle:
        db2 = Database.build(handle, tmp_path / "h.wa", memory=64)
    assert _files(tmp_path / "q.wa") == _files(tmp_path / "h.wa")
    assert db2.order.tolist() == [1, 0]


def test_streamed_build_errors_leave_nothing(tmp_path):
    bad = tmp_path / "bad.fa"
    bad.write_text(">ok\nMKV\n>second\nMK1V\n")
    with pytest.raises(AlphabetError,
                       match=r"bad.fa: record 'second', position 2 \(0-based\): character '1'"):
        Database.build(bad, tmp_path / "x.wa", memory=64)
    dna = tmp_path / "dna.fa"
    dna.write_text(">d\nACGTACGTACGTTGCA\n")
    with pytest.raises(AlphabetMismatch, match="alphabet='dna'"):
        Database.build(dna, tmp_path / "x.wa", memory=64)
    assert Database.build(dna, tmp_path / "d.wa", alphabet="dna").residues == 16
    empty = tmp_path / "empty.fa"
    empty.write_text("")
    with pytest.raises(InputError, match="no sequences"):
        Database.build(empty, tmp_path / "x.wa")
    assert sorted(os.listdir(tmp_path)) == ["bad.fa", "d.wa", "dna.fa", "empty.fa"]


def test_streamed_build_progress(tmp_path, capsys):
    fasta = tmp_path / "in.fa"
    _write_fasta(fasta, _records())
    Database.build(fasta, tmp_path / "p.wa", memory=32 * 500, progress=True)
    err = capsys.readouterr().err
    assert "reading" in err and "sorting" in err


@pytest.mark.parametrize("top", [0, 3, 40_000, 1 << 16, 5_000_000])
def test_order_by_length_is_the_stable_argsort(top):
    # the counting sort (top up to 2**16 or twice the count) and NumPy's stable argsort
    # beyond it: ties (many: few distinct lengths) in index order, zero lengths first
    from warpalign.dbbuild import by_length
    rng = np.random.default_rng(top)
    for n in (0, 1, 7, 5000):
        lengths = rng.integers(0, top + 1, n)
        got = by_length(lengths)
        assert got.dtype == np.int64
        assert got.tolist() == np.argsort(lengths, kind="stable").tolist()
