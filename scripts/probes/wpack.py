"""Issue 6 (session 14): the windows scores kernel reading packed columns (win_ypack) or
the reference, on locate's first-pass windows of 256 and 128 x 33.5 M (kernel time by CUDA
events, fastest of 7; the packing once per layout, timed apart). Prints only."""
import time

import cupy as cp
import numpy as np
from _lsetup import SCORING, L, N, queries, reference

from warpalign._backends.cuda import windows as gw


def main():
    ref = reference()
    dev = gw.resident([ref])
    for m, q in queries(ref):
        first = L.first_pass_span(q, SCORING)
        for span, what in ((first, "first pass"), (L.span_bound(q, SCORING), "full overlap")):
            b = L.window_bounds(N, L.default_window(span, N, gw.wanted_windows(m)), span)
            lo, length = b[:, 0], b[:, 1] - b[:, 0]
            lo.setflags(write=False)
            length.setflags(write=False)
            out = {}
            for packed in (False, True, False, True):
                gw.PACKED_COLUMNS = packed
                t0 = time.perf_counter()
                scores, _, _ = gw.window_scores(dev, q, SCORING, lo, length)
                cp.cuda.Device().synchronize()
                first_call = time.perf_counter() - t0
                ts = [gw.window_scores(dev, q, SCORING, lo, length)[2] for _ in range(7)]
                out.setdefault(packed, []).append((min(ts), first_call, scores))
            a, b_ = out[False], out[True]
            assert np.array_equal(a[0][2], b_[0][2])
            cells = m * N
            print(f"m={m} {what} (span {span}, {len(lo)} windows of {length.max()}): "
                  f"reference {min(x[0] for x in a) * 1e3:.3f} ms "
                  f"({cells / min(x[0] for x in a) / 1e9:.0f} GCUPS), packed "
                  f"{min(x[0] for x in b_) * 1e3:.3f} ms ({cells / min(x[0] for x in b_) / 1e9:.0f}); "
                  f"first packed call {b_[0][1] * 1e3:.2f} ms, scores equal")


if __name__ == "__main__":
    main()
