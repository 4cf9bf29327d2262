// delta.cu — delta: the gated delta rule (Gated DeltaNet, Qwen3-Next's linear
// attention), each value head h's state S[h] (DK, DV) kept in registers
// across the rows, the rows t in order (a prefill chunk is its steps), with
// the per-head L2 norms of q and k (and q's scale) as its prologue:
//
//   kh   = h / (NV / NK)                      (the query and key head it reads)
//   qh   = q[t * QX + QA + kh * DK + i]       (a slice of a wider row in place)
//        -> qh / sqrt(sum qh^2 + EPS) (QN 1), then * QSC; k alike (KN, KSC)
//   vh   = v[t * VX + VA + h * DV + j]
//   gt   = g[t, h]; GF 1: -exp(ga[h]) * softplus(gt)   (Qwen3-Next's decay
//          from its projection and A_log, as the reference computes it)
//   bt   = beta[t, h]; BF 1: sigmoid(bt)
//   S    = exp(gt) * S                        (the decay)
//   u[j] = bt * (vh[j] - sum_i S[i, j] * kh[i])
//   S    = S + kh u^T                         (the update)
//   y[t, h, j] = sum_i S[i, j] * qh[i]        (the read-out)
//
// Shapes: q, k rows of QX, KX f32 values holding (NK, DK) at QA, KA; v rows
// of VX holding (NV, DV) at VA; g, beta (rows, NV) f32; ga (NV) f32; S (NV, DK, DV) f32
// state, written back after the last row; y (rows, NV, DV) f32; rows = n or
// ROWS. DK a multiple of 4, at most 256.
// Launch: grid (NV, ceil(DV / 32)), block 128: four adjacent lanes a column
// j of the head's state, each holding DK / 4 of its rows (i = part + 4r);
// the row's q and k staged (and normed) in shared memory.

constexpr long DR = DK / 4;   // the state's rows a thread holds

DEV float quad_sum(float v)
{
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    return v + __shfl_xor_sync(0xffffffffu, v, 2);
}

// The block's row of n values at x, staged in shared memory at s and, under
// NORM, divided by its L2 norm; then times sc.
template <int NORM>
DEV void stage(const float *x, float *s, float sc, float *red)
{
    float ss = 0.0f;
    for (long i = threadIdx.x; i < DK; i += blockDim.x) {
        s[i] = x[i];
        ss += x[i] * x[i];
    }
    if (NORM)
        sc /= sqrtf(block_sum(ss, red) + EPS);
    for (long i = threadIdx.x; i < DK; i += blockDim.x)
        s[i] *= sc;
}

extern "C" __global__ void __launch_bounds__(128) delta(const Params p)
{
    KERNEL_OPEN();
    __shared__ float qs[DK], ks[DK], red[32];
    pdl_begin();
    const float *q = (const float *)p.a[0], *k = (const float *)p.a[1], *v = (const float *)p.a[2];
    const float *g = (const float *)p.a[3], *beta = (const float *)p.a[4];
    float *S = (float *)p.a[5], *y = (float *)p.a[7];
    long h = blockIdx.x, kh = h / (NV / NK), part = threadIdx.x & 3;
    long j = (long)blockIdx.y * 32 + (threadIdx.x >> 2);
    int on = j < DV;   // the lanes past the last column keep the shuffles whole
    float *Sh = S + h * DK * DV;
    float s[DR];
#pragma unroll
    for (int r = 0; r < DR; r++)
        s[r] = on ? Sh[(part + 4 * r) * DV + j] : 0.0f;
    long rows = rows_of(p.a[6], ROWS);
    for (long t = 0; t < rows; t++) {
        __syncthreads();   // the last row's q and k are read
        stage<QN>(q + t * QX + QA + kh * DK, qs, QSC, red);
        stage<KN>(k + t * KX + KA + kh * DK, ks, KSC, red);
        __syncthreads();
        float gt = g[t * NV + h], b = beta[t * NV + h], u = 0.0f;
        if (GF)
            gt = -expf(((const float *)p.a[8])[h]) * (gt > 20.0f ? gt : log1pf(expf(gt)));
        if (BF)
            b = sigmoid(b);
        float dec = expf(gt);
        float vj = on ? v[t * VX + VA + h * DV + j] : 0.0f;
#pragma unroll
        for (int r = 0; r < DR; r++) {
            s[r] *= dec;
            u = fmaf(s[r], ks[part + 4 * r], u);
        }
        u = b * (vj - quad_sum(u));
        float o = 0.0f;
#pragma unroll
        for (int r = 0; r < DR; r++) {
            s[r] = fmaf(ks[part + 4 * r], u, s[r]);
            o = fmaf(s[r], qs[part + 4 * r], o);
        }
        o = quad_sum(o);
        if (on && part == 0)
            y[(t * NV + h) * DV + j] = o;
    }
    if (on)
#pragma unroll
        for (int r = 0; r < DR; r++)
            Sh[(part + 4 * r) * DV + j] = s[r];
}
