#!/usr/bin/env python3
"""``locate`` of many short reads by mode (issue 20): what the alignment adds to a call.

``--reads`` reads of ``--length`` bp cut from C. elegans chrX (ce2chrX, 17.7 Mbp) at
random places, each with 3% substitutions, half of them reverse-complemented, located one
call each against the whole chromosome (encoded once, read-only, so the GPU keeps one
resident copy) with ``locate_encoded`` (the public ``locate`` on encoded records), both
strands, top 1, scoring match 1 / mismatch -2 / gap open 5 / extend 1 (paper 002), mode
score, end and full in the same run. Every read must be found where it was cut (mode
full). One JSON line per mode (scope "call": the whole loop of calls; GCUPS counts both
strands' cells); ``ratio_to_score`` compares with mode score of the same run.
"""

from __future__ import annotations

import argparse
import gzip
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import SHARED_DATA, emit
from warpalign.alphabet import reverse_complement
from warpalign.locate import locate_encoded
from warpalign.scoring import Scoring


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reads", type=int, default=1000)
    p.add_argument("--length", type=int, default=150)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/locate_modes.py " + " ".join(argv or sys.argv[1:])
    scoring = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
    with gzip.open(SHARED_DATA / "dna" / "ce2chrX.fa.gz", "rt") as fh:
        fh.readline()
        chrx = "".join(line.strip() for line in fh).upper()
    ref = scoring.encode(chrx)
    ref.setflags(write=False)
    rng = np.random.default_rng(args.seed)
    reads, where = [], []
    for k in range(args.reads):
        while True:
            at = int(rng.integers(0, len(ref) - args.length))
            read = ref[at:at + args.length].copy()
            if (read < 4).all():                   # no N in the read
                break
        flip = rng.random(args.length) < 0.03
        read[flip] = (read[flip] + rng.integers(1, 4, int(flip.sum()))) % 4
        minus = k % 2 == 1
        reads.append(reverse_complement(read, scoring.alphabet) if minus else read)
        where.append((at, minus))
    if args.backend == "cuda":
        import cupy
        device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    else:
        from _common import cpu_name
        device = cpu_name()
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    secs = {}
    ok = True
    for mode in ("score", "end", "full"):
        locate_encoded(reads[0], ["chrX"], [ref], scoring, mode=mode, backend=args.backend)
        t0 = time.perf_counter()
        got = [locate_encoded(r, ["chrX"], [ref], scoring, mode=mode, backend=args.backend)
               for r in reads]
        secs[mode] = time.perf_counter() - t0
        if mode == "full":
            found = sum(abs(a.target_start - at) <= 5 and (a.strand == "-") == minus
                        for a, (at, minus) in zip(got, where))
            ok &= found >= 0.95 * len(reads)   # a read may fall in a repeat: another copy scores as well
        cells = 2 * args.length * len(ref) * len(reads)
        emit({"job": "locate", "scope": "call", "backend": args.backend, "method": "auto",
              "device": device, "cold": False,
              "params": {"mode": mode, "reads": len(reads), "read_length": args.length,
                         "reference": "ce2chrX", "reference_length": len(ref),
                         "strand": "both", "top": 1, "scoring": "1/-2/5/1",
                         "found_where_cut": int(found) if mode == "full" else None},
              "seconds": secs[mode], "per_read_ms": 1e3 * secs[mode] / len(reads),
              "gcups": cells / secs[mode] / 1e9, "ratio_to_score": secs["score"] / secs[mode],
              "baseline": "mode score, same run", "command": command}, out)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
