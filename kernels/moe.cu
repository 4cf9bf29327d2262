// moe.cu — moe: a mixture's experts, reading only the kept experts' rows,
// in two launches (PHASE 0 then 1; CPU twin: lib/ref_ops.c eval_moe), and
// under SH the mixture's shared expert folded in (rule moe_shared):
//
//   PHASE 0:  h[t, j, i] = act(Wg[e] row i . x[t] + bg[e, i], Wu[e] row i . x[t] + bu[e, i])     j < K
//             h[t, K + s, i] = silu(Wsg row (s FF + i) . x[t]) * (Wsu row (s FF + i) . x[t])   s < SH
//   PHASE 1:  y[t, o] = sum over j < K: rt[t, e] * (Wd[e] row o . h[t, j] + bd[e, o])
//                       (+ g[t] Wsd row o . h[t, K ..]: the shared expert's FS = SH FF
//                        hidden values, g[t] = sigmoid(gs[t]) under GSH, else 1)
//                       (+ r[t, o] under RES: the residual the layer adds)
//
// where e is the j-th expert (in expert order) whose routing weight
// rt[t, e] is not 0, j < K; act (ACT) 0 silu(g) * u, 1 gelu_tanh(g) * u,
// 2 gpt-oss's (min(g, LIMIT) * sigmoid(ALPHA * min(g, LIMIT)) *
// (clamp(u, -LIMIT, LIMIT) + 1)); a bias 0 when absent (GB, DB); the
// shared expert takes act 0 or 1 as the experts do, and has no biases.
// Under the quantized numerics a product's activations are rounded as the
// lane's q8 or q8x2 formats hold them (XQ, HQ: 0 f32, 1 or 2 words), each
// block of 32 values at its own scale. With Q8_0 experts (WQ) the rounded
// activations are held in those formats (a8, a8x2: common.cuh) and a 16-byte
// chunk of a row is four dp4a a word, its integer sum scaled once
// (gemv.cu's q8a8); with f32 experts they are multiplied in f32. Under
// precise (WQ with f32 activations) the staged rows lie in SWZ's order
// (swz4, common.cuh), so a warp's 16-byte shared reads meet no bank
// conflict (bench/NOTES.md run209h: gpt-oss-20b's precise step 7% faster
// on an H100).
//
// Shapes: Wg, Wu (E, FF, D), Wd (E, D, FF) Q8_0 (WQ 1, rows of whole 32-value
// blocks) or f32; Wsg, Wsu (FS, D), Wsd (D, FS) in the experts' format;
// bg, bu (E, FF), bd (E, D) f32; x (rows, D) f32; rt (rows, E) f32; gs
// (rows) f32; h (ROWS, K + SH, FF) scratch, f32 or (WQ and HQ) format HQ;
// y (rows, D) f32; rows = n or ROWS.
// Launch: PHASE 0 grid (ceil(FF / 32), K + SH, ROWS), or (ROWS, K + SH,
// ceil(FF / 32)) for stacked rows (RT), block 256, smem 4 D
// (XQ D + align16: XQ D bytes, D / 32 scales): block (u, j, t) computes
// units 32u .. 32u + 31 of row t's j-th expert (j >= K: of the shared
// expert's segment j - K), 4 a warp, x staged once in shared memory; a warp
// reads its 8 rows (4 gate, 4 up) together, 16 bytes a lane a row, so that
// many loads are in flight. PHASE 1 grid (ceil(D / 8), ROWS, 1) or (ROWS,
// ceil(D / 8), 1) (RT), block 256,
// smem 4 (K + SH) FF (none under WQ and HQ: h's quants are read where they
// lie, the block's warps sharing them in L1): an output a warp, its kept
// experts' rows and the shared expert's row read together.
//
// Programmatic dependent launch: PHASE 0 stages x before it waits for the
// launch before where that launch did not write it (XEARLY), and the shared
// expert's blocks compute their units then too; PHASE 1 reads the kept
// experts and (EARLY) loads its first round of rows before it waits for
// PHASE 0 (the route that wrote rt finished before PHASE 0 passed its own
// wait).
//
// Parameters: Wg Wu Wd x rt bg bu bd n h y r Wsg Wsu Wsd gs (PHASE 0 reads
// Wg, Wu, x, bg, bu, Wsg, Wsu and writes h; PHASE 1 reads Wd, h, bd, r,
// Wsd, gs and writes y).

constexpr int KS = K + SH;   // h's rows a row of the launch: the kept experts', then the shared expert's segments

// Stacked rows (RT): the row is blockIdx.x, the fastest of the grid's
// indices, so that the blocks of one unit block (PHASE 0) or one block of
// outputs (PHASE 1) run together for every row: their experts' weights come
// from DRAM once a chunk and from L2 for the rows after, not once a row (a
// chunk's rows gathered per expert by the order the blocks run in; each
// row still multiplies its kept experts' rows itself: bench/NOTES.md
// run152, and run153 for a block an expert over its gathered rows, slower).
constexpr bool RT = ROWS > 1;

// PHASE 0's block of 32 units and PHASE 1's block of 8 outputs.
DEV long unit_block()
{
    return RT ? blockIdx.z : blockIdx.x;
}

DEV long out_block()
{
    return RT ? blockIdx.y : blockIdx.x;
}
constexpr long FS = (long)SH * FF;   // the shared expert's hidden width

// Q8_0 experts by activations held quantized: x staged (A8), h (H8).
constexpr bool A8 = WQ && XQ, H8 = WQ && HQ;

// x rounded as `words` int8 words a value at the scale of its warp's 32
// values hold it (lib/quant.c act_quantize).
DEV float act_round(float x, int words)
{
    float amax = warp_max(fabsf(x));
    float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    float u = __fmul_rn(x, id), hi = rintf(u), v = hi;
    if (words == 2)
        v = __fadd_rn(v, __fmul_rn(fminf(fmaxf(rintf(__fmul_rn(__fsub_rn(u, hi), 254.0f)), -127.0f), 127.0f),
                                   1.0f / 254.0f));
    return __fmul_rn(v, d);
}

// Row t's kept experts in expert order (those whose weight in rt, E values,
// is not 0): ids[j] and wts[j] for j < K, ids -1 past the last kept. The
// block reads rt once, a value a thread, then the first warp compacts it
// from shared memory; every thread calls it (it syncs the block).
DEV void kept_experts(const float *rt, int *ids, float *wts)
{
    __shared__ float rs[E];
    int lane = threadIdx.x & 31;
    for (int i = threadIdx.x; i < E; i += blockDim.x)
        rs[i] = rt[i];
    __syncthreads();
    if (threadIdx.x < 32) {
        int n = 0;
        for (int c = 0; c < E && n < K; c += 32) {
            float v = c + lane < E ? rs[c + lane] : 0.0f;
            unsigned m = __ballot_sync(0xffffffffu, v != 0.0f);
            int at = n + __popc(m & ((1u << lane) - 1));
            if (v != 0.0f && at < K) {
                ids[at] = c + lane;
                wts[at] = v;
            }
            n += __popc(m);
        }
        for (int j = n + lane; j < K; j += 32)
            ids[j] = -1;
    }
    __syncthreads();
}

// Row r of a weight of `rows` rows of `cols` values (Q8_0 or f32) . v, summed
// over the warp; every lane gets it.
DEV float row_dot(const void *W, long rows, long cols, long r, const float *v)
{
    int lane = threadIdx.x & 31;
    float acc = 0.0f;
    if (WQ) {
        const i8 *q = (const i8 *)W + r * cols;
        const u16 *s = (const u16 *)((const char *)W + align16(rows * cols)) + r * (cols / 32);
        for (long c = lane * 4; c < cols; c += 128) {
            float f[4], sc = h2f(s[c >> 5]);
            i8f(*(const u32 *)(q + c), f);
            for (int k = 0; k < 4; k++)
                acc = fmaf(f[k] * sc, v[c + k], acc);
        }
    } else {
        const float *f = (const float *)W + r * cols;
        for (long c = lane; c < cols; c += 32)
            acc = fmaf(f[c], v[c], acc);
    }
    return warp_sum(acc);
}

DEV float gated(float g, float u)
{
    if (ACT == 0)
        return silu(g) * u;
    if (ACT == 1)
        return gelu_tanh(g) * u;
    float gc = fminf(g, LIMIT), uc = fminf(fmaxf(u, -LIMIT), LIMIT);
    return (uc + 1.0f) * gc * (1.0f / (1.0f + expf(-ALPHA * gc)));
}

// Q8_0 row r of W (rows of D values) at 16-byte chunk c (values 16c ..
// 16c + 15) . the staged activations' segment there, unscaled: its four
// float4s at x4, x4 + xstep, ... (SWZ); the chunk's scale in *sc.
DEV float chunk_dot(const void *W, long rows, long cols, long r, long c, const float4 *x4, long xstep, float *sc)
{
    const int4 w = *(const int4 *)((const i8 *)W + r * cols + c * 16);
    *sc = h2f(((const u16 *)((const char *)W + align16(rows * cols)))[r * (cols / 32) + (c >> 1)]);
    int wv[4] = {w.x, w.y, w.z, w.w};
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++)
        acc = dot4f((u32)wv[k], x4[k * xstep], acc);
    return acc;
}

// Q8_0 chunk w (16 values) . 16 values of an activation in format W (a8 or
// a8x2) at q (its low words n bytes on), unscaled.
template <int W> DEV float chunk_dot_a8(int4 w, const i8 *q, long n)
{
    float f = (float)dot16(w, *(const int4 *)q);
    if (W == 2)
        f += (float)dot16(w, *(const int4 *)(q + n)) * (1.0f / 254.0f);
    return f;
}

// Rows r0 + i0 .. + 3 of the gate and up weights wg, wu (Q8_0, rows rows
// of D values: an expert's, or a segment of the shared expert's), by x
// staged in format XQ (xq, its D / 32 scales xs): the warp's 8 rows read
// together, 16 bytes a lane a row, each chunk's integer sums scaled once.
// (Two rounds in flight at once measured slower alone: bench/NOTES.md
// run121 for DeepSeek-V2, run130 for Qwen3-Next.)
DEV void up_a8(const i8 *wg, const i8 *wu, long rows, long r0, long i0, const i8 *xq, const float *xs, float *g,
               float *u)
{
    int lane = threadIdx.x & 31;
    float ag[4] = {0.0f, 0.0f, 0.0f, 0.0f}, au[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    const u16 *sg = (const u16 *)(wg + align16(rows * D)), *su = (const u16 *)(wu + align16(rows * D));
#pragma unroll 1
    for (long c = lane; c < D / 16; c += 32) {
        int4 g4[4], u4[4];
        float gs[4], us[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            long r = r0 + i0 + k;
            g4[k] = *(const int4 *)(wg + r * D + c * 16);
            u4[k] = *(const int4 *)(wu + r * D + c * 16);
            gs[k] = h2f(sg[r * (D / 32) + (c >> 1)]);
            us[k] = h2f(su[r * (D / 32) + (c >> 1)]);
        }
        const float xsc = xs[c >> 1];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            ag[k] = fmaf(chunk_dot_a8<XQ>(g4[k], xq + c * 16, D), gs[k] * xsc, ag[k]);
            au[k] = fmaf(chunk_dot_a8<XQ>(u4[k], xq + c * 16, D), us[k] * xsc, au[k]);
        }
    }
#pragma unroll
    for (int k = 0; k < 4; k++) {
        g[k] = warp_sum(ag[k]);
        u[k] = warp_sum(au[k]);
    }
}

// Rows r0 + i0 .. + 3 of the gate and up weights wg, wu (Q8_0, rows rows
// of D values): the warp's 8 rows read together, 16 bytes a lane a row.
DEV void up_q8(const void *wg, const void *wu, long rows, long r0, long i0, const float *xs, float *g, float *u)
{
    int lane = threadIdx.x & 31;
    float ag[4] = {0.0f, 0.0f, 0.0f, 0.0f}, au[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
    for (long c = lane; c < D / 16; c += 32)
#pragma unroll
        for (int k = 0; k < 4; k++) {
            float sg, su;
            float dg = chunk_dot(wg, rows, D, r0 + i0 + k, c, (const float4 *)xs + c, D / 16, &sg);
            float du = chunk_dot(wu, rows, D, r0 + i0 + k, c, (const float4 *)xs + c, D / 16, &su);
            ag[k] = fmaf(dg, sg, ag[k]);
            au[k] = fmaf(du, su, au[k]);
        }
#pragma unroll
    for (int k = 0; k < 4; k++) {
        g[k] = warp_sum(ag[k]);
        u[k] = warp_sum(au[k]);
    }
}

// Units 32 unit_block() + 4 w .. + 3 of rows r0 .. of wg, wu (rows rows:
// an expert's, or the shared expert's), gated into hs (lane 0 of warp w).
DEV void units(const void *wg, const void *wu, long rows, long r0, bool bias, const float *bg, const float *bu,
               const float *xs, float *hs)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    long i0 = unit_block() * 32 + w * 4;
    if (WQ) {   // FF whole 32-value blocks: the warp's four units all exist
        float g[4], u[4];
        if (A8)
            up_a8((const i8 *)wg, (const i8 *)wu, rows, r0, i0, (const i8 *)xs,
                  (const float *)((const char *)xs + align16(XQ * D)), g, u);
        else
            up_q8(wg, wu, rows, r0, i0, xs, g, u);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            long r = r0 + i0 + k;
            if (lane == 0)
                hs[w * 4 + k] = gated(g[k] + (bias ? bg[r] : 0.0f), u[k] + (bias ? bu[r] : 0.0f));
        }
    } else {
        for (int k = 0; k < 4; k++) {
            long i = i0 + k, r = r0 + i;
            if (i >= FF)
                break;
            float g = row_dot(wg, rows, D, r, xs), u = row_dot(wu, rows, D, r, xs);
            if (lane == 0)
                hs[w * 4 + k] = gated(g + (bias ? bg[r] : 0.0f), u + (bias ? bu[r] : 0.0f));
        }
    }
}

// x's 32-value blocks a warp of PHASE 0's 8 stages (blocks w, w + 8, ...).
constexpr int XB = (D + 255) / 256;

// PHASE 0. Under XEARLY (the launch before is not the one that wrote x:
// x was written before it passed its own wait) x is staged before this
// launch waits, and a block of the shared expert's segments, which needs
// no routing, computes its units before it too; what it writes, after.
DEV void up(const Params &p)
{
    extern __shared__ float xs[];
    __shared__ float hs[32];
    __shared__ int ids[K];
    __shared__ float wts[K];
    long t = RT ? blockIdx.x : blockIdx.z;
    int j = blockIdx.y, lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    if (!XEARLY)
        pdl_begin();
    if (t >= rows_of(p.a[8], ROWS))
        return;
    const bool shared = j >= K;   // a segment of the shared expert: no routing, no biases
    const float *x = (const float *)p.a[3] + t * D, *bg = (const float *)p.a[5], *bu = (const float *)p.a[6];
    float xv[XB];   // the warp's blocks of x loaded all at once: one load's latency, not one a block
#pragma unroll
    for (int k = 0; k < XB; k++) {
        long i = w * 32 + k * 256L + lane;
        xv[k] = i < D ? x[i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < XB; k++) {   // whole warps: D whole 32-value blocks when XQ
        long c = w * 32 + k * 256L;
        if (c >= D)
            break;
        float v = xv[k];
        if (A8)
            warp_quant(v, xs, D, c / 32, XQ);
        else if (XQ)
            v = act_round(v, XQ);
        long i = c + lane;
        if (!A8 && i < D)
            xs[WQ ? swz4(i >> 4, (i >> 2) & 3, D) * 4 + (i & 3) : i] = v;   // SWZ under WQ: chunk_dot's reads
    }
    __syncthreads();
    if (shared)   // no routing: before the wait under XEARLY
        units(p.a[12], p.a[13], FS, (long)(j - K) * FF, false, bg, bu, xs, hs);
    if (XEARLY)
        pdl_begin();
    if (!shared) {
        kept_experts((const float *)p.a[4] + t * E, ids, wts);
        const int ex = ids[j];
        if (ex < 0)
            return;   // this row kept fewer experts
        units(p.a[0], p.a[1], (long)E * FF, (long)ex * FF, GB, bg, bu, xs, hs);
    }
    __syncthreads();
    if (w == 0) {
        long i = unit_block() * 32 + lane;
        float v = i < FF ? hs[lane] : 0.0f;
        if (H8)   // FF whole 32-value blocks
            warp_quant(v, p.a[9], (long)ROWS * KS * FF, ((t * KS + j) * FF + i) / 32, HQ);
        else if (HQ)
            v = act_round(v, HQ);
        if (!H8 && i < FF)
            ((float *)p.a[9])[(t * KS + j) * FF + i] = v;
    }
}

// The shared expert's weight in row t's sum: sigmoid(gs[t]) under GSH
// (Qwen3-Next's gated shared expert), else 1.
DEV float shared_gate(const Params &p, long t)
{
    return GSH ? sigmoid(((const float *)p.a[15])[t]) : 1.0f;
}

// One round of a warp's rows at chunk c (16 values) of each: the kept
// experts' rows o (r[j]), then the shared expert's segments of its row o.
struct Round {
    int4 w[KS];
    float s[KS];
};

// The first round before the wait where the registers hold it beside the
// hidden values' loads that follow (two words a value take twice those):
// not for Qwen3-Next's ten kept experts under q8x2, which spilled.
constexpr bool EARLY = KS * (HQ == 2 ? 13 : 9) <= 110;

DEV void down_load(const Params &p, const int *r, long o, long c, Round &x)
{
    const long rows = (long)E * D;
    const i8 *wd = (const i8 *)p.a[2], *wsd = (const i8 *)p.a[14];
    const u16 *sd = (const u16 *)(wd + align16(rows * FF)), *ssd = (const u16 *)(wsd + align16((long)D * FS));
#pragma unroll
    for (int j = 0; j < K; j++) {
        x.w[j] = *(const int4 *)(wd + (long)r[j] * FF + c * 16);
        x.s[j] = h2f(sd[(long)r[j] * (FF / 32) + (c >> 1)]);
    }
#pragma unroll
    for (int s = 0; s < SH; s++) {   // segment s of the shared expert's row o
        long at = (long)s * FF + c * 16;
        x.w[K + s] = *(const int4 *)(wsd + o * FS + at);
        x.s[K + s] = h2f(ssd[o * (FS / 32) + (at >> 5)]);
    }
}

// Output o = 8 out_block() + warp of row t, h in format HQ where it lies
// (the block's warps read the same h: L1 holds it after the first). The
// shared expert's row of Wsd is FS values, its SH segments read beside
// the kept experts' rows, chunk c of each. The kept experts come from the
// route two launches back, which finished before the launch before this
// one passed its wait: so the warp's first round of rows is loaded before
// this launch waits for that one (whose h it reads), under EARLY.
DEV void down_a8(const Params &p, long t, const int *ids, const float *wts, bool live)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    long o = out_block() * 8 + w;
    live = live && o < D;
    const long n = (long)ROWS * KS * FF;
    const i8 *hq = (const i8 *)p.a[9];
    const float *hs = (const float *)((const char *)p.a[9] + align16(n * HQ)), *bd = (const float *)p.a[7];
    int r[K];   // rows of Wd (E D of them, below 2^31); an expert not kept reads expert 0's, unused, so that
                // no load waits on a branch
#pragma unroll
    for (int j = 0; j < K; j++)
        r[j] = max(ids[j], 0) * D + (int)o;
    Round cur;
    if (EARLY && live && lane < FF / 16)
        down_load(p, r, o, lane, cur);
    pdl_begin();
    if (!live)
        return;
    float part[KS];
#pragma unroll
    for (int j = 0; j < KS; j++)
        part[j] = 0.0f;
#pragma unroll 1
    for (long c = lane; c < FF / 16; c += 32) {
        if (c != lane || !EARLY)
            down_load(p, r, o, c, cur);
#pragma unroll
        for (int j = 0; j < KS; j++) {
            long at = (t * KS + j) * FF + c * 16;
            part[j] = fmaf(chunk_dot_a8<HQ>(cur.w[j], hq + at, n), cur.s[j] * hs[at >> 5], part[j]);
        }
    }
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < K; j++)
        if (ids[j] >= 0)
            acc = fmaf(wts[j], warp_sum(part[j]) + (DB ? bd[(long)ids[j] * D + o] : 0.0f), acc);
    if (SH) {
        float sh = 0.0f;
#pragma unroll
        for (int s = 0; s < SH; s++)
            sh += warp_sum(part[K + s]);
        acc = fmaf(shared_gate(p, t), sh, acc);
    }
    if (lane == 0)
        ((float *)p.a[10])[t * D + o] = RES ? ((const float *)p.a[11])[t * D + o] + acc : acc;
}

DEV void down(const Params &p)
{
    extern __shared__ float hsm[];   // row t's KS FF hidden values
    __shared__ int ids[K];
    __shared__ float wts[K];
    long t = RT ? blockIdx.x : blockIdx.y;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    const bool live = t < rows_of(p.a[8], ROWS);
    if (live)   // the route's weights: finished before the launch before passed its wait
        kept_experts((const float *)p.a[4] + t * E, ids, wts);
    if (H8) {
        down_a8(p, t, ids, wts, live);
        return;
    }
    pdl_begin();
    if (!live)
        return;
    const float *h = (const float *)p.a[9] + t * KS * FF, *bd = (const float *)p.a[7];
    if (FF % 4 == 0) {   // 16 bytes a thread, four loads in flight
        const float4 *h4 = (const float4 *)h;
        float4 *s4 = (float4 *)hsm;
#pragma unroll 4
        for (long i = threadIdx.x; i < (long)KS * FF / 4; i += blockDim.x) {
            long j = i / (FF / 4), f = i % (FF / 4);   // SWZ under WQ: each of the KS rows its own
            s4[WQ ? j * (FF / 4) + swz4(f >> 2, f & 3, FF) : i] = h4[i];
        }
    } else {
        for (long i = threadIdx.x; i < (long)KS * FF; i += blockDim.x)
            hsm[i] = h[i];
    }
    __syncthreads();
    long o = out_block() * 8 + w;
    if (o >= D)
        return;
    float acc = 0.0f, sh = 0.0f;
    const float *hsh = hsm + K * FF;   // the shared expert's FS hidden values
    if (WQ) {   // every kept expert's row o, and the shared expert's segments, read together, 16 bytes a lane
        float part[KS];
#pragma unroll
        for (int j = 0; j < KS; j++)
            part[j] = 0.0f;
        for (long c = lane; c < FF / 16; c += 32) {
#pragma unroll
            for (int j = 0; j < K; j++)
                if (ids[j] >= 0) {
                    float sc, dj = chunk_dot(p.a[2], (long)E * D, FF, (long)ids[j] * D + o, c,
                                                   (const float4 *)(hsm + j * FF) + c, FF / 16, &sc);
                    part[j] = fmaf(dj, sc, part[j]);
                }
#pragma unroll
            for (int s = 0; s < SH; s++) {
                float sc, ds = chunk_dot(p.a[14], D, FS, o, s * (FF / 16) + c, (const float4 *)(hsh + s * FF) + c,
                                     FF / 16, &sc);
                part[K + s] = fmaf(ds, sc, part[K + s]);
            }
        }
#pragma unroll
        for (int j = 0; j < K; j++)
            if (ids[j] >= 0)
                acc = fmaf(wts[j], warp_sum(part[j]) + (DB ? bd[(long)ids[j] * D + o] : 0.0f), acc);
#pragma unroll
        for (int s = 0; s < SH; s++)
            sh += warp_sum(part[K + s]);
    } else {
        for (int j = 0; j < K && ids[j] >= 0; j++) {
            long r = (long)ids[j] * D + o;
            float v = row_dot(p.a[2], (long)E * D, FF, r, hsm + j * FF);
            acc = fmaf(wts[j], v + (DB ? bd[r] : 0.0f), acc);
        }
        if (SH)
            sh = row_dot(p.a[14], D, FS, o, hsh);
    }
    if (SH)
        acc = fmaf(shared_gate(p, t), sh, acc);
    if (lane == 0)
        ((float *)p.a[10])[t * D + o] = RES ? ((const float *)p.a[11])[t * D + o] + acc : acc;
}

// Three blocks an SM (80 registers) but for the down product of many kept
// experts (and shared segments), whose rows' loads, all in flight at once, want more registers.
constexpr int MINB = PHASE == 1 && KS > 4 ? 2 : 3;

extern "C" __global__ void __launch_bounds__(256, MINB) moe(const Params p)
{
    KERNEL_OPEN();
    if (PHASE == 0)
        up(p);     // each phase waits after what does not depend on the launch before
    else
        down(p);
}
