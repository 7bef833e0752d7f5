// Rendering of many traced paths at once: one warp per path (issue 20).
//
// The GPU form of _backends/render.py's render_paths (its docstring states what is
// computed; the output is the same, byte for byte). Path k is ops[opoff[k]:opoff[k+1]]
// (0 M, 1 I, 2 D), its first query symbol qcat[qpos[k]], its first target symbol
// tcat[tpos[k]]. The warp walks its path in chunks of 32 ops, lane L on op base + L:
//   - the query (target) position of a lane's op is the path's position so far plus the
//     ops of lower lanes that take a query (target) symbol: a ballot and a popcount;
//   - the op before lane 0's is the chunk before's last op (-1 at the path's start): an op
//     equal to the one before extends a gap (and continues a CIGAR run), else opens one;
//   - a lane whose op differs from the next one (or is the path's last) ends a CIGAR run;
//     the run started at the last lane at or below it that starts one, else where the
//     run open at the chunk's start began.
//   render_walk   score, used_q, used_t, matches, the aligned bytes, and the length of each
//                 path's CIGAR text (a run of n ops: n's decimal digits and a letter).
//   render_cigar  each path's CIGAR text at cigoff[k] (the host's running sums of the
//                 lengths): a warp scan places the runs that end in a chunk.
// Positions past the end of qcat or tcat (an inconsistent path, reported by used_q /
// used_t) read the last symbol (code 0 from an empty buffer), as render.py's _gather.

#define RD_FULL 0xffffffffu
#define RD_GAP 45              // "-"

__device__ __forceinline__ int rd_digits(long long n) {
    unsigned long long v = (unsigned long long)n, power = 10;
    int digits = 1;
    while (digits < 19 && v >= power) {
        ++digits;
        power *= 10;
    }
    return digits;
}

__device__ __forceinline__ unsigned char rd_code(const unsigned char* __restrict__ cat,
                                                 long long size, long long at) {
    if (size <= 0) return 0;
    return cat[at < 0 ? 0 : (at < size ? at : size - 1)];
}

// Where the run that ends at this lane began (see above): `heads` has a bit per lane that
// starts a run, `open` is where the run open at the chunk's start began.
__device__ __forceinline__ long long rd_run_start(unsigned heads, int lane, long long base,
                                                  long long open) {
    const unsigned mine = heads & (0xffffffffu >> (31 - lane));
    return mine ? base + 31 - __clz(mine) : open;
}

// One lane's view of a chunk of 32 ops starting at `base` (see above): its op (-2 past the
// path's end `hi`), the op before it (lane 0: `before`, the last chunk's last op) and the op
// after it (-1 past the path's end).
struct RdLane {
    long long p;
    bool in;
    int op, prev, next;
};

__device__ __forceinline__ RdLane rd_lane(const unsigned char* __restrict__ ops, long long base,
                                          long long hi, int lane, int before) {
    RdLane c;
    c.p = base + lane;
    c.in = c.p < hi;
    c.op = c.in ? ops[c.p] : -2;
    c.next = c.p + 1 < hi ? ops[c.p + 1] : -1;
    c.prev = __shfl_up_sync(RD_FULL, c.op, 1);
    if (lane == 0) c.prev = before;
    return c;
}

extern "C" __global__ void render_walk(const unsigned char* __restrict__ ops,
                                       const long long* __restrict__ opoff, int paths,
                                       const unsigned char* __restrict__ qcat, long long qsize,
                                       const long long* __restrict__ qpos,
                                       const unsigned char* __restrict__ tcat, long long tsize,
                                       const long long* __restrict__ tpos,
                                       const int* __restrict__ matrix, int K, long long go,
                                       long long ge, const unsigned char* __restrict__ symbols,
                                       long long* __restrict__ scores,
                                       long long* __restrict__ used_q,
                                       long long* __restrict__ used_t,
                                       long long* __restrict__ matches,
                                       unsigned char* __restrict__ query,
                                       unsigned char* __restrict__ target,
                                       long long* __restrict__ text) {
    const int lane = threadIdx.x & 31;
    const long long path = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (path >= paths) return;                     // the whole warp
    const long long lo = opoff[path], hi = opoff[path + 1];
    const long long q0 = qpos[path], t0 = tpos[path];
    long long i = q0, j = t0, open = lo;
    long long score = 0, chars = 0, same = 0;      // this lane's share
    int before = -1;                               // the op before the chunk
    const long long last_cell = (long long)K * K - 1;
    for (long long base = lo; base < hi; base += 32) {
        const RdLane c = rd_lane(ops, base, hi, lane, before);
        const long long p = c.p;
        const bool in = c.in;
        const int op = c.op, prev = c.prev, next = c.next;
        const unsigned takes_q = __ballot_sync(RD_FULL, in && op != 2);
        const unsigned takes_t = __ballot_sync(RD_FULL, in && op != 1);
        const unsigned heads = __ballot_sync(RD_FULL, in && op != prev);
        const unsigned below = (1u << lane) - 1;
        if (in) {
            const unsigned char qc = rd_code(qcat, qsize, i + __popc(takes_q & below));
            const unsigned char tc = rd_code(tcat, tsize, j + __popc(takes_t & below));
            const unsigned char qb = op != 2 ? symbols[qc] : RD_GAP;
            const unsigned char tb = op != 1 ? symbols[tc] : RD_GAP;
            if (op == 0) {
                const long long cell = (long long)qc * K + tc;
                score += matrix[cell < last_cell ? cell : last_cell];
            } else {
                score -= op == prev ? ge : go;
            }
            same += qb == tb && qb != RD_GAP && tb != RD_GAP;
            query[p] = qb;
            target[p] = tb;
            if (op != next) chars += 1 + rd_digits(p - rd_run_start(heads, lane, base, open) + 1);
        }
        if (heads) open = base + 31 - __clz(heads);
        i += __popc(takes_q);
        j += __popc(takes_t);
        before = __shfl_sync(RD_FULL, op, 31);
    }
    for (int d = 16; d > 0; d >>= 1) {
        score += __shfl_xor_sync(RD_FULL, score, d);
        chars += __shfl_xor_sync(RD_FULL, chars, d);
        same += __shfl_xor_sync(RD_FULL, same, d);
    }
    if (lane == 0) {
        scores[path] = score;
        used_q[path] = i - q0;
        used_t[path] = j - t0;
        matches[path] = same;
        text[path] = chars;
    }
}

extern "C" __global__ void render_cigar(const unsigned char* __restrict__ ops,
                                        const long long* __restrict__ opoff, int paths,
                                        const long long* __restrict__ cigoff,
                                        unsigned char* __restrict__ cigar) {
    const int lane = threadIdx.x & 31;
    const long long path = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (path >= paths) return;                     // the whole warp
    const long long lo = opoff[path], hi = opoff[path + 1];
    long long at = cigoff[path], open = lo;
    int before = -1;
    for (long long base = lo; base < hi; base += 32) {
        const RdLane c = rd_lane(ops, base, hi, lane, before);
        const long long p = c.p;
        const bool in = c.in;
        const int op = c.op, prev = c.prev, next = c.next;
        const unsigned heads = __ballot_sync(RD_FULL, in && op != prev);
        long long run = 0;
        int width = 0;
        if (in && op != next) {
            run = p - rd_run_start(heads, lane, base, open) + 1;
            width = 1 + rd_digits(run);
        }
        int end = width;                           // inclusive scan of the widths
        for (int d = 1; d < 32; d <<= 1) {
            const int got = __shfl_up_sync(RD_FULL, end, d);
            if (lane >= d) end += got;
        }
        if (width) {
            unsigned char* out = cigar + at + end - width;
            out[width - 1] = op == 0 ? 'M' : (op == 1 ? 'I' : 'D');
            for (int k = width - 2; k >= 0; --k) {
                out[k] = (unsigned char)('0' + run % 10);
                run /= 10;
            }
        }
        at += __shfl_sync(RD_FULL, end, 31);
        if (heads) open = base + 31 - __clz(heads);
        before = __shfl_sync(RD_FULL, op, 31);
    }
}
