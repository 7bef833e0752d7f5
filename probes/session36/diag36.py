"""(session 36) Call F: a Dask search with another valid shard plan (PIECES_PER_SHARD 256, or
split_ids' shards) did not return the same hits/alignments as main's plan. Which differ,
and which is right: in-process 1 GPU (R1) and 4 GPUs (R4), Dask 4 workers with the plans
pieces / pieces256 / split, each against R1: queries whose (scores, targets) differ,
whose end cells differ, whose alignments differ; the first differing hits in detail, with
the CPU engine's alignment of that pair (align(backend="cpu")) as the judge.
usage: python diag36.py OUT.txt   (4-GPU kind; from the repo root)"""
import sys
import tempfile
from pathlib import Path

sys.path[:0] = ["bench", ".carry/p36"]
import cloudpickle  # noqa: E402
import numpy as np  # noqa: E402

import wp36b  # noqa: E402

cloudpickle.register_pickle_by_value(wp36b)
lines = []


def say(*a):
    s = " ".join(str(x) for x in a)
    print(s, flush=True)
    lines.append(s)


def brief(a):
    return (a.score, a.query_start, a.query_end, a.target_start, a.target_end, a.cigar)


def main():
    from distributed import Client
    from scaling import build_database
    from search_gpu import _find, read_fasta
    import warpalign.distributed as wd
    from warpalign import Scoring, align, search
    from warpalign._backends.cuda.search import CudaBackend
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    real = wd.shard_plan

    def pieces256(db, n):
        wd.PIECES_PER_SHARD = 256
        try:
            return real(db, n)
        finally:
            wd.PIECES_PER_SHARD = 64
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        got = {"R1": search(qs, db, s, top_k=10, mode="full", backend=CudaBackend(devices=[0])),
               "R4": search(qs, db, s, top_k=10, mode="full",
                            backend=CudaBackend(devices=[0, 1, 2, 3]))}
        with wd.local_cluster(4, devices=["0", "1", "2", "3"]) as cluster, Client(cluster) as c:
            c.wait_for_workers(4)
            for name, plan in (("pieces", real), ("pieces256", pieces256),
                               ("split", wp36b.split_plan)):
                wd.shard_plan = plan
                got[name] = wd.search(qs, db, s, client=c, top_k=10, mode="full")
                wd.shard_plan = real
        ref = got["R1"]
        judged = 0
        for name, res in got.items():
            if name == "R1":
                continue
            hits = [q for q, (a, b) in enumerate(zip(ref, res))
                    if a.scores.tolist() != b.scores.tolist()
                    or a.targets.tolist() != b.targets.tolist()]
            ends = [q for q, (a, b) in enumerate(zip(ref, res)) if q not in hits and (
                a.query_ends.tolist() != b.query_ends.tolist()
                or a.target_ends.tolist() != b.target_ends.tolist())]
            alns = [q for q, (a, b) in enumerate(zip(ref, res))
                    if q not in hits and a.alignments != b.alignments]
            say(f"{name}: hits differ {len(hits)} {hits[:10]}; ends differ {len(ends)} "
                f"{ends[:10]}; alignments differ {len(alns)} {alns[:10]}")
            for q in hits[:2]:
                a, b = ref[q], res[q]
                say(f"  q{q} R1 {list(zip(a.scores.tolist(), a.targets.tolist()))}")
                say(f"  q{q} {name} {list(zip(b.scores.tolist(), b.targets.tolist()))}")
            for q in alns[:3]:
                a, b = ref[q], res[q]
                for k, (x, y) in enumerate(zip(a.alignments, b.alignments)):
                    if x != y:
                        t = int(a.targets[k])
                        say(f"  q{q} hit {k} target {t} (length {len(db.sequence(t))}): "
                            f"R1 {brief(x)} | {name} {brief(y)}")
                        if judged < 6:
                            judged += 1
                            text = s.alphabet.decode(db.sequence(t))
                            cpu = align(qs[q], text, s, backend="cpu")
                            say(f"    cpu {brief(cpu)}")
                        break
    Path(sys.argv[1]).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
