"""FASTA read in large byte blocks for ``Database.build`` from a file (``dbbuild``).

The records come out as :class:`Batch` es (names, codes, lengths) equal to what the line
reader (``io.read_sequences``: a line reader over a text stream, as Biopython parses FASTA) and
``io.encode_many`` give, found with whole-block operations instead of a Python loop per
line:

* the stream is read in blocks; ``\\r\\n`` and a lone ``\\r`` become ``\\n`` (the text
  stream's universal newlines; a ``\\r\\n`` split by blocks makes a blank line, which
  changes no record);
* a run of whole records (from one header line to the next record's ``>``) is parsed at
  once: the newlines found by NumPy, header lines are those starting with ``>``, a
  record's length is its lines' bytes less their newlines;
* the records' sequence lines are encoded by one compiled loop (``encode_lines``: each
  byte through the alphabet's table, newlines left out): the codes of every record,
  joined;
* a record holding a byte that is not simply a residue (outside the alphabet, a space,
  other whitespace, non-ASCII) is re-read as the line reader does (lines right-stripped,
  spaces dropped) and encoded by ``io.encode_many``: its codes, or the
  ``AlphabetError`` naming the record, the 0-based position and the character;
* a name is the header up to its first space or tab; a header whose first word holds
  anything but printable ASCII, or which starts with a blank, is split as text.

A record spanning blocks is held (its blocks listed, joined by the parse) until the next
header or the end. A thread of the call reads one block ahead (reading and gzip
inflating let go of the GIL); with ``threads`` > 1, that many runs are parsed at once
(NumPy and the compiled loop let go of the GIL) and handed out in input order, errors
too (the first bad record in the input is the one named; a record's index, for the name
of an unnamed one, is known once the runs before it have counted their headers). One
2.5 GHz Xeon core parses ~200 M residues/s from a plain file (two: ~370 M/s); gzip is
bound by ``GzipFile``'s inflating on the read-ahead thread (one thread, ~65 M/s here
before threads). :func:`applies` says which streams are read here: those whose first byte
is ``>`` and whose start the line reader would accept as it is (others go to it).
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import gzip
import queue
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from ._backends.cpu.dbsort import encode_lines
from .alphabet import Alphabet
from .errors import InputError
from .io import encode_many, unnamed

#: Bytes a block holds at most by default.
BLOCK = 1 << 25
_NL, _GT = 10, 62
#: Codes a letter alphabet never has: marks a byte the fast path does not take.
_ODD = 255
#: Bytes the line reader strips or drops around residues (``str.rstrip``, spaces).
_BLANKS = b" \t\x0b\x0c\x1c\x1d\x1e\x1f"


class Batch(NamedTuple):
    """Consecutive records: names (UTF-8, joined), their byte lengths, codes (joined),
    sequence lengths."""

    names: bytes
    name_lengths: np.ndarray
    codes: np.ndarray
    lengths: np.ndarray


def applies(head: bytes) -> bool:
    """Whether a stream whose first bytes (up to 4096, decompressed) are ``head`` is
    read here: a ``>`` first, no NUL, an ASCII first line (the line reader's checks of a
    file's start then all pass and its first record starts at byte 0).

    Example:
        >>> applies(b">a\\nMKV\\n"), applies(b"@a\\nMKV\\n+\\nIII\\n"), applies(b"\\n>a\\n")
        (True, False, False)
    """
    return head[:1] == b">" and b"\x00" not in head and head.split(b"\n", 1)[0][:800].isascii()


@functools.lru_cache(maxsize=16)
def _tables(alphabet: Alphabet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(code of each byte, _ODD where the fast path does not take it; 1 for each byte
    the fast path does not take (for the "bytes" alphabet, where every code is one, the
    only mark); the same as bools; the header bytes that make a header be split as
    text)."""
    odd = np.zeros(256, dtype=bool)
    odd[list(_BLANKS)] = True
    odd[128:] = True
    codes = alphabet.code_table.astype(np.uint8)
    if alphabet.name != "bytes":
        codes[odd] = _ODD
    flag = (codes == _ODD if alphabet.name != "bytes" else odd).astype(np.uint8)
    header = np.ones(256, dtype=bool)
    header[32:127] = False
    header[9] = False
    for table in (codes, flag, odd, header):
        table.setflags(write=False)
    return codes, flag, odd, header


def read_batches(stream: Any, alphabet: Alphabet, label: str, *,
                 block: int = BLOCK, threads: int = 1) -> Iterator[Batch]:
    """The records of the FASTA byte ``stream`` (:func:`applies` to its start), a batch
    per run of whole records read (about ``block`` bytes of FASTA), in input order.
    ``threads`` > 1 parse that many runs at once (at most ``2 * threads`` runs read and
    not yet handed out); the batches and errors are the same.

    Raises:
        AlphabetError: a symbol outside ``alphabet`` (the line reader's error; the first
            in input order).
        InputError: truncated or corrupt gzip data.
    """
    threads = max(1, int(threads))
    counts = _Counts()
    runs = _runs(stream, max(1, int(block)))
    pending: collections.deque = collections.deque()
    pool = (concurrent.futures.ThreadPoolExecutor(threads, "fasta-parse") if threads > 1
            else None)
    try:
        while True:
            try:
                pieces = next(runs, None)
            except _Corrupt as exc:           # after the records before it, as read
                while pending:
                    yield _hand_out(pending.popleft().result(), counts)
                raise InputError(f"{label}: truncated or corrupt gzip data after "
                                 f"{counts.handed} records ({exc.__cause__})") from None
            if pieces is None:
                break
            if pool is None:
                yield _hand_out(_parse(pieces, counts.add(), counts, alphabet, label), counts)
                continue
            pending.append(pool.submit(_parse, pieces, counts.add(), counts, alphabet, label))
            if len(pending) >= 2 * threads:
                yield _hand_out(pending.popleft().result(), counts)
        while pending:
            yield _hand_out(pending.popleft().result(), counts)
    finally:
        for future in pending:
            future.cancel()
        counts.close()
        if pool is not None:
            pool.shutdown(wait=True)
        runs.close()


def _hand_out(batch: Batch, counts: _Counts) -> Batch:
    counts.handed += len(batch.lengths)
    return batch


class _Corrupt(Exception):
    """Truncated or corrupt gzip data (its cause: the decompressor's error)."""


class _Counts:
    """The record counts of the runs of one call, in input order: a run's first record
    is the sum of the counts before it, known once every earlier run has counted its
    headers (its parse does that first; a parse waits for it only to name an unnamed
    record). Runs are added by one thread, counted by any."""

    def __init__(self) -> None:
        self._counts: list[concurrent.futures.Future] = []
        self._firsts = [0]                   # the first record of runs 0, 1, ... known
        self._lock = threading.Lock()
        self.handed = 0                      # records handed out so far

    def add(self) -> int:
        """A new run's index."""
        self._counts.append(concurrent.futures.Future())
        return len(self._counts) - 1

    def count(self, run: int, n: int | BaseException) -> None:
        """Run ``run`` holds ``n`` records (or could not be counted: ``n`` the error)."""
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            if isinstance(n, BaseException):
                self._counts[run].set_exception(n)
            else:
                self._counts[run].set_result(n)

    def first(self, run: int) -> int:
        """The index (0-based, in the input) of the first record of run ``run``."""
        with self._lock:
            while len(self._firsts) <= run:
                self._firsts.append(self._firsts[-1] + self._counts[len(self._firsts) - 1].result())
            return self._firsts[run]

    def close(self) -> None:
        """Let no parse wait for a run that will not be counted."""
        for k in range(len(self._counts)):
            self.count(k, InputError("the reading stopped"))


def _blocks(stream: Any, size: int) -> Iterator[bytes]:
    """The blocks of ``stream``, read one ahead by a thread of this call (reading and
    gzip inflating let go of the GIL, so they overlap the parsing)."""
    ahead: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(item: Any) -> None:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                ahead.put(item, timeout=0.05)
                return

    def read() -> None:
        try:
            while not stop.is_set():
                data = stream.read(size)
                put(data)
                if not data:
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the reading call
            put(exc)

    thread = threading.Thread(target=read, name="fasta-read-ahead", daemon=True)
    thread.start()
    try:
        while data := ahead.get():
            if isinstance(data, (EOFError, zlib.error, gzip.BadGzipFile)):
                raise _Corrupt() from data
            if isinstance(data, BaseException):
                raise data
            yield data
    finally:
        stop.set()
        thread.join()


def _runs(stream: Any, block: int) -> Iterator[list]:
    """Runs of whole records, each from a ``>`` at its start to a final ``\\n``, newlines
    as ``\\n`` only, as the list of the pieces that joined make it (the joining is the
    parse's, so threads do it at once)."""
    pending: list = []               # the pieces of the record not yet ended
    line_start = True                # whether the next block starts a line
    for data in _blocks(stream, block):
        if b"\r" in data:           # a "\r\n" split by blocks: an extra blank line, dropped
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        cut = data.rfind(b"\n>") + 1 or (0 if line_start and data[:1] == b">" else -1)
        line_start = data.endswith(b"\n")
        if cut < 0:
            pending.append(data)
            continue
        view = memoryview(data)
        if cut:
            pending.append(view[:cut])
        if pending:
            yield pending
        pending = [view[cut:]]
    if any(map(len, pending)):
        if not line_start:
            pending.append(b"\n")
        yield pending


def _ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The indices ``lo[k]..hi[k]-1`` of every k, joined.

    Example:
        >>> _ranges(np.array([2, 7]), np.array([4, 8])).tolist()
        [2, 3, 7]
    """
    n = hi - lo
    ends = np.cumsum(n)
    return np.arange(int(ends[-1]) if len(n) else 0, dtype=np.int64) + np.repeat(lo - ends + n, n)


def _parse(pieces: list, run: int, counts: _Counts, alphabet: Alphabet,
           label: str) -> Batch:
    """The records of the joined ``pieces`` (whole records, :func:`_runs`), the
    ``run``-th run of ``counts`` (which it counts)."""
    try:
        data = pieces[0] if len(pieces) == 1 else b"".join(pieces)
        table, flag, odd, odd_header = _tables(alphabet)
        a = np.frombuffer(data, dtype=np.uint8)
        nl = np.flatnonzero(a == _NL)
        starts = np.concatenate([[0], nl[:-1] + 1])                 # of each line
        head_lines = np.flatnonzero(a[starts] == _GT)               # head_lines[0] == 0
        counts.count(run, len(head_lines))
    except BaseException as exc:
        counts.count(run, exc)
        raise
    hs, he = starts[head_lines], nl[head_lines]                     # a header's '>' and '\n'
    ends = np.append(hs[1:], len(a))                                # a record's end
    lines = np.diff(np.append(head_lines, len(nl))) - 1             # its sequence lines
    lengths = ends - he - 1 - lines
    codes = np.empty(int(lengths.sum()), dtype=np.uint8)
    flagged = encode_lines(a, he + 1, ends, table, flag, codes)
    names, name_lengths = _names(a, hs, he, lambda: counts.first(run), odd_header)
    if flagged:
        marks = odd[codes] if alphabet.name == "bytes" else codes == _ODD
        codes, lengths = _reread(bytes(data), codes, lengths, marks, he, ends, names,
                                 name_lengths, alphabet, label)
    return Batch(names, name_lengths, codes, lengths)


def _names(a: np.ndarray, hs: np.ndarray, he: np.ndarray, first: Callable[[], int],
           odd_header: np.ndarray) -> tuple[bytes, np.ndarray]:
    """(names joined, their lengths) of the headers ``a[hs+1:he]``; ``first()``: the
    index of the first record (asked only when a header has no name)."""
    text = a[_ranges(hs + 1, he)]
    size = he - hs - 1
    bounds = np.concatenate([[0], np.cumsum(size)])
    blank = (text == 32) | (text == 9)
    spaces = np.flatnonzero(blank)
    at = np.searchsorted(spaces, bounds[:-1])
    stop = np.minimum(np.append(spaces, bounds[-1])[at], bounds[1:])   # the first word's end
    simple = size > 0
    simple[simple] = ~blank[bounds[:-1][simple]]
    odd_at = np.flatnonzero(odd_header[text])
    if len(odd_at):                                # an odd byte in the first word
        k = np.searchsorted(bounds, odd_at, side="right") - 1
        simple[k[odd_at < stop[k]]] = False
    if simple.all():
        return text[_ranges(bounds[:-1], stop)].tobytes(), stop - bounds[:-1]
    names = []
    for k, (lo, hi) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        if simple[k]:
            names.append(text[lo:int(stop[k])].tobytes())
        else:
            words = text[lo:hi].tobytes().decode("utf-8", "surrogateescape").split(None, 1)
            name = words[0] if words else unnamed(first() + k)
            names.append(name.encode("utf-8", "surrogateescape"))
    return b"".join(names), np.fromiter(map(len, names), np.int64, len(names))


def _reread(run: bytes, codes: np.ndarray, lengths: np.ndarray, flagged: np.ndarray,
            he: np.ndarray, ends: np.ndarray, names: bytes, name_lengths: np.ndarray,
            alphabet: Alphabet, label: str) -> tuple[np.ndarray, np.ndarray]:
    """``codes`` and ``lengths`` with each record holding a ``flagged`` code read again
    as the line reader does (module docstring); raises its AlphabetError."""
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    which = np.unique(np.searchsorted(bounds, np.flatnonzero(flagged), side="right") - 1)
    name_bounds = np.concatenate([[0], np.cumsum(name_lengths)])
    pieces, lengths, done = [], lengths.copy(), 0
    for r in which.tolist():
        name = names[name_bounds[r]:name_bounds[r + 1]].decode("utf-8", "surrogateescape")
        text = run[he[r] + 1:ends[r]].decode("utf-8", "surrogateescape")
        seq = "".join(line.rstrip() for line in text.split("\n")).replace(" ", "")
        again = encode_many([name], [seq], alphabet, label)[0]
        pieces += [codes[bounds[done]:bounds[r]], again]
        lengths[r], done = len(again), r + 1
    pieces.append(codes[bounds[done]:])
    return np.concatenate(pieces), lengths
