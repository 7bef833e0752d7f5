"""locate on the GPU with the best windows' ends found on the device right after the
scores (``best_ends``, session 13) against the host round trip before it (``want_ends``
forced off, so the ends come from the second launch): 256 and 128 x 33.5 M of ce2chrX as
bench/locate.py builds them, reference resident, modes score / end / full, best of 15
calls each, the two variants interleaved. Prints; writes nothing."""


import time

import numpy as np
from _lsetup import L, N, call, queries, reference


def main():
    ref = reference()
    init = L._WindowScorer.__init__

    def old_init(self, engine, q, scoring, want_ends=False):
        init(self, engine, q, scoring, False)
    for m, q in queries(ref):
        for mode in ("score", "end", "full"):
            times = {"new": [], "old": []}
            hits = {}
            for _ in range(16):
                for variant in ("new", "old"):
                    L._WindowScorer.__init__ = init if variant == "new" else old_init
                    t0 = time.perf_counter()
                    hit = call(q, ref, mode)
                    times[variant].append(time.perf_counter() - t0)
                    hits[variant] = (hit.score, hit.query_end, hit.target_end, hit.target_start)
            L._WindowScorer.__init__ = init
            line = [f"m={m} {mode}:"]
            for v in ("new", "old"):
                t = min(times[v][1:])
                line.append(f"{v} {t * 1e3:.3f} ms {m * N / t / 1e9:.0f} GCUPS "
                            f"(median {np.median(times[v][1:]) * 1e3:.3f})")
            line.append(f"same={hits['new'] == hits['old']} {hits['new']}")
            print("  ".join(line))


if __name__ == "__main__":
    main()
