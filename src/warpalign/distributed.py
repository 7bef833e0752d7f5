"""``search`` over a Dask cluster: the database split into shards by cost, merged exactly.

The client plans shards (:func:`shard_plan`: sets of sorted-order index ranges balanced by
residues, longest first, as paper 003 balances GPUs by total length) and submits one task
per shard carrying only (database path, shard ranges, encoded queries, scoring, options).
Each worker opens the database from that path (memory-mapped; it must be the same
database on every host, which a fingerprint of its checksums enforces), checks every byte
of its files against those checksums the first time (and again whenever a file changes on
disk), searches its shard with its own backend and returns, per query, the shard's top-k
hits by (score descending, original database index ascending). The client merges those
with :meth:`Hits.merge`.

Why the merge is exact: a hit among the global top-k under the total order (score desc,
index asc) has fewer than k hits before it in the whole database, so fewer than k before
it in its own shard, so it is among its shard's top-k; the merge sorts the union of the
shards' top-k by the same total order and keeps k. Database indices are unique, so no
ordering is left to chance. Tasks are pure functions of their arguments: a shard whose
worker dies is recomputed on another worker to the same hits, and every shard's result is
merged exactly once.

``mode="full"``: the shards scan with end coordinates, and once merged the top-k hits of
each query (k tracebacks per query, as one process does; tracing on the shards would trace
k per shard and throw all but k away) go back to the workers in a second round, one task
per worker, each a run of consecutive queries of about equal cells, which trace them
(:func:`trace_hits`, on the worker's GPU where it has one). The client needs no GPU, and
the tracing runs on every worker at once.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import itertools
import json
import logging
import os
import pickle
import signal
import socket
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from ._backends import ALGORITHMS, BACKENDS, TargetSet, check_choice
from ._backends.registry import REGISTRY, Registry
from .database import ARRAYS, META, Database
from .errors import BackendUnavailable, DatabaseError, ScoringError
from .io import load_sequences, source_label
from .offsets import even_runs
from .results import Hits
from .scoring import Scoring, check_input
from .search import METHODS, MODES, _batches, _top_hits, _with_alignments
from .strands import Strand, merge_strand_results, query_strands, strand_query

__all__ = ["Shard", "ShardReport", "database_fingerprint", "held_futures",
           "interrupt_deferred", "local_cluster", "search", "search_shard", "shard_plan",
           "trace_hits"]

logger = logging.getLogger("warpalign.distributed")

#: Shard plans cut the sorted order into about this many pieces per shard before balancing.
PIECES_PER_SHARD = 64
#: Prepared shards (e.g. uploaded to a GPU) each worker keeps for later searches.
_HANDLE_CACHE_SIZE = 2
#: Seconds to wait for the first worker (or for ``workers`` of them) to join.
WORKER_TIMEOUT = 120


@dataclass(frozen=True)
class Shard:
    """A part of a database: ``ranges`` are (start, stop) slices of its sorted order."""

    index: int
    ranges: tuple[tuple[int, int], ...]
    sequences: int
    residues: int

    def positions(self) -> np.ndarray:
        """int64 sorted-order positions of the shard's sequences, range by range."""
        if not self.ranges:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in self.ranges])


@dataclass(frozen=True)
class ShardReport:
    """What a worker did with one shard (logged by the client at INFO level)."""

    shard: int
    worker: str
    backend: str
    fallback: str | None   # why a worker asked for "auto" searched on the CPU, if it did
    sequences: int
    residues: int
    seconds: float


def shard_plan(db: Database, n: int) -> list[Shard]:
    """Split ``db`` into at most ``n`` shards of nearly equal residues (deterministic).

    The sorted order is cut into about ``n * PIECES_PER_SHARD`` consecutive pieces of
    similar residue counts (:meth:`Database.chunks`; a sequence is never split), and the
    pieces are dealt longest first, each to the shard with the fewest residues so far
    (ties: the lower shard index). Shards list their ranges in sorted order, adjacent
    ranges joined; empty shards are dropped, so a database of s sequences has at most s.

    Example:
        >>> db = Database.from_sequences(["W" * n for n in (5, 1, 4, 2, 3, 3)])
        >>> [(s.ranges, s.residues) for s in shard_plan(db, 2)]
        [(((0, 1), (3, 4), (5, 6)), 9), (((1, 3), (4, 5)), 9)]
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"invalid number of shards: {n!r}; expected an integer >= 1")
    offsets = np.asarray(db.targets.offsets, dtype=np.int64)
    total = int(offsets[-1])
    piece = max(1, -(-total // (int(n) * PIECES_PER_SHARD)))
    pieces = list(db.chunks(piece))
    cost = [int(offsets[b] - offsets[a]) for a, b in pieces]
    loads = [(0, i) for i in range(int(n))]
    assigned: list[list[tuple[int, int]]] = [[] for _ in range(int(n))]
    for p in sorted(range(len(pieces)), key=lambda p: (-cost[p], pieces[p][0])):
        load, i = heapq.heappop(loads)
        assigned[i].append(pieces[p])
        heapq.heappush(loads, (load + cost[p], i))
    shards = []
    for ranges in assigned:
        if not ranges:
            continue
        joined: list[list[int]] = []
        for a, b in sorted(ranges):
            if joined and joined[-1][1] == a:
                joined[-1][1] = b
            else:
                joined.append([a, b])
        spans = tuple((a, b) for a, b in joined)
        shards.append(Shard(len(shards), spans, sum(b - a for a, b in spans),
                            sum(int(offsets[b] - offsets[a]) for a, b in spans)))
    return shards


def search(queries: Any, database: Any, scoring: Scoring, *, client: Any = None,
           scheduler: str | None = None, workers: int | None = None,
           shards: int | None = None, top_k: int = 10,
           mode: Literal["score", "end", "full"] = "score",
           algorithm: Literal["local", "global", "semiglobal"] = "local",
           backend: str = "auto", method: Literal["auto", "warp"] = "auto",
           evalue: float | None = None, strand: Strand = "both",
           progress: bool = False, timeout: float = WORKER_TIMEOUT) -> list[Hits]:
    """:func:`warpalign.search` over a Dask cluster; the same hits in the same order.

    Which cluster: ``client`` (a ``distributed.Client``), else ``scheduler`` (an address
    such as ``"tcp://host:8786"``), else a local cluster of ``workers`` processes started
    for this call (one per GPU where GPUs are visible, see :func:`local_cluster`), else the
    current default client. With ``client`` or ``scheduler``, ``workers`` waits until that
    many workers have joined.

    Args:
        queries: as for :func:`warpalign.search` (encoded here, sent with each shard).
        database: the path of a database built by ``Database.build`` (or that Database);
            every worker must read the same database at that path (a shared file system).
        scoring: the scoring scheme; its alphabet must be the database's.
        client, scheduler, workers: the cluster, as above.
        shards: number of shards (default: the number of workers).
        top_k, mode, algorithm, method, strand: as for :func:`warpalign.search` (each
            strand of a nucleotide query is a query of its own on the shards).
        backend: each worker's backend; "auto" takes the worker's GPU when one answers and
            otherwise the CPU, logging why (``warpalign.distributed`` logger, WARNING).
        evalue: as for :func:`warpalign.search`; statistics are applied by the client
            after the merge, over the whole database's search space.
        timeout: seconds to wait for the scheduler to answer and for ``workers`` to join.
        progress: show a progress bar (tqdm, on stderr) over the shards as they finish.

    Returns:
        One :class:`Hits` per query, in query order, best first, ties by database order.

    Raises:
        ValueError: an invalid option, or an in-memory database.
        DatabaseError: a worker found another database (or none) at the path.
    """
    check_choice("mode", mode, MODES)
    check_choice("algorithm", algorithm, ALGORITHMS)
    check_choice("backend", backend, BACKENDS)
    check_choice("method", method, METHODS)
    strands = query_strands(strand, scoring.alphabet)
    if evalue is not None:
        from .stats import check_statistics
        check_statistics(scoring, algorithm=algorithm, evalue=evalue)  # fail before searching
    for name, value, allow_none in (("top_k", top_k, False), ("workers", workers, True),
                                    ("shards", shards, True)):
        if value is None and allow_none:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"invalid {name}: {value!r}; expected an integer >= 1")
    if client is not None and scheduler is not None:
        raise ValueError("give either client or scheduler, not both")
    db = _open_shared(database)
    if db.alphabet != scoring.alphabet:
        raise ScoringError(f"the scoring's alphabet ({scoring.alphabet.name}) is not the "
                           f"database's ({db.alphabet.name})")
    names, codes = load_sequences(queries, scoring.alphabet, default_name="query")
    check_input(scoring, codes, source_label(queries, "queries"))
    names = names * len(strands)   # every query once per strand: query i on strands[k] at k*n+i
    runs = [strand_query(q, s, scoring.alphabet) for s in strands for q in codes]
    connection = _connect(client, scheduler, workers, timeout)
    with connection as dask_client:
        info = connection.info          # one round trip to the scheduler per search
        plan = shard_plan(db, shards or len(info["workers"]))
        results = _run(dask_client, info, plan, db, names, runs, scoring, top_k, mode,
                       algorithm, backend, method, hold=connection.lasting,
                       progress=progress)
        results = merge_strand_results(results, strands, top_k)
        if mode == "full":      # the merged top-k traced on the workers
            results = _trace(dask_client, info, db, [replace(h, mode="full") for h in results],
                             codes, scoring, algorithm, backend)
    if evalue is not None:
        from .stats import apply_statistics
        results = apply_statistics(results, db, scoring, evalue=evalue, algorithm=algorithm)
    return results


def local_cluster(n_workers: int, *, devices: Sequence[str] | None = None):
    """A local Dask cluster of ``n_workers`` single-threaded worker processes.

    Where GPUs are visible (``devices``, default: the entries of ``CUDA_VISIBLE_DEVICES``,
    else the devices CuPy counts), worker i gets ``CUDA_VISIBLE_DEVICES=devices[i % len]``
    and the resource ``GPU=1``, so each worker drives one GPU. Close it when done.

    The workers get Dask's ``distributed.nanny.pre-spawn-environ`` (``OMP_NUM_THREADS=1``,
    ...), which Dask's nannies set in their own process, this one: its values are put back
    once the workers have started (a nanny restarting a worker sets them again).
    """
    import dask
    if devices is None:
        devices = _visible_devices()
    spawn = [*dask.config.get("distributed.nanny.pre-spawn-environ", {}), "PYTHONHASHSEED"]
    with _environ_kept(spawn):
        return _new_cluster(n_workers, devices)


@contextlib.contextmanager
def _environ_kept(names: list[str]) -> Iterator[None]:
    """This process's values of ``names`` as they were before the block (unset ones unset)."""
    before = {name: os.environ.get(name) for name in names}
    try:
        yield
    finally:
        os.environ.update({name: value for name, value in before.items() if value is not None})
        for name in [name for name, value in before.items() if value is None]:
            os.environ.pop(name, None)


def _new_cluster(n_workers: int, devices: Sequence[str]):
    """:func:`local_cluster`'s cluster: a LocalCluster on the CPU, else a SpecCluster of one
    nanny per worker, each seeing its own GPU."""
    from distributed import LocalCluster, Nanny, Scheduler, SpecCluster

    # No dashboard; the scheduler's HTTP endpoints on a free port, never a warning about 8787.
    # Dask logs a failed task with its traceback; the search re-raises its error anyway.
    quiet = logging.CRITICAL
    if not devices:
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                            dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                            silence_logs=quiet)
    specs = {f"warpalign-{i}": {"cls": Nanny, "options": {
        "nthreads": 1, "resources": {"GPU": 1}, "silence_logs": quiet,
        "env": {"CUDA_VISIBLE_DEVICES": str(devices[i % len(devices)])}}}
        for i in range(n_workers)}
    # silence_logs: the scheduler's INFO lines (its start, its address, a note about
    # jupyter-server-proxy) on stderr otherwise, as the CPU cluster's path never shows
    return SpecCluster(workers=specs, scheduler={"cls": Scheduler, "options": {
        "dashboard": False, "dashboard_address": ":0", "host": "127.0.0.1"}},
        silence_logs=quiet)


# --- client side -----------------------------------------------------------------------

def _open_shared(database: Any) -> Database:
    if isinstance(database, Database):
        if database.path is None:
            raise ValueError("a distributed search needs an on-disk database (Database.build) "
                             "at a path every worker can read; got an in-memory one")
        return database
    if isinstance(database, (str, bytes)) or hasattr(database, "__fspath__"):
        return Database.open(os.path.abspath(os.fsdecode(database)), verify=False)
    raise ValueError(f"invalid database: {type(database).__name__}; expected the path of a "
                     "database built by Database.build")


def database_fingerprint(db: Database) -> str:
    """Names the database's contents (its files' sizes and checksums), not its path: a
    worker given another database under the path refuses it (:func:`search_shard`)."""
    files = json.dumps(db.meta.get("files", {}), sort_keys=True).encode()
    return hashlib.blake2b(files, digest_size=16).hexdigest()


class _connect:
    """The Dask client to use, closing whatever this call started."""

    def __init__(self, client, scheduler, workers, timeout=WORKER_TIMEOUT):
        self._given, self._scheduler, self._workers = client, scheduler, workers
        self._timeout = timeout
        self._owned: list = []
        self.info: dict = {}     # the scheduler's view of its workers, fetched on entry

    @property
    def lasting(self) -> bool:
        """Whether the client outlives this call (given, or the default client)."""
        return not self._owned

    def __enter__(self):
        try:
            from distributed import Client, get_client
        except ImportError as exc:
            raise BackendUnavailable(f"a distributed search needs Dask ({exc}): "
                                     "pip install 'warpalign[dask]'") from None
        client = self._given
        try:
            if client is None and self._scheduler is not None:
                client = Client(self._scheduler, timeout=self._timeout)
                self._owned.append(client)
            elif client is None and self._workers is not None:
                with interrupt_deferred():
                    cluster = local_cluster(self._workers)
                    self._owned.append(cluster)
                    client = Client(cluster)
                    self._owned.insert(0, client)
            elif client is None:
                try:
                    client = get_client()
                except ValueError:
                    raise ValueError("no Dask cluster: give client=, scheduler= or "
                                     "workers=") from None
            self.info = client.scheduler_info()
            if len(self.info["workers"]) < (self._workers or 1):
                client.wait_for_workers(self._workers or 1, timeout=self._timeout)
                self.info = client.scheduler_info()
        except BaseException:
            self.__exit__()
            raise
        return client

    def __exit__(self, *exc):
        # Closing a client that a Ctrl-C tore from its gather ends the gather's tasks,
        # which asyncio reports as "never retrieved": nothing the user needs to read.
        # Quiet while closing; the report of such a task collected later (at exit) is
        # dropped by _EndedGather
        asyncio_log = logging.getLogger("asyncio")
        level = asyncio_log.level
        if exc and exc[0] is KeyboardInterrupt and self._owned:
            asyncio_log.setLevel(logging.CRITICAL)
        try:
            for thing in self._owned:
                thing.close()
        finally:
            asyncio_log.setLevel(level)
        return False


class _EndedGather(logging.Filter):
    """Drops asyncio's report of a task whose exception is Dask's ``AllExit`` (a gather
    ended by closing its client, as after a Ctrl-C: the task may be collected, and
    reported "never retrieved", at any later moment, even at exit); every other record
    passes. On asyncio's logger from this module's import on."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (type(exc).__name__ == "AllExit"
                    and type(exc).__module__.startswith("distributed"))


logging.getLogger("asyncio").addFilter(_EndedGather())


@contextlib.contextmanager
def interrupt_deferred() -> Iterator[None]:
    """Hold a first Ctrl-C back until the block is done, then raise it (a second one is
    raised at once): Dask cannot close a local cluster cut short while it starts (it
    reports that at exit), but closes one that has started. Only in the main thread, and
    only over Python's own handler."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    caught = []

    def hold(signum, frame):
        if caught:
            raise KeyboardInterrupt
        caught.append(signum)

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if caught:
        raise KeyboardInterrupt


#: The futures of a long-lived client's last search, by id(client): released once its next
#: search's tasks have gone out. A client sends its messages to the scheduler in batches
#: at most every 10 ms, so releases sent at the end of a search held back the next
#: search's submission by up to 10 ms (docs/distributed.md, "Scaling").
_held: dict[int, list] = {}
_held_lock = threading.Lock()


def held_futures(client) -> list:
    """The futures of ``client``'s last search that are held until its next search has
    gone out (empty where none are: an owned client, or none searched yet)."""
    with _held_lock:
        return list(_held.get(id(client), []))


def _run(client, info, plan, db, names, codes, scoring, top_k, mode, algorithm, backend,
         method, *, hold=False, progress=False):
    """Submit one task per shard (in one message) and gather them. ``hold``: the client
    outlives this search, so its futures are released when its next search has gone out
    (see :data:`_held`) instead of now."""
    path = os.fspath(db.path)
    fingerprint = database_fingerprint(db)
    scan_mode = "end" if mode == "full" else mode
    resources = _resources(info, backend)
    # a fresh key per search: a held result of an identical earlier search is never reused
    token = uuid.uuid4().hex
    n = len(plan)
    queries = _packed(names, codes)
    futures = client.map(_shard_task, [path] * n, [fingerprint] * n, plan, [queries] * n,
                         [scoring] * n, [top_k] * n, [scan_mode] * n,
                         [algorithm] * n, [backend] * n, [method] * n,
                         key=[f"warpalign-shard-{shard.index}-{token}" for shard in plan],
                         resources=resources)
    with _held_lock:
        earlier = _held.pop(id(client), [])
    for future in earlier:
        future.release()
    try:
        if progress:   # the bar moves as shards finish; gather then collects them
            from distributed import as_completed
            from tqdm.auto import tqdm
            for _ in tqdm(as_completed(futures), total=n, unit="shard", desc="search",
                          leave=False):
                pass
        parts = [part for (part,) in map(_unpacked, client.gather(futures))]
    except BaseException:
        for future in futures:
            future.release()
        raise
    if hold:
        with _held_lock:
            closed = [k for k, held in _held.items()
                      if held and held[0].client.status == "closed"]
            for key in closed:        # (a closed client's futures are gone with it)
                del _held[key]
            _held[id(client)] = futures
    else:
        for future in futures:
            future.release()
    done = sorted(report.shard for _, report in parts)
    if done != [s.index for s in plan] or sum(r.residues for _, r in parts) != db.residues:
        raise RuntimeError(f"internal error: shards {done} came back for a plan of {len(plan)}")
    for _, report in parts:
        logger.info("shard %d (%d sequences, %d residues): worker %s, backend %s%s, %.3f s",
                    report.shard, report.sequences, report.residues, report.worker,
                    report.backend, f" ({report.fallback})" if report.fallback else "",
                    report.seconds)
    per_query = zip(*(hits for hits, _ in parts))
    return [first.merge(*rest, top_k=top_k) for first, *rest in per_query]


def _resources(info: dict, backend: str) -> dict | None:
    """What each task asks of its worker: one GPU where every worker offers one (a local
    cluster's GPU workers) and the backend may use it, else nothing."""
    workers = info["workers"].values()
    gpu_everywhere = bool(workers) and all(w.get("resources", {}).get("GPU") for w in workers)
    return {"GPU": 1} if gpu_everywhere and backend != "cpu" else None


def _trace(client, info, db, results, codes, scoring, algorithm, backend) -> list[Hits]:
    """The second round of mode full: the merged hits (``results``, one per query in query
    order, with their end cells; ``codes``: the queries as given) as one task per worker,
    each a run of consecutive queries of about equal cells (query length x target length
    over their hits), traced by :func:`trace_hits`; the results in query order."""
    lengths = np.diff(np.asarray(db.targets.offsets, dtype=np.int64))
    cells = np.array([len(q) * int(lengths[db.rank[np.asarray(h.targets, np.int64)]].sum())
                      for q, h in zip(codes, results)], dtype=np.float64)
    if not cells.any():         # nothing to trace: no hits, or only empty pairs
        return _with_alignments(results, codes, db, scoring, algorithm, "cpu", None)
    groups = even_runs(cells, max(1, len(info["workers"])))
    resources = _resources(info, backend)
    path, fingerprint, token = os.fspath(db.path), database_fingerprint(db), uuid.uuid4().hex
    futures = [client.submit(_trace_task, path, fingerprint, _packed(results[a:b], codes[a:b]),
                             scoring, algorithm, backend, resources=resources,
                             key=f"warpalign-trace-{k}-{token}")
               for k, (a, b) in enumerate(groups)]
    try:
        parts = client.gather(futures)
    finally:
        for future in futures:
            future.release()
    done = [h for (part,) in map(_unpacked, parts) for h in part]
    if len(done) != len(results):
        raise RuntimeError(f"internal error: {len(done)} queries came back of {len(results)}")
    return done


def _packed(*values) -> bytes:
    """``values`` pickled into one bytes object, a task argument or result Dask sends as it
    is: it walks every list, tuple, dict and dataclass among a task's arguments looking
    for futures, and the 500 queries' names and codes of each shard's task took it ~40 ms
    a search, the merged Hits of 500 queries ~100 ms, where one bytes object takes ~12
    (2-core machine; session 34 call F saw the trace task start 110 ms after its submit);
    four shard results of 500 Hits each came back in 0.17-0.21 s as objects, 0.09-0.11 as
    bytes (same machine, the tasks' own work included); on 4 x H200 (session 35 call D) the
    results as bytes gained nothing beyond the spread (Dask 2.70 s against 2.63)."""
    return pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL)


def _unpacked(value: bytes) -> tuple:
    """The values :func:`_packed` packed into ``value``."""
    return pickle.loads(value)


# --- worker side -----------------------------------------------------------------------

_lock = threading.Lock()
_handles: OrderedDict = OrderedDict()
#: Databases this worker has verified, by (resolved path, fingerprint): the files' stamps
#: when verified and the open Database. Each key has its own lock (in ``_verifying``), so
#: concurrent tasks verify a database once while other databases stay available.
_verified: dict[tuple[str, str], tuple[tuple, Database]] = {}
_verifying: dict[tuple[str, str], threading.Lock] = {}
_verified_lock = threading.Lock()
_fallbacks_logged: set[str] = set()


def _worker_name() -> str:
    try:
        from distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"


def _engine(backend: str, worker: str, method: str, registry: Registry):
    """The engine for ``backend`` and ``method`` on this worker and, if "auto" fell back,
    why."""
    engine_for = registry.engine_for
    if backend != "auto" or os.environ.get("WARPALIGN_BACKEND"):
        return engine_for("distributed", backend, method), None
    try:
        return engine_for("distributed", "cuda", method), None
    except BackendUnavailable as exc:
        reason = str(exc)
    if reason not in _fallbacks_logged:  # once per worker process and reason
        _fallbacks_logged.add(reason)
        logger.warning("warpalign: worker %s has no GPU (%s); searching on the CPU",
                       worker, reason)
    return engine_for("distributed", "cpu", method), f"no GPU: {reason}"


def _stamps(path: str) -> tuple:
    """(size, mtime, inode, device) of the database's files: a file rewritten or replaced
    since its verification has other stamps."""
    stamps = []
    for name in (META, *(f"{key}.npy" for key in ARRAYS)):
        try:
            st = os.stat(os.path.join(path, name))
        except OSError:
            stamps.append(None)     # missing: Database.open says so
        else:
            stamps.append((st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev))
    return tuple(stamps)


def _shard_database(path: str, fingerprint: str) -> Database:
    """The database at ``path``, checked to be the client's (``fingerprint``) and its files
    verified against their checksums: once per worker process, and again when a file's
    stamps change. Raises DatabaseError on any mismatch."""
    key = (os.path.realpath(path), fingerprint)
    with _verified_lock:
        gate = _verifying.setdefault(key, threading.Lock())
    with gate:
        stamps = _stamps(key[0])
        cached = _verified.get(key)
        if cached is not None and cached[0] == stamps:
            return cached[1]
        where = f"on worker {_worker_name()}"
        try:
            same = database_fingerprint(Database.open(key[0], verify=False)) == fingerprint
            db = Database.open(key[0], verify=True) if same else None  # reads every byte
        except DatabaseError as exc:
            raise DatabaseError(f"{exc}; found {where}") from None
        if db is None:
            raise DatabaseError(f"{path}: {where} this is another database than the "
                                "client's; the path must name the same database on every host")
        if _stamps(key[0]) != stamps:
            raise DatabaseError(f"{path}: changed {where} while it was being verified")
        _verified[key] = (stamps, db)
        return db


def _shard_targets(db: Database, shard: Shard) -> tuple[TargetSet, np.ndarray]:
    """The shard's sequences as one compact TargetSet, and their original indices."""
    targets = db.targets
    offsets = np.asarray(targets.offsets, dtype=np.int64)
    codes = np.concatenate([targets.codes[offsets[a]:offsets[b]] for a, b in shard.ranges])
    local = np.concatenate([offsets[a:b] - offsets[a] for a, b in shard.ranges])
    sizes = [int(offsets[b] - offsets[a]) for a, b in shard.ranges]
    local += np.repeat(np.cumsum([0, *sizes[:-1]]), [b - a for a, b in shard.ranges])
    local = np.append(local, len(codes)).astype(np.int64)
    order = np.asarray(db.order, dtype=np.int64)[shard.positions()]
    return TargetSet(np.ascontiguousarray(codes, dtype=np.uint8), local), order


def search_shard(path: str, fingerprint: str, shard: Shard, names: list[str],
                  codes: list[np.ndarray], scoring: Scoring, top_k: int, mode: str,
                  algorithm: str, backend: str, method: str = "auto", *,
                  registry: Registry = REGISTRY) -> tuple[list[Hits], ShardReport]:
    """The task each worker runs (usable in-process too): search every query against one
    shard of the database at ``path`` (whose :func:`database_fingerprint` must be
    ``fingerprint``): per query the shard's top-k by (score desc, original index asc),
    with original database indices, and the shard's :class:`ShardReport`. ``registry``:
    where the worker's engine comes from (the process's; a test's own)."""
    t0 = time.perf_counter()
    worker = _worker_name()
    engine, fallback = _engine(backend, worker, method, registry)
    db = _shard_database(path, fingerprint)
    with _lock:
        key = (path, fingerprint, shard.ranges, engine.name)
        if key in _handles:
            _handles.move_to_end(key)
        else:
            targets, order = _shard_targets(db, shard)
            _handles[key] = (engine.prepare(targets), order)
            while len(_handles) > _HANDLE_CACHE_SIZE:
                _handles.popitem(last=False)
        handle, order = _handles[key]
    # The single-process flow (a CUDA backend keeps top-k candidates on the device).
    with _batches(engine, codes, handle, scoring, algorithm, mode, top_k, method) as lists:
        hits = _top_hits([(qname, len(q), batch, len(q) * shard.residues) for qname, q, batch
                          in zip(names, codes, itertools.chain.from_iterable(lists))],
                         order, db, top_k, mode)
    return hits, ShardReport(shard.index, worker, engine.name, fallback, shard.sequences,
                             shard.residues, time.perf_counter() - t0)


def _shard_task(path, fingerprint, shard, queries: bytes, *options) -> bytes:
    """:func:`search_shard` with the queries' names and codes as :func:`_packed` sent them,
    its result packed the same way."""
    names, codes = _unpacked(queries)
    return _packed(search_shard(path, fingerprint, shard, names, codes, *options))


def _trace_task(path, fingerprint, hits: bytes, *options) -> bytes:
    """:func:`trace_hits` with the hits and queries as :func:`_packed` sent them, its
    result packed the same way."""
    results, codes = _unpacked(hits)
    return _packed(trace_hits(path, fingerprint, results, codes, *options))


def trace_hits(path: str, fingerprint: str, hits: list[Hits], codes: list[np.ndarray],
               scoring: Scoring, algorithm: str, backend: str, *,
               registry: Registry = REGISTRY) -> list[Hits]:
    """The second-round task of mode full (usable in-process too): ``hits`` (merged, one
    per query, with their end cells; ``codes``: those queries as given) with their
    alignments, traced with the database at ``path`` (whose :func:`database_fingerprint`
    must be ``fingerprint``) by the traceback engine of this worker's engine for
    ``backend`` (its GPU where "auto" finds one), each path re-scored to its hit."""
    engine, _ = _engine(backend, _worker_name(), "auto", registry)
    db = _shard_database(path, fingerprint)
    return _with_alignments(hits, codes, db, scoring, algorithm,
                            "cuda" if engine.name == "cuda" else "cpu", None)


def _visible_devices() -> list[str]:
    env = os.environ.get("CUDA_VISIBLE_DEVICES")
    if env is not None:
        return [d.strip() for d in env.split(",") if d.strip() and d.strip() != "-1"]
    try:
        import cupy
        return [str(i) for i in range(cupy.cuda.runtime.getDeviceCount())]
    except (ImportError, RuntimeError):  # no CuPy, no driver, no device: a CPU cluster
        return []
