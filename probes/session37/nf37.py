"""(session 37) score_pairs 32,768 x 128 x 1,024 from NumPy, mode full and score, with the
flags read skipped where every side packs whole (d2d8fc6) against the read forced (the
packed sides' tops withheld: _results reads the flags and syncs), alternated in one
process, 25 calls each after 3 warm-ups; the last result freed before each clock starts.
usage: python nf37.py OUT.jsonl"""
import json, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
from pairs_full import make
from warpalign import Scoring, score_pairs
from warpalign._backends.cuda import encode as gpu

out = sys.argv[1]
real = gpu._stage_packed


def forced(*a, **k):
    real(*a, **k)
    return None                      # as if a side had fallen: the flags are read


s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
P, X, Y = 32768, 128, 1024
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
variants = {"skip": real, "read": forced}
for mode in ("full", "score"):
    got = {}
    for name, f in variants.items():
        gpu._stage_packed = f
        for _ in range(3):
            got[name] = score_pairs(xs, ys, s, mode=mode, backend="cuda")
    t = {k: [] for k in variants}
    for _ in range(25):
        for name, f in variants.items():
            gpu._stage_packed = f
            got.pop(name, None)
            t0 = time.perf_counter(); r = score_pairs(xs, ys, s, mode=mode, backend="cuda")
            t[name].append(time.perf_counter() - t0)
            got[name] = r
    same = (got["skip"].alignments == got["read"].alignments) if mode == "full" else \
        got["skip"].scores.tolist() == got["read"].scores.tolist()
    rec = dict(mode=mode, same=bool(same),
               **{k: round(float(np.median(v)) * 1e3, 3) for k, v in t.items()},
               **{k + "_p25": round(float(np.percentile(v, 25)) * 1e3, 3) for k, v in t.items()},
               **{k + "_p75": round(float(np.percentile(v, 75)) * 1e3, 3) for k, v in t.items()})
    print(json.dumps(rec), flush=True)
    open(out, "a").write(json.dumps(rec) + "\n")
gpu._stage_packed = real
