// Smith-Waterman database search kernels (local alignment, affine gaps, Gotoh).
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
//   sw_s16x2  two targets per group, one per 16-bit half of every register (DPX).  Scores
//             only.  A target whose maximum reaches `threshold` (32767 - max score) is
//             appended to `flagged`: before any lane can wrap, a correct H >= threshold has
//             entered the running maximum, so unflagged scores are exact.
//   sw_s32    one target per group in 32-bit lanes: the rescoring path and mode="end".
//             With ENDS, every column keeps its maximum and the first row reaching it;
//             the reduction then takes the best score at the smallest column, which is
//             the DESIGN tie rule (smallest target end, then smallest query end).

#define QPAD 32  // padding letters on each side of the query row table (>= G - 1)

__device__ __forceinline__ unsigned ld_shared(const unsigned* base, unsigned byte_offset) {
    return *reinterpret_cast<const unsigned*>(reinterpret_cast<const char*>(base) + byte_offset);
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
// 16-bit packed kernel: two targets per group.
// pairs[2p], pairs[2p+1]: target ids (the second may be -1).  qrow[QPAD + i]: byte offset
// of query row i's block in the pair table; table[(q*kp + a)*kp + b] packs S[q][a] (low
// half) and S[q][b] (high half); code kp-1 is padding.  neg_go / neg_ge: -go / -ge in both
// halves.  boundary (MULTI): 2*m uint2 per group of the grid.
template <int G, int R, bool MULTI>
__global__ void __launch_bounds__(256, 2)
sw_s16x2(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
         const int* __restrict__ pairs, int npairs, const int* __restrict__ qrow, int m,
         const unsigned* __restrict__ table, int table_words, int kp,
         unsigned neg_go, unsigned neg_ge, int threshold, int* __restrict__ scores,
         int* __restrict__ flagged, int* __restrict__ nflagged, uint2* __restrict__ boundary)
{
    extern __shared__ unsigned smem[];
    load_table(smem, table, table_words);
    const int t = threadIdx.x % G;
    const unsigned mask = group_mask<G>();
    const int ngroups = gridDim.x * (blockDim.x / G);
    const int gid = (blockIdx.x * blockDim.x + threadIdx.x) / G;
    const unsigned pad = (unsigned)(kp - 1);

    for (int p = gid; p < npairs; p += ngroups) {
        const int ta = pairs[2 * p], tb = pairs[2 * p + 1];
        const long long oa = offsets[ta];
        const int la = (int)(offsets[ta + 1] - oa);
        long long ob = 0;
        int lb = 0;
        if (tb >= 0) { ob = offsets[tb]; lb = (int)(offsets[tb + 1] - ob); }
        const int ntiles = MULTI ? max(1, (max(la, lb) + G * R - 1) / (G * R)) : 1;
        unsigned best = 0;
        for (int tile = 0; tile < ntiles; ++tile) {
            const int c0 = tile * G * R + t * R;
            unsigned idx[R], H[R], F[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int c = c0 + r;
                const unsigned a = c < la ? (unsigned)codes[oa + c] : pad;
                const unsigned b = c < lb ? (unsigned)codes[ob + c] : pad;
                idx[r] = (a * kp + b) * 4u;
                H[r] = 0u;
                F[r] = neg_go;
            }
            const uint2* bin = nullptr;
            uint2* bout = nullptr;
            uint2 next = make_uint2(0u, neg_go);
            if (MULTI) {
                bin = boundary + ((size_t)gid * 2 + (tile & 1)) * m;
                bout = boundary + ((size_t)gid * 2 + ((tile + 1) & 1)) * m;
                if (tile > 0 && t == 0 && m > 0) next = bin[0];
            }
            unsigned hout = 0u, eout = neg_go, hup = 0u;
            const int steps = m + G - 1;
            for (int s = 0; s < steps; ++s) {
                unsigned hin = __shfl_up_sync(mask, hout, 1, G);
                unsigned ein = __shfl_up_sync(mask, eout, 1, G);
                if (t == 0) {
                    if (MULTI && tile > 0) {
                        hin = next.x;
                        ein = next.y;
                        next = (s + 1 < m) ? bin[s + 1] : make_uint2(0u, neg_go);
                    } else {
                        hin = 0u;
                        ein = neg_go;
                    }
                }
                const int i = s - t;
                const unsigned qb = (unsigned)qrow[QPAD + i];
                unsigned diag = hup;
                hup = hin;
                unsigned e = ein;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const unsigned sc = ld_shared(smem, qb + idx[r]);
                    const unsigned h = __vimax3_s16x2_relu(__vadd2(diag, sc), e, F[r]);
                    diag = H[r];
                    H[r] = h;
                    const unsigned hg = __vadd2(h, neg_go);
                    e = __viaddmax_s16x2(e, neg_ge, hg);
                    F[r] = __viaddmax_s16x2(F[r], neg_ge, hg);
                }
#pragma unroll
                for (int r = 0; r + 1 < R; r += 2) best = __vimax3_s16x2(best, H[r], H[r + 1]);
                if (R & 1) best = __vmaxs2(best, H[R - 1]);
                hout = H[R - 1];
                eout = e;
                if (MULTI && t == G - 1 && i >= 0 && i < m && tile + 1 < ntiles)
                    bout[i] = make_uint2(hout, eout);
            }
            if (MULTI) __syncwarp(mask);
        }
#pragma unroll
        for (int off = G / 2; off > 0; off >>= 1)
            best = __vmaxs2(best, __shfl_xor_sync(mask, best, off, G));
        if (t == 0) {
            const int sa = (int)(short)(best & 0xffffu);
            scores[ta] = sa;
            if (sa >= threshold) flagged[atomicAdd(nflagged, 1)] = ta;
            if (tb >= 0) {
                const int sb = (int)(short)(best >> 16);
                scores[tb] = sb;
                if (sb >= threshold) flagged[atomicAdd(nflagged, 1)] = tb;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// 32-bit kernel: one target per group.  ids: target ids to score.  qrow[QPAD + i]: byte
// offset of query row i's profile row; table[q*kp + a] = S[q][a] (code kp-1 is padding).
// boundary (MULTI): 2*m int2 per group of the grid.
template <int G, int R, bool ENDS, bool MULTI>
__global__ void __launch_bounds__(256, 2)
sw_s32(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
       const int* __restrict__ ids, int nids, const int* __restrict__ qrow, int m,
       const int* __restrict__ table, int table_words, int kp, int go, int ge,
       int* __restrict__ scores, int* __restrict__ qends, int* __restrict__ tends,
       int2* __restrict__ boundary)
{
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
        int best = 0, best_i = 0, best_j = 0;  // ENDS: 0-based cell of the best score
        for (int tile = 0; tile < ntiles; ++tile) {
            const int c0 = tile * G * R + t * R;
            unsigned idx[R];
            int H[R], F[R], cmax[R], crow[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const int c = c0 + r;
                idx[r] = (c < len ? (unsigned)codes[o + c] : pad) * 4u;
                H[r] = 0;
                F[r] = -go;
                if (ENDS) { cmax[r] = 0; crow[r] = 0; }
            }
            const int2* bin = nullptr;
            int2* bout = nullptr;
            int2 next = make_int2(0, -go);
            if (MULTI) {
                bin = boundary + ((size_t)gid * 2 + (tile & 1)) * m;
                bout = boundary + ((size_t)gid * 2 + ((tile + 1) & 1)) * m;
                if (tile > 0 && t == 0 && m > 0) next = bin[0];
            }
            int hout = 0, eout = -go, hup = 0;
            const int steps = m + G - 1;
            for (int s = 0; s < steps; ++s) {
                int hin = __shfl_up_sync(mask, hout, 1, G);
                int ein = __shfl_up_sync(mask, eout, 1, G);
                if (t == 0) {
                    if (MULTI && tile > 0) {
                        hin = next.x;
                        ein = next.y;
                        next = (s + 1 < m) ? bin[s + 1] : make_int2(0, -go);
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
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    const int sc = (int)ld_shared(smem, qb + idx[r]);
                    const int h = __vimax3_s32_relu(diag + sc, e, F[r]);
                    diag = H[r];
                    H[r] = h;
                    const int hg = h - go;
                    e = __viaddmax_s32(e, -ge, hg);
                    F[r] = __viaddmax_s32(F[r], -ge, hg);
                    if (ENDS) {
                        if (live && h > cmax[r]) { cmax[r] = h; crow[r] = i; }
                    } else {
                        best = max(best, h);
                    }
                }
                hout = H[R - 1];
                eout = e;
                if (MULTI && t == G - 1 && i >= 0 && i < m && tile + 1 < ntiles)
                    bout[i] = make_int2(hout, eout);
            }
            if (ENDS) {
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
            if (MULTI) __syncwarp(mask);
        }
        if (!ENDS) {
#pragma unroll
            for (int off = G / 2; off > 0; off >>= 1)
                best = max(best, __shfl_xor_sync(mask, best, off, G));
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
// Chained 16-bit kernel for the longest targets: one warp per (pair, tile) work item, so
// the tiles of one long pair run on many warps at once instead of one after another.
// Items are claimed in order through `ticket`, so the item a warp waits for (the previous
// tile of its pair) is always held by a running warp: no deadlock.  The producer's last
// lane stores (H, E) of its last column per row into its own slot and publishes the
// number of finished rows in progress[item] every CHAIN_ROWS rows (fence, then flag); the
// consumer's lane 0 waits for a chunk before reading it through L2 (__ldcg).
#define CHAIN_ROWS 32

template <int R>
__global__ void __launch_bounds__(256, 2)
sw_s16x2_chain(const unsigned char* __restrict__ codes, const long long* __restrict__ offsets,
               const int* __restrict__ pairs, const int* __restrict__ items, int nitems,
               int* __restrict__ ticket, int* __restrict__ progress,
               const int* __restrict__ qrow, int m,
               const unsigned* __restrict__ table, int table_words, int kp,
               unsigned neg_go, unsigned neg_ge, int threshold, int* __restrict__ scores,
               int* __restrict__ flagged, int* __restrict__ nflagged, uint2* __restrict__ boundary)
{
    constexpr int G = 32;
    extern __shared__ unsigned smem[];
    load_table(smem, table, table_words);
    const int t = threadIdx.x & 31;
    const unsigned mask = 0xffffffffu;
    const unsigned pad = (unsigned)(kp - 1);
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
            idx[r] = (a * kp + b) * 4u;
            H[r] = 0u;
            F[r] = neg_go;
        }
        const uint2* bin = boundary + (size_t)(w > 0 ? w - 1 : 0) * m;
        uint2* bout = boundary + (size_t)w * m;
        const volatile int* ready = progress + (w > 0 ? w - 1 : 0);
        uint2 next = make_uint2(0u, neg_go);
        unsigned best = 0u, hout = 0u, eout = neg_go, hup = 0u;
        const int steps = m + G - 1;
        for (int s = 0; s < steps; ++s) {
            unsigned hin = __shfl_up_sync(mask, hout, 1, G);
            unsigned ein = __shfl_up_sync(mask, eout, 1, G);
            if (tile > 0) {
                if ((s & (CHAIN_ROWS - 1)) == 0 && s < m) {
                    if (t == 0) {
                        const int need = min(s + CHAIN_ROWS + 1, m);
                        while (*ready < need) __nanosleep(100);
                        __threadfence();
                    }
                    __syncwarp(mask);
                }
                if (t == 0) {
                    if (s == 0) next = __ldcg(bin);
                    hin = next.x;
                    ein = next.y;
                    next = (s + 1 < m) ? __ldcg(bin + s + 1) : make_uint2(0u, neg_go);
                }
            } else if (t == 0) {
                hin = 0u;
                ein = neg_go;
            }
            const int i = s - t;
            const unsigned qb = (unsigned)qrow[QPAD + i];
            unsigned diag = hup;
            hup = hin;
            unsigned e = ein;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const unsigned sc = ld_shared(smem, qb + idx[r]);
                const unsigned h = __vimax3_s16x2_relu(__vadd2(diag, sc), e, F[r]);
                diag = H[r];
                H[r] = h;
                const unsigned hg = __vadd2(h, neg_go);
                e = __viaddmax_s16x2(e, neg_ge, hg);
                F[r] = __viaddmax_s16x2(F[r], neg_ge, hg);
            }
#pragma unroll
            for (int r = 0; r + 1 < R; r += 2) best = __vimax3_s16x2(best, H[r], H[r + 1]);
            if (R & 1) best = __vmaxs2(best, H[R - 1]);
            hout = H[R - 1];
            eout = e;
            if (!last && t == G - 1 && i >= 0 && i < m) {
                bout[i] = make_uint2(hout, eout);
                if (((i + 1) & (CHAIN_ROWS - 1)) == 0 || i + 1 == m) {
                    __threadfence();
                    atomicExch(progress + w, i + 1);
                }
            }
        }
#pragma unroll
        for (int off = G / 2; off > 0; off >>= 1)
            best = __vmaxs2(best, __shfl_xor_sync(mask, best, off, G));
        if (t == 0) {
            // tiles of one pair meet here: the max is an atomicMax; exactly one tile sees
            // the score cross the threshold and flags the target
            const int sa = (int)(short)(best & 0xffffu);
            if (atomicMax(scores + ta, sa) < threshold && sa >= threshold)
                flagged[atomicAdd(nflagged, 1)] = ta;
            if (tb >= 0) {
                const int sb = (int)(short)(best >> 16);
                if (atomicMax(scores + tb, sb) < threshold && sb >= threshold)
                    flagged[atomicAdd(nflagged, 1)] = tb;
            }
        }
    }
}
