"""Issue 7, session 15: where a Dask search's time goes on 1 and 4 local GPU workers
(warpalign.distributed.search, the scaling benchmark's queries and database): the total
per search against each shard task's own time on its worker (ShardReport.seconds, logged
by warpalign.distributed at INFO). Argument: worker counts (default 1,4). Prints only."""
import logging
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, "bench")

from _setup import SCORING as sc
from _setup import database
from distributed import Client

from scaling import write_fasta
from search_gpu import _find, read_fasta
from warpalign import Database
from warpalign.distributed import local_cluster
from warpalign.distributed import search as dsearch

records = []


class Keep(logging.Handler):
    def emit(self, record):
        records.append(record.getMessage())


log = logging.getLogger("warpalign.distributed")
log.setLevel(logging.INFO)
log.addHandler(Keep())


def main(counts):
    _, queries = read_fasta(_find("standard_queries20.fasta"))
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        fasta = Path(tmp) / "db.fasta"
        write_fasta(database(), fasta)
        db = Database.build(fasta, Path(tmp) / "db.wa")
        for n in counts:
            cluster = local_cluster(n, devices=[str(d) for d in range(n)])
            client = Client(cluster)
            dsearch(queries, db, sc, client=client, top_k=10, backend="cuda", shards=n)
            for rep in range(5):
                records.clear()
                t0 = time.perf_counter()
                dsearch(queries, db, sc, client=client, top_k=10, backend="cuda", shards=n)
                total = time.perf_counter() - t0
                secs = [float(m.group(1)) for r in records if (m := re.search(r", ([0-9.]+) s$", r))]
                print(f"workers {n}: total {total:.4f} s, shard tasks {' '.join(f'{s:.4f}' for s in secs)}",
                      flush=True)
            client.close()
            cluster.close()


if __name__ == "__main__":   # the workers' processes import this module again
    main([int(c) for c in sys.argv[1].split(",")] if len(sys.argv) > 1 else [1, 4])
