"""(session 36) Call G: Dask searches with other valid shard plans lost a hit: plan
pieces256, query 123 lacked (67, target 495709); plan split, query 64 lacked (74, 391877)
(a tie at the 10th score; 501904 came instead). Here, in one process on one GPU, each
shard of those plans searched by search_shard (as a worker does): the shard holding the
target, its top 10, the target's score in its top 1,000 (mode score and end), the CPU's
score of the pair; then the query against that shard's targets with top_k 10 by the
engine directly, and against only the target's neighbourhood.
usage: python repro36.py   (from the repo root; one GPU)"""
import sys
import tempfile
from pathlib import Path

sys.path[:0] = ["bench", ".carry/p36"]
import numpy as np  # noqa: E402


def main():
    from scaling import build_database
    from search_gpu import _find, read_fasta
    import warpalign.distributed as wd
    from warpalign import Scoring, align
    from warpalign.io import load_sequences
    from wp36b import split_plan
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        path, fp = str(db.path), wd.database_fingerprint(db)
        wd.PIECES_PER_SHARD = 256
        p256 = wd.shard_plan(db, 4)
        wd.PIECES_PER_SHARD = 64
        cases = [("pieces256", p256, 123, 495709), ("split", split_plan(db, 4), 64, 391877)]
        for name, plan, q, target in cases:
            names, codes = load_sequences([qs[q]], s.alphabet, default_name=f"q{q}")
            rank = int(db.rank[target])
            where = [sh for sh in plan if any(a <= rank < b for a, b in sh.ranges)][0]
            text = s.alphabet.decode(db.sequence(target))
            cpu = align(qs[q], text, s, backend="cpu", mode="score")
            print(f"== {name} q{q} (length {len(qs[q])}) target {target} (length "
                  f"{len(text)}, sorted position {rank}) in shard {where.index} "
                  f"({len(where.ranges)} ranges, {where.sequences} sequences); cpu score "
                  f"{cpu.score}", flush=True)
            for mode in ("score", "end"):
                for k in (10, 1000):
                    hits, _ = wd.search_shard(path, fp, where, names, codes, s, k, mode,
                                              "local", "cuda")
                    h = hits[0]
                    t = h.targets.tolist()
                    sc = dict(zip(t, h.scores.tolist()))
                    print(f"  mode {mode} top {k}: target {'in, score ' + str(sc[target]) if target in sc else 'MISSING'}; "
                          f"top10 {list(zip(h.scores.tolist()[:10], t[:10]))}", flush=True)
            for sh in plan:
                hits, _ = wd.search_shard(path, fp, sh, names, codes, s, 10, "end", "local",
                                          "cuda")
                print(f"  shard {sh.index}: {list(zip(hits[0].scores.tolist(), hits[0].targets.tolist()))}",
                      flush=True)


if __name__ == "__main__":
    main()
