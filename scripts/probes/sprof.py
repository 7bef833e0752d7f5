"""Issue 7, session 15: the host time of one device's packed-batch start
(CudaBackend._packed_start: query check, tables, query groups, profile uploads, result
buffers) on shard 0 of the 4-GPU split, alone and under cProfile. Prints only."""
import cProfile
import pstats
import time

from _setup import SCORING as sc
from _setup import database, queries, shards

from warpalign._backends import cuda as cb

qs = queries()
part = shards(database())[0]
be = cb.CudaBackend(devices=(0,))
h = be.prepare(part)
be.search_batches(qs, h, sc, top_k=10)
ts = []
for _ in range(30):
    t0 = time.perf_counter()
    job = be._packed_start(qs, h, sc)
    ts.append(time.perf_counter() - t0)
    t0 = time.perf_counter()
    be._packed_launch(job, 1)
    ts[-1] = (ts[-1], time.perf_counter() - t0)
    be._packed_launch(job)
    be._packed_cut(job, 10)
    be._packed_finish(job, 10)
ts.sort()
print("start, first launches (ms): " + " ".join(f"{a * 1e3:.3f}/{b * 1e3:.3f}" for a, b in ts[:10]))
prof = cProfile.Profile()
for _ in range(20):
    prof.enable()
    job = be._packed_start(qs, h, sc)
    prof.disable()
    be._packed_launch(job)
    be._packed_cut(job, 10)
    be._packed_finish(job, 10)
pstats.Stats(prof).sort_stats("tottime").print_stats(22)
