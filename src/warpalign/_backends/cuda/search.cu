// Database search kernels (Smith-Waterman local; global/semiglobal in sw_s32), affine gaps, Gotoh.
//
// Conventions (DESIGN.md): rows are query positions, columns target positions; a gap of
// length k costs go + (k-1)*ge; H >= 0.  Both kernels stream the query through a group of
// G consecutive lanes: lane t owns R consecutive target columns of the current tile and at
// step s works on query row i = s - t, receiving H and E of its left neighbour's last
// column (row i) by one shuffle each.  Rows outside [0, m) read a padding letter whose
// scores are very negative; they leave H = 0 before the query starts and can never raise
// a maximum after it ends.  Targets longer than a tile run in several passes: the group's
// last lane stores (H, E) of its last column for every row, lane 0 of the next pass reads
// them back (ping-pong buffers per group, so there is no length cap).
//
//   sw_s16x2r2  two targets per group, one per 16-bit half of every register (DPX), two
//             query rows per step; the longest targets in sw_s16x2r2_chain.  Scores
//             only.  A target whose maximum reaches `threshold` (32767 - max score) is
//             appended to `flagged`: before any lane can wrap, a correct H >= threshold has
//             entered the running maximum, so unflagged scores are exact.
//   sw_s32    one target per group in 32-bit lanes: the rescoring path and mode="end";
//             with ALG = 1 / 2, every global / semiglobal alignment (see the kernel).
//             With ENDS, every column keeps its maximum and the first row reaching it;
//             the reduction then takes the best score at the smallest column, which is
//             the DESIGN tie rule (smallest target end, then smallest query end).

#define QPAD 64  // padding letters on each side of the query row table (>= 2 (G - 1))
#ifndef R2_BLOCK
#define R2_BLOCK 256  // threads per block of the two-row kernels (NVRTC -DR2_BLOCK=...)
#endif

__device__ __forceinline__ unsigned ld_shared(const unsigned* base, unsigned byte_offset) {
    return *reinterpret_cast<const unsigned*>(reinterpret_cast<const char*>(base) + byte_offset);
}

// a * one + b on the FMA pipe (IMAD): `one` is a kernel argument (always 1) that the
// compiler cannot fold, so the add stays off the ALU pipe, which the DPX ops saturate.
__device__ __forceinline__ unsigned mad1(unsigned a, unsigned one, unsigned b) {
    unsigned d;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(one), "r"(b));
    return d;
}

__device__ __forceinline__ void load_table(unsigned* smem, const unsigned* __restrict__ table,
                                           int words) {
    for (int k = threadIdx.x; k < words; k += blockDim.x) smem[k] = table[k];
    __syncthreads();
}

template <int G>
__device__ __forceinline__ unsigned group_mask() {
    if constexpr (G == 32) {
        return 0xffffffffu;
    } else {
        const unsigned lane = threadIdx.x & 31u;
        return ((1u << G) - 1u) << (lane & ~(unsigned)(G - 1));
    }
}

// ---------------------------------------------------------------------------------------
// 32-bit kernel: one target per group.  ids: target ids to score.  qrow[QPAD + i]: byte
// offset of query row i's profile row; table[q*kp + a] = S[q][a] (code kp-1 is padding).
// boundary (MULTI): 2*m int2 per group of the grid.
//
// ALG (cpu/pairwise.py score_end is the specification):
//   0 local       H >= 0 (relu), best cell anywhere by the tie rule.
//   1 global      no relu; H(0, j) = -(go + (j-1) ge), H(i, 0) = -(go + (i-1) ge); the
//                 score is H(m, n), ends (m, n).
//   2 semiglobal  target end gaps free: H(0, j) = 0, H(i, 0) as global; the score is the
//                 best of the last row (column 0 included), smallest column; ends (m, j).
// Global/semiglobal lanes skip rows outside [0, m): before the query their registers hold
// row 0 (the boundary the next lane reads as its diagonal), after it row m, which the
// group reads once per tile (no running maximum over the cells).  Needs m >= 1 (the host
// fills m == 0 by the closed form); ENDS is always true for them.
template <int ALG>
__device__ __forceinline__ int row0(int j, int go, int ge) {  // H(0, j), 1-based column j
    return (ALG == 1 && j > 0) ? -(go + (j - 1) * ge) : 0;
}

template <int G, int R, bool ENDS, bool MULTI, int ALG = 0>
__global__ void __launch_bounds__(256, 2)
sw_s32(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
       const int* __restrict__ ids, int nids, const int* __restrict__ qrow, int m,
       const int* __restrict__ table, int table_words, int kp, int go, int ge,
       int* __restrict__ scores, int* __restrict__ qends, int* __restrict__ tends,
       int2* __restrict__ boundary)
{
    static_assert(ALG == 0 || ENDS, "global/semiglobal always report ends");
    extern __shared__ unsigned smem[];
    load_table(smem, reinterpret_cast<const unsigned*>(table), table_words);
    const int t = threadIdx.x % G;
    const unsigned mask = group_mask<G>();
    const int ngroups = gridDim.x * (blockDim.x / G);
    const int gid = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    const unsigned pad = (unsigned)(kp - 1);

    for (int p = gid; p < nids; p += ngroups) {
        const int id = ids[p];
        const long long o = offsets[id];
        const int len = (int)(offsets[id + 1] - o);
        const int ntiles = MULTI ? max(1, (len + G * R - 1) / (G * R)) : 1;
        // ENDS: 0-based cell of the best score.  Global/semiglobal start from H(m, 0)
        // (column -1 in 0-based terms), which is the answer when the target is empty.
        int best = 0, best_i = 0, best_j = 0;
        if constexpr (ALG != 0) { best = -(go + (m - 1) * ge); best_i = m - 1; best_j = -1; }
        for (int tile = 0; tile < ntiles; ++tile) {
            const int c0 = tile * G * R + t * R;
            unsigned idx[R];
            int H[R], F[R], cmax[R], crow[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int c = c0 + r;
                idx[r] = (c < len ? (unsigned)codes[o + c] : pad) * 4u;
                H[r] = row0<ALG>(c + 1, go, ge);
                F[r] = H[r] - go;
                if (ENDS && ALG == 0) { cmax[r] = 0; crow[r] = 0; }
            }
            const int2* bin = nullptr;
            int2* bout = nullptr;
            int2 next = make_int2(0, -go);
            if (MULTI) {
                bin = boundary + ((size_t)gid * 2 + (tile & 1)) * m;
                bout = boundary + ((size_t)gid * 2 + ((tile + 1) & 1)) * m;
                if (tile > 0 && t == 0 && m > 0) next = bin[0];
            }
            int hout = row0<ALG>(c0 + R, go, ge), eout = -go, hup = row0<ALG>(c0, go, ge);
            const int steps = m + G - 1;
            for (int s = 0; s < steps; ++s) {
                int hin = __shfl_up_sync(mask, hout, 1, G);
                int ein = __shfl_up_sync(mask, eout, 1, G);
                if (t == 0) {
                    if (MULTI && tile > 0) {
                        hin = next.x;
                        ein = next.y;
                        next = (s + 1 < m) ? bin[s + 1] : make_int2(0, -go);
                    } else if (ALG != 0) {
                        hin = -(go + s * ge);   // H(s + 1, 0): lane 0 is on row s
                        ein = hin - go;
                    } else {
                        hin = 0;
                        ein = -go;
                    }
                }
                const int i = s - t;
                const unsigned qb = (unsigned)qrow[QPAD + i];
                const bool live = i < m;
                int diag = hup;
                hup = hin;
                int e = ein;
                if (ALG == 0 || (i >= 0 && live)) {
#pragma unroll
                    for (int r = 0; r < R; ++r) {
                        const int sc = (int)ld_shared(smem, qb + idx[r]);
                        const int h = ALG == 0 ? __vimax3_s32_relu(diag + sc, e, F[r])
                                               : __vimax3_s32(diag + sc, e, F[r]);
                        diag = H[r];
                        H[r] = h;
                        const int hg = h - go;
                        e = __viaddmax_s32(e, -ge, hg);
                        F[r] = __viaddmax_s32(F[r], -ge, hg);
                        if (ALG == 0) {
                            if (ENDS) {
                                if (live && h > cmax[r]) { cmax[r] = h; crow[r] = i; }
                            } else {
                                best = max(best, h);
                            }
                        }
                    }
                }
                hout = H[R - 1];
                eout = e;
                if (MULTI && t == G - 1 && i >= 0 && i < m && tile + 1 < ntiles)
                    bout[i] = make_int2(hout, eout);
            }
            if (ENDS && ALG == 0) {
                // best of this lane's real columns: strict > keeps the smallest column
                int tb = 0, ti = 0, tj = 0;
#pragma unroll
                for (int r = 0; r < R; ++r)
                    if (c0 + r < len && cmax[r] > tb) { tb = cmax[r]; ti = crow[r]; tj = c0 + r; }
#pragma unroll
                for (int off = G / 2; off > 0; off >>= 1) {
                    const int ob = __shfl_xor_sync(mask, tb, off, G);
                    const int oi = __shfl_xor_sync(mask, ti, off, G);
                    const int oj = __shfl_xor_sync(mask, tj, off, G);
                    if (ob > tb || (ob == tb && oj < tj)) { tb = ob; ti = oi; tj = oj; }
                }
                // tiles run left to right: a later tile wins only with a larger score
                if (tb > best) { best = tb; best_i = ti; best_j = tj; }
            }
            if (ALG == 1 && tile == ntiles - 1 && len > 0) {
                // H(m, n): the lane owning column len - 1 of the last tile
                int v = 0;
#pragma unroll
                for (int r = 0; r < R; ++r)
                    if (c0 + r == len - 1) v = H[r];
                best = __shfl_sync(mask, v, ((len - 1) % (G * R)) / R, G);
                best_j = len - 1;
            }
            if (ALG == 2) {
                // best of the last row: strict > keeps the smallest column at every level
                int tb = -2147483647 - 1, tj = 0;
#pragma unroll
                for (int r = 0; r < R; ++r)
                    if (c0 + r < len && H[r] > tb) { tb = H[r]; tj = c0 + r; }
#pragma unroll
                for (int off = G / 2; off > 0; off >>= 1) {
                    const int ob = __shfl_xor_sync(mask, tb, off, G);
                    const int oj = __shfl_xor_sync(mask, tj, off, G);
                    if (ob > tb || (ob == tb && oj < tj)) { tb = ob; tj = oj; }
                }
                if (tb > best) { best = tb; best_j = tj; }
            }
            if (MULTI) __syncwarp(mask);
        }
        if (!ENDS) {
#pragma unroll
            for (int off = G / 2; off > 0; off >>= 1)
                best = max(best, __shfl_xor_sync(mask, best, off, G));
        }
        if (t == 0) {
            scores[id] = best;
            if (ENDS && ALG == 0) {
                qends[id] = best > 0 ? best_i + 1 : 0;
                tends[id] = best > 0 ? best_j + 1 : 0;
            } else if (ENDS) {
                qends[id] = best_i + 1;
                tends[id] = best_j + 1;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Chained 16-bit kernel for the longest targets: one warp per (pair, tile) work item, so
// the tiles of one long pair run on many warps at once instead of one after another.
// Items are claimed in order through `ticket`, so the item a warp waits for (the previous
// tile of its pair) is always held by a running warp: no deadlock.  The producer's last
// lane stores (H, E) of its last column per row into its own slot and publishes the
// number of finished rows in progress[item] every CHAIN_ROWS rows (fence, then flag); the
// consumer's lane 0 waits for a chunk before reading it through L2 (__ldcg), at most
// CHAIN_TIMEOUT_NS (ticket[1] then says the launch failed).
#define CHAIN_ROWS 32
#ifndef CHAIN_TIMEOUT_NS
#define CHAIN_TIMEOUT_NS 10000000000ull  // 10 s without the rows waited for: give up
#endif

// Lane 0 of a consumer: wait until *ready >= need. The wait is bounded: after
// CHAIN_TIMEOUT_NS, or once another warp gave up, it sets *failed (the word after the
// ticket) and returns false; the warp then leaves the kernel and the host raises.
__device__ __noinline__ bool chain_wait(const volatile int* ready, int need,
                                        int* failed) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (*ready < need) {
        __nanosleep(100);
        if (*(volatile int*)failed) return false;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > CHAIN_TIMEOUT_NS) {
            atomicExch(failed, 1);
            return false;
        }
    }
    return true;
}

// ---------------------------------------------------------------------------------------
// 16-bit packed kernel: two targets per group (one per 16-bit half), two query rows per
// step.  pairs[2p], pairs[2p+1]: target ids (the second may be -1).  qrow[QPAD + i]: byte
// offset of query row i's block in the pair table; table[(q*kp + a)*kp + b] packs S[q][a]
// (low half) and S[q][b] (high half); code kp-1 is padding.  H, E, F are stored plus go
// (bvec = go in both halves), so the relu is a max against go and H - go one IMAD on the
// FMA pipe (4.5 ALU ops per cell pair; docs/gpu-notes.md).  A cell update of one row per
// step is one dependency chain
// per row (E -> H -> H - go -> E, three dependent ops per column), and with 4 warps per
// scheduler that chain, not the ALU pipe, sets the pace.  Here lane t works on rows
// i = 2(s - t) and i + 1 at step s: row i+1 runs one column behind row i (A(c), B(c-1)),
// so two independent chains interleave.  Row i+1 reads F of row i's cell (F[c], written
// by A(c)) and its diagonal H(i, c-1), which B takes from H[c-1] before overwriting it,
// exactly as one row does.  Lanes pass H and E of both rows on (four shuffles per step).
// Boundary slots hold (m + 1) & ~1 uint2 (even, so a row pair is one aligned uint4).
// Pair-table byte offset of the letter pair ab = a * kp + b.
__device__ __forceinline__ unsigned pair_offset(unsigned ab) {
    return ab * 4u;
}

template <int R>
__device__ __forceinline__ void rows16x2(const unsigned* smem, unsigned qa, unsigned qbb,
                                         const unsigned (&idx)[R], unsigned (&H)[R],
                                         unsigned (&F)[R], unsigned diagA, unsigned diagB,
                                         unsigned& eA, unsigned& eB, unsigned& hA_last,
                                         unsigned& best, unsigned neg_ge, unsigned bvec,
                                         unsigned neg_go_int, unsigned one) {
    unsigned hA[R];
#pragma unroll
    for (int c = 0; c <= R; ++c) {
        if (c < R) {
            const unsigned sc = ld_shared(smem, mad1(idx[c], one, qa));
            const unsigned x = __viaddmax_s16x2(diagA, sc, F[c]);
            const unsigned h = __vimax3_s16x2(x, eA, bvec);
            diagA = H[c];
            H[c] = h;
            hA[c] = h;
            const unsigned ht = mad1(h, one, neg_go_int);
            eA = __viaddmax_s16x2(eA, neg_ge, ht);
            F[c] = __viaddmax_s16x2(F[c], neg_ge, ht);
        }
        if (c >= 1) {
            const int b = c - 1;
            const unsigned sc = ld_shared(smem, mad1(idx[b], one, qbb));
            const unsigned x = __viaddmax_s16x2(diagB, sc, F[b]);
            const unsigned h = __vimax3_s16x2(x, eB, bvec);
            diagB = H[b];
            H[b] = h;
            const unsigned ht = mad1(h, one, neg_go_int);
            eB = __viaddmax_s16x2(eB, neg_ge, ht);
            F[b] = __viaddmax_s16x2(F[b], neg_ge, ht);
            best = __vimax3_s16x2(best, hA[b], h);
        }
    }
    hA_last = hA[R - 1];
}

template <int G, int R, bool MULTI>
__global__ void __launch_bounds__(R2_BLOCK, 2)
sw_s16x2r2(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
           const int* __restrict__ pairs, int npairs, const int* __restrict__ qrow, int m,
           const unsigned* __restrict__ table, int table_words, int kp,
           unsigned neg_go, unsigned neg_ge, unsigned bvec, unsigned neg_go_int, unsigned one,
           int go, int threshold, int* __restrict__ scores,
           int* __restrict__ flagged, int* __restrict__ nflagged, uint2* __restrict__ boundary)
{
    extern __shared__ unsigned smem[];
    load_table(smem, table, table_words);
    const int t = threadIdx.x % G;
    const unsigned mask = group_mask<G>();
    const int ngroups = gridDim.x * (blockDim.x / G);
    const int gid = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    const unsigned pad = (unsigned)(kp - 1);
    const unsigned h0 = bvec, e0 = 0u;  // H = 0, E = F = -go (stored plus go)
    const uint4 dflt = make_uint4(h0, e0, h0, e0);

    for (int p = gid; p < npairs; p += ngroups) {
        const int ta = pairs[2 * p], tb = pairs[2 * p + 1];
        const long long oa = offsets[ta];
        const int la = (int)(offsets[ta + 1] - oa);
        long long ob = 0;
        int lb = 0;
        if (tb >= 0) { ob = offsets[tb]; lb = (int)(offsets[tb + 1] - ob); }
        const int ntiles = MULTI ? max(1, (max(la, lb) + G * R - 1) / (G * R)) : 1;
        unsigned best = h0;
        for (int tile = 0; tile < ntiles; ++tile) {
            const int c0 = tile * G * R + t * R;
            unsigned idx[R], H[R], F[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int c = c0 + r;
                const unsigned a = c < la ? (unsigned)codes[oa + c] : pad;
                const unsigned b = c < lb ? (unsigned)codes[ob + c] : pad;
                idx[r] = pair_offset(a * kp + b);
                H[r] = h0;
                F[r] = e0;
            }
            const uint4* bin = nullptr;
            uint2* bout = nullptr;
            uint4 next = dflt;
            if (MULTI) {
                bin = reinterpret_cast<const uint4*>(boundary + ((size_t)gid * 2 + (tile & 1)) * (size_t)((m + 1) & ~1));
                bout = boundary + ((size_t)gid * 2 + ((tile + 1) & 1)) * (size_t)((m + 1) & ~1);
                if (tile > 0 && t == 0 && m > 0) next = bin[0];
            }
            unsigned houtA = h0, eoutA = e0, houtB = h0, eoutB = e0, hup = h0;
            const int steps = (m + 1) / 2 + G - 1;
            for (int s = 0; s < steps; ++s) {
                unsigned hinA = __shfl_up_sync(mask, houtA, 1, G);
                unsigned einA = __shfl_up_sync(mask, eoutA, 1, G);
                unsigned hinB = __shfl_up_sync(mask, houtB, 1, G);
                unsigned einB = __shfl_up_sync(mask, eoutB, 1, G);
                if (t == 0) {
                    if (MULTI && tile > 0) {
                        hinA = next.x; einA = next.y; hinB = next.z; einB = next.w;
                        next = (2 * s + 2 < m) ? bin[s + 1] : dflt;
                    } else {
                        hinA = h0; einA = e0; hinB = h0; einB = e0;
                    }
                }
                const int i = 2 * (s - t);
                const unsigned qa = (unsigned)qrow[QPAD + i];
                const unsigned qbb = (unsigned)qrow[QPAD + i + 1];
                const unsigned diagA = hup;
                hup = hinB;
                unsigned eA = einA, eB = einB, hlast;
                rows16x2<R>(smem, qa, qbb, idx, H, F, diagA, hinA, eA, eB, hlast, best, neg_ge,
                            bvec, neg_go_int, one);
                houtA = hlast;
                eoutA = eA;
                houtB = H[R - 1];
                eoutB = eB;
                if (MULTI && t == G - 1 && i >= 0 && i < m && tile + 1 < ntiles)
                    *reinterpret_cast<uint4*>(bout + i) = make_uint4(houtA, eoutA, houtB, eoutB);
            }
            if (MULTI) __syncwarp(mask);
        }
#pragma unroll
        for (int off = G / 2; off > 0; off >>= 1)
            best = __vmaxs2(best, __shfl_xor_sync(mask, best, off, G));
        if (t == 0) {
            const int sa = (int)(short)(best & 0xffffu) - go;
            scores[ta] = sa;
            if (sa >= threshold) flagged[atomicAdd(nflagged, 1)] = ta;
            if (tb >= 0) {
                const int sb = (int)(short)(best >> 16) - go;
                scores[tb] = sb;
                if (sb >= threshold) flagged[atomicAdd(nflagged, 1)] = tb;
            }
        }
    }
}

// Chained kernel with two rows per step (see "Chained 16-bit kernel" above).  Slots hold
// m + 1 uint2 (row pairs as uint4); progress counts finished rows, published every
// CHAIN_ROWS rows.
template <int R>
__global__ void __launch_bounds__(R2_BLOCK, 2)
sw_s16x2r2_chain(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
                 const int* __restrict__ pairs, const int* __restrict__ items, int nitems,
                 int* __restrict__ ticket, int* __restrict__ progress,
                 const int* __restrict__ qrow, int m,
                 const unsigned* __restrict__ table, int table_words, int kp,
                 unsigned neg_go, unsigned neg_ge, unsigned bvec, unsigned neg_go_int,
                 unsigned one, int go, int threshold, int* __restrict__ scores,
                 int* __restrict__ flagged, int* __restrict__ nflagged,
                 uint2* __restrict__ boundary)
{
    constexpr int G = 32;
    extern __shared__ unsigned smem[];
    load_table(smem, table, table_words);
    const int t = threadIdx.x & 31;
    const unsigned mask = 0xffffffffu;
    const unsigned pad = (unsigned)(kp - 1);
    const unsigned h0 = bvec, e0 = 0u;
    const uint4 dflt = make_uint4(h0, e0, h0, e0);
    for (;;) {
        int w = 0;
        if (t == 0) w = atomicAdd(ticket, 1);
        w = __shfl_sync(mask, w, 0);
        if (w >= nitems) break;
        const int p = items[2 * w], tile = items[2 * w + 1];
        const int ta = pairs[2 * p], tb = pairs[2 * p + 1];
        const long long oa = offsets[ta];
        const int la = (int)(offsets[ta + 1] - oa);
        long long ob = 0;
        int lb = 0;
        if (tb >= 0) { ob = offsets[tb]; lb = (int)(offsets[tb + 1] - ob); }
        const bool last = (tile + 1) * G * R >= max(la, lb);
        const int c0 = tile * G * R + t * R;
        unsigned idx[R], H[R], F[R];
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const int c = c0 + r;
            const unsigned a = c < la ? (unsigned)codes[oa + c] : pad;
            const unsigned b = c < lb ? (unsigned)codes[ob + c] : pad;
            idx[r] = pair_offset(a * kp + b);
            H[r] = h0;
            F[r] = e0;
        }
        const uint4* bin = reinterpret_cast<const uint4*>(boundary + (size_t)(w > 0 ? w - 1 : 0) * (size_t)((m + 1) & ~1));
        uint2* bout = boundary + (size_t)w * (size_t)((m + 1) & ~1);
        const volatile int* ready = progress + (w > 0 ? w - 1 : 0);
        uint4 next = dflt;
        unsigned best = h0, houtA = h0, eoutA = e0, houtB = h0, eoutB = e0, hup = h0;
        const int steps = (m + 1) / 2 + G - 1;
        for (int s = 0; s < steps; ++s) {
            unsigned hinA = __shfl_up_sync(mask, houtA, 1);
            unsigned einA = __shfl_up_sync(mask, eoutA, 1);
            unsigned hinB = __shfl_up_sync(mask, houtB, 1);
            unsigned einB = __shfl_up_sync(mask, eoutB, 1);
            if (tile > 0) {
                if ((s & (CHAIN_ROWS / 2 - 1)) == 0 && 2 * s < m) {
                    int ok = 1;
                    if (t == 0) {
                        const int need = min(2 * s + CHAIN_ROWS + 2, m);
                        if (*ready < need) ok = chain_wait(ready, need, ticket + 1);
                        __threadfence();
                    }
                    __syncwarp(mask);
                    if (!__shfl_sync(mask, ok, 0)) return;   // timed out: the host raises
                }
                if (t == 0) {
                    if (s == 0) next = __ldcg(bin);
                    hinA = next.x; einA = next.y; hinB = next.z; einB = next.w;
                    next = (2 * s + 2 < m) ? __ldcg(bin + s + 1) : dflt;
                }
            } else if (t == 0) {
                hinA = h0; einA = e0; hinB = h0; einB = e0;
            }
            const int i = 2 * (s - t);
            const unsigned qa = (unsigned)qrow[QPAD + i];
            const unsigned qbb = (unsigned)qrow[QPAD + i + 1];
            const unsigned diagA = hup;
            hup = hinB;
            unsigned eA = einA, eB = einB, hlast;
            rows16x2<R>(smem, qa, qbb, idx, H, F, diagA, hinA, eA, eB, hlast, best, neg_ge,
                        bvec, neg_go_int, one);
            houtA = hlast;
            eoutA = eA;
            houtB = H[R - 1];
            eoutB = eB;
            if (!last && t == G - 1 && i >= 0 && i < m) {
                *reinterpret_cast<uint4*>(bout + i) = make_uint4(houtA, eoutA, houtB, eoutB);
                if (((i + 2) & (CHAIN_ROWS - 1)) == 0 || i + 2 >= m) {
                    __threadfence();
                    atomicExch(progress + w, min(i + 2, m));
                }
            }
        }
#pragma unroll
        for (int off = G / 2; off > 0; off >>= 1)
            best = __vmaxs2(best, __shfl_xor_sync(mask, best, off, G));
        if (t == 0) {
            const int sa = (int)(short)(best & 0xffffu) - go;
            if (atomicMax(scores + ta, sa) < threshold && sa >= threshold)
                flagged[atomicAdd(nflagged, 1)] = ta;
            if (tb >= 0) {
                const int sb = (int)(short)(best >> 16) - go;
                if (atomicMax(scores + tb, sb) < threshold && sb >= threshold)
                    flagged[atomicAdd(nflagged, 1)] = tb;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// method="warp": paper 003's kernel (Hasan/Kentie-style intra-task, one warp per alignment).
// The target is cut into strips of 32 columns, one column per lane; lanes are skewed by
// one query row, so each step of the warp covers a parallelogram's anti-diagonal.  Within
// a strip H and E go from lane to lane by shuffle (the paper used shared-memory arrays);
// the strip's last column (H, E per query row) goes through global memory to the next
// strip, ping-pong per warp.  The query and the substitution matrix sit in shared memory;
// arithmetic is 32-bit, so there is no saturation.  With ENDS, each lane keeps its
// column's max and first row reaching it; the reduction applies the DESIGN tie rule.
template <bool ENDS>
__global__ void __launch_bounds__(256, 2)
sw_warp(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
        const int* __restrict__ ids, int nids, const unsigned char* __restrict__ query, int m,
        const int* __restrict__ matrix, int kp, int go, int ge, int* __restrict__ scores,
        int* __restrict__ qends, int* __restrict__ tends, int2* __restrict__ boundary)
{
    extern __shared__ int wsm[];
    int* s_mat = wsm;                                                      // [q][a]
    unsigned char* s_q = reinterpret_cast<unsigned char*>(wsm + kp * kp);  // 32 pad + m + 32 pad
    const unsigned char pad = (unsigned char)(kp - 1);
    for (int k = threadIdx.x; k < kp * kp; k += blockDim.x) s_mat[k] = matrix[k];
    for (int k = threadIdx.x; k < m + 64; k += blockDim.x)
        s_q[k] = (k >= 32 && k - 32 < m) ? query[k - 32] : pad;
    __syncthreads();
    const int t = threadIdx.x & 31;
    const unsigned mask = 0xffffffffu;
    const int warps = blockDim.x / 32;
    const int gw = blockIdx.x * warps + threadIdx.x / 32;
    const int nw = gridDim.x * warps;
    for (int p = gw; p < nids; p += nw) {
        const int id = ids[p];
        const long long o = offsets[id];
        const int len = (int)(offsets[id + 1] - o);
        const int ntiles = max(1, (len + 31) / 32);
        int best = 0, best_i = 0, best_j = 0;
        for (int tile = 0; tile < ntiles; ++tile) {
            const int c = tile * 32 + t;
            const int a = c < len ? codes[o + c] : pad;
            const int2* bin = boundary + ((size_t)gw * 2 + (tile & 1)) * m;
            int2* bout = boundary + ((size_t)gw * 2 + ((tile + 1) & 1)) * m;
            int F = -go, cmax = 0, crow = 0;
            int hout = 0, eout = -go, hup = 0;
            int2 next = make_int2(0, -go);
            if (tile > 0 && t == 0 && m > 0) next = bin[0];
            const int steps = m + 31;
            for (int s = 0; s < steps; ++s) {
                int hin = __shfl_up_sync(mask, hout, 1);
                int ein = __shfl_up_sync(mask, eout, 1);
                if (t == 0) {
                    if (tile > 0) {
                        hin = next.x;
                        ein = next.y;
                        next = (s + 1 < m) ? bin[s + 1] : make_int2(0, -go);
                    } else {
                        hin = 0;
                        ein = -go;
                    }
                }
                const int i = s - t;
                const int sc = s_mat[s_q[32 + i] * kp + a];
                const int diag = hup;
                hup = hin;
                const int h = __vimax3_s32_relu(diag + sc, ein, F);
                const int hg = h - go;
                F = max(F - ge, hg);
                eout = max(ein - ge, hg);
                hout = h;
                if (ENDS) {
                    if (i >= 0 && i < m && h > cmax) { cmax = h; crow = i; }
                } else {
                    best = max(best, h);
                }
                if (t == 31 && i >= 0 && i < m && tile + 1 < ntiles) bout[i] = make_int2(h, eout);
            }
            if (ENDS) {
                int tb = c < len ? cmax : 0, ti = crow, tj = c;
#pragma unroll
                for (int off = 16; off > 0; off >>= 1) {
                    const int ob = __shfl_xor_sync(mask, tb, off);
                    const int oi = __shfl_xor_sync(mask, ti, off);
                    const int oj = __shfl_xor_sync(mask, tj, off);
                    if (ob > tb || (ob == tb && oj < tj)) { tb = ob; ti = oi; tj = oj; }
                }
                if (tb > best) { best = tb; best_i = ti; best_j = tj; }
            }
            __syncwarp(mask);
        }
        if (!ENDS) {
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) best = max(best, __shfl_xor_sync(mask, best, off));
        }
        if (t == 0) {
            scores[id] = best;
            if (ENDS) {
                qends[id] = best > 0 ? best_i + 1 : 0;
                tends[id] = best > 0 ? best_j + 1 : 0;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Row-strip kernel with two query rows streams per register (KERNELS.md B.2 in full).
// Lanes own query rows (lane t: rows t*R .. t*R+R-1 of a strip of 32*R rows, at step s on
// target column j = s - t, H and F of lane t-1's last row by shuffle, E in a register),
// and the two 16-bit halves of every register belong to two *query row streams* (A low,
// B high) against one target stream, so the profile word of a row pair,
// prof[a][t][r] = S[qA_row][a] | S[qB_row][a] << 16, is used as it is loaded: one LDS.128
// serves 4 rows x 2 queries and no merge is needed.
// The targets of a group (several whole targets, longest first) are streamed back to back
// through the warp: `stream` holds their codes, the first column of every target marked by
// bit 7.  A lane whose column starts a target (or is the group's end, j == len) resets its
// state for that column (diagonal, H of the previous column, E: the matrix's column 0) and
// hands the finished target's maximum on: `done` = max(its own rows' best, the left lane's
// done of the step before), so lane 31's done covers all 32*R rows of the strip.  The
// wavefront fills once per group, not once per target.  Only those lanes take the branch,
// once per target, so it costs little.  Strips of 32*R rows run one launch after another;
// the strip's last lane stores (H, F) of its last row per column at boundary[gstart + j]
// for the next strip's lane 0, scores[id] (query A) and scores[n + id] (query B) keep the
// running maximum over strips, and an index into scores is appended to `flagged` when the
// score first reaches the threshold.  Zero-length targets are not in the stream (their
// score is 0).
// One step of the row kernel (sw_rowsqb): the lane's R rows at
// target column code c (bit 7 is a marker, masked off), H of the column to the left in
// Hin, F from the lane above in fin, row 0's diagonal in diag; writes Hout, this lane's
// last-row H and F (hout, fout), updates E and the running max.
template <int R, int RS, int W>
__device__ __forceinline__ void rowsq_step(const unsigned* smem, int t, unsigned c, unsigned fin,
                                           unsigned diag, const unsigned (&Hin)[R],
                                           unsigned (&Hout)[R], unsigned (&E)[R], unsigned& best,
                                           unsigned bvec, unsigned neg_ge, unsigned neg_go_int,
                                           unsigned one, unsigned& hout, unsigned& fout)
{
    const unsigned* rp = smem + (c & 0x7fu) * W + t * RS;
    unsigned f = fin;
#pragma unroll
    for (int k = 0; k < R; k += 4) {
        unsigned sc[4];
        if (k + 4 <= R) {
            const uint4 w = *reinterpret_cast<const uint4*>(rp + k);
            sc[0] = w.x; sc[1] = w.y; sc[2] = w.z; sc[3] = w.w;
        } else {
#pragma unroll
            for (int q = k; q < R; ++q) sc[q - k] = rp[q];
        }
#pragma unroll
        for (int r = k; r < k + 4 && r < R; ++r) {
            const unsigned x = __viaddmax_s16x2(r == 0 ? diag : Hin[r - 1], sc[r - k], E[r]);
            const unsigned h = __vimax3_s16x2(x, f, bvec);
            Hout[r] = h;
            const unsigned ht = mad1(h, one, neg_go_int);
            f = __viaddmax_s16x2(f, neg_ge, ht);
            E[r] = __viaddmax_s16x2(E[r], neg_ge, ht);
        }
    }
#pragma unroll
    for (int r = 0; r + 1 < R; r += 2) best = __vimax3_s16x2(best, Hout[r], Hout[r + 1]);
    if (R & 1) best = __vmaxs2(best, Hout[R - 1]);
    hout = Hout[R - 1];
    fout = f;
}

// The target stream of sw_rowsqb: targets ids[k] copied back to back from sstart[k] on,
// the first column of each marked by bit 7 (codes stay below 128).  One warp per target.
__global__ void rowsq2_stream(const unsigned char* __restrict__ codes,
                              const long long* __restrict__ offsets, const int* __restrict__ ids,
                              const long long* __restrict__ sstart, int k,
                              unsigned char* __restrict__ out)
{
    const int lane = threadIdx.x & 31;
    const int warps = (gridDim.x * blockDim.x) >> 5;
    for (int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5; w < k; w += warps) {
        const long long o = offsets[ids[w]];
        const int len = (int)(offsets[ids[w] + 1] - o);
        unsigned char* dst = out + sstart[w];
        for (int c = lane; c < len; c += 32) dst[c] = codes[o + c] | (c == 0 ? 0x80 : 0);
    }
}

// The row kernel's loop: lanes skewed by two columns (lane t at column j = s - 2t) and
// two steps per iteration.  Lane t's inputs for step s are lane t-1's outputs of step s-2, so both
// steps of an iteration take their shuffled inputs at its start and step s+1's row r only
// waits for step s's row r: two dependency chains interleave (with one step per
// iteration, step s+1's first row would need the shuffle of step s's last).  Iterations where no
// lane's two columns start a target (a warp vote) run both steps with no branch; the
// others run them one after the other with the resets.  The codes and lane 0's inputs of
// the next iteration are loaded one iteration ahead.
//
// sw_rowsqb runs a packed batch of queries, each 16-bit half runs
// its own row stream, the concatenation of several queries (each padded to a multiple of
// R rows), cut into passes of 32*R rows (one launch per pass).  So a lane's R rows always
// belong to one query, and a query starts and ends at lane boundaries: lane t resets its
// inputs from lane t-1 (or, for lane 0, from the pass above) in a half where its rows start
// a query, by one mask (`keep`: 0xffff in each half whose input continues), and the done
// chain starts afresh there.  The last lane of a query's rows in this pass (`lane[4t + 3]`
// bits 0 / 1 for halves A / B) writes the max into scores[slot * n + id], slot =
// lane[4t + 1] / lane[4t + 2] (the query's index), as a running max over passes unless
// bit 2 / 3 says the segment holds the query's first row; flagged entries are slot * n + id.
// lane[4t]: keep.  No pass ever leaves lanes idle (padding rows score the pad letter).
template <int R>
__device__ __forceinline__ void rowsq_groups(
        const unsigned char* __restrict__ stream, const long long* __restrict__ gstart,
        const int* __restrict__ gfirst, const int* __restrict__ ids, int ngroups,
        int* __restrict__ ticket, const unsigned* __restrict__ prof,
        const int* __restrict__ lane_info, int kp, int first, int last, unsigned neg_ge,
        unsigned bvec, unsigned neg_go_int, unsigned one, int go, int threshold, int n,
        int* __restrict__ scores, int* __restrict__ flagged, int* __restrict__ nflagged,
        uint2* __restrict__ boundary)
{
    constexpr int G = 32;
    constexpr int RS = ((R + 3) / 4) % 2 == 0 ? ((R + 3) / 4) * 4 + 4 : ((R + 3) / 4) * 4;
    constexpr int W = G * RS;  // words per letter
    extern __shared__ unsigned smem[];
    load_table(smem, prof, kp * W);
    const int t = threadIdx.x & 31;
    const unsigned mask = 0xffffffffu;
    const unsigned pad = (unsigned)(kp - 1);
    const unsigned h0 = bvec, e0 = 0u;
    unsigned keep = 0u, hreset = 0u, dkeep = 0u, dreset = 0u;
    int slot_a = 0, slot_b = 0, wflags = 0;
    {
        keep = (unsigned)lane_info[4 * t];
        hreset = h0 & ~keep;                     // h0 in the halves that restart
        dkeep = t ? keep : 0u;                   // the done chain: lane 0 starts it
        dreset = h0 & ~dkeep;
        slot_a = lane_info[4 * t + 1];
        slot_b = lane_info[4 * t + 2];
        wflags = lane_info[4 * t + 3];
    }
    for (;;) {
        int g = 0;
        if (t == 0) g = atomicAdd(ticket, 1);
        g = __shfl_sync(mask, g, 0);
        if (g >= ngroups) break;
        const long long o = gstart[g];
        const int len = (int)(gstart[g + 1] - o);
        const int* gid = ids + gfirst[g];
        unsigned Ha[R], Hb[R], E[R];
#pragma unroll
        for (int r = 0; r < R; ++r) { Ha[r] = h0; Hb[r] = h0; E[r] = e0; }
        uint2* bslot = boundary + o;
        unsigned best = h0, hup = h0;
        unsigned ho0 = h0, fo0 = e0, bo0 = h0;   // this lane's outputs of step s-2
        unsigned ho1 = h0, fo1 = e0, bo1 = h0;   // and of step s-1
        int tk = -1;
        const int steps = len + 2 * (G - 1) + 1;   // the end marker reaches lane 31 last
        auto code = [&](int j) -> unsigned {
            return (j >= 0 && j < len) ? (unsigned)__ldg(stream + o + j)
                                       : (j == len ? 0x80u | pad : pad);
        };
        auto above = [&](int s) -> uint2 {   // lane 0: (H, F) of the strip above, column s
            return (t == 0 && !first && s < len) ? bslot[s] : make_uint2(h0, e0);
        };
        auto put = [&](int slot, int id, int v, bool fresh) {
            const int k = slot * n + id;
            const int p = fresh ? 0 : scores[k];
            scores[k] = max(p, v);
            if (p < threshold && v >= threshold) flagged[atomicAdd(nflagged, 1)] = k;
        };
        auto finish = [&](unsigned bin, unsigned& diag, unsigned (&Hin)[R]) -> unsigned {
            const unsigned done = __vmaxs2(best, (bin & dkeep) | dreset);
            if ((wflags & 3) && tk >= 0) {
                const int id = gid[tk];
                if (wflags & 1) put(slot_a, id, (int)(short)(done & 0xffffu) - go, wflags & 4);
                if (wflags & 2) put(slot_b, id, (int)(short)(done >> 16) - go, wflags & 8);
            }
            ++tk;
            best = h0;
            diag = h0;
#pragma unroll
            for (int r = 0; r < R; ++r) { Hin[r] = h0; E[r] = e0; }
            return done;
        };
        auto body = [&](unsigned c, unsigned fin, unsigned diag, const unsigned (&Hin)[R],
                        unsigned (&Hout)[R], unsigned& hout, unsigned& fout) {
            rowsq_step<R, RS, W>(smem, t, c, fin, diag, Hin, Hout, E, best, bvec, neg_ge,
                                 neg_go_int, one, hout, fout);
        };
        unsigned c0 = code(-2 * t), c1 = code(1 - 2 * t);
        uint2 a0 = above(0), a1 = above(1);
        for (int s = 0; s < steps; s += 2) {
            unsigned hi0 = __shfl_up_sync(mask, ho0, 1), fi0 = __shfl_up_sync(mask, fo0, 1);
            unsigned hi1 = __shfl_up_sync(mask, ho1, 1), fi1 = __shfl_up_sync(mask, fo1, 1);
            const unsigned bi0 = __shfl_up_sync(mask, bo0, 1), bi1 = __shfl_up_sync(mask, bo1, 1);
            if (t == 0) { hi0 = a0.x; fi0 = a0.y; hi1 = a1.x; fi1 = a1.y; }
            // a half whose rows start a query: H = 0 and F = -go above its first row
            hi0 = (hi0 & keep) | hreset; hi1 = (hi1 & keep) | hreset;
            fi0 &= keep; fi1 &= keep;
            const unsigned n0 = code(s + 2 - 2 * t), n1 = code(s + 3 - 2 * t);
            const uint2 na0 = above(s + 2), na1 = above(s + 3);
            if (!__any_sync(mask, (c0 | c1) & 0x80u)) {
                body(c0, fi0, hup, Ha, Hb, ho0, fo0);
                body(c1, fi1, hi0, Hb, Ha, ho1, fo1);
            } else {
                unsigned d = hup;
                bo0 = (c0 & 0x80u) ? finish(bi0, d, Ha) : bo1;
                body(c0, fi0, d, Ha, Hb, ho0, fo0);
                d = hi0;
                bo1 = (c1 & 0x80u) ? finish(bi1, d, Hb) : bo0;
                body(c1, fi1, d, Hb, Ha, ho1, fo1);
            }
            hup = hi1;
            if (!last && t == G - 1) {
                const int j = s - 2 * (G - 1);
                if (j >= 0 && j < len) bslot[j] = make_uint2(ho0, fo0);
                if (j + 1 >= 0 && j + 1 < len) bslot[j + 1] = make_uint2(ho1, fo1);
            }
            c0 = n0; c1 = n1; a0 = na0; a1 = na1;
        }
    }
}

// sw_rowsqb: rowsq_groups over a packed batch of queries (lane_info: per lane keep, slot
// A, slot B, write flags).
template <int R>
__global__ void __launch_bounds__(256, 2)
sw_rowsqb(const unsigned char* __restrict__ stream, const long long* __restrict__ gstart,
          const int* __restrict__ gfirst, const int* __restrict__ ids, int ngroups,
          int* __restrict__ ticket, const unsigned* __restrict__ prof,
          const int* __restrict__ lane_info, int kp, int first, int last, unsigned neg_ge,
          unsigned bvec, unsigned neg_go_int, unsigned one, int go, int threshold, int n,
          int* __restrict__ scores, int* __restrict__ flagged, int* __restrict__ nflagged,
          uint2* __restrict__ boundary)
{
    rowsq_groups<R>(stream, gstart, gfirst, ids, ngroups, ticket, prof, lane_info, kp, first,
                          last, neg_ge, bvec, neg_go_int, one, go, threshold, n, scores, flagged,
                          nflagged, boundary);
}

// Top-k cut of a packed batch's scores, one block of TOP_THREADS per query row (scores of
// `rows` rows of n targets, row r at scores + r * n).  Thread t takes the targets t,
// t + TOP_THREADS, ...: their maximum is a lower bound of the k-th best score once k of
// these disjoint groups are counted, so the k-th largest group maximum L (k <=
// TOP_THREADS; found by a bitonic sort in shared memory) leaves every target scoring at
// least the k-th best among those scoring >= L.  Those are appended as (id, score) to
// hits[r * cap ...] in no order, and counts[r] is how many there were: above cap the host
// cuts that row itself.  Rows with fewer than k targets get L = TOP_NONE (all of them).
#define TOP_THREADS 1024
#define TOP_NONE (-2147483647 - 1)
__global__ void __launch_bounds__(TOP_THREADS)
top_select(const int* __restrict__ scores, long long n, int k, int cap,
           int* __restrict__ counts, int2* __restrict__ hits)
{
    __shared__ int top[TOP_THREADS];
    __shared__ int found;
    const int t = threadIdx.x;
    const int* s = scores + (long long)blockIdx.x * n;
    int best = TOP_NONE;
    long long i = t;
    for (; i + 3 * TOP_THREADS < n; i += 4 * TOP_THREADS)
        best = max(max(max(best, s[i]), s[i + TOP_THREADS]),
                   max(s[i + 2 * TOP_THREADS], s[i + 3 * TOP_THREADS]));
    for (; i < n; i += TOP_THREADS) best = max(best, s[i]);
    top[t] = best;
    if (t == 0) found = 0;
    __syncthreads();
    // bitonic sort, largest first
    for (int size = 2; size <= TOP_THREADS; size <<= 1) {
        for (int stride = size >> 1; stride > 0; stride >>= 1) {
            const int j = t ^ stride;
            if (j > t) {
                const int a = top[t], b = top[j];
                if (((t & size) == 0) ? a < b : a > b) { top[t] = b; top[j] = a; }
            }
            __syncthreads();
        }
    }
    const int low = top[k - 1];
    int2* out = hits + (long long)blockIdx.x * cap;
    for (i = t; i < n; i += TOP_THREADS) {
        const int v = s[i];
        if (v >= low) {
            const int at = atomicAdd(&found, 1);
            if (at < cap) out[at] = make_int2((int)i, v);
        }
    }
    __syncthreads();
    if (t == 0) counts[blockIdx.x] = found;
}
