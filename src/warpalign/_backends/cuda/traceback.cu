// The traceback of many independent alignments at once: one warp per job (issue 20).
//
// Three passes, the GPU forms of cpu/pairwise.py's score_end and cpu/traceback.py's
// anchored_start and full_traceback, with the same recurrences and the same comparisons,
// so they pick the same end, start and path (warpalign/traceback.py states the rules):
//   tb_end    score and end cell of each job (local, global, semiglobal; DESIGN.md's tie
//             rule: the best score, then the smallest target end, then the smallest query
//             end); 4 query rows a lane.
//   tb_start  the anchored reverse pass: Gotoh over A = q[:m] reversed (rows) and
//             B = t[:n] reversed (columns) from the origin; the first column (then the
//             first row in it) holding the target score, only the last row counting when
//             full_query. Columns after the best one found so far are not computed.
//   tb_path   a global Gotoh over q[qlo:qlo+a] x t[tlo:tlo+b] storing one direction byte
//             per cell in device memory, then lane 0 walks the path back from (a, b).
//   tb_align  tb_start then tb_path of each local job in one launch (the same device
//             functions, tb_start_job and tb_path_job), its job arrays from tb_plan;
//             tb_pack turns its paths around.
//
// Layout of one job's rows: strips of 32 R query rows (R = TB_ROWS), lane L owning the R
// consecutive rows r0 + L R + 1 .. r0 + L R + R of strip r0. The target streams through:
// at step s lane L works on column j = s - L + 1 down its R rows, top down, and receives
// the cell above its first row (H, F) and the column's letter from lane L-1 by shuffles;
// lane 0 takes them from a chunk of 32 columns that the warp loads from the row buffer (H
// and F of the strip above, n+1 entries each, rewritten in place by lane 31 — the chunk is
// read 31 steps before lane 31 rewrites its columns) and from t. A strip costs n + 31
// steps of R cells. Direction bytes of strip k sit at dir[k][s][L][r] (r < R the row in
// the lane): the warp writes 32 R contiguous bytes a step, one word of R bytes a lane.
//
// Scores are int32; the host sends only jobs whose values stay within +-2^28.

#define TB_NEG (-(1 << 29))
#define TB_FULL 0xffffffffu
#define TB_NONE 0x7fffffff
// Query rows a lane of tb_start and tb_path (cuda/traceback.py's _ROWS sizes the direction
// bytes by it): one strip of 128 rows for a 128-letter read, where one row a lane took 4
// strips, each 31 steps of filling and emptying the warp's pipeline and a pass over the row
// buffer (docs/gpu-notes.md, session 31).
#define TB_ROWS 4

__device__ __forceinline__ int tb_max(int a, int b) { return a > b ? a : b; }

// Gotoh's cell (tb_start_job's and tb_end_rows' rows): e the row's E, updated from the cell
// to the left (its H hleft); f set from the cell above (its F fup, its H up); sdiag the
// diagonal's H plus the substitution score. Returns H.
__device__ __forceinline__ int tb_cell(int& e, int hleft, int fup, int up, int sdiag, int go,
                                       int ge, int& f) {
    e = tb_max(e - ge, hleft - go);
    f = tb_max(fup - ge, up - go);
    return tb_max(tb_max(sdiag, e), f);
}

// ---------------------------------------------------------------- tb_start
// Per job: q codes at codes + qoff[k] (m = qlen[k] rows, read backwards from the end), t
// codes at tcodes + toff[k] (n = tlen[k] columns, read backwards; tcodes may be codes),
// target score, scratch rows at roff[k] (2 * (n + 1) ints). Out: di, dj per job: the
// reversed extents, (-1, -1) when no cell reaches the target, (-2, -2) when a cell of the
// first reaching column exceeds it.
// One job's pass (the warp together): q (m rows, read backwards), t (n columns, read
// backwards), scratch rows RH (2 * (n + 1) ints); (di, dj) as tb_start's out.
template <int R>
__device__ __forceinline__ void tb_start_job(const unsigned char* __restrict__ q, int m,
                                             const unsigned char* __restrict__ t, int n,
                                             int goal, int* __restrict__ RH,
                                             const int* __restrict__ matrix, int K, int go,
                                             int ge, int full_query, int& out_i, int& out_j) {
    const int lane = threadIdx.x & 31;
    int* RF = RH + (n + 1);
    for (int j = lane; j <= n; j += 32) {
        RH[j] = j == 0 ? 0 : -(go + (j - 1) * ge);
        RF[j] = TB_NEG;
    }
    __syncwarp();
    int best_col = TB_NONE, best_row = 0, bad = 0;
    for (int r0 = 0; r0 < m; r0 += 32 * R) {
        const int cols = min(n, best_col);
        const int i0 = r0 + lane * R + 1;               // this lane's first row
        const bool active = i0 <= m;
        const int* srow[R];
        int e[R], hl[R];                                 // per row: E, H of the cell to the left
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int i = i0 + k;
            srow[k] = matrix + (i <= m ? q[m - i] : 0) * K;
            hl[k] = -(go + (i - 1) * ge);               // H(i, 0)
            e[k] = TB_NEG;
        }
        int diag = i0 == 1 ? 0 : -(go + (i0 - 2) * ge); // H(i0-1, 0)
        int h = 0, f = TB_NEG, tc = 0;
        // the lane's first column holding the goal, its smallest row there, and whether a
        // cell of the lane in that column exceeds the goal
        int first = TB_NONE, first_row = 0, over = 0;
        int cH = 0, cF = 0, cT = 0;
        for (int s = 0; s < cols + 31; ++s) {
            if ((s & 31) == 0) {
                const int j = s + 1 + lane;
                cH = j <= cols ? RH[j] : 0;
                cF = j <= cols ? RF[j] : TB_NEG;
                cT = j <= cols ? t[n - j] : 0;
            }
            int up = __shfl_up_sync(TB_FULL, h, 1);
            int fup = __shfl_up_sync(TB_FULL, f, 1);
            int tv = __shfl_up_sync(TB_FULL, tc, 1);
            const int c0H = __shfl_sync(TB_FULL, cH, s & 31);
            const int c0F = __shfl_sync(TB_FULL, cF, s & 31);
            const int c0T = __shfl_sync(TB_FULL, cT, s & 31);
            if (lane == 0) { up = c0H; fup = c0F; tv = c0T; }
            tc = tv;
            const int j = s - lane + 1;
            if (active && j >= 1 && j <= cols) {
                int dg = diag;                           // H(i-1, j-1) of the row computed
                diag = up;                               // the first row's, next column
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    const int i = i0 + k;
                    if (i <= m) {
                        int fk;
                        const int hk = tb_cell(e[k], hl[k], fup, up, dg + srow[k][tv], go, ge,
                                               fk);
                        if ((!full_query || i == m) && hk >= goal) {
                            if (first == TB_NONE) { first = j; first_row = i; over = hk > goal; }
                            else if (first == j) { over |= hk > goal; }
                        }
                        dg = hl[k];                      // H(i, j-1): the next row's diagonal
                        hl[k] = hk;
                        up = hk;                         // the cell above the next row
                        fup = fk;
                    }
                }
                h = up;
                f = fup;
                if (lane == 31) { RH[j] = h; RF[j] = f; }
            }
        }
        __syncwarp();
        int low = first;
        for (int d = 16; d; d >>= 1) low = min(low, __shfl_xor_sync(TB_FULL, low, d));
        if (low != TB_NONE) {
            const unsigned at = __ballot_sync(TB_FULL, first == low);
            const unsigned worse = __ballot_sync(TB_FULL, first == low && over);
            // the lowest lane holding the column holds its smallest row
            const int row = __shfl_sync(TB_FULL, first_row, __ffs(at) - 1);
            if (low < best_col) {
                best_col = low;
                best_row = row;
                bad = worse != 0;
            } else if (low == best_col) {
                bad |= worse != 0;
            }
        }
    }
    const bool none = best_col == TB_NONE;
    out_i = none ? -1 : bad ? -2 : best_row;
    out_j = none ? -1 : bad ? -2 : best_col;
}

extern "C" __global__ void tb_start(const unsigned char* __restrict__ codes,
                                    const long long* __restrict__ qoff, const int* __restrict__ qlen,
                                    const unsigned char* __restrict__ tcodes,
                                    const long long* __restrict__ toff, const int* __restrict__ tlen,
                                    const int* __restrict__ target, const long long* __restrict__ roff,
                                    int* __restrict__ rows, const int* __restrict__ matrix, int K,
                                    int go, int ge, int full_query, int jobs,
                                    int* __restrict__ out_i, int* __restrict__ out_j) {
    const int job = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (job >= jobs) return;
    int di, dj;
    tb_start_job<TB_ROWS>(codes + qoff[job], qlen[job], tcodes + toff[job], tlen[job],
                          target[job], rows + roff[job], matrix, K, go, ge, full_query, di, dj);
    if ((threadIdx.x & 31) == 0) {
        out_i[job] = di;
        out_j[job] = dj;
    }
}

// ---------------------------------------------------------------- tb_path
// Per job: q segment at codes + qoff[k] (a = qlen[k] rows), t segment at tcodes + toff[k]
// (b = tlen[k] columns; tcodes may be codes), flags bit 0 start_in_gap, bit 1 end_in_gap
// (a vertical gap at the start / end continues one open outside: its first position
// costs ge); scratch rows at roff[k];
// direction bytes at doff[k] (ceil(a / 32 R) * (b + 31) * 32 R bytes). Out: the path's
// score, and its ops (0 M, 1 I, 2 D) from the end backwards at opoff[k] (a + b bytes),
// their count in oplen[k].
// Direction byte, as cpu/traceback.py full_traceback: bits 0-1 the source of H (0 the
// diagonal, 1 E, 2 F; the diagonal wins ties, then E), bit 2 E extends the gap of the
// cell to the left, bit 3 F extends the gap of the cell above (strictly better only).
// One job's pass (the warp together): q (a rows), t (b columns), fo the first open of a
// vertical gap at column 0, end_in_gap (flags bit 1), scratch rows RH (2 * (b + 1) ints),
// direction bytes D; lane 0 writes the ops backwards at o and gives score and count.
template <int R> struct TbWord;                         // R direction bytes as one store
template <> struct TbWord<1> { typedef unsigned char type; };
template <> struct TbWord<2> { typedef unsigned short type; };
template <> struct TbWord<4> { typedef unsigned int type; };

template <int R>
__device__ __forceinline__ void tb_path_job(const unsigned char* __restrict__ q, int a,
                                            const unsigned char* __restrict__ t, int b, int fo,
                                            bool end_in_gap, int* __restrict__ RH,
                                            unsigned char* __restrict__ D,
                                            unsigned char* __restrict__ o,
                                            const int* __restrict__ matrix, int K, int go,
                                            int ge, int& out_score, int& out_len) {
    typedef typename TbWord<R>::type word;
    const int lane = threadIdx.x & 31;
    int* RF = RH + (b + 1);
    const long long pitch = (long long)(b + 31) * 32 * R;   // bytes of one strip
    for (int j = lane; j <= b; j += 32) {
        RH[j] = j == 0 ? 0 : -(go + (j - 1) * ge);
        RF[j] = TB_NEG;
    }
    __syncwarp();
    for (int r0 = 0; r0 < a; r0 += 32 * R) {
        const int i0 = r0 + lane * R + 1;                // this lane's first row
        const bool active = i0 <= a;
        const int* srow[R];
        int e[R], hl[R];
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int i = i0 + k;
            srow[k] = matrix + (i <= a ? q[i - 1] : 0) * K;
            hl[k] = -(fo + (i - 1) * ge);                // H(i, 0)
            e[k] = TB_NEG;
        }
        int diag = i0 == 1 ? 0 : -(fo + (i0 - 2) * ge); // H(i0-1, 0)
        int h = 0, f = TB_NEG, tc = 0;
        int cH = 0, cF = 0, cT = 0;
        word* Ds = reinterpret_cast<word*>(D + (long long)(r0 / (32 * R)) * pitch) + lane;
        for (int s = 0; s < b + 31; ++s) {
            if ((s & 31) == 0) {
                const int j = s + 1 + lane;
                cH = j <= b ? RH[j] : 0;
                cF = j <= b ? RF[j] : TB_NEG;
                cT = j <= b ? t[j - 1] : 0;
            }
            int up = __shfl_up_sync(TB_FULL, h, 1);
            int fup = __shfl_up_sync(TB_FULL, f, 1);
            int tv = __shfl_up_sync(TB_FULL, tc, 1);
            const int c0H = __shfl_sync(TB_FULL, cH, s & 31);
            const int c0F = __shfl_sync(TB_FULL, cF, s & 31);
            const int c0T = __shfl_sync(TB_FULL, cT, s & 31);
            if (lane == 0) { up = c0H; fup = c0F; tv = c0T; }
            tc = tv;
            const int j = s - lane + 1;
            if (active && j >= 1 && j <= b) {
                int dg = diag;
                diag = up;
                unsigned bits = 0;
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    const int i = i0 + k;
                    if (i <= a) {
                        const int e_ext = e[k] - ge, e_open = hl[k] - go;
                        const int f_ext = fup - ge, f_open = up - go;
                        int d = (e_ext > e_open ? 4 : 0) | (f_ext > f_open ? 8 : 0);
                        e[k] = tb_max(e_ext, e_open);
                        const int fk = tb_max(f_ext, f_open);
                        const int s0 = dg + srow[k][tv];
                        const int hk = tb_max(tb_max(s0, fk), e[k]);
                        d |= fk > tb_max(s0, e[k]) ? 2 : e[k] > s0 ? 1 : 0;
                        bits |= (unsigned)d << (8 * k);
                        dg = hl[k];
                        hl[k] = hk;
                        up = hk;
                        fup = fk;
                        if (i == a) { RH[j] = hk; RF[j] = fk; }
                    }
                }
                Ds[(long long)s * 32] = (word)bits;
                h = up;
                f = fup;
                if (lane == 31) { RH[j] = h; RF[j] = f; }
            }
        }
        __syncwarp();
    }
    if (lane != 0) return;
    int score = RH[b];
    int state = 0;
    if (end_in_gap && RF[b] + go - ge > score) {
        score = RF[b] + go - ge;
        state = 2;
    }
    int k = 0, i = a, j = b;
    while (i > 0 || j > 0) {
        if (i == 0) { o[k++] = 2; --j; continue; }
        if (j == 0) { o[k++] = 1; --i; continue; }
        const int r = i - 1, w = r % (32 * R), L = w / R;
        const unsigned char d = D[(long long)(r / (32 * R)) * pitch
                                  + ((long long)(j - 1 + L) * 32 + L) * R + (w - L * R)];
        if (state == 0) {
            const int src = d & 3;
            if (src == 0) { o[k++] = 0; --i; --j; } else { state = src; }
        } else if (state == 1) {
            o[k++] = 2;
            if ((d & 4) == 0) state = 0;
            --j;
        } else {
            o[k++] = 1;
            if ((d & 8) == 0) state = 0;
            --i;
        }
    }
    out_score = score;
    out_len = k;
}

extern "C" __global__ void tb_path(const unsigned char* __restrict__ codes,
                                   const long long* __restrict__ qoff, const int* __restrict__ qlen,
                                   const unsigned char* __restrict__ tcodes,
                                   const long long* __restrict__ toff, const int* __restrict__ tlen,
                                   const unsigned char* __restrict__ flags,
                                   const long long* __restrict__ roff, int* __restrict__ rows,
                                   const long long* __restrict__ doff, unsigned char* __restrict__ dir,
                                   const long long* __restrict__ opoff, unsigned char* __restrict__ ops,
                                   const int* __restrict__ matrix, int K, int go, int ge, int jobs,
                                   int* __restrict__ out_score, int* __restrict__ out_len) {
    const int job = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (job >= jobs) return;
    int score, len;
    tb_path_job<TB_ROWS>(codes + qoff[job], qlen[job], tcodes + toff[job], tlen[job],
                         (flags[job] & 1) ? ge : go, (flags[job] & 2) != 0, rows + roff[job],
                         dir + doff[job], ops + opoff[job], matrix, K, go, ge, score, len);
    if ((threadIdx.x & 31) == 0) {
        out_score[job] = score;
        out_len[job] = len;
    }
}

// ---------------------------------------------------------------- tb_align
// tb_start then tb_path in one launch, for local alignments whose rectangle from the
// origin to the end fits the direction bytes (issue 20: the host's round trip between
// the two passes cost more than both kernels for 32,768 pairs of 128 x 1,024). Per job
// as tb_start (m = qlen[k] rows ending at the end cell, n = tlen[k] columns, target)
// with scratch rows at roff[k] (2 * (n + 1) ints), direction bytes at doff[k]
// (ceil(m / 32 R) * (n + 31) * 32 R) and an ops slot at opoff[k] (m + n bytes). Out, 4 x jobs:
// di, dj (as tb_start's; 0 and the rest 0 when no path runs), the path's score, its op
// count (ops backwards from opoff[k], as tb_path's). A job of target 0 (a local score of
// 0, tb_plan's) is the empty alignment: all four 0, nothing else read or written.
extern "C" __global__ void tb_align(const unsigned char* __restrict__ codes,
                                    const long long* __restrict__ qoff, const int* __restrict__ qlen,
                                    const unsigned char* __restrict__ tcodes,
                                    const long long* __restrict__ toff, const int* __restrict__ tlen,
                                    const int* __restrict__ target, const long long* __restrict__ roff,
                                    int* __restrict__ rows, const long long* __restrict__ doff,
                                    unsigned char* __restrict__ dir,
                                    const long long* __restrict__ opoff,
                                    unsigned char* __restrict__ ops,
                                    const int* __restrict__ matrix, int K, int go, int ge,
                                    int jobs, int* __restrict__ out) {
    const int job = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (job >= jobs) return;
    const int m = qlen[job], n = tlen[job];
    const unsigned char* q = codes + qoff[job];
    const unsigned char* t = tcodes + toff[job];
    int* RH = rows + roff[job];
    int di = 0, dj = 0, score = 0, len = 0;
    if (target[job] > 0)            // a local score of 0: the empty alignment
        tb_start_job<TB_ROWS>(q, m, t, n, target[job], RH, matrix, K, go, ge, 0, di, dj);
    __syncwarp();
    if (di > 0 && dj > 0)
        tb_path_job<TB_ROWS>(q + (m - di), di, t + (n - dj), dj, go, false, RH,
                             dir + doff[job], ops + opoff[job], matrix, K, go, ge, score, len);
    if ((threadIdx.x & 31) == 0) {
        out[job] = di;
        out[jobs + job] = dj;
        out[2 * jobs + job] = score;
        out[3 * jobs + job] = len;
    }
}

// ---------------------------------------------------------------- tb_plan
// tb_align's job arrays made on the device from each local pair's end cell (issue 20: the
// host's planning between the ENDS kernels and tb_align took ~4 ms for 32,768 pairs on an
// H100 host, docs/gpu-notes.md session 31). Job k: ends[3k..3k+2] = (score, query end qe,
// target end te), its target starting at tpos[k] (its query at qoff[k], passed to tb_align
// as it is). The reverse pass's target segment begins at lo = max(te - span, 0), span
// warpalign/spans.py's span_from(Sq = qe x top, qe, score) (top: the best score any code
// has; bounded = 0 where gaps extend for free: no bound, lo = 0), as traceback.py's
// _segment_starts. Out: qlen = qe, toff = tpos + lo, tlen = te - lo, target = score (a
// score <= 0: all 0 but toff, sizes 0); sizes[0 / 1 / 2][k] the job's direction bytes
// (as _dir_bytes), scratch row ints (2 (tlen + 1)) and ops slot bytes (qe + tlen); and
// refused[0] counts the jobs tb_align cannot take (an empty segment or end row, qe + tlen
// over `most`, (qe + 1) (tlen + 1) over max_cells).
extern "C" __global__ void tb_plan(const long long* __restrict__ ends,
                                   const long long* __restrict__ tpos, int jobs, long long top,
                                   long long go, long long ge, int bounded, long long most,
                                   long long max_cells, int* __restrict__ qlen,
                                   long long* __restrict__ toff, int* __restrict__ tlen,
                                   int* __restrict__ target, long long* __restrict__ sizes,
                                   unsigned long long* __restrict__ refused) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= jobs) return;
    const long long score = ends[3LL * k], qe = ends[3LL * k + 1], te = ends[3LL * k + 2];
    long long lo = 0;
    if (score > 0 && bounded) {
        const long long sq = qe * top;
        long long span = 0;
        if (sq >= score) {
            const long long slack = sq - go - score;
            span = qe + (slack < 0 ? 0 : slack / ge + 1);
        }
        lo = te - span > 0 ? te - span : 0;
    }
    const long long seg = score > 0 ? te - lo : 0, m = score > 0 ? qe : 0;
    qlen[k] = (int)m;
    toff[k] = tpos[k] + lo;
    tlen[k] = (int)seg;
    target[k] = score > 0 ? (int)score : 0;
    const long long strip = 32 * TB_ROWS;
    sizes[k] = score > 0 ? (m + strip - 1) / strip * (seg + 31) * strip : 0;
    sizes[(long long)jobs + k] = score > 0 ? 2 * (seg + 1) : 0;
    sizes[2LL * jobs + k] = m + seg;
    if (score > 0 && !(m > 0 && seg > 0 && m + seg <= most && (m + 1) * (seg + 1) <= max_cells))
        atomicAdd(refused, 1ULL);
}

// ---------------------------------------------------------------- tb_columns
// The chained route's table columns (cuda/traceback.py trace_local_chain), one thread a
// job: its path's start in the query and the target (the end less tb_align's reversed
// extents), its identity (matches over aligned columns, as NumPy's float64 division; 0
// for an empty path) and a count of the paths whose rendered score, path score or
// consumption is not the job's (warpalign/traced.py check_paths' comparisons).
extern "C" __global__ void tb_columns(const int* __restrict__ res,
                                      const long long* __restrict__ ends,
                                      const long long* __restrict__ opoff,
                                      const long long* __restrict__ scores,
                                      const long long* __restrict__ used_q,
                                      const long long* __restrict__ used_t,
                                      const long long* __restrict__ matches, int jobs,
                                      long long* __restrict__ qs, long long* __restrict__ ts,
                                      double* __restrict__ identity,
                                      unsigned long long* __restrict__ failed) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= jobs) return;
    const long long di = res[k], dj = res[(long long)jobs + k], best = res[2LL * jobs + k];
    const long long score = ends[3LL * k];
    qs[k] = ends[3LL * k + 1] - di;
    ts[k] = ends[3LL * k + 2] - dj;
    const long long length = opoff[k + 1] - opoff[k];
    identity[k] = length > 0 ? (double)matches[k] / (double)length : 0.0;
    if (scores[k] != score || best != score || used_q[k] != di || used_t[k] != dj)
        atomicAdd(failed, 1ULL);
}

// ---------------------------------------------------------------- tb_pack
// The paths of tb_align's slots (written backwards) turned around and packed: path k's
// len[k] ops at slot[k] go to out[at[k]:at[k] + len[k]] in alignment order; one warp a job.
extern "C" __global__ void tb_pack(const unsigned char* __restrict__ ops,
                                   const long long* __restrict__ slot, const int* __restrict__ len,
                                   const long long* __restrict__ at, int jobs,
                                   unsigned char* __restrict__ out) {
    const int job = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (job >= jobs) return;
    const int k = len[job];
    const unsigned char* src = ops + slot[job];
    unsigned char* dst = out + at[job];
    for (int r = threadIdx.x & 31; r < k; r += 32) dst[r] = src[k - 1 - r];
}

// ---------------------------------------------------------------- tb_end
// Per job: q at codes + qoff[k] (m = qlen[k] rows), t at tcodes + toff[k] (n = tlen[k]
// columns; tcodes may be a resident database), both non-empty; scratch rows at roff[k]
// (2 * (n + 1) ints). algorithm: 0 local, 1 global, 2 semiglobal (cpu/pairwise.py's codes).
// Out: score, query end, target end.
// R consecutive query rows a lane (a strip is 32 R rows): lane L owns rows r0 + L R + 1 ..
// r0 + L R + R and at step s works on column j = s - L + 1 down its R rows, the cell above
// its first row (H, F) and the column's letter coming from lane L-1 by shuffles (lane 0
// takes them from a chunk of 32 columns of the row buffer and t, as in tb_start). A strip
// costs n + 31 steps of R cells; the rows of a step are taken top down, so at one column the
// smaller row wins the tie rule. tb_end is R = 4: the 500 mmseqs2 queries' 4,975 top-10
// pairs took 29.6 ms at one row a lane, 26.5 / 22.6 / 31.5 at 2 / 4 / 8 (one H200,
// docs/gpu-notes.md, session 29).
template <int R>
__device__ __forceinline__ void tb_end_rows(const unsigned char* __restrict__ codes,
                                            const long long* __restrict__ qoff,
                                            const int* __restrict__ qlen,
                                            const unsigned char* __restrict__ tcodes,
                                            const long long* __restrict__ toff,
                                            const int* __restrict__ tlen,
                                            const long long* __restrict__ roff,
                                            int* __restrict__ rows,
                                            const int* __restrict__ matrix, int K, int go,
                                            int ge, int algorithm, int jobs,
                                            int* __restrict__ out_score,
                                            int* __restrict__ out_i, int* __restrict__ out_j) {
    const int lane = threadIdx.x & 31;
    const int job = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (job >= jobs) return;
    const bool local = algorithm == 0, global = algorithm == 1;
    const int m = qlen[job], n = tlen[job];
    const unsigned char* q = codes + qoff[job];
    const unsigned char* t = tcodes + toff[job];
    int* RH = rows + roff[job];
    int* RF = RH + (n + 1);
    for (int j = lane; j <= n; j += 32) {
        RH[j] = (global && j > 0) ? -(go + (j - 1) * ge) : 0;
        RF[j] = TB_NEG;
    }
    __syncwarp();
    int best = 0, bi = 0, bj = 0;          // local: this lane's best cell, by the tie rule
    for (int r0 = 0; r0 < m; r0 += 32 * R) {
        const int i0 = r0 + lane * R + 1;  // this lane's first row
        const bool active = i0 <= m;
        const int* srow[R];
        int e[R], hl[R];                   // per row: E and H of the cell to the left
#pragma unroll
        for (int k = 0; k < R; ++k) {
            const int i = i0 + k;
            srow[k] = matrix + (i <= m ? q[i - 1] : 0) * K;
            hl[k] = local ? 0 : -(go + (i - 1) * ge);                         // H(i, 0)
            e[k] = TB_NEG;
        }
        int diag = (local || i0 == 1) ? 0 : -(go + (i0 - 2) * ge);            // H(i0-1, 0)
        int h = 0, f = TB_NEG, tc = 0;     // the lane's last row's H, F; the column's letter
        int cH = 0, cF = 0, cT = 0;
        for (int s = 0; s < n + 31; ++s) {
            if ((s & 31) == 0) {
                const int j = s + 1 + lane;
                cH = j <= n ? RH[j] : 0;
                cF = j <= n ? RF[j] : TB_NEG;
                cT = j <= n ? t[j - 1] : 0;
            }
            int up = __shfl_up_sync(TB_FULL, h, 1);
            int fup = __shfl_up_sync(TB_FULL, f, 1);
            int tv = __shfl_up_sync(TB_FULL, tc, 1);
            const int c0H = __shfl_sync(TB_FULL, cH, s & 31);
            const int c0F = __shfl_sync(TB_FULL, cF, s & 31);
            const int c0T = __shfl_sync(TB_FULL, cT, s & 31);
            if (lane == 0) { up = c0H; fup = c0F; tv = c0T; }
            tc = tv;
            const int j = s - lane + 1;
            if (active && j >= 1 && j <= n) {
                int dg = diag;             // H(i-1, j-1) of the row being computed
                diag = up;                 // the first row's diagonal at the next column
#pragma unroll
                for (int k = 0; k < R; ++k) {
                    const int i = i0 + k;
                    if (i <= m) {
                        int fk;
                        int hk = tb_cell(e[k], hl[k], fup, up, dg + srow[k][tv], go, ge, fk);
                        if (local) {
                            hk = tb_max(hk, 0);
                            if (hk > best || (hk == best && hk > 0 && j < bj)) {
                                best = hk; bi = i; bj = j;
                            }
                        }
                        dg = hl[k];        // H(i, j-1): the next row's diagonal
                        hl[k] = hk;
                        up = hk;           // the cell above the next row
                        fup = fk;
                        if (i == m) { RH[j] = hk; RF[j] = fk; }
                    }
                }
                h = up;
                f = fup;
                if (lane == 31) { RH[j] = h; RF[j] = f; }
            }
        }
        __syncwarp();
    }
    if (local) {
        // the warp's best: highest score, then smallest column, then smallest row
        for (int d = 16; d; d >>= 1) {
            const int ob = __shfl_xor_sync(TB_FULL, best, d);
            const int oi = __shfl_xor_sync(TB_FULL, bi, d);
            const int oj = __shfl_xor_sync(TB_FULL, bj, d);
            if (ob > best || (ob == best && (oj < bj || (oj == bj && oi < bi)))) {
                best = ob; bi = oi; bj = oj;
            }
        }
        if (best == 0) { bi = 0; bj = 0; }
    } else if (global) {
        best = RH[n]; bi = m; bj = n;
    } else {
        // semiglobal: the last row's best cell, smallest column; column 0 is H(m, 0)
        best = -(go + (m - 1) * ge); bj = 0;
        for (int j = 1 + lane; j <= n; j += 32) {
            if (RH[j] > best || (RH[j] == best && j < bj)) { best = RH[j]; bj = j; }
        }
        for (int d = 16; d; d >>= 1) {
            const int ob = __shfl_xor_sync(TB_FULL, best, d);
            const int oj = __shfl_xor_sync(TB_FULL, bj, d);
            if (ob > best || (ob == best && oj < bj)) { best = ob; bj = oj; }
        }
        bi = m;
    }
    if (lane == 0) {
        out_score[job] = best;
        out_i[job] = bi;
        out_j[job] = bj;
    }
}

#define TB_END_ROWS(NAME, R)                                                              \
    extern "C" __global__ void NAME(                                                      \
        const unsigned char* __restrict__ codes, const long long* __restrict__ qoff,      \
        const int* __restrict__ qlen, const unsigned char* __restrict__ tcodes,           \
        const long long* __restrict__ toff, const int* __restrict__ tlen,                 \
        const long long* __restrict__ roff, int* __restrict__ rows,                       \
        const int* __restrict__ matrix, int K, int go, int ge, int algorithm, int jobs,   \
        int* __restrict__ out_score, int* __restrict__ out_i, int* __restrict__ out_j) {  \
        tb_end_rows<R>(codes, qoff, qlen, tcodes, toff, tlen, roff, rows, matrix, K, go,  \
                       ge, algorithm, jobs, out_score, out_i, out_j);                     \
    }
TB_END_ROWS(tb_end, 4)
