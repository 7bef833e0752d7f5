"""session 38 pf38b: which of the bench's input forms, once alive, slows the CuPy row: added
one at a time (cumulative), 41 calls after each."""
import sys, time
sys.path[:0] = ["src", "bench"]
import numpy as np
import cupy as cp
from warpalign import Scoring, SequenceBuffer, score_pairs
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
hx, hy = L[g.integers(0, 4, (P, 128))], L[g.integers(0, 4, (P, 4096))]
cx, cy = cp.asarray(hx), cp.asarray(hy)
call = lambda: score_pairs(cx, cy, s2, backend="cuda", method="wordwise")
def run(label, n=41):
    ts = []
    for _ in range(n):
        t = time.perf_counter(); r = call(); ts.append(time.perf_counter() - t); del r
    print(label, "median ms", round(float(np.median(ts)) * 1e3, 3), flush=True)
call(); call()
run("fresh")
held = []
held.append((cp.asarray(hx), cp.asarray(hy))); run("+ two more CuPy arrays (138 MB)")
held.append([r.tobytes().decode() for r in hx]); run("+ 32,768 str of 128")
held.append([r.tobytes().decode() for r in hy]); run("+ 32,768 str of 4,096")
table = s2.alphabet.code_table
held.append(list(table[hx])); run("+ list of 32,768 code arrays (x)")
held.append(list(table[hy])); run("+ list of 32,768 code arrays (y)")
held.clear(); run("all freed")
import gc; print("gc counts", gc.get_count(), "tracked", len(gc.get_objects()))
