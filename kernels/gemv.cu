// gemv.cu — products of one activation by checkpoint rows, in up to four
// parts, with the norm that feeds them and their epilogues.
//
//   x'[t]     = NORM ? x[t] / sqrt(mean(x[t]^2) + EPS) * (nw + OFFSET) : x[t]
//   a_p[t, o] = W_p[o, :] . Q(x'[t])          Q: the activation in format XQ
//   epilogue, in order:  + b_p[o]                      (bit p of BIAS)
//                        y_0 = act(a_0) * a_1          (GATE: 1 silu, 2 gelu_tanh)
//                        c * tanh(v / c)               (CAP = c > 0, part 0)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ);  next[t] = argmax_o y_0[t, o]  (ARGMAX)
//
// Shapes: x (rows, K) in format XIN, rows = n or ROWS; W_p (N_p, K) f32 (WQ
// 0) or Q8_0 (WQ 1); y_p, r_p (rows, N_p); b_p (N_p). Under GATE parts 0
// and 1 are the gate and up of one hidden width (N_0 = N_1) and y_1 is
// unused.
// Launch: 256 threads (8 warps); a unit is one output row, or under GATE
// one gate row with its up row; units of the parts lie end to end and warp
// w of block b owns units (8b + w) WR .. + WR; grid = ceil(units / 8 WR).
// Activation rows go TR at a time through shared memory in format XQ:
// f32 K floats a row; a8 K bytes and K/32 scales; a8x2 2K bytes and K/32.
// ARGMAX keeps (value, index) partials in part[2 ..] and a count in part[0];
// the last block reduces them and sets the count back to 0.

constexpr int WARPS = 8;
constexpr int GATED = GATE ? 1 : 0;
constexpr long UNITS = GATED ? N0 + N2 + N3 : N0 + N1 + N2 + N3;
constexpr int XROW = XQ == 0 ? 4 * K : XQ * K;      // bytes of one staged row's values
constexpr int XS_OFF = TR * XROW;                     // where the staged scales start
constexpr int RED_OFF = XS_OFF + (XQ ? TR * (K / 32) * 4 : 0);
constexpr int RES_OFF = RED_OFF + 32 * 4;
constexpr int FV = K % 4 == 0 ? 4 : 1;                // f32 weights: values a load

struct Unit {
    int part;
    long row;
};

DEV Unit unit_of(long u)
{
    Unit r;
    long n0 = N0, n1 = GATED ? 0 : N1;
    if (u < n0)
        r = Unit{0, u};
    else if (u < n0 + n1)
        r = Unit{1, u - n0};
    else if (u < n0 + n1 + N2)
        r = Unit{2, u - n0 - n1};
    else
        r = Unit{3, u - n0 - n1 - N2};
    return r;
}

DEV long rows_in(int p)
{
    return p == 0 ? N0 : p == 1 ? N1 : p == 2 ? N2 : N3;
}

DEV int dp4a(int a, int b, int c)
{
    int d;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

// Stages activation rows t0 .. t0 + nt of x into shared memory in format XQ,
// through the norm when there is one.
DEV void stage(const void *x, const float *nw, int t0, int nt, char *sm)
{
    float *red = (float *)(sm + RED_OFF);
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int t = 0; t < nt; t++) {
        long base = (long)(t0 + t) * K;
        float inv = 1.0f;
        if (NORM) {
            float ss = 0.0f;
            for (int i = threadIdx.x; i < K; i += blockDim.x) {
                float v = ((const float *)x)[base + i];
                ss += v * v;
            }
            ss = block_sum(ss, red);
            inv = 1.0f / sqrtf(ss / (float)K + EPS);
        }
        if (XQ == 0) {
            float *dst = (float *)sm + (long)t * K;
            for (int i = threadIdx.x; i < K; i += blockDim.x) {
                float v = act_load(x, (long)ROWS * K, base + i, XIN);
                dst[i] = NORM ? v * inv * (NW ? nw[i] + OFFSET : 1.0f) : v;
            }
            continue;
        }
        // quantized: warp w takes 32-value blocks w, w + 8, ...
        i8 *q = (i8 *)sm + (long)t * K;
        float *s = (float *)(sm + XS_OFF) + (long)t * (K / 32);
        for (int b = w; b < K / 32; b += WARPS) {
            long i = (long)b * 32 + lane;
            float v = act_load(x, (long)ROWS * K, base + i, XIN);
            if (NORM)
                v = v * inv * (NW ? nw[i] + OFFSET : 1.0f);
            float amax = warp_max(fabsf(v));
            float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
            float u = v * id, hi = rintf(u);
            q[i] = (i8)hi;
            if (XQ == 2)
                q[(long)TR * K + i] = (i8)fminf(fmaxf(rintf((u - hi) * 254.0f), -127.0f), 127.0f);
            if (lane == 0)
                s[b] = d;
        }
    }
    __syncthreads();
}

// acc[t] += W[row] . staged row t, for a Q8_0 weight row and int8 activations.
DEV void dot_q8_int(const i8 *wq, const u16 *ws, const char *sm, int nt, float *acc)
{
    int lane = threadIdx.x & 31;
#pragma unroll 4
    for (int c = lane; c < K / 16; c += 32) {
        int4 w = *(const int4 *)(wq + (long)c * 16);
        float sw = h2f(ws[c >> 1]);
#pragma unroll
        for (int t = 0; t < TR; t++) {
            if (t >= nt)
                break;
            const i8 *xq = (const i8 *)sm + (long)t * K + (long)c * 16;
            int4 xv = *(const int4 *)xq;
            int sum = dp4a(w.x, xv.x, dp4a(w.y, xv.y, dp4a(w.z, xv.z, dp4a(w.w, xv.w, 0))));
            float f = (float)sum;
            if (XQ == 2) {
                int4 xl = *(const int4 *)(xq + (long)TR * K);
                int lo = dp4a(w.x, xl.x, dp4a(w.y, xl.y, dp4a(w.z, xl.z, dp4a(w.w, xl.w, 0))));
                f += (float)lo * (1.0f / 254.0f);
            }
            acc[t] += f * sw * ((const float *)(sm + XS_OFF))[(long)t * (K / 32) + (c >> 1)];
        }
    }
}

// acc[t] += W[row] . staged row t, for f32 activations (Q8_0 or f32 weights).
DEV void dot_f32(const void *wrow, const u16 *ws, const char *sm, int nt, float *acc)
{
    int lane = threadIdx.x & 31;
    if (WQ) {
        const i8 *wq = (const i8 *)wrow;
#pragma unroll 2
        for (int c = lane; c < K / 16; c += 32) {
            int4 w = *(const int4 *)(wq + (long)c * 16);
            float sw = h2f(ws[c >> 1]);
            const i8 *wb = (const i8 *)&w;
#pragma unroll
            for (int t = 0; t < TR; t++) {
                if (t >= nt)
                    break;
                const float *xv = (const float *)sm + (long)t * K + (long)c * 16;
                float s = 0.0f;
#pragma unroll
                for (int j = 0; j < 16; j++)
                    s += (float)wb[j] * xv[j];
                acc[t] += s * sw;
            }
        }
        return;
    }
    const float *wf = (const float *)wrow;
#pragma unroll 2
    for (int c = lane; c < K / FV; c += 32) {
        float w[FV];
        if (FV == 4) {
            float4 v = *(const float4 *)(wf + (long)c * 4);
            w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
        } else {
            w[0] = wf[c];
        }
#pragma unroll
        for (int t = 0; t < TR; t++) {
            if (t >= nt)
                break;
            const float *xv = (const float *)sm + (long)t * K + (long)c * FV;
#pragma unroll
            for (int j = 0; j < FV; j++)
                acc[t] += w[j] * xv[j];
        }
    }
}

DEV void dot(const Params &p, int part, long row, const char *sm, int nt, float *acc)
{
    const char *W = (const char *)p.a[part];
    long n = rows_in(part) * (long)K;
    if (WQ) {
        const i8 *wq = (const i8 *)W + row * K;
        const u16 *ws = (const u16 *)(W + align16(n)) + row * (K / 32);
        if (XQ)
            dot_q8_int(wq, ws, sm, nt, acc);
        else
            dot_f32(wq, ws, sm, nt, acc);
    } else {
        dot_f32((const float *)W + row * K, 0, sm, nt, acc);
    }
}

// The epilogue of one unit's value v at activation row t (v1: the up
// product under GATE); returns part 0's value for OQ and ARGMAX.
DEV float epilogue(const Params &p, Unit u, long t, float v, float v1)
{
    const float *const *b = (const float *const *)&p.a[11];
    const float *const *r = (const float *const *)&p.a[15];
    if (BIAS & (1 << u.part))
        v += b[u.part][u.row];
    if (GATED && u.part == 0) {
        if (BIAS & 2)
            v1 += b[1][u.row];
        v = (GATE == 1 ? silu(v) : gelu_tanh(v)) * v1;
    }
    if (CAP > 0.0f && u.part == 0)
        v = CAP * tanhf(v / CAP);
    long at = t * rows_in(u.part) + u.row;
    if (RES & (1 << u.part))
        v += r[u.part][at];
    if (!(OQ && u.part == 0))
        ((float *)p.a[7 + u.part])[at] = v;
    return v;
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
// part[2 + 2 (t grid + block)]: the value, then the index's bits.
DEV void argmax_part(const Params &p, long u0, int t0, int nt, const float *res)
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

extern "C" __global__ void __launch_bounds__(256) gemv(const Params p)
{
    extern __shared__ __align__(16) char sm[];
    pdl_begin();
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int rows = rows_of(p.a[6], ROWS);
    long u0 = (long)blockIdx.x * WARPS * WR;
    float *res = (float *)(sm + RES_OFF);
    for (int t0 = 0; t0 < rows; t0 += TR) {
        int nt = rows - t0 < TR ? rows - t0 : TR;
        stage((const char *)p.a[4] + 0, (const float *)p.a[5], t0, nt, sm);
        for (int k = 0; k < WR; k++) {
            long uid = u0 + (long)w * WR + k;
            if (uid >= UNITS)
                break;
            Unit u = unit_of(uid);
            float acc[TR], up[TR];
#pragma unroll
            for (int t = 0; t < TR; t++)
                acc[t] = 0.0f, up[t] = 0.0f;
            dot(p, u.part, u.row, sm, nt, acc);
            if (GATED && u.part == 0)
                dot(p, 1, u.row, sm, nt, up);
#pragma unroll
            for (int t = 0; t < TR; t++) {
                acc[t] = warp_sum(acc[t]);
                if (GATED)
                    up[t] = warp_sum(up[t]);
            }
            if (lane == 0)
#pragma unroll
                for (int t = 0; t < TR; t++)
                    if (t < nt) {
                        float v = epilogue(p, u, t0 + t, acc[t], up[t]);
                        res[(w * WR + k) * TR + t] = u.part == 0 ? v : NEG_INF;
                    }
        }
        if (OQ || ARGMAX) {
            for (int k = threadIdx.x; k < WARPS * WR * TR; k += blockDim.x)
                if (u0 + k / TR >= UNITS)
                    res[k] = NEG_INF;
            __syncthreads();
            if (OQ)
                quant_out(p, u0, t0, nt, res);
            if (ARGMAX)
                argmax_part(p, u0, t0, nt, res);
        }
        __syncthreads();
    }
    if (ARGMAX)
        argmax_last(p, rows);
}
