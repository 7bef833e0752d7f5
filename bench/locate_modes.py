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

Beside the loop (``params.path`` "per_read"), issue 22's many-reads call (``path`` "many":
all reads in one ``locate_many_encoded`` call, the same hits required; the median of
``--many-repeat`` calls after an untimed one, ``ratio_to_score`` against the many-reads
mode score), the CLI writing
SAM from a FASTQ of the reads against the chromosome built once as a reference directory
(``path`` "cli_sam", mode full, warm process; the median of ``--sam-repeat`` runs), and
``--single`` calls of one 256 bp read against the resident reference, mode full (``path``
"single_256", ``per_read_ms`` per call).
"""

from __future__ import annotations

import argparse
import gzip
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import SHARED_DATA, emit
from warpalign.alphabet import reverse_complement
from warpalign.cli import main as cli_main
from warpalign.locate import locate_encoded, locate_many_encoded
from warpalign.reference import Reference
from warpalign.scoring import Scoring


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reads", type=int, default=1000)
    p.add_argument("--length", type=int, default=150)
    p.add_argument("--backend", default="cuda")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--max-reference", type=int, help="only this many symbols of chrX (tries)")
    p.add_argument("--single", type=int, default=50, help="calls of one 256 bp read")
    p.add_argument("--sam-repeat", type=int, default=1,
                   help="warm CLI SAM runs (the figure is their median)")
    p.add_argument("--many-repeat", type=int, default=3,
                   help="timed many-reads calls per mode after an untimed one (median)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/locate_modes.py " + " ".join(argv or sys.argv[1:])
    scoring = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
    with gzip.open(SHARED_DATA / "dna" / "ce2chrX.fa.gz", "rt") as fh:
        fh.readline()
        chrx = "".join(line.strip() for line in fh).upper()
    ref = scoring.encode(chrx[:args.max_reference])
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
    secs, many_secs = {}, {}
    ok = True
    cells = 2 * args.length * len(ref) * len(reads)
    params = {"reads": len(reads), "read_length": args.length, "reference": "ce2chrX",
              "reference_length": len(ref), "strand": "both", "top": 1, "scoring": "1/-2/5/1"}

    def line(path, mode, seconds, n_cells, n, baseline, **extra):
        emit({"job": "locate", "scope": "call", "backend": args.backend, "method": "auto",
              "device": device, "cold": False,
              "params": {**params, "mode": mode, "path": path, **extra},
              "seconds": seconds, "per_read_ms": 1e3 * seconds / n,
              "gcups": n_cells / seconds / 1e9, "baseline": baseline, "command": command}, out)

    for mode in ("score", "end", "full"):
        locate_encoded(reads[0], ["chrX"], [ref], scoring, mode=mode, backend=args.backend)
        t0 = time.perf_counter()
        got = [locate_encoded(r, ["chrX"], [ref], scoring, mode=mode, backend=args.backend)
               for r in reads]
        secs[mode] = time.perf_counter() - t0
        found = None
        if mode == "full":
            found = sum(abs(a.target_start - at) <= 5 and (a.strand == "-") == minus
                        for a, (at, minus) in zip(got, where))
            ok &= found >= 0.95 * len(reads)   # a read may fall in a repeat: another copy scores as well
        line("per_read", mode, secs[mode], cells, len(reads), "mode score, same run",
             found_where_cut=found, ratio_to_score=secs["score"] / secs[mode])
        # warm: the many-reads path's own kernels, plans and buffers (its first call of a
        # mode ran 1.55-3.49 s for mode full across sessions where warm calls take ~1.6)
        many = list(locate_many_encoded(reads, ["chrX"], [ref], scoring, mode=mode,
                                        backend=args.backend))
        runs = []
        for _ in range(args.many_repeat):
            t0 = time.perf_counter()
            many = list(locate_many_encoded(reads, ["chrX"], [ref], scoring, mode=mode,
                                            backend=args.backend))
            runs.append(time.perf_counter() - t0)
            ok &= many == got
        seconds = float(np.median(runs))
        many_secs[mode] = seconds
        line("many", mode, seconds, cells, len(reads), "per_read loop, same run",
             same_hits=many == got, speedup_over_per_read=secs[mode] / seconds,
             ratio_to_score=many_secs["score"] / seconds, repeat=args.many_repeat,
             runs_s=[round(r, 4) for r in runs])
    with tempfile.TemporaryDirectory() as tmp:
        built = Reference.build([scoring.alphabet.decode(ref)], Path(tmp) / "chrx.ref")
        fastq = Path(tmp) / "reads.fq"
        with open(fastq, "w") as fh:
            for k, r in enumerate(reads):
                fh.write(f"@r{k}\n{scoring.alphabet.decode(r)}\n+\n{'I' * len(r)}\n")
        sam = [str(fastq), str(built.path), "--format", "sam", "--backend", args.backend,
               "--no-progress", "-o", str(Path(tmp) / "out.sam")]
        cli_main(["locate", *sam])   # warm: kernels, the reference's device copy
        runs = []
        for _ in range(args.sam_repeat):
            t0 = time.perf_counter()
            cli_main(["locate", *sam])
            runs.append(time.perf_counter() - t0)
        seconds = float(np.median(runs))
        line("cli_sam", "full", seconds, cells, len(reads), "per_read loop, same run",
             input="fasta", sam=True, speedup_over_per_read=secs["full"] / seconds,
             repeat=args.sam_repeat, runs_s=[round(r, 4) for r in runs])
        q = ref[len(ref) // 2:len(ref) // 2 + 256].copy()
        locate_encoded(q, ["chrX"], [ref], scoring, mode="full", backend=args.backend)
        t0 = time.perf_counter()
        for _ in range(args.single):
            locate_encoded(q, ["chrX"], [ref], scoring, mode="full", backend=args.backend)
        seconds = time.perf_counter() - t0
        line("single_256", "full", seconds, 2 * 256 * len(ref) * args.single, args.single,
             "none", reads=args.single, read_length=256)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
