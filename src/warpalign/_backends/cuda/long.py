"""One long pair on the GPU (issue 6): score and end, and the passes of a linear-space traceback.

Kernel: ``long.cu`` (``long_pass<MODE, W>``), a chained stripe wavefront in one persistent
launch: warps take stripes of 1,024 query rows by atomic ticket, the target streams
through one column per step, and each stripe follows the one above it through a single
global row buffer of |target| entries plus one progress counter per stripe. 32-bit DPX
scores (no saturation, no length cap beyond int32 indices); any substitution matrix whose
``score + gap_open`` fits a signed byte (W = 1) or 16 bits (W = 2).

:class:`LongPair` holds one pair on the device and gives the three passes that
:func:`warpalign.traceback.align_codes` needs, each equal to its CPU counterpart:

* :meth:`LongPair.score_end` = ``score_end`` (local, global, semiglobal; DESIGN.md's tie
  rule: largest score, then smallest target end, then smallest query end);
* :meth:`LongPair.anchored_start` = ``traceback._anchored_start`` (the reverse pass from
  the end cell that finds the start);
* :meth:`LongPair.halves` = the two ``traceback._last_row`` calls of one Myers–Miller split
  (last row H and F of the top half forwards and of the bottom half backwards).

:meth:`LongPair.path` runs the whole Myers–Miller recursion level by level (every large
split of a level launched at once over several streams; subproblems below ``MIN_CELLS`` on
CPU threads), choosing the same splits as ``traceback._Path``, so the path is the CPU's.

``STATS`` counts kernel launches and their seconds (host wall time around launch + copy).

Measured on one NVIDIA H200 (bench/results/long_gpu.jsonl, affine 5/-3/8/1): E. coli
K-12 W3110 x EC590 (4.65 M x 4.62 M, 2.1e13 cells) score and end in 13.7-14.5 s,
**1,480-1,570 GCUPS**; a 1 M x 1 M slice 845 GCUPS (stripe-chain fill); paper 004's
lengths 512-8,000: 0.4-9 GCUPS (one to eight stripes: too few warps; align() sends pairs
under ``align.LONG_PAIR_CELLS`` to the search kernels). Full alignment of the E. coli
pair: 60.5 s = 4.2x the score pass (score 14.4 s, anchored start 13.8 s, Myers–Miller
32.0 s). SASS (nvcc 13, sm_90) of one step (a lane's 32 rows, one column): 265
instructions for global/semiglobal (96 VIADDMNMX, 32 VIMNMX, 32 PRMT, 37 VIADD, 2 LDS.128,
6 SHFL), ~285 on the hot path for local (+16 VIMNMX3 for the column max, 1 VOTE), i.e.
8.3-8.9 instructions per cell.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..cpu.pairwise import GLOBAL, LOCAL, SEMIGLOBAL
from .loader import get_module, require_cupy

_FILE = "long.cu"
ROWS = 1024                      # query rows per stripe (32 lanes x R = 32), as in long.cu
NEG = -(1 << 30)                 # long.cu's LONG_NEG
#: Values must stay inside +-2^29 so that NEG - penalties never wraps (as score_end's int32).
VALUE_LIMIT = 1 << 29
MODE_LOCAL, MODE_GLOBAL, MODE_SEMIGLOBAL, MODE_ANCHORED = 0, 1, 2, 3
_MODES = {LOCAL: MODE_LOCAL, GLOBAL: MODE_GLOBAL, SEMIGLOBAL: MODE_SEMIGLOBAL}
#: Myers–Miller splits of at least this many cells run their two half passes on the GPU;
#: smaller ones stay on the CPU (traceback.py).
MIN_CELLS = 1 << 22
_STREAMS = 32                    # streams for the concurrent half passes of one MM level
_SMEM_BLOCK = 48 * 1024          # dynamic shared memory per block (no opt-in needed)
_MAX_WARPS_PER_BLOCK = 4         # __launch_bounds__(128)

STATS = {"launches": 0, "seconds": 0.0, "cells": 0}


def score_width(scoring) -> int | None:
    """Bytes per profile entry (1 or 2) for this scoring, or None if ``S + gap_open`` fits neither."""
    v = scoring.matrix.astype(np.int64) + int(scoring.gap_open)
    if v.min() >= -128 and v.max() <= 127:
        return 1
    if v.min() >= -32768 and v.max() <= 32767:
        return 2
    return None


def supported(m: int, n: int, scoring) -> bool:
    """Whether the kernel computes this pair exactly (value range, index range, scoring)."""
    step = int(np.abs(scoring.matrix).max()) + int(scoring.gap_open) + int(scoring.gap_extend)
    return (score_width(scoring) is not None and n < (1 << 31) - 64 and m < (1 << 40)
            and (m + n + 2) * step < VALUE_LIMIT)


def device_name() -> str:
    cp = require_cupy("the long-pair GPU kernel")
    return cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["name"].decode()


class LongPair:
    """Query ``q`` and target ``t`` (uint8 codes) uploaded once; GPU passes over their segments."""

    def __init__(self, q: np.ndarray, t: np.ndarray, scoring):
        self.cp = require_cupy("the long-pair GPU kernel")
        self.scoring = scoring
        self.width = score_width(scoring)
        if self.width is None or not supported(len(q), len(t), scoring):
            raise ValueError("the long-pair GPU kernel cannot score this pair exactly "
                             f"(lengths {len(q)}, {len(t)}; scores + gap_open must fit 16 bits "
                             f"and (m + n) * (max |score| + penalties) stay below {VALUE_LIMIT})")
        cp = self.cp
        self.q_host = np.ascontiguousarray(q, np.uint8)
        self.t_host = np.ascontiguousarray(t, np.uint8)
        self.q = cp.asarray(self.q_host)
        self.t = cp.asarray(self.t_host)
        self.go, self.ge = int(scoring.gap_open), int(scoring.gap_extend)
        self.K = int(scoring.matrix.shape[0])
        self.smat = cp.asarray((scoring.matrix.astype(np.int64) + self.go).astype(np.int32))
        self.min_cells = MIN_CELLS
        per_warp = self.K * self.width * 1024
        self.warps_per_block = max(1, min(_MAX_WARPS_PER_BLOCK, _SMEM_BLOCK // per_warp))
        if per_warp > _SMEM_BLOCK:
            raise ValueError(f"alphabet of {self.K} symbols: the query profile needs {per_warp} "
                             f"bytes of shared memory per warp (at most {_SMEM_BLOCK})")
        self._capacity: dict[int, int] = {}

    # ------------------------------------------------------------------ kernel
    def _function(self, mode: int):
        name = f"long_pass<{mode}, {self.width}>"
        return get_module(_FILE, (name,)).get_function(name)

    def _resident_warps(self, mode: int, func) -> int:
        if mode not in self._capacity:
            cp = self.cp
            dev = cp.cuda.Device()
            sms = int(dev.attributes["MultiProcessorCount"])
            threads = 32 * self.warps_per_block
            smem = self.K * self.width * 1024 * self.warps_per_block
            try:
                blocks = int(cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                    func.ptr, threads, smem))
            except (AttributeError, TypeError, RuntimeError):  # no occupancy call: assume 160 regs
                blocks = min(65536 // (160 * threads), (227 * 1024) // max(smem, 1), 32)
            self._capacity[mode] = max(1, blocks) * self.warps_per_block * sms
        return self._capacity[mode]

    def launch(self, qd, td, mode: int, first_open: int | None = None):
        """Start one pass over device segments qd (rows) x td (columns), both non-empty, on
        the current stream. Returns device arrays (last row: (n, 2) int32 of (H - gap_open,
        F) for columns 1..n; per-stripe (score, row, column): (stripes, 3) int32)."""
        cp = self.cp
        m, n = int(qd.size), int(td.size)
        go, ge = self.go, self.ge
        fo = go if first_open is None else int(first_open)
        func = self._function(mode)
        bus = cp.empty((n, 2), dtype=cp.int32)
        if mode in (MODE_LOCAL, MODE_SEMIGLOBAL):
            bus[:, 0] = -go
        else:
            bus[:, 0] = -(go + cp.arange(n, dtype=cp.int32) * ge) - go
        bus[:, 1] = NEG
        stripes = -(-m // ROWS)
        capacity = self._resident_warps(mode, func)
        rounds = -(-stripes // capacity)
        warps = -(-stripes // rounds)
        blocks = -(-warps // self.warps_per_block)
        progress = cp.zeros(stripes, dtype=cp.int32)
        ticket = cp.zeros(1, dtype=cp.int32)
        res = cp.zeros((stripes, 3), dtype=cp.int32)
        smem = self.K * self.width * 1024 * self.warps_per_block
        func((blocks,), (32 * self.warps_per_block,),
             (qd, np.int64(m), td, np.int32(n), self.smat, np.int32(self.K), np.int32(go),
              np.int32(ge), np.int32(fo), bus, progress, ticket, res, np.int32(stripes)),
             shared_mem=smem)
        STATS["launches"] += 1
        STATS["cells"] += m * n
        return bus, res

    def run(self, qd, td, mode: int, first_open: int | None = None):
        """One pass (see :meth:`launch`), waited for; returns host arrays."""
        t0 = time.perf_counter()
        bus, res = self.launch(qd, td, mode, first_open)
        row, best = self.cp.asnumpy(bus), self.cp.asnumpy(res)
        STATS["seconds"] += time.perf_counter() - t0
        return row, best

    # ------------------------------------------------------------------ passes
    def score_end(self, algorithm: int) -> tuple[int, int, int]:
        """(score, query end, target end) of the whole pair, as ``pairwise.score_end``."""
        m, n = self.q.size, self.t.size
        if m == 0 or n == 0:
            from ..cpu.pairwise import score_end
            s, i, j = score_end(self.q_host, self.t_host, self.scoring.matrix, self.go, self.ge,
                                algorithm)
            return int(s), int(i), int(j)
        row, best = self.run(self.q, self.t, _MODES[algorithm])
        if algorithm == LOCAL:
            return _best_cell(best)
        last = row[:, 0].astype(np.int64) + self.go
        if algorithm == GLOBAL:
            return int(last[-1]), m, n
        full = np.concatenate(([-(self.go + (m - 1) * self.ge)], last))   # H(m, 0..n)
        j = int(np.argmax(full))
        return int(full[j]), m, j

    def anchored_start(self, qe: int, te: int, target: int, full_query: bool) -> tuple[int, int]:
        """``traceback._anchored_start`` on the GPU: (query extent, target extent) or (-1, -1)."""
        if qe == 0 or te == 0 or target <= 0 and not full_query:
            from ...traceback import _anchored_start
            di, dj = _anchored_start(self.q_host, qe, self.t_host, te, self.scoring.matrix,
                                     self.go, self.ge, target, full_query)
            return int(di), int(dj)
        qd = self.q[:qe][::-1].copy()
        td = self.t[:te][::-1].copy()
        if full_query:
            row, _ = self.run(qd, td, MODE_GLOBAL)
            full = np.concatenate(([-(self.go + (qe - 1) * self.ge)],
                                   row[:, 0].astype(np.int64) + self.go))
            hits = np.flatnonzero(full == target)
            return (qe, int(hits[0])) if hits.size else (-1, -1)
        _, best = self.run(qd, td, MODE_ANCHORED)
        s, i, j = _best_cell(best)
        return (i, j) if s == target else (-1, -1)

    def halves(self, qlo: int, qhi: int, mid: int, tlo: int, thi: int, start_in_gap: bool,
               end_in_gap: bool):
        """The two last-row passes of one Myers–Miller split (as traceback._Path.solve).

        Returns (hf, ff, hr, fr), int64 arrays of thi - tlo + 1 entries.
        """
        cp = self.cp
        go, ge = self.go, self.ge
        t0 = time.perf_counter()
        jobs = [(self.q[qlo:qlo + mid], self.t[tlo:thi], ge if start_in_gap else go),
                (self.q[qlo + mid:qhi][::-1], self.t[tlo:thi][::-1], ge if end_in_gap else go)]
        streams = self._streams(2)
        buses = []
        for (qd, td, fo), stream in zip(jobs, streams):     # both halves at once
            with stream:
                buses.append(self.launch(cp.ascontiguousarray(qd), cp.ascontiguousarray(td),
                                         MODE_GLOBAL, fo)[0])
        out = []
        for (qd, _, fo), stream, bus in zip(jobs, streams, buses):
            out.append((int(qd.size), fo, cp.asnumpy(bus, stream=stream)))
            stream.synchronize()
        STATS["seconds"] += time.perf_counter() - t0
        rows = []
        for a, fo, row in out:
            corner = -(fo + (a - 1) * ge)
            rows.append(np.concatenate(([corner], row[:, 0].astype(np.int64) + go)))
            rows.append(np.concatenate(([corner], row[:, 1].astype(np.int64))))
        return tuple(rows)

    def _streams(self, count: int = 2):
        pool = getattr(self, "_stream_pool", [])
        while len(pool) < count:
            pool.append(self.cp.cuda.Stream(non_blocking=True))
        self._stream_pool = pool
        return pool[:count]

    def _halves_many(self, nodes):
        """:meth:`halves` of several independent splits, all launched before any is waited for."""
        cp = self.cp
        go, ge = self.go, self.ge
        t0 = time.perf_counter()
        streams = self._streams(_STREAMS)
        pending = []
        for k, (qlo, qhi, tlo, thi, start_in_gap, end_in_gap) in enumerate(nodes):
            mid = (qhi - qlo) // 2
            for h, (qd, td, fo) in enumerate((
                    (self.q[qlo:qlo + mid], self.t[tlo:thi], ge if start_in_gap else go),
                    (self.q[qlo + mid:qhi][::-1], self.t[tlo:thi][::-1], ge if end_in_gap else go))):
                stream = streams[(2 * k + h) % len(streams)]
                with stream:
                    bus = self.launch(cp.ascontiguousarray(qd), cp.ascontiguousarray(td),
                                      MODE_GLOBAL, fo)[0]
                pending.append((int(qd.size), fo, bus, stream))
        rows = []
        for a, fo, bus, stream in pending:
            row = cp.asnumpy(bus, stream=stream)
            stream.synchronize()
            corner = -(fo + (a - 1) * ge)
            rows.append(np.concatenate(([corner], row[:, 0].astype(np.int64) + go)))
            rows.append(np.concatenate(([corner], row[:, 1].astype(np.int64))))
        STATS["seconds"] += time.perf_counter() - t0
        return [tuple(rows[4 * k:4 * k + 4]) for k in range(len(nodes))]

    def path(self, qlo: int, qhi: int, tlo: int, thi: int, max_full_cells: int):
        """Optimal global path of q[qlo:qhi] vs t[tlo:thi]: (score, ops), as traceback.global_path.

        Myers–Miller level by level: every split of a level with at least ``min_cells``
        cells has its two half passes launched at once (several streams; the stripes of
        all launches share the GPU), so deep levels keep the GPU busy too. The splits are
        chosen exactly as ``traceback._Path.solve`` chooses them (same arrays, same
        argmax), so the path is the CPU's. Subproblems below ``min_cells`` are solved by
        ``traceback._Path`` on CPU threads.
        """
        from concurrent.futures import ThreadPoolExecutor

        from ...traceback import OP_I, _Path

        go, ge = self.go, self.ge
        matrix = self.scoring.matrix

        def big(node):
            a, b = node[1] - node[0], node[3] - node[2]
            return (a >= 2 and b >= 1 and (a + 1) * (b + 1) > max_full_cells
                    and a * b >= self.min_cells)

        items: list = [("node", (qlo, qhi, tlo, thi, False, False))]
        score = None
        while True:
            split = [it[1] for it in items if it[0] == "node" and big(it[1])]
            if not split:
                break
            rows = iter(self._halves_many(split))
            nxt: list = []
            for kind, node in items:
                if kind != "node" or not big(node):
                    nxt.append((kind, node))
                    continue
                q0, q1, t0, t1, sig, eig = node
                hf, ff, hr, fr = next(rows)
                mid = (q1 - q0) // 2
                through = hf + hr[::-1]
                crossing = ff + fr[::-1] + (go - ge)
                j1 = int(np.argmax(through))
                j2 = int(np.argmax(crossing))
                if score is None:
                    score = max(int(through[j1]), int(crossing[j2]))
                if through[j1] >= crossing[j2]:
                    nxt += [("node", (q0, q0 + mid, t0, t0 + j1, sig, False)),
                            ("node", (q0 + mid, q1, t0 + j1, t1, False, eig))]
                else:
                    nxt += [("node", (q0, q0 + mid - 1, t0, t0 + j2, sig, True)),
                            ("ops", np.full(2, OP_I, np.uint8)),
                            ("node", (q0 + mid + 1, q1, t0 + j2, t1, True, eig))]
            items = nxt

        def leaf(node):
            p = _Path(self.q_host, self.t_host, matrix, go, ge, max_full_cells)
            return p.solve(*node), p.ops()

        leaves = [it[1] for it in items if it[0] == "node"]
        with ThreadPoolExecutor(max_workers=_cpu_threads()) as pool:
            solved = iter(list(pool.map(leaf, leaves)))
        pieces = []
        for kind, value in items:
            if kind == "ops":
                pieces.append(value)
            else:
                leaf_score, ops = next(solved)
                if score is None:
                    score = leaf_score
                pieces.append(ops)
        ops = np.concatenate(pieces) if pieces else np.empty(0, np.uint8)
        return score, ops


def _cpu_threads() -> int:
    import os
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _best_cell(best: np.ndarray) -> tuple[int, int, int]:
    """Reduce per-stripe (score, row, column) by the tie rule; score 0 gives (0, 0, 0)."""
    s = best[:, 0].astype(np.int64)
    top = int(s.max())
    if top <= 0:
        return 0, 0, 0
    cand = best[s == top]
    k = np.lexsort((cand[:, 1], cand[:, 2]))[0]      # smallest column, then smallest row
    return top, int(cand[k, 1]), int(cand[k, 2])


def score_end_long(q: np.ndarray, t: np.ndarray, scoring, algorithm: int) -> tuple[int, int, int]:
    """Score and end cell of one pair on the GPU: the result of ``pairwise.score_end``."""
    return LongPair(q, t, scoring).score_end(algorithm)


def gcups(cells: int, seconds: float) -> float:
    return cells / seconds / 1e9 if seconds > 0 else math.inf
