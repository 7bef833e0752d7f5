"""``locate``: the best local alignments of short queries inside a long reference.

The reference is one sequence or many records (a multi-record FASTA: a chromosome set,
contigs); a hit names its record and gives coordinates within it. How one strand of one
query is searched (windows, the span bound, two passes, lazy ends, the traceback, several
disjoint hits) is :mod:`warpalign.locate_core`'s docstring; every method returns the same
hits.

**Strands** (:mod:`warpalign.strands`). A nucleotide query is searched on both strands.
The hits of both come out as the ``top`` best of both strands' lists (by score, ties to
the plus strand, then each strand's own order), and they are taken one at a time: a
strand's next hit is looked for (its last hit cut out, :meth:`Search.cut
<warpalign.locate_core.Search.cut>`) only when the merge needs it, and only the hits
reported are traced. That is the order :func:`~warpalign.strands.merge_alignments` gives
the strands' complete lists (a k-way merge of lists each sorted by score), without
computing the hits it would drop.

**Many reads.** ``locate(reads, reference, ...)`` with a list of reads (or a FASTA/FASTQ
path, an iterator, a 2-D array) gives one result per read, exactly what a call per read
gives; :func:`locate_many_encoded` is the same for encoded reads, as an iterator (the CLI
streams a FASTQ through it). The work shared by the reads is done once per call: the
reference's records and codes are checked once, the GPU keeps one device copy of a
read-only reference (a :class:`~warpalign.reference.Reference`: made once per device and
shared by threads) and cuts its window table once. Reads go in batches of
:data:`CHUNK_READS`: on the GPU, :data:`GPU_WORKERS` threads locate whole reads, each on a
CUDA stream of its own, so one read's host work runs while other reads' kernels do (a
read's state belongs to its thread); a batch's alignments (``mode="full"``) are traced
together by the ``traceback`` job's engine (:func:`~warpalign.traceback.align_many`: on
the GPU a few launches for the whole batch), each exactly the alignment a single call
traces.

Example:
    >>> from warpalign.scoring import Scoring
    >>> s = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)   # paper 002
    >>> ref = {"chrA": "TTTTTTTTTT", "chrB": "GGGACGTACGTAGGG"}
    >>> hit = locate("ACGTACGTA", ref, s)
    >>> hit.record, hit.score, hit.target_start, hit.target_end, hit.cigar
    ('chrB', 9, 3, 12, '9M')
    >>> [(h.record, h.strand, h.target_start) for h in locate(["ACGTACG", "TACGTCC"], ref, s)]
    [('chrB', '+', 3), ('chrB', '-', 1)]
"""

from __future__ import annotations

import collections.abc
import dataclasses
import itertools
import os
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ._backends import BACKENDS, ReadOnlyMemo, check_choice, resolve_threads
from ._backends.registry import backend_for, engine_for, lookup
from .choices import LOCATE_ALGORITHMS, LOCATE_METHODS, LOCATE_MODES
from .database import Database
from .errors import ScoringError
from .io import is_path, load_one, load_sequences, source_label
from .locate_core import Hit, Search, plan_search, score_packed
from .reference import Reference, is_reference_dir
from .results import Alignment
from .scoring import Scoring, check_input
from .spans import (
    default_window,
    first_pass_span,
    query_score_bound,
    seam_pieces,
    span_bound,
    window_bounds,
)
from .strands import Strand, query_strands, strand_query

MODES = LOCATE_MODES
#: Methods by name; "auto" resolves to "windows".
METHODS = LOCATE_METHODS
ALGORITHMS = LOCATE_ALGORITHMS
#: Reads per batch of the many-reads path: their alignments are traced together, and a
#: stream of reads holds at most this many at a time.
CHUNK_READS = 1024
#: Threads locating reads at once on the GPU (each on its own CUDA stream): enough that the
#: host work of one read (~0.3-0.6 ms, docs/gpu-notes.md) hides behind others' kernels.
GPU_WORKERS = 4
#: Reads a GPU worker takes at a time: their strands' first passes go several queries per
#: windows launch (:func:`~warpalign.locate_core.score_packed`; 150 bp: three per launch,
#: so six reads' twelve strands fill four launches).
PACK_READS = 6

Method = Literal["auto", "windows", "dp", "scan", "scan1", "antidiagonal", "blocked"]


def locate(query: Any, reference: Any, scoring: Scoring, *, top: int = 1,
           mode: Literal["score", "end", "full"] = "full", method: Method = "auto",
           backend: str = "auto", algorithm: Literal["local"] = "local",
           window: int | None = None, threads: int | None = None,
           strand: Strand = "both", min_score: int | None = None
           ) -> Alignment | list[Alignment] | list[Alignment | list[Alignment]]:
    """Best local alignment(s) of a short ``query`` inside a long ``reference``.

    Args:
        query: one sequence (str, bytes, uint8 array of characters, SeqRecord); or many
            reads: a list or tuple of sequences, an iterator of them, a 2-D ``uint8``
            array of characters (one read a row) or a FASTA/FASTQ path (plain or gzip).
        reference: a :class:`~warpalign.reference.Reference` (built once: the fast way to
            locate many reads, or one read many times) or the path of its directory, a
            FASTA/FASTQ path (plain or gzip, any number of records), one sequence, a list
            of sequences or SeqRecords, a mapping name -> sequence, or a
            :class:`~warpalign.database.Database`.
        scoring: the scoring scheme; its alphabet validates both.
        top: how many hits; 1 returns an :class:`Alignment`, N > 1 a list of at most N
            hits with pairwise disjoint reference intervals, best first (module docstring).
        mode: "score", "end" (also both end coordinates) or "full" (also the starts, CIGAR
            and aligned strings).
        method: "auto" (= "windows"), "windows", "dp" (exact scalar DP on the CPU, the
            reference), or the row-scan / anti-diagonal methods "scan", "scan1",
            "antidiagonal", "blocked" (exact kernels on the CPU or the GPU).
        backend: "auto", "cpu" or "cuda": where "windows" scores its windows and the four
            kernel methods run ("auto": the GPU when a device answers).
        algorithm: "local" (the only one: the window bound rests on positive scores).
        window: window length for "windows" (default :func:`default_window`); at least
            :func:`span_bound` of the query.
        threads: CPU threads (the CPU backend's window scan and the tracebacks); default
            ``NUMBA_NUM_THREADS`` when set, else every core this process may use.
        strand: nucleotide scoring: "both" (the query and its reverse complement, each
            run through the same method and backend), "plus" or "minus"
            (:mod:`warpalign.strands`: the order of hits from both strands, ties to the
            plus strand). Protein: "both" and "plus" align the query as given.
        min_score: hits scoring below this are not reported (default: every hit > 0).

    Returns:
        For one query: an :class:`Alignment` (``top=1``; the empty alignment of score 0 when nothing
        scores above 0 or ``min_score``, with ``record`` None) or a list of them.
        ``record`` names the reference record; coordinates are 0-based half-open within
        it, on its plus strand; ``strand`` is "+" or "-" (a minus-strand hit's query
        coordinates and CIGAR refer to the reverse-complemented query, as in SAM), None
        for protein. For many reads: a list with that result for each read, in order
        (module docstring, "Many reads").

    Raises:
        AlphabetError: a symbol outside the alphabet (record, position, character).
        BackendUnavailable: ``backend="cuda"`` without a device (or CuPy).
        ValueError: an unknown option, ``top < 1``, a window shorter than the span bound.

    Example:
        >>> s = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)   # paper 004
        >>> hits = locate("GATTACA", "CCGATTACATTGATTTACAGG", s, top=2, backend="cpu")
        >>> [(h.score, h.target_start, h.target_end, h.cigar, h.strand) for h in hits]
        [(35, 2, 9, '7M', '+'), (27, 11, 19, '2M1D5M', '+')]
        >>> hit = locate("TGTAATC", "CCGATTACATTG", s, backend="cpu")   # reverse complement
        >>> hit.strand, hit.target_start, hit.target_end, hit.query_aligned
        ('-', 2, 9, 'GATTACA')
    """
    check_choice("algorithm", algorithm, ALGORITHMS)
    _Options.make(scoring, top, mode, method, backend, window, threads, strand, min_score)
    names, records, built = _records(reference, scoring)
    label = f"{source_label(query, 'query')} and {source_label(reference, 'reference')}"
    if not _is_many(query, scoring):
        q = _one_query(query, scoring)
        check_input(scoring, [q] if built else [q, *records], label)
        return locate_encoded(q, names, records, scoring, top=top, mode=mode, method=method,
                              backend=backend, window=window, threads=threads, strand=strand,
                              min_score=min_score)
    if isinstance(query, np.ndarray):
        query = list(query)   # rows: one read each
    _, reads = load_sequences(query, scoring.alphabet, default_name="read")
    check_input(scoring, reads if built else [*reads, *records], label)
    return list(locate_many_encoded(reads, names, records, scoring, top=top, mode=mode,
                                    method=method, backend=backend, window=window,
                                    threads=threads, strand=strand, min_score=min_score))


def locate_encoded(q: np.ndarray, names: list[str], records: list[np.ndarray], scoring: Scoring,
                   *, top: int = 1, mode: str = "full", method: str = "auto",
                   backend: str = "auto", window: int | None = None,
                   threads: int | None = None, strand: Strand = "both",
                   min_score: int | None = None) -> Alignment | list[Alignment]:
    """:func:`locate` on a query and reference records already encoded in
    ``scoring.alphabet``'s codes (``names[i]`` names ``records[i]``)."""
    o = _Options.make(scoring, top, mode, method, backend, window, threads, strand, min_score)
    _check_records(names, records, scoring)
    found, _ = _read_hits(_query_codes(q, scoring, "query"), records, scoring, o)
    for f in found:
        if f.job is not None:   # one hit: traced here, with the whole reverse pass checked
            f.trace_alone(scoring, o.threads)
    return o.result(found, names)


def locate_many_encoded(queries: Iterable[np.ndarray], names: list[str],
                        records: list[np.ndarray], scoring: Scoring, *, top: int = 1,
                        mode: str = "full", method: str = "auto", backend: str = "auto",
                        window: int | None = None, threads: int | None = None,
                        strand: Strand = "both", min_score: int | None = None,
                        second: bool = False) -> Iterator[Any]:
    """:func:`locate_encoded` of each of many encoded queries, as an iterator of results
    in query order (module docstring, "Many reads"): it takes :data:`CHUNK_READS` queries
    at a time from ``queries`` (which may be a generator: a stream of any length).

    ``second=True`` (with ``top=1``): each item is ``(result, second)``, ``second`` the score
    of the query's next hit after the reported one (0 when none scores at least
    ``min_score``, or 1): SAM's mapping quality compares the best score with it.
    """
    o = _Options.make(scoring, top, mode, method, backend, window, threads, strand, min_score)
    if second and o.top != 1:
        raise ValueError("second=True needs top=1 (with top > 1 the second hit is reported)")
    _check_records(names, records, scoring)
    kernels = _resident_kernels(o, scoring)
    tb = None
    if o.mode == "full":
        tb = engine_for("traceback", backend_for("traceback", o.backend, "auto"), "auto")
    workers = GPU_WORKERS if kernels is not None else 1
    streams = threading.local()

    def some(qs: list[np.ndarray]) -> list[tuple[list[_Found], int]]:
        if kernels is None:
            return [_read_hits(q, records, scoring, o, second) for q in qs]
        stream = getattr(streams, "stream", None)
        if stream is None:   # this thread's launches and copies queue on a stream of its own
            stream = streams.stream = kernels.worker_stream()
        with stream:
            return _reads_hits(qs, records, scoring, o, second, pack=True)

    with ThreadPoolExecutor(workers, thread_name_prefix="warpalign-locate") as pool:
        start = 0
        for chunk in _batches(queries, CHUNK_READS):
            qs = [_query_codes(q, scoring, f"query {start + i}") for i, q in enumerate(chunk)]
            start += len(qs)
            parts = [qs[k:k + PACK_READS] for k in range(0, len(qs), PACK_READS)]
            done = [d for part in (pool.map(some, parts) if workers > 1 and len(parts) > 1
                                   else map(some, parts)) for d in part]
            _trace_batch([f for found, _ in done for f in found], scoring, tb, o.threads)
            for found, after in done:
                yield (o.result(found, names), after) if second else o.result(found, names)


# --------------------------------------------------------------------- one read's hits


@dataclasses.dataclass(frozen=True)
class _Options:
    """A call's checked options (shared by its reads; immutable)."""

    top: int
    mode: str
    method: str
    backend: str
    window: int | None
    threads: int
    strands: tuple[str | None, ...]
    min_score: int | None
    scoring: Scoring

    @classmethod
    def make(cls, scoring, top, mode, method, backend, window, threads, strand,
             min_score) -> _Options:
        check_choice("mode", mode, MODES)
        check_choice("method", method, METHODS)
        check_choice("backend", backend, BACKENDS)
        if isinstance(top, bool) or not isinstance(top, (int, np.integer)) or top < 1:
            raise ValueError(f"invalid top: {top!r}; expected an integer >= 1")
        if window is not None and (isinstance(window, bool)
                                   or not isinstance(window, (int, np.integer)) or window < 1):
            raise ValueError(f"invalid window: {window!r}; expected an integer >= 1")
        if min_score is not None and (isinstance(min_score, bool)
                                      or not isinstance(min_score, (int, np.integer))):
            raise ValueError(f"invalid min_score: {min_score!r}; expected an integer")
        strands = query_strands(strand, scoring.alphabet)
        return cls(int(top), mode, method, backend, window, resolve_threads(threads), strands,
                   None if min_score is None else int(min_score), scoring)

    @property
    def floor(self) -> int:
        """The lowest score reported (hits score above 0)."""
        return 1 if self.min_score is None else max(self.min_score, 1)

    def result(self, found: list[_Found], names: list[str]) -> Alignment | list[Alignment]:
        hits = [f.alignment(names) for f in found]
        if self.top == 1:
            return hits[0] if hits else _empty(self.mode)
        return hits


@dataclasses.dataclass
class _Found:
    """A reported hit of one read: strand, record, what its mode reports; in mode "full"
    until traced, its :func:`~warpalign.traceback.align_many` job and where the job's
    segment begins in the record (``lo``)."""

    strand: str | None
    r: int
    result: Alignment | None
    job: tuple | None = None
    lo: int = 0

    def traced(self, aln: Alignment) -> None:
        self.result = dataclasses.replace(aln, target_start=aln.target_start + self.lo,
                                          target_end=aln.target_end + self.lo)
        self.job = None

    def trace_alone(self, scoring: Scoring, threads: int) -> None:
        """Trace this hit now (a single call): exactly the batch's alignment, with the whole
        reverse pass run as a check (:func:`~warpalign.traceback.align_from_end`)."""
        from .traceback import TracebackError, align_from_end
        q, t, score, qe, te = self.job
        try:
            aln = align_from_end(q, t, scoring, score, qe, te, "local", check_end=True,
                                 threads=threads)
        except TracebackError as exc:
            raise RuntimeError(  # a disagreement between engines is a bug, never a result
                f"internal inconsistency in locate: the scan gave score {score} ending at "
                f"({qe}, {te + self.lo}); the traceback of [{self.lo}, {te + self.lo}) "
                f"disagrees: {exc}") from None
        self.traced(aln)

    def alignment(self, names: list[str]) -> Alignment:
        return dataclasses.replace(self.result, record=names[self.r], strand=self.strand)


def _read_hits(q: np.ndarray, records, scoring: Scoring, o: _Options, second: bool = False
               ) -> tuple[list[_Found], int]:
    """The reported hits of one query (best first; module docstring, "Strands") and, with
    ``second``, the score of the next one (0 below the floor); each strand's first pass
    alone (one query per windows launch)."""
    return _reads_hits([q], records, scoring, o, second, pack=False)[0]


def _reads_hits(qs: list[np.ndarray], records, scoring: Scoring, o: _Options, second: bool,
                pack: bool) -> list[tuple[list[_Found], int]]:
    """:func:`_read_hits` of each of ``qs``; ``pack``: their strands' first passes go
    several queries per windows launch where the backend packs them
    (:func:`~warpalign.locate_core.score_packed`: each query's cells are those it gets
    alone, so every read's hits are its own call's)."""
    # packed, one hit with ends (its alignment, or its interval cut out before the second
    # hit's score): the scans give scores only, and the ends of every read's hit are found
    # after them, all in one launch (_winners_ends)
    batch = pack and o.top == 1 and (o.mode != "score" or second)
    plans = [[(s, plan_search(strand_query(q, s, scoring.alphabet), records, scoring,
                              o.top + second, o.mode, o.method, o.backend, o.window,
                              o.threads, best_ends=not batch, packed=pack))
              for s in o.strands] for q in qs]
    flat = [plan for read in plans for _, plan in read]
    cells = iter(score_packed(flat) if pack else [None] * len(flat))
    searches = [[(s, plan.search(next(cells), lazy=True)) for s, plan in read]
                for read in plans]
    if batch:
        _winners_ends([[search for _, search in read] for read in searches], o)
        if second:
            return _picks_with_second(searches, o)
    return [_pick(read, o, second) for read in searches]


def _picks_with_second(reads: list[list[tuple[str | None, Search]]], o: _Options
                       ) -> list[tuple[list[_Found], int]]:
    """:func:`_pick` of each read with one hit and ``second`` (SAM's next score): every
    read's hit first, its interval cut out with the clipped pieces left unscored, then
    those pieces of all the reads scored at once (``WindowScorer.ends_batch`` at score 1:
    the exact best cell of each piece, one launch on the GPU), then each read's next
    score. The same hits and scores as :func:`_pick` read by read."""
    from .locate_scorers import WindowScorer
    firsts: list[tuple[int, Hit] | None] = []
    for read in reads:
        searches = [search for _, search in read]
        k = _leader(searches, o.floor)
        if k is None:
            firsts.append(None)
            continue
        hit = searches[k].pop(ends=True)
        searches[k].cut(hit, score=False)
        firsts.append((k, hit))
    jobs, owners = [], []
    for read in reads:
        for _, search in read:
            rows = search.unscored()
            if rows is not None:
                jobs.append((search.scorer, search.records, rows, 1))
                owners.append(search)
    for search, cells in zip(owners, WindowScorer.ends_batch(jobs)):
        search.put_unscored(cells)
    out = []
    for read, first in zip(reads, firsts):
        if first is None:
            out.append(([], 0))
            continue
        k, hit = first
        out.append(([_found(read[k], hit, o.mode)],
                    _next_score([search for _, search in read], o.floor)))
    return out


def _winners_ends(reads: list[list[Search]], o: _Options) -> None:
    """The end cells :meth:`~warpalign.locate_core.Search.pop` would find for each read's
    hit (one hit: the best strand's next pieces, :func:`_heads`), found for all the reads
    at once (``WindowScorer.ends_batch``: one launch on the GPU) and handed to their
    searches, so that each read's pick finds them there."""
    from .locate_scorers import WindowScorer
    jobs, owners = [], []
    for searches in reads:
        k = _leader(searches, o.floor)
        if k is None:
            continue
        wanted = searches[k].ends_wanted()
        if wanted is None:
            continue
        need, rows, score = wanted
        jobs.append((searches[k].scorer, searches[k].records, rows, score))
        owners.append((searches[k], need))
    for (search, need), cells in zip(owners, WindowScorer.ends_batch(jobs)):
        search.put_ends(need, cells)


def _pick(searches: list[tuple[str | None, Search]], o: _Options, second: bool
          ) -> tuple[list[_Found], int]:
    """The reported hits of one read from its strands' searches (:func:`_read_hits`).

    Each strand's :class:`~warpalign.locate_core.Search` gives its hits best first; the
    next hit overall is the best strand head (ties to the earlier strand), and only the
    strand it came from is cut and looked at again."""
    taken: list[tuple[int, Hit]] = []
    uncut: list[Hit | None] = [None] * len(searches)
    strands = [search for _, search in searches]

    def cut_taken() -> list[Search]:
        for k, hit in enumerate(uncut):
            if hit is not None:   # the strand's last hit, cut out before its next is sought
                strands[k].cut(hit)
                uncut[k] = None
        return strands

    after = 0
    while len(taken) < o.top:
        k = _leader(cut_taken(), o.floor)
        if k is None:
            break
        more = len(taken) + 1 < o.top or second
        hit = strands[k].pop(ends=o.mode != "score" or more)
        taken.append((k, hit))
        if more:
            uncut[k] = hit
    else:
        if second:
            after = _next_score(cut_taken(), o.floor)
    return [_found(searches[k], hit, o.mode) for k, hit in taken], after


def _leader(searches: list[Search], floor: int) -> int | None:
    """The strand of the next hit (the best head, ties to the earlier strand), or None
    where no head reaches ``floor``."""
    heads = _heads(searches)
    k = heads.index(max(heads))
    return k if heads[k] >= floor else None


def _next_score(searches: list[Search], floor: int) -> int:
    """The best head (SAM's next score), or 0 below ``floor``."""
    after = max(_heads(searches))
    return after if after >= floor else 0


def _heads(searches: list[Search]) -> list[int]:
    """Each strand's next score where it can be the best (ties to the earlier strand), its
    first pass's best elsewhere. A strand whose seams are open (two passes, not closed
    yet) keeps them open while another strand's exact next score is above everything it
    can hold (:meth:`~warpalign.locate_core.Search.head_bound`): it cannot give the next
    hit, and its seams are never scored (module docstring of ``locate_core``, "Two
    passes, lazily"); otherwise they are closed and its score is exact."""
    heads = [None if s.seams_open else s.head() for s in searches]
    while None in heads:
        exact = [h for h in heads if h is not None]
        top = max(exact) if exact else None
        waiting = [k for k, h in enumerate(heads) if h is None]
        beaten = [k for k in waiting if top is not None and top > searches[k].head_bound()]
        if len(beaten) == len(waiting):
            for k in beaten:          # below the best: their first pass's best stands in
                heads[k] = searches[k].piece_best()
            break
        # the likeliest winner first (the best first pass): the others may then be beaten
        k = max((k for k in waiting if k not in beaten), key=lambda k: searches[k].piece_best())
        heads[k] = searches[k].head()           # closes its seams: exact
    return heads


def _found(strand_search: tuple[str | None, Search], hit: Hit, mode: str) -> _Found:
    strand, search = strand_search
    if mode != "full":
        return _Found(strand, hit.r, hit.result(mode))
    job, lo = search.job(hit)
    return _Found(strand, hit.r, None, job, lo)


def _trace_batch(found: list[_Found], scoring: Scoring, engine: Any, threads: int) -> None:
    """Trace every untraced hit of a batch of reads at once (``align_many`` on ``engine``)."""
    todo = [f for f in found if f.job is not None]
    if not todo:
        return
    from .traceback import TracebackError, align_many
    try:
        alignments = align_many([f.job for f in todo], scoring, "local", engine=engine,
                                threads=threads)
    except TracebackError as exc:
        raise RuntimeError(  # a disagreement between engines is a bug, never a result
            f"internal inconsistency in locate: a traceback disagrees with the scan: {exc}"
        ) from None
    for f, aln in zip(todo, alignments):
        f.traced(aln)


def _resident_kernels(o: _Options, scoring: Scoring) -> Any:
    """The GPU's resident-window kernels (base.WindowKernels) when this call's windows
    run on them, else None (the reads then go one after another)."""
    if o.method not in ("auto", "windows"):
        return None
    engine = engine_for("locate", o.backend, "windows")
    kernels = lookup("locate", engine.name, "windows16")
    return kernels if kernels is not None and kernels.supports(scoring) else None


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(items)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


# ----------------------------------------------------------------------------- inputs


#: codes.max() of read-only arrays: a reference queried many times is scanned once.
_MAX_CODES = ReadOnlyMemo(8)


def _max_code(codes: np.ndarray) -> int:
    """``int(codes.max())``, remembered for read-only arrays, which are taken as immutable
    (as the GPU path's resident reference does: a Database's memory map, or arrays marked
    ``setflags(write=False)``)."""
    return _MAX_CODES.get([codes], None, lambda: int(codes.max()))


def _check_records(names: list[str], records, scoring: Scoring) -> None:
    if len(names) != len(records):
        raise ValueError(f"{len(names)} names for {len(records)} records")
    size = scoring.matrix.shape[0]
    for name, codes in zip(names, records):
        if codes.size and _max_code(codes) >= size:
            raise ValueError(f"{name}: code {int(codes.max())} is outside the "
                             f"{scoring.alphabet.name} alphabet ({size} codes)")


def _query_codes(q: Any, scoring: Scoring, what: str) -> np.ndarray:
    q = np.ascontiguousarray(q, dtype=np.uint8)
    size = scoring.matrix.shape[0]
    if q.size and int(q.max()) >= size:
        raise ValueError(f"{what}: code {int(q.max())} is outside the "
                         f"{scoring.alphabet.name} alphabet ({size} codes)")
    return q


def _is_many(query: Any, scoring: Scoring) -> bool:
    """Whether ``query`` holds many reads (a list, tuple or iterator of sequences, a 2-D
    array, a file path) rather than one sequence."""
    if isinstance(query, (list, tuple, collections.abc.Iterator)):
        return True
    if isinstance(query, np.ndarray):
        return query.ndim == 2
    return isinstance(query, os.PathLike) or (isinstance(query, str)
                                             and is_path(query, scoring.alphabet))


def _one_query(query: Any, scoring: Scoring) -> np.ndarray:
    return np.ascontiguousarray(load_one(query, scoring.alphabet, "query")[1], dtype=np.uint8)


def _records(reference: Any, scoring: Scoring) -> tuple[list[str], Any, bool]:
    """(names, records, whether they come from a built Reference or Database)."""
    if isinstance(reference, (str, os.PathLike)) and is_reference_dir(reference):
        reference = _open_reference(reference)
    if isinstance(reference, Database):
        reference = Reference(reference)
    if isinstance(reference, Reference):
        if reference.alphabet != scoring.alphabet:
            raise ScoringError(f"the scoring's alphabet ({scoring.alphabet.name}) is not the "
                               f"reference's ({reference.alphabet.name})")
        return reference.names, reference.records, True
    names, codes = load_sequences(reference, scoring.alphabet, default_name="record")
    return names, [np.ascontiguousarray(c, dtype=np.uint8) for c in codes], False


#: References opened from a directory path, by (real path, meta.json's stamp): a path
#: given to many calls is opened (and memory-mapped, and uploaded to a GPU) once.
_OPENED: dict[tuple, Reference] = {}
_OPENED_KEPT = 4
_OPENED_LOCK = threading.Lock()


def _open_reference(path: str | os.PathLike) -> Reference:
    from .database import META
    real = os.path.realpath(path)
    st = os.stat(Path(real) / META)
    key = (real, st.st_ino, st.st_size, st.st_mtime_ns)
    with _OPENED_LOCK:
        ref = _OPENED.get(key)
        if ref is None:
            ref = _OPENED[key] = Reference.open(real)
            while len(_OPENED) > _OPENED_KEPT:
                _OPENED.pop(next(iter(_OPENED)))
        return ref


def _empty(mode: str) -> Alignment:
    if mode == "score":
        return Alignment(score=0)
    if mode == "end":
        return Alignment(score=0, query_end=0, target_end=0)
    return Alignment(score=0, query_start=0, query_end=0, target_start=0, target_end=0,
                     cigar="", query_aligned="", target_aligned="")


__all__ = ["default_window", "first_pass_span", "locate", "locate_encoded",
           "locate_many_encoded", "query_score_bound", "seam_pieces", "span_bound",
           "window_bounds"]
