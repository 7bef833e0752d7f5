"""Session 42 probe H: `warpalign search --workers N`'s phases in the client process (the
CLI's main called in process, distributed's functions wrapped with timers).
usage: python p42h.py N DB QUERIES"""
import functools, sys, time
T0 = time.perf_counter()
import warpalign.distributed as d
from warpalign.cli import main

marks = []


def wrap(owner, name):
    f = getattr(owner, name)

    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            marks.append((name, round(t - T0, 3), round(time.perf_counter() - T0, 3)))
    setattr(owner, name, g)


if __name__ == "__main__":   # the nannies spawn processes that import this module
    for name in ("local_cluster", "_run", "_trace", "search", "_open_shared"):
        wrap(d, name)
    wrap(d._connect, "__enter__")
    wrap(d._connect, "__exit__")
    n, db, q = sys.argv[1:4]
    t = time.perf_counter()
    rc = main(["search", q, db, "--mode", "full", "--top-k", "10", "--no-progress", "--workers", n,
               "-o", "/tmp/p42h.tsv"])
    print(f"workers {n}: rc {rc}, main {time.perf_counter() - t:.3f} s, since start "
          f"{time.perf_counter() - T0:.3f} s")
    for m in marks:
        print("   ", m)
