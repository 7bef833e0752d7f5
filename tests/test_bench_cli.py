"""``warpalign bench``: end to end on tiny settings (CPU), and the reproduction report."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from warpalign import cli
from warpalign.bench import papers, report, runner

DESIGN_KEYS = {"job", "scope", "backend", "method", "device", "params", "seconds", "gcups",
               "baseline", "command"}
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"

TINY = {
    "search": {"matrix": "BLOSUM62", "gap_open": 11, "gap_extend": 1, "max_queries": 2,
               "baseline_every": 200, "repeat": 1},
    "pairs": {"pairs": 64, "m": 128, "n": [256, 512], "baseline_pairs": 16, "repeat": 1},
    "lcs": {"sizes": [(2000, 3000)], "lcs_sizes": [(2000, 2000)], "baseline_max_cells": 1e11,
            "repeat": 1},
    "locate": {"queries": [64], "min_size": 1024, "max_size": 4096, "dp_max_size": 2048,
               "repeat": 1},
}


def bench(*argv):
    """``warpalign bench ARGS`` through cli.main."""
    return cli.main(["bench", *argv])


def test_quick_cpu_end_to_end(tmp_path):
    out = tmp_path / "b"
    out.mkdir()
    # an earlier run's job in the folder: plotted too (the plots show every job there)
    earlier = {"job": "long", "scope": "item", "backend": "cuda", "method": "long",
               "device": "NVIDIA H200", "params": {"query": 4096, "reference": 4096},
               "seconds": 0.01, "gcups": 1.7, "baseline": None, "command": "bench/long.py"}
    (out / "long_gpu.jsonl").write_text(json.dumps(earlier) + "\n")
    jobs = ["search", "pairs", "lcs", "locate"]
    records = runner.run(jobs, quick=True, backend="cpu", out=out, sizes=TINY)
    table = runner.format_table(records)
    assert table.splitlines()[0].split() == ["job", "backend", "method", "size", "seconds",
                                             "GCUPS", "baseline"]
    for job in jobs:
        lines = (out / f"{job}.jsonl").read_text().splitlines()
        assert lines, job
        records = [json.loads(line) for line in lines]
        for rec in records:
            assert DESIGN_KEYS <= rec.keys(), (job, DESIGN_KEYS - rec.keys())
            assert rec["job"] == job
            assert rec["seconds"] > 0 and rec["gcups"] > 0
            assert rec["command"].startswith("warpalign bench")
        assert any(r["backend"] == "cpu" for r in records)
        # every in-run baseline agrees with our answers
        for flag in ("best_scores_agree", "scores_agree", "agrees"):
            assert all(r[flag] for r in records if flag in r)
        png = out / f"{job}.png"
        if HAS_MATPLOTLIB:
            assert png.stat().st_size > 1000
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        else:   # JSON lines only, said on stderr
            assert not png.exists()
        assert f"\n{job} " in "\n" + table
    assert (out / "long.png").exists() == HAS_MATPLOTLIB


def test_bad_job_name(tmp_path, capsys):
    assert bench("serach", "--quick", "--out", str(tmp_path)) != 0
    err = capsys.readouterr().err
    assert "invalid job: 'serach'" in err
    for job in runner.JOBS:
        assert job in err
    assert "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_full_settings_are_the_papers():
    # paper 000 Tables IV/V: 32K pairs, m = 128, n = 1,024 ... 65,536
    full = runner.settings("pairs", quick=False, backend="cuda")
    assert (full["pairs"], full["m"], full["n"][0], full["n"][-1]) == (32768, 128, 1024, 65536)
    assert runner.settings("pairs", quick=False, backend="cpu")["pairs"] == 2048
    # paper 002 Fig. 5: references up to 33 M (2^25) on the GPU
    assert runner.settings("locate", quick=False, backend="cuda")["max_size"] == 1 << 25


def test_published_numbers():
    # pinned to the papers' tables (../shared/papers): 000 Table V, 003 Table III
    pairs = {(r["x"], r["series"]): r["gcups"] for r in papers.published("pairs")}
    assert pairs[(2048, "paper 000 Table V, GTX TITAN X")] == 2022.85
    search = papers.published("search")
    assert (search[-1]["x"], search[-1]["gcups"]) == (567, 12.71)
    # paper 001 Table 1, 5M x 1M in 335.10 s
    assert papers.published("lcs")[0]["gcups"] == pytest.approx(5e12 / 335.10 / 1e9)


@pytest.mark.skipif(not RESULTS.is_dir(), reason="bench/results not in this checkout")
def test_report_reads_only_measured_lines():
    text = report.report([RESULTS])
    for title in ("Paper 000", "Paper 001", "Paper 002", "Paper 003", "Paper 004"):
        assert f"## {title}" in text
    assert "not measured yet" in text
    # every device and command the report cites is in a results file
    measured = report.load_results([RESULTS])
    commands = {r["command"] for r in measured}
    cited = [line for line in text.splitlines() if line.startswith("- ") and "` — `" in line]
    assert cited
    for line in cited:
        assert line.rsplit("` — `", 1)[1].rstrip("`") in commands


def test_cuda_unavailable_says_why(tmp_path, capsys):
    from warpalign._backends import get_backend
    from warpalign.errors import BackendUnavailable
    try:
        get_backend("cuda")
    except BackendUnavailable:
        pass
    else:
        pytest.skip("a CUDA device answers here")
    assert bench("lcs", "--quick", "--backend", "cuda", "--out", str(tmp_path)) != 0
    err = capsys.readouterr().err
    assert err.startswith("warpalign bench: error:") and "Traceback" not in err
