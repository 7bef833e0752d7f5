"""Issue 7: per-device spans of in-process multi-GPU searches (stall hunt)."""
import sys
import time

import cupy as cp
from _setup import SCORING as sc
from _setup import database, queries

from warpalign._backends import cuda as cb

qs = queries()
targets = database()
log = []
orig_sb = cb.CudaBackend.search_batches
orig_rf = cb.CudaBackend._rescore_flagged
orig_pp = cb._packed_profile
def sb(self, queries, handle, *a, **k):
    if isinstance(handle, cb.DeviceTargets):
        t0 = time.perf_counter(); r = orig_sb(self, queries, handle, *a, **k)
        log.append(("span", handle.device, t0, time.perf_counter())); return r
    return orig_sb(self, queries, handle, *a, **k)
def rf(self, run, qs_, handle, *a, **k):
    t0 = time.perf_counter(); r = orig_rf(self, run, qs_, handle, *a, **k)
    log.append(("rescore", handle.device, t0, time.perf_counter())); return r
def pp(*a, **k):
    t0 = time.perf_counter(); r = orig_pp(*a, **k)
    log.append(("profile", cp.cuda.runtime.getDevice(), t0, time.perf_counter())); return r
def wrap(name, tag):
    orig = getattr(cb.CudaBackend, name)
    def f(self, *a, **k):
        t0 = time.perf_counter(); r = orig(self, *a, **k)
        log.append((tag, cp.cuda.runtime.getDevice(), t0, time.perf_counter())); return r
    setattr(cb.CudaBackend, name, f)
for name, tag in (("_launch_passes", "L"), ("_cut", "M"), ("_chain_groups", "C"), ("_pack_batches", "B")):
    wrap(name, tag)
cb.CudaBackend.search_batches = sb
cb.CudaBackend._rescore_flagged = rf
cb._packed_profile = pp
for ngpu, groups in ((4, 0.005), (4, 0.0002), (1, 0.005)):
    if True:
        sys.setswitchinterval(groups)
        be = cb.CudaBackend(devices=tuple(range(ngpu)))
        h = be.prepare(targets)
        be.search_batches(qs, h, sc, top_k=10)
        for rep in range(8):
            log.clear()
            T0 = time.perf_counter(); be.search_batches(qs, h, sc, top_k=10); T = time.perf_counter() - T0
            ev = " ".join(f"{k[0][0]}{k[1]}:{k[2]-T0:.3f}-{k[3]-T0:.3f}" for k in sorted(log, key=lambda x: x[2]))
            print(f"gpus {ngpu} chain_groups {groups} total {T:.4f} | {ev}", flush=True)
            if rep == 7:
                for d in range(ngpu):
                    print("  dev", d, " ".join(f"{k[0][0]}:{(k[2]-T0)*1e3:.1f}-{(k[3]-T0)*1e3:.1f}" for k in sorted(log, key=lambda x: x[2]) if k[1] == d))
        del h, be
