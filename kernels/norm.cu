// norm.cu — rownorm: a norm over each row's last axis, its weight and a residual:
//
//   u[t] = KIND 0: x[t] / sqrt(mean(x[t]^2) + EPS)    (RMS)
//          KIND 1: x[t] / sqrt(sum(x[t]^2) + EPS)     (L2)
//   y[t] = MODE 0: u[t] * (w + OFFSET)
//          MODE 1: r[t] + u[t] * (w + OFFSET)          (a sandwich norm's residual)
//          MODE 2: u[t] * (w + OFFSET) * silu(r[t])    (the gated RMS norm)
//          MODE 3: r[t] + u[t] * (w + OFFSET), in f32, and then
//                  y2[t] = v[t] / sqrt(mean(v[t]^2) + EPS) * (w2 + OFFSET)
//                  of that sum v (rule norm_pair: Gemma 2's norm after the
//                  attention with its residual, then the norm before the
//                  feed-forward products, in one launch)
//   (w + OFFSET is 1 without a weight, NW 0)
//
// Shapes: x, r (rows, D) f32, rows = n * RPN or ROWS (a per-head norm has
// RPN heads a row of its size); w (D); y (rows, D) in format OQ (0 f32,
// 1 a8, 2 a8x2, 3 a8h: warp_quant's); under MODE 3 (RPN 1, KIND 0) y is
// f32, w2 (D) and y2 (rows, D) in format OQ.
// Launch: grid ROWS, block 256: block t normalizes row t. Where D is whole
// 1024-value rounds, at most 8 (VR), thread i holds values 4 (i + 256 k)
// .. + 3 of the row in registers, read once as 16-byte words, and a 32-value
// block is 8 neighbouring lanes, quantized at once (no loop of a block a
// warp).

constexpr int VR = D % 1024 == 0 && D <= 8192 ? (int)(D / 1024) : 0;   // rounds of 4 values a thread

// The value u (of row t, at i) as y takes it: the weight, the residual.
DEV float out_val(const Params &p, long t, long i, float u)
{
    float v = u * (NW ? ((const float *)p.a[1])[i] + OFFSET : 1.0f);
    return MODE == 1 ? ((const float *)p.a[2])[t * D + i] + v : MODE == 2 ? v * silu(((const float *)p.a[2])[t * D + i]) : v;
}

DEV void rownorm_vec(const Params &p, long t, float *red)
{
    const float4 *x = (const float4 *)((const float *)p.a[0] + t * D);
    float4 v[VR ? VR : 1];
    float ss = 0.0f;
#pragma unroll
    for (int k = 0; k < VR; k++) {
        v[k] = x[threadIdx.x + 256 * k];
        ss += v[k].x * v[k].x + v[k].y * v[k].y + v[k].z * v[k].z + v[k].w * v[k].w;
    }
    ss = block_sum(ss, red);
    float inv = 1.0f / sqrtf(KIND == 0 ? ss / (float)D + EPS : ss + EPS);
    const long n = (long)ROWS * D;
    int lane = threadIdx.x & 31;
#pragma unroll
    for (int k = 0; k < VR; k++) {
        long i = 4L * (threadIdx.x + 256 * k);
        float o[4] = {out_val(p, t, i, v[k].x * inv), out_val(p, t, i + 1, v[k].y * inv),
                      out_val(p, t, i + 2, v[k].z * inv), out_val(p, t, i + 3, v[k].w * inv)};
        if (OQ == 0) {
            ((float4 *)p.a[4])[(t * D + i) / 4] = make_float4(o[0], o[1], o[2], o[3]);
            continue;
        }
        // the 32-value block: 8 lanes (warp_quant's arithmetic)
        float amax = fmaxf(fmaxf(fabsf(o[0]), fabsf(o[1])), fmaxf(fabsf(o[2]), fabsf(o[3])));
        for (int m = 1; m < 8; m <<= 1)
            amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, m));
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        char *q = (char *)p.a[4];
        if (OQ == 3) {   // a8h: each f16(q f16(d)), 8 bytes a lane
            float dh = h2f(f2h(d));
            uint2 h;
            h.x = pack(rintf(o[0] * id) * dh, rintf(o[1] * id) * dh);
            h.y = pack(rintf(o[2] * id) * dh, rintf(o[3] * id) * dh);
            *(uint2 *)(q + 2 * (t * D + i)) = h;
            continue;
        }
        u32 hw = 0, lw = 0;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            float u = o[j] * id, hi = rintf(u);
            hw |= (u32)(u8)(i8)hi << (8 * j);
            if (OQ == 2)
                lw |= (u32)(u8)(i8)fminf(fmaxf(rintf((u - hi) * 254.0f), -127.0f), 127.0f) << (8 * j);
        }
        *(u32 *)(q + t * D + i) = hw;
        if (OQ == 2)
            *(u32 *)(q + n + t * D + i) = lw;
        if (!(lane & 7))
            ((float *)(q + align16(n * OQ)))[(t * D + i) >> 5] = d;
    }
}

// MODE 3: row t's sum v = r + u (w + OFFSET) into y (f32), then its own
// norm times (w2 + OFFSET) into y2 in format OQ. The second norm's sum
// reads v as this thread computed it; block_sum's barriers make the row
// in y whole for the block before any thread reads it back.
DEV void norm_pair(const Params &p, long t, float inv, float *red)
{
    const float *x = (const float *)p.a[0] + t * D, *w = (const float *)p.a[1], *r = (const float *)p.a[2] + t * D;
    const float *w2 = (const float *)p.a[5];
    float *y = (float *)p.a[4] + t * D;
    float ss = 0.0f;
    for (long i = threadIdx.x; i < D; i += blockDim.x) {
        float v = r[i] + x[i] * inv * (NW ? w[i] + OFFSET : 1.0f);
        y[i] = v;
        ss += v * v;
    }
    ss = block_sum(ss, red);
    float inv2 = 1.0f / sqrtf(ss / (float)D + EPS);
    if (OQ == 0) {
        for (long i = threadIdx.x; i < D; i += blockDim.x)
            ((float *)p.a[6])[t * D + i] = y[i] * inv2 * (NW ? w2[i] + OFFSET : 1.0f);
        return;
    }
    int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
    for (long b = wp; b < D / 32; b += blockDim.x >> 5) {
        long i = b * 32 + lane;
        warp_quant(y[i] * inv2 * (NW ? w2[i] + OFFSET : 1.0f), p.a[6], (long)ROWS * D, (t * D + i) >> 5, OQ);
    }
}

extern "C" __global__ void __launch_bounds__(256) rownorm(const Params p)
{
    KERNEL_OPEN();
    __shared__ float red[32];
    pdl_begin();
    long t = blockIdx.x;
    long rows = p.a[3] ? (long)*(const int *)p.a[3] * RPN : ROWS;
    if (t >= rows)
        return;
    if (VR && MODE != 3) {
        rownorm_vec(p, t, red);
        return;
    }
    const float *x = (const float *)p.a[0] + t * D, *w = (const float *)p.a[1];
    const float *r = (const float *)p.a[2] + t * D;
    float ss = 0.0f;
    for (long i = threadIdx.x; i < D; i += blockDim.x)
        ss += x[i] * x[i];
    ss = block_sum(ss, red);
    float inv = 1.0f / sqrtf(KIND == 0 ? ss / (float)D + EPS : ss + EPS);
    if (MODE == 3) {
        norm_pair(p, t, inv, red);
        return;
    }
    if (OQ == 0) {
        for (long i = threadIdx.x; i < D; i += blockDim.x) {
            float v = x[i] * inv * (NW ? w[i] + OFFSET : 1.0f);
            ((float *)p.a[4])[t * D + i] = MODE == 1 ? r[i] + v : MODE == 2 ? v * silu(r[i]) : v;
        }
        return;
    }
    int lane = threadIdx.x & 31, wp = threadIdx.x >> 5;
    for (long b = wp; b < D / 32; b += blockDim.x >> 5) {
        long i = b * 32 + lane;
        float v = x[i] * inv * (NW ? w[i] + OFFSET : 1.0f);
        warp_quant(MODE == 1 ? r[i] + v : MODE == 2 ? v * silu(r[i]) : v, p.a[4], (long)ROWS * D, (t * D + i) >> 5, OQ);
    }
}
