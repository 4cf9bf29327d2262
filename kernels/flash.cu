// flash.cu — causal attention of a prefill chunk's query rows on the tensor
// cores (mma.sync m16n8k16, f16 operands, f32 accumulate), flash style:
// a tile of query rows against tiles of key and value rows, the softmax
// taken online. It computes what attend.cu's MODE 1 does, with f16 operands:
//
//   for row t < rows (n or ROWS) and head h < NH, its key head g = h / GG (GG = NH / NKV):
//     hi = min(pos[t], NCTX), lo = WINDOW and hi > WINDOW ? hi - WINDOW : 0
//     s_j = f16(SCALE q[t, h, :]) . f16(K[j, g, :])   (CAP > 0: CAP tanh(s_j / CAP))    lo <= j < hi
//     m   = max_j s_j
//     y[t, h, :] = sum_j f16(e^(s_j - m)) f16(V[j, g, :]) / (sum_j e^(s_j - m) [+ e^(sinks[h] - m)])
//
// (sums in f32; the f16 operands leave some 1e-4 of relative error, more
// where scores are large, so the lane takes this kernel under q8 only.) Value words that are
// not finite in f16 (NaN, or beyond 65504) are read as 0: a masked key's
// weight is 0, and 0 times a garbage row must stay 0.
//
// Shapes: q (rows, NH, HD) f32 at row stride QS; K (NCTX, NKV, HD) and V
// (NCTX, NKV, VD) f32 (KV 1) or f16 (KV 2); pos (rows) i32; sinks (NH) f32;
// y (rows, NH, VD) in format OQ (0 f32, 1 a8, 2 a8x2: 32-value blocks
// quantized as warp_quant). HD and VD are whole 16-value steps, at most 256.
//
// Rows: a key head g has T GG query rows, row i being (t = i / GG, h = g GG
// + i % GG): the key head's query heads stacked, so that one tile of its
// keys and values serves all of them. Block (b, g) takes rows
// i0 .. i0 + 63 of key head g (i0 = 64 (gridDim.x - 1 - b): the latest
// rows, the most keys, first); warp w its rows i0 + 16 w .. + 15. The block
// walks the key rows [JLO, JHI) (the least lo and the most hi of its rows)
// in tiles of BK (64, or 32 where a head or value row passes 128), each
// staged in shared memory as f16 (keys as rows, values transposed: a column
// a value) after a barrier; a warp none of whose rows sees a tile skips its
// products. For each tile a warp computes, per row r of its 16:
//
//   S[r, c]  = Q[r, :] . Ktile[c, :]          (16 x BK: BK/8 mmas per 16 of HD)
//              capped, then -inf where key j0 + c is outside [lo_r, hi_r)
//   m'       = max(m, max_c S[r, c]);  u = m' or 0 where m' is -inf
//   corr     = e^(m - u)  (0 while m is -inf: nothing was summed yet)
//   P[r, c]  = e^(S[r, c] - u)  (0 at -inf)
//   l        = corr l + sum_c P[r, c];  O[r, :] = corr O[r, :] + f16(P[r, :]) . Vtile
//   m        = m'
//
// and at the end y = O / l (under SINKS: M = max(m, sink), O e^(m - M) /
// (l e^(m - M) + e^(sink - M)); 0 where the denominator is 0: a row with no
// keys). Fragments (PTX ISA, mma.m16n8k16 .f16, row.col; lane = 4 gi + ti):
//   A (16 x 16): a0 = A[gi][2ti, +1], a1 = A[gi + 8][2ti, +1], a2 = A[gi][2ti + 8, +9], a3 = A[gi + 8][2ti + 8, +9]
//   B (16 x 8):  b0 = B[2ti, +1][gi], b1 = B[2ti + 8, +9][gi]
//   C (16 x 8):  c0, c1 = C[gi][2ti, +1], c2, c3 = C[gi + 8][2ti, +1]
// (pairs packed low half first). So a thread holds rows gi and gi + 8 of its
// warp's 16, columns 2ti, 2ti + 1 of each 8-wide tile; a row's maximum and
// sum gather over the 4 lanes of its group (shuffles 1, 2); the scores' C
// fragments of tiles 2k, 2k + 1 are the A fragment of P's k-th 16 keys.
// Launch: grid (ceil(ROWS GG / 64), NKV), block 128 (4 warps). Shared memory:
// Q [64][HD + 8], K [BK][HD + 8], V transposed [VD][BK + 8] halves (the
// pitches keep a fragment's 32 loads on 32 banks); the output is staged
// through the same memory, a warp's 16 rows by 32 values at a time.

constexpr int GG = NH / NKV;                 // query heads a key head
constexpr int BQ = 64;                       // query rows a block, 16 a warp
constexpr int BK = HD > 128 || VD > 128 ? 32 : 64;   // key rows a tile
constexpr int QP = HD + 8;                   // halves a staged query or key row
constexpr int VP = BK + 8;                   // halves a staged value column
constexpr int KSTEPS = HD / 16;              // the scores' 16-value steps
constexpr int SN = BK / 8;                   // the scores' 8-key tiles
constexpr int ON = VD / 8;                   // the output's 8-value tiles
constexpr int K_AT = BQ * QP;                // halves: where the key tile starts
constexpr int V_AT = K_AT + BK * QP;         // and the value tile
constexpr int OP = 33;                       // floats a staged output row
constexpr float L2E = 1.4426950408889634f;   // e^x = 2^(x L2E)

// A value as f16, 0 where it is not finite in f16.
DEV u16 vhalf(float x)
{
    return fabsf(x) <= 65504.0f ? f2h(x) : (u16)0;
}

DEV uint2 make_pair2(u32 a, u32 b)
{
    uint2 r;
    r.x = a, r.y = b;
    return r;
}

DEV u32 ld32(const u16 *s)
{
    return *(const u32 *)s;
}

// Four consecutive values of a cache row at element e (f32, or f16 under KV 2).
DEV float4 load4(const void *base, long e)
{
    if (KV == 2) {
        uint2 h = *(const uint2 *)((const u16 *)base + e);
        return make_float4(h2f((u16)(h.x & 0xffff)), h2f((u16)(h.x >> 16)), h2f((u16)(h.y & 0xffff)),
                           h2f((u16)(h.y >> 16)));
    }
    return *(const float4 *)((const float *)base + e);
}

// A thread's 4-value loads of a tile of keys and of values (128 threads),
// taken RND at a time, a round's loads all issued before its stores, so
// that staging a tile costs a few of L2's latencies, not one a load
// (bench/NOTES.md run164).
constexpr int KL = BK * HD / 4 / 128, VL = BK * VD / 4 / 128, RND = 16;
static_assert(BK * HD % 512 == 0 && BK * VD % 512 == 0, "whole rounds of 128 threads");

// The block's query rows, times SCALE, as f16 (rows past the chunk's: 0).
DEV void stage_q(const Params &p, int g, long i0, long all, u16 *qs)
{
    const float *q = (const float *)p.a[0];
#pragma unroll 4
    for (int e = threadIdx.x; e < BQ * HD / 4; e += 128) {
        int r = e / (HD / 4), d = 4 * (e % (HD / 4));
        long i = i0 + r;
        float v[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        if (i < all) {
            float4 f = *(const float4 *)(q + (i / GG) * QS + (g * GG + i % GG) * HD + d);
            v[0] = f.x, v[1] = f.y, v[2] = f.z, v[3] = f.w;
        }
        *(uint2 *)(qs + r * QP + d) = make_pair2(pack(v[0] * SCALE, v[1] * SCALE), pack(v[2] * SCALE, v[3] * SCALE));
    }
}

// A thread's NL 4-value pieces of a tile of cache rows of width W (of
// head g at src, rows from jhi on read as 0), RND at a time, each round's
// loads issued before its stores: piece e is row where(e).x, values
// where(e).y .. + 3, laid down by put(row, value, v).
template <int NL, int W, typename Where, typename Put>
DEV void stage_rows(const void *src, int g, int j0, int jhi, Where where, Put put)
{
#pragma unroll
    for (int r0 = 0; r0 < NL; r0 += RND) {
        float4 v[RND];
#pragma unroll
        for (int u = 0; u < RND; u++) {
            if (r0 + u >= NL)
                break;
            int2 rd = where(threadIdx.x + 128 * (r0 + u));
            long j = (long)j0 + rd.x;
            v[u] = j < jhi ? load4(src, (j * NKV + g) * W + rd.y) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        }
#pragma unroll
        for (int u = 0; u < RND; u++) {
            if (r0 + u >= NL)
                break;
            int2 rd = where(threadIdx.x + 128 * (r0 + u));
            put(rd.x, rd.y, v[u]);
        }
    }
}

// Key rows j0 .. j0 + BK - 1 of head g as f16 rows, value rows as f16
// columns; rows from jhi on are 0. A warp stages the values of 16 rows by
// 8 values (lanes 0-15 the rows' first four, 16-31 the next four), so that
// its stores down the columns fall on distinct banks.
DEV void stage_kv(const Params &p, int g, int j0, int jhi, u16 *ks, u16 *vt)
{
    stage_rows<KL, HD>(
        p.a[1], g, j0, jhi, [](int e) { return make_int2(e / (HD / 4), 4 * (e % (HD / 4))); },
        [&](int r, int d, float4 v) { *(uint2 *)(ks + r * QP + d) = make_pair2(pack(v.x, v.y), pack(v.z, v.w)); });
    stage_rows<VL, VD>(
        p.a[2], g, j0, jhi,
        [](int e) {   // 16 rows hold 4 VD quads
            int c = e % (4 * VD);
            return make_int2(16 * (e / (4 * VD)) + c % 16, 4 * (c / 16));
        },
        [&](int r, int d, float4 v) {
            vt[d * VP + r] = vhalf(v.x);
            vt[(d + 1) * VP + r] = vhalf(v.y);
            vt[(d + 2) * VP + r] = vhalf(v.z);
            vt[(d + 3) * VP + r] = vhalf(v.w);
        });
}

DEV int warp_min_i(int v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

DEV int warp_max_i(int v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// One tile of keys j0 .. j0 + BK - 1 for the warp's 16 rows (the thread's
// two: lo[k], hi[k], m[k], l[k], and o's columns of them).
DEV void tile(const u16 *qs, const u16 *ks, const u16 *vt, int j0, const int *lo, const int *hi, float *m,
              float *l, float (*o)[4])
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, gi = lane >> 2, ti = lane & 3;
    float s[SN][4];
#pragma unroll
    for (int n = 0; n < SN; n++)
        s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < KSTEPS; kk++) {
        const u16 *qa = qs + (16 * w + gi) * QP + 16 * kk + 2 * ti;
        u32 a[4] = {ld32(qa), ld32(qa + 8 * QP), ld32(qa + 8), ld32(qa + 8 * QP + 8)};
#pragma unroll
        for (int n = 0; n < SN; n++) {
            const u16 *kb = ks + (8 * n + gi) * QP + 16 * kk + 2 * ti;
            u32 b[2] = {ld32(kb), ld32(kb + 8)};
            mma16(s[n], a, b);
        }
    }
    float mx[2] = {NEG_INF, NEG_INF};
#pragma unroll
    for (int n = 0; n < SN; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int k = e >> 1, j = j0 + 8 * n + 2 * ti + (e & 1);
            float x = s[n][e];
            if (CAP > 0.0f)
                x = CAP * tanhf(x / CAP);
            x = j >= lo[k] && j < hi[k] ? x : NEG_INF;
            s[n][e] = x;
            mx[k] = fmaxf(mx[k], x);
        }
    float u[2];
#pragma unroll
    for (int k = 0; k < 2; k++) {
        mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 1));
        mx[k] = fmaxf(mx[k], __shfl_xor_sync(0xffffffffu, mx[k], 2));
        float mn = fmaxf(m[k], mx[k]);
        u[k] = mn == NEG_INF ? 0.0f : mn;
        float corr = exp2f((m[k] - u[k]) * L2E);   // m = -inf: 0
        m[k] = mn;
        l[k] *= corr;
#pragma unroll
        for (int n = 0; n < ON; n++)
            o[n][2 * k] *= corr, o[n][2 * k + 1] *= corr;
    }
#pragma unroll
    for (int n = 0; n < SN; n++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            float pe = exp2f((s[n][e] - u[e >> 1]) * L2E);   // -inf: 0
            s[n][e] = pe;
            l[e >> 1] += pe;
        }
#pragma unroll
    for (int kk = 0; kk < BK / 16; kk++) {
        u32 a[4] = {pack(s[2 * kk][0], s[2 * kk][1]), pack(s[2 * kk][2], s[2 * kk][3]),
                    pack(s[2 * kk + 1][0], s[2 * kk + 1][1]), pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
        for (int n = 0; n < ON; n++) {
            const u16 *vb = vt + (8 * n + gi) * VP + 16 * kk + 2 * ti;
            u32 b[2] = {ld32(vb), ld32(vb + 8)};
            mma16(o[n], a, b);
        }
    }
}

extern "C" __global__ void __launch_bounds__(128) flash(const Params p)
{
    KERNEL_OPEN();
    extern __shared__ __align__(16) u16 sh[];
    __shared__ int span[2][4];
    pdl_begin();
    long all = (long)rows_of(p.a[4], ROWS) * GG;
    int g = blockIdx.y;
    long i0 = (long)(gridDim.x - 1 - blockIdx.x) * BQ;
    if (i0 >= all)
        return;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, gi = lane >> 2, ti = lane & 3;
    const int *pp = (const int *)p.a[3];
    // the thread's two rows (gi and gi + 8 of its warp's) and their keys [lo, hi)
    int lo[2], hi[2];
#pragma unroll
    for (int k = 0; k < 2; k++) {
        long i = i0 + 16 * w + gi + 8 * k;
        int h = i < all ? pp[i / GG] : 0;
        h = h < 0 ? 0 : h > NCTX ? (int)NCTX : h;
        hi[k] = h;
        lo[k] = WINDOW && h > WINDOW ? h - (int)WINDOW : 0;
    }
    // the warp's keys and the block's: [JLO, JHI) over the rows that have any
    int wlo = warp_min_i(min(lo[0] < hi[0] ? lo[0] : 0x7fffffff, lo[1] < hi[1] ? lo[1] : 0x7fffffff));
    int whi = warp_max_i(max(lo[0] < hi[0] ? hi[0] : 0, lo[1] < hi[1] ? hi[1] : 0));
    if (lane == 0)
        span[0][w] = wlo, span[1][w] = whi;
    u16 *qs = sh, *ks = sh + K_AT, *vt = sh + V_AT;
    stage_q(p, g, i0, all, qs);
    __syncthreads();
    int jlo = min(min(span[0][0], span[0][1]), min(span[0][2], span[0][3]));
    int jhi = max(max(span[1][0], span[1][1]), max(span[1][2], span[1][3]));
    float m[2] = {NEG_INF, NEG_INF}, l[2] = {0.0f, 0.0f}, o[ON][4];
#pragma unroll
    for (int n = 0; n < ON; n++)
        o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.0f;
    for (int j0 = jlo; j0 < jhi; j0 += BK) {
        __syncthreads();   // every warp done with the tile before
        stage_kv(p, g, j0, jhi, ks, vt);
        __syncthreads();
        if (j0 >= whi || j0 + BK <= wlo)
            continue;   // none of the warp's rows sees these keys
        tile(qs, ks, vt, j0, lo, hi, m, l, o);
    }
    // each row's factor: its sum over its group's 4 lanes, the sink
    float f[2];
#pragma unroll
    for (int k = 0; k < 2; k++) {
        l[k] += __shfl_xor_sync(0xffffffffu, l[k], 1);
        l[k] += __shfl_xor_sync(0xffffffffu, l[k], 2);
        float scale = 1.0f, denom = l[k];
        long i = i0 + 16 * w + gi + 8 * k;
        if (SINKS && i < all) {
            float sk = ((const float *)p.a[5])[g * GG + i % GG], mm = fmaxf(m[k], sk);
            scale = m[k] == NEG_INF ? 0.0f : expf(m[k] - mm);
            denom = denom * scale + expf(sk - mm);
        }
        f[k] = denom > 0.0f ? scale / denom : 0.0f;
    }
    // the output through shared memory, a warp's 16 rows by 32 values at a
    // time: y (f32) or its 32-value blocks quantized
    __syncthreads();
    float *st = (float *)sh + w * 16 * OP;
#pragma unroll
    for (int b = 0; b < (VD + 31) / 32; b++) {
#pragma unroll
        for (int nn = 0; nn < 4; nn++) {
            int n = 4 * b + nn;
            if (n < ON) {
                st[gi * OP + 8 * nn + 2 * ti] = o[n][0] * f[0];
                st[gi * OP + 8 * nn + 2 * ti + 1] = o[n][1] * f[0];
                st[(gi + 8) * OP + 8 * nn + 2 * ti] = o[n][2] * f[1];
                st[(gi + 8) * OP + 8 * nn + 2 * ti + 1] = o[n][3] * f[1];
            }
        }
        __syncwarp();
        for (int r = 0; r < 16; r++) {
            long i = i0 + 16 * w + r;
            if (i >= all)
                break;
            long at = ((i / GG) * NH + g * GG + i % GG) * (long)VD;
            if (OQ == 0) {
                if (32 * b + lane < VD)
                    ((float *)p.a[6])[at + 32 * b + lane] = st[r * OP + lane];
            } else {
                warp_quant(st[r * OP + lane], p.a[6], (long)ROWS * NH * VD, (at >> 5) + b, OQ);
            }
        }
        __syncwarp();
    }
}
