#!/usr/bin/env python3
"""Multi-GPU scaling of the database search (issue 7): 1, 2, 4 ... GPUs of one host.

The 20 standard queries against the Swiss-Prot-sized synthetic database of
bench/search_gpu.py (same seed, lengths and composition), BLOSUM62 11/1, score mode,
top 10, measured two ways on the same database and queries:

* in-process: ``CudaBackend(devices=...)`` splits the database by cost over the GPUs;
* Dask: ``warpalign.distributed.search`` on a LocalCluster with one worker per GPU
  (``CUDA_VISIBLE_DEVICES`` per worker), the database read from disk by each worker.

Each configuration runs once to warm up (compile, upload) and is then timed ``--repeat``
times (the median is reported, every run listed); the hits of
every configuration are checked against the single-GPU in-process result. One JSON line
per measurement (job "scaling"), with speed-up and efficiency against one GPU.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import emit, timed
from search_gpu import _find, make_database, read_fasta
from warpalign import Database, Scoring, search
from warpalign._backends import cuda as cuda_backend
from warpalign.alphabet import PROTEIN


def write_fasta(targets, path: Path) -> None:
    lut = np.frombuffer(PROTEIN.symbols.encode(), dtype=np.uint8)
    text = lut[targets.codes]
    with open(path, "wb") as fh:
        for i in range(len(targets)):
            fh.write(b">s%d\n" % i)
            fh.write(text[targets.offsets[i]:targets.offsets[i + 1]].tobytes())
            fh.write(b"\n")


def build_database(folder: Path, seed: int) -> Database:
    """The Swiss-Prot-sized synthetic database (search_gpu.make_database) built in
    ``folder`` through its FASTA, as a user's makedb would."""
    targets = make_database(seed)
    fasta = folder / "db.fasta"
    write_fasta(targets, fasta)
    db = Database.build(fasta, folder / "db.wa")
    fasta.unlink()
    return db


def same_hits(a, b) -> bool:
    return all(x.scores.tolist() == y.scores.tolist() and x.targets.tolist() == y.targets.tolist()
               for x, y in zip(a, b))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", default="1,2,4", help="GPU counts to measure")
    p.add_argument("--queries", type=int, default=20)
    p.add_argument("--query-file", help="FASTA of queries instead of the standard 20")
    p.add_argument("--mode", action="append", choices=("score", "end", "full"),
                   help="search mode (repeatable; default score)")
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--no-dask", action="store_true")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per setting (median)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/scaling.py " + " ".join(argv or sys.argv[1:])
    import cupy
    available = cupy.cuda.runtime.getDeviceCount()
    counts = [n for n in map(int, args.gpus.split(",")) if n <= available]
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    _, queries = read_fasta(args.query_file or _find("standard_queries20.fasta"))
    if args.query_file is None and args.queries > len(queries):
        p.error(f"--queries {args.queries}: the standard query file holds {len(queries)}")
    if args.query_file is None:
        queries = queries[: args.queries]
    modes = args.mode or ["score"]
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        t0 = time.perf_counter()
        db = build_database(Path(tmp), args.seed)
        build = time.perf_counter() - t0
        cells = sum(len(q) for q in queries) * db.residues
        params = {"queries": len(queries), "residues": db.residues, "sequences": len(db),
                  "scoring": "BLOSUM62 11/1", "top_k": 10, "build_seconds": round(build, 1),
                  "gpus_available": available}
        for mode in modes:
            reference, base = None, {}
            for how in ("in-process", "dask"):
                if how == "dask" and args.no_dask:
                    continue
                for n in counts:
                    devices = list(range(n))
                    if how == "in-process":
                        engine = cuda_backend.CudaBackend(devices=devices)

                        def run(engine=engine, mode=mode):
                            return search(queries, db, scoring, top_k=10, backend=engine,
                                          mode=mode)
                    else:
                        from distributed import Client

                        from warpalign.distributed import local_cluster
                        from warpalign.distributed import search as dsearch
                        cluster = local_cluster(n, devices=[str(d) for d in devices])
                        client = Client(cluster)

                        def run(client=client, n=n, mode=mode):
                            return dsearch(queries, db, scoring, client=client, top_k=10,
                                           backend="cuda", shards=n, mode=mode)
                    run()  # warm up: compile, upload
                    hits, times = timed(run, args.repeat)
                    secs = float(np.median(times))
                    if how == "dask":
                        client.close()
                        cluster.close()
                    if reference is None:
                        reference = hits
                    gcups = cells / secs / 1e9
                    base.setdefault(how, gcups)
                    same = same_hits(hits, reference) and (
                        mode != "full" or all(a.alignments == b.alignments
                                              for a, b in zip(hits, reference)))
                    emit({"job": "scaling", "scope": "call", "backend": "cuda", "method": how,
                          "device": f"{n} x {device}",
                          "params": {**params, "gpus": n, "mode": mode},
                          "seconds": secs, "runs": [round(t, 4) for t in times],
                          "gcups": gcups, "speedup": gcups / base[how],
                          "efficiency": gcups / base[how] / n,
                          "same_hits_as_1_gpu": same,
                          "baseline": f"{how} on 1 GPU, same run", "command": command}, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
