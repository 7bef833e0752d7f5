"""The sequence database: encoded once, sorted by length, memory-mapped when opened.

On disk a database is a directory::

    codes.npy         uint8   every sequence's codes, concatenated in sorted order
    offsets.npy       int64   n + 1 boundaries into codes, sorted order
    order.npy         int64   sorted position -> original (input) index
    names.npy         uint8   UTF-8 names, concatenated, original order
    name_offsets.npy  int64   n + 1 boundaries into names
    meta.json         format version, alphabet, counts, length buckets, and the size
                      and BLAKE2b checksum of every array file (:mod:`.checksum`)

Sequences are sorted by length ascending (input order breaks ties), so each length
bucket is one contiguous slice and a chunk of similar lengths is one slice too. A build
writes into a temporary directory beside the target and renames it at the end: a failed
build leaves nothing behind. A build holds a lock (``.NAME.lock`` beside the target, an
``flock``) from start to end, so a second build of the same path fails at once instead of
racing it; it names its temporary directories after its process (host, boot, pid, start
time), so the next build can prove a killed one's leftovers dead and remove them
(:mod:`.buildlock`). :meth:`Database.open` checks sizes always and checksums
when ``verify=True``; any mismatch is a :class:`~warpalign.errors.DatabaseError` naming
the file and what is wrong.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ._backends import TargetSet, resolve_threads
from . import checksum
from .buildlock import _build_lock, _remove_stale, owner_tag
from .alphabet import ALPHABETS, NUCLEOTIDE_RULE, Alphabet, get_alphabet, looks_nucleotide
from .errors import AlphabetMismatch, DatabaseError, InputError
from .io import Format, collect, encode_many, is_path, source_label
from .offsets import running_sums

__all__ = ["BUCKET_BOUNDARIES", "FORMAT_VERSION", "Database"]

FORMAT_NAME = "warpalign-database"
FORMAT_VERSION = 1
META = "meta.json"
ARRAYS = ("codes", "offsets", "order", "names", "name_offsets")
_DTYPES = {"codes": np.uint8, "offsets": np.int64, "order": np.int64, "names": np.uint8,
           "name_offsets": np.int64}
#: Upper length bounds of the length buckets (a last bucket holds anything longer).
BUCKET_BOUNDARIES = (64, 128, 192, 256, 320, 384, 448, 512, 640, 768, 1024, 1536, 2048,
                     4096, 8192, 16384, 32768, 65536)


_checksums: collections.Counter = collections.Counter()
_checksums_lock = threading.Lock()


def _blake2b(path: Path, chunk: int | None = checksum.CHUNK) -> str:
    """The file's checksum (:mod:`.checksum`: chunked of ``chunk`` bytes, hashed on
    several threads, or whole with ``chunk`` None), counted."""
    digest = checksum.file_checksum(path, chunk, threads=min(8, os.cpu_count() or 1))
    with _checksums_lock:
        _checksums[str(path)] += 1
    return digest


def checksums_computed() -> dict[str, int]:
    """How often this process computed each file's BLAKE2b checksum, by path (builds and
    verifying opens): a diagnostic, and how tests see that an unchanged database opened
    again, or by many threads at once, is not read again."""
    with _checksums_lock:
        return dict(_checksums)


def _bucket_slices(sorted_lengths: np.ndarray,
                   boundaries: tuple[int, ...] | list[int]) -> list[tuple[int, int, int]]:
    """Non-empty (max_length, start, stop) slices; the last bucket's max is the true max."""
    bounds = sorted(int(b) for b in boundaries)
    cuts = np.searchsorted(sorted_lengths, bounds, side="right").tolist()
    n = len(sorted_lengths)
    slices, start = [], 0
    for bound, stop in zip(bounds, cuts):
        if stop > start:
            slices.append((bound, start, stop))
            start = stop
    if start < n:
        slices.append((int(sorted_lengths[-1]), start, n))
    return slices


class Database:
    """Encoded sequences, sorted by length into buckets; on disk or in memory.

    Indices ``i`` in :meth:`name`, :meth:`sequence`, :attr:`names` and :attr:`lengths`
    are original (input) indices. :attr:`targets`, :attr:`buckets` and :meth:`chunks`
    speak of the sorted order; :attr:`order` maps a sorted position to its original
    index.

    Example:
        >>> db = Database.from_sequences(["MKVLA", "WW", "MKV"], names=["a", "b", "c"])
        >>> len(db), db.names, db.lengths.tolist()
        (3, ['a', 'b', 'c'], [5, 2, 3])
        >>> db.order.tolist(), db.alphabet.decode(db.sequence(0))
        ([1, 2, 0], 'MKVLA')
    """

    def __init__(self, codes: np.ndarray, offsets: np.ndarray, order: np.ndarray,
                 names_blob: np.ndarray, name_offsets: np.ndarray, alphabet: Alphabet,
                 path: Path | None = None, meta: dict | None = None,
                 codes_at: tuple[int, tuple[int, int]] | None = None):
        self._codes = codes
        # opened ones: the byte offset of codes[0] in codes.npy, its (st_dev, st_ino)
        self._codes_at = codes_at
        self._offsets = offsets
        self._order = order
        self._names_blob = names_blob
        self._name_offsets = name_offsets
        self._alphabet = alphabet
        self._path = path
        self._meta = meta
        self._names: list[str] | None = None
        self._lengths: np.ndarray | None = None
        self._rank: np.ndarray | None = None

    # --- construction ----------------------------------------------------------------

    @classmethod
    def from_sequences(cls, seqs: Any, names: list[str] | None = None, *,
                       alphabet: str | Alphabet | None = None,
                       default_name: str = "seq") -> Database:
        """An in-memory database (nothing on disk), e.g. from the strings given to search().

        Args:
            seqs: anything :func:`warpalign.io.load_sequences` accepts (sequences, records,
                a path).
            names: one name per sequence (default: record ids, else ``<default_name><i>``).
            alphabet: "protein", "dna", "bytes" or an Alphabet; by default protein, and
                nucleotide input is then an error (as for :meth:`build`).

        Raises:
            AlphabetMismatch: no ``alphabet`` was given and the input is nucleotide.
        """
        alpha = get_alphabet(alphabet or "protein")
        got_names, raw, label = collect(seqs, alpha, default_name=default_name)
        if names is not None:
            names = [str(n) for n in names]
            if len(names) != len(raw):
                raise ValueError(f"got {len(names)} names for {len(raw)} sequences")
            got_names = names
        return cls._from_raw(got_names, raw, alpha, label, check=alphabet is None)

    @classmethod
    def _from_raw(cls, names: list[str], raw: list[Any], alpha: Alphabet,
                  label: str | None, check: bool = False) -> Database:
        """The database of ``raw`` encoded in ``alpha``; with ``check`` (``alpha`` is the
        default protein, nobody chose it) nucleotide input is an AlphabetMismatch."""
        codes, lengths, order = encode_many(names, raw, alpha, label, sort=True)
        if check and looks_nucleotide([codes], alpha):
            source = label or "input"
            problem = f"nucleotide sequences ({NUCLEOTIDE_RULE}) for a protein database"
            raise AlphabetMismatch(f"{source}: {problem}; pass alphabet='dna' (or "
                                   "alphabet='protein' to store them as protein)",
                                   source=source, problem=problem)
        offsets = running_sums(lengths[order])
        encoded = [n.encode("utf-8", "surrogateescape") for n in names]
        name_offsets = running_sums([len(e) for e in encoded])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        for array in (codes, offsets, order, name_offsets):
            array.flags.writeable = False
        db = cls(codes, offsets, order, blob, name_offsets, alpha)
        db._names = list(names)
        return db

    @classmethod
    def build(cls, source: Any, path: str | os.PathLike, *,
              alphabet: str | Alphabet | None = None,
              progress: bool = False, overwrite: bool = False,
              format: Format | None = None, memory: int | None = None,
              threads: int | None = None) -> Database:
        """Encode sequences into an on-disk database at ``path`` (a directory) and open it.

        A file (a path or an open file) is read as a stream and sorted on disk in bounded
        memory (:mod:`warpalign.dbbuild`: at most ``memory`` bytes of residues and their
        indices at once, plus about 40 bytes per sequence), so its size is not bounded
        by host memory; sequences given in memory are encoded in memory.

        Args:
            source: a FASTA/FASTQ path (plain or gzip; a ``str`` is always a path here), an
                open file, or an iterable of sequences / SeqRecords.
            path: the database directory to create.
            alphabet: "protein", "dna", "bytes" or an Alphabet, stored in ``meta.json``
                and used by :meth:`open`. By default protein, and nucleotide input
                (:func:`~warpalign.alphabet.looks_nucleotide`) is then an error: a protein
                database of DNA is never built unless ``alphabet="protein"`` asks for it.
            progress: show a progress bar (tqdm) while reading.
            overwrite: replace an existing database at ``path``.
            format: "fasta" or "fastq"; by default detected from the first record.
            memory: host bytes a build from a file holds at once (default
                :data:`warpalign.dbbuild.MEMORY`, 1 GiB).
            threads: CPU threads of a build from a file (default: ``NUMBA_NUM_THREADS``
                when set, else every core this process may use); the files are the same.

        Raises:
            InputError, AlphabetError: the input cannot be read (nothing is written).
            AlphabetMismatch: no ``alphabet`` was given and the input is nucleotide.
            DatabaseError: ``path`` exists (and ``overwrite`` is false, or it is not a
                warpalign database), or another build of ``path`` is running.
        """
        alpha = get_alphabet(alphabet or "protein")
        threads = resolve_threads(threads)
        path = Path(path)
        made = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            with _build_lock(path):
                _remove_stale(path)
                cls._check_target(path, overwrite)
                if is_path(source, alpha, str_is_path=True) or (
                        hasattr(source, "read") and not isinstance(source, (str, bytes))):
                    from . import dbbuild
                    label = source_label(source, "input")
                    tmp, files = dbbuild.build_files(
                        source, alpha, path.parent, f".{path.name}.tmp-{owner_tag()}-",
                        format=format, label=label, check=alphabet is None,
                        memory=dbbuild.MEMORY if memory is None else memory,
                        progress=progress, threads=threads)
                    db = cls._over(tmp, alpha)
                    db._write(path, overwrite, source=label, written=tmp, files=files)
                else:
                    db, label = cls._read(source, alpha, format, progress,
                                          check=alphabet is None)
                    db._write(path, overwrite, source=label)
                db = cls.open(path, verify=False)
                # checksummed as written: the first open need not read it all again
                from . import verified
                sums = {name: info["blake2b"] for name, info in db.meta["files"].items()}
                verified.remember(path, sums, verified.stamps(sums, path))
                return db
        except BaseException:
            for directory in made:             # the folders made for it, if still empty
                with contextlib.suppress(OSError):
                    directory.rmdir()
            raise

    @classmethod
    def _over(cls, tmp: Path, alpha: Alphabet) -> Database:
        """The database of the array files in ``tmp`` (memory-mapped)."""
        arrays = [np.load(tmp / f"{key}.npy", mmap_mode="r", allow_pickle=False).view(np.ndarray)
                  for key in ARRAYS]
        return cls(*arrays, alpha)

    @classmethod
    def _read(cls, source: Any, alpha: Alphabet, format: Format | None,
              progress: bool, check: bool) -> tuple[Database, str | None]:
        """The encoded sequences of ``source`` and the input's label (its path); ``check``:
        refuse nucleotide input (the alphabet was not given)."""
        wrap = None
        if progress:
            from tqdm.auto import tqdm

            def wrap(records):
                return tqdm(records, desc="reading", unit=" seq", unit_scale=True)
        names, raw, label = collect(source, alpha, format=format, str_is_path=True,
                                    progress=wrap)
        if not raw:
            raise InputError(f"{label or 'input'}: no sequences to build a database from")
        return cls._from_raw(names, raw, alpha, label, check=check), label

    @staticmethod
    def _check_target(path: Path, overwrite: bool) -> None:
        if not os.path.lexists(path):
            return
        if not overwrite:
            raise DatabaseError(f"{path}: already exists; pass overwrite=True to replace it")
        is_db = path.is_dir() and (path / META).is_file()
        if not is_db and not (path.is_dir() and not any(path.iterdir())):
            raise DatabaseError(f"{path}: exists and is not a warpalign database; "
                                "refusing to replace it")

    def _write(self, path: Path, overwrite: bool, source: str | None = None,
               written: Path | None = None, files: dict | None = None) -> None:
        """Write into a temporary directory and rename it to ``path`` (under the lock).
        ``written``: that directory, the array files already in it (a streamed build);
        ``files``: their sizes and BLAKE2b sums, the files synced (hashed as written)."""
        tmp = written or Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-{owner_tag()}-",
                                               dir=path.parent))
        try:
            known, files = files or {}, {}
            arrays = {"codes": self._codes, "offsets": self._offsets, "order": self._order,
                      "names": self._names_blob, "name_offsets": self._name_offsets}
            for key, array in arrays.items():
                file = tmp / f"{key}.npy"
                if file.name in known:
                    files[file.name] = known[file.name]
                    with _checksums_lock:
                        _checksums[str(file)] += 1
                    continue
                with open(file, "r+b" if written else "wb") as f:
                    if not written:
                        np.save(f, np.ascontiguousarray(array, dtype=_DTYPES[key]),
                                allow_pickle=False)
                        f.flush()
                    os.fsync(f.fileno())
                files[file.name] = {"size": file.stat().st_size, "blake2b": _blake2b(file),
                                    checksum.CHUNK_KEY: checksum.CHUNK}
            meta = self._describe(files, source)
            with open(tmp / META, "w", encoding="utf-8") as f:
                json.dump(meta, f, indent=1)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
            self._check_target(path, overwrite)
            old = None
            if os.path.lexists(path):
                old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-{owner_tag()}-",
                                            dir=path.parent))
                os.replace(path, old / "db")
            try:
                os.replace(tmp, path)
            except BaseException:
                if old is not None:
                    os.replace(old / "db", path)
                raise
            if old is not None:
                shutil.rmtree(old, ignore_errors=True)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def _describe(self, files: dict, source: str | None) -> dict:
        from . import __version__

        sorted_lengths = np.diff(self._offsets)
        bounds = list(BUCKET_BOUNDARIES)
        cuts = np.searchsorted(sorted_lengths, bounds, side="right")
        counts = np.diff(np.concatenate([[0], cuts, [len(self)]])).tolist()
        n = len(self)
        return {
            "format": FORMAT_NAME,
            "version": FORMAT_VERSION,
            "created_by": f"warpalign {__version__}",
            "source": source,
            "alphabet": {"name": self._alphabet.name, "symbols": self._alphabet.symbols},
            "sequences": n,
            "residues": self.residues,
            "min_length": int(sorted_lengths[0]) if n else 0,
            "max_length": int(sorted_lengths[-1]) if n else 0,
            "buckets": {"boundaries": bounds, "counts": counts,
                        "note": "counts[i]: lengths in (boundaries[i-1], boundaries[i]]; "
                                "the last count: longer than every boundary"},
            "files": files,
        }

    @classmethod
    def open(cls, path: str | os.PathLike, *, verify: bool | None = None) -> Database:
        """Open a database built by :meth:`build`; arrays are memory-mapped (read-only).

        Args:
            path: the database directory.
            verify: True: check every file's BLAKE2b checksum and the arrays' consistency
                (reads every byte once); False: sizes only. None (default): as True,
                unless these very files passed that check before and none has changed
                since (same size, modification time, inode; :mod:`warpalign.verified`).

        Raises:
            DatabaseError: missing directory or file, truncated file, checksum mismatch,
                inconsistent arrays, or another format version.
        """
        path = Path(path)
        if not path.is_dir():
            what = "no such directory" if not path.exists() else "not a directory"
            raise DatabaseError(f"{path}: {what}; expected a warpalign database "
                                "(build one with warpalign makedb or Database.build)")
        meta_path = path / META
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DatabaseError(f"{meta_path}: missing; not a warpalign database or an "
                                "unfinished copy") from None
        except (OSError, ValueError) as exc:
            raise DatabaseError(f"{meta_path}: unreadable or not JSON ({exc})") from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_NAME:
            raise DatabaseError(f"{meta_path}: not a warpalign database description")
        if meta.get("version") != FORMAT_VERSION:
            raise DatabaseError(f"{meta_path}: format version {meta.get('version')!r} is not "
                                f"supported (expected {FORMAT_VERSION}); rebuild the database")
        try:
            files = meta["files"]
            n = int(meta["sequences"])
            alpha = cls._meta_alphabet(meta["alphabet"])
        except (KeyError, TypeError, ValueError) as exc:
            raise DatabaseError(f"{meta_path}: malformed ({exc!r} missing or invalid)") from None
        from . import verified
        sums = ({name: info.get("blake2b") for name, info in files.items()
                 if isinstance(info, dict)} if isinstance(files, dict) else {})
        if verify is None:
            verify = not verified.unchanged(path, sums)
        before = verified.stamps(sums, path) if verify else None
        arrays = {}
        for key in ARRAYS:
            file = path / f"{key}.npy"
            info = files.get(file.name) if isinstance(files, dict) else None
            if not isinstance(info, dict) or "size" not in info or "blake2b" not in info:
                raise DatabaseError(f"{meta_path}: no size/checksum recorded for {file.name}")
            try:
                st = file.stat()
                size = st.st_size
            except FileNotFoundError:
                raise DatabaseError(f"{file}: missing") from None
            if size != info["size"]:
                raise DatabaseError(f"{file}: {size} bytes, expected {info['size']} "
                                    f"({'truncated' if size < info['size'] else 'grown'})")
            chunk = info.get(checksum.CHUNK_KEY)
            if chunk is not None and (not isinstance(chunk, int) or isinstance(chunk, bool)
                                      or chunk <= 0):
                raise DatabaseError(f"{meta_path}: malformed ({checksum.CHUNK_KEY} of "
                                    f"{file.name}: {chunk!r}, expected a positive int)")
            if verify and _blake2b(file, chunk) != info["blake2b"]:
                raise DatabaseError(f"{file}: checksum mismatch (the file is corrupt)")
            try:
                array = np.load(file, mmap_mode="r", allow_pickle=False)
            except (ValueError, OSError) as exc:
                raise DatabaseError(f"{file}: not a readable array ({exc})") from None
            if array.ndim != 1 or array.dtype != _DTYPES[key]:
                raise DatabaseError(f"{file}: expected a 1-D {np.dtype(_DTYPES[key])} array, "
                                    f"found {array.dtype} of shape {array.shape}")
            arrays[key] = array.view(np.ndarray)
            if key == "codes":
                codes_at = (int(array.offset), (st.st_dev, st.st_ino))
        cls._check_arrays(path, arrays, n, meta, full=verify)
        if before is not None:
            verified.remember(path, sums, before)
        return cls(arrays["codes"], arrays["offsets"], arrays["order"], arrays["names"],
                   arrays["name_offsets"], alpha, path=path, meta=meta, codes_at=codes_at)

    @staticmethod
    def _meta_alphabet(info: dict) -> Alphabet:
        name, symbols = info["name"], info["symbols"]
        known = ALPHABETS.get(name)
        if known is not None and known.symbols == symbols:
            return known
        return Alphabet(name, symbols)

    @staticmethod
    def _check_arrays(path: Path, a: dict, n: int, meta: dict, full: bool) -> None:
        def bad(key: str, what: str) -> DatabaseError:
            return DatabaseError(f"{path / (key + '.npy')}: {what}")

        for key in ("offsets", "name_offsets"):
            if len(a[key]) != n + 1:
                raise bad(key, f"{len(a[key])} entries, expected {n + 1} (sequences + 1)")
        if len(a["order"]) != n:
            raise bad("order", f"{len(a['order'])} entries, expected {n}")
        if (a["offsets"][0] != 0 or a["offsets"][-1] != len(a["codes"])):
            raise bad("offsets", f"do not span codes.npy ({len(a['codes'])} residues)")
        if a["name_offsets"][0] != 0 or a["name_offsets"][-1] != len(a["names"]):
            raise bad("name_offsets", f"do not span names.npy ({len(a['names'])} bytes)")
        if full:
            if np.any(np.diff(a["offsets"]) < 0) or np.any(np.diff(a["name_offsets"]) < 0):
                raise bad("offsets", "not non-decreasing")
            if n and not np.array_equal(np.sort(a["order"]), np.arange(n)):
                raise bad("order", "not a permutation of the sequence indices")
            if int(meta.get("residues", len(a["codes"]))) != len(a["codes"]):
                raise bad("codes", f"{len(a['codes'])} residues, meta.json says "
                                   f"{meta.get('residues')}")

    # --- access ----------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._order)

    def __repr__(self) -> str:
        where = f"{str(self._path)!r}" if self._path is not None else "in memory"
        return (f"<Database {where}: {len(self)} {self._alphabet.name} sequences, "
                f"{self.residues} residues>")

    def __iter__(self) -> Iterator[tuple[str, np.ndarray]]:
        """(name, codes) of every sequence in original order."""
        for i, name in enumerate(self.names):
            yield name, self.sequence(i)

    @property
    def path(self) -> Path | None:
        """The database directory (None for an in-memory database)."""
        return self._path

    @property
    def meta(self) -> dict:
        """The contents of meta.json (built on the fly for an in-memory database)."""
        return self._meta if self._meta is not None else self._describe({}, None)

    @property
    def alphabet(self) -> Alphabet:
        return self._alphabet

    @property
    def residues(self) -> int:
        """Total number of residues."""
        return len(self._codes)

    @property
    def order(self) -> np.ndarray:
        """int64 [n]: sorted position -> original index."""
        return self._order

    @property
    def rank(self) -> np.ndarray:
        """int64 [n]: original index -> sorted position (the inverse of :attr:`order`)."""
        if self._rank is None:
            rank = np.empty(len(self), dtype=np.int64)
            rank[self._order] = np.arange(len(self), dtype=np.int64)
            rank.flags.writeable = False
            self._rank = rank
        return self._rank

    @property
    def names(self) -> list[str]:
        """Names in original order."""
        if self._names is None:
            blob = self._names_blob.tobytes()
            bounds = self._name_offsets.tolist()
            self._names = [blob[a:b].decode("utf-8", "surrogateescape")
                           for a, b in itertools.pairwise(bounds)]
        return self._names

    def _index(self, i: int) -> int:
        n = len(self)
        j = int(i)
        if j < 0:
            j += n
        if not 0 <= j < n:
            raise IndexError(f"sequence index {i} out of range for a database of {n}")
        return j

    def name(self, i: int) -> str:
        """Name of the sequence of original index ``i``."""
        j = self._index(i)
        if self._names is not None:
            return self._names[j]
        a, b = int(self._name_offsets[j]), int(self._name_offsets[j + 1])
        return self._names_blob[a:b].tobytes().decode("utf-8", "surrogateescape")

    def names_at(self, indices: Any) -> list[str]:
        """Names of the sequences of original indices ``indices`` (integers, negative ones
        from the end), in one pass: a search names thousands of hits at once.

        Example:
            >>> db = Database.from_sequences({"a": "MKV", "b": "WW", "c": "MKVLA"})
            >>> db.names_at([2, 0, -2])
            ['c', 'a', 'b']
        """
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        n = len(self)
        bad = np.flatnonzero((idx < -n) | (idx >= n))
        if bad.size:
            raise IndexError(f"sequence index {int(idx[bad[0]])} out of range for a "
                             f"database of {n}")
        idx = np.where(idx < 0, idx + n, idx)
        if self._names is not None:
            return [self._names[j] for j in idx.tolist()]
        blob = memoryview(self._names_blob)
        return [str(blob[a:b], "utf-8", "surrogateescape") for a, b in
                zip(self._name_offsets[idx].tolist(), self._name_offsets[idx + 1].tolist())]

    @property
    def lengths(self) -> np.ndarray:
        """int64 [n]: sequence lengths in original order."""
        if self._lengths is None:
            lengths = np.empty(len(self), dtype=np.int64)
            lengths[self._order] = np.diff(self._offsets)
            lengths.flags.writeable = False
            self._lengths = lengths
        return self._lengths

    def sequence(self, i: int) -> np.ndarray:
        """uint8 codes of the sequence of original index ``i`` (a read-only view)."""
        s = int(self.rank[self._index(i)])
        return self._codes[self._offsets[s]:self._offsets[s + 1]]

    @property
    def targets(self) -> TargetSet:
        """All sequences in sorted order (map positions back with :attr:`order`). For an
        opened database it names where its codes lie on disk (``TargetSet.file``), so a
        search streaming it in chunks reads them from the file, not through the map."""
        file = None
        if self._path is not None and self._codes_at is not None:
            file = (str(self._path / "codes.npy"), *self._codes_at)
        return TargetSet(self._codes, self._offsets, file)

    @property
    def buckets(self) -> list[tuple[int, int, int]]:
        """Non-empty length buckets as (max_length, start, stop) slices of the sorted order.

        ``max_length`` is the bucket's upper bound from :data:`BUCKET_BOUNDARIES` (the
        longest sequence for the last bucket). The slices cover every sequence once.
        """
        return self.bucket_slices(BUCKET_BOUNDARIES)

    def bucket_slices(self, boundaries: tuple[int, ...] | list[int]) -> list[tuple[int, int, int]]:
        """Like :attr:`buckets` for other upper bounds (e.g. a kernel table's)."""
        return _bucket_slices(np.diff(self._offsets), boundaries)

    def chunks(self, max_residues: int) -> Iterator[tuple[int, int]]:
        """(start, stop) slices of the sorted order holding at most ``max_residues`` each.

        Slices are consecutive and cover every sequence exactly once. A sequence is never
        split: one longer than ``max_residues`` forms a chunk of its own.
        """
        return self.targets.chunks(max_residues)
