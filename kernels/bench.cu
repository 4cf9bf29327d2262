// bench.cu — logos-bench's own kernels, the rates it measures the plans
// against:
//
// readbw: a streaming read of n 16-byte words, the read ceiling (and, over
// a buffer larger than the L2, what empties the L2 between timed launches):
//
//   acc ^= every word of x; y[0] = acc only when acc is a value no input gives
//
// Parameters are values: a[0] x, a[1] n (words), a[2] y. Launch: any grid of
// 256-thread blocks; a grid-stride loop, four loads in flight a thread.
//
// mmarate: the tensor cores' int8 rate, the instruction mma.cu multiplies
// with (mma.sync m16n8k32, s8 by s8 into s32), on register operands:
//
//   for each of n rounds, j < MMA_ACC:  d_j += a (16 x 32) . b (32 x 8)
//   y[0] = the sum of every d_j only when it is a value no run gives
//
// a and b are made from the thread's index, each d_j starts apart, so no
// two products are the same and none is left out. A warp's mma is
// 2 16 8 32 = 8192 ops (a multiply and an add a product); a launch is
// blocks 8 n MMA_ACC of them. Parameters are values: a[0] n (rounds), a[1]
// y. Launch: any grid of 256-thread blocks (8 warps); MMA_ACC independent
// accumulators a warp keep the tensor cores fed between one mma and the
// next that depends on it.

extern "C" __global__ void __launch_bounds__(256) readbw(const Params p)
{
    const int4 *x = (const int4 *)p.a[0];
    long n = (long)p.a[1], stride = (long)gridDim.x * blockDim.x;
    int acc = 0;
    long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        int4 a = __ldcs(x + i), b = __ldcs(x + i + stride), c = __ldcs(x + i + 2 * stride), d = __ldcs(x + i + 3 * stride);
        acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
    }
    for (; i < n; i += stride) {
        int4 a = __ldcs(x + i);
        acc ^= a.x ^ a.y ^ a.z ^ a.w;
    }
    if (acc == 0x5bd1e995)
        ((int *)p.a[2])[0] = acc;
}

constexpr int MMA_ACC = 8;

// d += a . b: a 16 x 32 (row), b 32 x 8 (col), int8 in, int32 out.
DEV void mma_acc(int *d, const u32 *a, const u32 *b)
{
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void __launch_bounds__(256) mmarate(const Params p)
{
    long n = (long)p.a[0];
    u32 t = threadIdx.x + 256u * blockIdx.x;
    u32 a[4] = {t * 0x01010101u, t ^ 0x5a5a5a5au, t * 0x9e3779b9u, t + 0x11111111u};
    u32 b[2] = {t * 0x7f4a7c15u, t ^ 0x3c3c3c3cu};
    int d[MMA_ACC][4];
#pragma unroll
    for (int j = 0; j < MMA_ACC; j++)
#pragma unroll
        for (int k = 0; k < 4; k++)
            d[j][k] = 4 * j + k;
    for (long i = 0; i < n; i++)
#pragma unroll
        for (int j = 0; j < MMA_ACC; j++)
            mma_acc(d[j], a, b);
    int s = 0;
#pragma unroll
    for (int j = 0; j < MMA_ACC; j++)
        s += d[j][0] ^ d[j][1] ^ d[j][2] ^ d[j][3];
    if (s == 0x5bd1e995)
        ((int *)p.a[1])[0] = s;
}
