// locate's windows on the GPU: one query against many windows of a reference kept
// resident on the device (windows.py).  Local alignment, scores only, 16-bit DPX.
//
// Conventions (DESIGN.md): rows are query positions, columns reference positions; a gap
// of length k costs go + (k-1)*ge; local H >= 0.
//
// Layout (KERNELS.md B.2): a group of G consecutive lanes scores one item = two windows,
// window a in the low 16-bit half of every register, window b in the high half (both
// against the same query).  Lane t owns R consecutive rows of the current band of G*R
// rows and at step s works on column j = s - t; H and F of the row above its first row
// come from lane t-1 by one shfl_up each.  Lane 0 reads the top boundary (band 0) or the
// band buffer the last lane of the previous band wrote (in place: column c is read at step
// c-2 of the next band and rewritten at step c+G-2; pairs.cu's scheme).
//
// Scores: the query profile of the band sits in shared memory, 16-bit S(q_r, c) for
// every code c (code K = the pad column past a window's end) and every row of the band,
// laid out so that lane t's k-th run of 8 rows is 16-byte chunk k*G + t of the code's
// column: each LDS.128 of a quarter-warp touches 8 consecutive chunks, conflict-free
// whatever codes the lanes read (a column is G*R*2 bytes, a multiple of 128).  A lane reads
// its rows' scores for window a's and window b's symbol (2 * R/8 LDS.128 per step) and
// merges them per row with one PRMT.
//
// Cell update (search.cu's bias): H' = H + go, E' = E + go, F' = F + go, so
//   a = max(Hdiag' + S, F')         VIADDMNMX
//   H' = max(a, E', go)             VIMNMX3 (the relu is the max against go)
//   Ht = H' - go                    IMAD (H' >= go in both halves: no borrow)
//   E' = max(E' - ge, Ht), F' = max(F' - ge, Ht)   VIADDMNMX x2
// and the running max takes H' (half a VIMNMX3 per cell pair).
//
// Saturation: a window is flagged when its running max reaches `thr` (= 32767 - smax - 2
// in biased units).  Before any half can wrap (Hdiag' + S > 32767), a correct H' >= 32767
// - smax has entered the running max (every Hdiag' is an earlier H' of the same window),
// so unflagged scores are exact; flagged windows are rescored exactly by the caller.
//
// Rows past the query (pad rows at the bottom of the last band) and columns past a
// window's end score `pad` <= 0: every value there is at most a real cell's value, so the
// maximum is unchanged.
//
// ENDS = true also gives each window's end cell by DESIGN.md's tie rule (best score, then
// smallest column, then smallest row): every lane keeps, per half, the best (value, column,
// row) over its real cells (column < window length, row < m) with the full tie-rule
// comparison (bands visit cells out of column order), and the group reduces them.  It
// costs ~2x the plain kernel; locate runs it on a few short windows only.

#define FULL_MASK 0xffffffffu

// a * one + b on the FMA pipe (IMAD): `one` is a kernel argument (always 1), so the
// compiler cannot fold it and the subtract stays off the ALU pipe.
__device__ __forceinline__ unsigned win_mad1(unsigned a, unsigned one, unsigned b) {
    unsigned d;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(one), "r"(b));
    return d;
}

__device__ __forceinline__ unsigned win_pack(int lo, int hi) {
    return ((unsigned)lo & 0xffffu) | ((unsigned)hi << 16);
}

// ref: resident codes; wstart/wlen: windows (start in ref, length); items: 2 window ids
// per item (the second may be -1), nitems items, G lanes per item; bands of G*R rows.
// prof: per band, (K+1) columns of G*R shorts in the chunk layout above.
// bound: per item, 2 * (ncols + 2) words (H' then F' of the band's last row), bands > 1.
// out[w]: window w's best score; flagged / nflagged: windows whose max reached thr.
// Tie-rule order of end cells: (value desc, column asc, row asc).
__device__ __forceinline__ bool win_better(int v, int j, int i, int bv, int bj, int bi) {
    return v > bv || (v == bv && (j < bj || (j == bj && i < bi)));
}

// ENDS: qend / tend[w] = window w's end cell (row + 1, column + 1), (0, 0) for score 0;
// m = the query length.
template <int R, bool ENDS>
__global__ void __launch_bounds__(256, 2)
win_s16(const unsigned char* __restrict__ ref, const long long* __restrict__ wstart,
        const int* __restrict__ wlen, const int* __restrict__ items, int nitems, int G,
        int bands, const unsigned short* __restrict__ prof, int K, int go, int ge, int thr,
        unsigned one, unsigned* __restrict__ bound, long long bstride,
        int* __restrict__ out, int* __restrict__ flagged, int* __restrict__ nflagged,
        int m, int* __restrict__ qend, int* __restrict__ tend)
{
    static_assert(R % 8 == 0, "R must be a multiple of 8 (one LDS.128 per 8 rows)");
    constexpr int C = R / 8;                   // 16-byte chunks per lane and column
    extern __shared__ uint4 win_smem[];
    const int GR = G * R;
    const int col4 = GR / 8;                   // a column in uint4 units

    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int item = (int)(gtid / G);
    const int t = (int)(gtid % G);
    int pa = -1, pb = -1;
    if (item < nitems) {
        pa = items[2 * item];
        pb = items[2 * item + 1];
    }
    long long sa = 0, sb = 0;
    int na = 0, nb = 0;
    if (pa >= 0) { sa = wstart[pa]; na = wlen[pa]; }
    if (pb >= 0) { sb = wstart[pb]; nb = wlen[pb]; }
    const int ncols = max(na, nb);
    const int steps = (int)__reduce_max_sync(FULL_MASK, (unsigned)ncols) + G - 1;
    const unsigned bvec = win_pack(go, go);
    const unsigned neg_bias = 0u - bvec;
    const unsigned neg_ge = win_pack(-ge, -ge);
    const unsigned ypad = (unsigned)K;

    unsigned best = bvec;
    int eva = 0, eja = -1, eia = -1, evb = 0, ejb = -1, eib = -1;   // ENDS: best cells
    unsigned* bufh = bound + (size_t)max(item, 0) * (size_t)bstride;
    unsigned* buff = bufh + (ncols + 2);

    for (int band = 0; band < bands; ++band) {
        __syncthreads();                       // the previous band's profile is no longer read
        {
            const uint4* src = reinterpret_cast<const uint4*>(prof) + (size_t)band * (K + 1) * col4;
            for (int k = threadIdx.x; k < (K + 1) * col4; k += blockDim.x) win_smem[k] = src[k];
        }
        __syncthreads();
        unsigned H[R], E[R];
#pragma unroll
        for (int r = 0; r < R; ++r) { H[r] = bvec; E[r] = 0u; }
        // inputs from the row above this lane's first row: diag, up (H') and F'
        unsigned hd = bvec, hu = bvec, fu = 0u;   // band 0: the top boundary H = 0
        if (t == 0 && band > 0) {              // column 0 of the row above is H = 0 too
            hu = ncols >= 1 ? bufh[1] : 0u;
            fu = ncols >= 1 ? buff[1] : 0u;
        }
        const bool last_band = band == bands - 1;
        int j = -t;                            // this lane's column this step
        unsigned ya = ypad, yb = ypad;
        if (j >= 0 && j < na) ya = ref[sa + j];
        if (j >= 0 && j < nb) yb = ref[sb + j];
        for (int s = 0; s < steps; ++s, ++j) {
            unsigned ya_n = ypad, yb_n = ypad;   // next step's symbols, loaded ahead
            if (j + 1 >= 0 && j + 1 < na) ya_n = ref[sa + j + 1];
            if (j + 1 >= 0 && j + 1 < nb) yb_n = ref[sb + j + 1];
            uint4 A[C], B[C];
#pragma unroll
            for (int k = 0; k < C; ++k) {
                A[k] = win_smem[ya * col4 + k * G + t];
                B[k] = win_smem[yb * col4 + k * G + t];
            }
            unsigned diag = hd, f = fu;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const uint4 a4 = A[r / 8], b4 = B[r / 8];
                const int w = (r % 8) / 2;
                const unsigned aw = w == 0 ? a4.x : w == 1 ? a4.y : w == 2 ? a4.z : a4.w;
                const unsigned bw = w == 0 ? b4.x : w == 1 ? b4.y : w == 2 ? b4.z : b4.w;
                const unsigned sc = __byte_perm(aw, bw, (r & 1) ? 0x7632 : 0x5410);
                const unsigned x = __viaddmax_s16x2(diag, sc, f);
                const unsigned h = __vimax3_s16x2(x, E[r], bvec);
                diag = H[r];
                H[r] = h;
                const unsigned ht = win_mad1(h, one, neg_bias);
                E[r] = __viaddmax_s16x2(E[r], neg_ge, ht);
                f = __viaddmax_s16x2(f, neg_ge, ht);
            }
#pragma unroll
            for (int r = 0; r + 1 < R; r += 2) best = __vimax3_s16x2(best, H[r], H[r + 1]);
            if (ENDS) {
                const int row0 = band * GR + t * R;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    if (row0 + r >= m) break;
                    const int va = (int)(short)(H[r] & 0xffffu) - go;
                    const int vb = (int)(short)(H[r] >> 16) - go;
                    if (j >= 0 && j < na && va > 0 && win_better(va, j, row0 + r, eva, eja, eia)) {
                        eva = va; eja = j; eia = row0 + r;
                    }
                    if (j >= 0 && j < nb && vb > 0 && win_better(vb, j, row0 + r, evb, ejb, eib)) {
                        evb = vb; ejb = j; eib = row0 + r;
                    }
                }
            }
            const unsigned outh = H[R - 1];
            if (t == G - 1 && !last_band && j >= 0 && j < ncols) {
                bufh[j + 1] = outh;
                buff[j + 1] = f;
            }
            unsigned rh = __shfl_up_sync(FULL_MASK, outh, 1, G);
            unsigned rf = __shfl_up_sync(FULL_MASK, f, 1, G);
            if (t == 0) {     // the row above lane 0 at column j + 1 (c = j + 2)
                const int c = j + 2;
                if (band == 0) {
                    rh = bvec;
                    rf = 0u;
                } else {
                    rh = c <= ncols ? bufh[c] : 0u;
                    rf = c <= ncols ? buff[c] : 0u;
                }
            }
            hd = hu;
            hu = rh;
            fu = rf;
            ya = ya_n;
            yb = yb_n;
        }
    }
    for (int o = 1; o < G; o <<= 1) best = __vmaxs2(best, __shfl_xor_sync(FULL_MASK, best, o, G));
    if (ENDS) {
        for (int o = 1; o < G; o <<= 1) {
            const int va = __shfl_xor_sync(FULL_MASK, eva, o, G);
            const int ja = __shfl_xor_sync(FULL_MASK, eja, o, G);
            const int ia = __shfl_xor_sync(FULL_MASK, eia, o, G);
            const int vb = __shfl_xor_sync(FULL_MASK, evb, o, G);
            const int jb = __shfl_xor_sync(FULL_MASK, ejb, o, G);
            const int ib = __shfl_xor_sync(FULL_MASK, eib, o, G);
            if (va > 0 && win_better(va, ja, ia, eva, eja, eia)) { eva = va; eja = ja; eia = ia; }
            if (vb > 0 && win_better(vb, jb, ib, evb, ejb, eib)) { evb = vb; ejb = jb; eib = ib; }
        }
    }
    if (t == 0 && item < nitems) {
        const int ba = (int)(short)(best & 0xffffu), bb = (int)(short)(best >> 16);
        if (pa >= 0) {
            out[pa] = ba - go;
            if (ba >= thr) flagged[atomicAdd(nflagged, 1)] = pa;
            if (ENDS) { qend[pa] = eia + 1; tend[pa] = eja + 1; }
        }
        if (pb >= 0) {
            out[pb] = bb - go;
            if (bb >= thr) flagged[atomicAdd(nflagged, 1)] = pb;
            if (ENDS) { qend[pb] = eib + 1; tend[pb] = ejb + 1; }
        }
    }
}
