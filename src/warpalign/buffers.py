"""Many sequences as one buffer of characters: the bulk input forms of ``score_pairs``.

A side of ``score_pairs`` (all the xs, or all the ys) becomes one :class:`Gathered`: the
characters of every sequence joined into one ``uint8`` buffer, ``int64`` offsets
(sequence i is ``raw[offsets[i]:offsets[i + 1]]``), and names where the input had them.
The forms, cheapest first:

* a :class:`SequenceBuffer` (a buffer of characters and its offsets, as given);
* a 2-D ``uint8`` array, one row a sequence (NumPy, or CuPy on the device): a view, no copy
  when C-contiguous;
* a list or tuple of ``str`` (one join, no per-sequence work in Python) or of ``bytes``;
* anything else :func:`warpalign.io.load_sequences` reads (a FASTA/FASTQ path, SeqRecords,
  mixed lists): gathered record by record, then joined.

Characters are raw bytes (``b"A"`` is 65), never codes: encoding by the alphabet's table
(:attr:`~warpalign.alphabet.Alphabet.code_table`) comes after, on the backend that scores
them. A CuPy array stays on its device (only the offsets, one integer per sequence, are
computed or read on the host).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from itertools import repeat
from typing import Any

import numpy as np

from .alphabet import Alphabet
from .errors import AlphabetError, InputError
from .io import collect, join_raw, unnamed
from .offsets import running_sums


def is_device_array(obj: Any) -> bool:
    """Whether ``obj`` is a CuPy array (checked without importing CuPy). The interface is
    looked for on the type: on an array it is a property that builds its dict each time
    (a call of ``score_pairs`` from CuPy asks several times)."""
    kind = type(obj)
    return kind.__module__.split(".", 1)[0] == "cupy" and hasattr(kind, "__cuda_array_interface__")


@dataclass(frozen=True, eq=False)
class SequenceBuffer:
    """Many sequences as one buffer of characters and their offsets.

    Sequence ``i`` is ``buffer[offsets[i]:offsets[i + 1]]``. Give it to
    :func:`~warpalign.score_pairs` as ``xs`` or ``ys``.

    Args:
        buffer: the characters (raw bytes such as ``b"ACGT"``, not codes): ``bytes``, or a
            1-D ``uint8`` array (NumPy, or CuPy: it stays on the device).
        offsets: n + 1 non-decreasing integers, ``offsets[0] >= 0`` and
            ``offsets[-1] <= len(buffer)`` (NumPy or CuPy or a list; read on the host).
        names: a name per sequence, for error messages (default ``seq<i>``).
        source: what errors call the whole input (a file name; default the argument's
            name, "xs" or "ys").
        first: the index of sequence 0 in a larger input read in parts (errors name
            ``first + i``).

    Raises:
        InputError: offsets out of order or out of the buffer, a buffer that is not
            ``uint8``, names of the wrong count.

    Example:
        >>> from warpalign import Scoring, score_pairs
        >>> xs = SequenceBuffer(b"TACTGAAAA", [0, 5, 9])
        >>> ys = SequenceBuffer(b"GAACTGACCCC", [0, 7, 11])
        >>> score_pairs(xs, ys, Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1),
        ...             backend="cpu").scores.tolist()
        [8, 0]
    """

    buffer: Any
    offsets: Any
    names: Any = None
    source: str | None = None
    first: int = 0

    def __post_init__(self) -> None:
        buffer = self.buffer
        if isinstance(buffer, (bytes, bytearray, memoryview)):
            buffer = np.frombuffer(buffer, dtype=np.uint8)
        elif not (isinstance(buffer, np.ndarray) or is_device_array(buffer)):
            raise InputError(f"SequenceBuffer: buffer must be bytes or a 1-D uint8 array, "
                             f"got {type(buffer).__name__}")
        if buffer.dtype != np.uint8 or buffer.ndim != 1:
            raise InputError(f"SequenceBuffer: buffer must be a 1-D uint8 array of "
                             f"characters, got {buffer.ndim}-D {buffer.dtype}")
        offsets = self.offsets
        if is_device_array(offsets):
            offsets = offsets.get()
        offsets = np.asarray(offsets)
        if offsets.ndim != 1 or offsets.size < 1 or not np.issubdtype(offsets.dtype, np.integer):
            raise InputError("SequenceBuffer: offsets must be n + 1 integers (n sequences), "
                             f"got {offsets.ndim}-D {offsets.dtype} of size {offsets.size}")
        offsets = offsets.astype(np.int64)
        step = np.diff(offsets)
        if offsets[0] < 0 or offsets[-1] > buffer.size or (step < 0).any():
            where = ("offsets[0] < 0" if offsets[0] < 0 else
                     f"offsets[-1] = {offsets[-1]} > len(buffer) = {buffer.size}"
                     if offsets[-1] > buffer.size else
                     f"offsets[{int(np.argmax(step < 0)) + 1}] decreases")
            raise InputError(f"SequenceBuffer: offsets must be non-decreasing within the "
                             f"buffer: {where}")
        if self.names is not None and len(self.names) != offsets.size - 1:
            raise InputError(f"SequenceBuffer: {len(self.names)} names for "
                             f"{offsets.size - 1} sequences")
        offsets.setflags(write=False)
        object.__setattr__(self, "buffer", buffer)
        object.__setattr__(self, "offsets", offsets)

    def __len__(self) -> int:
        return self.offsets.size - 1

    @classmethod
    def from_texts(cls, texts: list[str], alphabet: Alphabet, *, names: Any = None,
                   source: str | None = None, first: int = 0) -> SequenceBuffer:
        """The ``str`` sequences ``texts`` joined in one step (ASCII; for the "bytes"
        alphabet their UTF-8 bytes, file bytes kept).

        Raises:
            AlphabetError: a non-ASCII character under a letter alphabet, naming the
                record, position and character.
        """
        got = _join_texts(texts, alphabet, source or "sequences", names, first)
        return cls(got.raw, got.offsets, names, source, first)


@dataclass(frozen=True, eq=False)
class Gathered:
    """One side's characters joined: ``raw`` (uint8, host or device), ``offsets`` (int64,
    host, starting at 0), ``names`` (None: ``seq<i>``), ``source`` (what errors call it),
    ``first`` (index of sequence 0 in a larger input) and ``length`` (the one length of
    every sequence where the input's shape says so: a 2-D array's rows; None: not known
    without reading the offsets)."""

    raw: Any
    offsets: np.ndarray
    names: Any
    source: str
    first: int = 0
    length: int | None = None

    def __len__(self) -> int:
        return self.offsets.size - 1

    @property
    def on_device(self) -> bool:
        return is_device_array(self.raw)

    def name(self, i: int) -> str:
        return unnamed(self.first + i) if self.names is None else self.names[i]

    def where(self, at: int) -> tuple[int, int]:
        """(sequence, position) of byte ``at`` of ``raw``."""
        i = int(np.searchsorted(self.offsets, at, side="right") - 1)
        return i, at - int(self.offsets[i])

    def bad_character(self, at: int, alphabet: Alphabet) -> AlphabetError:
        """The AlphabetError of byte ``at``: names the sequence, record, position, character."""
        i, pos = self.where(at)
        byte = self.raw[at:at + 1]
        char = chr(int(byte.get()[0] if is_device_array(byte) else byte[0]))
        name = self.name(i)
        return AlphabetError(
            f"{self.source}[{self.first + i}]: record {name!r}, position {pos} (0-based): "
            f"character {char!r} is not in the {alphabet.name} alphabet (expected one of "
            f"{alphabet.symbols!r}, either case)", record=name, position=pos, character=char)


def gather(source: Any, alphabet: Alphabet, what: str) -> Gathered:
    """One side of ``score_pairs`` as one buffer of characters (module docstring).

    ``what`` ("xs" or "ys") names the side in errors.

    Raises:
        InputError: a 2-D array that is not uint8; an item that is no sequence.
        AlphabetError: a non-ASCII character in a ``str`` (letter alphabets).
    """
    if isinstance(source, SequenceBuffer):
        off = source.offsets
        raw = source.buffer[int(off[0]):int(off[-1])]
        return Gathered(raw, off - off[0], source.names, source.source or what, source.first)
    if (isinstance(source, np.ndarray) or is_device_array(source)) and source.ndim == 2:
        if source.dtype != np.uint8:
            raise InputError(f"{what}: a 2-D array of sequences must have dtype uint8 (one row "
                             f"a sequence of characters), got {source.dtype}")
        rows, length = source.shape
        if not source.flags.c_contiguous:
            source = source.copy(order="C")
        return Gathered(source.reshape(-1), row_offsets(rows, length), None, what,
                        length=int(length))
    if is_device_array(source) and source.ndim == 1:          # one sequence, as NumPy's
        if source.dtype != np.uint8:
            raise InputError(f"{what}: sequence arrays must have dtype uint8, got {source.dtype}")
        return Gathered(source, np.array([0, source.size], np.int64), None, what)
    if isinstance(source, (list, tuple)):
        joined = _join_homogeneous(source, alphabet, what)
        if joined is not None:
            return joined
    names, seqs, label = collect(source, alphabet)
    raw, lengths = join_raw(names, seqs, alphabet, label)
    offsets = running_sums(lengths)
    return Gathered(raw, offsets, names, label or what)


#: Rows up to which :func:`row_offsets` keeps an answer (8 MB of offsets).
ROWS_KEPT = 1 << 20


def row_offsets(rows: int, length: int) -> np.ndarray:
    """The offsets of ``rows`` rows of ``length`` characters each (int64, read-only): kept
    per shape up to :data:`ROWS_KEPT` rows (an ``arange`` of 32,769 took ~14 us a side of
    each call from 2-D arrays; nothing writes into a side's offsets)."""
    if rows <= ROWS_KEPT:
        return _kept_row_offsets(int(rows), int(length))
    return _row_offsets(rows, length)


def _row_offsets(rows: int, length: int) -> np.ndarray:
    offsets = (np.arange(0, (rows + 1) * length, length, dtype=np.int64) if length
               else np.zeros(rows + 1, np.int64))
    offsets.setflags(write=False)
    return offsets


_kept_row_offsets = functools.lru_cache(maxsize=8)(_row_offsets)


def _join_homogeneous(items: list | tuple, alphabet: Alphabet, what: str) -> Gathered | None:
    """A list of only ``str`` or only ``bytes`` joined in one step (None for other lists)."""
    if not items:
        return None
    if isinstance(items[0], str):
        try:
            return _join_texts(items, alphabet, what)
        except TypeError:                  # not only str: the join refuses the first other
            return None
    if isinstance(items[0], bytes):
        if not all(isinstance(item, bytes) for item in items):   # join takes any buffer
            return None
        return Gathered(np.frombuffer(b"".join(items), dtype=np.uint8), _offsets(items),
                        None, what)
    return None


def _join_texts(texts, alphabet: Alphabet, what: str, names: Any = None,
                first: int = 0) -> Gathered:
    """``str`` sequences joined (TypeError when one is not a str)."""
    offsets = _offsets(texts)
    rows = _equal_rows(texts, offsets)
    if rows is not None:
        return Gathered(rows, offsets, names, what, first)
    text = "".join(texts)
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError as exc:
        if alphabet.name != "bytes":
            i = int(np.searchsorted(offsets, exc.start, side="right") - 1)
            pos, char = exc.start - int(offsets[i]), text[exc.start]
            name = unnamed(first + i) if names is None else names[i]
            raise AlphabetError(
                f"{what}[{first + i}]: record {name!r}, position {pos} (0-based): character "
                f"{char!r} is not in the {alphabet.name} alphabet (expected one of "
                f"{alphabet.symbols!r}, either case)",
                record=name, position=pos, character=char) from None
        raws = [t.encode("utf-8", "surrogateescape") for t in texts]   # bytes per record
        raw, offsets = b"".join(raws), _offsets(raws)
    return Gathered(np.frombuffer(raw, dtype=np.uint8), offsets, names, what, first)


def _equal_rows(texts, offsets: np.ndarray) -> np.ndarray | None:
    """The characters of ``str`` sequences of one length (> 0) as one ``uint8`` array,
    converted by NumPy in one pass into one new array (ASCII), or None: lengths differ,
    an item is not a ``str``, or a character is not ASCII (the join then names it). A
    join and an encode make two new arrays of the whole side, and their page faults were
    most of the time: 32,768 strs of 4,096 letters, 58 ms against 170 ms (2-core
    development machine)."""
    n = offsets.size - 1
    length = int(offsets[1]) if n else 0
    if length == 0 or int(offsets[-1]) != n * length or not all(
            map(isinstance, texts, repeat(str))):
        return None
    if n > 1 and not (np.diff(offsets) == length).all():
        return None
    try:
        rows = np.array(texts, dtype=f"S{length}")
    except UnicodeEncodeError:
        return None
    return rows.view(np.uint8).reshape(-1)


def _offsets(items) -> np.ndarray:
    offsets = running_sums(np.fromiter(map(len, items), dtype=np.int64, count=len(items)))
    return offsets
