"""The host malloc setting made at import (``warpalign._hostmem``)."""

import os
import subprocess
import sys
import textwrap

import pytest

from warpalign import _hostmem

# the host steps' pattern: several arrays of 32,768 int64 alive at once, freed, made again
_PROBE = textwrap.dedent("""
    import resource, sys
    import warpalign, numpy as np
    a = np.arange(32768, dtype=np.int64); b = a + 3
    def step():
        return -(-a // 32) * (b + 31) * 32 + (a * 3 - b) // 7
    for _ in range(50): step()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(200): step()
    print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 200)
""")


def _faults(pad: str | None) -> float:
    env = {k: v for k, v in os.environ.items() if k != "WARPALIGN_MALLOC_TOP_PAD"}
    if pad is not None:
        env["WARPALIGN_MALLOC_TOP_PAD"] = pad
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                         text=True, check=True)
    return float(out.stdout)


def test_pad_from_environment():
    assert _hostmem.pad_from_environment(None) == _hostmem.TOP_PAD
    assert _hostmem.pad_from_environment(" ") == _hostmem.TOP_PAD
    assert _hostmem.pad_from_environment("0") == 0
    assert _hostmem.pad_from_environment("1048576") == 1 << 20
    for bad in ("-1", "64M", "1.5"):
        with pytest.raises(ValueError, match="WARPALIGN_MALLOC_TOP_PAD=.*bytes >= 0"):
            _hostmem.pad_from_environment(bad)


def test_zero_pad_sets_nothing(monkeypatch):
    monkeypatch.setenv("WARPALIGN_MALLOC_TOP_PAD", "0")
    assert _hostmem.keep_freed_memory() == 0


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc only")
def test_arrays_of_the_next_step_reuse_mapped_pages():
    # with the pad, the step's arrays fault no page in after warming up (glibc's own
    # default faulted ~100 pages a step in this pattern on the dev box and the GPU hosts)
    assert _hostmem.keep_freed_memory() == _hostmem.TOP_PAD
    assert _faults(None) <= 1.0
    assert _faults(str(64 << 20)) <= 1.0
