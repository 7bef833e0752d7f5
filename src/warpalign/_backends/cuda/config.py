"""Kernel configurations of the CUDA search backend: one table of rows.

Each row is a length bucket and the kernel that scores it: targets of length at most
``max_len`` (and above the previous row's bound of the same width) run with groups of
``group`` lanes, ``regs`` target columns per lane held in registers, in ``width``-bit
lanes. A row is single-pass when one tile (``group * regs`` columns) covers its bound and
multi-pass otherwise. ``max_len=None`` closes a width's rows with no length cap; for
width 16 that row is the *chained* kernel (``group`` must be 32): each tile of a long
target pair is its own work item, tiles of one pair run on different warps at once and
hand their boundary column on through global memory, so a 35,000-residue target no
longer serializes a whole search on one warp.

* width 16: ``sw_s16x2r2``, two targets per group (one per 16-bit half), two query rows
  per step, scores only; a target that may saturate is rescored by the width-32
  multi-pass row. (The cell updates that lost to it are in docs/gpu-notes.md.)
* width 32: ``sw_s32``, one target per group; used for ``ends=True`` (coordinates by the
  tie rule), for scorings too large for 16 bits, and for rescoring; and for every global
  and semiglobal alignment (template argument ALG, scores and ends, no 16-bit pass).

Single-pass rows need ``group * regs >= max_len`` (one tile covers the bucket). Register
counts from ptxas (CUDA 13.0, sm_90, ``__launch_bounds__(256, 2)``: at most 128): s16x2
spills at regs=32 (single-pass) and regs=28 (multi-pass); s32 with ends uses 128 at 16.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class KernelConfig:
    max_len: int | None
    group: int
    regs: int
    width: int

    @property
    def multi(self) -> bool:
        return self.max_len is None or self.group * self.regs < self.max_len

    @property
    def chained(self) -> bool:
        return self.max_len is None and self.width == 16


def _fine_rows():
    """Width-16 single-pass rows with fine bounds: a target is padded to its bucket's bound
    (the tile), so the step between bounds is the waste (about half a step per target):
    8 columns for groups of 4, 16 for 8, 32 for 16 and 32 lanes."""
    rows = []
    for g, regs in ((4, range(2, 29, 2)), (8, range(16, 29, 2)), (16, range(16, 29, 2)),
                    (32, range(16, 29))):
        rows += [(g * r, g, r, 16) for r in regs]
    return rows


_ROWS = [
    *_fine_rows(),                           # width 16 (two targets per group), bound g*regs
    (3072, 16, 24, 16),                      # multi-pass, one group per pair
    (None, 32, 24, 16),                      # chained multi-pass, one warp per tile
    # width 32 (one target per group)
    (64, 4, 16, 32), (128, 8, 16, 32), (256, 16, 16, 32), (512, 32, 16, 32),
    (None, 32, 16, 32),
]

TABLE: tuple[KernelConfig, ...] = tuple(KernelConfig(*row) for row in _ROWS)

BLOCK = 256          # threads per block (every kernel: __launch_bounds__(256, 2))
BLOCKS_PER_SM = 2
R2_BLOCK = 256       # threads per block of the width-16 kernels (sw_s16x2r2, its chain)
QPAD = 64            # query padding on each side; must match QPAD in search.cu


def rows_stride(R: int) -> int:
    """Words per lane segment of the profile: a multiple of 4 with an odd count of 16-byte
    chunks, so the 8 lanes of each LDS.128 phase hit 8 different bank groups."""
    c = -(-R // 4)
    return 4 * (c + 1 if c % 2 == 0 else c)


# Packed-batch row kernel (sw_rowsqb<R>, pack_plan: several queries per 16-bit half, R
# query rows per lane, R >= 4). Targets stream back to back per group (guided sizes:
# remaining columns / (PAIR_GUIDE * warps), at least PAIR_GROUP_MIN), so the wavefront
# fills once per group. The search loop runs batches of >= 2 local queries through it.
PAIR_REGS = tuple(range(4, 29))
PAIR_GROUP_MIN = 2048
# A streamed search's chunks and tail (cuda/streamed.py) end their groups at
# CHUNK_GROUP_MIN columns: each chunk's passes drain on their own (the resident search's
# one drain per pass is paid per chunk), and smaller last groups shorten the drains.
# Measured on an H100 (bench/search_stream.py, 19 chunks, before chunks ran beside each
# other, one group_min for both), streamed / resident GCUPS at group_min 2048 (the
# resident default) / 512 / 256 / 128 / 64: 81.4 / 86.9 / 88.4 / 88.3 / 88.6%, the
# resident search unchanged within 0.4%. With two chunks side by side (28 chunks and a
# tail), chunk_group_min 256 / 1024: 89.6 / 91.3% (H100, one run each).
CHUNK_GROUP_MIN = 1024
# The top-k cut of a batch of queries in one kernel (search.cu top_select,
# CudaBackend._queue_cut): one block of SELECT_THREADS (= TOP_THREADS there) per query,
# each thread's strided targets a group, for top_k up to SELECT_MAX_K (above it, query by
# query); at most select_cap(top_k) candidates per query come back in the one copy (a
# query with more, e.g. heavy ties at the bound, is cut on its own).
SELECT_THREADS = 1024
SELECT_MAX_K = 256


def select_cap(top_k: int) -> int:
    return max(64, 4 * top_k)


PAIR_GUIDE = 2
# The search loop (CudaBackend.search_batches, resident handles, local scores) packs a
# batch of >= 2 queries into sw_rowsqb when the plan's rows are at least PACK_MIN_FILL
# query rows (the rest is padding; below it, e.g. two queries of very unequal length,
# each query runs alone through the 16-bit target-per-lane kernels). Batches
# hold at most PACK_SCORE_BYTES of scores and flags (8 bytes per query and target).
# Measured on an H200, the 20 standard queries (fill 0.97) vs the Swiss-Prot-sized
# database: 5,004 GCUPS packed, 4,101 one query at a time (docs/gpu-notes.md).
PACK_MIN_FILL = 0.85
PACK_SCORE_BYTES = 1 << 30
#: The share of the last packed batch's queries that :func:`split_tail` makes a batch of
#: their own when a search reports ends or alignments.
TAIL_SHARE = 0.25
# A batch may run as query groups at once, one stream each (chain_groups): a target is
# scanned by one warp at a time, pass after pass, and each pass ends when its last warp
# does. Measured on an H100 (docs/gpu-notes.md, session 12), the 20 standard queries:
# on a quarter of the Swiss-Prot-sized database (one GPU's shard of four) one group took
# 0.415-0.433 s, two 0.387, three 0.387, four 0.394; on all of it 1.546 / 1.504 / - / 1.535.
# CHAIN_SPEED: a warp alone on its chain over the average warp of a full GPU (fitted to
# the shard with the 35,213-residue target); PASS_TAIL: what one group loses to pass
# tails that a second stream fills (the whole database, one vs two groups).
CHAIN_SPEED = 1.4
PASS_TAIL = 0.025
CHAIN_GROUPS = 4
# search.cu's CHAIN_TIMEOUT_NS: how long a chained tile waits for the tile before it
CHAIN_TIMEOUT_S = 10
MEMORY_RESERVE = 1 << 30   # device bytes a search leaves free when adding group buffers
# Default residency (CudaBackend.resident_budget): a resident target set costs about
# RESIDENT_BYTES per residue (codes, the packed kernel's target stream, one boundary-row
# buffer of 8 bytes) and SEQUENCE_BYTES per sequence (offsets, bucket and stream ids, a
# batch's scores); RESIDENT_RESERVE stays free for a batch's score buffers and the rest.
RESIDENT_BYTES = 12
SEQUENCE_BYTES = 64
RESIDENT_RESERVE = 4 << 30
def pack_plan(lengths, kp: int, smem_limit: int):
    """Packed batch (sw_rowsqb<R>): (R, passes, halves). Each query of m > 0 rows takes
    ceil(m / R) * R rows of one half, longest first into the half with fewer rows so far;
    halves[h] lists (query index, rows) in row order (tuples). R minimizes the estimated
    cost: padded rows x (6.1 + 37 / R) instructions per cell pair (sw_rowsq2k2's SASS: 7.43
    at R = 28, the per-step prologue ~37). Remembered per lengths: every device of a
    multi-GPU search plans the same batch (~150 us of Python each, taken in turns under
    the GIL), and a streamed search's chunks plan the same batches again (:data:`PLANS_KEPT`)."""
    return _pack_plan(tuple(int(m) for m in lengths), kp, smem_limit)


#: Pack plans and chain-group candidates remembered (least recently used out). A streamed
#: search plans its batches in every chunk, at most a power of two queries a batch with the
#: power set by the chunk's target count: the 500 mmseqs2 queries' batches at every power
#: from 4 to 256 are ~2,000 plans (groups included) and ~220 candidate sets, ~3 MB. With 256
#: and 64 kept, a one-GPU streamed search at 1/32 of the resident cost made 720 plans for
#: its 685 batches (0.47 s of its thread's Python; session 27 call J's profile).
PLANS_KEPT = 4096
GROUP_COSTS_KEPT = 512


@functools.lru_cache(maxsize=PLANS_KEPT)
def _pack_plan(lengths: tuple, kp: int, smem_limit: int):
    fits = [r for r in PAIR_REGS if kp * 32 * rows_stride(r) * 4 <= smem_limit]
    if not fits:
        raise ValueError(f"the two-query profile of {kp} letters does not fit shared memory")
    order = sorted((i for i, m in enumerate(lengths) if m > 0), key=lambda i: -lengths[i])
    best = None
    for R in fits:
        halves, rows = ([], []), [0, 0]
        for i in order:
            h = 0 if rows[0] <= rows[1] else 1
            k = -(-lengths[i] // R) * R
            halves[h].append((i, k))
            rows[h] += k
        passes = max(1, -(-max(rows) // (32 * R)))
        cost = pack_cost(R, passes)
        if best is None or cost < best[0]:
            best = (cost, R, passes, (tuple(halves[0]), tuple(halves[1])))
    return best[1:]


def pack_batches(lengths, kp: int, per_batch: int, smem_limit: int) -> list[list[int]]:
    """Query index batches for the packed kernel, in input order, at most ``per_batch``
    queries each (``lengths``: the queries' lengths; ``kp``: the scoring's letters + 1); a
    batch whose :func:`pack_plan` fills less than PACK_MIN_FILL of its rows with query
    rows, or whose profile does not fit ``smem_limit``, is returned as single queries
    (run alone)."""
    per = max(1, int(per_batch))
    out = []
    for lo in range(0, len(lengths), per):
        batch = list(range(lo, min(lo + per, len(lengths))))
        out += [batch] if _packs(batch, lengths, kp, smem_limit) else [[i] for i in batch]
    return out


def _packs(batch: list[int], lengths, kp: int, smem_limit: int) -> bool:
    """Whether the queries ``batch`` (indices into ``lengths``) run as one packed batch:
    their profile fits ``smem_limit`` and :func:`pack_plan` fills at least PACK_MIN_FILL
    of its rows with query rows."""
    sizes = [int(lengths[i]) for i in batch]
    try:
        R, passes, _ = pack_plan(sizes, kp, smem_limit)
    except ValueError:      # the profile does not fit shared memory
        return False
    return sum(sizes) / (2 * passes * 32 * R) >= PACK_MIN_FILL


def split_tail(batches: list[list[int]], lengths, kp: int, smem_limit: int,
               share: float = TAIL_SHARE) -> list[list[int]]:
    """``batches`` (:func:`pack_batches`) with the last packed batch cut in two, its last
    ``share`` of queries (at least one) a batch of their own, where there are several
    batches and both pieces still pack (fill at least PACK_MIN_FILL); else ``batches``.

    Why: a search that reports ends or alignments ends with the last batch's end cells and
    tracing, which overlap nothing; the hits of the batches before it are traced on CPU
    threads beside the kernels of the next (a packed batch holds every SM until it ends:
    end cells queued on high-priority streams beside it waited 3.5 s, session 25 call C).
    A last batch of 250 of the 500 mmseqs2 queries left 0.28 s after the last kernel on
    one H100 (session 24, call E; 4.4 s of kernels); its last quarter on its own left
    0.17 s (session 25, call D), the three quarters before it traced on the CPU (0.21 s)
    within the quarter's kernels (1.0 s)."""
    packed = [k for k, b in enumerate(batches) if len(b) > 1]
    if len(batches) < 2 or not packed or packed[-1] != len(batches) - 1:
        return batches
    return batches[:-1] + cut_short(batches[-1], lengths, kp, smem_limit, share)


def cut_short(batch: list[int], lengths, kp: int, smem_limit: int,
              share: float = TAIL_SHARE) -> list[list[int]]:
    """A packed batch as two, its last ``share`` of queries (at least one) the second,
    where both pieces still pack (:func:`_packs`); else ``[batch]``. (:func:`split_tail`;
    a multi-device search whose caller ends the first piece's hits itself runs its one
    batch so: ``CudaBackend.iter_batches``, ``defer_ends``.)"""
    cut = len(batch) - max(1, int(round(len(batch) * share)))
    if cut < 2 or len(batch) - cut < 2:
        return [batch]
    pieces = [batch[:cut], batch[cut:]]
    if not all(_packs(piece, lengths, kp, smem_limit) for piece in pieces):
        return [batch]
    return pieces


def pack_cost(R: int, passes: int) -> float:
    """pack_plan's estimate of a packed batch's time, per target residue: padded rows x
    instructions per cell pair."""
    return passes * 32 * R * (6.1 + 37 / R)


def chain_groups(lengths, share: float, kp: int, smem_limit: int,
                 most: int = CHAIN_GROUPS) -> list[list[int]]:
    """Query groups (indices, ascending) to run a packed batch as, one stream each.
    ``share``: the longest target's length x resident warps / residues, the time of its
    one-warp chain over the time of the whole set on a full GPU (at equal warp speed).
    For k = 1 ... ``most`` groups (non-empty queries longest first, each to the group with
    the fewest rows so far; empty ones in group 0) the estimated time is
    max(sum of the groups' pack_cost, largest pack_cost x share / CHAIN_SPEED), one group
    paying PASS_TAIL more; the fastest k wins (fewer groups on a tie)."""
    best = None
    for k, (groups, costs) in enumerate(_group_costs(tuple(lengths), kp, smem_limit, most), 1):
        est = max(sum(costs), max(costs) * share / CHAIN_SPEED) * (1 + PASS_TAIL * (k == 1))
        if best is None or est < best[0]:
            best = (est, groups)
    groups = [list(g) for g in best[1]]
    groups[0] += [i for i, m in enumerate(lengths) if m == 0]
    return [sorted(g) for g in groups]


@functools.lru_cache(maxsize=GROUP_COSTS_KEPT)
def _group_costs(lengths: tuple, kp: int, smem_limit: int, most: int):
    """chain_groups' candidates, k = 1 ... most: (groups, pack_cost of each). The same for
    every device of a multi-GPU search (only the share differs), so computed once (the
    pack plans take about a millisecond of Python, which the device threads would take
    turns at under the GIL)."""
    full = sorted((i for i, m in enumerate(lengths) if m > 0), key=lambda i: -lengths[i])
    out = []
    for k in range(1, max(1, min(most, len(full))) + 1):
        groups, rows = [[] for _ in range(k)], [0] * k
        for i in full:
            g = rows.index(min(rows))
            groups[g].append(i)
            rows[g] += lengths[i]
        costs = tuple(pack_cost(*pack_plan([lengths[i] for i in g], kp, smem_limit)[:2])
                      for g in groups) if full else (0.0,)
        out.append((tuple(tuple(g) for g in groups), costs))
    return tuple(out)


def pack_kernel_name(R: int) -> str:
    return f"sw_rowsqb<{R}>"


def rows(width: int) -> tuple[KernelConfig, ...]:
    """The rows of one width, bounded rows by increasing bound, the multi-pass row last."""
    sel = [c for c in TABLE if c.width == width]
    bounded = sorted((c for c in sel if c.max_len is not None), key=lambda c: c.max_len)
    last = [c for c in sel if c.max_len is None]
    if len(last) != 1:
        raise RuntimeError(f"config table needs exactly one unbounded row of width {width}")
    return (*bounded, last[0])


ALG_CODES = {"local": 0, "global": 1, "semiglobal": 2}   # sw_s32's ALG template argument


def kernel_name(cfg: KernelConfig, ends: bool = False, algorithm: str = "local") -> str:
    """The template instantiation a row launches (name_expressions use the same string).
    Global and semiglobal run only in width 32 and always with ends (sw_s32<..., ALG>)."""
    multi = "true" if cfg.multi else "false"
    if algorithm != "local":
        if cfg.width != 32:
            raise ValueError(f"{algorithm} alignment runs in the width-32 kernel only")
        return f"sw_s32<{cfg.group}, {cfg.regs}, true, {multi}, {ALG_CODES[algorithm]}>"
    if cfg.chained:
        return f"sw_s16x2r2_chain<{cfg.regs}>"
    if cfg.width == 16:
        return f"sw_s16x2r2<{cfg.group}, {cfg.regs}, {multi}>"
    return f"sw_s32<{cfg.group}, {cfg.regs}, {'true' if ends else 'false'}, {multi}>"


def all_kernel_names() -> tuple[str, ...]:
    names = [kernel_name(c) for c in rows(16)]
    for c in rows(32):
        names.append(kernel_name(c, ends=True))
        names.append(kernel_name(c, ends=False))
        names += [kernel_name(c, True, a) for a in ("global", "semiglobal")]
    return tuple(dict.fromkeys(names))


def _check() -> None:
    for c in TABLE:
        if c.group not in (2, 4, 8, 16, 32) or c.width not in (16, 32) or c.regs < 1:
            raise RuntimeError(f"bad kernel config row: {c}")
        if c.chained and c.group != 32:
            raise RuntimeError(f"row {c}: the chained kernel runs one warp (group 32) per tile")


_check()


#: Largest pair (cells) whose end cell a packed search's mode "end" computes with one warp
#: (traceback.cu tb_end); larger ones go through the 32-bit end kernel, many warps a pair.
ONE_WARP_CELLS = 1 << 22


@dataclass(frozen=True)
class Tuning:
    """The packed search's switches, per backend (``CudaBackend(tuning=Tuning(...))``);
    the defaults are this module's constants (the measured best), other values serve tests
    and measurements: the same scores, another plan."""

    pair_group_min: int = PAIR_GROUP_MIN       # fewest columns in a target group
    chunk_group_min: int = CHUNK_GROUP_MIN     # the same in a streamed search's chunks
    pair_guide: int = PAIR_GUIDE               # guided group sizes: columns / (guide x warps)
    chain_groups: int = CHAIN_GROUPS           # most query groups a packed batch runs as
    pack_score_bytes: int = PACK_SCORE_BYTES   # most score and flag bytes a batch holds
    one_warp_cells: int = ONE_WARP_CELLS       # largest candidate pair whose end one warp finds


def resident_warps(multiprocessors: int) -> int:
    """Warps resident on a device of ``multiprocessors`` SMs at once (every kernel's
    occupancy: BLOCKS_PER_SM blocks of BLOCK threads)."""
    return int(multiprocessors) * BLOCKS_PER_SM * (BLOCK // 32)


def resident_budget(free_bytes: int, sequences: int = 0) -> int:
    """Residues of ``sequences`` targets that a device with ``free_bytes`` free can hold
    with a search's buffers (RESIDENT_BYTES per residue, SEQUENCE_BYTES per sequence,
    RESIDENT_RESERVE left free); never below 0."""
    spare = free_bytes - RESIDENT_RESERVE - sequences * SEQUENCE_BYTES
    return max(0, spare // RESIDENT_BYTES)


def chain_share(longest: int, residues: int, sms: int) -> float:
    """:func:`chain_groups`' ``share`` for a target set on a device of ``sms`` SMs."""
    return longest * resident_warps(sms) / max(residues, 1)


def device_chain_groups(lengths, share: float, kp: int, smem_limit: int, *, most: int,
                        buffers: int, residues: int, free_bytes) -> list[list[int]]:
    """:func:`chain_groups` on one device: at most ``most`` groups (its streams), and no
    more than boundary-row buffers (8 bytes per residue each) exist: ``buffers`` kept idle
    with the target set, plus what ``free_bytes()`` less MEMORY_RESERVE holds (asked only
    when more are wanted than kept: the query costs a driver call)."""
    groups = chain_groups(lengths, share, kp, smem_limit, most)
    have = max(1, buffers)
    if len(groups) > have:
        spare = free_bytes() - MEMORY_RESERVE
        fit = have + max(0, spare // (8 * max(residues, 1)))
        if fit < len(groups):
            groups = chain_groups(lengths, share, kp, smem_limit, fit)
    return groups
