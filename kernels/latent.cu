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
// Launch: grid (NH, SPLIT, ROWS), block 256, smem 4 (NOPE + 2 LORA + 8 (LORA
// + 2) + 2 SPLIT). Block (h, c, t) takes chunk c of the rows of C (as
// many chunks as hold CHUNK rows, at most SPLIT, so a short context keeps
// few blocks busy: chunk_rows), folds the query (fold), walks its rows RB
// a warp at a time (their loads before any is used) with an online
// softmax (the latent values a lane's in registers) and merges its 8
// warps. One busy chunk: it applies Wv a row a warp. Several: each leaves
// (m, l, c[LORA]) in part, and the last to finish (cnt counts them) merges
// them, applies Wv and sets its count back to 0. Every product is f32, as
// the reference's. Before it waits for the launch before (programmatic
// dependent launch), a block loads its warps' rows of Wk (fold_load) and
// asks L2 for its share of the head's Wv and for its first round of cache
// rows, so that after the wait its chain is the query's load, the
// arithmetic and L2's latency.

#define KL ((LORA + 31) / 32)   // latent values a lane
#define KR ((ROPE + 31) / 32)   // rotated key values a lane
constexpr int RB = KL <= 16 ? 4 : 2;   // rows a warp loads together

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

// u = qn . Wk[h * NOPE .. + NOPE, :], the query folded through the key
// half of the expansion. Q8_0 rows of whole 16-value segments: warp w takes
// rows w, w + 8, ..., lane j the segments j, j + 32, ... of each, 16 bytes
// a load; the warps' sums meet in scr (8 LORA floats). Where a warp's
// segments are at most 16 loads a lane (PRE: DeepSeek-V2's 16 rows of 512)
// they are loaded by fold_load before the block waits for the launch
// before (the weights do not depend on it), so the fold after the wait is
// arithmetic alone; otherwise eight rows' loads in flight in the loop.
// Not Q8_0 or not whole segments: a value of u a thread, sixteen rows'
// loads in flight.
constexpr int SEG = LORA / 16, SL = (SEG + 31) / 32, RPW = (NOPE + 7) / 8;
constexpr bool QSEG = KQ && LORA % 16 == 0, PRE = QSEG && RPW * SL <= 16;
struct FoldW {
    int4 v[PRE ? RPW * SL : 1];
    float d[PRE ? RPW * SL : 1];
};

DEV const i8 *wk_q(const Params &p)
{
    return (const i8 *)p.a[3];
}

DEV const u16 *wk_s(const Params &p)
{
    return (const u16 *)((const char *)p.a[3] + align16((long)NH * NOPE * LORA));
}

// A warp's R rows of a head's n rows of the Q8_0 weight in parameter A, of
// `total` rows of LORA values (rows h n + w + 8k): the lane's segments j,
// j + 32, ... of each and their scales, all loaded before any is used (0
// past the rows), the scales as u16 or (Sc float) converted. The weight's address is read from the parameters at each
// load, not held in registers (the decode step's instance is at 128).
// The scale of a segment as the caller keeps it: as stored, or as f32.
DEV u16 scale_as(u16 s, const u16 *)
{
    return s;
}

DEV float scale_as(u16 s, const float *)
{
    return h2f(s);
}

template <int R, int A, typename Sc>
DEV void warp_rows(const Params &p, long total, long h, long n, int4 *q, Sc *sc)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
#pragma unroll
    for (int k = 0; k < R; k++)
#pragma unroll
        for (int s = 0; s < SL; s++) {
            long i = w + 8L * k, r = h * n + i;
            int seg = lane + 32 * s, on = i < n && seg < SEG;
            const u16 *S = (const u16 *)((const char *)p.a[A] + align16(total * LORA));
            q[k * SL + s] = on ? *((const int4 *)((const i8 *)p.a[A] + r * LORA) + seg) : make_int4(0, 0, 0, 0);
            sc[k * SL + s] = on ? scale_as(S[(r * LORA) / 32 + seg / 2], sc) : (Sc)0;
        }
}

DEV void fold_load(const Params &p, long h, FoldW &fw)
{
    if (PRE)
        warp_rows<RPW, 3>(p, (long)NH * NOPE, h, NOPE, fw.v, fw.d);
}

// One row's segments into the lane's sums.
DEV void fold_row(float part[SL][16], int s, float d, int4 v)
{
    const i8 *b = (const i8 *)&v;
#pragma unroll
    for (int j = 0; j < 16; j++)
        part[s][j] = fmaf(d, (float)b[j], part[s][j]);
}

DEV void fold(const Params &p, long h, const FoldW &fw, const float *qn, float *u, float *scr)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (QSEG) {
        float part[SL][16];
#pragma unroll
        for (int s = 0; s < SL; s++)
#pragma unroll
            for (int j = 0; j < 16; j++)
                part[s][j] = 0.0f;
        if (PRE) {
#pragma unroll
            for (int k = 0; k < RPW; k++)
#pragma unroll
                for (int s = 0; s < SL; s++)
                    if (w + 8 * k < NOPE)
                        fold_row(part, s, qn[w + 8 * k] * fw.d[k * SL + s], fw.v[k * SL + s]);
        } else {
#pragma unroll 8
            for (long i = w; i < NOPE; i += 8) {
                long r = h * NOPE + i;
#pragma unroll
                for (int s = 0; s < SL; s++) {
                    int seg = lane + 32 * s;
                    if (seg < SEG)
                        fold_row(part, s, qn[i] * h2f(wk_s(p)[(r * LORA) / 32 + seg / 2]),
                                 *((const int4 *)(wk_q(p) + r * LORA) + seg));
                }
            }
        }
#pragma unroll
        for (int s = 0; s < SL; s++) {
            int seg = lane + 32 * s;
            if (seg < SEG)
#pragma unroll
                for (int j = 0; j < 16; j++)
                    scr[w * LORA + 16 * seg + j] = part[s][j];
        }
        __syncthreads();
        for (long l = threadIdx.x; l < LORA; l += blockDim.x) {
            float a = 0.0f;
            for (int k = 0; k < 8; k++)
                a += scr[k * LORA + l];
            u[l] = a;
        }
        return;
    }
    for (long l = threadIdx.x; l < LORA; l += blockDim.x) {
        float acc = 0.0f;
#pragma unroll 16
        for (long i = 0; i < NOPE; i++)   // sixteen rows' loads in flight
            acc = fmaf(qn[i], wval(p.a[3], NH * NOPE, h * NOPE + i, l, KQ), acc);
        u[l] = acc;
    }
}

// Block (h, c) of the head's SPLIT asks L2 for its share of the head's
// value half (Q8_0: its VD rows and their scales, each contiguous), so the
// one block that applies it finds it there.
DEV void wv_warm(const Params &p, long h, long c)
{
    if (!VQ)
        return;
    const char *q = (const char *)p.a[4] + h * VD * LORA;
    const char *s = (const char *)p.a[4] + align16((long)NH * VD * LORA) + h * VD * (LORA / 32) * 2;
    long lq = (VD * LORA + 127) / 128, ls = (VD * (LORA / 32) * 2 + 127) / 128;
    for (long i = c * blockDim.x + threadIdx.x; i < lq + ls; i += (long)SPLIT * blockDim.x)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(i < lq ? q + 128 * i : s + 128 * (i - lq)));
}

// y[t, h, :] = Wv[h] . c (c: LORA values in shared memory), a row a warp:
// Q8_0 rows 16 bytes a lane a load, all of a warp's rows' loads in flight
// at once where they are at most 16 a lane in a decode step's launch (EPRE:
// DeepSeek-V2's 16 rows of 512; one L2 latency, not four; the stacked and
// whole-cache forms would pass 128 registers), else four rows' at a time;
// otherwise a value a lane.
constexpr int RV = (VD + 7) / 8;   // rows a warp
constexpr bool EPRE = VQ && LORA % 16 == 0 && RV * SL <= 16 && ROWS == 1 && MODE == 0;

// A row's segment seg (16 quants q at scale sc) times c's 16 values there,
// into the row's sum d.
DEV float seg_dot(int4 q, u16 sc, const float *c, int seg, float d)
{
    const i8 *b = (const i8 *)&q;
    float e = 0.0f;
#pragma unroll
    for (int j = 0; j < 16; j++)
        e = fmaf((float)b[j], c[16 * seg + j], e);
    return fmaf(h2f(sc), e, d);
}

DEV void expand_pre(const Params &p, long h, const float *c, float *y)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int4 q[EPRE ? RV * SL : 1];
    u16 sc[EPRE ? RV * SL : 1];
    warp_rows<RV, 4>(p, (long)NH * VD, h, VD, q, sc);
#pragma unroll
    for (int k = 0; k < RV; k++) {
        float d = 0.0f;
#pragma unroll
        for (int s = 0; s < SL; s++)
            if (lane + 32 * s < SEG)
                d = seg_dot(q[k * SL + s], sc[k * SL + s], c, lane + 32 * s, d);
        d = warp_sum(d);
        if (lane == 0 && w + 8 * k < VD)
            y[w + 8 * k] = d;
    }
}

DEV void expand(const Params &p, long t, long h, const float *c)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    float *y = (float *)p.a[7] + (t * NH + h) * VD;
    if (EPRE) {
        expand_pre(p, h, c, y);
        return;
    }
    if (VQ && LORA % 16 == 0) {
        const i8 *W = (const i8 *)p.a[4];
        const u16 *S = (const u16 *)((const char *)p.a[4] + align16((long)NH * VD * LORA));
#pragma unroll 4
        for (long v = w; v < VD; v += 8) {
            long r = h * VD + v;
            float d = 0.0f;
#pragma unroll
            for (int s = 0; s < SL; s++) {
                int seg = lane + 32 * s;
                if (seg >= SEG)
                    continue;
                d = seg_dot(*((const int4 *)(W + r * LORA) + seg), S[(r * LORA) / 32 + seg / 2], c, seg, d);
            }
            d = warp_sum(d);
            if (lane == 0)
                y[v] = d;
        }
        return;
    }
    for (long v = w; v < VD; v += 8) {
        float d = 0.0f;
        for (long l = lane; l < LORA; l += 32)
            d = fmaf(wval(p.a[4], NH * VD, h * VD + v, l, VQ), c[l], d);
        d = warp_sum(d);
        if (lane == 0)
            y[v] = d;
    }
}

// A context of n rows goes in as many chunks as hold CHUNK rows each (at
// least one, at most SPLIT), each of chunk_rows (the last the rest): no
// chunk of a few rows (run135: at 513 rows, 9 chunks of 64 and 1 made
// DeepSeek-V2-Lite's step 2.5% slower than 8 of 65). last_chunk: the last
// with rows, chunks of chunk_rows(n).
DEV long chunk_rows(long n)
{
    long b = n / CHUNK;
    b = b < 1 ? 1 : b > SPLIT ? SPLIT : b;
    return (n + b - 1) / b;
}

DEV long last_chunk(long n, long chunk)
{
    return n > 0 ? (n - 1) / chunk : 0;
}

// And its first round of cache rows (8 RB rows from the chunk's start),
// from where the positions say before the wait: a hint only (a row the
// launch before writes is read after the wait, through L2, which holds
// the latest).
DEV void rows_warm(const Params &p, long n, long chunk, long c)
{
    long j0 = c * chunk;
    long j1 = j0 + 8L * RB < n ? j0 + 8L * RB : n;
    const char *b = (const char *)p.a[2] + j0 * (LORA + ROPE) * 4;
    long lines = ((j1 - j0) * (LORA + ROPE) * 4 + 127) / 128;
    for (long i = threadIdx.x; i < lines; i += blockDim.x)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(b + 128 * i));
}

// The merging block's places a thread (LORA over its 256 threads), and
// whether every chunk's values of them fit its registers at once (MPRE).
constexpr int LPT = (LORA + 255) / 256;
constexpr bool MPRE = SPLIT <= 16 && LPT * SPLIT <= 64;

extern "C" __global__ void __launch_bounds__(256) latent(const Params p)
{
    KERNEL_OPEN();
    extern __shared__ float sm[];
    float *qn = sm, *u = qn + NOPE, *c = u + LORA, *wm = c + LORA, *wl = wm + 8, *wacc = wl + 8;
    float *ek = wacc + 8 * LORA;   // the chunks' weights and sums (the merging block)
    long h = blockIdx.x, cb = blockIdx.y, t = blockIdx.z;
    FoldW fw;
    // before the wait, the weights (which do not depend on the launch
    // before), where the positions read then say this chunk has rows (a
    // hint: a chunk they leave idle loads nothing, and loads them after
    // the wait if it has rows after all)
    long n0 = 0, chunk0 = 1;
    bool warm = false;
    if (t < rows_of(p.a[6], ROWS)) {
        n0 = ctx_rows(p, t);
        n0 = n0 < NCTX ? n0 : NCTX;
        chunk0 = chunk_rows(n0);
        warm = cb <= last_chunk(n0, chunk0);
    }
    if (warm)
        fold_load(p, h, fw);
    if (t == 0)
        wv_warm(p, h, cb);
    if (warm)
        rows_warm(p, n0, chunk0, cb);
    pdl_begin();
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (t >= rows_of(p.a[6], ROWS))
        return;
    const float *qr = (const float *)p.a[0] + (t * NH + h) * QW, *qp = (const float *)p.a[1] + (t * NH + h) * ROPE;
    const float *C = (const float *)p.a[2];
    long n = ctx_rows(p, t);
    n = n < NCTX ? n : NCTX;
    long chunk = chunk_rows(n), lc = last_chunk(n, chunk), busy = lc + 1;
    if (cb > lc)
        return;
    if (!warm)
        fold_load(p, h, fw);
    long j0 = cb * chunk, j1 = j0 + chunk < n ? j0 + chunk : n;
    for (long i = threadIdx.x; i < NOPE; i += blockDim.x)
        qn[i] = qr[i];
    __syncthreads();
    fold(p, h, fw, qn, u, wacc);
    __syncthreads();
    float ur[KL], acc[KL], qk[KR], m = NEG_INF, sum = 0.0f;
#pragma unroll
    for (int k = 0; k < KL; k++) {
        long l = lane + 32 * k;
        ur[k] = l < LORA ? u[l] : 0.0f;
        acc[k] = 0.0f;
    }
#pragma unroll
    for (int k = 0; k < KR; k++)
        qk[k] = lane + 32 * k < ROPE ? qp[lane + 32 * k] : 0.0f;
    for (long j = j0 + w; j < j1; j += 8L * RB) {
        float cv[RB][KL], rr[RB][KR];
#pragma unroll
        for (int r = 0; r < RB; r++) {   // the rows' loads first
            const float *row = C + (j + 8L * r) * (LORA + ROPE);
            int here = j + 8L * r < j1;
#pragma unroll
            for (int k = 0; k < KL; k++)
                cv[r][k] = here && lane + 32 * k < LORA ? row[lane + 32 * k] : 0.0f;
#pragma unroll
            for (int k = 0; k < KR; k++)
                rr[r][k] = here && lane + 32 * k < ROPE ? row[LORA + lane + 32 * k] : 0.0f;
        }
#pragma unroll
        for (int r = 0; r < RB; r++) {
            if (j + 8L * r >= j1)
                break;
            float d = 0.0f;
#pragma unroll
            for (int k = 0; k < KL; k++)
                d = fmaf(ur[k], cv[r][k], d);
#pragma unroll
            for (int k = 0; k < KR; k++)
                d = fmaf(qk[k], rr[r][k], d);
            float s = SCALE * warp_sum(d), mn = fmaxf(m, s), corr = expf(m - mn), e = expf(s - mn);
            sum = sum * corr + e;
#pragma unroll
            for (int k = 0; k < KL; k++)
                acc[k] = fmaf(e, cv[r][k], acc[k] * corr);
            m = mn;
        }
    }
    if (lane == 0) {
        wm[w] = m;
        wl[w] = sum;
    }
#pragma unroll
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
        c[l] = busy == 1 ? v / L : v;
    }
    __syncthreads();
    if (busy == 1) {
        expand(p, t, h, c);
        return;
    }
    // several chunks: this one's (M, L, c) to part; the last block merges
    float *all = (float *)p.a[8] + (t * NH + h) * SPLIT * (LORA + 2), *part = all + cb * (LORA + 2);
    if (threadIdx.x == 0)
        part[0] = M, part[1] = L;
    for (long l = threadIdx.x; l < LORA; l += blockDim.x)
        part[2 + l] = c[l];
    fence_gpu();
    __syncthreads();
    __shared__ int last;
    int *cnt = (int *)p.a[9] + t * NH + h;
    if (threadIdx.x == 0) {
        last = atomicAdd(cnt, 1) == busy - 1;
        if (last)
            fence_gpu();
    }
    __syncthreads();
    if (!last)
        return;
    for (long k = threadIdx.x; k < busy; k += blockDim.x)
        ek[k] = ldcg(all + k * (LORA + 2)), ek[SPLIT + k] = ldcg(all + k * (LORA + 2) + 1);
    __syncthreads();
    float MM = NEG_INF, LL = 0.0f;
    for (long k = 0; k < busy; k++)
        MM = fmaxf(MM, ek[k]);
    for (long k = 0; k < busy; k++)
        LL += ek[SPLIT + k] > 0.0f ? ek[SPLIT + k] * expf(ek[k] - MM) : 0.0f;
    __syncthreads();
    for (long k = threadIdx.x; k < busy; k += blockDim.x)
        ek[k] = ek[SPLIT + k] > 0.0f ? expf(ek[k] - MM) / LL : 0.0f;
    __syncthreads();
    if (MPRE) {   // every chunk's values of the thread's places loaded at once, then summed in order
        float cv[LPT][SPLIT <= 16 ? SPLIT : 1];
#pragma unroll
        for (int i = 0; i < LPT; i++)
#pragma unroll
            for (int k = 0; k < SPLIT; k++) {
                long l = threadIdx.x + 256L * i;
                cv[i][k] = k < busy && l < LORA ? ldcg(all + k * (LORA + 2) + 2 + l) : 0.0f;
            }
#pragma unroll
        for (int i = 0; i < LPT; i++) {
            long l = threadIdx.x + 256L * i;
            float v = 0.0f;
#pragma unroll
            for (int k = 0; k < SPLIT; k++)
                if (k < busy)
                    v += ek[k] * cv[i][k];
            if (l < LORA)
                c[l] = v;
        }
    } else {
        for (long l = threadIdx.x; l < LORA; l += blockDim.x) {
            float v = 0.0f;
#pragma unroll 8
            for (long k = 0; k < busy; k++)
                v += ek[k] * ldcg(all + k * (LORA + 2) + 2 + l);
            c[l] = v;
        }
    }
    __syncthreads();
    expand(p, t, h, c);
    if (threadIdx.x == 0)
        *cnt = 0;
}
