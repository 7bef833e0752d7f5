"""GPU database search benchmark: the 20 standard queries against a Swiss-Prot-sized database.

The database is generated on the device from a seed with the exact 516,371 lengths and the
residue composition of ../shared/data/protein (see the README there). Cells = query length x
total residues; a query's time covers the whole scan (every launch, the saturation rescoring
and the copy of the scores back), not the one-time upload, which is reported separately.
Prints one JSON line per measurement (DESIGN.md keys) and appends them to --out.

    python bench/search_gpu.py --queries 20 --variants default --out bench/results/search_gpu.jsonl
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
from warpalign._backends.cpu.pairwise import score_end
from warpalign._backends.cuda import CudaBackend
from warpalign._backends.cuda.config import TABLE, KernelConfig
from warpalign.alphabet import PROTEIN
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


def _find(name):
    for d in DATA:
        if (d / name).exists():
            return d / name
    raise FileNotFoundError(name)


def read_fasta(path):
    names, seqs, cur = [], [], []
    for line in Path(path).read_text().splitlines():
        if line.startswith(">"):
            if cur or names:
                seqs.append("".join(cur))
            names.append(line[1:].split()[0])
            cur = []
        elif line.strip():
            cur.append(line.strip())
    seqs.append("".join(cur))
    return names, seqs


def make_database(seed):
    import cupy as cp
    with gzip.open(_find("swissprot_size_lengths.npy.gz")) as f:
        lengths = np.load(f).astype(np.int64)
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


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=20, help="how many of the 20 queries")
    ap.add_argument("--scoring", choices=sorted(SCORINGS), default="blosum62")
    ap.add_argument("--variants", default="default", help="comma-separated: " + ",".join(VARIANTS))
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--check", type=int, default=300, help="targets checked against the CPU kernel")
    ap.add_argument("--ends", action="store_true", help="also time mode='end' (32-bit kernel)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    command = "python bench/search_gpu.py " + " ".join(argv if argv is not None else sys.argv[1:])

    mat, go, ge = SCORINGS[args.scoring]
    scoring = Scoring(matrix=mat, gap_open=go, gap_extend=ge)
    names, seqs = read_fasta(_find("standard_queries20.fasta"))
    queries = [(n, scoring.encode(s)) for n, s in zip(names, seqs)][:args.queries]
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

    rng = np.random.default_rng(args.seed)
    check_ids = rng.choice(len(db), size=min(args.check, len(db)), replace=False)
    for variant in args.variants.split(","):
        backend = CudaBackend(table=VARIANTS[variant])
        handle = backend.prepare(db)
        params = {"scoring": args.scoring, "gap_open": go, "gap_extend": ge,
                  "db": f"swissprot-size synthetic seed={args.seed}", "sequences": len(db),
                  "residues": residues, "variant": variant, "upload_seconds": handle.upload_seconds}
        backend.scan(queries[0][1], handle, scoring)          # warm-up (allocations)
        # exactness on a slice, timed on the CPU as the baseline
        qn, q = min(queries, key=lambda x: len(x[1]))
        got = backend.scan(q, handle, scoring)
        c0 = time.perf_counter()
        want = np.array([score_end(q, db[i], scoring.matrix, go, ge, 0)[0] for i in check_ids])
        cpu_s = time.perf_counter() - c0
        cpu_cells = len(q) * int(sum(len(db[i]) for i in check_ids))
        bad = int((got.scores[check_ids] != want).sum())
        baseline = {"backend": "cpu", "method": "score_end (numba, 1 thread)",
                    "slice": len(check_ids), "query": qn, "gcups": cpu_cells / cpu_s / 1e9,
                    "mismatches": bad}
        if bad:
            print(f"# {variant}: {bad} mismatches against the CPU kernel!", file=sys.stderr)
        total_cells = 0
        total_s = 0.0
        for method, ends in (("auto", False), ("end", True)) if args.ends else (("auto", False),):
            total_cells = 0
            total_s = 0.0
            for qn, q in queries:
                s0 = time.perf_counter()
                r = backend.scan(q, handle, scoring, ends=ends)
                sec = time.perf_counter() - s0
                cells = len(q) * residues
                total_cells += cells
                total_s += sec
                emit({"job": "search", "scope": "item", "backend": "cuda", "method": method,
                      "device": backend.device_name, "params": {**params, "query": qn,
                      "query_len": len(q), "saturated": r.saturated},
                      "seconds": sec, "gcups": cells / sec / 1e9, "baseline": None,
                      "command": command})
            emit({"job": "search", "scope": "total", "backend": "cuda", "method": method,
                  "device": backend.device_name, "params": {**params, "queries": len(queries)},
                  "seconds": total_s, "gcups": total_cells / total_s / 1e9, "baseline": baseline,
                  "command": command})
            print(f"# {variant} {method}: {total_cells / total_s / 1e9:.0f} GCUPS total "
                  f"({total_s:.2f} s, {len(queries)} queries), "
                  f"upload {handle.upload_seconds:.2f} s, check mismatches {bad}, "
                  f"cpu slice {baseline['gcups']:.2f} GCUPS", file=sys.stderr)
        del handle, backend
    return 0


if __name__ == "__main__":
    sys.exit(main())
