"""Backend registry: "auto" | "cpu" | "cuda".

A backend scores one encoded query against a set of encoded targets (the database, or a
chunk of it) and returns one :class:`ScoreBatch`. Everything above it (validation,
top-k, traceback, output) is shared. ``WARPALIGN_BACKEND`` forces a backend for "auto".

Backend protocol (duck-typed)::

    name: str
    def prepare(self, targets: TargetSet) -> object
        # make the targets resident (the CUDA backend uploads once); returns a handle
    def scan(self, query: np.ndarray, handle, scoring: Scoring, *,
             algorithm: str, ends: bool) -> ScoreBatch
        # query: uint8 codes; scores (and ends if asked) of the query against every target,
        # in the order of the TargetSet

Conventions (DESIGN.md): rows are query positions, columns target positions; a gap of
length k costs gap_open + (k-1)*gap_extend; local scores are >= 0; ends are 0-based
exclusive (the 1-based row/column of the best cell); ties go to the smallest target end,
then the smallest query end; local score 0 reports ends (0, 0).
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..errors import BackendUnavailable

BackendName = Literal["auto", "cpu", "cuda"]
BACKENDS = ("auto", "cpu", "cuda")
ALGORITHMS = ("local", "global", "semiglobal")


@dataclass(frozen=True)
class TargetSet:
    """Encoded targets: concatenated uint8 codes and int64 offsets (len n+1)."""

    codes: np.ndarray
    offsets: np.ndarray

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
        offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
        np.cumsum([len(s) for s in seqs], out=offsets[1:])
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


@contextlib.contextmanager
def numba_threads(threads: int):
    """Run Numba's parallel kernels of this thread on at most ``threads`` threads.

    Numba's thread count is per calling thread (``numba.set_num_threads``), so concurrent
    calls with different counts do not disturb one another; the previous count comes back
    on exit. Numba never starts more than ``NUMBA_NUM_THREADS`` (read when it loads).
    """
    import numba
    previous = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(threads), numba.config.NUMBA_NUM_THREADS)))
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


def choose_backend(name: str, probe_cuda: Callable[[], object], job: str = "search") -> str:
    """Resolve "auto" | "cpu" | "cuda" to "cpu" or "cuda" for one job.

    ``probe_cuda()`` raises :class:`BackendUnavailable` (saying why) when the job's CUDA
    kernels cannot run here; its outcome is kept per ``job`` for the life of the process,
    so a failing device or compile is tried once. "auto" takes ``WARPALIGN_BACKEND`` when
    set, else CUDA when the probe passes, else the CPU, with one ``RuntimeWarning`` per job
    giving the reason (none when CuPy is not installed: then there is no GPU to use); an
    explicit "cuda" that cannot run raises.
    """
    check_choice("backend", name, BACKENDS)
    if name == "auto":
        forced = os.environ.get("WARPALIGN_BACKEND")
        if forced:
            name = check_choice("WARPALIGN_BACKEND", forced, BACKENDS[1:])
        else:
            reason = _probe(job, probe_cuda)
            if reason is None:
                return "cuda"
            _warn_once(job, reason)
            return "cpu"
    if name == "cuda":
        reason = _probe(job, probe_cuda)
        if reason is not None:
            raise BackendUnavailable(str(reason)) from reason
    return name


_probes: dict[str, BackendUnavailable | None] = {}
_warned: set[str] = set()
_probe_lock = threading.Lock()


def _probe(job: str, probe_cuda: Callable[[], object]) -> BackendUnavailable | None:
    """None when the job's CUDA kernels run here, else the error saying why (kept)."""
    with _probe_lock:
        if job in _probes:
            return _probes[job]
    try:
        probe_cuda()
        outcome = None
    except BackendUnavailable as exc:
        outcome = exc
    with _probe_lock:
        return _probes.setdefault(job, outcome)


def _warn_once(job: str, reason: BackendUnavailable) -> None:
    if getattr(reason, "no_library", False):
        return        # CuPy not installed: the CPU is the expected backend, nothing to say
    with _probe_lock:
        if job in _warned:
            return
        _warned.add(job)
    import warnings
    warnings.warn(f"warpalign {job}: the GPU cannot run ({reason}); running on the CPU",
                  RuntimeWarning, stacklevel=4)


_cache: dict[str, object] = {}
_cache_lock = threading.Lock()


def get_backend(name="auto"):
    """Return the search backend object for ``name`` ("auto" picks CUDA when a device answers).

    A backend object passes through unchanged, so callers may configure one themselves,
    e.g. ``search(..., backend=CudaBackend(devices=[0, 1]))`` or ``CpuBackend(threads=1)``.
    """
    if not isinstance(name, str) and hasattr(name, "scan") and hasattr(name, "prepare"):
        return name
    return _instance(choose_backend(name, lambda: _instance("cuda")))


def _instance(name: str):
    with _cache_lock:
        if name not in _cache:
            if name == "cpu":
                from .cpu import CpuBackend
                _cache[name] = CpuBackend()
            else:
                from .cuda import CudaBackend  # raises BackendUnavailable with the reason
                _cache[name] = CudaBackend()
        return _cache[name]


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
    take their addresses). Thread-safe; other inputs are computed every time."""

    def __init__(self, size: int):
        self.size = size
        self._items: dict = {}
        self._lock = threading.Lock()

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
        value = compute()
        with self._lock:
            self._items[key] = (list(arrays), value)
            while len(self._items) > self.size:
                self._items.pop(next(iter(self._items)))
        return value

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
