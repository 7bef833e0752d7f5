"""The windows kernel's plan and query profile (``windows.cu``), on the host and without a
device: rows per lane and lanes per item for a query (:func:`plan`), several queries packed
in the rows of one launch (:func:`pack_capacity`, :func:`pack_plan`, :func:`pack_rows`), and
the 16-bit profile in the kernel's chunk layout (:func:`profile`, :func:`profile_rows`).
:mod:`.windows` uploads and launches; these are pure NumPy, so the packing is tested on
the CPU.

**Packing.** A 150-row query fills 150 of the 256 rows of its item (R = 16, G = 16): 59% of
the kernel's cells are pad rows. Packed, queries of one length share one band of an item:
query k's rows begin at the first row of lane ``k * lanes`` (``lanes`` = ceil(m / R)), and
the kernel gives a query's first lane (a "head", bit ``k * lanes`` of ``heads``) the top
boundary H = 0 instead of the row above, so the queries' DPs never meet; their maxima are
reduced over their own lanes. Three 150-row queries fill 450 of 512 rows (R = 16, G = 32).
"""

from __future__ import annotations

import functools

import numpy as np

#: Largest |score|, gap_open or gap_extend the 16-bit kernel takes (else the 32-bit path).
NARROW_LIMIT = 4000
#: Rows per lane: 8 for queries up to this length, else 16 (bands of 512 rows). Kernel
#: time on an H200, 33.5 M reference, one wave of windows: m = 128: R = 16 (G = 8) 3,442
#: GCUPS vs R = 8 (G = 16) 3,320; m = 256: R = 16 (G = 16) 3,494 vs R = 8 (G = 32) 3,360.
R8_MAX_QUERY = 64

def supports(scoring) -> bool:
    """Whether the 16-bit windows kernel takes this scoring: small scores and penalties,
    and a profile band of (K + 1) codes x 512 rows within 48 KB of shared memory."""
    return facts(scoring).supported


def plan(m: int, rows: int | None = None) -> tuple[int, int, int]:
    """(rows per lane R, lanes per item G, bands) for a query of ``m`` symbols: G a power of
    two in 8..32, bands of G*R rows (G*R*2 bytes, a multiple of 128, is a profile column).
    ``rows`` forces R (8 or 16; ``windows.ENDS_ROWS`` for the short ends launch)."""
    r = (8 if m <= R8_MAX_QUERY else 16) if rows is None else rows
    if r not in (8, 16):
        raise ValueError(f"invalid rows per lane: {r!r}; expected 8 or 16")
    need = max(1, -(-m // r))
    g = 8
    while g < 32 and g < need:
        g *= 2
    bands = max(1, -(-m // (g * r)))
    return r, g, bands


def pack_capacity(m: int) -> int:
    """How many queries of ``m`` symbols one launch of ``win_s16`` scores together
    (:func:`pack_plan`): 32 lanes // the lanes one query fills (rows per lane as
    :func:`plan`); 1 where a query fills more than 16 lanes (nothing to gain) or ``m`` is 0."""
    if m < 1:
        return 1
    r, _, _ = plan(m)
    lanes = -(-m // r)
    return 1 if lanes > 16 else 32 // lanes


def pack_plan(m: int, count: int) -> tuple[int, int, int, int]:
    """(rows per lane R, lanes per item G, lanes per query, heads) of ``count`` queries of
    ``m`` symbols scored in one launch (``windows.cu``, ``heads``): query k's rows begin at
    band row ``k * lanes * R`` (the first row of lane ``k * lanes``), every other row is a
    pad row; ``heads`` has bit ``k * lanes`` set for each query. One query: :func:`plan`'s
    R and G, heads 1. Raises ValueError when they do not fit one band of 32 lanes."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"invalid count of packed queries: {count!r}; expected >= 1")
    if count == 1:
        r, g, bands = plan(m)
        if bands != 1:   # a one-query DeviceQuery takes any length; a pack holds one band
            raise ValueError(f"a query of {m} symbols fills {bands} bands; a pack holds one")
        return r, g, g, 1
    if count > pack_capacity(m):
        raise ValueError(f"{count} queries of {m} symbols do not fit one band "
                         f"(at most {pack_capacity(m)})")
    r, _, _ = plan(m)
    lanes = -(-m // r)
    g = 8
    while g < count * lanes:
        g *= 2
    heads = sum(1 << (k * lanes) for k in range(count))
    return r, g, lanes, heads


def pack_rows(queries: list[np.ndarray], k: int, r: int, lanes: int, g: int) -> np.ndarray:
    """The band's row codes of packed ``queries`` (int64 [G*R]): query i at rows
    ``i * lanes * r ..``, the pad code ``k`` everywhere else (:func:`pack_plan`)."""
    codes = np.full(g * r, k, np.int64)
    for i, q in enumerate(queries):
        at = i * lanes * r
        if len(q) > lanes * r or at + len(q) > g * r:
            raise ValueError(f"query {i} ({len(q)} symbols) does not fit its {lanes} lanes "
                             f"of {r} rows")
        codes[at:at + len(q)] = q
    return codes



@functools.lru_cache(maxsize=16)
def _chunk_order(r: int, g: int) -> np.ndarray:
    """For each position of a band's profile column, the band row stored there (the
    inverse of ``windows.cu``'s chunk layout: lane t's k-th run of 8 rows is chunk k*G + t)."""
    local = np.arange(g * r)
    lane, within = local // r, local % r
    pos = ((within // 8) * g + lane) * 8 + within % 8
    order = np.argsort(pos)
    order.setflags(write=False)
    return order


class ScoringFacts:
    """What the windows kernels need of a scoring, computed once per scoring: the transposed
    int16 matrix, the pad score, the 16-bit threshold, the int32 matrix of the ends kernel
    and whether the 16-bit kernel takes the scoring at all."""

    def __init__(self, scoring):
        matrix = np.asarray(scoring.matrix)
        self.k = int(matrix.shape[0])
        self.pad = min(0, int(matrix.min()))
        # S(row code, column code) transposed, padded with code k (pad) on both sides
        t16 = np.full((self.k + 1, self.k + 1), self.pad, np.int16)
        t16[:self.k, :self.k] = matrix.T
        self.t16 = t16.ravel()
        self.thr = 32767 - max(int(matrix.max()), 0) - 2
        self.mat32 = np.ascontiguousarray(matrix, np.int32)
        self.go, self.ge = int(scoring.gap_open), int(scoring.gap_extend)
        # win_s16's 16-bit pair constants: (go, go), its negation, (-ge, -ge)
        self.bvec = np.uint32((self.go & 0xFFFF) * 0x10001)
        self.neg_bias = np.uint32(-int(self.bvec) & 0xFFFFFFFF)
        self.neg_ge = np.uint32((-self.ge & 0xFFFF) * 0x10001)
        biggest = max(int(np.abs(matrix).max()), self.go, self.ge)
        self.supported = biggest <= NARROW_LIMIT and (self.k + 1) * 512 * 2 <= 48 * 1024


@functools.lru_cache(maxsize=16)
def facts(scoring) -> ScoringFacts:
    return ScoringFacts(scoring)


@functools.lru_cache(maxsize=64)
def _profile_index(k: int, r: int, g: int, bands: int) -> tuple[np.ndarray, np.ndarray]:
    """For each element of the flat profile of :func:`profile` (band, code column c, chunk
    position): the band row it holds and c * (k + 1), so that the profile is one gather
    from the padded transposed matrix (:attr:`ScoringFacts.t16`)."""
    gr = g * r
    order = _chunk_order(r, g)                    # position in a column -> band row
    band = np.arange(bands)[:, None, None]
    code = np.arange(k + 1)[None, :, None]
    row = np.broadcast_to(band * gr + order[None, None, :], (bands, k + 1, gr)).ravel()
    col = np.broadcast_to(code * (k + 1), (bands, k + 1, gr)).ravel()
    row, col = row.astype(np.intp), col.astype(np.intp)
    row.setflags(write=False)
    col.setflags(write=False)
    return row, col


def profile(q: np.ndarray, scoring, r: int, g: int, bands: int) -> np.ndarray:
    """uint16 [bands, K + 1, G*R]: S(q_row, c) per band, code column c (c = K: the pad
    column) and row, rows in the chunk order of ``windows.cu`` (lane t's k-th run of 8 rows
    is chunk k*G + t). Rows past the query and the pad column score min(0, min S)."""
    f = facts(scoring)
    codes = np.full(bands * g * r, f.k, np.intp)  # rows past the query: the pad code
    codes[:len(q)] = q
    return profile_rows(codes, scoring, r, g, bands)


def profile_rows(codes: np.ndarray, scoring, r: int, g: int, bands: int) -> np.ndarray:
    """:func:`profile` of the row codes ``codes`` (one per band row, ``K``: a pad row), as
    :func:`pack_rows` gives for several queries."""
    f = facts(scoring)
    row, col = _profile_index(f.k, r, g, bands)
    out = f.t16.take(col + np.asarray(codes, np.intp).take(row))
    return out.reshape(bands, f.k + 1, g * r).view(np.uint16)


__all__ = ["NARROW_LIMIT", "R8_MAX_QUERY", "ScoringFacts", "facts", "pack_capacity", "pack_plan",
           "pack_rows", "plan", "profile", "profile_rows", "supports"]
