"""``align``: one pair of sequences, any length."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from ._backends import ALGORITHMS, TargetSet, check_choice, resolve_threads
from ._backends.cpu.pairwise import ALGORITHM_CODES
from ._backends.registry import backend_for, engine_for
from .choices import ALIGN_MODES
from .io import load_one, source_label
from .results import Alignment
from .scoring import Scoring, check_input

Mode = Literal["score", "end", "full"]
MODES = ALIGN_MODES
#: Pairs of at least this many cells run on the long-pair GPU kernel (cuda/long.py) when
#: the backend is CUDA: the score/end pass, and for mode="full" the anchored start pass and
#: the large Myers–Miller splits too.
LONG_PAIR_CELLS = 1 << 26


def align(a: Any, b: Any, scoring: Scoring, *, mode: Mode = "full",
          algorithm: Literal["local", "global", "semiglobal"] = "local",
          backend: str = "auto", threads: int | None = None) -> Alignment:
    """Align query ``a`` with target ``b``.

    Args:
        a: the query (str, bytes, uint8 array of characters or SeqRecord), or a
            FASTA/FASTQ file holding one record: a ``str`` that names an existing file or
            looks like a path (``/``, ``\\`` or ``.``) is read as one, and is an
            ``InputError`` when it names nothing.
        b: the target, as ``a``.
        scoring: the scoring scheme; its alphabet validates both sequences. Nucleotide
            input under a protein alphabet the matrix only implied is an
            ``AlphabetMismatch`` (see :class:`Scoring`).
        mode: "score" (score only), "end" (score and end coordinates) or "full" (both
            coordinates, CIGAR and aligned strings; linear space for long pairs).
        algorithm: "local" (Smith-Waterman), "global" (Needleman-Wunsch) or "semiglobal"
            (end gaps free on the target, as for a read inside a reference).
        backend: "auto", "cpu" or "cuda" for the score/end pass. On CUDA, pairs of at
            least ``LONG_PAIR_CELLS`` cells run every exact pass on the long-pair GPU
            kernel; ``mode="full"`` takes its staged traceback (``cuda/long.py``
            ``Staged``: same score and coordinates as the CPU, an optimal path that may
            differ from the CPU's among equally scoring ones), small segments on the CPU.
        threads: CPU threads for ``mode="full"`` (1 runs the two half passes of a large
            linear-space split one after the other; more than 2 are never used); default
            ``NUMBA_NUM_THREADS`` when set, else every core this process may use.

    Returns:
        An :class:`Alignment`. With ``mode="score"`` only ``score`` is set; with
        ``mode="end"`` also ``query_end`` and ``target_end``.

    Example:
        >>> s = Scoring(match=5, mismatch=-3, gap_open=8, gap_extend=1)
        >>> aln = align("ATGCTCATAGA", "ATGCCTCACTGA", s)   # paper 004, Fig. 3
        >>> aln.score, aln.cigar
        (31, '3M1D8M')
    """
    resolve_threads(threads)
    q = load_one(a, scoring.alphabet, "query")[1]
    t = load_one(b, scoring.alphabet, "target")[1]
    check_input(scoring, [q, t], f"{source_label(a, 'query')} and {source_label(b, 'target')}")
    return align_encoded(q, t, scoring, mode=mode, algorithm=algorithm, backend=backend,
                         threads=threads)


def align_encoded(q: np.ndarray, t: np.ndarray, scoring: Scoring, *, mode: Mode = "full",
                  algorithm: str = "local", backend: str = "auto",
                  threads: int | None = None) -> Alignment:
    """:func:`align` on sequences already encoded in ``scoring.alphabet``'s codes."""
    check_choice("mode", mode, MODES)
    check_choice("algorithm", algorithm, ALGORITHMS)
    threads = resolve_threads(threads)
    long_pair = _long_pair(q, t, scoring, backend)
    if mode == "full":
        from .traceback import align_codes
        return align_codes(q, t, scoring, algorithm, engine=long_pair, threads=threads)
    if long_pair is not None:
        score, qe, te = long_pair.score_end(ALGORITHM_CODES[algorithm])
    else:
        engine = engine_for("align", backend)
        handle = engine.prepare(TargetSet.from_list([t]))
        batch = engine.scan(q, handle, scoring, algorithm=algorithm, ends=mode == "end")
        score = int(batch.scores[0])
        qe = int(batch.query_ends[0]) if batch.query_ends is not None else None
        te = int(batch.target_ends[0]) if batch.target_ends is not None else None
    if mode == "score":
        return Alignment(score=score, algorithm=algorithm)
    return Alignment(score=score, query_end=qe, target_end=te, algorithm=algorithm)


def _long_pair(q: np.ndarray, t: np.ndarray, scoring: Scoring, backend: str):
    """The GPU long-pair engine for a pair of at least LONG_PAIR_CELLS cells on CUDA, else None."""
    if q.size * t.size < LONG_PAIR_CELLS or backend_for("align", backend) != "cuda":
        return None
    kernels = engine_for("align", "cuda", "long")
    if not kernels.supported(q.size, t.size, scoring):
        return None
    return kernels.LongPair(q, t, scoring)
