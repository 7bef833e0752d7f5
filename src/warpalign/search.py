"""``search``: every query against every database sequence, top-k hits per query."""

from __future__ import annotations

import contextlib
import os
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ._backends import ALGORITHMS, check_choice, resolve_threads
from ._backends.base import Candidates
from ._backends.registry import call_options, engine_for, prepare_options
from ._backends.stream import candidates, parse_memory
from .choices import SEARCH_METHODS, SEARCH_MODES
from .database import Database
from .errors import DatabaseError, ScoringError
from .io import load_sequences, source_label
from .offsets import running_sums
from .pipeline import ahead
from .results import STRAND_NAMES, Hits
from .scoring import Scoring, check_input
from .strands import Strand, merge_strand_results, query_strands, strand_query

MODES = SEARCH_MODES
METHODS = SEARCH_METHODS   # "warp": paper 003's kernel, CUDA backend only
#: Mode "full", one strand: the hits found so far are traced together once at least this
#: many queries wait and a batch of the engine's is complete (a packed batch's queries at
#: once, queries searched alone in groups of this many; the rest at the end), so tracing
#: overlaps the next batch's search.
TRACE_GROUP = 64

# One resident copy of a database per backend object and device memory limit (the CUDA
# backend uploads it once; a streamed one keeps only its chunk plan).
_handles: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_handles_lock = threading.Lock()


def search(queries: Any, database: Any, scoring: Scoring, *, top_k: int = 10,
           mode: Literal["score", "end", "full"] = "score",
           algorithm: Literal["local", "global", "semiglobal"] = "local",
           backend: str = "auto", progress: bool = False,
           method: Literal["auto", "warp"] = "auto",
           evalue: float | None = None, threads: int | None = None,
           strand: Strand = "both", min_score: int | None = None,
           gpu_memory: int | float | str | None = None) -> list[Hits]:
    """Search each query against every sequence of ``database``.

    Args:
        queries: a FASTA/FASTQ path, one sequence, or an iterable of sequences
            (str, bytes, uint8 arrays of characters, SeqRecords, a ``Bio.SeqIO`` stream).
            A ``str`` is a path when it names a file or looks like one (``/``, ``\\``,
            ``.``; a missing one is an ``InputError``), else one sequence; pass a
            ``pathlib.Path`` to mean a file whatever its name.
        database: a :class:`Database`, the path of one built by ``Database.build``, the
            path of a FASTA/FASTQ file, or sequences as for ``queries`` in a list (encoded
            in memory). A ``str`` here is always a path, never a sequence: one that names
            nothing raises ``DatabaseError``.
        scoring: the scoring scheme; its alphabet must be the database's. Nucleotide
            queries (or sequences encoded here as the database) under a protein alphabet
            the matrix only implied are an ``AlphabetMismatch`` (see :class:`Scoring`).
        top_k: hits kept per query (at least 1).
        mode: "score", "end" (also end coordinates) or "full" (also start coordinates and
            the alignment, traced only for the reported hits).
        algorithm: "local", "global" or "semiglobal".
        backend: "auto", "cpu" or "cuda".
        progress: show a progress bar over the queries on stderr.
        method: "auto" (the backend's fastest kernels) or "warp" (paper 003's GPU kernel,
            one warp per alignment; CUDA backend only).
        evalue: with a number, add E-values and bit scores (``Hits.evalues``,
            ``Hits.bitscores``; Karlin–Altschul, :mod:`warpalign.stats`) and keep only
            the hits with E-value <= ``evalue``. Local alignment with a matrix and gaps
            of BLAST's tables only; anything else raises ``StatisticsUnavailable``.
        threads: CPU threads (the CPU backend's scan and the traceback of ``mode="full"``);
            default ``NUMBA_NUM_THREADS`` when set, else every core this process may use.
        strand: nucleotide scoring: "both" (each query and its reverse complement, the
            ``top_k`` best of both; :mod:`warpalign.strands`), "plus" or "minus". Protein:
            "both" and "plus" search the queries as given.
        min_score: keep only the hits scoring at least this (default: all ``top_k``).
        gpu_memory: most device memory the search uses on each GPU: bytes (an int), a size
            such as ``"4G"`` or ``"512M"`` (powers of 1024), or a fraction of the device's
            memory such as ``0.5``; never more than is free. A database whose resident
            copy (about 12 bytes a residue and 64 a sequence) exceeds three quarters of it
            is streamed through the device in chunks of at most half of it, read from
            disk ahead of the GPU, with exactly the hits of a resident search
            (``_backends/stream.py``; the copies hide behind the search from about 220
            query residues a call on PCIe: docs/ARCHITECTURE.md). Default: what is free less 4 GiB (at most a quarter of it)
            for other work. The CPU backend keeps nothing on a device and ignores it.

    Returns:
        One :class:`Hits` per query, in query order; hits sorted by score (descending),
        ties by database order, then plus strand before minus. ``Hits.strands`` says the
        strand of each hit (None for protein); ``Hits.cells`` counts both strands.

    Example:
        >>> s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
        >>> res = search(["HEAGAWGHEE"], ["PAWHEAE", "HEAGAWGHEE", "WWW"], s, top_k=2)
        >>> res[0].targets.tolist(), res[0].scores.tolist()
        ([1, 0], [62, 17])
    """
    return [hits for part in search_parts(
        queries, database, scoring, top_k=top_k, mode=mode, algorithm=algorithm,
        backend=backend, progress=progress, method=method, evalue=evalue, threads=threads,
        strand=strand, min_score=min_score, gpu_memory=gpu_memory) for hits in part]


def search_parts(queries: Any, database: Any, scoring: Scoring, *, top_k: int = 10,
                 mode: str = "score", algorithm: str = "local", backend: str = "auto",
                 progress: bool = False, method: str = "auto",
                 evalue: float | None = None, threads: int | None = None,
                 strand: Strand = "both", min_score: int | None = None,
                 gpu_memory: int | float | str | None = None) -> Iterator[list[Hits]]:
    """:func:`search`'s results in parts as they become final: lists of :class:`Hits` in
    query order, non-empty, the very objects ``search`` returns (it joins them), so a
    caller can write the first queries' hits while later batches are searched. The
    arguments are checked, the queries loaded and the database made resident here, before
    the first part is asked for; errors while searching come from the iteration.

    A part is a batch of the engine's (one query from a CPU engine) in modes "score" and
    "end", the hits traced together in mode "full" (:data:`TRACE_GROUP` queries or more,
    the rest at the end); with both strands of a nucleotide query the hits are merged
    across strands at the end, so all come in one last part. Close the iterator (or
    exhaust it) to end the engine's work early."""
    check_choice("mode", mode, MODES)
    check_choice("algorithm", algorithm, ALGORITHMS)
    check_choice("method", method, METHODS)
    if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
        raise ValueError(f"invalid top_k: {top_k!r}; expected an integer >= 1")
    threads = resolve_threads(threads)
    gpu_memory = parse_memory(gpu_memory, "gpu_memory=")
    strands = query_strands(strand, scoring.alphabet)
    if min_score is not None and (isinstance(min_score, bool)
                                  or not isinstance(min_score, (int, np.integer))):
        raise ValueError(f"invalid min_score: {min_score!r}; expected an integer")
    if evalue is not None:
        from .stats import check_statistics
        check_statistics(scoring, algorithm=algorithm, evalue=evalue)  # fail before searching
    db = as_database(database, scoring)
    if db.alphabet != scoring.alphabet:
        raise ScoringError(f"the scoring's alphabet ({scoring.alphabet.name}) is not the "
                           f"database's ({db.alphabet.name})")
    names, codes = load_sequences(queries, scoring.alphabet, default_name="query")
    check_input(scoring, codes, source_label(queries, "queries"))
    engine = engine_for("search", backend, method)
    handle = _handle(engine, db, gpu_memory)
    return _parts(engine, handle, db, scoring, names, codes, strands, top_k=top_k,
                  mode=mode, algorithm=algorithm, progress=progress, method=method,
                  evalue=evalue, threads=threads, min_score=min_score)


def _parts(engine, handle, db, scoring, names, codes, strands, *, top_k, mode, algorithm,
           progress, method, evalue, threads, min_score) -> Iterator[list[Hits]]:
    """:func:`search_parts`' iteration: the search, each part yielded once final."""
    order = np.asarray(db.order, dtype=np.int64)
    residues = db.residues
    results = []
    # every query once per strand: runs[k * n + i] is query i on strands[k]
    runs = [strand_query(q, s, scoring.alphabet) for s in strands for q in codes]
    tb_backend = "cuda" if getattr(engine, "name", "") == "cuda" else "cpu"
    # one strand: hits traced as batches complete, TRACE_GROUP queries or more at a time
    # (while the device searches the next batch); both strands: once merged (only the hits
    # kept are traced)
    early = mode == "full" and len(strands) == 1
    # a device search's hits traced while later batches run go to the CPU engine: the
    # next batch's kernel holds every SM, so a GPU traceback would wait for it
    # (docs/ARCHITECTURE.md, "Tracing beside the search"); the last batch's go to the
    # device. A CPU tracing that takes longer than the batch before it took on the device
    # turns this off for the rest of the call.
    beside = early and tb_backend == "cuda"
    traced = 0
    # results[:done] were yielded: one strand, a part once final (traced in mode full);
    # both strands, all at the end (a query's hits are final once both strands are merged)
    done = 0
    ongoing = len(strands) == 1 and mode != "full"

    def final(part, traced_now: bool) -> list[Hits]:
        part = merge_strand_results(part, strands, top_k)
        if mode == "full" and not traced_now:
            # merged hits carry their strands: each is traced as it was scanned (above,
            # before the merge, with the query as scanned, which the merge then tagged)
            part = _with_alignments(part, codes[done:done + len(part)], db, scoring,
                                    algorithm, tb_backend, threads)
        if min_score is not None:
            part = [h.take(h.scores >= min_score) for h in part]
        if evalue is not None:
            from .stats import apply_statistics
            part = apply_statistics(part, db, scoring, evalue=evalue, algorithm=algorithm)
        return part

    queries = zip(names * len(strands), runs)
    with _batches(engine, runs, handle, scoring, algorithm, mode, top_k, method,
                  threads) as lists, _progress(len(runs), progress) as bar:
        arrived = time.perf_counter()
        for got in lists:
            now = time.perf_counter()
            searched, arrived = now - arrived, now
            # the list first: zip then takes no query past the list's end
            results += _top_hits([(qname, len(q), batch, len(q) * residues)
                                  for batch, (qname, q) in zip(got, queries)],
                                 order, db, top_k, mode)
            bar.update(len(got))
            if early and len(results) - traced >= TRACE_GROUP:
                on_cpu = beside and len(results) < len(runs)
                results[traced:] = _with_alignments(results[traced:], runs[traced:], db,
                                                    scoring, algorithm,
                                                    "cpu" if on_cpu else tb_backend, threads)
                traced = len(results)
                if on_cpu and time.perf_counter() - arrived > searched:
                    beside = False
            ready = traced if early else len(results) if ongoing else done
            if ready > done:
                part = final(results[done:ready], True)
                done = ready
                yield part
    if done < len(results) // len(strands):   # the untraced rest; both strands: all
        yield final(results[done:], False)


@contextlib.contextmanager
def _batches(engine, codes, handle, scoring, algorithm, mode, top_k, method, threads=None):
    """Lists of ScoreBatch, one per query, in query order, as the engine completes them
    (a list per device batch, a list per query from a CPU engine; the CUDA engine runs the
    whole flow itself: top-k candidates on the device, chunks, several devices, and gives per
    query every target scoring at least its k-th best score, with their ``ids``; a CPU
    engine scans on ``threads`` CPU threads, lazily, query by query).

    An engine with ``iter_batches`` (one on a device) gives a list per batch of queries;
    it runs on a thread of its own (:class:`~warpalign.pipeline.ahead`), so the device
    searches batch k+1 while this thread assembles batch k's hits (top-k, traceback)."""
    options = dict(algorithm=algorithm, ends=mode != "score", top_k=top_k, method=method,
                   **call_options(engine, threads=threads))
    each = getattr(engine, "iter_batches", None)
    if each is None:
        yield ([batch] for batch in engine.search_batches(codes, handle, scoring, **options))
        return
    with ahead(each(codes, handle, scoring, **options)) as lists:
        yield lists


def as_database(database: Any, scoring: Scoring, *, verify: bool | None = None) -> Database:
    """``database`` as :func:`search` takes it; a str, bytes or PathLike is always a path
    (a database directory or a FASTA/FASTQ file), never a sequence. ``verify``: as
    :meth:`Database.open` (None: the checksums once, until a file changes)."""
    if isinstance(database, Database):
        return database
    if isinstance(database, (str, bytes, os.PathLike)):
        path = os.fsdecode(database)
        if os.path.isdir(path):
            return Database.open(path, verify=verify)
        if not os.path.exists(path):
            raise DatabaseError(f"{path}: no such database or file; expected a database "
                                "directory (Database.build) or a FASTA/FASTQ file")
        database = Path(path)
    db = Database.from_sequences(database, alphabet=scoring.alphabet)
    check_input(scoring, [db.targets.codes], source_label(database, "database"))
    return db


def _handle(engine, db: Database, gpu_memory: int | float | None = None):
    """The database resident for ``engine`` within ``gpu_memory`` (parsed), prepared once:
    threads that search one database at once share one upload (each (engine, database,
    limit) has a lock of its own, so a long upload holds back no other database's
    searches). A call's own limit never changes the shared engine."""
    options = prepare_options(engine, gpu_memory=gpu_memory)
    key = options.get("device_memory")
    with _handles_lock:
        cache = _handles.setdefault(engine, weakref.WeakKeyDictionary())
        got = cache.setdefault(db, {}).get(key)
        if got is None:
            got = cache[db][key] = [threading.Lock(), None]
    lock, handle = got
    if handle is None:
        with lock:
            if got[1] is None:
                got[1] = engine.prepare(db.targets, **options)
            handle = got[1]
    return handle


def _top_hits(named, order, db, top_k, mode) -> list[Hits]:
    """The hits of several queries (``named``: (query name, query length, batch, cells)
    each, a batch's ``ids`` naming its scores' targets where it holds some only): each
    query's top_k targets by score, ties by database order, all of them named in one pass
    (:meth:`Database.names_at`: one name at a time took half of 500 queries' ~16 ms)."""
    if not named:
        return []
    picks = _picks_together([_candidates(batch, top_k) for _, _, batch, _ in named],
                            order, top_k)
    names = db.names_at(np.concatenate([p[1] for p in picks]))
    out, at = [], 0
    for (qname, qlen, batch, cells), (scores, targets, qends, tends) in zip(named, picks):
        out.append(Hits(qname, qlen, scores, targets, names[at:at + len(scores)], mode, qends,
                        tends, None, batch.saturated, cells))
        at += len(scores)
    return out


def _candidates(batch, top_k) -> Candidates:
    """``batch`` as candidates with ``ids``: a batch of every target's score cut to those
    scoring at least its k-th best (ties kept: decided with the database order later)."""
    if getattr(batch, "ids", None) is not None:
        return batch
    keep = candidates(batch.scores, top_k)
    qends, tends = (None if a is None else a[keep] for a in (batch.query_ends, batch.target_ends))
    return Candidates(batch.scores[keep], qends, tends, batch.saturated, keep)


def _picks_together(batches, order, top_k) -> list[tuple]:
    """(scores int32, database indices int64, query ends, target ends: int32 or None) of
    each candidate batch's top_k targets, best first, all at once: one sort by query, score
    descending and database index packed in one integer where they fit, else by a lexsort
    of the three (a query at a time took ~20 us of NumPy calls, the lexsort ~2.5 ms for
    500 queries, the packed key's sort ~0.3 ms)."""
    sizes = np.fromiter((len(b.scores) for b in batches), np.int64, len(batches))
    starts = running_sums(sizes)
    query = np.repeat(np.arange(len(batches), dtype=np.int64), sizes)
    scores = np.concatenate([b.scores for b in batches]).astype(np.int64)
    original = order[np.concatenate([np.asarray(b.ids, dtype=np.int64) for b in batches])]
    high = int(scores.max()) if scores.size else 0
    # the index field holds the largest database index among them: a Dask shard's
    # ``order`` names a few sequences of a larger database (sized by its length, an index
    # past it spilled into the score and a shard kept a 72 over a 74: session 36)
    bits = [max(1, int(original.max(initial=0)).bit_length()),
            (high - int(scores.min(initial=high))).bit_length()]
    if sum(bits) + len(batches).bit_length() <= 62:
        # query, score descending, database index in one int64 key: unique, one sort
        ranked = np.argsort((query << sum(bits)) | ((high - scores) << bits[0]) | original)
    else:
        ranked = np.lexsort((original, -scores, query))
    # (query q's run stays at its start)
    keep = ranked[np.arange(ranked.size) - starts[query] < top_k]
    joined = [np.ascontiguousarray(scores[keep], dtype=np.int32), original[keep]]
    for attr in ("query_ends", "target_ends"):
        got = [getattr(b, attr) for b in batches]
        joined.append(None if got[0] is None else
                      np.concatenate(got).astype(np.int32, copy=False)[keep])
    cuts = running_sums(np.minimum(sizes, top_k)).tolist()
    return [tuple(None if a is None else a[lo:hi] for a in joined)
            for lo, hi in zip(cuts, cuts[1:])]


def _with_alignments(results, codes, db, scoring, algorithm, backend, threads) -> list[Hits]:
    """Every reported hit's alignment (mode "full"), the hits of all queries in one batch
    through the ``traceback`` job's engine on ``backend``; each path is re-scored to its
    hit's score and end cell. ``codes[i]`` is query i as given; a minus-strand hit
    (``Hits.strands``) is traced with its reverse complement, as it was scanned, and its
    alignment says its strand. The hits go as arrays, each query strand and each target
    once (:func:`~warpalign.traceback.align_pairs_table`; on the GPU starts, paths and
    their rendering run on the device: 5,000 hits a job at a time through ``align_many``
    took ~0.18 s, most of it host work, docs/gpu-notes.md, session 28; on the CPU the
    same or faster)."""
    from dataclasses import replace

    from .traceback import align_pairs_table
    if not any(len(h) for h in results):
        return [replace(h, alignments=[]) for h in results]
    engine = engine_for("traceback", backend, "auto")
    counts = np.fromiter((len(h) for h in results), np.int64, len(results))
    if all(h.strands is None for h in results):     # one strand: each query once
        queries = [np.asarray(q, np.uint8) for q, _ in zip(codes, results)]
        lengths = np.fromiter((len(q) for q in queries), np.int64, len(queries))
        pieces, tags = queries, None
        qat = np.repeat(running_sums(lengths)[:-1], counts)
        qlen = np.repeat(lengths, counts)
    else:
        pieces, qat, qlen, tags, at = [], [], [], [], 0
        for q, hits in zip(codes, results):
            strands = {}                  # the query's strands: where each lies in pieces
            signs = [None] * len(hits) if hits.strands is None else hits.strands.tolist()
            for sign in signs:
                if sign not in strands:
                    strands[sign] = at
                    pieces.append(strand_query(q, "-", scoring.alphabet) if sign == -1
                                  else np.asarray(q, np.uint8))
                    at += len(q)
                qat.append(strands[sign])
                qlen.append(len(q))
                tags.append(None if sign is None else STRAND_NAMES[sign])
    targets = np.concatenate([h.targets for h in results]).astype(np.int64)
    ends = np.stack([np.concatenate([getattr(h, k) for h in results]).astype(np.int64)
                     for k in ("scores", "query_ends", "target_ends")], axis=1)
    uniq, which = np.unique(targets, return_inverse=True)
    stored = db.targets                       # each target's codes sliced once, in one pass
    sorted_at = db.rank[uniq]
    lo, hi = stored.offsets[sorted_at].tolist(), stored.offsets[sorted_at + 1].tolist()
    seqs = [stored.codes[a:b] for a, b in zip(lo, hi)]
    tlen = np.fromiter((len(t) for t in seqs), np.int64, len(seqs))
    traced = align_pairs_table(np.concatenate(pieces), qat, qlen,
                               np.concatenate(seqs), running_sums(tlen)[:-1][which],
                               tlen[which], scoring, algorithm, engine=engine, threads=threads,
                               ends=ends)
    alignments = (list(traced) if tags is None else
                  [a if tag is None else replace(a, strand=tag) for a, tag in zip(traced, tags)])
    cuts = running_sums(counts).tolist()
    return [replace(hits, alignments=alignments[start:stop])
            for hits, start, stop in zip(results, cuts, cuts[1:])]


def _progress(total: int, enabled: bool):
    """A progress bar over ``total`` queries on stderr (``update(n)``), or a silent one."""
    if not enabled:
        return contextlib.nullcontext(_Silent())
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="query", desc="search", leave=False)


class _Silent:
    def update(self, n: int = 1) -> None:
        pass
