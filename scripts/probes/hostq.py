"""Issue 7 (session 14): one device's host time before and while it queues a packed
search, for whichever warpalign is first on PYTHONPATH (run with this checkout's src and
with an older copy on one machine). On one GPU: the whole database and shard 0 of the
4-GPU split; per call the time to the first pass launch (set-up: batch plan, tables,
chain groups, profile upload), the launch loop (``_launch_passes``, both groups), and the
whole search; medians of 9 calls, and a host profile of the set-up. Prints only."""
import cProfile
import pstats
import time
from pathlib import Path

import cupy as cp
import numpy as np
from _setup import SCORING, database, queries, shards

from warpalign._backends import cuda as cb

qs = queries()
targets = database()
marks = []
orig = cb.CudaBackend._launch_passes


def launch_passes(self, *a, **k):
    marks.append(("L0", time.perf_counter()))
    r = orig(self, *a, **k)
    marks.append(("L1", time.perf_counter()))
    return r


cb.CudaBackend._launch_passes = launch_passes
print("warpalign from", Path(cb.__file__).parents[2])
be = cb.CudaBackend()
for name, ts in (("whole", targets), ("shard0", shards(targets)[0])):
    h = be.prepare(ts)
    be.search_batches(qs, h, SCORING, top_k=10)
    cp.cuda.Device().synchronize()
    rows = []
    for _ in range(9):
        marks.clear()
        t0 = time.perf_counter()
        be.search_batches(qs, h, SCORING, top_k=10)
        t = time.perf_counter() - t0
        l0 = [m for k, m in marks if k == "L0"]
        l1 = [m for k, m in marks if k == "L1"]
        rows.append((l0[0] - t0, sum(b - a for a, b in zip(l0, l1)), l1[-1] - t0, t))
    a = np.median(np.array(rows), axis=0) * 1e3
    print(f"{name}: to first launch {a[0]:.3f} ms, launch loops {a[1]:.3f} ms "
          f"(groups {len(marks) // 2}), all queued {a[2]:.3f} ms, search {a[3]:.2f} ms")
    prof = cProfile.Profile()
    marks.clear()
    prof.enable()
    be.search_batches(qs, h, SCORING, top_k=10)
    prof.disable()
    st = pstats.Stats(prof)
    st.sort_stats("tottime").print_stats(12)
    del h
