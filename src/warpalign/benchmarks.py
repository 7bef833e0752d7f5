"""Benchmarks behind ``warpalign bench`` and the tables of ``docs/REPRODUCTION.md``.

The drivers live in the package, not in the checkout's ``bench/`` folder, so that a
pip-installed warpalign can measure itself: ``warpalign bench`` needs nothing but the
package (the search job uses the bundled example data, the other jobs seeded random DNA).
The scripts in ``bench/`` stay the research harness (kernel variants, several GPUs,
E. coli, Swiss-Prot-sized databases); both write JSON lines with DESIGN.md's keys, so
:func:`report` reads either.

Each job times one public entry point on the current machine, with an in-run baseline:

========  =====================================  ==========================================
job       what is timed                          baseline measured in the same run
========  =====================================  ==========================================
search    ``search()`` per query, score mode     parasail ``sw_striped_profile_16``, 1 core
pairs     ``score_pairs`` (bitsliced, wordwise)  parasail ``sw_scan_16`` on the same cores
lcs       ``lcs_length`` (and ``lcs``)           rapidfuzz ``LCSseq.similarity``, 1 core
locate    ``locate`` (windows; scan on CUDA)     ``method="dp"``: the exact scalar DP, 1 core
========  =====================================  ==========================================

A baseline whose package is missing is skipped (and said so); every baseline's answers
are checked against ours. GCUPS = cells / seconds / 1e9 with the papers' cell counts.

Also a command line for the documentation::

    python -m warpalign.benchmarks report bench/results > docs/REPRODUCTION.md
    python -m warpalign.benchmarks plot bench/results/*.jsonl --out plots/
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path

import numpy as np

from ._backends import cpu_name, usable_cores

JOBS = ("search", "pairs", "lcs", "locate")
BACKENDS = ("auto", "cpu", "cuda")

# --------------------------------------------------------------------------------------
# The papers' published numbers, typed from their tables (../shared/papers/*.txt).
# Each row: job, x (the plots' length axis, as in :func:`x_of`), gcups, series, source.
# --------------------------------------------------------------------------------------

#: Paper 000 (Nishimura et al.), Table V: GCUPS of the bitwise SWA for 32K pairs, m = 128;
#: CPU = one thread of a Core i7-6700 (64-bit words), GPU = GeForce GTX TITAN X (32-bit).
PAPER000_TABLE_V = {  # n: (CPU GCUPS, GPU GCUPS)
    1024: (0.76, 1877.40), 2048: (0.76, 2022.85), 4096: (0.75, 2197.58),
    8192: (0.75, 2199.75), 16384: (0.76, 2149.79), 32768: (0.76, 2159.60),
    65536: (0.77, 2158.43)}
#: Paper 000, Table IV, GPU bitwise 32-bit: total ms (H2G + W2B + SWA + B2W + G2H) and SWA ms.
PAPER000_TABLE_IV_GPU32 = {  # n: (total ms, SWA ms)
    1024: (12.66, 6.91), 2048: (23.52, 12.61), 4096: (43.59, 24.17), 8192: (86.94, 48.29),
    16384: (177.21, 96.56), 32768: (351.27, 196.03), 65536: (695.42, 392.52)}

#: Paper 001 (Kawanami & Fujimoto), Table 1: full LCS on a GeForce GTX 580 (host Core i7
#: 920); (|A| in millions, |B| in millions, total s, CPU s, GPU s, transfer s).
PAPER001_TABLE_1 = [
    (5, 1, 335.10, 12.15, 320.60, 2.35), (5, 2, 515.95, 17.99, 495.51, 2.45),
    (5, 3, 697.56, 20.25, 674.77, 2.54), (5, 4, 866.04, 23.99, 839.47, 2.58),
    (5, 5, 1050.03, 25.38, 1021.86, 2.79), (5, 6, 1251.85, 27.64, 1220.62, 3.59),
    (5, 7, 1453.22, 29.77, 1419.09, 4.36), (5, 8, 1652.43, 32.33, 1615.45, 4.65),
    (5, 9, 1850.64, 35.38, 1810.26, 5.00), (5, 10, 2046.29, 38.22, 2003.62, 4.45),
    (10, 1, 647.21, 13.68, 629.01, 4.52), (10, 2, 998.79, 24.33, 969.70, 4.76),
    (10, 3, 1354.90, 28.19, 1321.85, 4.86), (10, 4, 1680.16, 35.79, 1639.50, 4.87),
    (10, 5, 2047.44, 38.50, 2003.96, 4.98), (10, 6, 2341.78, 40.64, 2296.13, 5.01),
    (10, 7, 2679.54, 46.62, 2627.82, 5.10), (10, 8, 2991.43, 48.18, 2938.10, 5.15),
    (10, 9, 3357.05, 49.75, 3301.87, 5.43), (10, 10, 3667.39, 51.54, 3610.33, 5.52),
    (15, 1, 954.44, 16.23, 932.39, 5.82), (15, 2, 1472.40, 27.64, 1438.78, 5.98),
    (15, 3, 2002.67, 32.97, 1963.42, 6.28), (15, 4, 2485.72, 43.44, 2435.76, 6.52),
    (15, 5, 3039.24, 45.93, 2986.43, 6.88), (15, 6, 3472.54, 48.35, 3417.00, 7.19),
    (15, 7, 3980.38, 57.51, 3915.33, 7.54), (15, 8, 4441.27, 58.67, 4374.90, 7.70),
    (15, 9, 5005.08, 60.41, 4936.03, 8.64), (15, 10, 5462.73, 61.82, 5391.97, 8.94),
    (20, 1, 1262.07, 18.57, 1234.71, 8.79), (20, 2, 1945.03, 27.31, 1908.62, 9.10),
    (20, 3, 2650.20, 34.55, 2606.29, 9.36), (20, 4, 3290.98, 48.55, 3232.87, 9.56),
    (20, 5, 4027.68, 52.45, 3965.57, 9.66), (20, 6, 4599.46, 56.33, 4533.42, 9.71),
    (20, 7, 5274.06, 69.39, 5194.96, 9.71), (20, 8, 5881.29, 71.58, 5800.11, 9.60),
    (20, 9, 6637.26, 74.17, 6553.24, 9.85), (20, 10, 7239.77, 76.49, 7153.42, 9.86)]

#: Paper 002 (Yasui & Ino): its figures did not survive; the text gives 12.3 GCUPS at
#: query n = 256, m = 33 M (GTX 980 Ti), and Table 1 the total ms for n = 256.
PAPER002_TEXT_PEAK = (256, 33_000_000, 12.3)   # (query, reference, GCUPS), section 4
PAPER002_TABLE_1 = {100_000: 53.3, 33_000_000: 707.1}   # reference m: total ms, n = 256

#: Paper 003 (Dohi et al.), Table III: GCUPS, Swiss-Prot 57.6, BLOSUM50 10-2k, GTX 295.
PAPER003_TABLE_III = [  # (accession, query length, 1 GPU, 2 GPUs, 4 GPUs)
    ("P02232", 144, 9.09, 17.26, 29.46), ("P01111", 189, 10.53, 19.98, 34.44),
    ("P05013", 189, 10.53, 19.98, 34.42), ("P09488", 218, 10.78, 20.45, 35.44),
    ("P14942", 222, 10.97, 20.83, 36.09), ("P00762", 246, 10.96, 20.84, 36.23),
    ("P10318", 362, 11.57, 22.01, 38.78), ("P07327", 374, 11.96, 22.76, 40.07),
    ("P01008", 464, 12.21, 23.25, 41.19), ("P10635", 497, 12.36, 23.54, 41.19),
    ("P25705", 553, 12.39, 23.61, 41.97), ("P03435", 567, 12.71, 24.22, 43.05)]


def published(job: str) -> list[dict]:
    """The papers' points for ``job``'s plot: dicts with x, gcups, series (source named).

    Example:
        >>> [(r["x"], r["gcups"]) for r in published("search")][:2]
        [(144, 9.09), (189, 10.53)]
    """
    rows: list[dict] = []
    if job == "pairs":
        for n, (cpu, gpu) in PAPER000_TABLE_V.items():
            rows.append({"x": n, "gcups": gpu, "series": "paper 000 Table V, GTX TITAN X"})
            rows.append({"x": n, "gcups": cpu,
                         "series": "paper 000 Table V, Core i7-6700 1 thread"})
    elif job == "lcs":
        for a, b, total, *_ in PAPER001_TABLE_1:
            rows.append({"x": a * b * 10**12, "gcups": a * b * 1e12 / total / 1e9,
                         "series": "paper 001 Table 1 (|A||B|/total), GTX 580"})
    elif job == "locate":
        n = PAPER002_TEXT_PEAK[0]
        for m, ms in PAPER002_TABLE_1.items():
            rows.append({"x": m, "gcups": n * m / (ms / 1e3) / 1e9,
                         "series": "paper 002 Table 1 (n=256, mn/t), GTX 980 Ti"})
        rows.append({"x": PAPER002_TEXT_PEAK[1], "gcups": PAPER002_TEXT_PEAK[2],
                     "series": "paper 002 text peak (n=256), GTX 980 Ti"})
    elif job == "search":
        for _, length, g1, _, _ in PAPER003_TABLE_III:
            rows.append({"x": length, "gcups": g1,
                         "series": "paper 003 Table III, 1 GPU (GTX 295)"})
    return rows


# --------------------------------------------------------------------------------------
# Settings: what --quick and the full run measure (data, so tests can shrink them).
# --------------------------------------------------------------------------------------

QUICK = {
    "search": {"matrix": "BLOSUM62", "gap_open": 11, "gap_extend": 1, "max_queries": 5,
               "baseline_every": 20, "repeat": 2},
    "pairs": {"pairs": 2048, "m": 128, "n": [1024, 2048, 4096, 8192], "baseline_pairs": 256,
              "repeat": 2},
    "lcs": {"sizes": [(100_000, 100_000), (300_000, 300_000), (1_000_000, 1_000_000)],
            "lcs_sizes": [(100_000, 100_000), (300_000, 300_000)],
            "baseline_max_cells": 1e11, "repeat": 1},
    "locate": {"queries": [128, 256], "min_size": 1 << 10, "max_size": 1 << 22,
               "dp_max_size": 1 << 16, "repeat": 2},
}
#: The papers' settings as far as the drivers support them; "cpu" overrides where the
#: paper's size would take hours on a CPU (the record's params say what ran).
FULL = {
    "search": {"matrix": "BLOSUM50", "gap_open": 10, "gap_extend": 2, "max_queries": 5,
               "baseline_every": 10, "repeat": 3},   # paper 003's scoring
    "pairs": {"pairs": 32768, "m": 128, "n": [1 << k for k in range(10, 17)],
              "baseline_pairs": 1024, "repeat": 3,
              "cpu": {"pairs": 2048}},                 # paper 000's Tables IV/V
    "lcs": {"sizes": [(1_000_000, 1_000_000), (5_000_000, 1_000_000),
                      (10_000_000, 5_000_000), (20_000_000, 10_000_000)],
            "lcs_sizes": [(5_000_000, 1_000_000), (10_000_000, 5_000_000),
                          (20_000_000, 10_000_000)],
            "baseline_max_cells": 1e12, "repeat": 2,  # paper 001's Table 1 corners
            "cpu": {"sizes": [(300_000, 300_000), (1_000_000, 1_000_000)],
                    "lcs_sizes": [(300_000, 300_000)]}},
    "locate": {"queries": [128, 256], "min_size": 1 << 10, "max_size": 1 << 25,
               "dp_max_size": 1 << 20, "repeat": 3,   # paper 002's Fig. 5 range
               "cpu": {"max_size": 1 << 22}},
}


def settings(job: str, *, quick: bool, backend: str) -> dict:
    """The setting ``job`` runs with (``QUICK`` or ``FULL``, with ``FULL``'s CPU overrides)."""
    base = dict((QUICK if quick else FULL)[job])
    override = base.pop("cpu", {})
    if backend == "cpu":
        base.update(override)
    return base


# --------------------------------------------------------------------------------------
# Machine
# --------------------------------------------------------------------------------------

def resolve_backend(backend: str) -> str:
    """"cpu" or "cuda" ("auto": the backend ``get_backend`` picks; an unavailable
    "cuda" raises ``BackendUnavailable`` naming the reason)."""
    from ._backends import check_choice, get_backend
    check_choice("backend", backend, BACKENDS)
    return get_backend(backend).name


def device_name(backend: str) -> str:
    """The GPU's name as the driver reports it, or the CPU's with the cores used."""
    if backend == "cuda":
        import cupy
        name = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        return f"{name} (host: {cpu_name()}, {usable_cores()} cores)"
    return f"{cpu_name()} ({usable_cores()} cores)"


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t0)
    return best, value


def _record(job, backend, method, device, params, seconds, cells, baseline, command,
            scope="item", **extra) -> dict:
    return {"job": job, "scope": scope, "backend": backend, "method": method,
            "device": device, "params": params, "seconds": round(seconds, 6),
            "gcups": round(cells / seconds / 1e9, 4), "baseline": baseline,
            "command": command, **extra}


def _note(msg: str) -> None:
    print(f"# {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# Drivers: each yields DESIGN.md records
# --------------------------------------------------------------------------------------

def _bench_search(cfg: dict, backend: str, command: str) -> Iterator[dict]:
    from .database import Database
    from .io import load_sequences
    from .scoring import Scoring
    from .search import search

    scoring = Scoring(matrix=cfg["matrix"], gap_open=cfg["gap_open"], gap_extend=cfg["gap_extend"])
    data = resources.files("warpalign") / "data"
    with resources.as_file(data / "example_queries.fasta") as qpath, \
            resources.as_file(data / "example_db.fasta.gz") as dbpath:
        qnames, qcodes = load_sequences(str(qpath), scoring.alphabet)
        db = Database.from_sequences(str(dbpath), alphabet=scoring.alphabet)
    queries = [(n, scoring.alphabet.decode(q)) for n, q in
               zip(qnames[:cfg["max_queries"]], qcodes[:cfg["max_queries"]])]
    device = device_name(backend)
    params = {"matrix": cfg["matrix"], "gap_open": cfg["gap_open"],
              "gap_extend": cfg["gap_extend"], "db": "bundled example_db.fasta.gz",
              "targets": len(db), "residues": db.residues, "mode": "score"}
    search(queries[0][1][:50], db, scoring, backend=backend, top_k=1)   # compile, upload
    base_name = "parasail sw_striped_profile_16, 1 core"
    try:
        import parasail
    except ImportError:
        parasail = None
        _note("search: parasail not installed, no baseline")
    total_s, total_cells = 0.0, 0
    ours = []
    for name, q in queries:
        sec, hits = _best(lambda q=q: search(q, db, scoring, backend=backend, top_k=1),
                          cfg["repeat"])
        cells = len(q) * db.residues
        total_s, total_cells = total_s + sec, total_cells + cells
        ours.append(_record("search", backend, "auto", device,
                            {**params, "query": name, "query_len": len(q)}, sec, cells,
                            base_name if parasail else None, command,
                            best_score=int(hits[0].scores[0]) if len(hits[0].scores) else 0))
    yield from ours
    yield _record("search", backend, "auto", device, {**params, "queries": len(queries)},
                  total_s, total_cells, base_name if parasail else None, command, scope="total")
    if parasail is None:
        return
    letters = scoring.alphabet.symbols
    pmat = parasail.matrix_create(letters, 0, 0)
    for i in range(len(letters)):
        for j in range(len(letters)):
            pmat[i, j] = int(scoring.matrix[i, j])
    idx = np.arange(0, len(db), cfg["baseline_every"])
    targets = [scoring.alphabet.decode(db.sequence(int(i))) for i in idx]
    sub_res = sum(len(t) for t in targets)
    sub_db = Database.from_sequences(targets, alphabet=scoring.alphabet)
    for (name, q), mine in zip(queries, ours):
        def run(q=q):
            prof = parasail.profile_create_16(q, pmat)
            return max(parasail.sw_striped_profile_16(prof, t, cfg["gap_open"],
                                                      cfg["gap_extend"]).score for t in targets)
        sec, best = _best(run, 1)
        mine_sub = search(q, sub_db, scoring, backend=backend, top_k=1)[0]
        agree = int(best) == int(mine_sub.scores[0])
        yield _record("search", "parasail", "sw_striped_profile_16", f"{cpu_name()} (1 core)",
                      {**params, "query": name, "query_len": len(q), "subset_every":
                       cfg["baseline_every"], "subset_residues": sub_res}, sec,
                      len(q) * sub_res, "warpalign, same run", command, best_scores_agree=agree)


def _random_dna(rng, rows: int, length: int) -> np.ndarray:
    return rng.integers(0, 4, (rows, length), dtype=np.uint8)


def _bench_pairs(cfg: dict, backend: str, command: str) -> Iterator[dict]:
    from .pairs import score_encoded
    from .scoring import Scoring

    scoring = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
    device = device_name(backend)
    rng = np.random.default_rng(0)
    methods = ("bitsliced", "wordwise")
    warm_x, warm_y = _random_dna(rng, 64, cfg["m"]), _random_dna(rng, 64, 256)
    for method in methods:   # compile outside the timings
        score_encoded(list(warm_x), list(warm_y), scoring, method=method, backend=backend)
    try:
        import parasail
    except ImportError:
        parasail = None
        _note("pairs: parasail not installed, no baseline")
    base_name = f"parasail sw_scan_16, {usable_cores()} threads" if parasail else None
    for n in cfg["n"]:
        xs, ys = _random_dna(rng, cfg["pairs"], cfg["m"]), _random_dna(rng, cfg["pairs"], n)
        xl, yl = list(xs), list(ys)
        params = {"pairs": cfg["pairs"], "m": cfg["m"], "n": n, "match": 2, "mismatch": -1,
                  "gap": 1}
        cells = cfg["pairs"] * cfg["m"] * n
        reference = None
        for method in methods:
            sec, res = _best(lambda method=method, xl=xl, yl=yl: score_encoded(
                xl, yl, scoring, method=method, backend=backend), cfg["repeat"])
            scores = res.scores
            if reference is not None and not np.array_equal(scores, reference):
                raise RuntimeError(f"pairs n={n}: {method} scores differ from bitsliced")
            reference = scores
            yield _record("pairs", backend, method, device, params, sec, cells, base_name,
                          command)
        if parasail is None:
            continue
        k = min(cfg["baseline_pairs"], cfg["pairs"])
        matrix = parasail.matrix_create("ACGT", 2, -1)
        xt = ["".join("ACGT"[c] for c in row) for row in xs[:k]]
        yt = ["".join("ACGT"[c] for c in row) for row in ys[:k]]

        def run(xt=xt, yt=yt, k=k, matrix=matrix):
            def one(i):
                return parasail.sw_scan_16(xt[i], yt[i], 1, 1, matrix).score
            with ThreadPoolExecutor(usable_cores()) as pool:
                return list(pool.map(one, range(k)))
        sec, got = _best(run, 1)
        yield _record("pairs", "parasail", "sw_scan_16", f"{cpu_name()} ({usable_cores()} cores)",
                      {**params, "pairs": k}, sec, k * cfg["m"] * n, "warpalign, same run",
                      command, scores_agree=bool(np.array_equal(got, reference[:k])))


def _bench_lcs(cfg: dict, backend: str, command: str) -> Iterator[dict]:
    from .lcs import lcs, lcs_length

    device = device_name(backend)
    rng = np.random.default_rng(2014)
    acgt = np.frombuffer(b"ACGT", np.uint8)
    lcs_length(b"ACGT" * 3000, b"AGCT" * 3000, backend=backend)   # compile
    lcs(b"ACGT" * 3000, b"AGCT" * 3000, backend=backend)
    try:
        from rapidfuzz.distance import LCSseq
    except ImportError:
        LCSseq = None
        _note("lcs: rapidfuzz not installed, no baseline")

    def dna(n):
        return acgt[rng.integers(0, 4, n)].tobytes()

    for na, nb in cfg["sizes"]:
        a, b = dna(na), dna(nb)
        params = {"a_len": na, "b_len": nb, "data": "random DNA", "threads": usable_cores()}
        use_base = LCSseq is not None and na * nb <= cfg["baseline_max_cells"]
        sec, got = _best(lambda a=a, b=b: lcs_length(a, b, backend=backend), cfg["repeat"])
        yield _record("lcs", backend, "llcs", device, {**params, "llcs": got}, sec, na * nb,
                      "rapidfuzz LCSseq.similarity, 1 core" if use_base else None, command)
        if use_base:
            sec, ref = _best(lambda a=a, b=b: LCSseq.similarity(a, b), 1)
            yield _record("lcs", "rapidfuzz", "LCSseq.similarity", f"{cpu_name()} (1 core)",
                          {**params, "threads": 1, "llcs": ref}, sec, na * nb,
                          "warpalign, same run", command, agrees=ref == got)
    for na, nb in cfg["lcs_sizes"]:
        a, b = dna(na), dna(nb)
        sec, s = _best(lambda a=a, b=b: lcs(a, b, backend=backend), 1)
        yield _record("lcs", backend, "lcs", device,
                      {"a_len": na, "b_len": nb, "data": "random DNA", "threads": usable_cores(),
                       "lcs_len": len(s)}, sec, na * nb, None, command)


def _bench_locate(cfg: dict, backend: str, command: str) -> Iterator[dict]:
    from .errors import BackendUnavailable
    from .locate import locate_encoded
    from .scoring import Scoring

    scoring = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)   # paper 002
    device = device_name(backend)
    rng = np.random.default_rng(2)
    reference = rng.integers(0, 4, cfg["max_size"], dtype=np.uint8)
    methods = [("windows", backend)] + ([("scan", "cuda")] if backend == "cuda" else [])
    skipped: set[tuple[str, str]] = set()
    sizes = []
    n = cfg["min_size"]
    while n <= cfg["max_size"]:
        sizes.append(n)
        n *= 2
    for m in cfg["queries"]:
        for n in sizes:
            ref = reference[:n]
            start = int(rng.integers(0, max(1, n - m)))
            q = ref[start:start + m].copy()
            flip = rng.random(len(q)) < 0.05
            q[flip] = (q[flip] + 1) % 4
            params = {"query": m, "reference": n, "match": 1, "mismatch": -2, "gap_open": 5,
                      "gap_extend": 1, "mode": "end", "data": "random DNA, query cut from it "
                      "with 5% substitutions"}
            runs = list(methods) + ([("dp", "cpu")] if n <= cfg["dp_max_size"] else [])
            first = None
            for method, be in runs:
                def run(method=method, be=be, q=q, ref=ref):
                    return locate_encoded(q, ["ref"], [ref], scoring, mode="end",
                                          method=method, backend=be)
                if (method, be) in skipped:
                    continue
                try:
                    run()   # warm-up
                except BackendUnavailable as exc:
                    if method == "windows":
                        raise
                    skipped.add((method, be))
                    _note(f"locate: method {method!r} skipped: {exc}")
                    continue
                sec, hit = _best(run, cfg["repeat"])
                found = (hit.score, hit.query_end, hit.target_end)
                first = first or found
                is_base = method == "dp"
                yield _record("locate", be, method,
                              f"{cpu_name()} (1 core)" if is_base else device, params, sec,
                              m * n, "warpalign, same run" if is_base else
                              ("locate method='dp' (exact scalar DP, 1 core)"
                               if n <= cfg["dp_max_size"] else None),
                              command, score=int(hit.score), agrees=found == first)


DRIVERS: dict[str, Callable[[dict, str, str], Iterator[dict]]] = {
    "search": _bench_search, "pairs": _bench_pairs, "lcs": _bench_lcs, "locate": _bench_locate}


def check_jobs(jobs: Iterable[str]) -> list[str]:
    """``jobs`` validated (all of :data:`JOBS` when empty), in the order given."""
    jobs = list(jobs) or list(JOBS)
    for job in jobs:
        if job not in DRIVERS:
            raise ValueError(f"invalid job: {job!r}; expected one of {', '.join(JOBS)}")
    return jobs


def run(jobs: Iterable[str] = (), *, quick: bool = False, backend: str = "auto",
        out: str | os.PathLike | None = None, command: str = "warpalign bench",
        plots: bool = True, echo: Callable[[str], None] | None = None) -> list[dict]:
    """Run the benchmarks of ``jobs`` on this machine; returns the records.

    With ``out``, appends each job's JSON lines to ``out/<job>.jsonl`` as they come and
    (with ``plots``) writes ``out/<job>.png`` from that job's records of this run (GCUPS
    against length, beside the papers' numbers).
    ``echo`` receives each JSON line as it is measured.
    """
    jobs = check_jobs(jobs)
    resolved = resolve_backend(backend)
    if plots and out is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            plots = False
            _note("matplotlib is not installed: JSON lines only, no PNG "
                  "(pip install matplotlib)")
    records: list[dict] = []
    outdir = Path(out) if out is not None else None
    if outdir is not None:
        outdir.mkdir(parents=True, exist_ok=True)
    for job in jobs:
        cfg = settings(job, quick=quick, backend=resolved)
        fh = open(outdir / f"{job}.jsonl", "a") if outdir is not None else None  # noqa: SIM115
        try:
            for rec in DRIVERS[job](cfg, resolved, command):
                records.append(rec)
                line = json.dumps(rec)
                if fh is not None:
                    fh.write(line + "\n")
                    fh.flush()
                if echo is not None:
                    echo(line)
        finally:
            if fh is not None:
                fh.close()
        if outdir is not None and plots:
            plot([r for r in records if r["job"] == job], outdir / f"{job}.png")
    return records


# --------------------------------------------------------------------------------------
# Table and plots
# --------------------------------------------------------------------------------------

X_LABEL = {"search": "query length (residues)", "pairs": "n, target length (m = 128)",
           "lcs": "|A|·|B| (cells)", "locate": "reference length m (symbols)"}


def x_of(rec: dict) -> float | None:
    """The length a record is plotted against (see :data:`X_LABEL`)."""
    p = rec.get("params") or {}
    job = rec.get("job")
    if job == "search":
        return p.get("query_len")
    if job == "pairs":
        return p.get("n")
    if job == "lcs":
        return p["a_len"] * p["b_len"] if "a_len" in p and "b_len" in p else None
    if job == "locate":
        return p.get("reference")
    return None


def _size(rec: dict) -> str:
    p = rec.get("params") or {}
    job = rec["job"]
    if job == "search":
        return f"q={p['query_len']}" if "query_len" in p else f"{p.get('queries')} queries"
    if job == "pairs":
        return f"{p['pairs']}x{p['m']}x{p['n']}"
    if job == "lcs":
        return f"{p['a_len']:,}x{p['b_len']:,}"
    if job == "locate":
        return f"{p['query']}x{p['reference']:,}"
    return ""


def _base_text(b) -> str:
    if b is None:
        return "-"
    if isinstance(b, dict):
        return f"{b.get('method', '')} {b.get('gcups', '')}".strip()
    return str(b)


def format_table(records: Iterable[dict]) -> str:
    """A plain-text table: job, backend, method, size, seconds, GCUPS, baseline."""
    head = ("job", "backend", "method", "size", "seconds", "GCUPS", "baseline")
    rows = [head] + [(r["job"], r["backend"], r["method"], _size(r), f"{r['seconds']:.4f}",
                      f"{r['gcups']:.2f}", _base_text(r.get("baseline"))) for r in records]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head) - 1)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row[:-1], widths)) + "  " + row[-1]
                     for row in rows)


_OTHERS = ("parasail", "pyopal", "rapidfuzz")


def _is_ours(rec: dict) -> bool:
    """False for the in-run baselines: other packages, and locate's scalar ``dp``."""
    return (rec["backend"] in ("cpu", "cuda") and rec["method"] != "dp"
            and not rec["method"].startswith(_OTHERS))


def plot(records: list[dict], path: str | os.PathLike) -> Path | None:
    """GCUPS against length (log-log) for one job's measured ``records``: ours as solid
    lines, the in-run baselines dashed, the papers' published numbers as open markers
    (a series with several runs at one length, as in ``bench/results``, as points only).
    Returns the PNG's path, or None (nothing measured to plot)."""
    items = [r for r in records if r.get("scope") == "item" and x_of(r) and r.get("gcups")]
    if not items:
        return None
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    job = items[0]["job"]
    series: dict[tuple, list[tuple[float, float]]] = {}
    for r in items:
        p = r.get("params") or {}
        extra = f", q={p['query']}" if job == "locate" else ""
        key = (_is_ours(r), f"{r['backend']} {r['method']}{extra} — {r['device']}")
        series.setdefault(key, []).append((x_of(r), r["gcups"]))
    fig, ax = plt.subplots(figsize=(11, 5))
    for (ours, label), pts in sorted(series.items(), key=lambda kv: (not kv[0][0], kv[0][1])):
        pts.sort()
        xs = [p[0] for p in pts]
        style = ("-o" if ours else "--s") if len(set(xs)) == len(xs) else ("o" if ours else "s")
        ax.plot(xs, [p[1] for p in pts], style, label=("" if ours else "baseline: ") + label,
                markersize=4, alpha=1.0 if len(set(xs)) == len(xs) else 0.5)
    pub: dict[str, list] = {}
    for row in published(job):
        pub.setdefault(row["series"], []).append((row["x"], row["gcups"]))
    for label, pts in pub.items():
        pts.sort()
        xs = [p[0] for p in pts]
        ax.plot(xs, [p[1] for p in pts], ":" if len(set(xs)) == len(xs) else "none",
                marker="D", fillstyle="none",
                color="k" if "GPU" in label or "GTX" in label else "0.5", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(X_LABEL[job])
    ax.set_ylabel("GCUPS")
    ax.set_title(f"warpalign bench: {job}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


# --------------------------------------------------------------------------------------
# docs/REPRODUCTION.md
# --------------------------------------------------------------------------------------

def load_results(paths: Iterable[str | os.PathLike]) -> list[dict]:
    """Every JSON line of the given files (or of the ``*.jsonl`` in given folders),
    each tagged with ``_file`` (its file name)."""
    records = []
    for path in paths:
        path = Path(path)
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        for f in files:
            for line in f.read_text().splitlines():
                if line.strip():
                    rec = json.loads(line)
                    rec["_file"] = f.name
                    records.append(rec)
    return records


def _last(records: Iterable[dict], pred: Callable[[dict], bool], key: Callable[[dict], object]):
    """The last record (file order: the latest run) per ``key`` among those matching."""
    found: dict = {}
    for r in records:
        if pred(r):
            found[key(r)] = r
    return found


def _fmt(v, digits=1) -> str:
    return "not measured yet" if v is None else f"{v:,.{digits}f}"


def _sources(rows: Iterable[dict]) -> str:
    rows = [r for r in rows if r]
    if not rows:
        return "No measurement yet.\n"
    lines = ["Measured lines used above (device, file, command):", ""]
    done = set()
    for r in rows:
        k = (r["device"], r["_file"], r["command"])
        if k not in done:
            done.add(k)
            lines.append(f"- {r['device']} — `bench/results/{r['_file']}` — `{r['command']}`")
    return "\n".join(lines) + "\n"


def report(paths: Iterable[str | os.PathLike]) -> str:
    """docs/REPRODUCTION.md's text: each paper's published table beside our measured lines
    (the latest line per setting in ``paths``' JSON lines). Writes no number it did not read."""
    recs = load_results(paths)
    gpus = sorted({r["device"].split(" (")[0].split(" x ")[-1] for r in recs
                   if r.get("backend") == "cuda"})
    out = [_HEADER.format(gpus=" and ".join(gpus) or "no GPU yet")]
    out.append(_paper000(recs))
    out.append(_paper001(recs))
    out.append(_paper002(recs))
    out.append(_paper003(recs))
    out.append(_paper004(recs))
    return "\n".join(out)


_HEADER = """# Reproducing the papers' tables

Generated by `python -m warpalign.benchmarks report bench/results > docs/REPRODUCTION.md`
from the JSON lines in `bench/results/` (real measurements; each names its device and the
command that produced it). The papers' numbers are typed from their tables
(`src/warpalign/benchmarks.py`, with the table named). "not measured yet" means no line in
`bench/results/` covers that setting. GCUPS = cells / seconds / 1e9 with the paper's cell
count. Our GPU lines come from {gpus}, five to eight architecture generations after the
papers' GPUs (GTX 295, GTX 580, GTX 980 Ti, GTX TITAN X), so the ratios say as much about
the hardware as about the code.

To measure on your machine: `warpalign bench [JOB ...] [--quick] [--backend auto|cpu|cuda]
[--out DIR]` (table on stdout, JSON lines and PNG plots in DIR).
"""


def _paper000(recs) -> str:
    # the newest kernel line per n (file order), whichever name the default had then
    def kernel_line(r, method, runs):
        return (r["job"] == "pairs" and r["backend"] == "cuda" and r["method"] in method
                and r["command"].startswith("python bench/pairs.py")
                and r["params"].get("m") == 128 and r["params"].get("pairs") == 32768
                and r["params"].get("kernel_runs", 1) in runs)

    one, more = (1,), range(2, 1 << 20)
    bits = ("bitsliced-32-split1", "bitsliced-32")
    gpu = _last(recs, lambda r: kernel_line(r, bits, one), lambda r: r["params"]["n"])
    ww = _last(recs, lambda r: kernel_line(r, ("wordwise",), one), lambda r: r["params"]["n"])
    # bench/pairs.py --kernel-runs K: the DP kernel launched K times back to back
    gpu_k = _last(recs, lambda r: kernel_line(r, bits, more), lambda r: r["params"]["n"])
    ww_k = _last(recs, lambda r: kernel_line(r, ("wordwise",), more), lambda r: r["params"]["n"])
    psl = _last(recs, lambda r: r["job"] == "pairs" and r["method"] == "parasail-sw_scan_16"
                and r["command"].startswith("python bench/pairs.py --gpu")
                and r["params"].get("m") == 128, lambda r: r["params"]["n"])
    api = _last(recs, lambda r: r["job"] == "pairs" and r["backend"] == "cuda"
                and r["method"] in ("bitsliced", "wordwise")
                and r["command"].startswith("warpalign bench")
                and r["params"].get("m") == 128 and r["params"].get("pairs") == 32768,
                lambda r: (r["method"], r["params"]["n"]))
    cpu = _last(recs, lambda r: r["job"] == "pairs" and r["backend"] == "cpu"
                and r["method"] == "bitsliced-64" and r["params"].get("m") == 128,
                lambda r: (r["device"], r["params"]["n"]))
    cpu_devices = sorted({d for d, _ in cpu})
    lines = ["## Paper 000 — Nishimura et al., bulk SW scoring (Tables IV/V)", "",
             ("32,768 random DNA pairs, m = 128, match 2 / mismatch −1 / gap 1, score only. "
             "Paper: GTX TITAN X (32-bit words) and one thread of a Core i7-6700 (64-bit). "
             "Ours on the GPU, two measurements: (a) `bench/pairs.py`'s kernel timings of "
             "the default bitsliced-32 (the newest run's line), the DP kernel alone "
             "(`gcups_swa`, the paper's SWA column), its steps W2B / SWA / B2W / H2G / G2H "
             "in ms and the whole call with its steps' sum in ms (Table IV's GPU total), "
             "and the word-wise kernel of the same run (`gcups_swa`); (a') the two kernels "
             "launched K times back to back (`--kernel-runs K`, mean per launch: the kernel "
             "on a busy GPU instead of right after the copy); (b) `warpalign bench "
             "pairs`: the public `score_pairs` call from encoded sequences to scores "
             "(packing and host copies included), methods `bitsliced` and `wordwise`. "
             "CPU: `bitsliced-64` on all the machine's cores, and parasail `sw_scan_16` "
             "on the GPU machine's cores in the run of (a)."), "",
             "| n | paper GPU GCUPS (Table V) | paper GPU total ms (Table IV) "
             "| ours (a) bitsliced GCUPS, kernel only | ours (a) W2B / SWA / B2W / H2G / G2H ms "
             "| ours (a) total ms (steps' sum) | ours (a) word-wise GCUPS, kernel only "
             "| ours (a') bitsliced / word-wise GCUPS, K launches back to back "
             "| ours (b) GCUPS, score_pairs bitsliced | ours (b) GCUPS, score_pairs wordwise "
             "| paper CPU GCUPS, 1 thread | parasail sw_scan_16 GCUPS, run (a) | "
             + " | ".join(f"ours CPU bitsliced-64, {d}" for d in cpu_devices) + " |",
             "|" + "---|" * (12 + len(cpu_devices))]
    used = []
    stalls = []
    for n, (pc, pg) in PAPER000_TABLE_V.items():
        g, k, p = gpu.get(n), ww.get(n), psl.get(n)
        gk, wk = gpu_k.get(n), ww_k.get(n)
        b, w = api.get(("bitsliced", n)), api.get(("wordwise", n))
        used += [g, k, p, b, w, gk, wk]
        back = (f"{_fmt(gk and gk.get('gcups_swa'))} / {_fmt(wk and wk.get('gcups_swa'))}"
                + (f" (K = {(gk or wk)['params']['kernel_runs']})" if gk or wk else ""))
        if g is not None:
            st = g.get("steps", {})
            steps_ms = sum(st.values()) * 1e3
            total = f"{g['seconds'] * 1e3:,.2f} ({steps_ms:,.2f})"
            split = " / ".join(f"{st[x] * 1e3:,.3f}" if x in st else "–"
                               for x in ("w2b", "swa", "b2w", "h2g", "g2h"))
            if g["seconds"] * 1e3 > 3 * steps_ms:
                stalls.append(n)
        else:
            total = split = _fmt(None)
        cells = [_fmt(pg), _fmt(PAPER000_TABLE_IV_GPU32[n][0], 2),
                 _fmt(g and g.get("gcups_swa")), split, total, _fmt(k and k.get("gcups_swa")),
                 back,
                 _fmt(b and b["gcups"]), _fmt(w and w["gcups"]), _fmt(pc, 2),
                 _fmt(p and p["gcups"], 2)]
        for d in cpu_devices:
            c = cpu.get((d, n))
            used.append(c)
            cells.append(_fmt(c and c["gcups"], 2))
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    lines += ["", ("What differs: the H200 has about 14× the TITAN X's memory bandwidth (4.8 vs "
              "0.34 TB/s) and "
              "DPX instructions; (a) is the median of repeated runs after a warm-up, (b) the "
              "best of three. Table V's GPU GCUPS cannot be re-derived from Table IV with "
              "pairs·m·n (32,768·128·1,024 cells / 6.91 ms SWA = 621 GCUPS, not 1,877); we "
              "print both as published. Our CPU rows use every core (the paper: one thread) "
              "and fewer pairs (the rate per cell is the same).")]
    if stalls:
        lines[-1] += (" At n = " + ", ".join(f"{n:,}" for n in stalls) + " the whole call "
                      "took more than three times its steps' sum in that run: a one-off host "
                      "stall, not the kernels.")
    lines += ["", _sources(used)]
    return "\n".join(lines)


def _paper001(recs) -> str:
    rows = _last(recs, lambda r: r["job"] == "lcs" and r["backend"] == "cuda"
                 and r["method"].startswith("lcs hirschberg"),
                 lambda r: (r["params"]["a_len"], r["params"]["b_len"]))
    llcs = _last(recs, lambda r: r["job"] == "lcs" and r["backend"] == "cuda"
                 and r["method"].startswith("llcs gpu ("),
                 lambda r: (r["params"]["a_len"], r["params"]["b_len"]))
    lines = ["## Paper 001 — Kawanami & Fujimoto, bit-parallel LCS (Table 1)", "",
             ("Full LCS (Hirschberg with the bit-parallel LLCS); paper on a GTX 580, "
              "total = CPU + GPU + transfer seconds. Ours: `lcs(a, b, backend=\"cuda\")` on "
              "random DNA (the paper's surviving text does not state its input strings); "
              "GPU = wall time with one of our kernels running, transfer = with a copy "
              "running. Only Table 1's rows we measured are listed, with the paper's "
              "corner rows for scale."), "",
             ("| A (symbols) | B (symbols) | paper total s | paper CPU s | paper GPU s "
              "| paper transfer s | paper GCUPS | ours total s | ours CPU-only s | ours GPU s "
              "| ours transfer s | ours GCUPS | ours LLCS only GCUPS |"), "|" + "---|" * 13]
    used = []
    for a, b, total, cpu, gpu, tr in PAPER001_TABLE_1:
        key = (a * 1_000_000, b * 1_000_000)
        r, q = rows.get(key), llcs.get(key)
        if r is None and q is None and key not in ((5e6, 1e6), (20e6, 10e6)):
            continue
        used += [r, q]
        p = (r or {}).get("params", {})
        lines.append(
            f"| {a}M | {b}M | {_fmt(total, 2)} | {_fmt(cpu, 2)} | {_fmt(gpu, 2)} | {_fmt(tr, 2)}"
            f" | {_fmt(a * b * 1e12 / total / 1e9)} | {_fmt(p.get('total_s'), 2)} | "
            f"{_fmt(p.get('cpu_only_s'), 2)} | {_fmt(p.get('gpu_s'), 2)} | "
            f"{_fmt(p.get('transfer_s'), 2)} | {_fmt(r and r['gcups'])} | "
            f"{_fmt(q and q['gcups'])} |")
    lines += ["", ("What differs: the paper's CPU part runs serially with the GPU; ours runs "
              "the small Hirschberg sub-problems on the host's cores while the GPU works, so "
              "\"CPU-only\" is the wall time with neither kernel nor copy running. The "
              "E. coli pair and the other sizes we measured are in `bench/results/lcs_gpu.jsonl`."),
              "", _sources(used)]
    return "\n".join(lines)


def _mode_method(r) -> str:
    """A locate record's method, with its mode when that is not "end" (the table's)."""
    mode = r["params"].get("mode", "end")
    return r["method"] if mode == "end" else f"{r['method']} mode={mode}"


def _paper002(recs) -> str:
    loc = _last(recs, lambda r: r["job"] == "locate" and r["params"].get("query") == 256,
                lambda r: (r["_file"], r["backend"], _mode_method(r), r["params"]["reference"]))
    columns = sorted({(f, b, m) for f, b, m, _ in loc}, key=lambda c: (c[2] == "dp", c))
    lines = ["## Paper 002 — Yasui & Ino, short query vs long sequence (Fig. 5, Table 1)", "",
             ("Query n = 256 against a reference of m symbols, match 1 / mismatch −2 / gap "
             "5+1 (affine), best score and its end. The paper's Fig. 5 did not survive the "
             "text copy: its numbers here are the text's peak (12.3 GCUPS at m = 33 M) and "
             "m·n/t from its Table 1 (GTX 980 Ti; its data: human chr21 against an "
             "influenza segment). Ours: `locate(..., mode=\"end\")` with the method named "
             "(another mode where the column says so); "
             "`dp` is the exact scalar DP on one core (the in-run baseline). "
             "`locate_cpu.jsonl`: reference = C. elegans chrX prefix (bench/locate.py); "
             "`bench_gpu.jsonl`: seeded random DNA with the query cut from it and 5% "
             "substitutions (`warpalign bench locate`)."), "",
             "| m | paper GCUPS | " + " | ".join(f"ours {b} {m} ({f})" for f, b, m in columns)
             + " |", "|" + "---|" * (2 + len(columns))]
    paper = {m: 256 * m / (ms / 1e3) / 1e9 for m, ms in PAPER002_TABLE_1.items()}
    paper[33_554_432] = PAPER002_TEXT_PEAK[2]
    refs = sorted({n for *_, n in loc} | {100_000, 33_554_432})
    used = []
    for n in refs:
        vals = []
        for f, b, m in columns:
            r = loc.get((f, b, m, n))
            used.append(r)
            vals.append(_fmt(r and r["gcups"], 2) if r or m != "dp" else "—")
        p = paper.get(n)
        pcell = "—" if p is None else f"{p:.2f}" + (" (text, m = 33 M)" if n == 33_554_432
                                                    else " (Table 1)")
        lines.append(f"| {n:,} | {pcell} | " + " | ".join(vals) + " |")
    has_gpu = any(b == "cuda" for _, b, _ in columns)
    has_scan = any(b == "cuda" and m == "scan" for _, b, m in columns)
    lines += ["", "What differs: " + (
        "our GPU `windows` method scores overlapping windows of the reference with the "
        "search kernels; " + ("`scan` is the paper's row scan (scan.cu: int16 rows in DPX "
        "lanes, int32 past Eq. 9's bound), `scan1`, `antidiagonal` and `blocked` paper "
        "004's methods, all on the GPU; " if has_scan else
        "the paper's scan-based kernel on the GPU is not measured yet; ") if has_gpu else
        "no GPU `locate` line is in `bench/results/` yet (not measured yet); ")
        + "`locate_cpu.jsonl` is from a 2-core AMD EPYC, the `dp` lines of "
        "`bench_gpu.jsonl` from one core of the GPU machine's host; `dp` stops at 1 M "
        "(4 M for chrX). The "
        "paper's m = 100 K falls between our powers of two, and its \"33 M\" is placed at "
        "2^25.", "", _sources(used)]
    return "\n".join(lines)


def _paper003(recs) -> str:
    t3 = _last(recs, lambda r: r["job"] == "search" and r["scope"] == "item"
               and r["params"].get("setting") == "paper 003 Table III",
               lambda r: (r["method"], r["params"].get("gpus", 1), r["params"]["query"]))
    lines = ["## Paper 003 — Dohi et al., protein database search (Table III)", "",
             ("BLOSUM50, gap 10-2k, score only. Paper: Swiss-Prot 57.6 (174,780,353 residues, "
             "495,880 sequences) on a GTX 295 (1, 2 and 4 GPU cores). Ours: a synthetic "
             "database with Swiss-Prot's 516,371 lengths and composition (186,717,374 "
             "residues; bench/search_gpu.py), one query at a time, time per query including "
             "the score copy back; `auto` = our fastest kernels, `warp` = paper 003's kernel "
             "(one warp per alignment)."), "",
             ("| query | length | paper 1 GPU | paper 2 GPUs | paper 4 GPUs | ours auto, 1 GPU "
             "| ours warp, 1 GPU | ours auto, 2 GPUs | ours warp, 2 GPUs |"),
             "|" + "---|" * 9]
    used = []
    for acc, length, g1, g2, g4 in PAPER003_TABLE_III:
        vals = []
        for method, gpus in (("auto", 1), ("warp", 1), ("auto", 2), ("warp", 2)):
            r = next((v for (m, g, q), v in t3.items() if m == method and g == gpus
                      and acc in q), None)
            used.append(r)
            vals.append(_fmt(r and r["gcups"], 0))
        lines.append(f"| {acc} | {length} | {g1} | {g2} | {g4} | " + " | ".join(vals) + " |")
    cpu = [r for r in recs if r["job"] == "search" and r["_file"] == "search_cpu.jsonl"]
    lines += ["", ("Six of the twelve queries are in our query set "
              "(`standard_queries20.fasta`); the others are not measured yet. Ours on the "
              "CPU (BLOSUM62 11/1, the 20 standard queries against the 20,000-protein "
              "MMseqs2 example database):"), "",
              "| backend | method | device | threads | GCUPS |", "|---|---|---|---|---|"]
    for r in cpu:
        lines.append(f"| {r['backend']} | {r['method']} | {r['device']} | "
                     f"{r.get('threads', '')}{' (subset)' if r.get('subset') else ''} | "
                     f"{r['gcups']:.2f} |")
    lines += ["", ("What differs: fifteen years of GPUs (GT200b → Hopper), Swiss-Prot's size "
              "grew, and our database is synthetic with the real lengths (bench/search_gpu.py "
              "`--real` checks the rate on real proteins)."), "", _sources(used + cpu)]
    return "\n".join(lines)


def _paper004(recs) -> str:
    scan = [r for r in recs if r["job"] == "locate" and r["backend"] == "cuda"
            and r["method"] in ("scan", "scan1", "antidiagonal", "blocked")]
    status = (f"{len(scan)} GPU lines of these methods are in `bench/results/`; see the "
              "paper 002 table." if scan else
              "no GPU line for these methods is in `bench/results/` yet (not measured yet).")
    text = ("The paper reports speedups only (2–6× over its sequential code for the "
            "constant gap, 1.5–4.5× for the affine gap, lengths 512–8,000, GTX 480), in "
            "figures that did not survive the text copy: there is no published GCUPS to set "
            "beside ours. Its row scan is our `locate(method=\"scan\")` / `\"scan1\"`, beside "
            "`\"antidiagonal\"` and `\"blocked\"` (exact CPU kernels today). GPU: ")
    out = ["## Paper 004 — Shukla & Shah, parallel-scan SW (Figs. 8/9)", "", text + status, ""]
    long = [r for r in recs if r["job"] == "long"]
    if long:
        methods = list(dict.fromkeys(r["method"] for r in long))
        keys = sorted({(r["params"]["gap_model"], r["params"]["query"]) for r in long})
        cell = {(r["params"]["gap_model"], r["params"]["query"], r["method"]): r["gcups"]
                for r in long}
        out += [("Ours, paper 004's lengths (equal-length related DNA pairs, 5/−3, affine 8/1 or "
                "constant 8 per gap symbol), GCUPS on the device named below (the kernels on one "
                "core; `windows` through the CPU backend's threads); every method's score and "
                "end agree:"), "",
                "| gap | length | " + " | ".join(methods) + " |",
                "|---|---|" + "---|" * len(methods)]
        for gap, n in keys:
            out.append(f"| {gap} | {n:,} | " + " | ".join(
                _fmt(cell.get((gap, n, m)), 2) for m in methods) + " |")
        out += ["", _sources(long)]
    return "\n".join(out)


# --------------------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    """``python -m warpalign.benchmarks report DIR... | plot FILE... --out DIR``."""
    p = argparse.ArgumentParser(prog="python -m warpalign.benchmarks",
                                description="Reproduction report and plots from JSON lines.")
    sub = p.add_subparsers(dest="what", required=True)
    rp = sub.add_parser("report", help="docs/REPRODUCTION.md's text on stdout")
    rp.add_argument("paths", nargs="+", help="JSON-lines files or folders of *.jsonl")
    pp = sub.add_parser("plot", help="one PNG per job: GCUPS against length")
    pp.add_argument("paths", nargs="+", help="JSON-lines files or folders of *.jsonl")
    pp.add_argument("--out", required=True, help="folder for the PNG files")
    args = p.parse_args(argv)
    if args.what == "report":
        sys.stdout.write(report(args.paths))
        return 0
    recs = load_results(args.paths)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for job in JOBS:
        path = plot([r for r in recs if r["job"] == job], Path(args.out) / f"{job}.png")
        if path:
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
