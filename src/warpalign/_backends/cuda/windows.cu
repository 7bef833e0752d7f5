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
// smallest column, then smallest row), tracked per step rather than per cell.  It still
// costs ~20% over the scores on long windows (H100, 256 x 33.5 M: 2,906 vs 3,510 GCUPS;
// the step loop is no longer unrolled and a branch ends each step), so locate scores every
// window without ends and runs ENDS only on short sub-windows of the windows tied at the
// best score.  Per band a lane keeps its running max of the band (bm) and, per half, the
// first column at which bm rose and the smallest of its rows holding the new max there.
// Each step takes the max of the lane's R new H (the same max3 chain as the scores), one
// max into bm and an XOR with the old bm (nonzero in a half that rose), and only when a
// half rose (a few times per window and lane) a search of the R rows for the first one
// equal to the new max.  Within a band a lane visits its columns in increasing order, so
// "rose strictly" keeps the smallest column, then row, among its cells of value bm; bands
// are merged at each band's end and lanes at the end by the full (value desc, column asc,
// row asc) comparison.  Pad cells (columns past a window's end, rows past the query,
// columns < 0 of the skewed start) are tracked too: a pad cell of value v > 0 gets it from
// Hdiag + pad (pad <= 0; the cell one column left), from E (a cell of its row in an
// earlier column) or from F (a cell above in its column), so a cell earlier in (column,
// row) order holds at least v, and by induction a real one holds exactly v when v is the
// window's maximum: the minimum the reduction takes is a real cell.

#define FULL_MASK 0xffffffffu

// a * one + b on the FMA pipe (IMAD): `one` is a kernel argument (always 1), so the
// compiler cannot fold it and the subtract stays off the ALU pipe.
__device__ __forceinline__ unsigned win_mad1(unsigned a, unsigned one, unsigned b) {
    unsigned d;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(one), "r"(b));
    return d;
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

// 32-bit shared-memory load of 16 bytes at a byte address (win_s16's packed path computes
// the address on the FMA pipe, IMAD, where a generic pointer would take ALU instructions).
__device__ __forceinline__ uint4 win_lds128(unsigned addr) {
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
    return v;
}

// The packed columns of win_s16<R, false, true> (built once per window layout): for item i,
// ycol[i * ystride + x] = code_a | code_b << 8 of column j = x - WIN_FRONT of its windows a
// and b (K, the pad column, outside a window), so the kernel reads one 32-bit word per two
// columns with no bound check (WIN_FRONT >= 2 (G - 1), even).
#define WIN_FRONT 64
__global__ void win_ypack(const unsigned char* __restrict__ ref,
                          const long long* __restrict__ wstart, const int* __restrict__ wlen,
                          const int* __restrict__ items, int nitems, int K, long long ystride,
                          unsigned short* __restrict__ ycol)
{
    const long long total = (long long)nitems * ystride;
    for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < total;
         k += (long long)gridDim.x * blockDim.x) {
        const int i = (int)(k / ystride);
        const int j = (int)(k - (long long)i * ystride) - WIN_FRONT;
        const int pa = items[2 * i], pb = items[2 * i + 1];
        unsigned ya = (unsigned)K, yb = (unsigned)K;
        if (pa >= 0 && j >= 0 && j < wlen[pa]) ya = ref[wstart[pa] + j];
        if (pb >= 0 && j >= 0 && j < wlen[pb]) yb = ref[wstart[pb] + j];
        ycol[k] = (unsigned short)(ya | (yb << 8));
    }
}

// Row r's cell (r a compile-time constant once the row loop is unrolled): its two scores
// from the profile chunks of window a (P) and b (Q), merged by one PRMT; H' from the
// diagonal, E' and F'; E' and F' updated in place (search.cu's bias, see above).
template <int R>
__device__ __forceinline__ unsigned win_cell(const uint4 (&P)[R / 8], const uint4 (&Q)[R / 8],
                                             int r, unsigned diag, unsigned& e, unsigned& f,
                                             unsigned bvec, unsigned neg_bias,
                                             unsigned neg_ge, unsigned one)
{
    const uint4 a4 = P[r / 8], b4 = Q[r / 8];
    const int w = (r % 8) / 2;
    const unsigned aw = w == 0 ? a4.x : w == 1 ? a4.y : w == 2 ? a4.z : a4.w;
    const unsigned bw = w == 0 ? b4.x : w == 1 ? b4.y : w == 2 ? b4.z : b4.w;
    const unsigned sc = __byte_perm(aw, bw, (r & 1) ? 0x7632 : 0x5410);
    const unsigned x = __viaddmax_s16x2(diag, sc, f);
    const unsigned h = __vimax3_s16x2(x, e, bvec);
    const unsigned ht = win_mad1(h, one, neg_bias);
    e = __viaddmax_s16x2(e, neg_ge, ht);
    f = __viaddmax_s16x2(f, neg_ge, ht);
    return h;
}

// One column of a lane's R rows (win_packed): the profile chunks of window a (P) and b (Q)
// at this column, H of the column to the left (Hl) -> this column's H (Ho), E in place, row
// 0's diagonal in diag, F' from the lane above in f (on return: this lane's last-row F').
template <int R>
__device__ __forceinline__ void win_col(const uint4 (&P)[R / 8], const uint4 (&Q)[R / 8],
                                        const unsigned (&Hl)[R], unsigned (&Ho)[R],
                                        unsigned (&E)[R], unsigned diag, unsigned& f,
                                        unsigned bvec, unsigned neg_bias, unsigned neg_ge,
                                        unsigned one)
{
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const unsigned h = win_cell<R>(P, Q, r, diag, E[r], f, bvec, neg_bias, neg_ge, one);
        diag = Hl[r];
        Ho[r] = h;
    }
}

// The packed band (win_s16<R, false, true>, one band, scores only): lane t works on columns
// A = 2i - 2t and B = A + 1 at iteration i, so both columns' inputs from the row above come
// from lane t-1's previous iteration and column B's row r needs only column A's row r: two
// row chains overlap (ww_dna's scheme; one chain left the loop latency-bound at ~75% of
// its ALU bound), and H alternates between two register sets (no moves). Symbols: one
// 32-bit read of win_ypack's columns per iteration (A's and B's two codes), split and
// turned into shared-memory addresses on the FMA pipe (IMAD, IMAD.HI: k8/k16/k24 are run-
// time powers of two, so ptxas keeps them multiplies); lane 0's row above (band 0: H = 0,
// F = 0) by a 0/1 factor. Returns the lane's running max (biased).
template <int R>
__device__ __forceinline__ unsigned win_packed(const unsigned* __restrict__ yw, int iters, int G,
                                               int t, bool head, unsigned colb, unsigned smem,
                                               unsigned bvec, unsigned neg_bias,
                                               unsigned neg_ge, unsigned one)
{
    constexpr int C = R / 8;
    unsigned lane_at[C];                       // this lane's chunk k of a column, bytes
#pragma unroll
    for (int k = 0; k < C; ++k) lane_at[k] = smem + 16u * (k * G + t);
    const unsigned k8 = one << 8, k16 = one << 16, k24 = one << 24, nk256 = 0u - k8;
    // a head lane (lane 0, or the first lane of a packed query) takes the top boundary
    const unsigned first = head ? 0u : one, top = head ? bvec : 0u;
    unsigned H0[R], H1[R], E[R];
#pragma unroll
    for (int r = 0; r < R; ++r) { H1[r] = bvec; E[r] = 0u; }
    // from the row above: hdA = H at column A - 1 (A's row-0 diagonal), huA = H at A (B's
    // diagonal), huB = H at B, fuA / fuB = F' at A / B; band 0's top boundary to start
    unsigned hdA = bvec, huA = bvec, huB = bvec, fuA = 0u, fuB = 0u, best = bvec;
    unsigned v = yw[0];
    for (int i = 0; i < iters; ++i) {
        const unsigned vn = yw[i + 1];          // next iteration's codes, loaded ahead
        // v = aA | bA << 8 | aB << 16 | bB << 24 (windows a, b at columns A, B)
        const unsigned s24 = __umulhi(v, k8), s16 = __umulhi(v, k16), s8 = __umulhi(v, k24);
        const unsigned aA = win_mad1(s8, nk256, v), bA = win_mad1(s16, nk256, s8);
        const unsigned aB = win_mad1(s24, nk256, s16), bB = s24;
        uint4 PA[C], QA[C], PB[C], QB[C];
#pragma unroll
        for (int k = 0; k < C; ++k) {
            PA[k] = win_lds128(win_mad1(aA, colb, lane_at[k]));
            QA[k] = win_lds128(win_mad1(bA, colb, lane_at[k]));
            PB[k] = win_lds128(win_mad1(aB, colb, lane_at[k]));
            QB[k] = win_lds128(win_mad1(bB, colb, lane_at[k]));
        }
        unsigned fA = fuA, fB = fuB;
        win_col<R>(PA, QA, H1, H0, E, hdA, fA, bvec, neg_bias, neg_ge, one);
        win_col<R>(PB, QB, H0, H1, E, huA, fB, bvec, neg_bias, neg_ge, one);
#pragma unroll
        for (int r = 0; r < R; ++r) best = __vimax3_s16x2(best, H0[r], H1[r]);
        const unsigned rhA = __shfl_up_sync(FULL_MASK, H0[R - 1], 1, G);
        const unsigned rfA = __shfl_up_sync(FULL_MASK, fA, 1, G);
        const unsigned rhB = __shfl_up_sync(FULL_MASK, H1[R - 1], 1, G);
        const unsigned rfB = __shfl_up_sync(FULL_MASK, fB, 1, G);
        hdA = huB;
        huA = win_mad1(rhA, first, top);
        fuA = win_mad1(rfA, first, 0u);
        huB = win_mad1(rhB, first, top);
        fuB = win_mad1(rfB, first, 0u);
        v = vn;
    }
    return best;
}

// ENDS: qend / tend[w] = window w's end cell (row + 1, column + 1), (0, 0) for score 0.
// bvec = (go, go), neg_bias = -bvec, neg_ge = (-ge, -ge) as 16-bit pairs: arguments, so
// the loop reads them from the constant bank (computed here, ptxas re-derived them every
// step for want of registers).
// PACKED (scores only, one band): win_packed over win_ypack's columns (ycol, ystride): two
// columns per iteration, no bound checks, no band buffer, addresses on the FMA pipe.
// heads: bit t set where lane t of an item begins a query (bit 0 always).  One query: heads
// = 1.  Several queries packed in the rows of one band (windows.py, pack_plan; one band,
// scores only): query k owns lanes [l_k, l_k+1) (l_k the k-th set bit; the last query to G),
// its rows from the first row of lane l_k, pad rows (score pad) after it.  A head lane takes
// the top boundary (H = 0, F' = 0) as lane 0 of band 0 does, so no value flows from one
// query's rows into the next: each query's cells are exactly its own DP, and its pad rows
// never exceed its real cells (as the pad rows of one query).  The running maxima are
// reduced per query (segments of lanes), and query k's score of window w goes to
// out[k * nwin + w] (flagged: that index).
template <int R, bool ENDS, bool PACKED>
__global__ void __launch_bounds__(256, 2)
win_s16(const unsigned char* __restrict__ ref, const long long* __restrict__ wstart,
        const int* __restrict__ wlen, const int* __restrict__ items, int nitems, int G,
        int bands, const unsigned short* __restrict__ prof, int K, int go, int ge, int thr,
        unsigned one, unsigned* __restrict__ bound, long long bstride,
        int* __restrict__ out, int* __restrict__ flagged, int* __restrict__ nflagged,
        int* __restrict__ qend, int* __restrict__ tend,
        const unsigned short* __restrict__ ycol, long long ystride, unsigned bvec,
        unsigned neg_bias, unsigned neg_ge, unsigned heads, int nwin)
{
    static_assert(R % 8 == 0, "R must be a multiple of 8 (one LDS.128 per 8 rows)");
    static_assert(!(PACKED && ENDS), "the packed path gives scores only");
    constexpr int C = R / 8;                   // 16-byte chunks per lane and column
    extern __shared__ uint4 win_smem[];
    const int GR = G * R;
    const int col4 = GR / 8;                   // a column in uint4 units

    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int item = (int)(gtid / G);
    const int t = (int)(gtid % G);
    const bool head = (heads >> t) & 1u;
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
        if constexpr (PACKED) {                // one band: two columns per iteration
            const unsigned* yw = reinterpret_cast<const unsigned*>(
                ycol + (size_t)min(item, nitems - 1) * ystride + WIN_FRONT - 2 * t);
            const int iters =
                ((int)__reduce_max_sync(FULL_MASK, (unsigned)ncols) + 2 * G - 1) / 2;
            best = win_packed<R>(yw, iters, G, t, head, (unsigned)col4 * 16u,
                                 (unsigned)__cvta_generic_to_shared(win_smem), bvec, neg_bias,
                                 neg_ge, one);
        } else {
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
            const int row0 = band * GR + t * R;
            unsigned bm = bvec;                    // ENDS: this band's running max of the lane
            int bja = -1, bia = -1, bjb = -1, bib = -1;
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
                    const unsigned h = win_cell<R>(A, B, r, diag, E[r], f, bvec, neg_bias,
                                                   neg_ge, one);
                    diag = H[r];
                    H[r] = h;
                }
                if (ENDS) {
                    unsigned mx = __vimax3_s16x2(H[0], H[1], H[2]);
#pragma unroll
                    for (int r = 3; r + 1 < R; r += 2) mx = __vimax3_s16x2(mx, H[r], H[r + 1]);
                    if (R % 2 == 0) mx = __vmaxs2(mx, H[R - 1]);
                    const unsigned nm = __vmaxs2(bm, mx);
                    const unsigned rose = nm ^ bm;  // per half: nonzero where bm rose
                    bm = nm;
                    if (rose) {                     // rare: this lane's band max rose at column j
                        unsigned rsel = 0u;          // per half: the first row r with H[r] == mx
#pragma unroll
                        for (int r = R - 1; r >= 0; --r) {
                            const unsigned eq = __vcmpeq2(H[r], mx);
                            rsel = (eq & (0x10001u * (unsigned)r)) | (~eq & rsel);
                        }
                        if (rose & 0xffffu) { bja = j; bia = row0 + (int)(rsel & 0xffffu); }
                        if (rose >> 16) { bjb = j; bib = row0 + (int)(rsel >> 16); }
                    }
                } else {
#pragma unroll
                    for (int r = 0; r + 1 < R; r += 2) best = __vimax3_s16x2(best, H[r], H[r + 1]);
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
                } else if (head) {   // a packed query's first lane (one band): the top boundary
                    rh = bvec;
                    rf = 0u;
                }
                hd = hu;
                hu = rh;
                fu = rf;
                ya = ya_n;
                yb = yb_n;
            }
            if (ENDS) {                            // merge the band's best cells (tie rule)
                best = __vmaxs2(best, bm);
                const int va = (int)(short)(bm & 0xffffu) - go;
                const int vb = (int)(short)(bm >> 16) - go;
                if (va > 0 && win_better(va, bja, bia, eva, eja, eia)) {
                    eva = va; eja = bja; eia = bia;
                }
                if (vb > 0 && win_better(vb, bjb, bib, evb, ejb, eib)) {
                    evb = vb; ejb = bjb; eib = bib;
                }
            }
        }
    }
    if (heads == 1u) {                         // one query (uniform): the whole group
        for (int o = 1; o < G; o <<= 1)
            best = __vmaxs2(best, __shfl_xor_sync(FULL_MASK, best, o, G));
    } else {   // per query: lanes t .. seg_end - 1 of t's query into its head lane
        const unsigned later = heads & ~((2u << t) - 1u);     // head lanes after t
        const int seg_end = later ? __ffs(later) - 1 : G;
        for (int o = 1; o < G; o <<= 1) {
            const unsigned v = __shfl_down_sync(FULL_MASK, best, o, G);
            if (t + o < seg_end) best = __vmaxs2(best, v);
        }
    }
    if (ENDS) {                                // (one query: heads = 1, the host's rule)
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
    if (head && item < nitems) {
        const int ba = (int)(short)(best & 0xffffu), bb = (int)(short)(best >> 16);
        const int at = heads == 1u ? 0 : (__popc(heads & ((2u << t) - 1u)) - 1) * nwin;
        if (pa >= 0) {
            out[at + pa] = ba - go;
            if (ba >= thr) flagged[atomicAdd(nflagged, 1)] = at + pa;
            if (ENDS) { qend[pa] = eia + 1; tend[pa] = eja + 1; }
        }
        if (pb >= 0) {
            out[at + pb] = bb - go;
            if (bb >= thr) flagged[atomicAdd(nflagged, 1)] = at + pb;
            if (ENDS) { qend[pb] = eib + 1; tend[pb] = ejb + 1; }
        }
    }
}

// ------------------------------------------------------------ the best windows' end cells
// win_pick: one block, queued right after win_s16<R, false, *> so that locate learns the end
// cells of the best windows with no host round trip.  S = the best score over the n
// windows (0 when any window was flagged: its 16-bit score is not exact, so the host
// resolves the ends itself); spec[0] = S, spec[1] = how many windows score S, spec[2 ..]
// the first `most` of them (in no particular order).  Each picked window is cut into the
// sub-windows of locate's lazy ends (locate_scorers.py, WindowScorer.ends): `span + extra`
// symbols every `extra + 1`, span = span_bound(query, S) = m + max(0, (sq - go - S) / ge
// + 1) (ge > 0), so every alignment scoring S inside the window lies inside one
// sub-window.  Slot k * per + s holds sub-window s of the k-th picked window as (start in
// the reference, length), length 0 where there is none; win_ends (below) then
// gives each slot's end cell by the tie rule.  Packed queries (all of m symbols and score
// bound sq): block b picks for query b, its scores at scores + b * n, its words at
// spec + b * spec_stride, its slots at b * most * per (one query: one block); a window
// flagged for any query leaves every query's ends to the host.
__global__ void __launch_bounds__(1024)
win_pick(const int* __restrict__ scores, const int* __restrict__ nflagged, int n,
         const long long* __restrict__ wstart, const int* __restrict__ wlen, int m, int sq,
         int go, int ge, int extra, int most, int per, int* __restrict__ spec,
         long long* __restrict__ sub_start, int* __restrict__ sub_len, int spec_stride)
{
    scores += (size_t)blockIdx.x * n;
    spec += (size_t)blockIdx.x * spec_stride;
    sub_start += (size_t)blockIdx.x * most * per;
    sub_len += (size_t)blockIdx.x * most * per;
    __shared__ int warp_max[32];
    __shared__ int s_best, s_count;
    int best = 0;
    for (int w = threadIdx.x; w < n; w += blockDim.x) best = max(best, scores[w]);
    best = (int)__reduce_max_sync(FULL_MASK, (unsigned)best);   // local scores are >= 0
    if ((threadIdx.x & 31) == 0) warp_max[threadIdx.x >> 5] = best;
    if (threadIdx.x == 0) s_count = 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        int b = 0;
        for (int k = 0; k < (int)(blockDim.x >> 5); ++k) b = max(b, warp_max[k]);
        s_best = *nflagged > 0 ? 0 : b;
    }
    __syncthreads();
    best = s_best;
    if (best > 0)
        for (int w = threadIdx.x; w < n; w += blockDim.x)
            if (scores[w] == best) {
                const int k = atomicAdd(&s_count, 1);
                if (k < most) spec[2 + k] = w;
            }
    __syncthreads();
    const int picked = min(s_count, most);
    const int slack = sq - go - best;
    const int span = m + (slack < 0 ? 0 : slack / ge + 1);
    const int width = span + extra, stride = extra + 1;
    for (int c = threadIdx.x; c < most * per; c += blockDim.x) {
        const int k = c / per, s = c % per;
        long long lo = 0;
        int len = 0;
        if (best > 0 && k < picked) {
            const int w = spec[2 + k];
            const int L = wlen[w];
            const int count = L <= width ? 1 : (L - width + stride - 1) / stride + 1;
            if (s < count) {
                const int a = s * stride;
                lo = wstart[w] + a;
                len = min(a + width, L) - a;
            }
        }
        sub_start[c] = lo;
        sub_len[c] = len;
    }
    if (threadIdx.x == 0) { spec[0] = best; spec[1] = s_count; }
}

// win_ends<R>: the end cells of win_pick's slots, one warp per slot (a block holds
// blockDim/32 slots; length 0: an empty slot).  Slot w (sub_start[w], sub_len[w] symbols)
// against query rows r0+1 .. r0+rows (rows <= 32R), 32-bit and exact, built for latency
// (one short wave): lane t owns rows r0 + tR .. r0 + tR + R-1 and at step s works on
// column j = s - t + 1; H and F of the row above its first row and the column's reference
// symbol come from lane t-1 (which worked on column j at step s-1) by three shfl_up, lane 0
// reads the symbol (and, past the first strip, rowH/rowF: row r0 of the previous strip) one
// step ahead.  A lane's R score lookups of a step share one symbol, so they issue together
// ahead of its row chain.  A lane keeps its best cell: the step's maximum over its R rows
// and, only when that beats the lane's best (strictly: columns grow with the steps), the
// first of its rows holding it; lanes merge by the tie rule (score desc, column asc, row
// asc).  Rows past the query (pad rows of the last lanes) score -2^30 against every symbol
// (below any H: the caller runs this only for queries scoring below 2^29), so a pad cell
// is 0 or fed by a gap (go >= ge > 0 here) from a cell above or to its left, and by
// induction stays strictly below some real cell: never the slot's best.  rowH/rowF
// (stride `stride`; null for one strip): the last query row of this strip is written back
// for the next (in place: lane 0 reads column j + 1 at step j while the last lane writes
// columns <= j + 1 - 31 later).  out[3w..3w+2] = (score, query end i, end column j within
// the slot), merged over strips by the tie rule.  Packed queries: slot w is query
// w / per_query's, whose codes begin at q + (w / per_query) * qstride (one query:
// per_query = slots).
template <int R>
__global__ void __launch_bounds__(128)
win_ends(const unsigned char* __restrict__ ref, const long long* __restrict__ sub_start,
         const int* __restrict__ sub_len, int slots, const unsigned char* __restrict__ q,
         int r0, int rows, const int* __restrict__ mat, int a, int go, int ge, int* rowH,
         int* rowF, long long stride, int* __restrict__ out, int per_query, long long qstride)
{
    extern __shared__ int smat[];              // a * a, then a pad row of -2^30
    for (int k = threadIdx.x; k < a * a; k += blockDim.x) smat[k] = mat[k];
    for (int k = threadIdx.x; k < a; k += blockDim.x) smat[a * a + k] = -(1 << 30);
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const int w = blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5);
    if (w >= slots) return;
    const int len = sub_len[w];
    if (len <= 0) return;                      // the whole warp: an empty slot
    q += (size_t)(w / per_query) * qstride;    // this slot's query
    const unsigned char* tw = ref + sub_start[w];
    int* rh = rowH ? rowH + (size_t)w * stride : nullptr;
    int* rf = rowF ? rowF + (size_t)w * stride : nullptr;
    int qoff[R], H[R], E[R];
#pragma unroll
    for (int k = 0; k < R; ++k) {
        const int row = lane * R + k;
        qoff[k] = (row < rows ? (int)q[r0 + row] : a) * a;   // pad rows: the pad row
        H[k] = 0;
        E[k] = 0;
    }
    const int last = rows - 1;                 // the strip's last row: lane last / R
    int lastH = 0, lastF = 0, code = 0;        // what lane t+1 takes next step
    int diag0 = 0;                             // H of the row above, previous column
    int nc = tw[0], nh = rh ? rh[1] : 0, nf = rf ? rf[1] : 0;   // lane 0: column 1
    int bh = 0, bj = 0, bi = 0;
    const int steps = len + 31;
    for (int s = 0; s < steps; ++s) {
        const int j = s - lane + 1;
        int uh = __shfl_up_sync(FULL_MASK, lastH, 1);
        int uf = __shfl_up_sync(FULL_MASK, lastF, 1);
        int c = __shfl_up_sync(FULL_MASK, code, 1);
        if (lane == 0) {
            uh = nh; uf = nf; c = nc;
            if (j < len) {
                nc = tw[j];
                if (rh) { nh = rh[j + 1]; nf = rf[j + 1]; }
            }
        }
        if (j >= 1 && j <= len) {
            int sc[R];
#pragma unroll
            for (int k = 0; k < R; ++k) sc[k] = smat[qoff[k] + c];
            int diag = diag0, hu = uh, fu = uf;
            diag0 = uh;
            int F[R];
#pragma unroll
            for (int k = 0; k < R; ++k) {
                const int e = max(E[k] - ge, H[k] - go);
                const int f = max(fu - ge, hu - go);
                const int h = max(max(diag + sc[k], e), max(f, 0));
                diag = H[k];
                H[k] = h; E[k] = e; F[k] = f;
                hu = h; fu = f;
            }
            lastH = hu; lastF = fu; code = c;
            int top = H[0];
#pragma unroll
            for (int k = 1; k < R; ++k) top = max(top, H[k]);
            if (top > bh) {                    // rare: the lane's best rose; its first row
                bh = top; bj = j;
                int at = R - 1;
#pragma unroll
                for (int k = R - 1; k >= 0; --k) if (H[k] == top) at = k;
                bi = r0 + lane * R + at + 1;
            }
            if (rh && lane == last / R) {      // the strip's last row, for the next strip
#pragma unroll
                for (int k = 0; k < R; ++k)
                    if (k == last % R) { rh[j] = H[k]; rf[j] = F[k]; }
            }
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const int h2 = __shfl_down_sync(FULL_MASK, bh, o);
        const int j2 = __shfl_down_sync(FULL_MASK, bj, o);
        const int i2 = __shfl_down_sync(FULL_MASK, bi, o);
        if (lane + o < 32 && h2 > 0 && (bh == 0 || win_better(h2, j2, i2, bh, bj, bi))) {
            bh = h2; bj = j2; bi = i2;
        }
    }
    if (lane == 0 && bh > 0) {
        int* cell = out + 3 * (size_t)w;
        if (win_better(bh, bj, bi, cell[0], cell[2], cell[1])) {
            cell[0] = bh; cell[1] = bi; cell[2] = bj;
        }
    }
}
