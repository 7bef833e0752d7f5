// Score and end of ONE long pair (issue 6): a chained stripe wavefront in one persistent launch.
//
// The query (rows) is cut into stripes of 32*R rows; a warp owns a stripe, lane t its rows
// t*R .. t*R+R-1 (H - gap_open and E per row in registers). R = 32 for passes with many
// stripes (the whole pair); R = 16 (8, 4) gives short passes (the staged traceback's strips)
// more warps, each with a shorter serial row chain per column. The target (columns) streams
// through: at step s lane t works on column j = s - t, receiving the row above (H - go and
// F at column j) from lane t-1 by one rotating shuffle. Lane 0 reads the row above the
// stripe from a single global row buffer (the "bus", n entries of (H - go, F)); lane 31's
// bottom row goes back into the same buffer one column at a time (lane 0 stores what the
// rotation hands it). Stripe k+1 follows stripe k through a progress counter per stripe
// (columns published, every PUBLISH columns), so one buffer of n entries suffices: column j
// of the bus is read by stripe k+1 before stripe k+1 overwrites it, and stripe k+2 reads it
// only after stripe k+1 published it. Stripes are taken by atomic ticket, so a warp only
// ever waits for a stripe that a running warp holds: no deadlock whatever the residency.
//
// Scores: int32 (DPX __viaddmax_s32 and friends). The substitution score plus gap_open,
// S(q_i, c) + go, sits in shared memory as a per-warp query profile, W bytes per row
// (W = 1 or 2), prof[c][v][lane] as int4: a lane loads its R scores for column letter c by
// NV = ceil(R*W/16) conflict-free LDS.128 and sign-extends each by one PRMT.
//
// Modes (MODE template argument):
//   0 local      relu, row 0 and column 0 are 0, best cell tracked (tie rule)
//   1 global     no relu, H(i,0) = -(first_open + (i-1) ge), row 0 from the bus
//   2 semiglobal as global (the host puts zeros in row 0)
//   3 anchored   as global, best cell tracked (the reverse pass that finds the start)
// The bus holds row 0 on entry (filled by the host) and row m (H - go, F) on exit.
//
// Ends (MODE 0, 3): per lane the best H, its column (first) and row (first in that column)
// by strict improvement, so a lane keeps the largest score, then the smallest column, then
// the smallest row: DESIGN.md's tie rule. Each stripe reduces its lanes and writes
// (score, row, column), 1-based DP coordinates, to res[3k..3k+2]; the host reduces stripes.
// Rows past m (the last stripe's padding) pass the row above through unchanged and never
// count as ends, so the bus ends up holding row m exactly.
//
// Strips (the staged traceback, long.py): ``corner`` is H(0, 0) and ``first_open`` sets
// column 0 (a value near -2^29 makes column 0 a wall); the host may fill the bus with any
// row 0. With ``saved`` and save_every > 0 the pass also keeps every save_every-th stripe
// boundary row (H - go, F) in ``saved``, one row of n entries each.

#define LONG_NEG (-(1 << 30))
#define LONG_FULL 0xffffffffu

#ifndef LONG_PUBLISH
#define LONG_PUBLISH 128          // columns between progress updates (multiple of 32)
#endif

// int4 words of one lane's slice of a profile row: R rows of W bytes, padded to 16 bytes
template <int W, int R> struct LongProf { static constexpr int NV = (R * W + 15) / 16; };

template <int W, int R>
__device__ __forceinline__ int long_score(const int4 (&pv)[LongProf<W, R>::NV], int r) {
    // row r of the lane's R rows lives in byte r*W of its NV int4 words.
    const int byte = r * W;
    const int word = byte >> 2;
    const int4 v = pv[word >> 2];
    const int x = (word & 3) == 0 ? v.x : (word & 3) == 1 ? v.y : (word & 3) == 2 ? v.z : v.w;
    const int b = byte & 3;
    // PRMT with the sign-replicating selector nibbles (bit 3): one instruction. (__byte_perm
    // masks the selector to 3 bits per nibble, so it cannot sign-extend; hence the asm.)
    const unsigned sel = W == 1 ? (b | ((8 | b) << 4) | ((8 | b) << 8) | ((8 | b) << 12))
                                : (b | ((b + 1) << 4) | ((8 | (b + 1)) << 8) | ((8 | (b + 1)) << 12));
    int out;
    asm("prmt.b32 %0, %1, 0, %2;" : "=r"(out) : "r"(x), "r"(sel));
    return out;
}

template <int MODE>
__device__ __forceinline__ int long_col0(long long i, int first_open, int ge, int corner) {
    // H(i, 0): the value of column 0 in DP row i (1-based rows; row 0 is ``corner``, 0 for
    // a whole matrix, another value for a strip whose origin lies elsewhere).
    if (MODE == 0) return 0;
    if (i <= 0) return corner;
    return -(first_open + (int)(i - 1) * ge);
}

#ifndef LONG_TIMEOUT_NS
#define LONG_TIMEOUT_NS 10000000000ull   // 10 s without the rows waited for: give up
#endif

__device__ __forceinline__ int long_wait(const int* progress, int known, int need, int* failed) {
    // lane 0 only: spin until progress >= need; returns the progress seen. Bounded: after
    // LONG_TIMEOUT_NS, or once another warp gave up, *failed is set and the stripe runs on
    // (its values are then wrong, and the host raises instead of returning them).
    unsigned long long t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (known < need) {
        known = *(volatile const int*)progress;
        if (known >= need) break;
        __nanosleep(64);
        if (*(volatile int*)failed) return need;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - t0 > LONG_TIMEOUT_NS) {
            atomicExch(failed, 1);
            return need;
        }
    }
    __threadfence();
    return known;
}

template <int MODE, int W, int R, bool PARTIAL>
__device__ __forceinline__ void long_stripe(
        const unsigned char* __restrict__ t, int n, const int4* __restrict__ prof, int lane, int nvalid,
        long long row0, int go, int ge, int first_open, int corner, int2* __restrict__ bus,
        int2* __restrict__ keep, const int* __restrict__ prev_progress, int* __restrict__ progress,
        int* failed, int& best, int& bi, int& bj) {
    constexpr int NV = LongProf<W, R>::NV;
    constexpr bool RELU = MODE == 0;
    constexpr bool TRACK = MODE == 0 || MODE == 3;
    int hg[R], e[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        hg[r] = long_col0<MODE>(row0 + r + 1, first_open, ge, corner) - go;
        e[r] = LONG_NEG;
    }
    int updiag = long_col0<MODE>(row0, first_open, ge, corner) - go;   // H(row0, j-1) - go
    const int nge = -ge;
    int known = prev_progress ? 0 : n;
    // chunk 0 of the bus and the target
    int need = min(32, n);
    if (lane == 0 && known < need) known = long_wait(prev_progress, known, need, failed);
    __syncwarp();
    int2 cur = lane < n ? __ldcg(bus + lane) : make_int2(0, 0);
    int curc = lane < n ? t[lane] : 0;
    int up_h = __shfl_sync(LONG_FULL, cur.x, 0);
    int up_f = __shfl_sync(LONG_FULL, cur.y, 0);
    int ch = __shfl_sync(LONG_FULL, curc, 0);
    const int steps = n + 31;
    for (int base = 0; base < steps; base += 32) {
        // prefetch the next chunk of the bus (columns base+32 .. base+63)
        const int nb = base + 32;
        int2 nxt = make_int2(0, 0);
        int nxtc = 0;
        if (nb < n) {
            need = min(nb + 32, n);
            if (lane == 0 && known < need) known = long_wait(prev_progress, known, need, failed);
            __syncwarp();
            if (nb + lane < n) {
                nxt = __ldcg(bus + nb + lane);
                nxtc = t[nb + lane];
            }
        }
        const int send = min(32, steps - base);
#pragma unroll 1
        for (int k = 0; k < send; ++k) {
            const int s = base + k;
            const int j = s - lane;
            int out_h = up_h, out_f = up_f;
            int cmax = LONG_NEG;
            bool better = false;
            if ((unsigned)j < (unsigned)n) {
                int4 pv[NV];
#pragma unroll
                for (int v = 0; v < NV; ++v) pv[v] = prof[(ch * NV + v) * 32 + lane];
                int d = updiag;
                updiag = up_h;
                int hu = up_h, fu = up_f;
                int hprev = LONG_NEG;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const int sc = long_score<W, R>(pv, r);
                    const int en = __viaddmax_s32(e[r], nge, hg[r]);
                    const int fn = __viaddmax_s32(fu, nge, hu);
                    int h = RELU ? __viaddmax_s32_relu(d, sc, en) : __viaddmax_s32(d, sc, en);
                    h = max(h, fn);
                    d = hg[r];
                    if (PARTIAL && r >= nvalid) {
                        hg[r] = hu;              // padding row: pass the row above through
                        e[r] = en;
                        continue;
                    }
                    const int hgn = h - go;
                    hg[r] = hgn;
                    e[r] = en;
                    hu = hgn;
                    fu = fn;
                    if (TRACK) {
                        if (r & 1) cmax = __vimax3_s32(cmax, hprev, h);
                        else hprev = h;
                        if (r == R - 1 && !(r & 1)) cmax = max(cmax, h);
                    }
                }
                if (TRACK) {
                    if (PARTIAL) cmax = max(cmax, hprev);   // a skipped odd row may drop hprev
                    better = cmax > best;
                }
                out_h = hu;
                out_f = fu;
            }
            // a new best column: rare after the first columns, so a warp-uniform branch
            if (TRACK && __any_sync(LONG_FULL, better)) {
                if (better) {
                    int rr = R;
#pragma unroll
                    for (int r = R - 1; r >= 0; --r)
                        if (hg[r] == cmax - go && (!PARTIAL || r < nvalid)) rr = r;
                    best = cmax;
                    bi = (int)(row0 + rr + 1);
                    bj = j + 1;
                }
                better = false;
            }
            // rotate: lane t gets lane t-1's bottom row; lane 0 gets lane 31's (column s-31)
            const int src = (lane + 31) & 31;
            const int rh = __shfl_sync(LONG_FULL, out_h, src);
            const int rf = __shfl_sync(LONG_FULL, out_f, src);
            const int rc = __shfl_sync(LONG_FULL, ch, src);
            const int done = s - 31;          // column finished by lane 31 in this step
            if (lane == 0 && done >= 0 && done < n) {
                __stcg(bus + done, make_int2(rh, rf));
                if (keep) __stcg(keep + done, make_int2(rh, rf));
                if (((done + 1) % LONG_PUBLISH) == 0 || done == n - 1) {
                    __threadfence();
                    *(volatile int*)progress = done + 1;
                }
            }
            const int nx = (s + 1) & 31;        // lane 0's next column, inside cur or nxt
            const bool in_next = ((s + 1) & ~31) != base;
            const int bh = __shfl_sync(LONG_FULL, in_next ? nxt.x : cur.x, nx);
            const int bf = __shfl_sync(LONG_FULL, in_next ? nxt.y : cur.y, nx);
            const int bc = __shfl_sync(LONG_FULL, in_next ? nxtc : curc, nx);
            up_h = lane == 0 ? bh : rh;
            up_f = lane == 0 ? bf : rf;
            ch = lane == 0 ? bc : rc;
        }
        cur = nxt;
        curc = nxtc;
    }
}

template <int MODE, int W, int R>
__global__ void __launch_bounds__(128) long_pass(
        const unsigned char* __restrict__ q, long long m, const unsigned char* __restrict__ t, int n,
        const int* __restrict__ smat, int K, int go, int ge, int first_open, int corner,
        int2* __restrict__ bus, int* __restrict__ progress, int* __restrict__ ticket,
        int* __restrict__ res, int nstripes, int2* __restrict__ saved, int save_every) {
    constexpr int NV = LongProf<W, R>::NV;
    extern __shared__ int4 long_smem[];
    const int lane = threadIdx.x & 31;
    int4* prof = long_smem + (threadIdx.x >> 5) * K * NV * 32;
    for (;;) {
        int k = 0;
        if (lane == 0) k = atomicAdd(ticket, 1);
        k = __shfl_sync(LONG_FULL, k, 0);
        if (k >= nstripes) break;
        const long long row0 = (long long)k * 32 * R + lane * R;
        const long long left = m - row0;
        const int nvalid = left <= 0 ? 0 : left >= R ? R : (int)left;
        // this lane's slice of the query profile: S(q_i, c) + go, one byte per row
        int qc[R];
#pragma unroll
        for (int r = 0; r < R; ++r) qc[r] = r < nvalid ? q[row0 + r] : -1;
        __syncwarp();
        for (int c = 0; c < K; ++c) {
            unsigned words[4 * NV];
#pragma unroll
            for (int w = 0; w < 4 * NV; ++w) words[w] = 0;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int v = qc[r] >= 0 ? smat[qc[r] * K + c] : 0;
                words[(r * W) >> 2] |= ((unsigned)v & (W == 1 ? 0xffu : 0xffffu)) << (8 * ((r * W) & 3));
            }
#pragma unroll
            for (int v = 0; v < NV; ++v)
                prof[(c * NV + v) * 32 + lane] = make_int4((int)words[4 * v], (int)words[4 * v + 1],
                                                             (int)words[4 * v + 2], (int)words[4 * v + 3]);
        }
        __syncwarp();
        int best = 0, bi = 0, bj = 0;
        const int* prev = k > 0 ? progress + (k - 1) : nullptr;
        // special rows: the bottom row of every save_every-th stripe (DP row (k+1)*32*R) is
        // kept in saved[(k+1)/save_every - 1] (the staged traceback's forward rows)
        int2* keep = save_every > 0 && (k + 1) % save_every == 0 && k + 1 < nstripes
                   ? saved + (long long)((k + 1) / save_every - 1) * n : nullptr;
        if (k == nstripes - 1 && m % (32 * R) != 0)
            long_stripe<MODE, W, R, true>(t, n, prof, lane, nvalid, row0, go, ge, first_open, corner, bus,
                                    keep, prev, progress + k, progress + nstripes, best, bi, bj);
        else
            long_stripe<MODE, W, R, false>(t, n, prof, lane, nvalid, row0, go, ge, first_open, corner, bus,
                                     keep, prev, progress + k, progress + nstripes, best, bi, bj);
        // reduce the lanes by the tie rule: larger score, then smaller column, then smaller row
#pragma unroll
        for (int off = 16; off > 0; off >>= 1) {
            const int ob = __shfl_xor_sync(LONG_FULL, best, off);
            const int oi = __shfl_xor_sync(LONG_FULL, bi, off);
            const int oj = __shfl_xor_sync(LONG_FULL, bj, off);
            if (ob > best || (ob == best && (oj < bj || (oj == bj && oi < bi)))) {
                best = ob; bi = oi; bj = oj;
            }
        }
        if (lane == 0) {
            res[3 * k] = best;
            res[3 * k + 1] = bi;
            res[3 * k + 2] = bj;
        }
        __syncwarp();
    }
}
