"""warpalign: exact sequence alignment at GPU speed.

Example:
    >>> from warpalign import Scoring, align
    >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
    >>> align("TACTG", "GAACTGA", s).score     # paper 000, Table II
    8
"""

from .align import align
from .alphabet import Alphabet
from .database import Database
from .errors import (
                     AlphabetError,
                     BackendError,
                     BackendUnavailable,
                     DatabaseError,
                     DeviceOutOfMemory,
                     InputError,
                     NotComputed,
                     ScoringError,
)
from .lcs import lcs, lcs_length
from .locate import locate
from .pairs import PairScores, score_pairs
from .results import Alignment, Hit, Hits
from .scoring import Scoring
from .search import search

__version__ = "0.1.0"

__all__ = ["Alignment", "Alphabet", "AlphabetError", "BackendError", "BackendUnavailable", "Database",
           "DatabaseError", "DeviceOutOfMemory", "Hit", "Hits", "InputError", "NotComputed",
           "PairScores", "Scoring", "ScoringError", "__version__", "align", "lcs", "lcs_length", "locate", "score_pairs",
           "search"]
