"""The best windows' ends on the device (session 13): wall time of window_cells with and
without ``best_ends``, and the GPU time of what ``best_ends`` queues (win_pick, the memset,
win_ends; CUDA events around _BestEnds.launch), 256 and 128 x 33.5 M of ce2chrX, best of
20; and a "full" call's traceback on the host (align_from_end, timed apart). Prints."""

import time

import cupy as cp
import numpy as np
from _lsetup import SCORING, L, N, queries, reference

from warpalign._backends.cuda import windows as gw


def main():
    ref = reference()
    gpu_times = []
    launch = gw._BestEnds.launch

    def timed_launch(self, *a, **k):
        e0, e1 = cp.cuda.Event(), cp.cuda.Event()
        e0.record()
        launch(self, *a, **k)
        e1.record()
        gpu_times.append((e0, e1))
    gw._BestEnds.launch = timed_launch
    for m, q in queries(ref):
        span = L.span_bound(q, SCORING)
        b = L.window_bounds(N, L.default_window(span, N, gw.wanted_windows(m)), span)
        b.setflags(write=False)
        dev = gw.resident([ref])
        starts, lengths = gw.windows_of(dev, np.column_stack([np.zeros(len(b), np.int64), b]))
        dq = gw.DeviceQuery(q, SCORING)
        walls = {False: [], True: []}
        for _ in range(21):
            for best in (False, True):
                t0 = time.perf_counter()
                gw.window_cells(dev, q, SCORING, starts, lengths, query=dq, best_ends=best,
                                timed=False)
                walls[best].append(time.perf_counter() - t0)
        gpu = min(cp.cuda.get_elapsed_time(a, b) for a, b in gpu_times[1:]) * 1e3
        gpu_times.clear()
        print(f"m={m}: window_cells {min(walls[False][1:]) * 1e6:.0f} us, with best_ends "
              f"{min(walls[True][1:]) * 1e6:.0f} us; GPU time of pick + ends {gpu:.0f} us")
        hit = L.locate_encoded(q, ["ref"], [ref], SCORING, mode="end", backend="cuda")
        from warpalign.traceback import align_from_end
        qe, te, s = hit.query_end, hit.target_end, hit.score
        seg = L.span_bound(q[:qe], SCORING, s)
        lo = te - seg
        ts = []
        for _ in range(21):
            t0 = time.perf_counter()
            align_from_end(q[:qe], ref[lo:te], SCORING, s, qe, te - lo, "local", check_end=True)
            ts.append(time.perf_counter() - t0)
        print(f"  traceback {qe} x {seg}: {min(ts[1:]) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
