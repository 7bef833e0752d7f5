"""(session 34) Where the Dask mode full search goes (500 queries, Swiss-Prot-sized, 4 GPUs):
client wall clocks of round 1 (_run) and round 2 (_trace).
usage: python dk34.py OUT"""
import functools, json, sys, tempfile, time
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, "bench")
from distributed import Client
from scaling import build_database
from search_gpu import _find, read_fasta
import warpalign.distributed as wd
from warpalign import Scoring, search
out = Path(sys.argv[1]); s = Scoring(matrix="BLOSUM62", gap_open=11, gap_extend=1)
qs = read_fasta(_find("mmseqs2_example_QUERY.fasta.gz"))[1]
clock = []
for name in ("_run", "_trace"):
    real = getattr(wd, name)
    def w(*a, _real=real, _name=name, **k):
        t = time.perf_counter()
        try:
            return _real(*a, **k)
        finally:
            clock.append((_name, round(time.perf_counter() - t, 4)))
    setattr(wd, name, w)
def log(**rec):
    print(json.dumps(rec), flush=True)
    with open(out, "a") as fh:
        fh.write(json.dumps(rec) + "\n")
def main():
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        db = build_database(Path(tmp), 2024)
        for n in (4,):
            with wd.local_cluster(n, devices=[str(d) for d in range(n)]) as cluster, Client(cluster) as c:
                c.wait_for_workers(n)
                wd.search(qs, db, s, client=c, top_k=10, mode="full")
                for r in range(2):
                    clock.clear(); t = time.perf_counter()
                    wd.search(qs, db, s, client=c, top_k=10, mode="full")
                    log(gpus=n, run=r, total=round(time.perf_counter() - t, 4), steps=clock[:])


if __name__ == "__main__":
    main()
