"""The CUDA loader's compile cache (``cuda/loader.py`` :class:`KernelCache`), with a fake
compiler passed in (no GPU, no NVRTC): keys, files on disk, one compile per unit under
concurrent first use, several units at once, torn or foreign entries compiled again; and
the imports that must stay lazy. The same cache with NVRTC is checked on the device by
tests/test_cuda_search.py::test_cold_search_compiles_only_what_it_needs."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from warpalign._backends.cuda.loader import KernelCache

SRC = '#line 1 "toy.cu"\ntemplate <int R> __global__ void k() {}\n'
OPTS = ("-std=c++17", "-DX=1")


class FakeCompiler:
    """Compiles to bytes naming its inputs; counts calls; optional delay or failure."""

    def __init__(self, delay: float = 0.0, barrier: threading.Barrier | None = None,
                 fail: str | None = None):
        self.calls: list[tuple] = []
        self.delay, self.barrier, self.fail = delay, barrier, fail
        self._lock = threading.Lock()

    def __call__(self, source, options, arch, names):
        with self._lock:
            self.calls.append(tuple(names))
        if self.barrier is not None:
            self.barrier.wait(timeout=10)    # breaks unless all units compile at once
        time.sleep(self.delay)
        if self.fail is not None:
            raise RuntimeError(self.fail)
        blob = f"\x7fELF {arch} {' '.join(options)} {'|'.join(names)} {len(source)}".encode()
        return blob, {n: f"_Z{len(n)}{n.replace('<', 'I').replace('>', 'E')}" for n in names}


def cache(tmp_path, compiler, version="v1", **kw) -> KernelCache:
    return KernelCache(tmp_path / "kernels", compiler, version, **kw)


def test_key_names_every_input(tmp_path):
    c = cache(tmp_path, FakeCompiler())
    base = c.key(SRC, OPTS, "90", ("k<4>",))
    assert base == c.key(SRC, OPTS, "90", ("k<4>",))
    others = {c.key(SRC + " ", OPTS, "90", ("k<4>",)), c.key(SRC, OPTS[:1], "90", ("k<4>",)),
              c.key(SRC, OPTS, "80", ("k<4>",)), c.key(SRC, OPTS, "90", ("k<5>",)),
              c.key(SRC, OPTS, "90", ("k<4>", "k<5>")),
              cache(tmp_path, FakeCompiler(), "v2").key(SRC, OPTS, "90", ("k<4>",))}
    assert base not in others and len(others) == 6
    # the parts cannot run into one another (a separator between them)
    assert c.key(SRC, ("-DA", "B"), "90", ("k<4>",)) != c.key(SRC, ("-DAB",), "90", ("k<4>",))


def test_compiled_once_then_read_from_disk_by_another_cache(tmp_path):
    fake = FakeCompiler()
    first = cache(tmp_path, fake)
    got = first.get(SRC, OPTS, "90", ("k<4>", "k<8>"))
    assert fake.calls == [("k<4>", "k<8>")]
    assert got.lowered == {"k<4>": "_Z4kI4E", "k<8>": "_Z4kI8E"}
    assert got.path.read_bytes().startswith(b"\x7fELF 90")
    assert first.get(SRC, OPTS, "90", ("k<4>", "k<8>")) == got      # memo: no second compile
    assert len(fake.calls) == 1 and first.compiled == [("k<4>", "k<8>")]
    # files: the binary named by its hash, the record; no temporary files left behind
    files = sorted(p.name for p in (tmp_path / "kernels").iterdir())
    digest = hashlib.sha256(got.path.read_bytes()).hexdigest()
    key = first.key(SRC, OPTS, "90", ("k<4>", "k<8>"))
    assert files == sorted([f"{digest}.cubin", f"{key}.json"])
    # a new cache on the same folder (another process) reads it and compiles nothing
    fake2 = FakeCompiler()
    second = cache(tmp_path, fake2)
    again = second.get(SRC, OPTS, "90", ("k<4>", "k<8>"))
    assert fake2.calls == [] and second.loaded == [("k<4>", "k<8>")] and second.compiled == []
    assert again.lowered == got.lowered and again.path.read_bytes() == got.path.read_bytes()
    # another version (compiler, CuPy, driver) is another key: compiled again
    third = cache(tmp_path, fake2, version="v2")
    third.get(SRC, OPTS, "90", ("k<4>", "k<8>"))
    assert fake2.calls == [("k<4>", "k<8>")]


@pytest.mark.parametrize("damage", ["torn record", "bad binary", "missing binary",
                                    "other names", "foreign path"])
def test_a_damaged_entry_compiles_again_and_is_repaired(tmp_path, damage):
    names = ("k<4>",)
    first = cache(tmp_path, FakeCompiler())
    got = first.get(SRC, OPTS, "90", names)
    record_path = tmp_path / "kernels" / f"{first.key(SRC, OPTS, '90', names)}.json"
    record = json.loads(record_path.read_text())
    if damage == "torn record":
        record_path.write_text(record_path.read_text()[:20])
    elif damage == "bad binary":
        got.path.write_bytes(got.path.read_bytes()[:-3])
    elif damage == "missing binary":
        got.path.unlink()
    elif damage == "other names":
        record["names"] = ["k<5>"]
        record_path.write_text(json.dumps(record))
    else:
        outside = tmp_path / "elsewhere.cubin"
        outside.write_bytes(got.path.read_bytes())
        record["binary"] = "../elsewhere.cubin"
        record_path.write_text(json.dumps(record))
    fake = FakeCompiler()
    second = cache(tmp_path, fake)
    again = second.get(SRC, OPTS, "90", names)
    assert fake.calls == [names], "a damaged entry must be compiled again"
    assert again.path.read_bytes() == FakeCompiler()(SRC, OPTS, "90", names)[0]
    fake3 = FakeCompiler()
    cache(tmp_path, fake3).get(SRC, OPTS, "90", names)
    assert fake3.calls == [], "the entry was rewritten whole"


def test_concurrent_first_uses_compile_once(tmp_path):
    fake = FakeCompiler(delay=0.2)
    c = cache(tmp_path, fake)
    start = threading.Barrier(8)
    out: list = [None] * 8

    def work(i):
        start.wait()
        out[i] = c.get(SRC, OPTS, "90", ("k<4>",))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert fake.calls == [("k<4>",)]
    assert all(o == out[0] for o in out)


def test_a_call_compiles_its_missing_units_at_once(tmp_path):
    # the fake compiler waits until all three units are compiling: serial compiles would
    # break the barrier
    fake = FakeCompiler(barrier=threading.Barrier(3))
    c = cache(tmp_path, fake, workers=3)
    units = [(SRC, OPTS, "90", (f"k<{r}>",)) for r in (4, 8, 12)]
    got = c.get_many(units)
    assert sorted(fake.calls) == [("k<12>",), ("k<4>",), ("k<8>",)]
    assert [g.lowered for g in got] == [{"k<4>": "_Z4kI4E"}, {"k<8>": "_Z4kI8E"},
                                        {"k<12>": "_Z5kI12E"}]
    # one already known, one new: only the new one compiles
    fake.barrier = None
    c.get_many([units[0], (SRC, OPTS, "90", ("k<16>",))])
    assert fake.calls[-1] == ("k<16>",) and len(fake.calls) == 4


def test_a_failed_compile_reaches_every_waiter_and_is_tried_again(tmp_path):
    fake = FakeCompiler(delay=0.1, fail="error: no such template")
    c = cache(tmp_path, fake)
    errors: list = []

    def work():
        try:
            c.get(SRC, OPTS, "90", ("k<4>",))
        except RuntimeError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert errors == ["error: no such template"] * 4
    fake.fail = None
    assert c.get(SRC, OPTS, "90", ("k<4>",)).lowered == {"k<4>": "_Z4kI4E"}


def test_a_folder_that_cannot_be_written_still_compiles(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    fake = FakeCompiler()
    got = KernelCache(blocked / "kernels", fake, "v1").get(SRC, OPTS, "90", ("k<4>",))
    assert got.path.read_bytes() == fake(SRC, OPTS, "90", ("k<4>",))[0]
    assert blocked.read_text() == "not a folder"


def _python(code: str) -> subprocess.CompletedProcess:
    """``code`` run by a fresh interpreter that sees this checkout's package and the
    packages this one sees through PYTHONPATH (the device machine's wheels lie there)."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    path = os.pathsep.join(filter(None, [src, os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": path, "PATH": "/usr/bin:/bin"}, timeout=300)


def test_import_loads_neither_numba_nor_cupy():
    got = _python("import warpalign, warpalign.cli, sys\n"
                  "from warpalign import Scoring, search, Database\n"
                  "import warpalign._backends.cuda, warpalign._backends.cuda.encode\n"
                  "bad = [m for m in ('numba', 'cupy') if m in sys.modules]\n"
                  "assert not bad, bad")
    assert got.returncode == 0, got.stderr


def test_a_device_search_path_loads_no_numba():
    """A search whose engine is not the CPU one (a configured engine object standing for
    the GPU), mode "end": Numba is not loaded on the way (mode "full" traces on the CPU)."""
    code = """
import sys
import numpy as np
from warpalign import Scoring, search
from warpalign._backends.base import ScoreBatch

class Device:
    name = "cuda"
    def prepare(self, targets):
        return targets
    def scan(self, query, handle, scoring, *, algorithm, ends):
        raise AssertionError("search goes through search_batches")
    def search_batches(self, queries, handle, scoring, *, algorithm, ends, top_k, method):
        n = len(handle.offsets) - 1
        for q in queries:
            s = np.arange(n, dtype=np.int32)
            yield ScoreBatch(s, s % 3, s % 5, 0)

s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
res = search(["MKVL", "WWHE"], ["HEAGAWGHEE", "PAWHEAE", "MKV"], s, top_k=2, mode="end",
             backend=Device())
assert res[0].targets.tolist() == [0, 1], res[0].targets   # ascending length inside
assert "numba" not in sys.modules and "cupy" not in sys.modules
"""
    got = _python(code)
    assert got.returncode == 0, got.stderr
