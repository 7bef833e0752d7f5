"""Alphabets: how letters become the small integer codes every kernel works on.

A sequence is encoded once into ``uint8`` codes (index of the symbol in
``Alphabet.symbols``). Lower case folds to upper case for the letter alphabets;
a symbol outside the alphabet raises :class:`~warpalign.errors.AlphabetError`
naming the record, the 0-based position and the character. Nothing is ever
substituted silently.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .choices import ALPHABETS as ALPHABET_NAMES
from .errors import AlphabetError

#: The 20 amino acids, the ambiguity codes B Z X, the stop ``*`` and the rare U O.
#: The first 24 follow Biopython's BLOSUM/PAM order, so named matrices map 1:1.
PROTEIN_SYMBOLS = "ARNDCQEGHILKMFPSTWYVBZX*UO"
#: A C G T first (they are the only symbols that can match under match/mismatch
#: scoring), then N and the other IUPAC ambiguity codes.
DNA_SYMBOLS = "ACGTNRYSWKMBDHV"

_INVALID = -1

#: IUPAC nucleotide codes: the only letters a nucleotide record holds (either case).
NUCLEOTIDE_CODES = "ACGTUNRYSWKMBDHV"
#: The rule :func:`looks_nucleotide` applies to a whole input (every record together).
NUCLEOTIDE_RULE = "10 or more residues, all IUPAC nucleotide codes, 90% or more A/C/G/T/U/N"
_NUCLEOTIDE_MIN_RESIDUES = 10
_NUCLEOTIDE_MIN_CORE = 0.9
_COUNT_BLOCK = 1 << 22


@dataclass(frozen=True, eq=False)
class Alphabet:
    """A mapping between symbols and ``uint8`` codes.

    Args:
        name: "protein", "dna", "bytes" or the name of a custom alphabet.
        symbols: the symbol of each code, in code order (ignored for "bytes").
        fold_case: whether lower case letters are accepted as their upper case.

    Example:
        >>> from warpalign.alphabet import PROTEIN
        >>> PROTEIN.encode("ARn").tolist()
        [0, 1, 2]
        >>> PROTEIN.decode(PROTEIN.encode("MKV"))
        'MKV'
    """

    name: str
    symbols: str
    fold_case: bool = True
    _table: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        table = np.full(256, _INVALID, dtype=np.int16)
        if self.name == "bytes":
            table[:] = np.arange(256)
        else:
            if len(set(self.symbols)) != len(self.symbols) or len(self.symbols) > 255:
                raise ValueError(f"invalid alphabet symbols: {self.symbols!r}")
            for code, sym in enumerate(self.symbols):
                table[ord(sym)] = code
                if self.fold_case:
                    table[ord(sym.lower())] = code
        object.__setattr__(self, "_table", table)

    @property
    def size(self) -> int:
        """Number of codes (256 for bytes)."""
        return 256 if self.name == "bytes" else len(self.symbols)

    def __len__(self) -> int:
        return self.size

    @functools.cached_property
    def code_table(self) -> np.ndarray:
        """``uint8[256]``: the code of each character, 255 for a character outside the
        alphabet (read-only; a letter alphabet has at most 255 codes, so 255 is never one;
        for "bytes" every entry is its own code and none is invalid).

        Example:
            >>> DNA.code_table[list(b"ACgtX")].tolist()
            [0, 1, 2, 3, 255]
        """
        table = np.where(self._table < 0, 255, self._table).astype(np.uint8)
        table.setflags(write=False)
        return table

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Alphabet) and (self.name, self.symbols) == (other.name, other.symbols)

    def __hash__(self) -> int:
        return hash((self.name, self.symbols))

    def encode(self, seq: Any, record: str | None = None) -> np.ndarray:
        """Encode a sequence (str, bytes, uint8 array of characters, or SeqRecord) to codes.

        Raises:
            AlphabetError: naming ``record``, the position and the character of the
                first symbol outside the alphabet.
        """
        raw = as_bytes_array(seq)
        if record is None:
            record = getattr(seq, "id", None)
        if self.name == "bytes":
            return raw.copy() if raw.base is None else np.array(raw, dtype=np.uint8)
        codes = self._table[raw]
        bad = np.flatnonzero(codes < 0)
        if bad.size:
            pos = int(bad[0])
            char = chr(raw[pos])
            where = f"record {record!r}, " if record is not None else ""
            raise AlphabetError(
                f"{where}position {pos}: character {char!r} is not in the {self.name} alphabet "
                f"(expected one of {self.symbols!r}, either case)",
                record=record, position=pos, character=char)
        return codes.astype(np.uint8)

    def decode(self, codes: np.ndarray) -> str:
        """Turn codes back into a string of symbols."""
        codes = np.asarray(codes, dtype=np.uint8)
        if self.name == "bytes":
            return codes.tobytes().decode("latin-1")
        lut = np.frombuffer(self.symbols.encode("ascii"), dtype=np.uint8)
        return lut[codes].tobytes().decode("ascii")


def looks_nucleotide(codes: Iterable[np.ndarray], alphabet: Alphabet) -> bool:
    """Whether sequences encoded in ``alphabet`` are, all together, nucleotide sequences.

    The rule (:data:`NUCLEOTIDE_RULE`): at least 10 residues in all, every one an IUPAC
    nucleotide code (A C G T U N R Y S W K M B D H V) and 90% or more of them A, C, G, T, U
    or N. Shorter inputs stay undecided (``ACGT`` may be a peptide). A protein meets the
    rule only by accident (poly-alanine, say); the error that follows names the argument
    that declares protein.

    Example:
        >>> looks_nucleotide([PROTEIN.encode("ACGTTGCA"), PROTEIN.encode("acgtn")], PROTEIN)
        True
        >>> looks_nucleotide([PROTEIN.encode("ACGT")], PROTEIN), looks_nucleotide(
        ...     [PROTEIN.encode("MKVLAWHEAGAWGHEE")], PROTEIN)
        (False, False)
    """
    core = _nucleotide_tables(alphabet)[1]
    counts = np.zeros(len(core), dtype=np.int64)
    for block in _blocks(codes):
        counts += np.bincount(block, minlength=len(core))[:len(core)]
    return counts_look_nucleotide(counts, alphabet)


def counts_look_nucleotide(counts: np.ndarray, alphabet: Alphabet) -> bool:
    """:func:`looks_nucleotide` from the number of times each code occurs (``counts[c]``,
    one entry per code of ``alphabet``): for inputs counted elsewhere (on a device, in
    chunks).

    Example:
        >>> counts_look_nucleotide(np.bincount(PROTEIN.encode("ACGTACGTAC"), minlength=26),
        ...                        PROTEIN)
        True
    """
    nucleotide, core = _nucleotide_tables(alphabet)
    counts = np.asarray(counts, dtype=np.int64)[:len(core)]
    total = int(counts.sum())
    return (total >= _NUCLEOTIDE_MIN_RESIDUES and not counts[~nucleotide].any()
            and int(counts[core].sum()) >= _NUCLEOTIDE_MIN_CORE * total)


@functools.lru_cache(maxsize=16)
def _nucleotide_tables(alphabet: Alphabet) -> tuple[np.ndarray, np.ndarray]:
    """Per code: whether it is an IUPAC nucleotide code, and whether it is A/C/G/T/U/N."""
    letters = [chr(i) for i in range(256)] if alphabet.name == "bytes" else list(alphabet.symbols)
    letters = [c.upper() for c in letters]
    tables = (np.array([c in NUCLEOTIDE_CODES for c in letters]),
              np.array([c in "ACGTUN" for c in letters]))
    for table in tables:
        table.setflags(write=False)   # shared by every caller (lru_cache)
    return tables


def _blocks(codes: Iterable[np.ndarray]) -> Iterable[np.ndarray]:
    """The codes in blocks of about ``_COUNT_BLOCK``: short sequences joined, long ones cut
    (bincount widens what it counts to 64 bits)."""
    pending, size = [], 0
    for seq in codes:
        for lo in range(0, len(seq), _COUNT_BLOCK):
            pending.append(seq[lo:lo + _COUNT_BLOCK])
            size += len(pending[-1])
            if size >= _COUNT_BLOCK:
                yield np.concatenate(pending)
                pending, size = [], 0
    if pending:
        yield np.concatenate(pending)


def as_bytes_array(seq: Any) -> np.ndarray:
    """View a str / bytes / uint8 array / Biopython Seq or SeqRecord as a uint8 array of characters."""
    if isinstance(seq, np.ndarray):
        if seq.dtype != np.uint8:
            raise TypeError(f"sequence arrays must have dtype uint8, got {seq.dtype}")
        return seq.ravel()
    if isinstance(seq, (bytes, bytearray, memoryview)):
        return np.frombuffer(bytes(seq), dtype=np.uint8)
    if isinstance(seq, str):
        try:
            return np.frombuffer(seq.encode("ascii"), dtype=np.uint8)
        except UnicodeEncodeError as exc:
            ch = seq[exc.start]
            raise AlphabetError(f"position {exc.start}: character {ch!r} is not ASCII",
                                position=exc.start, character=ch) from None
    inner = getattr(seq, "seq", None)  # SeqRecord
    if inner is not None:
        return as_bytes_array(bytes(inner))
    if hasattr(seq, "__bytes__"):  # Bio.Seq.Seq
        return np.frombuffer(bytes(seq), dtype=np.uint8)
    raise TypeError(f"expected a sequence as str, bytes, uint8 array or SeqRecord, got {type(seq).__name__}")


#: IUPAC complements (Cornish-Bowden 1985): A-T, C-G, R(AG)-Y(CT), K(GT)-M(AC),
#: B(CGT)-V(ACG), D(AGT)-H(ACT); S(CG), W(AT) and N are their own complements.
IUPAC_COMPLEMENT = {"A": "T", "C": "G", "G": "C", "T": "A", "N": "N", "R": "Y", "Y": "R",
                    "S": "S", "W": "W", "K": "M", "M": "K", "B": "V", "V": "B", "D": "H",
                    "H": "D", "U": "A"}


def reverse_complement(codes: np.ndarray, alphabet: Alphabet) -> np.ndarray:
    """The reverse complement of nucleotide ``codes`` (IUPAC, :data:`IUPAC_COMPLEMENT`).

    Raises:
        ValueError: ``alphabet`` is not a nucleotide alphabet (every symbol an IUPAC code).

    Example:
        >>> DNA.decode(reverse_complement(DNA.encode("AACGTRN"), DNA))
        'NYACGTT'
    """
    return _complement_table(alphabet)[np.asarray(codes, dtype=np.uint8)[::-1]]


@functools.lru_cache(maxsize=16)
def _complement_table(alphabet: Alphabet) -> np.ndarray:
    if alphabet.name == "bytes" or any(c.upper() not in IUPAC_COMPLEMENT
                                       for c in alphabet.symbols):
        raise ValueError(f"the {alphabet.name} alphabet has no complement (strands exist "
                         "for nucleotide alphabets only)")
    table = np.arange(256, dtype=np.uint8)
    for code, sym in enumerate(alphabet.symbols):
        partner = IUPAC_COMPLEMENT[sym.upper()]
        if partner not in alphabet.symbols:
            raise ValueError(f"the {alphabet.name} alphabet has {sym!r} but not its "
                             f"complement {partner!r}")
        table[code] = alphabet.symbols.index(partner)
    table.setflags(write=False)   # shared by every caller (lru_cache)
    return table


def is_nucleotide_alphabet(alphabet: Alphabet) -> bool:
    """Whether ``alphabet`` has strands: every symbol an IUPAC nucleotide code with its
    complement in the alphabet (the "dna" alphabet)."""
    try:
        _complement_table(alphabet)
    except ValueError:
        return False
    return True


PROTEIN = Alphabet("protein", PROTEIN_SYMBOLS)
DNA = Alphabet("dna", DNA_SYMBOLS)
BYTES = Alphabet("bytes", "", fold_case=False)

ALPHABETS = dict(zip(ALPHABET_NAMES, (PROTEIN, DNA, BYTES)))


def get_alphabet(alphabet: str | Alphabet) -> Alphabet:
    """Resolve an alphabet name ("protein", "dna", "bytes") or pass an Alphabet through."""
    if isinstance(alphabet, Alphabet):
        return alphabet
    try:
        return ALPHABETS[alphabet]
    except (KeyError, TypeError):
        raise ValueError(f"invalid alphabet: {alphabet!r}; expected one of {sorted(ALPHABETS)}") from None
