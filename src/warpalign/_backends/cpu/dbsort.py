"""The compiled loops of ``Database.build`` from a file (``dbbuild``, ``fastablocks``):
the copy loops of the sort by length (``dbbuild.gather``, ``dbbuild.scatter``: runs of
bytes copied at memory speed; a Python slice per sequence costs ~1.5 us, the bulk of
the sort at Swiss-Prot's lengths) and the encoding of a block's sequence lines
(``fastablocks``). Each lets go of the GIL, so threads of one build run them at once."""

from __future__ import annotations

import numba as nb


@nb.njit(nogil=True, cache=True)
def copy_runs(src, starts, lengths, out):
    """``out`` = ``src[starts[k]:starts[k] + lengths[k]]`` for k = 0, 1, ... joined."""
    o = 0
    for k in range(len(starts)):
        s = starts[k]
        n = lengths[k]
        out[o:o + n] = src[s:s + n]
        o += n


@nb.njit(nogil=True, cache=True)
def place_runs(src, lengths, dest, out):
    """``out[dest[k]:dest[k] + lengths[k]]`` = the k-th run of ``src`` (runs joined in
    order, of ``lengths``)."""
    s = 0
    for k in range(len(lengths)):
        n = lengths[k]
        d = dest[k]
        out[d:d + n] = src[s:s + n]
        s += n


@nb.njit(nogil=True, cache=True)
def encode_lines(data, first, last, table, flag, out):
    """The bytes ``data[first[r]:last[r]]`` of every r, newlines (10) left out, each
    mapped through ``table``, joined into ``out``; returns how many of them ``flag``
    marks (bytes the block parser does not take as they are)."""
    o = 0
    flagged = 0
    for r in range(len(first)):
        for i in range(first[r], last[r]):
            b = data[i]
            if b != 10:
                out[o] = table[b]
                flagged += flag[b]
                o += 1
    return flagged
