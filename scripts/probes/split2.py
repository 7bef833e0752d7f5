"""Issue 7 on one GPU: the whole database and the four shards of a 4-GPU split with the
packed batch forced into k = 1 ... 4 query groups (config.chain_groups' own choice too);
hits must not change with k."""
import cupy as cp
from _setup import SCORING, database, queries, shards, timed

from warpalign._backends import cuda as cb
from warpalign._backends.cuda import config

qs = queries()
targets = database()
be = cb.CudaBackend(devices=(0,))
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
choose = config.chain_groups


def force(k):
    """k groups as chain_groups would form them (None: its own choice)."""
    def forced(lengths, share, kp, smem, most=config.CHAIN_GROUPS):
        groups = [list(g) for g in config._group_costs(tuple(lengths), kp, smem, k)[-1][0]]
        groups[0] += [i for i, m in enumerate(lengths) if m == 0]
        return [sorted(g) for g in groups]
    config.chain_groups = choose if k is None else forced


def hits(res):
    return [(x.scores.tolist(), x.ids.tolist()) for x in res]


sets = {"whole": targets, **{f"shard{d}": s for d, s in enumerate(shards(targets))}}
for name, ts in sets.items():
    h = be.prepare(ts)
    ref = None
    for k in (None, 1, 2, 3, 4):
        force(k)
        got = hits(be.search_batches(qs, h, SCORING, top_k=10))
        ref = ref or got
        print(name, "groups", k or "auto", timed(lambda h=h: be.search_batches(qs, h, SCORING, top_k=10)),
              "same" if got == ref else "DIFFERENT", flush=True)
    del h
force(None)
