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
// Launch: grid ROWS, a block a row, in one of two ways (WARP: E at most
// 256, where it was the faster on the H200; bench/NOTES.md run119-run120):
// WARP: block 32, a warp a row with no barrier: lane l holds c of experts
//   l, l + 32, ... (NW of them) in registers, a bit each for those still
//   in the running and those kept; each of the K picks is the lane's best
//   then the warp's (value, expert); each exponential once (the sum's,
//   kept for s; s apart from c only under BIAS).
// else: block 32 NW, a thread an expert, each exponential once and in
//   parallel; each expert's rank among its warp's by 32 shuffles, the
//   warps' K best not after the K-th of the warps' bests the candidates,
//   the K best candidates by their ranks among the candidates (shared
//   memory); the kept's weights from a list of K; under SOFTK (below) the
//   picks on the logits and only the kept exponentiated.
// Either way the groups' drop is the first warp's.

constexpr int NW = (E + 31) / 32;
constexpr bool WARP = E <= 256;

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

// The block's max (MAX) or sum of v; every thread gets it. red: NW doubles.
template <int MAX>
DEV double block_red(double v, double *red)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    v = MAX ? dwarp_max(v) : dwarp_sum(v);
    __syncthreads();
    if (lane == 0)
        red[w] = v;
    __syncthreads();
    v = lane < NW ? red[lane] : (MAX ? -1.0 / 0.0 : 0.0);
    return MAX ? dwarp_max(v) : dwarp_sum(v);
}

// The best (value, expert) over the warp, lanes without one holding -1:
// the larger value, ties to the lower expert; or (WORST) the smaller, ties
// to the higher.
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

// The first warp keeps in gk (GROUPS flags) the TG best of the groups'
// scores gs, dropping the worst first, ties to the higher group (both in
// shared memory).
DEV void drop_groups(const double *gs, char *gk)
{
    int lane = threadIdx.x & 31;
    for (int g = lane; g < GROUPS; g += 32)
        gk[g] = 1;
    __syncwarp();
    for (int r = 0; r < GROUPS - TG; r++) {
        double v = 0.0;
        int wg = -1;
        for (int g = lane; g < GROUPS; g += 32)
            if (gk[g] && (wg < 0 || gs[g] <= v))
                v = gs[g], wg = g;
        dbest<1>(v, wg);
        if (lane == 0)
            gk[wg] = 0;
        __syncwarp();
    }
}

// The best of c[lo .. lo + n), skipping expert skip, over the warp (ties
// to the lower); -1 where none.
DEV int warp_best_in(const double *c, int lo, int n, int skip, double &v)
{
    int bi = -1;
    v = 0.0;
    for (int i = lo + (threadIdx.x & 31); i < lo + n; i += 32)
        if (i != skip && (bi < 0 || c[i] > v))
            v = c[i], bi = i;
    dbest<0>(v, bi);
    return bi;
}

// The first warp: gk as drop_groups leaves it, the groups' scores from c
// in shared memory (gs GROUPS doubles).
DEV void keep_groups_block(const double *c, double *gs, char *gk)
{
    const int gsz = E / GROUPS;
    for (int g = 0; g < GROUPS; g++) {
        double v, v2;
        int b1 = warp_best_in(c, g * gsz, gsz, -1, v);
        if (BIAS && gsz > 1) {
            warp_best_in(c, g * gsz, gsz, b1, v2);
            v += v2;
        }
        if ((threadIdx.x & 31) == 0)
            gs[g] = v;
    }
    __syncwarp();
    drop_groups(gs, gk);
}


// ---- a warp a row (WARP) ----

// The warp's best c among the experts whose bit is set in the lane's mask
// (and, when g >= 0, in group g of gsz experts); -1 where none.
DEV int best_of(const double *c, u32 mask, int g, int gsz, double &v)
{
    int lane = threadIdx.x & 31, bi = -1;
    v = 0.0;
#pragma unroll
    for (int m = 0; m < NW; m++) {   // ascending experts: the first of equals stays
        int i = lane + 32 * m;
        if ((mask >> m & 1) && (g < 0 || i / gsz == g) && (bi < 0 || c[m] > v))
            v = c[m], bi = i;
    }
    dbest<0>(v, bi);
    return bi;
}

// Clears from mask the experts of the groups drop_groups drops (c as in
// best_of); gs holds GROUPS doubles and gk GROUPS flags of shared memory.
DEV u32 keep_groups_warp(const double *c, u32 mask, double *gs, char *gk)
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
        if (lane == 0)
            gs[g] = v;
    }
    __syncwarp();
    drop_groups(gs, gk);
#pragma unroll
    for (int m = 0; m < NW; m++)
        if (lane + 32 * m < E && !gk[(lane + 32 * m) / gsz])
            mask &= ~(1u << m);
    return mask;
}

// Row t's weights, a lane holding experts lane, lane + 32, ...
DEV void route_warp(const Params &p, long t)
{
    __shared__ double gs[GROUPS];
    __shared__ char gk[GROUPS];
    const float *x = (const float *)p.a[0] + t * E, *b = (const float *)p.a[1];
    int lane = threadIdx.x & 31;
    double c[NW], s[BIAS ? NW : 1], mx = -1.0 / 0.0;   // c: the logits, then s, then s + b
    u32 live = 0, kept = 0;
#pragma unroll
    for (int m = 0; m < NW; m++) {
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
        for (int m = 0; m < NW; m++)
            if (live >> m & 1)
                sum += c[m] = exp(c[m] - mx);
        sum = dwarp_sum(sum);
#pragma unroll
        for (int m = 0; m < NW; m++)
            c[m] /= sum;
    }
#pragma unroll
    for (int m = 0; m < NW; m++) {
        if (SCORE == 1)
            c[m] = 1.0 / (1.0 + exp(-c[m]));
        if (BIAS) {
            s[m] = c[m];
            c[m] += live >> m & 1 ? (double)b[lane + 32 * m] : 0.0;
        }
    }
    if (GROUPS > 1)
        live = keep_groups_warp(c, live, gs, gk);
    for (int j = 0; j < K; j++) {   // the K best left
        double v;
        int bi = best_of(c, live, -1, 1, v);
        if (bi >= 0 && (bi & 31) == lane) {
            live &= ~(1u << (bi >> 5));
            kept |= 1u << (bi >> 5);
        }
    }
    double w[NW], mk = -1.0 / 0.0, ws = 0.0;
#pragma unroll
    for (int m = 0; m < NW; m++) {
        w[m] = kept >> m & 1 ? (BIAS ? s[m] : c[m]) : 0.0;
        if (kept >> m & 1)
            mk = fmax(mk, w[m]);
    }
    if (SCORE == 2)
        mk = dwarp_max(mk);
#pragma unroll
    for (int m = 0; m < NW; m++) {
        if (SCORE == 2)
            w[m] = kept >> m & 1 ? exp(w[m] - mk) : 0.0;
        ws += w[m];
    }
    ws = dwarp_sum(ws);
    if (SCORE == 2) {   // the kept experts' softmax
        double ws2 = 0.0;
#pragma unroll
        for (int m = 0; m < NW; m++)
            ws2 += w[m] /= ws;
        ws = dwarp_sum(ws2);
    }
    float *y = (float *)p.a[3] + t * E;
#pragma unroll
    for (int m = 0; m < NW; m++)
        if (lane + 32 * m < E)
            y[lane + 32 * m] = (float)(w[m] / (NORM ? ws : 1.0) * SCALE);
}

// ---- a thread an expert ----

// Whether (v, i) comes before (u, j) in the order of the picks: the larger
// value, ties to the lower expert.
DEV bool before(double v, int i, double u, int j)
{
    return v > u || (v == u && i < j);
}

// Row t's weights, a thread an expert. The K kept are found by ranks, not
// by K rounds of a warp's best (each a chain of dependent shuffles):
//   1. each live expert counts the live experts of its warp before it (32
//      independent shuffles); the first of each warp is its warp's best;
//   2. L, the K-th of the warps' bests (each warp finds it alone): K
//      experts come before or at L, so an expert after L is not kept;
//   3. the candidates, those of rank below K in their warp and not after
//      L (on random logits a few dozen of NW K), appended to a list;
//   4. each candidate counts the candidates before it: those of rank r
//      below K are kept, the r-th's s in ks;
//   5. the kept weights from ks alone (kw), each exponential once.
// SOFTK (softmax scores, norm, no bias, no groups: Qwen3-Next's): the kept
// weights are exp(x_i - m) / (sum over the kept of exp(x_j - m)), the
// whole softmax's sum cancelling, so the picks are made on the logits
// themselves and only the K kept are exponentiated; the reference's
// division by the whole sum, then by the kept's, rounds differently in the
// last f64 bits. (The picks agree with the reference's wherever its f64
// scores of two different logits differ: two logits within 1e-16 of the
// largest both score exp(0) there, and the lower expert is first; here the
// larger logit is.)
constexpr bool SOFTK = SCORE == 0 && !BIAS && GROUPS == 1 && NORM;

DEV void route_block(const Params &p, long t)
{
    __shared__ double c[GROUPS > 1 ? E : 1], gs[GROUPS], red[NW], wv[NW], cv[NW * K], cs[NW * K], ks[K], kw[K];
    __shared__ char gk[GROUPS];
    __shared__ int wi[NW], ci[NW * K], nc;   // experts (-1: none); nc the candidates
    __shared__ short kr[E];                          // an expert's place among the kept, -1
    const float *x = (const float *)p.a[0] + t * E, *b = (const float *)p.a[1];
    const int i = threadIdx.x, lane = i & 31, w = i >> 5;
    const bool in = i < E;
    double s = in ? (double)x[i] : -1.0 / 0.0;
    if (SCORE == 0 && !SOFTK) {
        double mx = block_red<1>(s, red);
        double e = in ? exp(s - mx) : 0.0;
        s = e / block_red<0>(e, red);
    }
    if (SCORE == 1)
        s = 1.0 / (1.0 + exp(-s));
    double cx = s + (BIAS && in ? (double)b[i] : 0.0);
    bool live = in;
    if (GROUPS > 1) {
        if (in)
            c[i] = cx;
        __syncthreads();
        if (w == 0)
            keep_groups_block(c, gs, gk);
        __syncthreads();
        live = in && gk[i / (E / GROUPS)];
    }
    if (in)
        kr[i] = -1;
    if (i == 0)
        nc = 0;
    // 1. the rank of this expert among its warp's live ones
    const unsigned lm = __ballot_sync(0xffffffffu, live);
    int rank = 0;
#pragma unroll
    for (int o = 0; o < 32; o++) {
        double u = __shfl_sync(0xffffffffu, cx, o);
        rank += (lm >> o & 1) && before(u, w * 32 + o, cx, i);
    }
    if (live && rank == 0)
        wv[w] = cx, wi[w] = i;
    if (lane == 0 && !lm)
        wi[w] = -1;
    __syncthreads();
    // 2. L (li -1 where fewer than K warps have a live expert)
    double lv = 0.0;
    int li = -1;
    if (K <= NW) {
        int u = lane < NW ? wi[lane] : -1, r = 0;
        double uv = lane < NW ? wv[lane] : 0.0;
        for (int m = 0; m < NW; m++)
            r += wi[m] >= 0 && before(wv[m], wi[m], uv, u);
        unsigned at = __ballot_sync(0xffffffffu, u >= 0 && r == K - 1);
        if (at) {
            li = __shfl_sync(0xffffffffu, u, __ffs(at) - 1);
            lv = __shfl_sync(0xffffffffu, uv, __ffs(at) - 1);
        }
    }
    // 3. the candidates
    if (live && rank < K && (li < 0 || !before(lv, li, cx, i))) {
        int j = atomicAdd(&nc, 1);
        cv[j] = cx, cs[j] = s, ci[j] = i;
    }
    __syncthreads();
    // 4. each candidate's rank among them
    const int n = nc, nk = n < K ? n : K;
    for (int j = i; j < n; j += blockDim.x) {
        int e = ci[j], r = 0;
        double v = cv[j];
        for (int m = 0; m < n; m++)
            r += before(cv[m], ci[m], v, e);
        if (r < K)
            kr[e] = (short)r, ks[r] = cs[j];
    }
    __syncthreads();
    // 5. the kept weights: ks's softmax (SOFTK: the logits'; SCORE 2: the
    // kept's scores), or ks itself; then the kept's sum
    if (i < nk) {
        double v = ks[i];
        if (SOFTK || SCORE == 2) {
            double mk = ks[0];
            for (int r = 1; r < nk; r++)
                mk = fmax(mk, ks[r]);
            v = exp(v - mk);
        }
        kw[i] = v;
    }
    __syncthreads();
    double ws = 0.0;
    for (int r = 0; r < nk; r++)
        ws += kw[r];
    double wn = 1.0;   // SCORE 2 and NORM: the normed weights' sum
    if (SCORE == 2 && NORM) {
        wn = 0.0;
        for (int r = 0; r < nk; r++)
            wn += kw[r] / ws;
    }
    if (!in)
        return;
    double wt = kr[i] >= 0 ? kw[kr[i]] : 0.0;
    if (SCORE == 2)
        wt /= ws;
    double d = SCORE == 2 ? wn : NORM ? ws : 1.0;
    ((float *)p.a[3])[t * E + i] = (float)(wt / d * SCALE);
}

extern "C" __global__ void __launch_bounds__(WARP ? 32 : 1024) route(const Params p)
{
    KERNEL_OPEN();
    pdl_begin();
    long t = blockIdx.x;
    if (t >= rows_of(p.a[2], ROWS))
        return;
    if (WARP)
        route_warp(p, t);
    else
        route_block(p, t);
}
