import sys
import time

import cupy as cp

sys.path.insert(0, "bench")
from search_gpu import _find, make_database, read_fasta
from warpalign import Scoring
from warpalign._backends import cuda as cb
from warpalign.alphabet import PROTEIN

sc = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
_, qtext = read_fasta(_find("standard_queries20.fasta"))
qs = [PROTEIN.encode(q) for q in qtext]
be = cb.CudaBackend(devices=(0,))
h = be.prepare(make_database(2024))
print("free GiB", be._free_bytes() / 2**30, "groups", len(be._chain_groups([len(q) for q in qs], h, 27)))
be.search_batches(qs, h, sc, top_k=10); cp.cuda.Device().synchronize()
ts = []
for _ in range(3):
    t0 = time.perf_counter(); be.search_batches(qs, h, sc, top_k=10); cp.cuda.Device().synchronize(); ts.append(time.perf_counter() - t0)
print("whole database, 20 queries", [round(t, 4) for t in ts], "buffers", len(h.cache["rowsq2"]["boundary"]))
