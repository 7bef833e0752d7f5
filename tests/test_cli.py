"""The command line: outputs, exit codes, error messages, pipes and progress bars."""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from warpalign.cli import main

QUERIES = ">q1 first\nMKVLAWHEAGAWGHEE\n>q2\nPAWHEAE\n"
TARGETS = ">t1\nHEAGAWGHEE\n>t2 second\nMKVLAW\n>t3\nWWWWPAWHEAEWWW\n>t4\nGGGG\n"


@pytest.fixture
def files(tmp_path):
    q = tmp_path / "q.fasta"
    q.write_text(QUERIES)
    t = tmp_path / "t.fasta.gz"
    with gzip.open(t, "wt") as fh:
        fh.write(TARGETS)
    return tmp_path, q, t


def run_cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_makedb_then_search_tsv(files, capsys):
    tmp, q, t = files
    code, _, err = run_cli(capsys, "makedb", t, tmp / "db.wa", "--no-progress")
    assert code == 0 and "4 sequences" in err
    code, out, err = run_cli(capsys, "search", q, tmp / "db.wa", "-k", "2", "--no-progress")
    assert code == 0, err
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[:2] for r in rows] == [["q1", "t1"], ["q1", "t3"], ["q2", "t3"], ["q2", "t1"]]
    # q1 = MKVLAW + HEAGAWGHEE; t1 = HEAGAWGHEE aligns to q1[6:16] -> 1-based 7..16
    q1t1 = rows[0]
    assert q1t1[5:9] == ["7", "16", "1", "10"]
    assert q1t1[3] == "100.00" and q1t1[4] == "10"
    assert rows[2][5:9] == ["1", "7", "5", "11"]


def test_search_json_and_fasta_database(files, capsys):
    _tmp, q, t = files
    code, out, err = run_cli(capsys, "search", q, t, "--format", "json", "-k", "1",
                             "--matrix", "BLOSUM50", "--gap-open", "10", "--gap-extend", "2")
    assert code == 0, err
    objs = [json.loads(line) for line in out.splitlines()]
    assert [o["query"] for o in objs] == ["q1", "q2"]
    hit = objs[0]["hits"][0]
    assert hit["name"] == "t1" and hit["query_start"] == 6 and hit["query_end"] == 16
    assert hit["cigar"] == "10M"


def test_output_file_written_whole(files, capsys):
    tmp, q, t = files
    out_path = tmp / "hits.tsv"
    code, out, _ = run_cli(capsys, "search", q, t, "-o", out_path)
    assert code == 0 and out == ""
    assert out_path.read_text().count("\n") == 8


def test_failed_search_leaves_no_output_file(files, capsys):
    tmp, _q, t = files
    bad = tmp / "bad.fasta"
    bad.write_text(">q1\nMKV\n>q2\nMK1V\n")
    out_path = tmp / "hits.tsv"
    code, _, err = run_cli(capsys, "search", bad, t, "-o", out_path)
    assert code == 1
    assert "q2" in err and "'1'" in err and "position 2" in err
    assert not out_path.exists()
    assert not [p for p in os.listdir(tmp) if p.startswith(".warpalign-")]


@pytest.mark.parametrize("argv, needle", [
    (["search", "{q}", "{tmp}/missing.fasta"], "missing.fasta"),
    (["search", "{q}", "{t}", "--matrix", "BLOSUM63"], "unknown matrix: 'BLOSUM63'"),
    (["search", "{q}", "{t}", "--gap-open", "-3", "--gap-extend", "1"], "non-negative"),
    (["search", "{q}", "{t}", "-k", "0"], "top_k"),
    (["search", "{tmp}/empty.fasta", "{t}"], "no sequences"),
    (["makedb", "{tmp}/notfasta.txt", "{tmp}/x.wa"], "notfasta.txt"),
    (["makedb", "{tmp}/trunc.fasta.gz", "{tmp}/x.wa"], "trunc.fasta.gz"),
])
def test_errors_are_one_line_with_nonzero_exit(files, capsys, argv, needle):
    tmp, q, t = files
    (tmp / "empty.fasta").write_text("")
    (tmp / "notfasta.txt").write_text("this is not a sequence file\n")
    (tmp / "trunc.fasta.gz").write_bytes(gzip.compress(TARGETS.encode() * 50)[:60])
    args = [a.format(q=q, t=t, tmp=tmp) for a in argv]
    code, _out, err = run_cli(capsys, *args)
    assert code != 0
    assert needle in err
    assert "Traceback" not in err
    assert not (tmp / "x.wa").exists()


def test_align_text_and_tsv(capsys):
    code, out, _ = run_cli(capsys, "align", "--literal", "ATGCTCATAGA", "ATGCCTCACTGA",
                           "--match", "5", "--mismatch", "-3", "--gap-open", "8",
                           "--gap-extend", "1")
    assert code == 0
    assert "score 31" in out  # paper 004, Fig. 3
    code, out, _ = run_cli(capsys, "align", "--literal", "TACTG", "GAACTGA", "--match", "2",
                           "--mismatch", "-1", "--gap-open", "1", "--gap-extend", "1",
                           "--format", "tsv")
    assert code == 0
    assert out.splitlines()[1].split("\t")[2] == "8"  # paper 000, Table II


@pytest.mark.parametrize("argv, missing", [
    (["lcs", "nope.txt", "ACGT"], "nope.txt"),
    (["lcs", "{q}", "ACGT"], "ACGT"),
    (["align", "ACGTACGT", "{q}"], "ACGTACGT"),
    (["align", "{q}", "nope.fa"], "nope.fa"),
    (["locate", "ACGTACGT", "{q}"], "ACGTACGT"),
    (["locate", "--literal", "ACGTACGT", "ref"], "ref"),
    (["pairs", "{q}", "ys"], "ys"),
    (["search", "queries", "{t}"], "queries"),
    (["search", "{q}", "mydb"], "mydb"),
    (["makedb", "input", "{tmp}/x.wa"], "input"),
])
def test_missing_file_is_an_error_never_a_sequence(files, capsys, monkeypatch, argv, missing):
    tmp, q, t = files
    monkeypatch.chdir(tmp)
    code, out, err = run_cli(capsys, *[a.format(q=q, t=t, tmp=tmp) for a in argv])
    assert code == 1 and out == ""
    assert err.startswith(f"warpalign {argv[0]}: error: {missing}: no such ")
    assert err.count("\n") == 1 and "Traceback" not in err


def test_literal_flag_is_in_help(capsys):
    for command in ("align", "lcs", "locate"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--literal" in capsys.readouterr().out


def _stdin(monkeypatch, text):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_dash_reads_standard_input(files, capsys, monkeypatch):
    _tmp, q, t = files
    _stdin(monkeypatch, QUERIES)
    code, from_stdin, err = run_cli(capsys, "search", "-", t, "-k", "2")
    assert code == 0, err
    assert from_stdin == run_cli(capsys, "search", q, t, "-k", "2")[1]
    _stdin(monkeypatch, ">x\nTACTG\n")
    code, out, err = run_cli(capsys, "align", "-", q, "--format", "tsv")
    assert code == 0 and out.splitlines()[1].startswith("x\tq1\t"), err
    _stdin(monkeypatch, "BCAEDAC")
    (_tmp / "b.txt").write_text("EABEDCBAAC")
    assert run_cli(capsys, "lcs", "-", _tmp / "b.txt")[:2] == (0, "5\n")


@pytest.mark.parametrize("command", ["align", "pairs", "search", "lcs", "locate"])
def test_standard_input_is_read_once(capsys, command):
    code, _out, err = run_cli(capsys, command, "-", "-")
    assert code == 1 and "standard input ('-') can be read only once" in err


@pytest.mark.parametrize("command,job,method", [("locate", "locate", "scan"),
                                                  ("pairs", "pairs", "wordwise"),
                                                  ("lcs", "lcs", "auto")])
def test_gpu_commands_warm_the_device_up_first(tmp_path, capsys, monkeypatch, command, job,
                                               method):
    """locate, pairs and lcs start CUDA's import and the device's initialization on a thread
    before reading their inputs (one device: no other devices' contexts), as search does;
    the output is the command's own."""
    from warpalign._backends import registry
    calls = []
    monkeypatch.setattr(registry, "warm_up", lambda *a, **k: calls.append((a, k)))
    a, b = tmp_path / "a.fa", tmp_path / "b.fa"
    a.write_text(">a\nACGTACGTTAGCATGCAATG\n")
    b.write_text(">b\nACGTTCGTTAGCATGAATG\n")
    extra = [] if command == "lcs" else ["--method", method]
    code, out, err = run_cli(capsys, command, a, b, "--backend", "cpu", *extra)
    assert code == 0 and out, err
    assert calls == [((job, "cpu", method), {"all_devices": False})]


def _cli(*argv, **kw):
    return subprocess.run([sys.executable, "-m", "warpalign", *map(str, argv)],
                          check=False, capture_output=True, text=True, **kw)


def test_head_exits_quietly_and_no_progress_when_piped(tmp_path):
    q = tmp_path / "q.fasta"
    q.write_text("".join(f">q{i}\nMKVLAWHEAGAWGHEE\n" for i in range(3000)))
    t = tmp_path / "t.fasta"
    t.write_text(TARGETS)
    cmd = (f"{sys.executable} -m warpalign search {q} {t} -k 4 | head -n 2")
    proc = subprocess.run(["bash", "-c", cmd], check=False, capture_output=True, text=True)
    assert proc.returncode == 0
    assert len(proc.stdout.splitlines()) == 2
    assert proc.stderr == ""  # no bar (stderr is a pipe), no BrokenPipe traceback


def test_usage_error_exit_code():
    proc = _cli("search")
    assert proc.returncode == 2 and "usage" in proc.stderr


DNA_A, DNA_B = ">a\nACGTACGTTAGCATGCAATG\n", ">b\nACGTTCGTTAGCATGAATG\n"


@pytest.fixture
def dna(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.fa").write_text(DNA_A)
    (tmp_path / "b.fa").write_text(DNA_B)
    return tmp_path


@pytest.mark.parametrize("argv", [["align", "a.fa", "b.fa"], ["search", "b.fa", "a.fa"],
                                  ["pairs", "a.fa", "b.fa", "--matrix", "BLOSUM62"],
                                  ["locate", "a.fa", "b.fa", "--matrix", "BLOSUM62"]])
def test_dna_is_never_scored_as_protein(dna, capsys, argv):
    code, out, err = run_cli(capsys, *argv)
    assert code == 1 and out == ""
    first = "b.fa" if argv[0] == "locate" else "a.fa"   # locate reads its reference first
    assert first in err and "nucleotide sequences" in err and "(BLOSUM62)" in err
    assert "--match/--mismatch" in err and "or --alphabet protein to score them as protein" in err
    dna_fix = "a DNA --matrix (NUC.4.4)" if "--matrix" in argv else "give --alphabet dna"
    assert dna_fix in err
    assert err.count("\n") == 1
    code, out, err = run_cli(capsys, *argv, "--alphabet", "protein")   # asked for: protein
    assert code == 0 and out, err


def test_alphabet_dna_alone_scores_dna_with_stated_defaults(dna, capsys):
    code, out, err = run_cli(capsys, "align", "a.fa", "b.fa", "--alphabet", "dna",
                             "--format", "tsv")
    explicit = run_cli(capsys, "align", "a.fa", "b.fa", "--match", "2", "--mismatch", "-3",
                       "--gap-open", "7", "--gap-extend", "2", "--format", "tsv")[1]
    assert code == 0 and out == explicit, err
    assert "match 2, mismatch -3, gap open 7, extend 2" in " ".join(
        _cli("align", "--help").stdout.split())


def test_makedb_alphabet_is_chosen_and_stored(dna, capsys):
    code, _, err = run_cli(capsys, "makedb", "a.fa", "db.wa")
    assert code == 1 and not (dna / "db.wa").exists()
    assert "a.fa: nucleotide sequences" in err and "give --alphabet dna" in err
    for alphabet in ("dna", "protein", "bytes"):
        code, _, err = run_cli(capsys, "makedb", "a.fa", f"{alphabet}.wa", "--alphabet", alphabet)
        assert code == 0, err
        meta = json.loads((dna / f"{alphabet}.wa" / "meta.json").read_text())
        assert meta["alphabet"]["name"] == alphabet
    code, _, err = run_cli(capsys, "search", "b.fa", "dna.wa")
    assert code == 1 and "dna.wa: a dna database" in err and "give --alphabet dna" in err
    code, out, err = run_cli(capsys, "search", "b.fa", "dna.wa", "--alphabet", "dna")
    assert code == 0 and out.startswith("b\ta\t"), err


def test_alphabet_bytes_needs_match_mismatch(dna, capsys):
    code, _, err = run_cli(capsys, "align", "a.fa", "b.fa", "--alphabet", "bytes")
    assert code == 1 and "--alphabet bytes needs --match and --mismatch" in err
    code, out, err = run_cli(capsys, "pairs", "a.fa", "b.fa", "--alphabet", "bytes")
    assert code == 0 and out.split("\t")[:3] == ["0", "a", "b"], err   # pairs: DNA defaults


def _interrupt(tmp_path, delay, *argv):
    """Run ``python -X importtime -m warpalign ARGV``; once it has imported its first
    module below the package (``warpalign.cli`` and what it loads: the console entry
    ``run()`` holds the interrupt from then on; before it only the interpreter and the
    package's few lines ran), wait ``delay`` s and send SIGINT."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "warpalign",
                             *map(str, argv)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if "warpalign." in line:
            break
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    # -X importtime's lines come from C, unsynchronized with sys.stderr: one written by the
    # thread that imports CuPy (the search's warm-up) may land inside our line
    text = re.sub(r"import time:[^\n]*(\n|$)", "", "".join(seen) + err)
    return proc.returncode, out, text.splitlines()


@pytest.fixture(scope="module")
def long_search(tmp_path_factory):
    """Queries and targets whose CPU search lasts seconds (40 x 400 residues against
    20,000 x 400: 128 G cells), so that an interrupt within its first second comes while
    it runs (the example files' search ended within 0.6 s and the test saw status 0)."""
    import numpy as np
    tmp = tmp_path_factory.mktemp("long")
    letters = np.frombuffer(b"ACDEFGHIKLMNPQRSTVWY", np.uint8)
    rng = np.random.default_rng(3)
    for name, count in (("lq.fasta", 40), ("lt.fasta", 20_000)):
        seqs = letters[rng.integers(0, 20, (count, 400))]
        with open(tmp / name, "wb") as fh:
            for i, row in enumerate(seqs):
                fh.write(b">s%d\n%s\n" % (i, row.tobytes()))
    return tmp, tmp / "lq.fasta", tmp / "lt.fasta"


@pytest.mark.parametrize("delay", [0.01, 0.05, 0.2, 0.6])
def test_ctrl_c_at_any_moment_exits_130_quietly(long_search, delay):
    """Ctrl-C while NumPy and Numba load (the first second) printed a traceback; at any
    moment it is status 130 and one line."""
    tmp, q, t = long_search
    code, _out, err = _interrupt(tmp, delay, "search", q, t, "--no-progress")
    assert (code, err) == (130, ["warpalign: interrupted"])


UNRAISABLE = """
import signal, sys, time
from warpalign import __main__ as entry
sys.unraisablehook = entry._unraisable          # as run() installs them
signal.signal(signal.SIGINT, entry._interrupt)

class Drop:
    def __del__(self):
        raise KeyboardInterrupt                 # where Python cannot raise it

try:
    Drop()
    for _ in range(300):
        time.sleep(0.01)
    print("lost")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_an_interrupt_python_cannot_raise_comes_back():
    """Ctrl-C landing in a __del__ or a weakref callback is delivered again once the
    unraisable hook has returned: re-sent from inside the hook, the handler ran there and
    lost it the same way, and a CLI search ran on to status 0 (one run in ~40 of the
    interrupt test at 0.6 s, session 29)."""
    got = subprocess.run([sys.executable, "-c", UNRAISABLE], capture_output=True, text=True,
                         timeout=60)
    assert (got.stdout, got.stderr) == ("interrupted\n", "")


def test_makedb_existing_output_says_force(files, capsys):
    tmp, q, _t = files
    assert run_cli(capsys, "makedb", q, tmp / "q.wa")[0] == 0
    code, _out, err = run_cli(capsys, "makedb", q, tmp / "q.wa")
    assert code == 1 and "already exists; pass --force to replace it" in err
    assert "overwrite" not in err
    assert run_cli(capsys, "makedb", q, tmp / "q.wa", "--force")[0] == 0


@pytest.mark.parametrize("argv", [
    ["search", "{q}", "{t}"], ["align", "MKV", "MKV"], ["lcs", "ABC", "ABD"],
    ["pairs", "{q}", "{q}", "--match", "1", "--mismatch", "-1", "--gap-open", "1",
     "--gap-extend", "1", "--alphabet", "protein"],
    ["locate", "{q}", "{t}", "--matrix", "BLOSUM62"]])
def test_output_into_a_missing_directory(files, capsys, argv):
    tmp, q, t = files
    target = tmp / "nowhere" / "out.txt"
    code, out, err = run_cli(capsys, *[a.format(q=q, t=t) for a in argv], "-o", target)
    assert code == 1 and out == ""
    assert err.endswith(f"error: cannot write {target}: no such directory\n")
    assert ".warpalign-" not in err and not target.parent.exists()


def test_output_onto_a_directory_names_it(files, capsys):
    tmp, q, t = files
    (tmp / "adir").mkdir()
    code, _out, err = run_cli(capsys, "search", q, t, "-o", tmp / "adir")
    assert code == 1 and err.endswith(f"cannot write {tmp / 'adir'}: is a directory\n")
    assert not [p for p in os.listdir(tmp) if p.startswith(".warpalign-")]


@pytest.mark.parametrize("argv, needle", [
    (["pairs", "{q}", "{q}", "--matrix", "NUC.4.4"],
     "--matrix NUC.4.4 has no default gap penalties (the matrices with defaults: BLOSUM62, "),
    (["search", "{q}", "{t}", "--matrix", "PAM250", "--gap-open", "10"],
     "--gap-extend is missing; add --gap-extend (a gap of length k costs"),
    (["locate", "{q}", "{t}", "--matrix", "NUC.4.4", "--gap-extend", "2"],
     "--gap-open is missing; add --gap-open"),
    (["search", "{q}", "{t}", "--format", "blast6", "--mode", "score"],
     "--format blast6 needs --mode full"),
    (["search", "{q}", "{tmp}/no.wa", "--workers", "1"], "build one with warpalign makedb"),
])
def test_errors_name_the_flags_to_use(files, capsys, argv, needle):
    """Messages speak the command line's language: flags, not keyword arguments."""
    tmp, q, t = files
    code, _out, err = run_cli(capsys, *[a.format(q=q, t=t, tmp=tmp) for a in argv])
    assert code == 1 and needle in err
    assert not any(word in err for word in ("gap_open=", "gap_extend=", "mode=", "overwrite="))


def test_nuc44_with_gaps_runs(files, capsys, tmp_path):
    x = tmp_path / "x.fa"
    x.write_text(">a\nACGTACGT\n>b\nACGGTT\n")
    code, out, _ = run_cli(capsys, "pairs", x, x, "--matrix", "NUC.4.4", "--gap-open", "10",
                           "--gap-extend", "1")
    assert code == 0 and out.split() == ["0", "a", "a", "40", "1", "b", "b", "30"]


def test_search_verify_rereads_an_unchanged_looking_database(tmp_path, capsys):
    """`search --verify` checks every checksum even when the files' stamps say the
    database was verified before (a byte flipped with its modification time put back)."""
    fasta = tmp_path / "t.fasta"
    fasta.write_text(">a\nMKVLAWHEAGAWGHEE\n>b\nPAWHEAEMKVLLA\n")
    q = tmp_path / "q.fasta"
    q.write_text(">q\nHEAGAWGHEE\n")
    assert run_cli(capsys, "makedb", fasta, tmp_path / "db.wa")[0] == 0
    codes = tmp_path / "db.wa" / "codes.npy"
    st = codes.stat()
    raw = bytearray(codes.read_bytes())
    raw[-1] ^= 1
    codes.write_bytes(bytes(raw))
    os.utime(codes, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert run_cli(capsys, "search", q, tmp_path / "db.wa")[0] == 0   # stamps unchanged
    code, _out, err = run_cli(capsys, "search", q, tmp_path / "db.wa", "--verify")
    assert code == 1 and "checksum mismatch" in err


def test_help_texts_say_what_methods_do_not_which_paper(capsys):
    from warpalign.cli import COMMANDS
    texts = []
    for argv in [[]] + [[c.__name__.rsplit(".", 1)[1]] for c in COMMANDS]:
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        texts.append(capsys.readouterr().out)
    assert len(texts) == 8 and not [t for t in texts if "paper 0" in t.lower()]
    pairs, locate = texts[4], texts[5]
    assert "64 pairs scored at once by bitwise" in " ".join(pairs.split())
    assert "windows that overlap enough" in " ".join(locate.split())


def test_search_streams_query_chunks_like_one_call(tmp_path):
    """The CLI searches a query file chunk by chunk (bounded memory): with chunks of a few
    residues (--chunk) the output equals one whole search's, header once, for every table
    format; an empty query file is an error that leaves no output file."""
    from warpalign.data import example_database_path, example_queries_path
    db = tmp_path / "db.wa"
    assert main(["makedb", str(example_database_path()), str(db)]) == 0
    outs = {}
    for chunk in ("4194304", "50"):
        for fmt in ("tsv", "blast6", "json"):
            out = tmp_path / f"{fmt}-{chunk}.txt"
            assert main(["search", str(example_queries_path()), str(db), "--format", fmt,
                         "--header", "-o", str(out), "--backend", "cpu", "--chunk", chunk]) == 0
            outs[fmt, chunk] = out.read_text()
    for fmt in ("tsv", "blast6", "json"):
        assert outs[fmt, "50"] == outs[fmt, "4194304"]
    assert outs["tsv", "50"].count("#") == 1 and len(outs["tsv", "50"].splitlines()) > 10
    empty = tmp_path / "none.fasta"
    empty.write_text("")
    out = tmp_path / "empty.tsv"
    assert main(["search", str(empty), str(db), "--header", "-o", str(out),
                 "--backend", "cpu"]) == 1
    assert not out.exists() and not list(tmp_path.glob(".warpalign-*"))
    with pytest.raises(SystemExit):
        main(["search", str(example_queries_path()), str(db), "--chunk", "0"])


HEAVY = ("numpy", "numba", "Bio", "cupy", "dask")


@pytest.mark.parametrize("command", ["search", "makedb", "align", "pairs", "locate", "lcs",
                                     "bench"])
def test_parsers_load_no_job(command):
    # each subcommand's parser is built without its job's modules (NumPy, Numba,
    # Biopython, CuPy): --help answers at once and a command loads only what it runs
    code = ("import contextlib, io, sys\nfrom warpalign.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            f"    try:\n        main([{command!r}, '--help'])\n"
            "    except SystemExit as exc:\n        assert exc.code == 0, exc.code\n"
            f"assert 'usage: warpalign {command}' in out.getvalue()\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert got.stdout.strip() == "[]"


def test_search_loads_only_its_job(files):
    # a CPU search of a FASTA query file: no other job's module, no Bio.SeqIO, no CuPy
    tmp, q, t = files
    code = ("import sys\nfrom warpalign.cli import main\n"
            f"assert main(['search', {str(q)!r}, {str(t)!r}, '--backend', 'cpu', "
            f"'-o', {str(tmp / 'out.tsv')!r}]) == 0\n"
            "print(sorted(m for m in sys.modules if m in ('warpalign.align', "
            "'warpalign.pairs', 'warpalign.locate', 'warpalign.lcs', 'warpalign.bench', "
            "'Bio.SeqIO', 'cupy')))\n")
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert got.stdout.strip() == "[]"
    assert (tmp / "out.tsv").read_text().count("\n") > 0


def test_search_lays_the_database_out_while_cupy_loads(files, capsys, monkeypatch):
    # issue 21: with a warm-up started and the driver's facts known, the command line
    # makes the opened database's resident layout before the search (remembered for the
    # upload), a FASTA database's too (built in memory, read-only); not for several
    # devices, a database the device cannot hold, --gpu-memory, or unknown facts
    from types import SimpleNamespace

    from warpalign._backends import registry
    from warpalign._backends.cuda import layout

    tmp, q, t = files
    assert run_cli(capsys, "makedb", t, tmp / "db")[0] == 0
    made = []
    monkeypatch.setattr(layout, "prefetch", lambda offsets, sms: made.append(
        (offsets.flags.writeable, len(offsets), sms)))
    monkeypatch.setattr(registry, "warm_up", lambda job, backend: SimpleNamespace())
    for facts, argv, want in (
            (registry.DeviceFacts(1, 132, 80 << 30), (), [(False, 5, 132)]),
            (registry.DeviceFacts(2, 132, 80 << 30), (), []),
            (registry.DeviceFacts(1, 132, 1 << 20), (), []),          # too small a device
            (None, (), []),
            (registry.DeviceFacts(1, 132, 80 << 30), ("--gpu-memory", "1G"), [])):
        made.clear()
        monkeypatch.setattr(registry, "device_facts", lambda timeout=1.0, f=facts: f)
        code, out, _ = run_cli(capsys, "search", q, tmp / "db", "--backend", "cpu", *argv)
        assert code == 0 and "t1" in out and made == want, (facts, argv)
    made.clear()
    monkeypatch.setattr(registry, "device_facts",
                        lambda timeout=1.0: registry.DeviceFacts(1, 132, 80 << 30))
    assert run_cli(capsys, "search", q, t, "--backend", "cpu")[0] == 0   # a FASTA database
    assert made == [(False, 5, 132)]
