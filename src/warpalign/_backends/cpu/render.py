"""Rendering of many traced paths on the CPU (Numba): the ``traceback`` job's CPU engine
renders with these (``cpu/traceback.py``'s ``CpuTraceback.render_flat``), and so does
:mod:`warpalign.traceback` for the paths of host jobs. Same output as
``_backends/render.py``'s array renderer (tests/test_render.py compares them).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from ...offsets import running_sums
from ..render import Rendered, cigar_text


@nb.njit(nogil=True, cache=True)
def render_many(ops, opoff, qcat, qoff, tcat, toff, matrix, gap_open, gap_extend, symbols):
    """``cpu.traceback.path_score`` of many paths at once, and their rendering. Path k is
    ``ops[opoff[k]:opoff[k+1]]`` over the segments ``qcat[qoff[k]:qoff[k+1]]`` and
    ``tcat[toff[k]:toff[k+1]]`` (its start at their first symbols). Returns per path its
    score and the query and target symbols it consumes, the aligned strings of all paths
    (bytes at the paths' own offsets) and the CIGAR runs (lengths, ops) with their offsets."""
    n = opoff.shape[0] - 1
    total = opoff[n]
    scores = np.empty(n, np.int64)
    used_q = np.empty(n, np.int64)
    used_t = np.empty(n, np.int64)
    qa = np.empty(total, np.uint8)
    ta = np.empty(total, np.uint8)
    lengths = np.empty(total, np.int64)
    kinds = np.empty(total, np.uint8)
    runoff = np.zeros(n + 1, np.int64)
    runs = 0
    for k in range(n):
        s = np.int64(0)
        i = qoff[k]
        j = toff[k]
        prev = -1
        for p in range(opoff[k], opoff[k + 1]):
            op = ops[p]
            if op == 0:
                s += matrix[qcat[i], tcat[j]]
                qa[p] = symbols[qcat[i]]
                ta[p] = symbols[tcat[j]]
                i += 1
                j += 1
            elif op == 1:
                s -= gap_extend if prev == 1 else gap_open
                qa[p] = symbols[qcat[i]]
                ta[p] = 45   # "-"
                i += 1
            else:
                s -= gap_extend if prev == 2 else gap_open
                qa[p] = 45
                ta[p] = symbols[tcat[j]]
                j += 1
            if op == prev:
                lengths[runs - 1] += 1
            else:
                kinds[runs] = op
                lengths[runs] = 1
                runs += 1
            prev = op
        scores[k] = s
        used_q[k] = i - qoff[k]
        used_t[k] = j - toff[k]
        runoff[k + 1] = runs
    return scores, used_q, used_t, qa, ta, lengths[:runs], kinds[:runs], runoff


def render_rows(ops, opoff, qcat, qpos, tcat, tpos, matrix, gap_open: int, gap_extend: int,
                symbols) -> Rendered:
    """``render_paths``' answer (``_backends/render.py``; host arrays, same arguments) by
    :func:`render_many`: path k starts at qcat[qpos[k]] and tcat[tpos[k]]."""
    qoff = np.append(qpos, qcat.size)    # render_many reads each path from its start on
    toff = np.append(tpos, tcat.size)
    scores, used_q, used_t, qa, ta, lengths, kinds, runoff = render_many(
        ops, opoff, qcat, qoff, tcat, toff, matrix, gap_open, gap_extend, symbols)
    same = (qa == ta) & (qa != 45) & (ta != 45)
    run = running_sums(same)
    text, cigoff = cigar_text(lengths, kinds, runoff)
    return Rendered(scores, used_q, used_t, np.diff(run[opoff]), qa, ta, text, cigoff)
