"""Choosing a backend: "auto" says once why the GPU cannot run, and tries it once."""

from __future__ import annotations

import warnings

import pytest

from warpalign._backends.registry import TABLE, Registry, Row
from warpalign.errors import BackendUnavailable


class _Probe:
    """A CUDA probe that fails like a kernel that does not compile, counting its calls."""

    def __init__(self, error: BackendUnavailable):
        self.error, self.calls = error, 0

    def __call__(self):
        self.calls += 1
        raise self.error


def test_auto_warns_once_and_caches_the_reason(monkeypatch):
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    probe = _Probe(BackendUnavailable("CUDA kernel compile failed for search.cu: "
                                      "search.cu(12): error: identifier undefined"))
    choose_backend = Registry().choose_backend
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert choose_backend("auto", probe, "job-a") == "cpu"
        assert choose_backend("auto", probe, "job-a") == "cpu"
    assert probe.calls == 1                       # not retried on every call
    msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and "search.cu(12)" in msgs[0] and "CPU" in msgs[0]
    with pytest.raises(BackendUnavailable, match="compile failed"):
        choose_backend("cuda", probe, "job-a")    # an explicit request raises the reason
    assert probe.calls == 1


def test_no_cupy_is_quiet(monkeypatch):
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    err = BackendUnavailable("the CUDA backend needs CuPy (pip install warpalign[cuda])")
    err.no_library = True
    choose_backend = Registry().choose_backend
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert choose_backend("auto", _Probe(err), "job-b") == "cpu"
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    with pytest.raises(BackendUnavailable, match="CuPy"):
        choose_backend("cuda", _Probe(err), "job-b")


def test_forced_backend(monkeypatch):
    monkeypatch.setenv("WARPALIGN_BACKEND", "cuda")
    probe = _Probe(BackendUnavailable("no CUDA device answers"))
    choose_backend = Registry().choose_backend
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        choose_backend("auto", probe, "job-c")
    monkeypatch.setenv("WARPALIGN_BACKEND", "cpu")
    assert choose_backend("auto", probe, "job-d") == "cpu"
    monkeypatch.setenv("WARPALIGN_BACKEND", "gpu")
    with pytest.raises(ValueError, match="WARPALIGN_BACKEND"):
        choose_backend("auto", probe, "job-e")


# --- the registry: table rows, one probe per backend, engines loaded once ------------------

JOB_X = (Row("job-x", "cpu", "auto", "cpu:CpuBackend()"),
         Row("job-x", "cuda", "auto", "cpu:ScalarBackend()"))


def _registry(rows, probes):
    """A registry of its own: the table plus ``rows``, CUDA "answering" (a probe that
    records its calls in ``probes``)."""
    return Registry(TABLE + tuple(rows), probes={"cuda": lambda: probes.append("cuda")})


def test_registry_auto_takes_cuda_when_its_engine_loads(monkeypatch):
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    probes = []
    registry = _registry(JOB_X, probes)
    assert registry.backend_for("job-x") == "cuda"
    engine = registry.engine_for("job-x")
    assert type(engine).__name__ == "ScalarBackend"
    assert registry.engine_for("job-x", "cuda") is engine      # one shared instance
    assert registry.engine_for("job-x", "cpu") is not engine
    assert probes == ["cuda"]                                   # one probe per backend


def test_registry_keeps_a_failed_engine_and_warns_once(monkeypatch):
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    registry = _registry((JOB_X[0], Row("job-x", "cuda", "auto", "no_such_module")), [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert registry.backend_for("job-x") == "cpu"
        assert type(registry.engine_for("job-x")).__name__ == "CpuBackend"
    msgs = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(msgs) == 1 and "no_such_module" in msgs[0]
    with pytest.raises(BackendUnavailable, match="no_such_module"):
        registry.engine_for("job-x", "cuda")                    # the kept reason


def test_registry_engine_set_for_a_block(monkeypatch):
    """An engine set for a row runs without its backend's probe, for the block only."""
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    failing = _Probe(BackendUnavailable("no CUDA device (test)"))
    registry = Registry(TABLE + JOB_X, probes={"cuda": failing})
    stand_in = object()
    with registry.using("job-x", "cuda", "auto", stand_in):
        assert registry.backend_for("job-x") == "cuda"
        assert registry.engine_for("job-x", "cuda") is stand_in
    assert failing.calls == 0
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        registry.engine_for("job-x", "cuda")


def test_registry_names_the_backend_a_method_runs_on():
    from warpalign._backends.registry import engine_for, has_engine
    assert has_engine("search", "cuda", "warp") and not has_engine("search", "cpu", "warp")
    with pytest.raises(ValueError, match="runs on the CUDA backend only, not 'cpu'"):
        engine_for("search", "cpu", "warp")


def test_warm_up_probes_and_loads_ahead_once(monkeypatch):
    """warm_up does engine_for's CUDA work on a thread, in the caller's context; the job's
    call then takes the kept outcome (no second probe, no second engine)."""
    import contextvars
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    device = contextvars.ContextVar("device", default="none")
    seen = []
    registry = Registry(TABLE + JOB_X, probes={"cuda": lambda: seen.append(device.get())})
    device.set("emulated")
    thread = registry.warm_up("job-x", "auto")
    thread.join(10)
    assert not thread.is_alive() and seen == ["emulated"]   # the caller's context
    engine = registry.engine_for("job-x")
    assert type(engine).__name__ == "ScalarBackend" and seen == ["emulated"]
    assert registry.warm_up("job-x", "cpu") is None
    monkeypatch.setenv("WARPALIGN_BACKEND", "cpu")
    assert registry.warm_up("job-x", "auto") is None


def test_warm_up_makes_the_other_devices_contexts_after_the_engine(monkeypatch):
    """With CUDA's engine loaded, the warm-up thread makes devices 1..n-1's contexts (the
    probe made device 0's), one after another, in the caller's (emulated) context."""
    import types

    from warpalign._backends.cuda.loader import emulated
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    made = []

    class Device:
        def __init__(self, d):
            self.d = d

        def __enter__(self):
            made.append(("enter", self.d))

        def __exit__(self, *exc):
            made.append(("exit", self.d))

    runtime = types.SimpleNamespace(getDeviceCount=lambda: 3,
                                    free=lambda ptr: made.append(("free", ptr)))
    stand_in = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=Device, runtime=runtime))
    registry = Registry(TABLE + JOB_X, probes={"cuda": lambda: None})
    with emulated(stand_in, lambda *a: None):
        thread = registry.warm_up("job-x", "auto")
    thread.join(10)
    assert not thread.is_alive()
    assert made == [("enter", 1), ("free", 0), ("exit", 1), ("enter", 2), ("free", 0),
                    ("exit", 2)]
    made.clear()
    with emulated(stand_in, lambda *a: None):     # a job of one device: the probe's only
        thread = Registry(TABLE + JOB_X, probes={"cuda": lambda: None}).warm_up(
            "job-x", "auto", all_devices=False)
    thread.join(10)
    assert not thread.is_alive() and made == []
    failing = Registry(TABLE + JOB_X, probes={"cuda": _Probe(BackendUnavailable("none"))})
    with emulated(stand_in, lambda *a: None):
        thread = failing.warm_up("job-x", "auto")
    thread.join(10)
    assert made == []          # no device: nothing more is tried


def test_warm_up_reports_nothing_the_call_reports(monkeypatch):
    """A failed warm-up warns nowhere; the job's call warns once (auto) or raises (cuda)."""
    monkeypatch.delenv("WARPALIGN_BACKEND", raising=False)
    failing = _Probe(BackendUnavailable("no CUDA device (test)"))
    registry = Registry(TABLE + JOB_X, probes={"cuda": failing})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registry.warm_up("job-x", "auto").join(10)
        assert not caught
        assert registry.backend_for("job-x") == "cpu"
    assert failing.calls == 1 and len(caught) == 1 and "no CUDA device" in str(caught[0].message)
    with pytest.raises(BackendUnavailable, match="no CUDA device"):
        registry.engine_for("job-x", "cuda")


class _Driver:
    """A stand-in libcuda: records its calls; ``fail`` names a call that returns an error."""

    def __init__(self, fail=None):
        self.calls, self.fail = [], fail

    def __getattr__(self, name):
        if not name.startswith("cu"):
            raise AttributeError(name)

        def call(*args):
            self.calls.append(name)
            if name == self.fail:
                return 1
            said = {"cuDeviceGetCount": 1, "cuDeviceGetAttribute": 132,
                    "cuDeviceTotalMem_v2": 80 << 30}.get(name)
            if said is not None:               # the answer goes where the first argument points
                args[0]._obj.value = said
            return 0
        return call


def _probe_with(monkeypatch, driver, cupy_imported=False, cupy_error=None):
    """_probe_cuda with ``driver`` as libcuda and a stand-in CuPy (or ``cupy_error``
    raised by its import); returns the order of events."""
    import ctypes
    import sys

    from warpalign._backends import registry
    from warpalign._backends.cuda import loader

    events = []

    def cdll(name):
        assert name == "libcuda.so.1"
        if isinstance(driver, Exception):
            raise driver
        return driver

    class Runtime:
        @staticmethod
        def free(ptr):
            events.append("runtime context")

    def require_cupy(why):
        events.append("import")
        if cupy_error is not None:
            raise cupy_error
        return type("cupy", (), {"cuda": type("cuda", (), {"runtime": Runtime})})

    monkeypatch.setattr(ctypes, "CDLL", cdll)
    monkeypatch.setattr(loader, "require_cupy", require_cupy)
    monkeypatch.setattr(registry, "_driver", [])     # this test's driver thread only
    if cupy_imported:
        monkeypatch.setitem(sys.modules, "cupy", object())
    else:
        monkeypatch.delitem(sys.modules, "cupy", raising=False)
    try:
        registry._probe_cuda()
    finally:
        if not isinstance(driver, Exception):
            events.append(tuple(driver.calls))
    return events


def test_cuda_probe_makes_the_context_beside_the_import(monkeypatch):
    # issue 21: the driver's init and device 0's primary context run on a thread beside
    # CuPy's import; its hold on the context is released once the runtime holds it
    driver = _Driver()
    events = _probe_with(monkeypatch, driver)
    assert events[:2] == ["import", "runtime context"]
    facts = ("cuDeviceGetCount", "cuDeviceGetAttribute", "cuDeviceTotalMem_v2")
    assert events[2] == ("cuInit", "cuDeviceGet", *facts, "cuDevicePrimaryCtxRetain",
                         "cuDevicePrimaryCtxRelease_v2")
    # CuPy imported already: its device may not be 0; the runtime alone makes the context
    driver = _Driver()
    assert _probe_with(monkeypatch, driver, cupy_imported=True) == [
        "import", "runtime context", ()]
    # a driver that fails, or none: nothing held, nothing released, no error of its own
    driver = _Driver(fail="cuInit")
    assert _probe_with(monkeypatch, driver)[2] == ("cuInit",)
    driver = _Driver(fail="cuDevicePrimaryCtxRetain")
    assert _probe_with(monkeypatch, driver)[2] == ("cuInit", "cuDeviceGet", *facts,
                                                   "cuDevicePrimaryCtxRetain")
    assert _probe_with(monkeypatch, OSError("libcuda.so.1: cannot open")) == [
        "import", "runtime context"]
    # CuPy missing: the probe's error is CuPy's, and the driver's hold is still released
    driver = _Driver()
    with pytest.raises(BackendUnavailable, match="needs CuPy"):
        _probe_with(monkeypatch, driver, cupy_error=BackendUnavailable("needs CuPy"))
    assert driver.calls[-1] == "cuDevicePrimaryCtxRelease_v2"


def test_device_facts_come_from_the_probes_driver_thread(monkeypatch):
    # issue 21: the driver thread reads the device count, device 0's SMs and memory before
    # CuPy loads (the command line lays the database out meanwhile); none where no such
    # thread ran or the driver did not answer
    from warpalign._backends import registry

    monkeypatch.setattr(registry, "_driver", [])
    assert registry.device_facts(timeout=0.01) is None
    _probe_with(monkeypatch, _Driver())
    assert registry.device_facts() == registry.DeviceFacts(1, 132, 80 << 30)
    _probe_with(monkeypatch, _Driver(fail="cuDeviceGetAttribute"))
    assert registry.device_facts() is None
    _probe_with(monkeypatch, _Driver(fail="cuInit"))
    assert registry.device_facts() is None
