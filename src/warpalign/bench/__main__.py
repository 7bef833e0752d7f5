"""``python -m warpalign.bench report DIR... | plot FILE... --out DIR``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .plot import plot_all
from .report import load_results, report


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and write the report or the plots; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m warpalign.bench",
                                description="Reproduction report and plots from JSON lines.")
    sub = p.add_subparsers(dest="what", required=True)
    rp = sub.add_parser("report", help="docs/REPRODUCTION.md's text on stdout")
    rp.add_argument("paths", nargs="+", help="JSON-lines files or folders of *.jsonl")
    pp = sub.add_parser("plot", help="one PNG per job the records have: kernel and whole "
                                     "call side by side, CPU series per core")
    pp.add_argument("paths", nargs="+", help="JSON-lines files or folders of *.jsonl")
    pp.add_argument("--out", required=True, help="folder for the PNG files")
    args = p.parse_args(argv)
    if args.what == "report":
        sys.stdout.write(report(args.paths))
        return 0
    recs = load_results(args.paths)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for path in plot_all(recs, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
