#!/usr/bin/env python3
"""locate's "scan" method: narrow rows in 16-bit DPX lanes (two columns per 32-bit word,
``scan.NARROW_PACKED = True``, the default) against one column per 32-bit register, in one
run on the current GPU. Query of 256 cut from a random DNA reference (every 17th base
changed), references of 1, 4 and 16 Mbp, paper 002's scoring (1/-2/5/1); best of 3 calls
of ``score_end_method_gpu`` (host set-up included) per variant, each variant twice; the
results of every variant and the CPU kernel (1 Mbp) must agree.

    python bench/scan_lanes.py
"""

import time

import numpy as np

from warpalign._backends.cpu.scan import score_end_method
from warpalign._backends.cuda import scan
from warpalign.scoring import Scoring


def main() -> None:
    import cupy as cp

    s = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
    rng = np.random.default_rng(5)
    print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
    for n in (1 << 20, 1 << 22, 1 << 24):
        t = rng.integers(0, 4, n).astype(np.uint8)
        q = t[n // 3:n // 3 + 256].copy()
        q[::17] = (q[::17] + 1) % 4
        res = {}
        for packed in (True, False, True, False):
            scan.NARROW_PACKED = packed
            scan.score_end_method_gpu("scan", q, t, s)
            cp.cuda.Device().synchronize()
            ts = []
            for _ in range(3):
                t0 = time.perf_counter()
                r = scan.score_end_method_gpu("scan", q, t, s)
                cp.cuda.Device().synchronize()
                ts.append(time.perf_counter() - t0)
            res.setdefault(packed, []).append((min(ts), r))
        results = {x[1] for v in res.values() for x in v}
        if n == 1 << 20:
            results.add(score_end_method("scan", q, t, s))
        if len(results) != 1:
            raise SystemExit(f"n {n}: the variants disagree: {results}")
        for packed, v in res.items():
            b = min(x[0] for x in v)
            print(f"n {n} packed {packed}: {b:.4f} s  {256 * n / b / 1e9:.1f} GCUPS  {v[0][1]}")
    scan.NARROW_PACKED = True


if __name__ == "__main__":
    main()
