"""GPU ``locate`` call time per mode (256 and 128 x 33.5 M of ce2chrX as bench/locate.py
builds them, reference resident, best and median of 20 calls) for whichever warpalign is
first on PYTHONPATH: run it twice, with this checkout's src and with an older copy, on one
machine to compare them. Prints; writes nothing."""

import time
from pathlib import Path

import numpy as np
from _lsetup import L, N, call, queries, reference


def main():
    ref = reference()
    print("warpalign from", Path(L.__file__).parent)
    for m, q in queries(ref):
        for mode in ("score", "end", "full"):
            ts = []
            for _ in range(21):
                t0 = time.perf_counter()
                hit = call(q, ref, mode)
                ts.append(time.perf_counter() - t0)
            t = min(ts[1:])
            print(f"m={m} {mode}: {t * 1e3:.3f} ms {m * N / t / 1e9:.0f} GCUPS (median "
                  f"{np.median(ts[1:]) * 1e3:.3f}) hit {hit.score} {hit.query_end} "
                  f"{hit.target_end} {hit.target_start}")


if __name__ == "__main__":
    main()
