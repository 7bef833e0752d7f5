"""Issue 7 on one GPU: the four shards of a 4-GPU split against a quarter of the whole
database's time, a query split (LPT by length) for comparison, and where a shard's time
goes on the host (cProfile)."""
import cProfile
import io
import pstats

import cupy as cp
from _setup import SCORING, database, queries, shards, timed

from warpalign._backends import cuda as cb

qs = queries()
targets = database()
be = cb.CudaBackend(devices=(0,))
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
full = be.prepare(targets)
whole = timed(lambda: be.search_batches(qs, full, SCORING, top_k=10))
print("whole database", whole, flush=True)
times = []
for d, part in enumerate(shards(targets)):
    h = be.prepare(part)
    times.append(timed(lambda h=h: be.search_batches(qs, h, SCORING, top_k=10)))
    print("shard", d, times[-1], flush=True)
print("sum of shards", sum(t[0] for t in times), "4-GPU estimate", whole[0] / max(t[0] for t in times))
lengths = [len(q) for q in qs]
groups, load = [[] for _ in range(4)], [0] * 4
for i in sorted(range(len(qs)), key=lambda i: -lengths[i]):
    d = load.index(min(load))
    groups[d].append(i)
    load[d] += lengths[i]
split = [timed(lambda g=g: be.search_batches([qs[i] for i in sorted(g)], full, SCORING, top_k=10))
         for g in groups]
print("query split", split, "4-GPU estimate", whole[0] / max(t[0] for t in split))
pr = cProfile.Profile()
pr.enable()
be.search_batches(qs, h, SCORING, top_k=10)
cp.cuda.Device().synchronize()
pr.disable()
out = io.StringIO()
pstats.Stats(pr, stream=out).sort_stats("tottime").print_stats(25)
print(out.getvalue()[:6000])
