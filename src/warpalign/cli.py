"""Command line: ``warpalign makedb | search | align``.

Only parses arguments and calls the public API. Input arguments are files (``-`` is
standard input, once per command); a command that takes literal sequences says so with a
``--literal`` flag, never by guessing from a missing file. Errors go to stderr with a non-zero
exit status and no traceback; ``| head`` ends quietly; a progress bar shows on a
terminal and never when stderr is piped; output files are written whole or not at all.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from pathlib import Path

from . import __version__
from .cli_output import check_output
from .cli_output import output as _output
from .errors import AlphabetMismatch, WarpalignError

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # what a shell reports for a process ended by SIGINT (Ctrl-C)
EXIT_PIPE = 141  # what a shell reports for a process ended by SIGPIPE
#: align and search with --alphabet dna and no --matrix/--match: BLASTN's blastn-task
#: scores (reward 2, penalty -3, existence 5, extension 2; our gap_open is 5 + 2).
DNA_SCORING = {"match": 2, "mismatch": -3, "gap_open": 7, "gap_extend": 2}


def main(argv: list[str] | None = None) -> int:
    """Run the command line on ``argv`` (default ``sys.argv[1:]``); the exit status.

    Ctrl-C at any moment, while the parser is built or NumPy and Numba load too, ends
    with status 130 and one line on stderr, never a traceback.
    """
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("warpalign: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: list[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if getattr(args, "output", None) and args.command != "makedb":
            check_output(args.output)   # (makedb's OUTPUT: a database, made with parents)
        return args.run(args)
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_PIPE
    except AlphabetMismatch as exc:   # the same finding, with this command's flags as the fix
        if args.command == "makedb":
            fix = "--alphabet dna for a DNA database, or --alphabet protein to store them as protein"
        else:
            dna = ("--match/--mismatch or a DNA --matrix (NUC.4.4)" if args.matrix else
                   "--alphabet dna or --match/--mismatch")
            fix = f"{dna} to score them as DNA, or --alphabet protein to score them as protein"
        print(f"warpalign {args.command}: error: {exc.source}: {exc.problem}; give {fix}",
              file=sys.stderr)
        return EXIT_ERROR
    except (WarpalignError, ValueError, OSError, MemoryError) as exc:
        print(f"warpalign {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _silence_stdout() -> None:
    # Python flushes stdout at exit; point it at /dev/null so that flush cannot fail again.
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warpalign", description="Exact sequence alignment at GPU speed.")
    p.add_argument("--version", action="version", version=f"warpalign {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    mk = sub.add_parser("makedb", help="encode a FASTA/FASTQ file (plain or gzip) into a database")
    mk.add_argument("input", help="FASTA/FASTQ file, plain or gzip ('-': standard input)")
    mk.add_argument("output", help="database directory to create")
    mk.add_argument("--alphabet", choices=("protein", "dna", "bytes"),
                    help="alphabet stored in the database (default protein; nucleotide input "
                         "then stops with an error: give --alphabet dna, or --alphabet "
                         "protein to store it as protein)")
    mk.add_argument("--force", action="store_true", help="replace an existing database")
    _progress_flags(mk)
    mk.set_defaults(run=_makedb)

    se = sub.add_parser("search", help="search queries against a database, top hits per query")
    se.add_argument("queries", help="FASTA/FASTQ file of queries ('-': standard input)")
    se.add_argument("database", help="database directory (warpalign makedb) or FASTA/FASTQ "
                                     "file ('-': standard input)")
    _scoring_flags(se)
    se.add_argument("-k", "--top-k", type=int, default=10, help="hits per query (default 10)")
    se.add_argument("--mode", default="full", choices=("score", "end", "full"),
                    help="what to compute per reported hit (default full)")
    se.add_argument("--algorithm", default="local", choices=("local", "global", "semiglobal"))
    se.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    se.add_argument("--format", default="tsv", choices=("tsv", "json", "blast6"),
                    help="tsv: qseqid sseqid score pident length qstart qend sstart send "
                         "(1-based); json: one object per query per line; blast6: BLAST "
                         "-outfmt 6's twelve columns (needs --mode full)")
    se.add_argument("--evalue", type=float,
                    help="keep hits with E-value <= this (Karlin-Altschul; BLOSUM/PAM "
                         "matrices with BLAST's gap pairs)")
    se.add_argument("--header", action="store_true", help="write a header line in TSV")
    se.add_argument("-o", "--output", help="output file (default stdout)")
    se.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help="search on a running Dask cluster (the database path must be "
                         "readable by every worker); see docs/distributed.md")
    se.add_argument("--workers", type=int, metavar="N",
                    help="search on a local Dask cluster of N worker processes (with "
                         "--scheduler: wait for N workers)")
    _progress_flags(se)
    se.set_defaults(run=_search)

    al = sub.add_parser("align", help="align every sequence of A with every sequence of B")
    al.add_argument("a", metavar="A", help="queries: FASTA/FASTQ file ('-': standard input)")
    al.add_argument("b", metavar="B", help="targets: FASTA/FASTQ file ('-': standard input)")
    al.add_argument("--literal", action="store_true",
                    help="A and B are sequences typed on the command line, not files")
    _scoring_flags(al)
    al.add_argument("--mode", default="full", choices=("score", "end", "full"))
    al.add_argument("--algorithm", default="local", choices=("local", "global", "semiglobal"))
    al.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    al.add_argument("--format", default="text", choices=("text", "tsv", "json"))
    al.add_argument("-o", "--output", help="output file (default stdout)")
    al.set_defaults(run=_align)

    from .bench_cli import add_bench_command
    from .lcs_cli import add_lcs_command
    from .locate_cli import add_locate_command
    from .pairs_cli import add_pairs_command
    add_pairs_command(sub)
    add_locate_command(sub)
    add_lcs_command(sub)
    add_bench_command(sub)
    return p


def _scoring_flags(p: argparse.ArgumentParser, default: dict | None = None) -> None:
    """The scoring flags; ``default``: the command's DNA scoring when no flag is given
    (None: BLOSUM62, and DNA_SCORING with --alphabet dna)."""
    dna = default or DNA_SCORING
    dna_text = (f"match {dna['match']}, mismatch {dna['mismatch']}, gap open "
                f"{dna['gap_open']}, extend {dna['gap_extend']}")
    g = p.add_argument_group("scoring (penalties positive; a gap of length k costs "
                             "open + (k-1)*extend)")
    g.add_argument("--matrix", help="named matrix (e.g. BLOSUM62, PAM250, NUC.4.4) or an "
                                    "NCBI-format file; default " + (
                                        f"DNA {dna_text}" if default else
                                        "BLOSUM62 (protein) unless --match or --alphabet dna "
                                        "is given"))
    g.add_argument("--match", type=int, help="match score (with --mismatch, instead of --matrix)")
    g.add_argument("--mismatch", type=int, help="mismatch score, e.g. -1")
    g.add_argument("--gap-open", type=int, help="default: the matrix's usual value (BLOSUM62: 11)")
    g.add_argument("--gap-extend", type=int, help="default: the matrix's usual value (BLOSUM62: 1)")
    g.add_argument("--alphabet", choices=("protein", "dna", "bytes"),
                   help=f"dna alone scores DNA with {dna_text}; with --match/--mismatch the "
                        "default is dna, with a matrix its own. Nucleotide input (at least 10 "
                        "residues, all IUPAC nucleotide codes, 90%% A/C/G/T/U/N) under a "
                        "protein matrix is an error unless --alphabet protein is given")


def _progress_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="force a progress bar on stderr")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="never show a progress bar")


def _show_progress(args) -> bool:
    return sys.stderr.isatty() if args.progress is None else args.progress


def _scoring(args, default: dict | None = None):
    """The Scoring the flags ask for; ``default`` (match/mismatch/gaps) when none is given,
    and for --alphabet dna alone (DNA_SCORING where the command has no default)."""
    from .errors import ScoringError
    from .scoring import DEFAULT_GAPS, Scoring
    if default is None and args.alphabet == "dna":
        default = DNA_SCORING
    if default is None and args.alphabet == "bytes" and args.match is None:
        raise ValueError("--alphabet bytes needs --match and --mismatch (and gap penalties)")
    if default is not None and args.matrix is None and args.match is None and args.mismatch is None:
        gaps = {k: v for k, v in (("gap_open", args.gap_open), ("gap_extend", args.gap_extend))
                if v is not None}
        if len(gaps) == 1 and default["gap_open"] == default["gap_extend"]:
            gaps = dict.fromkeys(("gap_open", "gap_extend"), *gaps.values())  # stays linear
        return Scoring(**{**default, **gaps}, alphabet=args.alphabet or "dna")
    if args.match is not None or args.mismatch is not None:
        if args.matrix:
            raise ValueError("give either --matrix or --match/--mismatch, not both")
        if args.match is None or args.mismatch is None:
            raise ValueError("--match and --mismatch go together")
        if args.gap_open is None or args.gap_extend is None:
            raise ValueError("--match/--mismatch scoring needs --gap-open and --gap-extend")
        return Scoring(match=args.match, mismatch=args.mismatch, gap_open=args.gap_open,
                       gap_extend=args.gap_extend, alphabet=args.alphabet or "dna")
    matrix = args.matrix or "BLOSUM62"
    missing = [flag for flag, value in (("--gap-open", args.gap_open),
                                        ("--gap-extend", args.gap_extend)) if value is None]
    if len(missing) == 1 or (missing and matrix.upper() not in DEFAULT_GAPS):
        Scoring(matrix, gap_open=1, gap_extend=1, alphabet=args.alphabet)  # unknown: says so
        what = (f"{missing[0]} is missing" if len(missing) == 1 else
                f"--matrix {matrix} has no default gap penalties (the matrices with defaults: "
                f"{', '.join(DEFAULT_GAPS)})")
        raise ScoringError(f"{what}; add {' and '.join(missing)} (a gap of length k costs "
                           "open + (k-1)*extend)")
    return Scoring(matrix, gap_open=args.gap_open, gap_extend=args.gap_extend,
                   alphabet=args.alphabet)


def _makedb(args) -> int:
    from .database import Database
    source, = _inputs(args.input)
    from .errors import DatabaseError
    if not args.force and os.path.lexists(args.output):   # (build's message says overwrite=)
        raise DatabaseError(f"{args.output}: already exists; pass --force to replace it")
    db = Database.build(source, args.output, alphabet=args.alphabet,
                        progress=_show_progress(args), overwrite=args.force)
    print(f"warpalign makedb: {len(db)} sequences, {db.residues} residues -> {args.output}",
          file=sys.stderr)
    return 0


def _search(args) -> int:
    from .formats import write_blast_tab, write_search_json, write_search_tsv
    from .search import as_database, search
    from .stats import StatisticsUnavailable, apply_statistics, check_statistics
    scoring = _scoring(args)
    if args.format == "blast6" and args.mode != "full":
        raise ValueError("--format blast6 needs --mode full (its columns describe the "
                         "alignment)")
    if args.database != "-" and not os.path.exists(args.database):
        from .errors import DatabaseError
        raise DatabaseError(f"{args.database}: no such database or FASTA/FASTQ file (build "
                            "one with warpalign makedb)")
    queries, database = _inputs(args.queries, args.database)
    if args.evalue is not None:  # an unsupported scoring fails before the search
        check_statistics(scoring, algorithm=args.algorithm, evalue=args.evalue)
    db = None
    if args.scheduler or args.workers is not None:
        from .distributed import search as distributed_search
        results = distributed_search(queries, args.database, scoring,
                                     scheduler=args.scheduler, workers=args.workers,
                                     top_k=args.top_k, mode=args.mode,
                                     algorithm=args.algorithm, backend=args.backend)
    else:
        db = as_database(database, scoring)
        _same_alphabet(args, db, scoring)
        results = search(queries, db, scoring, top_k=args.top_k, mode=args.mode,
                         algorithm=args.algorithm, backend=args.backend,
                         progress=_show_progress(args))
    if args.evalue is not None or args.format == "blast6":
        if db is None:
            db = as_database(database, scoring)
        # --evalue was checked above; blast6 alone prints NA where no statistics exist
        with contextlib.suppress(StatisticsUnavailable):
            results = apply_statistics(results, db, scoring, evalue=args.evalue,
                                       algorithm=args.algorithm)
    with _output(args.output) as out:
        if args.format == "tsv":
            write_search_tsv(results, out, header=args.header)
        elif args.format == "blast6":
            write_blast_tab(results, out, header=args.header)
        else:
            write_search_json(results, out)
    return 0


def _inputs(*args: str, literal_hint: bool = False) -> list:
    """Input arguments as files: a Path each, standard input for ``-`` (once at most).

    A missing file is an ``InputError`` naming it (with ``literal_hint``, pointing at
    ``--literal``).
    """
    from .errors import InputError
    if args.count("-") > 1:
        raise InputError("standard input ('-') can be read only once; give files for the others")
    for arg in args:
        if arg != "-" and not os.path.exists(arg):
            hint = " (--literal reads the arguments as sequences)" if literal_hint else ""
            raise InputError(f"{arg}: no such file{hint}")
    return [sys.stdin.buffer if arg == "-" else Path(arg) for arg in args]


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


def _align(args) -> int:
    import json

    from .align import align_encoded
    from .formats import ALIGN_COLUMNS, alignment_fields, alignment_to_json, format_alignment
    from .io import load_sequences
    from .scoring import check_input
    scoring = _scoring(args)
    a, b = ([args.a], [args.b]) if args.literal else _inputs(args.a, args.b, literal_hint=True)
    qnames, qs = load_sequences(a, scoring.alphabet, default_name="a")
    tnames, ts = load_sequences(b, scoring.alphabet, default_name="b")
    check_input(scoring, [*qs, *ts], "A and B" if args.literal else f"{args.a} and {args.b}")
    with _output(args.output) as out:
        if args.format == "tsv":
            out.write("#" + "\t".join(ALIGN_COLUMNS) + "\n")
        for qn, q in zip(qnames, qs):
            for tn, t in zip(tnames, ts):
                aln = align_encoded(q, t, scoring, mode=args.mode, algorithm=args.algorithm,
                                    backend=args.backend)
                if args.format == "text":
                    out.write(format_alignment(qn, tn, aln))
                elif args.format == "tsv":
                    row = alignment_fields(qn, tn, aln.score, aln)
                    out.write("\t".join(row[c] for c in ALIGN_COLUMNS) + "\n")
                else:
                    out.write(json.dumps({"query": qn, "target": tn, **alignment_to_json(aln)}) + "\n")
    return 0
