#!/usr/bin/env python3
"""Multi-GPU scaling of the database search (issues 7 and 25): 1, 2, 4 ... GPUs of one host.

The 20 standard queries (or ``--query-file`` FASTA files, e.g. the 500 mmseqs2 example
queries) against the Swiss-Prot-sized synthetic database of bench/search_gpu.py (same
seed, lengths and composition), BLOSUM62 11/1, top 10, modes ``--mode``, measured on the
same database and queries by each ``--method``:

* in-process: ``search(backend=CudaBackend(devices=...))``, the database split by cost;
* dask: ``warpalign.distributed.search`` on a LocalCluster with one worker per GPU
  (``CUDA_VISIBLE_DEVICES`` per worker), the database read from disk by each worker;
* cli: ``warpalign search QUERIES DB --workers N`` as a user runs it, whole processes
  (its local cluster's start included), N GPUs visible;
* cli-gpus: ``warpalign search QUERIES DB`` with N GPUs visible (one process drives all);
* streamed (after in-process, to have the resident figure beside it): in-process with
  each device's ``gpu_memory`` at 1/(``--parts`` x N) of the
  database's resident cost (``--streamed-limit share``: every device streams its share in
  ``--parts`` chunks, the chunks shrinking as GPUs are added) or at 1/``--parts`` of it
  (``gpu``: the limit a GPU has, whatever the count; its share in fewer chunks).

Each configuration runs once to warm up (compile, upload; the CLI's first process fills
the kernel caches) and is then timed ``--repeat`` times (the median is reported, every
run listed); the hits of every configuration are checked against the first
configuration of that query set and mode (alignments too in mode full). One JSON line
per measurement (job "scaling", scope "call"), with the speed-up and efficiency against
the same method on one GPU.

    python bench/scaling.py --gpus 1,2,4 --mode score --mode full --method in-process
    python bench/scaling.py --query-file mmseqs2_example_QUERY.fasta.gz --method cli
"""

from __future__ import annotations

import argparse
import os
import subprocess
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
from warpalign._backends.cuda import config as cuda_config
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


METHODS = ("in-process", "dask", "cli", "cli-gpus", "streamed")


class Runner:
    """One method on ``n`` GPUs: ``call(queries, mode)`` runs one search; ``close()``."""

    def __init__(self, how, n, db, scoring, tmp: Path, parts: int, per: str = "share"):
        self.how, self.n, self.db, self.scoring, self.tmp = how, n, db, scoring, tmp
        devices = list(range(n))
        self.close = lambda: None
        if how in ("in-process", "streamed"):
            self.engine = cuda_backend.CudaBackend(devices=devices)
            cost = (cuda_config.RESIDENT_BYTES * db.residues
                    + cuda_config.SEQUENCE_BYTES * len(db))
            self.limit = None if how != "streamed" else cost // parts // (
                n if per == "share" else 1)
        elif how == "dask":
            from distributed import Client

            from warpalign.distributed import local_cluster
            cluster = local_cluster(n, devices=[str(d) for d in devices])
            self.client = Client(cluster)
            self.close = lambda: (self.client.close(), cluster.close())
        else:
            src = str(HERE.parent / "src")
            self.env = dict(os.environ, CUDA_VISIBLE_DEVICES=",".join(map(str, devices)),
                            PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]),
                            PYTHONPYCACHEPREFIX=str(tmp / "pycache"),
                            WARPALIGN_CACHE=str(tmp / "kernels"),
                            CUPY_CACHE_DIR=str(tmp / "cupy"), NUMBA_CACHE_DIR=str(tmp / "numba"))
            self.env.pop("PYTHONDONTWRITEBYTECODE", None)

    def call(self, queries, mode):
        if self.how in ("in-process", "streamed"):
            return search(queries, self.db, self.scoring, top_k=10, backend=self.engine,
                          mode=mode, gpu_memory=self.limit)
        if self.how == "dask":
            from warpalign.distributed import search as dsearch
            return dsearch(queries, self.db, self.scoring, client=self.client, top_k=10,
                           backend="cuda", shards=self.n, mode=mode)
        fasta = self.tmp / "queries.fasta"
        if not fasta.exists() or fasta.read_text() != _fasta_text(queries):
            fasta.write_text(_fasta_text(queries))
        args = ["search", str(fasta), str(self.db.path), "--mode", mode, "--top-k", "10"]
        if self.how == "cli":
            args += ["--workers", str(self.n)]
        got = subprocess.run([sys.executable, "-m", "warpalign", *args], env=self.env,
                             capture_output=True, text=True, timeout=600)
        if got.returncode != 0:
            raise SystemExit(f"warpalign {' '.join(args)} failed: {got.stderr[-2000:]}")
        return got.stdout


def _fasta_text(queries) -> str:
    return "".join(f">q{i}\n{q}\n" for i, q in enumerate(queries))


def same_result(a, b, mode) -> bool:
    if isinstance(a, str):
        return a == b
    return same_hits(a, b) and (mode != "full" or all(x.alignments == y.alignments
                                                     for x, y in zip(a, b)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpus", default="1,2,4", help="GPU counts to measure")
    p.add_argument("--queries", type=int, default=20, help="the first N standard queries")
    p.add_argument("--query-file", action="append",
                   help="FASTA of queries instead of the standard ones (repeatable; a name "
                        "alone is looked up in the shared data)")
    p.add_argument("--mode", action="append", choices=("score", "end", "full"),
                   help="search mode (repeatable; default score)")
    p.add_argument("--method", action="append", choices=METHODS,
                   help="repeatable; default in-process and dask")
    p.add_argument("--parts", type=int, default=8,
                   help="streamed: each device's limit is 1/(PARTS x GPUs) of the resident cost")
    p.add_argument("--streamed-limit", choices=("share", "gpu"), default="share",
                   help="streamed: 1/(PARTS x GPUs) of the cost per device (share) or "
                        "1/PARTS (gpu)")
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--no-dask", action="store_true", help="(default methods) in-process only")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per setting (median)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/scaling.py " + " ".join(argv or sys.argv[1:])
    import cupy
    available = cupy.cuda.runtime.getDeviceCount()
    counts = [n for n in map(int, args.gpus.split(",")) if n <= available]
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    sets = []
    for path in args.query_file or [None]:
        if path is None:
            _, qs = read_fasta(_find("standard_queries20.fasta"))
            if args.queries > len(qs):
                p.error(f"--queries {args.queries}: the standard query file holds {len(qs)}")
            sets.append(("standard_queries20.fasta", qs[: args.queries]))
        else:
            found = path if Path(path).exists() else _find(path)
            sets.append((Path(path).name, read_fasta(found)[1]))
    modes = args.mode or ["score"]
    methods = args.method or (["in-process"] if args.no_dask else ["in-process", "dask"])
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        t0 = time.perf_counter()
        db = build_database(Path(tmp), args.seed)
        build = time.perf_counter() - t0
        reference: dict = {}
        resident: dict = {}     # in-process figures by (query set, mode, GPUs)
        for how in methods:
            base: dict = {}
            for n in counts:
                runner = Runner(how, n, db, scoring, Path(tmp), args.parts,
                                args.streamed_limit)
                try:
                    for name, queries in sets:
                        cells = sum(len(q) for q in queries) * db.residues
                        for mode in modes:
                            runner.call(queries, mode)    # warm up: compile, upload, caches
                            hits, times = timed(lambda: runner.call(queries, mode), args.repeat)
                            secs = float(np.median(times))
                            ref = reference.setdefault((name, mode, isinstance(hits, str)),
                                                       (how, hits))
                            gcups = cells / secs / 1e9
                            one = base.setdefault((name, mode), gcups)
                            if how == "in-process":
                                resident[(name, mode, n)] = secs
                            beside = None
                            if how == "streamed" and (name, mode, n) in resident:
                                rs = resident[(name, mode, n)]
                                beside = {"method": "in-process (resident)", "gpus": n,
                                          "seconds": rs, "gcups": cells / rs / 1e9,
                                          "ratio_to_resident": rs / secs}
                            emit({"job": "scaling", "scope": "call", "backend": "cuda",
                                  "method": how, "device": f"{n} x {device}",
                                  "params": {"queries": len(queries), "query_file": name,
                                             "residues": db.residues, "sequences": len(db),
                                             "scoring": "BLOSUM62 11/1", "top_k": 10,
                                             "build_seconds": round(build, 1),
                                             "gpus_available": available, "gpus": n,
                                             "mode": mode, "streamed": how == "streamed",
                                             "gpu_memory_per_device": getattr(
                                                 runner, "limit", None),
                                             "streamed_limit": args.streamed_limit
                                             if how == "streamed" else None},
                                  "seconds": secs, "runs": [round(t, 4) for t in times],
                                  "gcups": gcups, "speedup": gcups / one,
                                  "efficiency": gcups / one / n,
                                  "same_hits_as": ref[0] + " (first setting of this query "
                                  "set and mode)",
                                  "same_hits": same_result(hits, ref[1], mode),
                                  "baseline": f"{how} on {counts[0]} GPU(s), same run",
                                  "resident_same_run": beside,
                                  "command": command}, out)
                finally:
                    runner.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
