"""Result types: NumPy arrays inside frozen objects, records when you iterate.

* :class:`Alignment` -- one pairwise alignment (score, coordinates, CIGAR, identity).
* :class:`Hit` -- one database hit of a query (a small frozen record).
* :class:`Hits` -- all reported hits of one query, best first, arrays behind a
  sequence-of-:class:`Hit` façade.

Coordinates are 0-based half-open: ``query[query_start:query_end]`` is aligned with
``target[target_start:target_end]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from .errors import NotComputed

_CIGAR_OP = re.compile(r"(\d+)([MID])")


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

    @property
    def length(self) -> int:
        """Number of alignment columns (pairs and gap positions)."""
        return sum(n for n, _ in self.operations())

    @property
    def matches(self) -> int:
        """Number of columns with two equal symbols."""
        self._need_strings()
        return sum(a == b for a, b in zip(self.query_aligned, self.target_aligned) if a != "-" and b != "-")

    @property
    def mismatches(self) -> int:
        """Number of columns with two different symbols."""
        self._need_strings()
        return sum(a != b for a, b in zip(self.query_aligned, self.target_aligned) if a != "-" and b != "-")

    @property
    def gap_opens(self) -> int:
        """Number of gaps (runs of I or D)."""
        return sum(1 for _, op in self.operations() if op != "M")

    @property
    def identity(self) -> float:
        """Fraction of alignment columns with two equal symbols (0.0 for an empty alignment)."""
        n = self.length
        return self.matches / n if n else 0.0

    def operations(self) -> list[tuple[int, str]]:
        """The CIGAR as (count, op) pairs."""
        if self.cigar is None:
            raise NotComputed("the alignment path was not computed; use mode='full'")
        return [(int(n), op) for n, op in _CIGAR_OP.findall(self.cigar)]

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

    Ordered by score (descending), ties by database order. The arrays are read-only.
    ``saturated`` counts the targets that a narrow (16-bit) kernel flagged and that were
    rescored with 32-bit arithmetic.
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

    def __post_init__(self) -> None:
        for arr in (self.scores, self.targets, self.query_ends, self.target_ends):
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
                   alignment=None if self.alignments is None else self.alignments[i])

    def __iter__(self) -> Iterator[Hit]:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        return f"<Hits query={self.query_name!r} n={len(self)} best={self.scores[:3].tolist()}>"

    def _need_ends(self) -> None:
        if self.query_ends is None:
            raise NotComputed(f"end coordinates were not computed in mode={self.mode!r}; "
                              f"use mode='end' or mode='full'")

    def merge(self, *others: Hits, top_k: int | None = None) -> Hits:
        """Combine hits of the same query from several batches or devices.

        The result is ordered by score then database index and keeps ``top_k`` hits
        (default: as many as the largest input).
        """
        parts = (self, *others)
        if len({h.mode for h in parts}) != 1:
            raise ValueError("cannot merge hits computed in different modes")
        k = max(len(h) for h in parts) if top_k is None else top_k
        scores = np.concatenate([h.scores for h in parts])
        targets = np.concatenate([h.targets for h in parts])
        order = np.lexsort((targets, -scores.astype(np.int64)))[:k]
        names = sum((list(h.names) for h in parts), [])
        def pick(attr):
            if getattr(self, attr) is None:
                return None
            return np.concatenate([getattr(h, attr) for h in parts])[order]
        aligns = None
        if self.alignments is not None:
            allal = sum((list(h.alignments) for h in parts), [])
            aligns = [allal[i] for i in order]
        return Hits(self.query_name, self.query_length, scores[order], targets[order],
                    [names[i] for i in order], self.mode, pick("query_ends"), pick("target_ends"),
                    aligns, sum(h.saturated for h in parts), sum(h.cells for h in parts))
