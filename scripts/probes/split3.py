"""Issue 7: target-stream group sizes (PAIR_GUIDE, PAIR_GROUP_MIN) on a shard of 4 and the whole database."""
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
off = np.asarray(targets.offsets, dtype=np.int64); lengths = np.diff(off)
be = cb.CudaBackend(devices=(0,))
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), flush=True)
D = 4
assign = np.empty(len(lengths), dtype=np.int16); load = [0] * D
for i in np.argsort(-lengths, kind="stable").tolist():
    d = min(range(D), key=load.__getitem__); assign[i] = d; load[d] += int(lengths[i]) + 1
codes = np.asarray(targets.codes, dtype=np.uint8); per_res = np.repeat(assign, lengths)
hs = {"full": be.prepare(targets)}
for d in (0, 3):
    ids = np.flatnonzero(assign == d)
    o = np.zeros(len(ids) + 1, dtype=np.int64); np.cumsum(lengths[ids], out=o[1:])
    hs[f"shard{d}"] = be.prepare(TargetSet(np.ascontiguousarray(codes[per_res == d]), o))
ref = {}
for guide, gmin in ((2, 2048), (4, 2048), (8, 2048), (2, 1024), (4, 1024), (1, 2048), (2, 2048)):
    config.PAIR_GUIDE, config.PAIR_GROUP_MIN = guide, gmin
    row = []
    for name, h in hs.items():
        h.cache.pop("rowsq2", None)
        r = be.search_batches(qs, h, sc, top_k=10); cp.cuda.Device().synchronize()
        key = [(x.scores.tolist(), x.ids.tolist()) for x in r]
        ok = ref.setdefault(name, key) == key
        ts = []
        for _ in range(3):
            t0 = time.perf_counter(); be.search_batches(qs, h, sc, top_k=10); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t0)
        row.append(f"{name} {min(ts):.4f}{'' if ok else ' DIFFERENT'}")
    print(f"guide {guide} gmin {gmin}: " + " | ".join(row), flush=True)
