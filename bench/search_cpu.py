#!/usr/bin/env python3
"""CPU database search benchmark (issue 2): standard queries vs the mmseqs2 example database.

Score mode, BLOSUM62 open 11 extend 1 by default. Prints one JSON line per measurement
(DESIGN.md "Measuring"): our CPU backend on all cores and on one core, parasail's
``sw_striped_profile_16`` and pyopal on one core, all in this run, on the same targets.
The one-core figures run on a subset of the database (every ``--every``-th target) to keep
the run short; GCUPS = query length x target residues / seconds / 1e9.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from _common import cpu_name, emit, usable_cores
from warpalign import Scoring
from warpalign.database import Database
from warpalign.io import load_sequences

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data" / "protein"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", default=str(SHARED / "mmseqs2_example_DB.fasta.gz"))
    p.add_argument("--queries", default=str(SHARED / "standard_queries20.fasta"))
    p.add_argument("--max-queries", type=int, default=20)
    p.add_argument("--every", type=int, default=20, help="subset stride for one-core runs")
    p.add_argument("--matrix", default="BLOSUM62")
    p.add_argument("--gap-open", type=int, default=11)
    p.add_argument("--gap-extend", type=int, default=1)
    p.add_argument("--out", help="append the JSON lines to this file too")
    args = p.parse_args(argv)
    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))

    from warpalign._backends.cpu import CpuBackend
    cores = usable_cores()
    scoring = Scoring(matrix=args.matrix, gap_open=args.gap_open, gap_extend=args.gap_extend)
    qnames, queries = load_sequences(args.queries, scoring.alphabet)
    qnames, queries = qnames[: args.max_queries], queries[: args.max_queries]
    db = Database.from_sequences(args.db, alphabet=scoring.alphabet)
    subset_idx = np.arange(0, len(db), args.every)
    subset = Database.from_sequences([scoring.alphabet.decode(db.sequence(int(i))) for i in subset_idx],
                                     alphabet=scoring.alphabet)
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    device = f"{cpu_name()} ({cores} cores)"
    params = {"matrix": args.matrix, "gap_open": args.gap_open, "gap_extend": args.gap_extend,
              "queries": len(queries), "targets": len(db), "residues": db.residues,
              "subset_every": args.every, "subset_residues": subset.residues}
    base = {"job": "search", "params": params, "command": command}

    def ours(database, threads):
        """Time the database scan of every query (what search() runs per query)."""
        engine = CpuBackend(threads=threads)
        handle = engine.prepare(database.targets)
        engine.scan(queries[0][:50], handle, scoring)  # compile / load the kernels
        t0 = time.perf_counter()
        best = [int(engine.scan(q, handle, scoring).scores.max(initial=0)) for q in queries]
        return time.perf_counter() - t0, best

    cells_all = sum(len(q) for q in queries) * db.residues
    cells_sub = sum(len(q) for q in queries) * subset.residues
    secs, _ = ours(db, cores)
    emit({**base, "scope": "total", "backend": "cpu", "method": "auto", "device": device,
          "threads": cores, "seconds": secs, "gcups": cells_all / secs / 1e9,
          "gcups_per_core": cells_all / secs / 1e9 / cores,
          "baseline": "parasail sw_striped_profile_16 and pyopal, 1 core, same run"}, out)
    secs1, best1 = ours(subset, 1)
    emit({**base, "scope": "total", "backend": "cpu", "method": "auto", "device": device,
          "threads": 1, "subset": True, "seconds": secs1, "gcups": cells_sub / secs1 / 1e9,
          "baseline": "parasail sw_striped_profile_16 and pyopal, 1 core, same run"}, out)

    try:
        import parasail
    except ImportError:
        parasail = None
    if parasail is not None:
        letters = scoring.alphabet.symbols
        pmat = parasail.matrix_create(letters, 0, 0)
        for i in range(len(letters)):
            for j in range(len(letters)):
                pmat[i, j] = int(scoring.matrix[i, j])
        targets = [scoring.alphabet.decode(subset.sequence(i)) for i in range(len(subset))]
        t0 = time.perf_counter()
        best = []
        for q in queries:
            prof = parasail.profile_create_16(scoring.alphabet.decode(q), pmat)
            scores = [parasail.sw_striped_profile_16(prof, t, args.gap_open, args.gap_extend).score
                      for t in targets]
            best.append(max(scores))
        secs = time.perf_counter() - t0
        agree = best == best1
        emit({**base, "scope": "total", "backend": "parasail", "method": "sw_striped_profile_16",
              "device": device, "threads": 1, "subset": True, "seconds": secs,
              "gcups": cells_sub / secs / 1e9, "best_scores_agree": agree,
              "baseline": "warpalign cpu, same run"}, out)

    try:
        import pyopal
    except ImportError:
        pyopal = None
    if pyopal is not None:
        targets = [scoring.alphabet.decode(subset.sequence(i)) for i in range(len(subset))]
        pdb = pyopal.Database(targets)
        t0 = time.perf_counter()
        best = []
        for q in queries:
            r = pyopal.align(scoring.alphabet.decode(q), pdb, args.matrix, gap_open=args.gap_open,
                             gap_extend=args.gap_extend, threads=1)
            best.append(max(x.score for x in r))
        secs = time.perf_counter() - t0
        agree = best == best1
        emit({**base, "scope": "total", "backend": "pyopal", "method": "opal sw",
              "device": device, "threads": 1, "subset": True, "seconds": secs,
              "gcups": cells_sub / secs / 1e9, "best_scores_agree": agree,
              "baseline": "warpalign cpu, same run"}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
