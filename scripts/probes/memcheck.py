"""Issue 7 on one GPU: free device memory, the group count on the whole database after the
memory cap, and the 20 queries' time."""
import cupy as cp
from _setup import SCORING, database, queries, timed

from warpalign._backends import cuda as cb

qs = queries()
be = cb.CudaBackend(devices=(0,))
h = be.prepare(database())
print("free GiB", be._free_bytes() / 2**30,
      "groups", len(be._chain_groups([len(q) for q in qs], h, 27)))
print("whole database, 20 queries", timed(lambda: be.search_batches(qs, h, SCORING, top_k=10)),
      "boundary buffers", len(h.cache["rowsq2"]["boundary"]))
print(cp.cuda.runtime.getDeviceProperties(0)["name"].decode())
