"""Issue 7 probe on one GPU: shard searches with the packed batch split into k concurrent query groups."""
import sys
import time

import numpy as np

sys.path.insert(0, "bench")
import cupy as cp

from search_gpu import _find, make_database, read_fasta
from warpalign import Scoring
from warpalign._backends import TargetSet
from warpalign._backends import cuda as cb
from warpalign._backends.cuda import config
from warpalign.alphabet import PROTEIN

sc = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
_, qtext = read_fasta(_find("standard_queries20.fasta"))
qs = [PROTEIN.encode(q) for q in qtext]
targets = make_database(2024)
off = np.asarray(targets.offsets, dtype=np.int64)
lengths = np.diff(off)
be = cb.CudaBackend(devices=(0,))
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)

def t(fn, rep=3):
    r = fn(); cp.cuda.Device().synchronize()
    ts = []
    for _ in range(rep):
        t0 = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t0)
    return round(min(ts), 4), round(float(np.median(ts)), 4), r

def force(k):
    if k is None:
        config.CHAIN_SHARE, config.CHAIN_GROUPS = 0.5, 4
    else:
        config.CHAIN_SHARE, config.CHAIN_GROUPS = 1e-9, k

def key(res):
    return [(x.scores.tolist(), x.ids.tolist()) for x in res]

full = be.prepare(targets)
base = None
for k in (None, 1, 2, 4):
    force(k)
    a, b, r = t(lambda: be.search_batches(qs, full, sc, top_k=10))
    base = base or a
    print("full k", k, "groups", len(be._chain_groups([len(q) for q in qs], full)), a, b, flush=True)
D = 4
assign = np.empty(len(lengths), dtype=np.int16); load = [0] * D
for i in np.argsort(-lengths, kind="stable").tolist():
    d = min(range(D), key=load.__getitem__); assign[i] = d; load[d] += int(lengths[i]) + 1
codes = np.asarray(targets.codes, dtype=np.uint8); per_res = np.repeat(assign, lengths)
best = {}
for d in range(D):
    ids = np.flatnonzero(assign == d)
    o = np.zeros(len(ids) + 1, dtype=np.int64); np.cumsum(lengths[ids], out=o[1:])
    h = be.prepare(TargetSet(np.ascontiguousarray(codes[per_res == d]), o))
    ref = None
    for k in (None, 1, 2, 3, 4):
        force(k)
        a, b, r = t(lambda h=h: be.search_batches(qs, h, sc, top_k=10))
        ref = ref or key(r)
        best.setdefault(k, []).append(a)
        print("shard", d, "k", k, "groups", len(be._chain_groups([len(q) for q in qs], h)), a, b, "same" if key(r) == ref else "DIFFERENT", flush=True)
    del h
for k, v in best.items():
    print("k", k, "max shard", max(v), "est 4-GPU speedup", round(base / max(v), 3))
force(None)
