"""(session 36) score_pairs mode full (and score) 32,768 x 128 x 1,024 from NumPy, one tree:
median of N warm calls; with --batches also batch_residues = total/2, /3 (mode full).
usage: python ab36.py SRC TAG OUT.jsonl [N] [--batches]"""
import json, sys, time
src, tag, out = sys.argv[1:4]
n = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[4].isdigit() else 15
sys.path[:0] = [src, src + "/../bench"]
import numpy as np
from pairs_full import make
from warpalign import Scoring, score_pairs
import os
if os.environ.get("AB_GROUP"):
    import warpalign.pairs as wp
    wp.GROUP_RESIDUES = int(os.environ["AB_GROUP"])
    tag = f"{tag}-g{os.environ['AB_GROUP']}"
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
P, X, Y = 32768, 128, 1024
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
total = P * (X + Y)
cases = [("full", None), ("score", None)]
if "--batches" in sys.argv:
    cases += [("full", -(-total // 2)), ("full", -(-total // 3))]
ref = None
for mode, limit in cases:
    kw = {} if limit is None else {"batch_residues": limit}
    for _ in range(3):
        r = score_pairs(xs, ys, s, mode=mode, backend="cuda", **kw)
    t = []
    for _ in range(n):
        t0 = time.perf_counter(); r = score_pairs(xs, ys, s, mode=mode, backend="cuda", **kw)
        t.append(time.perf_counter() - t0)
    if mode == "full":
        ref = r if ref is None else ref
        same = r.alignments == ref.alignments
    else:
        same = r.scores.tolist() == ref.scores.tolist()
    rec = dict(tag=tag, mode=mode, batch_residues=limit, median_ms=round(float(np.median(t)) * 1e3, 3),
               min_ms=round(min(t) * 1e3, 3), same=bool(same),
               gcups=round(P * X * Y / float(np.median(t)) / 1e9, 1))
    print(json.dumps(rec), flush=True)
    open(out, "a").write(json.dumps(rec) + "\n")
