"""Scoring schemes: a substitution matrix over an alphabet's codes plus affine gaps.

One convention everywhere: penalties are positive integers and a gap of length k
costs ``gap_open + (k - 1) * gap_extend`` (Gotoh as in papers 003/004, parasail,
Opal and Biopython's open/extend scores). Linear gaps are ``gap_open == gap_extend``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .alphabet import (
    DNA,
    DNA_SYMBOLS,
    NUCLEOTIDE_RULE,
    PROTEIN,
    PROTEIN_SYMBOLS,
    Alphabet,
    counts_look_nucleotide,
    get_alphabet,
    looks_nucleotide,
)
from .errors import AlphabetMismatch, ScoringError

#: Gap penalties used when a named matrix comes without ``gap_open``/``gap_extend``
#: (our convention; the settings of CUDASW++, parasail and the papers). BLAST states
#: the same schemes with an "existence" one lower: its BLOSUM62 11/1 is our 12/1.
DEFAULT_GAPS = {"BLOSUM62": (11, 1), "BLOSUM50": (10, 2), "BLOSUM45": (14, 2),
                "BLOSUM80": (10, 1), "PAM30": (9, 1), "PAM70": (10, 1), "PAM250": (14, 2)}

_SCORE_LIMIT = 1 << 20  # keeps every DP value far inside int32 for sequences of 1e3 Mbp


@dataclass(frozen=True, eq=False)
class Scoring:
    """A substitution matrix over an alphabet plus affine gap penalties.

    Give either a named or file matrix (``matrix="BLOSUM62"``, a path to an NCBI-format
    matrix file, or a square integer array with ``alphabet=``), or ``match``/``mismatch``
    scores (DNA by default; ``alphabet="protein"`` or ``"bytes"`` for others).

    Args:
        matrix: matrix name (Biopython's ``substitution_matrices``), NCBI file path or array.
        match: score of two equal symbols (with ``mismatch``, instead of ``matrix``).
        mismatch: score of two different symbols (usually negative).
        gap_open: cost of a gap of length 1 (positive).
        gap_extend: cost of each further gap position (positive, at most ``gap_open``).
        alphabet: "protein", "dna", "bytes" or an :class:`Alphabet`; by default the one the
            matrix's letters imply (DNA for match/mismatch). A protein alphabet implied by
            the matrix is an assumption: :func:`~warpalign.align`, :func:`~warpalign.search`,
            :func:`~warpalign.score_pairs` and :func:`~warpalign.locate` refuse nucleotide
            input under it (:func:`~warpalign.alphabet.looks_nucleotide`) with an
            ``AlphabetMismatch``; ``alphabet="protein"`` given here scores any input as
            protein.

    Under match/mismatch scoring on DNA only A, C, G, T can match; N and the other
    ambiguity codes always score ``mismatch``. Protein symbols a matrix lacks (U, O in
    BLOSUM62) score as its X row and column.

    Example:
        >>> s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
        >>> int(s.score("W", "W")), s.gap_cost(3)
        (11, 13)
        >>> Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1).alphabet.name
        'dna'
    """

    matrix_name: str | None
    alphabet: Alphabet
    matrix: np.ndarray  # int32, (alphabet.size, alphabet.size)
    gap_open: int
    gap_extend: int
    match: int | None = None
    mismatch: int | None = None
    _key: tuple = field(init=False, repr=False)
    _alphabet_given: bool = field(init=False, repr=False)

    def __init__(self, matrix: Any = None, *, match: int | None = None, mismatch: int | None = None,
                 gap_open: int | None = None, gap_extend: int | None = None,
                 alphabet: str | Alphabet | None = None):
        if matrix is not None and (match is not None or mismatch is not None):
            raise ScoringError("give either matrix= or match=/mismatch=, not both")
        if matrix is None and (match is None or mismatch is None):
            raise ScoringError("give matrix= (e.g. 'BLOSUM62') or both match= and mismatch=")
        if matrix is None:
            alpha = get_alphabet(alphabet or "dna")
            table = _match_mismatch(alpha, _int("match", match), _int("mismatch", mismatch))
            name = None
        else:
            name, alpha, table = _load_matrix(matrix, alphabet)
        if gap_open is None or gap_extend is None:
            if name is not None and name.upper() in DEFAULT_GAPS and gap_open is None and gap_extend is None:
                gap_open, gap_extend = DEFAULT_GAPS[name.upper()]
            else:
                raise ScoringError("give gap_open= and gap_extend= (positive penalties; "
                                   "a gap of length k costs gap_open + (k-1)*gap_extend)")
        gap_open, gap_extend = _int("gap_open", gap_open), _int("gap_extend", gap_extend)
        if gap_open < 0 or gap_extend < 0:
            raise ScoringError(f"gap penalties must be non-negative (they are subtracted): "
                               f"got gap_open={gap_open}, gap_extend={gap_extend}")
        if gap_extend > gap_open:
            raise ScoringError(f"gap_extend ({gap_extend}) must not exceed gap_open ({gap_open})")
        if max(gap_open, int(np.abs(table).max(initial=0))) >= _SCORE_LIMIT:
            raise ScoringError(f"scores and penalties must stay below {_SCORE_LIMIT} in magnitude")
        table = np.ascontiguousarray(table, dtype=np.int32)
        table.setflags(write=False)
        object.__setattr__(self, "matrix_name", name)
        object.__setattr__(self, "alphabet", alpha)
        object.__setattr__(self, "matrix", table)
        object.__setattr__(self, "gap_open", gap_open)
        object.__setattr__(self, "gap_extend", gap_extend)
        object.__setattr__(self, "match", match)
        object.__setattr__(self, "mismatch", mismatch)
        object.__setattr__(self, "_key", (alpha.name, alpha.symbols, table.tobytes(), gap_open, gap_extend))
        object.__setattr__(self, "_alphabet_given", alphabet is not None)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scoring) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        what = (f"matrix={self.matrix_name!r}" if self.matrix_name
                else f"match={self.match}, mismatch={self.mismatch}")
        return (f"Scoring({what}, gap_open={self.gap_open}, gap_extend={self.gap_extend}, "
                f"alphabet={self.alphabet.name!r})")

    @property
    def max_score(self) -> int:
        """Largest substitution score."""
        return int(self.matrix.max())

    @property
    def min_score(self) -> int:
        """Smallest substitution score."""
        return int(self.matrix.min())

    @classmethod
    def from_blast(cls, matrix: Any = None, *, existence: int, extension: int,
                   match: int | None = None, mismatch: int | None = None,
                   alphabet: str | Alphabet | None = None) -> Scoring:
        """The scoring BLAST states with ``-gapopen existence -gapextend extension``.

        BLAST charges a gap of length k ``existence + k * extension``; ours costs
        ``gap_open + (k - 1) * gap_extend``, so this is ``gap_open = existence +
        extension``, ``gap_extend = extension``. Other arguments as for :class:`Scoring`
        (``match``/``mismatch`` are blastn's ``-reward``/``-penalty``).

        Example:
            >>> s = Scoring.from_blast("BLOSUM62", existence=11, extension=1)  # blastp's default
            >>> s.gap_open, s.gap_extend, s.gap_cost(3), s.blast_gaps
            (12, 1, 14, (11, 1))
        """
        existence, extension = _int("existence", existence), _int("extension", extension)
        if existence < 0 or extension < 0:
            raise ScoringError(f"BLAST gap costs must be non-negative: got existence="
                               f"{existence}, extension={extension}")
        return cls(matrix, match=match, mismatch=mismatch, gap_open=existence + extension,
                   gap_extend=extension, alphabet=alphabet)

    @property
    def blast_gaps(self) -> tuple[int, int]:
        """The gap costs in BLAST's terms: (existence, extension) = (gap_open -
        gap_extend, gap_extend)."""
        return self.gap_open - self.gap_extend, self.gap_extend

    @property
    def linear(self) -> bool:
        """Whether the gap cost is linear (``gap_open == gap_extend``)."""
        return self.gap_open == self.gap_extend

    def gap_cost(self, length: int) -> int:
        """Cost of one gap of ``length`` positions (0 for length 0)."""
        return 0 if length <= 0 else self.gap_open + (length - 1) * self.gap_extend

    def score(self, a: str, b: str) -> int:
        """Substitution score of two symbols."""
        ca, cb = self.alphabet.encode(a), self.alphabet.encode(b)
        return int(self.matrix[ca[0], cb[0]])

    def encode(self, seq: Any, record: str | None = None) -> np.ndarray:
        """Encode a sequence in this scoring's alphabet."""
        return self.alphabet.encode(seq, record)


def check_input(scoring: Scoring, codes: Iterable[np.ndarray], source: str, *,
                counts: np.ndarray | None = None) -> None:
    """Refuse nucleotide input (the rule of :func:`~warpalign.alphabet.looks_nucleotide`)
    under a protein alphabet that the matrix implied rather than the caller declared.

    ``counts`` (how often each code occurs, counted elsewhere) stands for ``codes`` when
    given; :func:`needs_counts` says whether the check looks at the input at all.

    Raises:
        AlphabetMismatch: naming ``source`` and the arguments that fix it.
    """
    if not needs_counts(scoring):
        return
    if (counts_look_nucleotide(counts, scoring.alphabet) if counts is not None
            else looks_nucleotide(codes, scoring.alphabet)):
        problem = (f"nucleotide sequences ({NUCLEOTIDE_RULE}) under a protein scoring "
                   f"({scoring.matrix_name})")
        raise AlphabetMismatch(
            f"{source}: {problem}; score DNA with Scoring(match=..., mismatch=..., "
            "gap_open=..., gap_extend=...) or Scoring(matrix='NUC.4.4', ...), or declare "
            "Scoring(..., alphabet='protein') to score them as protein",
            source=source, problem=problem)


def needs_counts(scoring: Scoring) -> bool:
    """Whether :func:`check_input` looks at the input under ``scoring`` (a protein alphabet
    the matrix implied)."""
    return not scoring._alphabet_given and scoring.alphabet is PROTEIN


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, float) and value.is_integer():
            return int(value)
        raise ScoringError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _match_mismatch(alpha: Alphabet, match: int, mismatch: int) -> np.ndarray:
    n = alpha.size
    table = np.full((n, n), mismatch, dtype=np.int64)
    matching = 4 if alpha is DNA or alpha.name == "dna" else n
    idx = np.arange(matching)
    table[idx, idx] = match
    return table


def available_matrices() -> list[str]:
    """Names of the substitution matrices that ``Scoring(matrix=NAME)`` accepts."""
    from Bio.Align import substitution_matrices
    return substitution_matrices.load()


def _load_matrix(matrix: Any, alphabet: str | Alphabet | None):
    from Bio.Align import substitution_matrices

    if isinstance(matrix, np.ndarray):
        if alphabet is None:
            raise ScoringError("a matrix given as an array needs alphabet=")
        alpha = get_alphabet(alphabet)
        if matrix.shape != (alpha.size, alpha.size):
            raise ScoringError(f"matrix shape {matrix.shape} does not match the {alpha.name} "
                               f"alphabet ({alpha.size} symbols)")
        if not np.all(np.asarray(matrix) == np.round(matrix)):
            raise ScoringError("substitution scores must be integers")
        return None, alpha, np.asarray(matrix, dtype=np.int64)
    if not isinstance(matrix, (str, os.PathLike)):
        raise ScoringError(f"matrix must be a name, a file path or an array, got {type(matrix).__name__}")
    text = str(matrix)
    names = {n.upper(): n for n in substitution_matrices.load()}
    if text.upper() in names:
        name = names[text.upper()]
        bio = substitution_matrices.load(name)
    elif os.path.isfile(text):
        name = os.path.basename(text)
        try:
            bio = substitution_matrices.read(text)
        except (ValueError, KeyError, IndexError, TypeError) as exc:  # malformed matrix file
            raise ScoringError(f"cannot read substitution matrix file {text!r}: {exc}") from None
    else:
        raise ScoringError(f"unknown matrix: {text!r}; expected a file path or one of "
                           f"{sorted(names.values())}")
    letters = "".join(bio.alphabet)
    values = np.asarray(bio, dtype=np.float64)
    if values.ndim != 2 or not np.all(values == np.round(values)):
        raise ScoringError(f"matrix {name!r} is not a square matrix of integer scores")
    if alphabet is not None:
        alpha = get_alphabet(alphabet)
        if alpha.name == "bytes":
            raise ScoringError(f"matrix {name!r} has no scores for the bytes alphabet; "
                               "score bytes with match= and mismatch=")
        if alpha.name == "dna" and not set(letters.upper()) <= set(DNA_SYMBOLS + "U"):
            raise ScoringError(f"matrix {name!r} is a protein matrix; it cannot score the dna "
                               "alphabet (use a DNA matrix such as 'NUC.4.4', or match= and "
                               "mismatch=)")
    elif set(letters.upper()) <= set(DNA_SYMBOLS + "U"):
        alpha = DNA
    elif set(letters.upper()) <= set(PROTEIN_SYMBOLS):
        alpha = PROTEIN
    else:
        alpha = Alphabet(f"custom:{name}", letters)
    index = {c.upper(): i for i, c in enumerate(letters)}
    fallback = index.get("X", index.get("N"))
    lowest = int(values.min())
    n = alpha.size
    table = np.full((n, n), lowest, dtype=np.int64)
    for i, a in enumerate(alpha.symbols):
        ia = index.get(a, fallback)
        for j, b in enumerate(alpha.symbols):
            jb = index.get(b, fallback)
            if ia is not None and jb is not None:
                table[i, j] = int(values[ia, jb])
    return name, alpha, table
