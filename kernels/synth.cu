// synth.cu — synthetic weights made on the GPU, equal bit for bit to those
// lib/weights.c makes on the CPU (so a shape of 80 GB needs no host files):
//
//   value i (from 0): z = mix(state + (i + 1) 0x9e3779b97f4a7c15)   (splitmix64)
//                     u = (z >> 40) / 2^24;  v = f32(add + mul (2u - 1))   in f64, no fused multiply-add
//   Q8 0: y[i] = v                                        (f32)
//   Q8 1: a block of 32: d = max|v| / 127, its scale f16(d) at byte align16(n) + 2 b,
//         q[i] = v / d rounded half away from zero, clamped to [-127, 127]   (Q8_0)
//
// A chip's part of a split weight (man5/logos-placement.5) is made as the
// whole's values it holds: value i of the part is value (i / W) C + A + i % W
// of the whole, whose rows are C values (a row part: W = C = n, A its first
// value; a column part: W its columns, from column A; a whole weight: W = C
// = n, A = 0). A q8 part's W, C and A are whole blocks of 32.
//
// Parameters are values, not buffers: a[0] y, a[1] state, a[2] add and a[3]
// mul (the bits of f64s), a[4] n, a[5] C, a[6] A, a[7] W. Launch: any grid
// of 256-thread blocks; a warp makes 32 consecutive values, a grid-stride
// loop the rest.

DEV u64 mix(u64 z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

extern "C" __global__ void __launch_bounds__(256) synth(const Params p)
{
    u64 state = (u64)p.a[1];
    double add = __longlong_as_double((long long)p.a[2]), mul = __longlong_as_double((long long)p.a[3]);
    long n = (long)p.a[4], C = (long)p.a[5], A = (long)p.a[6], W = (long)p.a[7];
    long stride = (long)gridDim.x * blockDim.x;
    for (long i = (long)blockIdx.x * blockDim.x + threadIdx.x; i - (threadIdx.x & 31) < n; i += stride) {
        float v = 0.0f;
        if (i < n) {
            u64 z = mix(state + (u64)(i / W * C + A + i % W + 1) * 0x9e3779b97f4a7c15ull);
            double u = (double)(z >> 40) * (1.0 / 16777216.0);
            v = __double2float_rn(__dadd_rn(add, __dmul_rn(mul, __dsub_rn(2.0 * u, 1.0))));
        }
        if (!Q8) {
            if (i < n)
                ((float *)p.a[0])[i] = v;
            continue;
        }
        float amax = warp_max(fabsf(v)), d = amax / 127.0f;
        float q = d > 0.0f ? v / d : 0.0f;
        q = q >= 127.0f ? 127.0f : q <= -127.0f ? -127.0f : q == q ? roundf(q) : 0.0f;
        if (i < n)
            ((i8 *)p.a[0])[i] = (i8)q;
        if ((threadIdx.x & 31) == 0 && i < n)
            ((u16 *)((char *)p.a[0] + align16(n)))[i >> 5] = f2h(d);
    }
}
