"""Alphabets and scoring schemes."""

from __future__ import annotations

import numpy as np
import pytest

from warpalign import AlphabetError, Scoring, ScoringError
from warpalign.alphabet import BYTES, DNA, PROTEIN, get_alphabet, looks_nucleotide


def test_protein_encoding_folds_case_and_round_trips():
    codes = PROTEIN.encode("mkVlaW*xbzuo")
    assert PROTEIN.decode(codes) == "MKVLAW*XBZUO"
    assert codes.dtype == np.uint8


@pytest.mark.parametrize("seq, pos, char", [("MKV1A", 3, "1"), ("J", 0, "J"), ("AC GT", 2, " ")])
def test_invalid_symbol_names_record_position_and_character(seq, pos, char):
    with pytest.raises(AlphabetError) as err:
        PROTEIN.encode(seq, record="sp|P1|X")
    e = err.value
    assert (e.record, e.position, e.character) == ("sp|P1|X", pos, char)
    assert "sp|P1|X" in str(e) and f"position {pos}" in str(e) and repr(char) in str(e)


def test_dna_rejects_protein_letters_and_accepts_iupac():
    assert DNA.decode(DNA.encode("acgtnRYKM")) == "ACGTNRYKM"
    with pytest.raises(AlphabetError, match="'E'"):
        DNA.encode("ACGE")


@pytest.mark.parametrize("seqs, nucleotide", [
    (["ACGTACGTAC"], True),                       # 10 residues: enough
    (["ACGTACGTA"], False),                       # 9: undecided, stays protein
    (["ACGTA", "cgtan"], True),                   # all records together, either case
    (["ACGTACGTACGTACGTACRY"], True),             # IUPAC codes, 90% A/C/G/T/U/N
    (["ACGTACGTACGTACGTARYS"], False),            # 85% A/C/G/T/U/N
    (["ACGUACGUACGU"], True),                     # RNA
    (["ACGTACGTACGTACGTACGE"], False),            # E is no nucleotide code
    (["MKVLAWHEAGAWGHEE", "ACGTACGTACGT"], False),  # a protein record among them
    ([], False),
])
def test_looks_nucleotide_rule(seqs, nucleotide):
    assert looks_nucleotide([PROTEIN.encode(s) for s in seqs], PROTEIN) is nucleotide
    assert looks_nucleotide([BYTES.encode(s) for s in seqs], BYTES) is nucleotide


def test_bytes_alphabet_takes_everything_verbatim():
    raw = bytes(range(256))
    assert BYTES.encode(raw).tobytes() == raw
    assert BYTES.encode(b"abc").tolist() == [97, 98, 99]


def test_non_ascii_text_is_an_alphabet_error():
    with pytest.raises(AlphabetError, match="position 2"):
        PROTEIN.encode("MKé")


def test_unknown_alphabet_name():
    with pytest.raises(ValueError, match="invalid alphabet: 'rna'"):
        get_alphabet("rna")


def test_named_matrix_matches_biopython():
    from Bio.Align import substitution_matrices
    bio = substitution_matrices.load("BLOSUM62")
    s = Scoring(matrix="blosum62", gap_open=11, gap_extend=1)
    for a in "ARNDCQEGHILKMFPSTWYVBZX*":
        for b in "ARNDCQEGHILKMFPSTWYVBZX*":
            assert s.score(a, b) == int(bio[a, b])
    # U and O are not in BLOSUM62: they score as X, and say so in the docstring
    assert s.score("U", "W") == int(bio["X", "W"])


def test_default_gaps_of_named_matrices():
    s = Scoring(matrix="BLOSUM50")
    assert (s.gap_open, s.gap_extend) == (10, 2)


def test_ncbi_matrix_file(tmp_path):
    path = tmp_path / "tiny.mat"
    path.write_text("#tiny\n   A  C  G  T\nA  3 -2 -2 -2\nC -2  3 -2 -2\nG -2 -2  3 -2\nT -2 -2 -2  3\n")
    s = Scoring(matrix=str(path), gap_open=4, gap_extend=2)
    assert s.alphabet.name == "dna" and s.score("A", "A") == 3 and s.score("A", "T") == -2


def test_match_mismatch_dna_ambiguity_never_matches():
    s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    assert s.score("A", "A") == 2 and s.score("N", "N") == -1 and s.score("A", "C") == -1
    assert s.linear and s.gap_cost(3) == 3


@pytest.mark.parametrize("kwargs, needle", [
    ({"matrix": "BLOSUM63", "gap_open": 11, "gap_extend": 1}, "unknown matrix: 'BLOSUM63'"),
    ({"matrix": "BLOSUM62", "gap_open": -11, "gap_extend": 1}, "non-negative"),
    ({"matrix": "BLOSUM62", "gap_open": 11, "gap_extend": -1}, "non-negative"),
    ({"matrix": "BLOSUM62", "gap_open": 1, "gap_extend": 2}, "must not exceed"),
    ({"matrix": "BLOSUM62", "gap_open": 1.5, "gap_extend": 1}, "integer"),
    ({"match": 1, "gap_open": 1, "gap_extend": 1}, "match"),
    ({"matrix": "BLOSUM62", "match": 1, "mismatch": -1, "gap_open": 1, "gap_extend": 1}, "not both"),
    ({"match": 1, "mismatch": -1}, "gap_open"),
])
def test_bad_scoring_raises_scoring_error(kwargs, needle):
    with pytest.raises(ScoringError, match=needle):
        Scoring(**kwargs)


def test_scoring_equality_and_hash():
    a = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    b = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    assert a == b and hash(a) == hash(b)
    assert a != Scoring(matrix="BLOSUM62", gap_open=10, gap_extend=1)


def test_named_matrix_cannot_score_bytes():
    with pytest.raises(ScoringError, match="no scores for the bytes alphabet"):
        Scoring("BLOSUM62", alphabet="bytes")


DNA_A, DNA_B = "ACGTACGTTAGCATGCAATG", "ACGTTCGTTAGCATGAATG"


def test_nucleotide_input_under_an_implied_protein_alphabet_is_refused(tmp_path):
    from warpalign import align, locate, score_pairs, search
    from warpalign.errors import AlphabetMismatch
    implied = Scoring("BLOSUM62")
    calls = [lambda s: align(DNA_A, DNA_B, s),
             lambda s: search([DNA_A], [DNA_B, "MKVLA"], s),
             lambda s: score_pairs([DNA_A], [DNA_B], s),
             lambda s: locate(DNA_A, DNA_B, s)]
    for call in calls:
        with pytest.raises(AlphabetMismatch, match=r"nucleotide sequences .* protein scoring "
                                                   r"\(BLOSUM62\).*alphabet='protein'"):
            call(implied)
        call(Scoring("BLOSUM62", alphabet="protein"))   # declared: scored as protein
    (tmp_path / "a.fa").write_text(f">a\n{DNA_A}\n")
    with pytest.raises(ScoringError, match=r"a.fa and target: nucleotide"):
        align(str(tmp_path / "a.fa"), "ACG", implied)
    with pytest.raises(AlphabetError, match=r"a.fa: nucleotide"):
        search("MKVLAW", tmp_path / "a.fa", implied)     # a FASTA database encoded here
    assert align("ACGT", "ACG", implied).score == 19      # 7 residues: undecided, protein


def test_protein_matrix_cannot_score_dna():
    with pytest.raises(ScoringError, match="'BLOSUM62' is a protein matrix"):
        Scoring("BLOSUM62", alphabet="dna")
    assert Scoring("NUC.4.4", gap_open=10, gap_extend=1, alphabet="dna").score("A", "A") == 5


def test_from_blast_is_existence_plus_extension():
    s = Scoring.from_blast("BLOSUM62", existence=11, extension=1)   # blastp's default
    assert s == Scoring("BLOSUM62", gap_open=12, gap_extend=1)
    assert s.blast_gaps == (11, 1) and s.gap_cost(1) == 12 and s.gap_cost(4) == 15
    dna = Scoring.from_blast(match=2, mismatch=-3, existence=5, extension=2)  # blastn's
    assert dna == Scoring(match=2, mismatch=-3, gap_open=7, gap_extend=2)
    assert Scoring("BLOSUM62", gap_open=11, gap_extend=1).blast_gaps == (10, 1)
    with pytest.raises(ScoringError, match="existence=-1"):
        Scoring.from_blast("BLOSUM62", existence=-1, extension=1)
    with pytest.raises(ScoringError, match="extension must be an integer"):
        Scoring.from_blast("BLOSUM62", existence=11, extension=1.5)
