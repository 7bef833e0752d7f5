"""A database built from a FASTA/FASTQ file of any size in bounded host memory, on
``threads`` threads (``Database.build`` of a path or an open file; ``warpalign makedb``).

The files are those of an in-memory build, byte for byte, at every thread count and
budget (``database.py`` describes them): codes sorted by length, input order breaking
ties. Two passes, each holding at most ``memory`` bytes of residues and their index
arrays at once:

1. read and encode: records in batches, in input order (:func:`read_batches`: FASTA by
   the block parser :mod:`.fastablocks`, blocks of ``memory / (32 * threads)`` bytes up
   to 32 MiB parsed on ``threads`` threads; FASTQ and anything else by the line reader
   of ``io``), names to ``names.npy``; lengths, name lengths and the code counts (for
   the nucleotide rule) kept; the codes held until they would pass the budget
   (``memory / 4`` residues), then sorted by length (stable: :func:`by_length`, a
   counting sort; each batch's sequences copied to their places on a thread) into a
   run file ``run{k}.codes``;
2. sort: the order of all sequences by length (:func:`by_length`); with no run file
   (the residues fit the budget) the held codes sorted the same way into
   ``codes.npy``; else the distinct lengths cut into groups of consecutive lengths
   whose residues fit the budget (a single length that does not fit is a group of its
   own, streamed through: runs in input order are its input order), and group by group
   each run's part of it (contiguous: runs are sorted) read, runs in input order, and
   merged: the group's part of the order names each sequence's run, and a run's part
   is in that order, so each sequence's place in what was read follows in one pass
   (no sort per run or group).

Each file is checksummed (:mod:`.checksum`, chunked: 16 MiB chunks, each written with
``pwrite`` and hashed as one job, a write's chunks on the build's threads at once) as it
is written, and synced: a background thread syncs (``fdatasync``) each 256 MiB
written while the build goes on, the last sync (``fsync``, before ``Database.build``
publishes the directory by rename) finds little left; run files are written and read
back in 16 MiB pieces on the threads too, and removed on them while ``codes.npy`` is
synced. What grows with the input beyond the budget is per sequence: about 40 bytes
each (lengths, order, offsets, name offsets), 1.2 GB for 30 M sequences.

Measured (bench/results/makedb_cpu.jsonl, a 2.5 GHz Xeon, 2 cores shared with other
work, so noisy): 186.7 M residues in 516 K sequences at 57-62 M residues/s with one
thread, 59-76 M/s with two (1 GiB and 128 MiB; peak RSS 0.63-0.66 and 0.29-0.35 GB);
560 M residues (1 GiB: three run files) at 92 M/s and 114 M/s (0.93-1.0 GB; 84 and
103 M/s before issue 23's third round, back to back); gzip input
48-50 M/s (one thread inflates: ~106 M residues/s alone). Parsing alone scales 1.8x on
the two cores (~200 to ~370 M residues/s). Fixed costs: ~0.6 s of imports (the CLI's,
NumPy, Numba) and ~0.4 s for Numba's first call. Per phase (issue 23 profile, 560 M
residues, 1 GiB, one thread, ~7.3 s; two ~5 s): reading and parsing ~3.3 s (parallel
but for the file's reads, one thread a block ahead), spilling three runs ~1.3 s
(placing ~0.9 s on the threads, run writes ~0.4 s), the merge ~2.3 s (hashing and
writing ``codes.npy`` ~1.5 s, copies ~0.5 s, reads ~0.2 s: all on the threads), the
order ~0.03 s, the last sync ~0.03 s (was ~0.23 s). Serial parts left: reading the file,
the batch loop between blocks (the held batches, names to ``names.raw``), the small
files (~0.2 s: ``names.npy`` copied from ``names.raw`` on one thread). On 16 cores
(an estimate: the ~6.8 core-seconds on threads shared out, ~0.5 s if memory bandwidth
holds; ~0.5 s serial; ~1 s of imports and Numba's first call) ~2 s, ~280 M residues/s.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import gzip
import itertools
import os
import shutil
import tempfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from .alphabet import NUCLEOTIDE_RULE, Alphabet, _nucleotide_tables, counts_look_nucleotide
from .errors import AlphabetMismatch, InputError
from . import checksum, fastablocks
from ._backends.cpu.dbsort import copy_runs, counting_order, merge_starts, place_runs
from .fastablocks import Batch
from .io import FORMATS, Format, Opened, Record, split_title, encode_many, iter_opened
from .offsets import running_sums

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
#: Bytes of a file written between the syncs that a background thread starts while it
#: is written (``fdatasync``), so that the one after its last write finds little left.
_SYNC_EVERY = 1 << 28


def gather(codes: np.ndarray, lengths: np.ndarray, perm: np.ndarray, *,
           threads: int = 1, pool: concurrent.futures.Executor | None = None) -> np.ndarray:
    """The sequences of ``codes`` (concatenated, of ``lengths``) in the order ``perm``,
    joined (a compiled copy loop: no index per residue, no Python object per sequence;
    ``threads`` > 1: that many slices of ``perm`` copied at once, on ``pool``).

    Example:
        >>> gather(np.arange(6, dtype=np.uint8), np.array([1, 3, 2]), np.array([2, 0, 1])).tolist()
        [4, 5, 0, 1, 2, 3]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    starts = (np.cumsum(lengths) - lengths)[perm]
    return _copied(np.ascontiguousarray(codes, dtype=np.uint8), starts, lengths[perm],
                   threads, pool)


def by_length(lengths: np.ndarray) -> np.ndarray:
    """The indices of ``lengths`` ordered by length, ties in index order (a stable
    argsort), int64: a counting sort (compiled, one pass) where the longest is at most
    2**16 or twice the count, else NumPy's stable argsort.

    Example:
        >>> by_length(np.array([3, 1, 3, 0])).tolist()
        [3, 1, 0, 2]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    top = int(lengths.max()) if len(lengths) else 0
    if top <= max(1 << 16, 2 * len(lengths)):
        return counting_order(lengths, top)
    return np.argsort(lengths, kind="stable").astype(np.int64)


def _copied(codes: np.ndarray, starts: np.ndarray, lengths: np.ndarray, threads: int,
            pool: concurrent.futures.Executor | None) -> np.ndarray:
    """``codes[starts[k]:starts[k] + lengths[k]]`` for k = 0, 1, ... joined (threads > 1:
    that many slices copied at once, on ``pool``)."""
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    if threads <= 1 or pool is None or len(starts) < 2:
        copy_runs(codes, starts, lengths, out)
        return out
    ends = np.cumsum(lengths)
    cuts = np.searchsorted(ends, np.linspace(0, len(out), threads + 1)[1:-1], side="left")
    cuts = np.concatenate([[0], cuts, [len(starts)]]).astype(np.int64)
    jobs = [pool.submit(copy_runs, codes, starts[lo:hi], lengths[lo:hi],
                        out[(ends[lo - 1] if lo else 0):(ends[hi - 1] if hi else 0)])
            for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()) if hi > lo]
    for job in jobs:
        job.result()
    return out


def _npy_header(f, dtype, count: int) -> None:
    """The .npy header of a 1-D array of ``count`` items (what ``np.save`` writes)."""
    fmt = np.lib.format
    fmt.write_array_header_1_0(f, {"descr": fmt.dtype_to_descr(np.dtype(dtype)),
                                   "fortran_order": False, "shape": (int(count),)})


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
                 label: str | None = None, memory: int = MEMORY,
                 threads: int = 1) -> Iterator[Batch]:
    """The records of the FASTA/FASTQ file ``source`` (a path or an open file) in
    batches: by :mod:`.fastablocks` where it applies (blocks of ``memory / (32 *
    threads)`` bytes, at most its ``BLOCK``, parsed on ``threads`` threads), else by the
    line reader (``io``: FASTQ, text handles, a start it must check), about ``memory /
    8`` residues a batch."""
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
            block = min(fastablocks.BLOCK, memory // (32 * threads))
            yield from fastablocks.read_batches(binary, alphabet, opened.label,
                                                block=block, threads=threads)
        else:
            records = (Record(*split_title(title, i), seq, qual) for i, (title, seq, qual)
                       in enumerate(iter_opened(opened, format)))
            yield from _record_batches(records, alphabet, label,
                                       max(1, memory // _BYTES_PER_RESIDUE))
    finally:
        opened.close()


def build_files(source: Any, alphabet: Alphabet, parent: Path, prefix: str,
                **options: Any) -> tuple[Path, dict[str, dict]]:
    """The five array files of the database of the file ``source`` written
    (:func:`write_arrays` and its ``options``) into a new temporary directory in
    ``parent`` named from ``prefix`` (removed on failure); the directory and the files'
    sizes and checksums."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    try:
        return tmp, write_arrays(source, alphabet, tmp, **options)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_arrays(source: Any, alphabet: Alphabet, tmp: Path, *, format: Format | None,
                 label: str | None, check: bool, memory: int = MEMORY,
                 progress: bool = False, threads: int = 1) -> dict[str, dict]:
    """Write the five array files of the database of the file ``source`` into the
    directory ``tmp`` (module docstring) on ``threads`` threads, synced; returns their
    sizes and checksums (``{"codes.npy": {"size": ..., "blake2b": hex, "blake2b_chunk":
    CHUNK}, ...}``, :mod:`.checksum`,
    the files in the order of ``database.ARRAYS``), each hashed as it was written.

    Raises:
        InputError, AlphabetError: as an in-memory build (no records; a bad symbol,
            naming its record).
        AlphabetMismatch: ``check`` (no alphabet given) and the input is nucleotide.
    """
    threads = max(1, int(threads))
    with concurrent.futures.ThreadPoolExecutor(threads, "makedb") as pool, \
            concurrent.futures.ThreadPoolExecutor(1, "makedb-sync") as syncer:
        return _write_arrays(source, alphabet, tmp, format, label, check, int(memory),
                             progress, pool if threads > 1 else None, threads, syncer)


def _write_arrays(source: Any, alphabet: Alphabet, tmp: Path, format: Format | None,
                  label: str | None, check: bool, memory: int, progress: bool,
                  pool: concurrent.futures.Executor | None, threads: int,
                  syncer: concurrent.futures.Executor) -> dict[str, dict]:
    budget = max(1, memory // _SORT_BYTES_PER_RESIDUE)
    held: list[tuple[np.ndarray, np.ndarray]] = []      # batches not yet in a sorted run
    held_size, run_ends = 0, []                          # the runs' ends (sequences)
    lengths_parts, name_parts = [], []
    counts = np.zeros(256, dtype=np.int64)
    # counted only while the input may still be nucleotide (one protein letter settles it)
    counting, other = check, ~_nucleotide_tables(alphabet)[0]
    names_tmp = tmp / "names.raw"
    bar = _Bar(progress, "reading")
    try:
        with open(names_tmp, "wb") as names_out:
            for names, name_lengths, codes, lengths in read_batches(
                    source, alphabet, format=format, label=label, memory=memory,
                    threads=threads):
                if held and held_size + len(codes) > budget:
                    run_ends.append(sum(map(len, lengths_parts)))
                    _spill(held, tmp / f"run{len(run_ends) - 1}.codes", pool)
                    held, held_size = [], 0
                held.append((codes, lengths))
                held_size += len(codes)
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
    if run_ends:
        run_ends.append(len(lengths))
        _spill(held, tmp / f"run{len(run_ends) - 1}.codes", pool)
        held = []
    order = by_length(lengths)
    offsets = running_sums(lengths[order])
    name_offsets = running_sums(name_lengths)
    total = int(offsets[-1])
    del lengths
    small = {}                  # the small files, synced and hashed while codes are sorted
    for key, array in (("offsets", offsets), ("order", order),
                       ("name_offsets", name_offsets), ("names", None)):
        with _HashedFile(tmp / f"{key}.npy", pool, syncer) as f:
            if array is None:
                _wrap(names_tmp, f, int(name_offsets[-1]))
            else:
                np.save(f, array, allow_pickle=False)
        small[key] = f.finish(pool)
    del name_offsets, name_lengths
    bar = _Bar(progress, "sorting", total=total)
    removed: list[concurrent.futures.Future] = []
    try:
        with _HashedFile(tmp / "codes.npy", pool, syncer) as codes_out:
            _npy_header(codes_out, np.uint8, total)
            if run_ends:
                removed = _merge(tmp, run_ends, order, offsets, budget, codes_out, bar,
                                 pool, threads)
            else:
                codes = _placed(held, pool)
                held = []
                codes_out.write(codes)
                bar.update(len(codes))
    finally:
        bar.close()
    files = {"codes.npy": codes_out.finish()}   # synced while the run files go
    for future in removed:
        future.result()
    for key in ("offsets", "order", "names", "name_offsets"):
        files[f"{key}.npy"] = small[key].result() if pool is not None else small[key]
    return files


class _HashedFile:
    """A file written and checksummed at once (:mod:`.checksum`, the chunked form): each
    whole chunk written (``pwrite``) and hashed as one job, the chunks of a ``write``
    on ``pool`` at once (both let go of the GIL); ``write`` returns once they are done,
    so it holds none of the caller's buffers (a last partial chunk is copied). Every
    ``_SYNC_EVERY`` bytes written, ``syncer`` (one thread) syncs what is written so far
    (``fdatasync``; at most one at a time), so the disk writes while the build goes on
    and :meth:`finish`'s sync, which makes the file durable, finds little left."""

    def __init__(self, path: Path, pool: concurrent.futures.Executor | None,
                 syncer: concurrent.futures.Executor):
        self._path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        self._pool = pool
        self._syncer = syncer
        self._sync: concurrent.futures.Future | None = None     # the sync in flight
        self._synced = 0                     # bytes written when it was started
        self._digests: list[bytes] = []
        self._partial = bytearray()          # the chunk not yet whole
        self._at = 0                         # where the partial chunk starts

    def write(self, data: Any) -> None:
        data = memoryview(data).cast("B")
        jobs, lo = [], 0
        if self._partial:
            lo = min(len(data), checksum.CHUNK - len(self._partial))
            self._partial += data[:lo]
            if len(self._partial) < checksum.CHUNK:
                return
            jobs.append((self._partial, self._at))
            self._partial, self._at = bytearray(), self._at + checksum.CHUNK
        while len(data) - lo >= checksum.CHUNK:
            jobs.append((data[lo:lo + checksum.CHUNK], self._at))
            lo, self._at = lo + checksum.CHUNK, self._at + checksum.CHUNK
        if lo < len(data):
            self._partial += data[lo:]
        if self._pool is None or len(jobs) < 2:
            self._digests += [self._put(*job) for job in jobs]
        else:
            self._digests += [f.result() for f in [self._pool.submit(self._put, *job)
                                                   for job in jobs]]
        if self._at - self._synced >= _SYNC_EVERY and (self._sync is None
                                                       or self._sync.done()):
            if self._sync is not None:
                self._sync.result()          # its error, if any, ends the build
            self._sync = self._syncer.submit(os.fdatasync, self._fd)
            self._synced = self._at

    def _put(self, piece: Any, offset: int) -> bytes:
        _pwrite_all(self._fd, piece, offset)
        return checksum.piece_digest(piece)

    def finish(self, pool: concurrent.futures.Executor | None = None) -> Any:
        """The file (closed) synced: its size and checksum (``{"size", "blake2b",
        "blake2b_chunk"}``), or on ``pool``, the future of them."""
        if self._partial:
            self._digests.append(self._put(self._partial, self._at))
            self._at += len(self._partial)
            self._partial = bytearray()

        def sync() -> dict:
            try:
                if self._sync is not None:
                    self._sync.result()
                os.fsync(self._fd)
            finally:
                self.close()
            return {"size": self._at, "blake2b": checksum.combine(self._digests),
                    checksum.CHUNK_KEY: checksum.CHUNK}
        return pool.submit(sync) if pool is not None else sync()

    def close(self) -> None:
        if self._fd >= 0:
            if self._sync is not None:       # not closed under a sync (its error: finish's)
                concurrent.futures.wait([self._sync])
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __enter__(self) -> _HashedFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is not None:
            self.close()


def _pwrite_all(fd: int, data: Any, offset: int) -> None:
    """``data`` written to ``fd`` at ``offset``, all of it."""
    view = memoryview(data).cast("B")
    while len(view):
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _pwrite_parallel(fd: int, data: Any, offset: int,
                     pool: concurrent.futures.Executor | None) -> None:
    """``data`` written to ``fd`` at ``offset`` in pieces of ``_COPY_BLOCK`` bytes on
    ``pool`` at once."""
    view = memoryview(data).cast("B")
    pieces = [(view[lo:lo + _COPY_BLOCK], offset + lo) for lo in range(0, len(view), _COPY_BLOCK)]
    if pool is None or len(pieces) < 2:
        for piece, at in pieces:
            _pwrite_all(fd, piece, at)
        return
    for future in [pool.submit(_pwrite_all, fd, piece, at) for piece, at in pieces]:
        future.result()


def _pread_parallel(fd: int, out: memoryview, offset: int,
                    pool: concurrent.futures.Executor | None) -> None:
    """``out`` filled from ``fd`` at ``offset``, pieces of ``_COPY_BLOCK`` bytes on
    ``pool`` at once.

    Raises:
        OSError: the file ends first.
    """
    def read(lo: int) -> None:
        view = out[lo:lo + _COPY_BLOCK]
        at = offset + lo
        while len(view):
            n = os.preadv(fd, [view], at)
            if n == 0:
                raise OSError("a run file of this build was cut short")
            view, at = view[n:], at + n
    starts = range(0, len(out), _COPY_BLOCK)
    if pool is None or len(starts) < 2:
        for lo in starts:
            read(lo)
        return
    for future in [pool.submit(read, lo) for lo in starts]:
        future.result()


def _placed(held: list[tuple[np.ndarray, np.ndarray]],
            pool: concurrent.futures.Executor | None) -> np.ndarray:
    """The codes of the batches ``held`` (codes, lengths; input order) sorted by length,
    ties in input order: each batch's sequences copied to their places, batches on
    ``pool`` at once."""
    lengths = np.concatenate([n for _, n in held])
    order = by_length(lengths)
    dest = np.empty(len(order), dtype=np.int64)
    dest[order] = np.cumsum(lengths[order]) - lengths[order]
    ends = np.cumsum([0, *(len(n) for _, n in held)]).tolist()
    out = np.empty(int(lengths.sum()), dtype=np.uint8)
    jobs = [(part, n, dest[lo:hi], out) for (part, n), lo, hi in zip(held, ends, ends[1:])]
    if pool is None:
        for job in jobs:
            place_runs(*job)
    else:
        for future in [pool.submit(place_runs, *job) for job in jobs]:
            future.result()
    return out


def _spill(held: list[tuple[np.ndarray, np.ndarray]], path: Path,
           pool: concurrent.futures.Executor | None) -> None:
    """The batches ``held`` sorted by length (:func:`_placed`) into the run file ``path``."""
    codes = _placed(held, pool)
    held.clear()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        _pwrite_parallel(fd, codes, 0, pool)
    finally:
        os.close(fd)


def _wrap(raw: Path, out: _HashedFile, count: int) -> None:
    """``raw`` bytes written to ``out`` as a uint8 .npy file (``raw`` removed)."""
    with open(raw, "rb") as f:
        _npy_header(out, np.uint8, count)
        while block := f.read(_COPY_BLOCK):
            out.write(block)
    raw.unlink()


def _groups(ordered: np.ndarray, budget: int) -> np.ndarray:
    """Upper length bounds of the groups (inclusive, ascending) of the lengths
    ``ordered`` (ascending): consecutive distinct lengths whose residues fit ``budget``
    together; a length that alone does not is a group of its own."""
    firsts = np.flatnonzero(np.diff(ordered, prepend=-1))
    values = ordered[firsts]
    count = np.diff(np.append(firsts, len(ordered)))
    bounds, size, prev = [], 0, 0
    for v, r in zip(values.tolist(), (values * count).tolist()):
        if size and size + r > budget:
            bounds.append(prev)
            size = 0
        size += r
        prev = v
    bounds.append(prev)
    return np.asarray(bounds, dtype=np.int64)


def _merge(tmp: Path, run_ends: list[int], order: np.ndarray, offsets: np.ndarray,
           budget: int, out: _HashedFile, bar: _Bar, pool: concurrent.futures.Executor | None,
           threads: int) -> list[concurrent.futures.Future]:
    """The codes of the sorted runs ``run{k}.codes`` (of the sequences up to
    ``run_ends[k]``, in input order) merged by length, ties in input order, written to
    ``out``, group by group of lengths (:func:`_groups`): the group's part of the
    build's ``order`` (``offsets``: of the sorted codes) tells each sequence's run, and
    so where it lies in the runs' parts read back joined (runs in input order; a run's
    part is in that order too: runs are sorted and cover consecutive inputs); a group
    of one length (possibly over the budget) streamed through as read. The run files
    are removed: on ``pool`` (the futures returned), else before it returns, or on
    failure."""
    ordered = np.diff(offsets)
    bounds = _groups(ordered, budget)
    cuts = np.concatenate([[0], np.searchsorted(ordered, bounds, side="right")]).tolist()
    ends = np.asarray(run_ends, dtype=np.int64)
    at = np.zeros(len(run_ends), dtype=np.int64)        # each run's next part
    fds: list[int] = []
    done = False
    try:
        for k in range(len(run_ends)):
            fds.append(os.open(tmp / f"run{k}.codes", os.O_RDONLY))
        for lo, hi in zip(cuts, cuts[1:]):
            sub = ordered[lo:hi]
            starts, sizes = merge_starts(np.searchsorted(ends, order[lo:hi], side="right"),
                                         sub, len(fds))
            if sub[0] == sub[-1]:                  # one length: run order is input order
                buf = np.empty(min(_COPY_BLOCK, int(sizes.max())), dtype=np.uint8)
                for fd, a, n in zip(fds, at.tolist(), sizes.tolist()):
                    for p in range(a, a + n, _COPY_BLOCK):
                        piece = memoryview(buf)[:min(_COPY_BLOCK, a + n - p)]
                        _read_run(tmp, fd, piece, p, None)
                        out.write(piece)
                        bar.update(len(piece))
            else:
                codes = np.empty(int(sizes.sum()), dtype=np.uint8)
                p = 0
                for fd, a, n in zip(fds, at.tolist(), sizes.tolist()):
                    _read_run(tmp, fd, memoryview(codes)[p:p + n], a, pool)
                    p += n
                out.write(_copied(codes, starts, sub, threads, pool))
                bar.update(len(codes))
                del codes
            at += sizes
        done = True
    finally:
        paths = [tmp / f"run{k}.codes" for k in range(len(run_ends))]
        removing = []
        for fd in fds:
            os.close(fd)
        for path in paths:
            if done and pool is not None:
                removing.append(pool.submit(os.unlink, path))
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(path)
    return removing


def _read_run(tmp: Path, fd: int, out: memoryview, offset: int,
              pool: concurrent.futures.Executor | None) -> None:
    """:func:`_pread_parallel` of a run file of the build in ``tmp``."""
    try:
        _pread_parallel(fd, out, offset, pool)
    except OSError as exc:
        raise OSError(f"{tmp}: {exc}") from None
