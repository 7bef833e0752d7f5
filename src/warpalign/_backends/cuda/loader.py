"""One loader for the CUDA kernels: NVRTC through ``cupy.RawModule``, memoized per device.

The source gets ``#line 1 "<file>"`` so compiler messages name the file; templates are
instantiated by name (``name_expressions``); CuPy picks the device's architecture
(``-arch=sm_90`` on H100/H200) and keeps compiled modules in its disk cache.
"""

from __future__ import annotations

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
