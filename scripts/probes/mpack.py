"""Issue 7, session 15: time stamps through a multi-GPU search that queues every
device's packed batch from the calling thread (CudaBackend._search_multi_packed):
per device the start (profile upload, buffers), the first and the other launches, the
top-k cut queued, and the finish (wait, copy read, host cut); then the totals of 1 and
4 GPUs (min and median of 9 after a warm-up). Prints only."""
import time

import cupy as cp
from _setup import SCORING as sc
from _setup import database, queries

from warpalign._backends import cuda as cb

qs = queries()
targets = database()
log = []


def wrap(name, tag):
    orig = getattr(cb.CudaBackend, name)

    def f(self, *a, **k):
        t0 = time.perf_counter()
        r = orig(self, *a, **k)
        log.append((tag, cp.cuda.runtime.getDevice(), t0, time.perf_counter()))
        return r
    setattr(cb.CudaBackend, name, f)


for name, tag in (("_packed_start", "S"), ("_packed_launch", "L"), ("_packed_cut", "C"),
                  ("_packed_finish", "F")):
    wrap(name, tag)
totals = {}
for ngpu in (4, 1, 4):
    be = cb.CudaBackend(devices=tuple(range(ngpu)))
    h = be.prepare(targets)
    be.search_batches(qs, h, sc, top_k=10)
    ts = []
    for rep in range(9):
        log.clear()
        T0 = time.perf_counter()
        be.search_batches(qs, h, sc, top_k=10)
        ts.append(time.perf_counter() - T0)
    ts.sort()
    totals.setdefault(ngpu, []).append((ts[0], ts[len(ts) // 2]))
    print(f"gpus {ngpu}: min {ts[0]:.4f} median {ts[len(ts) // 2]:.4f} s", flush=True)
    for d in range(ngpu):
        print("  dev", d, " ".join(f"{k[0]}:{(k[2] - T0) * 1e3:.2f}-{(k[3] - T0) * 1e3:.2f}"
                                   for k in sorted(log, key=lambda x: x[2]) if k[1] == d))
    del h, be
one = totals[1][0][1]
for a, b in totals[4]:
    print(f"4 GPUs: median speed-up {one / b:.4f}x (min-based {totals[1][0][0] / a:.4f}x)")
