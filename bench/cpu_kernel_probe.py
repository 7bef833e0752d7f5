"""Quick GCUPS probe of the CPU database-scan kernel next to parasail, in one run.

Queries from standard_queries20.fasta against the first N sequences of the MMseqs2
example database (BLOSUM62, open 11, extend 1, local): our kernel on 1 thread and on all
threads, and parasail's sw_striped_profile_16 on one core. Prints one JSON line per
measurement (DESIGN.md's keys).

    python bench/cpu_kernel_probe.py [--queries 20] [--targets 2000] [--ends]
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

from warpalign import Scoring
from warpalign._backends import TargetSet
from warpalign._backends.cpu import CpuBackend

DATA = Path(os.environ.get("WARPALIGN_SHARED_DATA",
                           Path(__file__).resolve().parents[2] / "shared" / "data"))


def read_fasta(path: Path, limit: int | None = None) -> list[str]:
    opener = gzip.open if path.suffix == ".gz" else open
    seqs: list[str] = []
    parts: list[str] = []
    with opener(path, "rt") as fh:
        for line in fh:
            if line.startswith(">"):
                if parts:
                    seqs.append("".join(parts))
                    parts = []
                    if limit and len(seqs) >= limit:
                        return seqs
            else:
                parts.append(line.strip())
    if parts and not (limit and len(seqs) >= limit):
        seqs.append("".join(parts))
    return seqs


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--targets", type=int, default=2000)
    ap.add_argument("--ends", action="store_true", help="also compute end coordinates")
    args = ap.parse_args(argv)

    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    queries = read_fasta(DATA / "protein" / "standard_queries20.fasta", args.queries)
    targets = read_fasta(DATA / "protein" / "mmseqs2_example_DB.fasta.gz", args.targets)
    tset = TargetSet.from_list([scoring.encode(t) for t in targets])
    qcodes = [scoring.encode(q) for q in queries]
    cells = sum(len(q) for q in queries) * tset.residues
    device = f"{cpu_name()} ({os.cpu_count()} cores)"
    base = {"job": "search", "scope": "total", "device": device,
            "params": {"queries": len(queries), "targets": len(targets), "residues": tset.residues,
                       "matrix": "BLOSUM62", "gap_open": 11, "gap_extend": 1, "ends": args.ends},
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]])}

    results = {}
    for threads in sorted({1, os.cpu_count() or 1}):
        backend = CpuBackend(threads=threads)
        handle = backend.prepare(tset)
        backend.scan(qcodes[0][:10], handle, scoring, ends=args.ends)  # compile / load cache
        t0 = time.perf_counter()
        for q in qcodes:
            backend.scan(q, handle, scoring, algorithm="local", ends=args.ends)
        dt = time.perf_counter() - t0
        results[threads] = cells / dt / 1e9
        print(json.dumps({**base, "backend": "cpu", "method": f"int16-batch{threads}t",
                          "threads": threads, "seconds": round(dt, 4),
                          "gcups": round(results[threads], 3)}), flush=True)

    try:
        import parasail
    except ImportError:
        print("parasail not installed; no baseline", file=sys.stderr)
        return 0
    t0 = time.perf_counter()
    for q in queries:
        profile = parasail.profile_create_16(q, parasail.blosum62)
        for t in targets:
            parasail.sw_striped_profile_16(profile, t, 11, 1)
    dt = time.perf_counter() - t0
    print(json.dumps({**base, "backend": "parasail", "method": "sw_striped_profile_16",
                      "threads": 1, "seconds": round(dt, 4), "gcups": round(cells / dt / 1e9, 3),
                      "baseline": f"ours 1 thread: {results[1]:.3f} GCUPS"}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
