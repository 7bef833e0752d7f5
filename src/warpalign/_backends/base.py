"""What every backend shares: the data it exchanges with the jobs and the interface each
job's engine meets (:mod:`.registry` says which engine runs which job; this module imports
no backend, so ``cpu/`` and ``cuda/`` import it freely).

Data: :class:`TargetSet` (encoded targets) in, :class:`ScoreBatch` (scores, ends) out.
Interfaces (``typing.Protocol``, checked by type checkers, not at run time):
:class:`SearchEngine` (``search``, ``distributed``, ``align``'s score pass, ``locate``'s
windows), :class:`PairKernel`, :class:`EncodeKernel` and :class:`PairsAhead`
(``score_pairs``),
:class:`ScanKernel` and :class:`WindowKernels` (``locate``), :class:`LcsKernels` (``lcs``),
:class:`LongPairKernels` and :class:`TracebackEngine` (``align`` of a long pair on a
device), :class:`ManyTraceback` (``traceback``: the alignments of many reported hits at once).

Conventions (DESIGN.md): rows are query positions, columns target positions; a gap of
length k costs gap_open + (k-1)*gap_extend; local scores are >= 0; ends are 0-based
exclusive (the 1-based row/column of the best cell); ties go to the smallest target end,
then the smallest query end; local score 0 reports ends (0, 0).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np

from ..choices import ALGORITHMS, BACKENDS  # noqa: F401 (the backends import them here)
from ..offsets import running_sums

BackendName = Literal["auto", "cpu", "cuda"]


@dataclass(frozen=True)
class TargetSet:
    """Encoded targets: concatenated uint8 codes and int64 offsets (len n+1).

    ``file``: where ``codes`` also lie on disk, (path, byte offset of ``codes[0]``, the
    file's (st_dev, st_ino)), for a memory-mapped database: a stream of chunks reads them
    with ``pread`` rather than through the mapping, so the pages it reads do not stay
    mapped in this process (while that path is still that file)."""

    codes: np.ndarray
    offsets: np.ndarray
    file: tuple[str, int, tuple[int, int]] | None = field(default=None, compare=False)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def residues(self) -> int:
        return int(self.offsets[-1] - self.offsets[0])

    @classmethod
    def from_list(cls, seqs: list[np.ndarray]) -> TargetSet:
        offsets = running_sums([len(s) for s in seqs])
        codes = np.concatenate(seqs).astype(np.uint8) if seqs else np.zeros(0, np.uint8)
        return cls(codes, offsets)

    def __getitem__(self, i: int) -> np.ndarray:
        return self.codes[self.offsets[i]:self.offsets[i + 1]]

    def chunks(self, max_residues: int):
        """(start, stop) slices holding at most ``max_residues`` residues each: consecutive,
        covering every target once, never splitting one (a longer target is its own chunk)."""
        max_residues = int(max_residues)
        if max_residues < 1:
            raise ValueError(f"invalid max_residues: {max_residues}; expected a positive integer")
        offsets, n, start = self.offsets, len(self), 0
        while start < n:
            limit = int(offsets[start]) + max_residues
            stop = int(np.searchsorted(offsets, limit, side="right")) - 1
            stop = min(max(stop, start + 1), n)
            yield start, stop
            start = stop


@dataclass
class ScoreBatch:
    """Scores of one query against a TargetSet (ends only when asked for)."""

    scores: np.ndarray                    # int32 [n]
    query_ends: np.ndarray | None = None  # int32 [n]
    target_ends: np.ndarray | None = None # int32 [n]
    saturated: int = 0                    # targets rescored wider after a narrow kernel overflowed


@dataclass
class Candidates(ScoreBatch):
    """Scores (and ends) of some targets only: ``ids`` are their TargetSet indices."""

    ids: np.ndarray | None = None

    @classmethod
    def concat(cls, parts: list[Candidates]) -> Candidates:
        def cat(attr):
            vals = [getattr(p, attr) for p in parts]
            return None if vals[0] is None else np.concatenate(vals)
        return cls(cat("scores"), cat("query_ends"), cat("target_ends"),
                   sum(p.saturated for p in parts), cat("ids"))

    def take(self, keep: np.ndarray) -> Candidates:
        """These candidates at the positions ``keep`` (the saturated count unchanged)."""
        def pick(a):
            return None if a is None else a[keep]
        return Candidates(pick(self.scores), pick(self.query_ends), pick(self.target_ends),
                          self.saturated, pick(self.ids))

    def full(self, n: int) -> ScoreBatch:
        """The plain ScoreBatch over all n targets (ids must cover them all)."""
        def put(a):
            if a is None:
                return None
            out = np.zeros(n, dtype=np.int32)
            out[self.ids] = a
            return out
        return ScoreBatch(put(self.scores), put(self.query_ends), put(self.target_ends),
                          self.saturated)


def check_choice(kind: str, value: object, allowed: tuple[str, ...]) -> str:
    """Resolve an option string or raise ValueError naming the allowed values."""
    if value not in allowed:
        raise ValueError(f"invalid {kind}: {value!r}; expected one of {', '.join(map(repr, allowed))}")
    return value  # type: ignore[return-value]


def usable_cores() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def resolve_threads(threads: int | None = None) -> int:
    """The CPU threads a call may use: ``threads`` when given, else ``NUMBA_NUM_THREADS``
    when set in the environment, else :func:`usable_cores`.

    Raises:
        ValueError: ``threads`` (or ``NUMBA_NUM_THREADS``) is not an integer >= 1.
    """
    if threads is None:
        env = os.environ.get("NUMBA_NUM_THREADS", "").strip()
        if not env:
            return usable_cores()
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise ValueError(f"invalid NUMBA_NUM_THREADS: {env!r}; expected an integer >= 1")
        return value
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise ValueError(f"invalid threads: {threads!r}; expected an integer >= 1 or None")
    return int(threads)


#: Numba's threading layer, once a parallel launch has chosen it (:func:`_safe_layer`).
_layer: list[str] = []
#: Held around Numba's parallel code where the layer is not thread-safe (or not yet known).
_parallel = threading.RLock()


def _safe_layer() -> bool:
    """Whether Numba's threading layer takes parallel launches from several threads at
    once: "omp" and "tbb" do; "workqueue" (the layer of a machine without OpenMP or TBB)
    terminates the process. False until a parallel launch has chosen the layer."""
    if not _layer:
        import numba
        try:
            _layer.append(numba.threading_layer())
        except ValueError:               # no parallel launch yet
            return False
    return _layer[0] != "workqueue"


@contextlib.contextmanager
def numba_threads(threads: int):
    """Run Numba's parallel kernels of this thread on at most ``threads`` threads.

    Numba's thread count is per calling thread (``numba.set_num_threads``), so concurrent
    calls with different counts do not disturb one another; the previous count comes back
    on exit. Numba never starts more than ``NUMBA_NUM_THREADS`` (read when it loads). A
    count already in place is left alone: nothing to set or restore (a GPU
    ``score_pairs`` call enters this four times). Every parallel kernel runs inside this:
    where the threading layer is not thread-safe ("workqueue") or not yet known, one
    thread at a time holds it (a reentrant lock), so calls from many threads wait for one
    another instead of terminating the process.
    """
    import numba
    with contextlib.nullcontext() if _safe_layer() else _parallel:
        previous = numba.get_num_threads()
        wanted = max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS))
        if wanted == previous:
            yield
            return
        numba.set_num_threads(wanted)
        try:
            yield
        finally:
            numba.set_num_threads(previous)


def cpu_name() -> str:
    """The CPU's model name as the operating system reports it."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or "cpu"


def readonly_key(arrays: Sequence[np.ndarray]) -> tuple | None:
    """The identity of read-only arrays (address, size, strides), or None when any is not
    a read-only ndarray. Read-only arrays (a Database's memory map, arrays marked
    ``setflags(write=False)``) are taken as immutable, so values derived from them can be
    remembered."""
    if any(not isinstance(a, np.ndarray) or a.flags.writeable for a in arrays):
        return None
    return tuple((a.__array_interface__["data"][0], a.size, a.strides) for a in arrays)


class ReadOnlyMemo:
    """Values derived from read-only arrays (:func:`readonly_key`) plus an ``extra`` key;
    the ``size`` most recently used are kept, each with its arrays (so no other array can
    take their addresses). Thread-safe: a value is computed once however many threads ask
    for it at once (they wait for it); other inputs are computed every time."""

    def __init__(self, size: int):
        self.size = size
        self._items: dict = {}
        self._lock = threading.Lock()
        self._computing = threading.RLock()

    def get(self, arrays: Sequence[np.ndarray], extra, compute: Callable):
        key = readonly_key(arrays)
        if key is None:
            return compute()
        key = (extra, key)
        with self._lock:
            hit = self._items.pop(key, None)
            if hit is not None:
                self._items[key] = hit          # most recently used last
                return hit[1]
        with self._computing:   # one computation at a time: many threads asking compute once
            with self._lock:
                hit = self._items.get(key)
            if hit is not None:
                return hit[1]
            value = compute()
            with self._lock:
                self._items[key] = (list(arrays), value)
                while len(self._items) > self.size:
                    self._items.pop(next(iter(self._items)))
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


# ------------------------------------------------------------------------- interfaces


class SearchEngine(Protocol):
    """A database scan (``search``, ``distributed``, ``align``'s score pass, ``locate``'s
    windows): :class:`~.cpu.CpuBackend`, :class:`~.cpu.ScalarBackend`,
    :class:`~.cuda.search.CudaBackend`, or an object a caller configured and passed as
    ``backend=``."""

    name: str   # "cpu" or "cuda": the registry's backend name of this engine

    def prepare(self, targets: TargetSet) -> Any:
        """Make ``targets`` resident (the CUDA engine uploads once); returns a handle."""

    def scan(self, query: np.ndarray, handle: Any, scoring: Any, *, algorithm: str,
             ends: bool) -> ScoreBatch:
        """Scores (and ends when asked) of ``query`` (uint8 codes) against every target
        of ``handle``, in the TargetSet's order."""

    def search_batches(self, queries: Sequence[np.ndarray], handle: Any, scoring: Any, *,
                       algorithm: str, ends: bool, top_k: int | None,
                       method: str) -> Iterable[ScoreBatch]:
        """One batch per query, in order. A batch with an ``ids`` attribute holds only the
        candidates (every target scoring at least the query's k-th best score), ``ids``
        their TargetSet positions; otherwise every target, as :meth:`scan`.

        An engine on a device may also define ``iter_batches`` (same arguments): these
        batches as they complete, a list per batch of queries, in order; ``search`` then
        runs it on a thread of its own while it assembles the hits of earlier batches."""


class ScanEngine:
    """Base of the CPU search engines, which scan one query at a time on CPU threads (they
    define ``name``, ``prepare`` and ``scan``, whose ``threads`` keyword is this call's CPU
    threads, the shared engine never changing): :meth:`search_batches` is ``scan`` per
    query, lazily, so a progress bar follows the queries."""

    def search_batches(self, queries, handle, scoring, *, algorithm="local", ends=False,
                       top_k=None, method="auto", threads=None):
        return (self.scan(q, handle, scoring, algorithm=algorithm, ends=ends, threads=threads)
                for q in queries)


class PairKernel(Protocol):
    """``score_pairs``'s kernel for one method: every pair (x_i, y_i) scored at once.

    ``xcodes``/``ycodes`` are the concatenated uint8 codes, ``xoff``/``yoff`` the int64
    offsets (pairs + 1). ``largest``: the largest code of both sides when the caller knows
    it (the encode engine reports it), so a kernel that needs it reads no codes for it
    (on a device: no reduction and no sync); None: the kernel finds it if it needs it.
    Returns (scores int32 [pairs], indices of the pairs a narrow kernel saturated (the
    job rescores them exactly), seconds per step)."""

    def __call__(self, xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray,
                 yoff: np.ndarray, scoring: Any, algorithm: str, *,
                 largest: int | None = None) -> tuple[np.ndarray, np.ndarray, dict]: ...


class PairEnds(Protocol):
    """``score_pairs``' end cells (mode full, local): each pair's best local alignment's
    (score, query end, target end) under DESIGN.md's tie rule, as ``cpu.pairwise.score_end``
    gives them, from its exact ``scores`` (0: no end wanted, row (0, 0, 0)); codes and
    offsets as :class:`PairKernel`. Returns the (pairs, 3) int64 array and seconds per
    step; a score that is not its pair's maximum is a ``ValueError``."""

    def __call__(self, xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray,
                 yoff: np.ndarray, scoring: Any, scores: np.ndarray, *,
                 largest: int | None = None) -> tuple[np.ndarray, dict]: ...


class PairScoresEnds(Protocol):
    """``score_pairs(mode="full")`` of every pair, local, in one pass where a backend has
    it: the scores as :class:`PairKernel` gives them and the ends as :class:`PairEnds`.
    Returns (scores int32, indices of the pairs a narrow kernel saturated, (pairs, 3)
    int64 ends: (score, query end, target end) of every other pair of score > 0, else
    (0, 0, 0), saturated pairs included (the job rescores them and takes their ends from
    there), seconds per step); an end cell the pass cannot find for a score of its own
    is a ``ValueError``."""

    def __call__(self, xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray,
                 yoff: np.ndarray, scoring: Any, *,
                 largest: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                      dict]: ...


class PairsAligned(Protocol):
    """``score_pairs(mode="full")`` of every pair, local, chained on a device: the scores
    and end cells as :class:`PairScoresEnds` gives them, and the alignments traced and
    rendered from the ends where they lie (``traceback``: that backend's
    :class:`ManyTraceback`; ``max_full_cells``, ``symbols``: its one-pass bound and the
    printed byte of each code; ``lengths``: each side's one sequence length where the
    caller knows it, else None). Returns :class:`PairScoresEnds`' four values and, fifth,
    what :func:`warpalign.traced.chained_table` makes the table of, or None where the
    batch takes the general route (``align_pairs_table`` from the ends)."""

    def __call__(self, xcodes: np.ndarray, xoff: np.ndarray, ycodes: np.ndarray,
                 yoff: np.ndarray, scoring: Any, traceback: Any, *, max_full_cells: int,
                 symbols: np.ndarray, largest: int | None = None,
                 lengths: tuple = (None, None)) -> tuple: ...


class EncodeKernel(Protocol):
    """Characters to codes on a backend (``score_pairs``'s inputs), several arrays at once
    (a batch's two sides: one device-to-host read for all on "cuda"): each of ``raws`` a
    1-D ``uint8`` array of characters (NumPy; CuPy too for "cuda"), ``table``
    ``uint8[256]`` (255: no code). Returns, per array, (codes on this backend's side:
    NumPy for "cpu", a CuPy array for "cuda"; the index of the first character without a
    code, -1 for none, always -1 without ``check``; with ``counts`` and no bad character,
    int64 [256] occurrences of each code, on the host, else None; the largest code
    written, 0 for none)."""

    def __call__(self, raws: Sequence[Any], table: np.ndarray, check: bool = True,
                 counts: bool = False) -> list[tuple[Any, int, np.ndarray | None, int]]: ...


class PairsAhead(Protocol):
    """``score_pairs``' encode and word-wise scoring of one batch of device inputs in one
    engine call, planned before the encode's flags are read (CUDA, CuPy inputs: one
    device-to-host read in all; issue 22). ``applies(scoring, algorithm)``: whether it
    can score them (a plan that depends on the codes only through "all below 4").
    ``encode_and_score``: ``raws`` the two sides' characters (device arrays), ``table``
    as :class:`EncodeKernel`'s, offsets as :class:`PairKernel`'s; returns (per side
    :class:`EncodeKernel`'s tuple, counts None; (scores, indices of the saturated pairs)
    when every code is below 4, else None: nothing scored, the caller names the bad
    character or scores the codes by the :class:`PairKernel`; seconds per step).
    ``lengths``: each side's one sequence length where the caller knows it (a 2-D array's
    rows; None: read from the offsets)."""

    def applies(self, scoring: Any, algorithm: str) -> bool: ...

    def encode_and_score(self, raws: Sequence[Any], table: np.ndarray, xoff: np.ndarray,
                         yoff: np.ndarray, scoring: Any, algorithm: str = "local", *,
                         check: bool = True, lengths: tuple = (None, None)
                         ) -> tuple[list[tuple], tuple | None, dict]: ...


class ScanKernel(Protocol):
    """``locate``'s row-scan and anti-diagonal methods over one whole record: (score,
    query end, record end, rows run wide) of the best local cell of ``q`` in ``t``, by the
    tie rule."""

    def __call__(self, method: str, q: np.ndarray, t: np.ndarray,
                 scoring: Any) -> tuple[int, int, int, int]: ...


class WindowKernels(Protocol):
    """``locate``'s windows scored on the device (a module: ``cuda/windows.py``): the records
    resident once, windows as (start, length), 16-bit scores with the tied windows' ends."""

    ENDS_ROWS: int

    def supports(self, scoring: Any) -> bool: ...
    def wanted_windows(self, query_length: int, packed: bool = False) -> int:
        """Windows that fill the device once (``packed``: in launches of several queries)."""
    def resident(self, records: list[np.ndarray]) -> Any: ...
    def windows_of(self, ref: Any, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]: ...
    def window_cells(self, ref: Any, q: np.ndarray, scoring: Any, starts: np.ndarray,
                     lengths: np.ndarray, **options: Any
                     ) -> tuple[np.ndarray, np.ndarray, float]: ...
    def DeviceQuery(self, q: np.ndarray, scoring: Any, rows: int | None = None, *,
                    sq: int | None = None) -> Any: ...
    def pack_capacity(self, query_length: int) -> int:
        """How many queries of this length one packed launch scores (1: no packing)."""
    def DevicePack(self, queries: list[np.ndarray], scoring: Any, *, sq: int) -> Any:
        """Several queries of one length and score bound ``sq`` for one launch."""
    def window_cells_packed(self, ref: Any, pack: Any, scoring: Any, starts: np.ndarray,
                            lengths: np.ndarray, **options: Any
                            ) -> tuple[list[np.ndarray], list[np.ndarray], float]:
        """``window_cells`` (scores, ``best_ends``) of each query of ``pack`` over the same
        windows in one launch: (cells per query, flagged per query, seconds), each query's
        exactly as it gets alone."""
    def worker_stream(self) -> Any:
        """A context manager (entered once per read, by one thread) under which that
        thread's launches and copies queue on a stream of its own."""
    END_ROWS: int
    def window_ends_many(self, ref: Any, queries: list[np.ndarray], scoring: Any,
                         items: np.ndarray) -> np.ndarray:
        """Exact end cells of windows of several queries of one length (at most
        ``END_ROWS``) in one launch: ``items`` (query index, start, length, span) ->
        (score, query end, end within the window) each, by the tie rule."""


class LcsKernels(Protocol):
    """``lcs``'s bit-parallel row pass (a module: ``cpu/lcs.py``, ``cuda/lcs.py``): the
    pattern's bit-vector after the whole text, forward or backward, for passes of at least
    ``MIN_CELLS`` cells (smaller ones run on the CPU); and ``Resident(a, b)``, one call's
    strings kept where the passes run, whose ``final_vectors(passes)`` runs a Hirschberg
    level's passes of at least ``BATCH_MIN_CELLS`` cells at once (None: none by default;
    pass rows as in ``lcs_plan``) and ``close()`` frees them."""

    MIN_CELLS: int
    BATCH_MIN_CELLS: int | None
    Resident: Callable[[np.ndarray, np.ndarray], Any]

    def final_vector(self, pattern: np.ndarray, p_lo: int, p_hi: int, text: np.ndarray,
                     t_lo: int, t_hi: int, backward: bool) -> np.ndarray: ...


class TracebackEngine(Protocol):
    """The exact passes of :func:`warpalign.traceback.align_codes` run elsewhere (one long
    pair resident on a device: ``cuda/long.py``'s ``LongPair``), each equal to its CPU
    counterpart in ``cpu/traceback.py``. ``algorithm`` is a ``cpu.pairwise`` code."""

    #: True: :meth:`full_alignment` gives everything (a staged traceback); False: the job
    #: runs :meth:`score_end`, :meth:`anchored_start` and :meth:`path`.
    staged: bool

    def score_end(self, algorithm: int) -> tuple[int, int, int]:
        """(score, query end, target end) of the whole pair, as ``pairwise.score_end``."""

    def anchored_start(self, qe: int, te: int, target: int,
                       full_query: bool) -> tuple[int, int]:
        """(query extent, target extent) back from the end cell, as
        ``cpu.traceback.anchored_start``; (-1, -1) when no alignment ending there scores
        ``target``."""

    def path(self, qlo: int, qhi: int, tlo: int, thi: int,
             max_full_cells: int) -> tuple[int, np.ndarray]:
        """(score, ops) of an optimal global path of q[qlo:qhi] vs t[tlo:thi], as
        ``cpu.traceback.MyersMiller``."""

    def full_alignment(self, algorithm: int, max_full_cells: int
                       ) -> tuple[int, int, int, int, int, np.ndarray]:
        """(score, query start, query end, target start, target end, ops)."""


class ManyTraceback(Protocol):
    """The ``traceback`` job: starts and paths of many independent alignments at once
    (``cpu/traceback.py`` ``CpuTraceback``, ``cuda/traceback.py`` ``GpuTraceback``), each
    answer equal to the CPU kernels' (:func:`warpalign.traceback.align_many` runs them).
    ``threads``: the CPU threads its CPU work may spread over; None is the calling thread
    alone, not the default of :func:`resolve_threads`, which callers resolve themselves
    (an end pass handed None ran 3,750 protein pairs on one of 64 cores: session 29)."""

    name: str

    def ends(self, items: Sequence[tuple], scoring: Any, algorithm: int, *,
             threads: int | None = None) -> np.ndarray:
        """(score, query end, target end) per item ``(q, t)``, as ``cpu.pairwise.score_end``
        (``algorithm``: its code)."""

    def starts(self, items: Sequence[tuple], scoring: Any, full_query: bool, *,
               threads: int | None = None) -> np.ndarray:
        """(di, dj) per item ``(q, qe, t, te, target)``: the reversed extents of the start
        (``cpu.traceback.anchored_start``); negative when no alignment ending at (qe, te)
        scores ``target`` or one beats it."""

    def paths(self, items: Sequence[tuple], scoring: Any, max_full_cells: int, *,
              threads: int | None = None) -> list[tuple[int, np.ndarray]]:
        """(score, ops) per item ``(q, qlo, qhi, t, tlo, thi[, score])``: the optimal global
        path of q[qlo:qhi] vs t[tlo:thi] that ``cpu.traceback.MyersMiller`` gives."""

    def render_flat(self, ops: Any, opoff: np.ndarray, qcodes: Any, qpos: np.ndarray,
                    tcodes: Any, tpos: np.ndarray, scoring: Any, symbols: np.ndarray) -> Any:
        """``render.py``'s ``Rendered`` of paths (host arrays, equal to ``render_paths``'
        answer): path k is ops[opoff[k]:opoff[k+1]] from qcodes[qpos[k]]
        and tcodes[tpos[k]]; ``symbols``: the printed byte of each code (256 entries)."""


class LongPairKernels(Protocol):
    """``align``'s engine for one long pair on a device (a module: ``cuda/long.py``)."""

    def supported(self, m: int, n: int, scoring: Any) -> bool:
        """Whether the kernels compute an m x n pair with ``scoring`` exactly."""

    def LongPair(self, q: np.ndarray, t: np.ndarray, scoring: Any) -> TracebackEngine:
        """The pair resident on the device."""
