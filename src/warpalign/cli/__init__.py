"""Command line: ``warpalign makedb | search | align | pairs | locate | lcs | bench``.

Only parses arguments and calls the public API: one module per subcommand (each with
``add_parser(sub)`` and ``run(args)``), the flags they share in :mod:`.flags`, output
files in :mod:`.output`. Input arguments are files (``-`` is standard input, once per
command); a command that takes literal sequences says so with a ``--literal`` flag, never
by guessing from a missing file. Errors go to stderr with a non-zero exit status and no
traceback; ``| head`` ends quietly; a progress bar shows on a terminal and never when
stderr is piped; output files are written whole or not at all.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from .. import __version__
from ..errors import AlphabetMismatch, WarpalignError
from . import align, bench, lcs, locate, makedb, pairs, search
from .output import check_output

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # what a shell reports for a process ended by SIGINT (Ctrl-C)
EXIT_PIPE = 141  # what a shell reports for a process ended by SIGPIPE
#: The subcommands, in the order ``warpalign --help`` lists them.
COMMANDS = (makedb, search, align, pairs, locate, lcs, bench)


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
    for command in COMMANDS:
        command.add_parser(sub)
    return p
