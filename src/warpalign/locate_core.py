"""One strand of one query in a long reference: the pieces, their scorers and the
greedy pick of hits (what :func:`warpalign.locate.locate` runs per query and strand).

The reference is one sequence or many records (a multi-record FASTA: a chromosome set,
contigs); a hit names its record and gives coordinates within it. Two exact methods run
today, and every method returns the same hits:

* ``"windows"`` (what ``"auto"`` picks): the records are cut into overlapping windows. The
  overlap is :func:`span_bound` − 1, so no optimal local alignment is cut
  (:mod:`warpalign.spans`). On the CPU they are scored like a database
  (:class:`~warpalign._backends.TargetSet` -> ``backend.prepare`` /
  ``backend.scan(..., ends=True)``); on the GPU by a dedicated
  kernel (:mod:`warpalign._backends.cuda.windows`: the records uploaded once and kept
  resident, a window is a (start, length) pair into them, scores in 16-bit DPX, possibly
  saturated windows rescored exactly in 32 bits) that gives scores only, the end cells
  coming lazily (below). Scorings with scores or penalties above 4000 take the
  database path on the GPU too.
* ``"dp"``: the exact scalar Gotoh DP (:func:`~warpalign._backends.cpu.pairwise.score_end`)
  over each whole record, on the CPU whatever ``backend`` says: the reference method.

Paper 002's row scan (``"scan"``: a row at a time, a localized max-scan for the
horizontal gaps, int16 rows switching to int32 before they could overflow; on the GPU
two int16 columns per 32-bit word in DPX lanes), paper 004's
single-stage scan (``"scan1"``) and its comparison methods (``"antidiagonal"``,
``"blocked"``) run over each whole record, like ``"dp"``: on the CPU as exact Numba
kernels (:mod:`warpalign._backends.cpu.scan`, the specification) and on the GPU as CUDA
kernels (:mod:`warpalign._backends.cuda.scan`) when the backend resolves to "cuda"
(``backend="cuda"``, or ``"auto"`` with a device); both give the same cells.

**The span bound** (:mod:`warpalign.spans`, where it is derived): every optimal local
alignment covers at most :func:`span_bound` reference symbols, so windows overlapping by
the span bound − 1 contain every one of them; with ``Sq ≤ 0`` nothing scores above 0 and
nothing is scanned; with ``gap_extend == 0`` no bound may exist and each record is one
window.

**Exact maximum and tie rule across windows.** A window's DP value at a cell is the best
alignment ending there that starts inside the window, so it never exceeds the whole
record's value. Let (S*, i*, j*) be the record's best cell under DESIGN.md's tie rule
(largest score, then smallest reference end j, then smallest query end i). The window
containing the optimal alignment ending there reports S*, and every cell any window
reports with score S* really has value S* in the record, hence comes at or after (i*, j*)
in tie order. So the minimum of (−score, record, reference end, query end) over all
windows' reports, in record coordinates, is exactly the record's answer: no window can
win a tie that the whole record would break differently. Records come in input order, so
ties across records go to the earlier record.

**Two passes (``top`` = 1, default window).** The overlap only has to hold the
alignments that can be best. The first pass cuts the windows with the smaller overlap
``s₁ − 1``, s₁ = ``span_bound(query, scoring, ⌊FIRST_PASS_SHARE · Sq⌋)`` (316 instead of 507 for
a 256-symbol DNA query under paper 002's scoring), so that they contain every interval
of at most s₁ symbols. Its best window score S₁ is the score of a real alignment, so
S* ≥ S₁, and every alignment scoring at least S₁ spans at most s = span_bound(query,
scoring, S₁) symbols. If s ≤ s₁, the windows contain all of them: the argument above
holds as it stands (every cell of value S* is reported by a window holding its
alignment) and the first pass is the answer. Otherwise an alignment scoring ≥ S₁ that
no window contains crosses a seam: with w the last window starting at or before its
start a, a < lo(w+1) and its end b > hi(w), and b − a ≤ s puts it inside
``[hi(w) − s, lo(w+1) + s)``. Those seam windows (:func:`seam_pieces`) join the pieces, and
the maximum and tie rule over all pieces are exact as before (a seam window is a window
of the record and never overstates it). Several hits (``top`` > 1) use the full overlap.

**Two passes, lazily (both strands).** A first-pass window holds every interval of at
most s₁ symbols, so an alignment that no window holds covers more than s₁ symbols, and
since every alignment scoring X or more covers at most span_bound(query, scoring, X)
(non-increasing in X), it scores below U = the least X with span_bound ≤ s₁
(:func:`unseen_bound`: U − 1; 111 for a 150-symbol DNA query under paper 002's scoring).
So a strand's best is at most max(S₁, U − 1) before its seams are scored
(:meth:`Search.head_bound`). ``locate`` with ``top`` = 1 compares the strands: a strand
whose bound is below another strand's exact best cannot give the hit (not even on a tie),
and its seams are never scored; a read found on one strand thus skips the other strand's
seam windows (``locate._heads``).

**Lazy ends (GPU).** Only windows that report the best score S can hold the minimum
above, and among them only those of the earliest record that reports it. So the GPU path
scores every window without ends, and before each pick computes the end cells of exactly
those windows (``Search._resolve``); their exact scores must equal the 16-bit ones (a
disagreement raises). A window's end cell comes from the same argument one level down,
for the alignments scoring S: each spans at most ``s = span_bound(query, scoring, S)``
reference symbols (the span bound with S in place of 1), so the window is cut into
sub-windows of :func:`~warpalign.spans.sub_window` (s) symbols overlapping by s − 1; every cell of value S
in the window then has value S in a sub-window that holds an alignment ending there,
sub-windows never overstate the window, and the best sub-window cell by the tie rule is
the window's. When ends are wanted (``mode`` "end" or "full", or ``top`` > 1) the device
does this for the windows tied at the best score right after scoring them, with no round
trip to the host (``windows.cu``'s ``win_pick`` cuts the sub-windows, its ``win_ends``
scores them with ends in 32 bits), so the first pick usually needs
nothing more; any other piece the picks reach has its sub-windows scored with ends
(``windows.cu``'s per-step tracking) in one short launch. With ``mode="score"`` the last
hit needs no end at all.

**The alignment (``mode="full"``).** With the end (i*, j*) known,
:func:`~warpalign.traceback.align_from_end` (the reverse pass to the start, then the path;
no second score pass) runs with the query's first i* symbols on the reference segment ``[max(lo, j* − s), j*)``
(lo: where the record, or the part of it still free, begins), where
``s = span_bound(query[:i*], scoring, S*)``: the span bound above with S* in place of 1
and only the i* query symbols an alignment ending in row i* can use (278 instead of 507
for a 256-symbol query scoring 230 under paper 002's scoring). The segment contains every
alignment ending at (i*, j*) that scores S* (each spans ≤ s symbols), never scores above
S*, and any other cell of it with value S* lies in column j* (rows past i* are not in the
problem), so the segment's best cell is (i*, j* − start) and its anchored reverse pass
finds the same start as on the whole record. Checked on every hit: the best alignment
ending at (i*, j* − start) in the segment scores exactly S* (the reverse pass runs over the
whole segment) and the path scores S* and ends there.

**Several hits (``top=N``).** Hit 1 is the best alignment above. Hit k is the best local
alignment (same tie rule) whose reference interval ``[target_start, target_end)`` is
disjoint from those of hits 1…k−1 in the same record: each hit's interval is cut out of
the reference, and alignment continues on the remaining pieces as separate sequences.
Hits score > 0; fewer than N are returned when nothing else does. This is exact and
independent of the method and the window length: windows that do not touch a hit keep
their results (a window inside a free piece is still a window of it), those that do are
clipped to the free pieces and rescored, so each further hit costs a few windows.

"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ._backends import ReadOnlyMemo
from ._backends.registry import engine_for
from .choices import LOCATE_GPU_METHODS
from .locate_scorers import CHUNK_RESIDUES, DpScorer, KernelScorer, WindowScorer
from .results import Alignment
from .scoring import Scoring
from .spans import first_pass_span, query_score_bound, seam_pieces, span_from, window_bounds

#: Methods run by :mod:`warpalign._backends.cpu.scan` on the CPU and by
#: :mod:`warpalign._backends.cuda.scan` on the GPU (issue 6).
GPU_METHODS = LOCATE_GPU_METHODS


def make_search(q: np.ndarray, records: list[np.ndarray], scoring: Scoring, top: int,
                mode: str, method: str, backend: str, window: int | None,
                threads: int | None) -> Search:
    """The :class:`Search` of one strand: the query codes ``q`` as they are aligned, its
    pieces scored (the windows' scores, and on the GPU the tied best windows' ends)."""
    return plan_search(q, records, scoring, top, mode, method, backend, window,
                       threads).search()


@dataclasses.dataclass
class SearchPlan:
    """A :class:`Search` before its first pieces are scored (:func:`plan_search`):
    :meth:`search` scores them (or takes their cells from :func:`score_packed`)."""

    q: np.ndarray
    records: list
    scoring: Scoring
    span: int | None        # the first pieces' overlap bound
    width: int | None
    scorer: Any
    sq: int
    threads: int | None
    two_pass: bool

    @property
    def pieces(self) -> np.ndarray:
        return _pieces(self.records, self.span, self.width)

    def pack_key(self) -> tuple | None:
        """Plans with equal keys score the same windows with queries of one length and
        score bound on the GPU, so one launch can take several of them (None: this plan
        scores alone)."""
        if not getattr(self.scorer, "lazy", False) or len(self.q) == 0:
            return None
        return (len(self.q), self.sq, self.span, self.width, self.scorer.want_ends,
                id(self.records))

    def search(self, cells: np.ndarray | None = None, *, lazy: bool = False) -> Search:
        """The :class:`Search`; ``cells``: its first pieces' cells as the scorer's
        ``windows`` gives them (:func:`score_packed`), else they are scored now. Two
        passes: the seams are closed now, or with ``lazy`` when the search's exact head is
        first asked for (:meth:`Search.head`, "Two passes, lazily" in the module
        docstring)."""
        search = Search(self.q, self.records, self.scoring, self.span, self.width,
                        self.scorer, self.sq, self.threads, cells=cells)
        if self.two_pass:
            search.seams_open = True
            if not lazy:
                search.close_seams()
        return search


def score_packed(plans: list[SearchPlan]) -> list[np.ndarray | None]:
    """The first pieces' cells of ``plans`` (as :meth:`SearchPlan.search` takes them),
    scored several queries per launch where the backend packs queries
    (``WindowKernels.pack_capacity``): plans of one :meth:`~SearchPlan.pack_key` go in
    launches of at most that many queries (a lone plan: None, it scores alone). Each
    query's cells are exactly those it gets alone (``windows.cu``, ``heads``)."""
    out: list[np.ndarray | None] = [None] * len(plans)
    groups: dict[tuple, list[int]] = {}
    for k, plan in enumerate(plans):
        key = plan.pack_key()
        if key is not None:
            groups.setdefault(key, []).append(k)
    for ks in groups.values():
        first = plans[ks[0]]
        room = first.scorer.pack_capacity()
        if room < 2 or len(ks) < 2:
            continue
        launches = -(-len(ks) // room)          # as even as the launches allow
        for part in np.array_split(np.array(ks), launches):
            if len(part) < 2:
                continue
            scorers = [plans[k].scorer for k in part.tolist()]
            cells = WindowScorer.windows_packed(scorers, first.records, first.pieces[:, :3])
            for k, c in zip(part.tolist(), cells):
                out[k] = c
    return out


def plan_search(q: np.ndarray, records: list[np.ndarray], scoring: Scoring, top: int,
                mode: str, method: str, backend: str, window: int | None,
                threads: int | None, *, best_ends: bool = True,
                packed: bool = False) -> SearchPlan:
    """:func:`make_search` up to its first pieces: the query's span bound, windows and
    scorer (nothing is scored yet). ``best_ends=False``: the GPU's scans give scores only,
    even where ends are wanted (the caller finds the ends of the hits' windows itself,
    :meth:`~warpalign.locate_scorers.WindowScorer.ends_batch`). ``packed``: the first
    pieces will be scored several queries per launch (:func:`score_packed`): the default
    windows are as many as such launches fill the device with, so longer (their overlaps
    are a smaller share of the cells)."""
    sq = query_score_bound(q, scoring)   # once per call: every span bound below uses it
    span = span_from(sq, len(q), scoring, 1)
    first = None   # the first pass's overlap bound (two passes), else None
    if method in ("auto", "windows"):
        residues = sum(len(r) for r in records)
        engine = engine_for("locate", backend, "windows")
        # ends wanted: the best windows' ends come with their scores (no second launch)
        scorer = WindowScorer(engine, q, scoring,
                               want_ends=best_ends and (mode != "score" or top > 1), sq=sq,
                               threads=threads)
        if window is None:
            first = first_pass_span(q, scoring, top, sq=sq)
            width = scorer.default_window(span if first is None else first, residues,
                                          packed=packed)
        else:
            width = int(window)
        if span is not None and span > width and first is None:
            raise ValueError(f"window ({width}) is shorter than the span bound of this query "
                             f"and scoring ({span}); use window >= {span}")
    elif method in GPU_METHODS:
        width = None
        scorer = KernelScorer(method, q, scoring, backend)
    else:
        width = None
        scorer = DpScorer(q, scoring)
    return SearchPlan(q, records, scoring, span if first is None else first, width, scorer,
                      sq, threads, first is not None)


def unseen_bound(sq: int, m: int, scoring: Scoring, span: int) -> int:
    """The best score of an alignment that no window of a pass with overlap bound ``span``
    contains (a query of ``m`` symbols with ``Sq = sq``): such an alignment covers more
    than ``span`` reference symbols, and every alignment scoring X or more covers at most
    ``span_from(X)``, non-increasing in X; so it scores below the least X with
    ``span_from(X) <= span``. 0 when every alignment fits (nothing is unseen)."""
    lo, hi = 1, max(int(sq), 0) + 1      # span_from(sq + 1) is 0: the least X lies in [1, hi]
    while lo < hi:
        mid = (lo + hi) // 2
        width = span_from(sq, m, scoring, mid)
        if width is not None and width <= span:
            hi = mid
        else:
            lo = mid + 1
    return lo - 1


# ----------------------------------------------------------------------------- search


#: Piece tables of read-only records (the GPU path's resident ones), by (records, span,
#: width), with the records kept alive: a reference queried many times is cut once.
_PIECES = ReadOnlyMemo(8)


def _pieces(records: list[np.ndarray], span: int | None, width: int | None) -> np.ndarray:
    """The first pieces of a search (int64 [k, 5], read-only: record, lo, hi, seg_lo,
    seg_hi): the windows of every record, each in the segment of its whole record ("dp": one
    piece per record). Remembered for read-only records, as :func:`_max_code`."""
    def build():
        parts = [np.zeros((0, 5), np.int64)]
        if span != 0:  # span 0: nothing can score above 0
            for r, rec in enumerate(records):
                n = len(rec)
                # "dp": one piece per record (a window as long as the record)
                bounds = window_bounds(n, width or max(n, 1), span)
                part = np.empty((len(bounds), 5), np.int64)
                part[:, 0], part[:, 1:3], part[:, 3], part[:, 4] = r, bounds, 0, n
                parts.append(part)
        p = np.concatenate(parts)
        p.setflags(write=False)
        return p

    return _PIECES.get(records, (span, width), build)


@dataclasses.dataclass
class Hit:
    """One hit of a :class:`Search` as the scan found it: record, score, end cell (record
    coordinates) and the free segment of the record it lies in; ``alignment`` once traced."""

    r: int
    score: int
    qe: int
    te: int
    seg_lo: int
    seg_hi: int
    alignment: Alignment | None = None

    def result(self, mode: str) -> Alignment:
        """What ``mode`` reports of this hit (mode "full": its traced alignment)."""
        if mode == "full":
            if self.alignment is None:
                raise ValueError("this hit has not been traced yet")
            return self.alignment
        if mode == "end":
            return Alignment(score=self.score, query_end=self.qe, target_end=self.te)
        return Alignment(score=self.score)


def inconsistent(hit: Hit, lo: int, why: Any) -> RuntimeError:
    """The error of a traceback that disagrees with the scan: a bug, never a result."""
    return RuntimeError(f"internal inconsistency in locate: the scan gave score {hit.score} "
                        f"ending at ({hit.qe}, {hit.te}); the traceback of [{lo}, {hit.te}) "
                        f"disagrees: {why}")


class Search:
    """Pieces of the free reference, their best cells, and the greedy pick of hits.

    A piece is a window (or a whole record, for "dp") clipped to one free segment of a
    record; ``seg`` is that segment. Arrays: rec, lo, hi, seg_lo, seg_hi and the piece's
    best cell (score, query end, reference end in record coordinates).
    """

    def __init__(self, q, records, scoring, span, width, scorer, sq=None, threads=None,
                 cells=None):
        self.q, self.records, self.scoring = q, records, scoring
        self.threads = threads
        self.span, self.width, self.scorer = span, width, scorer
        self.sq = query_score_bound(q, scoring) if sq is None else int(sq)
        self.p = _pieces(records, span, width)
        self.seams_open = False    # two passes, seams not closed yet (SearchPlan.search)
        self._unscored = None      # pieces a cut left unscored (cut(score=False))
        if cells is None:
            self.best = self._score(self.p)
        else:   # scored already (score_packed), window ends as the scorer gives them
            if len(cells) != len(self.p):
                raise ValueError(f"{len(cells)} cells for {len(self.p)} pieces")
            self.best = self._record_ends(np.array(cells, np.int64), self.p)

    def close_seams(self) -> None:
        """After a first pass whose windows overlap by ``self.span`` − 1 only (two passes,
        module docstring): nothing more when every alignment scoring at least the best
        window's score S1 spans at most ``self.span`` symbols (then the windows hold them
        all); else the seams between windows, cut for the span bound at S1, become pieces
        too (each alignment the windows miss lies inside one)."""
        self.seams_open = False
        s1 = int(self.best[:, 0].max()) if len(self.best) else 0
        need = span_from(self.sq, len(self.q), self.scoring, max(s1, 1))
        if need is None or need <= self.span:
            return
        seams = seam_pieces(self.p, [len(r) for r in self.records], need)
        self.p = np.concatenate([self.p, seams])
        self.best = np.concatenate([self.best, self._score(seams)])

    def _score(self, p: np.ndarray) -> np.ndarray:
        """Best cells of pieces ``p``, ends in record coordinates; a lazy scorer leaves
        the ends at -1 (unknown) until :meth:`_resolve` asks for them."""
        if len(p) == 0:
            return np.zeros((0, 3), np.int64)
        windows = getattr(self.scorer, "windows", None)
        if windows is not None:
            cells = windows(self.records, p[:, :3])
        else:
            cells = self.scorer([self.records[r][lo:hi] for r, lo, hi in p[:, :3].tolist()])
        return self._record_ends(cells, p)

    @staticmethod
    def _record_ends(cells: np.ndarray, p: np.ndarray) -> np.ndarray:
        """Window ends -> record coordinates, in place (unknown ends, -1, stay)."""
        np.add(cells[:, 2], p[:, 1], out=cells[:, 2], where=cells[:, 2] >= 0)
        return cells

    def _resolve(self, tied: np.ndarray) -> None:
        """Ends of every piece that can be the next hit: the pieces of the earliest record
        among ``tied``, those with the best score (module docstring, "Lazy ends")."""
        wanted = self._ends_wanted(tied)
        if wanted is None:
            return
        need, rows, score = wanted
        if getattr(self.scorer, "ends_take_score", False):
            cells = self.scorer.ends(self.records, rows, score)
        else:
            cells = self.scorer.ends(self.records, rows)
        self.put_ends(need, cells)

    def ends_wanted(self) -> tuple[np.ndarray, np.ndarray, int] | None:
        """What the next :meth:`pop` with ends would ask its scorer for: (pieces, their rows
        (record, lo, hi), their common best score), or None (nothing to find). Open seams
        are closed first. A caller may find these ends itself (for many searches at once)
        and hand them to :meth:`put_ends`."""
        tied = self._tied_best()
        return None if tied is None else self._ends_wanted(tied)

    def _tied_best(self) -> np.ndarray | None:
        """The pieces at the best score (None: no piece is left), open seams closed and
        pieces a cut left unscored scored first."""
        if self.seams_open:
            self.close_seams()
        self._score_unscored()
        if not len(self.p):
            return None
        b = self.best
        return np.flatnonzero(b[:, 0] == b[:, 0].max())

    def _ends_wanted(self, tied: np.ndarray):
        b = self.best
        score = int(b[tied[0], 0])
        if score <= 0:
            return None
        rec = self.p[tied, 0]
        need = tied[(rec == rec.min()) & (b[tied, 2] < 0)]
        if len(need) == 0:
            return None
        return need, self.p[need, :3].copy(), score

    def put_ends(self, need: np.ndarray, cells: np.ndarray) -> None:
        """The exact cells (score, query end, end within the window) of the pieces
        ``need`` (:meth:`ends_wanted`); their scores must be the scan's."""
        b = self.best
        cells = np.array(cells, np.int64)
        if not np.array_equal(cells[:, 0], b[need, 0]):
            bad = int(need[np.flatnonzero(cells[:, 0] != b[need, 0])[0]])
            raise RuntimeError(  # two exact engines disagree: a bug, never a result
                f"internal inconsistency in locate: window {self.p[bad, :3].tolist()} scored "
                f"{int(b[bad, 0])} first and {int(cells[need == bad][0, 0])} when its end "
                "was computed")
        cells[:, 2] += self.p[need, 1]
        self.best[need] = cells

    def head(self) -> int:
        """The score of the next hit (the best piece's), 0 when nothing is left; open
        seams are closed first."""
        if self.seams_open:
            self.close_seams()
        return self.piece_best()

    def piece_best(self) -> int:
        """The best piece's score as scored so far: with seams open, at most :meth:`head`."""
        self._score_unscored()
        return int(self.best[:, 0].max()) if len(self.p) else 0

    def head_bound(self) -> int:
        """At least :meth:`head`, without closing open seams: the first pass's best, or
        the best score an alignment outside every first-pass window can have (module
        docstring, "Two passes, lazily"), whichever is larger."""
        if not self.seams_open:
            return self.piece_best()
        return max(self.piece_best(), unseen_bound(self.sq, len(self.q), self.scoring,
                                                    self.span))

    def pop(self, ends: bool = True) -> Hit | None:
        """The next hit by the tie rule (None when nothing scores above 0). ``ends=False``:
        only its score is wanted (no end cells are computed; the piece is any of the best)."""
        cand = self._tied_best()   # the tie rule among the best
        if cand is None:
            return None
        b = self.best
        if ends:
            self._resolve(cand)
        k = int(cand[np.lexsort((b[cand, 1], b[cand, 2], self.p[cand, 0]))[0]])
        score, qe, te = (int(v) for v in b[k])
        if score <= 0:
            return None
        r, _, _, seg_lo, seg_hi = (int(v) for v in self.p[k])
        return Hit(r, score, qe, te, seg_lo, seg_hi)

    def run(self, top: int, mode: str) -> list[tuple[int, Alignment]]:
        """The ``top`` hits of this strand as (record, alignment), best first."""
        hits = []
        while len(hits) < top:
            more = len(hits) + 1 < top
            hit = self.pop(ends=mode != "score" or more)  # the last hit of "score": no ends
            if hit is None:
                break
            if mode == "full":
                hit.alignment = self.align(hit)
            hits.append((hit.r, hit.result(mode)))
            if more:   # the last hit leaves nothing to rescore
                self.cut(hit)
        return hits

    def segment(self, hit: Hit) -> int:
        """Where the reference segment of ``hit``'s alignment begins: the alignment ending at
        (qe, te) is traced with the query's first qe symbols on [lo, te), lo = te - span
        (span = :func:`span_bound` of those symbols at the hit's score) within its free
        segment. The segment contains every alignment ending there with that score (module
        docstring, "The alignment")."""
        sq = self.sq if hit.qe == len(self.q) else query_score_bound(self.q[:hit.qe],
                                                                     self.scoring)
        span = span_from(sq, hit.qe, self.scoring, hit.score)
        return hit.seg_lo if span is None else max(hit.seg_lo, hit.te - span)

    def align(self, hit: Hit) -> Alignment:
        """The alignment of ``hit`` in record coordinates, traced on its segment
        (:meth:`segment`).

        The score and end cell come from the exact scan; the segment's score pass is not
        run again (:func:`~warpalign.traceback.align_from_end`). Checked instead: the
        best alignment ending at (qe, te) inside the segment scores exactly ``score`` (the
        whole reverse pass) and the path scores it and ends there; a disagreement is a bug
        and raises, never a hit. That (qe, te) is the tie rule's end among equal cells is
        the scan's word."""
        from .traceback import TracebackError, align_from_end
        lo = self.segment(hit)
        try:
            aln = align_from_end(self.q[:hit.qe], self.records[hit.r][lo:hit.te], self.scoring,
                                 hit.score, hit.qe, hit.te - lo, "local", check_end=True,
                                 threads=self.threads)
        except TracebackError as exc:
            raise inconsistent(hit, lo, exc) from None
        return dataclasses.replace(aln, target_start=aln.target_start + lo,
                                   target_end=aln.target_end + lo)

    def job(self, hit: Hit) -> tuple[tuple, int]:
        """``hit`` as a job of :func:`~warpalign.traceback.align_many` ``(query, target,
        score, query end, target end)`` on its segment, and where the segment begins in the
        record: the batch gives :meth:`align`'s alignment (shifted by it)."""
        lo = self.segment(hit)
        return (self.q[:hit.qe], self.records[hit.r][lo:hit.te], hit.score, hit.qe,
                hit.te - lo), lo

    def start(self, hit: Hit) -> int:
        """Where ``hit``'s alignment begins in the reference: its alignment's start when it
        was traced, else the reverse pass alone from its end (the start :meth:`align` would
        find; the path is not built)."""
        if hit.alignment is not None:
            return hit.alignment.target_start
        from ._backends.cpu.traceback import anchored_start
        lo = self.segment(hit)
        s = self.scoring
        di, dj = anchored_start(self.q[:hit.qe], hit.qe, self.records[hit.r][lo:hit.te],
                                hit.te - lo, s.matrix, s.gap_open, s.gap_extend, hit.score,
                                False, True)
        if di < 0:
            raise inconsistent(hit, lo, "the reverse pass does not end at that score")
        return hit.te - int(dj)

    def cut(self, hit: Hit, *, score: bool = True) -> None:
        """Remove ``hit``'s reference interval from the free reference (its record's
        pieces that touch it are clipped and rescored): the next :meth:`pop` gives the
        best alignment disjoint from it. ``score=False``: the clipped pieces are left
        unscored (:meth:`unscored`) for the caller to score with other searches' at once
        (:meth:`put_unscored`); the next :meth:`head` or :meth:`pop` scores any left."""
        self._cut(hit.r, hit.seg_lo, hit.seg_hi, self.start(hit), hit.te, score)

    def unscored(self) -> np.ndarray | None:
        """The rows (record, lo, hi) of the pieces a cut left unscored, or None."""
        return None if self._unscored is None else self.p[self._unscored, :3].copy()

    def put_unscored(self, cells: np.ndarray) -> None:
        """The exact cells (score, query end, end within the piece) of :meth:`unscored`'s
        pieces, in its order."""
        at = self._unscored
        self._unscored = None
        self.best[at] = self._record_ends(np.array(cells, np.int64), self.p[at])

    def _score_unscored(self) -> None:
        if self._unscored is not None:
            at = self._unscored
            self._unscored = None
            self.best[at] = self._score(self.p[at])

    def _cut(self, r: int, seg_lo: int, seg_hi: int, ts: int, te: int,
             score: bool = True) -> None:
        """Remove [ts, te) of record r from the free reference; rescore clipped pieces.

        The segment's pieces left of the cut end their segment at ts, those right of it
        start theirs at te, the few that overlap it are replaced by their clipped parts
        (appended). Columns by ``np.where`` and the kept rows by slices around the
        overlapping ones: the boolean row selection and masked writes of a table of ~4,000
        pieces took ~0.35 ms a cut (SAM's next score cuts every read's hit, session 41)."""
        self._score_unscored()
        p, best = self.p, self.best          # self.p may be a shared read-only table
        same = (p[:, 0] == r) & (p[:, 3] == seg_lo)
        left = same & (p[:, 2] <= ts)
        right = same & (p[:, 1] >= te)
        hit = np.flatnonzero(same & ~left & ~right)
        q = p.copy()
        q[:, 3] = np.where(right, te, p[:, 3])
        q[:, 4] = np.where(left, ts, p[:, 4])
        new = []
        for _, lo, hi, _, _ in q[hit].tolist():
            if lo < ts:
                new.append((r, lo, ts, seg_lo, ts))
            if hi > te:
                new.append((r, te, hi, te, seg_hi))
        fresh = np.array(new, np.int64).reshape(-1, 5)
        edges = [-1, *hit.tolist(), len(p)]   # the rows kept: between the overlapping ones
        spans = [(a + 1, b) for a, b in zip(edges, edges[1:]) if b > a + 1]
        self.p = np.concatenate([q[a:b] for a, b in spans] + [fresh])
        kept = [best[a:b] for a, b in spans]
        if score or not len(fresh):
            self.best = np.concatenate(kept + [self._score(fresh)])
            return
        self.best = np.concatenate(kept + [np.zeros((len(fresh), 3), np.int64)])
        self._unscored = np.arange(len(self.p) - len(fresh), len(self.p))


__all__ = ["CHUNK_RESIDUES", "GPU_METHODS", "Hit", "Search", "SearchPlan", "make_search",
           "plan_search", "score_packed", "unseen_bound"]
