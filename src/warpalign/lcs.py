"""Longest common subsequence of two byte strings of any length, in linear space (paper 001).

``lcs_length`` runs the bit-parallel LLCS (Crochemore et al. / Allison–Dix, 64-bit words;
``_backends/cpu/lcs.py`` explains the recurrence, the backward form and how a DP row comes
out of the final bit-vector). ``lcs`` runs Hirschberg's recursion on top of it: a forward
vector over the first half of the split string and a backward vector over the second half
give the whole DP row of each side, the best crossing point splits the problem in two
independent halves, and so on down to the cut-offs of paper 001 §3.5 (re-measured here):

- ``TINY_CELLS``: plain DP with a full table and traceback;
- ``SMALL_WORDS``: one bit-parallel pass that keeps every column's bit-vector, then a
  traceback through the bits (no further halving);
- above: split the longer string in half (the other one is the bit-vector).

Parallelism is paper 001's task parallelism, level by level: the forward and backward
passes of every split of a level and every base case of that level are independent tasks
for a thread pool of ``threads`` workers (every kernel releases the GIL). ``lcs_length`` on
two or more threads is one split: forward over one half, backward over the other, and the
best crossing point's sum is the LLCS.

Memory is O(|a| + |b|): the inputs, a byte per symbol of ``a`` marking the LCS, bit-vectors
and carry bits of each level (|a|/8 + |b|/8 bytes in all), and per worker one 128 KiB
mask table plus a base-case matrix of at most ``SMALL_WORDS`` words.

Which LCS. When several exist the answer is deterministic and does not depend on the
cut-offs, the number of threads or the backend: it is the one on the DP's extreme optimal
path that, for every prefix of ``a``, uses the shortest possible prefix of ``b`` (equally:
for every prefix of ``b``, the longest prefix of ``a``). Tracebacks go from the corner
preferring to skip ``b[j-1]``, then the match, then skipping ``a[i-1]``; a split of ``a`` takes the
smallest crossing column of ``b``, a split of ``b`` the largest crossing row of ``a``.
For example ``lcs("abcde", "baexd")`` is ``"be"`` although "ad", "ae" and "bd" are LCSs too.

Backends. The registry's "lcs" row (``_backends/registry.py``) gives a module with the
interface ``_backends.base.LcsKernels``: ``final_vector(pattern, p_lo, p_hi, text, t_lo,
t_hi, backward) -> uint64 array`` with the CPU kernel's meaning, and ``MIN_CELLS`` (smaller
passes stay on the CPU): ``_backends/cpu/lcs.py`` or ``_backends/cuda/lcs.py``. The
recursion, base cases and splits stay on the host.
With ``backend="cuda"`` (or "auto" where a device answers) the passes of at least
``MIN_CELLS`` cells run on the GPU and the smaller ones, like every base case, on the CPU
threads meanwhile; ``lcs_length`` runs one GPU pass over the whole pair when it is that large.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np

from ._backends import resolve_threads
from ._backends.cpu import lcs as _cpu
from ._backends.registry import backend_for, engine_for
from .alphabet import as_bytes_array
from .errors import AlphabetError

__all__ = ["Cutoffs", "lcs", "lcs_length"]

#: Subproblems of at most this many DP cells are solved by plain DP with a full table
#: (paper 001 uses plain DP below 96 × 256; bit-parallel passes win earlier here).
TINY_CELLS = 4096
#: Subproblems whose bit matrix ((|a|+1) × ceil(|b|/64) words) fits this are solved by one
#: bit-parallel pass keeping every column, then a traceback (4 MiB per worker).
SMALL_WORDS = 1 << 19
#: Below this many cells ``lcs_length`` uses one thread (starting threads costs more).
PARALLEL_CELLS = 1 << 24

@dataclass(frozen=True)
class Cutoffs:
    """Where :func:`lcs` and :func:`lcs_length` switch methods (the defaults are the module
    constants above; the answer is the same for any values, only the time changes).

    Attributes:
        tiny_cells: subproblems of at most this many cells: plain DP (:data:`TINY_CELLS`).
        small_words: bit matrices of at most this many words: one pass keeping every
            column (:data:`SMALL_WORDS`).
        gpu_cells: bit-parallel passes of at least this many cells run on the GPU (CUDA
            backend); None: the backend's ``MIN_CELLS``.
    """

    tiny_cells: int = TINY_CELLS
    small_words: int = SMALL_WORDS
    gpu_cells: int | None = None


RowKernel = Callable[[np.ndarray, int, int, np.ndarray, int, int, bool], np.ndarray]


@dataclass(frozen=True)
class _Engine:
    """Where the bit-parallel row passes run: ``final_vector`` for passes of at least
    ``min_cells`` cells, the CPU kernel below that."""

    name: str
    final_vector: RowKernel
    min_cells: int = 0
    tiny_cells: int = TINY_CELLS
    small_words: int = SMALL_WORDS

    def vector(self, pat, p_lo, p_hi, txt, t_lo, t_hi, backward) -> np.ndarray:
        if (p_hi - p_lo) * (t_hi - t_lo) >= self.min_cells:
            return self.final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, backward)
        return _cpu.final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, backward)


def _engine(backend: str, cutoffs: Cutoffs | None) -> _Engine:
    cutoffs = Cutoffs() if cutoffs is None else cutoffs
    name = backend_for("lcs", backend)
    kernels = engine_for("lcs", name)   # base.LcsKernels: cpu/lcs.py or cuda/lcs.py
    gpu_cells = kernels.MIN_CELLS if cutoffs.gpu_cells is None else cutoffs.gpu_cells
    return _Engine(name, kernels.final_vector, int(gpu_cells), int(cutoffs.tiny_cells),
                   int(cutoffs.small_words))


def _as_codes(seq: Any, which: str) -> np.ndarray:
    """Bytes of a sequence: str must hold only code points < 256 (latin-1, one byte each)."""
    if isinstance(seq, str):
        try:
            return np.frombuffer(seq.encode("latin-1"), dtype=np.uint8)
        except UnicodeEncodeError as exc:
            ch = seq[exc.start]
            raise AlphabetError(
                f"{which}: position {exc.start}: character {ch!r} (U+{ord(ch):04X}) is not a "
                "byte; LCS strings must be latin-1 (code points 0..255), or pass bytes",
                record=which, position=exc.start, character=ch) from None
    return np.ascontiguousarray(as_bytes_array(seq))


def _as_result(codes: np.ndarray, like: Any):
    if isinstance(like, np.ndarray):
        return codes
    if isinstance(like, (bytes, bytearray, memoryview)):
        return codes.tobytes()
    return codes.tobytes().decode("latin-1")


def _llcs(a: np.ndarray, b: np.ndarray, engine: _Engine, threads: int) -> int:
    # The longer string is the text: each mask table is then reused over more steps.
    pat, txt = (a, b) if len(a) <= len(b) else (b, a)
    np_, nt = len(pat), len(txt)
    if np_ == 0:
        return 0
    if np_ * nt <= engine.tiny_cells:
        return _cpu.llcs_dp(pat, txt)
    on_gpu = engine.name != "cpu" and np_ * nt >= engine.min_cells
    if threads < 2 or np_ * nt < PARALLEL_CELLS or on_gpu:
        # One pass: on the GPU a single pass already fills the device.
        v = engine.vector(pat, 0, np_, txt, 0, nt, False)
        return int(_cpu.zeros_below(v, np_))
    mid = nt // 2
    with ThreadPoolExecutor(2) as pool:
        f1 = pool.submit(engine.vector, pat, 0, np_, txt, 0, mid, False)
        f2 = pool.submit(engine.vector, pat, 0, np_, txt, mid, nt, True)
        v1, v2 = f1.result(), f2.result()
    return int(_cpu.best_split(v1, v2, np_, False)[1])


def _lcs_mask(a: np.ndarray, b: np.ndarray, engine: _Engine, threads: int) -> np.ndarray:
    """mask[i] = 1 for the symbols a[i] of the LCS (Hirschberg, level by level)."""
    mask = np.zeros(len(a), np.uint8)
    problems = [(0, len(a), 0, len(b))]
    with ThreadPoolExecutor(threads) as pool:
        while problems:
            base, splits = [], []
            for (a0, a1, b0, b1) in problems:
                na, nb = a1 - a0, b1 - b0
                if na == 0 or nb == 0:
                    continue
                if na * nb <= engine.tiny_cells or max(na, nb) < 2:
                    base.append((na * nb, _cpu.lcs_base_dp, (a, a0, a1, b, b0, b1, mask)))
                elif (na + 1) * ((nb + 63) // 64) <= engine.small_words:
                    base.append((na * nb, _cpu.lcs_base_bits, (a, a0, a1, b, b0, b1, mask)))
                else:
                    splits.append((a0, a1, b0, b1))
            jobs = []   # biggest first, so the pool's tail is short
            for (a0, a1, b0, b1) in splits:
                if a1 - a0 >= b1 - b0:   # split a: b is the bit-vector
                    mid = (a0 + a1) // 2
                    args = ((b, b0, b1, a, a0, mid), (b, b0, b1, a, mid, a1))
                else:                    # split b: a is the bit-vector
                    mid = (b0 + b1) // 2
                    args = ((a, a0, a1, b, b0, mid), (a, a0, a1, b, mid, b1))
                cells = (a1 - a0) * (b1 - b0)
                jobs.append((cells, engine.vector, args[0] + (False,)))
                jobs.append((cells, engine.vector, args[1] + (True,)))
            order = sorted(range(len(base) + len(jobs)),
                           key=lambda k: -(base + jobs)[k][0])
            tasks = base + jobs
            futures = [None] * len(tasks)
            for k in order:
                _, fn, args = tasks[k]
                futures[k] = pool.submit(fn, *args)
            for f in futures[:len(base)]:
                f.result()
            problems = []
            for s, (a0, a1, b0, b1) in enumerate(splits):
                v1 = futures[len(base) + 2 * s].result()
                v2 = futures[len(base) + 2 * s + 1].result()
                if a1 - a0 >= b1 - b0:
                    mid = (a0 + a1) // 2
                    k, _ = _cpu.best_split(v1, v2, b1 - b0, False)
                    problems += [(a0, mid, b0, b0 + k), (mid, a1, b0 + k, b1)]
                else:
                    mid = (b0 + b1) // 2
                    k, _ = _cpu.best_split(v1, v2, a1 - a0, True)
                    problems += [(a0, a0 + k, b0, mid), (a0 + k, a1, mid, b1)]
    return mask


@overload
def lcs(a: str, b: Any, *, backend: str = ..., threads: int | None = ...,
        cutoffs: Cutoffs | None = ...) -> str: ...
@overload
def lcs(a: bytes, b: Any, *, backend: str = ..., threads: int | None = ...,
        cutoffs: Cutoffs | None = ...) -> bytes: ...
@overload
def lcs(a: np.ndarray, b: Any, *, backend: str = ..., threads: int | None = ...,
        cutoffs: Cutoffs | None = ...) -> np.ndarray: ...


def lcs(a, b, *, backend: Literal["auto", "cpu", "cuda"] = "auto", threads: int | None = None,
        cutoffs: Cutoffs | None = None):
    """A longest common subsequence of two byte strings, in O(|a| + |b|) memory.

    Args:
        a, b: ``str`` (code points 0..255, i.e. latin-1; anything above raises
            ``AlphabetError``), ``bytes``/``bytearray``, a ``uint8`` NumPy array, or a
            Biopython ``Seq``/``SeqRecord``. All 256 byte values are symbols; case matters.
            A ``str`` is the text itself, never a file name (any text is a byte string);
            read a file's bytes to compare files.
        backend: "auto" (CUDA when its LCS kernel and a device are there, else CPU), "cpu"
            or "cuda" (raises ``BackendUnavailable`` saying why when it cannot run).
        threads: worker threads (default: ``NUMBA_NUM_THREADS`` when set, else every core
            this process may use).
        cutoffs: where the methods switch (:class:`Cutoffs`; default its defaults).

    Returns:
        The LCS in the type of ``a``: ``str`` for ``str`` (and Biopython objects), ``bytes``
        for bytes-like, a ``uint8`` array for arrays. When several LCSs exist, the one
        described in the module docstring (deterministic, independent of threads/backend).

    Example:
        >>> lcs("abcdefghijkl", "cflorux")   # paper 001 §2.1 (its a..j lacks the "l")
        'cfl'
        >>> lcs(b"BCAEDAC", b"EABEDCBAAC")
        b'AEDAC'
    """
    engine = _engine(backend, cutoffs)
    nthreads = resolve_threads(threads)
    x, y = _as_codes(a, "a"), _as_codes(b, "b")
    mask = _lcs_mask(x, y, engine, nthreads)
    return _as_result(x[mask.view(bool)], a)


def lcs_length(a, b, *, backend: Literal["auto", "cpu", "cuda"] = "auto",
               threads: int | None = None, cutoffs: Cutoffs | None = None) -> int:
    """Length of the longest common subsequence (LLCS) of two byte strings.

    Same inputs as :func:`lcs`; bit-parallel, O(|a|·|b|/64) word steps, O(|a| + |b|) memory.

    Example:
        >>> lcs_length("BCAEDAC", "EABEDCBAAC")   # paper 001, Fig. 1
        5
    """
    engine = _engine(backend, cutoffs)
    nthreads = resolve_threads(threads)
    return _llcs(_as_codes(a, "a"), _as_codes(b, "b"), engine, nthreads)
