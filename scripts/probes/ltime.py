"""GPU ``locate`` call time per mode (256 and 128 x 33.5 M of ce2chrX as bench/locate.py
builds them, reference resident, best and median of 20 calls) for whichever warpalign is
first on PYTHONPATH: run it twice, with this checkout's src and with an older copy, on one
machine to compare them. Prints; writes nothing."""

import importlib
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, "bench")

import locate as bench_locate
from warpalign.scoring import Scoring

L = importlib.import_module("warpalign.locate")
SCORING = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
N = 1 << 25


def main():
    ref = bench_locate.load_reference(Path(bench_locate.CHRX), N, SCORING)
    ref.setflags(write=False)
    rng = np.random.default_rng(2)
    print("warpalign from", Path(L.__file__).parent)
    for m in (256, 128):
        start = int(rng.integers(0, N - m))
        q = ref[start:start + m].copy()
        flip = rng.random(m) < 0.05
        q[flip] = (q[flip] + 1) % 4
        for mode in ("score", "end", "full"):
            ts = []
            for _ in range(21):
                t0 = time.perf_counter()
                hit = L.locate_encoded(q, ["ref"], [ref], SCORING, mode=mode,
                                       method="windows", backend="cuda")
                ts.append(time.perf_counter() - t0)
            t = min(ts[1:])
            print(f"m={m} {mode}: {t * 1e3:.3f} ms {m * N / t / 1e9:.0f} GCUPS (median "
                  f"{np.median(ts[1:]) * 1e3:.3f}) hit {hit.score} {hit.query_end} "
                  f"{hit.target_end} {hit.target_start}")


if __name__ == "__main__":
    main()
