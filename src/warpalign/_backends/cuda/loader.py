"""One loader for the CUDA kernels: NVRTC through ``cupy.RawModule``, memoized per device.

The source gets ``#line 1 "<file>"`` so compiler messages name the file; templates are
instantiated by name (``name_expressions``); CuPy picks the device's architecture
(``-arch=sm_90`` on H100/H200) and keeps compiled modules in its disk cache.
"""

from __future__ import annotations

import ctypes
import threading
from pathlib import Path

from ...errors import BackendUnavailable

_DIR = Path(__file__).resolve().parent
_OPTIONS = ("-std=c++17",)
_lock = threading.Lock()
_modules: dict[tuple, object] = {}


def require_cupy(what: str = "the CUDA backend"):
    """CuPy, once a CUDA device answers; else BackendUnavailable saying which is missing."""
    try:
        import cupy
    except Exception as exc:  # ImportError, or a CuPy that cannot load its CUDA libraries
        raise BackendUnavailable(
            f"{what} needs CuPy (pip install warpalign[cuda]): {exc}") from exc
    try:
        ndev = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA runtime errors vary by driver and machine
        raise BackendUnavailable(f"{what}: no CUDA device answers: {exc}") from exc
    if ndev < 1:
        raise BackendUnavailable(f"{what}: no CUDA device answers (device count is 0)")
    return cupy


def source(filename: str) -> str:
    text = (_DIR / filename).read_text()
    return f'#line 1 "{filename}"\n{text}'


def get_module(filename: str, names: tuple[str, ...], defines: tuple[str, ...] = ()):
    """The compiled module of ``filename`` with ``names`` instantiated, for the current device
    (``defines``: extra ``-D`` options, e.g. ``("R2_BLOCK=384",)``)."""
    import cupy

    key = (cupy.cuda.runtime.getDevice(), filename, names, defines)
    with _lock:
        mod = _modules.get(key)
        if mod is None:
            try:
                mod = cupy.RawModule(code=source(filename),
                                     options=_OPTIONS + tuple(f"-D{d}" for d in defines),
                                     name_expressions=list(names))
                for n in names:        # compile now, so failures surface here
                    mod.get_function(n)
            except Exception as exc:   # CompileException, NVRTC and driver errors
                raise BackendUnavailable(
                    f"CUDA kernel compile failed for {filename}: {exc}") from exc
            _modules[key] = mod
    return mod


class Launch:
    """One kernel's argument block, packed once and launched by ``cuLaunchKernel``.

    ``args`` are what CuPy's kernel call takes: device arrays (passed as their pointer)
    and NumPy scalars (passed with their own width). Between launches :meth:`set` changes
    an argument in place (a pointer or scalar, by index); the driver copies the block at
    each launch, so the next :meth:`set` never touches a queued launch. A CuPy kernel call
    converts every argument again (tens of microseconds with twenty arguments), which the
    device threads of a multi-GPU search pay one after another under the GIL; a pass loop
    of two dozen launches then costs one conversion. The device arrays stay referenced
    here while this object lives (the caller keeps it until the work is read back)."""

    _CTYPES = {"int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
               "uint64": ctypes.c_uint64}

    def __init__(self, kernel, args: tuple):
        self._f = kernel.ptr
        self._values = []
        self._arrays = []
        for a in args:
            if hasattr(a, "data") and hasattr(a.data, "ptr"):      # a CuPy array
                self._values.append(ctypes.c_uint64(a.data.ptr))
                self._arrays.append(a)
            else:
                kind = self._CTYPES.get(getattr(getattr(a, "dtype", None), "name", None))
                if kind is None:
                    raise TypeError(f"kernel argument {a!r}: expected a device array or a "
                                    f"NumPy int32/uint32/int64/uint64 scalar")
                self._values.append(kind(int(a)))
        self._params = (ctypes.c_void_p * len(self._values))(
            *(ctypes.addressof(v) for v in self._values))

    def set(self, index: int, value: int) -> None:
        self._values[index].value = int(value)

    def __call__(self, grid: int, block: int, shared_mem: int = 0, stream: int | None = None):
        """Launch on ``stream`` (a stream pointer; default CuPy's current stream)."""
        from cupy.cuda import driver, get_current_stream

        ptr = get_current_stream().ptr if stream is None else stream
        driver.launchKernel(self._f, grid, 1, 1, block, 1, 1, shared_mem, ptr,
                            ctypes.addressof(self._params), 0)
