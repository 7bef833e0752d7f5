"""The flags several subcommands share, and the helpers that read them.

Scoring (``--matrix``, ``--match``/``--mismatch``, gap penalties, ``--alphabet``),
``--backend``, ``--algorithm``, ``--threads``, ``--strand``/``--min-score``,
``-o/--output``, input arguments as files, the progress bar. Choices come from
:mod:`warpalign.choices`, the tuples the jobs check their arguments against (it imports
nothing); heavy modules (NumPy, the scoring tables) load inside the helpers that read the
flags, so that building the parsers loads no job.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

#: align and search with --alphabet dna and no --matrix/--match: BLASTN's blastn-task
#: scores (reward 2, penalty -3, existence 5, extension 2; our gap_open is 5 + 2).
DNA_SCORING = {"match": 2, "mismatch": -3, "gap_open": 7, "gap_extend": 2}


def scoring_flags(p: argparse.ArgumentParser, default: dict | None = None) -> None:
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
    g.add_argument("--gap-open", type=int,
                   help="cost of a gap of length 1; default: the matrix's usual value "
                        "(BLOSUM62: 11). BLAST's -gapopen is this minus --gap-extend: "
                        "BLAST's 11/1 is --gap-open 12 --gap-extend 1 (or --blast-gaps 11 1)")
    g.add_argument("--gap-extend", type=int,
                   help="cost of each further gap position; default: the matrix's usual "
                        "value (BLOSUM62: 1)")
    g.add_argument("--blast-gaps", type=int, nargs=2, metavar=("EXISTENCE", "EXTENSION"),
                   help="gap costs as BLAST states them (-gapopen, -gapextend): a gap of "
                        "length k costs EXISTENCE + k*EXTENSION, i.e. --gap-open "
                        "EXISTENCE+EXTENSION --gap-extend EXTENSION; not with --gap-open or "
                        "--gap-extend")
    g.add_argument("--alphabet", choices=alphabets(),
                   help=f"dna alone scores DNA with {dna_text}; with --match/--mismatch the "
                        "default is dna, with a matrix its own. Nucleotide input (at least 10 "
                        "residues, all IUPAC nucleotide codes, 90%% A/C/G/T/U/N) under a "
                        "protein matrix is an error unless --alphabet protein is given")


def alphabets() -> tuple[str, ...]:
    """The alphabets' names, for ``--alphabet``: protein, dna, bytes."""
    from ..choices import ALPHABETS
    return ALPHABETS


def backend_flag(p: argparse.ArgumentParser) -> None:
    from ..choices import BACKENDS
    p.add_argument("--backend", default="auto", choices=BACKENDS)


def algorithm_flag(p: argparse.ArgumentParser) -> None:
    from ..choices import ALGORITHMS
    p.add_argument("--algorithm", default="local", choices=ALGORITHMS)


def threads_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--threads", type=positive_int, metavar="N",
                   help="CPU threads (default: NUMBA_NUM_THREADS when set, else every core "
                        "this process may use)")




def strand_flags(p: argparse.ArgumentParser) -> None:
    """``--strand`` and ``--min-score``, the read-mapping flags of locate and search."""
    p.add_argument("--strand", default="both", choices=("both", "plus", "minus"),
                   help="nucleotide queries: align the query as given (plus), its reverse "
                        "complement (minus) or both, the best hits of both first (ties: "
                        "plus). Minus-strand hits: sstart > send in the tables, FLAG 16 in "
                        "SAM (default both; protein has no strands)")
    p.add_argument("--min-score", type=int, metavar="S",
                   help="report only hits scoring at least S; in SAM a query without one "
                        "is an unmapped record (FLAG 4) and a second-best hit below S does "
                        "not lower MAPQ (default: every hit scoring above 0)")


def check_strand(args, scoring) -> None:
    """``--strand minus`` with a protein (or bytes) scoring: an error naming the flag."""
    from ..alphabet import is_nucleotide_alphabet
    if args.strand == "minus" and not is_nucleotide_alphabet(scoring.alphabet):
        raise ValueError(f"--strand minus: the scoring is {scoring.alphabet.name} "
                         f"({scoring.matrix_name or 'match/mismatch'}), which has no "
                         "strands; --strand applies to nucleotide scoring (--alphabet dna "
                         "or --match/--mismatch)")


def output_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("-o", "--output", help="output file (default stdout)")


def parse_scoring(args, default: dict | None = None):
    """The Scoring the flags ask for; ``default`` (match/mismatch/gaps) when none is given,
    and for --alphabet dna alone (DNA_SCORING where the command has no default)."""
    from ..errors import ScoringError
    from ..scoring import DEFAULT_GAPS, Scoring
    args = _blast_gaps(args)
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


def _blast_gaps(args):
    """``args`` with --blast-gaps EXISTENCE EXTENSION as --gap-open/--gap-extend."""
    blast = getattr(args, "blast_gaps", None)
    if blast is None:
        return args
    if args.gap_open is not None or args.gap_extend is not None:
        raise ValueError("give either --blast-gaps or --gap-open/--gap-extend, not both")
    existence, extension = blast
    if existence < 0 or extension < 0:
        raise ValueError(f"--blast-gaps {existence} {extension}: BLAST's gap costs are "
                         "non-negative")
    return argparse.Namespace(**{**vars(args), "gap_open": existence + extension,
                                 "gap_extend": extension})


def progress_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="force a progress bar on stderr")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="never show a progress bar")


def show_progress(args) -> bool:
    return sys.stderr.isatty() if args.progress is None else args.progress


def inputs(*args: str, literal_hint: bool = False) -> list:
    """Input arguments as files: a Path each, standard input for ``-`` (once at most).

    A missing file is an ``InputError`` naming it (with ``literal_hint``, pointing at
    ``--literal``).
    """
    from ..errors import InputError
    if args.count("-") > 1:
        raise InputError("standard input ('-') can be read only once; give files for the others")
    for arg in args:
        if arg != "-" and not os.path.exists(arg):
            hint = " (--literal reads the arguments as sequences)" if literal_hint else ""
            raise InputError(f"{arg}: no such file{hint}")
    return [sys.stdin.buffer if arg == "-" else Path(arg) for arg in args]


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (``--threads``, ``--chunk``; argparse names the flag
    in its error)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return value

