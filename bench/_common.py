"""Helpers every benchmark script shares: device names and JSON-lines output."""

from __future__ import annotations

import json
import os
import platform
from pathlib import Path

#: ../shared/data beside the checkout, or WARPALIGN_SHARED_DATA.
SHARED_DATA = Path(os.environ.get("WARPALIGN_SHARED_DATA",
                                  Path(__file__).resolve().parents[2] / "shared" / "data"))


def cpu_name() -> str:
    """The CPU's model name as the kernel reports it."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def usable_cores() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def emit(record: dict, out=None) -> None:
    """Print one JSON line (and append it to the open file ``out``)."""
    line = json.dumps(record)
    print(line, flush=True)
    if out is not None:
        out.write(line + "\n")
        out.flush()
