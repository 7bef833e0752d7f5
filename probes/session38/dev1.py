"""session 38: score_pairs mode full / score (NumPy and CuPy inputs) on device 1 equal device
0's, and threads on both devices at once (the staging's held pinned buffers per device)."""
import sys, threading
sys.path[:0] = ["src", "bench"]
import numpy as np
import cupy as cp
from pairs_full import make
from warpalign import Scoring, score_pairs
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
P = 4096
xs, ys = make(np.random.default_rng(5), P, 128, 1024)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, 128)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, 1024)
ref = score_pairs(xs, ys, s, mode="full", backend="cuda").alignments
cpu = score_pairs(xs[:256], ys[:256], s, mode="full", backend="cpu").alignments
assert list(ref[:256]) == list(cpu), "device 0 differs from the CPU"
out = {}
def work(dev, k):
    with cp.cuda.Device(dev):
        got = [score_pairs(xs, ys, s, mode="full", backend="cuda").alignments == ref
               for _ in range(5)]
        cx, cy = cp.asarray(xs), cp.asarray(ys)
        sc = score_pairs(cx, cy, s, backend="cuda").scores
        out[dev, k] = all(got) and np.array_equal(sc, ref.scores)
ts = [threading.Thread(target=work, args=(d, k)) for d in (0, 1) for k in range(2)]
[t.start() for t in ts]; [t.join() for t in ts]
print("device results equal:", out)
assert len(out) == 4 and all(out.values())
