"""The registry: which engine runs which job, on which backend, by which method.

Every job resolves its engine here and nowhere else::

    backend_for(job, backend, method)  -> "cpu" | "cuda"    ("auto" resolved, see below)
    engine_for(job, backend, method)   -> the engine of the row (job, that backend, method)
    has_engine(job, backend, method)   -> whether the table has that row
    lookup(job, backend, method)       -> that row's engine, or None without the row
    call_options(engine, threads=n)    -> the per-call options that engine takes
    warm_up(job, backend, method)      -> a thread doing engine_for's CUDA probe and load ahead

These are the methods of :data:`REGISTRY`, the process's :class:`Registry`; tests build
one of their own (other rows, other probes) instead of patching this module, or swap one
row's engine for a ``with`` block (:meth:`Registry.using`).

**The table.** :data:`TABLE` maps (job, backend, method) to an engine, named as
``"module:attribute"`` under ``warpalign._backends``: ``"module:Class()"`` is one instance
shared by the whole process (``CudaBackend`` keeps its compiled kernels and uploads once,
for every job whose row names it), ``"module:function"`` a function, ``"module"`` the module
itself. Modules are imported on first use, so nothing here imports CuPy. Each job's engine
meets the interface declared in :mod:`.base`:

=============  ==========================================  ==================================
job            methods (backends)                          engine interface (``base.py``)
=============  ==========================================  ==================================
search         auto (cpu, cuda), warp (cuda)               :class:`~.base.SearchEngine`
distributed    auto (cpu, cuda), warp (cuda)               :class:`~.base.SearchEngine`
align          auto (cpu, cuda): the score pass            :class:`~.base.SearchEngine`
align          long (cuda): a long pair's every pass       :class:`~.base.LongPairKernels`,
                                                           whose ``LongPair`` is a
                                                           :class:`~.base.TracebackEngine`
pairs          wordwise, bitsliced (cpu, cuda)             :class:`~.base.PairKernel`
pair_ends      wordwise (cuda): local end cells of pairs   :class:`~.base.PairEnds`
               of known scores (``score_pairs``, mode full)
pairs_full     wordwise (cuda): scores and local end cells :class:`~.base.PairScoresEnds`
               in one pass (``score_pairs``, mode full,
               no threshold)
pairs_aligned  wordwise (cuda): ``pairs_full`` and the     :class:`~.base.PairsAligned`
               alignments chained on the device
encode         auto (cpu, cuda): characters to codes by    :class:`~.base.EncodeKernel`
               the alphabet's table (``score_pairs``)
pairs_ahead    wordwise (cuda): encode and score a batch   :class:`~.base.PairsAhead`
               of CuPy inputs, one read (``score_pairs``)
locate         windows (cpu, cuda)                         :class:`~.base.SearchEngine`
locate         windows16 (cuda): the windows kept resident :class:`~.base.WindowKernels`
locate         scan, scan1, antidiagonal, blocked          :class:`~.base.ScanKernel`
               (cpu, cuda)
lcs            auto (cpu, cuda)                            :class:`~.base.LcsKernels`
traceback      auto (cpu, cuda): the alignments of many    :class:`~.base.ManyTraceback`
               hits (search, pairs, locate in mode full)
=============  ==========================================  ==================================

The jobs validate ``method`` against their own option lists (``METHODS``) and pick among
the rows for "auto" (``pairs``: the fastest measured row that can score the input;
``locate``: "windows"); ``locate``'s ``"dp"`` is the scalar CPU reference whatever the
backend, so it has no row. Callers may pass a configured :class:`~.base.SearchEngine`
object as ``backend`` (``search(..., backend=CudaBackend(devices=[0, 1]))``): it is used
as it is, for the jobs whose engine is a search engine.

**Adding a kernel variant.** Write its engine in the job's backend module with the job's
interface (e.g. a function ``score_pairs_v2`` in ``cpu/wordwise.py``, as
:class:`~.base.PairKernel`) and add one row here (``Row("pairs", "cpu", "v2",
"cpu.wordwise:score_pairs_v2")``); name the method in the job's ``METHODS`` when users may
pick it (``pairs``' ``AUTO_TABLE`` when "auto" should weigh it).

**Choosing the backend** (``backend_for``): ``"cpu"`` is always there. ``"auto"`` is
``WARPALIGN_BACKEND`` when set ("cpu" or "cuda"), else "cuda" when CuPy imports and a
device answers (:func:`probe`: once per process and backend, its failure kept) and the
job's CUDA engine loads (imported, built: for search NVRTC answers, kernels compile on
first use; once per row, the failure kept), else "cpu" with one ``RuntimeWarning`` per failure and process giving the reason
(none when CuPy is not installed: then there is no GPU to speak of). An explicit "cuda"
that cannot run raises :class:`~warpalign.errors.BackendUnavailable` with the kept reason.
All caches here are guarded by locks; an engine is built once even when many threads ask
for it at once (the others wait for it).
"""

from __future__ import annotations

import contextlib
import contextvars
import importlib
import os
import sys
import threading
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import BackendUnavailable
from .base import BACKENDS, ScanEngine, check_choice


@dataclass(frozen=True)
class Row:
    """One engine: ``engine`` ("module:attribute" under ``warpalign._backends``; see the
    module docstring) runs ``job`` on ``backend`` by ``method``."""

    job: str
    backend: str
    method: str
    engine: str


TABLE: tuple[Row, ...] = (
    Row("search",      "cpu",  "auto",         "cpu:CpuBackend()"),
    Row("search",      "cuda", "auto",         "cuda.search:CudaBackend()"),
    Row("search",      "cuda", "warp",         "cuda.search:CudaBackend()"),
    Row("distributed", "cpu",  "auto",         "cpu:CpuBackend()"),
    Row("distributed", "cuda", "auto",         "cuda.search:CudaBackend()"),
    Row("distributed", "cuda", "warp",         "cuda.search:CudaBackend()"),
    Row("align",       "cpu",  "auto",         "cpu:ScalarBackend()"),
    Row("align",       "cuda", "auto",         "cuda.search:CudaBackend()"),
    Row("align",       "cuda", "long",         "cuda.long"),
    Row("encode",      "cpu",  "auto",         "cpu.encode:encode_sides"),
    Row("encode",      "cuda", "auto",         "cuda.encode:encode_sides"),
    Row("pairs",       "cpu",  "wordwise",     "cpu.wordwise:score_pairs"),
    Row("pairs",       "cpu",  "bitsliced",    "cpu.bitsliced:score_pairs"),
    Row("pairs",       "cuda", "wordwise",     "cuda.pairs:score_wordwise"),
    Row("pairs",       "cuda", "bitsliced",    "cuda.bitsliced:score_bitsliced"),
    Row("pair_ends",   "cuda", "wordwise",     "cuda.pair_ends:ends_wordwise"),
    Row("pairs_full",  "cuda", "wordwise",     "cuda.pair_ends:score_ends_wordwise"),
    Row("pairs_aligned", "cuda", "wordwise",   "cuda.pairs_full:score_align_wordwise"),
    Row("pairs_ahead", "cuda", "wordwise",     "cuda.pairs_ahead"),
    Row("locate",      "cpu",  "windows",      "cpu:CpuBackend()"),
    Row("locate",      "cuda", "windows",      "cuda.search:CudaBackend()"),
    Row("locate",      "cuda", "windows16",    "cuda.windows"),
    Row("locate",      "cpu",  "scan",         "cpu.scan:score_end_method"),
    Row("locate",      "cpu",  "scan1",        "cpu.scan:score_end_method"),
    Row("locate",      "cpu",  "antidiagonal", "cpu.scan:score_end_method"),
    Row("locate",      "cpu",  "blocked",      "cpu.scan:score_end_method"),
    Row("locate",      "cuda", "scan",         "cuda.scan:score_end_method_gpu"),
    Row("locate",      "cuda", "scan1",        "cuda.scan:score_end_method_gpu"),
    Row("locate",      "cuda", "antidiagonal", "cuda.scan:score_end_method_gpu"),
    Row("locate",      "cuda", "blocked",      "cuda.scan:score_end_method_gpu"),
    Row("lcs",         "cpu",  "auto",         "cpu.lcs"),
    Row("lcs",         "cuda", "auto",         "cuda.lcs"),
    Row("traceback",   "cpu",  "auto",         "cpu.traceback:CpuTraceback()"),
    Row("traceback",   "cuda", "auto",         "cuda.traceback:GpuTraceback()"),
)

_NAMES = {"cpu": "CPU", "cuda": "CUDA"}
#: What cannot run, in the error of an explicit backend="cuda" (the probe is per backend).
_LABELS = {"search": "the CUDA search kernels", "distributed": "the CUDA search kernels",
           "align": "the CUDA alignment kernels", "pairs": "the CUDA pair kernels",
           "pair_ends": "the CUDA pair kernels", "pairs_full": "the CUDA pair kernels",
           "pairs_aligned": "the CUDA pair kernels",
           "locate": "the CUDA locate kernels",
           "lcs": "the CUDA LCS backend", "traceback": "the CUDA traceback kernels",
           "encode": "the CUDA encoding", "pairs_ahead": "the CUDA pair kernels"}
#: The jobs whose engine is a SearchEngine: a configured engine object may stand for it.
_SEARCH_JOBS = ("search", "distributed", "align", "locate")
_SEARCH_MEMBERS = ("name", "prepare", "scan", "search_batches")


@dataclass
class _Slot:
    lock: threading.Lock = field(default_factory=threading.Lock)
    done: bool = False
    value: Any = None
    error: BackendUnavailable | None = None


class _Outcomes:
    """Outcomes computed once per key: a value, or the BackendUnavailable saying why there
    is none (kept). Thread-safe: a key is computed once; threads asking meanwhile wait."""

    def __init__(self):
        self._lock = threading.Lock()
        self._slots: dict[Any, _Slot] = {}

    def get(self, key, compute: Callable[[], Any]) -> tuple[Any, BackendUnavailable | None]:
        with self._lock:
            slot = self._slots.setdefault(key, _Slot())
        if not slot.done:
            with slot.lock:
                if not slot.done:
                    try:
                        slot.value = compute()
                    except BackendUnavailable as exc:
                        slot.error = exc
                    slot.done = True
        return slot.value, slot.error


class _DriverInit(threading.Thread):
    """The CUDA driver's initialization and device 0's primary context (what the CUDA
    runtime's first call on device 0 makes), through the driver library on a thread of
    its own, so that they run beside CuPy's import (ctypes calls release the GIL): one
    after the other they took 0.44-0.56 s, side by side 0.29-0.37 s (fresh processes,
    one H200 host, session 24). The context is the runtime's own (the primary one): the
    runtime finds it made. Any failure leaves everything to the runtime, which reports
    it. On the way it reads what :func:`device_facts` gives (known, or not, once
    ``facts_known`` is set). :meth:`release` drops this thread's hold on the context once
    the runtime holds it."""

    def __init__(self) -> None:
        super().__init__(name="warpalign-cuda-init", daemon=True)
        self._held = None
        self.facts: DeviceFacts | None = None
        self.facts_known = threading.Event()

    def run(self) -> None:
        import ctypes
        try:
            with contextlib.suppress(Exception):
                lib = ctypes.CDLL("libcuda.so.1")
                device, context = ctypes.c_int(), ctypes.c_void_p()
                count, sms, total = ctypes.c_int(), ctypes.c_int(), ctypes.c_size_t()
                if lib.cuInit(0) != 0 or lib.cuDeviceGet(ctypes.byref(device), 0) != 0:
                    return
                if (lib.cuDeviceGetCount(ctypes.byref(count)) == 0
                        and lib.cuDeviceGetAttribute(ctypes.byref(sms), 16, device) == 0
                        and lib.cuDeviceTotalMem_v2(ctypes.byref(total), device) == 0):
                    self.facts = DeviceFacts(count.value, sms.value, total.value)
                self.facts_known.set()
                if lib.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) == 0:
                    self._held = (lib, device)
        finally:
            self.facts_known.set()

    def release(self) -> None:
        """Wait for the thread, then release its hold on the context (if it has one)."""
        self.join()
        if self._held is not None:
            lib, device = self._held
            self._held = None
            with contextlib.suppress(Exception):
                release = (getattr(lib, "cuDevicePrimaryCtxRelease_v2", None)
                           or lib.cuDevicePrimaryCtxRelease)
                release(device)


@dataclass(frozen=True)
class DeviceFacts:
    """What the driver said of the visible devices before CuPy was loaded: their count,
    and device 0's multiprocessors and memory (bytes)."""

    devices: int
    multiprocessors: int
    memory: int


_driver_lock = threading.Lock()
_driver: list[_DriverInit] = []     # the probe's driver thread, once one ran


def device_facts(timeout: float = 1.0) -> DeviceFacts | None:
    """The :class:`DeviceFacts` read by the CUDA probe's driver thread (a warm-up's: see
    :meth:`Registry.warm_up`), waiting up to ``timeout`` seconds for them; None where no
    such thread ran (CuPy already imported, no warm-up yet) or the driver did not say.
    Lets the command line prepare host work for the device (the database's layout)
    while CuPy still loads."""
    with _driver_lock:
        driver = _driver[-1] if _driver else None
    if driver is None or not driver.facts_known.wait(timeout):
        return None
    return driver.facts


def _probe_cuda() -> None:
    from .cuda.loader import require_cupy
    # before CuPy is imported its current device is 0: that device's context is made
    # beside the import (once imported, the device may be another: the runtime makes it)
    driver = None if "cupy" in sys.modules else _DriverInit()
    if driver is not None:
        with _driver_lock:
            _driver[:] = [driver]
        driver.start()
    try:
        cupy = require_cupy("the CUDA backend")   # BackendUnavailable: CuPy missing, or no device
        # the device's context made here (on a warm-up thread, while the command line reads
        # its inputs), not in the job's first device call (~0.13 s on an H100)
        with contextlib.suppress(Exception):   # a broken device fails the job's call, not here
            cupy.cuda.runtime.free(0)
    finally:
        if driver is not None:
            driver.release()


def _other_contexts() -> None:
    """Make the contexts of the visible devices after the first (the probe made device 0's),
    one after another (the driver takes them in turns, ~0.15 s each on an H100 host): a
    search over several devices then finds them made, where its per-device threads used
    to start ~0.17 s apart (docs/gpu-notes.md, session 22). Called on the warm-up thread
    only, after the engine's load, so nothing waits for it."""
    from .cuda.loader import require_cupy
    cupy = require_cupy("the CUDA backend")
    for device in range(1, cupy.cuda.runtime.getDeviceCount()):
        with cupy.cuda.Device(device):
            cupy.cuda.runtime.free(0)


#: The probe of each backend: returns when it can run here, else raises BackendUnavailable.
PROBES: dict[str, Callable[[], None]] = {"cpu": lambda: None, "cuda": _probe_cuda}


def _load(target: str) -> Any:
    module, _, attribute = target.partition(":")
    try:
        mod = importlib.import_module(f"{__package__}.{module}")
    except ImportError as exc:
        raise BackendUnavailable(f"warpalign._backends.{module} cannot load: {exc}") from exc
    if not attribute:
        return mod
    if attribute.endswith("()"):
        return getattr(mod, attribute[:-2])()
    return getattr(mod, attribute)


class Registry:
    """A table of rows and a probe per backend, with the outcomes it keeps (probes run and
    engines built once, failures kept, one warning per failure). The process has one,
    :data:`REGISTRY`, behind this module's functions; a test or a plugin may build its own
    (``Registry(TABLE + (Row(...),), probes={"cuda": ...})``) and call its methods, which
    are this module's functions. Thread-safe."""

    def __init__(self, table: tuple[Row, ...] = TABLE,
                 probes: dict[str, Callable[[], None]] | None = None):
        self._rows = {(row.job, row.backend, row.method): row.engine for row in table}
        # each (job, backend)'s first method in the table (a scan of every row took ~10 us
        # of each call that names no method)
        self._first: dict[tuple[str, str], str] = {}
        for job, backend, method in self._rows:
            self._first.setdefault((job, backend), method)
        self._probes = {**PROBES, **(probes or {})}
        self._outcomes = _Outcomes()
        self._lock = threading.Lock()          # guards _warned and _overrides
        self._warned: set = set()
        self._overrides: dict[tuple[str, str, str], Any] = {}

    # -------------------------------------------------------------------------- public

    def probe(self, backend: str) -> BackendUnavailable | None:
        """None when ``backend`` ("cpu" or "cuda") can run here, else the error saying why
        (CuPy missing, no device). Run once per registry and backend; the outcome is kept."""
        return self._outcomes.get(("backend", backend), self._probes[backend])[1]

    def backend_for(self, job: str, backend: Any = "auto", method: str = "auto") -> str:
        """"cpu" or "cuda": where ``job`` runs for ``backend`` ("auto" | "cpu" | "cuda", or
        an engine object: its ``name``); "auto" as the module docstring says, the CUDA side
        judged by the engine of ``method`` (or the job's first CUDA row)."""
        if not isinstance(backend, str):
            return self._engine_object(job, backend, method).name
        return self._choose(backend, job, lambda: self._failure(job, "cuda", method))

    def engine_for(self, job: str, backend: Any = "auto", method: str = "auto") -> Any:
        """The engine of the row (job, :meth:`backend_for`, method). A configured engine
        object passed as ``backend`` is returned as it is (jobs whose engine is a
        SearchEngine).

        Raises:
            ValueError: no such row: ``method`` runs on another backend only (the message
                names it), or is not one of the job's methods.
            BackendUnavailable: the backend or the row's engine cannot run here (why).
        """
        if not isinstance(backend, str):
            return self._engine_object(job, backend, method)
        name = self.backend_for(job, backend, method)
        if not self.has_engine(job, name, method):
            raise ValueError(self._no_row(job, name, method))
        return self._engine(job, name, method)

    def warm_up(self, job: str, backend: Any = "auto", method: str = "auto"
                ) -> threading.Thread | None:
        """Start, on a daemon thread, what the first ``engine_for(job, backend, method)``
        would do on the CUDA side: the probe (CuPy's import, the device's initialization:
        ~0.25 s of a CLI search on an H100) and the engine's load, so that the caller's
        next work (reading the queries, opening the database) overlaps it. Outcomes are
        kept as :meth:`engine_for` keeps them, which then waits for them; nothing is
        reported here (no warning, no error: the job's own call reports them). The
        thread runs in a copy of the caller's context (an emulated device stays so).
        Returns the thread, or None where the CUDA side is not asked for (backend "cpu",
        an engine object, ``WARPALIGN_BACKEND=cpu`` under "auto")."""
        if not isinstance(backend, str) or backend == "cpu" or (
                backend == "auto" and os.environ.get("WARPALIGN_BACKEND") == "cpu"):
            return None

        def warm() -> None:
            # errors other than BackendUnavailable are not kept: the job's call meets
            # them again and raises them
            with contextlib.suppress(Exception):
                key, reason = self._failure(job, "cuda", method)
                if reason is None and key[0] == "engine":   # CUDA's own engine runs here
                    _other_contexts()

        thread = threading.Thread(target=contextvars.copy_context().run, args=(warm,),
                                  name=f"warpalign-warm-{job}", daemon=True)
        thread.start()
        return thread

    def has_engine(self, job: str, backend: str, method: str) -> bool:
        """Whether the table (or :meth:`set_engine`) has the row (job, backend, method)."""
        with self._lock:
            return (job, backend, method) in self._rows or (job, backend, method) in self._overrides

    def lookup(self, job: str, backend: str, method: str) -> Any:
        """The engine of the row (job, backend, method) for a ``backend`` already resolved
        (no probe), or None when the table has no such row (a pass only some backends have,
        e.g. locate's "windows16" on CUDA)."""
        return self._engine(job, backend, method) if self.has_engine(job, backend, method) else None

    def set_engine(self, job: str, backend: str, method: str, engine: Any) -> None:
        """Use ``engine`` for the row (job, backend, method); None restores the table's
        (tests and plugins, e.g. a slowed CPU engine on Dask workers). A row set here is
        taken as able to run: its backend's probe is not asked."""
        with self._lock:
            if engine is None:
                self._overrides.pop((job, backend, method), None)
            else:
                self._overrides[job, backend, method] = engine

    @contextlib.contextmanager
    def using(self, job: str, backend: str, method: str, engine: Any) -> Iterator[Any]:
        """:meth:`set_engine` for the duration of a ``with`` block (the row's previous
        engine, set or the table's, comes back after it)."""
        with self._lock:
            before = self._overrides.get((job, backend, method))
        self.set_engine(job, backend, method, engine)
        try:
            yield engine
        finally:
            self.set_engine(job, backend, method, before)

    def choose_backend(self, name: str, probe_cuda: Callable[[], object],
                       job: str = "search") -> str:
        """:meth:`backend_for` with a CUDA probe of the caller's instead of the table's
        rows: ``probe_cuda()`` raises :class:`BackendUnavailable` (saying why) when the
        job's CUDA kernels cannot run here; its outcome is kept per ``job``."""
        key = ("probe", job)
        return self._choose(name, job, lambda: (key, self._outcomes.get(key, probe_cuda)[1]))

    def get_backend(self, name: Any = "auto") -> Any:
        """The search engine for ``name`` (``engine_for("search", name)``); an engine object
        passes through, e.g. ``CudaBackend(devices=[0, 1])`` or ``CpuBackend(threads=1)``."""
        return self.engine_for("search", name)

    # ------------------------------------------------------------------------- private

    def _row_engine(self, job: str, backend: str, method: str
                    ) -> tuple[Any, BackendUnavailable | None]:
        target = self._rows[job, backend, method]
        return self._outcomes.get(("engine", target), lambda: _load(target))

    def _failure(self, job: str, backend: str, method: str
                 ) -> tuple[Any, BackendUnavailable | None]:
        """(key, None) when the job's engine on ``backend`` runs here, else (key, the
        reason); the engine is the row of ``method``, or the job's first row on that
        backend."""
        with self._lock:
            if (job, backend, method) in self._overrides:
                return ("set", job, backend, method), None
        reason = self.probe(backend)
        if reason is not None:
            return ("backend", backend), reason
        if (job, backend, method) not in self._rows:
            method = self._first.get((job, backend))
            if method is None:
                return ("job", job, backend), BackendUnavailable(f"{job} has no {backend} engine")
        return ("engine", self._rows[job, backend, method]), self._row_engine(job, backend, method)[1]

    def _choose(self, name: str, job: str,
                failure: Callable[[], tuple[Any, BackendUnavailable | None]]) -> str:
        check_choice("backend", name, BACKENDS)
        if name == "auto":
            forced = os.environ.get("WARPALIGN_BACKEND")
            if forced:
                name = check_choice("WARPALIGN_BACKEND", forced, BACKENDS[1:])
            else:
                key, reason = failure()
                if reason is None:
                    return "cuda"
                self._warn_once(job, key, reason)
                return "cpu"
        if name != "cpu":
            _, reason = failure()
            if reason is not None:
                raise _unavailable(job, reason) from reason
        return name

    def _warn_once(self, job: str, key, reason: BackendUnavailable) -> None:
        if getattr(reason, "no_library", False):
            return        # CuPy not installed: the CPU is the expected backend, nothing to say
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        warnings.warn(f"warpalign {job}: the GPU cannot run ({reason}); running on the CPU",
                      RuntimeWarning, stacklevel=4)

    def _engine(self, job: str, backend: str, method: str) -> Any:
        with self._lock:
            if (job, backend, method) in self._overrides:
                return self._overrides[job, backend, method]
        engine, reason = self._row_engine(job, backend, method)
        if reason is not None:
            raise _unavailable(job, reason) from reason
        return engine

    def _engine_object(self, job: str, engine: Any, method: str) -> Any:
        """A configured engine passed as ``backend``: a SearchEngine, for the jobs that
        take one."""
        if job not in _SEARCH_JOBS or any(not hasattr(engine, m) for m in _SEARCH_MEMBERS):
            raise ValueError(f"invalid backend: {engine!r}; expected one of "
                             f"{', '.join(map(repr, BACKENDS))} or a search engine "
                             "(warpalign._backends.base.SearchEngine)")
        if method != "auto" and not self.has_engine(job, engine.name, method) and any(
                (j, m) == (job, method) for j, _, m in self._rows):
            raise ValueError(self._no_row(job, engine.name, method))
        return engine

    def _no_row(self, job: str, backend: str, method: str) -> str:
        others = sorted({b for j, b, m in self._rows if (j, m) == (job, method)})
        if others:
            where = " or ".join(_NAMES.get(b, b) for b in others)
            return f"method={method!r} runs on the {where} backend only, not {backend!r}"
        methods = sorted({m for j, b, m in self._rows if (j, b) == (job, backend)})
        return (f"invalid method for {job} on {backend!r}: {method!r}; expected one of "
                f"{', '.join(map(repr, methods))}")


def _unavailable(job: str, reason: BackendUnavailable) -> BackendUnavailable:
    """A fresh error for a job that cannot run on CUDA, saying why (the kept ``reason``)."""
    return BackendUnavailable(f"{_LABELS.get(job, f'the CUDA {job} engine')} cannot run "
                              f"here: {reason}")


def call_options(engine: Any, *, threads: int | None = None) -> dict[str, Any]:
    """The per-call options ``engine`` takes besides its job's interface: the CPU search
    engines (:class:`~.base.ScanEngine`) take ``threads``, this call's CPU threads (the
    shared engine never changes); the CUDA engine takes none."""
    return {"threads": threads} if isinstance(engine, ScanEngine) else {}


def prepare_options(engine: Any, *, gpu_memory: int | float | None = None) -> dict[str, Any]:
    """The options ``engine.prepare`` takes for this call: the CUDA engine's
    ``device_memory`` (a limit :func:`~.stream.parse_memory` gave; None: its default);
    engines on the CPU keep nothing on a device and take none."""
    if gpu_memory is None or getattr(engine, "name", None) != "cuda":
        return {}
    return {"device_memory": gpu_memory}


#: The process's registry: every job resolves its engine here.
REGISTRY = Registry()
probe = REGISTRY.probe
backend_for = REGISTRY.backend_for
engine_for = REGISTRY.engine_for
has_engine = REGISTRY.has_engine
lookup = REGISTRY.lookup
set_engine = REGISTRY.set_engine
using = REGISTRY.using
choose_backend = REGISTRY.choose_backend
get_backend = REGISTRY.get_backend
warm_up = REGISTRY.warm_up
