#!/usr/bin/env python3
"""Whole ``search()`` calls by mode (issues 20 and 21): what a user's call costs beyond the
scan.

The 20 standard queries against the Swiss-Prot-sized synthetic database of
bench/search_gpu.py (same seed, lengths and composition), BLOSUM62 11/1, through the
public ``search()`` in a warm process (one warm-up call per setting first): mode score,
end and full at ``--top-k`` (repeatable). For mode full the same hits are also traced
by the CPU engine (``align_many`` with the CPU ``traceback`` engine, every core) and by
the GPU engine alone (scope item: the traceback of the reported hits, no scan), and the
two are compared (same alignments, or exit 1). One JSON line per measurement, median of
``--repeat`` calls; mode full's record names the mode score call of the same run as its
baseline (``ratio``: score seconds / full seconds).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import cpu_name, emit, timed, usable_cores
from scaling import build_database
from search_gpu import _find, read_fasta
from warpalign import Scoring, search
from warpalign._backends.registry import engine_for
from warpalign.traceback import align_many


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--top-k", type=int, action="append")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/search_modes.py " + " ".join(argv or sys.argv[1:])
    import cupy
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    _, queries = read_fasta(_find("standard_queries20.fasta"))
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    ok = True
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), args.seed)
        cells = sum(len(q) for q in queries) * db.residues
        for top_k in args.top_k or [10]:
            secs = {}
            for mode in ("score", "end", "full"):
                def run(mode=mode):
                    return search(queries, db, scoring, top_k=top_k, mode=mode, backend="cuda")
                run()                                          # warm up: compile, upload
                hits, ts = timed(run, args.repeat)
                secs[mode] = float(np.median(ts))
                emit({"job": "search", "scope": "call", "backend": "cuda", "method": "auto",
                      "device": device, "cold": False,
                      "params": {"mode": mode, "queries": len(queries), "top_k": top_k,
                                 "residues": db.residues, "scoring": "BLOSUM62 11/1"},
                      "seconds": secs[mode], "runs": [round(t, 4) for t in ts],
                      "gcups": cells / secs[mode] / 1e9,
                      "ratio_to_score": secs["score"] / secs[mode],
                      "baseline": "mode score, same run", "command": command}, out)
            codes = [scoring.encode(q) for q in queries]
            jobs = [(q, db.sequence(int(i)), int(s), int(qe), int(te))
                    for q, h in zip(codes, hits)
                    for i, s, qe, te in zip(h.targets, h.scores, h.query_ends, h.target_ends)]
            gpu = engine_for("traceback", "cuda", "auto")
            got_gpu, t_gpu = timed(lambda: align_many(jobs, scoring, engine=gpu), args.repeat)
            align_many(jobs[:2], scoring)                     # warm up: Numba's compile
            t0 = time.perf_counter()
            got_cpu = align_many(jobs, scoring)
            t_cpu = time.perf_counter() - t0
            same = got_gpu == got_cpu
            ok &= same
            tb_cells = sum(len(j[0]) * len(j[1]) for j in jobs)
            for engine, t in (("cuda", float(np.median(t_gpu))), ("cpu", t_cpu)):
                emit({"job": "traceback", "scope": "item", "backend": engine,
                      "method": "align_many", "device": device if engine == "cuda" else f"{cpu_name()} x {usable_cores()}",
                      "params": {"alignments": len(jobs), "top_k": top_k,
                                 "queries": len(queries), "same_as_cpu": same},
                      "seconds": t, "gcups": tb_cells / t / 1e9,
                      "baseline": "the CPU engine on the same hits, same run",
                      "command": command}, out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
