"""Exceptions raised by warpalign.

Every message says what was expected and what came: the record, position and
character for bad sequences; the option and its allowed values for bad options.
"""

from __future__ import annotations


class WarpalignError(Exception):
    """Base class of every error warpalign raises on purpose."""


class AlphabetError(WarpalignError, ValueError):
    """A symbol outside the alphabet (names the record, position and character)."""

    def __init__(self, message: str, *, record: str | None = None, position: int | None = None,
                 character: str | None = None):
        super().__init__(message)
        self.record = record
        self.position = position
        self.character = character


class ScoringError(WarpalignError, ValueError):
    """A scoring scheme that cannot be used (unknown matrix, negative penalty...)."""


class AlphabetMismatch(AlphabetError, ScoringError):
    """Nucleotide sequences where protein was assumed, not asked for: a scoring whose
    alphabet came from its matrix, or a database built with the default alphabet.

    ``source`` names the input and ``problem`` says what was found; the message ends with
    the Python arguments that fix it (the command line prints its own flags instead).
    """

    def __init__(self, message: str, *, source: str, problem: str):
        super().__init__(message)
        self.source = source
        self.problem = problem


class InputError(WarpalignError, ValueError):
    """An input file or sequence that cannot be read (missing, empty, truncated, not FASTA)."""


class DatabaseError(WarpalignError, ValueError):
    """An on-disk database that is missing, corrupt, truncated or of another version."""


class BackendUnavailable(WarpalignError, RuntimeError):
    """The requested backend cannot run here (says why: library missing, no device, compile)."""


class BackendError(WarpalignError, RuntimeError):
    """A kernel failed while it ran (e.g. a bounded wait timed out); names the kernel."""


class DeviceOutOfMemory(WarpalignError, MemoryError):
    """The device ran out of memory even after chunking."""


class NotComputed(WarpalignError, AttributeError):
    """A result field that the chosen ``mode`` did not compute (e.g. coordinates after "score")."""


class TracebackError(RuntimeError):
    """An internal inconsistency in the traceback (a bug: please report it)."""
