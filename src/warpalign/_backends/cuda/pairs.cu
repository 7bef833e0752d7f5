// Bulk pair scoring kernels (paper 000): word-wise DPX and bitsliced BPBC.
//
// Conventions (DESIGN.md): rows are query (x) positions, columns target (y) positions; a
// gap of length k costs go + (k-1)*ge; local H >= 0.
//
// Both families use the same wavefront: a group of G consecutive lanes scores one item;
// lane t owns R consecutive rows of the current band of G*R rows and at step s works on
// column c = s - t + 1, receiving H (and F) of the row above its first row by one
// shfl_up per value.  Lane 0 reads the top boundary (band 0) or the band buffer written by
// the last lane of the previous band (in place: column c is read at step c-2 of the next
// band and rewritten at step c+G-2, so no value is overwritten before it is read).
//
// ww_kernel  word-wise: W = 16: two pairs per 32-bit register (DPX s16x2); W = 32: one.
//            Linear gaps store G = H per row and fold the gap into the score
//            (S' = S + g), so a cell is PRMT/LDS (score) + VIADDMNMX + VIMNMX3 (+ IMAD on
//            the FMA pipe) + half a VIMNMX3 for the running max.  DNA scores come from
//            one PRMT with the sign-replicate selector (two 4-byte score columns per
//            step, one selector per row); other scorings read a K x K table in shared
//            memory.  Affine gaps store H' = H + go and E' = E + go (search.cu's bias).
//            The query is aligned to the BOTTOM of its tile (pad rows on top); pad rows
//            take the score of a pad letter and, for global/semiglobal, a per-row floor
//            equal to the top boundary, so they reproduce row 0 exactly and the tile's
//            last row is the query's last row m (global: read at c == n; semiglobal: max
//            over c <= n).  Local pad rows stay 0.  Local 16-bit: an item whose running
//            max reaches `thr` is flagged (no lane can wrap before a correct value >= thr
//            has entered the maximum), so unflagged scores are exact.
//            ENDS (local only): the end cell of each pair whose score S is known (from
//            a scoring run; `target`, real units, 0: no end wanted).  S is the maximum
//            of H, so DESIGN.md's tie rule picks the first column holding S, then the
//            first row in it.  A lane's columns grow with its steps, so the first step of
//            a band at which its running max of the band equals S (stored units) is its
//            first column there, and only then (rare) are its R rows searched for the
//            first one equal to S.  Lanes and bands reduce by (column, row) as one
//            64-bit key (target end << 32 | query end, half-open); no hit: ~0.  The
//            score is written too (the host checks it equals S).  Pad rows stay 0 and
//            pad columns (past a pair's end, scores < 0) stay below S (> 0) or come
//            after the real column holding it, so neither is picked.
//            TRACK (the ENDS form with `target` null): the pair's score is not known; a
//            lane notes, per band, the first cell of its running maximum each time that
//            maximum grows (the first row of the column where it grew: the same rows
//            search, as often as the maximum grows), bands and lanes keep the smallest key
//            among those holding the largest maximum: the same cell as the ENDS form
//            given that maximum, and the score, in one DP instead of two.
// ww_dna     word-wise, DNA local linear 16-bit (the bulk hot path): two columns per
//            iteration (lane t at columns s - 2t, s + 1 - 2t), packed columns (ww_ypack).
// bs_*       bitsliced: 32 pairs per word (bit k = pair k), values as S bit-planes.
//            bs_w2b transposes codes by __ballot_sync, bs_swa runs the paper's circuits
//            (one warp per group of 32 pairs, R rows per lane, C columns per iteration
//            with lane t at columns s - Ct .. s - Ct + C - 1), bs_b2w untransposes.
//            bs_w2b_swap / bs_b2w_swap: the same two steps by the paper's 32x32
//            swap/copy transpose (Table I) in registers, kept for comparison.

#define FULL_MASK 0xffffffffu

// a * one + b on the FMA pipe (IMAD): `one` is a kernel argument (always 1), so the
// compiler cannot fold it and the add stays off the ALU pipe (search.cu's trick).
__device__ __forceinline__ unsigned pr_mad1(unsigned a, unsigned one, unsigned b) {
    unsigned d;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(one), "r"(b));
    return d;
}

// PRMT with the sign-replicate selector bit (bit 3 of a nibble copies the selected byte's
// msb over the byte); __byte_perm masks the selector to 3 bits and cannot do this.
__device__ __forceinline__ unsigned pr_prmt(unsigned a, unsigned b, unsigned s) {
    unsigned d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(s));
    return d;
}

template <int W> struct Lanes;

template <> struct Lanes<16> {
    static constexpr int NEG = -16384;
    static __device__ __forceinline__ unsigned gt(unsigned a, unsigned b) {
        return __vcmpgts2(a, b);                // 0xffff in each half where a > b
    }
    static __device__ __forceinline__ unsigned addmax(unsigned a, unsigned b, unsigned c) {
        return __viaddmax_s16x2(a, b, c);
    }
    static __device__ __forceinline__ unsigned max3(unsigned a, unsigned b, unsigned c) {
        return __vimax3_s16x2(a, b, c);
    }
    static __device__ __forceinline__ unsigned max2(unsigned a, unsigned b) {
        return __vmaxs2(a, b);
    }
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) {
        return __vadd2(a, b);
    }
    static __device__ __forceinline__ unsigned eq(unsigned a, unsigned b) {
        return __vcmpeq2(a, b);                 // 0xffff in each equal half
    }
    static __device__ __forceinline__ unsigned pack(int lo, int hi) {
        return ((unsigned)lo & 0xffffu) | ((unsigned)hi << 16);
    }
    static __device__ __forceinline__ int lo(unsigned v) { return (int)(short)(v & 0xffffu); }
    static __device__ __forceinline__ int hi(unsigned v) { return (int)(short)(v >> 16); }
};

template <> struct Lanes<32> {
    static constexpr int NEG = -(1 << 28);
    static __device__ __forceinline__ unsigned gt(unsigned a, unsigned b) {
        return (int)a > (int)b ? 0xffffffffu : 0u;
    }
    static __device__ __forceinline__ unsigned addmax(unsigned a, unsigned b, unsigned c) {
        return (unsigned)__viaddmax_s32((int)a, (int)b, (int)c);
    }
    static __device__ __forceinline__ unsigned max3(unsigned a, unsigned b, unsigned c) {
        return (unsigned)__vimax3_s32((int)a, (int)b, (int)c);
    }
    static __device__ __forceinline__ unsigned max2(unsigned a, unsigned b) {
        return (unsigned)max((int)a, (int)b);
    }
    static __device__ __forceinline__ unsigned add(unsigned a, unsigned b) { return a + b; }
    static __device__ __forceinline__ unsigned eq(unsigned a, unsigned b) {
        return a == b ? 0xffffffffu : 0u;
    }
    static __device__ __forceinline__ unsigned pack(int lo, int) { return (unsigned)lo; }
    static __device__ __forceinline__ int lo(unsigned v) { return (int)v; }
    static __device__ __forceinline__ int hi(unsigned) { return 0; }
};

#define ALG_LOCAL 0
#define ALG_GLOBAL 1
#define ALG_SEMIGLOBAL 2

// H of row `row` (0-based over the tile, pad rows first) at column 0, real units.
__device__ __forceinline__ int ww_col0(int alg, int q, int go, int ge) {
    // q: query row index (0-based) of that tile row, < 0 for a pad row
    return (alg == ALG_LOCAL || q < 0) ? 0 : -(go + q * ge);
}

// ENDS: the key of the first of a lane's R rows (H stored units, the low or high half)
// equal to `goal` at column j (0-based): target end j + 1 << 32 | query end (q0: the query
// row index of the lane's first row, < 0 inside the pad).
template <int W, int R>
__device__ __forceinline__ unsigned long long ww_key(const unsigned (&h)[R], int goal, bool low,
                                                     int j, int q0) {
    typedef Lanes<W> L;
    int r0 = R;
#pragma unroll
    for (int r = R - 1; r >= 0; --r)
        if ((low ? L::lo(h[r]) : L::hi(h[r])) == goal) r0 = r;
    return ((unsigned long long)(j + 1) << 32) | (unsigned)(q0 + r0 + 1);
}

// Top boundary H[0][c], real units.
__device__ __forceinline__ int ww_top(int alg, int c, int go, int ge) {
    return (alg == ALG_GLOBAL && c > 0) ? -(go + (c - 1) * ge) : 0;
}

// items: W=16: pairs 2i, 2i+1 (the second may be -1); W=32: pair i.  Tile rows
// T = bands*G*R >= every item's m; an item's pad = T - m rows on top.
// table: DNA: 5 words, word y = bytes S'(x, y) for x = 0..3 (y = 4: pad column, all
// bytes -1); else K*K ints S'(x, y) (code K-1 = pad).  S' = S + g for linear gaps.
// bias: g (linear) or go (affine): stored H' = H + bias; linear stores G = H' - g = H.
// bound: per item, (ncols + 2) words of H (and as many of F' after them, affine).
// target, ends (ENDS only, else unread): per pair its score S and its end cell's key.
template <int W, int R, bool AFFINE, int ALG, bool DNA, bool ENDS>
__global__ void __launch_bounds__(256, 2)
ww_kernel(const unsigned char* __restrict__ xcodes, const long long* __restrict__ xoff,
          const unsigned char* __restrict__ ycodes, const long long* __restrict__ yoff,
          const int* __restrict__ items, int nitems, int G, int bands,
          const int* __restrict__ table, int K, int go, int ge, int thr, unsigned one,
          unsigned* __restrict__ bound, long long bstride,
          int* __restrict__ out, int* __restrict__ flagged, int* __restrict__ nflagged,
          const int* __restrict__ target, unsigned long long* __restrict__ ends)
{
    static_assert(!ENDS || ALG == ALG_LOCAL, "end cells: local alignments only");
    typedef Lanes<W> L;
    extern __shared__ int ww_smem[];
    const int twords = DNA ? 5 : K * K;
    for (int k = threadIdx.x; k < twords; k += blockDim.x) ww_smem[k] = table[k];
    __syncthreads();

    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int item = (int)(gtid / G);
    const int t = (int)(gtid % G);
    constexpr bool LOCAL = ALG == ALG_LOCAL;
    constexpr int PAIRS = W == 16 ? 2 : 1;
    int pa = -1, pb = -1;
    if (item < nitems) {
        pa = items[PAIRS * item];
        if (PAIRS == 2) pb = items[PAIRS * item + 1];
    }
    long long oxa = 0, oya = 0, oxb = 0, oyb = 0;
    int ma = 0, na = 0, mb = 0, nb = 0;
    if (pa >= 0) {
        oxa = xoff[pa]; ma = (int)(xoff[pa + 1] - oxa);
        oya = yoff[pa]; na = (int)(yoff[pa + 1] - oya);
    }
    if (pb >= 0) {
        oxb = xoff[pb]; mb = (int)(xoff[pb + 1] - oxb);
        oyb = yoff[pb]; nb = (int)(yoff[pb + 1] - oyb);
    }
    const int ncols = max(na, nb);
    const int steps = (int)__reduce_max_sync(FULL_MASK, (unsigned)ncols) + G - 1;
    const int T = bands * G * R;
    const int pada = T - ma, padb = T - mb;
    const int bias = AFFINE ? go : ge;
    const unsigned bvec = L::pack(bias, bias);
    const unsigned neg_bias = 0u - bvec;        // IMAD: H' - bias when no half borrows
    const unsigned neg_bias2 = L::pack(-bias, -bias);   // per-half add (may go negative)
    const unsigned neg_go = L::pack(-go, -go), neg_ge = L::pack(-ge, -ge);
    const unsigned negv = L::pack(L::NEG, L::NEG);
    const unsigned ypad = DNA ? 4u : (unsigned)(K - 1);

    const unsigned best0 = LOCAL ? (AFFINE ? bvec : 0u) : negv;
    unsigned best = best0;                // ENDS: the running max of the band
    unsigned total = best0;               // ENDS: the max over the bands done
    int res_a = L::NEG, res_b = L::NEG;   // global / semiglobal readout, real units
    // ENDS: S per pair in stored units (-1, never stored, for no end), the first cell's key
    unsigned goal = 0u;
    unsigned long long key_a = ~0ull, key_b = ~0ull;
    const bool track = ENDS && target == nullptr;   // TRACK: S is this run's own maximum
    unsigned long long band_a = ~0ull, band_b = ~0ull;  // TRACK: the band's first cells
    if (ENDS && !track) {
        const int sa = pa >= 0 ? target[pa] : 0, sb = pb >= 0 ? target[pb] : 0;
        const int sub = AFFINE ? go : 0;
        goal = L::pack(sa > 0 ? sa + sub : -1, sb > 0 ? sb + sub : -1);
    }
    unsigned* bufh = bound + (size_t)item * (size_t)bstride;
    unsigned* buff = bufh + (ncols + 2);

    for (int band = 0; band < bands; ++band) {
        const int row0 = band * G * R + t * R;   // first tile row of this lane
        unsigned found = 0u;                     // ENDS: halves whose band hit is recorded
        if (ENDS) best = best0;
        if (track) band_a = band_b = ~0ull;
        // per-row constants: score selector / table offsets, initial H (col 0), E', floor
        unsigned sel[R], Hc[R], Ec[R], fl[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int qa = row0 + r - pada, qb = row0 + r - padb;
            const int xa = qa >= 0 ? (int)xcodes[oxa + qa] : -1;
            const int xb = (PAIRS == 2 && qb >= 0) ? (int)xcodes[oxb + qb] : -1;
            if (DNA) {
                if (W == 16) {
                    const unsigned sa = xa >= 0 ? (unsigned)(xa | ((xa | 8) << 4)) : 0x88u;
                    const unsigned sb = xb >= 0 ? (unsigned)((4 + xb) | ((4 + xb) | 8) << 4)
                                                : 0xCCu;
                    sel[r] = sa | (sb << 8);
                } else {
                    sel[r] = xa >= 0 ? (unsigned)(xa | ((xa | 8) << 4) | ((xa | 8) << 8)
                                                  | ((xa | 8) << 12))
                                     : 0x8888u;
                }
            } else {
                const unsigned ka = (unsigned)((xa >= 0 ? xa : K - 1) * K);
                const unsigned kb = (unsigned)((xb >= 0 ? xb : K - 1) * K);
                sel[r] = W == 16 ? (ka | (kb << 16)) : ka;
            }
            const int ha = ww_col0(ALG, qa, go, ge), hb = ww_col0(ALG, qb, go, ge);
            Hc[r] = AFFINE ? L::pack(ha + go, hb + go) : L::pack(ha, hb);
            Ec[r] = LOCAL ? 0u : negv;
            // floor (non-local): pad rows track the top boundary (H' units), others NEG
            fl[r] = L::pack(qa < 0 ? bias : L::NEG, qb < 0 ? bias : L::NEG);
        }
        // inputs from the row above the lane's rows (stored units): hd = diag, hu = up,
        // fu = F', by shuffle from the lane above (lane 0: the boundary)
        unsigned hd, hu, fu;
        {
            const int qa = row0 - 1 - pada, qb = row0 - 1 - padb;
            const int ia = ww_col0(ALG, qa, go, ge), ib = ww_col0(ALG, qb, go, ge);
            hd = 0u;
            hu = AFFINE ? L::pack(ia + go, ib + go) : L::pack(ia, ib);
            fu = 0u;
        }
        if (t == 0) {
            if (band == 0) {
                const int c0 = ww_top(ALG, 0, go, ge), c1 = ww_top(ALG, 1, go, ge);
                hd = AFFINE ? L::pack(c0 + go, c0 + go) : L::pack(c0, c0);
                hu = AFFINE ? L::pack(c1 + go, c1 + go) : L::pack(c1, c1);
                fu = L::pack(c1, c1);
            } else {
                hd = hu;                  // column 0 of the row above (computed above)
                hu = ncols >= 1 ? bufh[1] : 0u;
                fu = ncols >= 1 ? buff[1] : 0u;
            }
        }
        const bool last_band = band == bands - 1;
        // the target codes of the lane's column, loaded one step ahead
        unsigned ya = ypad, yb = ypad;
        int j0 = -t;                           // the lane's column index this step
        unsigned ya_n = ypad, yb_n = ypad;
        if (j0 >= 0 && j0 < na) ya_n = ycodes[oya + j0];
        if (PAIRS == 2 && j0 >= 0 && j0 < nb) yb_n = ycodes[oyb + j0];

        for (int s = 0; s < steps; ++s, ++j0) {
            ya = ya_n; yb = yb_n;
            ya_n = ypad; yb_n = ypad;
            if (j0 + 1 >= 0 && j0 + 1 < na) ya_n = ycodes[oya + j0 + 1];
            if (PAIRS == 2 && j0 + 1 >= 0 && j0 + 1 < nb) yb_n = ycodes[oyb + j0 + 1];
            unsigned outh, outf;
            {
                const int j = j0;
                // local: columns outside [0, ncols) hold pad letters (scores <= 0) and the
                // state there is all zeros, so computing them changes nothing
                const bool active = LOCAL || (j >= 0 && j < ncols);
                unsigned f = fu;
                if (active) {
                    const int c = j + 1;
                    if (ALG == ALG_GLOBAL) {
                        const unsigned dec = c == 1 ? neg_go : neg_ge;
#pragma unroll
                        for (int k = 0; k < R; ++k)
                            fl[k] = L::addmax(fl[k], dec, negv);
                    }
                    unsigned ta = 0, tb = 0;
                    const int* tya = nullptr;
                    const int* tyb = nullptr;
                    if (DNA) {
                        ta = (unsigned)ww_smem[ya];
                        tb = PAIRS == 2 ? (unsigned)ww_smem[yb] : 0u;
                    } else {
                        tya = ww_smem + ya;
                        tyb = ww_smem + yb;
                    }
                    unsigned diag = hd, up = hu;
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        unsigned sc;
                        if (DNA) {
                            sc = pr_prmt(ta, tb, sel[r]);
                        } else if (W == 16) {
                            sc = __byte_perm((unsigned)tya[sel[r] & 0xffffu],
                                             (unsigned)tyb[sel[r] >> 16], 0x5410);
                        } else {
                            sc = (unsigned)tya[sel[r]];
                        }
                        const unsigned floor_r = LOCAL ? bvec : fl[r];
                        if (!AFFINE) {
                            const unsigned a = L::addmax(diag, sc, up);
                            const unsigned h = L::max3(a, Hc[r], floor_r);
                            diag = Hc[r];
                            const unsigned g = (LOCAL || W == 32) ? pr_mad1(h, one, neg_bias)
                                                                  : L::add(h, neg_bias2);
                            Hc[r] = g;
                            up = g;
                        } else {
                            const unsigned a = L::addmax(diag, sc, f);
                            const unsigned h = L::max3(a, Ec[r], floor_r);
                            diag = Hc[r];
                            Hc[r] = h;
                            const unsigned ht = (LOCAL || W == 32) ? pr_mad1(h, one, neg_bias)
                                                                   : L::add(h, neg_bias2);
                            Ec[r] = L::addmax(Ec[r], neg_ge, ht);
                            f = L::addmax(f, neg_ge, ht);
                        }
                    }
                    if (LOCAL) {
                        const unsigned before = best;
#pragma unroll
                        for (int k = 0; k + 1 < R; k += 2)
                            best = L::max3(best, Hc[k], Hc[k + 1]);
                        if (R & 1) best = L::max2(best, Hc[R - 1]);
                        if (track) {
                            const unsigned grew = L::gt(best, before);
                            if (grew) {     // a new maximum: its first row in this column
                                if (grew & 0xffffu)
                                    band_a = ww_key<W, R>(Hc, L::lo(best), true, j, row0 - pada);
                                if (PAIRS == 2 && (grew >> 16))
                                    band_b = ww_key<W, R>(Hc, L::hi(best), false, j,
                                                          row0 - padb);
                            }
                        } else if (ENDS) {
                            const unsigned hit = L::eq(best, goal) & ~found;
                            if (hit) {      // this lane's first column of the band with S
                                found |= hit;
                                if (hit & 0xffffu) key_a = min(key_a, ww_key<W, R>(
                                    Hc, L::lo(goal), true, j, row0 - pada));
                                if (PAIRS == 2 && (hit >> 16)) key_b = min(key_b, ww_key<W, R>(
                                    Hc, L::hi(goal), false, j, row0 - padb));
                            }
                        }
                    }
                }
                outh = Hc[R - 1];
                outf = f;
                if (t == G - 1 && j >= 0 && j < ncols) {
                    const int c = j + 1;
                    if (!last_band) {
                        bufh[c] = outh;
                        if (AFFINE) buff[c] = f;
                    } else if (!LOCAL) {
                        const int va = L::lo(outh) - (AFFINE ? go : 0);
                        const int vb = L::hi(outh) - (AFFINE ? go : 0);
                        if (ALG == ALG_GLOBAL) {
                            if (c == na) res_a = va;
                            if (c == nb) res_b = vb;
                        } else {
                            if (c <= na) res_a = max(res_a, va);
                            if (c <= nb) res_b = max(res_b, vb);
                        }
                    }
                }
            }
            unsigned rh = __shfl_up_sync(FULL_MASK, outh, 1, G);
            unsigned rf = AFFINE ? __shfl_up_sync(FULL_MASK, outf, 1, G) : 0u;
            if (t == 0) {   // the row above lane 0: the top boundary or the band buffer
                const int c = s + 2;
                if (band == 0) {
                    const int v = ww_top(ALG, c, go, ge);
                    rh = AFFINE ? L::pack(v + go, v + go) : L::pack(v, v);
                    rf = L::pack(v, v);
                } else {
                    rh = c <= ncols ? bufh[c] : 0u;
                    rf = (AFFINE && c <= ncols) ? buff[c] : 0u;
                }
            }
            hd = hu;
            hu = rh;
            fu = rf;
        }
        if (track) {        // the band's cells against the bands before: larger, or tied
            const unsigned more = L::gt(best, total), same = L::eq(best, total);
            if (more & 0xffffu) key_a = band_a;
            else if (same & 0xffffu) key_a = min(key_a, band_a);
            if (PAIRS == 2) {
                if (more >> 16) key_b = band_b;
                else if (same >> 16) key_b = min(key_b, band_b);
            }
        }
        if (ENDS) total = L::max2(total, best);
    }
    if (ENDS) {
        best = total;
        if (track) {        // only the lanes holding the item's maximum keep their cell
            unsigned top = total;
            for (int o = 1; o < G; o <<= 1)
                top = L::max2(top, __shfl_xor_sync(FULL_MASK, top, o, G));
            const unsigned at = L::eq(total, top);
            if (!(at & 0xffffu)) key_a = ~0ull;
            if (PAIRS == 2 && !(at >> 16)) key_b = ~0ull;
        }
        for (int o = 1; o < G; o <<= 1) {
            key_a = min(key_a, __shfl_xor_sync(FULL_MASK, key_a, o, G));
            key_b = min(key_b, __shfl_xor_sync(FULL_MASK, key_b, o, G));
        }
    }
    if (LOCAL) {
        for (int o = 1; o < G; o <<= 1) best = L::max2(best, __shfl_xor_sync(FULL_MASK, best, o, G));
        if (t == 0 && item < nitems) {
            const int sub = AFFINE ? go : 0;
            const int ba = L::lo(best), bb = L::hi(best);
            if (pa >= 0) {
                out[pa] = ba - sub;
                if (ENDS) ends[pa] = key_a;
                if (ba >= thr) flagged[atomicAdd(nflagged, 1)] = pa;
            }
            if (pb >= 0) {
                out[pb] = bb - sub;
                if (ENDS) ends[pb] = key_b;
                if (bb >= thr) flagged[atomicAdd(nflagged, 1)] = pb;
            }
        }
    } else if (t == G - 1 && item < nitems) {
        if (pa >= 0) out[pa] = res_a;
        if (pb >= 0) out[pb] = res_b;
    }
}

// ---------------------------------------------------------------------------------------
// Bitsliced (paper 000).  Planes of one position: uint4 (low code bit, high code bit, pad).

// The group whose chunk range [chunk_start[g], chunk_start[g+1]) holds chunk w.
__device__ __forceinline__ int bs_chunk_group(const long long* __restrict__ chunk_start,
                                              int ngroups, long long w) {
    int lo = 0, hi = ngroups - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (chunk_start[mid] <= w) lo = mid; else hi = mid - 1;
    }
    return lo;
}

// W2B: work item w covers positions [32k, 32k+32) of group g (chunk_start[g] <= w <
// chunk_start[g+1]); lane k loads pair k's code at each position (pad past its end or for
// an empty lane), three ballots make the three planes, lane i keeps position 32k+i.
__global__ void bs_w2b(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
                       const int* __restrict__ seq, const long long* __restrict__ chunk_start,
                       const long long* __restrict__ plane_off, const int* __restrict__ rows,
                       int ngroups, long long nchunks, uint4* __restrict__ planes)
{
    const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= nchunks) return;   // warp-uniform
    const int g = bs_chunk_group(chunk_start, ngroups, w);
    const int i0 = (int)(w - chunk_start[g]) * 32;
    const int p = seq[g * 32 + lane];
    long long start = 0;
    int len = 0;
    if (p >= 0) { start = offsets[p]; len = (int)(offsets[p + 1] - start); }
    uint4 mine = make_uint4(0, 0, ~0u, 0);
#pragma unroll 4
    for (int i = 0; i < 32; ++i) {
        const int pos = i0 + i;
        const unsigned v = pos < len ? (unsigned)codes[start + pos] : 4u;
        const unsigned b0 = __ballot_sync(FULL_MASK, v & 1u);
        const unsigned b1 = __ballot_sync(FULL_MASK, v & 2u);
        const unsigned b2 = __ballot_sync(FULL_MASK, v & 4u);
        if (lane == i) mine = make_uint4(b0, b1, b2, 0);
    }
    if (i0 + lane < rows[g]) planes[plane_off[g] + i0 + lane] = mine;
}

// B2W: result (groups, S) planes -> score of the pair in lane k of group g (a bit gather
// per pair; the default, transpose="ballot", with bs_w2b).
__global__ void bs_b2w(const unsigned* __restrict__ result, int S, const int* __restrict__ pair_of,
                       int npairs, int* __restrict__ out)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= npairs) return;
    const int g = i >> 5, k = i & 31;
    int v = 0;
    for (int b = 0; b < S; ++b) v |= (int)((result[(size_t)g * S + b] >> k) & 1u) << b;
    out[pair_of[i]] = v;
}

// ---- The paper's transpose (Table I), kept as the selectable alternative to the ballot
// W2B / bit-gather B2W above for comparison (pairs.py: transpose="swap"; measured in
// docs/gpu-notes.md "Pairs").  Hacker's Delight's 32x32 swap network in registers, with
// the paper's copy shortcut: while the block size k is at least S (the significant bits
// of every word), the upper half of every 2k-bit block is empty, so a swap is a copy
// and the lower rows die (s = 3: 31 copies + 2 swaps, Table I's row s = 3).  Bit c of
// a[r] (bit 0 = least significant) ends as bit r of a[c].  The 64x64 uint64 version of
// the CPU (cpu/bitsliced.py transpose_w2b / transpose_b2w) is the same network one stage
// longer.
__host__ __device__ __forceinline__ unsigned hd_mask(int lg) {
    return lg == 0 ? 0x55555555u : lg == 1 ? 0x33333333u : lg == 2 ? 0x0F0F0F0Fu
         : lg == 3 ? 0x00FF00FFu : 0x0000FFFFu;
}

// Words a[0..31] using only bits < S -> a[b] (b < S) holds bit b of every word (bit k
// from word k); a[S..31] are dead afterwards.
template <int S>
__host__ __device__ __forceinline__ void hd_w2b32(unsigned (&a)[32]) {
    int live = 32;
#pragma unroll
    for (int lg = 4; lg >= 0; --lg) {
        const int k = 1 << lg;
        const unsigned m = hd_mask(lg);
#pragma unroll
        for (int r = 0; r < 32; ++r) {
            if (r < live && (r & k) == 0) {
                if (k >= S) {          // copy
                    a[r] = (a[r] & m) | ((a[r + k] & m) << k);
                } else {               // swap
                    const unsigned c = ((a[r] >> k) ^ a[r + k]) & m;
                    a[r] ^= c << k;
                    a[r + k] ^= c;
                }
            }
        }
        if (k >= S) live = k;
    }
}

// Inverse of hd_w2b32: S bit planes a[0..S-1] -> a[k] = the S-bit value of lane k (the
// same operations backwards; a copy's inverse splits a word in two).  a[S..P-1] must be
// zero (P: the smallest power of two >= S); a[P..31] are not read.
template <int S>
__host__ __device__ __forceinline__ void hd_b2w32(unsigned (&a)[32]) {
    int live = 32;
#pragma unroll
    for (int lg = 4; lg >= 0; --lg)
        if ((1 << lg) >= S) live = 1 << lg;
#pragma unroll
    for (int lg = 0; lg <= 4; ++lg) {
        const int k = 1 << lg;
        const unsigned m = hd_mask(lg);
        if (k >= S) live = 2 * k;
#pragma unroll
        for (int r = 0; r < 32; ++r) {
            if (r < live && (r & k) == 0) {
                if (k >= S) {          // split
                    a[r + k] = (a[r] >> k) & m;
                    a[r] &= m;
                } else {               // swap
                    const unsigned c = ((a[r] >> k) ^ a[r + k]) & m;
                    a[r] ^= c << k;
                    a[r + k] ^= c;
                }
            }
        }
    }
}

// W2B by the swap/copy transpose: same work items and output as bs_w2b, but lane i owns
// position 32k+i and loads the code of all 32 pairs there (each load instruction reads
// 32 consecutive bytes of one sequence: coalesced), then transposes the 32 words
// code | pad << 2 into the three planes in registers.  The 32 pairs' (start, length)
// come from a warp-private shared array (one broadcast LDS.128 a pair).  Blocks of at
// most 256 threads.
__global__ void __launch_bounds__(256) bs_w2b_swap(const unsigned char* __restrict__ codes,
                            const long long* __restrict__ offsets, const int* __restrict__ seq,
                            const long long* __restrict__ chunk_start,
                            const long long* __restrict__ plane_off, const int* __restrict__ rows,
                            int ngroups, long long nchunks, uint4* __restrict__ planes)
{
    const long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (w >= nchunks) return;   // warp-uniform
    const int g = bs_chunk_group(chunk_start, ngroups, w);
    const int pos = (int)(w - chunk_start[g]) * 32 + lane;
    const int p = seq[g * 32 + lane];
    __shared__ longlong2 info_all[8][32];
    longlong2* info = info_all[threadIdx.x >> 5];
    long long start = 0, len = 0;
    if (p >= 0) { start = offsets[p]; len = offsets[p + 1] - start; }
    info[lane] = make_longlong2(start, len);
    __syncwarp();
    unsigned a[32];
#pragma unroll
    for (int k = 0; k < 32; ++k) {
        const longlong2 v = info[k];
        a[k] = pos < v.y ? (unsigned)codes[v.x + pos] : 4u;
    }
    hd_w2b32<3>(a);
    if (pos < rows[g]) planes[plane_off[g] + pos] = make_uint4(a[0], a[1], a[2], 0u);
}

// B2W by the inverse network: one thread per group of 32 pairs.
template <int S>
__global__ void bs_b2w_swap(const unsigned* __restrict__ result, const int* __restrict__ pair_of,
                            int npairs, int* __restrict__ out)
{
    const int g = blockIdx.x * blockDim.x + threadIdx.x;
    if (g * 32 >= npairs) return;
    unsigned a[32];
#pragma unroll
    for (int b = 0; b < 32; ++b) a[b] = b < S ? result[(size_t)g * S + b] : 0u;
    hd_b2w32<S>(a);
#pragma unroll
    for (int k = 0; k < 32; ++k)
        if (g * 32 + k < npairs) out[pair_of[g * 32 + k]] = (int)a[k];
}

// x >= y borrow chain: p = 1 where x < y (greaterthan of the paper), then max.
template <int S>
__device__ __forceinline__ void bs_max(unsigned (&d)[S], const unsigned (&x)[S], const unsigned (&y)[S]) {
    unsigned p = ~x[0] & y[0];
#pragma unroll
    for (int b = 1; b < S; ++b) p = (~x[b] & (y[b] | p)) | (y[b] & p);
#pragma unroll
    for (int b = 0; b < S; ++b) d[b] = x[b] ^ ((x[b] ^ y[b]) & p);
}

// max(x, y) where y counts only in the lanes of `keep` (elsewhere y is "negative").
template <int S>
__device__ __forceinline__ void bs_max_keep(unsigned (&d)[S], const unsigned (&x)[S],
                                            const unsigned (&y)[S], unsigned keep) {
    unsigned p = ~x[0] & y[0];
#pragma unroll
    for (int b = 1; b < S; ++b) p = (~x[b] & (y[b] | p)) | (y[b] & p);
    p &= keep;
#pragma unroll
    for (int b = 0; b < S; ++b) d[b] = x[b] ^ ((x[b] ^ y[b]) & p);
}


// ---------------------------------------------------------------------------------------
// Word-wise DNA, local, linear gap, 16-bit lanes: the bulk-pair hot path (ww_dna).
//
// Same tiles, cell and PRMT score as ww_kernel<16, R, false, LOCAL, true>, with the
// per-step overhead out of the hot loop (SASS counts in docs/gpu-notes.md, "Pairs"):
// * ww_ypack first writes, per item, one byte per column: 8 * (5 * ya + yb) (code 4 =
//   pad), 2G pad columns in front and enough behind that no read needs a bound check.
//   The byte is the shared-memory address of a uint2 (T[ya], T[yb]): one LDG.U8 and one
//   LDS.64 per step give both score words with no ALU instruction.
// * Two columns per iteration with two register sets (HA -> HB -> HA): no H needs a
//   register move (ww_kernel's one-step loop spends ~37 IMAD.MOV per step on them).
// * Lane t works on columns s - 2t and s + 1 - 2t, so both inputs from the row above come
//   from lane t-1's previous iteration and the two columns' row chains overlap (column
//   B's row r needs only column A's row r): ptxas interleaves them.
// * Lane 0's row above (0 in band 0) by an IMAD with a 0/1 factor, not a select.
// Per cell pair: PRMT + VIADDMNMX + VIMNMX3 + 1/2 VIMNMX3 (running max) on the ALU pipe,
// one IMAD (H' - g) on the FMA pipe.

// The guard of ww_ypack and ww_dna: the encode engine's flags (encode.cu: x side's first
// bad character and largest code, then y side's).  For CuPy inputs the host queues both
// kernels before it has read the flags (pairs_ahead.py: a plan for codes A C G T only);
// when either side has a code above 3 (an N, IUPAC, or 255 for a character without a
// code) both return at once, writing nothing, and the host discards the scores and names
// the bad character or scores the codes again on the path planned for them.  Callers
// without flags pass four zero words (always open).
__device__ __forceinline__ bool ww_guard_closed(const unsigned long long* __restrict__ guard)
{
    return guard[1] > 3ull || guard[3] > 3ull;
}

// One item of ww_ypack's plan (ww_ypack_raw's too): its two pairs' y offsets and lengths
// (0 and 0 for a missing pair: items past nitems, or -1), its first packed byte and words.
struct YItem { long long oa, ob, base; int na, nb, words; };
__device__ __forceinline__ YItem ypack_item(const int* __restrict__ items, int nitems,
                                            const long long* __restrict__ yoff,
                                            const long long* __restrict__ ypoff, int i)
{
    YItem it{0, 0, ypoff[i], 0, 0, 0};
    const int pa = i < nitems ? items[2 * i] : -1;
    const int pb = i < nitems ? items[2 * i + 1] : -1;
    if (pa >= 0) { it.oa = yoff[pa]; it.na = (int)(yoff[pa + 1] - it.oa); }
    if (pb >= 0) { it.ob = yoff[pb]; it.nb = (int)(yoff[pb + 1] - it.ob); }
    it.words = (int)((ypoff[i + 1] - it.base) >> 2);
    return it;
}

// items' packed columns: item i's bytes start at ypoff[i]; byte k holds column k - front.
// Codes are clamped to 4 (the pad): whatever the codes, every byte addresses one of the
// 25 entries of ww_dna's pair table, so no byte can lead a read out of it.
__global__ void ww_ypack(const unsigned char* __restrict__ ycodes, const long long* __restrict__ yoff,
                         const int* __restrict__ items, int nitems, int front,
                         const long long* __restrict__ ypoff, int nall,
                         unsigned* __restrict__ ypk, const unsigned long long* __restrict__ guard)
{
    if (ww_guard_closed(guard)) return;
    for (int i = blockIdx.x; i < nall; i += gridDim.x) {
        const YItem it = ypack_item(items, nitems, yoff, ypoff, i);
        const long long oa = it.oa, ob = it.ob, base = it.base;
        const int na = it.na, nb = it.nb, words = it.words;
        for (int w = threadIdx.x; w < words; w += blockDim.x) {
            unsigned v = 0u;
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                const int j = 4 * w + b - front;
                const unsigned ya = (j >= 0 && j < na) ? min((unsigned)ycodes[oa + j], 4u) : 4u;
                const unsigned yb = (j >= 0 && j < nb) ? min((unsigned)ycodes[ob + j], 4u) : 4u;
                v |= (8u * (5u * ya + yb)) << (8 * b);
            }
            ypk[(base >> 2) + w] = v;
        }
    }
}

// ww_ypack_raw's reads: the characters of columns j0..j0+3 of one pair (at raw + o, n of
// them) as one word, byte b column j0 + b (0 where the column is outside 0..n-1); one
// word load where all four are inside and 4-aligned.
__device__ __forceinline__ unsigned ypack_chars4(const unsigned char* __restrict__ raw,
                                                 long long o, int j0, int n)
{
    const unsigned char* p = raw + o + j0;
    if (j0 >= 0 && j0 + 4 <= n && (reinterpret_cast<unsigned long long>(p) & 3ull) == 0)
        return __ldg(reinterpret_cast<const unsigned*>(p));
    unsigned v = 0u;
#pragma unroll
    for (int b = 0; b < 4; ++b)
        if (j0 + b >= 0 && j0 + b < n) v |= (unsigned)p[b] << (8 * b);
    return v;
}

// ...and their codes by the table t (shared), one byte each, clamped to 4 (4 also outside
// the pair); top keeps the largest code of each byte lane (__vmaxu4) of the columns inside.
__device__ __forceinline__ unsigned ypack_codes4(const unsigned char* t, unsigned v, int j0,
                                                 int n, unsigned& top)
{
    unsigned c = (unsigned)t[v & 255u] | (unsigned)t[(v >> 8) & 255u] << 8
                 | (unsigned)t[(v >> 16) & 255u] << 16 | (unsigned)t[v >> 24] << 24;
    if (j0 < 0 || j0 + 4 > n) {            // a pair's first or last columns: only those inside
        unsigned inside = 0u;
#pragma unroll
        for (int b = 0; b < 4; ++b)
            if (j0 + b >= 0 && j0 + b < n) inside |= 0xffu << (8 * b);
        c = (c & inside) | (0x04040404u & ~inside);
        top = __vmaxu4(top, c & inside);
        return __vminu4(c, 0x04040404u);
    }
    top = __vmaxu4(top, c);
    return __vminu4(c, 0x04040404u);
}

// ww_ypack from the characters: the y side's encode (encode.cu's table) and ww_ypack's
// columns in one pass, no code array between them (issue 22: encode_bytes' write and
// ww_ypack's read of 134 MB of codes). Every character of y belongs to one pair and every
// pair to one item of the plan's launches, so each is read once; the largest code goes to
// flags[1] (atomicMax, as encode_bytes sets its second word: 255 for a character without
// a code). Not the first bad character's index: the caller encodes y again by
// encode_bytes for that (an error, or a code above 3: the batch is scored from codes).
// No guard: the flags are this kernel's to make (ww_dna, queued after it, reads them);
// the columns are written whatever the codes (clamped to 4: every byte stays an address
// of ww_dna's pair table). A thread loads YP_WORDS words of each pair before it writes
// any (loads in flight for HBM's latency).
#define YP_WORDS 4
__global__ void ww_ypack_raw(const unsigned char* __restrict__ raw, const long long* __restrict__ yoff,
                             const int* __restrict__ items, int nitems, int front,
                             const long long* __restrict__ ypoff, int nall,
                             unsigned* __restrict__ ypk, const unsigned char* __restrict__ table,
                             unsigned long long* __restrict__ flags)
{
    __shared__ unsigned char t[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) t[i] = table[i];
    __syncthreads();
    unsigned top = 0u;                        // per byte lane
    for (int i = blockIdx.x; i < nall; i += gridDim.x) {
        const YItem it = ypack_item(items, nitems, yoff, ypoff, i);
        const long long oa = it.oa, ob = it.ob, base = it.base;
        const int na = it.na, nb = it.nb, words = it.words;
        for (int w0 = threadIdx.x; w0 < words; w0 += YP_WORDS * blockDim.x) {
            unsigned va[YP_WORDS], vb[YP_WORDS];
#pragma unroll
            for (int u = 0; u < YP_WORDS; ++u) {
                const int j0 = 4 * (w0 + u * (int)blockDim.x) - front;  // past words: pad
                va[u] = ypack_chars4(raw, oa, j0, na);
                vb[u] = ypack_chars4(raw, ob, j0, nb);
            }
#pragma unroll
            for (int u = 0; u < YP_WORDS; ++u) {
                const int w = w0 + u * (int)blockDim.x;
                if (w >= words) break;
                const unsigned ya = ypack_codes4(t, va[u], 4 * w - front, na, top);
                const unsigned yb = ypack_codes4(t, vb[u], 4 * w - front, nb, top);
                // per byte 8 * (5 * ya + yb): no carry between bytes (at most 8 * 24)
                ypk[(base >> 2) + w] = 40u * ya + 8u * yb;
            }
        }
    }
    top = __vmaxu4(top, top >> 16);
    top = __vmaxu4(top, top >> 8) & 255u;
    top = __reduce_max_sync(FULL_MASK, top);
    if ((threadIdx.x & 31) == 0 && top) atomicMax(&flags[1], (unsigned long long)top);
}

template <int R>
__device__ __forceinline__ void ww_dna_step(const unsigned (&sel)[R], const unsigned (&Hi)[R],
                                            unsigned (&Ho)[R], unsigned diag, unsigned up,
                                            uint2 tt, unsigned bvec, unsigned one,
                                            unsigned neg_bias, unsigned& best)
{
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const unsigned sc = pr_prmt(tt.x, tt.y, sel[r]);
        const unsigned a = __viaddmax_s16x2(diag, sc, up);
        const unsigned h = __vimax3_s16x2(a, Hi[r], bvec);
        diag = Hi[r];
        const unsigned g = pr_mad1(h, one, neg_bias);   // H' - g, no half borrows (H' >= g)
        Ho[r] = g;
        up = g;
    }
#pragma unroll
    for (int r = 0; r + 1 < R; r += 2) best = __vimax3_s16x2(best, Ho[r], Ho[r + 1]);
    if (R & 1) best = __vmaxs2(best, Ho[R - 1]);
}

// w[k] = the k-th 32-bit word from the one holding byte a (R/4 + 1 words cover bytes a ..
// a + R - 1 at any alignment); the caller's buffer has 4 readable bytes past its end.
template <int R>
__device__ __forceinline__ void ww_words(const unsigned char* __restrict__ x, long long a,
                                         unsigned (&w)[R / 4 + 1])
{
    static_assert(R % 4 == 0, "ww_dna: rows per lane must be a multiple of 4");
    const unsigned* p = reinterpret_cast<const unsigned*>(x) + (a >> 2);
#pragma unroll
    for (int k = 0; k <= R / 4; ++k) w[k] = __ldg(p + k);
}

// ypk / ypoff: ww_ypack's columns; guard: as ww_ypack's (when closed the whole grid returns
// at once: out, flagged and nflagged are left as they are).  Other arguments as ww_kernel
// (local, linear, DNA).
template <int R, bool BANDED, bool PF>
__global__ void __launch_bounds__(256, 2)
ww_dna(const unsigned char* __restrict__ xcodes, const long long* __restrict__ xoff,
       const long long* __restrict__ yoff, const unsigned char* __restrict__ ypk,
       const long long* __restrict__ ypoff, const int* __restrict__ items, int nitems, int G,
       int bands, const int* __restrict__ table, int ge, int thr, unsigned one,
       unsigned* __restrict__ bound, long long bstride,
       int* __restrict__ out, int* __restrict__ flagged, int* __restrict__ nflagged,
       const unsigned long long* __restrict__ guard)
{
    if (ww_guard_closed(guard)) return;     // before __syncthreads: every thread returns
    __shared__ uint2 pairtab[25];
    if (threadIdx.x < 25)
        pairtab[threadIdx.x] = make_uint2((unsigned)table[threadIdx.x / 5],
                                          (unsigned)table[threadIdx.x % 5]);
    __syncthreads();
    const char* tab = reinterpret_cast<const char*>(pairtab);

    const long long gtid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int item = (int)(gtid / G);
    const int t = (int)(gtid % G);
    int pa = -1, pb = -1;
    if (item < nitems) { pa = items[2 * item]; pb = items[2 * item + 1]; }
    long long oxa = 0, oxb = 0;
    int ma = 0, na = 0, mb = 0, nb = 0;
    if (pa >= 0) {
        oxa = xoff[pa]; ma = (int)(xoff[pa + 1] - oxa);
        na = (int)(yoff[pa + 1] - yoff[pa]);
    }
    if (pb >= 0) {
        oxb = xoff[pb]; mb = (int)(xoff[pb + 1] - oxb);
        nb = (int)(yoff[pb + 1] - yoff[pb]);
    }
    const int ncols = max(na, nb);
    int steps = (int)__reduce_max_sync(FULL_MASK, (unsigned)ncols) + 2 * (G - 1);
    steps += steps & 1;                       // two steps per iteration (pad columns)
    const int T = bands * G * R;
    const int pada = T - ma, padb = T - mb;
    const unsigned bvec = (unsigned)ge | ((unsigned)ge << 16);
    const unsigned neg_bias = 0u - bvec;
    const unsigned first = t == 0 ? 0u : 1u;  // lane 0: the row above is 0 (band 0)
    unsigned best = 0u;
    unsigned* bufh = bound + (size_t)(item < nitems ? item : 0) * (size_t)bstride;
    // item slots past nitems have packed columns too (all pad): ypoff has one per G threads
    // byte s: this lane's first column at step s (columns s - 2t, s + 1 - 2t)
    const unsigned char* yp = ypk + ypoff[item] + 2 * (G - t);

    for (int band = 0; band < bands; ++band) {
        const int row0 = band * G * R + t * R;
        unsigned sel[R], HA[R], HB[R];
        const int qa0 = row0 - pada, qb0 = row0 - padb;
        if (qa0 >= 0 && qb0 >= 0) {
            // every row of both pairs is real: R/4 + 1 word loads per sequence instead of
            // R byte loads (lanes R bytes apart: each byte load instruction touched 32 L2
            // sectors; the byte loads were the kernel's fixed ~20 us, docs/gpu-notes.md)
            unsigned wa[R / 4 + 1], wb[R / 4 + 1];
            ww_words<R>(xcodes, oxa + qa0, wa);
            ww_words<R>(xcodes, oxb + qb0, wb);
            const unsigned sha = (unsigned)((oxa + qa0) & 3) * 8u;
            const unsigned shb = (unsigned)((oxb + qb0) & 3) * 8u;
#pragma unroll
            for (int k = 0; k < R / 4; ++k) {
                const unsigned va = __funnelshift_r(wa[k], wa[k + 1], sha);
                const unsigned vb = __funnelshift_r(wb[k], wb[k + 1], shb);
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const unsigned xa = (va >> (8 * j)) & 0xffu, xb = (vb >> (8 * j)) & 0xffu;
                    sel[4 * k + j] = (xa | ((xa | 8u) << 4)) | (((4u + xb) | ((4u + xb) | 8u) << 4) << 8);
                    HA[4 * k + j] = 0u;
                }
            }
        } else {
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int qa = qa0 + r, qb = qb0 + r;
                const int xa = qa >= 0 ? (int)xcodes[oxa + qa] : -1;
                const int xb = qb >= 0 ? (int)xcodes[oxb + qb] : -1;
                const unsigned sa = xa >= 0 ? (unsigned)(xa | ((xa | 8) << 4)) : 0x88u;
                const unsigned sb = xb >= 0 ? (unsigned)((4 + xb) | ((4 + xb) | 8) << 4) : 0xCCu;
                sel[r] = sa | (sb << 8);
                HA[r] = 0u;
            }
        }
        const bool rd = BANDED && t == 0 && band > 0;
        const bool wr = BANDED && t == G - 1 && band < bands - 1;
        unsigned c0 = yp[0], c1 = yp[1];
        const unsigned char* yq = yp;         // PF: this iteration's column bytes
        // lane t works on columns s - 2t and s + 1 - 2t: both inputs from the row above
        // come from lane t-1's previous iteration, so the two steps' row chains overlap
        // (step B's row r needs only step A's row r)
        unsigned hdA = 0u, huA = 0u, huB = 0u;
        if (rd) { huA = ncols >= 1 ? bufh[1] : 0u; huB = ncols >= 2 ? bufh[2] : 0u; }
        for (int s = 0; s < steps; s += 2) {
            // the next iteration's column bytes; PF: also an L2 prefetch 2,048 bytes (1,024
            // iterations) ahead, addressed from a pointer of its own (no sign extension of
            // s on the ALU pipe). Without it the column loads that miss L2 held the loop
            // back (n = 16,384 on an H100: 1.9% slower; docs/gpu-notes.md, session 16)
            unsigned n0, n1;
            if (PF) {
                n0 = __ldg(yq + 2);
                n1 = __ldg(yq + 3);
                asm volatile("prefetch.global.L2 [%0+2048];" :: "l"(yq));
                yq += 2;
            } else {
                n0 = yp[s + 2];
                n1 = yp[s + 3];
            }
            ww_dna_step<R>(sel, HA, HB, hdA, huA, *reinterpret_cast<const uint2*>(tab + c0),
                           bvec, one, neg_bias, best);
            ww_dna_step<R>(sel, HB, HA, huA, huB, *reinterpret_cast<const uint2*>(tab + c1),
                           bvec, one, neg_bias, best);
            unsigned ra = __shfl_up_sync(FULL_MASK, HB[R - 1], 1, G);
            unsigned rb = __shfl_up_sync(FULL_MASK, HA[R - 1], 1, G);
            if (BANDED) {
                const int j = s - 2 * t;
                if (wr && j >= 0 && j < ncols) bufh[j + 1] = HB[R - 1];
                if (wr && j + 1 >= 0 && j + 1 < ncols) bufh[j + 2] = HA[R - 1];
                if (t == 0) {
                    ra = (band > 0 && s + 3 <= ncols) ? bufh[s + 3] : 0u;
                    rb = (band > 0 && s + 4 <= ncols) ? bufh[s + 4] : 0u;
                }
            } else {
                ra = pr_mad1(ra, first, 0u);
                rb = pr_mad1(rb, first, 0u);
            }
            hdA = huB; huA = ra; huB = rb;
            c0 = n0; c1 = n1;
        }
    }
    for (int o = 1; o < G; o <<= 1) best = __vmaxs2(best, __shfl_xor_sync(FULL_MASK, best, o, G));
    if (t == 0 && item < nitems) {
        const int ba = (int)(short)(best & 0xffffu), bb = (int)(short)(best >> 16);
        if (pa >= 0) {
            out[pa] = ba;
            if (ba >= thr) flagged[atomicAdd(nflagged, 1)] = pa;
        }
        if (pb >= 0) {
            out[pb] = bb;
            if (bb >= thr) flagged[atomicAdd(nflagged, 1)] = pb;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Bitsliced cell circuits and kernel (bs_swa).  One warp per group of 32 pairs; lane t
// owns rows band*32R + t*R .. + R-1 and works on C columns per iteration (s - Ct ..
// s - Ct + C - 1): all C inputs from the row above come from lane t-1's previous
// iteration, so column k+1's row r needs only column k's row r and C row chains overlap
// (~8 warps share an SM at 32 K pairs).  Two register sets (HA -> HB -> HA) leave no
// register moves for H.  Columns outside [0, n) are pad columns (every pair mismatches,
// values stay 0), so every step computes every row without a branch.
// The cell: d = max(matching(diag), max(up, left) - GAP), with the subtraction's relu
// folded into the final max (a borrowed lane never selects it).

// One LOP3 with the given truth table (a = 0xF0, b = 0xCC, c = 0xAA): in asm so that
// ptxas keeps the adder's sum and carry as one instruction each (it otherwise folds the
// operand into every bit and splits the majority in two).
template <unsigned LUT>
__device__ __forceinline__ unsigned lop3(unsigned a, unsigned b, unsigned c) {
    unsigned d;
    asm("lop3.b32 %0, %1, %2, %3, %4;" : "=r"(d) : "r"(a), "r"(b), "r"(c), "n"(LUT));
    return d;
}

// rr = matching(diag): diag + C1 where e == 0, max(diag - C2, 0) where e == 1, as ONE
// adder whose operand bits are 0, 1, e or ~e (w = C1 or 2^S - C2 per lane), 2 LOP3 a bit.
// C2 == 1: max(diag - 1, 0) = diag + (-[diag != 0]), so w = e ? -nz : C1 and no result
// can go negative (no relu mask): 2S - 1 + 6 LOP3.  Else the adder's carry-out says
// diag >= C2, and rr &= ~e | carry (one LOP3 a bit): 3S + 1.  (The previous bs_swa's separate
// add, subtract, select and mask took ~5S + S + 1.)  Needs diag + C1 < 2^S (S's choice).
template <int S, int C1, int C2>
__device__ __forceinline__ void bs_match(unsigned (&rr)[S], const unsigned (&diag)[S], unsigned e)
{
    if (C2 == 1) {
        unsigned nz = 0u;
#pragma unroll
        for (int b = 0; b < S; ++b) nz |= diag[b];
        const unsigned f = lop3<0xC0>(e, nz, 0u);    // w's bits where C1's is 0: -nz on e
        const unsigned g1 = lop3<0xCF>(e, nz, 0u);   // where C1's is 1: 1 off e, nz on e
        unsigned c = 0u;
#pragma unroll
        for (int b = 0; b < S; ++b) {
            const unsigned x = diag[b];
            const unsigned w = ((C1 >> b) & 1) ? g1 : f;
            if (b == 0) {
                rr[b] = x ^ w;
                c = x & w;
            } else {
                rr[b] = lop3<0x96>(x, w, c);
                if (b + 1 < S) c = lop3<0xE8>(x, w, c);
            }
        }
    } else {
        constexpr unsigned NEG = (1u << S) - (unsigned)C2;
        unsigned c = 0u;
#pragma unroll
        for (int b = 0; b < S; ++b) {
            const unsigned x = diag[b];
            const unsigned w = (((C1 >> b) & 1) ? ~e : 0u) | (((NEG >> b) & 1) ? e : 0u);
            rr[b] = lop3<0x96>(x, w, c);
            c = lop3<0xE8>(x, w, c);
        }
#pragma unroll
        for (int b = 0; b < S; ++b) rr[b] &= ~e | c;
    }
}

template <int S, int R, int C1, int C2, int GAP>
__device__ __forceinline__ void bs_step(const unsigned (&X)[R][3], const unsigned (&Hi)[R][S],
                                        unsigned (&Ho)[R][S], const unsigned (&hd)[S],
                                        const unsigned (&hu)[S], uint4 y, unsigned (&best)[S])
{
    unsigned diag[S], up[S];
#pragma unroll
    for (int b = 0; b < S; ++b) { diag[b] = hd[b]; up[b] = hu[b]; }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const unsigned e = (X[r][0] ^ y.x) | (X[r][1] ^ y.y) | X[r][2] | y.z;
        unsigned tt[S], rr[S], d[S];
        bs_max<S>(tt, up, Hi[r]);
        unsigned ps = 0u;
#pragma unroll
        for (int b = 0; b < S; ++b) {
            const unsigned x = tt[b];
            if ((GAP >> b) & 1) { tt[b] = ~(x ^ ps); ps = ~x | ps; }
            else { tt[b] = x ^ ps; ps = ~x & ps; }
        }
        bs_match<S, C1, C2>(rr, diag, e);
        bs_max_keep<S>(d, rr, tt, ~ps);
#pragma unroll
        for (int b = 0; b < S; ++b) {
            diag[b] = Hi[r][b];
            Ho[r][b] = d[b];
            up[b] = d[b];
        }
        bs_max<S>(best, best, d);
    }
}

// xp/yp: planes of the group's rows (shorter sequences) / columns (longer ones).
// bound: per group (ncols + 2) * S words (band buffer).  result: (groups, S).
// C: columns per iteration (even: the register sets alternate HA -> HB -> ... -> HA).
// BANDED: some group has more rows than one band (32 R); else no band-buffer code.
template <int S, int R, int C, int C1, int C2, int GAP, bool BANDED, int PF>
__global__ void __launch_bounds__(128)
bs_swa(const uint4* __restrict__ xp, const long long* __restrict__ xoff, const int* __restrict__ gm,
        const uint4* __restrict__ yp, const long long* __restrict__ yoff, const int* __restrict__ gn,
        int ngroups, unsigned* __restrict__ bound, const long long* __restrict__ boff,
        unsigned* __restrict__ result)
{
    static_assert(C % 2 == 0, "C must be even");
    const int g = (int)(((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int t = threadIdx.x & 31;
    if (g >= ngroups) return;   // warp-uniform
    const int m = gm[g], n = gn[g];
    const uint4* xg = xp + xoff[g];
    const uint4* yg = yp + yoff[g];
    unsigned* buf = bound + boff[g];
    const int bands = BANDED ? max(1, (m + 32 * R - 1) / (32 * R)) : 1;
    unsigned best[S];
#pragma unroll
    for (int b = 0; b < S; ++b) best[b] = 0u;
    const uint4 ypad = make_uint4(0u, 0u, ~0u, 0u);
    const unsigned first = t == 0 ? 0u : 1u;
    for (int band = 0; band < bands; ++band) {
        const int row0 = band * 32 * R + t * R;
        unsigned HA[R][S], HB[R][S], X[R][3];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int row = row0 + r;
            if (row < m) { const uint4 v = xg[row]; X[r][0] = v.x; X[r][1] = v.y; X[r][2] = v.z; }
            else { X[r][0] = 0u; X[r][1] = 0u; X[r][2] = ~0u; }
#pragma unroll
            for (int b = 0; b < S; ++b) HA[r][b] = 0u;
        }
        const bool rd = BANDED && t == 0 && band > 0;
        const bool wr = BANDED && t == 31 && band < bands - 1;
        // hd: diag of column 0 (the row above at the column before); hu[k]: up of column k
        unsigned hd[S], hu[C][S];
#pragma unroll
        for (int b = 0; b < S; ++b) {
            hd[b] = 0u;
#pragma unroll
            for (int k = 0; k < C; ++k) hu[k][b] = (rd && n >= k + 1) ? buf[(k + 1) * S + b] : 0u;
        }
        const int steps = (n + C * 31 + C - 1) / C * C;
        // PF & 1: the next iteration's columns are loaded at the top of this one, into
        // registers (loaded where used, the loop waited for them: 6% slower at n = 1,024
        // on an H100); PF & 2: also an L2 prefetch 8 iterations ahead (pays where the
        // columns exceed L2; docs/gpu-notes.md, session 16)
        uint4 yn[C];
        if (PF & 1) {
#pragma unroll
            for (int k = 0; k < C; ++k) yn[k] = (k - C * t >= 0 && k - C * t < n) ? yg[k - C * t] : ypad;
        }
        for (int s = 0; s < steps; s += C) {
            const int j = s - C * t;          // this iteration's columns: j .. j + C - 1
            uint4 y[C];
            if (PF & 1) {
#pragma unroll
                for (int k = 0; k < C; ++k) {
                    y[k] = yn[k];
                    const int c = j + C + k;
                    yn[k] = (c >= 0 && c < n) ? yg[c] : ypad;
                }
            } else {
#pragma unroll
                for (int k = 0; k < C; ++k) y[k] = (j + k >= 0 && j + k < n) ? yg[j + k] : ypad;
            }
            if ((PF & 2) && j + 8 * C >= 0 && j + 8 * C < n)
                asm volatile("prefetch.global.L2 [%0];" :: "l"(yg + j + 8 * C));
            unsigned o[C][S];                 // each column's last row
#pragma unroll
            for (int k = 0; k < C; k += 2) {
                bs_step<S, R, C1, C2, GAP>(X, HA, HB, k == 0 ? hd : hu[k - 1], hu[k], y[k], best);
                bs_step<S, R, C1, C2, GAP>(X, HB, HA, hu[k], hu[k + 1], y[k + 1], best);
#pragma unroll
                for (int b = 0; b < S; ++b) { o[k][b] = HB[R - 1][b]; o[k + 1][b] = HA[R - 1][b]; }
            }
            if (wr) {   // this iteration's columns for the next band
#pragma unroll
                for (int k = 0; k < C; ++k) {
                    if (j + k >= 0 && j + k < n) {
#pragma unroll
                        for (int b = 0; b < S; ++b) buf[(size_t)(j + k + 1) * S + b] = o[k][b];
                    }
                }
            }
            // lane t+1 takes these C columns as its "up" in the next iteration
#pragma unroll
            for (int b = 0; b < S; ++b) {
                hd[b] = hu[C - 1][b];
#pragma unroll
                for (int k = 0; k < C; ++k) {
                    unsigned v = __shfl_up_sync(FULL_MASK, o[k][b], 1);
                    if (BANDED) {
                        const int c = s + C + k + 1;   // lane 0's column k next iteration
                        if (t == 0) v = (rd && c <= n) ? buf[(size_t)c * S + b] : 0u;
                    } else {
                        v = pr_mad1(v, first, 0u);     // lane 0: 0 (IMAD on the FMA pipe)
                    }
                    hu[k][b] = v;
                }
            }
        }
    }
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        unsigned other[S];
#pragma unroll
        for (int b = 0; b < S; ++b) other[b] = __shfl_xor_sync(FULL_MASK, best[b], o);
        bs_max<S>(best, best, other);
    }
    if (t < S) {
        unsigned v = 0u;
#pragma unroll
        for (int b = 0; b < S; ++b) if (b == t) v = best[b];
        result[(size_t)g * S + t] = v;
    }
}
