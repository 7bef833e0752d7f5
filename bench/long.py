#!/usr/bin/env python3
"""Long-pair benchmark (issue 6): paper 004's setting, every locate method side by side.

Pairs of equal lengths 512 … 8,000 (paper 004: "sequences with length varied from 512 to
8000"): a random DNA sequence and a related copy (8% substitutions, a few indels of 1–6
symbols). Two gap models, as paper 004: affine (match 5, mismatch −3, gap open 8,
extend 1 — its Fig. 3 scoring) and constant (linear) gaps (match 5, mismatch −3, every gap
symbol 8: gap_open = gap_extend = 8). Methods: "dp" (exact scalar Gotoh), "scan"
(paper 002's row scan, int16 rows switching to int32), "scan1" (paper 004's single-stage
scan), "antidiagonal" and "blocked" (paper 004's comparison methods) and "windows", all
through ``locate(mode="end")`` on the CPU; every method's (score, ends) is checked
against the first one's.

One JSON line per (gap model, length, method) (DESIGN.md "Measuring", job "long"),
GCUPS = length² / seconds / 1e9, the fastest of ``--repeat`` runs after a warm-up.
For "scan" the line also gives ``narrow_cell_share`` (int16 mode) and
``narrow_cell_share_8bit`` (paper 002's 8-bit mode, limit 255): paper 002 Fig. 6's r.

``--ecoli`` adds the two E. coli genomes (4.6 M × 4.6 M) with the fastest CPU method of
the run when its measured GCUPS would finish within ``--ecoli-budget`` seconds; otherwise
it prints one line saying how long that would take (and runs nothing).

CPU run:  python bench/long.py --ecoli --out bench/results/long_cpu.jsonl

``--gpu`` adds, per (gap model, length), the long-pair GPU kernel (``_backends/cuda/long.py``,
method "long": score and end of one pair in one persistent launch) beside the CPU methods
of the same run (its (score, ends) checked against the first CPU method's). With
``--ecoli`` and ``--gpu`` the E. coli pair runs on the GPU instead: first the leading
``--ecoli-slice`` letters of each genome (a prediction), then the whole pair (score and
end); ``--ecoli-full`` also times the full alignment of the leading ``--full-slice`` letters
of each genome (0: the whole genomes): by default the staged traceback (``long.Staged``:
score pass keeping special rows, strips between them, segments by Myers–Miller), with
``--full-route old`` the previous route (GPU score/end, GPU anchored start over the whole
matrix, GPU Myers–Miller splits of at least ``MIN_CELLS`` cells, CPU below), ``both`` both.

GPU run:  python bench/long.py --gpu --methods dp,scan --ecoli --ecoli-full \
          --out bench/results/long_gpu.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time

import numpy as np

from _common import SHARED_DATA, cpu_name, emit, timed, usable_cores
from warpalign._backends.cpu.scan import score_end_method
from warpalign.locate import locate_encoded
from warpalign.scoring import Scoring

SCORINGS = {
    "affine": Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1),
    "constant": Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=8),
}
METHODS = "dp,scan,scan1,antidiagonal,blocked,windows"


def related(rng: np.random.Generator, a: np.ndarray, sub: float = 0.08, indels: int = 8) -> np.ndarray:
    b = a.copy()
    flip = rng.random(len(b)) < sub
    b[flip] = (b[flip] + rng.integers(1, 4, int(flip.sum()))) % 4
    b = list(b)
    for _ in range(indels):
        at, size = int(rng.integers(0, len(b))), int(rng.integers(1, 7))
        if rng.random() < 0.5:
            del b[at:at + size]
        else:
            b[at:at] = list(rng.integers(0, 4, size))
    return np.asarray(b, np.uint8)


def fasta_first(path) -> str:
    with gzip.open(path, "rt") as fh:
        fh.readline()
        seq = []
        for line in fh:
            if line.startswith(">"):
                break
            seq.append(line.strip())
    return "".join(seq).upper()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--lengths", default="512,1024,2048,4096,8000")
    p.add_argument("--methods", default=METHODS)
    p.add_argument("--gaps", default="affine,constant", help="comma list: affine, constant")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=4)
    p.add_argument("--ecoli", action="store_true", help="also the E. coli pair, if it fits")
    p.add_argument("--ecoli-budget", type=float, default=300.0, help="seconds")
    p.add_argument("--gpu", action="store_true", help="also the long-pair GPU kernel")
    p.add_argument("--ecoli-slice", type=int, default=1_000_000,
                   help="with --gpu: letters of each genome for the first E. coli run")
    p.add_argument("--ecoli-full", action="store_true",
                   help="with --gpu: also time the full alignment of the E. coli pair")
    p.add_argument("--full-route", default="staged", choices=["staged", "old", "both"],
                   help="--ecoli-full: the staged traceback (default), the previous route "
                        "(whole-matrix start pass + Myers-Miller), or both")
    p.add_argument("--full-slice", type=int, default=0,
                   help="letters of each genome for --ecoli-full (0: whole genomes)")
    p.add_argument("--out", help="append the JSON lines to this file too")
    args = p.parse_args(argv)
    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))
    device = f"{cpu_name()} ({usable_cores()} cores)"
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    rng = np.random.default_rng(args.seed)
    methods = args.methods.split(",")
    best_rate = {}   # method -> best GCUPS at the largest length
    for gap in (g for g in args.gaps.split(",") if g):
        s = SCORINGS[gap]
        for n in (int(x) for x in args.lengths.split(",") if x):
            a = rng.integers(0, 4, n).astype(np.uint8)
            b = related(rng, a)[:n]
            first = None
            for method in methods:
                def run(method=method, a=a, b=b, s=s):
                    return locate_encoded(a, ["b"], [b], s, mode="end", method=method,
                                          backend="cpu", strand="plus")   # one pair, as given
                hit = run()   # warm-up (compiles the kernel on first use)
                hit, times = timed(run, args.repeat)
                secs = min(times)
                found = (hit.score, hit.query_end, hit.target_end)
                first = first or (method, found)
                extra = {}
                if method == "scan":
                    for name, limit in (("narrow_cell_share", 32767), ("narrow_cell_share_8bit", 255)):
                        wide = score_end_method("scan", a, b, s, limit=limit)[3]
                        extra[name] = round(1 - wide / n, 6)
                gcups = len(a) * len(b) / secs / 1e9
                best_rate[method] = gcups
                emit({"job": "long", "scope": "item", "backend": "cpu", "method": method,
                      "device": device,
                      "params": {"gap_model": gap, "query": len(a), "reference": len(b),
                                 "match": 5, "mismatch": -3, "gap_open": s.gap_open,
                                 "gap_extend": s.gap_extend, "mode": "end",
                                 "data": "random DNA vs a related copy (8% subs, 8 indels)"},
                      "seconds": round(secs, 6), "gcups": round(gcups, 4),
                      "score": hit.score, "query_end": hit.query_end,
                      "reference_end": hit.target_end, **extra,
                      "agrees_with": first[0] if found == first[1] else f"DIFFERS from {first[0]}",
                      "baseline": "the other methods of this run (all exact, 1 core; "
                                  "windows: the CPU backend's scan)",
                      "command": command}, out)
            if args.gpu:
                gpu_item(a, b, s, gap, args.repeat, first, command, out)
    if args.ecoli and args.gpu:
        gpu_ecoli(args, command, out)
    elif args.ecoli:
        exact = {m: r for m, r in best_rate.items() if m != "windows"} or best_rate
        method = max(exact, key=exact.get)
        x = fasta_first(SHARED_DATA / "dna" / "ecoli_K12_W3110.fasta.gz")
        y = fasta_first(SHARED_DATA / "dna" / "ecoli_EC590.fasta.gz")
        cells = len(x) * len(y)
        estimate = cells / (exact[method] * 1e9)
        if estimate > args.ecoli_budget:
            print(json.dumps({"job": "long", "note": "E. coli pair not run",
                              "method": method, "device": device, "cells": cells,
                              "gcups_measured": round(exact[method], 4),
                              "estimated_seconds": round(estimate),
                              "budget_seconds": args.ecoli_budget}), flush=True)
        else:
            s = SCORINGS["affine"]
            t0 = time.perf_counter()
            hit = locate_encoded(s.encode(x), ["EC590"], [s.encode(y)], s, mode="end",
                                 method=method, backend="cpu", strand="plus")
            secs = time.perf_counter() - t0
            emit({"job": "long", "scope": "item", "backend": "cpu", "method": method,
                  "device": device, "params": {"gap_model": "affine", "query": len(x),
                                               "reference": len(y), "data": "E. coli K-12 W3110 vs EC590"},
                  "seconds": round(secs, 3), "gcups": round(cells / secs / 1e9, 4),
                  "score": hit.score, "query_end": hit.query_end,
                  "reference_end": hit.target_end, "baseline": "none", "command": command}, out)
    return 0


def _gpu():
    from warpalign._backends.cuda import long as gpu_long
    return gpu_long, gpu_long.device_name()


def gpu_item(a, b, s, gap, repeat, first, command, out) -> None:
    """One GPU line: the long-pair kernel's score and end of (a, b), fastest of ``repeat``."""
    gpu_long, name = _gpu()
    pair = gpu_long.LongPair(a, b, s)
    found = pair.score_end(0)            # warm-up: compiles the kernel on first use
    times = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        found = pair.score_end(0)
        times.append(time.perf_counter() - t0)
    secs = min(times)
    emit({"job": "long", "scope": "item", "backend": "cuda", "method": "long", "device": name,
          "params": {"gap_model": gap, "query": len(a), "reference": len(b), "match": 5,
                     "mismatch": -3, "gap_open": s.gap_open, "gap_extend": s.gap_extend,
                     "mode": "end", "data": "random DNA vs a related copy (8% subs, 8 indels)"},
          "seconds": round(secs, 6), "gcups": round(len(a) * len(b) / secs / 1e9, 4),
          "score": found[0], "query_end": found[1], "reference_end": found[2],
          "agrees_with": first[0] if found == first[1] else f"DIFFERS from {first[0]}",
          "baseline": f"the CPU methods of this run ({first[0]} first; same (score, ends))",
          "command": command}, out)


class _Timed:
    """A LongPair whose passes are timed (wall seconds per pass kind, calls per kind)."""

    def __init__(self, inner):
        self.inner = inner
        self.min_cells = inner.min_cells
        self.seconds = {"score_end": 0.0, "anchored_start": 0.0, "path": 0.0}
        self.calls = dict.fromkeys(self.seconds, 0)

    def _timed(self, name, *args):
        t0 = time.perf_counter()
        result = getattr(self.inner, name)(*args)
        self.seconds[name] += time.perf_counter() - t0
        self.calls[name] += 1
        return result

    def score_end(self, *args):
        return self._timed("score_end", *args)

    def anchored_start(self, *args):
        return self._timed("anchored_start", *args)

    def path(self, *args):
        return self._timed("path", *args)


def gpu_ecoli(args, command, out) -> None:
    """The E. coli pair on the GPU: a slice (prediction), the whole pair, the full alignment."""
    from warpalign.traceback import align_codes
    gpu_long, name = _gpu()
    s = SCORINGS["affine"]
    x = s.encode(fasta_first(SHARED_DATA / "dna" / "ecoli_K12_W3110.fasta.gz"))
    y = s.encode(fasta_first(SHARED_DATA / "dna" / "ecoli_EC590.fasta.gz"))
    params = {"gap_model": "affine", "match": 5, "mismatch": -3, "gap_open": 8, "gap_extend": 1,
              "data": "E. coli K-12 W3110 (query) vs EC590 (reference), first records"}
    runs = [(args.ecoli_slice, "end")] if 0 < args.ecoli_slice < min(len(x), len(y)) else []
    runs.append((0, "end"))
    rate = None
    end_secs = None
    for cut, mode in runs:
        a, b = (x[:cut], y[:cut]) if cut else (x, y)
        if rate and len(a) * len(b) / rate > args.ecoli_budget:
            print(json.dumps({"job": "long", "note": "E. coli pair not run on the GPU",
                              "device": name, "gcups_slice": round(rate / 1e9, 2),
                              "estimated_seconds": round(len(a) * len(b) / rate),
                              "budget_seconds": args.ecoli_budget}), flush=True)
            return
        pair = gpu_long.LongPair(a, b, s)
        if cut:
            pair.score_end(0)                # warm-up (kernel compile)
        t0 = time.perf_counter()
        found = pair.score_end(0)
        secs = time.perf_counter() - t0
        rate = len(a) * len(b) / secs
        end_secs = secs if not cut else end_secs
        emit({"job": "long", "scope": "item", "backend": "cuda", "method": "long", "device": name,
              "params": {**params, "query": len(a), "reference": len(b), "mode": mode,
                         "slice": cut or "whole genomes"},
              "seconds": round(secs, 3), "gcups": round(len(a) * len(b) / secs / 1e9, 2),
              "score": found[0], "query_end": found[1], "reference_end": found[2],
              "baseline": "none (CPU dp would take hours; see long_cpu.jsonl)",
              "command": command}, out)
    if args.ecoli_full:
        cut = args.full_slice
        a, b = (x[:cut], y[:cut]) if cut else (x, y)
        routes = ["staged", "old"] if args.full_route == "both" else [args.full_route]
        warm = gpu_long.LongPair(a[:30_000], b[:30_000], s)    # compiles every pass's kernel
        align_codes(warm.q_host, warm.t_host, s, "local", engine=warm)
        for route in routes:
            gpu_long.STATS.update(launches=0, seconds=0.0, cells=0)
            t0 = time.perf_counter()
            inner = gpu_long.LongPair(a, b, s)
            inner.staged = route == "staged"
            pair = inner if inner.staged else _Timed(inner)
            aln = align_codes(a, b, s, "local", engine=pair)
            secs = time.perf_counter() - t0
            st = dict(gpu_long.STATS)
            if inner.staged:
                staged = inner.last_staged
                passes = {k: round(v, 3) for k, v in staged.seconds.items()}
                passes.update({f"{k}_gpu": round(v, 3) for k, v in staged.gpu_seconds.items()})
                first = staged.seconds["stage1"]
                extra = {"stage_cells": staged.cells, "strips": staged.strips,
                         "special_rows_every": inner.special,
                         "strip_lane_rows": inner.lane_rows(inner.special),
                         "crosspoints": len(staged.points) - 1,
                         "gap_crosspoints": sum(1 for p in staged.points if p[2])}
                method = "long+staged"
            else:
                passes = {k: round(v, 3) for k, v in pair.seconds.items()}
                first = pair.seconds["score_end"]
                extra = {}
                method = "long+myers-miller"
            emit({"job": "long", "scope": "item", "backend": "cuda", "method": method,
                  "device": name,
                  "params": {**params, "query": len(a), "reference": len(b), "mode": "full",
                             "slice": cut or "whole genomes", "gpu_min_cells": inner.min_cells},
                  "seconds": round(secs, 3), "gcups": round(len(a) * len(b) / secs / 1e9, 2),
                  "gpu_launches": st["launches"], "gpu_seconds": round(st["seconds"], 3),
                  "gpu_cells": st["cells"], "pass_seconds": passes, **extra,
                  "times_score_pass": round(secs / max(first, 1e-9), 2),
                  "times_score_end_line": round(secs / end_secs, 2) if end_secs and not cut else None,
                  "score": aln.score,
                  "query_start": aln.query_start, "query_end": aln.query_end,
                  "reference_start": aln.target_start, "reference_end": aln.target_end,
                  "cigar_ops": aln.cigar.count("M") + aln.cigar.count("I") + aln.cigar.count("D"),
                  "identity": aln.identity,
                  "baseline": "the score/end line of this run (same pair): times_score_end_line; "
                              "times_score_pass: against this run's own score pass",
                  "command": command}, out)

if __name__ == "__main__":
    sys.exit(main())
