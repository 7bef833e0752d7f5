"""``warpalign locate QUERY REFERENCE``: where short queries align best in a long reference.

Each record of QUERY (a FASTA/FASTQ file; with ``--literal`` the argument is the sequence)
is located in REFERENCE (a reference directory built by ``warpalign makedb --alphabet dna``,
memory-mapped, or a FASTA/FASTQ file, plain or gzip, any number of records); ``-`` reads
either from standard input. The queries stream through in batches
(:func:`~warpalign.locate.locate_many_encoded`): memory stays bounded and lines are written
as batches complete. Writes TSV: ``qseqid sseqid
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
import collections
import json

from ..choices import LOCATE_METHODS, LOCATE_MODES
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

    p = sub.add_parser(
        "locate", help="best local alignments of short queries in a long reference (exact "
                       "Smith-Waterman over the whole reference)",
        description="Locate each query in a long reference (multi-record FASTA allowed): "
                    "exact local alignment against every record, best hits first. Default "
                    "scoring: DNA match 1, mismatch -2, gap open 5, extend 1.")
    p.add_argument("query", help="FASTA/FASTQ file of queries ('-': standard input)")
    p.add_argument("reference", help="a reference directory built once by 'warpalign makedb "
                                     "--alphabet dna' (memory-mapped, the fast way for many "
                                     "reads), or a FASTA/FASTQ file (plain or gzip), any "
                                     "number of records ('-': standard input)")
    p.add_argument("--literal", action="store_true",
                   help="QUERY is a sequence typed on the command line, not a file")
    scoring_flags(p, DEFAULT_SCORING)
    p.add_argument("-n", "--top", type=int, default=1,
                   help="hits per query with disjoint reference intervals on each strand "
                        "(default 1; in SAM the further ones are secondary, FLAG 256)")
    strand_flags(p)
    p.add_argument("--mode", default="full", choices=LOCATE_MODES,
                   help="what to compute per hit (default full)")
    p.add_argument("--method", default="auto", choices=LOCATE_METHODS,
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
    from .._backends.registry import warm_up
    from ..formats import ALIGN_COLUMNS, alignment_fields, alignment_to_json
    # CuPy's import and the device's initialization beside the reads' opening and the
    # reference's encoding (started after our own imports, as search's)
    warm_up("locate", args.backend, args.method, all_devices=False)
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
    names, records = _reference(reference, args.reference, scoring)
    if args.format == "sam":
        return _locate_sam(args, scoring, query, names, records)
    with output(args.output) as out:
        if args.header and args.format == "tsv":
            out.write("#" + "\t".join(ALIGN_COLUMNS) + "\n")
        for read, hits in _located(args, scoring, query, names, records, args.top, args.mode,
                                   args.min_score):
            hits = [h for h in hits if h.score > 0]
            if args.format == "json":
                out.write(json.dumps({"query": read.name, "query_length": len(read.sequence),
                                      "hits": [{"record": h.record, **alignment_to_json(h)}
                                               for h in hits]}) + "\n")
                continue
            for h in hits:
                row = alignment_fields(read.name, h.record or "*", h.score, h, h.query_end,
                                       h.target_end, query_length=len(read.sequence))
                out.write("\t".join(row[c] for c in ALIGN_COLUMNS) + "\n")
    return 0


def _reference(source, label, scoring):
    """(names, records) of REFERENCE: a built reference directory (memory-mapped, never
    re-encoded), or a FASTA/FASTQ file encoded now."""
    from ..io import load_sequences
    from ..reference import Reference, is_reference_dir
    from ..scoring import check_input
    if is_reference_dir(source):
        ref = Reference.open(source)
        if ref.alphabet != scoring.alphabet:
            raise ValueError(f"{label}: a {ref.alphabet.name} reference; the scoring's "
                             f"alphabet is {scoring.alphabet.name}")
        return ref.names, ref.records
    names, records = load_sequences(source, scoring.alphabet, default_name="record")
    for codes in records:   # never changed here: the GPU keeps one upload for every query
        codes.setflags(write=False)   # and strand (read-only arrays are cached resident)
    check_input(scoring, records, label)
    return names, records


def _reads(query, alphabet):
    """The queries as :class:`~warpalign.io.Record` s (codes, FASTQ qualities), read as they
    are needed: a FASTQ of any size streams through."""
    from ..io import Record, load_sequences, read_sequences
    if isinstance(query, list):   # --literal: the sequence itself
        names, codes = load_sequences(query, alphabet, default_name="query")
        return iter([Record(n, "", c, None) for n, c in zip(names, codes)])
    return read_sequences(query, alphabet, default_name="query")


def _located(args, scoring, query, names, records, top, mode, min_score, second=False,
             check=None):
    """(read, hits) of each query in input order, a progress bar over them where asked;
    with ``second``, (read, hits, the next hit's score). ``check(read)`` runs on each read
    before it is located."""
    from ..locate import locate_many_encoded
    from ..scoring import check_input
    label = "QUERY" if args.literal else args.query
    waiting = collections.deque()

    def codes():
        for read in _reads(query, scoring.alphabet):
            check_input(scoring, [read.sequence], label)
            if check is not None:
                check(read)
            waiting.append(read)
            yield read.sequence

    results = locate_many_encoded(codes(), names, records, scoring, top=top, mode=mode,
                                  method=args.method, backend=args.backend,
                                  window=args.window, threads=args.threads,
                                  strand=args.strand, min_score=min_score, second=second)
    if show_progress(args):
        from tqdm.auto import tqdm
        results = tqdm(results, unit=" reads", desc="locate", leave=False)
    for got in results:
        read = waiting.popleft()
        hits, after = got if second else (got, None)
        hits = [hits] if top == 1 else hits
        yield (read, hits, after) if second else (read, hits)


def _locate_sam(args, scoring, query, names, records) -> int:
    from ..formats import check_sam_names, read_records, write_sam
    from ..results import Alignment

    check_sam_names((), names)   # before the work, not after it

    def lines():
        # top 1: MAPQ needs the score of the next hit (the best after the reported one)
        second = args.top == 1
        located = _located(args, scoring, query, names, records, args.top, "full",
                           args.min_score, second=second,
                           check=lambda read: check_sam_names([read.name]))
        for read, hits, *after in located:
            found = [(h.record, h) for h in hits if h.score > 0]
            if second and after[0] > 0:
                found.append((None, Alignment(score=after[0])))
            yield from read_records(read.name, scoring.alphabet.decode(read.sequence), found,
                                    report=args.top, min_score=args.min_score,
                                    quality=read.quality)

    with output(args.output) as out:
        write_sam(lines(), out, [(n, len(r)) for n, r in zip(names, records)])
    return 0
