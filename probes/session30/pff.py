"""Session 30: host time inside starts_flat / paths_flat / render_flat / _score_codes of
score_pairs(mode="full") 32,768 x 128 x 1,024: CuPy calls and helpers wrapped, summed by
name per enclosing step. usage: python pff.py"""
import collections, functools, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
import cupy as cp
from pairs_full import make
from warpalign import Scoring, score_pairs
import warpalign._backends.cuda.traceback as ctb
import warpalign._backends.cuda.render as crd
import warpalign._backends.cuda.pair_ends as cpe
import warpalign.traceback as tb
import warpalign.pairs as wp
EV = []
STACK = []
def wrap(obj, name, label=None, outer=False):
    real = getattr(obj, name)
    lab = label or name
    @functools.wraps(real)
    def w(*a, **k):
        if outer: STACK.append(lab)
        t = time.perf_counter()
        try: return real(*a, **k)
        finally:
            dt = time.perf_counter() - t
            if outer: STACK.pop()
            EV.append((STACK[-1] if STACK else "-", lab, dt))
    setattr(obj, name, w)
for n in ("starts_flat", "paths_flat", "render_flat"): wrap(ctb.GpuTraceback, n, outer=True)
for n in ("_rows", "_function", "_matrix", "_device", "_stream", "_constant"): wrap(ctb.GpuTraceback, n)
for n in ("upload", "running_sums", "_batches"): wrap(ctb, n, "ctb." + n)
wrap(crd, "render_device", outer=True); wrap(crd, "to_host", outer=True); wrap(crd, "running_sums", "crd.running_sums")
wrap(cpe, "score_ends_wordwise", outer=True); wrap(cpe, "_fill"); wrap(cpe, "kept_plan")
wrap(tb, "_table", outer=True); wrap(tb, "_text"); wrap(tb, "_check_paths"); wrap(tb, "_segment_starts"); wrap(tb, "_given_ends"); wrap(tb, "_check_codes")
wrap(tb, "align_pairs_table", outer=True)
wrap(wp, "_score_codes", outer=True)
for n in ("empty", "zeros", "asarray", "asnumpy", "arange", "full", "concatenate", "ascontiguousarray"):
    wrap(cp, n, "cp." + n)
try: wrap(cp.ndarray, "get", "ndarray.get")
except (TypeError, AttributeError) as e: print("no ndarray.get wrap", e)
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
P, X, Y = 32768, 128, 1024
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
for _ in range(3): score_pairs(xs, ys, s, mode="full", backend="cuda")
tot = collections.defaultdict(float); cnt = collections.Counter()
R = 4
for _ in range(R):
    EV.clear()
    t0 = time.perf_counter(); score_pairs(xs, ys, s, mode="full", backend="cuda"); print("call ms", round((time.perf_counter() - t0) * 1e3, 2))
    for enc, lab, dt in EV: tot[enc, lab] += dt; cnt[enc, lab] += 1
for (enc, lab), v in sorted(tot.items()):
    print(f"{enc:22s} {lab:26s} {v / R * 1e3:8.3f} ms  x{cnt[enc, lab] // R}")
