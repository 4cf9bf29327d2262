// mmv.cu — products of one activation by Q8_0 checkpoint rows for a few
// stacked rows (a decode batch), on the tensor cores (mma.sync m16n8k32
// int8, s32 accumulate), in up to four parts, with their epilogues: the
// weights are the mma's 16-row side and the activation rows its 8-column
// side, so 8 rows cost what 1 does and the weights are read once a pass of
// 8 NT rows, where gemv.cu reads them again every 2 to 8 rows.
//
//   a_p[t, o] = sum over 32-value slabs j of
//               (Wq_p[o, j] . hi(x[t], j) + Wq_p[o, j] . lo(x[t], j) / 254)
//               * sW_p[o, j] * sx[t, j]
//               (the lo term only in format XQ 2, a8x2), as mma.cu's
//   epilogue, in order:  + b_p[o]                      (bit p of BIAS)
//                        y_0 = act(a_0) * a_1          (GATE: 1 silu, 2 gelu_tanh)
//                        c * tanh(v / c)               (CAP = c > 0, part 0)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ: 32-value blocks quantized as warp_quant)
//
// Shapes: x (rows, K) already quantized in format XQ (1 a8, 2 a8x2), rows =
// n or ROWS; W_p (N_p, K) Q8_0; y_p, r_p (rows, N_p); b_p (N_p). K is whole
// 32-value slabs. Under GATE parts 0 and 1 are the gate and up of one
// hidden width (N_0 = N_1) and y_1 is unused. No norm prologue: a norm
// before stacked rows runs once, quantizing in its own epilogue.
//
// Launch: grid (GRID, passes = rows / (8 NT) rounded up), 256 threads, a
// block a multiprocessor (some 180-255 registers a thread). A tile is 32
// units (output rows of the parts, end to end): a block's 8 warps are RG groups of weight rows by KS = 8 / RG slices of
// K; RG is 1, or 2 under GATE (16 units a group: their gate rows and their
// up rows). Each warp holds 32 weight rows as two 16-row tiles (under GATE
// the group's 16 gate rows and 16 up rows) by NT tiles of 8 activation
// rows, and walks K 128 values (4 slabs) a step, the steps ks, ks + KS, ...
// Each slab of a tile is one mma, its sums read as mma.cu's: 2^23 + 2^22
// in the accumulator, one fma with (ws, -(2^23 + 2^22) ws), one with the
// activation's scale.
//
// Fragments without shared memory: a dot product does not care in which
// order the mma pairs up its k, so lane l = 4 g + q loads its 8 bytes of a
// slab, bytes 8q .. 8q + 7, straight from memory for each of its rows (g and
// g + 8 of a weight tile; g of an activation tile), and gives the first 4
// to the mma as k 4q .. 4q + 3 and the last 4 as k 16 + 4q .. + 3 (PTX
// m16n8k32 .s8: a0 = A[g][4q..], a1 = A[g+8][4q..], a2 = A[g][16+4q..], a3 =
// A[g+8][16+4q..]; b0 = B[4q..][g], b1 = B[16+4q..][g]; c0, c1 = C[g][2q,
// 2q+1], c2, c3 = C[g+8][2q, 2q+1]): the weights and activations under the
// same order. A warp's 8-byte loads of a slab fill 32-byte sectors whole.
// The first step's weights are loaded before the wait for the launch
// before (programmatic dependent launch): they do not depend on it. Block
// b of a pass takes the tiles b, b + GRID, ... (GRID at most the tiles).
// Shared memory: the warps' sums, [KS][RG][32 weight rows][8 NT] floats,
// added over KS in order (the same sum every run) by the epilogue; then,
// where they fit (XSM: at most 160 KB), the pass's activation rows as they
// are in x, quants at a pitch of K + 32 bytes (so that a fragment's 8 rows
// fall on different banks), the lo quants likewise under XQ 2, then their
// scales, staged once a block, so that a step's fragments are shared
// memory's loads and not the L2's.

constexpr int THREADS = 256, WARPS = 8;
constexpr int Y_AT = 6, B_AT = 10, R_AT = 14;   // y0, b0, r0 among the parameters
#include "parts.cuh"
constexpr int RG = GATED ? 2 : 1;               // groups of weight rows a block
constexpr int KS = WARPS / RG;                  // slices of K
constexpr int BU = 32;                          // units a block
constexpr int NB = 8 * NT;                      // activation rows a pass
constexpr int SLABS = (int)(K / 32);
constexpr int STEPS = (SLABS + 3) / 4;          // steps of 4 slabs
constexpr int VEC = K % 128 == 0;               // a step's 4 scales of a row in one load
constexpr int MAGIC = 0x4b400000;               // the bits of 2^23 + 2^22
constexpr float MAGICF = 12582912.0f;           // 2^23 + 2^22
constexpr long RED_B = (long)KS * RG * 32 * NB * 4;  // bytes of the sums
constexpr long XP = K + 32;                     // a staged row's pitch
constexpr long XS_B = NB * XP * XQ + (long)NB * SLABS * 4;
constexpr int XSM = XS_B <= 160 * 1024;         // the activation rows staged

// d = a (16 x 32) . b (32 x 8) + MAGIC in every sum (see mma.cu's mma_k32).
DEV void mma_k32(int *d, u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1)
{
    int z = MAGIC;
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "r"(z), "r"(z), "r"(z), "r"(z));
}

DEV float i2f(int d)
{
    return __int_as_float(d) - MAGICF;
}

// Weight row r (0 .. 32) of a warp of group rg in the block whose first
// unit is u0: its part and row, or part -1 past the units (under GATE rows
// 16 .. 31 are the up rows of rows 0 .. 15's units, only beside a gate row).
DEV Unit wrow(long u0, int rg, int r)
{
    long u = u0 + (GATED ? 16 * rg + r % 16 : r);
    if (u >= UNITS)
        return Unit{-1, 0};
    Unit w = unit_of(u);
    if (GATED && r >= 16)
        w.part = w.part == 0 ? 1 : -1;
    return w;
}

// A thread's four weight rows (tile m, half h: row 16 m + 8 h + g): where
// each row's quants and its f16 scales begin, null past the units.
struct Rows {
    const char *q[2][2];
    const u16 *s[2][2];
};

DEV Rows rows_of_warp(const Params &p, long u0, int rg)
{
    Rows r;
    int g = (threadIdx.x & 31) >> 2;
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            Unit w = wrow(u0, rg, 16 * m + 8 * h + g);
            const char *W = w.part < 0 ? nullptr : part_w(p, w.part);
            r.q[m][h] = W ? W + (long)w.row * K : nullptr;
            r.s[m][h] = W ? (const u16 *)(W + align16(rows_in(w.part) * K)) + (long)w.row * SLABS : nullptr;
        }
    return r;
}

// One step's weights a thread holds: 8 bytes of each of its rows' 4 slabs,
// and the rows' 4 f16 scales of those slabs, two to a word.
struct Step {
    uint2 w[2][2][4];
    uint2 s[2][2];
};

DEV uint2 ldcs2(const char *p)
{
    uint2 v;
    asm volatile("ld.global.cs.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
    return v;
}

DEV void load_step(const Rows &r, int st, Step &s)
{
    int q = threadIdx.x & 3;
#pragma unroll
    for (int m = 0; m < 2; m++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const char *row = r.q[m][h];
#pragma unroll
            for (int b = 0; b < 4; b++) {
                int j = 4 * st + b;
                bool ok = row && j < SLABS;
                s.w[m][h][b] = ok ? ldcs2(row + (long)j * 32 + 8 * q) : make_uint2(0, 0);
            }
            if (VEC && row) {
                s.s[m][h] = *(const uint2 *)(r.s[m][h] + 4 * st);
            } else {
                u32 v[4];
#pragma unroll
                for (int b = 0; b < 4; b++)
                    v[b] = row && 4 * st + b < SLABS ? r.s[m][h][4 * st + b] : 0;
                s.s[m][h] = make_uint2(v[0] | v[1] << 16, v[2] | v[3] << 16);
            }
        }
}

// Slab b's f16 scale of a row's step, as f32.
DEV float scale_at(uint2 s, int b)
{
    u32 w = b < 2 ? s.x : s.y;
    return h2f((u16)(b & 1 ? w >> 16 : w));
}

// acc += the step's slabs: weight tiles m by activation tiles n of the
// pass's rows from t0 (rows: how many there are), a slab at a time.
DEV void compute(const Params &p, const Step &s, int st, int t0, int rows, const char *xsm, float (*acc)[NT][4])
{
    int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3;
    const char *x = (const char *)p.a[4];
    const long n = (long)ROWS * K;
    const float *xs = (const float *)(x + align16(n * XQ));
    const float *sxs = (const float *)(xsm + NB * XP * XQ);
#pragma unroll
    for (int b = 0; b < 4; b++) {
        int j = 4 * st + b;
        if (j >= SLABS)
            break;
        float ws[2][2], mws[2][2];
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                ws[m][h] = scale_at(s.s[m][h], b);
                mws[m][h] = -MAGICF * ws[m][h];
            }
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            int tb = t0 + 8 * nt + g, tc = t0 + 8 * nt + 2 * q;   // my B row; my C columns' rows
            float sx[2];
#pragma unroll
            for (int c = 0; c < 2; c++)
                if (XSM)   // rows past the pass's were staged as 0
                    sx[c] = sxs[(long)(tc + c - t0) * SLABS + j];
                else
                    sx[c] = tc + c < rows ? xs[(long)(tc + c) * SLABS + j] : 0.0f;
            uint2 bh = make_uint2(0, 0), bl = make_uint2(0, 0);
            if (XSM) {
                const char *at = xsm + (long)(tb - t0) * XP + (long)j * 32 + 8 * q;
                bh = *(const uint2 *)at;
                if (XQ == 2)
                    bl = *(const uint2 *)(at + NB * XP);
            } else if (tb < rows) {
                const char *at = x + (long)tb * K + (long)j * 32 + 8 * q;
                bh = *(const uint2 *)at;
                if (XQ == 2)
                    bl = *(const uint2 *)(at + n);
            }
#pragma unroll
            for (int m = 0; m < 2; m++) {
                int hi[4], lo[4];
                const uint2 *w0 = &s.w[m][0][b], *w1 = &s.w[m][1][b];
                mma_k32(hi, w0->x, w1->x, w0->y, w1->y, bh.x, bh.y);
                if (XQ == 2)
                    mma_k32(lo, w0->x, w1->x, w0->y, w1->y, bl.x, bl.y);
#pragma unroll
                for (int i = 0; i < 4; i++) {
                    int h = i >> 1, c = i & 1;
                    float w = ws[m][h], u = fmaf(__int_as_float(hi[i]), w, mws[m][h]);
                    if (XQ == 2)
                        u = fmaf(i2f(lo[i]), w * (1.0f / 254.0f), u);
                    acc[m][nt][i] = fmaf(u, sx[c], acc[m][nt][i]);
                }
            }
        }
    }
}


// The block's sums, red[KS][RG][32][NB], through the epilogue: a warp an
// activation row at a time, a unit a lane; part 0's block of 32 units
// quantized whole under OQ (N_0 is whole blocks, so 32 units from a
// multiple of 32 lie in one part).
DEV void finish(const Params &p, long u0, int t0, int rows, const float *red)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    long u = u0 + lane;
    int ok = u < UNITS, rg = GATED ? lane / 16 : 0, r = GATED ? lane % 16 : lane;
    Unit un = ok ? unit_of(u) : Unit{3, 0};
    for (int c = w; c < NB && t0 + c < rows; c += WARPS) {
        float v = 0.0f, v1 = 0.0f;
#pragma unroll
        for (int k = 0; k < KS; k++) {
            const float *at = red + ((long)(k * RG + rg) * 32) * NB;
            v += at[r * NB + c];
            if (GATED)
                v1 += at[(r + 16) * NB + c];
        }
        if (ok)
            v = epilogue(p, un, t0 + c, v, v1);
        if (OQ && unit_of(u0).part == 0)
            warp_quant(ok ? v : 0.0f, p.a[6], (long)ROWS * N0, ((long)(t0 + c) * N0 + u0) / 32, OQ);
    }
}

// The pass's activation rows t0 .. t0 + NB into shared memory (XSM), rows
// past the batch's as 0.
DEV void stage_x(const Params &p, int t0, int rows, char *xsm)
{
    const char *x = (const char *)p.a[4];
    const long n = (long)ROWS * K;
    const float *xs = (const float *)(x + align16(n * XQ));
    for (long i = threadIdx.x; i < (long)NB * XQ * (K / 16); i += THREADS) {
        long t = i / (K / 16) % NB, w = i / (K / 16) / NB, c = i % (K / 16);
        int4 v = make_int4(0, 0, 0, 0);
        if (t0 + t < rows)
            v = *((const int4 *)(x + w * n + (t0 + t) * K) + c);
        *((int4 *)(xsm + (w * NB + t) * XP) + c) = v;
    }
    float *sxs = (float *)(xsm + NB * XP * XQ);
    for (long i = threadIdx.x; i < (long)NB * SLABS; i += THREADS)
        sxs[i] = t0 + i / SLABS < rows ? xs[(t0 + i / SLABS) * SLABS + i % SLABS] : 0.0f;
    __syncthreads();
}

// The tiles of 32 units; block b of a pass takes tiles b, b + GRID, ...
// (GRID: what the chip holds at once, or the tiles when fewer), the next
// tile's first weights in flight over this tile's sums and epilogue.
constexpr long TILES = (UNITS + BU - 1) / BU;

extern "C" __global__ void __launch_bounds__(THREADS, 1) mmv(const Params p)
{
    extern __shared__ __align__(16) float red[];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    int rg = w / KS, ks = w % KS;
    long tile = blockIdx.x;
    Rows r = rows_of_warp(p, tile * BU, rg);
    Step s;
    if (ks < STEPS)
        load_step(r, ks, s);   // before the wait: the weights do not depend on the launch before
    pdl_begin();
    int rows = rows_of(p.a[5], ROWS), t0 = blockIdx.y * NB;
    if (t0 >= rows)
        return;
    float *mine = red + (long)(ks * RG + rg) * 32 * NB;
    char *xsm = (char *)red + RED_B;
    if (XSM)
        stage_x(p, t0, rows, xsm);
    for (; tile < TILES; tile += gridDim.x) {
        long next = tile + gridDim.x;
        Rows rn = next < TILES ? rows_of_warp(p, next * BU, rg) : r;
        float acc[2][NT][4];
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int n = 0; n < NT; n++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    acc[m][n][i] = 0.0f;
        for (int st = ks; st < STEPS; st += KS) {
            Step nx;   // the next step's weights (or the next tile's first) in flight over this step's products
            if (st + KS < STEPS)
                load_step(r, st + KS, nx);
            else if (next < TILES)
                load_step(rn, ks, nx);
            compute(p, s, st, t0, rows, xsm, acc);
            s = nx;
        }
        __syncthreads();   // the tile before's epilogue has read the sums
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int n = 0; n < NT; n++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    mine[(16 * m + g + 8 * (i >> 1)) * NB + 8 * n + 2 * q + (i & 1)] = acc[m][n][i];
        __syncthreads();
        finish(p, tile * BU, t0, rows, red);
        r = rn;
    }
}
