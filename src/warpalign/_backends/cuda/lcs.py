"""GPU bit-parallel LLCS passes for ``warpalign.lcs`` (issue 5; kernel in ``lcs.cu``).

``final_vector(pattern, p_lo, p_hi, text, t_lo, t_hi, backward)`` has the meaning of the CPU
kernel (``_backends/cpu/lcs.py``): the pattern's bit-vector after the whole text, as
``ceil((p_hi - p_lo) / 64)`` uint64 words, forward or backward (the backward pass reads both
strings from their ends: here by reversed views uploaded once). ``lcs_length`` sends one
pass of at least ``MIN_CELLS`` cells here. ``lcs`` (Hirschberg) instead opens one
:class:`Resident` per call: both strings uploaded once, and each level's passes of at least
``BATCH_MIN_CELLS`` cells run as descriptors (``_backends/lcs_plan.py``) by ``llcs_batch``,
one launch per wave and one copy back per level; the recursion, base cases and splits stay
on the host, smaller passes on the CPU threads.

Kernel (``lcs.cu``): one warp per band of ``32*K`` words, lanes skewed by one text column,
carries by one shuffle per step, bands chained through a ring buffer with release/acquire
flags inside one persistent launch. Every band of a launch must be resident at once (a band
waits for the one below it and, through the ring, for the one above), so launches are sized
to the GPU's capacity (``K`` words per lane grows with the pattern; past 4 words per lane the
pattern is cut into several launches in sequence, carries passed through a buffer of
``|text|/8`` bytes) and concurrent launches from Hirschberg's worker threads share that
capacity through a host-side budget. Should a launch still wait too long (``TIMEOUT_S``
without progress), it aborts and the call raises ``BackendError`` naming the kernel.

Measured on one H200 (bench/results/lcs_gpu.jsonl, session 39): ``lcs_length`` of 20 M × 10 M
random DNA in 2.21 s, 90 T cells/s (K=2, 2442 bands; session 38's kernel, the carry and the
next code in one shuffled word, 73.8 T), the full LCS of 20 M × 10 M in 5.5 s (6.4 s with
that kernel in the same process).

Memory per pass: the two strings as 16-bit codes (2·(m + n) bytes), the vector (m/8 bytes),
the ring (256 bytes per band) and, for multi-launch passes, two carry buffers of n/8 bytes.
Per ``lcs`` call (:class:`Resident`): both strings as 16-bit codes (2·(|a| + |b|) bytes) and,
per level, its texts gathered (2 bytes per text symbol: at most 2·(|a| + |b|) bytes plus
about 200 per pass), its vectors (each pattern twice: at most (|a| + |b|)/4 bytes) and the
ring (256 bytes per band).

``STATS`` accumulates host-to-device, kernel and device-to-host seconds (summed over
threads, so they may overlap each other and the CPU's work); ``reset_stats()`` clears it
and ``busy_seconds("kernel")`` / ``busy_seconds("copy")`` give the wall time since then
during which at least one kernel / copy of ours ran (union of their intervals).
"""

from __future__ import annotations

import contextlib
import math
import threading
import time

import numpy as np

from ...errors import BackendError, BackendUnavailable
from .. import lcs_plan
from .encode import stage
from .loader import get_module, require_cupy

cupy = require_cupy("CUDA LCS backend")

__all__ = ["BATCH_MIN_CELLS", "MIN_CELLS", "STATS", "Resident", "busy_seconds", "final_vector",
           "reset_stats"]

#: Passes of fewer cells stay on the CPU. A GPU pass costs a few hundred µs of launches and
#: copies plus, while few bands are in flight, 50-70 ns per text symbol whatever the pattern
#: length (measured on an H200: 52 ns with 64 bands, 70 ns with 489); a CPU core does this
#: many cells in 2-3 ms, and Hirschberg's lower levels keep all cores busy.
MIN_CELLS = 1 << 27
#: ``lcs``'s passes of at least this many cells run on the GPU, a whole Hirschberg level per
#: launch wave (:class:`Resident`): there a pass costs no launch, copy or sync of its own,
#: and a level's passes together fill the GPU however small each is, so the floor is far
#: lower (a 2048 x 2048 pass; CPU cores take the rest, overlapped).
BATCH_MIN_CELLS = 1 << 22

_FILE = "lcs.cu"
_KS = (1, 2, 3, 4)         # words per lane; _plan and Resident never pick 3 on their own
_RING = 64                 # must match LCS_RING in lcs.cu (a band's ring: 2*_RING words)
#: Kernel variant for measuring (the answer is the same; lcs.cu explains it): ``sync``
#: "flag" (release/acquire of a progress counter per chunk) or "tagged" (one 64-bit store of
#: word and chunk number, no fence; the consumer loads a chunk ahead). The default is the
#: sweep's best (H100, 20 M x 10 M, K=2, session 19's step: tagged 73.6 T cells/s, flag
#: 71.8 T; bench/results/lcs_gpu.jsonl).
SYNCS = ("flag", "tagged")
SYNC = "tagged"
#: Warps (bands) per block of ``llcs_bands``: 1, 2 or 4 (how warps land on an SM's four
#: schedulers).
WARPS = 1
#: How ``final_vector`` copies the strings up: "pinned" (``encode.stage``: chunks through
#: pinned buffers) or "pageable" (``cupy.asarray``).
STAGING = "pinned"
STAGINGS = ("pinned", "pageable")
TIMEOUT_S = 10             # a band waits this long for the band below it, then the pass fails
_TEXT_BYTES = 192          # a warp's text ring (LCS_TEXT_WORDS in lcs.cu)
#: Bands of K words an SM takes before the next K is preferred (H200, session 39, 4 M text,
#: T cells/s: 3 M in K=1 at 11 an SM 66, K=2 62; 4 M: K=1 at 15 an SM 67, K=2 81; 10 M:
#: K=2 at 18.5 an SM 83, K=4 78; 11 M: K=2 at 20.3 an SM 66, K=4 85).
_BANDS_PER_SM = {1: 12, 2: 20, 4: 20}   # K=3 only when asked for (then not looked up)
_SAFETY = 0.9              # fraction of the GPU's block slots a launch budget may use
_MAX_WARPS_PER_SM = 32     # 64 registers a thread: 32 warps fill an SM

STATS = {"passes": 0, "launches": 0, "h2d_s": 0.0, "kernel_s": 0.0,
         "d2h_s": 0.0, "cells": 0}
_stats_lock = threading.Lock()
_local = threading.local()
_ref = {"event": None}                 # reference event of the interval lists below
_INTERVALS = {"kernel": [], "copy": []}   # (start, end) seconds after the reference event


def reset_stats() -> None:
    """Clear ``STATS`` and the busy intervals (call before a measured run)."""
    with _stats_lock:
        for k in STATS:
            STATS[k] = 0.0 if k.endswith("_s") else 0
        for v in _INTERVALS.values():
            v.clear()
        ev = cupy.cuda.Event()
        ev.record(cupy.cuda.Stream.null)
        ev.synchronize()
        _ref["event"] = ev


def _copy_back(array, stream):
    """``array`` copied to the host, and the events recorded on ``stream`` around the copy
    (its time, beside the kernel's); returns once the copy is done."""
    before, after = cupy.cuda.Event(), cupy.cuda.Event()
    before.record(stream)
    host = cupy.asnumpy(array)
    after.record(stream)
    after.synchronize()
    return host, before, after


def _add_stats(intervals=(), **kw) -> None:
    with _stats_lock:
        for k, v in kw.items():
            STATS[k] += v
        ref = _ref["event"]
        if ref is not None:
            for kind, e0, e1 in intervals:
                _INTERVALS[kind].append((cupy.cuda.get_elapsed_time(ref, e0) / 1e3,
                                         cupy.cuda.get_elapsed_time(ref, e1) / 1e3))


def busy_seconds(*kinds: str) -> float:
    """Seconds since ``reset_stats()`` during which the GPU ran at least one of our kernels
    ("kernel") or copies ("copy") — the union of their intervals over all threads."""
    with _stats_lock:
        spans = sorted(iv for k in kinds for iv in _INTERVALS[k])
    total, end = 0.0, float("-inf")
    for a, b in spans:
        if b > end:
            total += b - max(a, end)
            end = b
    return total


class _Budget:
    """Block slots of the GPU (in SMs' worth) shared by concurrent launches, so that every
    band of every launch in flight is resident at once."""

    def __init__(self, sms: float):
        self.total = sms
        self.used = 0.0
        self.cond = threading.Condition()

    def acquire(self, need: float) -> float:
        need = min(need, self.total)
        with self.cond:
            while self.used > 0 and self.used + need > self.total:
                self.cond.wait()
            self.used += need
        return need

    def release(self, need: float) -> None:
        with self.cond:
            self.used -= need
            self.cond.notify_all()


class _Device:
    def __init__(self, dev_id: int):
        props = cupy.cuda.runtime.getDeviceProperties(dev_id)
        self.name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        self.sms = int(props["multiProcessorCount"])
        self.smem_sm = int(props.get("sharedMemPerMultiprocessor", 228 * 1024))
        self.smem_optin = int(props.get("sharedMemPerBlockOptin", 227 * 1024))
        self.reserved = int(props.get("reservedSharedMemPerBlock", 1024))
        self.budget = _Budget(self.sms * _SAFETY)
        self.lock = threading.Lock()
        self.kernels = {}

    def kernel(self, k: int, smem: int, timeout_s: float = TIMEOUT_S,
               name: str = "llcs_bands", sync: str | None = None):
        """``name<k>`` (llcs_bands: one pass; llcs_batch: a level's passes) with room for
        ``smem`` bytes of dynamic shared memory; or ``lcs_gather_texts`` / ``lcs_present``
        (k ignored). ``sync``: the variant (default :data:`SYNC`)."""
        sync = SYNC if sync is None else sync
        if sync not in SYNCS:
            raise ValueError(f"invalid sync: {sync!r}; expected one of {SYNCS}")
        with self.lock:
            plain = name in ("lcs_gather_texts", "lcs_present")
            full = name if plain else f"{name}<{k}>"
            key = (full, timeout_s, sync)
            fn = self.kernels.get(key)
            if fn is None:
                names = (tuple(f"{n}<{kk}>" for n in ("llcs_bands", "llcs_batch") for kk in _KS)
                         + ("lcs_gather_texts", "lcs_present"))
                mod = get_module(_FILE, names, (f"LCS_RING={_RING}",
                                                f"LCS_TIMEOUT_NS={int(timeout_s * 1e9)}ull",
                                                f"LCS_TAGGED={int(sync == 'tagged')}"))
                fn = mod.get_function(full)
                with contextlib.suppress(Exception):   # a hint only
                    fn.preferred_shared_memory_carveout = 100
                self.kernels[key] = fn
            if smem > 48 * 1024 and fn.max_dynamic_shared_size_bytes < smem:
                fn.max_dynamic_shared_size_bytes = smem
        return fn

    def blocks_per_sm(self, k: int, smem: int, name: str = "llcs_bands", warps: int = 1,
                      sync: str | None = None) -> int:
        """Resident blocks (of ``warps`` warps) per SM of the K-word kernel with ``smem``
        bytes of shared memory a block (0: does not fit)."""
        if smem > self.smem_optin:
            return 0
        by_smem = self.smem_sm // (smem + self.reserved)
        bpsm = min(_MAX_WARPS_PER_SM // warps, by_smem)
        fn = self.kernel(k, smem, name=name, sync=sync)
        with contextlib.suppress(Exception):   # no occupancy API: keep the estimate
            occ = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                fn.ptr, 32 * warps, smem)
            bpsm = min(bpsm, int(occ))
        return max(0, bpsm)


_devices: dict[int, _Device] = {}
_devices_lock = threading.Lock()


def _device() -> _Device:
    dev_id = cupy.cuda.runtime.getDevice()
    with _devices_lock:
        d = _devices.get(dev_id)
        if d is None:
            d = _devices[dev_id] = _Device(dev_id)
    return d


def _stream():
    s = getattr(_local, "stream", None)
    if s is None:
        s = _local.stream = cupy.cuda.Stream(non_blocking=True)
    return s


def _smem(sigma1: int, k: int, warps: int = 1) -> int:
    """Dynamic shared memory of a block: per warp its masks and its text ring."""
    return (sigma1 * k * 32 * 8 + _TEXT_BYTES) * warps


def _plan(dev: _Device, words: int, sigma1: int, k: int | None, max_bands: int | None,
          warps: int = 1, sync: str | None = None):
    """(K, bands per launch, blocks per SM): the smallest K (of 1, 2, 4; or ``k``) whose
    bands all fit at once, at most :data:`_BANDS_PER_SM` of them an SM, else the smallest
    K whose bands fit at all, else the K that fits the most words per launch (several
    launches). A block is ``warps`` bands."""
    best = crowded = None
    for kk in ((k,) if k else (1, 2, 4)):
        smem = _smem(sigma1, kk, warps)
        bpsm = dev.blocks_per_sm(kk, smem, warps=warps, sync=sync)
        if bpsm == 0:
            continue
        cap = int(dev.sms * _SAFETY) * bpsm * warps
        if max_bands:
            cap = min(cap, max_bands)
        need = -(-words // (32 * kk))
        if need <= cap:
            if k or need <= dev.sms * _BANDS_PER_SM[kk]:
                return kk, need, bpsm
            crowded = crowded or (kk, need, bpsm)
        elif best is None or cap * kk > best[1] * best[0]:
            best = (kk, cap, bpsm)
    if crowded or best:
        return crowded or best
    raise BackendUnavailable(f"LCS kernel: an alphabet of {sigma1 - 1} symbols does not "
                             "fit in shared memory")


_remap_kernel = None


def _remap():
    """Elementwise ``y = cmap[x]`` (bytes to the pattern's compact codes)."""
    global _remap_kernel
    if _remap_kernel is None:
        _remap_kernel = cupy.ElementwiseKernel("uint8 x, raw uint16 cmap", "uint16 y",
                                               "y = cmap[x]", "warpalign_lcs_remap")
    return _remap_kernel


def _upload(host: np.ndarray, staging: str, stream):
    """``host`` bytes on the device: through pinned chunks (``encode.stage``: complete when
    it returns) or one pageable ``cupy.asarray`` on ``stream`` (ordered before the work
    queued there next)."""
    if staging == "pinned":
        return stage(host)
    with stream:
        return cupy.asarray(host)


def final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, backward, *, k=None, max_bands=None,
                 timeout_s=TIMEOUT_S, warps=None, sync=None, staging=None, where=None):
    """The pattern's bit-vector after the whole text (see ``_backends/cpu/lcs.final_vector``).
    Tuning (tests, bench): ``k`` words per thread, ``max_bands`` bands per launch at most
    (default: chosen for the device); ``warps`` bands per block (default :data:`WARPS`);
    ``sync`` the kernel variant (:data:`SYNCS`); ``staging``
    :data:`STAGINGS`; ``where``: a list that receives, per band of the first launch,
    ``(smid << 8) | warp slot`` (measuring aid). ``timeout_s`` seconds a band waits for
    the band below before the pass fails with BackendError.

    The strings go up as raw bytes; the pattern's alphabet is found on the device
    (``lcs_present``, one 1 KiB read back) and both are coded there, so the host never
    scans them."""
    warps = WARPS if warps is None else int(warps)
    staging = STAGING if staging is None else staging
    if warps not in (1, 2, 4):
        raise ValueError(f"invalid warps: {warps!r}; expected 1, 2 or 4")
    if staging not in STAGINGS:
        raise ValueError(f"invalid staging: {staging!r}; expected one of {STAGINGS}")
    np_ = int(p_hi - p_lo)
    n = int(t_hi - t_lo)
    W = (np_ + 63) // 64
    if W == 0 or n == 0:
        return np.full(W, np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64)
    dev = _device()
    stream = _stream()
    P = np.ascontiguousarray(np.asarray(pat)[p_lo:p_hi], dtype=np.uint8)
    T = np.ascontiguousarray(np.asarray(txt)[t_lo:t_hi], dtype=np.uint8)
    nq = (n + 31 + 31) // 32
    t0 = time.perf_counter()
    evh0, evh1 = cupy.cuda.Event(), cupy.cuda.Event()
    evh0.record(stream)
    P_d = _upload(P, staging, stream)            # complete when it returns (either way)
    with stream:
        present_d = cupy.zeros(256, cupy.uint32)
        dev.kernel(0, 0, name="lcs_present")((min(1024, -(-np_ // 1024)),), (256,),
                                               (P_d, np.int64(np_), present_d))
    T_d = _upload(T, staging, stream)            # overlaps the alphabet kernel
    present = present_d.get(stream=stream) > 0
    evh1.record(stream)
    t1 = time.perf_counter()
    sigma = int(present.sum())
    cmap = np.zeros(256, np.uint16)
    cmap[present] = np.arange(1, sigma + 1, dtype=np.uint16)
    with stream:
        cmap_d = cupy.asarray(cmap)
        if backward:
            P_d = P_d[::-1]
            T_d = T_d[::-1]
        pc = _remap()(P_d, cmap_d)
        tc = cupy.zeros(32 * (nq + 2) + 64, cupy.uint16)
        _remap()(T_d, cmap_d, tc[:n])
        del P_d, T_d
        sigma1 = sigma + 1
        K, cap, bpsm = _plan(dev, W, sigma1, k, max_bands, warps, sync)
        smem = _smem(sigma1, K, warps)
        fn = dev.kernel(K, smem, timeout_s, sync=sync)
        V_d = cupy.empty(W, cupy.uint64)
        words_per_launch = cap * 32 * K
        launches = -(-W // words_per_launch)
        bands0 = min(cap, -(-W // (32 * K)))
        ring = cupy.zeros(bands0 * 2 * _RING, cupy.uint32)
        flags = cupy.empty(2 * bands0 + 2, cupy.uint32)
        where_d = cupy.zeros(bands0, cupy.uint32) if where is not None else None
        bufs = ([cupy.zeros(nq + 2, cupy.uint32), cupy.zeros(nq + 2, cupy.uint32)]
                if launches > 1 else [])
        # the worker thread sleeps (blocking sync) while the GPU runs: CPU base cases of
        # Hirschberg share the cores
        ev0, ev1 = cupy.cuda.Event(), cupy.cuda.Event(block=True)
        slot = dev.budget.acquire(bands0 / (bpsm * warps))
        try:
            ev0.record(stream)
            cin, err = None, 0
            for g in range(launches):
                word0 = g * words_per_launch
                bands = min(cap, -(-(W - word0) // (32 * K)))
                flags.fill(0)
                if g:
                    ring.fill(0)        # tags of the previous launch must not match
                cout = bufs[g % 2] if g + 1 < launches else None
                fn((-(-bands // warps),), (32 * warps,),
                   (pc, np.int64(np_), tc, np.int64(nq), np.int32(sigma1), np.int64(word0),
                    np.int64(W), np.int32(bands), V_d, ring, flags,
                    cin if cin is not None else np.uint64(0),
                    cout if cout is not None else np.uint64(0),
                    where_d if (where_d is not None and g == 0) else np.uint64(0)),
                   shared_mem=smem)
                cin = cout
                if launches > 1:
                    err = int(flags[2 * bands + 1].get())
                    if err:
                        break
            ev1.record(stream)
            ev1.synchronize()
        finally:
            dev.budget.release(slot)
        t2 = time.perf_counter()
        if launches == 1:
            err = int(flags[2 * bands0 + 1].get())
        V, evd0, evd1 = _copy_back(V_d, stream)
        t3 = time.perf_counter()
        if where is not None:
            where.extend(int(x) for x in where_d.get())
    kern = cupy.cuda.get_elapsed_time(ev0, ev1) / 1e3
    _add_stats((("copy", evh0, evh1), ("kernel", ev0, ev1), ("copy", evd0, evd1)),
               passes=1, launches=launches, h2d_s=t1 - t0, kernel_s=kern, d2h_s=t3 - t2,
               cells=np_ * n)
    if err:
        raise BackendError(f"lcs.cu llcs_bands<{K}>: a band waited more than "
                           f"{timeout_s} s for the band below it (the GPU is stalled or "
                           "shared with a kernel that holds it)")
    return V


class Resident:
    """One ``lcs`` call's two strings on the device, and a Hirschberg level's passes run
    from there in one launch per wave (``lcs_plan``; kernel ``llcs_batch`` in lcs.cu).

    The strings are uploaded once and coded over their shared alphabet (a byte absent from
    either string is code 0 and matches nothing). ``final_vectors(passes)``: descriptors
    and band offsets up (a few KiB), the ring and flags zeroed once, the waves launched in
    sequence on this call's stream (each wave's bands all resident: the GPU budget is held
    for the largest), one wait, the vectors of the whole level down in one copy. K (words
    per lane) is chosen per level: 1 when all the level's bands fit at once (more warps on
    few bands), else 2 (measured best once the GPU is full), else 4 for passes that need it;
    a pass too large for any wave runs alone through :func:`final_vector`.
    Per-call state only; not for use from several threads at once. Tuning (tests): ``k``
    words per lane for every level, ``max_bands`` bands per wave at most."""

    def __init__(self, a: np.ndarray, b: np.ndarray, *, k: int | None = None,
                 max_bands: int | None = None):
        self.a, self.b = a, b
        self.na = len(a)
        self.dev = _device()
        self.stream = cupy.cuda.Stream(non_blocking=True)
        cmap, sigma = lcs_plan.shared_alphabet(a, b)
        self.sigma1 = sigma + 1
        t0 = time.perf_counter()
        with self.stream:
            ev0, ev1 = cupy.cuda.Event(), cupy.cuda.Event()
            ev0.record(self.stream)
            cmap_d = cupy.asarray(cmap)
            self.codes = cupy.empty(max(1, len(a) + len(b)), cupy.uint16)
            for lo, s in ((0, a), (len(a), b)):
                if len(s):
                    _remap()(cupy.asarray(s), cmap_d, self.codes[lo:lo + len(s)])
            ev1.record(self.stream)
            ev1.synchronize()
        _add_stats((("copy", ev0, ev1),), h2d_s=time.perf_counter() - t0)
        self.options = {}   # K -> (bands at once, blocks per SM, shared memory bytes)
        for kk in ((k,) if k else _KS):
            smem = _smem(self.sigma1, kk)
            bpsm = self.dev.blocks_per_sm(kk, smem, "llcs_batch")
            if bpsm > 0:
                cap = int(self.dev.sms * _SAFETY) * bpsm
                self.options[kk] = (min(cap, max_bands) if max_bands else cap, bpsm, smem)
        if not self.options:
            raise BackendUnavailable(f"LCS kernel: an alphabet of {sigma} symbols does not "
                                     "fit in shared memory")

    def _words_per_lane(self, desc: np.ndarray) -> int:
        if len(self.options) == 1:
            return next(iter(self.options))
        if 1 in self.options and lcs_plan.bands(desc, 1).sum() <= self.options[1][0]:
            return 1
        for k in (2, 4):
            if k in self.options and lcs_plan.bands(desc, k).max() <= self.options[k][0]:
                return k
        return max(self.options, key=lambda k: self.options[k][0] * k)

    def final_vectors(self, passes) -> list[np.ndarray]:
        """Vectors of ``passes`` (rows ``(pattern_is_a, p_lo, p_hi, t_lo, t_hi, backward)``,
        ``cpu/lcs.final_vector``'s meaning), in order."""
        desc = lcs_plan.describe(passes, self.na)
        if len(desc) == 0:
            return []
        K = self._words_per_lane(desc)
        cap, bpsm, smem = self.options[K]
        nb = lcs_plan.bands(desc, K)
        order = np.argsort(-nb, kind="stable")
        sel = order[(nb[order] > 0) & (nb[order] <= cap)]
        alone = order[nb[order] > cap]
        out = [np.full(int(w), np.uint64(0xFFFFFFFFFFFFFFFF), np.uint64) for w in desc[:, 6]]
        if len(sel):
            V = self._launch(desc[sel], nb[sel], K, cap, bpsm, smem)
            for i in sel.tolist():
                out[i] = V[desc[i, 5]:desc[i, 5] + desc[i, 6]]
        for i in alone.tolist():
            pat_is_a, p_lo, p_hi, t_lo, t_hi, backward = (int(x) for x in passes[i])
            pat, txt = (self.a, self.b) if pat_is_a else (self.b, self.a)
            out[i] = final_vector(pat, p_lo, p_hi, txt, t_lo, t_hi, bool(backward))
        return out

    def _launch(self, desc, nb, K, cap, bpsm, smem) -> np.ndarray:
        """Run the passes ``desc`` (launch order) with ``nb`` bands each; V of the level."""
        band_start = np.zeros(len(desc) + 1, np.int64)
        np.cumsum(nb, out=band_start[1:])
        G = int(band_start[-1])
        wv = lcs_plan.waves(nb, cap)
        total_words = int((desc[:, 5] + desc[:, 6]).max())   # V offsets of the level
        text_len = int((desc[:, 7] + lcs_plan.padded_text(desc[:, 4])).max())
        fn = self.dev.kernel(K, smem, name="llcs_batch")
        gather = self.dev.kernel(K, 0, name="lcs_gather_texts")
        stream = self.stream
        with stream:
            t0 = time.perf_counter()
            evh0, evh1 = cupy.cuda.Event(), cupy.cuda.Event()
            evh0.record(stream)
            desc_d = cupy.asarray(np.ascontiguousarray(desc))
            start_d = cupy.asarray(band_start)
            evh1.record(stream)
            t1 = time.perf_counter()
            tbuf = cupy.empty(text_len, cupy.uint16)
            gx = min(1024, -(-int(lcs_plan.padded_text(desc[:, 4]).max()) // 256))
            gather((gx, min(len(desc), 65535)), (256,),
                   (self.codes, desc_d, np.int64(len(desc)), tbuf))
            V_d = cupy.empty(total_words, cupy.uint64)
            ring = cupy.zeros(G * 2 * _RING, cupy.uint32)
            flags = cupy.zeros(2 * G + 1 + len(wv), cupy.uint32)
            ev0, ev1 = cupy.cuda.Event(), cupy.cuda.Event(block=True)
            slot = self.dev.budget.acquire(max(int(band_start[p1] - band_start[p0])
                                               for p0, p1 in wv) / bpsm)
            try:
                ev0.record(stream)
                for w, (p0, p1) in enumerate(wv):
                    fn((int(band_start[p1] - band_start[p0]),), (32,),
                       (self.codes, tbuf, desc_d, start_d, np.int32(p0), np.int32(p1),
                        np.int32(self.sigma1), V_d, ring, flags, np.int64(G),
                        flags[2 * G + 1 + w:]),
                       shared_mem=smem)
                ev1.record(stream)
                ev1.synchronize()
            finally:
                self.dev.budget.release(slot)
            t2 = time.perf_counter()
            err = int(flags[2 * G].get())
            V, evd0, evd1 = _copy_back(V_d, stream)
            t3 = time.perf_counter()
        kern = cupy.cuda.get_elapsed_time(ev0, ev1) / 1e3
        _add_stats((("copy", evh0, evh1), ("kernel", ev0, ev1), ("copy", evd0, evd1)),
                   passes=len(desc), launches=len(wv), h2d_s=t1 - t0, kernel_s=kern,
                   d2h_s=t3 - t2, cells=int((desc[:, 2] * desc[:, 4]).sum()))
        if err:
            raise BackendError(f"lcs.cu llcs_batch<{K}>: a band waited more than "
                               f"{TIMEOUT_S} s for the band below it (the GPU is stalled or "
                               "shared with a kernel that holds it)")
        return V

    def close(self) -> None:
        """Free the device copy of the strings (the pool keeps the memory for reuse)."""
        self.codes = None


def plan(m: int, sigma: int = 4) -> dict:
    """How a pattern of ``m`` symbols over ``sigma`` symbols would run (for benchmarks)."""
    dev = _device()
    W = (m + 63) // 64
    K, cap, bpsm = _plan(dev, W, sigma + 1, None, None)
    return {"K": K, "bands_per_launch": cap, "blocks_per_sm": bpsm,
            "launches": math.ceil(W / (cap * 32 * K)), "device": dev.name, "sms": dev.sms}
