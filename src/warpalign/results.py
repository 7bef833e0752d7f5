"""Result types: NumPy arrays inside frozen objects, records when you iterate.

* :class:`Alignment` -- one pairwise alignment (score, coordinates, CIGAR, identity).
* :class:`Hit` -- one database hit of a query (a small frozen record).
* :class:`Hits` -- all reported hits of one query, best first, arrays behind a
  sequence-of-:class:`Hit` façade.

Coordinates are 0-based half-open: ``query[query_start:query_end]`` is aligned with
``target[target_start:target_end]``.

**Strands** (nucleotide scoring): ``strand`` is "+" for an alignment of the query as given
and "-" for one of its reverse complement, as SAM stores a reverse-strand read: target
coordinates are always on the target's (reference's) plus strand; query coordinates,
CIGAR and aligned strings refer to the reverse-complemented query, in reference order,
so ``reverse_complement(query)[query_start:query_end]`` is aligned with
``target[target_start:target_end]``. In the query as given that part is
``[len(query) - query_end, len(query) - query_start)`` (BLAST tables write it so, with
``sstart > send``). ``strand`` is None where strands do not apply (protein, bytes).
"""

from __future__ import annotations

import functools
import re
import threading
import weakref
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import NotComputed
from .offsets import running_sums

_CIGAR_OP = re.compile(r"(\d+)([MID])")
_CIGAR_COUNT = re.compile(r"(\d+)[MID]")
_CIGAR_GAP = re.compile(r"\d+[ID]")
_GAP = ord("-")


def _pair_counts(query_aligned: str, target_aligned: str) -> tuple[int, int]:
    """(matches, mismatches) of two aligned strings: columns of two equal symbols and of
    two different ones; a column with a gap is neither. Long ASCII strings (every
    alphabet's letters) are compared as NumPy bytes in a few passes (a table of 5,000 hits
    spent 0.3 s in a loop per column), others symbol by symbol (NumPy's cost per call
    exceeds the loop's below ~50 columns)."""
    if (len(query_aligned) >= 64 and len(query_aligned) == len(target_aligned)
            and query_aligned.isascii()
            and target_aligned.isascii()):
        q = np.frombuffer(query_aligned.encode("ascii"), dtype=np.uint8)
        t = np.frombuffer(target_aligned.encode("ascii"), dtype=np.uint8)
        matches = int(np.count_nonzero((q == t) & (q != _GAP)))
        gaps_q, gaps_t = query_aligned.count("-"), target_aligned.count("-")
        both = int(np.count_nonzero((q == _GAP) & (t == _GAP))) if gaps_q and gaps_t else 0
        return matches, len(q) - gaps_q - gaps_t + both - matches
    pairs = [a == b for a, b in zip(query_aligned, target_aligned) if a != "-" and b != "-"]
    return sum(pairs), len(pairs) - sum(pairs)


#: ``Hits.strands`` values -> ``strand`` names.
STRAND_NAMES = {1: "+", -1: "-"}


def _concat(parts, attr: str):
    """``attr`` of every part concatenated, or None when some part lacks it."""
    if any(getattr(h, attr) is None for h in parts):
        return None
    return np.concatenate([getattr(h, attr) for h in parts])


@dataclass(frozen=True)
class Alignment:
    """One pairwise alignment.

    ``cigar`` uses M (a query symbol against a target symbol, equal or not), I (a query
    symbol against a gap) and D (a target symbol against a gap), as SAM does with the
    target as reference. A local alignment of score 0 is empty (all coordinates 0, empty
    CIGAR). Fields that the chosen mode did not compute are None.
    """

    score: int
    query_start: int | None = None
    query_end: int | None = None
    target_start: int | None = None
    target_end: int | None = None
    cigar: str | None = None
    query_aligned: str | None = None
    target_aligned: str | None = None
    algorithm: str = "local"
    record: str | None = None
    strand: str | None = None    # "+", "-" (nucleotide scoring), None (no strands)

    # length and the pair counts are read several times per table line (identity, pident,
    # length, mismatch columns): computed once per object (the fields are frozen)
    @functools.cached_property
    def length(self) -> int:
        """Number of alignment columns (pairs and gap positions)."""
        return sum(map(int, _CIGAR_COUNT.findall(self._need_cigar())))

    @property
    def matches(self) -> int:
        """Number of columns with two equal symbols."""
        return self._pair_counts[0]

    @property
    def mismatches(self) -> int:
        """Number of columns with two different symbols."""
        return self._pair_counts[1]

    @functools.cached_property
    def _pair_counts(self) -> tuple[int, int]:
        self._need_strings()
        return _pair_counts(self.query_aligned, self.target_aligned)

    @property
    def gap_opens(self) -> int:
        """Number of gaps (runs of I or D)."""
        return len(_CIGAR_GAP.findall(self._need_cigar()))

    @property
    def identity(self) -> float:
        """Fraction of alignment columns with two equal symbols (0.0 for an empty alignment)."""
        n = self.length
        return self.matches / n if n else 0.0

    def operations(self) -> list[tuple[int, str]]:
        """The CIGAR as (count, op) pairs."""
        return [(int(n), op) for n, op in _CIGAR_OP.findall(self._need_cigar())]

    def _need_cigar(self) -> str:
        if self.cigar is None:
            raise NotComputed("the alignment path was not computed; use mode='full'")
        return self.cigar

    def _need_strings(self) -> None:
        if self.query_aligned is None or self.target_aligned is None:
            raise NotComputed("the aligned strings were not computed; use mode='full'")


@dataclass(frozen=True)
class Hit:
    """One database hit of a query."""

    target: int          # index of the target in the database (FASTA order)
    name: str
    score: int
    query_end: int | None = None
    target_end: int | None = None
    alignment: Alignment | None = None
    evalue: float | None = None      # set when statistics were applied (warpalign.stats)
    bitscore: float | None = None
    strand: str | None = None        # "+", "-" (nucleotide scoring; see Alignment), None

    @property
    def query_start(self) -> int | None:
        return None if self.alignment is None else self.alignment.query_start

    @property
    def target_start(self) -> int | None:
        return None if self.alignment is None else self.alignment.target_start

    @property
    def cigar(self) -> str | None:
        return None if self.alignment is None else self.alignment.cigar

    @property
    def identity(self) -> float | None:
        return None if self.alignment is None else self.alignment.identity


@dataclass(frozen=True, eq=False)
class Hits(Sequence):
    """The reported hits of one query against a database, best first.

    Ordered by score (descending), ties by database order, then plus strand before minus.
    The arrays are read-only. ``strands`` (int8: 1 plus, -1 minus; None where strands do
    not apply) says which strand of the query each hit aligns (see :class:`Alignment`).
    ``saturated`` counts the targets that a narrow (16-bit) kernel flagged and that were
    rescored with 32-bit arithmetic. ``evalues`` and ``bitscores`` (float64) are set by
    :func:`warpalign.stats.apply_statistics` and None before.
    """

    query_name: str
    query_length: int
    scores: np.ndarray           # int32
    targets: np.ndarray          # int64, database (FASTA) order index
    names: list[str]
    mode: str = "score"
    query_ends: np.ndarray | None = None
    target_ends: np.ndarray | None = None
    alignments: list[Alignment] | None = None
    saturated: int = 0
    cells: int = field(default=0, compare=False)   # DP cells computed for this query
    evalues: np.ndarray | None = None    # float64, set by warpalign.stats.apply_statistics
    bitscores: np.ndarray | None = None  # float64
    strands: np.ndarray | None = None    # int8: 1 plus, -1 minus (nucleotide scoring)

    def __post_init__(self) -> None:
        for arr in (self.scores, self.targets, self.query_ends, self.target_ends,
                    self.evalues, self.bitscores, self.strands):
            if arr is not None:
                arr.setflags(write=False)

    def __len__(self) -> int:
        return len(self.scores)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return Hit(target=int(self.targets[i]), name=self.names[i], score=int(self.scores[i]),
                   query_end=None if self.query_ends is None else int(self.query_ends[i]),
                   target_end=None if self.target_ends is None else int(self.target_ends[i]),
                   alignment=None if self.alignments is None else self.alignments[i],
                   evalue=None if self.evalues is None else float(self.evalues[i]),
                   bitscore=None if self.bitscores is None else float(self.bitscores[i]),
                   strand=None if self.strands is None else STRAND_NAMES[int(self.strands[i])])

    def __iter__(self) -> Iterator[Hit]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"<Hits query={self.query_name!r} n={len(self)} best={self.scores[:3].tolist()}>"

    def take(self, indices) -> Hits:
        """The hits at ``indices`` (in that order), every array and list alike.

        Example:
            >>> from warpalign import Scoring, search
            >>> s = Scoring("BLOSUM62", gap_open=11, gap_extend=1)
            >>> hits = search(["HEAGAWGHEE"], ["PAWHEAE", "HEAGAWGHEE"], s)[0]
            >>> hits.take(hits.scores >= 20).names
            ['seq1']
        """
        idx = np.arange(len(self))[np.asarray(indices)] if len(self) else np.zeros(0, np.int64)

        def pick(arr):
            return None if arr is None else np.ascontiguousarray(arr[idx])
        listed = idx.tolist()
        return Hits(self.query_name, self.query_length, pick(self.scores), pick(self.targets),
                    [self.names[i] for i in listed], self.mode, pick(self.query_ends),
                    pick(self.target_ends),
                    None if self.alignments is None else [self.alignments[i] for i in listed],
                    self.saturated, self.cells, pick(self.evalues), pick(self.bitscores),
                    pick(self.strands))

    def _need_ends(self) -> None:
        if self.query_ends is None:
            raise NotComputed(f"end coordinates were not computed in mode={self.mode!r}; "
                              f"use mode='end' or mode='full'")

    def merge(self, *others: Hits, top_k: int | None = None) -> Hits:
        """Combine hits of the same query from several batches or devices.

        The result is ordered by score, database index, then plus strand before minus,
        and keeps ``top_k`` hits
        (default: as many as the largest input). E-values and bit scores are kept when
        every part has them (they must have been computed for the same search space:
        apply statistics after merging shards, or give the whole database's size).
        """
        parts = (self, *others)
        if len({h.mode for h in parts}) != 1:
            raise ValueError("cannot merge hits computed in different modes")
        k = max(len(h) for h in parts) if top_k is None else top_k
        scores = np.concatenate([h.scores for h in parts])
        targets = np.concatenate([h.targets for h in parts])
        strands = _concat(parts, "strands")
        minus_last = np.zeros(len(scores), np.int8) if strands is None else -strands
        order = np.lexsort((minus_last, targets, -scores.astype(np.int64)))[:k]
        names = [name for h in parts for name in h.names]

        def pick(attr):
            joined = _concat(parts, attr)
            return None if joined is None else joined[order]
        aligns = None
        if self.alignments is not None:
            allal = [aln for h in parts for aln in h.alignments]
            aligns = [allal[i] for i in order]
        return Hits(self.query_name, self.query_length, scores[order], targets[order],
                    [names[i] for i in order], self.mode, pick("query_ends"), pick("target_ends"),
                    aligns, sum(h.saturated for h in parts), sum(h.cells for h in parts),
                    pick("evalues"), pick("bitscores"), pick("strands"))

    def to_pandas(self):
        """A pandas DataFrame with one row per hit, best first (pandas imported lazily).

        Columns: query, target (database index), name, score; then, when computed,
        query_start, query_end, target_start, target_end (0-based half-open), cigar,
        identity, length (alignment columns), evalue, bitscore and strand ("+"/"-",
        nucleotide scoring). Text columns have
        pandas' string dtype and the others int64 or float64, with no hits too.

        Example:
            >>> from warpalign import Scoring, search
            >>> s = Scoring("BLOSUM62", gap_open=11, gap_extend=1)
            >>> df = search(["HEAGAWGHEE"], ["PAWHEAE", "HEAGAWGHEE"], s, mode="full")[0].to_pandas()
            >>> df[["name", "score", "query_start", "cigar"]].values.tolist()
            [['seq1', 62, 0, '10M'], ['seq0', 17, 4, '2M1I2M']]
        """
        return _frame(self._columns())

    def _columns(self) -> dict:
        n = len(self)
        cols: dict = {"query": [self.query_name] * n,
                      "target": np.asarray(self.targets, dtype=np.int64),
                      "name": list(self.names),
                      "score": np.asarray(self.scores, dtype=np.int64)}
        aligns = self.alignments
        if aligns is not None:
            cols["query_start"] = np.array([a.query_start for a in aligns], dtype=np.int64)
        if self.query_ends is not None:
            cols["query_end"] = np.asarray(self.query_ends, dtype=np.int64)
        if aligns is not None:
            cols["target_start"] = np.array([a.target_start for a in aligns], dtype=np.int64)
        if self.target_ends is not None:
            cols["target_end"] = np.asarray(self.target_ends, dtype=np.int64)
        if aligns is not None:
            cols["cigar"] = [a.cigar for a in aligns]
            cols["identity"] = np.array([a.identity for a in aligns], dtype=np.float64)
            cols["length"] = np.array([a.length for a in aligns], dtype=np.int64)
        if self.evalues is not None:
            cols["evalue"] = np.asarray(self.evalues, dtype=np.float64)
        if self.bitscores is not None:
            cols["bitscore"] = np.asarray(self.bitscores, dtype=np.float64)
        if self.strands is not None:
            cols["strand"] = [STRAND_NAMES[int(v)] for v in self.strands]
        return cols


def results_to_pandas(results: Iterable[Hits]):
    """One pandas DataFrame of the hits of many queries (rows in query order, best first).

    Columns as in :meth:`Hits.to_pandas`; a column missing from some queries is NaN there.

    Example:
        >>> from warpalign import Scoring, search
        >>> s = Scoring("BLOSUM62", gap_open=11, gap_extend=1)
        >>> res = search(["HEAGAWGHEE", "PAWHEAE"], ["PAWHEAE", "HEAGAWGHEE"], s, top_k=1)
        >>> results_to_pandas(res)[["query", "name", "score"]].values.tolist()
        [['query0', 'seq1', 62], ['query1', 'seq0', 44]]
    """
    pd = _pandas()
    frames = [_frame(h._columns()) for h in results]
    if not frames:
        return _frame({"query": [], "target": np.zeros(0, np.int64), "name": [],
                       "score": np.zeros(0, np.int64)})
    return pd.concat(frames, ignore_index=True)


#: Columns of text (names, CIGAR): typed as pandas' string dtype even when empty, where
#: pandas would otherwise make an empty list "object" and a list of str its string dtype.
_TEXT_COLUMNS = ("query", "name", "cigar", "strand")


def _frame(cols: dict):
    pd = _pandas()
    text = pd.Series(["x"]).dtype   # object before pandas 3, str from pandas 3 on
    return pd.DataFrame({k: pd.Series(v, dtype=text) if k in _TEXT_COLUMNS else v
                         for k, v in cols.items()})


def _pandas():
    """pandas, or an ImportError that says how to install it (an optional extra)."""
    try:
        import pandas
    except ImportError as exc:
        raise ImportError('to_pandas needs pandas: pip install "warpalign[pandas]"') from exc
    return pandas


#: Most bytes of aligned text that live :class:`AlignmentTable` objects keep undecoded (the
#: byte arrays they were made with: on the GPU path views of the pinned buffer the
#: rendering came back in, reused by CuPy's pool once dropped) until their text is first
#: read; a table made past it decodes at once. Decoding 2 x 4.3 MB of fresh text took
#: 5-27 ms of a 25-50 ms score_pairs(mode="full") call on an H100 host (32,768 pairs of
#: 128 x 1,024, docs/gpu-notes.md session 30); a caller that reads CIGARs and coordinates
#: only never pays it.
LAZY_TEXT_BYTES = 1 << 28
_held_bytes = [0]                 # bytes kept undecoded by live tables
_held_lock = threading.Lock()
_decode_lock = threading.Lock()   # one table's text decoded once, whichever thread asks


def _hold(nbytes: int) -> bool:
    with _held_lock:
        if _held_bytes[0] + nbytes > LAZY_TEXT_BYTES:
            return False
        _held_bytes[0] += nbytes
        return True


def _unhold(nbytes: int) -> None:
    with _held_lock:
        _held_bytes[0] -= nbytes


def decoded(text, encoding: str = "latin-1") -> str:
    """A str as is; a uint8 array as text (decoded from its own buffer: no bytes copy
    first)."""
    if isinstance(text, str):
        return text
    return str(memoryview(np.ascontiguousarray(text, np.uint8)), encoding)


class AlignmentTable(Sequence):
    """Many alignments as columns (``score_pairs(..., mode="full")``): NumPy arrays and one
    text buffer per string field, an :class:`Alignment` made only when one is indexed.

    It is a sequence of :class:`Alignment` (``len``, indexing, slicing to a list,
    iteration, ``==`` with another table or a list of alignments), and its columns are
    read directly, without an object per alignment:

    * ``scores``, ``query_starts``, ``query_ends``, ``target_starts``, ``target_ends``,
      ``lengths`` (alignment columns): int64 arrays; ``identities``: float64 (matches /
      columns, 0.0 for an empty alignment); all read-only;
    * ``cigar_text`` (str) with ``cigar_offsets`` (int64, one more than alignments):
      alignment k's CIGAR is ``cigar_text[cigar_offsets[k]:cigar_offsets[k + 1]]``;
      ``query_text``/``target_text`` with ``aligned_offsets`` likewise for the aligned
      strings (made from uint8 arrays of their bytes, a table decodes them when they are
      first read: :data:`LAZY_TEXT_BYTES`);
    * :meth:`to_pandas` and :meth:`arrays`.

    Example:
        >>> from warpalign import Scoring, score_pairs
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> t = score_pairs(["TACTG", "ACGT"], ["GAACTGA", "ACGT"], s, mode="full").alignments
        >>> t.scores.tolist(), t.cigar_text, t.cigar_offsets.tolist(), t[1].cigar
        ([8, 8], '4M4M', [0, 2, 4], '4M')
    """

    _INTS = ("scores", "query_starts", "query_ends", "target_starts", "target_ends",
             "lengths", "cigar_offsets", "aligned_offsets")

    def __init__(self, *, scores, query_starts, query_ends, target_starts, target_ends,
                 identities, lengths, cigar_text: str, cigar_offsets, query_text,
                 target_text, aligned_offsets, algorithm: str = "local"):
        self._columns(dict(scores=scores, query_starts=query_starts, query_ends=query_ends,
                           target_starts=target_starts, target_ends=target_ends,
                           identities=identities, lengths=lengths, cigar_text=cigar_text,
                           cigar_offsets=cigar_offsets, query_text=query_text,
                           target_text=target_text, aligned_offsets=aligned_offsets,
                           algorithm=algorithm), np.array)

    @classmethod
    def _taking(cls, *, algorithm: str = "local", **columns) -> AlignmentTable:
        """The table of :meth:`__init__`'s arguments whose arrays nothing else holds (the
        traceback's own, fresh): taken as they are and made read-only, not copied (eight
        columns of 32,768 rows cost 0.45-1.3 ms to copy on the GPU hosts, issue 20)."""
        table = cls.__new__(cls)
        table._columns(dict(columns, algorithm=algorithm), np.asarray)
        return table

    def _columns(self, given: dict, take) -> None:
        """Every attribute from ``given`` (the constructor's arguments), each integer
        column and the identities by ``take`` (``np.array``: a copy, ``np.asarray``)."""
        for name in self._INTS:
            arr = take(given[name], dtype=np.int64)
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        ident = take(given["identities"], dtype=np.float64)
        ident.setflags(write=False)
        cigar_text, algorithm = given["cigar_text"], given["algorithm"]
        query_text, target_text = given["query_text"], given["target_text"]
        n = len(self.scores)
        if any(len(getattr(self, k)) != n for k in self._INTS[:6]) or len(ident) != n or \
                len(self.cigar_offsets) != n + 1 or len(self.aligned_offsets) != n + 1:
            raise ValueError("AlignmentTable columns of different lengths")
        object.__setattr__(self, "identities", ident)
        object.__setattr__(self, "cigar_text", cigar_text)
        texts = {"query_text": query_text, "target_text": target_text}
        raw = sum(int(np.asarray(v).nbytes) for v in texts.values() if not isinstance(v, str))
        held = None
        if raw and _hold(raw):
            held = weakref.finalize(self, _unhold, raw)
        else:
            texts = {k: decoded(v) for k, v in texts.items()}
        object.__setattr__(self, "_texts", texts)
        object.__setattr__(self, "_held", held)
        object.__setattr__(self, "algorithm", algorithm)

    @property
    def query_text(self) -> str:
        return self._text("query_text")

    @property
    def target_text(self) -> str:
        return self._text("target_text")

    def _text(self, name: str) -> str:
        got = self._texts[name]
        if isinstance(got, str):
            return got
        with _decode_lock:
            got = self._texts[name] = decoded(self._texts[name])
            if self._held is not None and all(isinstance(v, str) for v in self._texts.values()):
                self._held()                     # the bytes go back (once)
        return got

    def __getstate__(self):
        # a pickle carries text, never a view of a buffer of this process
        state = dict(self.__dict__)
        state["_texts"] = {k: self._text(k) for k in self._texts}
        state["_held"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __setattr__(self, name, value):
        raise AttributeError("AlignmentTable is read-only")

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def from_alignments(cls, alignments: Iterable[Alignment],
                        algorithm: str = "local") -> AlignmentTable:
        """The table of Alignment objects (all with their path)."""
        items = list(alignments)

        def offsets(texts):
            off = running_sums([len(x) for x in texts])
            return off
        return cls(scores=[a.score for a in items], query_starts=[a.query_start for a in items],
                   query_ends=[a.query_end for a in items],
                   target_starts=[a.target_start for a in items],
                   target_ends=[a.target_end for a in items],
                   identities=[a.identity for a in items], lengths=[a.length for a in items],
                   cigar_text="".join(a.cigar for a in items),
                   cigar_offsets=offsets([a.cigar for a in items]),
                   query_text="".join(a.query_aligned for a in items),
                   target_text="".join(a.target_aligned for a in items),
                   aligned_offsets=offsets([a.query_aligned for a in items]),
                   algorithm=items[0].algorithm if items else algorithm)

    @classmethod
    def concat(cls, tables: Sequence[AlignmentTable], algorithm: str = "local") -> AlignmentTable:
        """One table of several, in order."""
        if len(tables) == 1:
            return tables[0]

        def cat(name):
            return np.concatenate([getattr(t, name) for t in tables] or [np.zeros(0)])

        def offsets(name):
            parts, base = [np.zeros(1, np.int64)], 0
            for t in tables:
                off = getattr(t, name)
                parts.append(off[1:] + base)
                base += int(off[-1])
            return np.concatenate(parts)
        return cls(scores=cat("scores"), query_starts=cat("query_starts"),
                   query_ends=cat("query_ends"), target_starts=cat("target_starts"),
                   target_ends=cat("target_ends"), identities=cat("identities"),
                   lengths=cat("lengths"), cigar_text="".join(t.cigar_text for t in tables),
                   cigar_offsets=offsets("cigar_offsets"),
                   query_text="".join(t.query_text for t in tables),
                   target_text="".join(t.target_text for t in tables),
                   aligned_offsets=offsets("aligned_offsets"),
                   algorithm=tables[0].algorithm if tables else algorithm)

    def __len__(self) -> int:
        return len(self.scores)

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        i = int(i)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        return self._make(int(self.scores[i]), int(self.query_starts[i]),
                          int(self.query_ends[i]), int(self.target_starts[i]),
                          int(self.target_ends[i]), int(self.cigar_offsets[i]),
                          int(self.cigar_offsets[i + 1]), int(self.aligned_offsets[i]),
                          int(self.aligned_offsets[i + 1]), int(self.lengths[i]),
                          float(self.identities[i]))

    def __iter__(self) -> Iterator[Alignment]:
        # every column as Python values once (a row's ~10 NumPy scalars cost more than
        # its Alignment)
        cols = [getattr(self, k).tolist() for k in
                ("scores", "query_starts", "query_ends", "target_starts", "target_ends")]
        cig, ali = self.cigar_offsets.tolist(), self.aligned_offsets.tolist()
        return (self._make(*row, c0, c1, a0, a1, length, ident) for row, c0, c1, a0, a1,
                length, ident in zip(zip(*cols), cig, cig[1:], ali, ali[1:],
                                     self.lengths.tolist(), self.identities.tolist()))

    def _make(self, score, qs, qe, ts, te, c0, c1, a0, a1, length, identity) -> Alignment:
        """The Alignment of one row's values (cigar_text[c0:c1], aligned texts [a0:a1])."""
        qa, ta = self.query_text[a0:a1], self.target_text[a0:a1]
        # the counts a table line reads (identity, length, mismatches), from the columns
        # (a table of 5,000 hits spent 0.2 s deriving them again from each alignment's
        # strings): matches = identity x length exactly (integers far below 2^53)
        matches = round(identity * length)
        gaps = qa.count("-") + ta.count("-")
        # the fields set as the frozen dataclass's __init__ sets them (it has no checks),
        # the cached properties' values with them: a third of the time of 5,000 rows
        a = object.__new__(Alignment)
        a.__dict__.update(score=score, query_start=qs, query_end=qe, target_start=ts,
                          target_end=te, cigar=self.cigar_text[c0:c1], query_aligned=qa,
                          target_aligned=ta, algorithm=self.algorithm, record=None,
                          strand=None, length=length,
                          _pair_counts=(matches, length - gaps - matches))
        return a

    def __eq__(self, other) -> bool:
        if isinstance(other, AlignmentTable):
            return (self.algorithm == other.algorithm and self.cigar_text == other.cigar_text
                    and self.query_text == other.query_text
                    and self.target_text == other.target_text
                    and all(np.array_equal(getattr(self, k), getattr(other, k))
                            for k in self._INTS))
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __repr__(self) -> str:
        return f"<AlignmentTable n={len(self)} algorithm={self.algorithm!r}>"

    def cigars(self) -> list[str]:
        """Every alignment's CIGAR string, in order."""
        off = self.cigar_offsets.tolist()
        text = self.cigar_text
        return [text[off[k]:off[k + 1]] for k in range(len(self))]

    def arrays(self) -> dict:
        """The numeric columns by name (read-only arrays, no copies)."""
        return {k: getattr(self, k) for k in (*self._INTS, "identities")}

    def to_pandas(self):
        """A pandas DataFrame, one row per alignment: score, query_start, query_end,
        target_start, target_end (0-based half-open), cigar, identity, length.

        Example:
            >>> from warpalign import Scoring, score_pairs
            >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
            >>> df = score_pairs(["TACTG"], ["GAACTGA"], s, mode="full").alignments.to_pandas()
            >>> df.values.tolist()
            [[8, 1, 5, 2, 6, '4M', 1.0, 4]]
        """
        return _frame({"score": self.scores, "query_start": self.query_starts,
                       "query_end": self.query_ends, "target_start": self.target_starts,
                       "target_end": self.target_ends, "cigar": self.cigars(),
                       "identity": self.identities, "length": self.lengths})
