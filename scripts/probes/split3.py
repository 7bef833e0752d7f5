"""Issue 7 on one GPU: target-stream group sizes (PAIR_GUIDE, PAIR_GROUP_MIN) on the whole
database and two shards of a 4-GPU split; hits must not change."""
import cupy as cp
from _setup import SCORING, database, queries, shards, timed

from warpalign._backends import cuda as cb
from warpalign._backends.cuda import config

qs = queries()
targets = database()
be = cb.CudaBackend(devices=(0,))
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
parts = shards(targets)
handles = {"whole": be.prepare(targets), "shard0": be.prepare(parts[0]),
           "shard3": be.prepare(parts[3])}
ref = {}
for guide, gmin in ((2, 2048), (4, 2048), (8, 2048), (2, 1024), (4, 1024), (1, 2048), (2, 2048)):
    config.PAIR_GUIDE, config.PAIR_GROUP_MIN = guide, gmin
    row = []
    for name, h in handles.items():
        h.cache.pop("rowsq2", None)       # the target stream's groups follow the knobs
        got = [(x.scores.tolist(), x.ids.tolist())
               for x in be.search_batches(qs, h, SCORING, top_k=10)]
        same = ref.setdefault(name, got) == got
        t = timed(lambda h=h: be.search_batches(qs, h, SCORING, top_k=10))
        row.append(f"{name} {t[0]:.4f}{'' if same else ' DIFFERENT'}")
    print(f"guide {guide} gmin {gmin}: " + " | ".join(row), flush=True)
