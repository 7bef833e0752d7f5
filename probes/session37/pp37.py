"""(session 37) A chunk's two pieces (x, y) packed in one parallel loop (pack_parallel2)
against one loop a piece (c56fe9d), alternated in one process: the pack alone (40 rounds)
and score_pairs 32,768 x 128 x 1,024 from NumPy, mode full and score (25 calls each, the
last result freed before each clock starts). usage: python pp37.py OUT.jsonl"""
import json, sys, time
sys.path[:0] = ["bench", "src"]
import numpy as np
from pairs_full import make
from warpalign import Scoring, score_pairs
from warpalign._backends.cuda import encode as gpu
from warpalign._backends.cpu import pack2

out = sys.argv[1]
new = gpu._pack_pieces


def old(pieces, threads):
    stops = [np.zeros(1, np.uint8) for _ in pieces]
    total = sum(src.size for src, _ in pieces)
    if threads <= 1 or total < gpu._SPLIT_FROM:
        return [int(pack2.pack_codes(s, o, st)) for (s, o), st in zip(pieces, stops)]
    cuts = [gpu._cuts(s.size, 4) for s, _ in pieces]
    with gpu._numba_team(threads):
        return [int(pack2.pack_parallel(s, o, c, st)) for (s, o), c, st in zip(pieces, cuts, stops)]


variants = {"per-piece": old, "paired": new}


def emit(rec):
    print(json.dumps(rec), flush=True)
    open(out, "a").write(json.dumps(rec) + "\n")


def q(v):
    v = np.array(v) * 1e3
    return dict(med=round(float(np.median(v)), 3), p25=round(float(np.percentile(v, 25)), 3),
                p75=round(float(np.percentile(v, 75)), 3))


P, X, Y = 32768, 128, 1024
rng = np.random.default_rng(37)
acgt = np.frombuffer(b"ACGT", np.uint8)
x = acgt[rng.integers(0, 4, P * X)]; y = acgt[rng.integers(0, 4, P * Y)]
buf = np.zeros((x.size + y.size) // 4 + 2, np.uint8)
pieces = [(x, buf[:x.size // 4]), (y, buf[x.size // 4:x.size // 4 + y.size // 4])]
ref = None
for f in variants.values():
    assert f(pieces, 16) == [3, 3]
    ref = buf.copy() if ref is None else ref
    assert np.array_equal(ref, buf)
t = {k: [] for k in variants}
for _ in range(40):
    for k, f in variants.items():
        t0 = time.perf_counter(); f(pieces, 16); t[k].append(time.perf_counter() - t0)
emit(dict(what="pack 4 + 32 MiB", **{k: q(v) for k, v in t.items()}))
s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
xs, ys = make(np.random.default_rng(3), P, X, Y)
xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(P, X)
ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(P, Y)
for mode in ("full", "score"):
    got = {}
    for k, f in variants.items():
        gpu._pack_pieces = f
        for _ in range(3):
            got[k] = score_pairs(xs, ys, s, mode=mode, backend="cuda")
    t = {k: [] for k in variants}
    for _ in range(25):
        for k, f in variants.items():
            gpu._pack_pieces = f
            got.pop(k, None)
            t0 = time.perf_counter(); r = score_pairs(xs, ys, s, mode=mode, backend="cuda")
            t[k].append(time.perf_counter() - t0)
            got[k] = r
    a, b = got.values()
    same = (a.alignments == b.alignments) if mode == "full" else a.scores.tolist() == b.scores.tolist()
    emit(dict(what="score_pairs", mode=mode, same=bool(same), **{k: q(v) for k, v in t.items()}))
gpu._pack_pieces = new
