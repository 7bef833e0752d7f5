#!/usr/bin/env python3
"""Concurrent searches on one database (issue 18): correctness and what threads cost.

The 20 standard queries against the Swiss-Prot-sized synthetic database of
bench/search_gpu.py (same seed, lengths and composition), BLOSUM62 11/1, top 10, through
the public ``search()`` on one shared ``Database`` and backend:

* serial: ``--threads`` calls of 20 / threads queries each, one after another;
* threads: the same calls from ``--threads`` threads at once;
* one call of all 20 queries (the packed batch a single caller would run).

Every threaded round is compared with the serial results (scores, targets, ends); a
mismatch is reported in the record (``same_as_serial``) and makes the script exit 1.
``--mode end`` covers the per-query path. One JSON line per measurement (scope "call").
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import emit
from scaling import build_database
from search_gpu import _find, read_fasta
from warpalign import Scoring, search


def summary(results):
    return [(h.scores.tolist(), h.targets.tolist(),
             None if h.target_ends is None else h.target_ends.tolist()) for h in results]


def threaded(calls):
    out = [None] * len(calls)
    gate = threading.Barrier(len(calls))

    def work(i):
        gate.wait()
        out[i] = calls[i]()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--mode", action="append", choices=("score", "end", "full"))
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/concurrency.py " + " ".join(argv or sys.argv[1:])
    import cupy
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    gpus = cupy.cuda.runtime.getDeviceCount()     # backend "cuda" drives every visible one
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    _, queries = read_fasta(_find("standard_queries20.fasta"))
    per = len(queries) // args.threads
    parts = [queries[i * per:(i + 1) * per] for i in range(args.threads)]
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    ok = True
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), args.seed)
        for mode in args.mode or ["score"]:
            def call(qs, mode=mode):
                return lambda: search(qs, db, scoring, top_k=10, mode=mode, backend="cuda")

            calls = [call(qs) for qs in parts]
            whole = call(queries[:per * args.threads])
            whole()                                   # warm up: compile, upload
            serial = [summary(c()) for c in calls]
            times = {"serial": [], "threads": [], "one call": []}
            same = []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                for c in calls:
                    c()
                times["serial"].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                got = threaded(calls)
                times["threads"].append(time.perf_counter() - t0)
                same.append([summary(g) for g in got] == serial)
                t0 = time.perf_counter()
                whole()
                times["one call"].append(time.perf_counter() - t0)
            ok &= all(same)
            cells = sum(len(q) for q in queries[:per * args.threads]) * db.residues
            for how, ts in times.items():
                secs = float(np.median(ts))
                emit({"job": "search", "scope": "call", "backend": "cuda",
                      "method": f"{how} ({args.threads} x {per} queries)"
                      if how != "one call" else f"one call ({per * args.threads} queries)",
                      "device": f"{gpus} x {device}", "cold": False,
                      "params": {"mode": mode, "gpus": gpus, "queries": per * args.threads, "top_k": 10,
                                 "threads": args.threads if how == "threads" else 1,
                                 "residues": db.residues, "scoring": "BLOSUM62 11/1",
                                 "same_as_serial": all(same) if how == "threads" else None},
                      "seconds": secs, "runs": [round(t, 4) for t in ts],
                      "gcups": cells / secs / 1e9,
                      "baseline": "serial calls and one call of all queries, same run",
                      "command": command}, out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
