// Bit-parallel LLCS on the GPU (issue 5, paper 001; KERNELS.md §D: skew + shuffle carries,
// warps chained through flags in global memory inside one persistent launch).
//
// The pattern bit-vector V (bit p = 1 - (L[p+1][t] - L[p][t]), as in _backends/cpu/lcs.py)
// is cut into *bands* of 32*K 64-bit words; one warp (one block) owns a band for the whole
// text: lane l holds the K consecutive words l*K .. l*K+K-1 of the band in registers. Each
// text symbol c advances V by  V = (V + (V & M[c])) | (V & ~M[c])  with the carry passed up
// the words. Skew: lane l works on text column r - l at step r, so the carry out of lane l
// at column j reaches lane l+1 exactly when lane l+1 works on column j: one shuffle per step
// moves it, and it is all that crosses lanes. A lane reads the code of its column from the
// warp's text ring in shared memory (written a chunk ahead, so the code and mask loads are
// off the carry's path); the step-to-step dependency is shuffle -> add chain -> shuffle.
// A step is 3 ALU instructions a 32-bit limb (and, add with carry, or) plus one to take the
// carry in; the carry out is turned into a register on the multiply-add pipe (madc), which
// also gathers the top lane's carry word (earlier, the carry rode in bit 31 of the shuffled
// code word: three more ALU instructions a step, 18-22% slower; gpu-notes "Session 39").
//
// Lane 0 takes its carries from the band below: lane 31's shuffled word carries them in its
// bit 31 (lane 31's own carry is in bit 0 there and goes nowhere else). The top lane of a
// band collects its carry outs, 32 columns per word (bit 31-i = step 32q+i, i.e. column
// 32q+i-31), and publishes word q to a ring buffer read by the band above:
// plain store, then st.release of the band's progress counter; the consumer polls with
// ld.acquire and publishes how far it has read (back-pressure on the ring). Bands are taken
// by ticket (atomicAdd), so a band only ever waits on bands that already have a warp; the
// host keeps every band of all launches in flight resident at once (it never launches more
// than fit), which the back-pressure needs. Every wait has a time limit: on expiry the
// launch sets an error flag and all warps leave; the host then recomputes on the CPU.
//
// Match masks live in shared memory as M[code][k][lane] (64-bit), so the 32 lanes of a
// load hit 32 distinct 8-byte slots of the same bank pattern whatever their codes are
// (conflict-free). Codes are the pattern's own alphabet compacted to 1..sigma; 0 is "not in
// the pattern" (all-zero mask), also used for padding columns, which are no-ops with a
// zero carry in.
//
// A launch processes the words [word0, word0 + bands*32*K); when the pattern needs more
// bands than fit on the GPU at once the host runs several launches in sequence, the top
// band's carry words of one (cout) feeding band 0 of the next (cin), like the CPU stripes.
//
// Variants for measuring (compile-time, lcs.py's `sync`; the answer is the same):
// LCS_TAGGED=0: ring slots are plain words, published by st.release of the band's progress
//   counter (a MEMBAR.GPU per chunk on the producer) and read after an ld.acquire of it.
// LCS_TAGGED=1: a ring slot is one 64-bit word (carry word | (chunk + 1) << 32) written by a
//   single relaxed store (no fence: data and flag are one single-copy-atomic access); the
//   consumer loads slot q+1 one chunk ahead and only waits if its tag is not there yet.
// Blocks may hold several warps (lcs.py's `warps`): each warp takes its own band by ticket
// and its own slice of shared memory; warps never wait for each other inside a block.
//
// llcs_batch runs many independent passes (all the forward and backward passes of one
// Hirschberg level) in one launch: the strings stay on the device for the whole recursion
// and each pass is a descriptor (where its pattern and text start, which way they are read),
// so a level costs one launch per wave of bands that fit at once and one copy back.

typedef unsigned long long u64;
typedef unsigned int u32;
typedef unsigned short u16;

#define FULL_MASK 0xffffffffu

#ifndef LCS_RING
#define LCS_RING 64          // chunks of 32 columns per band boundary
#endif
#ifndef LCS_TAGGED
#define LCS_TAGGED 0
#endif
#define LCS_TEXT_WORDS 24   // a warp's text ring (96 codes) in shared memory after its masks
#ifndef LCS_TIMEOUT_NS
#define LCS_TIMEOUT_NS 10000000000ull   // 10 s without progress: give up (the host raises)
#endif

__device__ __forceinline__ u32 ld_acquire(const u32* p) {
    u32 v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ u32 ld_relaxed(const u32* p) {
    u32 v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_release(u32* p, u32 v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ void st_relaxed(u32* p, u32 v) {
    asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" :: "l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ u64 ld_relaxed64(const u64* p) {
    u64 v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void st_relaxed64(u64* p, u64 v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" :: "l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ u64 global_ns() {
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Wait until *flag >= need (acquire). Returns the value seen, or 0 after a timeout / abort
// (need is always >= 1, so 0 means failure).
__device__ __noinline__ u32 wait_at_least(const u32* flag, u32 need, u32* err) {
    u32 v = ld_acquire(flag);
    if (v >= need) return v;
    u64 t0 = global_ns();
    for (;;) {
        __nanosleep(64);
        v = ld_acquire(flag);
        if (v >= need) return v;
        if (ld_relaxed(err) != 0) return 0;
        if (global_ns() - t0 > LCS_TIMEOUT_NS) {
            atomicExch(err, 1u);
            return 0;
        }
    }
}

// Wait until the tagged ring slot *slot holds tag `tag` (>= 1) in its high half; returns
// the slot, or 0 after a timeout / abort.
__device__ __noinline__ u64 wait_tag(const u64* slot, u32 tag, u32* err) {
    u64 t0 = global_ns();
    for (;;) {
        const u64 v = ld_relaxed64(slot);
        if ((u32)(v >> 32) == tag) return v;
        if (ld_relaxed(err) != 0) return 0;
        if (global_ns() - t0 > LCS_TIMEOUT_NS) {
            atomicExch(err, 1u);
            return 0;
        }
        __nanosleep(64);
    }
}

// One step of K words. CF <- (zin + kl overflows): kl = 0xffffffff takes a 0/1 carry
// (lanes 1..31: zin is the lane below's z), kl = 0x80000000 the carry in bit 31 (lane 0:
// zin is lane 31's z). Then for each 32-bit limb: V = (V + (V & M) + CF) | (V & ~M), the
// carry chained. From the last carry, on the multiply-add pipe: z = r * mult + CF (lanes
// 0..30: r = 0; lane 31: r * mult holds the band below's carry for lane 0's next column
// in bit 31 and zeros below it) and acc = 2 * acc + CF (the top lane's carry word).
template <int K>
__device__ __forceinline__ void limbs(const u64 (&v)[K], const u64 (&m)[K], u32 (&w)[2 * K],
                                      u32 (&x)[2 * K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const u64 u = v[k] & m[k];
        w[2 * k] = (u32)v[k];
        w[2 * k + 1] = (u32)(v[k] >> 32);
        x[2 * k] = (u32)u;
        x[2 * k + 1] = (u32)(u >> 32);
    }
}

template <int K>
__device__ __forceinline__ void join(u64 (&v)[K], const u64 (&m)[K], const u32 (&s)[2 * K]) {
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = (((u64)s[2 * k + 1] << 32) | s[2 * k]) | (v[k] & ~m[k]);
}

template <int K>
struct Step;

template <>
struct Step<1> {
    static __device__ __forceinline__ void run(u64 (&v)[1], const u64 (&m)[1], u32 zin, u32 kl,
                                               u32 r, u32 mult, u32& z, u32& acc) {
        u32 w[2], x[2], s[2];
        limbs<1>(v, m, w, x);
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %4, %5;\n\t"
            "addc.cc.u32 %2, %8, %10;\n\t"
            "addc.cc.u32 %3, %9, %11;\n\t"
            "madc.lo.u32 %0, %6, %7, 0;\n\t"
            "madc.lo.u32 %1, %1, 2, 0;\n\t}"
            : "=r"(z), "+r"(acc), "=r"(s[0]), "=r"(s[1])
            : "r"(zin), "r"(kl), "r"(r), "r"(mult), "r"(w[0]), "r"(w[1]), "r"(x[0]), "r"(x[1]));
        join<1>(v, m, s);
    }
};

template <>
struct Step<2> {
    static __device__ __forceinline__ void run(u64 (&v)[2], const u64 (&m)[2], u32 zin, u32 kl,
                                               u32 r, u32 mult, u32& z, u32& acc) {
        u32 w[4], x[4], s[4];
        limbs<2>(v, m, w, x);
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %6, %7;\n\t"
            "addc.cc.u32 %2, %10, %14;\n\t"
            "addc.cc.u32 %3, %11, %15;\n\t"
            "addc.cc.u32 %4, %12, %16;\n\t"
            "addc.cc.u32 %5, %13, %17;\n\t"
            "madc.lo.u32 %0, %8, %9, 0;\n\t"
            "madc.lo.u32 %1, %1, 2, 0;\n\t}"
            : "=r"(z), "+r"(acc), "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3])
            : "r"(zin), "r"(kl), "r"(r), "r"(mult), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]),
              "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]));
        join<2>(v, m, s);
    }
};

template <>
struct Step<3> {
    static __device__ __forceinline__ void run(u64 (&v)[3], const u64 (&m)[3], u32 zin, u32 kl,
                                               u32 r, u32 mult, u32& z, u32& acc) {
        u32 w[6], x[6], s[6];
        limbs<3>(v, m, w, x);
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %8, %9;\n\t"
            "addc.cc.u32 %2, %12, %18;\n\t"
            "addc.cc.u32 %3, %13, %19;\n\t"
            "addc.cc.u32 %4, %14, %20;\n\t"
            "addc.cc.u32 %5, %15, %21;\n\t"
            "addc.cc.u32 %6, %16, %22;\n\t"
            "addc.cc.u32 %7, %17, %23;\n\t"
            "madc.lo.u32 %0, %10, %11, 0;\n\t"
            "madc.lo.u32 %1, %1, 2, 0;\n\t}"
            : "=r"(z), "+r"(acc), "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]),
              "=r"(s[5])
            : "r"(zin), "r"(kl), "r"(r), "r"(mult), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]),
              "r"(w[4]), "r"(w[5]), "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(x[4]),
              "r"(x[5]));
        join<3>(v, m, s);
    }
};

template <>
struct Step<4> {
    static __device__ __forceinline__ void run(u64 (&v)[4], const u64 (&m)[4], u32 zin, u32 kl,
                                               u32 r, u32 mult, u32& z, u32& acc) {
        u32 w[8], x[8], s[8];
        limbs<4>(v, m, w, x);
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %10, %11;\n\t"
            "addc.cc.u32 %2, %14, %22;\n\t"
            "addc.cc.u32 %3, %15, %23;\n\t"
            "addc.cc.u32 %4, %16, %24;\n\t"
            "addc.cc.u32 %5, %17, %25;\n\t"
            "addc.cc.u32 %6, %18, %26;\n\t"
            "addc.cc.u32 %7, %19, %27;\n\t"
            "addc.cc.u32 %8, %20, %28;\n\t"
            "addc.cc.u32 %9, %21, %29;\n\t"
            "madc.lo.u32 %0, %12, %13, 0;\n\t"
            "madc.lo.u32 %1, %1, 2, 0;\n\t}"
            : "=r"(z), "+r"(acc), "=r"(s[0]), "=r"(s[1]), "=r"(s[2]), "=r"(s[3]), "=r"(s[4]),
              "=r"(s[5]), "=r"(s[6]), "=r"(s[7])
            : "r"(zin), "r"(kl), "r"(r), "r"(mult), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]),
              "r"(w[4]), "r"(w[5]), "r"(w[6]), "r"(w[7]), "r"(x[0]), "r"(x[1]), "r"(x[2]),
              "r"(x[3]), "r"(x[4]), "r"(x[5]), "r"(x[6]), "r"(x[7]));
        join<4>(v, m, s);
    }
};

// Symbol j of a string oriented and padded by the host (llcs_bands).
struct Padded {
    const u16* base;
    __device__ __forceinline__ u32 operator()(long long j) const { return base[j]; }
};

// Symbol j of a pattern read from base by dir (+1 forward, -1 from its end: backward passes
// without a reversed copy); read only while the masks are built.
struct Strided {
    const u16* base;
    long long dir;
    __device__ __forceinline__ u32 operator()(long long j) const { return base[j * dir]; }
};

// One band b of one pass (the body of both kernels below). pat: the pattern's codes (m
// symbols; code 0 sets no mask bit); txt: the text's codes (read up to 32*nq + 32, zero past
// its end); V: the pass's vector (total_words words, this band's words from word0 + b*32*K);
// ring: the pass's ring, 2*LCS_RING words per band, zeroed (band b writes its own slots,
// reads band b-1's; LCS_TAGGED=0 uses the first LCS_RING words of each as u32 slots);
// progress/consumed: the pass's per-band counters; err: the abort flag; cin/cout: carries
// below band 0 / out of the top band (multi-launch passes) or null. sm: sigma*K*32 words of
// masks, then LCS_TEXT_WORDS of text ring.
template <int K, class Pat, class Txt>
__device__ __forceinline__ void run_band(
    const Pat& pat, long long m, const Txt& txt, long long nq, int sigma, long long word0,
    long long total_words, int bands, int b, u64* __restrict__ V, u32* ring, u32* progress,
    u32* consumed, u32* err, const u32* __restrict__ cin, u32* __restrict__ cout, u64* sm)
{
    const int lane = threadIdx.x & 31;

    // ---- match masks of this lane's K words (a lane reads and writes only its own column
    // of sm, i % 32 == lane, so no barrier is needed and a block may run several bands) ----
    for (int i = lane; i < sigma * K * 32; i += 32) sm[i] = 0;
    const long long wbase = word0 + (long long)b * 32 * K + (long long)lane * K;
#pragma unroll
    for (int k = 0; k < K; ++k) {
        const long long p0 = (wbase + k) * 64;
        if (p0 < m) {
            const int cnt = (m - p0) < 64 ? (int)(m - p0) : 64;
            for (int j = 0; j < cnt; ++j) {
                const u32 c = pat(p0 + j);
                if (c) sm[(c * K + k) * 32 + lane] |= 1ull << j;
            }
        }
    }
    __syncwarp();

    u64 v[K];
#pragma unroll
    for (int k = 0; k < K; ++k) v[k] = ~0ull;

    const bool has_below = b > 0;
    const bool has_above = b < bands - 1;
    const u32* below_ring = ring + (long long)(b - 1) * 2 * LCS_RING;
    u32* my_ring = ring + (long long)b * 2 * LCS_RING;
#if LCS_TAGGED
    const u64* below_slots = reinterpret_cast<const u64*>(below_ring);
    u64* my_slots = reinterpret_cast<u64*>(my_ring);
    u64 pend = 0;         // lane 0: slot of W[q+1] as loaded one chunk earlier (tag checked late)
#endif

    // Words of the band below: W[q] for the chunk in use. Lane 0 tracks them.
    u32 avail = 0;        // lane 0: progress of band b-1 seen
    u32 cons_seen = 0;    // lane 31: consumed[b] seen
    u32 w_cur = 0, w_next = 0;   // lane 0: W[q], W[q+1] of the band below (raw)

    auto below_word = [&](long long j) -> u32 {   // lane 0 only; 0xffffffff never a flag
        if (j >= nq) return 0u;
        if (!has_below) return cin ? cin[j] : 0u;
        if (avail < (u32)(j + 1)) {
            avail = wait_at_least(progress + (b - 1), (u32)(j + 1), err);
            if (avail == 0) return 0u;
        }
        return ld_relaxed(below_ring + (j % LCS_RING));
    };

    bool failed = false;
#if LCS_TAGGED
    // W[j] of the band below from its tagged slot; `have` is the slot as already loaded.
    auto tagged_word = [&](long long j, u64 have) -> u32 {   // lane 0 only
        if (j >= nq) return 0u;
        if (!has_below) return cin ? cin[j] : 0u;
        if ((u32)(have >> 32) != (u32)(j + 1)) {
            have = wait_tag(below_slots + (j % LCS_RING), (u32)(j + 1), err);
            if (have == 0) failed = true;
        }
        return (u32)have;
    };
    if (lane == 0) {
        w_cur = tagged_word(0, 0);
        if (has_below && 1 < nq) pend = ld_relaxed64(below_slots + 1);
    }
#else
    if (lane == 0) {
        w_cur = below_word(0);
        w_next = below_word(1);
        if (has_below && avail == 0) failed = true;
    }
#endif
    if (__any_sync(FULL_MASK, failed)) return;

    // Initial state (step 0): lane 0 works on column 0; the others on negative columns
    // (code 0, carry 0: no-ops). Text ring: the code of column j at (j mod 64), columns of
    // an even chunk mirrored at 64 + (j mod 64), so a lane's 32 columns of a chunk
    // (32q - lane .. 32q + 31 - lane) are consecutive; columns -32..-1 are zero. Lane 0's
    // carry of column 32q+i reaches it in bit 31 of lane 31's z of the step before.
    u16* tr = reinterpret_cast<u16*>(sm + sigma * K * 32);
    {
        const u16 c0 = (u16)txt(lane);
        tr[lane] = c0;
        tr[64 + lane] = c0;
        tr[32 + lane] = 0;
    }
    const u64* mlane = sm + lane;
    const u32 kl = lane == 0 ? 0x80000000u : 0xffffffffu;
    const int src = (lane + 31) & 31;
    u32 z = __shfl_sync(FULL_MASK, w_cur << 31, 0);     // carry of column 0 (W[0] bit 0)
    z = lane == 31 ? z : 0u;
    u32 acc = 0;
    u32 tnext = txt(32 + lane);             // codes of the next chunk
    __syncwarp();

    for (long long q = 0; q < nq; ++q) {
        // ---- lane 0's carries: fw bit i = carry of column 32q+i (i >= 1), bit 0 that of
        // column 32q+32 (column 32q's came in the chunk before) ----
        u32 fw = 0;
#if LCS_TAGGED
        if (lane == 0) {
            w_next = tagged_word(q + 1, pend);     // loaded a chunk ago: rarely waits
            const u32 r0 = __brev(w_cur), r1 = __brev(w_next);
            fw = (__funnelshift_l(r0, r1, 1) & ~1u) | (w_next & 1u);
            // W[0..q+1] are in registers now: their ring slots may be reused.
            if (has_below) {
                st_relaxed(consumed + (b - 1), (u32)(q + 2));
                if (q + 2 < nq) pend = ld_relaxed64(below_slots + ((q + 2) % LCS_RING));
            }
            w_cur = w_next;
        }
#else
        if (lane == 0) {
            const u32 r0 = __brev(w_cur), r1 = __brev(w_next);
            fw = (__funnelshift_l(r0, r1, 1) & ~1u) | (w_next & 1u);
            // W[0..q+1] are in registers now: their ring slots may be reused.
            if (has_below) st_relaxed(consumed + (b - 1), (u32)(q + 2));
            w_cur = w_next;
            w_next = below_word(q + 2);
            if (has_below && avail == 0) failed = true;
        }
#endif
        fw = __shfl_sync(FULL_MASK, fw, 0);
        // lane 31 at step i: z = r * mult + carry has the carry of column 32q+i+1 in bit 31
        // and zeros below it down to bit 0 (its own carry's); other lanes: r = 0
        const u32 r1 = lane == 31 ? fw : 0u, r2 = r1 & 0x80000000u, r3 = r1 << 31;
        const u16* tw = tr + ((((int)q & 1) << 5) - lane & 63);
#pragma unroll
        for (int i = 0; i < 32; ++i) {
            const u32 zin = __shfl_sync(FULL_MASK, z, src);
            const u64* mc = mlane + tw[i] * (K * 32);    // one multiply-add a step
            u64 mk[K];
#pragma unroll
            for (int k = 0; k < K; ++k) mk[k] = mc[k * 32];
            Step<K>::run(v, mk, zin, kl, i < 30 ? r1 : i == 30 ? r2 : r3,
                         i < 30 ? 1u << (30 - i) : 1u, z, acc);
        }
        __syncwarp();
        {   // codes of chunk q+1 over those of chunk q-1
            const int pos = (((int)q + 1) & 1) * 32 + lane;
            tr[pos] = (u16)tnext;
            if (pos < 32) tr[pos + 64] = (u16)tnext;
        }
        __syncwarp();
        tnext = txt((q + 2) * 32 + lane);

        // ---- publish the top lane's carry word of chunk q ----
        if (lane == 31) {
            if (has_above) {
                if (q >= LCS_RING && cons_seen + LCS_RING <= (u32)q) {
                    cons_seen = wait_at_least(consumed + b, (u32)(q - LCS_RING + 1), err);
                    if (cons_seen == 0) failed = true;
                }
#if LCS_TAGGED
                st_relaxed64(my_slots + (q % LCS_RING), ((u64)(q + 1) << 32) | acc);
#else
                my_ring[q % LCS_RING] = acc;
                st_release(progress + b, (u32)(q + 1));
#endif
            } else if (cout) {
                cout[q] = acc;
            }
        }
        if (__any_sync(FULL_MASK, failed)) return;
    }

#pragma unroll
    for (int k = 0; k < K; ++k)
        if (wbase + k < total_words) V[wbase + k] = v[k];
}

// One pass (or one launch of a pass cut into several).
// pcode: pattern codes (oriented: bit p <-> pcode[p]), m symbols, all >= 1.
// tcode: text codes (oriented), n symbols, padded with zeros to >= 32*nq + 64.
// V:     out, total_words words (all launches); this launch writes words word0.. of its bands.
// ring:  bands * 2*LCS_RING words, zeroed; flags: 2*bands u32 (progress, consumed) + ticket
//        + err, zeroed by the host.
// cin:   carry words of the band below band 0 (nq + 2 words, format of the top lane), or null.
// cout:  the top band's carry words (nq + 2 words), or null.
// where: null, or per band (smid << 8) | warp slot of the warp that ran it (a measuring aid:
//        how the bands landed on SMs and their four schedulers).
// Blocks of 32*w threads (w <= 4): each warp a band, sigma*K*32 + LCS_TEXT_WORDS words of sm each.
template <int K>
__global__ void __launch_bounds__(128, 8)
llcs_bands(const u16* __restrict__ pcode, long long m, const u16* __restrict__ tcode,
           long long nq, int sigma, long long word0, long long total_words, int bands,
           u64* __restrict__ V, u32* ring, u32* flags, const u32* __restrict__ cin,
           u32* __restrict__ cout, u32* __restrict__ where)
{
    extern __shared__ u64 sm[];      // per warp [sigma][K][32]
    const int warp = threadIdx.x >> 5;
    u32* ticket = flags + 2 * bands;
    int b = 0;
    if ((threadIdx.x & 31) == 0) b = (int)atomicAdd(ticket, 1u);
    b = __shfl_sync(FULL_MASK, b, 0);
    if (b >= bands) return;
    if (where != nullptr && (threadIdx.x & 31) == 0) {
        u32 smid, wid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        asm volatile("mov.u32 %0, %%warpid;" : "=r"(wid));
        where[b] = (smid << 8) | (wid & 0xffu);
    }
    run_band<K>(Padded{pcode}, m, Padded{tcode}, nq, sigma, word0, total_words, bands, b, V,
                ring, flags, flags + bands, flags + 2 * bands + 1, cin, cout,
                sm + (long long)warp * (sigma * K * 32 + LCS_TEXT_WORDS));
}

// Each pass's oriented text, zero-padded, into the level's text buffer (lcs_plan.py's
// gather_texts): tbuf[toff + j] = j < n ? codes[tstart + j*dir] : 0 for j < 32*(nq+2) + 64.
// Grid: x strides over a text, y over the passes.
__global__ void lcs_gather_texts(const u16* __restrict__ codes,
                                 const long long* __restrict__ desc, long long passes,
                                 u16* __restrict__ tbuf)
{
    for (long long p = blockIdx.y; p < passes; p += gridDim.y) {
        const long long* d = desc + 8 * p;
        const long long dir = d[1], tstart = d[3], n = d[4], toff = d[7];
        const long long len = 32 * ((n + 62) / 32 + 2) + 64;
        for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < len;
             j += (long long)gridDim.x * blockDim.x)
            tbuf[toff + j] = j < n ? codes[tstart + j * dir] : (u16)0;
    }
}

// Many passes of one Hirschberg level in one launch (one wave: passes p0 .. p1-1, whose
// bands all fit on the GPU at once; one block per band, bands taken by ticket in pass order
// so a band only waits on bands that already have a warp). The band loop is llcs_bands'.
// codes: the two strings' codes end to end (a then b), their shared alphabet compacted to
//        1..sigma-1, code 0 for bytes absent from either string (no mask bit: no match).
// desc:  8 int64 per pass (lcs_plan.FIELDS): pattern start, dir (+1 forward, -1 backward),
//        m, text start, n, offset of the pass's vector in V, its words, offset of its
//        oriented padded text in tbuf (lcs_gather_texts).
// band_start: per pass its first band's index in the level (band_start[P] = G bands in all).
// ring:  G * 2*LCS_RING words, zeroed (band g writes ring + g*2*LCS_RING).
// flags: G progress counters, G consumed counters, err, then one ticket per wave; zeroed.
template <int K>
__global__ void __launch_bounds__(32, 32)
llcs_batch(const u16* __restrict__ codes, const u16* __restrict__ tbuf,
           const long long* __restrict__ desc, const long long* __restrict__ band_start,
           int p0, int p1, int sigma, u64* __restrict__ V, u32* ring, u32* flags,
           long long G, u32* ticket)
{
    extern __shared__ u64 sm[];      // [sigma][K][32]
    long long t = 0;
    if (threadIdx.x == 0) t = (long long)atomicAdd(ticket, 1u);
    t = __shfl_sync(FULL_MASK, t, 0);
    const long long g = band_start[p0] + t;
    if (g >= band_start[p1]) return;
    int lo = p0, hi = p1 - 1;        // the last pass p with band_start[p] <= g
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (band_start[mid] <= g) lo = mid; else hi = mid - 1;
    }
    const long long* d = desc + 8ll * lo;
    const long long g0 = band_start[lo];
    run_band<K>(Strided{codes + d[0], d[1]}, d[2], Padded{tbuf + d[7]}, (d[4] + 62) / 32,
                sigma, 0, d[6], (int)(band_start[lo + 1] - g0), (int)(g - g0), V + d[5],
                ring + g0 * 2 * LCS_RING, flags + g0, flags + G + g0, flags + 2 * G, nullptr,
                nullptr, sm);
}

// present[c] = 1 for every byte value c of x (n bytes): the pattern's alphabet, found on the
// device so the host never scans the string. A block marks its bytes in shared memory, then
// writes only the marks it set (at most 256 stores per block).
__global__ void lcs_present(const unsigned char* __restrict__ x, long long n,
                            u32* __restrict__ present)
{
    __shared__ u32 seen[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) seen[i] = 0;
    __syncthreads();
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        seen[x[i]] = 1u;
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += blockDim.x)
        if (seen[i]) present[i] = 1u;
}
