"""``warpalign align A B``: align every sequence of A with every sequence of B.

Writes each alignment as text (the default), TSV or JSON lines.
"""

from __future__ import annotations

import argparse

from ..choices import ALIGN_MODES
from .flags import (
    algorithm_flag,
    backend_flag,
    inputs,
    output_flag,
    parse_scoring,
    scoring_flags,
    threads_flag,
)
from .output import output

FORMATS = ("text", "tsv", "json")


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``align`` to the command line's subparsers; returns its parser."""

    p = sub.add_parser("align", help="align every sequence of A with every sequence of B")
    p.add_argument("a", metavar="A", help="queries: FASTA/FASTQ file ('-': standard input)")
    p.add_argument("b", metavar="B", help="targets: FASTA/FASTQ file ('-': standard input)")
    p.add_argument("--literal", action="store_true",
                   help="A and B are sequences typed on the command line, not files")
    scoring_flags(p)
    p.add_argument("--mode", default="full", choices=ALIGN_MODES)
    algorithm_flag(p)
    backend_flag(p)
    threads_flag(p)
    p.add_argument("--format", default="text", choices=FORMATS)
    output_flag(p)
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    import json

    from ..align import align_encoded
    from ..formats import ALIGN_COLUMNS, alignment_fields, alignment_to_json, format_alignment
    from ..io import load_sequences
    from ..scoring import check_input
    scoring = parse_scoring(args)
    a, b = ([args.a], [args.b]) if args.literal else inputs(args.a, args.b, literal_hint=True)
    qnames, qs = load_sequences(a, scoring.alphabet, default_name="a")
    tnames, ts = load_sequences(b, scoring.alphabet, default_name="b")
    check_input(scoring, [*qs, *ts], "A and B" if args.literal else f"{args.a} and {args.b}")
    with output(args.output) as out:
        if args.format == "tsv":
            out.write("#" + "\t".join(ALIGN_COLUMNS) + "\n")
        for qn, q in zip(qnames, qs):
            for tn, t in zip(tnames, ts):
                aln = align_encoded(q, t, scoring, mode=args.mode, algorithm=args.algorithm,
                                    backend=args.backend, threads=args.threads)
                if args.format == "text":
                    out.write(format_alignment(qn, tn, aln))
                elif args.format == "tsv":
                    row = alignment_fields(qn, tn, aln.score, aln)
                    out.write("\t".join(row[c] for c in ALIGN_COLUMNS) + "\n")
                else:
                    out.write(json.dumps({"query": qn, "target": tn, **alignment_to_json(aln)}) + "\n")
    return 0
