"""The host layout of a resident target set (``cuda/layout.py``: length buckets, id lists,
the packed kernel's target stream plan), pure NumPy, so CI tests it: every target in
exactly one bucket of each width, within its row's bound, and the target stream's
groups equal to those of the loop the backend ran before (``np.searchsorted``)."""

from __future__ import annotations

import numpy as np
import pytest

from warpalign._backends.cuda import config
from warpalign._backends.cuda.layout import ALIGN, make_layout, pair_groups

ROWS16, ROWS32 = config.rows(16), config.rows(32)


def _old_groups(lengths, group_min, guide, warps):
    """The backend's former loop (packed.py _build_pair_stream), the oracle."""
    order = np.argsort(-lengths, kind="stable")
    order = order[lengths[order] > 0]
    sstart = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(lengths[order], out=sstart[1:])
    total = int(sstart[-1])
    bounds, k = [0], 0
    while k < len(order):
        want = max(group_min, (total - int(sstart[k])) // (guide * warps))
        k2 = int(np.searchsorted(sstart, sstart[k] + want, "left"))
        k = min(max(k2, k + 1), len(order))
        bounds.append(k)
    return order, sstart, np.asarray(bounds)


def _lengths(seed, n):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.integers(1, 500, n), rng.integers(500, 9000, n // 20),
                           [0, 0, 1, 3071, 3072, 3073, 20000]])


@pytest.mark.parametrize("seed, n, group_min, guide, warps",
                         [(1, 2000, 64, 2, 16), (2, 5000, 2048, 2, 2112), (3, 300, 7, 3, 5),
                          (4, 0, 64, 2, 16)])
def test_target_stream_groups_equal_the_former_loop(seed, n, group_min, guide, warps):
    lengths = _lengths(seed, n)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    lay = make_layout(offsets, ROWS16, ROWS32, warps=warps, group_min=group_min,
                      guide=guide)
    order, sstart, bounds = _old_groups(lengths, group_min, guide, warps)
    assert lay.words[lay.pair_ids].tolist() == order.tolist()
    assert lay.longs[lay.sstart].tolist() == sstart.tolist()
    assert lay.words[lay.gfirst].tolist() == bounds.tolist()
    assert lay.longs[lay.gstart].tolist() == sstart[bounds].tolist()
    assert (lay.pair_count, lay.ngroups, lay.total) == (len(order), len(bounds) - 1,
                                                        int(sstart[-1]))
    assert pair_groups(sstart, group_min, guide * warps).tolist() == bounds.tolist()


@pytest.mark.parametrize("seed", [5, 6])
def test_buckets_hold_every_target_once_within_their_bounds(seed):
    lengths = _lengths(seed, 3000)
    rng = np.random.default_rng(seed)
    lengths = lengths[rng.permutation(len(lengths))]        # any order, not sorted
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    lay = make_layout(offsets, ROWS16, ROWS32, warps=64, group_min=256, guide=2)
    n = len(lengths)
    assert (lay.n, lay.residues) == (n, int(lengths.sum()))
    assert lay.longs[lay.offsets].tolist() == offsets.tolist()
    for buckets, paired in ((lay.buckets16, True), (lay.buckets32, False)):
        seen = []
        prev_multi = True
        for b in buckets:
            items = lay.words[b.items]
            ids = items[items >= 0]
            seen += ids.tolist()
            assert b.max_len == int(lengths[ids].max())
            if b.cfg.max_len is not None:
                assert lengths[ids].max() <= b.cfg.max_len
            assert b.count == (len(items) // 2 if paired else len(items)) or b.work
            assert prev_multi or not b.cfg.multi                # multi-pass rows first
            prev_multi = b.cfg.multi
            if b.work is not None:                              # chained: (pair, tile)
                work = lay.words[b.work].reshape(-1, 2)
                pairs = items.reshape(-1, 2)
                tile = b.cfg.group * b.cfg.regs
                for p in range(len(pairs)):
                    longest = max(lengths[i] for i in pairs[p] if i >= 0)
                    assert work[work[:, 0] == p, 1].tolist() == list(range(-(-longest // tile)))
        assert sorted(seen) == list(range(n))                   # each target once
    desc = np.argsort(lengths, kind="stable")[::-1]
    assert lay.words[lay.warp_ids].tolist() == desc.tolist()
    rp = lay.words[lay.rows_pairs]
    assert rp[:n].tolist() == desc.tolist() and (rp[n:] == -1).all()
    # every list starts aligned; the arrays cannot be changed (shared by searches)
    for sl in (lay.rows_pairs, lay.warp_ids, lay.pair_ids, lay.gfirst, lay.offsets,
               lay.sstart, lay.gstart, *(b.items for b in lay.buckets16 + lay.buckets32)):
        assert sl.start % ALIGN == 0
    for a in (lay.words, lay.longs, lay.lengths):
        assert not a.flags.writeable


@pytest.mark.parametrize("high", [40, 0xFFFF, 0x10000, 3_000_000])
def test_stable_order_is_numpys_stable_argsort(high):
    """The 16-bit radix orders equal NumPy's stable argsort of the lengths (ties in index
    order), ascending and descending, with and without lengths past 16 bits."""
    from warpalign._backends.cuda.layout import stable_order
    rng = np.random.default_rng(high)
    for n in (0, 1, 7, 5000):
        lengths = rng.integers(0, high + 1, n)
        if n:
            lengths[rng.integers(0, n, n // 3)] = high   # ties at the top bound
        np.testing.assert_array_equal(stable_order(lengths),
                                      np.argsort(lengths, kind="stable"))
        np.testing.assert_array_equal(stable_order(lengths, descending=True),
                                      np.argsort(-lengths, kind="stable"))


def test_resident_layouts_are_made_once_for_read_only_offsets(monkeypatch):
    # issue 21: a resident layout of read-only offsets (an opened database's memory map)
    # is made once per process, so the one the command line makes ahead (prefetch, while
    # CuPy loads) is the one a default CUDA backend's upload takes; other offsets are laid
    # out on every call
    from types import SimpleNamespace

    from warpalign._backends.cuda import layout
    from warpalign._backends.cuda.kernels import _rows
    from warpalign._backends.cuda.search import CudaBackend

    monkeypatch.setattr(layout, "_resident", type(layout._resident)(2))
    lengths = _lengths(7, 4000)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    frozen = offsets.copy()
    frozen.setflags(write=False)
    ahead = layout.prefetch(frozen, 132)
    backend = SimpleNamespace(_rows16=_rows(None, 16), _rows32=_rows(None, 32),
                              tuning=config.Tuning(), _warps=lambda: config.resident_warps(132))
    assert CudaBackend._layout(backend, frozen, resident=True) is ahead
    want = make_layout(offsets, ROWS16, ROWS32, warps=config.resident_warps(132),
                       group_min=config.Tuning().pair_group_min, guide=config.Tuning().pair_guide)
    for name in ("words", "longs", "lengths"):
        assert np.array_equal(getattr(ahead, name), getattr(want, name))
    assert (ahead.buckets16, ahead.buckets32, ahead.gfirst, ahead.ngroups) == (
        want.buckets16, want.buckets32, want.gfirst, want.ngroups)
    assert layout.prefetch(frozen, 114) is not ahead                  # another device
    assert CudaBackend._layout(backend, frozen) is not ahead          # streamed: not kept
    assert CudaBackend._layout(backend, offsets, resident=True) is not \
        CudaBackend._layout(backend, offsets, resident=True)          # writeable: not kept
