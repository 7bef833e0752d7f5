"""Backends: ``base.py`` (what jobs and engines exchange, and each job's engine interface),
``registry.py`` (which engine runs which job: the one place a job resolves its engine),
``cpu/`` (Numba) and ``cuda/`` (CuPy, imported lazily). Re-exports the shared names."""

from .base import (
    ALGORITHMS,
    BACKENDS,
    BackendName,
    ReadOnlyMemo,
    ScoreBatch,
    TargetSet,
    check_choice,
    cpu_name,
    numba_threads,
    readonly_key,
    resolve_threads,
    usable_cores,
)
from .registry import backend_for, choose_backend, engine_for, get_backend

__all__ = ["ALGORITHMS", "BACKENDS", "BackendName", "ReadOnlyMemo", "ScoreBatch", "TargetSet",
           "backend_for", "check_choice", "choose_backend", "cpu_name", "engine_for",
           "get_backend", "numba_threads", "readonly_key", "resolve_threads", "usable_cores"]
