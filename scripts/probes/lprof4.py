"""Where a GPU ``locate`` call's host time goes (issue 6, session 13), by time stamps:
entry -> the scores kernel's launch (P), the launch -> every launch queued, the wait for
the GPU and the parsing of the results, _launch's return -> locate's return (Q: _Search's
picks, the alignment); and the scores kernel alone (CUDA events). 256 x 33.5 M of
ce2chrX as bench/locate.py builds them, reference resident; best of 15 per mode.
Prints; writes nothing."""

import gc
import time

import cupy as cp
import numpy as np
from _lsetup import SCORING, L, N, call, queries, reference

from warpalign._backends.cuda import windows as gw

STAMPS = {}


def stamp(name):
    STAMPS.setdefault(name, time.perf_counter())


def main():
    get_module = gw.get_module

    def module(f, names, defines=()):
        mod = get_module(f, names, defines)

        class Wrapped:
            @staticmethod
            def get_function(name):
                fn = mod.get_function(name)
                if not name.startswith("win_s16"):
                    return fn

                def stamped(*a, **k):
                    stamp("launch")
                    return fn(*a, **k)
                return stamped
        return Wrapped
    gw.get_module = module
    pinned = cp.cuda.alloc_pinned_memory

    def alloc_pinned_memory(n):   # _launch: every launch queued, the copy back next
        stamp("queued")
        return pinned(n)
    cp.cuda.alloc_pinned_memory = alloc_pinned_memory
    launch = gw._launch

    def _launch(*a, **k):
        out = launch(*a, **k)
        stamp("parsed")
        return out
    gw._launch = _launch
    for obj, name in ((gw.DeviceQuery, "__init__"), (gw, "_layout"), (gw, "resident"),
                      (L._Search, "__init__"), (L._WindowScorer, "windows"),
                      (L._WindowScorer, "__init__"), (L, "_pieces")):
        def wrap(fn, label):
            def inner(*a, **k):
                stamp(label + ">")
                out = fn(*a, **k)
                stamp(label + "<")
                return out
            return inner
        setattr(obj, name, wrap(getattr(obj, name), f"{getattr(obj, '__name__', '')}.{name}"))
    ref = reference()
    m, q = next(queries(ref, (256,)))
    span = L.span_bound(q, SCORING)
    b = L.window_bounds(N, L.default_window(span, N, gw.wanted_windows(m)), span)
    dev = gw.resident([ref])
    kernel = min(gw.window_scores(dev, q, SCORING, b[:, 0], b[:, 1] - b[:, 0])[2]
                 for _ in range(5))
    print(f"scores kernel {kernel * 1e6:.0f} us")
    for mode in ("score", "end", "full"):
        rows = []
        for _ in range(16):
            STAMPS.clear()
            t0 = time.perf_counter()
            call(q, ref, mode)
            t1 = time.perf_counter()
            s = STAMPS
            rows.append((t1 - t0, s["launch"] - t0, s["queued"] - s["launch"],
                         s["parsed"] - s["queued"], t1 - s["parsed"]))
            if mode != "score" and len(rows) == 16:
                print("  stamps:", ", ".join(f"{k} {(v - t0) * 1e6:.0f}" for k, v in
                                             sorted(s.items(), key=lambda kv: kv[1])))
        gc.disable()
        for _ in range(8):
            STAMPS.clear()
            t0 = time.perf_counter()
            call(q, ref, mode)
            t1 = time.perf_counter()
            rows.append((t1 - t0, STAMPS["launch"] - t0, 0, 0, 0))
        gc.enable()
        print(f"  gc off: total {min(r[0] for r in rows[-8:]) * 1e6:.0f} P "
              f"{min(r[1] for r in rows[-8:]) * 1e6:.0f}")
        rows = rows[:16]
        r = np.array(rows[1:]) * 1e6
        best = r[np.argmin(r[:, 0])]
        med = np.median(r, axis=0)
        print(f"{mode}: total {best[0]:.0f} us = P {best[1]:.0f} + launch->queued {best[2]:.0f}"
              f" + sync and parse {best[3]:.0f} + Q {best[4]:.0f}   (medians {med[0]:.0f} = "
              f"{med[1]:.0f} + {med[2]:.0f} + {med[3]:.0f} + {med[4]:.0f})")


if __name__ == "__main__":
    main()
