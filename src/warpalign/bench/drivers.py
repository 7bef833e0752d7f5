"""The four drivers behind ``warpalign bench``: each times one public entry point on this
machine with an in-run baseline, and yields DESIGN.md's records.

A baseline whose package is missing is skipped (and said so); every baseline's answers are
checked against ours. GCUPS = cells / seconds / 1e9 with the papers' cell counts.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib import resources

import numpy as np

from .._backends import cpu_name, usable_cores


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


def note(msg: str) -> None:
    """One line on stderr (a skipped baseline, a missing package)."""
    print(f"# {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------
# Drivers: each yields DESIGN.md records
# --------------------------------------------------------------------------------------

def _bench_search(cfg: dict, backend: str, command: str) -> Iterator[dict]:
    from ..database import Database
    from ..io import load_sequences
    from ..scoring import Scoring
    from ..search import search

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
        note("search: parasail not installed, no baseline")
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
    from ..pairs import score_encoded
    from ..scoring import Scoring

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
        note("pairs: parasail not installed, no baseline")
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
    from ..lcs import lcs, lcs_length

    device = device_name(backend)
    rng = np.random.default_rng(2014)
    acgt = np.frombuffer(b"ACGT", np.uint8)
    lcs_length(b"ACGT" * 3000, b"AGCT" * 3000, backend=backend)   # compile
    lcs(b"ACGT" * 3000, b"AGCT" * 3000, backend=backend)
    try:
        from rapidfuzz.distance import LCSseq
    except ImportError:
        LCSseq = None
        note("lcs: rapidfuzz not installed, no baseline")

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


def cut_query(ref: np.ndarray, m: int, rng: np.random.Generator,
              substitutions: float = 0.05) -> np.ndarray:
    """A read of ``m`` DNA codes cut from ``ref`` at a random start, with about that share
    of its symbols substituted (the locate benchmarks' query)."""
    start = int(rng.integers(0, max(1, len(ref) - m)))
    q = ref[start:start + m].copy()
    flip = rng.random(len(q)) < substitutions
    q[flip] = (q[flip] + 1) % 4
    return q


def _bench_locate(cfg: dict, backend: str, command: str) -> Iterator[dict]:
    from ..errors import BackendUnavailable
    from ..locate import locate_encoded
    from ..scoring import Scoring

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
            q = cut_query(ref, m, rng)
            params = {"query": m, "reference": n, "match": 1, "mismatch": -2, "gap_open": 5,
                      "gap_extend": 1, "mode": "end", "data": "random DNA, query cut from it "
                      "with 5% substitutions"}
            runs = list(methods) + ([("dp", "cpu")] if n <= cfg["dp_max_size"] else [])
            first = None
            for method, be in runs:
                def run(method=method, be=be, q=q, ref=ref):
                    # paper 002's setting: one strand, m·n cells
                    return locate_encoded(q, ["ref"], [ref], scoring, mode="end",
                                          method=method, backend=be, strand="plus")
                if (method, be) in skipped:
                    continue
                try:
                    run()   # warm-up
                except BackendUnavailable as exc:
                    if method == "windows":
                        raise
                    skipped.add((method, be))
                    note(f"locate: method {method!r} skipped: {exc}")
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

