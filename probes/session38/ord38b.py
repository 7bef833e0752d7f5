"""(session 38 ord38b: the CuPy row fast (fresh) and slow (after a NumPy row and gc.collect), timelines compared) Where score_pairs(mode="full") 32,768 x 128 x 1,024 from NumPy spends its time (issue 20: 9.2 ms = 467 GCUPS on one H100 in session 35 call E, target 8.6 ms).
Every CUDA kernel launch is wrapped: events before/after on the current stream; after the
call, each kernel's GPU time, its start relative to the call's first event, and host wall
clocks of the big steps. Then cProfile of one call (top 30 tottime).
usage: python pfk36.py OUT [repeat]   (from the repo root: bench/ and src/ on the path)"""
import cProfile, functools, io, json, pstats, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
import cupy as cp
from pairs_full import make
from warpalign import Scoring, score_pairs
from warpalign._backends.cuda import loader
import warpalign._backends.cuda.traceback as ctb
import warpalign._backends.cuda.render as crd
import warpalign.traceback as tb

out = None
LOG = []
class TK:
    def __init__(s, name, k): s.name, s.k = name, k
    def __getattr__(s, a): return getattr(s.k, a)
    def __call__(s, *a, **kw):
        e0 = cp.cuda.Event(); e1 = cp.cuda.Event(); e0.record()
        t = time.perf_counter()
        s.k(*a, **kw); e1.record(); LOG.append((s.name, e0, e1, t))
class TM:
    def __init__(s, m): s.m = m
    def __getattr__(s, a): return getattr(s.m, a)
    def get_function(s, n): return TK(n, s.m.get_function(n))
real_gm, real_gf = loader.get_module, loader.get_functions
def gm(*a, **k): return TM(real_gm(*a, **k))
def gf(*a, **k): return {n: TK(n, f) for n, f in real_gf(*a, **k).items()}
loader.get_module = gm; loader.get_functions = gf
for mod in (ctb, crd):
    mod.get_module = gm
import warpalign._backends.cuda as cudapkg, importlib, pkgutil
for info in pkgutil.iter_modules(cudapkg.__path__):
    m = importlib.import_module(f"warpalign._backends.cuda.{info.name}")
    if getattr(m, "get_module", None) is real_gm: m.get_module = gm
    if getattr(m, "get_functions", None) is real_gf: m.get_functions = gf
HOST = []
def wrap(obj, name):
    real = getattr(obj, name)
    @functools.wraps(real)
    def w(*a, **k):
        t = time.perf_counter()
        try: return real(*a, **k)
        finally: HOST.append((name, t, time.perf_counter()))
    setattr(obj, name, w)
def wrap_any(obj, names):
    for n in names:
        if hasattr(obj, n): wrap(obj, n)
wrap_any(ctb.GpuTraceback, ("starts_flat", "paths_flat", "render_flat", "align_local_flat", "trace_local_chain", "_one_pass", "_pack", "_columns"))
import warpalign.pairs as _wp
wrap_any(_wp, ("_choose_method", "engine_for", "lookup"))
import warpalign.pairs as wp, warpalign.results as wr
import warpalign._backends.cuda.pair_ends as cpe
import warpalign._backends.cuda.encode as cen
import warpalign._backends.cuda.pairs_ahead as cpa
wrap_any(cpa, ("encode_and_score",))
wrap_any(cen, ("queue_encode",))
import warpalign._backends.cuda.pairs as cpp
wrap_any(cpp, ("planned_wordwise", "queue_wordwise", "pairs_module"))
wrap_any(cpe, ("score_ends_wordwise", "_fill", "queue_score_ends", "read_score_ends", "shape_key", "kept_plan", "pairs_module", "device_codes", "queue_wordwise", "_queue_ends")); wrap_any(wp, ("_score_codes", "_merge", "gather"))
wrap_any(crd, ("to_host", "render_device", "render_walk", "render_cigar")); wrap_any(ctb, ("upload",))
try:
    import warpalign._backends.cuda.pairs_full as cpf, warpalign.traced as wtr
    wrap_any(cpf, ("score_align_wordwise", "end_rows", "queue_score_ends", "read_score_ends")); wrap_any(wtr, ("traced_table", "paths_table", "check_paths", "chained_table"))
except ImportError:
    pass
real_init = wr.AlignmentTable.__init__
def tinit(self, *a, **k):
    t = time.perf_counter()
    try: return real_init(self, *a, **k)
    finally: HOST.append(("AlignmentTable.__init__", t, time.perf_counter()))
wr.AlignmentTable.__init__ = tinit
for n in dir(cen):
    if n.startswith("encode") and callable(getattr(cen, n)): wrap(cen, n)
wrap_any(tb, ("_check_codes", "_segment_starts", "_check_paths", "_table", "_given_ends", "align_pairs_table"))


def timeline(label, call, rep):
    rows = []
    for r in range(rep):
        LOG.clear(); HOST.clear()
        cp.cuda.runtime.deviceSynchronize()
        e_start = cp.cuda.Event(); e_start.record(cp.cuda.Stream.null)
        t0 = time.perf_counter()
        res = call()
        total = time.perf_counter() - t0
        cp.cuda.runtime.deviceSynchronize()
        ks = {n: (cp.cuda.get_elapsed_time(e_start, a), cp.cuda.get_elapsed_time(a, b), (t - t0) * 1e3) for n, a, b, t in LOG}
        hs = {}
        for n, a, b in HOST: hs.setdefault(n, ((a - t0) * 1e3, (b - a) * 1e3))
        rows.append((total * 1e3, ks, hs))
        del res
    rows.sort(key=lambda r: r[0]); total, ks, hs = rows[rep // 2]
    print(label, "median total", round(total, 3))
    print("  kernels (gpu start, gpu ms, host launch):", {n: tuple(round(v, 3) for v in x) for n, x in ks.items()})
    print("  host (start, ms):", {n: tuple(round(v, 3) for v in x) for n, x in hs.items()})

import gc
P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
hx, hy = L[g.integers(0, 4, (P, 128))], L[g.integers(0, 4, (P, 4096))]
cx, cy = cp.asarray(hx), cp.asarray(hy)
cu = lambda: score_pairs(cx, cy, s2, backend="cuda", method="wordwise")
nu = lambda: score_pairs(hx, hy, s2, backend="cuda", method="wordwise")
cu(); cu()
timeline("fresh", cu, 15)
for _ in range(9): nu()
gc.collect()
timeline("after numpy+gc", cu, 15)
t = time.perf_counter(); x = [np.empty(1) for _ in range(1000)]; print("1000 np.empty us", round((time.perf_counter() - t) * 1e3, 3))
pr = cProfile.Profile(); pr.enable()
for _ in range(100): cu()
pr.disable()
st = pstats.Stats(pr)
rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:25]
for (f, line, name), (cc, nc, tt, ct, _) in rows:
    print(f"{tt / 100 * 1e6:9.1f} {ct / 100 * 1e6:9.1f} {nc / 100:6.1f}  {f.split('/')[-1]}:{line}({name})")
