// conv.cu — sconv: a depthwise causal convolution over its ring of the last
// KW - 1 rows, with the gate before it, its activation and the gate after it
// (LFM2's short convolution, Qwen3-Next's conv ring):
//
//   u[t, c] = x[t * XS + XA + c]                       (GIN 0)
//           = x[t * XS + XA + c] * x2[t * X2S + X2A + c]  (GIN 1: the gate in)
//   win     = the ring R (KW - 1, C), oldest row first, then u[t]
//   v[t, c] = b[c] + sum_i w[c, i] * win[i, c]          (b 0 without BIAS)
//   v       = silu(v)                                   (ACT 1)
//   y[t, c] = v, or g[t * GS + GA + c] * v              (GOUT 1: the gate out)
//   R       = win[1 .. KW), after each row, the rows t in order
//
// Shapes: x, x2, g f32 rows of XS, X2S, GS values (a slice of a wider row
// read in place at XA, X2A, GA); R (KW - 1, C) f32 state; w (C, KW) f32;
// b (C) f32; y (rows, C) in format OQ (C whole 32-value blocks); rows = n or
// ROWS.
// Launch: grid ceil(C / 128), block 128: a thread a channel, its window in
// registers across the rows.

extern "C" __global__ void __launch_bounds__(128) sconv(const Params p)
{
    KERNEL_OPEN();
    pdl_begin();
    long c = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C)
        return;   // whole warps when OQ: C is whole 32-value blocks
    const float *x = (const float *)p.a[0], *x2 = (const float *)p.a[1], *w = (const float *)p.a[3];
    const float *b = (const float *)p.a[4], *g = (const float *)p.a[5];
    float *R = (float *)p.a[2];
    float win[KW], wc[KW];
#pragma unroll
    for (int i = 0; i < KW - 1; i++)
        win[i] = R[i * C + c];
#pragma unroll
    for (int i = 0; i < KW; i++)
        wc[i] = w[c * KW + i];
    float bias = BIAS ? b[c] : 0.0f;
    long rows = rows_of(p.a[6], ROWS);
    for (long t = 0; t < rows; t++) {
        float u = x[t * XS + XA + c];
        if (GIN)
            u *= x2[t * X2S + X2A + c];
        win[KW - 1] = u;
        float v = bias;
#pragma unroll
        for (int i = 0; i < KW; i++)
            v = fmaf(wc[i], win[i], v);
        if (ACT)
            v = silu(v);
        if (GOUT)
            v = g[t * GS + GA + c] * v;
        if (OQ)
            warp_quant(v, p.a[7], (long)ROWS * C, (t * C + c) >> 5, OQ);
        else
            ((float *)p.a[7])[t * C + c] = v;
#pragma unroll
        for (int i = 0; i < KW - 1; i++)
            win[i] = win[i + 1];
    }
#pragma unroll
    for (int i = 0; i < KW - 1; i++)
        R[i * C + c] = win[i];
}
