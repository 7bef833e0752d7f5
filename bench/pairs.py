#!/usr/bin/env python3
"""Bulk pair scoring benchmark (issue 4), paper 000's Tables IV/V setting.

Paper 000 scores 32,768 random DNA pairs, m = 128 against n = 1,024 ... 65,536, match 2 /
mismatch -1 / linear gap 1, and reports W2B (bit-transpose in), SWA, B2W (bit-untranspose
out), total and GCUPS. This script does the same on the CPU, for

* ``bitsliced-64``: our bitsliced kernel, one uint64 word (64 pairs) per group, as the
  paper's CPU implementation (and ``--words 8``: eight words per group);
* ``wordwise``: our inter-pair SIMD kernel (16-bit lanes);
* parasail ``sw_scan_16`` (one pair at a time, on a thread pool of the same cores).

Defaults fit a 2-core machine (2,048 pairs, n up to 4,096); ``--full`` runs the paper's
size. One JSON line per measurement (DESIGN.md "Measuring"), GCUPS = pairs * m * n /
seconds / 1e9 (the paper's definition); timings exclude encoding and compilation.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from warpalign import Scoring
from warpalign._backends.cpu import bitsliced, wordwise


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "cpu"


def emit(record: dict, out) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    if out:
        out.write(line + "\n")


def concat(seqs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pairs, length = seqs.shape
    return np.ascontiguousarray(seqs.ravel()), np.arange(pairs + 1, dtype=np.int64) * length


def run_parasail(xs: np.ndarray, ys: np.ndarray, scoring: Scoring, threads: int) -> np.ndarray:
    import parasail

    matrix = parasail.matrix_create("ACGT", scoring.match, scoring.mismatch)
    x_text = ["".join("ACGT"[c] for c in row) for row in xs]
    y_text = ["".join("ACGT"[c] for c in row) for row in ys]
    go, ge = scoring.gap_open, scoring.gap_extend

    def one(k):
        return parasail.sw_scan_16(x_text[k], y_text[k], go, ge, matrix).score

    with ThreadPoolExecutor(threads) as pool:
        t0 = time.perf_counter()
        scores = np.fromiter(pool.map(one, range(len(xs))), dtype=np.int32, count=len(xs))
        return scores, time.perf_counter() - t0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=2048)
    p.add_argument("-m", type=int, default=128)
    p.add_argument("-n", type=int, nargs="+", default=[1024, 2048, 4096])
    p.add_argument("--full", action="store_true",
                   help="the paper's size: 32,768 pairs, n = 1,024 ... 65,536")
    p.add_argument("--words", type=int, nargs="+", default=[1, 8],
                   help="uint64 words per bitsliced group (1 = bitsliced-64)")
    p.add_argument("--no-parasail", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", help="append the JSON lines to this file too")
    args = p.parse_args(argv)
    if args.full:
        args.pairs, args.n = 32768, [1 << k for k in range(10, 17)]
    command = "python " + " ".join([os.path.relpath(__file__)] + list(argv or sys.argv[1:]))

    import numba
    cores = numba.config.NUMBA_NUM_THREADS
    device = f"{cpu_name()} ({cores} cores)"
    scoring = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)   # paper 000, Table II
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    rng = np.random.default_rng(args.seed)

    # compile and warm up every kernel on a small input of the same shapes
    warm_x = rng.integers(0, 4, (64, args.m), dtype=np.uint8)
    warm_y = rng.integers(0, 4, (64, 256), dtype=np.uint8)
    for words in args.words:
        bitsliced.score_pairs(*concat(warm_x), *concat(warm_y), scoring, words=words)
    wordwise.score_pairs(*concat(warm_x), *concat(warm_y), scoring)

    for n in args.n:
        xs = rng.integers(0, 4, (args.pairs, args.m), dtype=np.uint8)
        ys = rng.integers(0, 4, (args.pairs, n), dtype=np.uint8)
        xc, xo = concat(xs)
        yc, yo = concat(ys)
        cells = args.pairs * args.m * n
        params = {"pairs": args.pairs, "m": args.m, "n": n, "match": 2, "mismatch": -1,
                  "gap": 1, "threads": cores}
        base = {"job": "pairs", "scope": "item", "backend": "cpu", "device": device,
                "params": params, "command": command}
        reference = None
        measured = []
        for words in args.words:
            t0 = time.perf_counter()
            scores, _, steps = bitsliced.score_pairs(xc, xo, yc, yo, scoring, words=words)
            total = time.perf_counter() - t0
            reference = scores if reference is None else reference
            if not np.array_equal(scores, reference):
                raise SystemExit("bitsliced results differ between word counts")
            measured.append((f"bitsliced-{64 * words}", total, steps))
        t0 = time.perf_counter()
        scores, saturated, steps = wordwise.score_pairs(xc, xo, yc, yo, scoring)
        total = time.perf_counter() - t0
        if saturated.size or not np.array_equal(scores, reference):
            raise SystemExit("wordwise and bitsliced scores differ")
        measured.append(("wordwise", total, steps))
        if not args.no_parasail:
            scores, seconds = run_parasail(xs, ys, scoring, cores)
            if not np.array_equal(scores, reference):
                raise SystemExit("parasail and bitsliced scores differ")
            measured.append(("parasail-sw_scan_16", seconds, {"swa": seconds}))
        baseline = "parasail sw_scan_16" if not args.no_parasail else None
        for method, total, steps in measured:
            record = dict(base, method=method, seconds=round(total, 6),
                          gcups=round(cells / total / 1e9, 3), baseline=baseline,
                          steps={k: round(v, 6) for k, v in steps.items()})
            emit(record, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
