"""(session 37) Why bench/pairs_full.py's mode-full runs spike (15-20 ms among 8.4-8.7):
12 calls as it makes them (each followed by the texts' first read), after a warm-up of 64
pairs (as it does) then after a full-size one; per call its ms, the garbage collections
in it (generation: count, ms) and in the texts' read.  usage: python gc37.py OUT.jsonl"""
import gc, json, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
from pairs_full import make
from warpalign import Scoring, score_pairs

out = sys.argv[1]
EV = []
START = {}


def cb(phase, info):
    if phase == "start":
        START["t"] = time.perf_counter()
    else:
        EV.append((info["generation"], (time.perf_counter() - START["t"]) * 1e3,
                   info.get("collected", 0)))


gc.callbacks.append(cb)
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
P, X, Y = 32768, 128, 1024
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
print("gc thresholds", gc.get_threshold(), "objects", len(gc.get_objects()), flush=True)
for warm in ("64 pairs", "full size"):
    if warm == "64 pairs":
        score_pairs(xs[:64], ys[:64], s, mode="full", backend="cuda")
    else:
        score_pairs(xs, ys, s, mode="full", backend="cuda")
    rows = []
    for k in range(12):
        EV.clear()
        t0 = time.perf_counter()
        res = score_pairs(xs, ys, s, mode="full", backend="cuda")
        call = (time.perf_counter() - t0) * 1e3
        in_call = list(EV); EV.clear()
        t1 = time.perf_counter()
        _ = (res.alignments.query_text, res.alignments.target_text)
        read = (time.perf_counter() - t1) * 1e3
        rows.append(dict(call_ms=round(call, 3), read_ms=round(read, 3),
                         gc_call=[(g, round(ms, 2)) for g, ms, _ in in_call],
                         gc_read=[(g, round(ms, 2)) for g, ms, _ in EV]))
    rec = dict(warm=warm, median_ms=round(float(np.median([r["call_ms"] for r in rows])), 3),
               rows=rows)
    print(json.dumps(rec), flush=True)
    open(out, "a").write(json.dumps(rec) + "\n")
print("objects", len(gc.get_objects()))
