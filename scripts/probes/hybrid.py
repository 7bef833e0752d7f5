"""Issue 7 (session 14) on one GPU: a 4-GPU search as 2 query groups x 2 database halves
(each device: half the database, half the queries) against the 4 database quarters of
today's split, both against a quarter of the whole search's time. Query groups by packed
cost (LPT on query length). Prints the 4-GPU speed-up estimates (whole / slowest part)."""
import cupy as cp
from _setup import SCORING, database, queries, timed

from warpalign._backends import cuda as cb
from warpalign._backends.cuda import split_targets

qs = queries()
targets = database()
be = cb.CudaBackend(devices=(0,))
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
full = be.prepare(targets)
whole = timed(lambda full=full: be.search_batches(qs, full, SCORING, top_k=10), 5)
print("whole database, 20 queries", whole, flush=True)
del full
lengths = [len(q) for q in qs]
groups, load = [[], []], [0, 0]
for i in sorted(range(len(qs)), key=lambda i: -lengths[i]):
    d = load.index(min(load))
    groups[d].append(i)
    load[d] += lengths[i]
print("query groups (residues)", load, [sorted(g) for g in groups])
for parts in (4, 2):
    times = []
    for _, ts in split_targets(targets, parts):
        h = be.prepare(ts)
        for g in (groups if parts == 2 else [range(len(qs))]):
            sub = [qs[i] for i in sorted(g)]
            times.append(timed(lambda h=h, sub=sub: be.search_batches(sub, h, SCORING, top_k=10), 5))
        del h
    worst = max(t[0] for t in times)
    print(f"{'quarters x all queries' if parts == 4 else 'halves x 2 query groups'}: "
          f"{[round(t[0], 4) for t in times]} -> 4-GPU estimate {whole[0] / worst:.3f}x "
          f"(median-based {whole[1] / max(t[1] for t in times):.3f}x)", flush=True)
