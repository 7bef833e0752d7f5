"""The scorers of ``locate``'s pieces (:mod:`warpalign.locate_core`): each gives the best
cell (score, query end, end within the piece) of pieces of the reference. The exact scalar
DP (the reference), the scan kernels of papers 002/004 on a whole record, and the windows
scanned like a database, on the GPU kept resident with ends found lazily (module docstring
of :mod:`warpalign.locate_core`, "Lazy ends")."""

from __future__ import annotations

import numpy as np

from ._backends import TargetSet
from ._backends.cpu.pairwise import LOCAL, score_end
from ._backends.registry import backend_for, call_options, engine_for, lookup
from .scoring import Scoring
from .spans import default_window, query_score_bound, span_from, sub_window, window_bounds

#: Windows are scanned in groups of at most this many residues (bounds the memory).
CHUNK_RESIDUES = 1 << 26


class DpScorer:
    """Best cell of each piece by the exact scalar DP (the reference; CPU)."""

    def __init__(self, q: np.ndarray, scoring: Scoring):
        self.q, self.scoring = q, scoring

    def __call__(self, pieces: list[np.ndarray]) -> np.ndarray:
        s = self.scoring
        out = np.zeros((len(pieces), 3), np.int64)
        for k, t in enumerate(pieces):
            out[k] = score_end(self.q, t, s.matrix, s.gap_open, s.gap_extend, LOCAL)
        return out


class KernelScorer:
    """Best cell of each piece by a kernel of :mod:`warpalign._backends.cpu.scan` or, when
    ``backend`` resolves to "cuda", of :mod:`warpalign._backends.cuda.scan`.

    ``wide_rows`` counts the rows the "scan" kernel ran in 32-bit mode (all pieces)."""

    def __init__(self, method: str, q: np.ndarray, scoring: Scoring, backend: str = "cpu"):
        self.method, self.q, self.scoring = method, q, scoring
        self.wide_rows = 0
        self.backend = backend_for("locate", backend, method)
        self._fn = engine_for("locate", self.backend, method)   # base.ScanKernel

    def __call__(self, pieces: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((len(pieces), 3), np.int64)
        for k, t in enumerate(pieces):
            *cell, wide = self._fn(self.method, self.q, t, self.scoring)
            out[k] = cell
            self.wide_rows += wide
        return out


class WindowScorer:
    """Best cell of each piece by a backend's database scan (``ends=True``).

    On the CUDA backend with a scoring the 16-bit kernel takes, pieces are scored lazily
    (``lazy``): :meth:`windows` runs ``win_s16`` on windows of the resident reference
    (:mod:`warpalign._backends.cuda.windows`) and returns scores with unknown ends (-1),
    except for windows flagged as possibly saturated, which are rescored here by the exact
    32-bit ends path, and (``want_ends``) the windows tied at the best score, whose ends the
    device finds right after the scores; :meth:`ends` gives the end cells of the few other
    pieces ``Search`` asks for (all tied at one score). ``saturated`` counts the rescored
    windows.
    """

    #: :meth:`ends` takes the pieces' (common) score: it bounds the sub-windows' overlap.
    ends_take_score = True

    def __init__(self, engine, q: np.ndarray, scoring: Scoring, want_ends: bool = False,
                 sq: int | None = None, threads: int | None = None):
        self.engine, self.q, self.scoring = engine, q, scoring
        # the CPU backend's threads for this call (the shared backend is never changed)
        self._scan_options = call_options(engine, threads=threads)
        self.want_ends = want_ends
        self.lazy = False
        self.saturated = 0
        self._ref = None
        self._query = None
        self.sq = query_score_bound(q, scoring) if sq is None else int(sq)
        self.span = span_from(self.sq, len(q), scoring, 1)
        # the backend's resident-window kernels (base.WindowKernels), where it has them
        kernels = lookup("locate", engine.name, "windows16") if len(q) else None
        if kernels is not None and kernels.supports(scoring):
            self.lazy = True
            self._gpu = kernels

    def default_window(self, span: int | None, residues: int, packed: bool = False) -> int:
        """The window length for this scorer (:func:`default_window`; on the GPU enough
        windows to fill the device once, ``packed``: in launches of several queries)."""
        if self.lazy:
            return default_window(span, residues,
                                  self._gpu.wanted_windows(len(self.q), packed=packed))
        return default_window(span, residues)

    def __call__(self, pieces: list[np.ndarray]) -> np.ndarray:
        out = np.zeros((len(pieces), 3), np.int64)
        start = 0
        while start < len(pieces):
            stop, size = start, 0
            while stop < len(pieces) and (stop == start or size + len(pieces[stop]) <= CHUNK_RESIDUES):
                size += len(pieces[stop])
                stop += 1
            handle = self.engine.prepare(TargetSet.from_list(pieces[start:stop]))
            batch = self.engine.scan(self.q, handle, self.scoring, algorithm="local", ends=True,
                                     **self._scan_options)
            out[start:stop, 0] = batch.scores
            out[start:stop, 1] = batch.query_ends
            out[start:stop, 2] = batch.target_ends
            start = stop
        return out

    def pack_capacity(self) -> int:
        """Queries like this one a packed launch takes (1: none; lazy scorers only)."""
        return self._gpu.pack_capacity(len(self.q)) if self.lazy else 1

    @staticmethod
    def windows_packed(scorers: list[WindowScorer], records: list[np.ndarray],
                       rows: np.ndarray) -> list[np.ndarray]:
        """:meth:`windows` of each of ``scorers`` (lazy, one scoring, queries of one length
        and score bound, one ``want_ends``) over the same ``rows``, in one packed launch."""
        head = scorers[0]
        gpu, scoring = head._gpu, head.scoring
        ref = head._resident(records)
        starts, lengths = gpu.windows_of(ref, rows)
        pack = gpu.DevicePack([s.q for s in scorers], scoring, sq=head.sq)
        cells, flagged, _ = gpu.window_cells_packed(ref, pack, scoring, starts, lengths,
                                                    best_ends=head.want_ends, timed=False)
        for scorer, c, f in zip(scorers, cells, flagged):
            if len(f):   # possibly saturated in 16 bits: exact 32-bit scores and ends
                scorer.saturated += len(f)
                c[f] = scorer([records[r][lo:hi] for r, lo, hi in rows[f].tolist()])
        return cells

    def windows(self, records: list[np.ndarray], rows: np.ndarray) -> np.ndarray:
        """Cells (score, query end, reference end within the window) of the windows
        ``rows`` = (record, lo, hi); ends are -1 where not computed (lazy scorer)."""
        if not self.lazy:
            return self([records[r][lo:hi] for r, lo, hi in rows.tolist()])
        ref = self._resident(records)
        starts, lengths = self._gpu.windows_of(ref, rows)   # remembered for read-only rows
        cells, flagged, _ = self._gpu.window_cells(ref, self.q, self.scoring, starts, lengths,
                                                   query=self._device_query(),
                                                   best_ends=self.want_ends, timed=False)
        if len(flagged):   # possibly saturated in 16 bits: exact 32-bit scores and ends
            self.saturated += len(flagged)
            cells[flagged] = self([records[r][lo:hi] for r, lo, hi in rows[flagged].tolist()])
        return cells

    def ends(self, records: list[np.ndarray], rows: np.ndarray, score: int | None = None
             ) -> np.ndarray:
        """Exact cells (score, query end, reference end within the window) of ``rows``.

        Lazy scorer: each window is cut again into sub-windows of :func:`sub_window`
        symbols overlapping by s − 1, s = ``span_bound(query, scoring, score)`` (``score``:
        the windows' common best score; the windows argument of the module docstring
        applied inside the window to the alignments scoring that much, so the best cell by
        the tie rule over the sub-windows is the window's), scored with ends by the 16-bit
        kernel in one launch (a long window walked by one group of lanes would take
        milliseconds); a flagged sub-window is rescored by the 32-bit ends path."""
        if not self.lazy:
            return self([records[r][lo:hi] for r, lo, hi in rows.tolist()])
        span = (self.span if score is None
                else span_from(self.sq, len(self.q), self.scoring, score))
        width = sub_window(span)
        parts = [np.zeros((0, 4), np.int64)]
        for k, (r, lo, hi) in enumerate(rows.tolist()):
            bounds = window_bounds(hi - lo, width, span)
            part = np.empty((len(bounds), 4), np.int64)
            part[:, 0], part[:, 1], part[:, 2:] = k, r, bounds + lo
            parts.append(part)
        sub = np.concatenate(parts)
        out = np.zeros((len(rows), 3), np.int64)
        if not len(sub):
            return out
        ref = self._resident(records)
        cells, flagged, _ = self._gpu.window_cells(ref, self.q, self.scoring,
                                                   ref.starts[sub[:, 1]] + sub[:, 2],
                                                   sub[:, 3] - sub[:, 2],
                                                   query=self._device_query(ends=True),
                                                   ends=True, keep_layout=False, timed=False)
        if len(flagged):
            self.saturated += len(flagged)
            cells[flagged] = self([records[r][lo:hi] for _, r, lo, hi in sub[flagged].tolist()])
        hit = cells[:, 0] > 0
        cells[hit, 2] += sub[hit, 2] - rows[sub[hit, 0], 1]   # sub-window -> window ends
        order = np.lexsort((cells[:, 1], cells[:, 2], -cells[:, 0], sub[:, 0]))
        ks = sub[order, 0]
        first = order[np.r_[True, ks[1:] != ks[:-1]]]
        out[sub[first, 0]] = cells[first]
        return out

    @staticmethod
    def ends_batch(jobs: list[tuple]) -> list[np.ndarray]:
        """:meth:`ends` of many searches at once: ``jobs`` (scorer, records, rows, score),
        each scorer's query with its rows. Lazy scorers of queries of one length (at most
        the kernels' ``END_ROWS``) over one set of records go in one launch of the
        device's ``window_ends_many`` (each window cut into sub-windows for the span bound
        at its score, as the best windows' ends are on the device); any other job runs
        its scorer's :meth:`ends`. The cells are exactly those :meth:`ends` gives."""
        out: list[np.ndarray | None] = [None] * len(jobs)
        groups: dict[tuple, list[int]] = {}
        for k, (scorer, records, rows, score) in enumerate(jobs):
            gpu = getattr(scorer, "_gpu", None) if getattr(scorer, "lazy", False) else None
            m = len(scorer.q)
            if (gpu is not None and hasattr(gpu, "window_ends_many")
                    and 1 <= m <= gpu.END_ROWS and scorer.scoring.gap_extend > 0
                    and scorer.sq < 1 << 29):
                groups.setdefault((m, id(scorer.scoring), id(records)), []).append(k)
            else:
                out[k] = scorer.ends(records, rows, score)
        for ks in groups.values():
            head = jobs[ks[0]][0]
            records = jobs[ks[0]][1]
            ref = head._resident(records)
            items, owner = [], []
            for i, k in enumerate(ks):
                scorer, _, rows, score = jobs[k]
                span = span_from(scorer.sq, len(scorer.q), scorer.scoring, score)
                part = np.empty((len(rows), 4), np.int64)
                part[:, 0] = i
                part[:, 1] = ref.starts[rows[:, 0]] + rows[:, 1]
                part[:, 2] = rows[:, 2] - rows[:, 1]
                part[:, 3] = span
                items.append(part)
                owner.append(len(rows))
            cells = head._gpu.window_ends_many(ref, [jobs[k][0].q for k in ks], head.scoring,
                                               np.concatenate(items))
            for k, piece in zip(ks, np.split(cells, np.cumsum(owner)[:-1])):
                out[k] = piece
        return out

    def _device_query(self, ends: bool = False):
        """The query's profile on the device, uploaded once per locate call: one for the
        scores kernel's plan, one for the ends launch (``windows.ENDS_ROWS`` rows per lane)."""
        if self._query is None:
            self._query = {}
        if ends not in self._query:
            rows = self._gpu.ENDS_ROWS if ends else None
            self._query[ends] = self._gpu.DeviceQuery(self.q, self.scoring, rows, sq=self.sq)
        return self._query[ends]

    def _resident(self, records: list[np.ndarray]):
        if self._ref is None or self._ref[0] is not records:   # one upload per locate call
            self._ref = (records, self._gpu.resident(records))
        return self._ref[1]


__all__ = ["CHUNK_RESIDUES", "DpScorer", "KernelScorer", "WindowScorer"]
