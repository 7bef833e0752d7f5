// Bit-parallel LLCS on the GPU (issue 5, paper 001; KERNELS.md §D: skew + shuffle carries,
// warps chained through flags in global memory inside one persistent launch).
//
// The pattern bit-vector V (bit p = 1 - (L[p+1][t] - L[p][t]), as in _backends/cpu/lcs.py)
// is cut into *bands* of 32*K 64-bit words; one warp (one block) owns a band for the whole
// text: lane l holds the K consecutive words l*K .. l*K+K-1 of the band in registers. Each
// text symbol c advances V by  V = (V + (V & M[c])) | (V & ~M[c])  with the carry passed up
// the words. Skew: lane l works on text column r - l at step r, so the carry out of lane l
// at column j reaches lane l+1 exactly when lane l+1 works on column j: one __shfl_up per
// step moves it, packed (bit 31) with the code of the next column (bits 0..30), which lane l
// received one step earlier — so each step's mask load is known a full step ahead and the
// step-to-step dependency is shfl -> add chain -> shfl only.
//
// Lane 0 takes its carries from the band below and its codes from the text ("feed"). The
// top lane of a band collects its carry outs, 32 columns per word (bit 31-i = step 32q+i,
// i.e. column 32q+i-31), and publishes word q to a ring buffer read by the band above:
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
// Variants for measuring (compile-time, lcs.py's `sync` and `acc`; the answer is the same):
// LCS_TAGGED=0: ring slots are plain words, published by st.release of the band's progress
//   counter (a MEMBAR.GPU per chunk on the producer) and read after an ld.acquire of it.
// LCS_TAGGED=1: a ring slot is one 64-bit word (carry word | (chunk + 1) << 32) written by a
//   single relaxed store (no fence: data and flag are one single-copy-atomic access); the
//   consumer loads slot q+1 one chunk ahead and only waits if its tag is not there yet.
// LCS_ACC_IMAD=0: the top lane's carry word is gathered by a funnel shift (ALU pipe);
//   1: by acc*2 + carry (IMAD, FMA pipe): one ALU instruction less per step.
// LCS_ONESHFL=0: two shuffles a step, __shfl_up of `out` (carry bit 31 | code bits 0..30)
//   and __shfl(feed, i) for lane 0. 1: one __shfl(x, lane == 0 ? i : lane - 1) of
//   x = out | feed, where `out` keeps the carry in bit 31 and the code in bits 16..30 (its
//   low half is always 0) and feed, the lane's feed for the chunk, the carry in bit 15 and
//   the code in bits 0..14: lane 0 takes x << 16 (its feed), the others x (a garbage low
//   half: Step only reads bit 31, the mask address bits 16..30). Shuffles share the MIO
//   pipe with the mask loads; per step this saves one SHFL for no extra ALU instruction
//   (nvcc 13, sm_90, K=2: source lane SEL, lane 0's SHF, code LOP3 + LEA.HI, feed SEL and
//   LOP3 against the SEL, two IMADs, SEL, IMAD and LOP3 of the two-shuffle step). Codes
//   must fit in 15 bits: shared memory (sigma*K*256 bytes) bounds them far lower (< 1000),
//   and lcs.py refuses more.
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
#ifndef LCS_ACC_IMAD
#define LCS_ACC_IMAD 0
#endif
#ifndef LCS_ONESHFL
#define LCS_ONESHFL 0
#endif
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

// Where `in` / `out` hold the code of the next column (the carry is bit 31): bits 0..30, or
// 16..30 with LCS_ONESHFL (bits 0..15 of `in` are then another lane's feed, or zero).
#if LCS_ONESHFL
#define CODE_SHIFT 16
#define CODE_BITS 0x7fffu
#else
#define CODE_SHIFT 0
#define CODE_BITS 0x7fffffffu
#endif
#define FEED_CARRY (CODE_SHIFT == 0 ? 31 : 15)    // the carry's bit in a lane's feed

// One step of K words: CF <- bit 31 of `in` (`add.cc t, in, 0x80000000` reads no other
// bit); for each word: u = v & m; v = (v + u + CF) | (v & ~m), the carry chained; returns
// the carry out in bit 31 of the result, the code of `in` where it was, other bits 0.
template <int K>
struct Step;

template <>
struct Step<1> {
    static __device__ __forceinline__ u32 run(u64 (&v)[1], const u64 (&m)[1], u32 in) {
        u64 u0 = v[0] & m[0];
        u32 lo, hi, cf;
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %3, 0x80000000;\n\t"
            "addc.cc.u32 %0, %4, %6;\n\t"
            "addc.cc.u32 %1, %5, %7;\n\t"
            "addc.u32 %2, 0, 0;\n\t}"
            : "=r"(lo), "=r"(hi), "=r"(cf)
            : "r"(in), "r"((u32)v[0]), "r"((u32)(v[0] >> 32)), "r"((u32)u0), "r"((u32)(u0 >> 32)));
        v[0] = (((u64)hi << 32) | lo) | (v[0] & ~m[0]);
        return (in & (CODE_BITS << CODE_SHIFT)) | (cf << 31);
    }
};

template <>
struct Step<2> {
    static __device__ __forceinline__ u32 run(u64 (&v)[2], const u64 (&m)[2], u32 in) {
        u64 u0 = v[0] & m[0], u1 = v[1] & m[1];
        u32 l0, h0, l1, h1, cf;
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %5, 0x80000000;\n\t"
            "addc.cc.u32 %0, %6, %10;\n\t"
            "addc.cc.u32 %1, %7, %11;\n\t"
            "addc.cc.u32 %2, %8, %12;\n\t"
            "addc.cc.u32 %3, %9, %13;\n\t"
            "addc.u32 %4, 0, 0;\n\t}"
            : "=r"(l0), "=r"(h0), "=r"(l1), "=r"(h1), "=r"(cf)
            : "r"(in), "r"((u32)v[0]), "r"((u32)(v[0] >> 32)), "r"((u32)v[1]), "r"((u32)(v[1] >> 32)),
              "r"((u32)u0), "r"((u32)(u0 >> 32)), "r"((u32)u1), "r"((u32)(u1 >> 32)));
        v[0] = (((u64)h0 << 32) | l0) | (v[0] & ~m[0]);
        v[1] = (((u64)h1 << 32) | l1) | (v[1] & ~m[1]);
        return (in & (CODE_BITS << CODE_SHIFT)) | (cf << 31);
    }
};

template <>
struct Step<3> {
    static __device__ __forceinline__ u32 run(u64 (&v)[3], const u64 (&m)[3], u32 in) {
        u64 u0 = v[0] & m[0], u1 = v[1] & m[1], u2 = v[2] & m[2];
        u32 l0, h0, l1, h1, l2, h2, cf;
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %7, 0x80000000;\n\t"
            "addc.cc.u32 %0, %8, %14;\n\t"
            "addc.cc.u32 %1, %9, %15;\n\t"
            "addc.cc.u32 %2, %10, %16;\n\t"
            "addc.cc.u32 %3, %11, %17;\n\t"
            "addc.cc.u32 %4, %12, %18;\n\t"
            "addc.cc.u32 %5, %13, %19;\n\t"
            "addc.u32 %6, 0, 0;\n\t}"
            : "=r"(l0), "=r"(h0), "=r"(l1), "=r"(h1), "=r"(l2), "=r"(h2), "=r"(cf)
            : "r"(in),
              "r"((u32)v[0]), "r"((u32)(v[0] >> 32)), "r"((u32)v[1]), "r"((u32)(v[1] >> 32)),
              "r"((u32)v[2]), "r"((u32)(v[2] >> 32)),
              "r"((u32)u0), "r"((u32)(u0 >> 32)), "r"((u32)u1), "r"((u32)(u1 >> 32)),
              "r"((u32)u2), "r"((u32)(u2 >> 32)));
        v[0] = (((u64)h0 << 32) | l0) | (v[0] & ~m[0]);
        v[1] = (((u64)h1 << 32) | l1) | (v[1] & ~m[1]);
        v[2] = (((u64)h2 << 32) | l2) | (v[2] & ~m[2]);
        return (in & (CODE_BITS << CODE_SHIFT)) | (cf << 31);
    }
};

template <>
struct Step<4> {
    static __device__ __forceinline__ u32 run(u64 (&v)[4], const u64 (&m)[4], u32 in) {
        u64 u0 = v[0] & m[0], u1 = v[1] & m[1], u2 = v[2] & m[2], u3 = v[3] & m[3];
        u32 l0, h0, l1, h1, l2, h2, l3, h3, cf;
        asm("{\n\t.reg .u32 t;\n\t"
            "add.cc.u32 t, %9, 0x80000000;\n\t"
            "addc.cc.u32 %0, %10, %18;\n\t"
            "addc.cc.u32 %1, %11, %19;\n\t"
            "addc.cc.u32 %2, %12, %20;\n\t"
            "addc.cc.u32 %3, %13, %21;\n\t"
            "addc.cc.u32 %4, %14, %22;\n\t"
            "addc.cc.u32 %5, %15, %23;\n\t"
            "addc.cc.u32 %6, %16, %24;\n\t"
            "addc.cc.u32 %7, %17, %25;\n\t"
            "addc.u32 %8, 0, 0;\n\t}"
            : "=r"(l0), "=r"(h0), "=r"(l1), "=r"(h1), "=r"(l2), "=r"(h2), "=r"(l3), "=r"(h3),
              "=r"(cf)
            : "r"(in),
              "r"((u32)v[0]), "r"((u32)(v[0] >> 32)), "r"((u32)v[1]), "r"((u32)(v[1] >> 32)),
              "r"((u32)v[2]), "r"((u32)(v[2] >> 32)), "r"((u32)v[3]), "r"((u32)(v[3] >> 32)),
              "r"((u32)u0), "r"((u32)(u0 >> 32)), "r"((u32)u1), "r"((u32)(u1 >> 32)),
              "r"((u32)u2), "r"((u32)(u2 >> 32)), "r"((u32)u3), "r"((u32)(u3 >> 32)));
        v[0] = (((u64)h0 << 32) | l0) | (v[0] & ~m[0]);
        v[1] = (((u64)h1 << 32) | l1) | (v[1] & ~m[1]);
        v[2] = (((u64)h2 << 32) | l2) | (v[2] & ~m[2]);
        v[3] = (((u64)h3 << 32) | l3) | (v[3] & ~m[3]);
        return (in & (CODE_BITS << CODE_SHIFT)) | (cf << 31);
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
// below band 0 / out of the top band (multi-launch passes) or null. sm: sigma*K*32 words.
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

    // Initial state (step 0): lane 0 works on column 0 (code txt(0)); the others on
    // negative columns (code 0, carry 0: no-ops). `out` of lane 0 "at step -1" hands
    // code(0) to lane 1, which works on column 0 at step 1.
#if LCS_ONESHFL
    // addr: the byte offset code*K*256 of the masks from the lane's column (one LEA.HI
    // from bits 16..30 of `in`)
    const char* const msm = reinterpret_cast<const char*>(sm + lane);
    const u32 addr_scale = K * 256, addr_lane = 0, mask_step = 256;
    const u32 feed_shift = lane == 0 ? 16u : 0u;   // lane 0 reads a feed, the others an out
#else
    // addr: the index code*K*32 + lane of the masks in sm
    const u64* const msm = sm;
    const u32 addr_scale = K * 32, addr_lane = lane, mask_step = 32;
#endif
    const u32 code0 = txt(0);
    u32 addr = (lane == 0 ? code0 : 0u) * addr_scale + addr_lane;
    u32 out = lane == 0 ? code0 << CODE_SHIFT : 0u;
    u32 acc = 0;
    u32 tnext = txt(lane + 1);              // codes of the feed, one chunk ahead

    for (long long q = 0; q < nq; ++q) {
        // ---- feed of lane 0 for steps 32q .. 32q+31: code(32q+i+1) and carry(32q+i), the
        // carry in bit FEED_CARRY (lane i holds step 32q+i's) ----
        u32 fw = 0;
#if LCS_TAGGED
        if (lane == 0) {
            w_next = tagged_word(q + 1, pend);     // loaded a chunk ago: rarely waits
            const u32 r0 = __brev(w_cur), r1 = __brev(w_next);
            fw = __funnelshift_l(r0, r1, 1);
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
            fw = __funnelshift_l(r0, r1, 1);
            // W[0..q+1] are in registers now: their ring slots may be reused.
            if (has_below) st_relaxed(consumed + (b - 1), (u32)(q + 2));
            w_cur = w_next;
            w_next = below_word(q + 2);
            if (has_below && avail == 0) failed = true;
        }
#endif
        fw = __shfl_sync(FULL_MASK, fw, 0);
        const u32 feed = tnext | (((fw >> lane) & 1u) << FEED_CARRY);
        tnext = txt((q + 1) * 32 + lane + 1);
#if LCS_ONESHFL
        // what a lane publishes: out | feed (out's low half is always 0); after each step
        // below, the code in | one select of feed with or without bit 31 (the carry out)
        const u32 feed_c = feed | 0x80000000u;
        u32 x = out | feed;
#endif

#pragma unroll
        for (int i = 0; i < 32; ++i) {
#if LCS_ONESHFL
            const u32 in = __shfl_sync(FULL_MASK, x, lane == 0 ? i : lane - 1) << feed_shift;
#else
            u32 in = __shfl_up_sync(FULL_MASK, out, 1);
            const u32 f = __shfl_sync(FULL_MASK, feed, i);
            in = lane == 0 ? f : in;
#endif
            u64 mk[K];
#pragma unroll
            for (int k = 0; k < K; ++k)
                mk[k] = *reinterpret_cast<const u64*>(msm + addr + k * mask_step);
            const u32 code_in = in & (CODE_BITS << CODE_SHIFT);   // the code where it is
            addr = (code_in >> CODE_SHIFT) * addr_scale + addr_lane;
            out = Step<K>::run(v, mk, in);
#if LCS_ONESHFL
            u32 pick;   // out >> 31 ? feed_c : feed, in asm: the compiler would OR in cf << 31
            asm("{\n\t.reg .pred p;\n\tsetp.ne.u32 p, %3, 0;\n\tselp.b32 %0, %1, %2, p;\n\t}"
                : "=r"(pick) : "r"(feed_c), "r"(feed), "r"(out >> 31));
            x = code_in | pick;                         // out | feed
#endif
#if LCS_ACC_IMAD
            asm("mad.lo.u32 %0, %1, 2, %2;" : "=r"(acc) : "r"(acc), "r"(out >> 31));  // IMAD
#else
            acc = __funnelshift_l(out, acc, 1);       // (acc << 1) | carry (bit 31 of out)
#endif
        }

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
// Blocks of 32*w threads (w <= 4): each warp a band, sigma*K*32 words of sm each.
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
                sm + (long long)warp * sigma * K * 32);
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
