"""Where a GPU ``locate`` call's time goes (issue 6, session 13): 256 (and 128) x 33.5 M of
ce2chrX as bench/locate.py builds them, reference resident; modes score / end / full, the
scores kernel alone, the ends launch (kernel and wall), a host profile of "end" calls, and
the ends launch's sub-window width and rows per lane as knobs. Prints; writes nothing."""
# ruff: noqa: B023  (closures called inside their loop iteration)

import cProfile
import pstats
import time

import numpy as np
from _lsetup import SCORING, L, N, call, queries, reference

from warpalign._backends.cuda import windows as gw


def best(fn, repeat=9):
    import cupy as cp
    fn()
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return min(ts), float(np.median(ts)), out


def main():
    ref = reference()
    for m, q in queries(ref):
        cells = m * N
        print(f"== m={m}")
        for mode in ("score", "end", "full"):
            t, med, hit = best(lambda mode=mode: call(q, ref, mode))
            print(f"mode {mode}: {t * 1e3:.3f} ms (median {med * 1e3:.3f}) "
                  f"{cells / t / 1e9:.0f} GCUPS  hit {hit.score} {hit.query_end} {hit.target_end}")
        span = L.span_bound(q, SCORING)
        width = L.default_window(span, N, gw.wanted_windows(m))
        b = L.window_bounds(N, width, span)
        dev = gw.resident([ref])
        ks = min(gw.window_scores(dev, q, SCORING, b[:, 0], b[:, 1] - b[:, 0])[2]
                 for _ in range(5))
        print(f"scores kernel {ks * 1e3:.3f} ms {cells / ks / 1e9:.0f} GCUPS, "
              f"{len(b)} windows of {width}")
        # the ends launch as locate makes it, timed apart
        recorded = []
        orig = L._WindowScorer.ends

        def ends(self, records, rows, score=None):
            t0 = time.perf_counter()
            k0 = self.kernel_seconds
            out = orig(self, records, rows, score)
            recorded.append((time.perf_counter() - t0, self.kernel_seconds - k0, len(rows)))
            return out
        L._WindowScorer.ends = ends
        for sub in (16, 32, 64, 128):
            for rows in (8, 16):
                L.sub_window = lambda s, sub=sub: (s or 0) + sub
                gw.ENDS_ROWS = rows
                recorded.clear()
                t, _, hit = best(lambda: call(q, ref, "end"))
                wall = min(r[0] for r in recorded)
                kern = min(r[1] for r in recorded)
                print(f"ends sub=span+{sub} R={rows}: end {t * 1e3:.3f} ms "
                      f"{cells / t / 1e9:.0f} GCUPS; ends wall {wall * 1e6:.0f} us kernel "
                      f"{kern * 1e6:.0f} us tied {recorded[0][2]}  hit {hit.target_end}")
        L.sub_window = lambda s: (s or 0) + 64
        gw.ENDS_ROWS = 8
        L._WindowScorer.ends = orig
        for mode in ("score", "end"):
            pr = cProfile.Profile()
            pr.enable()
            for _ in range(20):
                call(q, ref, mode)
            pr.disable()
            print(f"-- host profile, 20 calls mode {mode}")
            pstats.Stats(pr).sort_stats("tottime").print_stats(18)


if __name__ == "__main__":
    main()
