#!/usr/bin/env python3
"""LCS benchmark (issue 5, paper 001): LLCS and full LCS, ours vs rapidfuzz, same run.

Prints one JSON line per measurement (DESIGN.md "Measuring"), job "lcs", gcups = |a|·|b| /
seconds / 1e9 (G cells/s; the full LCS counts the same cells although Hirschberg does about
twice the work). Measured, each on the same inputs in this run:

- random DNA pairs (``--sizes``, in symbols): our LLCS on one thread and on all cores,
  rapidfuzz's ``LCSseq.similarity`` (one core) as the baseline; our full LCS with
  ``--lcs-sizes``;
- the two E. coli genomes of ../shared/data (4.6 M × 4.6 M): the LLCS, and the full LCS
  with ``--ecoli-lcs`` (minutes on a CPU).

Paper 001's Table 1 grid (A = 5 M … 20 M, B = 1 M … 10 M) is ``--sizes 5000000x1000000 ...``;
on a CPU one such LCS takes minutes to hours. ``--backend cuda`` times the GPU path once the
CUDA LCS kernel is there. Best of ``--repeat`` runs each.

``--backend cuda`` (GPU machine) measures instead: the GPU LLCS of each ``--sizes`` pair
(G cells/s over the wall time of ``lcs_length`` and over the kernel time alone), with our
CPU kernel on all cores on the same pair as the baseline (pairs up to ``--cpu-max-cells``);
the full LCS of each ``--lcs-sizes`` pair (paper 001's Table 1) with total / GPU / transfer /
CPU-only columns (wall time with a kernel of ours running, with a copy running, with
neither) and the CPU seconds of all threads, its length checked against the GPU LLCS and
the string checked to be a common subsequence (and, up to ``--cpu-lcs-max-cells``, timed
against our CPU-only LCS on all cores and checked to be the same string);
and the E. coli pair with ``--ecoli`` / ``--ecoli-lcs``.
"""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import time
from pathlib import Path

import numpy as np

from _common import cpu_name
from _common import emit as emit_line
from _common import usable_cores as cores
from warpalign.lcs import lcs, lcs_length

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1] / "shared" / "data" / "dna"


def fasta_first(path: Path) -> bytes:
    from Bio.SeqIO.FastaIO import SimpleFastaParser

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as fh:
        return next(SimpleFastaParser(fh))[1].encode("ascii")


def timed(fn, repeat: int):
    best, value = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def parse_size(s: str) -> tuple[int, int]:
    a, _, b = s.lower().partition("x")
    return int(float(a)), int(float(b or a))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", nargs="*", default=["300000x300000", "1000000x1000000"],
                   help="random DNA sizes AxB for the LLCS (default: 3e5², 1e6²)")
    p.add_argument("--lcs-sizes", nargs="*", default=["300000x300000"],
                   help="random DNA sizes AxB for the full LCS")
    p.add_argument("--ecoli", action="store_true", help="LLCS of the two E. coli genomes")
    p.add_argument("--ecoli-lcs", action="store_true", help="full LCS of the two E. coli genomes")
    p.add_argument("--backend", default="cpu", choices=("auto", "cpu", "cuda"))
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--no-rapidfuzz", action="store_true")
    p.add_argument("--out", help="append the JSON lines to this file too")
    p.add_argument("--cpu-max-cells", type=float, default=1e11,
                   help="GPU runs: CPU LLCS baseline on pairs up to this many cells")
    p.add_argument("--cpu-lcs-max-cells", type=float, default=0,
                   help="GPU runs: CPU full LCS (timed baseline, same string) up to this many cells")
    p.add_argument("--sweep", action="store_true",
                   help="GPU runs: instead of the rows above, time the single LLCS pass of each "
                        "--sizes pair for every combination of the --sweep-* lists (the vector "
                        "checked equal to the defaults'), with how the bands landed on SMs")
    p.add_argument("--sweep-k", default="2,3,4", help="words per lane (K) to sweep")
    p.add_argument("--sweep-warps", default="1,2,4", help="bands (warps) per block to sweep")
    p.add_argument("--sweep-sync", default="flag,tagged", help="ring hand-off variants")
    p.add_argument("--sweep-staging", default="pinned", help="pinned and/or pageable uploads")
    p.add_argument("--sweep-max-bands", default="0",
                   help="bands per launch at most (0: as many as fit) to sweep")
    args = p.parse_args(argv)
    if args.backend == "cuda" and args.sweep:
        return sweep_main(args, argv)
    if args.backend == "cuda":
        return gpu_main(args, argv)
    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at the end)
    ncores = cores()
    cpu = cpu_name()

    def emit(method, a, b, seconds, threads, data, baseline=None, **extra):
        cells = len(a) * len(b)
        device = cpu if args.backend == "cpu" else args.backend
        rec = {"job": "lcs", "scope": "item", "backend": args.backend, "method": method,
               "device": f"{device}, {threads} of {ncores} cores",
               "params": {"a_len": len(a), "b_len": len(b), "threads": threads, "data": data,
                          **extra},
               "seconds": round(seconds, 4), "gcups": round(cells / seconds / 1e9, 2),
               "baseline": baseline, "command": command}
        emit_line(rec, out)
        return rec

    lcs_length(b"ACGT" * 3000, b"AGCT" * 3000, backend=args.backend)   # compile
    lcs(b"ACGT" * 3000, b"AGCT" * 3000, backend=args.backend)
    rng = np.random.default_rng(2014)
    acgt = np.frombuffer(b"ACGT", np.uint8)

    def compare(a, b, data, rf_repeat):
        base = None
        if not args.no_rapidfuzz:
            from rapidfuzz.distance import LCSseq
            sec, ref = timed(lambda: LCSseq.similarity(a, b), rf_repeat)
            r = emit("rapidfuzz LCSseq.similarity", a, b, sec, 1, data, llcs=ref)
            base = {"method": r["method"], "gcups": r["gcups"], "threads": 1}
        for threads in sorted({1, ncores}):
            sec, got = timed(lambda t=threads: lcs_length(a, b, backend=args.backend, threads=t),
                             args.repeat)
            if base is not None and got != ref:
                raise SystemExit(f"LLCS mismatch on {data}: ours {got}, rapidfuzz {ref}")
            emit("llcs bit-parallel", a, b, sec, threads, data, base, llcs=got)

    for size in args.sizes:
        na, nb = parse_size(size)
        a = acgt[rng.integers(0, 4, na)].tobytes()
        b = acgt[rng.integers(0, 4, nb)].tobytes()
        compare(a, b, "random DNA", args.repeat)

    for size in args.lcs_sizes:
        na, nb = parse_size(size)
        a = acgt[rng.integers(0, 4, na)].tobytes()
        b = acgt[rng.integers(0, 4, nb)].tobytes()
        for threads in sorted({1, ncores}):
            sec, s = timed(lambda x=a, y=b, t=threads: lcs(x, y, backend=args.backend, threads=t), 1)
            emit("lcs hirschberg", a, b, sec, threads, "random DNA", None, lcs_len=len(s))

    if args.ecoli or args.ecoli_lcs:
        a = fasta_first(SHARED / "ecoli_K12_W3110.fasta.gz")
        b = fasta_first(SHARED / "ecoli_EC590.fasta.gz")
        data = "E. coli K-12 W3110 vs EC590"
        if args.ecoli:
            sec, got = timed(lambda: lcs_length(a, b, backend=args.backend), 1)
            emit("llcs bit-parallel", a, b, sec, ncores, data, None, llcs=got)
        if args.ecoli_lcs:
            import resource
            sec, s = timed(lambda: lcs(a, b, backend=args.backend), 1)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
            emit("lcs hirschberg", a, b, sec, ncores, data, None, lcs_len=len(s),
                 peak_rss_mib=peak)
    if out:
        out.close()
    return 0


def _data_file(name: str) -> Path | None:
    for d in (SHARED, HERE.parent / ".carry"):
        if (d / name).exists():
            return d / name
    print(f"# {name} not found in {SHARED} or .carry/: skipped", flush=True)
    return None


def _is_subsequence(s: bytes, t: bytes) -> bool:
    import numba as nb

    @nb.njit(cache=False)
    def sub(x, y):
        j = 0
        for i in range(x.shape[0]):
            while j < y.shape[0] and y[j] != x[i]:
                j += 1
            if j == y.shape[0]:
                return False
            j += 1
        return True

    return bool(sub(np.frombuffer(s, np.uint8), np.frombuffer(t, np.uint8)))


def gpu_main(args, argv) -> int:
    """GPU rows: LLCS G cells/s and the full LCS (total / CPU / GPU / transfer)."""
    import resource

    import cupy

    from warpalign._backends.cuda import lcs as gpu

    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))
    out = open(args.out, "a") if args.out else None  # noqa: SIM115
    ncores = cores()
    cpu = cpu_name()
    gname = gpu._device().name
    pool = cupy.get_default_memory_pool()

    def emit(method, a, b, seconds, data, baseline=None, device=None, scope="item", **extra):
        cells = len(a) * len(b)
        rec = {"job": "lcs", "scope": scope, "cold": False,
               "backend": "cuda" if device is None else "cpu", "method": method,
               "device": device or f"{gname} (host: {cpu}, {ncores} cores)",
               "params": {"a_len": len(a), "b_len": len(b), "data": data, **extra},
               "seconds": round(seconds, 4), "gcups": round(cells / seconds / 1e9, 2),
               "baseline": baseline, "command": command}
        emit_line(rec, out)
        return rec

    # compile / warm up both sides
    w = np.frombuffer(b"ACGT" * 50000, np.uint8)
    gpu.final_vector(w, 0, len(w), w, 0, len(w), False)
    lcs_length(b"ACGT" * 3000, b"AGCT" * 3000, backend="cpu")
    lcs(b"ACGT" * 3000, b"AGCT" * 3000, backend="cpu")
    rng = np.random.default_rng(2014)
    acgt = np.frombuffer(b"ACGT", np.uint8)

    def llcs_rows(a, b, data):
        cells = len(a) * len(b)
        best, got, kern = float("inf"), None, None
        for _ in range(args.repeat):
            gpu.reset_stats()
            t = time.perf_counter()
            got = lcs_length(a, b, backend="cuda")
            sec = time.perf_counter() - t
            if sec < best:
                best, kern = sec, dict(gpu.STATS)
        base = None
        if cells <= args.cpu_max_cells:
            sec, ref = timed(lambda: lcs_length(a, b, backend="cpu", threads=ncores), 1)
            if ref != got:
                raise SystemExit(f"LLCS mismatch on {data}: GPU {got}, CPU {ref}")
            r = emit("llcs bit-parallel (our CPU kernel)", a, b, sec, data,
                     device=f"{cpu}, {ncores} of {ncores} cores", scope="call", mode="length",
                     llcs=ref, threads=ncores)
            base = {"method": r["method"], "gcups": r["gcups"], "threads": ncores,
                    "device": r["device"]}
            if not args.no_rapidfuzz:
                from rapidfuzz.distance import LCSseq
                sec, ref = timed(lambda: LCSseq.similarity(a, b), 1)
                if ref != got:
                    raise SystemExit(f"LLCS mismatch on {data}: GPU {got}, rapidfuzz {ref}")
                r = emit("rapidfuzz LCSseq.similarity", a, b, sec, data,
                         device=f"{cpu}, 1 core", scope="call", mode="length", llcs=ref,
                         threads=1)
                base = [base, {"method": r["method"], "gcups": r["gcups"], "threads": 1,
                               "device": r["device"]}]
        plan = gpu.plan(min(len(a), len(b)))
        emit("llcs gpu (skewed warp bands)", a, b, best, data, base, scope="call",
             mode="length", llcs=got,
             kernel_s=round(kern["kernel_s"], 4),
             kernel_gcups=round(cells / kern["kernel_s"] / 1e9, 2),
             transfer_s=round(kern["h2d_s"] + kern["d2h_s"], 4),
             cpu_checked=base is not None, K=plan["K"], bands=plan["bands_per_launch"],
             launches=plan["launches"])
        return got

    def cpu_seconds():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    def lcs_row(a, b, data, llcs):
        """Columns: total (wall); gpu = wall time with >= 1 of our kernels running; transfer
        = wall time with >= 1 copy running; cpu_only = wall time with neither (host and CPU
        base cases alone); cpu_core_s = CPU seconds of all threads (busy cores x time)."""
        pool.free_all_blocks()
        gpu.reset_stats()
        c0 = cpu_seconds()
        t = time.perf_counter()
        s = lcs(a, b, backend="cuda")
        total = time.perf_counter() - t
        cpu_core = cpu_seconds() - c0
        st = dict(gpu.STATS)
        busy_k = gpu.busy_seconds("kernel")
        busy_c = gpu.busy_seconds("copy")
        busy_any = gpu.busy_seconds("kernel", "copy")
        if llcs is not None and len(s) != llcs:
            raise SystemExit(f"LCS length {len(s)} != LLCS {llcs} on {data}")
        if not (_is_subsequence(s, a) and _is_subsequence(s, b)):
            raise SystemExit(f"LCS of {data} is not a common subsequence")
        base, same_as_cpu = None, None
        if len(a) * len(b) <= args.cpu_lcs_max_cells:
            sec, s_cpu = timed(lambda: lcs(a, b, backend="cpu", threads=ncores), 1)
            same_as_cpu = s_cpu == s
            r = emit("lcs hirschberg (our CPU kernels)", a, b, sec, data,
                     device=f"{cpu}, {ncores} of {ncores} cores", scope="call",
                     mode="string", lcs_len=len(s_cpu),
                     threads=ncores)
            base = {"method": r["method"], "gcups": r["gcups"], "seconds": r["seconds"],
                    "threads": ncores, "device": r["device"]}
            if not same_as_cpu:
                raise SystemExit(f"GPU LCS differs from the CPU's on {data}")
        emit("lcs hirschberg (GPU levels batched, passes >= BATCH_MIN_CELLS; CPU below)",
             a, b, total, data, base, scope="call", mode="string",
             lcs_len=len(s), total_s=round(total, 3), gpu_s=round(busy_k, 3),
             transfer_s=round(busy_c, 3), cpu_only_s=round(max(0.0, total - busy_any), 3),
             cpu_core_s=round(cpu_core, 2), gpu_kernel_sum_s=round(st["kernel_s"], 3),
             gpu_passes=st["passes"], gpu_launches=st["launches"], gpu_cells=st["cells"],
             min_cells=gpu.BATCH_MIN_CELLS, same_as_cpu=same_as_cpu,
             gpu_pool_mib=round(pool.total_bytes() / 2**20, 1),
             peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)

    for size in args.sizes:
        na, nb = parse_size(size)
        a = acgt[rng.integers(0, 4, na)].tobytes()
        b = acgt[rng.integers(0, 4, nb)].tobytes()
        llcs_rows(a, b, "random DNA")

    for size in args.lcs_sizes:
        na, nb = parse_size(size)
        a = acgt[rng.integers(0, 4, na)].tobytes()
        b = acgt[rng.integers(0, 4, nb)].tobytes()
        llcs = lcs_length(a, b, backend="cuda")
        lcs_row(a, b, "random DNA (paper 001 Table 1 shape)", llcs)

    files = ([_data_file("ecoli_K12_W3110.fasta.gz"), _data_file("ecoli_EC590.fasta.gz")]
             if args.ecoli or args.ecoli_lcs else [None])
    if None not in files:
        a, b = fasta_first(files[0]), fasta_first(files[1])
        data = "E. coli K-12 W3110 vs EC590"
        llcs = llcs_rows(a, b, data) if args.ecoli else lcs_length(a, b, backend="cuda")
        if args.ecoli_lcs:
            lcs_row(a, b, data, llcs)
    if out:
        out.close()
    return 0


def sweep_main(args, argv) -> int:
    """One JSON row per (pair, K, warps, sync, acc, staging, max_bands): whole-pass seconds
    (upload, alphabet, kernel, vector back, popcount) and kernel seconds, the LLCS, and the
    bands' placement: warps per SM (max / mean) and per scheduler (warp slot % 4)."""
    import itertools
    from collections import Counter

    from warpalign._backends.cpu import lcs as cpu_lcs
    from warpalign._backends.cuda import lcs as gpu

    command = "python " + " ".join([os.path.relpath(__file__)] + (argv or sys.argv[1:]))
    out = open(args.out, "a") if args.out else None  # noqa: SIM115
    gname = gpu._device().name
    rng = np.random.default_rng(2014)
    acgt = np.frombuffer(b"ACGT", np.uint8)

    def ints(v):
        return [int(x) for x in v.split(",") if x]

    def words(v):
        return [x for x in v.split(",") if x]

    grid = list(itertools.product(ints(args.sweep_k), ints(args.sweep_warps),
                                  words(args.sweep_sync), words(args.sweep_staging),
                                  ints(args.sweep_max_bands)))
    for size in args.sizes:
        na, nb = parse_size(size)
        a = acgt[rng.integers(0, 4, na)]
        b = acgt[rng.integers(0, 4, nb)]
        pat, txt = (a, b) if na <= nb else (b, a)
        ref = gpu.final_vector(pat, 0, len(pat), txt, 0, len(txt), False)   # defaults
        for k, warps, sync, staging, mb in grid:
            kw = dict(k=k, warps=warps, sync=sync, staging=staging, max_bands=mb or None)
            gpu.final_vector(pat, 0, min(len(pat), 1 << 16), txt, 0, 4096, False, **kw)  # compile
            best, kern, where = float("inf"), None, []
            for r in range(args.repeat):
                w = [] if r == 0 else None
                gpu.reset_stats()
                t = time.perf_counter()
                v = gpu.final_vector(pat, 0, len(pat), txt, 0, len(txt), False, where=w, **kw)
                llcs = int(cpu_lcs.zeros_below(v, len(pat)))
                sec = time.perf_counter() - t
                if r == 0:
                    where = w
                if not np.array_equal(v, ref):
                    raise SystemExit(f"sweep {kw}: vector differs from the defaults' on {size}")
                if sec < best:
                    best, kern = sec, dict(gpu.STATS)
            per_sm = Counter(x >> 8 for x in where)
            per_sched = Counter((x >> 8, (x & 0xFF) % 4) for x in where)
            cells = len(a) * len(b)
            rec = {"job": "lcs", "scope": "item", "backend": "cuda",
                   "method": "llcs gpu sweep (one final_vector pass + popcount)",
                   "device": gname,
                   "params": {"a_len": na, "b_len": nb, "data": "random DNA", "llcs": llcs,
                              **kw, "bands": len(where), "launches": kern["launches"],
                              "kernel_s": round(kern["kernel_s"], 4),
                              "kernel_gcups": round(cells / kern["kernel_s"] / 1e9, 2),
                              "h2d_s": round(kern["h2d_s"], 4), "d2h_s": round(kern["d2h_s"], 4),
                              "sms_used": len(per_sm),
                              "warps_per_sm_max": max(per_sm.values(), default=0),
                              "warps_per_sm_mean": round(len(where) / max(1, len(per_sm)), 2),
                              "warps_per_scheduler_max": max(per_sched.values(), default=0)},
                   "seconds": round(best, 4), "gcups": round(cells / best / 1e9, 2),
                   "baseline": None, "command": command}
            emit_line(rec, out)
    if out:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
