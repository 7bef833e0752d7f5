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
passes of every split of a level and every base case of that level are independent. The
base cases and the small passes go to a thread pool of ``threads`` workers in a few groups
(every kernel releases the GIL); the large passes of the level go at once to the call's
resident runner (the GPU: both strings uploaded once per call, the level's passes as
descriptors in one launch per wave of bands that fit, one copy of the vectors back); then
the splits, again in groups. ``lcs_length`` on two or more threads is one split: forward
over one half, backward over the other, and the best crossing point's sum is the LLCS.

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
t_hi, backward) -> uint64 array`` with the CPU kernel's meaning and ``MIN_CELLS`` (smaller
single passes stay on the CPU), plus ``Resident(a, b)`` with ``final_vectors(passes)`` for a
level's passes of at least ``BATCH_MIN_CELLS`` cells (``_backends/lcs_plan.py`` describes
the pass rows): ``_backends/cpu/lcs.py`` or ``_backends/cuda/lcs.py``. The recursion, base
cases and splits stay on the host; the answer never depends on where a pass ran.
With ``backend="cuda"`` (or "auto" where a device answers) the passes of at least
``BATCH_MIN_CELLS`` cells of ``lcs`` run on the GPU, level by level, and the smaller ones,
like every base case, on the CPU threads meanwhile; ``lcs_length`` runs one GPU pass over
the whole pair when it has at least ``MIN_CELLS`` cells.
"""

from __future__ import annotations

from collections.abc import Callable
import heapq
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
            backend); None: the backend's ``MIN_CELLS`` for ``lcs_length``'s single pass
            and ``BATCH_MIN_CELLS`` for ``lcs``'s batched levels. Given with the CPU
            backend, ``lcs`` sends those passes through the CPU's batched stand-in
            (``_backends/cpu/lcs.Resident``): same answer, a check of the batching.
    """

    tiny_cells: int = TINY_CELLS
    small_words: int = SMALL_WORDS
    gpu_cells: int | None = None


RowKernel = Callable[[np.ndarray, int, int, np.ndarray, int, int, bool], np.ndarray]


@dataclass(frozen=True)
class _Engine:
    """Where the bit-parallel row passes run: ``final_vector`` for single passes of at least
    ``min_cells`` cells (``lcs_length``), the CPU kernel below that; for ``lcs``, a level's
    passes of at least ``batch_cells`` cells through one ``resident(a, b)`` runner of the
    call (None: every pass on the CPU threads)."""

    name: str
    final_vector: RowKernel
    min_cells: int = 0
    tiny_cells: int = TINY_CELLS
    small_words: int = SMALL_WORDS
    resident: Callable[[np.ndarray, np.ndarray], Any] | None = None
    batch_cells: int = 0

    def vector(self, pat, p_lo, p_hi, txt, t_lo, t_hi, backward) -> np.ndarray:
        if (p_hi - p_lo) * (t_hi - t_lo) >= self.min_cells:
            return self.final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, backward)
        return _cpu.final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, backward)


def _engine(backend: str, cutoffs: Cutoffs | None) -> _Engine:
    cutoffs = Cutoffs() if cutoffs is None else cutoffs
    name = backend_for("lcs", backend)
    kernels = engine_for("lcs", name)   # base.LcsKernels: cpu/lcs.py or cuda/lcs.py
    gpu_cells = kernels.MIN_CELLS if cutoffs.gpu_cells is None else cutoffs.gpu_cells
    batch_cells = (kernels.BATCH_MIN_CELLS if cutoffs.gpu_cells is None
                   else cutoffs.gpu_cells)
    return _Engine(name, kernels.final_vector, int(gpu_cells), int(cutoffs.tiny_cells),
                   int(cutoffs.small_words),
                   None if batch_cells is None else kernels.Resident,
                   0 if batch_cells is None else int(batch_cells))


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


def _submit(pool: ThreadPoolExecutor, tasks: list, groups: int):
    """Run ``tasks`` (cost, fn, args) on ``pool`` in at most ``groups`` groups (largest task
    first, each to the least loaded group: a few futures per level, not one per task).
    Returns (results in task order, filled as groups finish; the groups' futures)."""
    results = [None] * len(tasks)
    if not tasks:
        return results, []
    bins = [[] for _ in range(min(groups, len(tasks)))]
    heap = [(0, i) for i in range(len(bins))]
    for k in sorted(range(len(tasks)), key=lambda k: -tasks[k][0]):
        load, i = heapq.heappop(heap)
        bins[i].append(k)
        heapq.heappush(heap, (load + tasks[k][0], i))

    def run(ks):
        for k in ks:
            _, fn, args = tasks[k]
            results[k] = fn(*args)

    return results, [pool.submit(run, ks) for ks in bins]


def _level(problems, engine: _Engine, a: np.ndarray, b: np.ndarray, mask: np.ndarray):
    """Sort one level's problems into base cases (tasks solving into ``mask``) and splits
    (each with its forward and backward pass rows, ``lcs_plan``'s layout)."""
    base, splits, passes = [], [], []
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
            if na >= nb:   # split a: b is the bit-vector
                mid = (a0 + a1) // 2
                passes += [(0, b0, b1, a0, mid, 0), (0, b0, b1, mid, a1, 1)]
            else:          # split b: a is the bit-vector
                mid = (b0 + b1) // 2
                passes += [(1, a0, a1, b0, mid, 0), (1, a0, a1, mid, b1, 1)]
    return base, splits, passes


def _cpu_pass(a, b, pat_is_a, p_lo, p_hi, t_lo, t_hi, backward):
    pat, txt = (a, b) if pat_is_a else (b, a)
    return _cpu.final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, bool(backward))


def _split(v1, v2, a0, a1, b0, b1):
    """The two halves of a split problem from its forward and backward vectors."""
    if a1 - a0 >= b1 - b0:
        mid = (a0 + a1) // 2
        k, _ = _cpu.best_split(v1, v2, b1 - b0, False)
        return [(a0, mid, b0, b0 + k), (mid, a1, b0 + k, b1)]
    mid = (b0 + b1) // 2
    k, _ = _cpu.best_split(v1, v2, a1 - a0, True)
    return [(a0, a0 + k, b0, mid), (a0 + k, a1, mid, b1)]


def _lcs_mask(a: np.ndarray, b: np.ndarray, engine: _Engine, threads: int) -> np.ndarray:
    """mask[i] = 1 for the symbols a[i] of the LCS (Hirschberg, level by level).

    Per level: the base cases and the passes below ``engine.batch_cells`` go to the pool in
    a few groups; meanwhile this thread runs the larger passes, all at once, through the
    call's resident runner (the GPU: both strings uploaded once, one launch per wave, one
    copy back per level); then the splits, in groups on the pool."""
    mask = np.zeros(len(a), np.uint8)
    problems = [(0, len(a), 0, len(b))]
    groups = 4 * threads
    resident = None
    with ThreadPoolExecutor(threads) as pool:
        try:
            while problems:
                base, splits, passes = _level(problems, engine, a, b, mask)
                cells = [(p[2] - p[1]) * (p[4] - p[3]) for p in passes]
                batched = ([i for i, c in enumerate(cells) if c >= engine.batch_cells]
                           if engine.resident is not None else [])
                on_host = sorted(set(range(len(passes))) - set(batched))
                tasks = base + [(cells[i], _cpu_pass, (a, b) + tuple(passes[i]))
                                for i in on_host]
                results, futures = _submit(pool, tasks, groups)
                vectors = [None] * len(passes)
                if batched:
                    if resident is None:
                        resident = engine.resident(a, b)
                    for i, v in zip(batched,
                                    resident.final_vectors([passes[i] for i in batched])):
                        vectors[i] = v
                for f in futures:
                    f.result()
                for i, v in zip(on_host, results[len(base):]):
                    vectors[i] = v
                halves, futures = _submit(
                    pool, [(max(s[1] - s[0], s[3] - s[2]), _split,
                            (vectors[2 * k], vectors[2 * k + 1]) + s)
                           for k, s in enumerate(splits)], groups)
                for f in futures:
                    f.result()
                problems = [h for pair in halves for h in pair]
        finally:
            if resident is not None:
                resident.close()
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
