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
// Launch: grid ROWS, block 256: a block a row, the row's scores in shared
// memory, each of the K picks the block's best (a warp's, then the warps').

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

// The best (value, index) over a warp, lanes without one holding index -1:
// the larger value, ties to the lower index; or (WORST) the smaller value,
// ties to the higher index.
template <int WORST>
DEV void dbest(double &v, int &i)
{
    for (int o = 16; o > 0; o >>= 1) {
        double ov = __shfl_xor_sync(0xffffffffu, v, o);
        int oi = __shfl_xor_sync(0xffffffffu, i, o);
        bool better = WORST ? (ov < v || (ov == v && oi > i)) : (ov > v || (ov == v && oi < i));
        if (oi >= 0 && (i < 0 || better))
            v = ov, i = oi;
    }
}

// The best c[lo..lo + n) among keep, ties to the lower index; -1 when none.
DEV int best_in(const double *c, const char *keep, int lo, int n, int skip)
{
    int b = -1;
    for (int i = lo; i < lo + n; i++)
        if (keep[i] && i != skip && (b < 0 || c[i] > c[b]))
            b = i;
    return b;
}

// A block's max (MAX 1) or sum of v, in f64; every thread gets it. red holds
// a value a warp.
template <int MAX>
DEV double block_dred(double v, double *red)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = MAX ? dwarp_max(v) : dwarp_sum(v);
    __syncthreads();
    if (lane == 0)
        red[w] = v;
    __syncthreads();
    v = lane < (int)(blockDim.x >> 5) ? red[lane] : (MAX ? -1.0 / 0.0 : 0.0);
    return MAX ? dwarp_max(v) : dwarp_sum(v);
}

extern "C" __global__ void __launch_bounds__(256) route(const Params p)
{
    __shared__ double s[E], c[E];
    __shared__ char keep[E], kept[E];
    __shared__ double gs[GROUPS], red[8], bv[8];
    __shared__ int bx[8];
    pdl_begin();
    long t = blockIdx.x;
    if (t >= rows_of(p.a[2], ROWS))
        return;
    const float *x = (const float *)p.a[0] + t * E, *b = (const float *)p.a[1];
    int tid = threadIdx.x, lane = tid & 31, w = tid >> 5, nt = blockDim.x;
    double mx = -1.0 / 0.0;
    for (int i = tid; i < E; i += nt) {
        double v = x[i];
        s[i] = SCORE == 1 ? 1.0 / (1.0 + exp(-v)) : v;
        mx = fmax(mx, s[i]);
    }
    if (SCORE == 0) {
        mx = block_dred<1>(mx, red);
        double sum = 0;
        for (int i = tid; i < E; i += nt)
            sum += s[i] = exp(s[i] - mx);
        sum = block_dred<0>(sum, red);
        for (int i = tid; i < E; i += nt)
            s[i] /= sum;
    }
    for (int i = tid; i < E; i += nt) {
        c[i] = s[i] + (BIAS ? (double)b[i] : 0.0);
        keep[i] = 1;
        kept[i] = 0;
    }
    __syncthreads();
    if (GROUPS > 1 && w == 0) {   // the first warp drops the groups
        const int gsz = E / GROUPS;
        for (int g = lane; g < GROUPS; g += 32) {
            int b1 = best_in(c, keep, g * gsz, gsz, -1);
            double sc = c[b1];
            if (BIAS && gsz > 1)
                sc += c[best_in(c, keep, g * gsz, gsz, b1)];
            gs[g] = sc;
        }
        __syncwarp();
        for (int r = 0; r < GROUPS - TG; r++) {   // drop the worst, ties to the higher group
            double v = 0;
            int wg = -1;
            for (int g = lane; g < GROUPS; g += 32)
                if (keep[g * gsz] && (wg < 0 || gs[g] <= v))
                    v = gs[g], wg = g;
            dbest<1>(v, wg);
            for (int i = lane; i < gsz; i += 32)
                keep[wg * gsz + i] = 0;
            __syncwarp();
        }
    }
    __syncthreads();
    for (int j = 0; j < K; j++) {   // the K best of the experts left: each warp's, then the block's
        double v = 0;
        int bi = -1;
        for (int i = tid; i < E; i += nt)
            if (keep[i] && (bi < 0 || c[i] > v))
                v = c[i], bi = i;
        dbest<0>(v, bi);
        if (lane == 0) {
            bv[w] = v;
            bx[w] = bi;
        }
        __syncthreads();
        if (w == 0) {
            v = lane < (nt >> 5) ? bv[lane] : 0.0;
            bi = lane < (nt >> 5) ? bx[lane] : -1;
            dbest<0>(v, bi);
            if (lane == 0 && bi >= 0) {
                keep[bi] = 0;
                kept[bi] = 1;
            }
        }
        __syncthreads();
    }
    mx = -1.0 / 0.0;
    for (int i = tid; i < E; i += nt)
        if (kept[i])
            mx = fmax(mx, s[i]);
    mx = block_dred<1>(mx, red);
    double sum = 0;
    for (int i = tid; i < E; i += nt) {
        c[i] = kept[i] ? (SCORE == 2 ? exp(s[i] - mx) : s[i]) : 0.0;
        sum += c[i];
    }
    sum = block_dred<0>(sum, red);
    if (SCORE == 2) {   // the kept experts' softmax
        double sum2 = 0;
        for (int i = tid; i < E; i += nt)
            sum2 += c[i] /= sum;
        sum = block_dred<0>(sum2, red);
    }
    float *y = (float *)p.a[3] + t * E;
    for (int i = tid; i < E; i += nt)
        y[i] = (float)(c[i] / (NORM ? sum : 1.0) * SCALE);
}
