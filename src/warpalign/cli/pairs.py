"""``warpalign pairs X.fasta Y.fasta``: score record i of X against record i of Y.

Writes TSV: ``index xname yname score`` (index 0-based, in input order); with
``--threshold`` only the pairs scoring at least it; ``--mode full`` adds the alignment
(pident length qstart qend sstart send cigar; coordinates 1-based inclusive, as BLAST
writes them).

TSV streams: both files are read ``--chunk`` pairs at a time, each chunk scored (one
``score_pairs`` call on a worker thread while the next chunk is read) and written, so
memory stays bounded whatever the files' size. SAM reads both files whole (its header
lists every Y record first), then scores and writes ``--chunk`` pairs at a time. A
progress bar on stderr counts the pairs scored: on a terminal, or with ``--progress``;
never with ``--no-progress``. The nucleotide check of a protein scoring
(``check_input``) judges each chunk.
"""

from __future__ import annotations

import argparse
import itertools

from ..choices import PAIRS_METHODS, PAIRS_MODES
from .flags import (
    algorithm_flag,
    backend_flag,
    inputs,
    output_flag,
    parse_scoring,
    positive_int,
    progress_flags,
    scoring_flags,
    show_progress,
    threads_flag,
)
from .output import output

FORMATS = ("tsv", "sam")
PAIR_COLUMNS = ("index", "xname", "yname", "score")
FULL_COLUMNS = ("pident", "length", "qstart", "qend", "sstart", "send", "cigar")
#: Paper 000's DNA scoring (Table II), used when no scoring flag is given.
DEFAULT_SCORING = {"match": 2, "mismatch": -1, "gap_open": 1, "gap_extend": 1}
#: Pairs read, scored and written at a time (``--chunk``).
CHUNK_PAIRS = 65536


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``pairs`` to the command line's subparsers; returns its parser."""

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
    p.add_argument("--mode", default="score", choices=PAIRS_MODES,
                   help="full: also the alignment of each written pair (default score)")
    p.add_argument("--method", default="auto", choices=PAIRS_METHODS,
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
    p.add_argument("--chunk", type=positive_int, default=CHUNK_PAIRS, metavar="N",
                   help=f"pairs read, scored and written at a time: bounds the memory "
                        f"(default {CHUNK_PAIRS:,}; --format sam reads the files whole)")
    progress_flags(p)
    output_flag(p)
    p.set_defaults(run=run)
    return p



def run(args) -> int:
    from .._backends.registry import warm_up
    # CuPy's import and the device's initialization beside the first chunk's reading
    warm_up("pairs", args.backend, args.method, all_devices=False)
    scoring = parse_scoring(args, DEFAULT_SCORING)
    if args.format == "sam" and args.mode != "full":
        raise ValueError("--format sam needs --mode full (SAM lines carry the alignment)")
    x, y = inputs(args.x, args.y)
    if args.format == "sam":
        return _run_sam(args, scoring, x, y)
    full = args.mode == "full"
    columns = PAIR_COLUMNS + (FULL_COLUMNS if full else ())
    from concurrent.futures import ThreadPoolExecutor

    from ..io import read_sequences
    chunks = _chunks(args, scoring, read_sequences(x), read_sequences(y))
    bar = _progress_bar(None) if show_progress(args) else None
    with output(args.output) as out, ThreadPoolExecutor(
            1, thread_name_prefix="warpalign-pairs") as pool:
        if args.header:
            out.write("#" + "\t".join(columns) + "\n")
        pending = None
        for chunk in itertools.chain(chunks, [None]):
            if pending is not None:     # write the chunk scored meanwhile
                _write_tsv(out, *pending[0], pending[1].result(), full)
                if bar is not None:
                    bar.update(len(pending[0][1]))
            pending = None if chunk is None else (chunk, pool.submit(_score, args, scoring,
                                                                     *chunk))
    if bar is not None:
        bar.close()
    return 0


def _progress_bar(total: int | None):
    from tqdm.auto import tqdm
    return tqdm(total=total, desc="pairs", unit=" pairs", unit_scale=True, leave=False)


def _chunks(args, scoring, xs, ys):
    """(first index, x names, y names, x SequenceBuffer, y SequenceBuffer) per ``--chunk``
    pairs of the records ``xs`` and ``ys`` (iterators), read as they are needed."""
    from ..buffers import SequenceBuffer
    first = 0
    while True:
        xr = list(itertools.islice(xs, args.chunk))
        yr = list(itertools.islice(ys, args.chunk))
        if len(xr) != len(yr):
            nx = first + len(xr) + sum(1 for _ in xs)
            ny = first + len(yr) + sum(1 for _ in ys)
            raise ValueError(f"{args.x} has {nx} records but {args.y} has {ny}; pairs need "
                             f"as many records in both files")
        if not xr:
            return
        sides = []
        for records, label in ((xr, args.x), (yr, args.y)):
            names = [r.name for r in records]
            sides.append((names, SequenceBuffer.from_texts(
                [r.sequence for r in records], scoring.alphabet, names=names, source=label,
                first=first)))
        yield first, sides[0][0], sides[1][0], sides[0][1], sides[1][1]
        first += len(xr)


def _score(args, scoring, first, x_names, y_names, xbuf, ybuf):
    from ..pairs import score_pairs
    return score_pairs(xbuf, ybuf, scoring, threshold=args.threshold, mode=args.mode,
                       method=args.method, backend=args.backend, algorithm=args.algorithm,
                       threads=args.threads)


def _write_tsv(out, first, x_names, y_names, xbuf, ybuf, result, full: bool) -> None:
    from ..formats import alignment_fields
    scores = result.scores.tolist()
    if result.threshold is not None or full:
        rows = result.indices.tolist()
    else:
        rows = range(len(scores))
    if not full:
        out.write("".join(f"{first + i}\t{x_names[i]}\t{y_names[i]}\t{scores[i]}\n"
                          for i in rows))
        return
    for k, i in enumerate(rows):
        row = alignment_fields(x_names[i], y_names[i], scores[i], result.alignments[k])
        out.write("\t".join([str(first + i), x_names[i], y_names[i], str(scores[i])]
                            + [row[c] for c in FULL_COLUMNS]) + "\n")


def _run_sam(args, scoring, x, y) -> int:
    """--format sam: both files whole (the header lists every Y record before the lines),
    then ``--chunk`` pairs scored and written at a time."""
    from ..formats import check_sam_names, write_sam
    from ..io import read_sequences
    xr, yr = list(read_sequences(x)), list(read_sequences(y))
    if len(xr) != len(yr):
        raise ValueError(f"{args.x} has {len(xr)} records but {args.y} has {len(yr)}; "
                         f"pairs need as many records in both files")
    check_sam_names([r.name for r in xr], [r.name for r in yr])   # before the work
    bar = _progress_bar(len(xr)) if show_progress(args) else None
    decode, encode = scoring.alphabet.decode, scoring.alphabet.encode

    def lines():
        for chunk in _chunks(args, scoring, iter(xr), iter(yr)):
            first, x_names, y_names = chunk[:3]
            result = _score(args, scoring, *chunk)
            for k, i in enumerate(result.indices.tolist()):
                yield (x_names[i], decode(encode(xr[first + i].sequence)), y_names[i],
                       result.alignments[k])
            if bar is not None:
                bar.update(len(x_names))

    with output(args.output) as out:
        write_sam(lines(), out, [(r.name, len(r.sequence)) for r in yr])
    if bar is not None:
        bar.close()
    return 0
