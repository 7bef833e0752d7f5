#!/usr/bin/env python3
"""LCS benchmark (issue 5, paper 001): LLCS and full LCS, ours vs rapidfuzz, same run.

Prints one JSON line per measurement (DESIGN.md "Measuring"), job "lcs", gcups = |a|·|b| /
seconds / 1e9 (G cells/s; the full LCS counts the same cells although Hirschberg does about
twice the work). Measured, each on the same inputs in this run:

- random DNA pairs (``--sizes``, in symbols): our LLCS on one thread and on all cores,
  rapidfuzz's ``LCSseq.similarity`` (one core) as the baseline; our full LCS with
  ``--lcs-sizes``;
- the two E. coli genomes of ../shared/data (4.6 M × 4.6 M): the LLCS, and the full LCS
  with ``--ecoli-lcs`` (minutes on a CPU).

Paper 001's Table 1 grid (A = 5 M … 20 M, B = 1 M … 10 M) is ``--sizes 5000000x1000000 ...``;
on a CPU one such LCS takes minutes to hours. ``--backend cuda`` times the GPU path once the
CUDA LCS kernel is there. Best of ``--repeat`` runs each.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from warpalign.lcs import lcs, lcs_length

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data" / "dna"


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def fasta_first(path: Path) -> bytes:
    from Bio.SeqIO.FastaIO import SimpleFastaParser

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return next(SimpleFastaParser(fh))[1].encode("ascii")


def timed(fn, repeat: int):
    best, value = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def parse_size(s: str) -> tuple[int, int]:
    a, _, b = s.lower().partition("x")
    return int(float(a)), int(float(b or a))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="*", default=["300000x300000", "1000000x1000000"],
                   help="random DNA sizes AxB for the LLCS (default: 3e5², 1e6²)")
    p.add_argument("--lcs-sizes", nargs="*", default=["300000x300000"],
                   help="random DNA sizes AxB for the full LCS")
    p.add_argument("--ecoli", action="store_true", help="LLCS of the two E. coli genomes")
    p.add_argument("--ecoli-lcs", action="store_true", help="full LCS of the two E. coli genomes")
    p.add_argument("--backend", default="cpu", choices=("auto", "cpu", "cuda"))
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--no-rapidfuzz", action="store_true")
    p.add_argument("--out", help="append the JSON lines to this file too")
    args = p.parse_args(argv)
    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at the end)
    ncores = cores()
    cpu = cpu_name()

    def emit(method, a, b, seconds, threads, data, baseline=None, **extra):
        cells = len(a) * len(b)
        device = cpu if args.backend == "cpu" else args.backend
        rec = {"job": "lcs", "scope": "item", "backend": args.backend, "method": method,
               "device": f"{device}, {threads} of {ncores} cores",
               "params": {"a_len": len(a), "b_len": len(b), "threads": threads, "data": data,
                          **extra},
               "seconds": round(seconds, 4), "gcups": round(cells / seconds / 1e9, 2),
               "baseline": baseline, "command": command}
        line = json.dumps(rec)
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()
        return rec

    lcs_length(b"ACGT" * 3000, b"AGCT" * 3000, backend=args.backend)   # compile
    lcs(b"ACGT" * 3000, b"AGCT" * 3000, backend=args.backend)
    rng = np.random.default_rng(2014)
    acgt = np.frombuffer(b"ACGT", np.uint8)

    def compare(a, b, data, rf_repeat):
        base = None
        if not args.no_rapidfuzz:
            from rapidfuzz.distance import LCSseq
            sec, ref = timed(lambda: LCSseq.similarity(a, b), rf_repeat)
            r = emit("rapidfuzz LCSseq.similarity", a, b, sec, 1, data, llcs=ref)
            base = {"method": r["method"], "gcups": r["gcups"], "threads": 1}
        for threads in sorted({1, ncores}):
            sec, got = timed(lambda t=threads: lcs_length(a, b, backend=args.backend, threads=t),
                             args.repeat)
            if base is not None and got != ref:
                raise SystemExit(f"LLCS mismatch on {data}: ours {got}, rapidfuzz {ref}")
            emit("llcs bit-parallel", a, b, sec, threads, data, base, llcs=got)

    for size in args.sizes:
        na, nb = parse_size(size)
        a = acgt[rng.integers(0, 4, na)].tobytes()
        b = acgt[rng.integers(0, 4, nb)].tobytes()
        compare(a, b, "random DNA", args.repeat)

    for size in args.lcs_sizes:
        na, nb = parse_size(size)
        a = acgt[rng.integers(0, 4, na)].tobytes()
        b = acgt[rng.integers(0, 4, nb)].tobytes()
        for threads in sorted({1, ncores}):
            sec, s = timed(lambda x=a, y=b, t=threads: lcs(x, y, backend=args.backend, threads=t), 1)
            emit("lcs hirschberg", a, b, sec, threads, "random DNA", None, lcs_len=len(s))

    if args.ecoli or args.ecoli_lcs:
        a = fasta_first(SHARED / "ecoli_K12_W3110.fasta.gz")
        b = fasta_first(SHARED / "ecoli_EC590.fasta.gz")
        data = "E. coli K-12 W3110 vs EC590"
        if args.ecoli:
            sec, got = timed(lambda: lcs_length(a, b, backend=args.backend), 1)
            emit("llcs bit-parallel", a, b, sec, ncores, data, None, llcs=got)
        if args.ecoli_lcs:
            import resource
            sec, s = timed(lambda: lcs(a, b, backend=args.backend), 1)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            emit("lcs hirschberg", a, b, sec, ncores, data, None, lcs_len=len(s),
                 peak_rss_mib=peak)
    if out:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
