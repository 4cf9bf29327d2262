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
//                        sigmoid(gs[t]) * v            (GS, part 0)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ: 32-value blocks quantized as warp_quant)
//
// Shapes: x (rows, K) in format XIN (f32, a8, a8x2), rows = n or ROWS; the
// activation is quantized to format XQ (1 a8, 2 a8x2) per 32-value block as
// gemv.cu does (XIN = XQ: read as it is); W_p (N_p, K) Q8_0; y_p, r_p
// (rows, N_p); b_p (N_p). K is whole 32-value slabs. Under GATE parts 0 and
// 1 are the gate and up of one hidden width (N_0 = N_1) and y_1 is unused.
// The parameters are gemv's, in its order, less next and part.
// Launch: 256 threads (8 warps, 2 along the rows by 4 along the weight
// rows), grid (rows / BM, units / BU, SK) rounded up (the blocks of one weight
// tile run together, so it comes from the memory once); under SK > 1 the
// stages of K are split over the SK blocks along z, a cluster (1, 1, SK)
// (where the grid alone would leave multiprocessors idle: few rows), and
// the block of rank 0 adds the others' sums through the cluster's shared
// memory before the epilogue; a block owns BM (64 or
// 128) activation rows by WC = 128 weight rows: BU = 128 units (output rows
// of the parts, end to end), or under GATE 64 gate rows and their 64 up
// rows. Warp (wm, wn) computes rows BM/2 wm .. + BM/2 by weight rows 32 wn
// .. + 32 as MT x 4 tiles of 16 x 8 (MT = BM / 32), its fragments read by
// ldmatrix; at BM 64 two blocks share a multiprocessor (where the
// activations come quantized: quantizing f32 in the block needs more than
// 128 registers). K goes KT = 128
// (four slabs) a stage, STAGES stages in flight (3; 2 for a8x2 at BM 64):
// weight rows and quantized activations by cp.async (zero-filled past K;
// rows past the rows or the units read rows that are there), f32
// activations quantized by the block into the stage, the weights' f16
// scales held in registers over the stage's compute and stored after it as
// f32. Each slab's int32 sums come out of the mma with 2^23 + 2^22 added
// in its accumulator (|sum| <= 32 * 127 * 127 < 2^22: the bits of that
// float plus the sum, exactly), and one fma with ws and -(2^23 + 2^22) ws
// gives the sum times ws rounded once (the product exact, ws having 11
// bits); a second fma takes it times the activation's scale into the
// accumulator. Shared memory's bandwidth binds this loop (run92: L1 73%
// busy, issue slots 42%), so each lane's scales come in wide loads: its
// eight weight scales a slab in two of 16 bytes, its two rows' activation
// scales in one of 8.
// Shared memory: STAGES x STAGE bytes, or the BM x (WC + 1) float tile of
// sums the epilogue reads, in the same place, if larger; then BM floats of
// the norm's factors.

constexpr int WC = 128, KT = 128, SLABS = KT / 32, THREADS = 256;
constexpr int Y_AT = 7, B_AT = 11, R_AT = 15, GS_AT = 19;   // y0, b0, r0, gs among the parameters
#include "parts.cuh"
constexpr int STAGES = XQ == 2 && BM == 64 ? 2 : 3;   // two blocks a multiprocessor at BM 64
constexpr int BLOCKS = BM == 64 && XIN == XQ ? 2 : 1;   // blocks a multiprocessor (128 registers)
constexpr int MT = BM / 32;                     // 16-row tiles a warp
// Slabs a pass of compute's loop: as many as 128 registers hold without a
// spill (run93: the 8B's chunk of 512 39.5 -> 36.7 ms at 2 with BM 64; 4
// spills 16-24 bytes, 35.1 ms; BM 128, one block of 8 warps a
// multiprocessor, was slower at 1 and at 2: 37.5 and 39.3 ms).
constexpr int UNROLL = XQ == 2 || BM == 128 ? 1 : 2;
constexpr int BU = GATED ? WC / 2 : WC;
constexpr int PITCH = KT + 16;                  // bytes of a staged row: ldmatrix without bank conflicts
constexpr int A_LO = BM * PITCH;                // the lo words (XQ 2)
constexpr int W_AT = XQ * BM * PITCH;
constexpr int AS_AT = W_AT + WC * PITCH;        // f32 [BM][SLABS]: the activation scales
constexpr int WS_AT = AS_AT + BM * SLABS * 4;   // f32 [SLABS][WC]: the weight scales, in ws_at's order
constexpr int STAGE = WS_AT + WC * SLABS * 4;
constexpr int EP = WC + 1;                      // floats a row of the sums' tile
constexpr int TILE = BM * EP * 4;
constexpr int INV_AT = STAGES * STAGE > TILE ? STAGES * STAGE : TILE;
constexpr int KTILES = (K + KT - 1) / KT;
constexpr int KPER = (KTILES + SK - 1) / SK;    // stages of K a split
static_assert(BM == 64 || BM == 128, "a block takes 64 or 128 rows");

// Copies n (0 or 4) bytes of src to dst, zero-filling to 4.
DEV void cp4(u32 dst, const void *src, int n)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(n) : "memory");
}

DEV void cp_wait()
{
    cp_wait_n<STAGES - 2>();
}

// Where activation row r's scale of slab j lies in a stage's scales:
// slab by slab, and in each 16-row tile rows g and g + 8 side by side, so
// that a lane reads the two its fragments take in one 8-byte load.
DEV int xs_at(int j, int r)
{
    return j * BM + (r & ~15) + (r & 7) * 2 + ((r >> 3) & 1);
}

// Weight row c (0 .. WC) of the block whose first unit is u0: its part and
// row; past the units (or an up row with no gate row) part 0's row 0, whose
// sums nobody reads.
DEV Unit wrow(long u0, int c)
{
    long u = u0 + (GATED ? c % BU : c);
    if (u >= UNITS)
        return Unit{0, 0};
    Unit r = unit_of(u);
    if (GATED && c >= BU)
        r.part = r.part == 0 ? 1 : -1;   // an up row: only beside a gate row
    return r.part < 0 ? Unit{0, 0} : r;
}

// What a thread copies each stage, found once: the first byte of its
// weight chunks (WI of them, rows tid / 8 + 32 i, bytes 16 (tid % 8) .. of
// each stage's KT), its activation chunks (XI, the same places in the
// block's rows), its activation scales (SI: rows (tid + THREADS i) / SLABS,
// slab tid % SLABS) and its two weight scales (row tid / 2, slabs 2 (tid %
// 2) and + 1). A row past the rows reads the last row, a weight row past
// the units part 0's first: their sums land where the epilogue never looks,
// so the copies need no conditions but K's end.
constexpr int WI = WC * (KT / 16) / THREADS, XI = BM * (KT / 16) / THREADS, SI = BM * SLABS / THREADS;
constexpr bool TAIL = K % KT != 0;   // the last stage holds less than KT values of K
struct Feed {
    const char *w[WI], *x[XI];
    const float *xs[SI];
    const u16 *ws;
};

DEV Feed feed_of(const Params &p, long u0, int m0, int rows)
{
    Feed f;
    int tid = threadIdx.x, q = tid % (KT / 16);
#pragma unroll
    for (int i = 0; i < WI; i++) {
        Unit w = wrow(u0, tid / (KT / 16) + i * (THREADS / (KT / 16)));
        f.w[i] = part_w(p, w.part) + (long)w.row * K + q * 16;
    }
    const char *x = (const char *)p.a[4];
    const float *xs = (const float *)(x + align16((long)ROWS * K * XQ));
#pragma unroll
    for (int i = 0; i < XI; i++) {
        int r = min(m0 + tid / (KT / 16) + i * (THREADS / (KT / 16)), rows - 1);
        f.x[i] = x + (long)r * K + q * 16;
    }
#pragma unroll
    for (int i = 0; i < SI; i++) {
        int r = min(m0 + (tid + i * THREADS) / SLABS, rows - 1);
        f.xs[i] = xs + (long)r * (K / 32) + tid % SLABS;
    }
    Unit w = wrow(u0, tid >> 1);
    f.ws = (const u16 *)(part_w(p, w.part) + align16(rows_in(w.part) * K)) + (long)w.row * (K / 32) + (tid & 1) * 2;
    return f;
}

// The weights' f16 scales of stage kt that thread i loads: two slabs of
// weight row i / 2 (one 4-byte load where K is whole stages).
struct Scales {
    u32 s;
};

DEV Scales load_scales(const Feed &f, int kt)
{
    if (!TAIL)
        return Scales{*(const u32 *)(f.ws + (long)kt * SLABS)};
    long b = (long)kt * SLABS + (threadIdx.x & 1) * 2;   // the slab
    u32 lo = 0, hi = 0;
    if (b * 32 < K)
        lo = f.ws[(long)kt * SLABS];
    if ((b + 1) * 32 < K)
        hi = f.ws[(long)kt * SLABS + 1];
    return Scales{lo | hi << 16};
}

// Where weight row c's scale lies among a slab's: the eight columns a
// lane's fragments take (2 t and 2 t + 1 of each of its warp's four
// 8-column tiles) side by side, two 16-byte loads.
DEV int ws_at(int c)
{
    return (c & ~31) + (c >> 1 & 3) * 8 + (c >> 3 & 3) * 2 + (c & 1);
}

DEV void store_scales(char *st, Scales s)
{
    int c = threadIdx.x >> 1, j = (threadIdx.x & 1) * 2;
#pragma unroll
    for (int i = 0; i < 2; i++)
        ((float *)(st + WS_AT))[(j + i) * WC + ws_at(c)] = h2f((u16)(s.s >> 16 * i));
}

// Whether a copy of 16 bytes from value k of K holds any (only the last
// stage can miss, and only where K is not whole stages).
DEV bool in_k(long k)
{
    return !TAIL || k < K;
}

// The stage's weight rows: WC rows of KT / 16 chunks of 16 bytes.
DEV void issue_w(const Feed &f, int kt, u32 st)
{
    int q = threadIdx.x % (KT / 16);
    long k = (long)kt * KT;
    u32 at = st + W_AT + threadIdx.x / (KT / 16) * PITCH + q * 16;
    bool ok = in_k(k + q * 16);
#pragma unroll
    for (int i = 0; i < WI; i++)
        cp16s(at + i * (THREADS / (KT / 16)) * PITCH, ok ? f.w[i] + k : f.w[i], ok ? 16 : 0);
}

// The stage's activation rows, already in format XQ: quants and scales copied.
DEV void issue_x_copy(const Feed &f, int kt, u32 st)
{
    const long n = (long)ROWS * K;
    int q = threadIdx.x % (KT / 16);
    long k = (long)kt * KT;
    u32 at = st + threadIdx.x / (KT / 16) * PITCH + q * 16;
    bool ok = in_k(k + q * 16);
#pragma unroll
    for (int i = 0; i < XI; i++) {
        const char *src = ok ? f.x[i] + k : f.x[i];
        cp16s(at + i * (THREADS / (KT / 16)) * PITCH, src, ok ? 16 : 0);
        if (XQ == 2)
            cp16s(at + A_LO + i * (THREADS / (KT / 16)) * PITCH, src + n, ok ? 16 : 0);
    }
    int j = threadIdx.x % SLABS;
    bool sok = in_k(k + j * 32);
#pragma unroll
    for (int i = 0; i < SI; i++)
        cp4(st + AS_AT + xs_at(j, (threadIdx.x + i * THREADS) / SLABS) * 4,
            sok ? f.xs[i] + (long)kt * SLABS : f.xs[i], sok ? 4 : 0);
}

DEV float norm_w(const float *nw, long i)
{
    return NW ? nw[i] + OFFSET : 1.0f;
}

// The stage's activation rows from format XIN through the norm, quantized
// to XQ by the block: a warp a (row, slab), a value a lane.
DEV void issue_x_quant(const void *x, const float *nw, const float *inv, int m0, int rows, int kt, char *st)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
#pragma unroll 4
    for (int i = w; i < BM * SLABS; i += THREADS / 32) {
        int r = i / SLABS, j = i % SLABS;
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
            ((float *)(st + AS_AT))[xs_at(j, r)] = d;
    }
}

// The norm's factor of each of the block's rows, into inv.
DEV void norm_rows(const void *x, int m0, int rows, float *inv)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int r = w; r < BM; r += THREADS / 32) {
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

DEV void issue(const Params &p, const Feed &f, int m0, int rows, int kt, int k1, char *st, const float *inv)
{
    if (kt < k1) {
        u32 s = smem_addr(st);
        issue_w(f, kt, s);
        if (XIN == XQ)
            issue_x_copy(f, kt, s);
        else
            issue_x_quant(p.a[4], (const float *)p.a[5], inv, m0, rows, kt, st);
    }
    cp_commit();
}

// acc += the stage's slabs: warp (wm, wn)'s MT x 4 tiles of 16 x 8. Lane l
// of a tile holds sums at rows g = l / 4 and g + 8, columns 2 t and 2 t + 1
// (t = l % 4) as the mma's C fragment places them. The slabs unrolled by
// UNROLL, so that a slab's fragments load while the slab before is scaled
// (as far as the registers allow: no spills at these).
DEV void compute(const char *st, int kt, float (*acc)[4][4])
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    int wm = w >> 2, wn = w & 3;
    int arow = wm * (BM / 2) + (lane & 7) + ((lane >> 3) & 1) * 8, acol = (lane >> 4) * 16;
    int brow = wn * 32 + (lane & 7) + (lane >> 4) * 8, bcol = ((lane >> 3) & 1) * 16;
    u32 sa = smem_addr(st) + arow * PITCH + acol, sb = smem_addr(st) + W_AT + brow * PITCH + bcol;
    const float2 *xsp = (const float2 *)(st + AS_AT) + (wm * (BM / 2) + 2 * g) / 2;
    const float4 *wsp = (const float4 *)(st + WS_AT) + (wn * 32 + 8 * t) / 4;
#pragma unroll UNROLL
    for (int j = 0; j < SLABS; j++) {
        if (TAIL && kt * KT + j * 32 >= K)
            break;
        u32 ah[MT][4], al[MT][4], bf[4][2];
        float2 xs[MT];
        float ws[8], mws[8];
#pragma unroll
        for (int m = 0; m < MT; m++) {
            u32 a = sa + m * 16 * PITCH + j * 32;
            ldsm4(ah[m], a);
            if (XQ == 2)
                ldsm4(al[m], a + A_LO);
            xs[m] = xsp[(j * BM + m * 16) / 2];
        }
#pragma unroll
        for (int n = 0; n < 4; n += 2) {
            u32 b4[4];
            ldsm4(b4, sb + n * 8 * PITCH + j * 32);
            bf[n][0] = b4[0], bf[n][1] = b4[1], bf[n + 1][0] = b4[2], bf[n + 1][1] = b4[3];
        }
        float4 w0 = wsp[j * WC / 4], w1 = wsp[j * WC / 4 + 1];
        ws[0] = w0.x, ws[1] = w0.y, ws[2] = w0.z, ws[3] = w0.w, ws[4] = w1.x, ws[5] = w1.y, ws[6] = w1.z, ws[7] = w1.w;
#pragma unroll
        for (int c = 0; c < 8; c++)
            mws[c] = -MAGICF * ws[c];   // exact: ws has 11 bits
#pragma unroll
        for (int m = 0; m < MT; m++)
#pragma unroll
            for (int n = 0; n < 4; n++) {
                int hi[4], lo[4];
                mma_k32(hi, ah[m], bf[n]);
                if (XQ == 2)
                    mma_k32(lo, al[m], bf[n]);
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    // (2^23 + 2^22) ws is exact (ws has 11 bits), so one fma
                    // gives the slab's sum times ws rounded once.
                    float w = ws[n * 2 + (i & 1)], mw = mws[n * 2 + (i & 1)];
                    float u = fmaf(__int_as_float(hi[i]), w, mw);
                    if (XQ == 2)
                        u = fmaf(i2f(lo[i]), w * (1.0f / 254.0f), u);
                    acc[m][n][i] = fmaf(u, i >> 1 ? xs[m].y : xs[m].x, acc[m][n][i]);
                }
            }
    }
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

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS) mma(const Params p)
{
    KERNEL_OPEN();
    static_assert(WC * SLABS == 2 * THREADS, "a thread loads two weight scales a stage");
    extern __shared__ __align__(16) char sm[];
    pdl_wait();
    int rows = rows_of(p.a[6], ROWS), m0 = blockIdx.x * BM;
    if (m0 >= rows)
        return;
    long u0 = (long)blockIdx.y * BU;
    float *inv = (float *)(sm + INV_AT);
    if (NORM) {
        norm_rows(p.a[4], m0, rows, inv);
        __syncthreads();
    }
    // This block's split of K: stages k0 .. k1 (blockIdx.z of SK, a cluster).
    int k0 = SK > 1 ? blockIdx.z * KPER : 0, k1 = SK > 1 ? min(KTILES, k0 + KPER) : KTILES;
    Feed f = feed_of(p, u0, m0, rows);
    for (int s = 0; s < STAGES - 1; s++) {
        issue(p, f, m0, rows, k0 + s, k1, sm + s * STAGE, inv);
        if (k0 + s < k1)
            store_scales(sm + s * STAGE, load_scales(f, k0 + s));
    }
    float acc[MT][4][4];
#pragma unroll
    for (int m = 0; m < MT; m++)
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                acc[m][n][i] = 0.0f;
    for (int kt = k0, rd = 0, wr = STAGES - 1; kt < k1; kt++) {
        cp_wait();
        __syncthreads();
        int nk = kt + STAGES - 1;
        char *next = sm + wr * STAGE;
        issue(p, f, m0, rows, nk, k1, next, inv);
        Scales sc = {0};
        if (nk < k1)
            sc = load_scales(f, nk);
        compute(sm + rd * STAGE, kt, acc);
        if (nk < k1)
            store_scales(next, sc);
        rd = rd + 1 == STAGES ? 0 : rd + 1;
        wr = wr + 1 == STAGES ? 0 : wr + 1;
    }
    // The next launch only now: begun early, its blocks would wait on the
    // multiprocessors beside these for all of K (run95: a 64-row decode
    // batch 17.0 ms a step, 13.0 with no programmatic launch for mma).
    pdl_launch();
    cp_wait_all();
    __syncthreads();
    float *e = (float *)sm;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int m = 0; m < MT; m++)
#pragma unroll
        for (int n = 0; n < 4; n++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                e[((w >> 2) * (BM / 2) + m * 16 + g + (i >> 1) * 8) * EP + (w & 3) * 32 + n * 8 + 2 * t + (i & 1)] =
                    acc[m][n][i];
    __syncthreads();
    if (SK > 1 && !gather_splits(e, BM * EP, SK))
        return;
    finish(p, u0, m0, rows, e);
}
