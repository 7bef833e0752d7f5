"""``warpalign bench``'s runner: settings, the run over jobs, the plain-text table."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from ..choices import BACKENDS, BENCH_JOBS
from .drivers import DRIVERS, note
from .plot import plot_all
from .report import load_results

JOBS = BENCH_JOBS

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


def resolve_backend(backend: str) -> str:
    """"cpu" or "cuda" ("auto": the backend ``get_backend`` picks; an unavailable
    "cuda" raises ``BackendUnavailable`` naming the reason)."""
    from .._backends import check_choice, get_backend
    check_choice("backend", backend, BACKENDS)
    return get_backend(backend).name


def check_jobs(jobs: Iterable[str]) -> list[str]:
    """``jobs`` validated (all of :data:`JOBS` when empty), in the order given."""
    jobs = list(jobs) or list(JOBS)
    for job in jobs:
        if job not in DRIVERS:
            raise ValueError(f"invalid job: {job!r}; expected one of {', '.join(JOBS)}")
    return jobs


def run(jobs: Iterable[str] = (), *, quick: bool = False, backend: str = "auto",
        out: str | os.PathLike | None = None, command: str = "warpalign bench",
        plots: bool = True, echo: Callable[[str], None] | None = None,
        sizes: Mapping[str, dict] | None = None) -> list[dict]:
    """Run the benchmarks of ``jobs`` on this machine; returns the records.

    ``sizes``: each job's setting (the keys of :data:`QUICK`'s) instead of
    :func:`settings`' (``quick``: :data:`QUICK`, else :data:`FULL`), e.g. tiny ones for a test.

    With ``out``, appends each job's JSON lines to ``out/<job>.jsonl`` as they come and
    (with ``plots``) then writes ``out/<job>.png`` for every job the folder's JSON lines
    have, this run's and earlier ones (:func:`~.plot.figure`: kernel and whole call side
    by side, CPU series per core, the devices named, beside the papers' numbers).
    ``echo`` receives each JSON line as it is measured.
    """
    jobs = check_jobs(jobs)
    resolved = resolve_backend(backend)
    if plots and out is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            plots = False
            note("matplotlib is not installed: JSON lines only, no PNG "
                 "(pip install matplotlib)")
    records: list[dict] = []
    outdir = Path(out) if out is not None else None
    if outdir is not None:
        outdir.mkdir(parents=True, exist_ok=True)
    for job in jobs:
        cfg = settings(job, quick=quick, backend=resolved) if sizes is None else dict(sizes[job])
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
        plot_all(load_results([outdir]), outdir)
    return records


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

