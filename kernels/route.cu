// route.cu — route: a mixture's routing weights from its router logits, in
// f64 as the CPU reference computes them (lib/ref_ops.c route_row):
//
//   s[i] = SCORE 0: softmax(x)[i]   1: sigmoid(x[i])   2: x[i] (topk_softmax)
//   c[i] = s[i] + b[i]                              (b 0 without BIAS)
//   GROUPS > 1: experts in GROUPS groups of E / GROUPS; a group's score is
//     its best c (with BIAS: its best two summed); all but the TG best groups
//     dropped (the worst first, ties to the higher group)
//   kept = the K best c of the groups left, ties to the lower expert
//   w[i] = s[i] kept, else 0; SCORE 2: the softmax of the kept s
//   y[i] = w[i] / (NORM ? sum of w : 1) * SCALE
//
// Shapes: x (rows, E) f32; b (E) f32; y (rows, E) f32, the unkept experts'
// weights 0; rows = n or ROWS.
// Launch: grid ROWS, block 32: a warp a row, with no barrier but the warp's
// shuffles. Lane l holds c of experts l, l + 32, ... (NV of them) in
// registers, and a bit each for those still in the running and those kept;
// each of the K picks is the lane's best then the warp's (value, expert).
// Each exponential is taken once (the sum's, kept for s); s is kept apart
// from c only under BIAS.

constexpr int NV = (E + 31) / 32;

DEV double dwarp_max(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

DEV double dwarp_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The best (value, expert) over the warp, lanes without one holding -1:
// the larger value, ties to the lower expert.
DEV void dbest(double &v, int &i)
{
    for (int o = 16; o > 0; o >>= 1) {
        double ov = __shfl_xor_sync(0xffffffffu, v, o);
        int oi = __shfl_xor_sync(0xffffffffu, i, o);
        if (oi >= 0 && (i < 0 || ov > v || (ov == v && oi < i)))
            v = ov, i = oi;
    }
}

// The warp's best c among the experts whose bit is set in the lane's mask
// (and, when g >= 0, in group g of gsz experts); -1 where none.
DEV int best_of(const double *c, u32 mask, int g, int gsz, double &v)
{
    int lane = threadIdx.x & 31, bi = -1;
    v = 0.0;
#pragma unroll
    for (int m = 0; m < NV; m++) {   // ascending experts: the first of equals stays
        int i = lane + 32 * m;
        if ((mask >> m & 1) && (g < 0 || i / gsz == g) && (bi < 0 || c[m] > v))
            v = c[m], bi = i;
    }
    dbest(v, bi);
    return bi;
}

// Clears from mask the experts of all but the TG best groups (c as in
// best_of); gs holds GROUPS doubles and gk GROUPS flags of shared memory.
DEV u32 keep_groups(const double *c, u32 mask, double *gs, char *gk)
{
    const int gsz = E / GROUPS;
    int lane = threadIdx.x & 31;
    for (int g = 0; g < GROUPS; g++) {
        double v, v2;
        int b1 = best_of(c, mask, g, gsz, v);
        if (BIAS && gsz > 1) {
            u32 m2 = mask;
            if ((b1 & 31) == lane)
                m2 &= ~(1u << (b1 >> 5));
            best_of(c, m2, g, gsz, v2);
            v += v2;
        }
        if (lane == 0) {
            gs[g] = v;
            gk[g] = 1;
        }
    }
    __syncwarp();
    for (int r = 0; r < GROUPS - TG; r++) {   // drop the worst, ties to the higher group
        int w = -1;
        for (int g = 0; g < GROUPS; g++)
            if (gk[g] && (w < 0 || gs[g] <= gs[w]))
                w = g;
        __syncwarp();
        if (lane == 0)
            gk[w] = 0;
        __syncwarp();
    }
#pragma unroll
    for (int m = 0; m < NV; m++)
        if (lane + 32 * m < E && !gk[(lane + 32 * m) / gsz])
            mask &= ~(1u << m);
    return mask;
}

extern "C" __global__ void __launch_bounds__(32) route(const Params p)
{
    __shared__ double gs[GROUPS];
    __shared__ char gk[GROUPS];
    pdl_begin();
    long t = blockIdx.x;
    if (t >= rows_of(p.a[2], ROWS))
        return;
    const float *x = (const float *)p.a[0] + t * E, *b = (const float *)p.a[1];
    int lane = threadIdx.x & 31;
    double c[NV], s[BIAS ? NV : 1], mx = -1.0 / 0.0;   // c: the logits, then s, then s + b
    u32 live = 0, kept = 0;
#pragma unroll
    for (int m = 0; m < NV; m++) {
        int i = lane + 32 * m;
        c[m] = i < E ? (double)x[i] : 0.0;
        if (i < E) {
            live |= 1u << m;
            mx = fmax(mx, c[m]);
        }
    }
    if (SCORE == 0) {   // each exponential once, all of them in flight together
        mx = dwarp_max(mx);
        double sum = 0.0;
#pragma unroll
        for (int m = 0; m < NV; m++)
            if (live >> m & 1)
                sum += c[m] = exp(c[m] - mx);
        sum = dwarp_sum(sum);
#pragma unroll
        for (int m = 0; m < NV; m++)
            c[m] /= sum;
    }
#pragma unroll
    for (int m = 0; m < NV; m++) {
        if (SCORE == 1)
            c[m] = 1.0 / (1.0 + exp(-c[m]));
        if (BIAS) {
            s[m] = c[m];
            c[m] += live >> m & 1 ? (double)b[lane + 32 * m] : 0.0;
        }
    }
    if (GROUPS > 1)
        live = keep_groups(c, live, gs, gk);
    for (int j = 0; j < K; j++) {   // the K best left
        double v;
        int bi = best_of(c, live, -1, 1, v);
        if (bi >= 0 && (bi & 31) == lane) {
            live &= ~(1u << (bi >> 5));
            kept |= 1u << (bi >> 5);
        }
    }
    double w[NV], mk = -1.0 / 0.0, ws = 0.0;
#pragma unroll
    for (int m = 0; m < NV; m++) {
        w[m] = kept >> m & 1 ? (BIAS ? s[m] : c[m]) : 0.0;
        if (kept >> m & 1)
            mk = fmax(mk, w[m]);
    }
    if (SCORE == 2)
        mk = dwarp_max(mk);
#pragma unroll
    for (int m = 0; m < NV; m++) {
        if (SCORE == 2)
            w[m] = kept >> m & 1 ? exp(w[m] - mk) : 0.0;
        ws += w[m];
    }
    ws = dwarp_sum(ws);
    if (SCORE == 2) {   // the kept experts' softmax
        double ws2 = 0.0;
#pragma unroll
        for (int m = 0; m < NV; m++)
            ws2 += w[m] /= ws;
        ws = dwarp_sum(ws2);
    }
    float *y = (float *)p.a[3] + t * E;
#pragma unroll
    for (int m = 0; m < NV; m++)
        if (lane + 32 * m < E)
            y[lane + 32 * m] = (float)(w[m] / (NORM ? ws : 1.0) * SCALE);
}
