"""Reading sequences: FASTA and FASTQ, plain or gzip-compressed.

FASTQ is parsed by Biopython's ``Bio.SeqIO.QualityIO.FastqGeneralIterator`` (it handles
the format's corner cases, such as ``@`` at the start of a quality line); FASTA by
:func:`fasta_records`, which reads exactly as Biopython's ``SimpleFastaParser`` does
(the tests hold it to that parser) without importing ``Bio.SeqIO``, whose import loads
every format it knows (~0.25 s: a third of ``warpalign search``'s start). Biopython is
imported only when a FASTQ file is read (``Seq``/``SeqRecord`` inputs are recognised
without importing it). What we add around the parsers: gzip detected by its magic bytes
(never by the file name), the first non-blank line checked so a file that is not
FASTA/FASTQ is named with its line, and every failure turned into a
:class:`~warpalign.errors.InputError` or :class:`~warpalign.errors.AlphabetError`.

Conventions:

* A record's ``name`` is the first word of its header line and ``description`` the
  rest. A record whose header is blank gets the generated name ``seq<i>``, ``i`` its
  0-based index in the input (the same names unnamed in-memory sequences get; the
  prefix is the ``default_name`` argument).
  Names need not be unique.
* Empty records (a header with no sequence lines) are kept as length-0 sequences.
* A file with no record at all is an :class:`InputError` ("no sequences").
* Letters fold to upper case (the :class:`~warpalign.alphabet.Alphabet` does it);
  a symbol outside the alphabet is an :class:`AlphabetError` naming the record, the
  0-based position in that sequence and the character.
"""

from __future__ import annotations

import gzip
import io
import itertools
import os
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
from .alphabet import BYTES, Alphabet, get_alphabet
from .errors import AlphabetError, InputError
from .offsets import running_sums

__all__ = ["Record", "load_sequences", "read_sequences"]

Format = Literal["fasta", "fastq"]
FORMATS = {"fasta": ">", "fastq": "@"}
_GZIP_MAGIC = b"\x1f\x8b"


class Record(NamedTuple):
    """One sequence read from a file.

    ``sequence`` is the text of the sequence, or its ``uint8`` codes when
    :func:`read_sequences` was given an alphabet. ``quality`` is the FASTQ quality
    string (``None`` for FASTA).
    """

    name: str
    description: str
    sequence: Any
    quality: str | None = None


def unnamed(index: int, default_name: str = "seq") -> str:
    """The name given to the ``index``-th (0-based) sequence when it has none."""
    return f"{default_name}{index}"


def split_title(title: str, index: int, default_name: str = "seq") -> tuple[str, str]:
    parts = title.split(None, 1)
    if not parts:
        return unnamed(index, default_name), ""
    return parts[0], parts[1] if len(parts) > 1 else ""


class _CountingLines:
    """A text handle that yields ``first`` then the rest of ``handle``, counting lines.

    FastqGeneralIterator needs ``read(0)`` and ``readline()``; the count lets FASTQ
    errors name their line.
    """

    def __init__(self, first: str, handle: io.TextIOBase, lineno: int):
        self._first: str | None = first
        self._handle = handle
        self.lineno = lineno - 1  # number of the line handed out last

    def read(self, size: int = -1) -> str:
        if size == 0:
            return ""
        raise io.UnsupportedOperation("read")

    def readline(self) -> str:
        if self._first is not None:
            line, self._first = self._first, None
        else:
            line = self._handle.readline()
        if line:
            self.lineno += 1
        return line

    def __iter__(self) -> Iterator[str]:
        return iter(self.readline, "")


def _label(source: Any) -> str:
    if isinstance(source, (str, os.PathLike)):
        return os.fspath(source)
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<stream>"


class Opened:
    """A path or handle opened as text, gzip detected by its magic bytes.

    ``close()`` closes what was opened here and leaves a caller's handle open.
    """

    def __init__(self, source: Any, label: str):
        self.label = label
        self.text: Any = None
        self._file: Any = None      # the file we opened (paths only)
        self._binary: Any = None    # the binary stream given or opened
        self._buffered: Any = None  # our BufferedReader around a handle without peek()
        self._gzip: Any = None      # our GzipFile
        self._wrapper: Any = None   # our TextIOWrapper
        if isinstance(source, (str, os.PathLike)):
            path = Path(source)
            if not path.exists():
                raise InputError(f"{label}: no such file")
            if path.is_dir():
                raise InputError(f"{label}: is a directory, expected a FASTA or FASTQ file")
            try:
                self._file = open(path, "rb")  # noqa: SIM115 - closed by close()
            except OSError as exc:
                raise InputError(f"{label}: cannot open ({exc.strerror})") from None
            self._binary = self._file
        elif hasattr(source, "read"):
            if isinstance(source.read(0), str):
                self.text = source
            else:
                self._binary = source
        else:
            raise TypeError(f"expected a path or an open file, got {type(source).__name__}")

    def binary(self) -> Any:
        """The byte stream, gzip decompressed (detected by its magic bytes), with
        ``peek``; None for a text handle (may raise gzip errors)."""
        if self._binary is None or self._gzip is not None:
            return self._gzip
        binary = self._buffered or self._binary
        if not hasattr(binary, "peek"):
            binary = self._buffered = io.BufferedReader(binary)
        if binary.peek(2)[:2] == _GZIP_MAGIC:
            binary = self._gzip = gzip.GzipFile(fileobj=binary, mode="rb")
        return binary

    def open(self) -> Any:
        """Detect gzip, refuse binary data, return the text stream (may raise gzip errors)."""
        if self.text is not None:
            return self.text
        binary = self.binary()
        if b"\x00" in binary.peek(4096)[:4096]:
            raise InputError(f"{self.label}: line 1: binary data, expected a FASTA or FASTQ file")
        self.text = io.TextIOWrapper(binary, encoding="utf-8", errors="surrogateescape")
        self._wrapper = self.text
        return self.text

    def close(self) -> None:
        # Detach our wrappers rather than closing them: closing (or collecting) one would
        # close the caller's handle beneath it. GzipFile never closes a fileobj it was given.
        if self._wrapper is not None:
            self._wrapper.detach()
        if self._gzip is not None:
            self._gzip.close()
        if self._buffered is not None:
            self._buffered.detach()
        if self._file is not None:
            self._file.close()
        self._wrapper = self._gzip = self._buffered = self._file = None  # closing again: no-op


def _first_line(text: Any, label: str, fmt: str | None) -> tuple[str, int, str] | None:
    """Skip blank lines; return (first line, its 1-based number, format) or None if empty."""
    lineno = 0
    for line in text:
        lineno += 1
        if lineno == 1:
            line = line.lstrip("\ufeff")  # a UTF-8 byte order mark
        if line.strip():
            break
    else:
        return None
    if any("\udc80" <= ch <= "\udcff" for ch in line[:200]):
        raise InputError(f"{label}: line {lineno}: binary data, expected a FASTA or FASTQ file")
    line = line.lstrip()
    if fmt is None:
        fmt = next((name for name, marker in FORMATS.items() if line[0] == marker), None)
        if fmt is None:
            raise InputError(f"{label}: line {lineno}: expected a FASTA ('>') or FASTQ ('@') "
                             f"record, found {line.strip()[:40]!r}")
    elif line[0] != FORMATS[fmt]:
        raise InputError(f"{label}: line {lineno}: expected a {fmt.upper()} record starting "
                         f"with {FORMATS[fmt]!r}, found {line.strip()[:40]!r}")
    return line, lineno, fmt


def _iter_raw(source: Any, fmt: str | None) -> Iterator[tuple[str, str, str | None]]:
    """Yield (title, sequence, quality) of each record, with every failure an InputError."""
    if fmt is not None and fmt not in FORMATS:
        raise ValueError(f"invalid format: {fmt!r}; expected one of {', '.join(map(repr, FORMATS))}")
    yield from iter_opened(Opened(source, _label(source)), fmt)


def iter_opened(opened: Opened, fmt: str | None) -> Iterator[tuple[str, str, str | None]]:
    """:func:`_iter_raw` of a source already opened (closed at the end)."""
    label = opened.label
    count = 0
    lines: _CountingLines | None = None
    try:
        text = opened.open()
        head = _first_line(text, label, fmt)
        if head is None:
            raise InputError(f"{label}: no sequences (the file is empty)")
        first, lineno, fmt = head
        if fmt == "fasta":
            for title, seq in fasta_records(itertools.chain([first], text)):
                count += 1
                yield title, seq, None
        else:
            from Bio.SeqIO.QualityIO import FastqGeneralIterator
            lines = _CountingLines(first, text, lineno)
            for title, seq, qual in FastqGeneralIterator(lines):
                count += 1
                yield title, seq, qual
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        raise InputError(f"{label}: truncated or corrupt gzip data after {count} records "
                         f"({exc})") from None
    except ValueError as exc:  # FastqGeneralIterator's complaints
        if isinstance(exc, (InputError, AlphabetError)):
            raise
        where = f"line {lines.lineno}: " if lines is not None else ""
        raise InputError(f"{label}: {where}invalid {str(fmt).upper()} record {count + 1} "
                         f"({exc})") from None
    finally:
        opened.close()


def fasta_records(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """(title, sequence) of each FASTA record in ``lines`` (text lines, newlines kept).

    Biopython's ``SimpleFastaParser``, line for line: lines before the first ``>`` are
    skipped, the title is the header line after ``>`` right-stripped, the sequence its
    lines right-stripped and joined with spaces and carriage returns dropped.

    Example:
        >>> list(fasta_records([">a x\\n", "MK V\\n", "W\\n", ">b\\n"]))
        [('a x', 'MKVW'), ('b', '')]
    """
    lines = iter(lines)
    for line in lines:
        if line[0] == ">":
            title = line[1:].rstrip()
            break
    else:
        return
    seq: list[str] = []
    for line in lines:
        if line[0] == ">":
            yield title, "".join(seq).replace(" ", "").replace("\r", "")
            seq = []
            title = line[1:].rstrip()
            continue
        seq.append(line.rstrip())
    yield title, "".join(seq).replace(" ", "").replace("\r", "")


def read_sequences(path_or_handle: str | os.PathLike | io.IOBase,
                   alphabet: str | Alphabet | None = None, *,
                   format: Format | None = None, default_name: str = "seq") -> Iterator[Record]:
    """Iterate over the records of a FASTA or FASTQ file (plain or gzip).

    Args:
        path_or_handle: a path, or a file opened in binary mode (gzip is detected) or in
            text mode.
        alphabet: when given ("protein", "dna", "bytes" or an Alphabet), each record's
            ``sequence`` is its ``uint8`` codes; otherwise the sequence text.
        format: "fasta" or "fastq"; by default the first non-blank character decides
            (``>`` or ``@``).
        default_name: records with a blank header are named ``<default_name><i>``.

    Raises:
        InputError: missing file, empty file, truncated gzip, not FASTA/FASTQ.
        AlphabetError: a symbol outside ``alphabet`` (record, 0-based position, character).

    Example:
        >>> import io
        >>> [tuple(r)[:3] for r in read_sequences(io.StringIO(">a first\\nMKV\\n>b\\nWW\\n"))]
        [('a', 'first', 'MKV'), ('b', '', 'WW')]
    """
    alpha = get_alphabet(alphabet) if alphabet is not None else None
    label = _label(path_or_handle)
    for index, (title, seq, qual) in enumerate(_iter_raw(path_or_handle, format)):
        name, description = split_title(title, index, default_name)
        if alpha is not None:
            seq = encode_record(alpha, seq, name, label)
        yield Record(name, description, seq, qual)


def encode_record(alphabet: Alphabet, seq: Any, name: str, source: str | None = None) -> np.ndarray:
    """``alphabet.encode(seq, record=name)``, its error naming the source and record."""
    try:
        return alphabet.encode(_raw_bytes(seq, alphabet), record=name)
    except AlphabetError as exc:
        raise _alphabet_error(alphabet, exc, name, source) from None
    except TypeError as exc:
        raise InputError(f"{source + ': ' if source else ''}record {name!r}: {exc}") from None


def _alphabet_error(alphabet: Alphabet, exc: AlphabetError, name: str,
                    source: str | None) -> AlphabetError:
    where = f"{source}: " if source else ""
    expected = ("ASCII" if alphabet.name == "bytes"
                else f"one of {alphabet.symbols!r}, either case")
    return AlphabetError(
        f"{where}record {name!r}, position {exc.position} (0-based): character "
        f"{exc.character!r} is not in the {alphabet.name} alphabet (expected {expected})",
        record=name, position=exc.position, character=exc.character)


def _raw_bytes(seq: Any, alphabet: Alphabet) -> Any:
    """Sequence text as given; str stays str (the Alphabet reports non-ASCII characters)
    except for the bytes alphabet, where it becomes its UTF-8 bytes (file bytes kept)."""
    if isinstance(seq, str) and alphabet.name == "bytes":
        return seq.encode("utf-8", "surrogateescape")
    return seq


# --- collecting many sequences -------------------------------------------------------

def _bio_types() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """Biopython's (Seq, MutableSeq) and (SeqRecord,), as far as they are loaded: an object
    of these types exists only once its module is, so the checks never import Biopython."""
    seq, record = sys.modules.get("Bio.Seq"), sys.modules.get("Bio.SeqRecord")
    seqs = tuple(t for t in (getattr(seq, "Seq", None), getattr(seq, "MutableSeq", None))
                 if isinstance(t, type))
    records = getattr(record, "SeqRecord", None)
    return seqs, (records,) if isinstance(records, type) else ()


def _is_single(item: Any) -> bool:
    if isinstance(item, (str, bytes, bytearray, memoryview, np.ndarray, Record)):
        return True
    seqs, records = _bio_types()
    return isinstance(item, seqs + records)


def _item_name(item: Any, index: int, default_name: str) -> str:
    if isinstance(item, Record):
        return item.name
    _, records = _bio_types()
    if isinstance(item, records) and item.id and item.id != "<unknown id>":
        return item.id
    return unnamed(index, default_name)


def _item_text(item: Any) -> Any:
    if isinstance(item, Record):
        return item.sequence
    seqs, records = _bio_types()
    if isinstance(item, records):
        return bytes(item.seq)
    if isinstance(item, seqs):
        return bytes(item)
    return item


#: Endings that make a ``str`` a path even for the bytes alphabet (case-insensitive).
PATH_SUFFIXES = (".fa", ".fasta", ".fas", ".fna", ".faa", ".ffn", ".fq", ".fastq", ".seq",
                 ".txt", ".gz", ".bz2", ".xz", ".zst", ".wa")


def is_path(source: Any, alphabet: Alphabet, *, str_is_path: bool = False) -> bool:
    """Whether ``source`` is to be read as a file (the rule :func:`load_sequences` states).

    A PathLike always is; a ``str`` is when something exists at that path, when
    ``str_is_path``, or when it looks like a path: for the letter alphabets a ``/``, ``\\``
    or ``.`` (no sequence holds one), for "bytes" a path separator or a
    :data:`PATH_SUFFIXES` ending. A path that names nothing fails when read, naming it.
    """
    if isinstance(source, os.PathLike):
        return True
    if not isinstance(source, str):
        return False
    if str_is_path or os.path.exists(source):
        return True
    if alphabet.name != "bytes":
        return any(c in source for c in "/\\.")
    return "/" in source or os.sep in source or source.lower().endswith(PATH_SUFFIXES)


def collect(source: Any, alphabet: Alphabet, *, format: Format | None = None,
            str_is_path: bool = False, progress: Any = None,
            default_name: str = "seq") -> tuple[list[str], list[Any], str | None]:
    """Gather (names, raw sequences, source label) from any accepted source.

    Raw sequences are str/bytes/uint8 arrays as given (not yet encoded).
    ``progress`` wraps the record iterator (e.g. a tqdm factory) when given.
    """
    if is_path(source, alphabet, str_is_path=str_is_path):
        label = os.fspath(source)
        records: Iterable = _iter_raw(source, format)
    elif hasattr(source, "read") and not _is_single(source):
        label = _label(source)
        records = _iter_raw(source, format)
    else:
        label = None
        records = None
    if records is not None:
        if progress is not None:
            records = progress(records)
        names, seqs = [], []
        for index, (title, seq, _) in enumerate(records):
            parts = title.split(None, 1)
            names.append(parts[0] if parts else unnamed(index, default_name))
            seqs.append(seq)
        return names, seqs, label
    if _is_single(source):
        items: Iterable = [source]
    elif isinstance(source, Mapping):
        names = [str(k) for k in source]
        return names, [_item_text(v) for v in source.values()], None
    elif isinstance(source, Iterable):
        items = source
    else:
        raise TypeError("expected a path, a sequence (str, bytes, uint8 array, SeqRecord) or "
                        f"an iterable of sequences, got {type(source).__name__}")
    if progress is not None:
        items = progress(items)
    names, seqs = [], []
    for index, item in enumerate(items):
        names.append(_item_name(item, index, default_name))
        seqs.append(_item_text(item))
    return names, seqs, label


def encode_many(names: list[str], seqs: list[Any], alphabet: Alphabet, source: str | None = None,
                *, sort: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Encode many sequences with one table lookup; returns (codes, lengths, order).

    ``lengths`` are in the given order. With ``sort``, ``order`` sorts them by length
    (stable: ties keep the given order) and ``codes`` is the concatenation in that order;
    otherwise ``order`` is None and ``codes`` follows the given order. Only when a symbol
    is bad are records encoded one by one, to name the first bad record.
    """
    raws = _raws(names, seqs, alphabet, source)
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    order = np.argsort(lengths, kind="stable").astype(np.int64) if sort else None
    sequence = raws if order is None else [raws[i] for i in order.tolist()]
    joined = np.frombuffer(b"".join(sequence), dtype=np.uint8)
    try:
        codes = alphabet.encode(joined, record=None)
    except AlphabetError:
        for name, raw in zip(names, raws):
            encode_record(alphabet, raw, name, source)
        raise  # unreachable: some record must be bad
    return codes, lengths, order


def join_raw(names: list[str], seqs: list[Any], alphabet: Alphabet,
             source: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(characters of every sequence joined as one uint8 array, lengths): what
    :func:`encode_many` encodes, not yet encoded. Errors as :func:`encode_many`'s
    (non-ASCII characters of a letter alphabet included)."""
    raws = _raws(names, seqs, alphabet, source)
    lengths = np.fromiter(map(len, raws), dtype=np.int64, count=len(raws))
    return np.frombuffer(b"".join(raws), dtype=np.uint8), lengths


def _raws(names: list[str], seqs: list[Any], alphabet: Alphabet,
          source: str | None) -> list[bytes]:
    """Each sequence's characters as bytes (str as ASCII; "bytes": UTF-8, file bytes kept)."""
    raws: list[bytes] = []
    for name, seq in zip(names, seqs):
        if isinstance(seq, str):
            try:
                raws.append(seq.encode("ascii"))
            except UnicodeEncodeError:
                if alphabet.name != "bytes":
                    encode_record(alphabet, seq, name, source)  # raises, naming the record
                raws.append(seq.encode("utf-8", "surrogateescape"))
        elif isinstance(seq, (bytes, bytearray, memoryview)):
            raws.append(bytes(seq))
        elif isinstance(seq, np.ndarray):
            if seq.dtype != np.uint8:
                raise InputError(f"{source + ': ' if source else ''}record {name!r}: sequence "
                                 f"arrays must have dtype uint8, got {seq.dtype}")
            raws.append(seq.tobytes())
        else:
            raise InputError(f"{source + ': ' if source else ''}record {name!r}: expected a "
                             "sequence as str, bytes, uint8 array, Seq or SeqRecord, got "
                             f"{type(seq).__name__}")
    return raws


def load_sequences(source: Any, alphabet: str | Alphabet = "protein", *,
                   format: Format | None = None,
                   default_name: str = "seq") -> tuple[list[str], list[np.ndarray]]:
    """Encode sequences from a file or from Python objects.

    Args:
        source: a path (str or PathLike) to a FASTA/FASTQ file (plain or gzip); an open
            file; one sequence (str, bytes, uint8 array of characters, Bio ``Seq`` or
            ``SeqRecord``); a list or any iterable of those (a ``Bio.SeqIO.parse``
            iterator included); or a mapping name -> sequence. A ``str`` is a path when
            something exists there or it looks like one (see :func:`is_path`: ``/``,
            ``\\`` or ``.``, which no protein or DNA sequence holds; for "bytes" a path
            separator or a file ending such as ``.fa``), and a path that names nothing is
            an :class:`InputError` naming it; any other ``str`` is one sequence. Pass a
            ``pathlib.Path`` to mean a file whatever its name. Records from
            :func:`read_sequences` are accepted when read without an alphabet.
        alphabet: "protein", "dna", "bytes" or an Alphabet.
        format: "fasta" or "fastq" for files; by default detected.
        default_name: sequences without a name are named ``<default_name><i>``, ``i``
            their 0-based index in the input.

    Returns:
        (names, codes): names in input order (``SeqRecord.id``, the first word of a
        header, or ``seq<i>`` when there is none) and one ``uint8`` code array per
        sequence (views into one contiguous buffer).

    Raises:
        InputError: a missing, unreadable, empty, truncated or non-FASTA/FASTQ file.
        AlphabetError: a symbol outside the alphabet (record, 0-based position, character).

    Example:
        >>> names, codes = load_sequences(["MKV", "wy"], "protein")
        >>> names, [c.tolist() for c in codes]
        (['seq0', 'seq1'], [[12, 11, 19], [17, 18]])
    """
    alpha = get_alphabet(alphabet)
    names, seqs, label = collect(source, alpha, format=format, default_name=default_name)
    codes, lengths, _ = encode_many(names, seqs, alpha, label)
    bounds = running_sums(lengths)
    return names, [codes[a:b] for a, b in itertools.pairwise(bounds.tolist())]



def source_label(source: Any, what: str) -> str:
    """How errors name an input: its path or stream name, else ``what``."""
    if is_path(source, BYTES) or hasattr(source, "read") and not _is_single(source):
        return _label(source)
    return what


def load_one(source: Any, alphabet: Alphabet, what: str) -> tuple[str, np.ndarray]:
    """(name, codes) of one sequence: a sequence object, or a file holding one record.

    ``what`` names the argument in errors and is the name of an unnamed sequence.
    """
    if not is_path(source, alphabet) and _is_single(source):
        name = _item_name(source, 0, what)
        return name, alphabet.encode(_item_text(source), record=name)
    names, codes = load_sequences(source, alphabet, default_name=what)
    if len(codes) != 1:
        where = f"{_label(source)}: " if is_path(source, alphabet) else ""
        raise InputError(f"{where}expected one {what} sequence, got {len(codes)}")
    return names[0], codes[0]
