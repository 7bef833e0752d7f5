"""Both strands of nucleotide queries (issue 24): reads cut from phage lambda and phiX on
either strand are found where they were cut, with the score, record and cells of the CPU
reference DP on the right strand; minus-strand hits in reference coordinates; the tie
rule across strands; search on both strands; protein has none."""

from __future__ import annotations

import functools
import importlib
import gzip

import numpy as np
import pytest

from conftest import shared_data
from reference import dp, mutate_dna
from warpalign import Database, Scoring, locate, search
from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign.alphabet import DNA, reverse_complement
from warpalign.traceback import align_codes

PAPER_002 = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)   # locate's CLI default
BLASTN = Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2)


def _fasta(path) -> dict[str, str]:
    opener = gzip.open if str(path).endswith(".gz") else open
    out, name = {}, None
    with opener(path, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                name = line[1:].split()[0]
                out[name] = ""
            else:
                out[name] += line.strip().upper()
    return out


@functools.lru_cache(maxsize=1)
def _genomes() -> tuple[tuple[str, str], ...]:
    return (*_fasta(shared_data("dna/lambda_virus.fa.gz")).items(),
            *_fasta(shared_data("dna/phix_genome.fa")).items())


@pytest.fixture
def genomes() -> dict[str, str]:
    """Phage lambda (48,502 bp) and phiX (5,386 bp) from ../shared/data."""
    shared_data("dna/lambda_virus.fa.gz")
    shared_data("dna/phix_genome.fa")
    return dict(_genomes())


def rc(text: str) -> str:
    return DNA.decode(reverse_complement(DNA.encode(text), DNA))


def cut_reads(genomes: dict[str, str], n: int, seed: int) -> list[tuple]:
    """(read, record, start, end, strand): reads of 100-200 bp with 3% substitutions and
    an indel, every other one reverse-complemented (alternating lambda and phiX)."""
    rng = np.random.default_rng(seed)
    names = list(genomes)
    out = []
    for k in range(n):
        name = names[k % len(names)]
        ref = genomes[name]
        size = int(rng.integers(100, 201))
        start = int(rng.integers(0, len(ref) - size))
        read = mutate_dna(rng, ref[start:start + size], 0.03, 1)
        strand = "-" if k % 4 >= 2 else "+"
        out.append((rc(read) if strand == "-" else read, name, start, start + size, strand))
    return out


def oracle(q: str, records: dict[str, str], s: Scoring, strands=("+", "-")) -> tuple:
    """(score, strand, record, query end, reference end) of the best cell over the strands
    (plus first: a later strand never wins a tie) and records (in order), by the exact
    scalar DP."""
    best = (0, None, None, 0, 0)
    for strand in strands:
        codes = s.encode(q if strand == "+" else rc(q))
        for name, ref in records.items():
            score, qe, te = (int(v) for v in score_end(codes, s.encode(ref), s.matrix,
                                                      s.gap_open, s.gap_extend, LOCAL))
            if score > best[0]:
                best = (score, strand, name, qe, te)
    return best


def test_reads_from_both_strands_are_found_where_cut(genomes, backend):
    for read, name, start, end, strand in cut_reads(genomes, 8, seed=24):
        hit = locate(read, genomes, PAPER_002, backend=backend)
        score, o_strand, o_name, qe, te = oracle(read, genomes, PAPER_002)
        assert (hit.score, hit.strand, hit.record, hit.query_end, hit.target_end) == (
            score, o_strand, o_name, qe, te)
        assert (hit.strand, hit.record) == (strand, name)
        overlap = min(hit.target_end, end) - max(hit.target_start, start)
        assert overlap >= 0.8 * (end - start)
        # the path is the reference traceback of the aligned strand, in reference coordinates
        codes = PAPER_002.encode(read if strand == "+" else rc(read))
        want = align_codes(codes, PAPER_002.encode(genomes[name]), PAPER_002)
        assert (hit.query_start, hit.target_start, hit.cigar, hit.query_aligned) == (
            want.query_start, want.target_start, want.cigar, want.query_aligned)
        # one strand alone: the read's own strand gives the same hit, the other far less
        own = locate(read, genomes, PAPER_002, backend=backend,
                     strand="plus" if strand == "+" else "minus")
        other = locate(read, genomes, PAPER_002, backend=backend,
                       strand="minus" if strand == "+" else "plus", mode="end")
        assert own == hit and other.score < hit.score // 3


def test_minus_strand_hit_is_the_reverse_complement_on_the_plus_strand(genomes):
    ref = genomes["phix"]
    read = rc(ref[2000:2120])
    hit = locate(read, {"phix": ref}, BLASTN, backend="cpu")
    assert (hit.strand, hit.target_start, hit.target_end, hit.cigar) == ("-", 2000, 2120, "120M")
    assert (hit.query_start, hit.query_end) == (0, 120)
    assert hit.query_aligned == rc(read) == ref[2000:2120] == hit.target_aligned
    # modes: the end cell of the minus strand, in the same terms
    end = locate(read, {"phix": ref}, BLASTN, backend="cpu", mode="end")
    assert (end.strand, end.score, end.query_end, end.target_end) == ("-", 240, 120, 2120)


def test_top_hits_of_both_strands_and_the_tie_rule():
    """A reverse palindrome aligns as well on both strands: the plus strand comes first;
    top=N lists each strand's disjoint hits merged by score."""
    unit = "GGATCCTTAGCA"          # plus TGCTAAGGATCC makes a reverse palindrome
    q = unit + rc(unit)
    ref = "TTTTTTTT" + q + "CCCCCCCC" + unit + "AAAA"
    hits = locate(q, ref, PAPER_002, top=4, backend="cpu")
    got = [(h.strand, h.score, h.target_start, h.target_end) for h in hits]
    assert got[:2] == [("+", 24, 8, 32), ("-", 24, 8, 32)]
    assert sorted(got, key=lambda g: -g[1]) == got
    plus = locate(q, ref, PAPER_002, top=4, backend="cpu", strand="plus")
    minus = locate(q, ref, PAPER_002, top=4, backend="cpu", strand="minus")
    merged = sorted([(h.score, 0, i, h) for i, h in enumerate(plus)]
                    + [(h.score, 1, i, h) for i, h in enumerate(minus)],
                    key=lambda t: (-t[0], t[1], t[2]))[:4]
    assert hits == [t[3] for t in merged]
    assert {h.strand for h in plus} == {"+"} and {h.strand for h in minus} == {"-"}


def test_min_score_drops_hits_below_it():
    ref = "CCCCACGTACGTTGCACCCC"
    hit = locate("ACGTACGTTGCA", ref, PAPER_002, backend="cpu")
    assert hit.score == 12
    assert locate("ACGTACGTTGCA", ref, PAPER_002, backend="cpu", min_score=12) == hit
    empty = locate("ACGTACGTTGCA", ref, PAPER_002, backend="cpu", min_score=13)
    assert (empty.score, empty.record, empty.strand, empty.cigar) == (0, None, None, "")
    assert locate("ACGTACGTTGCA", ref, PAPER_002, top=3, backend="cpu", min_score=13) == []
    with pytest.raises(ValueError, match="invalid min_score"):
        locate("ACGT", ref, PAPER_002, min_score=1.5)


def test_small_cases_equal_the_textbook_dp_on_both_strands():
    rng = np.random.default_rng(11)
    for _ in range(25):
        ref = "".join(rng.choice(list("ACGT"), int(rng.integers(20, 120))))
        q = "".join(rng.choice(list("ACGTN"), int(rng.integers(1, 25))))
        want = (0, None)
        for strand in ("+", "-"):
            codes = DNA.encode(q if strand == "+" else rc(q))
            score = dp(codes, DNA.encode(ref), PAPER_002.matrix, 5, 1)[0]
            if score > want[0]:
                want = (score, strand)
        hit = locate(q, ref, PAPER_002, backend="cpu", method="dp")
        assert (hit.score, hit.strand if hit.score else None) == want


def test_protein_has_no_strands():
    s = Scoring("BLOSUM62", gap_open=11, gap_extend=1)
    hit = locate("HEAGAWGHEE", "PAWHEAE", s, backend="cpu")
    assert hit.strand is None and hit.score == 17
    assert locate("HEAGAWGHEE", "PAWHEAE", s, backend="cpu", strand="plus") == hit
    with pytest.raises(ValueError, match="strand='minus' needs a nucleotide scoring"):
        locate("HEAGAWGHEE", "PAWHEAE", s, strand="minus")
    with pytest.raises(ValueError, match="invalid strand: 'reverse'"):
        locate("ACGT", "ACGT", PAPER_002, strand="reverse")
    res = search(["HEAGAWGHEE"], ["PAWHEAE"], s, backend="cpu")[0]
    assert res.strands is None and res[0].strand is None


def test_search_both_strands_is_the_top_of_each_strand(genomes, backend):
    db = Database.from_sequences(genomes, alphabet="dna")
    reads = [r[0] for r in cut_reads(genomes, 6, seed=3)]
    both = search(reads, db, BLASTN, top_k=3, mode="full", backend=backend)
    plus = search(reads, db, BLASTN, top_k=3, mode="full", backend=backend, strand="plus")
    minus = search([rc(r) for r in reads], db, BLASTN, top_k=3, mode="full",
                   backend=backend, strand="plus")
    for b, p, m, read in zip(both, plus, minus, reads, strict=True):
        rows = sorted([(int(s), int(t), 1, a) for s, t, a in zip(p.scores, p.targets,
                                                                   p.alignments)]
                      + [(int(s), int(t), -1, a) for s, t, a in zip(m.scores, m.targets,
                                                                    m.alignments)],
                      key=lambda r: (-r[0], r[1], -r[2]))[:3]
        assert b.scores.tolist() == [r[0] for r in rows]
        assert b.targets.tolist() == [r[1] for r in rows]
        assert b.strands.tolist() == [r[2] for r in rows]
        assert [(a.cigar, a.target_start, a.strand) for a in b.alignments] == [
            (r[3].cigar, r[3].target_start, "+" if r[2] > 0 else "-") for r in rows]
        assert b.cells == p.cells + m.cells == 2 * len(read) * db.residues
        assert b.to_pandas()["strand"].tolist() == ["+" if r[2] > 0 else "-" for r in rows]


def test_search_min_score_and_merge_keep_strands():
    targets = {"a": "TTTTACGTTGCAAGGTTT", "b": "ACCTTGCAACGTAA", "c": "GGGACGTTGGG"}
    db = Database.from_sequences(targets, alphabet="dna")
    q = "ACGTTGCAAGGT"
    want = sorted(((dp(DNA.encode(q if sign > 0 else rc(q)), DNA.encode(t), BLASTN.matrix,
                       7, 2)[0], k, -sign, name) for k, (name, t) in enumerate(targets.items())
                   for sign in (1, -1)), key=lambda w: (-w[0], w[1], w[2]))[:4]
    hits = search([q], db, BLASTN, top_k=4, backend="cpu")[0]
    assert list(zip(hits.names, hits.scores.tolist(), hits.strands.tolist())) == [
        (name, score, -neg) for score, _, neg, name in want]
    assert want[0][0] == want[1][0] == 24   # a on plus ties b on minus: database order
    kept = search([q], db, BLASTN, top_k=4, backend="cpu", min_score=want[2][0])[0]
    assert kept.names == [w[3] for w in want if w[0] >= want[2][0]]
    merged = kept.take([0]).merge(hits.take([1, 3]), top_k=3)
    assert merged.names == [want[0][3], want[1][3], want[3][3]]
    assert merged.strands.tolist() == [-want[0][2], -want[1][2], -want[3][2]]


@pytest.mark.parametrize("strand,tag", [("plus", "+"), ("minus", "-")])
def test_full_mode_traces_groups_of_queries_as_found(backend, strand, tag):
    """Mode full, one strand, more queries than search.TRACE_GROUP: hits are traced a
    group at a time as they are found; every alignment is the one align_codes gives for
    the query as scanned (the reverse complement on "-"), tagged with its strand."""
    search_module = importlib.import_module("warpalign.search")
    rng = np.random.default_rng(11)
    scoring = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2, alphabet="dna")
    targets = ["".join(rng.choice(list("ACGT"), int(n))) for n in rng.integers(60, 200, 40)]
    count = search_module.TRACE_GROUP + 9
    queries = []
    for k in range(count):
        t = targets[k % len(targets)]
        a = int(rng.integers(0, len(t) - 40))
        q = t[a:a + 40]
        queries.append(rc(q) if k % 2 else q)
    got = search(queries, targets, scoring, top_k=3, mode="full", strand=strand,
                 backend=backend)
    assert len(got) == count
    for q, hits in zip(queries, got, strict=True):
        scanned = scoring.encode(rc(q) if tag == "-" else q)
        assert len(hits.alignments) == len(hits)
        for idx, score, a in zip(hits.targets, hits.scores, hits.alignments, strict=True):
            want = align_codes(scanned, scoring.encode(targets[int(idx)]), scoring)
            assert (a.score, a.cigar, a.query_start, a.target_start) == (
                int(score), want.cigar, want.query_start, want.target_start)
            assert a.strand == tag
