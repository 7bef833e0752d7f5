"""Issue 6 (session 14): where a GPU ``locate`` call's time goes, by time stamps (median
of 40 calls per mode, 256 x 33.5 M, reference resident): entry -> scorer made -> query
uploaded -> scores kernel launched -> ends launched -> results parsed -> search set up ->
(mode "full") traceback -> return. Prints only."""
import time

import numpy as np
from _lsetup import L, call, queries, reference

from warpalign._backends.cuda import windows as gw

T = []


def stamp(name):
    T.append((name, time.perf_counter()))


def wrap(obj, attr, before=None, after=None):
    fn = getattr(obj, attr)

    def inner(*a, **k):
        if before:
            stamp(before)
        out = fn(*a, **k)
        if after:
            stamp(after)
        return out
    setattr(obj, attr, inner)


def main():
    ref = reference()
    _, q = next(queries(ref, (256,)))
    wrap(L._WindowScorer, "__init__", after="scorer")
    wrap(gw.DeviceQuery, "__init__", before="query>", after="query<")
    wrap(gw, "_layout", after="layout")
    wrap(gw._BestEnds, "launch", before="s16 queued", after="ends queued")
    wrap(gw._BestEnds, "read", before="synced+parsed")
    wrap(gw, "_launch", after="launch returned")
    wrap(L._Search, "close_seams", after="seams checked")
    wrap(L._Search, "_align", before="align>", after="align<")
    for mode in ("end", "full", "score"):
        rows = {}
        for rep in range(41):
            T.clear()
            t0 = time.perf_counter()
            call(q, ref, mode)
            t1 = time.perf_counter()
            if rep == 0:
                continue
            prev = t0
            for name, t in T:
                rows.setdefault(name, []).append((t - prev) * 1e6)
                prev = t
            rows.setdefault("return", []).append((t1 - prev) * 1e6)
            rows.setdefault("TOTAL", []).append((t1 - t0) * 1e6)
        print(f"mode {mode}: " + ", ".join(f"{k} {np.median(v):.0f}" for k, v in rows.items()))


if __name__ == "__main__":
    main()
