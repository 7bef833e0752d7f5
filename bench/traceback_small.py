#!/usr/bin/env python3
"""Traceback of one small segment (``locate(..., mode="full")``'s CPU part), step by step.

Two cases, each the median (and minimum) of ``--repeat`` calls after a warm-up, one
thread:

* ``dna``: a 256-letter query against a 291-letter segment (the query is letters 10..266
  of the segment with 5% substitutions), paper 002's scoring (match 1, mismatch -2, gap
  open 5, extend 1): the segment ``locate`` traces a 256-letter read on.
* ``protein``: 300 against 400 letters (letters 50..350 with 30% substitutions),
  BLOSUM62, gap open 11, extend 1.

Steps: ``score_end`` (the score pass ``align_from_end`` skips), ``anchored_start`` (the
reverse pass to the start), ``global_path`` (the path, given the score), ``align_codes``
(everything, what ``locate`` ran before), ``align_from_end`` and ``align_from_end
check_end`` (what ``locate`` runs now). With ``--baseline FILE`` (a copy of an older
``warpalign/traceback.py``) its ``_anchored_start``, ``global_path`` and ``align_codes``
are timed in the same run, for before/after numbers on the same machine; every
alignment is checked equal to the baseline's.

Run:  python bench/traceback_small.py [--baseline /tmp/old_traceback.py] [--out FILE]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time

import numpy as np

from _common import cpu_name, emit
from warpalign._backends.cpu.pairwise import LOCAL, score_end
from warpalign._backends.cpu.traceback import anchored_start
from warpalign.scoring import Scoring
from warpalign.traceback import align_codes, align_from_end, global_path


def cases():
    rng = np.random.default_rng(1)
    t = rng.integers(0, 4, 291).astype(np.uint8)
    q = t[10:266].copy()
    flip = rng.random(len(q)) < 0.05
    q[flip] = rng.integers(0, 4, int(flip.sum()))
    yield "dna", q, t, Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
    rng = np.random.default_rng(1)
    t = rng.integers(0, 20, 400).astype(np.uint8)
    q = t[50:350].copy()
    flip = rng.random(len(q)) < 0.3
    q[flip] = rng.integers(0, 20, int(flip.sum()))
    yield "protein", q, t, Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)


def timed(run, repeat: int) -> tuple[float, float]:
    """(median, minimum) seconds of ``repeat`` calls after ``repeat // 10 + 5`` warm-up calls."""
    for _ in range(repeat // 10 + 5):
        run()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def load_baseline(path: str):
    """An older traceback.py as the module ``warpalign._traceback_baseline``."""
    spec = importlib.util.spec_from_file_location("warpalign._traceback_baseline", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def run_case(name, q, t, s, base, repeat, device, command, out) -> None:
    """Time every step on one case; one JSON line per step."""
    m, go, ge = s.matrix, s.gap_open, s.gap_extend
    score, qe, te = (int(v) for v in score_end(q, t, m, go, ge, LOCAL))
    di, dj = (int(v) for v in anchored_start(q, qe, t, te, m, go, ge, score, False))
    qs, ts = qe - di, te - dj
    want = align_codes(q, t, s)
    assert want == align_from_end(q, t, s, score, qe, te, check_end=True)
    if base is not None:
        assert base.align_codes(q, t, s) == want, "the baseline's alignment differs"
    steps = {
        "score_end": lambda: score_end(q, t, m, go, ge, LOCAL),
        "anchored_start": lambda: anchored_start(q, qe, t, te, m, go, ge, score, False),
        "global_path": lambda: global_path(q, t, s, qs, qe, ts, te, score=score),
        "align_codes": lambda: align_codes(q, t, s),
        "align_from_end": lambda: align_from_end(q, t, s, score, qe, te),
        "align_from_end check_end": lambda: align_from_end(q, t, s, score, qe, te, check_end=True),
    }
    if base is not None:
        steps["baseline anchored_start"] = lambda: base._anchored_start(q, qe, t, te, m, go, ge,
                                                                        score, False)
        steps["baseline global_path"] = lambda: base.global_path(q, t, s, qs, qe, ts, te)
        steps["baseline align_codes"] = lambda: base.align_codes(q, t, s)
    for step, run in steps.items():
        median, best = timed(run, repeat)
        emit({"job": "traceback_small", "scope": "item", "backend": "cpu", "device": device,
              "params": {"case": name, "m": len(q), "n": len(t), "score": score,
                         "start": [qs, ts], "end": [qe, te], "repeat": repeat},
              "method": step, "seconds": round(median, 7), "min_seconds": round(best, 7),
              "command": command}, out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=1000)
    p.add_argument("--baseline", help="a copy of an older warpalign/traceback.py to time too")
    p.add_argument("--out", help="append the JSON lines to this file too")
    args = p.parse_args(argv)
    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at the end)
    base = load_baseline(args.baseline) if args.baseline else None
    device = f"{cpu_name()}, 1 thread"
    for name, q, t, s in cases():
        run_case(name, q, t, s, base, args.repeat, device, command, out)
    if out is not None:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
