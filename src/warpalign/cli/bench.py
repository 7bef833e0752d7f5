"""``warpalign bench [JOB ...]``: time each job on this machine beside the papers' numbers.

Prints a table (job, backend, method, size, seconds, GCUPS, baseline) on stdout; with
``--out DIR`` (default ``warpalign-bench``) appends DESIGN.md's JSON lines to
``DIR/<job>.jsonl`` and draws ``DIR/<job>.png`` for every job the folder has records for
(kernel and whole call side by side, CPU series per core, the GPU and CPU named, the
papers' published numbers beside ours).
The drivers are :mod:`warpalign.bench`; they need nothing outside the package.
"""

from __future__ import annotations

import argparse
import shlex
import sys

from ..choices import BACKENDS, BENCH_JOBS


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``bench`` to the command line's subparsers; returns its parser."""
    p = sub.add_parser(
        "bench", help="benchmark the jobs on this machine (table, JSON lines, PNG plots)",
        description="Time each job (default: all of " + ", ".join(BENCH_JOBS) + ") on "
                    "this machine with an in-run baseline; the default runs the papers' "
                    "settings (several minutes; CPU runs use fewer pairs and shorter "
                    "strings), --quick small sizes (about a minute).")
    p.add_argument("jobs", nargs="*", metavar="JOB",
                   help="jobs to run: " + ", ".join(BENCH_JOBS) + " (default: all)")
    p.add_argument("--quick", action="store_true", help="small sizes, about a minute in all")
    p.add_argument("--backend", default="auto", choices=BACKENDS)
    p.add_argument("--out", default="warpalign-bench",
                   help="folder for <job>.jsonl and <job>.png (default: warpalign-bench); "
                        "the plots show every job of the folder's JSON lines")
    p.add_argument("--no-plots", action="store_true", help="JSON lines only, no PNG")
    p.set_defaults(run=run)
    return p


def _progress(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    from ..bench import runner

    jobs = runner.check_jobs(args.jobs)   # ValueError naming the jobs; main prints it
    argv = ["warpalign", "bench", *jobs, *(["--quick"] if args.quick else []),
            "--backend", args.backend, "--out", args.out]
    command = shlex.join(argv)
    records = runner.run(jobs, quick=args.quick, backend=args.backend, out=args.out,
                         command=command, plots=not args.no_plots,
                         echo=_progress if sys.stderr.isatty() else None)
    print(runner.format_table(records))
    print(f"# JSON lines and plots in {args.out}/", file=sys.stderr)
    return 0
