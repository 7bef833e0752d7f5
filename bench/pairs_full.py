#!/usr/bin/env python3
"""``score_pairs(..., mode="full")``: every pair aligned (issue 20).

``--pairs`` pairs of a ``--x``-letter read against a ``--y``-letter window holding a
mutated copy of it (5% substitutions, 1% indels) at a random place, DNA, scoring match 2
/ mismatch -3 / gap open 5 / extend 2, through the public ``score_pairs``: mode score and
mode full on the GPU, mode full on the CPU backend (every core) as the baseline, all in
the same run; the alignments of the two backends must be identical (exit 1 otherwise).
Each timed call follows an untimed one of the same size (a warm process: compiled, its
memory pools filled; the CPU's on 64 pairs), and the last call's result (and its texts)
is freed before the next call's clock starts (session 37, docs/gpu-notes.md).
GCUPS = pairs x x x y / seconds (scope "call": the whole call). Input (``--input``):
"arrays" (default: two 2-D NumPy uint8 arrays of characters, one row a sequence), "cupy"
(the same arrays on the GPU: no staging; the CPU baseline takes the NumPy arrays) or
"list" (lists of str). Each line records the input form and, in params.timings, the
call's steps (``PairScores.timings``: encode, kernels, "align" and within it the end
cells (on the GPU the pair kernel's "ends", on the CPU the traceback's tb_ends) and the
traceback's tb_starts / tb_paths / tb_render, or tb_align where starts and paths run in
one pass); mode full's params.text_read: the median seconds of the first read of the
table's two aligned texts after the call (decoded then: results.LAZY_TEXT_BYTES), outside
the call's seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import cpu_name, emit, usable_cores
from warpalign import Scoring, score_pairs


def make(rng, count, x, y):
    xs, ys = [], []
    for _ in range(count):
        a = rng.integers(0, 4, x)
        b = []
        for c in a:
            r = rng.random()
            if r < 0.005:
                continue
            b.append(c if r > 0.055 else rng.integers(0, 4))
            if rng.random() < 0.005:
                b.append(rng.integers(0, 4))
        at = int(rng.integers(0, y - len(b)))
        w = rng.integers(0, 4, y)
        w[at:at + len(b)] = b
        xs.append("".join("ACGT"[c] for c in a))
        ys.append("".join("ACGT"[c] for c in w))
    return xs, ys


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=32768)
    p.add_argument("--x", type=int, default=128)
    p.add_argument("--y", type=int, default=1024)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=3)
    p.add_argument("--input", choices=("arrays", "cupy", "list"), default="arrays")
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/pairs_full.py " + " ".join(argv or sys.argv[1:])
    import cupy
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    s = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2)
    xs, ys = make(np.random.default_rng(args.seed), args.pairs, args.x, args.y)
    if args.input in ("arrays", "cupy"):
        xs = np.frombuffer("".join(xs).encode(), np.uint8).reshape(args.pairs, args.x)
        ys = np.frombuffer("".join(ys).encode(), np.uint8).reshape(args.pairs, args.y)
    on = {"cpu": (xs, ys), "cuda": (xs, ys)}
    if args.input == "cupy":
        on["cuda"] = (cupy.asarray(xs), cupy.asarray(ys))
        cupy.cuda.runtime.deviceSynchronize()
    cells = args.pairs * args.x * args.y
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    got = {}
    for backend, mode in (("cuda", "score"), ("cuda", "full"), ("cpu", "full")):
        xs, ys = on[backend]
        # warm up: compiles, and on the GPU fills the memory pools as a warm process has them
        score_pairs(xs if backend == "cuda" else xs[:64], ys if backend == "cuda" else ys[:64],
                    s, mode=mode, backend=backend)
        runs, reads, held = [], [], []
        for _ in range(1 if backend == "cpu" else args.repeat):
            held.clear()            # the last call's result is freed outside the timing
            t0 = time.perf_counter()
            res = score_pairs(xs, ys, s, mode=mode, backend=backend)
            runs.append(time.perf_counter() - t0)
            held.append(res)
            del res
            if mode == "full":      # the aligned strings, decoded when first read
                t0 = time.perf_counter()
                held.append((held[0].alignments.query_text, held[0].alignments.target_text))
                reads.append(time.perf_counter() - t0)
        res = held[0]
        got[backend, mode] = res
        secs = float(np.median(runs))
        emit({"job": "pairs", "scope": "call", "backend": backend, "method": res.method,
              "device": device if backend == "cuda" else f"{cpu_name()} x {usable_cores()}",
              "cold": False,
              "params": {"mode": mode, "pairs": args.pairs, "x": args.x, "y": args.y,
                         "input": args.input, "scoring": "2/-3/5/2",
                         "timings": {k: round(v, 4) for k, v in res.timings.items()},
                         **({"text_read": round(float(np.median(reads)), 4)} if reads else {})},
              "seconds": secs, "runs": [round(t, 4) for t in runs], "gcups": cells / secs / 1e9,
              "baseline": "CPU backend mode full and GPU mode score, same run",
              "command": command}, out)
    same = got["cuda", "full"].alignments == got["cpu", "full"].alignments
    print("alignments identical:", same)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
