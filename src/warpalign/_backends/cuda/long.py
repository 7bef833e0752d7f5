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
* :meth:`LongPair.anchored_start` = ``cpu.traceback.anchored_start`` (the reverse pass from
  the end cell that finds the start);
* :meth:`LongPair.halves` = the two ``cpu.traceback.last_row`` calls of one Myers–Miller split
  (last row H and F of the top half forwards and of the bottom half backwards).

:meth:`LongPair.path` runs the whole Myers–Miller recursion level by level (every large
split of a level launched at once over several streams; subproblems below ``MIN_CELLS`` on
CPU threads), choosing the same splits as ``cpu.traceback.MyersMiller``, so the path is the CPU's.

:meth:`LongPair.full_alignment` (used by ``align(..., mode="full")`` while ``STAGED``) is
the staged traceback (:class:`Staged`, CUDAlign's plan): the score pass also keeps the
forward rows every ``STAGE_ROWS`` query rows; strips between them go upwards from the end
(reverse passes over provably sufficient column ranges, rows masked to the columns that
optimal alignments cross) to the start, which is the CPU's; forward strips from the start
pick one crosspoint per special row; the segments between crosspoints are aligned together
by :meth:`LongPair.path_items`. Its path is optimal (rescored) but may differ from the
CPU's CIGAR among equally scoring ones; ``STAGED = False`` restores the previous route.

``STATS`` counts kernel launches and their seconds (host wall time around launch + copy).

Measured on one NVIDIA H200 (bench/results/long_gpu.jsonl, affine 5/-3/8/1): E. coli
K-12 W3110 x EC590 (4.65 M x 4.62 M, 2.1e13 cells) score and end in 13.7-14.5 s,
**1,480-1,570 GCUPS**; a 1 M x 1 M slice 845 GCUPS (stripe-chain fill); paper 004's
lengths 512-8,000: 0.4-9 GCUPS (one to eight stripes: too few warps; align() sends pairs
under ``align.LONG_PAIR_CELLS`` to the search kernels). Full alignment of the E. coli
pair by the staged traceback: 28.1 s on an H100 = 1.86x the score+end pass of the same run
(15.2 s); the previous route took 60.5 s = 4.2x (score 14.4 s, anchored start 13.8 s,
Myers–Miller 32.0 s; H200). Short passes (strips, halves, slices) run 16 rows per lane
(:meth:`LongPair.lane_rows`). SASS (nvcc 13, sm_90) of one step (a lane's 32 rows, one column): 265
instructions for global/semiglobal (96 VIADDMNMX, 32 VIMNMX, 32 PRMT, 37 VIADD, 2 LDS.128,
6 SHFL), ~285 on the hot path for local (+16 VIMNMX3 for the column max, 1 VOTE), i.e.
8.3-8.9 instructions per cell.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ...errors import BackendError
from ..cpu.pairwise import GLOBAL, LOCAL, SEMIGLOBAL
from .loader import get_module, require_cupy
from .long_common import (MODE_ANCHORED, MODE_GLOBAL, MODE_LOCAL, MODE_SEMIGLOBAL, NEG,
                          STATS, VALUE_LIMIT)
from .long_staged import Staged

_FILE = "long.cu"
ROWS = 1024                      # query rows per stripe of the score pass (32 lanes x R = 32)
#: Rows per lane (long.cu's R) a pass may take: a stripe is 32 R rows. Passes with few
#: stripes (the staged traceback's strips, Myers–Miller halves) take a smaller R, so more
#: warps share the pass and each warp's serial chain of R rows per column is shorter.
LANE_ROWS = (32, 16, 8, 4)
#: Stripes of 1,024 rows per SM from which a pass keeps R = 32 (:meth:`LongPair.lane_rows`).
MANY_STRIPES = 8
_MODES = {LOCAL: MODE_LOCAL, GLOBAL: MODE_GLOBAL, SEMIGLOBAL: MODE_SEMIGLOBAL}
#: Myers–Miller splits of at least this many cells run their two half passes on the GPU;
#: smaller ones stay on the CPU (traceback.py).
MIN_CELLS = 1 << 22
#: Seconds a warp waits for the stripe above its own before the pass fails (long.cu).
TIMEOUT_S = 10
_STREAMS = 32                    # streams for the concurrent half passes of one MM level
_SMEM_BLOCK = 48 * 1024          # dynamic shared memory per block (no opt-in needed)
_MAX_WARPS_PER_BLOCK = 4         # __launch_bounds__(128)

#: Full alignments (align(..., mode="full") on CUDA) take the staged traceback (``Staged``:
#: special rows in the score pass, then strips between them); False: the previous route
#: (anchored start pass over the whole matrix, then Myers–Miller with GPU half passes).
STAGED = True
#: Query rows between special rows (a multiple of ROWS), and the share of the free device
#: memory they may take (the spacing doubles until they fit).
STAGE_ROWS = 1 << 14
STAGE_MEMORY = 0.6


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
    """Query ``q`` and target ``t`` (uint8 codes) uploaded once; GPU passes over their segments.

    Options (defaults: the module constants): ``min_cells``, Myers–Miller splits of at
    least this many cells run on the GPU (:data:`MIN_CELLS`); ``staged``, full alignments
    by the staged traceback (:data:`STAGED`); ``stage_rows``, query rows between its special
    rows (:data:`STAGE_ROWS`). :meth:`full_alignment` keeps its run as ``last_staged``."""

    def __init__(self, q: np.ndarray, t: np.ndarray, scoring, *, min_cells: int = MIN_CELLS,
                 staged: bool = STAGED, stage_rows: int = STAGE_ROWS):
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
        self.min_cells = int(min_cells)
        self.staged = bool(staged)
        self.stage_rows = int(stage_rows)
        #: rows per lane of every pass (one of LANE_ROWS); None: :meth:`lane_rows` decides
        self.fixed_lane_rows: int | None = None
        per_warp = self._profile_bytes(32)
        if per_warp > _SMEM_BLOCK:
            raise ValueError(f"alphabet of {self.K} symbols: the query profile needs {per_warp} "
                             f"bytes of shared memory per warp (at most {_SMEM_BLOCK})")
        self._capacity: dict[tuple[int, int], int] = {}
        self._sms = int(self.cp.cuda.Device().attributes["MultiProcessorCount"])
        self._failures: list = []    # failure words of the passes not yet checked
        #: seconds a warp waits for the stripe above its own before the pass fails
        self.wait_timeout: float = TIMEOUT_S

    def _check(self) -> None:
        """Raise BackendError if a pass launched since the last check timed out waiting
        (call once its results were waited for)."""
        words, self._failures = self._failures, []
        if words and int(self.cp.concatenate(words).max().get()):
            raise BackendError("long.cu long_pass: a warp waited more than "
                               f"{self.wait_timeout} s for the stripe above its own (the GPU is "
                               "stalled or shared with a kernel that holds it)")

    def _profile_bytes(self, r: int) -> int:
        """Shared memory of one warp's query profile at r rows per lane (long.cu's NV int4
        words per lane and letter)."""
        return self.K * (-(-r * self.width // 16)) * 16 * 32

    def _warps_per_block(self, r: int) -> int:
        return max(1, min(_MAX_WARPS_PER_BLOCK, _SMEM_BLOCK // self._profile_bytes(r)))

    def lane_rows(self, m: int) -> int:
        """Rows per lane for a pass of m query rows: 32 while the pass has at least
        :data:`MANY_STRIPES` stripes per SM (the whole pair), else 16. Measured on an H200
        (.carry/longr.py, affine 5/-3/8/1, E. coli letters): a strip of 16,384 x 43,000 takes
        20.1 / 16.5 / 16.3 / 17.8 ms at R = 32 / 16 / 8 / 4, 8,192 x 16,384 7.9 / 6.6 / 6.7 /
        7.6 ms, 16,384 x 16,384 8.5 / 7.6 / 8.4 / 10.8 ms; the 1 M x 1 M slice 1.41 / 1.07 /
        1.31 s at R = 32 / 16 / 8. Per column a step pays shuffles and a profile load
        whatever R is, so R = 4 gains warps but loses per cell."""
        if self.fixed_lane_rows is not None:
            return self.fixed_lane_rows
        return 32 if -(-m // ROWS) >= MANY_STRIPES * self._sms else 16

    # ------------------------------------------------------------------ kernel
    def _function(self, mode: int, r: int):
        name = f"long_pass<{mode}, {self.width}, {r}>"
        timeout = f"LONG_TIMEOUT_NS={int(self.wait_timeout * 1e9)}ull"
        return get_module(_FILE, (name,), (timeout,)).get_function(name)

    def _resident_warps(self, mode: int, r: int, func) -> int:
        if (mode, r) not in self._capacity:
            per_block = self._warps_per_block(r)
            threads = 32 * per_block
            smem = self._profile_bytes(r) * per_block
            try:
                blocks = int(self.cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                    func.ptr, threads, smem))
            except (AttributeError, TypeError, RuntimeError):  # no occupancy call: assume 160 regs
                blocks = min(65536 // (160 * threads), (227 * 1024) // max(smem, 1), 32)
            self._capacity[mode, r] = max(1, blocks) * per_block * self._sms
        return self._capacity[mode, r]

    def launch(self, qd, td, mode: int, first_open: int | None = None, *, corner: int = 0,
               bus=None, saved=None, save_every: int = 0, lane_rows: int | None = None):
        """Start one pass over device segments qd (rows) x td (columns), both non-empty, on
        the current stream. Returns device arrays (last row: (n, 2) int32 of (H - gap_open,
        F) for columns 1..n; per-stripe (score, row, column): (stripes, 3) int32).

        ``bus`` (optional, (n, 2) int32 on the device, overwritten): row 0 as (H - gap_open,
        F) instead of the mode's own; ``corner``: H(0, 0). ``saved`` with ``save_every``:
        keep the bottom row of every ``save_every``-th stripe (DP rows ``k * save_every *
        ROWS``) in ``saved[k - 1]`` (the staged traceback's special rows; stripes of ROWS
        rows). ``lane_rows``: long.cu's R (default :meth:`lane_rows`)."""
        cp = self.cp
        m, n = int(qd.size), int(td.size)
        go, ge = self.go, self.ge
        fo = go if first_open is None else int(first_open)
        r = 32 if save_every > 0 else self.lane_rows(m) if lane_rows is None else int(lane_rows)
        if r not in LANE_ROWS:
            raise ValueError(f"invalid lane_rows: {r!r}; expected one of {LANE_ROWS}")
        func = self._function(mode, r)
        if bus is None:
            bus = cp.empty((n, 2), dtype=cp.int32)
            if mode in (MODE_LOCAL, MODE_SEMIGLOBAL):
                bus[:, 0] = -go
            else:
                bus[:, 0] = -(go + cp.arange(n, dtype=cp.int32) * ge) - go
            bus[:, 1] = NEG
        stripes = -(-m // (32 * r))
        capacity = self._resident_warps(mode, r, func)
        rounds = -(-stripes // capacity)
        warps = -(-stripes // rounds)
        per_block = self._warps_per_block(r)
        blocks = -(-warps // per_block)
        # per stripe its finished columns, then the failure word (long.cu long_wait)
        progress = cp.zeros(stripes + 1, dtype=cp.int32)
        self._failures.append(progress[stripes:])
        ticket = cp.zeros(1, dtype=cp.int32)
        res = cp.zeros((stripes, 3), dtype=cp.int32)
        smem = self._profile_bytes(r) * per_block
        if saved is None:
            saved, save_every = bus, 0
        func((blocks,), (32 * per_block,),
             (qd, np.int64(m), td, np.int32(n), self.smat, np.int32(self.K), np.int32(go),
              np.int32(ge), np.int32(fo), np.int32(corner), bus, progress, ticket, res,
              np.int32(stripes), saved, np.int32(save_every)),
             shared_mem=smem)
        STATS["launches"] += 1
        STATS["cells"] += m * n
        return bus, res

    def run(self, qd, td, mode: int, first_open: int | None = None):
        """One pass (see :meth:`launch`), waited for; returns host arrays."""
        t0 = time.perf_counter()
        bus, res = self.launch(qd, td, mode, first_open)
        row, best = self.cp.asnumpy(bus), self.cp.asnumpy(res)
        self._check()
        STATS["seconds"] += time.perf_counter() - t0
        return row, best

    # ------------------------------------------------------------------ passes
    def score_end(self, algorithm: int, *, save_every: int = 0) -> tuple[int, int, int]:
        """(score, query end, target end) of the whole pair, as ``pairwise.score_end``.

        ``save_every`` > 0 also keeps the forward rows (H - gap_open, F) at every
        ``save_every * ROWS``-th query row in ``self.saved`` (the staged traceback's stage 1).
        """
        m, n = self.q.size, self.t.size
        if m == 0 or n == 0:
            from ..cpu.pairwise import score_end
            s, i, j = score_end(self.q_host, self.t_host, self.scoring.matrix, self.go, self.ge,
                                algorithm)
            return int(s), int(i), int(j)
        saved = None
        if save_every > 0:
            count = (-(-m // ROWS) - 1) // save_every
            saved = self.saved = self.cp.empty((max(count, 1), n, 2), dtype=self.cp.int32)
            self.saved_rows = count
            self.save_every = save_every
        t0 = time.perf_counter()
        bus, res = self.launch(self.q, self.t, _MODES[algorithm], saved=saved, save_every=save_every)
        row, best = self.cp.asnumpy(bus), self.cp.asnumpy(res)
        self._check()
        STATS["seconds"] += time.perf_counter() - t0
        if algorithm == LOCAL:
            return _best_cell(best)
        last = row[:, 0].astype(np.int64) + self.go
        if algorithm == GLOBAL:
            return int(last[-1]), m, n
        full = np.concatenate(([-(self.go + (m - 1) * self.ge)], last))   # H(m, 0..n)
        j = int(np.argmax(full))
        return int(full[j]), m, j

    def anchored_start(self, qe: int, te: int, target: int, full_query: bool) -> tuple[int, int]:
        """``cpu.traceback.anchored_start`` on the GPU: (query extent, target extent) or
        (-1, -1)."""
        if qe == 0 or te == 0 or target <= 0 and not full_query:
            from ..cpu.traceback import anchored_start as cpu_anchored_start
            di, dj = cpu_anchored_start(self.q_host, qe, self.t_host, te, self.scoring.matrix,
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
        """The two last-row passes of one Myers–Miller split (as ``MyersMiller.solve``).

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
        self._check()
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
        self._check()
        STATS["seconds"] += time.perf_counter() - t0
        return [tuple(rows[4 * k:4 * k + 4]) for k in range(len(nodes))]

    def path(self, qlo: int, qhi: int, tlo: int, thi: int, max_full_cells: int):
        """Optimal global path of q[qlo:qhi] vs t[tlo:thi]: (score, ops), as traceback.global_path.

        Myers–Miller level by level: every split of a level with at least ``min_cells``
        cells has its two half passes launched at once (several streams; the stripes of
        all launches share the GPU), so deep levels keep the GPU busy too. The splits are
        chosen exactly as ``cpu.traceback.MyersMiller.solve`` chooses them (same arrays, same
        argmax), so the path is the CPU's. Subproblems below ``min_cells`` are solved by
        ``cpu.traceback.MyersMiller`` on CPU threads.
        """
        return self.path_items([("node", (qlo, qhi, tlo, thi, False, False))], max_full_cells)

    def path_items(self, items: list, max_full_cells: int):
        """:meth:`path` of a list of ("node", (qlo, qhi, tlo, thi, start_in_gap, end_in_gap))
        and ("ops", array) items in alignment order: every node's optimal path (as
        ``cpu.traceback.MyersMiller.solve``), all nodes of a level at once. Returns (score,
        ops); the score is the first split's (that of the whole when there is one node)."""
        from concurrent.futures import ThreadPoolExecutor

        from ..cpu.traceback import OP_I, MyersMiller

        go, ge = self.go, self.ge
        matrix = self.scoring.matrix

        def big(node):
            a, b = node[1] - node[0], node[3] - node[2]
            return (a >= 2 and b >= 1 and (a + 1) * (b + 1) > max_full_cells
                    and a * b >= self.min_cells)

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
            p = MyersMiller(self.q_host, self.t_host, matrix, go, ge, max_full_cells)
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


    # ------------------------------------------------------------------ staged traceback
    def full_alignment(self, algorithm: int, max_full_cells: int):
        """Score, coordinates and path by the staged traceback (see :class:`Staged`):
        (score, query start, query end, target start, target end, ops)."""
        self.last_staged = Staged(self)
        return self.last_staged.run(algorithm, max_full_cells)

    def forward_pass(self, algorithm: int) -> tuple[int, int, int]:
        """Stage 1: :meth:`score_end` keeping the special rows (every ``stage_rows`` rows,
        doubled until they fit ``STAGE_MEMORY`` of the free device memory)."""
        m, n = self.q.size, self.t.size
        every = max(1, self.stage_rows // ROWS)
        free = int(self.cp.cuda.Device().mem_info[0])
        while (-(-m // ROWS) - 1) // every * n * 8 > STAGE_MEMORY * free:
            every *= 2
        result = self.score_end(algorithm, save_every=every)
        self.special = every * ROWS
        return result

    def special_row(self, r: int, lo: int, hi: int, algorithm: int):
        """Forward H and F (int64) at special row r (0 or a multiple of ``self.special``),
        columns lo..hi."""
        go, ge = self.go, self.ge
        cols = np.arange(lo, hi + 1, dtype=np.int64)
        f = np.full(cols.size, NEG, np.int64)
        if r == 0:
            if algorithm == GLOBAL:
                h = np.where(cols == 0, 0, -(go + (cols - 1) * ge))
            else:
                h = np.zeros(cols.size, np.int64)
            return h, f
        k = r // self.special - 1
        a = max(lo, 1)
        if a <= hi:
            row = self.cp.asnumpy(self.saved[k, a - 1:hi]).astype(np.int64)
            h = np.empty(cols.size, np.int64)
            h[a - lo:] = row[:, 0] + go
            f[a - lo:] = row[:, 1]
        else:
            h = np.empty(cols.size, np.int64)
        if lo == 0:
            h[0] = 0 if algorithm == LOCAL else -(go + (r - 1) * ge)
            f[0] = NEG if algorithm == LOCAL else h[0]
        return h, f

    def first_reaching(self, r: int, cmax: int, threshold: int, slope: int, algorithm: int) -> int | None:
        """Smallest column c <= cmax with forward H(r, c) + slope * c >= threshold, or None."""
        cp = self.cp
        go, ge = self.go, self.ge
        if r == 0:
            h, _ = self.special_row(0, 0, cmax, algorithm)
            hit = np.flatnonzero(h + slope * np.arange(cmax + 1) >= threshold)
            return int(hit[0]) if hit.size else None
        h0 = 0 if algorithm == LOCAL else -(go + (r - 1) * ge)
        if h0 >= threshold:
            return 0
        if cmax == 0:
            return None
        k = r // self.special - 1
        v = self.saved[k, :cmax, 0].astype(cp.int64) + (go + slope) + slope * cp.arange(cmax, dtype=cp.int64)
        ok = (v >= threshold).astype(cp.int8)
        c = int(cp.argmax(ok))
        return c + 1 if int(ok[c]) else None

    def strip(self, q0: int, q1: int, t0: int, t1: int, reverse: bool, mode: int, first_open: int,
              corner: int, row_h: np.ndarray, row_f: np.ndarray):
        """One pass over q[q0:q1] x t[t0:t1] (both reversed when ``reverse``; t1 may pass the
        target's end by one column, that of a wall) from the given row 0 (H, F; int64,
        t1 - t0 entries) and column 0 (``corner``, ``first_open``).
        Returns its last row (H, F as int64) and the best cell (score, row, column)."""
        cp = self.cp
        qd, td = self.q[q0:q1], self.t[t0:t1]
        if t1 > self.t.size:     # the column behind a wall: its letter is never used
            td = cp.concatenate((td, cp.zeros(t1 - self.t.size, cp.uint8)))
        if reverse:
            qd, td = qd[::-1], td[::-1]
        bus = np.empty((t1 - t0, 2), np.int32)
        bus[:, 0] = np.maximum(row_h - self.go, NEG)
        bus[:, 1] = np.maximum(row_f, NEG)
        t_start = time.perf_counter()
        out, res = self.launch(cp.ascontiguousarray(qd), cp.ascontiguousarray(td), mode, first_open,
                               corner=corner, bus=cp.asarray(bus))
        out, res = cp.asnumpy(out).astype(np.int64), cp.asnumpy(res)
        self._check()
        STATS["seconds"] += time.perf_counter() - t_start
        return out[:, 0] + self.go, out[:, 1], _best_cell(res)


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
