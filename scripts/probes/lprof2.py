"""locate's end cells on the GPU (issue 6, session 13): the ends launch (``win_s16`` with
per-step end tracking, 8 rows per lane) against scan.cu's one-row-per-thread
``window_antidiagonal`` and ``window_blocked`` on the same sub-windows of the windows tied
at the best score, kernel time by CUDA events; and where a "score" call's host time goes
(time stamps around the scores kernel's launch). Prints; writes nothing."""
# ruff: noqa: B023  (closures called inside their loop iteration)

import time

import numpy as np
from _lsetup import SCORING, L, N, call, queries, reference

from warpalign._backends.cuda import scan as gs
from warpalign._backends.cuda import windows as gw


def events(fn, repeat=10):
    import cupy as cp
    fn()
    ts = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(cp.cuda.get_elapsed_time(a, b) / 1e3)
    return min(ts)


def reduce_best(cells, owner, nown):
    out = np.zeros((nown, 3), np.int64)
    order = np.lexsort((cells[:, 1], cells[:, 2], -cells[:, 0], owner))
    ks = owner[order]
    first = order[np.r_[True, ks[1:] != ks[:-1]]]
    out[owner[first]] = cells[first]
    return out


def main():
    import cupy as cp
    ref = reference()
    mat = np.ascontiguousarray(SCORING.matrix, np.int32)
    a, go, ge = mat.shape[0], SCORING.gap_open, SCORING.gap_extend
    for m, q in queries(ref):
        print(f"== m={m}")
        span1 = L.span_bound(q, SCORING)
        width = L.default_window(span1, N, gw.wanted_windows(m))
        b = L.window_bounds(N, width, span1)
        dev = gw.resident([ref])
        cells, flagged, _ = gw.window_cells(dev, q, SCORING, b[:, 0], b[:, 1] - b[:, 0])
        s = int(cells[:, 0].max())
        tied = np.flatnonzero(cells[:, 0] == s)
        span = L.span_bound(q, SCORING, s)
        print(f"best {s}, tied windows {tied.tolist()}, flagged {len(flagged)}, span({s}) {span}")
        d_q, d_mat = cp.asarray(q), cp.asarray(mat)
        ad = gs._kernels()["window_antidiagonal"]
        bl = gs._kernels()["window_blocked"]
        for x in (8, 16, 32, 64):
            w = span + x
            parts = []
            for k in tied:
                lo, hi = (int(v) for v in b[k])
                sb = L.window_bounds(hi - lo, w, span) + lo
                parts.append(np.column_stack([np.full(len(sb), k), sb]))
            sub = np.concatenate(parts)
            lo, ln = sub[:, 1], (sub[:, 2] - sub[:, 1])
            dq = gw.DeviceQuery(q, SCORING, gw.ENDS_ROWS)
            t_ends = events(lambda: gw.window_ends(dev, q, SCORING, lo, ln, query=dq,
                                                   keep_layout=False))
            k_ends = min(gw.window_ends(dev, q, SCORING, lo, ln, query=dq,
                                        keep_layout=False)[2] for _ in range(5))
            c_ends = gw.window_ends(dev, q, SCORING, lo, ln, query=dq, keep_layout=False)[0]
            c_ends[:, 2] += lo
            want = reduce_best(c_ends, np.searchsorted(tied, sub[:, 0]), len(tied))
            d_lo, d_len = cp.asarray(lo.astype(np.int64)), cp.asarray(ln.astype(np.int32))
            nw = len(sub)
            out = cp.zeros((nw, 3), cp.int32)
            null = np.uint64(0)
            i32 = np.int32

            def run_ad():
                out.fill(0)
                th = gs._round32(m)
                ad((nw,), (th,), (dev.codes, d_lo, d_len, d_q, i32(0), i32(m), d_mat, i32(a),
                                  i32(go), i32(ge), null, null, np.int64(0), out),
                   shared_mem=(a * a + 4 * th) * 4)

            def run_bl():
                out.fill(0)
                th = gs._round32(-(-m // gs.BR))
                bl((nw,), (th,), (dev.codes, d_lo, d_len, d_q, i32(0), i32(m), d_mat, i32(a),
                                  i32(go), i32(ge), null, null, np.int64(0), out),
                   shared_mem=(a * a + 4 * th * gs.BC) * 4)
            res = {}
            for name, fn in (("antidiagonal", run_ad), ("blocked", run_bl)):
                t = events(fn)
                fn()
                c = out.get().astype(np.int64)
                c[:, 2] += lo
                got = reduce_best(c, np.searchsorted(tied, sub[:, 0]), len(tied))
                res[name] = (t, np.array_equal(got, want))
            print(f"sub=span+{x} ({nw} sub-windows): win_s16 ends launch {t_ends * 1e6:.0f} us "
                  f"(kernel {k_ends * 1e6:.0f}); antidiagonal {res['antidiagonal'][0] * 1e6:.0f} us "
                  f"same={res['antidiagonal'][1]}; blocked {res['blocked'][0] * 1e6:.0f} us "
                  f"same={res['blocked'][1]}; cell {want[0].tolist()}")
        # host time of a "score" call around the scores kernel
        stamps = {}
        orig_launch = gw._launch

        def launch(*args, **kw):
            stamps["enter"] = time.perf_counter()
            out = orig_launch(*args, **kw)
            stamps["leave"] = time.perf_counter()
            return out
        gw._launch = launch
        rows = []
        for _ in range(12):
            t0 = time.perf_counter()
            call(q, ref, "score")
            t1 = time.perf_counter()
            rows.append((t1 - t0, stamps["enter"] - t0, stamps["leave"] - stamps["enter"],
                         t1 - stamps["leave"]))
        gw._launch = orig_launch
        r = min(rows)
        print(f"score call {r[0] * 1e6:.0f} us: before _launch {r[1] * 1e6:.0f}, _launch "
              f"{r[2] * 1e6:.0f}, after {r[3] * 1e6:.0f}")
        dq = gw.DeviceQuery(q, SCORING)
        t_cells = []
        for _ in range(12):
            t0 = time.perf_counter()
            gw.window_cells(dev, q, SCORING, b[:, 0], b[:, 1] - b[:, 0], query=dq)
            t_cells.append(time.perf_counter() - t0)
        t_dq = []
        for _ in range(12):
            t0 = time.perf_counter()
            gw.DeviceQuery(q, SCORING)
            t_dq.append(time.perf_counter() - t0)
        print(f"window_cells with a prepared query {min(t_cells) * 1e6:.0f} us; "
              f"DeviceQuery {min(t_dq) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
