"""session 38 A/B: python ab38.py SRC LABEL REPEAT -- pairs mode full (NumPy, 32,768 x 128 x
1,024, bench/pairs_full.py's pairs) and the CuPy score row (32,768 x 128 x 4,096) through
score_pairs from the tree SRC; medians and a digest of the full table."""
import hashlib, sys, time
src, label, rep = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path[:0] = [src]
import numpy as np
import cupy as cp
import warpalign
from warpalign import Scoring, score_pairs
assert warpalign.__file__.startswith(src), warpalign.__file__
sys.path.insert(1, "bench")
from pairs_full import make      # (it puts the checkout's src first: warpalign is in already)
assert warpalign.__file__.startswith(src), warpalign.__file__
P = 32768
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
xs, ys = make(np.random.default_rng(3), P, 128, 1024)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, 128)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, 1024)
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))]); cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
calls = {"full": lambda: score_pairs(xs, ys, s, mode="full", backend="cuda"),
         "cupy": lambda: score_pairs(cx, cy, s2, backend="cuda"),
         "cupy_ww": lambda: score_pairs(cx, cy, s2, backend="cuda", method="wordwise",
                                        batch_residues=None)}
out = {}
for name, call in calls.items():
    call(); call()
    ts = []
    for _ in range(rep):
        t = time.perf_counter(); r = call(); ts.append(time.perf_counter() - t); del r
    ts.sort()
    out[name] = (round(ts[len(ts) // 2] * 1e3, 3), round(ts[len(ts) // 10] * 1e3, 3))
t = calls["full"]().alignments
h = hashlib.sha1()
for col in (t.scores, t.query_starts, t.query_ends, t.target_starts, t.target_ends, t.lengths,
            t.cigar_offsets, t.aligned_offsets, t.identities):
    h.update(np.ascontiguousarray(col).tobytes())
h.update(t.cigar_text.encode()); h.update(t.query_text.encode()); h.update(t.target_text.encode())
c = calls["cupy"]().scores
print(label, "full median/p10 ms", out["full"], "cupy median/p10 ms", out["cupy"], "ww", out["cupy_ww"],
      "digest", h.hexdigest()[:12], hashlib.sha1(c.tobytes()).hexdigest()[:12], flush=True)
