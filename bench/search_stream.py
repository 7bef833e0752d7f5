#!/usr/bin/env python3
"""A database larger than the GPU limit (issue 23): whole ``search()`` calls with
``gpu_memory`` set to 1/``--parts`` of the database's resident cost, streamed from disk
in chunks, against the same call fully resident.

The Swiss-Prot-sized synthetic database of bench/search_gpu.py (same seed, lengths and
composition) is built on disk with ``Database.build`` (memory-mapped when opened; the
build is timed and recorded too, scope "call", with its peak RSS) and searched with the
20 standard queries, BLOSUM62 11/1, top ``--top-k``, mode score, through the public
``search()`` in a warm process (one warm-up call per setting): resident, then streamed.
The streamed hits must equal the resident ones (else exit 1). One JSON line per
setting, median of ``--repeat`` calls; the streamed record carries ``params.streamed``,
the limit and the chunk count, and the resident call of the same run as its baseline.

    python bench/search_stream.py --out bench/results/search_stream_gpu.jsonl
    python bench/search_stream.py --devices 0,1 --parts 8
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "src")]

from _common import cpu_name, emit, timed
from scaling import same_hits, write_fasta
from search_gpu import _find, make_database, read_fasta
from warpalign import Database, Scoring, search


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", type=int, default=8, help="the limit: 1/PARTS of the resident cost")
    p.add_argument("--top-k", type=int, default=10)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=2024)
    p.add_argument("--devices", default="0", help="device ids, e.g. 0,1")
    p.add_argument("--group-min", type=int, default=None,
                   help="Tuning.pair_group_min (fewest columns in a packed target group) "
                        "of the resident search")
    p.add_argument("--chunk-group-min", type=int, default=None,
                   help="Tuning.chunk_group_min: the same in the streamed search's chunks "
                        "(their pass tails shrink with it)")
    p.add_argument("--out")
    args = p.parse_args(argv)
    command = "python bench/search_stream.py " + " ".join(argv or sys.argv[1:])
    import cupy

    from warpalign._backends.cuda import CudaBackend, config
    devices = tuple(int(d) for d in args.devices.split(","))
    device = cupy.cuda.runtime.getDeviceProperties(devices[0])["name"].decode()
    tuning = config.Tuning(**{k: v for k, v in (("pair_group_min", args.group_min),
                                                 ("chunk_group_min", args.chunk_group_min))
                              if v is not None})
    backend = CudaBackend(devices=devices, tuning=tuning)
    scoring = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    _, queries = read_fasta(_find("standard_queries20.fasta"))
    out = open(args.out, "a") if args.out else None  # noqa: SIM115 (closed at exit)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        targets = make_database(args.seed)
        fasta = Path(tmp) / "db.fasta"
        write_fasta(targets, fasta)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.perf_counter()
        db = Database.build(fasta, Path(tmp) / "db.wa")
        build_s = time.perf_counter() - t0
        emit({"job": "makedb", "scope": "call", "backend": "cpu", "method": "build",
              "device": cpu_name(), "cold": False,
              "params": {"residues": db.residues, "sequences": len(db),
                         "peak_rss_bytes_before": rss0 * 1024,
                         "peak_rss_bytes": resource.getrusage(
                             resource.RUSAGE_SELF).ru_maxrss * 1024},
              "seconds": build_s, "residues_per_s": db.residues / build_s,
              "baseline": None, "command": command}, out)
        fasta.unlink()
        cells = sum(len(q) for q in queries) * db.residues
        cost = config.RESIDENT_BYTES * db.residues + config.SEQUENCE_BYTES * len(db)
        limit = cost // args.parts // len(devices)
        settings = [("resident", None), ("streamed", limit)]
        got, secs = {}, {}
        for label, gpu_memory in settings:
            def call(gpu_memory=gpu_memory):
                return search(queries, db, scoring, top_k=args.top_k, backend=backend,
                              gpu_memory=gpu_memory)
            call()                                       # warm-up (compiles, handle)
            got[label], times = timed(call, args.repeat)
            secs[label] = sorted(times)[len(times) // 2]
            with cupy.cuda.Device(devices[0]):      # (one device's plan of the whole)
                plan = backend.plan(db.targets.offsets, gpu_memory)
            chunks = len(plan.chunks)
            tail = 0 if plan.tail is None else plan.tail[1] - plan.tail[0]
            baseline = None
            if label == "streamed":
                baseline = {"setting": "resident, same call and run",
                            "seconds": secs["resident"],
                            "gcups": cells / secs["resident"] / 1e9}
            emit({"job": "search", "scope": "call", "backend": "cuda", "method": "auto",
                  "device": device, "cold": False,
                  "params": {"streamed": label == "streamed", "gpu_memory": gpu_memory,
                             "resident_cost_bytes": cost, "parts": args.parts,
                             "chunks_one_device": chunks, "tail_targets": tail,
                             "pair_group_min": tuning.pair_group_min,
                             "chunk_group_min": tuning.chunk_group_min,
                             "devices": list(devices),
                             "queries": len(queries), "top_k": args.top_k,
                             "residues": db.residues, "scoring": "BLOSUM62 11/1",
                             "mode": "score", "source": "disk (memory-mapped database)"},
                  "seconds": secs[label], "runs": [round(t, 4) for t in times],
                  "gcups": cells / secs[label] / 1e9,
                  "ratio_to_resident": secs["resident"] / secs[label],
                  "baseline": baseline, "command": command}, out)
        ok = same_hits(got["streamed"], got["resident"])
        print(f"# streamed {cells / secs['streamed'] / 1e9:.0f} GCUPS, resident "
              f"{cells / secs['resident'] / 1e9:.0f} GCUPS "
              f"({secs['resident'] / secs['streamed']:.1%}); same hits: {ok}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
