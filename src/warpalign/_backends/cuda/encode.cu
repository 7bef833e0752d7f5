// Characters to codes in one pass (score_pairs' encode engine on the GPU, encode.py).
//
// codes[i] = table[raw[i]] for i < n; the smallest base + i whose code is 255 (the
// alphabet's INVALID) goes to flags[0] complemented (atomicMax of ~(base + i): the
// smallest index is the largest complement; 0 means none) and the largest code to
// flags[1] (atomicMax), so the caller clears the flags with a memset (no copy up) and
// reads both bad characters and the DNA test (codes < 4) back as two words, after all
// chunks (pairs.cu's ww_ypack and ww_dna read the largest codes as their guard, and
// ww_ypack_chars writes a side's two words as this kernel would). A thread walks its
// bytes in increasing order (grid-stride), so its first INVALID is its smallest; a warp
// reduces by shuffles and one lane per warp does the atomics. Blocks are whole warps.

// Where raw and codes both start on 16 bytes, a thread takes 16 characters at a time (one
// uint4 load and store: byte loads left ~3x of HBM's bandwidth unused on 138 MB, session
// 25), the 16 lookups in increasing order; the characters past the last whole 16 go byte
// by byte after them, so a thread's first INVALID is still its smallest index.
__device__ __forceinline__ unsigned int encode_word(const unsigned char* t, unsigned int x,
                                                    long long at, unsigned long long& top,
                                                    unsigned long long& bad)
{
    const unsigned int c0 = t[x & 255u], c1 = t[(x >> 8) & 255u];
    const unsigned int c2 = t[(x >> 16) & 255u], c3 = t[x >> 24];
    const unsigned int a = c0 > c1 ? c0 : c1, b = c2 > c3 ? c2 : c3;
    const unsigned int m = a > b ? a : b;
    top = m > top ? m : top;
    if (m == 255u && bad == ~0ull)
        bad = (unsigned long long)(at + (c0 == 255u ? 0 : c1 == 255u ? 1 : c2 == 255u ? 2 : 3));
    return c0 | c1 << 8 | c2 << 16 | c3 << 24;
}

__global__ void encode_bytes(const unsigned char* __restrict__ raw, long long n,
                             const unsigned char* __restrict__ table,
                             unsigned char* __restrict__ codes, long long base,
                             unsigned long long* __restrict__ flags)
{
    __shared__ unsigned char t[256];
    for (int i = threadIdx.x; i < 256; i += blockDim.x) t[i] = table[i];
    __syncthreads();
    unsigned long long bad = ~0ull;
    unsigned long long top = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long done = 0;
    if (((reinterpret_cast<unsigned long long>(raw) | reinterpret_cast<unsigned long long>(codes))
         & 15ull) == 0) {
        const long long words = n >> 4;
        const uint4* in = reinterpret_cast<const uint4*>(raw);
        uint4* out = reinterpret_cast<uint4*>(codes);
        for (long long w = first; w < words; w += stride) {
            const uint4 v = in[w];
            const long long at = base + (w << 4);
            uint4 o;
            o.x = encode_word(t, v.x, at, top, bad);
            o.y = encode_word(t, v.y, at + 4, top, bad);
            o.z = encode_word(t, v.z, at + 8, top, bad);
            o.w = encode_word(t, v.w, at + 12, top, bad);
            out[w] = o;
        }
        done = words << 4;
    }
    for (long long i = done + first; i < n; i += stride) {
        const unsigned char c = t[raw[i]];
        codes[i] = c;
        top = c > top ? c : top;
        if (c == 255 && bad == ~0ull) bad = (unsigned long long)(base + i);
    }
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned long long b = __shfl_down_sync(0xffffffffu, bad, o);
        const unsigned long long h = __shfl_down_sync(0xffffffffu, top, o);
        bad = b < bad ? b : bad;
        top = h > top ? h : top;
    }
    if ((threadIdx.x & 31) == 0) {
        if (bad != ~0ull) atomicMax(&flags[0], ~bad);
        if (top) atomicMax(&flags[1], top);
    }
}

// 2-bit codes to byte codes (the packed staging of encode.py): packed[i] holds the codes
// of characters 4i..4i+3 as c0 | c1 << 2 | c2 << 4 | c3 << 6 (past n: padding), all of
// them A C G T (the host checked every character, and that the table gives A C G T the
// codes 0 1 2 3), so none is INVALID: flags[0] stays as it is and the largest code goes
// to flags[1], as encode_bytes would set them. A thread writes the four codes of one
// packed byte as one word where codes is 4-byte aligned (a chunk starts at a multiple of
// 4 characters of an aligned array), byte by byte at the end or where it is not.
__global__ void unpack_dna(const unsigned char* __restrict__ packed, long long n,
                           unsigned char* __restrict__ codes,
                           unsigned long long* __restrict__ flags)
{
    const long long bytes = (n + 3) >> 2;
    const bool aligned = (reinterpret_cast<unsigned long long>(codes) & 3ull) == 0;
    unsigned int top = 0;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < bytes; i += stride) {
        const unsigned int p = packed[i];
        const long long at = i << 2;
        if (aligned && at + 4 <= n) {
            const unsigned int c0 = p & 3u, c1 = (p >> 2) & 3u, c2 = (p >> 4) & 3u, c3 = p >> 6;
            *reinterpret_cast<unsigned int*>(codes + at) = c0 | c1 << 8 | c2 << 16 | c3 << 24;
            const unsigned int a = c0 > c1 ? c0 : c1, b = c2 > c3 ? c2 : c3;
            top = a > top ? a : top;
            top = b > top ? b : top;
        } else {
            for (int k = 0; k < 4 && at + k < n; ++k) {
                const unsigned int c = (p >> (2 * k)) & 3u;
                codes[at + k] = (unsigned char)c;
                top = c > top ? c : top;
            }
        }
    }
    for (int o = 16; o > 0; o >>= 1) {
        const unsigned int h = __shfl_down_sync(0xffffffffu, top, o);
        top = h > top ? h : top;
    }
    if ((threadIdx.x & 31) == 0 && top) atomicMax(&flags[1], (unsigned long long)top);
}
