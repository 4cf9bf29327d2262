// mma.cu — products of one activation by Q8_0 checkpoint rows for stacked
// rows, on the tensor cores (mma.sync m16n8k32 int8, s32 accumulate), in up
// to four parts, with the norm that feeds them and their epilogues.
//
//   x'[t]     = NORM ? x[t] / sqrt(mean(x[t]^2) + EPS) * (nw + OFFSET) : x[t]
//   a_p[t, o] = sum over 32-value slabs j of
//               (Wq_p[o, j] . hi(x'[t], j) + Wq_p[o, j] . lo(x'[t], j) / 254)
//               * sW_p[o, j] * sx[t, j]
//               (Wq . hi: an exact int32 sum of 32 int8 products; the lo
//               term only in format XQ 2, a8x2)
//   epilogue, in order:  + b_p[o]                      (bit p of BIAS)
//                        y_0 = act(a_0) * a_1          (GATE: 1 silu, 2 gelu_tanh)
//                        c * tanh(v / c)               (CAP = c > 0, part 0)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ: 32-value blocks quantized as warp_quant)
//
// Shapes: x (rows, K) in format XIN (f32, a8, a8x2), rows = n or ROWS; the
// activation is quantized to format XQ (1 a8, 2 a8x2) per 32-value block as
// gemv.cu does (XIN = XQ: read as it is); W_p (N_p, K) Q8_0; y_p, r_p
// (rows, N_p); b_p (N_p). K is whole 32-value slabs. Under GATE parts 0 and
// 1 are the gate and up of one hidden width (N_0 = N_1) and y_1 is unused.
// The parameters are gemv's, in its order, less next and part.
// Launch: 128 threads (4 warps), grid (units / BU, rows / BM) rounded up; a
// block owns BM = 64 activation rows by WC = 64 weight rows: BU = 64 units
// (output rows of the parts, end to end), or under GATE 32 gate rows and
// their 32 up rows. Warp (wm, wn) computes rows 32 wm .. + 32 by weight rows
// 32 wn .. + 32 as 2 x 4 tiles of 16 x 8. K goes KT = 64 (two slabs) a
// stage, STAGES stages in flight: weight rows and quantized activations by
// cp.async (zero-filled past K, the rows and the units), f32 activations
// quantized by the block into the stage, the weights' f16 scales held in
// registers over the stage's compute and stored after it.
// Shared memory: STAGES x STAGE bytes, then 64 floats of the norm's
// factors; the stages are reused for the 64 x 65 float tile of sums that
// the epilogue reads.

constexpr int BM = 64, WC = 64, KT = 64, STAGES = 3;
constexpr int GATED = GATE ? 1 : 0;
constexpr int BU = GATED ? 32 : 64;
constexpr long UNITS = GATED ? N0 + N2 + N3 : N0 + N1 + N2 + N3;
constexpr int PITCH = KT + 16;                  // bytes of a staged row: no bank conflicts
constexpr int A_LO = BM * PITCH;                // the lo words (XQ 2)
constexpr int W_AT = XQ * BM * PITCH;
constexpr int AS_AT = W_AT + WC * PITCH;        // f32 [BM][2]: the activation scales
constexpr int WS_AT = AS_AT + BM * 2 * 4;       // u16 [WC][2]: the weight scales
constexpr int STAGE = WS_AT + WC * 2 * 2;
constexpr int INV_AT = STAGES * STAGE;
constexpr int KTILES = (K + KT - 1) / KT;
constexpr int EP = WC + 1;                      // floats a row of the sums' tile

struct Unit {
    int part;
    int row;
};

DEV Unit unit_of(long u)
{
    Unit r;
    long n0 = N0, n1 = GATED ? 0 : N1;
    if (u < n0)
        r = Unit{0, (int)u};
    else if (u < n0 + n1)
        r = Unit{1, (int)(u - n0)};
    else if (u < n0 + n1 + N2)
        r = Unit{2, (int)(u - n0 - n1)};
    else
        r = Unit{3, (int)(u - n0 - n1 - N2)};
    return r;
}

DEV long rows_in(int p)
{
    return p == 0 ? N0 : p == 1 ? N1 : p == 2 ? N2 : N3;
}

DEV const char *part_w(const Params &p, int part)
{
    return (const char *)(part == 0 ? p.a[0] : part == 1 ? p.a[1] : part == 2 ? p.a[2] : p.a[3]);
}

DEV u32 smem_addr(const void *p)
{
    u32 r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}

// Copies n (0 .. 16) bytes of src to dst, zero-filling to 16.
DEV void cp16(void *dst, const void *src, int n)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(n) : "memory");
}

// Copies n (0 or 4) bytes of src to dst, zero-filling to 4.
DEV void cp4(void *dst, const void *src, int n)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(n) : "memory");
}

DEV void cp_commit()
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}

DEV void cp_wait()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
}

DEV void cp_wait_all()
{
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

// d = a (16 x 32, row) . b (32 x 8, col), int8 in, int32 out.
DEV void mma_k32(int *d, const u32 *a, const u32 *b)
{
    int z = 0;
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(z), "r"(z), "r"(z), "r"(z));
}

// Weight row c (0 .. WC) of the block whose first unit is u0: its part and
// row, or part -1 past the units.
DEV Unit wrow(long u0, int c)
{
    long u = u0 + (GATED ? c % BU : c);
    if (u >= UNITS)
        return Unit{-1, 0};
    Unit r = unit_of(u);
    if (GATED && c >= BU)
        r.part = r.part == 0 ? 1 : -1;   // an up row: only beside a gate row
    return r;
}

// The weights' f16 scales of stage kt that thread i < WC loads: two slabs'.
struct Scales {
    u16 s[2];
};

DEV Scales load_scales(const Params &p, long u0, int kt)
{
    Scales r = {{0, 0}};
    int c = threadIdx.x, k0 = kt * KT;
    if (c >= WC)
        return r;
    Unit w = wrow(u0, c);
    if (w.part < 0)
        return r;
    const u16 *s = (const u16 *)(part_w(p, w.part) + align16(rows_in(w.part) * K)) + (long)w.row * (K / 32) + k0 / 32;
    r.s[0] = s[0];
    if (k0 + 32 < K)
        r.s[1] = s[1];
    return r;
}

DEV void store_scales(char *st, Scales s)
{
    if (threadIdx.x < WC)
        *(u32 *)(st + WS_AT + threadIdx.x * 4) = (u32)s.s[0] | (u32)s.s[1] << 16;
}

// The stage's weight rows: 64 rows of 4 chunks of 16 bytes.
DEV void issue_w(const Params &p, long u0, int kt, char *st)
{
    for (int i = threadIdx.x; i < WC * 4; i += blockDim.x) {
        int c = i >> 2, q = i & 3;
        long k = (long)kt * KT + q * 16;
        Unit w = wrow(u0, c);
        const char *W = part_w(p, w.part < 0 ? 0 : w.part);
        int ok = w.part >= 0 && k < K;
        cp16(st + W_AT + c * PITCH + q * 16, ok ? W + (long)w.row * K + k : W, ok ? 16 : 0);
    }
}

// The stage's activation rows, already in format XQ: quants and scales copied.
DEV void issue_x_copy(const void *x, int m0, int rows, int kt, char *st)
{
    const long n = (long)ROWS * K;
    const char *src = (const char *)x;
    for (int i = threadIdx.x; i < BM * 4; i += blockDim.x) {
        int r = i >> 2, q = i & 3;
        long k = (long)kt * KT + q * 16, at = (long)(m0 + r) * K + k;
        int ok = m0 + r < rows && k < K;
        cp16(st + r * PITCH + q * 16, ok ? src + at : src, ok ? 16 : 0);
        if (XQ == 2)
            cp16(st + A_LO + r * PITCH + q * 16, ok ? src + n + at : src, ok ? 16 : 0);
    }
    const float *xs = (const float *)(src + align16(n * XQ));
    for (int i = threadIdx.x; i < BM * 2; i += blockDim.x) {
        int r = i >> 1, j = i & 1;
        long k = (long)kt * KT + j * 32;
        int ok = m0 + r < rows && k < K;
        cp4(st + AS_AT + i * 4, ok ? xs + ((long)(m0 + r) * K + k) / 32 : xs, ok ? 4 : 0);
    }
}

DEV float norm_w(const float *nw, long i)
{
    return NW ? nw[i] + OFFSET : 1.0f;
}

// The stage's activation rows from format XIN through the norm, quantized
// to XQ by the block: a warp a (row, slab), a value a lane.
DEV void issue_x_quant(const void *x, const float *nw, const float *inv, int m0, int rows, int kt, char *st)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
#pragma unroll 4
    for (int i = w; i < BM * 2; i += nwarps) {
        int r = i >> 1, j = i & 1;
        long k = (long)kt * KT + j * 32 + lane;
        float v = 0.0f;
        if (m0 + r < rows && k < K) {
            v = act_load(x, (long)ROWS * K, (long)(m0 + r) * K + k, XIN);
            if (NORM)
                v *= inv[r] * norm_w(nw, k);
        }
        float amax = warp_max(fabsf(v));
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        float u = v * id, hi = rintf(u);
        st[r * PITCH + j * 32 + lane] = (char)(i8)hi;
        if (XQ == 2)
            st[A_LO + r * PITCH + j * 32 + lane] = (char)(i8)fminf(fmaxf(rintf((u - hi) * 254.0f), -127.0f), 127.0f);
        if (lane == 0)
            ((float *)(st + AS_AT))[i] = d;
    }
}

// The norm's factor of each of the block's rows, into inv.
DEV void norm_rows(const void *x, int m0, int rows, float *inv)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int r = w; r < BM; r += nwarps) {
        float ss = 0.0f;
        if (m0 + r < rows)
            for (long i = lane; i < K; i += 32) {
                float v = act_load(x, (long)ROWS * K, (long)(m0 + r) * K + i, XIN);
                ss += v * v;
            }
        ss = warp_sum(ss);
        if (lane == 0)
            inv[r] = 1.0f / sqrtf(ss / (float)K + EPS);
    }
}

DEV void issue(const Params &p, long u0, int m0, int rows, int kt, char *st, const float *inv)
{
    if (kt < KTILES) {
        issue_w(p, u0, kt, st);
        if (XIN == XQ)
            issue_x_copy(p.a[4], m0, rows, kt, st);
        else
            issue_x_quant(p.a[4], (const float *)p.a[5], inv, m0, rows, kt, st);
    }
    cp_commit();
}

// acc += the stage's two slabs: warp (wm, wn)'s 2 x 4 tiles of 16 x 8.
DEV void compute(const char *st, int kt, float (*acc)[4][4])
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    int wm = w >> 1, wn = w & 1;
#pragma unroll
    for (int j = 0; j < 2; j++) {
        if (kt * KT + j * 32 >= K)
            break;
        u32 ah[2][4], al[2][4];
        float xs[2][2];
#pragma unroll
        for (int m = 0; m < 2; m++) {
            int r = wm * 32 + m * 16 + g;
            const char *a = st + r * PITCH + j * 32 + 4 * t;
            ah[m][0] = *(const u32 *)a;
            ah[m][1] = *(const u32 *)(a + 8 * PITCH);
            ah[m][2] = *(const u32 *)(a + 16);
            ah[m][3] = *(const u32 *)(a + 8 * PITCH + 16);
            if (XQ == 2) {
                al[m][0] = *(const u32 *)(a + A_LO);
                al[m][1] = *(const u32 *)(a + A_LO + 8 * PITCH);
                al[m][2] = *(const u32 *)(a + A_LO + 16);
                al[m][3] = *(const u32 *)(a + A_LO + 8 * PITCH + 16);
            }
            xs[m][0] = ((const float *)(st + AS_AT))[r * 2 + j];
            xs[m][1] = ((const float *)(st + AS_AT))[(r + 8) * 2 + j];
        }
#pragma unroll
        for (int n = 0; n < 4; n++) {
            int c = wn * 32 + n * 8;
            const char *b = st + W_AT + (c + g) * PITCH + j * 32 + 4 * t;
            u32 bf[2] = {*(const u32 *)b, *(const u32 *)(b + 16)};
            const u16 *ws = (const u16 *)(st + WS_AT);
            float s0 = h2f(ws[(c + 2 * t) * 2 + j]), s1 = h2f(ws[(c + 2 * t + 1) * 2 + j]);
#pragma unroll
            for (int m = 0; m < 2; m++) {
                int hi[4], lo[4];
                mma_k32(hi, ah[m], bf);
                if (XQ == 2)
                    mma_k32(lo, al[m], bf);
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    float f = (float)hi[i];
                    if (XQ == 2)
                        f += (float)lo[i] * (1.0f / 254.0f);
                    acc[m][n][i] += f * (i & 1 ? s1 : s0) * xs[m][i >> 1];
                }
            }
        }
    }
}

// The epilogue of one unit's value v at activation row t (v1: the up
// product under GATE), as gemv.cu's; returns the value.
DEV float epilogue(const Params &p, Unit u, long t, float v, float v1)
{
    int q = u.part;
    const float *b = (const float *)(q == 0 ? p.a[11] : q == 1 ? p.a[12] : q == 2 ? p.a[13] : p.a[14]);
    const float *r = (const float *)(q == 0 ? p.a[15] : q == 1 ? p.a[16] : q == 2 ? p.a[17] : p.a[18]);
    float *y = (float *)(q == 0 ? p.a[7] : q == 1 ? p.a[8] : q == 2 ? p.a[9] : p.a[10]);
    if (BIAS & (1 << q))
        v += b[u.row];
    if (GATED && q == 0) {
        if (BIAS & 2)
            v1 += ((const float *)p.a[12])[u.row];
        v = (GATE == 1 ? silu(v) : gelu_tanh(v)) * v1;
    }
    if (CAP > 0.0f && q == 0)
        v = CAP * tanhf(v / CAP);
    long at = t * rows_in(q) + u.row;
    if (RES & (1 << q))
        v += r[at];
    if (!(OQ && q == 0))
        y[at] = v;
    return v;
}

// The tile's sums through the epilogue: a warp a (row, 32 units), a unit a
// lane; part 0's blocks quantized whole under OQ (N_0 is whole blocks, so a
// block of 32 units from a multiple of 32 lies in one part).
DEV void finish(const Params &p, long u0, int m0, int rows, const float *e)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int i = w; i < BM * (BU / 32); i += nwarps) {
        int r = i / (BU / 32), j = i % (BU / 32);
        long t = m0 + r, u = u0 + j * 32 + lane;
        if (t >= rows || u0 + j * 32 >= UNITS)
            continue;
        int c = j * 32 + lane, ok = u < UNITS;
        Unit un = ok ? unit_of(u) : Unit{3, 0};
        float v = 0.0f;
        if (ok)
            v = epilogue(p, un, t, e[r * EP + c], GATED ? e[r * EP + c + BU] : 0.0f);
        if (OQ && unit_of(u0 + j * 32).part == 0)
            warp_quant(v, p.a[7], (long)ROWS * N0, (t * N0 + u0 + j * 32) / 32, OQ);
    }
}

extern "C" __global__ void __launch_bounds__(128, 1) mma(const Params p)
{
    extern __shared__ __align__(16) char sm[];
    pdl_begin();
    int rows = rows_of(p.a[6], ROWS), m0 = blockIdx.y * BM;
    if (m0 >= rows)
        return;
    long u0 = (long)blockIdx.x * BU;
    float *inv = (float *)(sm + INV_AT);
    if (NORM) {
        norm_rows(p.a[4], m0, rows, inv);
        __syncthreads();
    }
    for (int s = 0; s < STAGES - 1; s++) {
        issue(p, u0, m0, rows, s, sm + s * STAGE, inv);
        if (s < KTILES)
            store_scales(sm + s * STAGE, load_scales(p, u0, s));
    }
    float acc[2][4][4];
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                acc[m][n][i] = 0.0f;
    for (int kt = 0; kt < KTILES; kt++) {
        cp_wait();
        __syncthreads();
        int nk = kt + STAGES - 1;
        char *next = sm + (nk % STAGES) * STAGE;
        issue(p, u0, m0, rows, nk, next, inv);
        Scales sc = {{0, 0}};
        if (nk < KTILES)
            sc = load_scales(p, u0, nk);
        compute(sm + (kt % STAGES) * STAGE, kt, acc);
        if (nk < KTILES)
            store_scales(next, sc);
    }
    cp_wait_all();
    __syncthreads();
    float *e = (float *)sm;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                e[((w >> 1) * 32 + m * 16 + g + (i >> 1) * 8) * EP + (w & 1) * 32 + n * 8 + 2 * t + (i & 1)] =
                    acc[m][n][i];
    __syncthreads();
    finish(p, u0, m0, rows, e);
}
