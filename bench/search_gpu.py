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

    python bench/search_gpu.py --queries 20 --out bench/results/search_gpu.jsonl
    python bench/search_gpu.py --scoring blosum50 --table3 --real --devices 0,1 --devices 0
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
from warpalign._backends.cuda.config import TABLE
from warpalign.alphabet import PROTEIN
from warpalign.io import read_sequences
from warpalign.scoring import Scoring

DATA = [ROOT / ".carry", ROOT.parent / "shared" / "data" / "protein"]
SCORINGS = {"blosum62": ("BLOSUM62", 11, 1), "blosum50": ("BLOSUM50", 10, 2)}


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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=20, help="how many of the 20 queries")
    ap.add_argument("--scoring", choices=sorted(SCORINGS), default="blosum62")
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--slice", type=float, default=0.01,
                    help="fraction of the database the CPU backend scores (baseline)")
    ap.add_argument("--ends", action="store_true", help="also time mode='end'")
    ap.add_argument("--devices", action="append", default=None,
                    help="device ids, e.g. 0,1 (repeat to compare; default: 0)")
    ap.add_argument("--table3", action="store_true", help="paper 003 Table III (auto, warp)")
    ap.add_argument("--real", action="store_true", help="real 20,000-protein subset check")
    ap.add_argument("--top-k", type=int, default=10)
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

    def run_batch(backend, handle, qset, label, params, packed, repeat=3):
        """search_batches over all queries in one call (what search() runs: packed
        batches) or in one call per query (one query at a time); timed as a whole (median
        of `repeat`)."""
        qs = [q for _, q in qset]

        def run():
            if packed:
                return backend.search_batches(qs, handle, scoring, top_k=args.top_k)
            return [backend.search_batches([q], handle, scoring, top_k=args.top_k)[0]
                    for q in qs]

        run()   # warm-up
        times, res = [], None
        for _ in range(repeat):
            s0 = time.perf_counter()
            res = run()
            times.append(time.perf_counter() - s0)
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
        for variant in ("default",):
            backend = CudaBackend(devices=devs)
            t1 = time.perf_counter()
            handle = backend.prepare(db)
            up = time.perf_counter() - t1
            ngpu = len(devs)
            params = {"scoring": args.scoring, "gap_open": go, "gap_extend": ge,
                      "db": f"swissprot-size synthetic seed={args.seed}", "sequences": len(db),
                      "residues": residues, "variant": variant, "gpus": ngpu,
                      "devices": list(devs), "prepare_seconds": up, "top_k": args.top_k,
                      "code": f"sw_s16x2r2, {len([c for c in TABLE if c.width == 16])} "
                              "width-16 rows"}
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
