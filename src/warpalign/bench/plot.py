"""One PNG per job: GCUPS against length, ours beside the in-run baselines and the papers."""

from __future__ import annotations

import os
from pathlib import Path

from .papers import published

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
