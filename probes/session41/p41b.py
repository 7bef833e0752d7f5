"""Session 41: GPU time of y's encode (encode_bytes), ww_ypack (from codes) and
ww_ypack_raw (from characters) at 32,768 x 4,096, each 30 launches back to back between
two events (the GPU busy: no host time inside)."""
import numpy as np
import cupy as cp

from warpalign import Scoring
from warpalign._backends.cuda import encode as ge
from warpalign._backends.cuda import pairs as gpu

P, n = 32768, 4096
s2 = Scoring(match=2, mismatch=-1, gap_open=1, gap_extend=1)
table = s2.alphabet.code_table
L = np.frombuffer(b"ACGT", np.uint8)
cy = cp.asarray(L[np.random.default_rng(0).integers(0, 4, P * n)])
xoff, yoff = np.arange(P + 1) * 128, np.arange(P + 1) * n
plan, device = gpu.planned_wordwise(cp, None, xoff, None, yoff, s2, "local", rows=None,
                                    prefetch=None, largest=3)
mod = gpu.pairs_module((*plan.names, "ww_ypack_raw"))
_, _, g, _, nitems, _, at, pack, _ = plan.launches[0]
nall = device[pack].size - 1
head = (device[1], device[at], np.int32(nitems), np.int32(2 * g), device[pack], np.int32(nall))
size = int(plan.small[pack][-1]) // 4
codes = cp.empty(cy.size, cp.uint8)
flags = cp.zeros(4, cp.uint64)
one, two = cp.empty(size, cp.uint32), cp.empty(size, cp.uint32)
d_table, guard = ge.device_table(cp, table), cp.zeros(4, cp.uint64)
grid = (min(nall, 65535),)
runs = {
    "encode_y": lambda: ge.queue_encode(cp, [cy], table, [codes], flags[:2]),
    "ww_ypack": lambda: mod.get_function("ww_ypack")(grid, (128,), (codes, *head, one, guard)),
    "ww_ypack_raw": lambda: mod.get_function("ww_ypack_raw")(grid, (128,),
                                                             (cy, *head, two, d_table, flags[2:])),
}
for name, fn in runs.items():
    fn()
cp.cuda.Device().synchronize()
assert np.array_equal(one.get(), two.get())
for rnd in range(3):
    out = []
    for name, fn in runs.items():
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        for _ in range(30):
            fn()
        b.record()
        b.synchronize()
        out.append(f"{name} {cp.cuda.get_elapsed_time(a, b) / 30 * 1e3:.1f} us")
    print("round", rnd, "; ".join(out))
