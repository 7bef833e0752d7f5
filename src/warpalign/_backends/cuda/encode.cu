// Characters to codes in one pass (score_pairs' encode engine on the GPU, encode.py).
//
// codes[i] = table[raw[i]] for i < n; the smallest base + i whose code is 255 (the
// alphabet's INVALID) goes to flags[0] complemented (atomicMax of ~(base + i): the
// smallest index is the largest complement; 0 means none) and the largest code to
// flags[1] (atomicMax), so the caller clears the flags with a memset (no copy up) and
// reads both bad characters and the DNA test (codes < 4) back as two words, after all
// chunks (pairs.cu's ww_ypack and ww_dna read the largest codes as their guard). A
// thread walks its bytes in increasing order (grid-stride), so its first INVALID is its
// smallest; a warp reduces by shuffles and one lane per warp does the atomics. Blocks are
// whole warps.

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
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
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
