"""``score_pairs``: scores of many independent pairs (x_i, y_i) (paper 000).

The job validates and encodes the inputs, picks a backend and a method, calls the kernel
the registry has for them (``_backends/registry.py``; every kernel has the signature of
``_backends.base.PairKernel``, whatever the backend) and assembles a :class:`PairScores`.
Pairs a narrow kernel reports as saturated are rescored here with the exact 32-bit scalar
kernel and counted in ``PairScores.saturated``.

With ``threshold=tau`` the result also lists the pairs scoring at least tau and, with
``mode="full"``, their alignments, traced by the ``traceback`` engine of the backend (on
the GPU, from the codes already there; paper 000: filter fast, align the few), as an
:class:`~warpalign.results.AlignmentTable`.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

import numpy as np

from ._backends import ALGORITHMS, BACKENDS, check_choice, numba_threads, resolve_threads
from ._backends.cpu.pairwise import ALGORITHM_CODES, score_end
from ._backends.registry import backend_for, engine_for, has_engine, lookup
from .buffers import gather
from .choices import PAIRS_METHODS, PAIRS_MODES
from .errors import AlphabetError, NotComputed
from .offsets import running_sums, runs_within
from .results import Alignment, AlignmentTable
from .scoring import Scoring, check_input, needs_counts

MODES = PAIRS_MODES
METHODS = PAIRS_METHODS

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
        alignments: the alignments of the pairs in ``indices`` (``mode="full"`` only), an
            :class:`~warpalign.results.AlignmentTable`: a sequence of
            :class:`~warpalign.results.Alignment` (made when indexed) whose columns
            (``scores``, ``query_starts``, ..., ``cigar_text``/``cigar_offsets``,
            ``identities``, ``to_pandas()``) are read without an object per alignment.
        timings: seconds per step ("w2b", "swa", "b2w", "rescore", "align"; mode full:
            "ends" (local, on the GPU: the end cells' kernels, within "align", or with no
            threshold in the scoring's pass, beside "swa"; elsewhere "tb_ends"), and
            within "align" "tb_starts", "tb_paths", "tb_render"; local on the GPU
            "tb_align" for starts and paths in one pass where every pair's fits it).

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
                 alignments: AlignmentTable | list[Alignment] | None = None,
                 mode: str = "score",
                 timings: dict | None = None):
        scores = np.asarray(scores, dtype=np.int32)
        scores.setflags(write=False)
        if indices is not None:
            indices = np.asarray(indices, dtype=np.int64)
            indices.setflags(write=False)
        set_ = object.__setattr__
        set_(self, "_scores", scores)
        set_(self, "_indices", indices)
        if alignments is not None and not isinstance(alignments, AlignmentTable):
            alignments = AlignmentTable.from_alignments(alignments)
        set_(self, "_alignments", alignments)
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
    def alignments(self) -> AlignmentTable:
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
                threads: int | None = None, batch_residues: int | None = None) -> PairScores:
    """Score each pair (xs[i], ys[i]); lengths may differ between and within pairs.

    Input forms (``xs`` and ``ys`` each; they may differ). Sequences are characters (raw
    bytes: ``b"A"`` is 65, either case), never codes; every form gives the same scores:

    * a list of sequences (str, bytes, 1-D ``uint8`` arrays of characters, SeqRecords);
      a list of only ``str`` (or only ``bytes``) is joined in one step, without work per
      sequence in Python;
    * a 2-D NumPy ``uint8`` array, one row a sequence (all of one length);
    * a :class:`~warpalign.buffers.SequenceBuffer`: one buffer of characters and the
      offsets of the sequences in it;
    * a CuPy ``uint8`` array (2-D, or the buffer of a ``SequenceBuffer``) on the GPU: read
      there without a copy to the host (backend "cuda"; "auto" then means "cuda"). The CPU
      backend refuses device arrays (pass ``cupy.asnumpy(xs)``): copying silently would
      hide a transfer;
    * a FASTA/FASTQ path, or anything else :func:`~warpalign.io.load_sequences` reads.

    Characters are encoded by the alphabet's table on the backend that scores them (on the
    CPU in one pass; on the GPU after the copy up through pinned staging buffers, or where
    a CuPy array already is). When both sides are CuPy arrays and the scoring is local
    DNA with linear gaps (16-bit word-wise lanes), a batch is encoded and scored by the
    plan of A C G T codes and read back once (flags, scores and saturation count
    together); an N or another IUPAC code seen by the encode makes the kernels write
    nothing and the batch is scored again as planned for its codes, a bad character is
    named as in every other form.
    Pairs are scored in batches of at most ``batch_residues`` residues (xs and ys
    together; the next batch is encoded and copied while one is scored), so that inputs
    larger than the GPU's memory stream through it.

    Args:
        xs: queries, in one of the forms above.
        ys: targets, as many as ``xs`` (semiglobal's free end gaps are on the target).
        scoring: the scoring scheme.
        threshold: report the indices of the pairs scoring at least this.
        mode: "score", or "full" to also align the reported pairs (all pairs without a
            threshold) on the same backend.
        method: "auto" (the fastest that can score the input), "bitsliced" (paper
            000's bitwise parallel bulk computation: DNA A/C/G/T, match/mismatch,
            linear gaps, local) or "wordwise" (one pair per SIMD lane, any scoring).
        backend: "auto", "cpu" or "cuda".
        algorithm: "local", "global" or "semiglobal".
        threads: CPU threads (the CPU kernels and the alignments of ``mode="full"``);
            default ``NUMBA_NUM_THREADS`` when set, else every core this process may use.
        batch_residues: residues per batch (a pair longer than this is a batch of its
            own); default :data:`BATCH_RESIDUES` of the backend (None: one batch).

    Returns:
        A :class:`PairScores` (scores in input order).

    Raises:
        ValueError: different numbers of xs and ys, an unknown option, a method that
            cannot score this input (e.g. "bitsliced" with affine gaps), or a CuPy array
            given to the CPU backend.
        InputError: a 2-D array or buffer that is not ``uint8``, offsets out of order.
        AlphabetError: a symbol outside the alphabet (naming the pair, position,
            character); for "bitsliced", any symbol other than A, C, G, T.
        BackendUnavailable: backend="cuda" where it cannot run.

    Example:
        >>> import numpy as np
        >>> from warpalign import Scoring
        >>> s = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
        >>> score_pairs(["TACTG", "ACGT"], ["GAACTGA", "ACGT"], s).scores.tolist()
        [8, 8]
        >>> xs = np.frombuffer(b"TACTGACGTA", np.uint8).reshape(2, 5)   # TACTG, ACGTA
        >>> score_pairs(xs, ["GAACTGA", "ACGT"], s).scores.tolist()
        [8, 8]
    """
    check_choice("mode", mode, MODES)
    check_choice("method", method, METHODS)
    check_choice("backend", backend, BACKENDS)
    check_choice("algorithm", algorithm, ALGORITHMS)
    _check_threshold(threshold)
    if batch_residues is not None and (isinstance(batch_residues, bool) or not isinstance(
            batch_residues, (int, np.integer)) or batch_residues < 1):
        raise ValueError(f"invalid batch_residues: {batch_residues!r}; expected an integer "
                         ">= 1 or None")
    threads = resolve_threads(threads)
    x = gather(xs, scoring.alphabet, "xs")
    y = gather(ys, scoring.alphabet, "ys")
    if len(x) != len(y):
        raise ValueError(f"xs and ys must hold as many sequences: got {len(x)} and {len(y)}")
    engine = resolve_backend(backend)
    if engine == "cpu":
        for side in (x, y):
            if side.on_device:
                raise ValueError(
                    f"{side.source} is a CuPy array on the GPU, but the backend is 'cpu' "
                    f"(backend={backend!r}): use backend='cuda', or pass "
                    f"cupy.asnumpy({side.source}) to score it on the CPU")
    if batch_residues is None:
        batch_residues = BATCH_RESIDUES[engine]
    table = scoring.alphabet.code_table
    check = scoring.alphabet.name != "bytes"
    counting = needs_counts(scoring)
    counts = np.zeros(scoring.alphabet.size, np.int64) if counting else None

    def sides(lo: int, hi: int):
        """Where pairs lo..hi-1 start in each side's characters, and those characters (the
        side itself where they are all of it: no slice, ~5 us each of a CuPy array)."""
        starts = [int(side.offsets[lo]) for side in (x, y)]
        ends = [int(side.offsets[hi]) for side in (x, y)]
        return starts, [side.raw if a == 0 and b == len(side.raw) else side.raw[a:b]
                        for side, a, b in zip((x, y), starts, ends)]

    def rebased(lo: int, hi: int, starts) -> list:
        """Each side's offsets of pairs lo..hi-1 from 0: views where the batch starts at
        0 (one batch: two new arrays of every pair cost ~0.1 ms before the GPU had work,
        issue 20; nothing writes into offsets)."""
        return [side.offsets[lo:hi + 1] - a if a else side.offsets[lo:hi + 1]
                for side, a in zip((x, y), starts)]

    def checked(lo: int, hi: int, starts, encoded, offsets=None):
        """Each side's (codes, offsets, largest code) from the encode engine's answer, the
        first bad character raised (the xs side's first); ``offsets``: each side's pairs
        lo..hi-1 from 0, where the caller made them already."""
        if offsets is None:
            offsets = rebased(lo, hi, starts)
        out = []
        for side, a, off, (codes, bad, counted, top) in zip((x, y), starts, offsets, encoded):
            if bad >= 0:
                raise side.bad_character(a + bad, scoring.alphabet)
            if counting:
                counts[:] += counted[:counts.size]
            out.append((codes, off, top))
        return out

    def prepare(lo: int, hi: int):
        """Both sides of pairs lo..hi-1 encoded (on this backend) in one engine call:
        (codes, offsets, largest code) each."""
        t0 = time.perf_counter()
        starts, raws = sides(lo, hi)
        # looked up here, not before the pairs_ahead engine's batches (~12 us of their
        # host time before the GPU's first work, session 40)
        encode = engine_for("encode", engine, "auto")
        with numba_threads(threads):
            encoded = encode(raws, table, check=check, counts=counting)
        return checked(lo, hi, starts, encoded), time.perf_counter() - t0

    def score(lo: int, batch, scored=None) -> PairScores:
        (xcodes, xoff, xtop), (ycodes, yoff, ytop) = batch
        return _score_codes(xcodes, xoff, ycodes, yoff, scoring, threshold=threshold,
                            mode=mode, method=method, engine=engine, algorithm=algorithm,
                            names=names, threads=threads, first=lo, tops=(xtop, ytop),
                            scored=scored, lengths=(x.length, y.length))

    def score_ahead(lo: int, hi: int) -> PairScores:
        """Pairs lo..hi-1 by the ``pairs_ahead`` engine: encoded and scored by the plan of
        codes below 4 with one read back. Where it kept no scores (a code >= 4: N, IUPAC)
        the same codes are scored as every other batch's are, planned after the flags
        (:func:`_score_codes`): the same scores either way (cuda/pairs_ahead.py says
        why)."""
        starts, raws = sides(lo, hi)
        offsets = rebased(lo, hi, starts)
        # y's codes only where the batch's alignments read them (mode "full")
        encoded, scored, timings = ahead.encode_and_score(raws, table, *offsets, scoring,
                                                          algorithm, check=check,
                                                          lengths=(x.length, y.length),
                                                          y_codes=mode == "full")
        batch = checked(lo, hi, starts, encoded, offsets)   # a bad character raises here
        if scored is not None:
            return score(lo, batch, scored=("wordwise", *scored, timings))
        part = score(lo, batch)
        for key, value in timings.items():   # the discarded pass's steps count too
            part.timings[key] = part.timings.get(key, 0.0) + value
        return part

    bounds = _batches(x.offsets, y.offsets, batch_residues)
    names = (x.name, y.name, x.first, y.first)
    ahead = _ahead_engine(engine, (x, y), scoring, algorithm, method, mode, threshold,
                          counting)
    parts = []
    with contextlib.ExitStack() as stack:
        pool = (stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="warpalign-pairs"))
                if len(bounds) > 1 and ahead is None else None)
        upcoming = pool.submit(prepare, *bounds[0]) if pool else None
        for k, (lo, hi) in enumerate(bounds):
            # the method for codes below 4: where "wordwise", the one chosen after the
            # flags whenever the engine keeps its scores (a code >= 4 rules out bitsliced)
            if ahead is not None and hi > lo and _choose_method(
                    method, engine, scoring, algorithm, None, x.offsets[lo:hi + 1], None,
                    y.offsets[lo:hi + 1], names, lo, (0, 0)) == "wordwise":
                parts.append(score_ahead(lo, hi))
                continue
            batch, seconds = upcoming.result() if pool else prepare(lo, hi)
            if pool and k + 1 < len(bounds):   # the next batch is encoded (and copied) now
                upcoming = pool.submit(prepare, *bounds[k + 1])
            part = score(lo, batch)
            part.timings["encode"] = part.timings.get("encode", 0.0) + seconds
            parts.append(part)
    if counting:
        check_input(scoring, (), f"{x.source} and {y.source}", counts=counts)
    return _merge(parts, method, engine, threshold, mode)


#: Residues (xs and ys together) per batch of :func:`score_pairs`, per backend (None: one
#: batch): bounds the device memory a call takes (~4 bytes a residue: codes, ww_dna's
#: packed columns, two staging chunks), and lets the next batch's copy overlap this one's
#: kernels. A batch must also fill the GPU: the pair kernels run one pair per lane, and
#: 32,768 pairs of 128 x 4,096 are only ~256 blocks; split in three batches of 2^26
#: residues (the old bound) the same pairs took 3.35 ms of kernel time instead of 2.15 ms
#: (H100, issue 22: the 'codes' baseline was one batch, every other input form three).
BATCH_RESIDUES = {"cpu": None, "cuda": 1 << 28}


def score_encoded(x_codes: Sequence[np.ndarray], y_codes: Sequence[np.ndarray], scoring: Scoring,
                  *, threshold: int | None = None, mode: str = "score", method: str = "auto",
                  backend: str = "auto", algorithm: str = "local",
                  names: tuple[list[str], list[str]] | None = None,
                  threads: int | None = None) -> PairScores:
    """:func:`score_pairs` on sequences already encoded in ``scoring.alphabet`` (a list of
    code arrays per side, scored in one batch)."""
    check_choice("mode", mode, MODES)
    check_choice("method", method, METHODS)
    check_choice("algorithm", algorithm, ALGORITHMS)
    _check_threshold(threshold)
    threads = resolve_threads(threads)
    if len(x_codes) != len(y_codes):
        raise ValueError(f"xs and ys must hold as many sequences: got {len(x_codes)} and "
                         f"{len(y_codes)}")
    xcodes, xoff = _concat(x_codes)
    ycodes, yoff = _concat(y_codes)
    engine = resolve_backend(backend)
    label = ((lambda i: names[0][i]), (lambda i: names[1][i]), 0, 0) if names else None
    part = _score_codes(xcodes, xoff, ycodes, yoff, scoring, threshold=threshold, mode=mode,
                        method=method, engine=engine, algorithm=algorithm, names=label,
                        threads=threads, first=0)
    return _merge([part], method, engine, threshold, mode)


def _score_codes(xcodes, xoff, ycodes, yoff, scoring: Scoring, *, threshold, mode, method,
                 engine, algorithm, names, threads, first, tops=None,
                 scored=None, lengths=(None, None)) -> PairScores:
    """One batch of encoded pairs (codes on the host, or on the device for "cuda");
    indices in the result are relative to the batch, ``first`` its first pair. ``tops``:
    the largest code of each side when the encode engine reported them (None: the codes
    are read for them where needed; on a device that is a reduction and a sync each).
    ``scored``: (method, scores, saturated pairs, timings) the ``pairs_ahead`` engine
    computed for these codes already (None: the method is chosen and its kernel run).
    ``lengths``: each side's one sequence length where the input says so (2-D arrays),
    else None (the chained pass then reads the offsets for its plan's key)."""
    tops = _Largest(xcodes, ycodes) if tops is None else tops
    chosen = scored[0] if scored is not None else _choose_method(
        method, engine, scoring, algorithm, xcodes, xoff, ycodes, yoff, names, first, tops)
    kernel = engine_for("pairs", engine, chosen) if scored is None else None
    largest = tops.known() if isinstance(tops, _Largest) else max(tops)
    # every pair aligned, local: scores and end cells in one pass where the backend has one
    fused = (lookup("pairs_full", engine, chosen)
             if mode == "full" and threshold is None and algorithm == "local" else None)
    if scored is not None and fused is not None:
        raise RuntimeError("internal error: scores given to a batch of the fused "
                           "scores-and-ends pass")
    # and where the backend chains it, the alignments traced where the ends are
    chained = lookup("pairs_aligned", engine, chosen) if fused is not None else None
    found = traced = None
    # the CPU kernels' prange loops on this thread's count (none runs for scores given)
    with numba_threads(threads) if scored is None else contextlib.nullcontext():
        if scored is not None:
            scores, saturated, timings = scored[1:]
        elif fused is None:
            scores, saturated, timings = kernel(xcodes, xoff, ycodes, yoff, scoring, algorithm,
                                                largest=largest)
        else:
            with _ends_bug(first):
                if chained is None:
                    scores, saturated, found, timings = fused(xcodes, xoff, ycodes, yoff,
                                                              scoring, largest=largest)
                else:
                    from .traceback import FULL_MATRIX_CELLS, printed_bytes
                    scores, saturated, found, timings, traced = chained(
                        xcodes, xoff, ycodes, yoff, scoring,
                        engine_for("traceback", engine, "auto"),
                        max_full_cells=FULL_MATRIX_CELLS, symbols=printed_bytes(scoring),
                        largest=largest, lengths=lengths)
            found = np.asarray(found, dtype=np.int64)     # the engine's own array
    scores = np.array(scores, dtype=np.int32)
    saturated = np.asarray(saturated, dtype=np.int64)
    if saturated.size:
        t0 = time.perf_counter()
        code = ALGORITHM_CODES[algorithm]
        xh, yh = _host(xcodes), _host(ycodes)
        for p in saturated.tolist():
            s, i, j = score_end(xh[xoff[p]:xoff[p + 1]], yh[yoff[p]:yoff[p + 1]],
                                scoring.matrix, scoring.gap_open, scoring.gap_extend, code)
            scores[p] = s
            if found is not None:   # the fused pass's end is of a wrong score: this one's
                found[p] = (s, i, j)
        timings["rescore"] = time.perf_counter() - t0
    indices = alignments = None
    if threshold is not None:
        indices = np.flatnonzero(scores >= threshold)
    elif mode == "full":
        indices = np.arange(len(scores))
    if traced is not None:          # every pair aligned on the device already
        from .traced import chained_table
        t0 = time.perf_counter()
        alignments = chained_table(found, traced)
        timings["align"] = time.perf_counter() - t0 + timings.get("tb_chain", 0.0)
    elif mode == "full":
        from .traceback import align_pairs_table
        t0 = time.perf_counter()
        # every pair, in order: views of the offsets and ends, no gathers
        pick = slice(None) if indices.size == len(scores) else indices
        ends = None if found is None else found[pick]
        ender = (lookup("pair_ends", engine, "wordwise")
                 if algorithm == "local" and found is None else None)
        if ender is not None:   # the end cells by the pair kernel (GPU): no tb_end pass
            wanted = np.zeros(scores.size, np.int64)
            wanted[indices] = scores[indices]
            with _ends_bug(first):
                found, seconds = ender(xcodes, xoff, ycodes, yoff, scoring, wanted,
                                       largest=largest)
            ends = found[pick]
            for key, value in seconds.items():
                timings[key] = timings.get(key, 0.0) + value
        # the codes stay where the kernel read them (on the GPU: no copy back)
        alignments = align_pairs_table(xcodes, xoff[:-1][pick], np.diff(xoff)[pick], ycodes,
                                       yoff[:-1][pick], np.diff(yoff)[pick], scoring,
                                       algorithm, engine=engine_for("traceback", engine, "auto"),
                                       threads=threads, timings=timings, ends=ends,
                                       largest=largest)
        differ = np.flatnonzero(alignments.scores != scores[pick])
        if differ.size:
            p = int(indices[differ[0]])
            raise RuntimeError(  # two engines disagree: a bug, never a result
                f"internal error: pair {first + p} scored {scores[p]} by {chosen} but "
                f"its alignment scores {int(alignments.scores[differ[0]])}")
        timings["align"] = time.perf_counter() - t0
    return PairScores(scores, method=chosen, backend=engine, saturated=saturated.size,
                      threshold=None if threshold is None else int(threshold),
                      indices=indices, alignments=alignments, mode=mode, timings=timings)


@contextlib.contextmanager
def _ends_bug(first: int):
    """The pair kernel's end cells finding no cell for a score of its own (a ValueError
    of the engine) is a bug, never a result: a RuntimeError naming the batch."""
    try:
        yield
    except ValueError as exc:
        raise RuntimeError(f"internal error: the pair kernel's end cells (batch from pair "
                           f"{first}): {exc}") from exc


def _merge(parts: list[PairScores], method: str, engine: str, threshold, mode) -> PairScores:
    """One PairScores from the batches' (in order); ``method``: the methods used, joined
    by "+" in order of first use when batches differ."""
    if len(parts) == 1:
        return parts[0]
    chosen = list(dict.fromkeys(p.method for p in parts)) or [method]
    sizes = np.cumsum([0] + [len(p) for p in parts])
    indices = alignments = None
    if threshold is not None or mode == "full":
        indices = np.concatenate([p.indices + start for p, start in zip(parts, sizes)]
                                 or [np.zeros(0, np.int64)])
    if mode == "full":
        alignments = AlignmentTable.concat([p.alignments for p in parts])
    timings: dict[str, float] = {}
    for p in parts:
        for key, value in p.timings.items():
            timings[key] = timings.get(key, 0.0) + value
    return PairScores(np.concatenate([p.scores for p in parts] or [np.zeros(0, np.int32)]),
                      method="+".join(chosen), backend=engine,
                      saturated=sum(p.saturated for p in parts),
                      threshold=None if threshold is None else int(threshold), indices=indices,
                      alignments=alignments, mode=mode, timings=timings)


def _batches(xoff: np.ndarray, yoff: np.ndarray, limit: int | None) -> list[tuple[int, int]]:
    """(lo, hi) pair ranges of at most ``limit`` residues each (x and y together), in order,
    covering every pair once (at least one range; a pair above the limit stands alone)."""
    n = xoff.size - 1
    if limit is None or n == 0 or int(xoff[-1] - xoff[0] + yoff[-1] - yoff[0]) <= limit:
        return [(0, n)]
    return runs_within(np.diff(xoff) + np.diff(yoff), int(limit))


def _check_threshold(threshold) -> None:
    if threshold is not None and (isinstance(threshold, bool)
                                  or not isinstance(threshold, (int, np.integer))):
        raise ValueError(f"invalid threshold: {threshold!r}; expected an integer or None")


def _host(codes) -> np.ndarray:
    """``codes`` on the host (a device array is copied)."""
    return codes if isinstance(codes, np.ndarray) else codes.get()


def resolve_backend(backend: str) -> str:
    """"cpu" or "cuda" for ``backend`` ("auto": CUDA when its pair kernels can run)."""
    return backend_for("pairs", backend)


def unsupported(method: str, scoring: Scoring, algorithm: str) -> str | None:
    """Why ``method`` cannot score with this scoring and algorithm (None when it can)."""
    if method == "bitsliced":
        from ._backends.cpu.bitsliced import unsupported as why
        return why(scoring, algorithm)
    return None


def _choose_method(method, backend, scoring, algorithm, xcodes, xoff, ycodes, yoff, names,
                   first, tops) -> str:
    """The method for this batch; ``tops``: the largest code of each side (a pair, or a
    :class:`_Largest` that reads the codes where asked)."""
    if method == "bitsliced":
        why = unsupported("bitsliced", scoring, algorithm)
        if why is not None:
            raise ValueError(f"method 'bitsliced' cannot score this input: {why}; "
                             f"use method='wordwise' or 'auto'")
        _check_acgt(xcodes, xoff, ycodes, yoff, scoring, names, first, tops)
        return method
    if method != "auto":
        return method
    longest = None                    # read only when a row of the table has a bound
    speed = {}
    for b, meth, max_length, gcups in AUTO_TABLE:
        if b != backend or not has_engine("pairs", backend, meth) or meth in speed:
            continue
        if max_length is not None:
            if longest is None:
                longest = int(max(np.diff(xoff).max(initial=0), np.diff(yoff).max(initial=0)))
            if longest > max_length:
                continue
        if unsupported(meth, scoring, algorithm) is not None:
            continue
        if meth == "bitsliced" and (tops[0] >= 4 or tops[1] >= 4):
            continue
        speed[meth] = gcups
    return max(speed, key=speed.get) if speed else "wordwise"


def _ahead_engine(engine: str, sides, scoring: Scoring, algorithm: str, method: str,
                  mode: str, threshold, counting: bool):
    """The ``pairs_ahead`` engine (encode and score with one read back, planned before the
    encode's flags are read) when this call may use it, else None: "cuda", every side's
    characters on the device (CuPy), a method that may be word-wise, no counts wanted,
    not the fused scores-and-ends pass (mode "full" without a threshold), and a scoring
    it takes (``applies``). Each batch still takes it only where the method chosen for
    codes below 4 is "wordwise"."""
    if (engine != "cuda" or counting or method not in ("auto", "wordwise")
            or (mode == "full" and threshold is None)
            or not all(side.on_device for side in sides)):
        return None
    ahead = lookup("pairs_ahead", engine, "wordwise")
    return ahead if ahead is not None and ahead.applies(scoring, algorithm) else None


def _largest(codes) -> int:
    """The largest code (0 for none); NumPy or CuPy (a reduction and a sync)."""
    return int(codes.max()) if codes.size else 0


class _Largest:
    """``tops[k]``: the largest code of side k (0: xs, 1: ys), read when first asked."""

    def __init__(self, *codes):
        self._codes = codes
        self._found: dict[int, int] = {}

    def __getitem__(self, k: int) -> int:
        if k not in self._found:
            self._found[k] = _largest(self._codes[k])
        return self._found[k]

    def known(self) -> int | None:
        """The largest code of both sides where both were read already, else None (the
        pair kernel then reads what it needs itself)."""
        return max(self._found.values()) if len(self._found) == 2 else None


def _check_acgt(xcodes, xoff, ycodes, yoff, scoring, names, first, tops) -> None:
    for k, (side, codes, off) in enumerate((("xs", xcodes, xoff), ("ys", ycodes, yoff))):
        if tops[k] < 4:
            continue
        at = int((codes >= 4).argmax())
        pair = int(np.searchsorted(off, at, side="right") - 1)
        pos = at - int(off[pair])
        char = scoring.alphabet.decode(_host(codes[at:at + 1]))
        name = names[k](first + pair) if names else None
        index = first + pair + (names[2 + k] if names else 0)
        record = f": record {name!r}," if name else ","   # as Gathered.bad_character
        raise AlphabetError(
            f"{side}[{index}]{record} position {pos} (0-based): character {char!r} cannot be "
            f"bitsliced (method 'bitsliced' takes A, C, G, T only; use method='wordwise' "
            f"or 'auto' for N and other IUPAC codes)",
            record=name if name else f"{side}[{index}]", position=pos, character=char)


def _concat(seqs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = running_sums([len(s) for s in seqs])
    codes = (np.concatenate([np.asarray(s, dtype=np.uint8) for s in seqs]) if len(seqs)
             else np.zeros(0, dtype=np.uint8))
    return np.ascontiguousarray(codes), offsets
