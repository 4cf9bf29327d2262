// embed.cu — rows of a token table by id, scaled:
//
//   y[t, :] = SCALE * W[ids[t], :]          t < rows (n, or ROWS)
//
// Shapes: W (V, D) f32 (WQ 0) or Q8_0 (WQ 1); ids (rows) i32; y (rows, D) in
// format OQ (f32, a8, a8x2: D whole 32-value blocks). An id past the table
// leaves its row unwritten (logos-run checks ids before a step).
// Launch: grid ROWS, block 256: block t writes row t.

extern "C" __global__ void __launch_bounds__(256) embed(const Params p)
{
    KERNEL_OPEN();
    pdl_begin();
    const char *W = (const char *)p.a[0];
    const int *ids = (const int *)p.a[1];
    int t = blockIdx.x;
    if (t >= rows_of(p.a[2], ROWS))
        return;
    long id = ids[t];
    if (id < 0 || id >= V)
        return;
    const i8 *q = (const i8 *)W + id * D;
    const u16 *s = (const u16 *)(W + align16((long)V * D)) + id * (D / 32);
    const float *f = (const float *)W + id * D;
    if (OQ == 0) {
        for (long i = threadIdx.x; i < D; i += blockDim.x)
            ((float *)p.a[3])[(long)t * D + i] = SCALE * (WQ ? (float)q[i] * h2f(s[i >> 5]) : f[i]);
        return;
    }
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (long b = w; b < D / 32; b += blockDim.x >> 5) {
        long i = b * 32 + lane;
        float v = SCALE * (WQ ? (float)q[i] * h2f(s[b]) : f[i]);
        warp_quant(v, p.a[3], (long)ROWS * D, ((long)t * D + i) >> 5, OQ);
    }
}
