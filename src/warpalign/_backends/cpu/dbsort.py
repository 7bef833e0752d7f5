"""The compiled loops of ``Database.build`` from a file (``dbbuild``, ``fastablocks``):
the copy loops of the sort by length (``dbbuild.gather``, ``dbbuild._placed``: runs of
bytes copied at memory speed; a Python slice per sequence costs ~1.5 us, the bulk of
the sort at Swiss-Prot's lengths), the order by length (a counting sort: ~10 ms for
1.5 M sequences, where NumPy's stable argsort of int64 takes ~180 ms), the merge of
sorted runs read back (:func:`merge_starts`) and the encoding of a block's sequence
lines (``fastablocks``). Each lets go of the GIL, so threads of one build run them at
once."""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(nogil=True, cache=True)
def counting_order(lengths, top):
    """The indices of ``lengths`` (each in 0 ... ``top``) ordered by length, ties in
    index order (what a stable argsort gives), as int64."""
    counts = np.zeros(top + 2, dtype=np.int64)
    for k in range(len(lengths)):
        counts[lengths[k] + 1] += 1
    for v in range(1, top + 2):
        counts[v] += counts[v - 1]
    out = np.empty(len(lengths), dtype=np.int64)
    for k in range(len(lengths)):
        v = lengths[k]
        out[counts[v]] = k
        counts[v] += 1
    return out


@nb.njit(nogil=True, cache=True)
def merge_starts(run_of, lengths, runs):
    """The merge of sorted runs read back: sequences in output order (the k-th of
    ``lengths[k]`` residues, from the run ``run_of[k]`` < ``runs``), read as the runs'
    parts joined in run order, each part in output order. Returns each sequence's start
    in that joined buffer and each run's part size."""
    sizes = np.zeros(runs, dtype=np.int64)
    for k in range(len(run_of)):
        sizes[run_of[k]] += lengths[k]
    at = np.empty(runs, dtype=np.int64)
    s = 0
    for r in range(runs):
        at[r] = s
        s += sizes[r]
    starts = np.empty(len(run_of), dtype=np.int64)
    for k in range(len(run_of)):
        r = run_of[k]
        starts[k] = at[r]
        at[r] += lengths[k]
    return starts, sizes


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
