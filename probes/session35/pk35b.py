"""session 35: encode_sides' staging of 4 + 32 MiB (score_pairs mode full's 32,768 x 128 x
1,024 from NumPy, issue 20): the pack round against the whole call, per repeat.
usage: python pk35b.py OUT.jsonl"""
import json
import sys
import time

import numpy as np

from warpalign import Scoring
from warpalign._backends.cuda import encode as E

T = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2).alphabet.code_table
rng = np.random.default_rng(1)
L = np.frombuffer(b"ACGT", np.uint8)
X, Y = L[rng.integers(0, 4, 32768 * 128)], L[rng.integers(0, 4, 32768 * 1024)]
marks = []
real_pack, real_results = E._pack_pieces, E._results


def pack(pieces, threads):
    t = time.perf_counter()
    r = real_pack(pieces, threads)
    marks.append(("pack", t, time.perf_counter()))
    return r


def results(*a, **k):
    t = time.perf_counter()
    r = real_results(*a, **k)
    marks.append(("flags_read", t, time.perf_counter()))
    return r


E._pack_pieces, E._results = pack, results
with open(sys.argv[1], "w") as out:
    for r in range(8):
        marks.clear()
        t0 = time.perf_counter()
        E.encode_sides([X, Y], T)
        t1 = time.perf_counter()
        if r >= 2:
            rec = {"probe": "encode_sides_4_32MiB", "ms": round(1e3 * (t1 - t0), 3),
                   "marks": [(n, round(1e3 * (a - t0), 3), round(1e3 * (b - t0), 3))
                             for n, a, b in marks]}
            print(json.dumps(rec), flush=True)
            out.write(json.dumps(rec) + "\n")
