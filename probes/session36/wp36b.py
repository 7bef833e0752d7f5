"""(session 36) Issue 25: Dask shard plans. Call B saw one shard of four take ~2.50 s where
the others took ~2.36 (which worker varied: a shard's cost, not a worker's). shard_plan
deals pieces of consecutive sorted order (64 a shard, equal residues); the in-process
split (handles.split_ids) deals every sequence longest first (+1 a sequence). Variants,
alternated on one 4-worker cluster, 500 queries, mode full: "pieces" (main), "pieces256"
(PIECES_PER_SHARD 256), "split" (shards from split_ids, ranges = runs of consecutive
positions). Per run: total, each worker's search_shard seconds, hits equal to main's.
Then one worker (one shard whatever the plan).
usage: python wp36b.py OUT.jsonl"""
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, "bench")
sys.path.insert(0, ".carry/p36")
import cloudpickle  # noqa: E402
import wp36  # noqa: E402
from wp36 import collect, patch  # noqa: E402

cloudpickle.register_pickle_by_value(wp36)   # the workers cannot import it


def split_plan(db, n):
    from warpalign._backends.cuda.handles import split_ids
    from warpalign.distributed import Shard
    offsets = np.asarray(db.targets.offsets, dtype=np.int64)
    shards = []
    for ids in split_ids(db.targets, n):
        if not len(ids):
            continue
        cut = np.flatnonzero(np.diff(ids) != 1) + 1
        lo = np.concatenate([[0], cut]); hi = np.concatenate([cut, [len(ids)]])
        ranges = tuple((int(ids[a]), int(ids[b - 1]) + 1) for a, b in zip(lo, hi))
        shards.append(Shard(len(shards), ranges, len(ids),
                            int(sum(offsets[b] - offsets[a] for a, b in ranges))))
    return shards


def main():
    from distributed import Client
    from scaling import build_database, same_result
    from search_gpu import _find, read_fasta
    import warpalign.distributed as wd
    from warpalign import Scoring
    out = sys.argv[1]
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    real_plan, real_pieces = wd.shard_plan, wd.PIECES_PER_SHARD

    def pieces256(db, n):
        wd.PIECES_PER_SHARD = 256
        try:
            return real_plan(db, n)
        finally:
            wd.PIECES_PER_SHARD = real_pieces
    plans = {"pieces": real_plan, "pieces256": pieces256, "split": split_plan}
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        for name, plan in plans.items():
            shards = plan(db, 4)
            print(name, [(len(sh.ranges), sh.sequences, sh.residues) for sh in shards],
                  flush=True)
        for n in (4, 1):
            with wd.local_cluster(n, devices=[str(d) for d in range(n)]) as cluster, \
                    Client(cluster) as c:
                c.wait_for_workers(n)
                c.run(patch)
                ref = wd.search(qs, db, s, client=c, top_k=10, mode="full")
                for r in range(3 if n == 4 else 2):
                    for name, plan in (plans.items() if n == 4 else [("pieces", real_plan)]):
                        wd.shard_plan = plan
                        c.run(collect)
                        t = time.perf_counter()
                        got = wd.search(qs, db, s, client=c, top_k=10, mode="full")
                        total = time.perf_counter() - t
                        wd.shard_plan = real_plan
                        work = {w[-5:]: [round(e[2], 3) for e in evs if e[0] == "search_shard"]
                                for w, evs in c.run(collect).items()}
                        rec = dict(workers=n, plan=name, run=r, total=round(total, 4),
                                   same=bool(same_result(ref, got, "full")), shards=work)
                        print(json.dumps(rec), flush=True)
                        with open(out, "a") as fh:
                            fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
