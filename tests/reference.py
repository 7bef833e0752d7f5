"""The oracle: a textbook Gotoh dynamic program, O(mn) time and space, pure Python.

Rows are query positions, columns target positions. A gap of length k costs
gap_open + (k-1)*gap_extend. Returns (score, query_end, target_end) where the ends are
0-based exclusive and, among cells of the best score, the smallest target end wins,
then the smallest query end (DESIGN.md's tie rule).
"""

import numpy as np

NEG = float("-inf")


def dp(q, t, S, go, ge, algorithm="local"):
    """q, t: sequences of codes; S: matrix S[a][b]; returns (score, query_end, target_end)."""
    m, n = len(q), len(t)
    local, semi = algorithm == "local", algorithm == "semiglobal"
    H = [[0] * (n + 1) for _ in range(m + 1)]
    E = [[NEG] * (n + 1) for _ in range(m + 1)]   # gap in the query (moves along the target)
    F = [[NEG] * (n + 1) for _ in range(m + 1)]   # gap in the target (moves along the query)
    for i in range(1, m + 1):
        H[i][0] = 0 if local else -(go + (i - 1) * ge)
    for j in range(1, n + 1):
        H[0][j] = 0 if (local or semi) else -(go + (j - 1) * ge)
    for i in range(1, m + 1):
        for j in range(1, n + 1):
            E[i][j] = max(E[i][j - 1] - ge, H[i][j - 1] - go)
            F[i][j] = max(F[i - 1][j] - ge, H[i - 1][j] - go)
            H[i][j] = max(H[i - 1][j - 1] + S[q[i - 1]][t[j - 1]], E[i][j], F[i][j])
            if local:
                H[i][j] = max(H[i][j], 0)
    if local:
        cells = [(H[i][j], -j, -i) for j in range(n + 1) for i in range(m + 1)]
    elif semi:
        cells = [(H[m][j], -j, -m) for j in range(n + 1)]
    else:
        cells = [(H[m][n], -n, -m)]
    best, nj, ni = max(cells)
    return best, -ni, -nj


def protein_read(seed: int = 62) -> tuple[str, str]:
    """(reference, query): 20,000 random amino acids, and its letters 7,000-7,180 with 20%
    substitutions and three deleted (a BLOSUM62 locate case scoring above 300)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    aa = list("ACDEFGHIKLMNPQRSTVWY")
    ref = "".join(rng.choice(aa, 20_000))
    q = list(ref[7_000:7_180])
    for i in np.flatnonzero(rng.random(len(q)) < 0.2):
        q[i] = aa[int(rng.integers(0, 20))]
    del q[50:53]
    return ref, "".join(q)


def mutate_dna(rng, text: str, sub: float, indels: int) -> str:
    """``text`` with substitutions at rate ``sub`` (to another of ACGT) and ``indels``
    insertions/deletions of 1-6 symbols at random places (``rng``: a numpy Generator)."""
    import numpy as np

    chars = list(text)
    for i in np.flatnonzero(rng.random(len(chars)) < sub):
        chars[i] = "ACGT"[(("ACGT".find(chars[i].upper()) + int(rng.integers(1, 4))) % 4)]
    for _ in range(indels):
        at, size = int(rng.integers(0, len(chars))), int(rng.integers(1, 7))
        if rng.random() < 0.5:
            del chars[at:at + size]
        else:
            chars[at:at] = "".join(rng.choice(list("ACGT"), size))
    return "".join(chars)


def related_case(rng, size: int, trial: int, t_lengths: tuple, q_max: int, random_q: tuple,
                 cut: bool = False):
    """(query, target) code arrays over ``size`` letters for randomized kernel tests: a
    target of a length drawn from ``t_lengths``; on 2 trials in 3 the query is a piece of it
    (up to ``q_max`` - 1 letters, 10% substituted, with ``cut`` three letters deleted) and on
    every 4th trial the target is repeated (ties); else a random query of a length drawn from
    ``random_q``."""
    import numpy as np

    t = rng.integers(0, size, int(rng.integers(*t_lengths))).astype(np.uint8)
    if len(t) > 10 and trial % 3:
        a = int(rng.integers(0, len(t) - 5))
        q = t[a:a + int(rng.integers(1, q_max))].copy()
        flip = rng.random(len(q)) < 0.1
        q[flip] = rng.integers(0, size, int(flip.sum()))
        if cut and len(q) > 12:
            q = np.concatenate([q[:6], q[9:]])
        if trial % 4 == 0:
            t = np.concatenate([t, t[::-1], t])      # repeats: ties
    else:
        q = rng.integers(0, size, int(rng.integers(*random_q))).astype(np.uint8)
    return q, t


def top_select(S, top_k, cap, threads, rng):
    """What search.cu's top_select writes for a batch of rows (a NumPy model of the
    kernel): per row, thread t's group is targets t, t + threads, ...; L is the k-th
    largest group maximum (empty groups count as the int32 minimum); every (id, score)
    with score >= L comes back in no order, at most cap of them, and the count of all."""
    import numpy as np

    rows, n = S.shape
    counts = np.zeros(rows, np.int32)
    hits = np.zeros((rows, cap, 2), np.int32)
    for r in range(rows):
        tops = np.full(threads, np.iinfo(np.int32).min, np.int64)
        for t in range(min(threads, n)):
            tops[t] = S[r, t::threads].max()
        low = np.sort(tops)[::-1][top_k - 1]
        ids = rng.permutation(np.flatnonzero(S[r] >= low))
        counts[r] = ids.size
        got = ids[:cap]
        hits[r, :got.size] = np.stack([got, S[r, got]], axis=1)
    return counts, hits



def packed_queries(rng, ref: np.ndarray, m: int, count: int, protein: bool,
                   n_code: int | None = None) -> list[np.ndarray]:
    """``count`` queries of ``m`` codes from ``ref`` (8% substitutions) with ONE score bound
    (``spans.query_score_bound``), as ``locate`` packs them (its pack key holds the bound):
    DNA: near copies of random pieces, one ``n_code`` (N) each over substitutions of codes
    0..3; protein (residue bounds differ, so near copies of different pieces have different
    bounds): rotations of one near copy, the same residues in another order."""
    alpha = 20 if protein else 4
    qs = []
    for k in range(count):
        at = int(rng.integers(0, len(ref) - m))
        q = ref[at:at + m].copy()
        flip = rng.random(m) < 0.08
        q[flip] = rng.integers(0, alpha, int(flip.sum()))
        if protein:
            q = np.roll(qs[0], k * m // count) if qs else q
        else:
            q[int(rng.integers(0, m))] = n_code
        qs.append(q)
    return qs


def render_case(rng, size: int, count: int = 300, short: int = 0):
    """Paths for the path renderers (``_backends/render.py``): ``(ops, opoff, qcat, qpos,
    tcat, tpos)`` of ``count`` paths of every kind: empty, all gaps, random, long runs
    (lengths 1 to 12,345 and 31 to 65 around a warp's 32 ops) and one op; the segments lie
    in the code buffers at random distances apart. ``short``: the last ``short`` codes of
    each buffer are cut off, so the last paths run past its end (inconsistent paths)."""
    chunks = []
    for k in range(count):
        kind = k % 6
        if kind == 0:
            ops = np.zeros(0, np.uint8)
        elif kind == 1:                                 # gaps only: runs of I and D
            lens = rng.integers(1, 40, int(rng.integers(1, 6)))
            ops = np.repeat(np.arange(len(lens)) % 2 + 1, lens)
        elif kind == 2:                                 # long runs, any op after any
            lens = rng.choice([1, 9, 10, 31, 32, 33, 63, 64, 65, 99, 100, 1000], 5)
            ops = np.repeat(rng.integers(0, 3, 5), lens)
        elif kind == 3:
            ops = np.array([rng.integers(0, 3)])
        else:
            ops = rng.choice(np.array([0, 1, 2]), int(rng.integers(1, 300)), p=[0.6, 0.2, 0.2])
            ops = np.where(rng.random(ops.size) < 0.4, np.roll(ops, 1), ops)
        chunks.append(ops.astype(np.uint8))
    chunks[7] = np.zeros(1000, np.uint8)                # 1000M
    chunks[13] = np.ones(12_345, np.uint8)              # 12345I
    chunks[19] = np.concatenate([np.full(100_000, 2), np.zeros(3)]).astype(np.uint8)
    ops = np.concatenate(chunks)
    opoff = np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.int64)
    cats, starts = [], []
    for side in (2, 1):                                 # the query's codes, the target's
        used = np.array([int((c != side).sum()) for c in chunks], np.int64)
        pad = rng.integers(0, 5, count)
        at = np.cumsum(used + pad) - used
        cat = rng.integers(0, size, int(at[-1] + used[-1]) if count else 0).astype(np.uint8)
        cats.append(cat[:max(cat.size - short, 0)])
        starts.append(at.astype(np.int64))
    return ops, opoff, cats[0], starts[0], cats[1], starts[1]


def render_cases(rng, size: int, count: int = 300, short: int = 0) -> list[tuple]:
    """:func:`render_case`'s paths and the edge cases beside them: no paths, only empty
    paths, and with ``short`` paths read from an empty query buffer (every position
    clamps to code 0)."""
    ops, opoff, qcat, qpos, tcat, tpos = render_case(rng, size, count=count, short=short)
    cases = [(ops, opoff, qcat, qpos, tcat, tpos),
             (ops[:0], opoff[:1], qcat, qpos[:0], tcat, tpos[:0]),                 # no paths
             (ops[:0], np.zeros(4, np.int64), qcat, qpos[:3], tcat, tpos[:3])]     # empty ones
    if short:
        cases.append((ops[:300], np.array([0, 100, 300]), qcat[:0], np.array([0, 5]), tcat,
                      tpos[:2]))
    return cases
