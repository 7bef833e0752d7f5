"""warpalign: exact sequence alignment at GPU speed."""

from .alphabet import Alphabet
from .errors import (AlphabetError, BackendUnavailable, DatabaseError, DeviceOutOfMemory,
                     InputError, NotComputed, ScoringError)
from .results import Alignment, Hit, Hits
from .scoring import Scoring

__version__ = "0.1.0"

__all__ = ["Alphabet", "Alignment", "AlphabetError", "BackendUnavailable", "DatabaseError",
           "DeviceOutOfMemory", "Hit", "Hits", "InputError", "NotComputed", "Scoring",
           "ScoringError", "__version__"]
