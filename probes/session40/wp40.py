"""(session 40: wp36 with each worker's gc pauses; 4 workers only) Issue 25: where the Dask scan round's ~0.3 s over the
in-process search goes (session 35 call D: `_run` 2.59-2.61 s on 4 workers, the in-process
4-GPU search scores in ~2.28 s). Client clocks around client.map, the gather, the
unpacking and the merge inside `_run` (wrapped pieces), each worker's own clock around
search_shard and its `_top_hits`, and the ShardReport seconds; 4 workers then 1, mode full.
usage: python wp36.py OUT.jsonl   (4-GPU kind; wheels in /tmp/site as s35a.sh installs)"""
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, "bench")


def patch():
    import gc
    import time as _t
    import warpalign.distributed as wd
    if getattr(wd.search_shard, "_wrapped", False):
        return 0
    wd._gc = [0.0, 0, 0]
    state = {}

    def cb(phase, info):
        if phase == "start":
            state["t"] = _t.perf_counter()
        else:
            wd._gc[0] += _t.perf_counter() - state.get("t", _t.perf_counter())
            wd._gc[1] += 1
            wd._gc[2] += info.get("generation") == 2
    gc.callbacks.append(cb)
    for name in ("search_shard", "_top_hits", "_shard_database"):
        real = getattr(wd, name)

        def w(*a, _real=real, _name=name, **k):
            t = _t.perf_counter()
            try:
                return _real(*a, **k)
            finally:
                wd._probe_times = getattr(wd, "_probe_times", []) + [
                    (_name, round(_t.time(), 4), round(_t.perf_counter() - t, 4))]
        w._wrapped = True
        setattr(wd, name, w)
    return 1


def collect():
    import warpalign.distributed as wd
    got = getattr(wd, "_probe_times", [])
    wd._probe_times = []
    g = list(getattr(wd, "_gc", [0, 0, 0]))
    wd._gc = [0.0, 0, 0]
    return got + [("gc_s_count_gen2", round(g[0], 4), g[1], g[2])]


def main():
    from distributed import Client
    from scaling import build_database
    from search_gpu import _find, read_fasta
    import warpalign.distributed as wd
    from warpalign import Scoring
    out = sys.argv[1]
    s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
    qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
    clock = []
    for name in ("_run", "_trace", "_unpacked"):
        real = getattr(wd, name)

        def w(*a, _real=real, _name=name, **k):
            t = time.perf_counter()
            try:
                return _real(*a, **k)
            finally:
                clock.append((_name, round(time.time(), 4), round(time.perf_counter() - t, 4)))
        setattr(wd, name, w)
    import warpalign.results as wr
    real_merge = wr.Hits.merge

    def merge(self, *a, **k):
        t = time.perf_counter()
        try:
            return real_merge(self, *a, **k)
        finally:
            clock.append(("merge", round(time.time(), 4), round(time.perf_counter() - t, 5)))
    wr.Hits.merge = merge
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        for n in (4,):
            with wd.local_cluster(n, devices=[str(d) for d in range(n)]) as cluster, \
                    Client(cluster) as c:
                c.wait_for_workers(n)
                print(c.run(patch), flush=True)
                wd.search(qs, db, s, client=c, top_k=10, mode="full")
                c.run(collect)
                for r in range(3):
                    clock.clear()
                    t = time.perf_counter()
                    wd.search(qs, db, s, client=c, top_k=10, mode="full")
                    merges = [x for x in clock if x[0] == "merge"]
                    rec = dict(workers=n, run=r, total=round(time.perf_counter() - t, 4),
                               client=[x for x in clock if x[0] != "merge"],
                               merges=(len(merges), round(sum(x[2] for x in merges), 4)),
                               worker=c.run(collect))
                    print(json.dumps(rec), flush=True)
                    with open(out, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
