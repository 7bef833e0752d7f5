"""The copy loop of ``Database.build``'s sort by length (``dbbuild.gather``): runs of
bytes copied one after another into an output array, at memory speed (a Python slice
per sequence costs ~1.5 us, the bulk of the sort at Swiss-Prot's lengths)."""

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
