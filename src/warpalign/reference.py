"""A reference for ``locate``: records encoded once, with names, on disk and memory-mapped.

A :class:`Reference` is what many reads are located in (:func:`warpalign.locate.locate`):
its records are read-only ``uint8`` arrays made once, in input order, so every call finds
the very same arrays. That is what the GPU backend keys its device copy on (one upload per
reference and device, shared by every call and thread), and what locate's window tables
are remembered by: a read against a Reference costs its kernels, not an encoding or an
upload of the reference.

On disk a reference is a :class:`~warpalign.database.Database` directory (the same files,
``warpalign makedb --alphabet dna`` or :meth:`Reference.build`): memory-mapped when
opened, checksums verified once (:mod:`warpalign.verified`). A database sorts its
sequences by length; a Reference gives them back in input order, which is the order
``locate`` breaks ties across records by.

Example:
    >>> ref = Reference.from_sequences({"chrA": "ACGTTT", "chrB": "GGA"})
    >>> len(ref), ref.names, ref.lengths.tolist(), ref.alphabet.name
    (2, ['chrA', 'chrB'], [6, 3], 'dna')
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from .alphabet import Alphabet
from .database import META, Database
from .io import Format

__all__ = ["Reference", "is_reference_dir"]


def is_reference_dir(path: Any) -> bool:
    """Whether ``path`` (a str or PathLike) names a directory holding a database's
    ``meta.json``: a built reference (or database), not a FASTA file."""
    if not isinstance(path, (str, os.PathLike)):
        return False
    try:
        p = Path(path)
        return p.is_dir() and (p / META).is_file()
    except (OSError, ValueError):   # a sequence, too long or odd to be a file name
        return False


class Reference:
    """Reference records for :func:`~warpalign.locate.locate`, encoded once.

    Attributes:
        names: the record names, in input order.
        records: the records' codes (read-only ``uint8`` arrays, input order), the same
            arrays on every access.
        database: the :class:`~warpalign.database.Database` holding them.

    Immutable once made, so one Reference may serve many threads at once.
    """

    def __init__(self, database: Database):
        self.database = database
        self.names: list[str] = list(database.names)
        records = [database.sequence(i) for i in range(len(database))]
        for codes in records:
            codes.setflags(write=False)   # views of the database's read-only arrays
        self.records: tuple[np.ndarray, ...] = tuple(records)
        self._max_code: int | None = None
        self._lock = threading.Lock()

    @classmethod
    def build(cls, source: Any, path: str | os.PathLike, *,
              alphabet: str | Alphabet = "dna", progress: bool = False,
              overwrite: bool = False, format: Format | None = None) -> Reference:
        """Encode a FASTA/FASTQ file (plain or gzip) into a reference directory at ``path``
        and open it (:meth:`Database.build <warpalign.database.Database.build>` with
        ``alphabet``, "dna" by default).

        Raises:
            InputError, AlphabetError: the input cannot be read (nothing is written).
            DatabaseError: ``path`` exists (and ``overwrite`` is false), or another build
                of it is running.
        """
        return cls(Database.build(source, path, alphabet=alphabet, progress=progress,
                                  overwrite=overwrite, format=format))

    @classmethod
    def open(cls, path: str | os.PathLike, *, verify: bool | None = None) -> Reference:
        """Open a reference directory made by :meth:`build` (or ``warpalign makedb``),
        memory-mapped; ``verify`` as for :meth:`Database.open
        <warpalign.database.Database.open>` (checksums once per change of the files).

        Raises:
            DatabaseError: not a reference directory, or a damaged one.
        """
        return cls(Database.open(path, verify=verify))

    @classmethod
    def from_sequences(cls, seqs: Any, names: list[str] | None = None, *,
                       alphabet: str | Alphabet = "dna") -> Reference:
        """An in-memory reference of anything :func:`warpalign.io.load_sequences` takes
        (sequences, SeqRecords, a mapping name -> sequence, a FASTA path)."""
        return cls(Database.from_sequences(seqs, names, alphabet=alphabet,
                                           default_name="record"))

    def __len__(self) -> int:
        return len(self.records)

    def __repr__(self) -> str:
        where = "in memory" if self.path is None else repr(str(self.path))
        return (f"<Reference {where}: "
                f"{len(self)} {self.alphabet.name} records, {self.residues} symbols>")

    @property
    def alphabet(self) -> Alphabet:
        return self.database.alphabet

    @property
    def path(self) -> Path | None:
        """The reference directory (None in memory)."""
        return self.database.path

    @property
    def residues(self) -> int:
        """Total number of symbols."""
        return self.database.residues

    @property
    def lengths(self) -> np.ndarray:
        """int64 [records]: record lengths in input order."""
        return self.database.lengths

    @property
    def max_code(self) -> int:
        """The largest code in any record (-1 when all are empty); read once."""
        with self._lock:
            if self._max_code is None:
                self._max_code = max((int(r.max()) for r in self.records if r.size),
                                     default=-1)
            return self._max_code
