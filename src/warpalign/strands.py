"""Strands of nucleotide jobs: which strands of a query are aligned, and how the hits of
both become one list.

A nucleotide query (a scoring whose alphabet has complements: "dna") is aligned as given
(strand "+") and as its reverse complement (strand "-") by default (``strand="both"``),
so a read from either strand of a reference is found; ``"plus"`` or ``"minus"`` aligns
one. Each strand is an ordinary run of the job's engine on the query or its reverse
complement (:func:`~warpalign.alphabet.reverse_complement`), and both strands' cells are
computed (and counted). A minus-strand hit is stated as SAM states a reverse-strand read
(:class:`~warpalign.results.Alignment`): target coordinates on the plus strand, query
coordinates and CIGAR on the reverse-complemented query in reference order.

**Order of hits from both strands:** by score (descending); equal scores put the plus
strand first, and within a strand the job's own order stays (its tie rule). For
``locate(top=N)`` each strand's hits have pairwise disjoint reference intervals and the
answer is the N best of both strands' N hits (a reference interval may carry one hit
per strand); for ``search`` ties go by database order, then plus before minus.

Protein and bytes scorings have no strands: their hits carry ``strand`` None, and asking
for ``strand="minus"`` is an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Literal

import numpy as np

from .alphabet import Alphabet, is_nucleotide_alphabet, reverse_complement
from .results import Alignment, Hits

STRANDS = ("both", "plus", "minus")
Strand = Literal["both", "plus", "minus"]
#: Strand names -> the int8 of ``Hits.strands``.
_CODE = {"+": 1, "-": -1}


def query_strands(strand: str, alphabet: Alphabet) -> tuple[str | None, ...]:
    """The strands to align, in merge order: ("+", "-"), ("+",), ("-",), or (None,) where
    the alphabet has no strands (protein, bytes).

    Raises:
        ValueError: an unknown ``strand``, or "minus" for an alphabet without strands.

    Example:
        >>> from warpalign.alphabet import DNA, PROTEIN
        >>> query_strands("both", DNA), query_strands("minus", DNA), query_strands("both", PROTEIN)
        (('+', '-'), ('-',), (None,))
    """
    if strand not in STRANDS:
        raise ValueError(f"invalid strand: {strand!r}; expected one of "
                         f"{', '.join(map(repr, STRANDS))}")
    if not is_nucleotide_alphabet(alphabet):
        if strand == "minus":
            raise ValueError(f"strand='minus' needs a nucleotide scoring; the "
                             f"{alphabet.name} alphabet has no strands")
        return (None,)
    return {"both": ("+", "-"), "plus": ("+",), "minus": ("-",)}[strand]


def strand_query(q: np.ndarray, strand: str | None, alphabet: Alphabet) -> np.ndarray:
    """The codes aligned for ``strand``: ``q`` itself, or its reverse complement for "-"."""
    return reverse_complement(q, alphabet) if strand == "-" else q


def merge_alignments(per_strand: Sequence[tuple[str | None, list[Alignment]]],
                     top: int) -> list[Alignment]:
    """The ``top`` best hits of several strands' lists (each in its job's order), each
    tagged with its strand: by score, equal scores in the order of ``per_strand`` (plus
    first), then each list's own order."""
    tagged = [(aln.score, k, i, dataclasses.replace(aln, strand=s))
              for k, (s, alns) in enumerate(per_strand) for i, aln in enumerate(alns)]
    tagged.sort(key=lambda t: (-t[0], t[1], t[2]))
    return [t[3] for t in tagged[:top]]


def tag_hits(hits: Hits, strand: str | None) -> Hits:
    """``hits`` with ``strands`` (and each alignment's ``strand``) set to ``strand``."""
    if strand is None:
        return hits
    alignments = (None if hits.alignments is None else
                  [dataclasses.replace(a, strand=strand) for a in hits.alignments])
    return dataclasses.replace(hits, alignments=alignments,
                               strands=np.full(len(hits), _CODE[strand], np.int8))


def merge_strand_results(results: Sequence[Hits], strands: tuple[str | None, ...],
                         top_k: int) -> list[Hits]:
    """One :class:`Hits` per query from the results of the queries repeated once per
    strand (``results[k * n + i]``: query i on ``strands[k]``), best ``top_k`` first
    (:meth:`Hits.merge`: score, database order, plus before minus); the cells and
    saturation counts of every strand add up."""
    n = len(results) // len(strands)
    if n * len(strands) != len(results):
        raise ValueError(f"{len(results)} results for {len(strands)} strands")
    out = []
    for i in range(n):
        parts = [tag_hits(results[k * n + i], s) for k, s in enumerate(strands)]
        out.append(parts[0] if len(parts) == 1 else parts[0].merge(*parts[1:], top_k=top_k))
    return out


__all__ = ["STRANDS", "Strand", "merge_alignments", "merge_strand_results", "query_strands",
           "strand_query", "tag_hits"]
