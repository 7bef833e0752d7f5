"""One loader for the CUDA kernels: NVRTC, compiled on first use, kept on disk.

A launch site asks for exactly the kernels it is about to launch (:func:`get_functions`:
one *unit* per name; :func:`get_module`: one unit holding several names). A unit is the
source (``#line 1 "<file>"`` first, so compiler messages name the file), its template
instantiations by name (``name_expressions``), the ``-D`` defines and the architecture.
Units compile once per process, several at once (NVRTC releases the GIL), and are kept on
disk across processes (:class:`KernelCache`): nothing compiles at import or when a backend
is built.

Why not CuPy's own disk cache: a ``RawModule`` built with ``name_expressions`` recompiles
in every process in CuPy 14.0 (``compiler.py`` skips its cache to learn the lowered names
again), reads it back in 14.1 only on drivers that enumerate functions, and keeps the names
with the binary only from 14.2. Keeping the binary and its lowered names ourselves gives
every CuPy 14 the same cold start; the binary loads with ``RawModule(path=...)``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import BackendUnavailable
from ..base import usable_cores

_DIR = Path(__file__).resolve().parent
# -ftz=true: what CuPy's RawModule adds (the kernels are integer code; kept for identity)
_OPTIONS = ("-std=c++17", "-ftz=true")

#: ``compile(source, options, arch, names) -> (binary, lowered)``: the binary (cubin or
#: PTX bytes) and each name expression's lowered (mangled) name.
Compiler = Callable[[str, tuple, str, tuple], tuple[bytes, dict]]


#: The stand-in device of the calling context (:func:`emulated`), else None.
_EMULATED: contextvars.ContextVar = contextvars.ContextVar("warpalign_emulated_device",
                                                           default=None)


@contextlib.contextmanager
def emulated(cupy, modules: Callable):
    """A stand-in device for the ``with`` block, in the calling thread's context only:
    :func:`require_cupy` returns ``cupy`` (the parts of CuPy the host code uses) and
    :func:`get_module` / :func:`get_functions` take kernels from ``modules(filename,
    names, defines)`` (an object with ``get_function(name)``); nothing compiles. For CPU
    tests of the host side of the kernels (buffers, layouts, copies, launch arguments);
    launch sites that remember kernels (``windows.clear_cache``) are cleared by the
    caller."""
    token = _EMULATED.set((cupy, modules))
    try:
        yield cupy
    finally:
        _EMULATED.reset(token)


def require_cupy(what: str = "the CUDA backend"):
    """CuPy, once a CUDA device answers; else BackendUnavailable saying which is missing."""
    stand_in = _EMULATED.get()
    if stand_in is not None:
        return stand_in[0]
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy that cannot load its CUDA libraries
        err = BackendUnavailable(f"{what} needs CuPy (pip install warpalign[cuda]): {exc}")
        # not installed at all (rather than installed and broken): no GPU to speak of
        err.no_library = isinstance(exc, ModuleNotFoundError) and exc.name == "cupy"
        raise err from exc
    try:
        ndev = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA runtime errors vary by driver and machine
        raise BackendUnavailable(f"{what}: no CUDA device answers: {exc}") from exc
    if ndev < 1:
        raise BackendUnavailable(f"{what}: no CUDA device answers (device count is 0)")
    return cupy


def require_compiler(what: str = "the CUDA backend") -> None:
    """NVRTC loads (its version answers); else BackendUnavailable. Nothing is compiled."""
    cupy = require_cupy(what)
    try:
        cupy.cuda.nvrtc.getVersion()
    except Exception as exc:  # a missing or broken libnvrtc
        raise BackendUnavailable(f"{what}: NVRTC (the CUDA run-time compiler) does not "
                                 f"load: {exc}") from exc


def source(filename: str) -> str:
    text = (_DIR / filename).read_text()
    return f'#line 1 "{filename}"\n{text}'


@functools.lru_cache(maxsize=None)
def _source(filename: str) -> str:
    return source(filename)


def cache_dir() -> Path:
    """Where compiled kernels are kept: ``$WARPALIGN_CACHE/kernels``, else
    ``$XDG_CACHE_HOME/warpalign/kernels``, else ``~/.cache/warpalign/kernels``."""
    root = os.environ.get("WARPALIGN_CACHE")
    if root:
        return Path(root) / "kernels"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "warpalign" / "kernels"


@dataclass(frozen=True)
class Compiled:
    """A compiled unit: the binary's file and each name expression's lowered name."""

    path: Path
    lowered: dict


class KernelCache:
    """Compiled units on disk and in memory, each compiled once.

    A unit's key is the SHA-256 of its source, options, architecture, name expressions and
    ``version`` (the compiler's and CuPy's versions). On disk a unit is two files written
    atomically (a temporary file renamed into place): the binary, named by its own SHA-256,
    then ``<key>.json`` with the lowered names and that file name. An entry whose record
    does not parse, names other expressions or whose binary is missing or does not match
    its hash is compiled again and rewritten. Where the folder cannot be written the unit
    is compiled for this process only.

    Thread-safe: concurrent first uses of a unit wait for one compile; :meth:`get_many`
    compiles the missing units of a call on a pool of ``workers`` threads. ``compiled``
    and ``loaded`` list the names of the units compiled and read from disk so far.
    """

    def __init__(self, directory: str | os.PathLike, compile: Compiler, version: str, *,
                 workers: int | None = None):
        self.directory = Path(directory)
        self._compile = compile
        self._version = version
        self._workers = workers or usable_cores()
        self._lock = threading.Lock()
        self._units: dict[str, Future] = {}
        self.compiled: list[tuple] = []
        self.loaded: list[tuple] = []

    def key(self, source: str, options: Sequence[str], arch: str,
            names: Sequence[str]) -> str:
        h = hashlib.sha256()
        for part in (self._version, arch, "\0".join(options), "\0".join(names), source):
            h.update(part.encode())
            h.update(b"\x01")
        return h.hexdigest()

    def get(self, source: str, options: Sequence[str], arch: str,
            names: Sequence[str]) -> Compiled:
        return self.get_many([(source, tuple(options), arch, tuple(names))])[0]

    def get_many(self, units: Sequence[tuple]) -> list[Compiled]:
        """Each unit ``(source, options, arch, names)`` compiled or read, in order; the
        units no other thread is already producing are produced here, at once."""
        futures, mine = [], []
        with self._lock:
            for unit in units:
                k = self.key(*unit)
                fut = self._units.get(k)
                if fut is None:
                    fut = self._units[k] = Future()
                    mine.append((k, unit, fut))
                futures.append(fut)
        if len(mine) == 1:
            self._produce(*mine[0])
        elif mine:
            with ThreadPoolExecutor(min(len(mine), self._workers),
                                    thread_name_prefix="warpalign-nvrtc") as pool:
                list(pool.map(lambda job: self._produce(*job), mine))
        return [f.result() for f in futures]

    def _produce(self, key, unit, fut) -> None:
        try:
            got = self._read(key, unit[3])
            if got is None:
                got = self._build(key, unit)
            else:
                with self._lock:
                    self.loaded.append(unit[3])
            fut.set_result(got)
        except BaseException as exc:  # noqa: BLE001  (raised in every waiting caller)
            with self._lock:          # a later call tries again
                self._units.pop(key, None)
            fut.set_exception(exc)

    def _read(self, key: str, names: tuple) -> Compiled | None:
        try:
            record = json.loads((self.directory / f"{key}.json").read_text())
            binary = self.directory / record["binary"]
            ok = (binary.parent == self.directory and record["names"] == list(names) and set(record["lowered"]) == set(names)
                  and hashlib.sha256(binary.read_bytes()).hexdigest() == record["sha256"])
        except (OSError, ValueError, KeyError, TypeError):   # missing, torn or foreign
            return None
        return Compiled(binary, dict(record["lowered"])) if ok else None

    def _build(self, key: str, unit: tuple) -> Compiled:
        source_text, options, arch, names = unit
        binary, lowered = self._compile(source_text, options, arch, names)
        if isinstance(binary, str):
            binary = binary.encode()
        lowered = {n: lowered[n] for n in names}
        with self._lock:
            self.compiled.append(names)
        digest = hashlib.sha256(binary).hexdigest()
        kind = "cubin" if binary[:4] == b"\x7fELF" else "ptx"
        path = self.directory / f"{digest}.{kind}"
        record = {"names": list(names), "lowered": lowered, "binary": path.name,
                  "sha256": digest, "version": self._version, "arch": arch}
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            _write_atomic(path, binary)     # the binary before the record naming it
            _write_atomic(self.directory / f"{key}.json", json.dumps(record).encode())
        except OSError:
            # no cache to write: this process keeps the binary in a temporary file
            path = Path(tempfile.mkdtemp(prefix="warpalign-kernels-")) / path.name
            path.write_bytes(binary)
        return Compiled(path, lowered)


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


# -- the process's cache and the modules loaded from it -----------------------------------
_lock = threading.Lock()
_cache: KernelCache | None = None
_modules: dict[tuple, Module] = {}    # (filename, names, defines, arch) -> Module
#: What :func:`get_module` and :func:`get_functions` answered once their kernels were loaded
#: on a device, by (function, filename, names, defines, device id): a later call there
#: returns it without the lookups and the load check (~0.07 ms a call under a profiler;
#: a GPU ``score_pairs(mode="full")`` asks eight times). Values are never replaced or
#: mutated.
_ready: dict[tuple, Any] = {}


def _nvrtc_compile(source_text: str, options: tuple, arch: str, names: tuple):
    """NVRTC as ``RawModule(code=..., name_expressions=...)`` runs it: CuPy's options
    (include folders, C++ standard) added, then the architecture; no CuPy disk cache."""
    from cupy._core.core import assemble_cupy_compiler_options
    from cupy.cuda import compiler

    return compiler.compile_using_nvrtc(source_text, assemble_cupy_compiler_options(options),
                                        arch, "", name_expressions=list(names),
                                        cache_in_memory=True)


def kernel_cache() -> KernelCache:
    """The process's :class:`KernelCache` (in :func:`cache_dir`, NVRTC through CuPy);
    its ``compiled`` and ``loaded`` lists tell what this process compiled and read."""
    global _cache
    with _lock:
        if _cache is None:
            cupy = require_cupy("CUDA kernels")
            major, minor = cupy.cuda.nvrtc.getVersion()
            version = (f"cupy {cupy.__version__} nvrtc {major}.{minor} "
                       f"driver {cupy.cuda.runtime.driverGetVersion()}")
            _cache = KernelCache(cache_dir(), _nvrtc_compile, version)
        return _cache


def _arch() -> str:
    """The architecture NVRTC compiles for on the current device, as RawModule picks it
    (the device's, capped at the newest this NVRTC knows)."""
    from cupy.cuda import compiler

    return str(compiler._get_arch())


class Module:
    """Kernels of one unit: ``get_function(name expression)`` as on a ``RawModule``."""

    def __init__(self, raw, lowered: dict):
        self._raw = raw
        self._lowered = lowered

    def get_function(self, name: str):
        return self._raw.get_function(self._lowered[name])


def _load(filename: str, units: list[tuple[str, ...]], defines: tuple[str, ...]):
    """One :class:`Module` per unit of names, compiled or read where missing (memoized
    per architecture; the RawModule loads on each device when first launched there)."""
    import cupy

    arch = _arch()
    keys = [(filename, names, defines, arch) for names in units]
    with _lock:
        have = [_modules.get(k) for k in keys]
    missing = [u for u, m in zip(units, have) if m is None]
    if not missing:
        return have
    text = _source(filename)
    options = _OPTIONS + tuple(f"-D{d}" for d in defines)
    try:
        got = kernel_cache().get_many([(text, options, arch, names) for names in missing])
    except Exception as exc:   # CompileException, NVRTC and driver errors
        raise BackendUnavailable(f"CUDA kernel compile failed for {filename}: {exc}") from exc
    made = iter(got)
    with _lock:
        for i, (k, m) in enumerate(zip(keys, have)):
            if m is None:
                c = next(made)
                m = _modules.get(k)
                if m is None:
                    m = _modules[k] = Module(cupy.RawModule(path=str(c.path)), c.lowered)
                have[i] = m
    return have


def get_module(filename: str, names: tuple[str, ...], defines: tuple[str, ...] = ()) -> Module:
    """The compiled unit of ``filename`` with ``names`` instantiated together (``defines``:
    extra ``-D`` options, e.g. ``("R2_BLOCK=384",)``); loads on the current device."""
    stand_in = _EMULATED.get()
    if stand_in is not None:
        return stand_in[1](filename, tuple(names), tuple(defines))
    key = ("module", filename, tuple(names), tuple(defines), _device_id())
    mod = _ready.get(key)
    if mod is None:
        mod = _load(filename, [tuple(names)], tuple(defines))[0]
        _loaded(filename, [mod.get_function(n) for n in names])
        _ready.setdefault(key, mod)
    return mod


def get_functions(filename: str, names: Sequence[str], defines: tuple[str, ...] = ()) -> dict:
    """``{name: RawKernel}`` for ``names`` of ``filename``, one unit per name (so each is
    kept on disk once, whichever other kernels a call needs), the missing ones compiled at
    once; loaded on the current device."""
    names = tuple(dict.fromkeys(names))
    stand_in = _EMULATED.get()
    if stand_in is not None:
        return {n: stand_in[1](filename, (n,), tuple(defines)).get_function(n) for n in names}
    key = ("functions", filename, names, tuple(defines), _device_id())
    out = _ready.get(key)
    if out is None:
        mods = _load(filename, [(n,) for n in names], tuple(defines))
        out = {n: mod.get_function(n) for n, mod in zip(names, mods)}
        _loaded(filename, out.values())
        out = _ready.setdefault(key, out)
    return dict(out)       # the caller's own dict


def _device_id() -> int:
    import cupy
    return cupy.cuda.runtime.getDevice()


def _loaded(filename: str, kernels) -> None:
    """Load ``kernels`` on the current device now, so failures surface here."""
    try:
        for k in kernels:
            _ = k.kernel
    except Exception as exc:   # driver errors: a binary this driver cannot load
        raise BackendUnavailable(f"CUDA kernel load failed for {filename}: {exc}") from exc
