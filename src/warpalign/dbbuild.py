"""A database built from a FASTA/FASTQ file of any size in bounded host memory
(``Database.build`` of a path or an open file; ``warpalign makedb``).

The files are those of an in-memory build, byte for byte (``database.py`` describes
them): codes sorted by length, input order breaking ties. Three passes, each holding at
most ``memory`` bytes of residues and their index arrays at once:

1. read and encode: records in batches (:func:`read_batches`: FASTA by the block
   parser :mod:`.fastablocks`, blocks of ``memory / 32`` bytes up to 32 MiB; FASTQ and
   anything else by the line reader of ``io``), each batch's codes appended to
   ``input.codes`` (input order) and its names to ``names.npy``; lengths, name lengths
   and the code counts (for the nucleotide rule) kept;
2. partition: the distinct lengths cut into groups of consecutive lengths whose
   residues fit the budget (a single length that does not fit is a group of its own:
   its sequences need no sorting), and ``input.codes`` read block by block, each
   block's sequences appended to their group's file (input order kept);
3. sort: each group's file in turn sorted by length in memory (stable) and appended
   to ``codes.npy``; a one-length group is copied through.

With one group (the residues fit the budget) pass 2 is skipped. What grows with the
input beyond the budget is per sequence: about 40 bytes each (lengths, order, offsets,
name offsets), 1.2 GB for 30 M sequences.

Measured (bench/results/makedb_cpu.jsonl, a 2.5 GHz Xeon, 2 cores): 186.7 M residues
in 516 K sequences at 52-55 M residues/s, peak RSS 0.65 GB with the default 1 GiB and
0.28 GB with 128 MiB; 560 M residues at 65 M/s (0.86 GB) and 58 M/s (0.38 GB). Before
the block parser and the compiled sort copy: 13-16 M residues/s. Of ~3.5 s for 186.7 M
residues: ~1.1 s fixed (the CLI's imports, Numba's first call), ~1.35 s parsing, the
rest the sort, writing, fsync and checksums.
"""

from __future__ import annotations

import gzip
import itertools
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .alphabet import NUCLEOTIDE_RULE, Alphabet, _nucleotide_tables, counts_look_nucleotide
from .errors import AlphabetMismatch, InputError
from . import fastablocks
from ._backends.cpu.dbsort import copy_runs
from .fastablocks import Batch
from .io import FORMATS, Format, Opened, Record, split_title, encode_many, iter_opened

#: Host bytes a build holds at once by default.
MEMORY = 1 << 30
#: Bytes per residue while the line reader's batch is encoded (the text and its joined
#: copy, the encoder's lookup and mask, the codes).
_BYTES_PER_RESIDUE = 8
#: Bytes per residue while a group is sorted (its codes and their sorted copy) or a
#: block partitioned, leaving room for the process and the per-sequence arrays (at 3,
#: 560 M residues in 1.5 M sequences peaked at 1.2 GB with memory=1 GiB).
_SORT_BYTES_PER_RESIDUE = 4
_COPY_BLOCK = 1 << 24


def gather(codes: np.ndarray, lengths: np.ndarray, perm: np.ndarray) -> np.ndarray:
    """The sequences of ``codes`` (concatenated, of ``lengths``) in the order ``perm``,
    joined (a compiled copy loop: no index per residue, no Python object per sequence).

    Example:
        >>> gather(np.arange(6, dtype=np.uint8), np.array([1, 3, 2]), np.array([2, 0, 1])).tolist()
        [4, 5, 0, 1, 2, 3]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    copy_runs(np.ascontiguousarray(codes, dtype=np.uint8), starts[perm], lengths[perm], out)
    return out


def _npy_header(f, dtype, count: int) -> None:
    """The .npy header of a 1-D array of ``count`` items (what ``np.save`` writes)."""
    fmt = np.lib.format
    fmt.write_array_header_1_0(f, {"descr": fmt.dtype_to_descr(np.dtype(dtype)),
                                   "fortran_order": False, "shape": (int(count),)})


def _save(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as f:
        np.save(f, array, allow_pickle=False)


class _Bar:
    """A progress bar over residues on stderr (tqdm), or nothing."""

    def __init__(self, enabled: bool, desc: str, total: int | None = None):
        self._bar = None
        if enabled:
            from tqdm.auto import tqdm
            self._bar = tqdm(total=total, desc=desc, unit=" res", unit_scale=True,
                             leave=False)

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def _record_batches(records: Iterable[Any], alphabet: Alphabet, label: str | None,
                    budget: int) -> Iterator[Batch]:
    """Batches of ``records`` (``io.Record``: name, description, sequence text), about
    ``budget`` residues each."""
    names: list[str] = []
    seqs: list[str] = []
    size = 0
    for record in itertools.chain(records, [None]):
        if record is not None:
            names.append(record.name)
            seqs.append(record.sequence)
            size += len(record.sequence)
        if names and (size >= budget or record is None):
            codes, lengths, _ = encode_many(names, seqs, alphabet, label)
            encoded = [n.encode("utf-8", "surrogateescape") for n in names]
            yield Batch(b"".join(encoded), np.fromiter(map(len, encoded), np.int64, len(encoded)),
                        codes, lengths)
            names, seqs, size = [], [], 0


def read_batches(source: Any, alphabet: Alphabet, *, format: Format | None = None,
                 label: str | None = None, memory: int = MEMORY) -> Iterator[Batch]:
    """The records of the FASTA/FASTQ file ``source`` (a path or an open file) in
    batches: by :mod:`.fastablocks` where it applies (blocks of ``memory / 32`` bytes,
    at most its ``BLOCK``), else by the line reader (``io``: FASTQ, text handles, a
    start it must check), about ``memory / 8`` residues a batch."""
    if format is not None and format not in FORMATS:
        raise ValueError(f"invalid format: {format!r}; expected one of "
                         f"{', '.join(map(repr, FORMATS))}")
    opened = Opened(source, label or "input")
    try:
        try:
            binary = opened.binary()
            head = binary.peek(4096)[:4096] if binary is not None else b""
        except (EOFError, zlib.error, gzip.BadGzipFile):
            head = b""                        # the line reader names the problem
        if format != "fastq" and fastablocks.applies(head):
            yield from fastablocks.read_batches(binary, alphabet, opened.label,
                                                block=min(fastablocks.BLOCK, memory // 32))
        else:
            records = (Record(*split_title(title, i), seq, qual) for i, (title, seq, qual)
                       in enumerate(iter_opened(opened, format)))
            yield from _record_batches(records, alphabet, label,
                                       max(1, memory // _BYTES_PER_RESIDUE))
    finally:
        opened.close()


def write_arrays(source: Any, alphabet: Alphabet, tmp: Path, *, format: Format | None,
                 label: str | None, check: bool, memory: int = MEMORY,
                 progress: bool = False) -> None:
    """Write the five array files of the database of the file ``source`` into the
    directory ``tmp`` (module docstring).

    Raises:
        InputError, AlphabetError: as an in-memory build (no records; a bad symbol,
            naming its record).
        AlphabetMismatch: ``check`` (no alphabet given) and the input is nucleotide.
    """
    budget = max(1, int(memory) // _SORT_BYTES_PER_RESIDUE)
    raw = tmp / "input.codes"
    lengths_parts, name_parts = [], []
    counts = np.zeros(256, dtype=np.int64)
    # counted only while the input may still be nucleotide (one protein letter settles it)
    counting, other = check, ~_nucleotide_tables(alphabet)[0]
    names_tmp = tmp / "names.raw"
    bar = _Bar(progress, "reading")
    try:
        with open(raw, "wb") as out, open(names_tmp, "wb") as names_out:
            for names, name_lengths, codes, lengths in read_batches(
                    source, alphabet, format=format, label=label, memory=int(memory)):
                out.write(codes.data)
                names_out.write(names)
                lengths_parts.append(lengths)
                name_parts.append(name_lengths)
                for lo in range(0, len(codes), _COPY_BLOCK) if counting else ():
                    counts += np.bincount(codes[lo:lo + _COPY_BLOCK], minlength=256)
                counting = counting and not counts[:len(other)][other].any()
                bar.update(len(codes))
    finally:
        bar.close()
    if not lengths_parts:
        raise InputError(f"{label or 'input'}: no sequences to build a database from")
    if check and counts_look_nucleotide(counts, alphabet):
        source = label or "input"
        problem = f"nucleotide sequences ({NUCLEOTIDE_RULE}) for a protein database"
        raise AlphabetMismatch(f"{source}: {problem}; pass alphabet='dna' (or "
                               "alphabet='protein' to store them as protein)",
                               source=source, problem=problem)
    lengths = np.concatenate(lengths_parts)
    name_lengths = np.concatenate(name_parts)
    del lengths_parts, name_parts
    order = np.argsort(lengths, kind="stable").astype(np.int64)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths[order], out=offsets[1:])
    name_offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(name_lengths, out=name_offsets[1:])
    _save(tmp / "offsets.npy", offsets)
    _save(tmp / "order.npy", order)
    _save(tmp / "name_offsets.npy", name_offsets)
    _wrap(names_tmp, tmp / "names.npy", int(name_offsets[-1]))
    bar = _Bar(progress, "sorting", total=int(offsets[-1]))
    try:
        _sort_codes(raw, lengths, tmp, budget, bar)
    finally:
        bar.close()


def _wrap(raw: Path, path: Path, count: int) -> None:
    """``raw`` bytes as the uint8 .npy file ``path`` (``raw`` removed)."""
    with open(path, "wb") as out, open(raw, "rb") as f:
        _npy_header(out, np.uint8, count)
        while block := f.read(_COPY_BLOCK):
            out.write(block)
    raw.unlink()


def _groups(lengths: np.ndarray, budget: int) -> np.ndarray:
    """Upper length bounds of the groups (inclusive, ascending): consecutive distinct
    lengths whose residues fit ``budget`` together; a length that alone does not is a
    group of its own."""
    values, count = np.unique(lengths, return_counts=True)
    bounds, size, prev = [], 0, 0
    for v, r in zip(values.tolist(), (values * count).tolist()):
        if size and size + r > budget:
            bounds.append(prev)
            size = 0
        size += r
        prev = v
    bounds.append(prev)
    return np.asarray(bounds, dtype=np.int64)


def _sort_codes(raw: Path, lengths: np.ndarray, tmp: Path, budget: int, bar: _Bar) -> None:
    """codes.npy: the codes of ``raw`` (input order) sorted by length, ties in input
    order, through group files of at most ``budget`` residues (module docstring)."""
    bounds = _groups(lengths, budget)
    group = np.searchsorted(bounds, lengths, side="left")      # each sequence's group
    total = int(lengths.sum())
    files = [raw] if len(bounds) == 1 else [tmp / f"group{g}.codes" for g in range(len(bounds))]
    if len(bounds) > 1:
        _partition(raw, lengths, group, files, budget)
    with open(tmp / "codes.npy", "wb") as out:
        _npy_header(out, np.uint8, total)
        for g, file in enumerate(files):
            sub = lengths[group == g]
            if len(np.unique(sub)) <= 1:           # one length: input order is sorted
                with open(file, "rb") as f:
                    while block := f.read(_COPY_BLOCK):
                        out.write(block)
                        bar.update(len(block))
            else:
                codes = np.fromfile(file, dtype=np.uint8)
                out.write(gather(codes, sub, np.argsort(sub, kind="stable")))
                bar.update(len(codes))
                del codes
            os.unlink(file)


def _partition(raw: Path, lengths: np.ndarray, group: np.ndarray, files: list[Path],
               budget: int) -> None:
    """Append each sequence of ``raw`` (input order) to its group's file, block by block
    of about ``budget`` residues (input order kept within a group)."""
    outs = [open(f, "wb") for f in files]  # noqa: SIM115 (closed below)
    try:
        ends = np.cumsum(lengths)
        with open(raw, "rb") as f:
            lo = 0
            while lo < len(lengths):
                start = int(ends[lo - 1]) if lo else 0
                hi = int(np.searchsorted(ends, start + budget, side="right"))
                hi = min(max(hi, lo + 1), len(lengths))
                block = np.fromfile(f, dtype=np.uint8, count=int(ends[hi - 1]) - start)
                sub, gs = lengths[lo:hi], group[lo:hi]
                perm = np.argsort(gs, kind="stable")
                moved = memoryview(gather(block, sub, perm))
                cut = np.concatenate([[0], np.cumsum(np.bincount(gs, weights=sub,
                                                                 minlength=len(files)))])
                cut = cut.astype(np.int64)
                for g in np.unique(gs).tolist():
                    outs[g].write(moved[cut[g]:cut[g + 1]])
                del block, moved                # before the next block is read: 2x, not 4x
                lo = hi
    finally:
        for o in outs:
            o.close()
    raw.unlink()
