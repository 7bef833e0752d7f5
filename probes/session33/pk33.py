"""Session 33: h-stream's packed staging (_PackedStream) on a GPU host: encode_sides of
x 4 + y 32 MiB and x 4 + y 128 MiB at STREAM_BYTES 1 / 4 / 16 MiB (median, min of 7), and
one call's timeline: each chunk's pack (thread, start, ms) and the main thread's wait,
copy queueing and slot sync (ms)."""
import sys, time, statistics, threading
sys.path[:0] = ["src"]
import numpy as np
import cupy as cp
from warpalign._backends.cuda import encode as e
from warpalign import Scoring
table = Scoring(match=2, mismatch=-3, gap_open=5, gap_extend=2).alphabet.code_table
rng = np.random.default_rng(0)
big = np.frombuffer(b"ACGT", np.uint8)[rng.integers(0, 4, 140 << 20)]
def med(f, k=7):
    ts = []
    for _ in range(k):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return round(statistics.median(ts) * 1e3, 3), round(min(ts) * 1e3, 3)
run = lambda x, y: (e.encode_sides([x, y], table), cp.cuda.runtime.deviceSynchronize())
for ymib in (32, 128):
    x = big[:4 << 20].copy(); y = big[8 << 20:(8 << 20) + (ymib << 20)].copy()
    for sb in (1, 4, 16):
        e.STREAM_BYTES = sb << 20
        run(x, y)
        print("encode_sides x 4 + y", ymib, "MiB, STREAM_BYTES", sb, "MiB:", med(lambda: run(x, y)), flush=True)
    e.STREAM_BYTES = 4 << 20
    T0 = [0.0]; packs = []; sends = []; syncs = []
    rp, rs = e._PackedStream._pack, e._PackedStream._send
    def pk(self, pieces, slot):
        t = time.perf_counter(); r = rp(self, pieces, slot)
        packs.append((threading.current_thread().name[-3:], round((t - T0[0]) * 1e3, 3), round((time.perf_counter() - t) * 1e3, 3))); return r
    def sd(self, *a):
        t = time.perf_counter(); r = rs(self, *a); sends.append((round((t - T0[0]) * 1e3, 3), round((time.perf_counter() - t) * 1e3, 3))); return r
    e._PackedStream._pack, e._PackedStream._send = pk, sd
    for _ in range(2):
        packs.clear(); sends.clear(); T0[0] = time.perf_counter(); run(x, y)
        tot = round((time.perf_counter() - T0[0]) * 1e3, 3)
    e._PackedStream._pack, e._PackedStream._send = rp, rs
    print("  one call", tot, "ms;", len(packs), "packs: first starts", packs[:3], "sum", round(sum(p[2] for p in packs), 3),
          "last ends", round(max(p[1] + p[2] for p in packs), 3), flush=True)
    print("  sends (start, ms):", sends[:6], "...", sends[-3:], flush=True)
ev = cp.cuda.Event(); s = cp.cuda.Stream(non_blocking=True)
def sync():
    with s: ev.record(s)
    ev.synchronize()
print("record+synchronize an idle stream", med(lambda: [sync() for _ in range(100)]), "ms per 100", flush=True)
