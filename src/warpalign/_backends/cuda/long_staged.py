"""The staged traceback of one long pair on the GPU (:class:`Staged`, used by
:meth:`~warpalign._backends.cuda.long.LongPair.full_alignment`); see ``long.py``'s module
docstring for the plan and the figures."""

from __future__ import annotations

import contextlib
import itertools
import time

import numpy as np

from ..cpu.pairwise import GLOBAL, LOCAL, SEMIGLOBAL
from .long_common import (MODE_ANCHORED, MODE_GLOBAL, NEG, STAGE3_LEAF_CELLS, STATS,
                          VALUE_LIMIT, WALL)


class Staged:
    """The staged traceback of one long pair (CUDAlign's idea, exact under DESIGN.md's rules).

    Stage 1: the score pass (``engine.forward_pass``) keeps the forward rows H and F at
    every ``engine.special``-th query row (the special rows; 16,384 by default).

    Stage 2, upwards from the end cell, strip by strip between special rows: the reverse
    pass anchored at the end (``cpu.traceback.anchored_start``'s recurrence) restricted to a
    column range that provably holds every optimal alignment ending there. Its row 0 is the
    previous strip's last row with every column masked that no optimal alignment crosses
    (forward + reverse < score, for H and for the vertical-gap state F); column 0 is a
    wall. Masking loses only non-optimal paths, so every cell of an optimal alignment gets
    its exact reverse value and a cell reaches the score exactly where the CPU's reverse
    pass finds it: the start is the CPU's (largest target start, then largest query start).
    The range of a strip of a rows ends at the rightmost crossing column; it starts at the
    smallest column c whose forward value at the strip's top row could still complete an
    optimal alignment: F(c) + P*a + max_c' (V(c') - gmin*(c' - c)) >= score, where V is the
    masked reverse row (H, or F + open - extend), gmin = min(open, extend) the least cost
    of a gap symbol and P = max(0, max score + gmin) (a path over a rows and b columns
    scores at most P*min(a, b) - gmin*b).

    Stage 2b, downwards from the start: forward passes anchored at the last crosspoint
    (value 0, a horizontal gap along its row, a vertical one down its column opening at
    gap_open, or at gap_extend when it sits inside a vertical gap), over the columns from
    the crosspoint to the last crossing column of the next special row; the next crosspoint
    is the first column where prefix + forward + reverse = score (H), else the first where
    the vertical gap state does (F + F + open - extend = score: a gap crossing the row).

    Stage 3: the segments between consecutive crosspoints (as Myers–Miller's splits: a
    vertical-gap crosspoint contributes two I ops and the start/end-in-gap conditions),
    all solved together level by level by ``engine.path_items``.
    """

    def __init__(self, engine):
        self.e = engine
        self.seconds = {"stage1": 0.0, "stage2": 0.0, "stage2b": 0.0, "stage3": 0.0}
        #: of which in GPU passes (wall time around launch and copies, ``STATS["seconds"]``)
        self.gpu_seconds = dict.fromkeys(self.seconds, 0.0)
        self.cells = {"stage2": 0, "stage2b": 0}
        self.strips = 0
        self.points: list = []          # crosspoints (row, column, inside a vertical gap)

    def run(self, algorithm: int, max_full_cells: int):
        from ...errors import TracebackError
        from ..cpu.traceback import OP_I, path_score

        e = self.e
        go, ge = e.go, e.ge
        with self._stage("stage1"):
            s, qe, te = e.forward_pass(algorithm)
        if algorithm == LOCAL and s == 0:
            return 0, 0, 0, 0, 0, np.empty(0, np.uint8)
        with self._stage("stage2"):
            qs, ts, crossing_rows = self._upwards(algorithm, s, qe, te)
        with self._stage("stage2b"):
            points = self._downwards(s, qs, ts, qe, crossing_rows)
        items = []
        points.append((qe, te, False))
        for (ra, ca, ga), (rb, cb, gb) in itertools.pairwise(points):
            items.append(("node", (ra + 1 if ga else ra, rb - 1 if gb else rb, ca, cb, ga, gb)))
            if gb:
                items.append(("ops", np.full(2, OP_I, np.uint8)))
        self.points = points
        with self._stage("stage3"):
            _, ops = e.path_items(items, min(max_full_cells, STAGE3_LEAF_CELLS))
        check, i, j = path_score(ops, e.q_host, qs, e.t_host, ts, e.scoring.matrix, go, ge)
        if (int(check), int(i), int(j)) != (s, qe, te):
            raise TracebackError(f"internal error: the staged path scores {int(check)} and ends at "
                                 f"({int(i)}, {int(j)}); the score pass says {s} at ({qe}, {te})")
        return s, qs, qe, ts, te, ops

    @contextlib.contextmanager
    def _stage(self, name: str):
        t0, g0 = time.perf_counter(), STATS["seconds"]
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - t0
            self.gpu_seconds[name] += STATS["seconds"] - g0

    def _upwards(self, algorithm: int, s: int, qe: int, te: int):
        """Stage 2: (query start, target start, {special row: (lo, masked H, masked F)})."""
        from ...errors import TracebackError

        e = self.e
        go, ge = e.go, e.ge
        gmin = min(go, ge)
        slope_p = max(0, int(e.scoring.matrix.max()) + gmin)
        special = e.special
        tops = [k * special for k in range(min(e.saved_rows, (qe - 1) // special), 0, -1)] + [0]
        cur_lo = te
        cur_h = np.zeros(1, np.int64)            # reverse row at the end cell's row
        cur_f = np.full(1, NEG, np.int64)
        tail = algorithm == GLOBAL               # global: H(qe, c < te) = a trailing horizontal gap
        r = qe
        rows = {}
        start = None                             # (target start, query start), largest wins
        mode = MODE_ANCHORED if algorithm == LOCAL else MODE_GLOBAL
        for top in tops:
            v = np.maximum(cur_h, cur_f + (go - ge))
            live = np.flatnonzero(v > -VALUE_LIMIT)
            if live.size == 0:
                break
            hi = cur_lo + int(live[-1])
            cmin = cur_lo + int(live[0])
            a = r - top
            best_v = int(np.max(v[live] - gmin * (cur_lo + live)))
            if tail and te > 0:      # c' < te: -(go + (te-c'-1) ge) - gmin c', largest at c' = te-1
                best_v = max(best_v, -go - gmin * (te - 1))
            c0 = e.first_reaching(top, cmin, s - slope_p * a - best_v, gmin, algorithm)
            lo = cmin if c0 is None else min(c0, cmin)
            width = hi - lo + 1
            row_h = np.full(width, NEG, np.int64)   # bus index k - 1 <-> column hi + 1 - k
            row_f = np.full(width, NEG, np.int64)
            a0 = max(lo, cur_lo)                  # columns a0..hi carry the row below
            row_h[: hi - a0 + 1] = cur_h[a0 - cur_lo: hi - cur_lo + 1][::-1]
            row_f[: hi - a0 + 1] = cur_f[a0 - cur_lo: hi - cur_lo + 1][::-1]
            if tail:
                cols = np.arange(lo, te)
                row_h[hi - cols] = -(go + (te - cols - 1) * ge)
                tail = False
            out_h, out_f, best = e.strip(top, r, lo, hi + 1, True, mode, WALL, -WALL, row_h, row_f)
            self.strips += 1
            self.cells["stage2"] += a * width
            if algorithm == LOCAL and best[0] == s:
                found = (hi + 1 - best[2], r - best[1])
                if start is None or found > start:
                    start = found
            rev_h, rev_f = out_h[::-1], out_f[::-1]         # columns lo..hi
            fwd_h, fwd_f = e.special_row(top, lo, hi, algorithm)
            on_h = fwd_h + rev_h == s
            on_f = fwd_f + rev_f + (go - ge) == s
            cur_h = np.where(on_h, rev_h, NEG)
            cur_f = np.where(on_f, rev_f, NEG)
            cur_lo = lo
            r = top
            rows[top] = (lo, cur_h, cur_f)
            if top == 0 and algorithm == SEMIGLOBAL:
                hits = np.flatnonzero(rev_h == s)
                if hits.size:
                    start = (lo + int(hits[-1]), 0)
            elif top == 0 and algorithm == GLOBAL and lo == 0 and rev_h[0] == s:
                start = (0, 0)
        if start is None:
            raise TracebackError(f"internal error: the staged reverse pass from ({qe}, {te}) does "
                                 f"not reach score {s}")
        return start[1], start[0], rows

    def _downwards(self, s: int, qs: int, ts: int, qe: int, rows: dict):
        """Stage 2b: crosspoints [(row, column, inside a vertical gap)] from the start down."""
        from ...errors import TracebackError

        e = self.e
        go, ge = e.go, e.ge
        points = [(qs, ts, False)]
        prefix = 0
        for rk in sorted(r for r in rows if qs < r < qe):
            lo_k, rev_h, rev_f = rows[rk]
            live = np.flatnonzero((rev_h > -VALUE_LIMIT) | (rev_f > -VALUE_LIMIT))
            r0, c0, in_gap = points[-1]
            hi_k = max(c0, lo_k + int(live[-1])) if live.size else c0
            a = rk - r0
            fo = ge if in_gap else go
            column = -(fo + (a - 1) * ge)                  # H = F at (rk, c0): down column c0
            width = hi_k - c0
            fwd_h = np.full(width + 1, column, np.int64)
            fwd_f = np.full(width + 1, column, np.int64)
            if width > 0:
                cols = np.arange(1, width + 1, dtype=np.int64)
                out_h, out_f, _ = e.strip(r0, rk, c0, hi_k, False, MODE_GLOBAL, fo, 0,
                                          -(go + (cols - 1) * ge), np.full(width, NEG, np.int64))
                fwd_h[1:], fwd_f[1:] = out_h, out_f
                self.cells["stage2b"] += a * width
            rh = np.full(width + 1, NEG, np.int64)
            rf = np.full(width + 1, NEG, np.int64)
            a0, a1 = max(c0, lo_k), min(hi_k, lo_k + rev_h.size - 1)
            if a0 <= a1:
                rh[a0 - c0:a1 - c0 + 1] = rev_h[a0 - lo_k:a1 - lo_k + 1]
                rf[a0 - c0:a1 - c0 + 1] = rev_f[a0 - lo_k:a1 - lo_k + 1]
            hit = np.flatnonzero(prefix + fwd_h + rh == s)
            if hit.size:
                c = int(hit[0])
                prefix += int(fwd_h[c])
                points.append((rk, c0 + c, False))
                continue
            hit = np.flatnonzero(prefix + fwd_f + rf + (go - ge) == s)
            if not hit.size:
                raise TracebackError(f"internal error: no crosspoint at row {rk} from ({r0}, {c0})")
            c = int(hit[0])
            prefix += int(fwd_f[c])
            points.append((rk, c0 + c, True))
        return points
