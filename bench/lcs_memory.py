#!/usr/bin/env python3
"""Memory of the full LCS of two long random strings (issue 5: O(m + n) memory).

Prints one JSON line: peak host RSS before the LCS (interpreter, NumPy, Numba, CuPy and the
CUDA context) and after it, and the peak of CuPy's device memory pool during it.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time

import numpy as np

from _common import cpu_name, emit
from warpalign.lcs import lcs


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--a", type=int, default=20_000_000)
    p.add_argument("--b", type=int, default=10_000_000)
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--out")
    args = p.parse_args(argv)
    rng = np.random.default_rng(1)
    a = rng.integers(65, 69, args.a, dtype=np.uint8).tobytes()
    b = rng.integers(65, 69, args.b, dtype=np.uint8).tobytes()
    pool = device = None
    if args.backend != "cpu":
        try:
            import cupy
            cupy.zeros(1)  # create the CUDA context before the baseline reading
            pool = cupy.get_default_memory_pool()
            device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        except ImportError:
            pass
    lcs(a[:2000], b[:2000], backend=args.backend)  # compile / load kernels
    before = peak_rss_mib()
    t0 = time.perf_counter()
    result = lcs(a, b, backend=args.backend)
    seconds = time.perf_counter() - t0
    record = {"job": "lcs", "scope": "item", "backend": args.backend, "method": "lcs memory",
              "device": device or cpu_name(), "params": {"a": args.a, "b": args.b,
              "lcs_length": len(result)}, "seconds": seconds,
              "gcups": args.a * args.b / seconds / 1e9,
              "host_peak_rss_mib_before": round(before, 1),
              "host_peak_rss_mib_after": round(peak_rss_mib(), 1),
              "device_pool_total_mib": None if pool is None else round(pool.total_bytes() / 2**20, 1),
              "baseline": "host RSS before the LCS (libraries and CUDA context)",
              "command": "python bench/lcs_memory.py " + " ".join(argv or sys.argv[1:])}
    with open(args.out, "a") if args.out else open("/dev/null", "w") as out:
        emit(record, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
