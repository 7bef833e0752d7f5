"""Issue 7 probe on one GPU: fixed per-device cost of a database split vs a query split."""
import cProfile
import io
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, "bench")
import cupy as cp

from search_gpu import _find, make_database, read_fasta
from warpalign import Scoring
from warpalign._backends import TargetSet
from warpalign._backends import cuda as cb
from warpalign.alphabet import PROTEIN

sc = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
_, qtext = read_fasta(_find("standard_queries20.fasta"))
qs = [PROTEIN.encode(q) for q in qtext]
targets = make_database(2024)
off = np.asarray(targets.offsets, dtype=np.int64)
lengths = np.diff(off)
be = cb.CudaBackend(devices=(0,))

def t(fn, rep=3):
    fn(); cp.cuda.Device().synchronize()
    ts = []
    for _ in range(rep):
        t0 = time.perf_counter(); fn(); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t0)
    return min(ts), float(np.median(ts))

full = be.prepare(targets)
tf = t(lambda: be.search_batches(qs, full, sc, top_k=10))
print("full 20q", tf, flush=True)
D = 4
assign = np.empty(len(lengths), dtype=np.int16); load = [0] * D
for i in np.argsort(-lengths, kind="stable").tolist():
    d = min(range(D), key=load.__getitem__); assign[i] = d; load[d] += int(lengths[i]) + 1
codes = np.asarray(targets.codes, dtype=np.uint8); per_res = np.repeat(assign, lengths)
sh = []
for d in range(D):
    ids = np.flatnonzero(assign == d)
    o = np.zeros(len(ids) + 1, dtype=np.int64); np.cumsum(lengths[ids], out=o[1:])
    h = be.prepare(TargetSet(np.ascontiguousarray(codes[per_res == d]), o))
    r = t(lambda h=h: be.search_batches(qs, h, sc, top_k=10))
    sh.append(r); print("shard", d, r, flush=True)
print("sum shards", sum(s[0] for s in sh), "max", max(s[0] for s in sh), "-> 4-GPU est speedup", tf[0] / max(s[0] for s in sh))
# query split, LPT by length
ql = [len(q) for q in qs]; qa = [[] for _ in range(D)]; ql_load = [0] * D
for i in sorted(range(len(qs)), key=lambda i: -ql[i]):
    d = min(range(D), key=ql_load.__getitem__); qa[d].append(i); ql_load[d] += ql[i]
qt = []
for d in range(D):
    sub = [qs[i] for i in sorted(qa[d])]
    r = t(lambda sub=sub: be.search_batches(sub, full, sc, top_k=10)); qt.append(r)
    print("qsplit", d, ql_load[d], r, flush=True)
print("qsplit max", max(x[0] for x in qt), "-> est speedup", tf[0] / max(x[0] for x in qt))
# where the shard's time goes: host profile + GPU busy
pr = cProfile.Profile(); pr.enable(); be.search_batches(qs, sh and h, sc, top_k=10); cp.cuda.Device().synchronize(); pr.disable()
s = io.StringIO(); pstats.Stats(pr, stream=s).sort_stats("tottime").print_stats(25); print(s.getvalue()[:6000])
