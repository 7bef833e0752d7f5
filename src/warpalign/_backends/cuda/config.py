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

* width 16: ``sw_s16x2``, two targets per group (one per 16-bit half), scores only; a
  target that may saturate is rescored by the width-32 multi-pass row.
* width 32: ``sw_s32``, one target per group; used for ``ends=True`` (coordinates by the
  tie rule), for scorings too large for 16 bits, and for rescoring.

Single-pass rows need ``group * regs >= max_len`` (one tile covers the bucket). Register
counts from ptxas (CUDA 13.0, sm_90, ``__launch_bounds__(256, 2)``: at most 128): s16x2
spills at regs=32 (single-pass) and regs=28 (multi-pass); s32 with ends uses 128 at 16.
"""

from __future__ import annotations

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


_ROWS = [
    # width 16 (two targets per group), bucket bound = group * regs
    (32, 4, 8, 16), (48, 4, 12, 16), (64, 4, 16, 16), (80, 4, 20, 16), (96, 4, 24, 16),
    (112, 4, 28, 16), (128, 8, 16, 16), (160, 8, 20, 16), (192, 8, 24, 16), (224, 8, 28, 16),
    (256, 16, 16, 16), (320, 16, 20, 16), (384, 16, 24, 16), (448, 16, 28, 16),
    (512, 32, 16, 16), (640, 32, 20, 16), (768, 32, 24, 16), (896, 32, 28, 16),
    (3072, 16, 24, 16),                      # multi-pass, one group per pair
    (None, 32, 24, 16),                      # chained multi-pass, one warp per tile
    # width 32 (one target per group)
    (64, 4, 16, 32), (128, 8, 16, 32), (256, 16, 16, 32), (512, 32, 16, 32),
    (None, 32, 16, 32),
]

TABLE: tuple[KernelConfig, ...] = tuple(KernelConfig(*row) for row in _ROWS)

BLOCK = 256          # threads per block (every kernel: __launch_bounds__(256, 2))
BLOCKS_PER_SM = 2
QPAD = 32            # query padding on each side; must match QPAD in search.cu


def rows(width: int) -> tuple[KernelConfig, ...]:
    """The rows of one width, bounded rows by increasing bound, the multi-pass row last."""
    sel = [c for c in TABLE if c.width == width]
    bounded = sorted((c for c in sel if c.max_len is not None), key=lambda c: c.max_len)
    last = [c for c in sel if c.max_len is None]
    if len(last) != 1:
        raise RuntimeError(f"config table needs exactly one unbounded row of width {width}")
    return (*bounded, last[0])


def kernel_name(cfg: KernelConfig, ends: bool = False) -> str:
    """The template instantiation a row launches (name_expressions use the same string)."""
    multi = "true" if cfg.multi else "false"
    if cfg.chained:
        return f"sw_s16x2_chain<{cfg.regs}>"
    if cfg.width == 16:
        return f"sw_s16x2<{cfg.group}, {cfg.regs}, {multi}>"
    return f"sw_s32<{cfg.group}, {cfg.regs}, {'true' if ends else 'false'}, {multi}>"


def all_kernel_names() -> tuple[str, ...]:
    names = [kernel_name(c) for c in rows(16)]
    for c in rows(32):
        names.append(kernel_name(c, ends=True))
        names.append(kernel_name(c, ends=False))
    return tuple(dict.fromkeys(names))


def _check() -> None:
    for c in TABLE:
        if c.group not in (2, 4, 8, 16, 32) or c.width not in (16, 32) or c.regs < 1:
            raise RuntimeError(f"bad kernel config row: {c}")
        if c.chained and c.group != 32:
            raise RuntimeError(f"row {c}: the chained kernel runs one warp (group 32) per tile")


_check()
