"""``warpalign search QUERIES DATABASE``: the top hits of each query in a database.

DATABASE is a directory made by ``warpalign makedb`` or a FASTA/FASTQ file; with
``--scheduler`` or ``--workers`` the search runs on a Dask cluster (docs/distributed.md).
Nucleotide queries are searched on both strands unless ``--strand`` says one;
``--format sam`` writes each query as a read and its hits' targets as references.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..choices import SEARCH_MODES
from .flags import (
    algorithm_flag,
    backend_flag,
    check_strand,
    inputs,
    output_flag,
    parse_scoring,
    positive_int,
    progress_flags,
    scoring_flags,
    show_progress,
    strand_flags,
    threads_flag,
)
from .output import output

FORMATS = ("tsv", "json", "blast6", "sam")
#: Query residues searched per call when the CLI streams a query file (``--chunk``): large
#: enough for full packed batches, small enough that a big FASTA never sits in memory whole.
CHUNK_RESIDUES = 1 << 22


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``search`` to the command line's subparsers; returns its parser."""
    p = sub.add_parser("search", help="search queries against a database, top hits per query")
    p.add_argument("queries", help="FASTA/FASTQ file of queries ('-': standard input)")
    p.add_argument("database", help="database directory (warpalign makedb) or FASTA/FASTQ "
                                    "file ('-': standard input)")
    scoring_flags(p)
    p.add_argument("-k", "--top-k", type=int, default=10, help="hits per query (default 10)")
    strand_flags(p)
    p.add_argument("--mode", default="full", choices=SEARCH_MODES,
                   help="what to compute per reported hit (default full)")
    algorithm_flag(p)
    backend_flag(p)
    threads_flag(p)
    p.add_argument("--gpu-memory", type=_gpu_memory, metavar="SIZE",
                   help="most GPU memory the search uses per device: bytes, a size such as "
                        "4G or 512M (powers of 1024), or a fraction of the device's memory "
                        "such as 0.5. A database that does not fit streams through the GPU "
                        "in chunks read from disk, with the same hits (default: what is free "
                        "less 4 GiB for other work; the CPU backend ignores it)")
    p.add_argument("--format", default="tsv", choices=FORMATS,
                   help="tsv: qseqid sseqid score pident length qstart qend sstart send "
                        "(1-based); json: one object per query per line; blast6: BLAST "
                        "-outfmt 6's twelve columns (needs --mode full; evalue and bitscore "
                        "are NA, with a note on stderr, where the scoring has no "
                        "statistics; a minus-strand hit has sstart > send, as blastn "
                        "writes it); sam: each query a read, the hit targets as @SQ "
                        "references, the best hit primary with MAPQ "
                        "round(60*(best-second)/best), the others secondary (FLAG 256), "
                        "FASTQ qualities as QUAL (needs --mode full). Gap costs in BLAST's "
                        "terms: --blast-gaps")
    p.add_argument("--evalue", type=float,
                   help="keep hits with E-value <= this (Karlin-Altschul statistics with "
                        "NCBI BLAST's published lambda and K: BLOSUM/PAM matrices with the "
                        "gap pairs of BLAST's tables, local alignment). They equal blastp's "
                        "only with -comp_based_stats 0: blastp's default also rescales "
                        "scores per pair by amino-acid composition")
    p.add_argument("--header", action="store_true",
                   help="write a header line (tsv: the columns; blast6: '#' comment lines "
                        "with the columns and the gap costs in BLAST's terms, which plain "
                        "blast6 never has, as BLAST's -outfmt 6)")
    p.add_argument("--verify", action="store_true",
                   help="check every database file's checksum now (by default a database "
                        "is checked on its first open and again whenever a file changes: "
                        "size, modification time or inode)")
    output_flag(p)
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="search on a running Dask cluster (the database path must be "
                        "readable by every worker); see docs/distributed.md")
    p.add_argument("--workers", type=int, metavar="N",
                   help="search on a local Dask cluster of N worker processes (with "
                        "--scheduler: wait for N workers)")
    p.add_argument("--chunk", type=positive_int, default=CHUNK_RESIDUES, metavar="RESIDUES",
                   help=f"query residues searched at a time; each chunk's hits are written "
                        f"before the next is searched, so a query file of any size runs in "
                        f"bounded memory (default {CHUNK_RESIDUES:,}; --format sam and "
                        f"--workers/--scheduler read the queries whole)")
    progress_flags(p)
    p.set_defaults(run=run)
    return p


def _gpu_memory(text: str):
    """``--gpu-memory``: parsed as ``search(gpu_memory=...)`` takes it (argparse names the
    flag in its error)."""
    from .._backends.stream import parse_memory
    try:
        return parse_memory(text, "--gpu-memory")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args) -> int:
    from .._backends.registry import warm_up
    from ..formats import write_blast_tab, write_search_json, write_search_tsv
    from ..search import as_database, search
    from ..stats import apply_statistics, check_statistics
    if not (args.scheduler or args.workers is not None):
        # CuPy's import and the device's initialization run beside the scoring's loading,
        # the query file's reading, the database's opening and its layout (made here once
        # the driver has told the device's size: _layout_ahead). Started after our own
        # imports: a Ctrl-C that ends an import of NumPy half-way (main thread) while the
        # other thread waits for that module hung the process
        warming = warm_up("search", args.backend)
    else:
        warming = None
    scoring = parse_scoring(args)
    check_strand(args, scoring)
    if args.format in ("blast6", "sam") and args.mode != "full":
        raise ValueError(f"--format {args.format} needs --mode full (its "
                         f"{'columns describe' if args.format == 'blast6' else 'lines carry'}"
                         " the alignment)")
    if args.database != "-" and not os.path.exists(args.database):
        from ..errors import DatabaseError
        raise DatabaseError(f"{args.database}: no such database or FASTA/FASTQ file (build "
                            "one with warpalign makedb)")
    queries, database = inputs(args.queries, args.database)
    reads = None
    if args.format == "sam":   # SEQ and QUAL as read; the records are searched as they are
        from ..io import read_sequences
        queries = reads = list(read_sequences(queries, default_name="query"))
        from ..formats import check_sam_names
        check_sam_names([r.name for r in reads])   # before the work, not after it
    # SAM's MAPQ needs each query's second-best hit: one more than reported
    top_k = args.top_k + 1 if reads is not None else args.top_k
    no_statistics = _no_statistics(scoring, args.algorithm)
    if args.evalue is not None and no_statistics:  # fails before the search
        raise ValueError(f"--evalue: {no_statistics}")
    if args.evalue is not None:
        check_statistics(scoring, algorithm=args.algorithm, evalue=args.evalue)
    db = None
    if args.scheduler or args.workers is not None:
        if args.workers is not None and not args.scheduler:
            # the local cluster's semaphores are released by multiprocessing's tracker
            # process when this one ends; after a Ctrl-C (exit 130 at once) it would warn
            # about them on our stderr: keep that process quiet (it inherits this setting)
            os.environ["PYTHONWARNINGS"] = ",".join(filter(None, (
                os.environ.get("PYTHONWARNINGS"),
                "ignore::UserWarning:multiprocessing.resource_tracker")))
        from ..distributed import search as distributed_search
        results = distributed_search(queries, args.database, scoring,
                                     scheduler=args.scheduler, workers=args.workers,
                                     top_k=top_k, mode=args.mode,
                                     algorithm=args.algorithm, backend=args.backend,
                                     strand=args.strand, progress=show_progress(args))
    else:
        db = as_database(database, scoring, verify=True if args.verify else None)
        _same_alphabet(args, db, scoring)
        if warming is not None and args.gpu_memory is None:
            _layout_ahead(db)
        if reads is None:      # tables and JSON: the queries stream through in chunks
            return _search_streamed(args, queries, db, scoring, top_k, no_statistics)
        results = search(queries, db, scoring, top_k=top_k, mode=args.mode,
                         algorithm=args.algorithm, backend=args.backend,
                         progress=show_progress(args), threads=args.threads,
                         strand=args.strand, gpu_memory=args.gpu_memory)
    if args.min_score is not None and reads is None:   # (SAM: a second-best hit below it
        results = [h.take(h.scores >= args.min_score) for h in results]   # leaves MAPQ)
    if args.format == "blast6" and no_statistics:   # NA columns, said once
        print(f"warpalign search: note: the evalue and bitscore columns are NA: "
              f"{no_statistics}", file=sys.stderr)
    elif args.evalue is not None or args.format == "blast6":
        if db is None:
            db = as_database(database, scoring)
        results = apply_statistics(results, db, scoring, evalue=args.evalue,
                                   algorithm=args.algorithm)
    if args.format == "sam":
        return _search_sam(args, results, reads, db or as_database(database, scoring))
    with output(args.output) as out:
        if args.format == "tsv":
            write_search_tsv(results, out, header=args.header)
        elif args.format == "blast6":
            write_blast_tab(results, out, header=args.header, scoring=scoring)
        else:
            write_search_json(results, out)
    return 0


def _layout_ahead(db) -> None:
    """The opened database's resident layout (what a default CUDA backend uploads with
    it) made now, on this thread, while CuPy loads on the warm-up thread: where the driver
    has told the device's size (one visible device whose memory holds the database);
    otherwise nothing. Remembered for the search's upload (~0.12 s of a 500-query
    search's start on an H100 host, session 24)."""
    from .._backends.registry import device_facts
    facts = device_facts()
    offsets = db.targets.offsets
    if (facts is None or facts.devices != 1 or facts.multiprocessors < 1
            or offsets.flags.writeable):          # a layout of these would not be kept
        return
    from .._backends.cuda import config, layout
    if config.resident_budget(facts.memory, len(offsets) - 1) >= db.residues:
        layout.prefetch(offsets, facts.multiprocessors)


def _chunks(source, residues: int = CHUNK_RESIDUES):
    """The records of a FASTA/FASTQ source in lists of about ``residues`` residues."""
    from ..io import read_sequences
    chunk, size = [], 0
    for record in read_sequences(source, default_name="query"):
        chunk.append(record)
        size += len(record.sequence)
        if size >= residues:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _search_streamed(args, queries, db, scoring, top_k, no_statistics) -> int:
    """Search a query file chunk by chunk, each chunk's hits written before the next is
    searched (bounded memory whatever the file's size); the next chunk is read and parsed
    on a worker thread while the current one is searched. Within a chunk each part of
    hits is written as soon as the search has it final (``search.search_parts``: a batch,
    or a traced group in mode full), so after the last kernel only the last part is left
    to write. Hits as one whole call gives, byte for byte."""
    import contextlib

    from ..formats import write_blast_tab, write_search_json, write_search_tsv
    from ..pipeline import ahead
    from ..search import search_parts
    from ..stats import apply_statistics
    if args.format == "blast6" and no_statistics:   # NA columns, said once
        print(f"warpalign search: note: the evalue and bitscore columns are NA: "
              f"{no_statistics}", file=sys.stderr)
    statistics = args.evalue is not None or (args.format == "blast6" and not no_statistics)
    progress = contextlib.nullcontext()          # (None as the bar: no progress shown)
    if show_progress(args):
        from tqdm.auto import tqdm
        progress = tqdm(unit="query", desc="search", leave=False)
    first = True
    # the bar is closed however the search ends (an error, Ctrl-C), after the output
    with progress as bar, output(args.output) as out, \
            ahead(_chunks(queries, args.chunk)) as chunks:
        for chunk in chunks:
            parts = search_parts(chunk, db, scoring, top_k=top_k, mode=args.mode,
                                 algorithm=args.algorithm, backend=args.backend,
                                 threads=args.threads, strand=args.strand,
                                 gpu_memory=args.gpu_memory)
            with contextlib.closing(parts):   # an error here ends the search's work
                for results in parts:
                    if args.min_score is not None:
                        results = [h.take(h.scores >= args.min_score) for h in results]
                    if statistics:
                        results = apply_statistics(results, db, scoring, evalue=args.evalue,
                                                   algorithm=args.algorithm)
                    if args.format == "tsv":
                        write_search_tsv(results, out, header=args.header and first)
                    elif args.format == "blast6":
                        write_blast_tab(results, out, header=args.header and first,
                                        scoring=scoring)
                    else:
                        write_search_json(results, out)
                    first = False
                    if bar is not None:
                        bar.update(len(results))
    return 0


def _search_sam(args, results, reads, db) -> int:
    from ..formats import hit_references, search_sam_records, write_sam
    records = list(search_sam_records(results, [r.sequence for r in reads],
                                      report=args.top_k, min_score=args.min_score,
                                      qualities=[r.quality for r in reads]))
    with output(args.output) as out:
        write_sam(records, out, hit_references(records, db))
    return 0


def _no_statistics(scoring, algorithm: str) -> str | None:
    """Why E-values and bit scores do not exist for this scoring, in the command line's
    terms (None when they do)."""
    from ..stats import StatisticsUnavailable, check_statistics, supported_gaps
    try:
        check_statistics(scoring, algorithm=algorithm)
        return None
    except StatisticsUnavailable:
        pass
    if algorithm != "local":
        return f"E-values exist for local alignment only, not --algorithm {algorithm}"
    name = scoring.matrix_name
    tables = supported_gaps()
    if name is None:
        return _no_nucleotide_statistics(scoring, tables)
    if name.upper() not in tables:
        return (f"--matrix {name} has no published Karlin-Altschul parameters (lambda, K); "
                f"E-values and bit scores exist for {', '.join(tables)} with BLAST's gap "
                f"pairs, and for DNA --match/--mismatch pairs of BLASTN's tables")
    existence, extension = scoring.blast_gaps
    pairs = " ".join(f"{o - e}/{e}" for o, e in tables[name.upper()])
    return (f"NCBI BLAST publishes no Karlin-Altschul parameters (lambda, K) for {name.upper()} "
            f"with gap existence {existence}, extension {extension} (--gap-open "
            f"{scoring.gap_open} --gap-extend {scoring.gap_extend}); its pairs with "
            f"statistics, as --blast-gaps EXISTENCE/EXTENSION: {pairs}")


def _no_nucleotide_statistics(scoring, matrices) -> str:
    """:func:`_no_statistics` for --match/--mismatch scoring."""
    import math

    from ..stats import supported_nucleotide_scores
    r, p = scoring.match, scoring.mismatch
    d = math.gcd(r, p) if r > 0 > p else 1
    gaps = supported_nucleotide_scores().get((r // d, p // d))
    if scoring.alphabet.name != "dna" or gaps is None:
        pairs = ", ".join(f"{a}/{b}" for a, b in supported_nucleotide_scores())
        return (f"--match/--mismatch scoring {r}/{p} on {scoring.alphabet.name} has no "
                f"published Karlin-Altschul parameters (lambda, K); E-values and bit scores "
                f"exist for DNA with BLASTN's match/mismatch pairs {pairs} (and their "
                f"multiples), and for {', '.join(matrices)} with BLAST's gap pairs")
    existence, extension = scoring.blast_gaps
    pairs = " ".join(f"{d * (o - e)}/{d * e}" for o, e in gaps)
    return (f"BLASTN's tables (NCBI blast_stat.c) have no Karlin-Altschul parameters "
            f"(lambda, K) for --match {r} --mismatch {p} with gap existence {existence}, "
            f"extension {extension} (--gap-open {scoring.gap_open} --gap-extend "
            f"{scoring.gap_extend}); its pairs with statistics for these scores, as "
            f"--blast-gaps EXISTENCE/EXTENSION: {pairs}")


def _same_alphabet(args, db, scoring) -> None:
    """A database of another alphabet than the flags' scoring: say which flag fits it."""
    if db.alphabet == scoring.alphabet:
        return
    fix = {"dna": "give --alphabet dna or --match/--mismatch",
           "protein": "give a protein --matrix (BLOSUM62 when no scoring flag is given)"
           }.get(db.alphabet.name, f"give --alphabet {db.alphabet.name}")
    raise ValueError(f"{args.database}: a {db.alphabet.name} database, but the scoring is "
                     f"{scoring.alphabet.name} ({scoring.matrix_name or 'match/mismatch'}); "
                     f"{fix}")
