"""``warpalign lcs A B``: the length of the longest common subsequence, the LCS with ``-o``.

Each of A and B is a file (``-``: standard input, for one of them), gzip-compressed
or plain (detected by its magic bytes); when it starts with ``>`` it is FASTA and its first
record's sequence is used (line breaks removed), otherwise the file's bytes are used
verbatim (a trailing newline is a symbol too). A missing file is an error naming it. With
``--literal`` A and B are the strings themselves (their bytes; latin-1 for code points up
to 255).

Prints the length on stdout. ``-o FILE`` writes the LCS's bytes verbatim (no header, no
newline), the file appearing only once complete. Errors raise warpalign errors, which the
CLI's ``main`` prints to stderr with a non-zero exit.
"""

from __future__ import annotations

import argparse
import gzip
import io
import os
import sys

from ..errors import InputError
from .flags import backend_flag, inputs, threads_flag
from .output import output

_GZIP_MAGIC = b"\x1f\x8b"


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``lcs`` to the command line's subparsers; returns its parser."""
    p = sub.add_parser(
        "lcs", help="longest common subsequence of two byte strings (files, FASTA, or "
                    "literals with --literal)",
        description="Length (stdout) and, with -o, the bytes of a longest common subsequence "
                    "of A and B, in linear space: the bit-parallel LCS recurrence on 64-bit "
                    "words, inside Hirschberg's divide and conquer.")
    p.add_argument("a", metavar="A", help="file (raw, FASTA: first record; gzip too; '-': "
                                          "standard input)")
    p.add_argument("b", metavar="B", help="file, as A")
    p.add_argument("--literal", action="store_true",
                   help="A and B are the strings typed on the command line, not files")
    p.add_argument("-o", "--output", help="write the LCS itself (raw bytes) to this file")
    backend_flag(p)
    threads_flag(p)
    p.set_defaults(run=run)
    return p


def read_sequence(arg: str, literal: bool = False) -> bytes:
    """The bytes A or B stands for (see the module docstring)."""
    if literal:
        try:
            return arg.encode("latin-1")
        except UnicodeEncodeError as exc:
            raise InputError(f"literal sequence {arg!r}: character {arg[exc.start]!r} at "
                             f"position {exc.start} is not a byte (latin-1)") from None
    if arg == "-":
        data = sys.stdin.buffer.read()
        arg = "<stdin>"
    elif os.path.isdir(arg):
        raise InputError(f"{arg}: is a directory, expected a file")
    elif not os.path.exists(arg):
        raise InputError(f"{arg}: no such file")
    else:
        with open(arg, "rb") as fh:
            data = fh.read()
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise InputError(f"{arg}: damaged gzip file: {exc}") from None
    if data[:1] == b">":
        return _first_fasta_record(data, arg)
    return data


def _first_fasta_record(data: bytes, name: str) -> bytes:
    from ..io import fasta_records

    text = io.StringIO(data.decode("latin-1"))
    for _title, seq in fasta_records(text):
        if not seq:
            raise InputError(f"{name}: the first FASTA record is empty")
        return seq.encode("latin-1")
    raise InputError(f"{name}: no FASTA record")


def run(args) -> int:
    from .._backends.registry import warm_up
    from ..lcs import lcs, lcs_length
    # CuPy's import and the device's initialization beside the sequences' reading
    warm_up("lcs", args.backend, "auto", all_devices=False)
    if not args.literal:
        inputs(args.a, args.b, literal_hint=True)  # names a missing file; stdin once
    a = read_sequence(args.a, args.literal)
    b = read_sequence(args.b, args.literal)
    if args.output:
        common = lcs(a, b, backend=args.backend, threads=args.threads)
        with output(args.output, binary=True) as fh:
            fh.write(common)
        length = len(common)
    else:
        length = lcs_length(a, b, backend=args.backend, threads=args.threads)
    sys.stdout.write(f"{length}\n")
    return 0
