// bench.cu — readbw: a streaming read of n 16-byte words, the read ceiling
// logos-bench measures the plans against (and, over a buffer larger than
// the L2, what empties the L2 between timed launches):
//
//   acc ^= every word of x; y[0] = acc only when acc is a value no input gives
//
// Parameters are values: a[0] x, a[1] n (words), a[2] y. Launch: any grid of
// 256-thread blocks; a grid-stride loop, four loads in flight a thread.

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
