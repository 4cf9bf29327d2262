// latent.cu — latent: latent attention absorbed (DeepSeek-V2), attention
// over the latent cache with the key half of the expansion folded into the
// query per head and the value half applied after (CPU twin: lib/ref_ops.c
// eval_latent):
//
//   u[l]       = sum over i < NOPE: qr[t, h, i] * Wk[h * NOPE + i, l]      l < LORA
//   s[j]       = SCALE * (u . C[j, :LORA] + qp[t, h] . C[j, LORA:])        j < n
//   c[l]       = sum over j: softmax(s)[j] * C[j, l]
//   y[t, h, v] = Wv[h * VD + v] . c                                       v < VD
//
// n is pos[0] under MODE 0 (one row at one position), pos[t] under MODE 1
// (a row each), NCTX under MODE 2 (every row of C).
//
// Shapes: qr (rows, NH, QW) f32 with QW >= NOPE (each head's unrotated part
// its first NOPE values); qp (rows, NH, ROPE) f32; C (NCTX, LORA + ROPE) f32,
// the latent LORA values then the shared rotated key; Wk (NH * NOPE, LORA)
// and Wv (NH * VD, LORA) Q8_0 (KQ, VQ 1: LORA whole 32-value blocks) or f32;
// y (rows, NH, VD) f32; rows = n or ROWS.
// Launch: grid (NH, ROWS), block 256, smem 4 (NOPE + 2 LORA + 8 (LORA + 2)):
// block (h, t) folds the query (a value of u a thread), walks C a row a warp
// with an online softmax (the latent values a lane's in registers), merges
// its 8 warps, then applies Wv a row a warp. Every product is f32, as the
// reference's.

#define KL ((LORA + 31) / 32)   // latent values a lane

// Value (r, l) of a weight of `rows` rows of LORA values, Q8_0 (q) or f32.
DEV float wval(const void *W, long rows, long r, long l, int q)
{
    if (!q)
        return ((const float *)W)[r * LORA + l];
    const u16 *s = (const u16 *)((const char *)W + align16(rows * LORA));
    return (float)((const i8 *)W)[r * LORA + l] * h2f(s[(r * LORA + l) >> 5]);
}

DEV long ctx_rows(const Params &p, long t)
{
    const int *pos = (const int *)p.a[5];
    return MODE == 2 ? NCTX : MODE == 1 ? pos[t] : pos[0];
}

extern "C" __global__ void __launch_bounds__(256) latent(const Params p)
{
    extern __shared__ float sm[];
    float *qn = sm, *u = qn + NOPE, *c = u + LORA, *wm = c + LORA, *wl = wm + 8, *wacc = wl + 8;
    pdl_begin();
    long h = blockIdx.x, t = blockIdx.y;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (t >= rows_of(p.a[6], ROWS))
        return;
    const float *qr = (const float *)p.a[0] + (t * NH + h) * QW, *qp = (const float *)p.a[1] + (t * NH + h) * ROPE;
    const float *C = (const float *)p.a[2];
    long n = ctx_rows(p, t);
    n = n < NCTX ? n : NCTX;
    for (long i = threadIdx.x; i < NOPE; i += blockDim.x)
        qn[i] = qr[i];
    __syncthreads();
    for (long l = threadIdx.x; l < LORA; l += blockDim.x) {
        float acc = 0.0f;
        for (long i = 0; i < NOPE; i++)
            acc = fmaf(qn[i], wval(p.a[3], NH * NOPE, h * NOPE + i, l, KQ), acc);
        u[l] = acc;
    }
    __syncthreads();
    float ur[KL], acc[KL], m = NEG_INF, sum = 0.0f;
    for (int k = 0; k < KL; k++) {
        long l = lane + 32 * k;
        ur[k] = l < LORA ? u[l] : 0.0f;
        acc[k] = 0.0f;
    }
    float qk = lane < ROPE ? qp[lane] : 0.0f;
    for (long j = w; j < n; j += 8) {
        const float *row = C + j * (LORA + ROPE);
        float cv[KL], d = 0.0f;
        for (int k = 0; k < KL; k++) {
            long l = lane + 32 * k;
            cv[k] = l < LORA ? row[l] : 0.0f;
            d = fmaf(ur[k], cv[k], d);
        }
        for (long r = lane; r < ROPE; r += 32)
            d = fmaf(r < 32 ? qk : qp[r], row[LORA + r], d);
        float s = SCALE * warp_sum(d), mn = fmaxf(m, s), corr = expf(m - mn), e = expf(s - mn);
        sum = sum * corr + e;
        for (int k = 0; k < KL; k++)
            acc[k] = fmaf(e, cv[k], acc[k] * corr);
        m = mn;
    }
    if (lane == 0) {
        wm[w] = m;
        wl[w] = sum;
    }
    for (int k = 0; k < KL; k++)
        if (lane + 32 * k < LORA)
            wacc[w * LORA + lane + 32 * k] = acc[k];
    __syncthreads();
    float M = NEG_INF, L = 0.0f;
    for (int k = 0; k < 8; k++)
        M = fmaxf(M, wm[k]);
    for (int k = 0; k < 8; k++)
        L += wl[k] > 0.0f ? wl[k] * expf(wm[k] - M) : 0.0f;
    for (long l = threadIdx.x; l < LORA; l += blockDim.x) {
        float v = 0.0f;
        for (int k = 0; k < 8; k++)
            v += wl[k] > 0.0f ? wacc[k * LORA + l] * expf(wm[k] - M) : 0.0f;
        c[l] = v / L;
    }
    __syncthreads();
    float *y = (float *)p.a[7] + (t * NH + h) * VD;
    for (long v = w; v < VD; v += 8) {
        float d = 0.0f;
        for (long l = lane; l < LORA; l += 32)
            d = fmaf(wval(p.a[4], NH * VD, h * VD + v, l, VQ), c[l], d);
        d = warp_sum(d);
        if (lane == 0)
            y[v] = d;
    }
}
