"""Session 41: what the next hit's score (second=True) adds to locate_many_encoded, mode
full, 1,000 x 150 bp reads vs ce2chrX: calls and seconds of Search.close_seams,
Search._score (window launches), Search._cut and locate._heads, summed over threads."""
import collections
import gzip
import sys
import threading
import time

import numpy as np

sys.path[:0] = ["bench", "src"]
from _common import SHARED_DATA
import importlib
L = importlib.import_module("warpalign.locate")
from warpalign import locate_core as C
from warpalign.alphabet import reverse_complement
from warpalign.locate import locate_many_encoded
from warpalign.scoring import Scoring

scoring = Scoring(match=1, mismatch=-2, gap_open=5, gap_extend=1)
with gzip.open(SHARED_DATA / "dna" / "ce2chrX.fa.gz", "rt") as fh:
    fh.readline()
    chrx = "".join(line.strip() for line in fh).upper()
ref = scoring.encode(chrx)
ref.setflags(write=False)
rng = np.random.default_rng(7)
reads = []
for k in range(1000):
    while True:
        at = int(rng.integers(0, len(ref) - 150))
        read = ref[at:at + 150].copy()
        if (read < 4).all():
            break
    flip = rng.random(150) < 0.03
    read[flip] = (read[flip] + rng.integers(1, 4, int(flip.sum()))) % 4
    reads.append(reverse_complement(read, scoring.alphabet) if k % 2 else read)

stats = collections.defaultdict(lambda: [0, 0.0, 0])
lock = threading.Lock()


def timed(owner, name, label, size=None):
    fn = getattr(owner, name)

    def wrapper(*a, **kw):
        t0 = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            with lock:
                s = stats[label]
                s[0] += 1
                s[1] += time.perf_counter() - t0
                if size is not None:
                    s[2] += size(*a, **kw)
    setattr(owner, name, wrapper)


timed(C.Search, "close_seams", "close_seams")
timed(C.Search, "_score", "_score (windows)", size=lambda self, p: len(p))
timed(C.Search, "_cut", "_cut")
timed(L, "_heads", "_heads")
timed(L, "_picks_with_second", "_picks_with_second")
timed(L, "_winners_ends", "_winners_ends")
for second in (False, True, False, True):
    list(locate_many_encoded(reads, ["chrX"], [ref], scoring, mode="full", backend="cuda",
                             second=second))
    stats.clear()
    t0 = time.perf_counter()
    list(locate_many_encoded(reads, ["chrX"], [ref], scoring, mode="full", backend="cuda",
                             second=second))
    print(f"second={second}: {time.perf_counter() - t0:.3f} s")
    for k, (n, s, size) in sorted(stats.items()):
        print(f"   {k}: {n} calls, {s:.3f} s summed, {size} pieces")
