"""Session 39 call D: the CuPy row's host timeline (wrappers with perf_counter around the
steps of one call), 301 calls, medians. argv: out.txt"""
import sys
import time

import numpy as np

import warpalign  # noqa: F401
import cupy as cp
from warpalign import Scoring, score_pairs
from warpalign._backends.cuda import pairs_ahead as pa
from warpalign import pairs as pp

P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))])
cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
T = {}


def wrap(mod, name, before=None, after=None):
    fn = getattr(mod, name)

    def w(*a, **k):
        if before and before not in T:
            T[before] = time.perf_counter()
        r = fn(*a, **k)
        if after:
            T[after] = time.perf_counter()
        return r
    setattr(mod, name, w)


wrap(pp, "gather", "gather0", "gather1")
wrap(pa, "queue_encode", "encode_q", "encode_q1")
wrap(pa, "planned_wordwise", "plan0", "plan1")
wrap(pa, "queue_wordwise", "ww_q", "ww_q1")
wrap(pa, "pinned", "pinned0", None)
wrap(pa, "side_flags", "synced", None)
wrap(pp, "_score_codes", "score_codes0", "score_codes1")
wrap(pp, "_merge", "merge0", "merge1")
orig = pa.encode_and_score


def eas(*a, **k):
    T["eas0"] = time.perf_counter()
    r = orig(*a, **k)
    T["eas1"] = time.perf_counter()
    return r


pa.encode_and_score = eas
rows = []
for i in range(306):
    T.clear()
    t0 = time.perf_counter()
    r = score_pairs(cx, cy, s2, backend="cuda", method="wordwise")
    t1 = time.perf_counter()
    if i >= 5:
        rows.append({**{k: (v - t0) * 1e3 for k, v in T.items()}, "end": (t1 - t0) * 1e3,
                     **{"gpu_" + k: v * 1e3 for k, v in r.timings.items()}})
keys = ["gather0", "gather1", "eas0", "encode_q", "encode_q1", "plan0", "plan1", "ww_q",
        "ww_q1", "pinned0", "synced", "eas1", "score_codes0", "score_codes1", "merge0",
        "merge1", "end"]
out = open(sys.argv[1], "w")
for k in keys + sorted(x for x in rows[0] if x.startswith("gpu_")):
    v = np.median([r[k] for r in rows if k in r])
    line = f"{k:14s} {v:8.3f} ms"
    print(line)
    out.write(line + "\n")
