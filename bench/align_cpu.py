#!/usr/bin/env python3
"""CPU ``align()`` of one long pair on one core (issue 22 item 4), beside parasail.

Two DNA sequences of ``--length`` (default 100 kbp) each: unrelated random ones, and a
related pair (8% substitutions). Two scorings: paper 002's (match 1 / mismatch -2 / open 5
/ extend 1: local scores stay small, the int16 kernel does it all) and paper 004's
(match 5 / mismatch -3 / open 8 / extend 1: scores pass 32767, the kernel goes on in
int32 from that column; parasail's sw_striped_16 then reports saturation, not a score).

Per (pair, scoring), in the same process, repeats interleaved, the fastest kept:

* scope "item": the striped score/end kernel (``striped.score_end_striped``) alone;
* scope "call": ``align(a, b, scoring, mode="end", backend="cpu")`` on ``str`` inputs;
* parasail ``sw_striped_16`` and ``sw_scan_16`` (score and end, one core), and for
  scores past int16 ``sw_striped_32`` and ``sw_scan_32`` (the exact ones);
* with ``--full``, ``align(..., mode="full")`` (scope "call", the whole traceback).

Every score (and end, where parasail's is exact) is checked against ours. Run with one
core: ``NUMBA_NUM_THREADS=1 taskset -c 0 python bench/align_cpu.py --out
bench/results/align_cpu.jsonl``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from _common import cpu_name, emit
from warpalign import Scoring, align
from warpalign._backends.cpu.pairwise import LOCAL
from warpalign._backends.cpu.striped import score_end_striped

SCORINGS = {"paper002": Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1),
            "paper004": Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)}


def pairs(n: int, seed: int):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = rng.integers(0, 4, n)
    rel = a.copy()
    flip = rng.random(n) < 0.08
    rel[flip] = (rel[flip] + rng.integers(1, 4, int(flip.sum()))) % 4
    text = np.frombuffer(b"ACGT", np.uint8)
    as_str = lambda x: text[x].tobytes().decode()   # noqa: E731
    return {"random": (as_str(a), as_str(b)), "related 8% subs": (as_str(a), as_str(rel))}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--length", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=22)
    p.add_argument("--full", action="store_true", help="also time mode='full'")
    p.add_argument("--only", default=None, help="one case, e.g. 'random:paper002'")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    import parasail
    out = open(args.out, "a") if args.out else None
    cores = len(os.sched_getaffinity(0))
    device = f"{cpu_name()} (1 core{'' if cores == 1 else f' of {cores} allowed'})"
    command = "NUMBA_NUM_THREADS=1 python bench/align_cpu.py " + " ".join(argv or sys.argv[1:])
    n = args.length
    cells = n * n
    for data, (a, b) in pairs(n, args.seed).items():
        for name, s in SCORINGS.items():
            if args.only and args.only != f"{data.split()[0]}:{name}":
                continue
            q, t = s.encode(a), s.encode(b)
            pm = parasail.matrix_create("ACGT", s.match, s.mismatch)
            score_end_striped(q[:300], t[:300], s.matrix, s.gap_open, s.gap_extend, LOCAL)
            align(a[:300], b[:300], s, mode="end", backend="cpu", threads=1)
            runs = {
                "striped (kernel)": lambda: score_end_striped(q, t, s.matrix, s.gap_open,
                                                              s.gap_extend, LOCAL),
                "align end": lambda: align(a, b, s, mode="end", backend="cpu", threads=1),
                "parasail sw_striped_16": lambda: parasail.sw_striped_16(a, b, s.gap_open,
                                                                         s.gap_extend, pm),
                "parasail sw_scan_16": lambda: parasail.sw_scan_16(a, b, s.gap_open,
                                                                   s.gap_extend, pm),
                "parasail sw_striped_32": lambda: parasail.sw_striped_32(a, b, s.gap_open,
                                                                         s.gap_extend, pm),
                "parasail sw_scan_32": lambda: parasail.sw_scan_32(a, b, s.gap_open,
                                                                   s.gap_extend, pm),
            }
            best, result = {}, {}
            for _ in range(args.repeat):          # interleaved: load on the machine hits all
                for key, run in runs.items():
                    t0 = time.perf_counter()
                    r = run()
                    dt = time.perf_counter() - t0
                    best[key] = min(best.get(key, dt), dt)
                    result[key] = r
            score, qe, te = result["striped (kernel)"]
            got = result["align end"]
            if (got.score, got.query_end, got.target_end) != (score, qe, te):
                raise SystemExit(f"align() and the kernel differ: {got} vs {score, qe, te}")
            for key in ("parasail sw_scan_32", "parasail sw_striped_32"):
                if result[key].score != score:
                    raise SystemExit(f"{key} scores {result[key].score}, we {score}")
            sat16 = bool(result["parasail sw_striped_16"].saturated)
            if not sat16 and result["parasail sw_striped_16"].score != score:
                raise SystemExit("parasail sw_striped_16 differs")
            baseline = ", ".join(f"{k} {best[k]:.3f} s" for k in runs if k.startswith("parasail"))
            params = {"query": n, "target": n, "data": data, "scoring": name,
                      "match": s.match, "mismatch": s.mismatch, "gap_open": s.gap_open,
                      "gap_extend": s.gap_extend, "mode": "end",
                      "int16_fits": score + int(s.matrix.max()) <= 32767,
                      "parasail_sw_striped_16_saturated": sat16}
            for key, scope, method in (("striped (kernel)", "item", "striped"),
                                       ("align end", "call", "striped"),
                                       ("parasail sw_striped_16", "item", "parasail sw_striped_16"),
                                       ("parasail sw_scan_16", "item", "parasail sw_scan_16"),
                                       ("parasail sw_striped_32", "item", "parasail sw_striped_32"),
                                       ("parasail sw_scan_32", "item", "parasail sw_scan_32")):
                backend = "cpu" if not key.startswith("parasail") else "parasail"
                emit({"job": "align", "scope": scope, "cold": False, "backend": backend,
                      "method": method, "device": device, "params": params,
                      "seconds": round(best[key], 4), "gcups": round(cells / best[key] / 1e9, 3),
                      "score": int(result[key].score) if backend == "parasail" else score,
                      "query_end": qe, "target_end": te,
                      "baseline": f"same run, 1 core, best of {args.repeat}: {baseline}",
                      "command": command}, out)
            if args.full:
                t0 = time.perf_counter()
                full = align(a, b, s, mode="full", backend="cpu", threads=1)
                dt = time.perf_counter() - t0
                if (full.score, full.query_end, full.target_end) != (score, qe, te):
                    raise SystemExit("mode full differs from mode end")
                emit({"job": "align", "scope": "call", "cold": False, "backend": "cpu",
                      "method": "striped + linear-space traceback", "device": device,
                      "params": {**params, "mode": "full"}, "seconds": round(dt, 3),
                      "gcups": round(cells / dt / 1e9, 3), "score": score,
                      "baseline": "mode end above", "command": command}, out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
