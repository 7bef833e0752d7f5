"""GPU database search benchmark: the 20 standard queries against a Swiss-Prot-sized database.

Also, in the same run: the CPU backend on a slice (1% of the database, the shortest query)
as the baseline and exactness check; paper 003's Table III setting (--table3: its queries
found in standard_queries20.fasta, BLOSUM50 10/2, method auto and warp); a real-subset
check (--real: the 20,000 proteins of mmseqs2_example_DB against a synthetic set with the
same lengths); several devices (--devices 0,1 and 0 in one run for the scaling).

The database is generated on the device from a seed with the exact 516,371 lengths and the
residue composition of ../shared/data/protein (see the README there). Cells = query length x
total residues; a query's time covers the whole scan (every launch, the saturation rescoring
and the copy of the scores back), not the one-time upload, which is reported separately.
Prints one JSON line per measurement (DESIGN.md keys) and appends them to --out.

    python bench/search_gpu.py --queries 20 --variants default --out bench/results/search_gpu.jsonl
    python bench/search_gpu.py --scoring blosum50 --table3 --real --devices 0,1 --devices 0
    python bench/search_gpu.py --paired   # default path, then the queries paired by length
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from warpalign._backends import TargetSet
from warpalign._backends.cuda import CudaBackend
from warpalign._backends.cuda.config import TABLE, KernelConfig
from warpalign.alphabet import PROTEIN
from warpalign.io import read_sequences
from warpalign.scoring import Scoring

DATA = [ROOT / ".carry", ROOT.parent / "shared" / "data" / "protein"]
SCORINGS = {"blosum62": ("BLOSUM62", 11, 1), "blosum50": ("BLOSUM50", 10, 2)}


def _replace(rows16):
    return tuple(KernelConfig(*r, 16) for r in rows16) + tuple(c for c in TABLE if c.width == 32)


_SINGLE = [(32, 4, 8), (48, 4, 12), (64, 4, 16), (80, 4, 20), (96, 4, 24), (112, 4, 28),
           (128, 8, 16), (160, 8, 20), (192, 8, 24), (224, 8, 28), (256, 16, 16), (320, 16, 20),
           (384, 16, 24), (448, 16, 28), (512, 32, 16), (640, 32, 20), (768, 32, 24),
           (896, 32, 28)]

# alternative kernel tables, timed beside the default one
VARIANTS = {
    "default": None,
    # coarse: fewer, wider buckets
    "coarse": _replace([(64, 4, 16), (112, 4, 28), (224, 8, 28), (448, 16, 28), (896, 32, 28),
                        (3072, 16, 24), (None, 32, 24)]),
    # chained kernel from 1536 up
    "chain1536": _replace(_SINGLE + [(1536, 16, 24), (None, 32, 24)]),
    # no per-group multi-pass row: chained from 897 up
    "chain896": _replace(_SINGLE + [(None, 32, 24)]),
    # chained with 20 registers (shorter tiles, less padding)
    "chain-r20": _replace(_SINGLE + [(3072, 16, 24), (None, 32, 20)]),
}
# cell-update variants of the default table (search.cu row16): 0 plain DPX, 1 bias,
# 2 bias + IMAD address, 3 = 2 with two query rows per step (sw_s16x2r2)
# two-row kernels with fewer registers per lane (R <= 16) and more warps per SM
_R16 = [(32, 4, 8), (48, 4, 12), (64, 4, 16), (96, 8, 12), (128, 8, 16), (192, 16, 12),
        (256, 16, 16), (384, 32, 12), (512, 32, 16), (3072, 16, 16), (None, 32, 16)]
_R12 = [(32, 4, 8), (48, 4, 12), (96, 8, 12), (192, 16, 12), (384, 32, 12), (3072, 16, 12),
        (None, 32, 12)]
VARIANTS["b384-r16"] = {"table": _replace(_R16), "block2": 384}
VARIANTS["b512-r12"] = {"table": _replace(_R12), "block2": 512}
VARIANTS["b256-r16"] = {"table": _replace(_R16)}
# the coarser bucket bounds of before (16 to 128-column steps)
from warpalign._backends.cuda.config import COARSE16, _fine_rows

VARIANTS["coarse16"] = _replace(COARSE16)
# multi-pass rows with groups of 8 (192-column tiles: less padding, longer chains)
VARIANTS["multi8"] = _replace([r[:3] for r in _fine_rows()] + [(3072, 8, 24), (None, 32, 24)])
# longer tiles for the multi-pass and chained rows (R = 28)
VARIANTS["r28"] = _replace(_SINGLE + [(3072, 16, 28), (None, 32, 28)])
# the column kernels only (sw_s16x2 tables, no row-strip kernel)
VARIANTS["rows"] = {"rows_min_len": 0}
for _v in (0, 1, 2, 3, 4):
    VARIANTS[f"v{_v}"] = tuple(KernelConfig(c.max_len, c.group, c.regs, c.width, _v)
                               if c.width == 16 else c for c in TABLE)


def _find(name):
    for d in DATA:
        if (d / name).exists():
            return d / name
    raise FileNotFoundError(name)


def read_fasta(path):
    """(names, sequences as text) of a FASTA file, plain or gzip (warpalign's reader)."""
    records = list(read_sequences(path))
    return [r.name for r in records], [str(r.sequence) for r in records]


def make_database(seed):
    """The Swiss-Prot-sized database: its exact lengths, Swiss-Prot composition."""
    with gzip.open(_find("swissprot_size_lengths.npy.gz")) as f:
        lengths = np.load(f).astype(np.int64)
    return synthetic(lengths, seed)


def synthetic(lengths, seed):
    """Targets with the given lengths and the Swiss-Prot composition (on the device)."""
    import cupy as cp
    comp = json.loads(_find("swissprot_size_composition.json").read_text())["composition"]
    probs = np.zeros(len(PROTEIN.symbols))
    for letter, p in comp.items():
        probs[PROTEIN.encode(letter)[0]] = p
    cdf = cp.asarray(np.cumsum(probs / probs.sum()))
    rs = cp.random.RandomState(seed)
    u = rs.random_sample(int(lengths.sum()), dtype=cp.float64)
    codes = cp.minimum(cp.searchsorted(cdf, u, side="right"), len(probs) - 1).astype(cp.uint8)
    offsets = np.zeros(len(lengths) + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return TargetSet(cp.asnumpy(codes), offsets)


TABLE3 = ["P02232", "P01111", "P05013", "P09488", "P14942", "P00762", "P10318", "P07327",
          "P01008", "P10635", "P25705", "P03435"]   # paper 003, Table III


def _code_tag(kw):
    """Which kernels ran: the width-16 rows' variants and bounds (search.cu)."""
    table = kw.get("table") or TABLE
    rows16 = [c for c in table if c.width == 16]
    rows = kw.get("rows_min_len")
    return (f"s16 variants {sorted({c.variant for c in rows16})}, {len(rows16)} rows, "
            f"rows-kernel {'off' if rows is None else f'm>={rows}'}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=20, help="how many of the 20 queries")
    ap.add_argument("--scoring", choices=sorted(SCORINGS), default="blosum62")
    ap.add_argument("--variants", default="default", help="comma-separated: " + ",".join(VARIANTS))
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--slice", type=float, default=0.01,
                    help="fraction of the database the CPU backend scores (baseline)")
    ap.add_argument("--ends", action="store_true", help="also time mode='end'")
    ap.add_argument("--devices", action="append", default=None,
                    help="device ids, e.g. 0,1 (repeat to compare; default: 0)")
    ap.add_argument("--table3", action="store_true", help="paper 003 Table III (auto, warp)")
    ap.add_argument("--real", action="store_true", help="real 20,000-protein subset check")
    ap.add_argument("--top-k", type=int, default=10)
    ap.add_argument("--paired", action="store_true",
                    help="also run the queries paired by length through the two-query "
                         "kernel (CudaBackend.search_paired, sw_rowsq2), same backend")
    ap.add_argument("--packed", action="store_true",
                    help="also run all queries as one packed batch (CudaBackend.search_packed, "
                         "sw_rowsqb), same backend")
    ap.add_argument("--pair-variants", default="2",
                    help="comma-separated two-query kernels for --paired (config.PAIR_VARIANTS)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    command = "python bench/search_gpu.py " + " ".join(argv if argv is not None else sys.argv[1:])
    from warpalign._backends.cpu import CpuBackend

    mat, go, ge = SCORINGS[args.scoring]
    scoring = Scoring(matrix=mat, gap_open=go, gap_extend=ge)
    names, seqs = read_fasta(_find("standard_queries20.fasta"))
    allq = [(n, scoring.encode(s)) for n, s in zip(names, seqs)]
    queries = allq[:args.queries]
    t0 = time.perf_counter()
    db = make_database(args.seed)
    gen_s = time.perf_counter() - t0
    residues = db.residues
    print(f"# database: {len(db)} sequences, {residues} residues, generated in {gen_s:.1f} s",
          file=sys.stderr)

    def emit(rec):
        line = json.dumps(rec)
        print(line, flush=True)
        if args.out:
            with open(args.out, "a") as out:
                out.write(line + "\n")

    # baseline: the CPU backend on a slice of the database, shortest query (same run)
    rng = np.random.default_rng(args.seed)
    slice_ids = np.sort(rng.choice(len(db), size=max(1, int(len(db) * args.slice)),
                                   replace=False))
    sl = TargetSet.from_list([db[i] for i in slice_ids])
    qn0, q0 = min(queries, key=lambda x: len(x[1]))
    cpu = CpuBackend()
    ch = cpu.prepare(sl)
    cpu.scan(q0[:8], ch, scoring, algorithm="local", ends=False)   # JIT warm-up
    c0 = time.perf_counter()
    want = cpu.scan(q0, ch, scoring, algorithm="local", ends=False).scores
    cpu_s = time.perf_counter() - c0
    baseline = {"backend": "cpu", "method": "auto", "threads": cpu.threads,
                "slice": f"{len(slice_ids)} targets ({args.slice:.0%}), {sl.residues} residues",
                "query": qn0, "seconds": cpu_s, "gcups": len(q0) * sl.residues / cpu_s / 1e9}

    def run_set(backend, handle, qset, method, ends, label, params):
        total_cells, total_s, per = 0, 0.0, []
        nres = handle.residues
        for qn, q in qset:
            s0 = time.perf_counter()
            r = backend.search_batches([q], handle, scoring, ends=ends, top_k=args.top_k,
                                       method=method)[0]
            sec = time.perf_counter() - s0
            cells = len(q) * nres
            total_cells += cells
            total_s += sec
            per.append(f"{len(q)}:{cells / sec / 1e9:.0f}")
            emit({"job": "search", "scope": "item", "backend": "cuda", "method": method,
                  "device": backend.device_name, "params": {**params, "query": qn,
                  "query_len": len(q), "saturated": r.saturated, "ends": ends},
                  "seconds": sec, "gcups": cells / sec / 1e9, "baseline": None,
                  "command": command})
        g = total_cells / total_s / 1e9
        emit({"job": "search", "scope": "total", "backend": "cuda", "method": method,
              "device": backend.device_name, "params": {**params, "queries": len(qset),
              "ends": ends}, "seconds": total_s, "gcups": g, "baseline": baseline,
              "command": command})
        print(f"# {label}: {g:.0f} GCUPS total ({total_s:.2f} s, {len(qset)} queries)",
              file=sys.stderr)
        print(f"#   per query (m:GCUPS) {' '.join(per)}", file=sys.stderr)
        return g

    def run_paired(backend, handle, qset, label, params, pv):
        """The queries paired by length, one two-query pass per pair (search_paired with
        GPU top-k); a pair's time is shared by its queries in proportion to their lengths."""
        t1 = time.perf_counter()
        backend.search_paired([qset[0][1], qset[1 % len(qset)][1]], handle, scoring,
                              top_k=args.top_k, variant=pv)   # warm-up: compile, stream
        warm = time.perf_counter() - t1
        other = next((q for n, q in qset if n != qn0), q0)
        got = backend.scan_many([q0, other], handle, scoring, variant=pv)[0].scores[slice_ids]
        bad = int((got != want).sum())
        if bad:
            print(f"# paired: {bad} mismatches against the CPU backend!", file=sys.stderr)
        nres = handle.residues
        from warpalign._backends.cuda.config import pair_kernel_name
        pp = {**params, "variant": params["variant"] + f"+paired-v{pv}",
              "code": f"{pair_kernel_name(0, pv).split('<')[0]} (two queries per register, "
                      "targets streamed)",
              "paired_mismatches": bad, "first_call_seconds": warm}
        total_cells, total_s, per = 0, 0.0, []
        for a, b in backend.pair_by_length([len(q) for _, q in qset]):
            idx = [a] if b is None else [a, b]
            s0 = time.perf_counter()
            r = backend.search_paired([qset[i][1] for i in idx], handle, scoring,
                                      top_k=args.top_k, variant=pv)
            sec = time.perf_counter() - s0
            ms = [len(qset[i][1]) for i in idx]
            total_cells += sum(ms) * nres
            total_s += sec
            g = sum(ms) * nres / sec / 1e9
            for i, rr in zip(idx, r):
                per.append(f"{len(qset[i][1])}:{g:.0f}")
                emit({"job": "search", "scope": "item", "backend": "cuda",
                      "method": "paired", "device": backend.device_name,
                      "params": {**pp, "query": qset[i][0], "query_len": len(qset[i][1]),
                                 "pair": [qset[k][0] for k in idx], "pair_lens": ms,
                                 "pair_seconds": sec, "saturated": rr.saturated,
                                 "ends": False},
                      "seconds": sec * len(qset[i][1]) / sum(ms), "gcups": g,
                      "baseline": None, "command": command})
        g = total_cells / total_s / 1e9
        emit({"job": "search", "scope": "total", "backend": "cuda", "method": "paired",
              "device": backend.device_name, "params": {**pp, "queries": len(qset),
              "ends": False}, "seconds": total_s, "gcups": g, "baseline": baseline,
              "command": command})
        print(f"# {label}: {g:.0f} GCUPS total ({total_s:.2f} s, {len(qset)} queries), "
              f"mismatches {bad}", file=sys.stderr)
        print(f"#   per query (m:GCUPS of its pair) {' '.join(per)}", file=sys.stderr)
        return g

    def run_packed(backend, handle, qset, label, params, repeat=3):
        """All queries in one packed batch (search_packed, GPU top-k per query); the batch
        is timed as a whole (median of `repeat`), so there are no per-query times."""
        t1 = time.perf_counter()
        backend.search_packed([q for _, q in qset[:3]], handle, scoring, top_k=args.top_k)
        warm = time.perf_counter() - t1
        other = next((q for n, q in qset if n != qn0), q0)
        got = backend.scan_packed([q0, other], handle, scoring)[0].scores[slice_ids]
        bad = int((got != want).sum())
        if bad:
            print(f"# packed: {bad} mismatches against the CPU backend!", file=sys.stderr)
        times, res = [], None
        for _ in range(repeat):
            s0 = time.perf_counter()
            res = backend.search_packed([q for _, q in qset], handle, scoring, top_k=args.top_k)
            times.append(time.perf_counter() - s0)
        sec = float(np.median(times))
        cells = sum(len(q) for _, q in qset) * handle.residues
        g = cells / sec / 1e9
        emit({"job": "search", "scope": "total", "backend": "cuda", "method": "packed",
              "device": backend.device_name,
              "params": {**params, "variant": params["variant"] + "+packed",
                         "code": "sw_rowsqb (query batch packed in two 16-bit halves)",
                         "queries": len(qset), "ends": False, "packed_mismatches": bad,
                         "first_call_seconds": warm, "repeats": times,
                         "saturated": [r.saturated for r in res]},
              "seconds": sec, "gcups": g, "baseline": baseline, "command": command})
        print(f"# {label}: {g:.0f} GCUPS total ({sec:.2f} s median of {repeat}, "
              f"{[round(x, 3) for x in times]}), mismatches {bad}", file=sys.stderr)
        return g

    def run_batch(backend, handle, qset, label, params, packed, repeat=3):
        """One search_batches call over all queries (what search() runs): packed batches
        (config.PAIR_QUERIES, the default) or one query at a time; the call is
        timed as a whole (median of `repeat`)."""
        from warpalign._backends.cuda import config as cfg
        saved = cfg.PAIR_QUERIES
        cfg.PAIR_QUERIES = packed
        try:
            qs = [q for _, q in qset]
            backend.search_batches(qs, handle, scoring, top_k=args.top_k)   # warm-up
            times, res = [], None
            for _ in range(repeat):
                s0 = time.perf_counter()
                res = backend.search_batches(qs, handle, scoring, top_k=args.top_k)
                times.append(time.perf_counter() - s0)
        finally:
            cfg.PAIR_QUERIES = saved
        sec = float(np.median(times))
        g = sum(len(q) for q in qs) * handle.residues / sec / 1e9
        how = "packed batches" if packed else "one query at a time"
        emit({"job": "search", "scope": "total", "backend": "cuda", "method": "auto",
              "device": backend.device_name,
              "params": {**params, "variant": params["variant"] + ("+batch" if packed
                                                                   else "+each"),
                         "call": f"search_batches over all queries ({how})",
                         "queries": len(qs), "ends": False, "repeats": times,
                         "saturated": [r.saturated for r in res]},
              "seconds": sec, "gcups": g, "baseline": baseline, "command": command})
        print(f"# {label} ({how}): {g:.0f} GCUPS total ({sec:.3f} s median of {repeat}, "
              f"{[round(x, 3) for x in times]})", file=sys.stderr)
        return g

    devsets = [tuple(int(x) for x in d.split(",")) for d in (args.devices or ["0"])]
    summary = []
    for devs in devsets:
        for variant in args.variants.split(","):
            kw = VARIANTS[variant]
            kw = dict(kw) if isinstance(kw, dict) else {"table": kw}
            backend = CudaBackend(devices=devs, **kw)
            t1 = time.perf_counter()
            handle = backend.prepare(db)
            up = time.perf_counter() - t1
            ngpu = len(devs)
            params = {"scoring": args.scoring, "gap_open": go, "gap_extend": ge,
                      "db": f"swissprot-size synthetic seed={args.seed}", "sequences": len(db),
                      "residues": residues, "variant": variant, "gpus": ngpu,
                      "devices": list(devs), "prepare_seconds": up, "top_k": args.top_k,
                      "code": _code_tag(kw)}
            backend.search_batches([queries[0][1]], handle, scoring, top_k=args.top_k)  # warm-up
            # exactness on the CPU slice
            got = backend.scan(q0, handle, scoring).scores[slice_ids]
            bad = int((got != want).sum())
            baseline["mismatches"] = bad
            if bad:
                print(f"# {variant}: {bad} mismatches against the CPU backend!", file=sys.stderr)
            label = f"{variant} gpus={ngpu}"
            g = run_set(backend, handle, queries, "auto", False, label + " auto", params)
            summary.append((label, args.scoring, "auto", g))
            for packed in (True, False):
                g = run_batch(backend, handle, queries, label + " search_batches", params,
                              packed)
                summary.append((label, args.scoring, "batch" if packed else "each", g))
            if args.ends:
                # search flow (top-k): 16-bit scores, then ends for the candidates only
                g = run_set(backend, handle, queries, "auto", True, label + " end top-k",
                            params)
                summary.append((label, args.scoring, "end top-k", g))
                # every target's ends (scan, 32-bit end kernel)
                t_end, c_end = 0.0, 0
                for qn, q in queries:
                    s0 = time.perf_counter()
                    backend.scan(q, handle, scoring, ends=True)
                    t_end += time.perf_counter() - s0
                    c_end += len(q) * residues
                emit({"job": "search", "scope": "total", "backend": "cuda", "method": "end-all",
                      "device": backend.device_name, "params": {**params, "queries": len(queries),
                      "ends": True, "what": "scan(ends=True): every target's ends"},
                      "seconds": t_end, "gcups": c_end / t_end / 1e9, "baseline": baseline,
                      "command": command})
                print(f"# {label} end all targets: {c_end / t_end / 1e9:.0f} GCUPS",
                      file=sys.stderr)
                summary.append((label, args.scoring, "end all", c_end / t_end / 1e9))
            if args.table3:
                t3 = [(n, q) for n, q in allq if any(a in n for a in TABLE3)]
                s50 = Scoring(matrix="BLOSUM50", gap_open=10, gap_extend=2)
                saved = scoring
                scoring = s50
                p3 = {**params, "scoring": "blosum50", "gap_open": 10, "gap_extend": 2,
                      "setting": "paper 003 Table III", "found": [n for n, _ in t3],
                      "missing": [a for a in TABLE3 if not any(a in n for n, _ in t3)]}
                for method in ("auto", "warp"):
                    backend.search_batches([t3[0][1]], handle, s50, top_k=args.top_k,
                                           method=method)
                    g = run_set(backend, handle, t3, method, False, label + f" table3 {method}", p3)
                    summary.append((label, "blosum50 table3", method, g))
                scoring = saved
            for pv in (args.pair_variants.split(",") if args.paired else []):
                g = run_paired(backend, handle, queries, label + f" paired v{pv}", params,
                               int(pv))
                summary.append((label, args.scoring, f"paired v{pv}", g))
            if args.packed:
                g = run_packed(backend, handle, queries, label + " packed", params)
                summary.append((label, args.scoring, "packed", g))
            print(f"# {label}: prepare {up:.2f} s, CPU slice {baseline['gcups']:.2f} GCUPS "
                  f"({baseline['threads']} threads), mismatches {bad}", file=sys.stderr)
            del handle, backend
    if args.real:
        _, rs = read_fasta(_find("mmseqs2_example_DB.fasta.gz"))
        real = TargetSet.from_list([scoring.encode(x) for x in rs])
        syn = synthetic(np.diff(real.offsets), args.seed + 1)
        backend = CudaBackend(devices=devsets[0])
        for name, ts in (("real mmseqs2_example_DB", real), ("synthetic same lengths", syn)):
            h = backend.prepare(ts)
            backend.search_batches([queries[0][1]], h, scoring, top_k=args.top_k)
            p = {"scoring": args.scoring, "gap_open": go, "gap_extend": ge, "db": name,
                 "sequences": len(ts), "residues": ts.residues, "gpus": len(devsets[0])}
            g = run_set(backend, h, queries, "auto", False, f"{name} auto", p)
            summary.append((name, args.scoring, "auto", g))
            del h
    print("# summary: " + "; ".join(f"{a} {b} {c}: {d:.0f}" for a, b, c, d in summary),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
