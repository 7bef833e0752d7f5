"""The on-disk database: build, open, sorted order, buckets, chunks, corruption, atomicity."""

from __future__ import annotations

import gzip
import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warpalign._backends import TargetSet
from warpalign.alphabet import DNA, PROTEIN
from warpalign.data import example_database_path, example_queries_path
from warpalign.database import BUCKET_BOUNDARIES, FORMAT_VERSION, Database
from warpalign.errors import AlphabetError, AlphabetMismatch, DatabaseError, InputError
from warpalign.io import load_sequences, read_sequences

AMINO = np.frombuffer(b"ARNDCQEGHILKMFPSTWYVBZX", dtype=np.uint8)
BIG_DB = Path("/work/shared/data/protein/mmseqs2_example_DB.fasta.gz")


def random_fasta(path: Path, n: int = 300, seed: int = 1, compress: bool = True):
    """A FASTA file with lengths 0..~1500 (ties included), lower case, wrapped lines."""
    rng = np.random.default_rng(seed)
    seqs, names, lines = [], [], []
    for i in range(n):
        length = int(rng.choice([0, 5, 64, 65, 200, int(rng.integers(1, 1500))]))
        seq = AMINO[rng.integers(0, len(AMINO), length)].tobytes().decode()
        if i % 7 == 0:
            seq = seq.lower()
        names.append(f"p{i}")
        seqs.append(seq.upper())
        lines.append(f">p{i} protein number {i}\n")
        lines.extend(seq[j:j + 60] + "\n" for j in range(0, len(seq), 60))
    data = "".join(lines).encode()
    path.write_bytes(gzip.compress(data, mtime=0) if compress else data)
    return names, seqs


@pytest.fixture
def built(tmp_path):
    names, seqs = random_fasta(tmp_path / "in.fa.gz")
    db = Database.build(tmp_path / "in.fa.gz", tmp_path / "db.wa")
    return db, names, seqs, tmp_path / "db.wa"


def check_database(db: Database, names: list[str], seqs: list[str]):
    n = len(seqs)
    assert len(db) == n and db.names == names
    assert [db.name(i) for i in range(n)] == names
    assert [PROTEIN.decode(db.sequence(i)) for i in range(n)] == seqs
    assert db.lengths.tolist() == [len(s) for s in seqs]
    assert db.residues == sum(map(len, seqs))
    # sorted by length, ties in original order
    assert db.order.tolist() == sorted(range(n), key=lambda i: (len(seqs[i]), i))
    targets = db.targets
    assert isinstance(targets, TargetSet) and len(targets) == n
    assert all(PROTEIN.decode(targets[k]) == seqs[db.order[k]] for k in range(n))
    assert np.array_equal(db.rank[db.order], np.arange(n))
    # buckets: consecutive, covering, each length within its bound
    start = 0
    for max_length, b_start, b_stop in db.buckets:
        assert b_start == start and b_stop > b_start
        assert targets.lengths[b_start:b_stop].max() <= max_length
        start = b_stop
    assert start == n


def test_round_trip(built):
    db, names, seqs, path = built
    check_database(db, names, seqs)
    reopened = Database.open(path)
    check_database(reopened, names, seqs)
    assert reopened.path == path and reopened.alphabet == PROTEIN
    fresh = Database.open(path, verify=False)
    assert [fresh.name(i) for i in (0, 17, -1)] == [names[0], names[17], names[-1]]  # no cache
    picks = [17, 0, -1, 17, len(names) - 1]
    assert fresh.names_at(np.array(picks)) == [names[i] for i in picks]      # from the map
    assert reopened.names_at(picks) == [names[i] for i in picks] and reopened.names
    assert reopened.names_at(picks) == [names[i] for i in picks]             # decoded list
    assert fresh.names_at([]) == []
    with pytest.raises(IndexError, match=f"sequence index {len(names)} out of range"):
        fresh.names_at([0, len(names)])
    meta = json.loads((path / "meta.json").read_text())
    assert meta["version"] == FORMAT_VERSION and meta["sequences"] == len(seqs)
    assert meta["alphabet"]["name"] == "protein" and meta["residues"] == db.residues
    assert (meta["min_length"], meta["max_length"]) == (min(map(len, seqs)), max(map(len, seqs)))
    assert meta["buckets"]["boundaries"] == list(BUCKET_BOUNDARIES)
    assert sum(meta["buckets"]["counts"]) == len(seqs)
    assert meta["buckets"]["counts"][0] == sum(len(s) <= 64 for s in seqs)
    assert set(meta["files"]) == {"codes.npy", "offsets.npy", "order.npy", "names.npy",
                                  "name_offsets.npy"}
    assert not reopened.sequence(3).flags.writeable


def test_matches_reader(tmp_path):
    random_fasta(tmp_path / "x.fa", n=50, seed=5, compress=False)
    db = Database.build(tmp_path / "x.fa", tmp_path / "x.wa")
    records = list(read_sequences(tmp_path / "x.fa", "protein"))
    assert db.names == [r.name for r in records]
    assert all(np.array_equal(db.sequence(i), r.sequence) for i, r in enumerate(records))


def test_fastq_and_list_sources(tmp_path):
    (tmp_path / "r.fq").write_text("@a\nACGT\n+\nIIII\n@b\nac\n+\nII\n")
    db = Database.build(str(tmp_path / "r.fq"), str(tmp_path / "r.wa"), alphabet="dna")
    assert db.names == ["a", "b"] and DNA.decode(db.sequence(1)) == "AC"
    assert Database.open(tmp_path / "r.wa").alphabet == DNA
    db = Database.build(["MKV", "W", "mkvla"], tmp_path / "l.wa")
    assert db.names == ["seq0", "seq1", "seq2"] and db.order.tolist() == [1, 0, 2]
    assert PROTEIN.decode(db.sequence(2)) == "MKVLA"


def test_from_sequences_in_memory():
    db = Database.from_sequences(["MKVLA", "WW", "", "MKV"], names=["a", "b", "c", "d"])
    assert db.path is None and len(db) == 4 and db.order.tolist() == [2, 1, 3, 0]
    assert db.name(-1) == "d" and db.lengths.tolist() == [5, 2, 0, 3]
    assert {n: PROTEIN.decode(c) for n, c in db} == {"a": "MKVLA", "b": "WW", "c": "",
                                                             "d": "MKV"}
    assert db.meta["sequences"] == 4
    with pytest.raises(IndexError):
        db.sequence(4)
    with pytest.raises(ValueError, match="got 1 names for 4 sequences"):
        Database.from_sequences(["MKVLA", "WW", "", "MKV"], names=["a"])
    empty = Database.from_sequences([])
    assert len(empty) == 0 and empty.buckets == [] and list(empty.chunks(10)) == []
    with pytest.raises(AlphabetError, match=r"record 'b', position 1 \(0-based\)"):
        Database.from_sequences({"a": "MK", "b": "M1"})


def test_nucleotide_input_needs_an_alphabet(tmp_path):
    dna = tmp_path / "dna.fa"
    dna.write_text(">c1\nACGTACGTTAGC\n>c2\nacgtnnacgtRY\n")
    with pytest.raises(AlphabetMismatch, match=r"dna.fa: nucleotide sequences .*"
                                                r"alphabet='dna'") as info:
        Database.build(dna, tmp_path / "db.wa")
    assert isinstance(info.value, AlphabetError) and not (tmp_path / "db.wa").exists()
    with pytest.raises(AlphabetMismatch, match="input: nucleotide"):
        Database.from_sequences(["ACGTACGTAC"])
    for alphabet, symbols in (("dna", DNA.symbols), ("protein", PROTEIN.symbols),
                              ("bytes", "")):
        Database.build(dna, tmp_path / f"{alphabet}.wa", alphabet=alphabet)
        meta = json.loads((tmp_path / f"{alphabet}.wa" / "meta.json").read_text())
        assert meta["alphabet"] == {"name": alphabet, "symbols": symbols}
        assert Database.open(tmp_path / f"{alphabet}.wa").alphabet.name == alphabet
    assert len(Database.from_sequences(["ACGT", "GGA"])) == 2   # 7 residues: undecided


def test_bytes_alphabet_keeps_every_byte():
    raw = bytes(range(256))
    db = Database.from_sequences([raw, b"\x00"], alphabet="bytes")
    assert db.sequence(0).tobytes() == raw and db.order.tolist() == [1, 0]


def test_chunks_cover_everything_once(built):
    db, _, _seqs, _ = built
    lengths = db.targets.lengths
    for max_residues in (1, 100, 1000, 5000, 10**9):
        chunks = list(db.chunks(max_residues))
        assert chunks[0][0] == 0 and chunks[-1][1] == len(db)
        assert all(a[1] == b[0] for a, b in itertools.pairwise(chunks))
        for start, stop in chunks:
            assert stop > start
            assert lengths[start:stop].sum() <= max_residues or stop - start == 1
    assert list(db.chunks(10**9)) == [(0, len(db))]
    with pytest.raises(ValueError, match="invalid max_residues: 0"):
        next(db.chunks(0))


def test_huge_sequence_gets_its_own_chunk():
    db = Database.from_sequences(["", "", "W", "WW", "W" * 1000])
    assert list(db.chunks(3)) == [(0, 4), (4, 5)]
    assert db.buckets == [(64, 0, 4), (1024, 4, 5)]


def test_bucket_slices_with_other_bounds():
    db = Database.from_sequences(["W" * n for n in (1, 10, 10, 11, 300)])
    assert db.bucket_slices([10, 100]) == [(10, 0, 3), (100, 3, 4), (300, 4, 5)]


@settings(max_examples=30, deadline=None, derandomize=True)
@given(st.lists(st.integers(0, 300), max_size=40), st.integers(1, 700))
def test_sorted_order_and_chunks_property(lengths, max_residues):
    db = Database.from_sequences(["W" * n for n in lengths])
    assert db.order.tolist() == sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    covered = [i for start, stop in db.chunks(max_residues) for i in range(start, stop)]
    assert covered == list(range(len(lengths)))
    covered = [i for _, start, stop in db.buckets for i in range(start, stop)]
    assert covered == list(range(len(lengths)))


# --- corruption ----------------------------------------------------------------------

def test_truncated_file(built):
    _, _, _, path = built
    codes = path / "codes.npy"
    codes.write_bytes(codes.read_bytes()[:-10])
    for verify in (True, False):
        with pytest.raises(DatabaseError,
                           match=r"codes\.npy: \d+ bytes, expected \d+ \(truncated\)"):
            Database.open(path, verify=verify)


def test_flipped_byte(built):
    _, _, seqs, path = built
    names_file = path / "names.npy"
    data = bytearray(names_file.read_bytes())
    data[-3] ^= 0x01
    names_file.write_bytes(bytes(data))
    with pytest.raises(DatabaseError, match=r"names\.npy: checksum mismatch"):
        Database.open(path)
    assert len(Database.open(path, verify=False)) == len(seqs)  # sizes alone cannot tell


def test_missing_files(built):
    _, _, _, path = built
    (path / "order.npy").unlink()
    with pytest.raises(DatabaseError, match=r"order\.npy: missing"):
        Database.open(path)
    (path / "meta.json").unlink()
    with pytest.raises(DatabaseError, match=r"meta\.json: missing"):
        Database.open(path)
    with pytest.raises(DatabaseError, match="no such directory"):
        Database.open(path.parent / "elsewhere")


def test_wrong_version_and_bad_meta(built):
    _, _, _, path = built
    meta_path = path / "meta.json"
    meta = json.loads(meta_path.read_text())
    meta_path.write_text(json.dumps({**meta, "version": 99}))
    with pytest.raises(DatabaseError, match=r"meta\.json: format version 99 is not supported"):
        Database.open(path)
    meta_path.write_text("{not json")
    with pytest.raises(DatabaseError, match=r"meta\.json: unreadable or not JSON"):
        Database.open(path)
    meta_path.write_text(json.dumps({**meta, "sequences": meta["sequences"] + 1}))
    with pytest.raises(DatabaseError, match=r"offsets\.npy: \d+ entries, expected"):
        Database.open(path)


def test_consistent_but_wrong_array_is_caught_by_verify(built):
    _, _, _, path = built
    meta_path = path / "meta.json"
    meta = json.loads(meta_path.read_text())
    order = np.load(path / "order.npy")
    order[0] = order[1]
    np.save(path / "order.npy", order)
    meta["files"]["order.npy"]["blake2b"] = __import__("hashlib").blake2b(
        (path / "order.npy").read_bytes(), digest_size=32).hexdigest()
    del meta["files"]["order.npy"]["blake2b_chunk"]         # the whole-file form
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DatabaseError, match=r"order\.npy: not a permutation"):
        Database.open(path)


def _whole(data):
    return __import__("hashlib").blake2b(data, digest_size=32).hexdigest()


def _chunked(data, chunk):
    hashlib = __import__("hashlib")
    return _whole(b"".join(hashlib.blake2b(data[lo:lo + chunk], digest_size=32).digest()
                           for lo in range(0, len(data), chunk)))


def test_checksums_of_both_forms_verify(built):
    # a database from before chunked checksums (whole-file BLAKE2b, no "blake2b_chunk")
    # and one of another chunk size both open verified; a flipped byte fails either
    _, _, seqs, path = built
    meta_path = path / "meta.json"
    meta = json.loads(meta_path.read_text())
    assert all(info["blake2b"] == _chunked((path / name).read_bytes(), info["blake2b_chunk"])
               for name, info in meta["files"].items())
    for name, info in meta["files"].items():
        data = (path / name).read_bytes()
        if name == "names.npy":
            info["blake2b"], info["blake2b_chunk"] = _chunked(data, 7), 7
        else:
            info["blake2b"] = _whole(data)
            del info["blake2b_chunk"]
    meta_path.write_text(json.dumps(meta))
    assert len(Database.open(path, verify=True)) == len(seqs)
    for name in ("codes.npy", "names.npy"):
        data = bytearray((path / name).read_bytes())
        data[-1] ^= 0x01
        (path / name).write_bytes(bytes(data))
        with pytest.raises(DatabaseError, match=rf"{name.replace('.', '[.]')}: checksum mismatch"):
            Database.open(path, verify=True)
        data[-1] ^= 0x01
        (path / name).write_bytes(bytes(data))
    meta["files"]["names.npy"]["blake2b_chunk"] = 0
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(DatabaseError, match=r"blake2b_chunk of names\.npy: 0, expected a "
                                            r"positive int"):
        Database.open(path, verify=False)


# --- atomic writes -------------------------------------------------------------------

def test_input_error_leaves_nothing(tmp_path):
    (tmp_path / "bad.fa").write_text(">a\nMKV\n>b\nMK9\n")
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(AlphabetError, match="'b'"):
        Database.build(tmp_path / "bad.fa", out / "db.wa")
    with pytest.raises(InputError, match="no such file"):
        Database.build(tmp_path / "missing.fa", out / "db.wa")
    with pytest.raises(InputError, match="no sequences"):
        Database.build([], out / "db.wa")
    assert list(out.iterdir()) == []


def test_write_failure_leaves_nothing(tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    real_save, calls = np.save, []

    def failing_save(file, array, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real_save(file, array, **kwargs)

    monkeypatch.setattr(np, "save", failing_save)
    with pytest.raises(OSError, match="No space left"):
        Database.build(["MKV", "WW"], out / "db.wa")
    assert list(out.iterdir()) == []


def test_overwrite(tmp_path):
    path = tmp_path / "db.wa"
    Database.build(["MKV"], path)
    with pytest.raises(DatabaseError, match="already exists; pass overwrite=True"):
        Database.build(["WW"], path)
    db = Database.build(["WW", "A"], path, overwrite=True)
    assert len(Database.open(path)) == 2 and db.names == ["seq0", "seq1"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.wa"]
    other = tmp_path / "precious"
    other.mkdir()
    (other / "thesis.tex").write_text("...")
    with pytest.raises(DatabaseError, match="not a warpalign database; refusing"):
        Database.build(["WW"], other, overwrite=True)
    assert (other / "thesis.tex").exists()


# --- killed and racing builds ---------------------------------------------------------

def _stale_name(host=None, boot=None, pid=None, start=None, kind="tmp", token="zz9"):
    from warpalign.database import owner_tag
    my_host, my_boot, pid, my_start = owner_tag(pid).split("-")
    start = my_start if start is None else start
    return f".db.wa.{kind}-{host or my_host}-{boot or my_boot}-{pid}-{start}-{token}"


def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_next_build_removes_what_dead_builds_left_and_keeps_the_rest(tmp_path):
    from warpalign.database import owner_tag
    started = int(owner_tag().split("-")[3])                 # 0: unknown here
    dead = {_stale_name(pid=_dead_pid()), _stale_name(pid=_dead_pid(), kind="old"),
            _stale_name(boot="0badb007")}                    # an earlier boot of this host
    if started:
        dead.add(_stale_name(start=started + 1))             # this pid, reused
    alive = {_stale_name(token="other"),                    # a live build (this process)
             _stale_name(host="0a0b0c0d", pid=_dead_pid()),  # another host: cannot tell
             ".db.wa.tmp-k2j3h4g5", ".db.wa.old-x8y7",        # nobody named: cannot tell
             _stale_name(pid=_dead_pid()).replace("db.wa", "db2.wa")}   # another target
    for name in dead | alive:
        (tmp_path / name).mkdir()
        (tmp_path / name / "codes.npy").write_bytes(b"x" * 1000)
    Database.build(["MKV", "WW"], tmp_path / "db.wa")
    assert {p.name for p in tmp_path.iterdir()} == alive | {"db.wa"}


_KILL_DURING = """
import os, signal, sys
import numpy as np
from warpalign.database import Database
step, calls = sys.argv[3], []
real = np.save if step == "save" else os.replace
def die(*args, **kwargs):
    calls.append(1)
    if step == "save" or len(calls) == 2:   # replace: between the two renames
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
if step == "save":
    np.save = die
else:
    os.replace = die
Database.build(sys.argv[1], sys.argv[2], overwrite=True)
"""


@pytest.mark.parametrize("step", ["save", "replace"])
def test_build_killed_by_sigkill_is_cleaned_up_by_the_next(tmp_path, step):
    """SIGKILL while writing (a temporary directory left behind), or between moving the
    old database aside and moving the new one in (the target gone, the old database in
    ``.db.wa.old-*/db``): the next build removes what the killed one left."""
    (tmp_path / "in.fa").write_text(">a\nMKVLA\n>b\nWW\n")
    path = tmp_path / "db.wa"
    Database.build(["MKV"], path)
    run = subprocess.run([sys.executable, "-c", _KILL_DURING, str(tmp_path / "in.fa"),
                          str(path), step], check=False, capture_output=True, timeout=120)
    assert run.returncode == -signal.SIGKILL, run.stderr
    left = sorted(p.name for p in tmp_path.iterdir())
    if step == "save":
        assert [n.split("-")[0] for n in left] == [".db.wa.lock", ".db.wa.tmp", "db.wa",
                                                  "in.fa"]
        assert len(Database.open(path)) == 1
        with pytest.raises(DatabaseError, match="already exists"):
            Database.build(["WW"], path)
    else:
        assert [n.split("-")[0] for n in left] == [".db.wa.lock", ".db.wa.old", ".db.wa.tmp",
                                                  "in.fa"]
        Database.build(["WW"], path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.wa", "in.fa"]
    Database.build(tmp_path / "in.fa", path, overwrite=True)
    assert Database.open(path).names == ["a", "b"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.wa", "in.fa"]


def test_racing_builds_of_one_path_one_wins_the_other_fails_cleanly(tmp_path):
    import threading

    path = tmp_path / "db.wa"
    Database.build(["MKV"], path)
    inside, release = threading.Event(), threading.Event()

    def slow_input():   # the first build holds the path while it reads its input
        inside.set()
        release.wait(60)
        yield from ["WW", "A"]

    result = {}
    first = threading.Thread(name="first", target=lambda: result.update(
        db=Database.build(slow_input(), path, overwrite=True)))
    first.start()
    try:
        assert inside.wait(60)
        with pytest.raises(DatabaseError, match=r"db\.wa: another build is writing it right "
                                                r"now; try again once it has finished"):
            Database.build(["MKVW"], path, overwrite=True)
        assert Database.open(path).names == ["seq0"]            # untouched so far
    finally:
        release.set()
        first.join(60)
    assert len(result["db"]) == 2 and len(Database.open(path)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.wa"]
    Database.build(["MKVW"], path, overwrite=True)               # the lock is free again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["db.wa"]


def test_racing_makedb_force_processes(tmp_path):
    """Processes racing ``makedb --force``: each ends whole or with the clean error; the
    database that is left opens and verifies; no directory or lock is left behind."""
    from warpalign.data import example_database_path
    path = tmp_path / "db.wa"
    for _ in range(2):
        procs = [subprocess.Popen([sys.executable, "-m", "warpalign", "makedb",
                                   str(example_database_path()), str(path), "--force"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(3)]
        ends = [(p.wait(120), p.stderr.read()) for p in procs]
        for p in procs:
            p.stderr.close()
            p.stdout.close()
        assert any(code == 0 for code, _ in ends), ends
        for code, err in ends:
            assert code == 0 or (code == 1 and "another build is writing it" in err), err
            assert "Traceback" not in err
        assert len(Database.open(path)) == 2000
        assert sorted(p.name for p in tmp_path.iterdir()) == ["db.wa"]


def test_progress_bar(tmp_path, capsys):
    Database.build(example_queries_path(), tmp_path / "q.wa", progress=True)
    assert "reading" in capsys.readouterr().err


# --- bundled data --------------------------------------------------------------------

def test_example_data(tmp_path):
    db = Database.build(example_database_path(), tmp_path / "ex.wa")
    assert len(db) == 2000 and db.residues == 928_757
    assert os.path.getsize(example_database_path()) + os.path.getsize(example_queries_path()) < 1e6
    names, codes = load_sequences(example_queries_path(), "protein")
    assert len(names) == 5 and all(0 < len(c) <= 600 for c in codes)


@pytest.mark.skipif(not BIG_DB.exists(), reason="shared example data not present")
def test_mmseqs_example_database(tmp_path):
    db = Database.build(BIG_DB, tmp_path / "big.wa")
    assert len(db) == 20_000 and db.residues == 9_055_569
    assert len(Database.open(tmp_path / "big.wa")) == 20_000


def test_an_unchanged_database_opens_without_rereading_a_changed_one_is_verified(tmp_path):
    """Database.open skips the checksums of files verified before and unchanged since
    (size, modification time, inode), verifies again after any change, and verify=True
    always reads everything."""
    src = tmp_path / "p.fasta"
    src.write_text(">a\nMKVLAWHEAGAWGHEE\n>b\nPAWHEAEMKV\n")
    path = tmp_path / "p.wa"
    Database.build(src, path)
    codes = path / "codes.npy"
    stat = codes.stat()
    raw = bytearray(codes.read_bytes())
    raw[-1] ^= 1                                     # a flipped residue, same size
    codes.write_bytes(bytes(raw))
    with pytest.raises(DatabaseError, match="checksum mismatch"):
        Database.open(path)                          # its modification time changed
    # the same flip with the old modification time put back: not reread by default ...
    os.utime(codes, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    Database.open(path)
    with pytest.raises(DatabaseError, match="checksum mismatch"):
        Database.open(path, verify=True)             # ... but always with verify=True
    raw[-1] ^= 1
    codes.write_bytes(bytes(raw))                    # repaired: verified, then remembered
    assert len(Database.open(path)) == 2
    os.utime(codes, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    assert len(Database.open(path)) == 2             # touched: verified again, fine
