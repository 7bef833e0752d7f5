"""``warpalign locate QUERY REFERENCE``: where short queries align best in a long reference.

Each record of QUERY (a FASTA/FASTQ file; with ``--literal`` the argument is the sequence)
is located in REFERENCE (a FASTA/FASTQ file, plain or gzip, any number of records); ``-``
reads either from standard input. Writes TSV: ``qseqid sseqid
score pident length qstart qend sstart send cigar`` (sseqid: the reference record;
coordinates 1-based inclusive, as BLAST writes them, a minus-strand hit with sstart >
send; NA where ``--mode`` did not compute them), one line per hit (none for a query that
nothing aligns with), JSON lines (``--format json``, 0-based half-open, as the Python
objects), or SAM (``--format sam``: read mapping, one primary record per query with MAPQ,
unmapped records for queries below ``--min-score``). Nucleotide queries are aligned on
both strands unless ``--strand`` says one.
Default scoring: DNA match 1, mismatch -2, gap open 5, extend 1 (paper 002).
"""

from __future__ import annotations

import argparse
import json

from .flags import (
    backend_flag,
    check_strand,
    inputs,
    output_flag,
    parse_scoring,
    progress_flags,
    scoring_flags,
    show_progress,
    strand_flags,
    threads_flag,
)
from .output import output

FORMATS = ("tsv", "json", "sam")
#: Paper 002's scoring, used when no scoring flag is given.
DEFAULT_SCORING = {"match": 1, "mismatch": -2, "gap_open": 5, "gap_extend": 1}


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``locate`` to the command line's subparsers; returns its parser."""
    from ..locate import METHODS, MODES

    p = sub.add_parser(
        "locate", help="best local alignments of short queries in a long reference (exact "
                       "Smith-Waterman over the whole reference)",
        description="Locate each query in a long reference (multi-record FASTA allowed): "
                    "exact local alignment against every record, best hits first. Default "
                    "scoring: DNA match 1, mismatch -2, gap open 5, extend 1.")
    p.add_argument("query", help="FASTA/FASTQ file of queries ('-': standard input)")
    p.add_argument("reference", help="FASTA/FASTQ file (plain or gzip), any number of records "
                                     "('-': standard input)")
    p.add_argument("--literal", action="store_true",
                   help="QUERY is a sequence typed on the command line, not a file")
    scoring_flags(p, DEFAULT_SCORING)
    p.add_argument("-n", "--top", type=int, default=1,
                   help="hits per query with disjoint reference intervals on each strand "
                        "(default 1; in SAM the further ones are secondary, FLAG 256)")
    strand_flags(p)
    p.add_argument("--mode", default="full", choices=MODES,
                   help="what to compute per hit (default full)")
    p.add_argument("--method", default="auto", choices=METHODS,
                   help="auto = windows: the reference cut into windows that overlap enough "
                        "that no best alignment is cut, scored all at once; dp: the plain "
                        "dynamic program, one cell at a time (the reference result); scan: "
                        "row by row, a row's gaps by a parallel max-scan, 16-bit values "
                        "until they could overflow, then 32-bit; scan1: row by row, one "
                        "32-bit scan per row; antidiagonal: cells by anti-diagonals; "
                        "blocked: tiles by anti-diagonals. Every method gives the same "
                        "result (default auto)")
    backend_flag(p)
    threads_flag(p)
    p.add_argument("--window", type=int, help="window length for --method windows")
    p.add_argument("--format", default="tsv", choices=FORMATS,
                   help="sam: the reference records as @SQ, one line per hit, MAPQ "
                        "round(60*(best-second)/best) from the query's best and second-best "
                        "scores, FASTQ qualities as QUAL (needs --mode full)")
    p.add_argument("--header", action="store_true", help="write a header line in TSV")
    output_flag(p)
    progress_flags(p)
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    from ..formats import ALIGN_COLUMNS, alignment_fields, alignment_to_json
    from ..io import load_sequences
    from ..scoring import check_input
    scoring = parse_scoring(args, DEFAULT_SCORING)
    check_strand(args, scoring)
    if args.top < 1:
        raise ValueError(f"--top {args.top}: expected an integer >= 1")
    if args.format == "sam" and args.mode != "full":
        raise ValueError("--format sam needs --mode full (SAM lines carry the alignment)")
    if args.literal:
        query, (reference,) = [args.query], inputs(args.reference)
    else:
        query, reference = inputs(args.query, args.reference, literal_hint=True)
    qnames, queries, qualities = _queries(query, scoring.alphabet)
    names, records = load_sequences(reference, scoring.alphabet, default_name="record")
    for codes in records:   # never changed here: the GPU keeps one upload for every query
        codes.setflags(write=False)   # and strand (read-only arrays are cached resident)
    check_input(scoring, [*queries, *records],
                f"{'QUERY' if args.literal else args.query} and {args.reference}")
    if args.format == "sam":
        return _locate_sam(args, scoring, qnames, queries, qualities, names, records)
    with output(args.output) as out:
        if args.header and args.format == "tsv":
            out.write("#" + "\t".join(ALIGN_COLUMNS) + "\n")
        for qname, q, hits in _located(args, scoring, qnames, queries, names, records,
                                       args.top, args.mode, args.min_score):
            hits = [h for h in hits if h.score > 0]
            if args.format == "json":
                out.write(json.dumps({"query": qname, "query_length": len(q), "hits": [
                    {"record": h.record, **alignment_to_json(h)} for h in hits]}) + "\n")
                continue
            for h in hits:
                row = alignment_fields(qname, h.record or "*", h.score, h, h.query_end,
                                       h.target_end, query_length=len(q))
                out.write("\t".join(row[c] for c in ALIGN_COLUMNS) + "\n")
    return 0


def _queries(query, alphabet):
    """(names, codes, FASTQ qualities or None each) of the queries."""
    from ..io import load_sequences, read_sequences
    if isinstance(query, list):   # --literal: the sequence itself
        names, codes = load_sequences(query, alphabet, default_name="query")
        return names, codes, [None] * len(codes)
    records = list(read_sequences(query, alphabet, default_name="query"))
    return ([r.name for r in records], [r.sequence for r in records],
            [r.quality for r in records])


def _located(args, scoring, qnames, queries, names, records, top, mode, min_score):
    """(query name, codes, hits) of each query, a progress bar over them where asked."""
    from ..locate import locate_encoded
    items = zip(qnames, queries, strict=True)
    if show_progress(args):
        from tqdm.auto import tqdm
        items = tqdm(items, total=len(queries), unit="query", desc="locate", leave=False)
    for qname, q in items:
        hits = locate_encoded(q, names, records, scoring, top=top, mode=mode,
                              method=args.method, backend=args.backend, window=args.window,
                              threads=args.threads, strand=args.strand, min_score=min_score)
        yield qname, q, [hits] if top == 1 else hits


def _locate_sam(args, scoring, qnames, queries, qualities, names, records) -> int:
    from ..formats import check_sam_names, read_records, write_sam

    check_sam_names(qnames, names)   # before the work, not after it

    def lines():
        # one hit more than reported: the second-best score that MAPQ needs
        located = _located(args, scoring, qnames, queries, names, records, args.top + 1,
                           "full", None)
        for (qname, q, hits), quality in zip(located, qualities, strict=True):
            yield from read_records(qname, scoring.alphabet.decode(q),
                                    [(h.record, h) for h in hits], report=args.top,
                                    min_score=args.min_score, quality=quality)

    with output(args.output) as out:
        write_sam(lines(), out, [(n, len(r)) for n, r in zip(names, records)])
    return 0
