"""Helpers every benchmark script shares: device names and JSON-lines output."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from warpalign._backends import cpu_name, usable_cores  # noqa: F401 (re-exported)

#: ../shared/data beside the checkout, or WARPALIGN_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("WARPALIGN_SHARED_DATA",
                                  Path(__file__).resolve().parents[2] / "shared" / "data"))


def emit(record: dict, out=None) -> None:
    """Print one JSON line (and append it to the open file ``out``)."""
    line = json.dumps(record)
    print(line, flush=True)
    if out is not None:
        out.write(line + "\n")
        out.flush()


def timed(run, repeat: int):
    """Call ``run()`` ``max(1, repeat)`` times: (the last result, the seconds of each call)."""
    times, result = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - t0)
    return result, times
