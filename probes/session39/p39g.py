"""Session 39 call G: the CuPy row's host pieces, each timed alone (median us of 2,001)."""
import time

import numpy as np

import warpalign  # noqa: F401
import cupy as cp
from warpalign import Scoring, score_pairs
from warpalign import pairs as pp
from warpalign._backends import resolve_threads
from warpalign._backends.cuda import encode as enc
from warpalign._backends.cuda import pairs as cpairs
from warpalign._backends.cuda.transfer import pinned
from warpalign.buffers import gather

P = 32768
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
L = np.frombuffer(b"ACGT", np.uint8)
g = np.random.default_rng(0)
cx = cp.asarray(L[g.integers(0, 4, (P, 128))])
cy = cp.asarray(L[g.integers(0, 4, (P, 4096))])
for _ in range(5):
    score_pairs(cx, cy, s2, backend="cuda", method="wordwise")
cp.cuda.Device().synchronize()
x = gather(cx, s2.alphabet, "xs")
y = gather(cy, s2.alphabet, "ys")
table = s2.alphabet.code_table


def t(label, f, n=2001):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    cp.cuda.Device().synchronize()
    print(f"{label:34s} {np.median(ts) * 1e6:8.1f} us", flush=True)


t("perf_counter pair", lambda: None)
t("gather 2-D cupy (x)", lambda: gather(cx, s2.alphabet, "xs"))
t("np.arange(32769)*128", lambda: np.arange(P + 1, dtype=np.int64) * 128)
t("cupy flags.c_contiguous", lambda: cx.flags.c_contiguous)
t("cupy reshape(-1)", lambda: cx.reshape(-1))
t("resolve_threads", lambda: resolve_threads(None))
t("_ahead_engine", lambda: pp._ahead_engine("cuda", (x, y), s2, "local", "wordwise", "score",
                                            None, False))
t("_choose_method", lambda: pp._choose_method("wordwise", "cuda", s2, "local", None,
                                              x.offsets, None, y.offsets,
                                              (x.name, y.name, 0, 0), 0, (0, 0)))
t("raw slice x2", lambda: (x.raw[0:int(x.offsets[-1])], y.raw[0:int(y.offsets[-1])]))
t("Clock()+mark", lambda: cpairs.Clock(cp).mark("encode"))
t("cp.empty(4 MB)", lambda: cp.empty(4 * 2**20 + 131072, dtype=cp.uint8))
t("cp.empty(134 MB)", lambda: cp.empty(P * 4096, dtype=cp.uint8))
buf = cp.empty(4 * 2**20 + 131200, dtype=cp.uint8)
t("buf[x:].fill(0)", lambda: buf[4 * 2**20:].fill(0))
t("cp.zeros(4, u64)", lambda: cp.zeros(4, dtype=cp.uint64))
t("device_table", lambda: enc.device_table(cp, table))
t("_kernels", lambda: enc._kernels(False))
d_y = cp.empty(P * 4096, dtype=cp.uint8)
flags = buf[4 * 2**20:4 * 2**20 + 32].view(cp.uint64)
codes = [buf[:P * 128], d_y]
t("queue_encode (2 launches)", lambda: enc.queue_encode(cp, [x.raw, y.raw], table, codes, flags),
  n=501)
t("pinned(131 KB)", lambda: pinned(cp, 131200, np.uint8))
t("score_pairs whole", lambda: score_pairs(cx, cy, s2, backend="cuda", method="wordwise"),
  n=201)
t("score_pairs whole, auto", lambda: score_pairs(cx, cy, s2, backend="cuda"), n=201)
