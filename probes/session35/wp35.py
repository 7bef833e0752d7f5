"""(prepared in session 34 for 35) The Dask mode full second round's round trip on 4 workers: client clocks of _run and
_trace against the worker's own clock of trace_hits (wrapped in the worker), 1 and 2
workers, three warm searches each.
usage: python wp34b.py OUT"""
import json, sys, tempfile, time
from pathlib import Path
sys.path.insert(0, "bench")
TIMES = []


def patch():
    import time as _t
    import warpalign.distributed as wd
    if getattr(wd.trace_hits, "_wrapped", False):
        return 0
    real = wd.trace_hits
    def w(*a, **k):
        t = _t.perf_counter()
        try:
            return real(*a, **k)
        finally:
            wd._probe_times = getattr(wd, "_probe_times", []) + [
                (round(_t.time(), 4), round(_t.perf_counter() - t, 4))]
    w._wrapped = True
    wd.trace_hits = w
    return 1


def collect():
    import warpalign.distributed as wd
    got = getattr(wd, "_probe_times", [])
    wd._probe_times = []
    return got


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
    for name in ("_run", "_trace"):
        real = getattr(wd, name)
        def w(*a, _real=real, _name=name, **k):
            t = time.perf_counter()
            try:
                return _real(*a, **k)
            finally:
                clock.append((_name, round(time.time(), 4), round(time.perf_counter() - t, 4)))
        setattr(wd, name, w)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        for n in (4, 1):
            with wd.local_cluster(n, devices=[str(d) for d in range(n)]) as cluster, Client(cluster) as c:
                c.wait_for_workers(n)
                print(c.run(patch), flush=True)
                wd.search(qs, db, s, client=c, top_k=10, mode="full")
                c.run(collect)
                for r in range(3):
                    clock.clear(); t = time.perf_counter()
                    wd.search(qs, db, s, client=c, top_k=10, mode="full")
                    rec = dict(workers=n, run=r, total=round(time.perf_counter() - t, 4),
                               client=clock[:], worker=c.run(collect))
                    print(json.dumps(rec), flush=True)
                    with open(out, "a") as fh:
                        fh.write(json.dumps(rec) + "\n")


if __name__ == "__main__":
    main()
