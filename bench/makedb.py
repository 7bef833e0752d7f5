#!/usr/bin/env python3
"""``warpalign makedb`` on a large FASTA (issue 23): residues per second and peak RSS.

A synthetic protein FASTA (60 residues a line) with the Swiss-Prot-sized lengths of
../shared/data/protein (516,371 sequences, 186.7 M residues; ``--copies`` repeats them)
and its residue composition is written once, then built by ``warpalign makedb`` in a
fresh process per run (``--memory``: the build's budget, ``Database.build(memory=)``;
``--threads``: its threads; ``--gzip``: from the FASTA gzipped, level 6);
each build reports its own peak RSS (``resource.getrusage``). The FASTA is written by a
child process too: Linux carries the peak of a process into the ``ru_maxrss`` of a
child it forks and execs, so this process stays small. One JSON line per run, scope
"call".

    python bench/makedb.py --out bench/results/makedb_cpu.jsonl
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import SHARED_DATA, cpu_name, emit, usable_cores

_CHILD = """
import resource, sys, time
from warpalign.cli import main
t0 = time.perf_counter()
code = main(sys.argv[1:])
print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
sys.exit(code)
"""


def write_fasta(path: Path, copies: int, seed: int) -> tuple[int, int]:
    """The synthetic FASTA; returns (sequences, residues)."""
    data = SHARED_DATA / "protein"
    with gzip.open(data / "swissprot_size_lengths.npy.gz") as f:
        lengths = np.tile(np.load(f).astype(np.int64), copies)
    comp = json.loads((data / "swissprot_size_composition.json").read_text())["composition"]
    letters = np.frombuffer("".join(comp).encode(), np.uint8)
    probs = np.array(list(comp.values()), dtype=np.float64)
    rng = np.random.default_rng(seed)
    text = letters[rng.choice(len(letters), size=int(lengths.sum()), p=probs / probs.sum())]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    with open(path, "wb") as out:
        for i in range(len(lengths)):
            seq = text[starts[i]:starts[i + 1]].tobytes()
            out.write(b">sp|S%d|synthetic length %d\n" % (i, len(seq)))
            out.write(b"\n".join(seq[k:k + 60] for k in range(0, len(seq), 60)) + b"\n")
    return len(lengths), int(lengths.sum())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--copies", type=int, default=1)
    p.add_argument("--memory", action="append", help="build budgets, e.g. 1G (default: 1G)")
    p.add_argument("--threads", type=int, action="append",
                   help="the build's --threads, e.g. 1 (default: every usable core)")
    p.add_argument("--gzip", action="store_true", help="build from the FASTA gzipped")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--dir", default=tempfile.gettempdir())
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/makedb.py " + " ".join(argv or sys.argv[1:])
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(HERE.parent / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])}
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        fasta = Path(tmp) / "db.fasta"
        t0 = time.perf_counter()
        made = subprocess.run(
            [sys.executable, "-c", "import sys; sys.path[:0] = sys.argv[1:3]; import makedb; "
             "print(*makedb.write_fasta(makedb.Path(sys.argv[3]), int(sys.argv[4]), "
             "int(sys.argv[5])))", str(HERE), env["PYTHONPATH"], str(fasta),
             str(args.copies), str(args.seed)], env=env, capture_output=True, text=True)
        if made.returncode:
            raise SystemExit(f"writing the FASTA failed:\n{made.stderr}")
        n, residues = map(int, made.stdout.split())
        print(f"# {fasta.stat().st_size / 1e9:.2f} GB FASTA, {n} sequences, {residues} "
              f"residues, written in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        if args.gzip:
            subprocess.run(["gzip", "-6", str(fasta)], check=True)
            fasta = fasta.with_name(fasta.name + ".gz")
        from warpalign._backends.stream import parse_memory
        for memory, threads, _ in itertools.product(args.memory or ["1G"],
                                                    args.threads or [usable_cores()],
                                                    range(args.repeat)):
            budget = parse_memory(memory, "--memory")
            run = subprocess.run(
                [sys.executable, "-c", _CHILD, "makedb", str(fasta), str(Path(tmp) / "db.wa"),
                 "--force", "--no-progress", "--memory", str(budget),
                 "--threads", str(threads)],
                env=env, capture_output=True, text=True, check=True)
            seconds, rss = run.stdout.split()
            seconds, rss = float(seconds), int(rss)
            emit({"job": "makedb", "scope": "call", "cold": False, "backend": "cpu",
                  "method": "streamed", "device": f"{cpu_name()} ({threads} of "
                  f"{usable_cores()} cores: --threads {threads}, and a read-ahead thread)",
                  "params": {"sequences": n, "residues": residues, "threads": threads,
                             "fasta_bytes": fasta.stat().st_size,
                             "memory": budget, "peak_rss_bytes": rss,
                             "input": ("gzip" if args.gzip else "plain") +
                                      " FASTA, 60 residues a line, on local disk"},
                  "seconds": seconds, "residues_per_s": residues / seconds,
                  "baseline": None, "command": command}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
