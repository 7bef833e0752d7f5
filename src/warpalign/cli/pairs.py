"""``warpalign pairs X.fasta Y.fasta``: score record i of X against record i of Y.

Writes TSV: ``index xname yname score`` (index 0-based, in input order); with
``--threshold`` only the pairs scoring at least it; ``--mode full`` adds the alignment
(pident length qstart qend sstart send cigar; coordinates 1-based inclusive, as BLAST
writes them).
"""

from __future__ import annotations

import argparse

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

FORMATS = ("tsv", "sam")
PAIR_COLUMNS = ("index", "xname", "yname", "score")
FULL_COLUMNS = ("pident", "length", "qstart", "qend", "sstart", "send", "cigar")
#: Paper 000's DNA scoring (Table II), used when no scoring flag is given.
DEFAULT_SCORING = {"match": 2, "mismatch": -1, "gap_open": 1, "gap_extend": 1}


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``pairs`` to the command line's subparsers; returns its parser."""
    from ..pairs import METHODS, MODES

    p = sub.add_parser(
        "pairs", help="score record i of X against record i of Y (many independent pairs "
                      "at once)",
        description="Score each pair (record i of X, record i of Y), many pairs side by "
                    "side. Default scoring: DNA match 2, mismatch -1, linear gap 1.")
    p.add_argument("x", help="FASTA/FASTQ file (plain or gzip): the queries ('-': standard "
                             "input)")
    p.add_argument("y", help="FASTA/FASTQ file with as many records: the targets ('-': "
                             "standard input)")
    scoring_flags(p, DEFAULT_SCORING)
    p.add_argument("--threshold", type=int, help="write only the pairs scoring at least this")
    p.add_argument("--mode", default="score", choices=MODES,
                   help="full: also the alignment of each written pair (default score)")
    p.add_argument("--method", default="auto", choices=METHODS,
                   help="auto: the fastest method that can score the input; bitsliced: "
                        "each bit of the scores held in its own 64-bit word, 64 pairs "
                        "scored at once by bitwise operations (A/C/G/T only, match/mismatch "
                        "scoring, linear gaps, local); wordwise: one pair per lane of the "
                        "CPU's vector registers, any scoring (default auto)")
    algorithm_flag(p)
    backend_flag(p)
    threads_flag(p)
    p.add_argument("--format", default="tsv", choices=FORMATS,
                   help="sam: one SAM line per written pair, Y's records as references "
                        "(needs --mode full)")
    p.add_argument("--header", action="store_true", help="write a header line")
    output_flag(p)
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    from ..formats import alignment_fields
    from ..io import load_sequences
    from ..pairs import score_encoded
    from ..scoring import check_input
    scoring = parse_scoring(args, DEFAULT_SCORING)
    if args.format == "sam" and args.mode != "full":
        raise ValueError("--format sam needs --mode full (SAM lines carry the alignment)")
    x, y = inputs(args.x, args.y)
    x_names, xs = load_sequences(x, scoring.alphabet)
    y_names, ys = load_sequences(y, scoring.alphabet)
    check_input(scoring, [*xs, *ys], f"{args.x} and {args.y}")
    if len(xs) != len(ys):
        raise ValueError(f"{args.x} has {len(xs)} records but {args.y} has {len(ys)}; "
                         f"pairs need as many records in both files")
    if args.format == "sam":
        from ..formats import check_sam_names
        check_sam_names(x_names, y_names)   # before the work, not after it
    result = score_encoded(xs, ys, scoring, threshold=args.threshold, mode=args.mode,
                           method=args.method, backend=args.backend, algorithm=args.algorithm,
                           names=(x_names, y_names), threads=args.threads)
    full = args.mode == "full"
    columns = PAIR_COLUMNS + (FULL_COLUMNS if full else ())
    rows = result.indices.tolist() if args.threshold is not None or full else range(len(xs))
    alignments = result.alignments if full else None
    scores = result.scores
    with output(args.output) as out:
        if args.format == "sam":
            from ..formats import write_sam
            decode = scoring.alphabet.decode
            write_sam(((x_names[i], decode(xs[i]), y_names[i], alignments[k])
                       for k, i in enumerate(rows)), out,
                      [(name, len(y)) for name, y in zip(y_names, ys)])
            return 0
        if args.header:
            out.write("#" + "\t".join(columns) + "\n")
        for k, i in enumerate(rows):
            fields = [str(i), x_names[i], y_names[i], str(int(scores[i]))]
            if full:
                row = alignment_fields(x_names[i], y_names[i], int(scores[i]), alignments[k])
                fields += [row[c] for c in FULL_COLUMNS]
            out.write("\t".join(fields) + "\n")
    return 0
