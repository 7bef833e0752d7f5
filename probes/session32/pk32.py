"""Session 32: the packed staging's parts on a GPU host: _pack_pieces of 4 / 36 / 132 MiB
by 1-16 threads (median of 7), and encode_sides of x 4 MiB + y 32 MiB (pairs mode full's
sides) and x 4 + y 128 MiB (the NumPy row's), whole and by step (wall clocks)."""
import sys, time, statistics
sys.path[:0] = ["src"]
import numpy as np
import cupy as cp
from warpalign._backends.cuda import encode as e
from warpalign import Scoring
table = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2).alphabet.code_table
rng = np.random.default_rng(0)
big = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, 132 << 20)]
def med(f, k=7):
    ts = []
    for _ in range(k):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return round(statistics.median(ts) * 1e3, 3), round(min(ts) * 1e3, 3)
for mib in (4, 36, 132):
    src = big[:mib << 20]; out = np.empty((src.size + 3) // 4, np.uint8)
    for th in (1, 4, 8, 16):
        e._pack_pieces([(src, out)], th)
        print("pack", mib, "MiB", th, "threads", med(lambda: e._pack_pieces([(src, out)], th)), flush=True)
for ymib in (32, 128):
    x = big[:4 << 20].copy(); y = big[8 << 20:(8 << 20) + (ymib << 20)].copy()
    e.encode_sides([x, y], table); cp.cuda.runtime.deviceSynchronize()
    print("encode_sides x 4 + y", ymib, "MiB", med(lambda: (e.encode_sides([x, y], table), cp.cuda.runtime.deviceSynchronize())), flush=True)
    real = e._pack_pieces; marks = []
    def timed(pieces, threads):
        t = time.perf_counter(); r = real(pieces, threads); marks.append(round((time.perf_counter() - t) * 1e3, 3)); return r
    e._pack_pieces = timed
    t = time.perf_counter(); e.encode_sides([x, y], table); w = round((time.perf_counter() - t) * 1e3, 3)
    e._pack_pieces = real
    print("  one call", w, "ms; rounds", marks, flush=True)
