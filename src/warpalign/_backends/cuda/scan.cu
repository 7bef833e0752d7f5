// locate's row-scan and anti-diagonal methods on the GPU (issue 6; launchers in scan.py).
//
// The CPU kernels in _backends/cpu/scan.py are the specification; every kernel here
// computes the same Gotoh recurrences with every stored E, F, H clamped at 0 (exact for
// local alignment, see that module) and reports the same best cell by DESIGN.md's tie
// rule (largest score, then smallest reference end j, then smallest query end i).
// Rows i = query positions (1..m), columns j = reference positions (1..n); gop >= gex.
//
// Row scan ("scan", paper 002; "scan1", paper 004): rows of the whole record, tiles of
// TILE columns, one block per tile:
//   phase 1     F, H~ (no left dependency), per tile its maximum (first column) and G,
//               the tile's contribution to E at the next tile's first column;
//   row_reduce  one block: rowmax and its first column, the next row's word length
//               (paper 002 Eqs. 9/10 with hysteresis T), and when gex == 0 the carries;
//   phase 2     E by a max-scan inside the tile plus a carry from earlier tiles, found by
//               looking back only over the tiles within p_i = (rowmax - gop - 1)/gex + 1
//               columns (the adaptive form of paper 002's Eq. 11 window); H = max(H~, E).
// "scan" (row_scan_fused) runs phase 2 of row i and phase 1 of row i + 1 in one launch:
// H stays in shared memory, its value left of the tile comes from the carries too; F and
// H~ are int16 while narrow, int32 while wide (the row's word length is read from
// modes[i] on the device, so no host round trip per row). Between two narrow rows phase 1
// runs two columns per 32-bit word in 16-bit DPX lanes (phase1_pairs); the E scan stays
// 32-bit (its running terms H~ - gop + k*gex grow past int16 along a tile). "scan1" (row_phase1,
// row_phase2_scan1) is int32 with paper 004's Hillis-Steele rounds in shared memory as
// the in-tile scan.
//
// Anti-diagonal ("antidiagonal") and blocked ("blocked"): one block per reference window
// (windows cut by locate's exact span bound on the host), a strip of query rows per
// launch; the strip's bottom row (H, F) passes to the next strip through global memory.
//   antidiagonal  one thread per query row, one cell per thread per anti-diagonal step;
//   blocked       one thread per BR rows, a BR x BC tile of cells per step (registers),
//                 tiles along an anti-diagonal of tiles in parallel.

typedef unsigned char u8;   // reference and query codes

#define SCAN_THREADS 256
#ifndef SCAN_VEC           // columns per thread of the row scans (scan.py passes it)
#define SCAN_VEC 8
#endif
#define TILE (SCAN_THREADS * SCAN_VEC)
#define SWITCH_BACK 10
#define MAX_ALPHABET 64

// ------------------------------------------------------------------------------- helpers

__device__ __forceinline__ bool better(int h, int i, int j, int bh, int bi, int bj) {
    return h > bh || (h == bh && h > 0 && (j < bj || (j == bj && i < bi)));
}

// Block-wide best (h, i, j) by the tie key; the result is valid in thread 0.
__device__ void block_best(int& h, int& i, int& j) {
    __shared__ int sh[32], si[32], sj[32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int nwarps = (blockDim.x + 31) >> 5;
    for (int o = 16; o > 0; o >>= 1) {
        int h2 = __shfl_down_sync(0xffffffffu, h, o);
        int i2 = __shfl_down_sync(0xffffffffu, i, o);
        int j2 = __shfl_down_sync(0xffffffffu, j, o);
        if (lane + o < 32 && better(h2, i2, j2, h, i, j)) { h = h2; i = i2; j = j2; }
    }
    __syncthreads();
    if (lane == 0) { sh[warp] = h; si[warp] = i; sj[warp] = j; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < nwarps; ++w)
            if (better(sh[w], si[w], sj[w], h, i, j)) { h = sh[w]; i = si[w]; j = sj[w]; }
    }
}

__device__ __forceinline__ void load_matrix(int* smat, const int* mat, int a) {
    for (int k = threadIdx.x; k < a * a; k += blockDim.x) smat[k] = mat[k];
}

// ------------------------------------------------------------------------ row scan

// Phase 1 of row i for one tile: F, H~ in the row's word length TC (previous row in TP).
template <typename TP, typename TC>
__device__ void phase1_tile(const u8* __restrict__ t, int n, const int* srow,
                            const TP* __restrict__ Hp, const TP* Fp, TC* Fc,
                            TC* __restrict__ Htc, int go, int ge,
                            int* tmax, int* tj, int* tg) {
    const int j0 = 1 + blockIdx.x * TILE;
    const int j1 = min(j0 + TILE, n + 1);        // exclusive
    int best = 0, bj = 0;
    long long g = 0;                             // contribution to E[j1]
    int hu[SCAN_VEC], hd[SCAN_VEC], fo[SCAN_VEC], sc[SCAN_VEC];
    #pragma unroll
    for (int v = 0; v < SCAN_VEC; ++v) {         // all loads first (in flight together)
        const int j = j0 + v * SCAN_THREADS + threadIdx.x;
        const bool ok = j < j1;
        hu[v] = ok ? (int)Hp[j] : 0;
        hd[v] = ok ? (int)Hp[j - 1] : 0;
        fo[v] = ok ? (int)Fp[j] : 0;
        sc[v] = ok ? (int)t[j - 1] : 0;
    }
    #pragma unroll
    for (int v = 0; v < SCAN_VEC; ++v) {
        const int j = j0 + v * SCAN_THREADS + threadIdx.x;
        if (j < j1) {
            const int f = max(max(fo[v] - ge, hu[v] - go), 0);
            const int h = max(max(hd[v] + srow[sc[v]], f), 0);
            Fc[j] = (TC)f;
            Htc[j] = (TC)h;
            if (h > best || (h == best && h > 0 && j < bj)) { best = h; bj = j; }
            g = max(g, (long long)h - go - (long long)(j1 - 1 - j) * ge);
        }
    }
    __shared__ int sb[SCAN_THREADS / 32], sj[SCAN_THREADS / 32];
    __shared__ long long sg[SCAN_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        const int b2 = __shfl_down_sync(0xffffffffu, best, o);
        const int j2 = __shfl_down_sync(0xffffffffu, bj, o);
        const long long g2 = __shfl_down_sync(0xffffffffu, g, o);
        if (b2 > best || (b2 == best && b2 > 0 && j2 < bj)) { best = b2; bj = j2; }
        g = max(g, g2);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sb[warp] = best; sj[warp] = bj; sg[warp] = g; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < SCAN_THREADS / 32; ++w) {
            if (sb[w] > best || (sb[w] == best && sb[w] > 0 && sj[w] < bj)) { best = sb[w]; bj = sj[w]; }
            g = max(g, sg[w]);
        }
        tmax[blockIdx.x] = best;
        tj[blockIdx.x] = bj;
        tg[blockIdx.x] = (int)min(g, (long long)0x7fffffff);   // g <= H~ <= int range
    }
}

// Row i's phase 1. modes[i] (0: int16, 1: int32) is this row's word length, modes[i-1]
// the previous row's, whose buffers hold H and F of row i-1.
__global__ void __launch_bounds__(SCAN_THREADS)
row_phase1(const u8* __restrict__ t, int n, const u8* __restrict__ q, int i,
           const int* __restrict__ mat, int a, int go, int ge, const int* __restrict__ modes,
           short* H16, short* F16, short* Ht16, int* H32, int* F32, int* Ht32,
           int* tmax, int* tj, int* tg) {
    __shared__ int srow[MAX_ALPHABET];
    const int qc = q[i - 1];
    for (int k = threadIdx.x; k < a; k += blockDim.x) srow[k] = mat[qc * a + k];
    __syncthreads();
    const int mp = modes[i - 1], mc = modes[i];
    if (mp == 0 && mc == 0)
        phase1_tile<short, short>(t, n, srow, H16, F16, F16, Ht16, go, ge, tmax, tj, tg);
    else if (mp == 1 && mc == 1)
        phase1_tile<int, int>(t, n, srow, H32, F32, F32, Ht32, go, ge, tmax, tj, tg);
    else if (mp == 0)
        phase1_tile<short, int>(t, n, srow, H16, F16, F32, Ht32, go, ge, tmax, tj, tg);
    else
        phase1_tile<int, short>(t, n, srow, H32, F32, F16, Ht16, go, ge, tmax, tj, tg);
}

// One block: rowmax of row i and its first column, the word length of row i + 1
// (paper 002 Eq. 9: wide when rowmax + smax > limit; Eq. 10: back to narrow at
// <= limit - T), and when gex == 0 the carry into every tile (prefix max of G).
__global__ void __launch_bounds__(1024)
row_reduce(int ntiles, int i, int smax, int limit, int ge, const int* __restrict__ tmax,
           const int* __restrict__ tj, const int* __restrict__ tg, int* rowmax, int* rowj,
           int* modes, int* carry) {
    int best = 0, bj = 0;
    for (int k = threadIdx.x; k < ntiles; k += blockDim.x) {
        const int b = tmax[k], j = tj[k];
        if (b > best || (b == best && b > 0 && j < bj)) { best = b; bj = j; }
    }
    int dummy = 0;
    block_best(best, dummy, bj);
    if (threadIdx.x == 0) {
        rowmax[i] = best;
        rowj[i] = bj;
        const int need = best + smax;            // bound on every value of row i + 1
        const int mode = modes[i];
        modes[i + 1] = (mode == 0) ? (need > limit ? 1 : 0)
                                   : (need <= limit - SWITCH_BACK ? 0 : 1);
    }
    if (ge == 0 && threadIdx.x == 0) {           // free extension: E carries without decay
        int run = 0;
        for (int k = 0; k < ntiles; ++k) { carry[k] = run; run = max(run, tg[k]); }
    }
}

// Carry into the tile: E at its first column from all earlier tiles (each tile's G is its
// contribution to the next tile's first column); only the tiles within reach can add.
__device__ long long tile_carry(const int* __restrict__ tg, const int* __restrict__ carry,
                                int ge, int reach) {
    __shared__ long long sc;
    const int t = blockIdx.x;
    if (ge == 0) return carry[t];
    if (threadIdx.x < 32) {
        const int back = min(t, reach / TILE + 1);
        long long c = 0;
        for (int k = threadIdx.x; k < back; k += 32) {
            const int src = t - 1 - k;           // decay over k whole tiles
            c = max(c, (long long)tg[src] - (long long)k * TILE * ge);
        }
        for (int o = 16; o > 0; o >>= 1) c = max(c, __shfl_down_sync(0xffffffffu, c, o));
        if (threadIdx.x == 0) sc = c;
    }
    __syncthreads();
    return sc;
}

// E at the tile's first column (c0, the carry) and at the column before it (c1: H there
// is max(H~, E), the left neighbour of the next row's first diagonal), from the earlier
// tiles of the same row: G[k] is tile k's contribution to the next tile's first column,
// G2[k] that of its columns but the last to its own last column.
__device__ void tile_carries(const int* __restrict__ tg, const int* __restrict__ tg2,
                             const int* __restrict__ carry, int ge, int reach,
                             long long& c0, long long& c1) {
    __shared__ long long s0, s1;
    const int t = blockIdx.x;
    if (threadIdx.x < 32) {
        long long a = 0, b = 0;
        if (ge == 0) {                          // no decay: prefix maxima from row_reduce
            if (threadIdx.x == 0 && t > 0) {
                a = carry[t];
                b = max((long long)carry[t - 1], (long long)tg2[t - 1]);
            }
        } else {
            const int back = min(t, reach / TILE + 2);
            for (int k = threadIdx.x; k < back; k += 32) {
                const int src = t - 1 - k;      // k whole tiles between src and this tile
                a = max(a, (long long)tg[src] - (long long)k * TILE * ge);
                b = max(b, k == 0 ? (long long)tg2[src]
                                  : (long long)tg[src] - ((long long)k * TILE - 1) * ge);
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            a = max(a, __shfl_down_sync(0xffffffffu, a, o));
            b = max(b, __shfl_down_sync(0xffffffffu, b, o));
        }
        if (threadIdx.x == 0) { s0 = a; s1 = b; }
    }
    __syncthreads();
    c0 = s0;
    c1 = s1;
}

__device__ __forceinline__ unsigned pack2(int v) { return (unsigned)(v & 0xFFFF) * 0x10001u; }

static_assert(SCAN_VEC % 2 == 0, "phase1_pairs covers a tile in column pairs");

// Phase 1 of the next row with both rows narrow, in 16-bit DPX lanes (paper 002's packed
// narrow scores; Hopper's s16x2 instructions in place of its 8-bit video ones): columns
// (j, j + 1), j = j0 + k, k even, in one 32-bit word. scan.py passes the int16 buffers one
// element in, so these words are 4-byte aligned (j0 is odd) and the word at the odd last
// column stays inside the buffer. In narrow rows every value fits int16 (Eq. 9), go, ge
// and -smin are at most 32767 (checked on the host), so no lane wraps. At the odd last
// column the high lane computes from padding and is not stored.
// Tile aggregates as fused_tile's scalar loop: best and its first column, G and G2.
__device__ __forceinline__ void phase1_pairs(const u8* __restrict__ t, int j0, int j1,
                                             const int* srow, int go, int ge, const short* FC,
                                             short* FN, short* __restrict__ HtN, const int* sH,
                                             int& best, int& bj, long long& g, long long& g2) {
    const unsigned ngo = pack2(-go), nge = pack2(-ge);
    int gi = 0, gi2 = 0;        // |h - go - TILE * ge| < 2^31 for ge <= 32767
    const int lane = threadIdx.x & 31;
    constexpr int P = SCAN_VEC / 2;
    unsigned fo[P], cc[P];   // all global loads first, in flight together (FN aliases FC)
    #pragma unroll
    for (int v = 0; v < P; ++v) {
        const int j = j0 + 2 * (v * SCAN_THREADS + threadIdx.x);   // strided: coalesced
        fo[v] = cc[v] = 0;
        if (j + 1 < j1) {    // codes of columns j, j + 1: one 2-byte load (j - 1 is even)
            fo[v] = *reinterpret_cast<const unsigned*>(FC + j);
            cc[v] = *reinterpret_cast<const unsigned short*>(t + j - 1);
        } else if (j < j1) {
            fo[v] = (unsigned short)FC[j];
            cc[v] = t[j - 1];
        }
    }
    #pragma unroll
    for (int v = 0; v < P; ++v) {
        const int k = 2 * (v * SCAN_THREADS + threadIdx.x);
        const int j = j0 + k;
        // H of row i at columns j - 1, j (one 8-byte load; k <= TILE - 2 for every
        // thread, so all lanes load and shuffle) and j + 1 (the next lane's first)
        const int2 hh = *reinterpret_cast<const int2*>(sH + k);
        int up = __shfl_down_sync(0xffffffffu, hh.x, 1);
        if (lane == 31) up = sH[k + 2];
        if (j >= j1) continue;
        const bool two = j + 1 < j1;
        const unsigned s = __byte_perm(srow[cc[v] & 0xFF], srow[cc[v] >> 8], 0x5410);
        const unsigned hd = __byte_perm(hh.x, hh.y, 0x5410);   // H[i][j-1], H[i][j]
        const unsigned hu = __byte_perm(hh.y, up, 0x5410);     // H[i][j], H[i][j+1]
        const unsigned f = __viaddmax_s16x2_relu(fo[v], nge, __vadd2(hu, ngo));
        const unsigned h = __viaddmax_s16x2_relu(hd, s, f);
        if (two) {
            *reinterpret_cast<unsigned*>(FN + j) = f;
            *reinterpret_cast<unsigned*>(HtN + j) = h;
        } else {
            FN[j] = (short)(f & 0xFFFFu);
            HtN[j] = (short)(h & 0xFFFFu);
        }
        const int h0 = (short)(h & 0xFFFFu), h1 = (short)(h >> 16);
        if (h0 > best || (h0 == best && h0 > 0 && j < bj)) { best = h0; bj = j; }
        gi = max(gi, h0 - go - (j1 - 1 - j) * ge);
        if (two) {
            gi2 = max(gi2, h0 - go - (j1 - 2 - j) * ge);
            if (h1 > best || (h1 == best && h1 > 0 && j + 1 < bj)) { best = h1; bj = j + 1; }
            gi = max(gi, h1 - go - (j1 - 2 - j) * ge);
            if (j + 1 < j1 - 1) gi2 = max(gi2, h1 - go - (j1 - 3 - j) * ge);
        }
    }
    g = max(g, (long long)gi);
    g2 = max(g2, (long long)gi2);
}

// One tile of "scan": phase 2 of row i (H into shared memory, never to global memory),
// then phase 1 of row i + 1 from it (when `next`).
// Phase 2: E[j] = max(0, M_j - j'*gex), M_j = max(carry, max_{k'<j'} y_k'),
// y_k' = H~[j0+k'] - gop + (k'+1)*gex (j' = j - j0), an exclusive prefix max computed
// per thread (SCAN_VEC consecutive columns), per warp (shuffles) and per tile.
template <typename TC, typename TN>
__device__ void fused_tile(const u8* __restrict__ t, int n, int next, const int* srow, int go,
                           int ge, int skip, int packed, long long c0, long long c1,
                           const TC* __restrict__ HtC, const TC* FC, TN* FN,
                           TN* __restrict__ HtN, int* sH, int* tmax, int* tj, int* tg,
                           int* tg2) {
    const int j0 = 1 + blockIdx.x * TILE;
    const int j1 = min(j0 + TILE, n + 1);
    if (threadIdx.x == 0) {                      // H of row i at column j0 - 1
        int hp = j0 > 1 ? (int)HtC[j0 - 1] : 0;
        if (!skip && j0 > 1) hp = (int)max((long long)hp, c1);
        sH[0] = hp;
    }
    const int base = j0 + threadIdx.x * SCAN_VEC;   // consecutive columns per thread
    int ht[SCAN_VEC];
    #pragma unroll
    for (int v = 0; v < SCAN_VEC; ++v) ht[v] = (base + v < j1) ? (int)HtC[base + v] : 0;
    if (skip) {                                      // rowmax <= gop: every E is 0
        #pragma unroll
        for (int v = 0; v < SCAN_VEC; ++v) sH[1 + threadIdx.x * SCAN_VEC + v] = ht[v];
    } else {
        const long long NEG = -(1LL << 60);
        long long loc = NEG;                         // this thread's inclusive max of y
        #pragma unroll
        for (int v = 0; v < SCAN_VEC; ++v) {
            const int k = threadIdx.x * SCAN_VEC + v;
            if (base + v < j1) loc = max(loc, (long long)ht[v] - go + (long long)(k + 1) * ge);
        }
        const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
        long long inc = loc;
        for (int o = 1; o < 32; o <<= 1) {
            const long long x = __shfl_up_sync(0xffffffffu, inc, o);
            if (lane >= o) inc = max(inc, x);
        }
        __shared__ long long wsum[SCAN_THREADS / 32];
        if (lane == 31) wsum[warp] = inc;
        __syncthreads();
        long long before = c0;                       // M before this thread's columns
        for (int w = 0; w < warp; ++w) before = max(before, wsum[w]);
        const long long prev = __shfl_up_sync(0xffffffffu, inc, 1);
        if (lane > 0) before = max(before, prev);
        #pragma unroll
        for (int v = 0; v < SCAN_VEC; ++v) {
            const int k = threadIdx.x * SCAN_VEC + v;
            const long long e = max(before - (long long)k * ge, 0LL);
            sH[1 + k] = (int)max((long long)ht[v], e);
            before = max(before, (long long)ht[v] - go + (long long)(k + 1) * ge);
        }
    }
    __syncthreads();
    if (!next) return;
    // phase 1 of row i + 1 (columns strided by SCAN_THREADS: coalesced)
    int best = 0, bj = 0;
    long long g = 0, g2 = 0;                     // contributions to E[j1] and E[j1 - 1]
    bool pairs = false;
    if constexpr (sizeof(TC) == 2 && sizeof(TN) == 2) {
        if (packed) {
            phase1_pairs(t, j0, j1, srow, go, ge, FC, FN, HtN, sH, best, bj, g, g2);
            pairs = true;
        }
    }
    if (!pairs) {
        int fo[SCAN_VEC], sc[SCAN_VEC];
        #pragma unroll
        for (int v = 0; v < SCAN_VEC; ++v) {
            const int j = j0 + v * SCAN_THREADS + threadIdx.x;
            const bool ok = j < j1;
            fo[v] = ok ? (int)FC[j] : 0;
            sc[v] = ok ? (int)t[j - 1] : 0;
        }
        #pragma unroll
        for (int v = 0; v < SCAN_VEC; ++v) {
            const int j = j0 + v * SCAN_THREADS + threadIdx.x;
            if (j < j1) {
                const int hu = sH[j - j0 + 1], hd = sH[j - j0];
                const int f = max(max(fo[v] - ge, hu - go), 0);
                const int h = max(max(hd + srow[sc[v]], f), 0);
                FN[j] = (TN)f;
                HtN[j] = (TN)h;
                if (h > best || (h == best && h > 0 && j < bj)) { best = h; bj = j; }
                g = max(g, (long long)h - go - (long long)(j1 - 1 - j) * ge);
                if (j < j1 - 1) g2 = max(g2, (long long)h - go - (long long)(j1 - 2 - j) * ge);
            }
        }
    }
    __shared__ int sb[SCAN_THREADS / 32], sj[SCAN_THREADS / 32];
    __shared__ long long sg[SCAN_THREADS / 32], sg2[SCAN_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) {
        const int b2 = __shfl_down_sync(0xffffffffu, best, o);
        const int j2 = __shfl_down_sync(0xffffffffu, bj, o);
        if (b2 > best || (b2 == best && b2 > 0 && j2 < bj)) { best = b2; bj = j2; }
        g = max(g, __shfl_down_sync(0xffffffffu, g, o));
        g2 = max(g2, __shfl_down_sync(0xffffffffu, g2, o));
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { sb[warp] = best; sj[warp] = bj; sg[warp] = g; sg2[warp] = g2; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < SCAN_THREADS / 32; ++w) {
            if (sb[w] > best || (sb[w] == best && sb[w] > 0 && sj[w] < bj)) { best = sb[w]; bj = sj[w]; }
            g = max(g, sg[w]);
            g2 = max(g2, sg2[w]);
        }
        tmax[blockIdx.x] = best;
        tj[blockIdx.x] = bj;
        tg[blockIdx.x] = (int)g;                 // 0 <= g <= H~
        tg2[blockIdx.x] = (int)g2;
    }
}

// "scan": phase 2 of row i and phase 1 of row i + 1 in one launch per tile (row 0: H = 0,
// so launch 0 is phase 1 of row 1). Row i's H~ and tile aggregates (tg, tg2) are read
// from the buffers of parity i, row i + 1's written to those of parity i + 1; F is
// updated in place. modes[i] (0: int16, 1: int32) is row i's word length.
__global__ void __launch_bounds__(SCAN_THREADS)
row_scan_fused(const u8* __restrict__ t, int n, const u8* __restrict__ q, int i, int m,
               const int* __restrict__ mat, int a, int go, int ge, int packed,
               const int* __restrict__ modes, const int* __restrict__ rowmax,
               const int* __restrict__ carry, const int* __restrict__ tgC,
               const int* __restrict__ tg2C, const short* Ht16C, const int* Ht32C,
               short* Ht16N, int* Ht32N, short* F16, int* F32, int* tmaxN, int* tjN,
               int* tgN, int* tg2N) {
    __shared__ int srow[MAX_ALPHABET];
    __shared__ __align__(8) int sH[TILE + 1];   // 8-byte aligned: phase1_pairs loads pairs
    const int next = i < m;
    if (next) {
        const int qc = q[i];                     // row i + 1's query symbol
        for (int k = threadIdx.x; k < a; k += blockDim.x) srow[k] = mat[qc * a + k];
    }
    __syncthreads();
    const int rm = rowmax[i];
    const int skip = rm <= go;
    const int reach = (skip || ge == 0) ? 0 : (rm - go - 1) / ge + 1;
    long long c0 = 0, c1 = 0;
    if (!skip) tile_carries(tgC, tg2C, carry, ge, reach, c0, c1);
    const int mc = modes[i], mn = next ? modes[i + 1] : mc;
    if (mc == 0 && mn == 0)
        fused_tile<short, short>(t, n, next, srow, go, ge, skip, packed, c0, c1, Ht16C, F16, F16, Ht16N,
                                 sH, tmaxN, tjN, tgN, tg2N);
    else if (mc == 1 && mn == 1)
        fused_tile<int, int>(t, n, next, srow, go, ge, skip, packed, c0, c1, Ht32C, F32, F32, Ht32N,
                             sH, tmaxN, tjN, tgN, tg2N);
    else if (mc == 0)
        fused_tile<short, int>(t, n, next, srow, go, ge, skip, packed, c0, c1, Ht16C, F16, F32, Ht32N,
                               sH, tmaxN, tjN, tgN, tg2N);
    else
        fused_tile<int, short>(t, n, next, srow, go, ge, skip, packed, c0, c1, Ht32C, F32, F16, Ht16N,
                               sH, tmaxN, tjN, tgN, tg2N);
}

// Phase 2 of "scan1": paper 004's single-stage Hillis-Steele max-scan with decay in
// shared memory (double-buffered): E0[0] = carry (E at the tile's first column, complete),
// E0[k] = H~[j0+k-1] - gop; rounds I = 1, 2, 4, ...: E[k] = max(E[k], E[k-I] - I*gex)
// while I < min(p_i, TILE).
__global__ void __launch_bounds__(SCAN_THREADS)
row_phase2_scan1(int n, int i, int go, int ge, const int* __restrict__ rowmax,
                 const int* __restrict__ tg, const int* __restrict__ carry, int* H,
                 const int* __restrict__ Ht) {
    __shared__ int buf[2][TILE];            // every E fits: 0 <= E < rowmax
    const int rm = rowmax[i];
    const int j0 = 1 + blockIdx.x * TILE;
    if (rm <= go) {
        for (int k = threadIdx.x; k < TILE; k += SCAN_THREADS)
            if (j0 + k <= n) H[j0 + k] = Ht[j0 + k];
        return;
    }
    const int reach = ge == 0 ? TILE : (rm - go - 1) / ge + 1;
    const long long c = tile_carry(tg, carry, ge, reach);
    for (int k = threadIdx.x; k < TILE; k += SCAN_THREADS)
        buf[0][k] = k == 0 ? (int)c : (j0 + k - 1 <= n ? max(Ht[j0 + k - 1] - go, 0) : 0);
    __syncthreads();
    int cur = 0;
    for (int w = 1; w < min(reach, TILE); w <<= 1) {
        const long long dec = (long long)w * ge;
        for (int k = threadIdx.x; k < TILE; k += SCAN_THREADS)
            buf[cur ^ 1][k] = k >= w ? (int)max((long long)buf[cur][k], buf[cur][k - w] - dec)
                                     : buf[cur][k];
        __syncthreads();
        cur ^= 1;
    }
    for (int k = threadIdx.x; k < TILE; k += SCAN_THREADS)
        if (j0 + k <= n) H[j0 + k] = max(Ht[j0 + k], buf[cur][k]);
}

// ------------------------------------------------------------ windows: anti-diagonal

// Block w: window w (t + wlo[w], wlen[w] symbols) against query rows r0+1 .. r0+rows.
// rowH/rowF (row stride `stride`, may be null for a single strip): H and F of row r0 in,
// of row r0+rows out. out[3w..3w+2]: the window's best (score, i, j), merged.
__global__ void __launch_bounds__(256)
window_antidiagonal(const u8* __restrict__ t, const long long* __restrict__ wlo,
                    const int* __restrict__ wlen, const u8* __restrict__ q, int r0,
                    int rows, const int* __restrict__ mat, int a, int go, int ge, int* rowH,
                    int* rowF, long long stride, int* out) {
    extern __shared__ int smem[];
    int* smat = smem;                       // a*a
    int* hb = smat + a * a;                 // [2][blockDim]
    int* fb = hb + 2 * blockDim.x;
    load_matrix(smat, mat, a);
    const int w = blockIdx.x, len = wlen[w], r = threadIdx.x, nt = blockDim.x;
    const u8* tw = t + wlo[w];
    int* rh = rowH ? rowH + w * stride : nullptr;
    int* rf = rowF ? rowF + w * stride : nullptr;
    const bool active = r < rows;
    const int i = r0 + r + 1;
    const int* srow = smat + (active ? q[i - 1] : 0) * a;
    const bool last = r == rows - 1;
    __syncthreads();
    int hleft = 0, eleft = 0, hdiag = 0;
    int bh = 0, bi = 0, bj = 0;
    const int steps = len + rows - 1;
    for (int s = 0; s < steps; ++s) {
        const int j = s - r + 1;
        if (active && j >= 1 && j <= len) {
            int hu, fu;
            if (r == 0) {
                hu = rh ? rh[j] : 0;
                fu = rf ? rf[j] : 0;
            } else {
                hu = hb[((s - 1) & 1) * nt + r - 1];
                fu = fb[((s - 1) & 1) * nt + r - 1];
            }
            const int e = max(max(eleft - ge, hleft - go), 0);
            const int f = max(max(fu - ge, hu - go), 0);
            const int h = max(max(hdiag + srow[tw[j - 1]], e), max(f, 0));
            hdiag = hu; hleft = h; eleft = e;
            hb[(s & 1) * nt + r] = h;
            fb[(s & 1) * nt + r] = f;
            if (last && rh) { rh[j] = h; rf[j] = f; }
            if (better(h, i, j, bh, bi, bj)) { bh = h; bi = i; bj = j; }
        }
        __syncthreads();
    }
    block_best(bh, bi, bj);
    if (threadIdx.x == 0 && better(bh, bi, bj, out[3 * w], out[3 * w + 1], out[3 * w + 2])) {
        out[3 * w] = bh; out[3 * w + 1] = bi; out[3 * w + 2] = bj;
    }
}

// ------------------------------------------------------------------ windows: blocked

#define BR 8      // query rows per thread (tile height)
#define BC 8      // reference columns per tile (tile width)

__global__ void __launch_bounds__(128)
window_blocked(const u8* __restrict__ t, const long long* __restrict__ wlo,
               const int* __restrict__ wlen, const u8* __restrict__ q, int r0, int rows,
               const int* __restrict__ mat, int a, int go, int ge, int* rowH, int* rowF,
               long long stride, int* out) {
    extern __shared__ int smem[];
    int* smat = smem;                       // a*a
    int* bh_s = smat + a * a;               // [2][blockDim][BC] bottom H of each thread
    int* bf_s = bh_s + 2 * blockDim.x * BC; // [2][blockDim][BC] bottom F
    load_matrix(smat, mat, a);
    const int w = blockIdx.x, len = wlen[w], r = threadIdx.x, nt = blockDim.x;
    const u8* tw = t + wlo[w];
    int* rh = rowH ? rowH + w * stride : nullptr;
    int* rf = rowF ? rowF + w * stride : nullptr;
    const int my0 = r * BR;                 // first strip row of this thread (0-based)
    const int myrows = max(0, min(BR, rows - my0));
    const bool writes_bottom = myrows > 0 && my0 + myrows == rows;
    __syncthreads();
    int hL[BR], eL[BR];
    #pragma unroll
    for (int k = 0; k < BR; ++k) { hL[k] = 0; eL[k] = 0; }
    int corner = 0;                         // H(row above, first column - 1) of the tile
    int bh = 0, bi = 0, bj = 0;
    const int ntc = (len + BC - 1) / BC;
    const int steps = ntc + (rows + BR - 1) / BR - 1;   // threads past the strip stay idle
    for (int s = 0; s < steps; ++s) {
        const int c = s - r;
        if (myrows > 0 && c >= 0 && c < ntc) {
            const int j0 = c * BC + 1;
            int up[BC], fu[BC];
            #pragma unroll
            for (int k = 0; k < BC; ++k) {
                const int j = j0 + k;
                if (r == 0) {
                    up[k] = (rh && j <= len) ? rh[j] : 0;
                    fu[k] = (rf && j <= len) ? rf[j] : 0;
                } else {
                    up[k] = bh_s[(((s - 1) & 1) * nt + r - 1) * BC + k];
                    fu[k] = bf_s[(((s - 1) & 1) * nt + r - 1) * BC + k];
                }
            }
            int diag_next = corner;
            corner = up[BC - 1];
            #pragma unroll
            for (int rr = 0; rr < BR; ++rr) {
                if (rr < myrows) {
                    const int i = r0 + my0 + rr + 1;
                    const int* srow = smat + q[i - 1] * a;
                    int diag = diag_next;
                    diag_next = hL[rr];             // H(i, j0 - 1): the next row's diagonal
                    int hl = hL[rr], e = eL[rr];
                    #pragma unroll
                    for (int k = 0; k < BC; ++k) {
                        const int j = j0 + k;
                        if (j <= len) {
                            const int f = max(max(fu[k] - ge, up[k] - go), 0);
                            e = max(max(e - ge, hl - go), 0);
                            const int h = max(max(diag + srow[tw[j - 1]], e), max(f, 0));
                            diag = up[k]; up[k] = h; fu[k] = f; hl = h;
                            if (better(h, i, j, bh, bi, bj)) { bh = h; bi = i; bj = j; }
                        }
                    }
                    hL[rr] = hl; eL[rr] = e;
                }
            }
            #pragma unroll
            for (int k = 0; k < BC; ++k) {
                bh_s[((s & 1) * nt + r) * BC + k] = up[k];
                bf_s[((s & 1) * nt + r) * BC + k] = fu[k];
            }
            if (writes_bottom && rh) {
                #pragma unroll
                for (int k = 0; k < BC; ++k)
                    if (j0 + k <= len) { rh[j0 + k] = up[k]; rf[j0 + k] = fu[k]; }
            }
        }
        __syncthreads();
    }
    block_best(bh, bi, bj);
    if (threadIdx.x == 0 && better(bh, bi, bj, out[3 * w], out[3 * w + 1], out[3 * w + 2])) {
        out[3 * w] = bh; out[3 * w + 1] = bi; out[3 * w + 2] = bj;
    }
}
