// gemv.cu — products of one activation by checkpoint rows, in up to four
// parts, with the norm that feeds them and their epilogues.
//
//   x'[t]     = NORM ? x[t] / sqrt(mean(x[t]^2) + EPS) * (nw + OFFSET) : x[t]
//               PRE: x[t] is first pr[t] + u[t] / sqrt(mean(u[t]^2) + EPS)
//               * (pw + OFFSET), u the rows read (a sandwich norm's output
//               with its residual: Gemma 2's after attention and after the
//               feed-forward); xo[t] = that x[t] (XR: block 0 writes it
//               for the launches after that read it)
//               XG: x[t, i] * sigmoid(g[t, i]) instead (a gated input:
//               Qwen3-Next's attention output gate), g's value i read at
//               (i / XGW) XGP + XGA + i % XGW of its row of K / XGW XGP
//               (a slice of a wider row read in place)
//   xo[t]     = x'[t] in f32 (NOUT: the norm's value, for launches after
//               this one that read it too; block 0 writes it)
//   a_p[t, o] = W_p[o, :] . Q(x'[t])          Q: the activation in format XQ
//   epilogue, in order:  + b_p[o]                      (bit p of BIAS)
//                        y_0 = act(a_0) * a_1          (GATE: 1 silu, 2 gelu_tanh)
//                        c * tanh(v / c)               (CAP = c > 0, part 0)
//                        sigmoid(gs[t]) * v            (GS, part 0: a gated output,
//                                                       Qwen3-Next's shared expert)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ);  next[t] = argmax_o y_0[t, o]  (ARGMAX)
//
// Shapes: x (rows, K) in format XIN, rows = n or ROWS; xo, pr (rows, K) f32;
// pw (K) (PRE: x f32, K at most 4096 and whole 16-value segments);
// W_p (N_p, K) f32 (WQ 0) or Q8_0 (WQ 1); y_p, r_p (rows, N_p); b_p
// (N_p). Under GATE parts 0 and 1 are the gate and up of one hidden width
// (N_0 = N_1) and y_1 is unused.
// Launch: 256 threads (8 warps); a unit is one output row, or under GATE
// one gate row with its up row; units of the parts lie end to end, in
// groups of 8 WR, warp w of a group owning its units w WR .. + WR; GRID
// blocks take the groups in turn (GRID is what the chip holds at once, or
// the groups when fewer; under ARGMAX every group its own block).
// Activation rows go TR at a time through shared memory in format XQ:
// f32 K floats a row (over Q8_0 weights in SWZ's order: each 16-value
// segment's four float4s K/16 apart); a8 K bytes and K/32 scales; a8x2 2K
// bytes and K/32.
// ARGMAX keeps (value, index) partials in part[2 ..] and a count in part[0];
// the last block reduces them and sets the count back to 0.
// PF (a decode step's product after an attention, one part of Q8_0 rows,
// no norm, gate or arg-max): block b takes groups b PF .. + PF whole, and
// copies their weight rows and scales into shared memory (cp.async) before
// the wait for the launch before, so that they stream in while that launch
// runs; its warps then read them there (GRID = the groups over PF).

constexpr int WARPS = 8;
constexpr int Y_AT = 7, B_AT = 11, R_AT = 15, GS_AT = 21, XO_AT = 22, XG_AT = 23, PW_AT = 24,
              PR_AT = 25;   // y0, b0, r0, gs, xo, xg, pw, pr
#include "parts.cuh"
constexpr int XROW = XQ == 0 ? 4 * K : XQ * K;      // bytes of one staged row's values
constexpr int XS_OFF = TR * XROW;                     // where the staged scales start
constexpr int RED_OFF = XS_OFF + (XQ ? TR * (K / 32) * 4 : 0);
constexpr int RES_OFF = RED_OFF + 32 * 4;
constexpr int FV = K % 4 == 0 ? 4 : 1;                // f32 weights: values a load
constexpr int PF_OFF = (RES_OFF + WARPS * WR * TR * 4 + 15) / 16 * 16;   // PF: the groups' rows
constexpr long PF_ROWS = (long)PF * WARPS * WR;                         // PF: rows a block
constexpr long PF_SC = PF_OFF + PF_ROWS * K;                            // PF: then their scales

// Staging: the activation rows go to shared memory in the compute format
// XQ, every thread loading its 16 values (or 16 quants) at once, so that a
// block's prologue costs a load's latency or two, not one a 32-value block.

// Already quantized in this format: quants and scales copied as they are.
DEV void stage_copy(const void *x, int t0, int nt, char *sm)
{
    const long n = (long)ROWS * K;
    const char *src = (const char *)x;
    const float *xs = (const float *)(src + align16(n * XQ));
    for (int t = 0; t < nt; t++) {
        long row = (long)(t0 + t) * K;
        for (long i = threadIdx.x; i < K / 16; i += blockDim.x) {
            *((int4 *)(sm + (long)t * K) + i) = *((const int4 *)(src + row) + i);
            if (XQ == 2)
                *((int4 *)(sm + (long)(TR + t) * K) + i) = *((const int4 *)(src + n + row) + i);
        }
        for (long i = threadIdx.x; i < K / 32; i += blockDim.x)
            ((float *)(sm + XS_OFF))[(long)t * (K / 32) + i] = xs[row / 32 + i];
    }
}

// 16 values of row base from f32 (or dequantized) x.
// (GATED: times the gates' sigmoids gate16 left in v.)
template <bool GATED = false>
DEV void load16(const void *x, long base, long i0, float *v)
{
    if (XIN == 0) {
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float4 f = *((const float4 *)((const float *)x + base + i0) + j);
            if (GATED)
                v[4 * j] *= f.x, v[4 * j + 1] *= f.y, v[4 * j + 2] *= f.z, v[4 * j + 3] *= f.w;
            else
                v[4 * j] = f.x, v[4 * j + 1] = f.y, v[4 * j + 2] = f.z, v[4 * j + 3] = f.w;
        }
    } else {
#pragma unroll
        for (int j = 0; j < 16; j++)
            v[j] = act_load(x, (long)ROWS * K, base + i0 + j, XIN);
    }
}

// XG: sigmoid of the 16 gate values of row t from i0, into v (a run of
// XGW holds whole segments: one run a segment), for load16 to multiply.
DEV void gate16(const float *g, long t, long i0, float *v)
{
    const float4 *gp = (const float4 *)(g + t * (K / XGW) * XGP + i0 / XGW * XGP + XGA + i0 % XGW);
#pragma unroll
    for (int j = 0; j < 4; j++) {
        float4 u = gp[j];
        v[4 * j] = sigmoid(u.x), v[4 * j + 1] = sigmoid(u.y), v[4 * j + 2] = sigmoid(u.z), v[4 * j + 3] = sigmoid(u.w);
    }
}

DEV float norm_w(const float *nw, long i)
{
    return NW ? nw[i] + OFFSET : 1.0f;
}

// Rows whose width is not whole 16-value segments: a value a thread, f32.
DEV void stage_narrow(const void *x, const float *nw, float *xo, int t0, int nt, char *sm)
{
    float *red = (float *)(sm + RED_OFF);
    for (int t = 0; t < nt; t++) {
        long base = (long)(t0 + t) * K;
        float inv = 1.0f;
        if (NORM) {
            float ss = 0.0f;
            for (long i = threadIdx.x; i < K; i += blockDim.x) {
                float v = act_load(x, (long)ROWS * K, base + i, XIN);
                ss += v * v;
            }
            ss = block_sum(ss, red);
            inv = 1.0f / sqrtf(ss / (float)K + EPS);
        }
        for (long i = threadIdx.x; i < K; i += blockDim.x) {
            float v = act_load(x, (long)ROWS * K, base + i, XIN);
            v = NORM ? v * inv * norm_w(nw, i) : v;
            ((float *)sm)[(long)t * K + i] = v;
            if (NOUT && blockIdx.x == 0)
                xo[base + i] = v;
        }
    }
}

// f32 rows through the norm (and the quantizer when XQ > 0): thread j takes
// values 16j .. 16j + 15; a 32-value block is a pair of lanes. Where a row
// is at most a segment a thread (ONE16), the norm's pass keeps it in
// registers for the quantizer's, one read of the row, not two.
constexpr int ONE16 = K <= 16 * 256;
// Q8_0 weights over f32 activations: staged rows in SWZ's order (swz4,
// common.cuh), no shared-memory bank conflict.
constexpr int SWZ = WQ && XQ == 0;
static_assert(!SWZ || K % 16 == 0, "SWZ: whole 16-value segments");
static_assert(!PRE || (NORM && ONE16 && XIN == 0 && !XG && !NOUT), "PRE: an f32 row of a segment a thread at most");

// PRE: the segment v (the rows read, whose sum of squares is ss) becomes
// the sandwich norm's output plus its residual, written out by block 0
// under XR; returns its own sum of squares.
DEV float sandwich16(const float *pw, const float *pr, float *xo, long base, long i, float ss, float *v)
{
    float inv = 1.0f / sqrtf(ss / (float)K + EPS), s2 = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        float4 r = *((const float4 *)(pr + base + i) + j), w = *((const float4 *)(pw + i) + j);
        v[4 * j] = r.x + v[4 * j] * inv * (w.x + OFFSET);
        v[4 * j + 1] = r.y + v[4 * j + 1] * inv * (w.y + OFFSET);
        v[4 * j + 2] = r.z + v[4 * j + 2] * inv * (w.z + OFFSET);
        v[4 * j + 3] = r.w + v[4 * j + 3] * inv * (w.w + OFFSET);
        if (XR && blockIdx.x == 0)
            *((float4 *)(xo + base + i) + j) = float4{v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]};
    }
#pragma unroll
    for (int j = 0; j < 16; j++)
        s2 += v[j] * v[j];
    return s2;
}

DEV void stage_f32(const Params &p, const void *x, const float *nw, float *xo, const float *g, int t0, int nt,
                   char *sm)
{
    float *red = (float *)(sm + RED_OFF);
    for (int t = 0; t < nt; t++) {
        long base = (long)(t0 + t) * K;
        float inv = 1.0f, v[16];
        if (NORM) {
            float ss = 0.0f;
            for (long i = 16L * threadIdx.x; i < K; i += 16L * blockDim.x) {
                load16(x, base, i, v);
#pragma unroll
                for (int j = 0; j < 16; j++)
                    ss += v[j] * v[j];
            }
            ss = block_sum(ss, red);
            if (PRE) {   // ONE16: the thread's one segment, if any, is in v
                long i = 16L * threadIdx.x;
                ss = i < K ? sandwich16((const float *)p.a[PW_AT], (const float *)p.a[PR_AT], xo, base, i, ss, v)
                           : 0.0f;
                ss = block_sum(ss, red);
            }
            inv = 1.0f / sqrtf(ss / (float)K + EPS);
        }
        // K / 16 segments; whole warps take them so the lanes of a block pair up
        for (long i = 16L * threadIdx.x; i - 16L * (threadIdx.x & 31) < K; i += 16L * blockDim.x) {
            int here = i < K;
            if (here) {
                if (XG) {   // the gates first, their loads apart from the rows': 16 values live, not 32
                    gate16(g, t0 + t, i, v);
                    asm volatile("" ::: "memory");
                    load16<true>(x, base, i, v);
                } else if (!NORM || !ONE16) {   // ONE16: the norm's pass left this segment in v
                    load16(x, base, i, v);
                }
                if (NORM)
#pragma unroll
                    for (int j = 0; j < 16; j++)
                        v[j] *= inv * norm_w(nw, i + j);
                if (NOUT && blockIdx.x == 0)
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        *(float4 *)(xo + base + i + 4 * j) = float4{v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]};
            }
            if (XQ == 0) {
                if (here && SWZ)
#pragma unroll
                    for (int j = 0; j < 4; j++)
                        ((float4 *)sm)[(long)t * (K / 4) + swz4(i / 16, j, K)] =
                            float4{v[4 * j], v[4 * j + 1], v[4 * j + 2], v[4 * j + 3]};
                else if (here)
#pragma unroll
                    for (int j = 0; j < 16; j++)
                        ((float *)sm)[(long)t * K + i + j] = v[j];
                continue;
            }
            float amax = 0.0f;
#pragma unroll
            for (int j = 0; j < 16; j++)
                amax = fmaxf(amax, here ? fabsf(v[j]) : 0.0f);
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
            float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
            if (!here)
                continue;
            int4 hi4, lo4;
            i8 *hq = (i8 *)&hi4, *lq = (i8 *)&lo4;
#pragma unroll
            for (int j = 0; j < 16; j++) {
                float u = v[j] * id, h = rintf(u);
                hq[j] = (i8)h;
                lq[j] = (i8)fminf(fmaxf(rintf((u - h) * 254.0f), -127.0f), 127.0f);
            }
            *(int4 *)(sm + (long)t * K + i) = hi4;
            if (XQ == 2)
                *(int4 *)(sm + (long)(TR + t) * K + i) = lo4;
            if (!(i & 31))
                ((float *)(sm + XS_OFF))[(long)t * (K / 32) + i / 32] = d;
        }
    }
}

// Activation rows t0 .. t0 + nt into shared memory: x (p.a[4]) under the
// norm's weight nw (p.a[5]), xo and xg p's own.
DEV void stage(const Params &p, int t0, int nt, char *sm)
{
    const void *x = p.a[4];
    const float *nw = (const float *)p.a[5], *g = (const float *)p.a[XG_AT];
    float *xo = (float *)p.a[XO_AT];
    if (XIN && XIN == XQ)
        stage_copy(x, t0, nt, sm);
    else if (K % 16)
        stage_narrow(x, nw, xo, t0, nt, sm);
    else
        stage_f32(p, x, nw, xo, g, t0, nt, sm);
    __syncthreads();
}

// ---- the products: a warp's rows read together ----
//
// A warp's units give it SLOTS weight rows (a gated unit two). It walks the
// rows' chunks of 16 bytes (16 Q8_0 quants, or 4 f32 values) a lane at a
// time, U chunks a round: every slot's chunks of a round are loaded before
// any is used. Under DB the next round's (the next group's first, at a
// group's last) are loaded before this round's are used, so that between
// SLOTS x U and twice that many loads of 16 bytes a lane are always in
// flight (two blocks of 8 warps a multiprocessor: 64 to 128 KB), not that
// many and then none; otherwise the next group's first round is loaded
// before the group's sums and epilogue. The first round's are issued before
// the wait for the launch before (programmatic dependent launch), since the
// weights do not depend on it.

constexpr int SLOTS = WR * (GATED ? 2 : 1);
// 16-byte loads a lane loads a round: eight with quantized activations
// (four under ARGMAX, and where a row wider than 8192 values is quantized
// while the first round waits in registers: eight spill there); eight
// with f32 weights (a router's few rows, each 4 K bytes: a row a warp
// walks in few rounds, each a memory latency, with so few blocks that
// nothing else hides them)
constexpr int INFLIGHT = !WQ ? 8 : XQ && !ARGMAX && (XIN == XQ || K <= 8192) ? 8 : 4;
constexpr int CV = WQ ? 16 : FV;                       // values a chunk
constexpr int KC = K / CV;                             // chunks a row
// Two rounds' loads in registers (DB: one activation row a pass), or one.
// Rows not whole rounds of 32 chunks (K 896, 2304, 2880) take DB where
// they are longer than one round and not a gated pair over a8x2 (its
// registers spill), every lane walking the same rounds, a lane past the
// row's end in its last round loading nothing (bench/NOTES.md run212h:
// Gemma-2-2B's LM head alone from 62% of the read ceiling to 85%).
constexpr int WHOLE = KC % 32 == 0;
constexpr int DB = TR == 1 && (WHOLE || (KC > 32 && !(GATED && XQ == 2)));
// Chunks a round, per slot: INFLIGHT / SLOTS, or under DB the most up to
// that which divides LC, the most chunks of a row a lane has (no partial
// round); where rows are not whole rounds of 32 chunks and that is under
// half of INFLIGHT / SLOTS, that many up to LC, the last round partial.
constexpr int LC = (KC + 31) / 32;
constexpr int pick_u(int u)
{
    return u <= 1 || LC % u == 0 ? u : pick_u(u - 1);
}
constexpr int UW = SLOTS >= INFLIGHT ? 1 : INFLIGHT / SLOTS;
constexpr int U = !DB ? UW : WHOLE || 2 * pick_u(UW) >= UW ? pick_u(UW) : UW < LC ? UW : LC;
constexpr int STEP = 32 * U;                           // chunks a warp walks a round

struct Batch {
    int4 w[SLOTS][U];
    u16 s[SLOTS][U];   // f16 scales, converted where used: a conversion
                       // at the load would wait for it before the next loads
};


// Slot k of a warp whose units are us (valid below n): its part and row.
DEV void slot_at(const Unit *us, int k, int &part, int &row)
{
    const Unit u = us[GATED ? k / 2 : k];
    part = GATED && (k & 1) ? 1 : u.part;
    row = u.row;
}

DEV void load(const Params &p, const Unit *us, int n, int c0, Batch &b)
{
#pragma unroll
    for (int k = 0; k < SLOTS; k++) {
        int part, row;
        slot_at(us, k, part, row);
        int ok = (GATED ? k / 2 : k) < n && !(GATED && (k & 1) && us[k / 2].part != 0);
        const char *W = part_w(p, part);
#pragma unroll
        for (int u = 0; u < U; u++) {
            int c = c0 + 32 * u;
            b.w[k][u] = make_int4(0, 0, 0, 0);
            b.s[k][u] = 0;
            if (!ok || c >= KC)
                continue;
            if (PF) {   // the block's rows from shared memory
                extern __shared__ __align__(16) char pf[];
                long r = row - (long)blockIdx.x * PF_ROWS;
                b.w[k][u] = *((const int4 *)(pf + PF_OFF + r * K) + c);
                b.s[k][u] = ((const u16 *)(pf + PF_SC))[r * (K / 32) + (c >> 1)];
            } else if (WQ) {
                b.w[k][u] = __ldcs((const int4 *)(W + (long)row * K) + c);
                b.s[k][u] = ((const u16 *)(W + align16(rows_in(part) * K)))[(long)row * (K / 32) + (c >> 1)];
            } else if (CV == 4) {
                b.w[k][u] = __ldcs((const int4 *)((const float *)W + (long)row * K) + c);
            } else {
                b.w[k][u].x = ((const int *)W)[(long)row * K + c];
            }
        }
    }
}

// acc[k][t] += the batch's chunks of slot k . staged activation row t.
DEV void use(const Batch &b, int c0, const char *sm, int nt, float (*acc)[TR])
{
#pragma unroll
    for (int u = 0; u < U; u++) {
        int c = c0 + 32 * u;
        if (c >= KC)
            break;
#pragma unroll
        for (int t = 0; t < TR; t++) {
            if (t >= nt)
                break;
            if (XQ) {
                const i8 *xq = (const i8 *)sm + (long)t * K + c * 16;
                int4 xv = *(const int4 *)xq, xl = make_int4(0, 0, 0, 0);
                if (XQ == 2)
                    xl = *(const int4 *)(xq + (long)TR * K);
                float xs = ((const float *)(sm + XS_OFF))[(long)t * (K / 32) + (c >> 1)];
#pragma unroll
                for (int k = 0; k < SLOTS; k++) {
                    const int4 w = b.w[k][u];
                    float f = (float)dot16(w, xv);
                    if (XQ == 2)
                        f += (float)dot16(w, xl) * (1.0f / 254.0f);
                    acc[k][t] += f * h2f(b.s[k][u]) * xs;
                }
                continue;
            }
            if (SWZ) {   // the segment's four float4s K/16 apart
                const float4 *x4 = (const float4 *)sm + (long)t * (K / 4) + c;
                float sum[SLOTS];
#pragma unroll
                for (int k = 0; k < SLOTS; k++)
                    sum[k] = 0.0f;
#pragma unroll
                for (int g = 0; g < 4; g++) {
                    float4 xg = x4[g * (K / 16)];
#pragma unroll
                    for (int k = 0; k < SLOTS; k++)
                        sum[k] = dot4f(((const u32 *)&b.w[k][u])[g], xg, sum[k]);
                }
#pragma unroll
                for (int k = 0; k < SLOTS; k++)
                    acc[k][t] += sum[k] * h2f(b.s[k][u]);
                continue;
            }
            const float *xv = (const float *)sm + (long)t * K + c * CV;
#pragma unroll
            for (int k = 0; k < SLOTS; k++) {
                const float *f = (const float *)&b.w[k][u];
                float sum = 0.0f;
#pragma unroll
                for (int j = 0; j < CV; j++)
                    sum += f[j] * xv[j];
                acc[k][t] += sum;
            }
        }
    }
}


// Quantizes part 0's rows this block holds (whole 32-value blocks) into y_0.
DEV void quant_out(const Params &p, long u0, int t0, int nt, const float *res)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    constexpr int PER = WARPS * WR / 32;   // 32-value blocks a block holds per row
    for (int k = w; k < nt * PER; k += WARPS) {
        int t = k / PER, j = k % PER;
        float v = res[(j * 32 + lane) * TR + t];
        long first = (long)(t0 + t) * N0 + u0 + j * 32;
        warp_quant(v, p.a[7], (long)ROWS * N0, first / 32, OQ);
    }
}

// The block's best (value, index) of part 0 for rows t0 .. t0 + nt, kept in
// part[2 + 2 (t grid + block)]: the value, then the index's bits; after the
// block's first group, the best of it and what the block kept before (the
// same thread wrote that).
DEV void argmax_part(const Params &p, long u0, int t0, int nt, int firstg, const float *res)
{
    float *part = (float *)p.a[20];
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int t = w; t < nt; t += WARPS) {
        float best = NEG_INF;
        int bi = 0x7fffffff;
        for (int k = lane; k < WARPS * WR; k += 32) {
            float v = res[k * TR + t];
            int row = (int)(u0 + k);
            if (row < N0 && (v > best || (v == best && row < bi)))
                best = v, bi = row;
        }
        arg_reduce(best, bi);
        if (lane == 0) {
            long at = 2 + ((long)(t0 + t) * gridDim.x + blockIdx.x) * 2;
            if (!firstg) {
                float kv = part[at];
                int ki = ((const int *)part)[at + 1];
                if (kv > best || (kv == best && ki < bi))
                    best = kv, bi = ki;
            }
            part[at] = best;
            ((int *)part)[at + 1] = bi;
        }
    }
}

// The last block to finish reduces every block's partials into next[t] and
// sets the count back to 0 for the next launch.
DEV void argmax_last(const Params &p, int rows)
{
    float *part = (float *)p.a[20];
    __shared__ int last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        last = atomicAdd((int *)part, 1) == (int)gridDim.x - 1;
    __syncthreads();
    if (!last)
        return;
    __threadfence();
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (int t = w; t < rows; t += WARPS) {
        float best = NEG_INF;
        int bi = 0x7fffffff;
        for (int k = lane; k < (int)gridDim.x; k += 32) {
            long at = 2 + ((long)t * gridDim.x + k) * 2;
            float v = ((volatile float *)part)[at];
            int i = ((volatile int *)part)[at + 1];
            if (v > best || (v == best && i < bi))
                best = v, bi = i;
        }
        arg_reduce(best, bi);
        if (lane == 0)
            ((int *)p.a[19])[t] = bi;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        *(int *)part = 0;
}

// Blocks a multiprocessor is to hold: three, or two where the registers a
// thread needs (two rounds, more than four rows a warp, stacked rows, a
// norm staged while the first weights wait in registers) would spill at
// three. A decode step's LM head with its arg-max over short rows (one to
// two rounds of chunks) or rows not whole rounds, whose warps have the
// fewest loads in flight, holds three all the same (in at most 80 registers, no
// spill), its many groups taken in fewer rounds (bench/NOTES.md run219h:
// Qwen3-0.6B's head alone 67% -> 80% of the read ceiling, its step 3%
// faster; longer whole rows' heads, at 93% with two, gained nothing),
// but not over a8x2 rows not whole rounds, which spill.
constexpr int HEAD3 = ARGMAX && DB && (KC <= 64 || !WHOLE) && !(XQ == 2 && !WHOLE);
constexpr int MINB = HEAD3 ? 3 : DB || SLOTS > 4 || TR > 1 || NORM ? 2 : 3;

// Warp w's units of the group that starts at unit u0, and how many of them
// there are.
DEV int units_at(long u0, Unit *units)
{
    long first = u0 + (long)(threadIdx.x >> 5) * WR;
#pragma unroll
    for (int k = 0; k < WR; k++)
        units[k] = unit_of(first + k);
    return UNITS - first < WR ? (UNITS - first > 0 ? (int)(UNITS - first) : 0) : WR;
}

// One group of units (8 WR of them, from u0) over activation rows t0 ..
// t0 + nt, its first round already in cur when loaded is set; under DB it
// is, and at its last round the group loads the first round of the group
// that starts at unit n0 (none when n0 < 0) into cur for the next call.
// firstg: the block's first group.
DEV void group(const Params &p, long u0, int t0, int nt, int firstg, int loaded, long n0, Batch &cur, const char *sm,
                float *res)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    long first = u0 + (long)w * WR;
    Unit units[WR];
    int nu = units_at(u0, units);
    float acc[SLOTS][TR];
#pragma unroll
    for (int k = 0; k < SLOTS; k++)
#pragma unroll
        for (int t = 0; t < TR; t++)
            acc[k][t] = 0.0f;
    // the rounds: r0 the lane's first chunk of each (WHOLE), or the round's
    // first, every lane the same rounds, some past the row's end in its last
    // (whole rows keep the lane's form: by rounds, the gated pairs over
    // a8x2 spill)
    for (int r0 = WHOLE ? lane : 0; r0 < KC; r0 += STEP) {
        int c0 = WHOLE ? r0 : r0 + lane;
        if (!DB) {
            if (c0 != lane || !loaded)
                load(p, units, nu, c0, cur);
            use(cur, c0, sm, nt, acc);
            continue;
        }
        Batch nxt;
        if (r0 + STEP < KC) {
            load(p, units, nu, c0 + STEP, nxt);
        } else if (n0 >= 0) {
            Unit next[WR];
            int nn = units_at(n0, next);
            load(p, next, nn, lane, nxt);
        }
        use(cur, c0, sm, nt, acc);
        cur = nxt;
    }
#pragma unroll
    for (int k = 0; k < SLOTS; k++)
#pragma unroll
        for (int t = 0; t < TR; t++)
            acc[k][t] = warp_sum(acc[k][t]);
    if (lane == 0)
#pragma unroll
        for (int k = 0; k < WR; k++)
#pragma unroll
            for (int t = 0; t < TR; t++)
                if (t < nt && first + k < UNITS) {
                    int g = k * (GATED ? 2 : 1);
                    float v = epilogue(p, units[k], t0 + t, acc[g][t], GATED ? acc[g + 1][t] : 0.0f);
                    res[(w * WR + k) * TR + t] = units[k].part == 0 ? v : NEG_INF;
                }
    if (OQ || ARGMAX) {
        for (int k = threadIdx.x; k < WARPS * WR * TR; k += blockDim.x)
            if (u0 + k / TR >= UNITS)
                res[k] = NEG_INF;
        __syncthreads();
        if (OQ)
            quant_out(p, u0, t0, nt, res);
        if (ARGMAX)
            argmax_part(p, u0, t0, nt, firstg, res);
    }
    __syncthreads();
}

// The groups are GROUPS; a block takes groups blockIdx.x, + gridDim.x, ...
// (the grid is at most what the chip holds at once, so every block stays
// to the end and no wave is left half empty), or under PF its own PF in a
// row. With the rows in one stage, the block stages them once for all its
// groups.
constexpr long GROUPS = (UNITS + WARPS * WR - 1) / (WARPS * WR);
static_assert(!PF || (WQ && TR == 1 && ROWS == 1 && PARTS == 1 && !GATED && !ARGMAX && !NORM && !PRE && !XG &&
                      !NOUT && UNITS % (WARPS * WR) == 0),
              "PF: one part of Q8_0 rows, whole groups, one row, no norm, gate, arg-max or prologue");

// PF: the block's rows (a multiple of 8, so that their scales are whole
// 16-byte words at 16-byte places) into shared memory, committed as one
// group of asynchronous copies.
DEV void pf_copy(const Params &p, char *sm)
{
    const char *W = (const char *)p.a[0];
    long r0 = (long)blockIdx.x * PF_ROWS, n = N0 - r0 < PF_ROWS ? N0 - r0 : PF_ROWS;
    const char *q = W + r0 * K, *s = W + align16((long)N0 * K) + r0 * (K / 16);
    u32 dq = smem_addr(sm + PF_OFF), ds = smem_addr(sm + PF_SC);
    for (long i = threadIdx.x; i < n * (K / 16); i += blockDim.x)
        cp16s(dq + 16 * (u32)i, q + 16 * i, 16);
    for (long i = threadIdx.x; i < n * K / 256; i += blockDim.x)   // n K / 16 bytes (n of 8s, K of 32s)
        cp16s(ds + 16 * (u32)i, s + 16 * i, 16);
    cp_commit();
}

// PF: after the wait, the activation row staged and the block's copies
// landed (every thread's), its groups g0 .. ge - 1 from shared memory.
DEV void pf_groups(const Params &p, char *sm, float *res)
{
    const long g0 = (long)blockIdx.x * PF, ge = g0 + PF < GROUPS ? g0 + PF : GROUPS;
    int rows = rows_of(p.a[6], ROWS);
    cp_wait_all();
    if (rows < 1)
        return;
    stage(p, 0, 1, sm);   // its barrier after every thread's copies
    Batch cur;
    Unit units[WR];
    int nu = units_at(g0 * WARPS * WR, units);
    load(p, units, nu, threadIdx.x & 31, cur);
    for (long g = g0; g < ge; g++)
        group(p, g * WARPS * WR, 0, 1, g == g0, DB || g == g0, g + 1 < ge ? (g + 1) * WARPS * WR : -1, cur, sm, res);
}

extern "C" __global__ void __launch_bounds__(256, MINB) gemv(const Params p)
{
    KERNEL_OPEN();
    extern __shared__ __align__(16) char sm[];
    int lane = threadIdx.x & 31;
    float *res = (float *)(sm + RES_OFF);
    Batch cur;
    if (PF) {
        pf_copy(p, sm);
        pdl_begin();
        pf_groups(p, sm, res);
        return;
    }
    {
        Unit units[WR];
        int nu = units_at((long)blockIdx.x * WARPS * WR, units);
        load(p, units, nu, lane, cur);   // before the wait: the weights do not depend on the launch before
    }
    pdl_begin();
    int rows = rows_of(p.a[6], ROWS), once = rows <= TR;
    if (once)
        stage(p, 0, rows, sm);
    for (long g = blockIdx.x; g < GROUPS; g += gridDim.x)
        for (int t0 = 0; t0 < rows; t0 += TR) {
            int nt = rows - t0 < TR ? rows - t0 : TR;
            // the next job: this group's next rows, or the block's next group
            long n0 = t0 + TR < rows ? g * WARPS * WR : g + gridDim.x < GROUPS ? (g + gridDim.x) * WARPS * WR : -1;
            if (!once)
                stage(p, t0, nt, sm);
            group(p, g * WARPS * WR, t0, nt, g == blockIdx.x, DB || (g == blockIdx.x && t0 == 0), n0, cur, sm, res);
        }
    if (ARGMAX)
        argmax_last(p, rows);
}
