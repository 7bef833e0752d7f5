"""warpalign: exact sequence alignment at GPU speed.

Example:
    >>> from warpalign import Scoring, align
    >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    >>> align("TACTG", "GAACTGA", s).score     # paper 000, Table II
    8
"""

import importlib
import sys
import types

__version__ = "0.1.0"

#: Each public name and its module. A name loads its module on first use, so that
#: ``import warpalign`` (and with it the command line, which must answer Ctrl-C from its
#: first moment) does not wait a second for NumPy and Numba.
_EXPORTS = {
    "Alignment": "results", "Alphabet": "alphabet", "AlphabetError": "errors",
    "BackendError": "errors", "BackendUnavailable": "errors", "Database": "database", "DatabaseError": "errors",
    "DeviceOutOfMemory": "errors", "Hit": "results", "Hits": "results", "InputError": "errors",
    "NotComputed": "errors", "PairScores": "pairs", "Reference": "reference",
    "Scoring": "scoring",
    "SequenceBuffer": "buffers",
    "ScoringError": "errors", "align": "align", "lcs": "lcs", "lcs_length": "lcs",
    "locate": "locate", "score_pairs": "pairs", "search": "search",
}

__all__ = ["Alignment", "Alphabet", "AlphabetError", "BackendError", "BackendUnavailable", "Database",
           "DatabaseError", "DeviceOutOfMemory", "Hit", "Hits", "InputError", "NotComputed",
           "PairScores", "Reference", "Scoring", "ScoringError", "SequenceBuffer", "__version__", "align",
           "lcs", "lcs_length", "locate", "score_pairs", "search"]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})


class _Package(types.ModuleType):
    """Keeps ``align``, ``lcs``, ``locate`` and ``search`` the functions: loading the module
    of the same name would otherwise bind that module to the package in their place."""

    def __setattr__(self, name: str, value) -> None:
        if not (isinstance(value, types.ModuleType) and _EXPORTS.get(name) == name):
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
