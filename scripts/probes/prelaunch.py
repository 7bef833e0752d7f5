"""Issue 7 (session 14): one device's host work before its first pass launch in a packed
search (shard 0 of the 4-GPU split on one GPU): the search is cut at `_launch_passes`
and profiled over 100 calls (cProfile, cumulative), and the top-k selection
(`_cut`, the one-kernel cut since session 16; `_select_many` before) timed alone.
Prints only."""
import cProfile
import pstats
import time

import cupy as cp
import numpy as np
from _setup import SCORING, database, queries, shards

from warpalign._backends import cuda as cb


class Cut(Exception):
    pass


qs = queries()
be = cb.CudaBackend()
h = be.prepare(shards(database())[0])
be.search_batches(qs, h, SCORING, top_k=10)
orig = cb.CudaBackend._launch_passes


def cut(self, *a, **k):
    raise Cut


cb.CudaBackend._launch_passes = cut
ts = []
for _ in range(30):
    t0 = time.perf_counter()
    try:
        be.search_batches(qs, h, SCORING, top_k=10)
    except Cut:
        ts.append(time.perf_counter() - t0)
print(f"to the first launch: min {min(ts) * 1e6:.0f} us, median {np.median(ts) * 1e6:.0f} us")
pr = cProfile.Profile()
pr.enable()
for _ in range(100):
    try:
        be.search_batches(qs, h, SCORING, top_k=10)
    except Cut:
        pass
pr.disable()
pstats.Stats(pr).sort_stats("cumulative").print_stats(30)
cb.CudaBackend._launch_passes = orig
got = be._scan_packed_device(qs, h, SCORING)
cp.cuda.Device().synchronize()
ts = []
for _ in range(20):
    t0 = time.perf_counter()
    be._cut(got, h.n, 10)
    ts.append(time.perf_counter() - t0)
print(f"_cut (20 queries, {h.n} targets): min {min(ts) * 1e3:.3f} ms, median "
      f"{np.median(ts) * 1e3:.3f} ms")
