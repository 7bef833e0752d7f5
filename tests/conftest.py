"""Shared fixtures: the backends every test body runs over, and the shared data folder."""

from __future__ import annotations

import functools
import gzip
import os
from pathlib import Path

import pytest

from warpalign._backends import TargetSet, get_backend
from warpalign.errors import BackendUnavailable

SHARED_DATA = Path(os.environ.get("WARPALIGN_SHARED_DATA",
                                  Path(__file__).resolve().parents[1].parent / "shared" / "data"))


@pytest.fixture(autouse=True, scope="session")
def _verified_cache(tmp_path_factory):
    """Database.open's records of verified files go to a folder of the test session's
    (and so do the CLI's, run in subprocesses), not the user's cache."""
    os.environ["WARPALIGN_CACHE"] = str(tmp_path_factory.mktemp("warpalign-cache"))


def shared_data(relative: str) -> Path:
    """A file of ../shared/data, or skip when this checkout has none beside it."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"shared data not present: {path}")
    return path


@functools.lru_cache(maxsize=1)
def _chrx() -> str:
    with gzip.open(shared_data("dna/ce2chrX.fa.gz"), "rt") as fh:
        fh.readline()
        return "".join(line.strip() for line in fh)


def chrx(start: int, stop: int) -> str:
    """C. elegans chrX[start:stop] (upper case) from ../shared/data, read once per process;
    skips where the data is not present."""
    shared_data("dna/ce2chrX.fa.gz")
    return _chrx()[start:stop].upper()


def concat(seqs) -> tuple:
    """(codes, offsets) of encoded sequences laid end to end, as the kernels take them
    (the backends' declared TargetSet layout)."""
    ts = TargetSet.from_list(list(seqs))
    return ts.codes, ts.offsets


@pytest.fixture(params=["cpu", pytest.param("cuda", marks=pytest.mark.cuda)])
def backend(request) -> str:
    """Every backend; CUDA tests are skipped where no device answers."""
    try:
        get_backend(request.param)
    except BackendUnavailable as exc:
        pytest.skip(f"{request.param} backend unavailable: {exc}")
    return request.param


@pytest.fixture
def unpacked(monkeypatch):
    """What each ``unpack_dna`` launch of the test covers (packed staging, the CUDA encode
    engine, a device or a stand-in): (its side's codes, lo, hi), in launch order."""
    from warpalign._backends.cuda import encode as gpu
    seen = []
    real = gpu._unpacker

    def spy(kernels, codes, flags):
        unpack = real(kernels, codes, flags)

        def noted(packed, lo, hi):
            seen.append((codes, lo, hi))
            unpack(packed, lo, hi)
        return noted

    monkeypatch.setattr(gpu, "_unpacker", spy)
    return seen


@pytest.fixture(scope="module")
def cuda():
    """The CUDA search backend (the registry's shared one); the test skips without a device."""
    try:
        return get_backend("cuda")
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA backend: {exc}")


def skip_without_device(check) -> None:
    """Run a CUDA module's ``check_device``; the test skips when no device can run it."""
    try:
        check()
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA device: {exc}")


@pytest.fixture(scope="module")
def pairs_device():
    """The pair kernels' device (``_backends/cuda/pairs.py``); the test skips without one."""
    from warpalign._backends.cuda.pairs import check_device
    skip_without_device(check_device)


@pytest.fixture(scope="module")
def traceback_gpu():
    """The CUDA traceback engine (the registry's shared one); the test skips without a
    device."""
    from warpalign._backends.registry import engine_for
    try:
        return engine_for("traceback", "cuda", "auto")
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA device: {exc}")


@pytest.fixture(scope="module")
def windows_gpu():
    """locate's GPU windows module (``_backends/cuda/windows.py``), its kernels loaded once;
    the test skips without a device."""
    try:
        from warpalign._backends.cuda import windows
        windows.wanted_windows(1)
    except BackendUnavailable as exc:
        pytest.skip(f"no CUDA device: {exc}")
    return windows

