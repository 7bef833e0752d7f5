"""``warpalign bench``'s plots: every job, kernel and whole call side by side, CPU series
per core, the card named (issue 24 item 7)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from warpalign.bench import plot as bplot
from warpalign.bench.__main__ import main as bench_main
from warpalign.bench.report import load_results

pytest.importorskip("matplotlib")
RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
GPU = "NVIDIA H200 (host: AMD EPYC, 16 cores)"


def rec(job, scope, backend, method, device, gcups, seconds=1.0, **params):
    return {"job": job, "scope": scope, "backend": backend, "method": method,
            "device": device, "params": params, "seconds": seconds, "gcups": gcups}


RECORDS = [
    rec("search", "item", "cuda", "auto", GPU, 2000.0, query_len=100),
    rec("search", "item", "cuda", "auto", GPU, 3000.0, query_len=400),
    rec("search", "item", "cpu", "auto", "AMD EPYC (4 cores)", 8.0, query_len=100),
    rec("search", "item", "cpu", "auto", "AMD EPYC (4 cores)", 12.0, query_len=400),
    rec("search", "total", "cpu", "auto", "Intel Xeon x 16", 32.0, queries=2),
    rec("search", "call", "cuda", "cli", "NVIDIA H200", 1500.0, queries=2),
    rec("search", "total", "cuda", "auto", GPU, 2500.0, queries=2),
    rec("search", "item", "cuda", "auto", GPU, None, query_len=200),      # gcups missing
    rec("long", "item", "cpu", "scan", "AMD EPYC (4 cores)", 0.6, query=512, reference=512,
        threads=2),
    rec("long", "item", "cuda", "long", "NVIDIA H100 80GB HBM3", 900.0, query=10**6,
        reference=10**6),
    {"job": "makedb", "scope": "call", "backend": "cpu", "method": "streamed",
     "device": "AMD EPYC (1 of 4 cores)", "params": {"residues": 10**8}, "seconds": 12.0},
    {"job": "import", "scope": "call", "device": "NVIDIA H200", "seconds": 0.003,
     "params": {"loads_cupy": False}},
]


def texts(ax) -> list[str]:
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


def line(ax, label):
    (found,) = [ln for ln in ax.get_lines() if ln.get_label() == label]
    return list(found.get_xdata()), list(found.get_ydata())


def test_cores_from_threads_or_device():
    assert bplot.cores({"device": "AMD EPYC (2 cores)"}) == 2
    assert bplot.cores({"device": "AMD EPYC, 1 of 2 cores"}) == 1
    assert bplot.cores({"device": "Intel Xeon x 64"}) == 64
    assert bplot.cores({"device": "Intel @ 2.50GHz (1 of 2 cores: one thread)"}) == 1
    assert bplot.cores({"device": "AMD EPYC (2 cores)", "threads": 1}) == 1
    assert bplot.cores({"device": "AMD EPYC (2 cores)", "params": {"threads": 2}}) == 2
    assert bplot.cores({"device": "cpu"}) is None
    # a GPU's host cores are not the series' cores
    assert bplot.cores({"backend": "cuda", "device": GPU}) is None
    assert bplot.card({"backend": "cuda", "device": "4 x " + GPU}) == "NVIDIA H200"


def test_search_figure_kernel_and_call_side_by_side():
    fig = bplot.figure("search", RECORDS)
    kernel, call = fig.axes
    assert "kernel" in kernel.get_title() and "item" in kernel.get_title()
    assert "whole call" in call.get_title() and "total" in call.get_title()
    assert "4 records" in kernel.get_title() and "3 records" in call.get_title()
    assert kernel.get_ylabel() == "GCUPS (CPU series: per core)"
    assert kernel.get_xlabel() == "query length (residues)"
    title = fig.get_suptitle()
    assert "NVIDIA H200" in title and "AMD EPYC" in title
    assert "1 records with no GCUPS" in title          # said, not dropped silently
    # CPU GCUPS divided by the cores its device names; the GPU's as measured, card named
    cpu = "cpu auto — AMD EPYC (4 cores), per core (÷4)"
    assert line(kernel, cpu) == ([100, 400], [2.0, 3.0])
    assert line(kernel, "cuda auto — NVIDIA H200") == ([100, 400], [2000.0, 3000.0])
    assert "paper 003 Table III, 1 GPU (GTX 295)" in texts(kernel)
    # whole calls: the CPU total per core of "x 16", the CLI call on its card, against cells
    assert set(texts(call)) == {"cpu auto — Intel Xeon x 16, per core (÷16)",
                                "cuda cli — NVIDIA H200", "cuda auto — NVIDIA H200"}
    assert line(call, "cpu auto — Intel Xeon x 16, per core (÷16)")[1] == [2.0]
    assert call.get_xlabel() == bplot.CELLS_LABEL
    # one y axis for both panels, and a series keeps its colour in both
    assert kernel.get_shared_y_axes().joined(kernel, call)
    colour = {ax: [ln.get_color() for ln in ax.get_lines()
                   if ln.get_label() == "cuda auto — NVIDIA H200"] for ax in (kernel, call)}
    assert colour[kernel] == colour[call] and len(colour[call]) == 1


def test_every_job_gets_a_figure(tmp_path):
    paths = bplot.plot_all(RECORDS, tmp_path)
    assert [p.name for p in paths] == ["search.png", "long.png", "makedb.png", "import.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in paths)
    long_kernel = bplot.figure("long", RECORDS).axes[0]
    assert line(long_kernel, "cpu scan — AMD EPYC (4 cores), per core (÷2)") == (
        [512 * 512], [0.3])                       # params' threads=2 beats the device's 4
    assert "cuda long — NVIDIA H100 80GB HBM3" in texts(long_kernel)
    # no GCUPS in the job: seconds; no size in params: one bar per series
    makedb = bplot.figure("makedb", RECORDS)
    assert makedb.axes[0].get_ylabel() == "seconds"
    assert line(makedb.axes[1], "cpu streamed — AMD EPYC (1 of 4 cores)") == ([1e8], [12.0])
    imp = bplot.figure("import", RECORDS).axes[1]
    assert texts(imp) == ["import — NVIDIA H200"]
    assert [b.get_height() for b in imp.patches] == [0.003]
    assert bplot.figure("pairs", RECORDS) is None


def test_module_command_plots_every_job(tmp_path, capsys):
    src = tmp_path / "mixed.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    assert bench_main(["plot", str(src), "--out", str(tmp_path / "png")]) == 0
    printed = capsys.readouterr().out.split()
    assert sorted(Path(p).name for p in printed) == ["import.png", "long.png", "makedb.png",
                                                     "search.png"]


@pytest.mark.skipif(not RESULTS.is_dir(), reason="bench/results not in this checkout")
def test_real_results_every_job():
    recs = load_results([RESULTS])
    jobs = {r["job"] for r in recs}
    assert {"search", "long", "pairs", "locate", "lcs"} <= jobs
    for job in jobs:
        assert bplot.figure(job, recs) is not None, job
    # the two losses: the CPU search totals and the long-pair job
    call = bplot.figure("search", recs).axes[1]
    assert any("AMD EPYC" in t and "per core" in t for t in texts(call))
    long_kernel = bplot.figure("long", recs).axes[0]
    assert any(t.startswith("cuda long — NVIDIA") for t in texts(long_kernel))
