// latent_expand.cu — latent, expanded (rule latent_expanded: a wide
// chunk's latent attention): the cache's latent rows multiplied out into
// each head's keys and values and each query row's two parts put side by
// side, so that attend.cu takes the chunk's rows as attention over NH heads
// of NOPE + ROPE (CPU twin: lib/ref_ops.c eval_latent, the same sums in
// another order):
//
//   hi = min(max over t < rows of pos[t], NCTX)
//   K[j, h, i]        = Wk[h NOPE + i, :LORA] . C[j, :LORA]     i < NOPE, j < hi
//   K[j, h, NOPE + r] = C[j, LORA + r]                         r < ROPE
//   V[j, h, v]        = Wv[h VD + v, :LORA] . C[j, :LORA]       v < VD
//   Q[t, h, :]        = qr[t, h, :NOPE] then qp[t, h, :]        t < rows
//
// and then attend (MODE 1, NKV = NH) gives what latent does:
// SCALE Q[t, h] . K[j, h] = SCALE ((qr Wk[h]) . C[j, :LORA] + qp . C[j, LORA:])
// and sum_j p_j V[j, h] = Wv[h] (sum_j p_j C[j, :LORA]).
// The expansion costs hi LORA NH (NOPE + VD) products once a chunk, where
// the absorbed launch folds and expands a query row's every head: the
// wider the chunk, the more it saves (logos-fuse --latent-rows).
//
// Shapes: C (NCTX, LORA + ROPE) f32, the latent LORA values then the
// shared rotated key; Wk (NH NOPE, LORA) and Wv (NH VD, LORA) Q8_0 (KQ, VQ
// 1: LORA whole 32-value blocks) or f32; qr (rows, NH, QW) f32 with QW >=
// NOPE; qp (rows, NH, ROPE) f32; pos (rows) i32 (MODE 1, the only mode: a
// chunk's causal rows, each reading the cache up to its position); n the
// runtime rows (or ROWS); K (NCTX, NH, NOPE + ROPE), V (NCTX, NH, VD) and Q
// (ROWS, NH, NOPE + ROPE) f32.
// Launch: grid (JB + QB, OB), block 256: JB = ceil(NCTX / 64) tiles of
// cache rows, OB = ceil(NH (NOPE + VD) / 128) tiles of outputs (Wk's rows
// then Wv's, one stacked matrix), QB = ceil(ROWS / 16). Block (x < JB, y)
// takes cache rows 64 x .. + 63 (none past hi: it returns at once) by
// outputs 128 y .. + 127, thread (tx, ty) = (tid % 16, tid / 16) the 4 x 8
// of rows 4 ty .. + 3 by outputs 4 tx .. + 3 and 64 + 4 tx .. + 3, the
// latent values 32 at a time through shared memory (each step's 32 weights
// of an output one Q8_0 block, dequantized as loaded; the next step's loads
// in registers while this one's products run); the blocks with y 0 also
// copy their rows' rotated key into every head's place. Block (JB + b, 0)
// copies query rows 16 b .. + 15 (the others of x >= JB return). Shared
// memory: the two tiles, 32 x 68 and 32 x 132 floats (static).

constexpr int TJ = 64, TO = 128, TK = 32;   // cache rows, outputs, latent values a step
constexpr int HD = NOPE + ROPE;             // a head's expanded key
constexpr long NO = (long)NH * (NOPE + VD); // the stacked outputs
constexpr int JB = (NCTX + TJ - 1) / TJ;
constexpr int RW = LORA + ROPE;             // a cache row
// 16-byte loads of the cache's rows, four quants (and one scale) at a time
// of the weights, where the shapes allow; else a value at a time.
constexpr bool V4 = RW % 4 == 0 && LORA % TK == 0;
constexpr bool Q4 = KQ && VQ && LORA % TK == 0;

// Weight value (r, l) of the stacked matrix: Wk's rows, then Wv's.
DEV float wstack(const Params &p, long r, long l)
{
    long nk = (long)NH * NOPE;
    int q = r < nk ? KQ : VQ;
    const void *W = r < nk ? p.a[3] : p.a[4];
    long rows = r < nk ? nk : (long)NH * VD, i = r < nk ? r : r - nk;
    if (!q)
        return ((const float *)W)[i * LORA + l];
    const u16 *s = (const u16 *)((const char *)W + align16(rows * LORA));
    return (float)((const i8 *)W)[i * LORA + l] * h2f(s[(i * LORA + l) >> 5]);
}

// The cache rows any query row reads: the largest position, found by the
// block's threads together (a strided max, then one through shared memory).
DEV long rows_read(const Params &p)
{
    __shared__ int most[8];
    const int *pos = (const int *)p.a[5];
    int rows = rows_of(p.a[6], ROWS), hi = 0;
    for (int t = threadIdx.x; t < rows; t += blockDim.x)
        hi = max(hi, pos[t]);
    for (int o = 16; o; o >>= 1)
        hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
    if ((threadIdx.x & 31) == 0)
        most[threadIdx.x >> 5] = hi;
    __syncthreads();
    hi = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); w++)
        hi = max(hi, most[w]);
    return hi < NCTX ? hi : NCTX;
}

// Query rows 16 b .. + 15: each head's unrotated part, then its rotated one.
DEV void queries(const Params &p, long b)
{
    long rows = rows_of(p.a[6], ROWS), t0 = 16 * b, t1 = t0 + 16 < rows ? t0 + 16 : rows;
    const float *qr = (const float *)p.a[0], *qp = (const float *)p.a[1];
    float *Q = (float *)p.a[9];
    for (long i = threadIdx.x; i < (t1 - t0) * NH * HD; i += blockDim.x) {
        long th = t0 * NH + i / HD, k = i % HD;   // (row, head) and the place in it
        Q[th * HD + k] = k < NOPE ? qr[th * QW + k] : qp[th * ROPE + k - NOPE];
    }
}

// The rotated keys of cache rows j0 .. j1 - 1, into every head's place.
DEV void rotated(const Params &p, long j0, long j1)
{
    const float *C = (const float *)p.a[2];
    float *K = (float *)p.a[7];
    for (long i = threadIdx.x; i < (j1 - j0) * NH * ROPE; i += blockDim.x) {
        long j = j0 + i / (NH * ROPE), h = i / ROPE % NH, r = i % ROPE;
        K[(j * NH + h) * HD + NOPE + r] = C[j * RW + LORA + r];
    }
}

// Output o of cache row j: a key's unrotated value or a value.
DEV void put(const Params &p, long j, long o, float v)
{
    long nk = (long)NH * NOPE;
    if (o < nk)
        ((float *)p.a[7])[(j * NH + o / NOPE) * HD + o % NOPE] = v;
    else
        ((float *)p.a[8])[j * NH * VD + (o - nk)] = v;
}

// One step's tiles as a thread loads them into registers (the next step's
// loads in flight while this one's products run): 2 x 4 cache values (rows
// i / 8, values 4 (i % 8) .. + 3 of the step, i = tid, tid + 256) and 4 x 4
// weights (outputs i / 8 of the tile, 4 (i % 8) .. + 3, i = tid + 256 m),
// dequantized; or, off the fast shapes, 8 and 16 single values.
struct Stage {
    float a[8], b[16];
};

DEV void stage_load(const Params &p, long j0, long j1, long o0, long k0, Stage &s)
{
    const float *C = (const float *)p.a[2];
    int tid = threadIdx.x;
#pragma unroll
    for (int m = 0; m < 2; m++) {
        int i = tid + 256 * m;
        long j = j0 + i / 8, l = k0 + 4 * (i % 8);
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (V4 && j < j1)
            v = *(const float4 *)(C + j * RW + l);
        else if (!V4)
            for (int e = 0; e < 4; e++)
                (&v.x)[e] = j < j1 && l + e < LORA ? C[j * RW + l + e] : 0.0f;
        s.a[4 * m] = v.x, s.a[4 * m + 1] = v.y, s.a[4 * m + 2] = v.z, s.a[4 * m + 3] = v.w;
    }
    long nk = (long)NH * NOPE;
#pragma unroll
    for (int m = 0; m < 4; m++) {
        int i = tid + 256 * m;
        long o = o0 + i / 8, l = k0 + 4 * (i % 8);
        if (Q4) {
            int w = 0;
            float sc = 0.0f;
            if (o < NO) {
                bool k = o < nk;
                long r = k ? o : o - nk, rows = k ? nk : (long)NH * VD;
                const char *W = (const char *)(k ? p.a[3] : p.a[4]);
                w = *(const int *)(W + r * LORA + l);
                sc = h2f(((const u16 *)(W + align16(rows * LORA)))[(r * LORA + l) >> 5]);
            }
            const i8 *q = (const i8 *)&w;
#pragma unroll
            for (int e = 0; e < 4; e++)
                s.b[4 * m + e] = (float)q[e] * sc;
        } else {
            for (int e = 0; e < 4; e++)
                s.b[4 * m + e] = o < NO && l + e < LORA ? wstack(p, o, l + e) : 0.0f;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256) latent_expand(const Params p)
{
    KERNEL_OPEN();
    __shared__ __align__(16) float As[TK][TJ + 4], Bs[TK][TO + 4];
    pdl_begin();
    long bx = blockIdx.x, o0 = (long)blockIdx.y * TO;
    if (bx >= JB) {
        if (blockIdx.y == 0)
            queries(p, bx - JB);
        return;
    }
    long hi = rows_read(p), j0 = bx * TJ;
    if (j0 >= hi)
        return;
    long j1 = j0 + TJ < hi ? j0 + TJ : hi;
    if (blockIdx.y == 0)
        rotated(p, j0, j1);
    int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    float acc[4][8];
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 8; c++)
            acc[r][c] = 0.0f;
    Stage st;
    stage_load(p, j0, j1, o0, 0, st);
    for (long k0 = 0; k0 < LORA; k0 += TK) {
        __syncthreads();   // the step before is read
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                As[4 * ((tid + 256 * m) % 8) + e][(tid + 256 * m) / 8] = st.a[4 * m + e];
#pragma unroll
        for (int m = 0; m < 4; m++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                Bs[4 * ((tid + 256 * m) % 8) + e][(tid + 256 * m) / 8] = st.b[4 * m + e];
        __syncthreads();
        if (k0 + TK < LORA)   // the next step's loads in flight over this one's products
            stage_load(p, j0, j1, o0, k0 + TK, st);
#pragma unroll 8
        for (int k = 0; k < TK; k++) {
            float4 a = *(const float4 *)&As[k][4 * ty];
            float4 b0 = *(const float4 *)&Bs[k][4 * tx], b1 = *(const float4 *)&Bs[k][64 + 4 * tx];
            float av[4] = {a.x, a.y, a.z, a.w}, bv[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int r = 0; r < 4; r++)
#pragma unroll
                for (int c = 0; c < 8; c++)
                    acc[r][c] = fmaf(av[r], bv[c], acc[r][c]);
        }
    }
#pragma unroll
    for (int r = 0; r < 4; r++)
#pragma unroll
        for (int c = 0; c < 8; c++) {
            long j = j0 + 4 * ty + r, o = o0 + (c < 4 ? 4 * tx + c : 64 + 4 * tx + c - 4);
            if (j < j1 && o < NO)
                put(p, j, o, acc[r][c]);
        }
}
