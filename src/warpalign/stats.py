"""Karlin–Altschul statistics for local search hits: bit scores and E-values.

For a local alignment score S of a query of length m against a database of N sequences
and n residues::

    bit score  S' = (λ·S − ln K) / ln 2
    E-value    E  = K · m' · n' · exp(−λ·S)       (= m'·n' · 2^(−S'))

with the effective lengths m' = m − ℓ and n' = n − N·ℓ, ℓ the *length adjustment*
(the expected length of an alignment that contributes no score, an edge-effect
correction). ℓ is the integer BLAST computes in ``BLAST_ComputeLengthAdjustment``
(NCBI C++ toolkit, ``algo/blast/core/blast_stat.c``): the largest integer not above the
fixed point of::

    f(ℓ) = β + (α/λ) · (ln K + ln((m − ℓ)·(n − N·ℓ)))

restricted so that K·(m − ℓ)·(n − N·ℓ) > max(m, n); found by the same safeguarded
fixed-point iteration (at most 20 steps, ℓ = 0 when even ℓ = 0 breaks that bound).
As in BLAST, n' is at least 1. (BLAST would give an empty query a search space of 0;
here m' is at least 1 too, so an empty query's hits get finite E-values.)

λ, K, H, α and β are NCBI BLAST's published values (``blast_stat.c``, the
``blosum45_values`` ... ``pam250_values`` tables, one row per gap-cost pair). BLAST
writes a gap of length k as costing ``existence + k·extension``; ours costs
``gap_open + (k−1)·gap_extend``, so a BLAST row (existence a, extension b) is our
``gap_open = a + b, gap_extend = b``: BLAST's BLOSUM62 11/1 is our 12/1 and our default
BLOSUM62 11/1 is BLAST's 10/1. Only the combinations in those tables are supported;
anything else raises :class:`StatisticsUnavailable` listing what is (estimating λ and K
for gapped scoring needs simulation, and a guessed E-value is worse than none).

DNA match/mismatch scoring takes BLASTN's tables (``blastn_values_R_P`` in the same
file) for reward R and penalty −P: the pairs 1/−5, 1/−4, 2/−7, 1/−3, 2/−5, 1/−2, 2/−3,
3/−4, 4/−5, 1/−1, 3/−2, 5/−4 and their multiples (a pair times d uses the table with gap
costs times d, λ and α over d), with the gap costs their rows list. For 2/−7, 2/−5, 2/−3
and 3/−4 an odd score's E-value is that of the even score below, as in blastn; E-values
then equal ``blastn -task blastn``'s on the same hits. BLASTN's other two cases are not
reproduced and raise :class:`StatisticsUnavailable`: megablast's non-affine greedy gap
costs, and gap costs beyond a table's largest, where blastn takes ungapped λ and K computed
from the query's composition.

BLAST's blastp by default also applies composition-based statistics (``-comp_based_stats
2``), which rescales scores per sequence pair; the numbers here are those of
``blastp -comp_based_stats 0`` (plain Karlin–Altschul with the table's λ and K).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Iterable
from typing import Any

import numpy as np

from .errors import ScoringError
from .results import Hits
from .scoring import Scoring

__all__ = ["KarlinAltschul", "StatisticsUnavailable", "apply_statistics", "bit_scores",
           "check_statistics",
           "evalues", "karlin_altschul", "length_adjustment", "search_space",
           "supported_gaps", "supported_nucleotide_scores"]

LN2 = math.log(2.0)

# NCBI BLAST blast_stat.c, in BLAST's gap convention (a gap of length k costs a + k*b):
# (existence a, extension b, lambda, K, H, alpha, beta). The first row of each matrix, with
# gaps None, is the ungapped row (BLAST's INT2_MAX, INT2_MAX).
_BLAST_TABLES: dict[str, tuple[tuple, ...]] = {
    "BLOSUM45": (
        (None, None, 0.2291, 0.0924, 0.2514, 0.9113, -5.7),
        (13, 3, 0.207, 0.049, 0.14, 1.5, -22),
        (12, 3, 0.199, 0.039, 0.11, 1.8, -34),
        (11, 3, 0.190, 0.031, 0.095, 2.0, -38),
        (10, 3, 0.179, 0.023, 0.075, 2.4, -51),
        (16, 2, 0.210, 0.051, 0.14, 1.5, -24),
        (15, 2, 0.203, 0.041, 0.12, 1.7, -31),
        (14, 2, 0.195, 0.032, 0.10, 1.9, -36),
        (13, 2, 0.185, 0.024, 0.084, 2.2, -45),
        (12, 2, 0.171, 0.016, 0.061, 2.8, -65),
        (19, 1, 0.205, 0.040, 0.11, 1.9, -43),
        (18, 1, 0.198, 0.032, 0.10, 2.0, -43),
        (17, 1, 0.189, 0.024, 0.079, 2.4, -57),
        (16, 1, 0.176, 0.016, 0.063, 2.8, -67),
    ),
    "BLOSUM50": (
        (None, None, 0.2318, 0.112, 0.3362, 0.6895, -4.0),
        (13, 3, 0.212, 0.063, 0.19, 1.1, -16),
        (12, 3, 0.206, 0.055, 0.17, 1.2, -18),
        (11, 3, 0.197, 0.042, 0.14, 1.4, -25),
        (10, 3, 0.186, 0.031, 0.11, 1.7, -34),
        (9, 3, 0.172, 0.022, 0.082, 2.1, -48),
        (16, 2, 0.215, 0.066, 0.20, 1.05, -15),
        (15, 2, 0.210, 0.058, 0.17, 1.2, -20),
        (14, 2, 0.202, 0.045, 0.14, 1.4, -27),
        (13, 2, 0.193, 0.035, 0.12, 1.6, -32),
        (12, 2, 0.181, 0.025, 0.095, 1.9, -41),
        (19, 1, 0.212, 0.057, 0.18, 1.2, -21),
        (18, 1, 0.207, 0.050, 0.15, 1.4, -28),
        (17, 1, 0.198, 0.037, 0.12, 1.6, -33),
        (16, 1, 0.186, 0.025, 0.10, 1.9, -42),
        (15, 1, 0.171, 0.015, 0.063, 2.7, -76),
    ),
    "BLOSUM62": (
        (None, None, 0.3176, 0.134, 0.4012, 0.7916, -3.2),
        (11, 2, 0.297, 0.082, 0.27, 1.1, -10),
        (10, 2, 0.291, 0.075, 0.23, 1.3, -15),
        (9, 2, 0.279, 0.058, 0.19, 1.5, -19),
        (8, 2, 0.264, 0.045, 0.15, 1.8, -26),
        (7, 2, 0.239, 0.027, 0.10, 2.5, -46),
        (6, 2, 0.201, 0.012, 0.061, 3.3, -58),
        (13, 1, 0.292, 0.071, 0.23, 1.2, -11),
        (12, 1, 0.283, 0.059, 0.19, 1.5, -19),
        (11, 1, 0.267, 0.041, 0.14, 1.9, -30),
        (10, 1, 0.243, 0.024, 0.10, 2.5, -44),
        (9, 1, 0.206, 0.010, 0.052, 4.0, -87),
    ),
    "BLOSUM80": (
        (None, None, 0.3430, 0.177, 0.6568, 0.5222, -1.6),
        (25, 2, 0.342, 0.17, 0.66, 0.52, -1.6),
        (13, 2, 0.336, 0.15, 0.57, 0.59, -3),
        (9, 2, 0.319, 0.11, 0.42, 0.76, -6),
        (8, 2, 0.308, 0.090, 0.35, 0.89, -9),
        (7, 2, 0.293, 0.070, 0.27, 1.1, -14),
        (6, 2, 0.268, 0.045, 0.19, 1.4, -19),
        (11, 1, 0.314, 0.095, 0.35, 0.90, -9),
        (10, 1, 0.299, 0.071, 0.27, 1.1, -14),
        (9, 1, 0.279, 0.048, 0.20, 1.4, -19),
    ),
    "BLOSUM90": (
        (None, None, 0.3346, 0.190, 0.7547, 0.4434, -1.4),
        (9, 2, 0.310, 0.12, 0.46, 0.67, -6),
        (8, 2, 0.300, 0.099, 0.39, 0.76, -7),
        (7, 2, 0.283, 0.072, 0.30, 0.93, -11),
        (6, 2, 0.259, 0.048, 0.22, 1.2, -16),
        (11, 1, 0.302, 0.093, 0.39, 0.78, -8),
        (10, 1, 0.290, 0.075, 0.28, 1.04, -15),
        (9, 1, 0.265, 0.044, 0.20, 1.3, -19),
    ),
    "PAM30": (
        (None, None, 0.3400, 0.283, 1.754, 0.1938, -0.3),
        (7, 2, 0.305, 0.15, 0.87, 0.35, -3),
        (6, 2, 0.287, 0.11, 0.68, 0.42, -4),
        (5, 2, 0.264, 0.079, 0.45, 0.59, -7),
        (10, 1, 0.309, 0.15, 0.88, 0.35, -3),
        (9, 1, 0.294, 0.11, 0.61, 0.48, -6),
        (8, 1, 0.270, 0.072, 0.40, 0.68, -10),
    ),
    "PAM70": (
        (None, None, 0.3345, 0.229, 1.029, 0.3250, -0.7),
        (8, 2, 0.301, 0.12, 0.54, 0.56, -5),
        (7, 2, 0.286, 0.093, 0.43, 0.67, -7),
        (6, 2, 0.264, 0.064, 0.29, 0.90, -12),
        (11, 1, 0.305, 0.12, 0.52, 0.59, -6),
        (10, 1, 0.291, 0.091, 0.41, 0.71, -9),
        (9, 1, 0.270, 0.060, 0.28, 0.97, -14),
    ),
    "PAM250": (
        (None, None, 0.2252, 0.0868, 0.2223, 0.98, -5.0),
        (15, 3, 0.205, 0.049, 0.13, 1.6, -23),
        (14, 3, 0.200, 0.043, 0.12, 1.7, -26),
        (13, 3, 0.194, 0.036, 0.10, 1.9, -31),
        (12, 3, 0.186, 0.029, 0.085, 2.2, -41),
        (11, 3, 0.174, 0.020, 0.070, 2.5, -48),
        (17, 2, 0.204, 0.047, 0.12, 1.7, -28),
        (16, 2, 0.198, 0.038, 0.11, 1.8, -29),
        (15, 2, 0.191, 0.031, 0.087, 2.2, -44),
        (14, 2, 0.182, 0.024, 0.073, 2.5, -53),
        (13, 2, 0.171, 0.017, 0.059, 2.9, -64),
        (21, 1, 0.205, 0.045, 0.11, 1.8, -34),
        (20, 1, 0.199, 0.037, 0.10, 1.9, -35),
        (19, 1, 0.192, 0.029, 0.083, 2.3, -52),
        (18, 1, 0.183, 0.021, 0.070, 2.6, -60),
        (17, 1, 0.171, 0.014, 0.052, 3.3, -86),
    ),
}

# NCBI BLAST blast_stat.c (NCBI C++ Toolkit, src/algo/blast/core/blast_stat.c, the
# blastn_values_R_P tables, read from the ncbi/ncbi-cxx-toolkit-public repository):
# BLASTN's statistics for match reward R and mismatch penalty -P, in BLAST's gap
# convention, (existence a, extension b, lambda, K, H, alpha, beta). Each table's {0, 0}
# row (megablast's non-affine greedy gap costs, extension R/2 + P) is left out: it is no
# integer Gotoh scoring in general. A reward/penalty pair with a common divisor d uses the
# table of the pair divided by d with gap costs times d, lambda and alpha divided by d
# (s_AdjustGapParametersByGcd).
_BLASTN_TABLES: dict[tuple[int, int], tuple[tuple, ...]] = {
    (1, 5): (
        (3, 3, 1.39, 0.747, 1.38, 1.00, 0),
    ),
    (1, 4): (
        (1, 2, 1.36, 0.67, 1.2, 1.1, 0),
        (0, 2, 1.26, 0.43, 0.90, 1.4, -1),
        (2, 1, 1.35, 0.61, 1.1, 1.2, -1),
        (1, 1, 1.22, 0.35, 0.72, 1.7, -3),
    ),
    (2, 7): (
        (2, 4, 0.68, 0.67, 1.2, 0.55, 0),
        (0, 4, 0.63, 0.43, 0.90, 0.7, -1),
        (4, 2, 0.675, 0.62, 1.1, 0.6, -1),
        (2, 2, 0.61, 0.35, 0.72, 1.7, -3),
    ),
    (1, 3): (
        (2, 2, 1.37, 0.70, 1.2, 1.1, 0),
        (1, 2, 1.35, 0.64, 1.1, 1.2, -1),
        (0, 2, 1.25, 0.42, 0.83, 1.5, -2),
        (2, 1, 1.34, 0.60, 1.1, 1.2, -1),
        (1, 1, 1.21, 0.34, 0.71, 1.7, -2),
    ),
    (2, 5): (
        (2, 4, 0.67, 0.59, 1.1, 0.6, -1),
        (0, 4, 0.62, 0.39, 0.78, 0.8, -2),
        (4, 2, 0.67, 0.61, 1.0, 0.65, -2),
        (2, 2, 0.56, 0.32, 0.59, 0.95, -4),
    ),
    (1, 2): (
        (2, 2, 1.33, 0.62, 1.1, 1.2, 0),
        (1, 2, 1.30, 0.52, 0.93, 1.4, -2),
        (0, 2, 1.19, 0.34, 0.66, 1.8, -3),
        (3, 1, 1.32, 0.57, 1.0, 1.3, -1),
        (2, 1, 1.29, 0.49, 0.92, 1.4, -1),
        (1, 1, 1.14, 0.26, 0.52, 2.2, -5),
    ),
    (2, 3): (
        (4, 4, 0.63, 0.42, 0.84, 0.75, -2),
        (2, 4, 0.615, 0.37, 0.72, 0.85, -3),
        (0, 4, 0.55, 0.21, 0.46, 1.2, -5),
        (3, 3, 0.615, 0.37, 0.68, 0.9, -3),
        (6, 2, 0.63, 0.42, 0.84, 0.75, -2),
        (5, 2, 0.625, 0.41, 0.78, 0.8, -2),
        (4, 2, 0.61, 0.35, 0.68, 0.9, -3),
        (2, 2, 0.515, 0.14, 0.33, 1.55, -9),
    ),
    (3, 4): (
        (6, 3, 0.389, 0.25, 0.56, 0.7, -5),
        (5, 3, 0.375, 0.21, 0.47, 0.8, -6),
        (4, 3, 0.351, 0.14, 0.35, 1.0, -9),
        (6, 2, 0.362, 0.16, 0.45, 0.8, -4),
        (5, 2, 0.330, 0.092, 0.28, 1.2, -13),
        (4, 2, 0.281, 0.046, 0.16, 1.8, -23),
    ),
    (4, 5): (
        (6, 5, 0.28, 0.21, 0.47, 0.6, -7),
        (5, 5, 0.27, 0.17, 0.39, 0.7, -9),
        (4, 5, 0.25, 0.10, 0.31, 0.8, -10),
        (3, 5, 0.23, 0.065, 0.25, 0.9, -11),
    ),
    (1, 1): (
        (3, 2, 1.09, 0.31, 0.55, 2.0, -2),
        (2, 2, 1.07, 0.27, 0.49, 2.2, -3),
        (1, 2, 1.02, 0.21, 0.36, 2.8, -6),
        (0, 2, 0.80, 0.064, 0.17, 4.8, -16),
        (4, 1, 1.08, 0.28, 0.54, 2.0, -2),
        (3, 1, 1.06, 0.25, 0.46, 2.3, -4),
        (2, 1, 0.99, 0.17, 0.30, 3.3, -10),
    ),
    (3, 2): (
        (5, 5, 0.208, 0.030, 0.072, 2.9, -47),
    ),
    (5, 4): (
        (10, 6, 0.163, 0.068, 0.16, 1.0, -19),
        (8, 6, 0.146, 0.039, 0.11, 1.3, -29),
    ),
}
#: Pairs (after the divisor) whose E-values and bit scores BLAST computes from even scores
#: only: an odd gapped score is rounded down first (blast_stat.c's ``round_down``;
#: ``Blast_HSPListAdjustOddBlastnScores``).
_BLASTN_ROUND_DOWN = frozenset({(2, 7), (2, 5), (2, 3), (3, 4)})

_MAX_ITERATIONS = 20  # BLAST_ComputeLengthAdjustment's kMaxIterations


class StatisticsUnavailable(ScoringError):
    """No published Karlin–Altschul parameters for this scoring scheme."""


@dataclasses.dataclass(frozen=True)
class KarlinAltschul:
    """Karlin–Altschul parameters of one scoring scheme (one row of BLAST's tables).

    ``alpha`` and ``beta`` drive the length adjustment. For the ungapped row they are
    λ/H and 0, as BLAST's ``BLAST_GetAlphaBeta`` uses them for ungapped searches.
    ``round_down``: an odd score counts as the even score below it in E-values (BLASTN's
    rule for reward/penalty pairs whose tables hold for even scores only; blast_hits.c
    rounds "for E-value calculations only": bit scores come from the score itself, as
    blastn 2.12 prints them).
    """

    matrix: str               # the matrix name, or "match R/mismatch P" for BLASTN's scores
    gap_open: int | None      # our convention; None for ungapped
    gap_extend: int | None
    lambda_: float
    K: float
    H: float
    alpha: float
    beta: float
    round_down: bool = False

    def counted(self, score: float) -> float:
        """The score E-values take: ``score`` itself, or with ``round_down`` the even
        integer at or below it."""
        return float(int(score) & ~1) if self.round_down else score

    @property
    def log_K(self) -> float:
        return math.log(self.K)

    def bit_score(self, score: float) -> float:
        """(λ·S − ln K) / ln 2."""
        return (self.lambda_ * score - self.log_K) / LN2

    def evalue(self, score: float, space: float) -> float:
        """K · space · exp(−λ·S) for an effective search space ``space`` = m'·n'."""
        return space * math.exp(self.log_K - self.lambda_ * self.counted(score))


def _rows(name: str) -> dict[tuple[int, int] | None, KarlinAltschul]:
    out: dict[tuple[int, int] | None, KarlinAltschul] = {}
    for a, b, lam, k, h, alpha, beta in _BLAST_TABLES[name]:
        if a is None:
            out[None] = KarlinAltschul(name, None, None, lam, k, h, lam / h, 0.0)
        else:
            out[(a + b, b)] = KarlinAltschul(name, a + b, b, lam, k, h, alpha, beta)
    return out


def supported_gaps(matrix: str | None = None) -> dict[str, list[tuple[int, int]]]:
    """Gap penalties (our convention: open, extend) with statistics, per matrix.

    Example:
        >>> supported_gaps("BLOSUM62")["BLOSUM62"][:3]
        [(10, 1), (11, 1), (12, 1)]
    """
    names = _BLAST_TABLES if matrix is None else [_table_name(matrix)]
    return {n: sorted((g for g in _rows(n) if g is not None), key=lambda g: (g[1], g[0]))
            for n in names}


def _table_name(matrix: str) -> str:
    key = str(matrix).upper()
    if key not in _BLAST_TABLES:
        raise StatisticsUnavailable(
            f"no E-value statistics for matrix {matrix!r}; supported matrices: "
            f"{', '.join(_BLAST_TABLES)} (NCBI BLAST's published λ, K tables)")
    return key


def karlin_altschul(scoring: Scoring | str, gap_open: int | None = None,
                    gap_extend: int | None = None, *, gapped: bool = True) -> KarlinAltschul:
    """The published λ, K, H, α, β of a scoring scheme.

    Args:
        scoring: a :class:`Scoring` with a named matrix, or a matrix name (then give
            ``gap_open``/``gap_extend`` in our convention).
        gapped: False for the ungapped row (gap penalties ignored).

    Raises:
        StatisticsUnavailable: the matrix or gap pair is not in BLAST's tables (the
            message lists the supported pairs), or the Scoring's matrix is not the named
            one.

    Example:
        >>> ka = karlin_altschul("BLOSUM62", 12, 1)   # BLAST's 11/1
        >>> ka.lambda_, ka.K, ka.H
        (0.267, 0.041, 0.14)
        >>> round(ka.bit_score(100), 1)
        43.1
    """
    if isinstance(scoring, Scoring):
        if scoring.matrix_name is None and scoring.match is not None:
            if not gapped:
                raise StatisticsUnavailable(
                    "ungapped statistics of match/mismatch scoring depend on the residue "
                    "frequencies (BLAST computes them per query); only BLASTN's gapped "
                    "tables are known here")
            return _nucleotide(scoring)
        if scoring.matrix_name is None:
            raise StatisticsUnavailable(
                "E-values need a named substitution matrix with published statistics "
                f"({', '.join(_BLAST_TABLES)}) or DNA match/mismatch scores of BLASTN's "
                f"tables ({_pairs_text()}); this array scoring has none")
        name = _table_name(scoring.matrix_name)
        reference = Scoring(name, gap_open=scoring.gap_open, gap_extend=scoring.gap_extend,
                            alphabet=scoring.alphabet)
        if not np.array_equal(reference.matrix, scoring.matrix):
            raise StatisticsUnavailable(
                f"the scoring's matrix is named {scoring.matrix_name!r} but differs from "
                f"{name}; E-value statistics are only known for the published matrix")
        gap_open, gap_extend = scoring.gap_open, scoring.gap_extend
    else:
        name = _table_name(scoring)
    rows = _rows(name)
    if not gapped:
        return rows[None]
    row = rows.get((gap_open, gap_extend))
    if row is None:
        pairs = ", ".join(f"{o}/{e}" for o, e in supported_gaps(name)[name])
        raise StatisticsUnavailable(
            f"no E-value statistics for {name} with gap_open={gap_open}, "
            f"gap_extend={gap_extend} (a gap of length k costs open + (k-1)*extend); "
            f"supported open/extend for {name}: {pairs}")
    return row


def supported_nucleotide_scores() -> dict[tuple[int, int], list[tuple[int, int]]]:
    """DNA match/mismatch scores with statistics (BLASTN's tables), and per pair the gap
    penalties (our convention: open, extend) it has them for. A multiple of a pair (e.g.
    2/-4 of 1/-2) has them for the gap penalties times the same factor.

    Example:
        >>> supported_nucleotide_scores()[(2, -3)][:3]
        [(4, 2), (6, 2), (7, 2)]
    """
    return {(r, -p): sorted(((a + b, b) for a, b, *_ in rows), key=lambda g: (g[1], g[0]))
            for (r, p), rows in _BLASTN_TABLES.items()}


def _pairs_text() -> str:
    return ", ".join(f"{r}/-{p}" for r, p in _BLASTN_TABLES)


def _nucleotide(scoring: Scoring) -> KarlinAltschul:
    """BLASTN's gapped row for a DNA match/mismatch scoring (``Blast_KarlinBlkNuclGappedCalc``
    and ``Blast_GetNuclAlphaBeta`` for gap costs found in the tables; their "infinite"
    regime, which takes ungapped values computed from the query's composition, is not
    reproduced: such gap costs raise)."""
    reward, penalty = int(scoring.match), int(scoring.mismatch)
    what = f"match {reward}/mismatch {penalty}"
    if scoring.alphabet.name != "dna":
        raise StatisticsUnavailable(
            f"{what} scoring of the {scoring.alphabet.name} alphabet has no statistics; "
            "BLASTN's tables hold for DNA")
    d = math.gcd(reward, penalty) if reward > 0 > penalty else 1
    rows = _BLASTN_TABLES.get((reward // d, -penalty // d)) if reward > 0 > penalty else None
    if rows is None:
        raise StatisticsUnavailable(
            f"no E-value statistics for {what}: BLASTN's tables (NCBI blast_stat.c) have "
            f"match/mismatch {_pairs_text()} and their multiples; protein matrices: "
            f"{', '.join(_BLAST_TABLES)}")
    gaps = (scoring.gap_open, scoring.gap_extend)
    for a, b, lam, k, h, alpha, beta in rows:
        if (d * (a + b), d * b) == gaps:
            return KarlinAltschul(what, *gaps, lam / d, k, h, alpha / d, beta,
                                  round_down=(reward // d, -penalty // d) in _BLASTN_ROUND_DOWN)
    pairs = ", ".join(f"{d * o}/{d * e}" for o, e in
                      supported_nucleotide_scores()[(reward // d, penalty // d)])
    raise StatisticsUnavailable(
        f"no E-value statistics for {what} with gap_open={gaps[0]}, gap_extend={gaps[1]} "
        f"(a gap of length k costs open + (k-1)*extend); BLASTN's tables have, for "
        f"{what}, open/extend {pairs}")


def length_adjustment(params: KarlinAltschul, query_length: int, db_residues: int,
                      db_sequences: int) -> int:
    """BLAST's length adjustment ℓ (``BLAST_ComputeLengthAdjustment``).

    The largest integer below the fixed point of
    ``f(ℓ) = β + (α/λ)·(ln K + ln((m − ℓ)(n − N·ℓ)))``, kept small enough that
    ``K·(m − ℓ)·(n − N·ℓ) > max(m, n)``; 0 when no such ℓ ≥ 0 exists.

    Example:
        >>> ka = karlin_altschul("BLOSUM62", 12, 1)
        >>> length_adjustment(ka, 300, 100_000_000, 300_000)
        112
    """
    m, n, N = float(query_length), float(db_residues), float(db_sequences)
    K, log_k, beta = params.K, params.log_K, params.beta
    alpha_d_lambda = params.alpha / params.lambda_
    a, mb = N, m * N + n
    c = n * m - max(m, n) / K
    if c < 0:
        return 0
    ell_max = 2 * c / (mb + math.sqrt(mb * mb - 4 * a * c))
    ell_min = 0.0
    ell_next = 0.0
    converged = False
    for i in range(1, _MAX_ITERATIONS + 1):
        ell = ell_next
        ss = (m - ell) * (n - N * ell)
        ell_bar = alpha_d_lambda * (log_k + math.log(ss)) + beta
        if ell_bar >= ell:            # ell is not above the fixed point
            ell_min = ell
            if ell_bar - ell_min <= 1.0:
                converged = True
                break
            if ell_min == ell_max:    # no more points to check
                break
        else:                         # ell is above the fixed point
            ell_max = ell
        if ell_min <= ell_bar <= ell_max:
            ell_next = ell_bar
        else:
            ell_next = ell_max if i == 1 else (ell_min + ell_max) / 2
    result = int(ell_min)
    if converged:
        # floor(ell_min) is floor(fixed point) unless ceil(ell_min) is still below it.
        ell = math.ceil(ell_min)
        if ell <= ell_max:
            ss = (m - ell) * (n - N * ell)
            if alpha_d_lambda * (log_k + math.log(ss)) + beta >= ell:
                result = int(ell)
    return result


def search_space(params: KarlinAltschul, query_length: int, db_residues: int,
                 db_sequences: int) -> tuple[int, int, int]:
    """(ℓ, m', n'): the length adjustment and the effective query and database lengths.

    m' = max(m − ℓ, 1) and n' = max(n − N·ℓ, 1); the effective search space is m'·n'.
    """
    ell = length_adjustment(params, query_length, db_residues, db_sequences)
    return ell, max(query_length - ell, 1), max(db_residues - db_sequences * ell, 1)


def _counted(scores: Any, params: KarlinAltschul) -> np.ndarray:
    """The scores E-values take, as float64 (odd ones rounded down to even where
    ``params.round_down``)."""
    if params.round_down:
        return (np.asarray(scores, dtype=np.int64) & ~1).astype(np.float64)
    return np.asarray(scores, dtype=np.float64)


def bit_scores(scores: Any, params: KarlinAltschul) -> np.ndarray:
    """float64 bit scores (λ·S − ln K)/ln 2 of an array of raw scores."""
    s = np.asarray(scores, dtype=np.float64)
    return (params.lambda_ * s - params.log_K) / LN2


def evalues(scores: Any, params: KarlinAltschul, query_length: int, db_residues: int,
            db_sequences: int) -> np.ndarray:
    """float64 E-values K·m'·n'·exp(−λ·S) of raw local scores of one query.

    Example:
        >>> ka = karlin_altschul("BLOSUM62", 12, 1)
        >>> round(float(evalues([100], ka, 300, 100_000_000, 300_000)[0]), 6)
        0.001299
    """
    _, m_eff, n_eff = search_space(params, query_length, db_residues, db_sequences)
    s = _counted(scores, params)
    return float(m_eff) * float(n_eff) * np.exp(params.log_K - params.lambda_ * s)


def _database_size(database: Any) -> tuple[int, int]:
    if isinstance(database, tuple):
        residues, sequences = database
    else:
        residues, sequences = database.residues, len(database)
    residues, sequences = int(residues), int(sequences)
    if residues < 0 or sequences < 1:
        raise ValueError(f"invalid database size: {residues} residues in {sequences} sequences")
    return residues, sequences


def check_statistics(scoring: Scoring, *, algorithm: str = "local",
                     evalue: float | None = None) -> KarlinAltschul:
    """The parameters :func:`apply_statistics` would use; raises what it would raise.

    Lets a search fail before it runs rather than after.
    """
    if algorithm != "local":
        raise StatisticsUnavailable(
            f"E-values are defined for local alignment scores only, not algorithm={algorithm!r}")
    if evalue is not None and (isinstance(evalue, bool) or not isinstance(evalue, numbers.Real)
                               or not evalue >= 0):
        raise ValueError(f"invalid evalue: {evalue!r}; expected a number >= 0")
    return karlin_altschul(scoring)


def apply_statistics(results: Iterable[Hits], database: Any, scoring: Scoring, *,
                     evalue: float | None = None,
                     algorithm: str = "local") -> list[Hits]:
    """Hits with E-values and bit scores; with ``evalue``, only the hits at or below it.

    Args:
        results: the :class:`Hits` of each query (as :func:`~warpalign.search` returns).
        database: the searched :class:`~warpalign.Database` (its residues and number of
            sequences size the search space), or ``(residues, sequences)`` (e.g. the
            whole database when the hits came from one shard).
        scoring: the scoring of the search; must have published statistics.
        evalue: keep hits with E-value <= this (BLAST's ``-evalue``); None keeps all.
        algorithm: the search's algorithm; statistics exist for "local" only.

    Returns:
        New :class:`Hits`, one per query, with ``evalues`` and ``bitscores`` (float64
        arrays, best first like the scores).

    Raises:
        StatisticsUnavailable: unsupported matrix or gaps, or a non-local algorithm.

    Example:
        >>> from warpalign import Database, Scoring, search
        >>> s = Scoring("BLOSUM62", gap_open=12, gap_extend=1)
        >>> db = Database.from_sequences(["HEAGAWGHEE", "PAWHEAE", "WWWWW"])
        >>> res = search(["HEAGAWGHEE"], db, s)
        >>> res[0].scores.tolist()
        [62, 17, 11]
        >>> res = apply_statistics(res, db, s, evalue=0.01)
        >>> res[0].names, res[0].bitscores.round(1).tolist(), f"{res[0].evalues[0]:.2e}"
        (['seq0'], [28.5], '5.83e-07')
    """
    params = check_statistics(scoring, algorithm=algorithm, evalue=evalue)
    residues, sequences = _database_size(database)
    out = []
    for hits in results:
        ev = evalues(hits.scores, params, hits.query_length, residues, sequences)
        bits = bit_scores(hits.scores, params)
        keep = None if evalue is None else np.flatnonzero(ev <= evalue)
        out.append(_with_stats(hits, ev, bits, keep))
    return out


def _with_stats(hits: Hits, ev: np.ndarray, bits: np.ndarray,
                keep: np.ndarray | None) -> Hits:
    if keep is None or len(keep) == len(hits):
        return dataclasses.replace(hits, evalues=ev, bitscores=bits)
    def take(arr):
        return None if arr is None else np.ascontiguousarray(arr[keep])
    idx = keep.tolist()
    return dataclasses.replace(
        hits, scores=take(hits.scores), targets=take(hits.targets),
        names=[hits.names[i] for i in idx], query_ends=take(hits.query_ends),
        target_ends=take(hits.target_ends),
        alignments=None if hits.alignments is None else [hits.alignments[i] for i in idx],
        evalues=take(ev), bitscores=take(bits))
