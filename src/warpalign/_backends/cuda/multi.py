"""Several devices of one host (:class:`~.handles.MultiTargets`): the targets split by
cost (:func:`~.handles.split_targets`, paper 003's balance), each device's share prepared
by a one-device backend of its own on a thread of its own, and searched so:

* where every device runs the queries as one packed batch (local scores), everything is
  queued from the calling thread: every device's first pass, then the rest and the top-k
  cut of each, then the results (:meth:`MultiSearch._search_multi_packed`);
* otherwise one thread per device (:meth:`MultiSearch._search_threads`);
* end cells (modes end and full: local, a top-k, method auto) come after the scores:
  only the merged top-k is ended, each candidate on the device that holds its target,
  the devices side by side (:meth:`MultiSearch._multi_ends`).

The candidates merge exactly (every target at or above each device's k-th best comes
back; the caller cuts the union).
"""

from __future__ import annotations

import threading

import numpy as np

from ..base import TargetSet
from .handles import (Candidates, DeviceTargets, MultiTargets, _Part, ends_after_scores,
                      gather_targets, laid_flat, split_ids, top_candidates, with_ends)
from .topk import merged_cut


class MultiSearch:
    """The multi-device search of :class:`~warpalign._backends.cuda.search.CudaBackend`
    (a mixin: it reads the backend's devices, settings and one-device search)."""

    def _prepare_multi(self, targets, device_memory):
        cp = self._cp
        offsets = np.asarray(targets.offsets, dtype=np.int64)
        codes = np.asarray(targets.codes, dtype=np.uint8)
        shares = list(zip(split_ids(targets, len(self._devices)), self._devices))
        parts = [None] * len(shares)

        def part(k):   # each device's share gathered, laid out and uploaded beside the others'
            ids, dev = shares[k]
            ts = gather_targets(targets, ids)
            with cp.cuda.Device(dev):
                be = type(self)(self._table, self._nstreams,
                                devices=(dev,), max_resident=self._max_resident,
                                block2=self._block2, wait_timeout=self._wait_timeout,
                                tuning=self.tuning, device_memory=self._device_memory,
                                on_packed=self._on_packed)
                parts[k] = _Part(dev, be, be.prepare(ts, device_memory=device_memory), ids)

        # each part's codes gathered on its device's thread: a part is one run of
        # consecutive targets per length (split_ids), a few thousand slice copies that
        # leave the GIL, so the threads fault their fresh pages in side by side (four
        # Swiss-Prot-sized quarters 0.07-0.10 s where one after another took 0.27-0.42 s,
        # 2-core machine; with the greedy's ~97,000 runs a part the loops held the GIL)
        parallel([lambda k=k: part(k) for k in range(len(shares))])
        max_code = int(codes.max()) if len(codes) else -1
        return MultiTargets(parts, len(offsets) - 1, int(offsets[-1]), max_code,
                            TargetSet(codes, offsets))

    def _search_multi(self, qs, handle, scoring, algorithm, ends, top_k, method):
        """search_batches over the devices of a MultiTargets handle: one packed batch per
        device from the calling thread (:meth:`_search_multi_packed`) where every device
        runs the queries as one, else one thread per device. End cells (``ends``, a top-k,
        local, method auto): the scores first, then :meth:`_multi_ends`."""
        if ends and ends_after_scores(algorithm, top_k, method):
            scored = self._search_multi(qs, handle, scoring, algorithm, False, top_k, method)
            return self._multi_ends(qs, handle, scoring, top_candidates(scored, top_k))
        if (len(qs) >= 2 and not ends and method == "auto"
                and algorithm == "local"
                and all(isinstance(p.handle, DeviceTargets) for p in handle.parts)):
            one = [list(range(len(qs)))]
            for part in handle.parts:
                with self._cp.cuda.Device(part.device):
                    if part.backend._pack_batches(qs, part.handle, scoring) != one:
                        break
            else:
                return self._search_multi_packed(qs, handle, scoring, top_k)
        return self._search_threads(qs, handle, scoring, algorithm, ends, top_k, method)

    def _search_multi_packed(self, qs, handle, scoring, top_k):
        """Every device's packed batch queued from this thread: each device's first passes
        (profile upload, buffers, one launch per group) before any device's other passes,
        then each device's top-k cut and copy back, then the results device by device. The
        threads of :meth:`_search_threads` took turns under the GIL: their first launches
        came 3-4 ms into a 4-GPU search and each device's cut took 3.4-5 ms where one
        thread alone takes 1.2 (docs/gpu-notes.md, session 14)."""
        cp = self._cp
        jobs: list = []
        results = []
        seen: dict = {}         # the queries' host side, made for the first device only
        with self._packed_run(jobs):
            for part in handle.parts:
                with cp.cuda.Device(part.device):
                    job = part.backend._packed_start(qs, part.handle, scoring, top_k,
                                                     seen=seen)
                    if job is not None:
                        part.backend._packed_launch(job, 1)
                jobs.append(job)
            for part, job in zip(handle.parts, jobs):
                if job is not None:
                    with cp.cuda.Device(part.device):
                        part.backend._packed_launch(job)
                        part.backend._packed_cut(job, top_k)
            merged = self._merged_cut(handle, jobs, len(qs), top_k)
            if merged is not None:
                return merged
            for part, job in zip(handle.parts, jobs):
                with cp.cuda.Device(part.device):
                    if job is None:
                        got = part.backend.search_batches(qs, part.handle, scoring,
                                                          top_k=top_k)
                    else:
                        got = part.backend._packed_finish(job, top_k)
                for g in got:
                    g.ids = part.ids[g.ids]
                results.append(got)
        return [Candidates.concat([r[qi] for r in results]) for qi in range(len(qs))]

    def _merged_cut(self, handle, jobs, queries: int, top_k) -> list[Candidates] | None:
        """Every device's cut of its packed batch read back (each waits for its device),
        then all cut at once (:func:`~.topk.merged_cut`); None where a device has no cut
        or flagged saturation, or a row needs its whole scores (the caller then finishes
        device by device)."""
        if any(job is None or job.cut is None for job in jobs):
            return None
        cuts = []
        for part, job in zip(handle.parts, jobs):
            flags, hits, counts = job.cut.arrays()
            if flags.any():
                return None
            cuts.append((hits, counts, [qi for sub in job.groups for qi in sub], part.ids))
        return merged_cut(cuts, queries, top_k)

    def _multi_ends(self, qs, handle, scoring, keep: list[Candidates]):
        """End cells of a multi-device search's merged top-k (``keep``: each query's
        candidates at or above its k-th best over all devices, ties kept, as the hits are
        cut), each ended on the device that holds its target (``_batch_ends_flat``; a
        streamed part's targets read from the host, ``_ends_from_host_flat``), the devices
        side by side, each given its pairs as arrays. (Each device ending its own top-k
        ended up to devices x k pairs a query, the largest of them on every device.)"""
        owner, local = handle.owner, handle.local
        bounds, flat, scores, query = laid_flat(keep)
        device = owner[flat]
        qe = np.zeros(flat.size, np.int32)
        te = np.zeros(flat.size, np.int32)

        def run(k):     # device k's candidates, as arrays (query ascending)
            at = np.flatnonzero(device == k)
            if not at.size:
                return
            part = handle.parts[k]
            ends = (part.backend._batch_ends_flat if isinstance(part.handle, DeviceTargets)
                    else part.backend._ends_from_host_flat)
            with self._cp.cuda.Device(part.device):
                qe[at], te[at] = ends(qs, part.handle, scoring, query[at], local[flat[at]],
                                      scores[at])

        parallel([lambda k=k: run(k) for k in range(len(handle.parts))])
        return with_ends(keep, bounds, qe, te)

    def _search_threads(self, qs, handle, scoring, algorithm, ends, top_k, method):
        results = [None] * len(handle.parts)

        def work(k):
            part = handle.parts[k]
            with self._cp.cuda.Device(part.device):
                got = part.backend.search_batches(qs, part.handle, scoring,
                                                  algorithm=algorithm, ends=ends,
                                                  top_k=top_k, method=method)
            for g in got:
                g.ids = part.ids[g.ids]
            results[k] = got

        parallel([lambda k=k: work(k) for k in range(len(handle.parts))])
        return [Candidates.concat([r[qi] for r in results]) for qi in range(len(qs))]


def parallel(calls) -> None:
    """Run ``calls`` (one per device) on threads of their own and wait for all; each thread
    starts as soon as its call is taken from ``calls`` (an iterable: the caller may make
    the next call's input meanwhile). The first error is raised in the caller's thread
    once every started call has ended."""
    errors = []

    def run(call):
        try:
            call()
        except Exception as exc:  # noqa: BLE001  (re-raised in the caller's thread)
            errors.append(exc)

    threads = []
    try:
        for c in calls:
            threads.append(threading.Thread(target=run, args=(c,)))
            threads[-1].start()
    finally:
        for th in threads:
            th.join()
    if errors:
        raise errors[0]
