"""The CLI's search writes each part of a call's hits as soon as the search has it final
(a batch; a traced group of queries in mode full; both strands: all at the end): its
output is byte for byte what one whole ``search`` call gives through the public writers,
whatever the chunks (--chunk) and parts, for every table format, header or not, with
--min-score and --evalue, protein and DNA (one strand and both), on every backend (the
CUDA cases are marked ``cuda``)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from warpalign import Scoring, search
from warpalign.cli import main
from warpalign.formats import write_blast_tab, write_search_json, write_search_tsv
from warpalign.search import TRACE_GROUP, as_database
from warpalign.stats import apply_statistics

PROTEIN = "ACDEFGHIKLMNPQRSTVWY"
PROTEIN_FLAGS = ["--matrix", "BLOSUM62", "--gap-open", "12", "--gap-extend", "1"]
DNA_FLAGS = ["--alphabet", "dna", "--match", "2", "--mismatch", "-3", "--gap-open", "7",
             "--gap-extend", "2"]
# --chunk: one call for every query (parts only), a call per dozen queries or so, and
# calls of a little more than TRACE_GROUP queries (a full group, then a short one)
LAYOUTS = ("1000000", "700", "4000")


def _mutated(rng, seq: str, letters: str, rate: float = 0.15) -> str:
    out = [rng.choice(list(letters)) if rng.random() < rate else c for c in seq]
    return "".join(out)


def _revcomp(seq: str) -> str:
    return seq.translate(str.maketrans("ACGT", "TGCA"))[::-1]


def _write_fasta(path, names, seqs) -> None:
    path.write_text("".join(f">{n}\n{s}\n" for n, s in zip(names, seqs)))


@pytest.fixture(scope="module")
def protein(tmp_path_factory):
    """150 queries; 60 targets, half of them holding a mutated piece of a query."""
    rng = np.random.default_rng(21)
    tmp = tmp_path_factory.mktemp("protein")
    queries = ["".join(rng.choice(list(PROTEIN), rng.integers(30, 91))) for _ in range(150)]
    targets = []
    for i in range(60):
        seq = "".join(rng.choice(list(PROTEIN), rng.integers(50, 201)))
        if i % 2 == 0:
            q = queries[int(rng.integers(len(queries)))]
            cut = len(seq) // 3
            seq = seq[:cut] + _mutated(rng, q[5:], PROTEIN) + seq[cut:]
        targets.append(seq)
    _write_fasta(tmp / "q.fa", [f"q{i}" for i in range(len(queries))], queries)
    _write_fasta(tmp / "t.fa", [f"t{i}" for i in range(len(targets))], targets)
    assert main(["makedb", str(tmp / "t.fa"), str(tmp / "db.wa"), "--no-progress"]) == 0
    return tmp, Scoring("BLOSUM62", gap_open=12, gap_extend=1)


@pytest.fixture(scope="module")
def dna(tmp_path_factory):
    """140 reads of 30 targets, every other one reverse-complemented, a few mismatches."""
    rng = np.random.default_rng(7)
    tmp = tmp_path_factory.mktemp("dna")
    targets = ["".join(rng.choice(list("ACGT"), 200)) for _ in range(30)]
    reads = []
    for i in range(140):
        t = targets[int(rng.integers(len(targets)))]
        start = int(rng.integers(0, 120))
        read = _mutated(rng, t[start:start + int(rng.integers(40, 81))], "ACGT", 0.05)
        reads.append(_revcomp(read) if i % 2 else read)
    _write_fasta(tmp / "q.fa", [f"r{i}" for i in range(len(reads))], reads)
    _write_fasta(tmp / "t.fa", [f"t{i}" for i in range(len(targets))], targets)
    return tmp, Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2, alphabet="dna")


def _whole_call(tmp, database, scoring, fmt, header, *, backend="cpu", top_k=10,
                mode="full", strand="both", min_score=None, evalue=None) -> str:
    """One ``search`` call for every query, written by the public writers."""
    database = as_database(database, scoring)
    results = search(tmp / "q.fa", database, scoring, top_k=top_k, mode=mode,
                     backend=backend, threads=1, strand=strand, min_score=min_score,
                     evalue=evalue)
    if fmt == "blast6" and evalue is None:     # the CLI's blast6 always has statistics
        results = apply_statistics(results, database, scoring)
    out = io.StringIO()
    if fmt == "tsv":
        write_search_tsv(results, out, header=header)
    elif fmt == "blast6":
        write_blast_tab(results, out, header=header, scoring=scoring)
    else:
        write_search_json(results, out)
    return out.getvalue()


def _cli(tmp, database, flags, fmt, header, layout, extra, backend="cpu") -> str:
    out = tmp / f"out-{fmt}-{layout}.txt"
    argv = ["search", str(tmp / "q.fa"), str(database), *flags, "--format", fmt,
            "--backend", backend, "--threads", "1", "--chunk", layout, "--no-progress",
            "-o", str(out), *extra, *(["--header"] if header else [])]
    assert main(argv) == 0
    return out.read_text()


PROTEIN_CASES = [
    # (format, header, CLI flags, search() options)
    ("tsv", True, [], {}),
    ("tsv", False, ["--mode", "end"], {"mode": "end"}),
    ("json", False, ["--mode", "score", "--min-score", "30"],
     {"mode": "score", "min_score": 30}),
    ("json", False, ["--evalue", "1e-3"], {"evalue": 1e-3}),
    ("blast6", True, [], {}),
    ("blast6", False, ["-k", "3", "--min-score", "25"], {"top_k": 3, "min_score": 25}),
]


@pytest.mark.parametrize(("fmt", "header", "extra", "options"), PROTEIN_CASES)
def test_protein_parts_write_the_whole_calls_bytes(protein, backend, fmt, header, extra,
                                              options):
    tmp, scoring = protein
    expected = _whole_call(tmp, tmp / "db.wa", scoring, fmt, header, backend=backend, **options)
    lines = expected.splitlines()
    # more queries with hits than one traced group: mode full gives several parts
    assert len({line.split("\t")[0] for line in lines if not line.startswith("#")}) > TRACE_GROUP
    if header:
        assert lines[0].startswith("#") and sum(line.startswith("#") for line in lines) < 3
    for layout in LAYOUTS:
        got = _cli(tmp, tmp / "db.wa", PROTEIN_FLAGS, fmt, header, layout, extra, backend)
        assert got == expected


def test_protein_filters_keep_fewer_hits(protein):
    """The cases above filter something: --min-score and --evalue drop hits."""
    tmp, scoring = protein
    every = _whole_call(tmp, tmp / "db.wa", scoring, "json", False, mode="score")
    kept = _whole_call(tmp, tmp / "db.wa", scoring, "json", False, mode="score", min_score=30)
    strong = _whole_call(tmp, tmp / "db.wa", scoring, "json", False, evalue=1e-3)
    count = every.count('"target"')
    assert 0 < kept.count('"target"') < count and 0 < strong.count('"target"') < count


DNA_CASES = [
    ("tsv", False, [], {}),
    ("blast6", True, ["--evalue", "1e-5"], {"evalue": 1e-5}),
    ("json", False, ["--strand", "plus"], {"strand": "plus"}),
    ("tsv", True, ["--strand", "minus", "--mode", "end"], {"strand": "minus", "mode": "end"}),
]


@pytest.mark.parametrize(("fmt", "header", "extra", "options"), DNA_CASES)
def test_dna_parts_write_the_whole_calls_bytes(dna, backend, fmt, header, extra,
                                              options):
    tmp, scoring = dna
    expected = _whole_call(tmp, tmp / "t.fa", scoring, fmt, header, backend=backend, **options)
    assert expected.count("\n") >= 140   # a line per read at least
    if fmt == "tsv" and "strand" not in options:   # hits of both strands, merged
        ends = [line.split("\t")[7:9] for line in expected.splitlines()]
        minus = sum(int(start) > int(end) for start, end in ends)
        assert 0 < minus < len(ends)
    for layout in LAYOUTS:
        assert _cli(tmp, tmp / "t.fa", DNA_FLAGS, fmt, header, layout, extra, backend) == expected
