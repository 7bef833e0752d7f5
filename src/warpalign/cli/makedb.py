"""``warpalign makedb INPUT OUTPUT``: encode a FASTA/FASTQ file into a database directory."""

from __future__ import annotations

import argparse
import os
import sys

from .flags import alphabets, inputs, progress_flags, show_progress, threads_flag


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``makedb`` to the command line's subparsers; returns its parser."""
    p = sub.add_parser("makedb", help="encode a FASTA/FASTQ file (plain or gzip) into a database")
    p.add_argument("input", help="FASTA/FASTQ file, plain or gzip ('-': standard input)")
    p.add_argument("output", help="database directory to create")
    p.add_argument("--alphabet", choices=alphabets(),
                   help="alphabet stored in the database (default protein; nucleotide input "
                        "then stops with an error: give --alphabet dna, or --alphabet "
                        "protein to store it as protein)")
    p.add_argument("--force", action="store_true", help="replace an existing database")
    p.add_argument("--memory", type=_memory, metavar="SIZE",
                   help="host memory the build holds at once, bytes or a size such as 1G "
                        "(default 1G); any input size builds within it, plus about 40 bytes "
                        "per sequence")
    threads_flag(p)
    progress_flags(p)
    p.set_defaults(run=run)
    return p


def _memory(text: str) -> int:
    """``--memory``: bytes or a size (argparse names the flag in its error)."""
    from .._backends.stream import parse_memory
    try:
        got = parse_memory(text, "--memory")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if isinstance(got, float):
        raise argparse.ArgumentTypeError(f"invalid --memory {text!r}; expected bytes or a "
                                         "size such as 1G, not a fraction")
    return got


def run(args) -> int:
    from ..database import Database
    source, = inputs(args.input)
    from ..errors import DatabaseError
    if not args.force and os.path.lexists(args.output):   # (build's message says overwrite=)
        raise DatabaseError(f"{args.output}: already exists; pass --force to replace it")
    db = Database.build(source, args.output, alphabet=args.alphabet,
                        progress=show_progress(args), overwrite=args.force,
                        memory=args.memory, threads=args.threads)
    print(f"warpalign makedb: {len(db)} sequences, {db.residues} residues -> {args.output}",
          file=sys.stderr)
    return 0
