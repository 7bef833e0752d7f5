#!/usr/bin/env python3
"""locate benchmark (issue 6): paper 002's Fig. 5 setting, methods side by side.

Queries of 128 and 256 symbols, cut from C. elegans chrX with 5% substitutions, against
references of 1 K ... 33 M symbols (chrX's prefix; beyond its 17.7 Mbp, chrX followed by
itself reversed). Scoring: match 1, mismatch -2, gap open 5, extend 1 (paper 002).
Methods: "windows", "dp" and the CPU kernels of issue 6 ("scan": paper 002's row scan with
int16 rows switching to int32; "scan1": paper 004's single-stage scan; "antidiagonal",
"blocked"). For "scan" each line also gives the share of cells computed in narrow mode
(paper 002 Fig. 6's r = l/mn): ``narrow_cell_share`` for the int16 mode the kernel runs,
``narrow_cell_share_8bit`` for paper 002's 8-bit mode (limit 255), both counted by the kernel.
One JSON line per (backend, method, query length, reference length) (DESIGN.md
"Measuring"; job "locate"), GCUPS = query length x reference length / seconds / 1e9
(the matrix the problem defines; the windows' overlap is extra work, reported as
``overlap_cells``: the first pass's overlap ``first_pass_span`` − 1 when locate runs two
passes, with ``seams`` true when the hit needed the seam windows). Each point is the fastest of ``--repeat`` runs after a warm-up; every
method's (score, ends) is checked against the first method's in the same run.

CPU run (this machine):  python bench/locate.py --max-size 4194304 --out bench/results/locate_cpu.jsonl
CPU kernels:  python bench/locate.py --methods windows,dp,scan,scan1,antidiagonal,blocked \
                  --max-size 1048576 --repeat 2 --out bench/results/locate_cpu.jsonl
GPU run (device machine): python bench/locate.py --backends cuda --methods windows \\
                              --min-size 1048576 --max-size 33554432 --dp-max-size 0 \\
                              --old-gpu-max-size 4194304 --out bench/results/locate_gpu.jsonl
(cuda/windows: the GPU windows kernel with the reference resident, its upload timed apart as
``reference_upload_seconds``; ``kernel_seconds`` the scores kernel alone, ``kernel_ends_seconds``
the kernel with end cells that locate runs; windows-copy32: the GPU path before it, as the
baseline.)
GPU kernels of issue 6 (device machine), the CPU kernels on small references as baseline:
    python bench/locate.py --backends cpu,cuda --methods scan,scan1,antidiagonal,blocked \
        --max-size 33554432 --dp-max-size 0 --kernel-max-size 65536 --repeat 2 \
        --out bench/results/locate_gpu.jsonl
(on the GPU the narrow-cell shares of "scan" are counted by the GPU kernel itself.)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

import numpy as np

from _common import SHARED_DATA, cpu_name, timed, usable_cores
from warpalign._backends.cpu.scan import score_end_method
from warpalign.bench.drivers import cut_query
from warpalign.errors import BackendUnavailable
from warpalign.locate import (
    default_window,
    first_pass_span,
    locate_encoded,
    span_bound,
    window_bounds,
)
from warpalign.scoring import Scoring

HERE = Path(__file__).resolve().parent
CHRX = SHARED_DATA / "dna" / "ce2chrX.fa.gz"   # WARPALIGN_SHARED_DATA on the GPU machine


def device_name(backend: str) -> str:
    if backend == "cuda":
        import cupy
        props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
        name = props["name"]
        return name.decode() if isinstance(name, bytes) else str(name)
    return f"{cpu_name()} ({usable_cores()} cores)"


def load_reference(path: Path, size: int, scoring: Scoring) -> np.ndarray:
    with gzip.open(path, "rt") as fh:
        fh.readline()
        text = "".join(line.strip() for line in fh)
    codes = scoring.encode(text)
    while len(codes) < size:
        codes = np.concatenate([codes, codes[::-1]])
    return np.ascontiguousarray(codes[:size])


def emit(record: dict, out) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    if out:
        out.write(line + "\n")
        out.flush()


def copy32(q, ref, scoring, window):
    """The GPU path before issue 6 (the baseline): every window copied into a TargetSet,
    uploaded, and scanned by the 32-bit ends kernel; the best cell by the tie rule."""
    from types import SimpleNamespace

    from warpalign._backends import TargetSet, get_backend
    from warpalign.locate import window_bounds
    engine = get_backend("cuda")
    bounds = window_bounds(len(ref), window, span_bound(q, scoring))
    handle = engine.prepare(TargetSet.from_list([ref[lo:hi] for lo, hi in bounds.tolist()]))
    b = engine.scan(q, handle, scoring, algorithm="local", ends=True)
    te = b.target_ends.astype(np.int64) + bounds[:, 0]
    k = int(np.lexsort((b.query_ends, te, -b.scores.astype(np.int64)))[0])
    return SimpleNamespace(score=int(b.scores[k]), query_end=int(b.query_ends[k]),
                           target_end=int(te[k]))


def gpu_windows_facts(q, ref, scoring, span, window):
    """The GPU windows path's window length and count, the reference upload time (a fresh
    upload, timed apart: the timed queries find the reference resident) and the scores
    kernel alone (CUDA events, fastest of 3)."""
    from warpalign._backends.cuda import windows as gw
    width = window or default_window(span, len(ref), gw.wanted_windows(len(q)))
    bounds = window_bounds(len(ref), width, span)
    upload = min(gw.DeviceReference([ref]).seconds for _ in range(3))
    dev = gw.resident([ref])
    lo, length = bounds[:, 0], bounds[:, 1] - bounds[:, 0]
    kernel = min(gw.window_scores(dev, q, scoring, lo, length)[2] for _ in range(3))
    ends = min(gw.window_ends(dev, q, scoring, lo, length)[2] for _ in range(3))
    cells = len(q) * len(ref)
    return {"window": width, "windows": len(bounds), "reference_upload_seconds": round(upload, 6),
            "reference_resident": True, "kernel_seconds": round(kernel, 6),
            "kernel_gcups": round(cells / kernel / 1e9, 1),
            "kernel_ends_seconds": round(ends, 6), "kernel_ends_gcups": round(cells / ends / 1e9, 1)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reference", default=str(CHRX))
    p.add_argument("--queries", default="128,256", help="query lengths")
    p.add_argument("--min-size", type=int, default=1 << 10)
    p.add_argument("--max-size", type=int, default=1 << 22, help="largest reference (33554432 on a GPU)")
    p.add_argument("--dp-max-size", type=int, default=1 << 22,
                   help="largest reference for the scalar 'dp' method (0: never)")
    p.add_argument("--kernel-max-size", type=int, default=1 << 22,
                   help="largest reference for the CPU kernels scan/scan1/antidiagonal/blocked")
    p.add_argument("--gpu-kernel-max-size", type=int, default=1 << 25,
                   help="largest reference for the GPU kernels scan/scan1/antidiagonal/blocked")
    p.add_argument("--backends", default="cpu", help="comma list: cpu, cuda")
    p.add_argument("--methods", default="windows,dp", help="comma list of locate methods")
    p.add_argument("--mode", default="end", choices=("score", "end", "full"))
    p.add_argument("--window", type=int, help="window length (default: locate's)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=2)
    p.add_argument("--out", help="append the JSON lines to this file too")
    p.add_argument("--old-gpu-max-size", type=int, default=0,
                   help="largest reference for the GPU path before issue 6 (window copies + "
                        "the 32-bit ends kernel), method 'windows-copy32'; 0: never")
    args = p.parse_args(argv)
    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))

    scoring = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
    ref_all = load_reference(Path(args.reference), args.max_size, scoring)
    ref_all.setflags(write=False)   # read-only: the GPU path keeps it resident between queries
    rng = np.random.default_rng(args.seed)
    sizes = []
    n = args.min_size
    while n <= args.max_size:
        sizes.append(n)
        n *= 2
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    runs = [(b, m) for b in args.backends.split(",") for m in args.methods.split(",")]
    if args.old_gpu_max_size and "cuda" in args.backends.split(","):
        runs.append(("cuda", "windows-copy32"))
    devices = {}
    for backend in {b for b, _ in runs}:
        try:
            devices[backend] = device_name(backend)
        except (ImportError, BackendUnavailable) as exc:
            print(f"skipping backend {backend}: {exc}", file=sys.stderr)
    for m in (int(x) for x in args.queries.split(",")):
        for n in sizes:
            ref = ref_all[:n]
            q = cut_query(ref, m, rng)
            span = span_bound(q, scoring)
            window = args.window or default_window(span, n)
            first = None
            for backend, method in runs:
                if backend not in devices or (method == "dp" and n > args.dp_max_size):
                    continue
                kernel_max = args.gpu_kernel_max_size if backend == "cuda" else args.kernel_max_size
                if method in ("scan", "scan1", "antidiagonal", "blocked") and n > kernel_max:
                    continue
                if method == "windows-copy32" and n > args.old_gpu_max_size:
                    continue

                def run(backend=backend, method=method, q=q, ref=ref, old_window=window):
                    if method == "windows-copy32":
                        return copy32(q, ref, scoring, old_window)
                    return locate_encoded(q, ["ref"], [ref], scoring, mode=args.mode,
                                          method=method, backend=backend, window=args.window,
                                          strand="plus")   # papers' setting: one strand
                try:
                    hit = run()   # warm-up: kernels compiled / loaded, device initialised
                except BackendUnavailable as exc:
                    print(f"skipping {backend}/{method}: {exc}", file=sys.stderr)
                    continue
                hit, times = timed(run, args.repeat)
                secs = min(times)
                # mode "score" reports no ends (the old GPU path does): compare scores only
                found = (hit.score,) if args.mode == "score" else (hit.score, hit.query_end, hit.target_end)
                first = first or (f"{backend}/{method}", found)
                extra, win_used = {}, window
                # the windows' overlap: locate's first pass (two passes, top = 1) or the
                # full span bound; seams: the first pass's best needed the seam windows
                first_span = first_pass_span(q, scoring) if args.window is None else None
                cut = first_span or span
                if method in ("windows", "auto"):
                    extra["first_pass_span"] = first_span
                    extra["seams"] = bool(first_span and hit.score > 0 and
                                          span_bound(q, scoring, hit.score) > first_span)
                if backend == "cuda" and method in ("windows", "auto"):
                    extra.update(gpu_windows_facts(q, ref, scoring, cut, args.window))
                    win_used = extra.pop("window")
                elif first_span is not None and method in ("windows", "auto"):
                    win_used = default_window(first_span, n)
                windows = -(-max(n - win_used, 0) // max(win_used - cut + 1, 1)) + 1
                overlap = (windows - 1) * (cut - 1) if method.startswith("windows") else 0
                if method == "scan":   # rows run wide (int32), counted by the kernel itself
                    for name, limit in (("narrow_cell_share", 32767), ("narrow_cell_share_8bit", 255)):
                        if backend == "cuda":
                            from warpalign._backends.cuda.scan import score_end_method_gpu
                            wide = score_end_method_gpu("scan", q, ref, scoring, limit=limit)[3]
                        else:
                            wide = score_end_method("scan", q, ref, scoring, limit=limit)[3]
                        extra[name] = round(1 - wide / m, 6)
                emit({"job": "locate", "scope": "item", "backend": backend, "method": method,
                      "device": devices[backend],
                      "params": {"query": m, "reference": n, "match": 1, "mismatch": -2,
                                 "gap_open": 5, "gap_extend": 1, "mode": args.mode,
                                 "window": win_used if method.startswith("windows") else None,
                                 "span_bound": span},
                      "seconds": round(secs, 6), "gcups": round(m * n / secs / 1e9, 4),
                      "overlap_cells": m * overlap, "score": hit.score, **extra,
                      "agrees_with": first[0] if found == first[1] else f"DIFFERS from {first[0]}",
                      "baseline": "the other methods of this run (dp and the scan/antidiagonal "
                                  "kernels: exact, 1 core)",
                      "command": command}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
