#!/usr/bin/env python3
"""Bulk pair scoring benchmark (issue 4), paper 000's Tables IV/V setting.

Paper 000 scores 32,768 random DNA pairs, m = 128 against n = 1,024 ... 65,536, match 2 /
mismatch -1 / linear gap 1, and reports W2B (bit-transpose in), SWA, B2W (bit-untranspose
out), total and GCUPS. This script does the same on the CPU, for

* ``bitsliced-64``: our bitsliced kernel, one uint64 word (64 pairs) per group, as the
  paper's CPU implementation (and ``--words 8``: eight words per group);
* ``wordwise``: our inter-pair SIMD kernel (16-bit lanes);
* parasail ``sw_scan_16`` (one pair at a time, on a thread pool of the same cores);

and with ``--gpu``, on the CUDA device (``_backends/cuda/pairs.py``, ``bitsliced.py``):

* ``bitsliced-32``: the bitsliced circuits on 32-bit words, steps H2G / W2B / SWA / B2W /
  G2H as the paper's Table IV GPU columns (W2B/B2W by the default transpose; the variants
  ``bitsliced-32-ballot`` / ``bitsliced-32-swap`` name it: __ballot_sync, or the paper's
  32x32 swap/copy network of its Table I);
* ``wordwise``: the 16-bit packed DPX kernel (two pairs per register), H2G / SWA / G2H.

GPU rows report ``gcups`` over the whole call (transfers included) and ``gcups_swa`` over
the DP kernel alone; each is the median of ``--repeat`` runs after a warm-up. With
``--cpu-pairs N`` the CPU methods (parasail included, on all cores) run on the first N
pairs only (same rate, less time), in the same run as the GPU rows: the in-run baseline.
``--variants`` alone adds every GPU variant; ``--variants NAME ...`` only those named.

Defaults fit a 2-core machine (2,048 pairs, n up to 4,096); ``--full`` runs the paper's
size. One JSON line per measurement (DESIGN.md "Measuring"), GCUPS = pairs * m * n /
seconds / 1e9 (the paper's definition); timings exclude encoding and compilation.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np

from _common import cpu_name, emit
from warpalign import Scoring
from warpalign._backends.cpu import bitsliced, wordwise


def concat(seqs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pairs, length = seqs.shape
    return np.ascontiguousarray(seqs.ravel()), np.arange(pairs + 1, dtype=np.int64) * length


def run_parasail(xs: np.ndarray, ys: np.ndarray, scoring: Scoring,
                 threads: int) -> tuple[np.ndarray, float]:
    """parasail ``sw_scan_16`` pair by pair on ``threads`` threads (ctypes drops the GIL
    during each call); scores and wall seconds."""
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
    p.add_argument("--gpu", action="store_true", help="also the CUDA methods")
    p.add_argument("--cpu-pairs", type=int, default=None,
                   help="run the CPU methods on the first N pairs only (0: none)")
    p.add_argument("--repeat", type=int, default=3, help="GPU runs per size (median)")
    p.add_argument("--kernel-runs", type=int, default=1, metavar="K",
                   help="launch each GPU DP kernel K times back to back; gcups_swa from the "
                        "mean (K = 1: one launch right after the host-to-device copy)")
    p.add_argument("--variants", nargs="*", default=None, metavar="NAME",
                   help="also the GPU kernel variants (bitsliced columns per iteration and "
                        "transpose, word-wise rows per lane); no NAME: all of them")
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

    failed = []
    if not args.no_parasail:
        try:
            import parasail  # noqa: F401
        except ImportError as exc:   # say so: the in-run baseline is missing
            print(f"parasail not importable, no sw_scan_16 baseline: {exc}", file=sys.stderr)
            args.no_parasail = True
    cpu_pairs = args.pairs if args.cpu_pairs is None else min(args.cpu_pairs, args.pairs)
    gpu = None
    if args.gpu:
        from warpalign._backends.cuda import bitsliced as gpu_bits
        from warpalign._backends.cuda import pairs as gpu
        gpu_device = gpu.device_name()

    # compile and warm up every kernel on a small input of the same shapes
    warm_x = rng.integers(0, 4, (64, args.m), dtype=np.uint8)
    warm_y = rng.integers(0, 4, (64, 256), dtype=np.uint8)
    if cpu_pairs:
        for words in args.words:
            bitsliced.score_pairs(*concat(warm_x), *concat(warm_y), scoring, words=words)
        wordwise.score_pairs(*concat(warm_x), *concat(warm_y), scoring)
    methods = []
    if gpu is not None:
        methods = [("bitsliced-32", gpu_bits.score_bitsliced), ("wordwise", gpu.score_wordwise)]
        if args.variants is not None:
            variants = [(f"bitsliced-32-cols{cols}", partial(gpu_bits.score_bitsliced, cols=cols))
                        for cols in (2, 4)]
            variants += [(f"bitsliced-32-{tr}", partial(gpu_bits.score_bitsliced, transpose=tr))
                         for tr in gpu_bits.BS_TRANSPOSES]
            variants.append(("wordwise-r16", partial(gpu.score_wordwise, rows=16)))
            variants.append(("wordwise-noprefetch", partial(gpu.score_wordwise,
                                                            prefetch=False)))
            variants += [(f"bitsliced-32-pf{k}", partial(gpu_bits.score_bitsliced, prefetch=k))
                         for k in (0, 1, 3)]
            unknown = set(args.variants) - {name for name, _ in variants}
            if unknown:
                p.error(f"unknown variants {sorted(unknown)}; "
                        f"known: {[name for name, _ in variants]}")
            methods += [v for v in variants if not args.variants or v[0] in args.variants]
        if args.kernel_runs != 1:
            methods = [(name, partial(fn, kernel_runs=args.kernel_runs)) for name, fn in methods]
        for _, fn in methods:   # compiles each kernel (NVRTC) outside the timings
            fn(*concat(warm_x), *concat(warm_y), scoring)

    for n in args.n:
        xs = rng.integers(0, 4, (args.pairs, args.m), dtype=np.uint8)
        ys = rng.integers(0, 4, (args.pairs, n), dtype=np.uint8)
        params = {"pairs": args.pairs, "m": args.m, "n": n, "match": 2, "mismatch": -1,
                  "gap": 1}
        reference = None
        if gpu is not None:
            baseline_note = None
            if cpu_pairs:
                baseline_note = (("parasail sw_scan_16, " if not args.no_parasail else "")
                                 + f"bitsliced-64, wordwise on the CPU ({cpu_pairs} pairs, "
                                 f"{cores} threads) in the same run")
            xc, xo = concat(xs)
            yc, yo = concat(ys)
            cells = args.pairs * args.m * n
            runs = {}
            from warpalign._backends.cpu.pairwise import score_end
            check = np.random.default_rng(n).choice(args.pairs, 16, replace=False)
            # one untimed call at this size first: the device memory pool grows here, not
            # inside the first method's timed H2G
            methods[0][1](xc, xo, yc, yo, scoring)
            for method, fn in methods:
                got = []
                for _ in range(max(1, args.repeat)):
                    t0 = time.perf_counter()
                    scores, saturated, steps = fn(xc, xo, yc, yo, scoring)
                    got.append((time.perf_counter() - t0, steps))
                got.sort(key=lambda r: r[1]["swa"])
                # spot check against the exact scalar kernel, and the two GPU methods agree
                exact = all(score_end(xs[k], ys[k], scoring.matrix, scoring.gap_open,
                                      scoring.gap_extend, 0)[0] == scores[k]
                            for k in check.tolist())
                exact = exact and not saturated.size
                if reference is None:
                    reference = scores
                else:
                    exact = exact and np.array_equal(scores, reference)
                if not exact:
                    failed.append(f"GPU {method}, n={n}")
                runs[method] = got[len(got) // 2] + (exact,)
            for method, (total, steps, exact) in runs.items():
                extra = ({"transpose": method.rsplit("-", 1)[1]
                          if method.endswith(("-ballot", "-swap")) else gpu_bits.BS_TRANSPOSE}
                         if method.startswith("bitsliced") else {})
                record = {"job": "pairs", "scope": "item", "backend": "cuda", "method": method,
                          **extra,
                          "device": gpu_device,
                          "params": ({**params, "kernel_runs": args.kernel_runs}
                                     if args.kernel_runs != 1 else params),
                          "seconds": round(total, 6),
                          "gcups": round(cells / total / 1e9, 1),
                          "gcups_swa": round(cells / steps["swa"] / 1e9, 1),
                          **({"gcups_swa_pack": round(cells / (steps["swa"] + steps["pack"])
                                                      / 1e9, 1)} if "pack" in steps else {}),
                          "baseline": baseline_note,
                          "steps": {k: round(v, 6) for k, v in steps.items()},
                          "verified": exact, "command": command}
                emit(record, out)
        if not cpu_pairs:
            continue
        xs, ys = xs[:cpu_pairs], ys[:cpu_pairs]
        xc, xo = concat(xs)
        yc, yo = concat(ys)
        cells = cpu_pairs * args.m * n
        params = dict(params, pairs=cpu_pairs, threads=cores)
        base = {"job": "pairs", "scope": "item", "backend": "cpu", "device": device,
                "params": params, "command": command}
        gpu_reference = None if reference is None else reference[:cpu_pairs]
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
        if gpu_reference is not None and not np.array_equal(reference, gpu_reference):
            failed.append(f"CPU and GPU scores differ, n={n}")
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
    if failed:
        raise SystemExit("scores not exact: " + "; ".join(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
