"""One PNG per job: the kernel (scope "item"/"kernel") and the whole call (scope
"call"/"total") side by side, ours beside the in-run baselines and the papers.

The y axis is GCUPS where the job's records have it (a CPU series divided by the cores it
used, taken from the record's ``threads`` or its device string; the GPU's card named in
each label), else seconds. The x axis is the job's length (:data:`X_RULES`), else the
cells of the call (GCUPS × seconds), else one bar per series. Records a figure cannot
show are counted in its title, never dropped silently.
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable
from pathlib import Path

from .papers import published

#: job: (alternatives of params keys whose product is x, the axis label)
X_RULES = {
    "search": ((("query_len",),), "query length (residues)"),
    "pairs": ((("n",), ("y",)), "n, target length"),
    "lcs": ((("a_len", "b_len"), ("a", "b")), "|A|·|B| (cells)"),
    "locate": ((("reference",), ("reference_length",), ("n",)), "reference length m (symbols)"),
    "long": ((("query", "reference"), ("m", "n")), "query × reference length (cells)"),
    "align": ((("query", "target"),), "query × target length (cells)"),
    "traceback": ((("alignments",),), "alignments"),
    "scaling": ((("gpus",),), "GPUs"),
    "makedb": ((("residues",),), "residues"),
}
CELLS_LABEL = "cells (GCUPS × seconds × 1e9)"
KERNEL, CALL = ("item", "kernel"), ("call", "total")
PER_CORE = "GCUPS (CPU series: per core)"

_OTHERS = ("parasail", "pyopal", "rapidfuzz")
_GPU_WORDS = ("NVIDIA", "GeForce", "Tesla", "Radeon")
_CORES = (re.compile(r"(\d+) of \d+ cores?"), re.compile(r"(\d+) cores?\b"),
          re.compile(r" x (\d+)$"))
_CPU_TAIL = re.compile(r",? \(?\d+ (of \d+ )?cores?.*$| x \d+$")   # the cores, for the title


def _pos(v) -> float | None:
    """``v`` if it is a positive number (not a bool), else None."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 and v == v
    return float(v) if ok else None


def is_gpu(rec: dict) -> bool:
    """Whether ``rec`` measured a GPU (backend "cuda", or a device that names one)."""
    return rec.get("backend") == "cuda" or any(w in str(rec.get("device")) for w in _GPU_WORDS)


def card(rec: dict) -> str:
    """The device as the plots name it: a GPU's card without the host or the GPU count
    ("4 x NVIDIA H200 (host: ...)" -> "NVIDIA H200"), a CPU as recorded (cores included)."""
    dev = str(rec.get("device") or "device not recorded")
    if is_gpu(rec):
        return re.sub(r"^\d+ x ", "", dev.split(" (host:")[0])
    return dev


def cores(rec: dict) -> int | None:
    """The CPU cores a CPU record used: its ``threads`` (record or params), else the count
    its device string gives ("(2 cores)", "1 of 2 cores", "... x 16"); None for a GPU
    record or when the record does not say."""
    if is_gpu(rec):
        return None
    for t in (rec.get("threads"), (rec.get("params") or {}).get("threads")):
        if _pos(t):
            return int(t)
    for pattern in _CORES:
        m = pattern.search(str(rec.get("device") or ""))
        if m:
            return int(m.group(1))
    return None


def x_of(rec: dict) -> float | None:
    """The length ``rec`` is plotted against by :data:`X_RULES` (None: its job has no
    rule or its params lack the keys)."""
    p = rec.get("params") or {}
    for keys in X_RULES.get(rec.get("job"), ((),))[0]:
        vals = [_pos(p.get(k)) for k in keys]
        if keys and all(vals):
            x = 1.0
            for v in vals:
                x *= v
            return x
    return None


def _cells(rec: dict) -> float | None:
    g, s = _pos(rec.get("gcups")), _pos(rec.get("seconds"))
    return g * s * 1e9 if g and s else None


def _is_ours(rec: dict) -> bool:
    """False for the in-run baselines: other packages, and the scalar ``dp``."""
    method = str(rec.get("method"))
    return not (method == "dp" or method.startswith(_OTHERS)
                or str(rec.get("backend")).startswith(_OTHERS))


def _label(rec: dict, gcups: bool) -> str:
    p = rec.get("params") or {}
    extra = f", q={p['query']}" if rec.get("job") == "locate" and "query" in p else ""
    name = " ".join(str(v) for v in (rec.get("backend"), rec.get("method")) if v)
    name = name or str(rec.get("job"))
    label = ("" if _is_ours(rec) else "baseline: ") + f"{name}{extra} — {card(rec)}"
    if gcups and not is_gpu(rec):
        n = cores(rec)
        label += f", per core (÷{n})" if n else ", cores not recorded: whole-CPU GCUPS"
    return label


def _value(rec: dict, gcups: bool) -> float | None:
    """The y of ``rec``: GCUPS (per core for a CPU record that names its cores) or seconds."""
    if not gcups:
        return _pos(rec.get("seconds"))
    g = _pos(rec.get("gcups"))
    n = None if g is None or is_gpu(rec) else cores(rec)
    return g / n if g and n else g


def _panel(ax, recs: list[dict], job: str, gcups: bool, papers: bool,
           colors: dict[str, object]) -> int:
    """Draw one scope's records on ``ax``: x by :func:`x_of`, else cells, else one bar per
    series. Returns how many records had no x where the others had one (not drawn)."""
    from matplotlib.ticker import NullFormatter

    xs = {id(r): x_of(r) for r in recs}
    label, use_cells = X_RULES.get(job, ((), CELLS_LABEL))[1], False
    if recs and not all(xs.values()):
        with_cells = {id(r): _cells(r) for r in recs}
        if all(with_cells.values()) or not any(xs.values()):
            xs, label, use_cells = with_cells, CELLS_LABEL, True
    series: dict[tuple, list[tuple[float | None, float]]] = {}
    for r in recs:
        series.setdefault((_is_ours(r), _label(r, gcups)), []).append((xs[id(r)], _value(r, gcups)))
    ordered = sorted(series.items(), key=lambda kv: (not kv[0][0], kv[0][1]))
    bars = bool(recs) and not any(xs.values())
    if bars:   # nothing has a size: one bar per series, its best record
        for i, ((_, name), pts) in enumerate(ordered):
            vals = [v for _, v in pts]
            ax.bar([i], [max(vals) if gcups else min(vals)], label=name, color=colors[name])
        ax.set_xticks([])
        ax.set_xlabel("best record of each series (no size in params)")
    elif recs:
        for (ours, name), pts in ordered:
            pts = sorted((x, v) for x, v in pts if x)
            lone = len({x for x, _ in pts}) == len(pts)
            style = ("-o" if ours else "--s") if lone else ("o" if ours else "s")
            ax.plot([x for x, _ in pts], [v for _, v in pts], style, label=name,
                    color=colors[name], markersize=4, alpha=1.0 if lone else 0.5)
        if papers and gcups and not use_cells:
            pub: dict[str, list] = {}
            for row in published(job):
                pub.setdefault(row["series"], []).append((row["x"], row["gcups"]))
            for name, pts in pub.items():
                pts.sort()
                lone = len({x for x, _ in pts}) == len(pts)
                ax.plot([x for x, _ in pts], [v for _, v in pts], ":" if lone else "none",
                        marker="D", fillstyle="none",
                        color="k" if "GPU" in name or "GTX" in name else "0.5", label=name)
    if recs and not bars:
        drawn = sorted({x for x in xs.values() if x})
        if drawn[-1] <= 64 and all(x == int(x) for x in drawn):   # a few GPUs, alignments
            ax.set_xticks(drawn, [str(int(x)) for x in drawn])
        else:
            ax.set_xscale("log")
            if drawn[-1] >= 10 * drawn[0]:   # minor labels (2×10², 3×10², ...) would overlap
                ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel(label)
    if not recs:
        ax.text(0.5, 0.5, "no records of this scope", ha="center", va="center",
                transform=ax.transAxes, color="0.4")
        ax.set_xticks([])
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(0.0, -0.12))
    return 0 if bars else sum(1 for x in xs.values() if not x)


def figure(job: str, records: Iterable[dict]):
    """The figure of one job's ``records`` (a ``matplotlib.figure.Figure`` with two axes:
    kernel left, whole call right, sharing y), or None when none of them can be drawn."""
    from matplotlib import colormaps
    from matplotlib.figure import Figure

    records = [r for r in records if r.get("job") == job]
    gcups = any(_pos(r.get("gcups")) for r in records)
    shown = {"kernel": [], "call": []}
    skipped: dict[str, int] = {}
    for r in records:
        scope = r.get("scope")
        if _value(r, gcups) is None:
            why = "no GCUPS" if gcups else "no seconds"
        elif scope not in KERNEL + CALL:
            why = f"scope {scope!r}"
        else:
            shown["kernel" if scope in KERNEL else "call"].append(r)
            continue
        skipped[why] = skipped.get(why, 0) + 1
    if not shown["kernel"] and not shown["call"]:
        return None
    fig = Figure(figsize=(16, 8))
    left, right = fig.subplots(1, 2, sharey=True)
    names = sorted({(not _is_ours(r), _label(r, gcups)) for r in shown["kernel"] + shown["call"]})
    palette = colormaps["tab20"].colors   # one colour per series in both panels
    colors = {name: palette[i % len(palette)] for i, (_, name) in enumerate(names)}
    for ax, scope, papers in ((left, "kernel", True), (right, "call", False)):
        if n := _panel(ax, shown[scope], job, gcups, papers, colors):
            skipped["no size in params"] = skipped.get("no size in params", 0) + n
    left.set_title(f"kernel (scope {' / '.join(KERNEL)}): {len(shown['kernel'])} records")
    right.set_title(f"whole call (scope {' / '.join(CALL)}): {len(shown['call'])} records")
    left.set_ylabel(PER_CORE if gcups else "seconds")
    gpus = sorted({card(r) for r in records if is_gpu(r)})
    cpus = sorted({_CPU_TAIL.sub("", card(r)) for r in records if not is_gpu(r)})
    devices = "; ".join(f"{kind}: {', '.join(names)}" for kind, names
                        in (("GPU", gpus), ("CPU", cpus)) if names)
    title = textwrap.wrap(f"warpalign bench: {job} — {devices}", 150)
    if skipped:
        title.append("not shown: " + ", ".join(f"{n} records with {why}"
                                               for why, n in sorted(skipped.items())))
    fig.suptitle("\n".join(title))
    fig.subplots_adjust(wspace=0.06)
    return fig


def plot(records: Iterable[dict], path: str | os.PathLike) -> Path | None:
    """One job's ``records`` (the first record's job) as a PNG at ``path``
    (see :func:`figure`); returns the path, or None (nothing to plot)."""
    records = list(records)
    fig = figure(records[0]["job"], records) if records else None
    if fig is None:
        return None
    path = Path(path)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def plot_all(records: Iterable[dict], out: str | os.PathLike) -> list[Path]:
    """``out/<job>.png`` for every job ``records`` have (first-seen order); returns the paths."""
    records = list(records)
    jobs = list(dict.fromkeys(str(r.get("job")) for r in records))
    paths = [plot([r for r in records if str(r.get("job")) == job], Path(out) / f"{job}.png")
             for job in jobs]
    return [p for p in paths if p is not None]
