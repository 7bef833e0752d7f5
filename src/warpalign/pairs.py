"""``score_pairs``: scores of many independent pairs (x_i, y_i) (paper 000).

The job validates and encodes the inputs, picks a backend and a method, calls the kernel
the registry has for them (``_backends/registry.py``; every kernel has the signature of
``_backends.base.PairKernel``, whatever the backend) and assembles a :class:`PairScores`.
Pairs a narrow kernel reports as saturated are rescored here with the exact 32-bit scalar
kernel and counted in ``PairScores.saturated``.

With ``threshold=tau`` the result also lists the pairs scoring at least tau and, with
``mode="full"``, their alignments, traced on the CPU (paper 000: filter fast, align the
few).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ._backends import ALGORITHMS, BACKENDS, check_choice, numba_threads, resolve_threads
from ._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from ._backends.registry import backend_for, engine_for, has_engine
from .errors import AlphabetError, NotComputed
from .io import source_label
from .results import Alignment
from .scoring import Scoring, check_input

MODES = ("score", "full")
METHODS = ("auto", "bitsliced", "wordwise")

#: What ``method="auto"`` picks: per backend, the measured speed (GCUPS) of each method
#: on pairs whose longer sequence is at most ``max_length`` (None: no limit); the fastest
#: method that can score the input wins. The figures and their runs (CPU: n = 4,096 on the
#: 2-core development machine; CUDA: an H200 at n = 16,384) are in docs/gpu-notes.md,
#: "The method="auto" table", and bench/results/pairs_{cpu,gpu}.jsonl.
AUTO_TABLE = (
    # backend, method,      max_length, GCUPS
    ("cpu", "wordwise", None, 18.2),
    ("cpu", "bitsliced", None, 1.06),
    ("cuda", "wordwise", None, 8078.0),
    ("cuda", "bitsliced", None, 4624.0),
)


class PairScores:
    """Scores of pairs (x_i, y_i), in input order.

    Attributes:
        scores: int32 array, one score per pair (read-only).
        method: the method that computed them ("bitsliced" or "wordwise").
        backend: "cpu" or "cuda".
        saturated: pairs a narrow kernel flagged and that were rescored exactly.
        threshold: the threshold given, or None.
        indices: int64 array of the pairs scoring >= threshold, in input order (with
            ``mode="full"`` and no threshold: every pair).
        alignments: one :class:`~warpalign.results.Alignment` per entry of ``indices``
            (``mode="full"`` only).
        timings: seconds per step ("w2b", "swa", "b2w", "rescore", "align").

    Example:
        >>> from warpalign import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> r = score_pairs(["TACTG", "AAAA"], ["GAACTGA", "CCCC"], s, threshold=5, mode="full")
        >>> r.scores.tolist(), r.indices.tolist(), r.alignments[0].cigar
        ([8, 0], [0], '4M')
    """

    __slots__ = (
        "_alignments",
        "_indices",
        "_scores",
        "backend",
        "method",
        "mode",
        "saturated",
        "threshold",
        "timings",
    )

    def __init__(self, scores: np.ndarray, *, method: str, backend: str, saturated: int = 0,
                 threshold: int | None = None, indices: np.ndarray | None = None,
                 alignments: list[Alignment] | None = None, mode: str = "score",
                 timings: dict | None = None):
        scores = np.asarray(scores, dtype=np.int32)
        scores.setflags(write=False)
        if indices is not None:
            indices = np.asarray(indices, dtype=np.int64)
            indices.setflags(write=False)
        set_ = object.__setattr__
        set_(self, "_scores", scores)
        set_(self, "_indices", indices)
        set_(self, "_alignments", None if alignments is None else tuple(alignments))
        set_(self, "method", method)
        set_(self, "backend", backend)
        set_(self, "saturated", int(saturated))
        set_(self, "threshold", threshold)
        set_(self, "mode", mode)
        set_(self, "timings", dict(timings or {}))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("PairScores is read-only")

    @property
    def scores(self) -> np.ndarray:
        return self._scores

    @property
    def indices(self) -> np.ndarray:
        if self._indices is None:
            raise NotComputed("no threshold was given; pass threshold= (or mode='full')")
        return self._indices

    @property
    def alignments(self) -> tuple[Alignment, ...]:
        if self._alignments is None:
            raise NotComputed(f"alignments were not computed in mode={self.mode!r}; use mode='full'")
        return self._alignments

    def __len__(self) -> int:
        return len(self._scores)

    def __repr__(self) -> str:
        extra = "" if self._indices is None else f" above={len(self._indices)}"
        return (f"<PairScores n={len(self)} method={self.method!r} backend={self.backend!r}"
                f" saturated={self.saturated}{extra}>")


def score_pairs(xs: Any, ys: Any, scoring: Scoring, *, threshold: int | None = None,
                mode: Literal["score", "full"] = "score",
                method: Literal["auto", "bitsliced", "wordwise"] = "auto",
                backend: Literal["auto", "cpu", "cuda"] = "auto",
                algorithm: Literal["local", "global", "semiglobal"] = "local",
                threads: int | None = None) -> PairScores:
    """Score each pair (xs[i], ys[i]); lengths may differ between and within pairs.

    Args:
        xs: queries: a list of sequences (str, bytes, uint8 arrays of characters,
            SeqRecords) or a FASTA/FASTQ path.
        ys: targets, as many as ``xs`` (semiglobal's free end gaps are on the target).
        scoring: the scoring scheme.
        threshold: report the indices of the pairs scoring at least this.
        mode: "score", or "full" to also align the reported pairs (all pairs without a
            threshold) on the CPU.
        method: "auto" (the fastest that can score the input), "bitsliced" (paper
            000's bitwise parallel bulk computation: DNA A/C/G/T, match/mismatch,
            linear gaps, local) or "wordwise" (one pair per SIMD lane, any scoring).
        backend: "auto", "cpu" or "cuda".
        algorithm: "local", "global" or "semiglobal".
        threads: CPU threads (the CPU kernels and the alignments of ``mode="full"``);
            default ``NUMBA_NUM_THREADS`` when set, else every core this process may use.

    Returns:
        A :class:`PairScores` (scores in input order).

    Raises:
        ValueError: different numbers of xs and ys, an unknown option, or a method that
            cannot score this input (e.g. "bitsliced" with affine gaps).
        AlphabetError: a symbol outside the alphabet (naming the pair, position,
            character); for "bitsliced", any symbol other than A, C, G, T.
        BackendUnavailable: backend="cuda" where it cannot run.

    Example:
        >>> from warpalign import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> score_pairs(["TACTG", "ACGT"], ["GAACTGA", "ACGT"], s).scores.tolist()
        [8, 8]
    """
    check_choice("mode", mode, MODES)
    check_choice("method", method, METHODS)
    check_choice("backend", backend, BACKENDS)
    check_choice("algorithm", algorithm, ALGORITHMS)
    if threshold is not None and (isinstance(threshold, bool)
                                  or not isinstance(threshold, (int, np.integer))):
        raise ValueError(f"invalid threshold: {threshold!r}; expected an integer or None")
    resolve_threads(threads)
    x_names, x_codes = _encode(xs, scoring, "xs")
    y_names, y_codes = _encode(ys, scoring, "ys")
    check_input(scoring, [*x_codes, *y_codes],
                f"{source_label(xs, 'xs')} and {source_label(ys, 'ys')}")
    if len(x_codes) != len(y_codes):
        raise ValueError(f"xs and ys must hold as many sequences: got {len(x_codes)} and "
                         f"{len(y_codes)}")
    return score_encoded(x_codes, y_codes, scoring, threshold=threshold, mode=mode,
                         method=method, backend=backend, algorithm=algorithm,
                         names=(x_names, y_names), threads=threads)


def score_encoded(x_codes: Sequence[np.ndarray], y_codes: Sequence[np.ndarray], scoring: Scoring,
                  *, threshold: int | None = None, mode: str = "score", method: str = "auto",
                  backend: str = "auto", algorithm: str = "local",
                  names: tuple[list[str], list[str]] | None = None,
                  threads: int | None = None) -> PairScores:
    """:func:`score_pairs` on sequences already encoded in ``scoring.alphabet``."""
    check_choice("mode", mode, MODES)
    check_choice("method", method, METHODS)
    check_choice("algorithm", algorithm, ALGORITHMS)
    threads = resolve_threads(threads)
    if len(x_codes) != len(y_codes):
        raise ValueError(f"xs and ys must hold as many sequences: got {len(x_codes)} and "
                         f"{len(y_codes)}")
    xcodes, xoff = _concat(x_codes)
    ycodes, yoff = _concat(y_codes)
    engine = resolve_backend(backend)
    chosen = _choose_method(method, engine, scoring, algorithm, xcodes, xoff, ycodes, yoff,
                            names)
    kernel = engine_for("pairs", engine, chosen)
    with numba_threads(threads):   # the CPU kernels' prange loops (this thread's count)
        scores, saturated, timings = kernel(xcodes, xoff, ycodes, yoff, scoring, algorithm)
    scores = np.array(scores, dtype=np.int32)
    saturated = np.asarray(saturated, dtype=np.int64)
    if saturated.size:
        import time
        t0 = time.perf_counter()
        code = ALGORITHM_CODES[algorithm]
        for p in saturated.tolist():
            s, _, _ = score_end(xcodes[xoff[p]:xoff[p + 1]], ycodes[yoff[p]:yoff[p + 1]],
                                scoring.matrix, scoring.gap_open, scoring.gap_extend, code)
            scores[p] = s
        timings["rescore"] = time.perf_counter() - t0
    indices = alignments = None
    if threshold is not None:
        indices = np.flatnonzero(scores >= threshold)
    elif mode == "full":
        indices = np.arange(len(scores))
    if mode == "full":
        import time

        from .traceback import align_pairs
        t0 = time.perf_counter()
        picked = indices.tolist()
        alignments = align_pairs([(xcodes[xoff[p]:xoff[p + 1]], ycodes[yoff[p]:yoff[p + 1]])
                                  for p in picked], scoring, algorithm,
                                 engine=engine_for("traceback", engine, "auto"), threads=threads)
        for p, aln in zip(picked, alignments):
            if aln.score != scores[p]:
                raise RuntimeError(  # two engines disagree: a bug, never a result
                    f"internal error: pair {p} scored {scores[p]} by {chosen} but its "
                    f"alignment scores {aln.score}")
        timings["align"] = time.perf_counter() - t0
    return PairScores(scores, method=chosen, backend=engine, saturated=saturated.size,
                      threshold=None if threshold is None else int(threshold),
                      indices=indices, alignments=alignments, mode=mode, timings=timings)


def resolve_backend(backend: str) -> str:
    """"cpu" or "cuda" for ``backend`` ("auto": CUDA when its pair kernels can run)."""
    return backend_for("pairs", backend)


def unsupported(method: str, scoring: Scoring, algorithm: str) -> str | None:
    """Why ``method`` cannot score with this scoring and algorithm (None when it can)."""
    if method == "bitsliced":
        from ._backends.cpu.bitsliced import unsupported as why
        return why(scoring, algorithm)
    return None


def _choose_method(method, backend, scoring, algorithm, xcodes, xoff, ycodes, yoff, names) -> str:
    if method == "bitsliced":
        why = unsupported("bitsliced", scoring, algorithm)
        if why is not None:
            raise ValueError(f"method 'bitsliced' cannot score this input: {why}; "
                             f"use method='wordwise' or 'auto'")
        _check_acgt(xcodes, xoff, ycodes, yoff, scoring, names)
        return method
    if method != "auto":
        return method
    longest = int(max(np.diff(xoff).max(initial=0), np.diff(yoff).max(initial=0)))
    speed = {}
    for b, meth, max_length, gcups in AUTO_TABLE:
        if b != backend or not has_engine("pairs", backend, meth) or meth in speed:
            continue
        if max_length is not None and longest > max_length:
            continue
        if unsupported(meth, scoring, algorithm) is not None:
            continue
        if meth == "bitsliced" and not _all_acgt(xcodes, ycodes):
            continue
        speed[meth] = gcups
    return max(speed, key=speed.get) if speed else "wordwise"


def _all_acgt(xcodes: np.ndarray, ycodes: np.ndarray) -> bool:
    return int(xcodes.max(initial=0)) < 4 and int(ycodes.max(initial=0)) < 4


def _check_acgt(xcodes, xoff, ycodes, yoff, scoring, names) -> None:
    for side, codes, off in (("xs", xcodes, xoff), ("ys", ycodes, yoff)):
        bad = np.flatnonzero(codes >= 4)
        if bad.size:
            at = int(bad[0])
            pair = int(np.searchsorted(off, at, side="right") - 1)
            pos = at - int(off[pair])
            char = scoring.alphabet.decode(codes[at:at + 1])
            name = names[0 if side == "xs" else 1][pair] if names else None
            record = f" (record {name!r})" if name else ""
            raise AlphabetError(
                f"{side}[{pair}]{record}, position {pos}: character {char!r} cannot be "
                f"bitsliced (method 'bitsliced' takes A, C, G, T only; use method='wordwise' "
                f"or 'auto' for N and other IUPAC codes)",
                record=name if name else f"{side}[{pair}]", position=pos, character=char)


def _encode(seqs: Any, scoring: Scoring, side: str) -> tuple[list[str], list[np.ndarray]]:
    """Encode one side; an AlphabetError names the pair index and its record."""
    from .io import collect, load_sequences

    try:
        return load_sequences(seqs, scoring.alphabet)
    except AlphabetError as exc:
        names = collect(seqs, scoring.alphabet)[0]
        index = names.index(exc.record) if exc.record in names else None
        where = f"{side}[{index}]" if index is not None else side
        raise AlphabetError(f"{where}: {exc}", record=exc.record, position=exc.position,
                            character=exc.character) from None


def _concat(seqs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(seqs) + 1, dtype=np.int64)
    if len(seqs):
        np.cumsum([len(s) for s in seqs], out=offsets[1:])
        codes = np.concatenate([np.asarray(s, dtype=np.uint8) for s in seqs])
    else:
        codes = np.zeros(0, dtype=np.uint8)
    return np.ascontiguousarray(codes), offsets
