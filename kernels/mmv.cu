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
//                        sigmoid(gs[t]) * v            (GS, part 0)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ: 32-value blocks quantized as warp_quant)
// Under rule norm_split an RMS norm after stacked rows runs in two halves
// (u = y_0, a residual's sum; n the norm's output, read by mmv launches
// alone):
//   SQ (its producer, part 0 alone, f32 y_0 of whole 32-value blocks):
//        q[t, o]  = u[t, o] (nw[o] + OFFSET) in format SQ, a 32-value block
//                   quantized as warp_quant (nw + OFFSET is 1 without a
//                   weight, NW 0): n[t] before its row's scale
//        so[t, b] = sum over block b of u[t, o]^2
//   RN (its readers): a_p[t, o] times 1 / sqrt(sum over b of ss[t, b] / K
//        + EPS), the row's scale, before the epilogue; ss the so its
//        producer wrote, K / 32 sums a row
// so that n[t] = u[t] / sqrt(mean(u[t]^2) + EPS) (nw + OFFSET), as
// norm.cu's, costs no launch of its own: 1 / sqrt(.) scales a 32-value
// block's values and its max alike, so the block's quants are n's.
//
// Shapes: x (rows, K) already quantized in format XQ (1 a8, 2 a8x2), rows =
// n or ROWS; W_p (N_p, K) Q8_0; y_p, r_p (rows, N_p); b_p (N_p). K is whole
// 32-value slabs. Under GATE parts 0 and 1 are the gate and up of one
// hidden width (N_0 = N_1) and y_1 is unused. No norm prologue: a norm
// before stacked rows runs once, quantizing in its own epilogue, or split
// as above. SQ: nw (N_0), q (rows, N_0) in format SQ, so (rows, N_0 / 32);
// RN: ss (rows, K / 32).
//
// Launch: grid (GRID, passes = rows / (8 NT) rounded up), 384 threads, a
// block a multiprocessor (its shared memory; at most 168 registers a
// thread: a multiprocessor's four register files take 3 of the 12 warps
// each). 8 warps compute and 4 take the epilogue, so that a tile's end
// holds no computing warp back (run79: the 8B's gated pair at 16 rows
// 50.1 -> 44.7 µs, at 64 rows 137 -> 110, against 8 warps doing both).
// Under that cap, at NT 1 to 3 (FRESH), nothing a tile does not need
// stays in registers across it: a warp's weight-row addresses are worked
// out again at each stage it issues (Feed: from two rows' where every
// part is whole tiles) and a slab's weight scales loaded at the slab, so
// that none of those instantiations in the default decode batches has
// local memory (17 had, up to 40 bytes) and a stage costs ~20-35% fewer
// instructions: on an H100 the q8 batches of 16 and 24 rows 3.0% and
// 1.3% faster for the 8B, 3.7% and 3.5% for Qwen3-0.6B (bench/NOTES.md
// run274). At NT 4 the same was 2-15% slower a launch (run273), so
// there the Feed is held across the tile and a step's four scales loaded
// at once, and the q/k/v in three parts spill up to 80 bytes
// (tests/golden/spills.known).
// A tile is 32 units (output rows of the parts, end to end): a block's 8
// computing warps are RG groups of weight rows by KS = 8 / RG slices of K; RG is 1,
// or 2 under GATE (16 units a group: their gate rows and their
// up rows). Each warp holds 32 weight rows as two 16-row tiles (under GATE
// the group's 16 gate rows and 16 up rows) by NT tiles of 8 activation
// rows, and walks K 128 values (4 slabs) a step, the steps ks, ks + KS, ...
// Each slab of a tile is one mma, its sums read as mma.cu's: 2^23 + 2^22
// in the accumulator, one fma with (ws, -(2^23 + 2^22) ws), one with the
// activation's scale.
//
// The weights stream through shared memory: each warp owns a ring of
// DEPTH stages (a stage: its 32 rows' 128 bytes of one step and their 4
// f16 scales), filled by cp.async DEPTH - 1 steps ahead of its mma (the
// next tile's first steps too), so that a multiprocessor keeps 8 (DEPTH -
// 1) x 4 KB of weights in flight while its registers hold only the sums.
// A stage's 16-byte chunk c of row r sits at chunk c ^ (r % 8) of the row
// (an XOR swizzle: the 8 rows of a fragment fall on different banks); lane
// l copies chunk l % 8 of rows l / 8, l / 8 + 4, ... (four whole rows an
// instruction) and row l's scales. The first stages are issued before the
// wait for the launch before (programmatic dependent launch): the weights
// do not depend on it.
// Fragments, in the mma's own k order (PTX m16n8k32 .s8: a0 = A[g][4q..],
// a1 = A[g+8][4q..], a2 = A[g][16+4q..], a3 = A[g+8][16+4q..]; b0 =
// B[4q..][g], b1 = B[16+4q..][g]; c0, c1 = C[g][2q, 2q+1], c2, c3 =
// C[g+8][2q, 2q+1], lane l = 4 g + q): a weight tile's four words of a
// slab are one ldmatrix (each of its 8-row matrices' rows found where the
// swizzle put its chunk), an activation tile's two words two 4-byte loads,
// bytes 4q and 16 + 4q of row g's slab. Block b of a pass takes the tiles
// b, b + GRID, ... (GRID at most the tiles).
// At a tile's end each computing warp stores its sums into one of two
// buffers (tiles alternate), arrives on that buffer's FULL barrier and
// goes on; the epilogue warps wait on FULL, add the sums over KS in order
// (the same sum every run), take the tile's activation rows e, e + EW, ...
// through the epilogue (finish) and arrive on EMPTY, on which the
// computing warps wait before they store the sums of the tile two on.
// Shared memory: the two buffers of sums, [KS][RG][NB][RP] floats each
// (an activation row's 32 units at a pitch of 36: the stores of a
// warp's fragments and the epilogue's loads both free of bank
// conflicts); then,
// under XS 1, the pass's activation rows, each 32-byte slab's words in the
// order 0 4 1 5 2 6 3 7 (lane q's two words of a fragment, bytes 4q and 16
// + 4q, one 8-byte load), at a pitch of 8 words past a multiple of 32 (a
// fragment's 8 rows' loads, half a warp at a time, on 32 different banks),
// the lo quants likewise under XQ 2, then their scales slab by slab ([SLABS][NB]:
// a lane's two rows' scales one 8-byte load, the warp's on different
// banks), staged once a
// block, so that a step's activation fragments are shared memory's loads
// and not the L2's; then the warps' rings, WARPS x DEPTH stages of 4352
// bytes, and under XS 2 each stage also the step's slice of the pass's
// rows (NB XQ x 128 bytes, swizzled as the weights, and NB x 4 scales),
// copied with its weights once the launch before has written them.

constexpr int WARPS = 8, EW = 4;                // computing warps, epilogue warps
constexpr int THREADS = 32 * (WARPS + EW);
constexpr int Y_AT = 6, B_AT = 10, R_AT = 14, GS_AT = 18;   // y0, b0, r0, gs among the parameters
constexpr int NW_AT = 19, Q_AT = 20, SO_AT = 21, SS_AT = 22;   // nw, q, so, ss (norm_split)
#include "parts.cuh"
constexpr int RG = GATED ? 2 : 1;               // groups of weight rows a block
constexpr int KS = WARPS / RG;                  // slices of K
constexpr int BU = 32;                          // units a block
constexpr int NB = 8 * NT;                      // activation rows a pass
constexpr int SLABS = (int)(K / 32);
constexpr int STEPS = (SLABS + 3) / 4;          // steps of 4 slabs
constexpr int VEC = K % 128 == 0;               // a step's 4 scales of a row in one load
constexpr int RP = 36;                          // an activation row's sums' pitch (no bank conflicts)
constexpr long RED_B = (long)KS * RG * NB * RP * 4;  // bytes of a tile's sums (two tiles' in turn)
constexpr long XP = K + 4 * ((8 - K / 4 % 32 + 32) % 32);   // a staged row's pitch: 8 words past a multiple of 32
constexpr long XS_B = NB * XP * XQ + (long)NB * SLABS * 4;
constexpr int XSM = XS == 1;                    // the pass's activation rows staged whole
constexpr int XA = XS == 2;                     // each step's slice of them in its stage
constexpr int RS_W = 32 * 128;                  // a stage's weight bytes: 32 rows of 4 slabs
constexpr int XA_AT = RS_W + 32 * 8;            // then their scales; then (XA) NB XQ rows' 128 bytes
constexpr int XAS_AT = XA_AT + (XA ? NB * XQ * 128 : 0);   // and (XA) their 4 scales a row
constexpr int RS = XAS_AT + (XA ? NB * 16 : 0);
constexpr long RING_AT = 2 * RED_B + (XSM ? XS_B : 0);
static_assert(DEPTH >= 2, "a ring of at least two stages");
static_assert(!SQ || (PARTS == 1 && !GATE && !OQ && N0 % 32 == 0), "SQ: one f32 output of whole 32-value blocks");
constexpr int ER = NB / EW;                     // activation rows an epilogue warp takes a tile

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

// Waits until at most DEPTH - 2 of this thread's stages are in flight.
DEV void cp_wait()
{
    cp_wait_n<DEPTH - 2>();
}

// What a lane copies of a tile: rows l / 8 + 4 i (i < 8) of its warp's 32
// (bit i of ok: the row is inside the units; q[i] then its first byte,
// else any valid address, read for none), and row l's scales (null past
// the units).
// Where every part is whole tiles of 32 units (CONTIG), a tile's rows of
// a group lie in one part, so that two rows' addresses give all eight.
// FRESH (NT up to 3, the cap's paragraph at the top): a warp's Feed
// worked out at each stage it issues, not held across the tile; a macro
// too, as the slab loop's pragma depends on it.
#define MMV_FRESH (LOGOS_NT <= 3)
constexpr int CONTIG = N0 % 32 == 0 && N1 % 32 == 0 && N2 % 32 == 0 && N3 % 32 == 0;
constexpr bool FRESH = MMV_FRESH;
struct Feed {
    const char *q[8];
    const u16 *s;
    u32 ok;
};

// Weight row r's first byte and (s) its scales, both null past the units.
DEV const char *wrow_at(const Params &p, long u0, int rg, int r, const u16 **s)
{
    Unit w = wrow(u0, rg, r);
    *s = nullptr;
    if (w.part < 0)
        return nullptr;
    const char *W = part_w(p, w.part);
    *s = (const u16 *)(W + align16(rows_in(w.part) * K)) + (long)w.row * SLABS;
    return W + (long)w.row * K;
}

DEV Feed feed_of(const Params &p, long u0, int rg)
{
    Feed f;
    int lane = threadIdx.x & 31;
    const u16 *s;
    f.ok = 0;
    if (CONTIG && FRESH) {   // one part's rows, 4 K bytes apart a step of i (under GATE i < 4 the gate's, the rest the up's)
        const char *a = wrow_at(p, u0, rg, lane / 8, &s), *b = GATED ? wrow_at(p, u0, rg, lane / 8 + 16, &s) : a;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const char *q = GATED && i >= 4 ? b : a;
            f.ok |= (q != nullptr) << i;
            f.q[i] = q ? q + (long)(4 * (GATED ? i % 4 : i)) * K : (const char *)p.a[0];
        }
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const char *q = wrow_at(p, u0, rg, lane / 8 + 4 * i, &s);
            f.ok |= (q != nullptr) << i;
            f.q[i] = q ? q : (const char *)p.a[0];
        }
    }
    wrow_at(p, u0, rg, lane, &f.s);
    return f;
}

// Step st of a tile into a stage: 16-byte chunks by cp.async, zero past K
// and the units; the scales by cp.async where a step's 4 are 8 aligned
// bytes (VEC), else loaded and stored. Row r = l / 8 + 4 i's chunk c = l %
// 8 goes to chunk c ^ (r % 8) = c ^ (l / 8) ^ 4 (i % 2) of the row.
DEV void issue(const Params &p, const Feed &f, int st, char *stage)
{
    int lane = threadIdx.x & 31, c = lane & 7, r0 = lane >> 3;
    const char *any = (const char *)p.a[0];
    int off = st * 128 + 16 * c;
    bool in = VEC || off < K;
    u32 sb = smem_addr(stage) + r0 * 128, o0 = 16 * (c ^ r0), o1 = 16 * (c ^ r0 ^ 4);
#pragma unroll
    for (int i = 0; i < 8; i++) {
        bool v = in && (f.ok >> i & 1);
        cp16s(sb + 512 * i + (i & 1 ? o1 : o0), f.q[i] + (v ? off : 0), v ? 16 : 0);
    }
    char *sd = stage + RS_W + lane * 8;
    if (VEC) {
        cp8(sd, f.s ? (const char *)(f.s + 4 * st) : any, f.s ? 8 : 0);
    } else {
        u32 v[4];
#pragma unroll
        for (int b = 0; b < 4; b++)
            v[b] = f.s && 4 * st + b < SLABS ? f.s[4 * st + b] : 0;
        *(uint2 *)sd = make_uint2(v[0] | v[1] << 16, v[2] | v[3] << 16);
    }
}

// Step st's slice of the pass's activation rows t0 .. t0 + NB into a stage
// (XA): their 128 bytes a word (swizzled as the weights), zero past the
// rows and K, and their 4 scales a row.
DEV void issue_x(const Params &p, int st, int t0, int rows, char *stage)
{
    int lane = threadIdx.x & 31;
    const char *x = (const char *)p.a[4];
    const long n = (long)ROWS * K;
    const float *xs = (const float *)(x + align16(n * XQ));
    long off = (long)st * 128 + 16 * (lane & 7);
#pragma unroll
    for (int i = 0; i < NB * XQ / 4; i++) {
        int r = i * 4 + lane / 8, t = r % NB, c = lane & 7, ok = t0 + t < rows && off < K;
        cp16(stage + XA_AT + r * 128 + 16 * (c ^ (t & 7)), ok ? x + (r / NB) * n + (long)(t0 + t) * K + off : x,
             ok ? 16 : 0);
    }
    if (lane < NB) {
        float *sd = (float *)(stage + XAS_AT) + lane * 4;
        bool ok = t0 + lane < rows;
        const float *src = xs + (long)(t0 + lane) * SLABS + 4 * st;
        if (VEC) {
            cp16(sd, ok ? (const void *)src : (const void *)x, ok ? 16 : 0);
        } else {
#pragma unroll
            for (int b = 0; b < 4; b++)
                sd[b] = ok && 4 * st + b < SLABS ? src[b] : 0.0f;
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
// pass's rows from t0 (rows: how many there are), a slab at a time. A
// weight tile's fragment is one ldmatrix (matrices: rows 0-7 and 8-15 by
// bytes 0-15 and 16-31 of the slab, each row's chunk where the swizzle put
// it), so lane 4 g + q holds bytes 4 q .. + 3 and 16 + 4 q .. + 3 of rows g
// and g + 8; an activation row's fragment the same bytes of row g.
DEV void compute(const Params &p, const char *stage, int st, int t0, int rows, const char *xsm, float (*acc)[NT][4])
{
    int lane = threadIdx.x & 31, g = lane >> 2, q = lane & 3, mi = lane >> 3;
    uint2 sc[2][2];   // not FRESH: the f16 scales of rows 16 m + 8 h + g
    if constexpr (!FRESH) {
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int h = 0; h < 2; h++)
                sc[m][h] = *(const uint2 *)(stage + RS_W + (16 * m + 8 * h + g) * 8);
    }
    const char *x = (const char *)p.a[4];
    const long n = (long)ROWS * K;
    const float *xs = (const float *)(x + align16(n * XQ));
    const float *sxs = (const float *)(xsm + NB * XP * XQ);
    u32 wa = smem_addr(stage) + (8 * (mi & 1) + (lane & 7)) * 128;   // my ldmatrix row (tile 0)
#if MMV_FRESH   // the two pragmas give ptxas's code each run273 timed (they differ)
#pragma unroll(4)
#else
#pragma unroll
#endif
    for (int b = 0; b < 4; b++) {
        int j = 4 * st + b;
        if (!VEC && j >= SLABS)   // (never under VEC: the compiler then overlaps the slabs)
            break;
        float ws[2][2], mws[2][2];
        u32 wq[2][4];
#pragma unroll
        for (int m = 0; m < 2; m++) {
            ldsm4(wq[m], wa + m * 16 * 128 + 16 * ((2 * b + (mi >> 1)) ^ (lane & 7)));
#pragma unroll
            for (int h = 0; h < 2; h++) {   // the f16 scale of row 16 m + 8 h + g's slab b
                if constexpr (FRESH)
                    ws[m][h] = h2f(((const u16 *)(stage + RS_W + (16 * m + 8 * h + g) * 8))[b]);
                else
                    ws[m][h] = scale_at(sc[m][h], b);
                mws[m][h] = -MAGICF * ws[m][h];
            }
        }
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            int tb = t0 + 8 * nt + g, tc = t0 + 8 * nt + 2 * q;   // my B row; my C columns' rows
            float sx[2];
            if (XSM) {   // slab j's scales of rows tc, tc + 1: one 8-byte load (tc - t0 is even)
                float2 two = *(const float2 *)(sxs + (long)j * NB + tc - t0);
                sx[0] = two.x, sx[1] = two.y;
            }
#pragma unroll
            for (int c = 0; c < 2; c++)
                if (XA)   // rows past the pass's were staged as 0
                    sx[c] = ((const float *)(stage + XAS_AT))[(tc + c - t0) * 4 + b];
                else if (!XSM)
                    sx[c] = tc + c < rows ? xs[(long)(tc + c) * SLABS + j] : 0.0f;
            u32 bh[2] = {0, 0}, bl[2] = {0, 0};
            if (XSM) {   // bytes 4 q and 16 + 4 q of the slab side by side (stage_x): one 8-byte load
                const char *at = xsm + (long)(tb - t0) * XP + (long)j * 32 + 8 * q;
                uint2 two = *(const uint2 *)at;
                bh[0] = two.x, bh[1] = two.y;
                if (XQ == 2) {
                    two = *(const uint2 *)(at + NB * XP);
                    bl[0] = two.x, bl[1] = two.y;
                }
            }
#pragma unroll
            for (int k = 0; k < 2 && !XSM; k++) {   // bytes 16 k + 4 q .. + 3 of the slab
                const char *at = nullptr;
                if (XA)
                    at = stage + XA_AT + (8 * nt + g) * 128 + 16 * ((2 * b + k) ^ g) + 4 * q;
                else if (tb < rows)
                    at = x + (long)tb * K + (long)j * 32 + 16 * k + 4 * q;
                if (at) {
                    bh[k] = *(const u32 *)at;
                    if (XQ == 2)
                        bl[k] = *(const u32 *)(at + (XA ? NB * 128 : n));
                }
            }
#pragma unroll
            for (int m = 0; m < 2; m++) {
                int hi[4], lo[4];
                mma_k32(hi, wq[m], bh);
                if (XQ == 2)
                    mma_k32(lo, wq[m], bl);
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


// RN: the norm's scale of each of an epilogue warp's activation rows (e,
// e + EW, ... of the pass): 1 / sqrt(mean + EPS) from the sums of squares
// its producer left a block of 32 values; 1 past the rows and without RN.
DEV void row_scales(const Params &p, int t0, int rows, float *rn)
{
    int lane = threadIdx.x & 31, e = (int)(threadIdx.x >> 5) - WARPS;
    const float *ss = (const float *)p.a[SS_AT];
#pragma unroll
    for (int i = 0; i < ER; i++) {
        long t = t0 + e + EW * i;
        float s = 0.0f;
        if (RN && t < rows)
            for (int j = lane; j < SLABS; j += 32)
                s += ss[t * SLABS + j];
        rn[i] = RN && t < rows ? 1.0f / sqrtf(warp_sum(s) / (float)K + EPS) : 1.0f;
    }
}

// SQ: a block of 32 units of part 0 at activation row t (a unit a lane,
// ok inside the units) as the norm after it reads it: v (nw + OFFSET)
// quantized in format SQ, and the block's sum of v^2.
DEV void norm_out(const Params &p, Unit un, int ok, long t, long u0, float v)
{
    float w = ok ? v * (NW ? ((const float *)p.a[NW_AT])[un.row] + OFFSET : 1.0f) : 0.0f;
    warp_quant(w, p.a[Q_AT], (long)ROWS * N0, (t * N0 + u0) / 32, SQ);
    float s = warp_sum(ok ? v * v : 0.0f);
    if ((threadIdx.x & 31) == 0)
        ((float *)p.a[SO_AT])[t * (N0 / 32) + u0 / 32] = s;
}

// A tile's sums, red[KS][RG][NB][RP] (weight row r of activation row c at
// c RP + r), through the epilogue: epilogue warp e takes activation rows
// e, e + EW, ... (rn: their norm's scales, RN), a unit a lane; part 0's
// block of 32 units quantized whole under OQ (N_0 is whole blocks, so 32
// units from a multiple of 32 lie in one part).
DEV void finish(const Params &p, long u0, int t0, int rows, const float *red, const float *rn)
{
    int lane = threadIdx.x & 31, e = (int)(threadIdx.x >> 5) - WARPS;
    long u = u0 + lane;
    int ok = u < UNITS, rg = GATED ? lane / 16 : 0, r = GATED ? lane % 16 : lane;
    Unit un = ok ? unit_of(u) : Unit{3, 0};
#pragma unroll(RN ? ER : 1)   // rn[i] in registers under RN; else the loop as it was
    for (int i = 0; i < ER; i++) {
        int c = e + EW * i;
        if (t0 + c >= rows)
            break;
        float v = 0.0f, v1 = 0.0f;
#pragma unroll
        for (int k = 0; k < KS; k++) {
            const float *at = red + (long)(k * RG + rg) * NB * RP + c * RP;
            v += at[r];
            if (GATED)
                v1 += at[r + 16];
        }
        if (RN)
            v *= rn[i], v1 *= rn[i];
        if (ok)
            v = epilogue(p, un, t0 + c, v, v1);
        if (OQ && unit_of(u0).part == 0)
            warp_quant(ok ? v : 0.0f, p.a[6], (long)ROWS * N0, ((long)(t0 + c) * N0 + u0) / 32, OQ);
        if (SQ)
            norm_out(p, un, ok, t0 + c, u0, v);
    }
}

// The pass's activation rows t0 .. t0 + NB into shared memory (XSM), rows
// past the batch's as 0.
DEV void stage_x(const Params &p, int t0, int rows, char *xsm)
{
    const char *x = (const char *)p.a[4];
    const long n = (long)ROWS * K;
    const float *xs = (const float *)(x + align16(n * XQ));
    for (long i = threadIdx.x; i < (long)NB * XQ * SLABS; i += THREADS) {   // a 32-value slab a thread
        long t = i / SLABS % NB, w = i / SLABS / NB, j = i % SLABS;
        int4 a = make_int4(0, 0, 0, 0), b = a;
        if (t0 + t < rows) {
            const int4 *src = (const int4 *)(x + w * n + (t0 + t) * K) + 2 * j;
            a = src[0], b = src[1];
        }
        int4 *dst = (int4 *)(xsm + (w * NB + t) * XP) + 2 * j;
        dst[0] = make_int4(a.x, b.x, a.y, b.y);   // words 0 4 1 5 2 6 3 7: lane q's two side by side
        dst[1] = make_int4(a.z, b.z, a.w, b.w);
    }
    float *sxs = (float *)(xsm + NB * XP * XQ);
    for (long i = threadIdx.x; i < (long)NB * SLABS; i += THREADS)
        sxs[i % SLABS * NB + i / SLABS] = t0 + i / SLABS < rows ? xs[(t0 + i / SLABS) * SLABS + i % SLABS] : 0.0f;
    __syncthreads();
}

// The tiles of 32 units; block b of a pass takes tiles b, b + GRID, ...
// (GRID: what the chip holds at once, or the tiles when fewer). A warp's
// stages are its steps of those tiles in order, issued DEPTH - 1 ahead.
constexpr long TILES = (UNITS + BU - 1) / BU;

// The warp's next stage to issue: its tile, step and count.
struct Issuer {
    Feed f;   // not FRESH: the tile's
    long tile, left;   // stages still to issue
    int st, n;
};

DEV void issue_next(const Params &p, Issuer &is, int rg, int ks, char *ring, int t0, int rows)
{
    if (is.left > 0) {
        if constexpr (FRESH)
            issue(p, feed_of(p, is.tile * BU, rg), is.st, ring + (long)(is.n % DEPTH) * RS);
        else
            issue(p, is.f, is.st, ring + (long)(is.n % DEPTH) * RS);
        if (XA && rows > 0)
            issue_x(p, is.st, t0, rows, ring + (long)(is.n % DEPTH) * RS);
        is.st += KS;
        if (--is.left > 0 && is.st >= STEPS) {
            is.st = ks;
            is.tile += gridDim.x;
            if constexpr (!FRESH)
                is.f = feed_of(p, is.tile * BU, rg);
        }
    }
    cp_commit();   // an empty group past the last stage keeps the count
    is.n++;
}

// Named barriers between the computing warps and the epilogue warps, a
// pair for each of the two tiles' sums: FULL (the 8 warps' sums are in)
// and EMPTY (the epilogue has read them). The computing warps arrive on
// FULL and wait on EMPTY; the epilogue warps the other way round.
constexpr int FULL = 1, EMPTY = 3;

DEV void bar_wait(int id)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "n"(THREADS) : "memory");
}

DEV void bar_arrive(int id)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "n"(THREADS) : "memory");
}

// The epilogue warps: each of the block's tiles' sums once they are in.
DEV void epilogue_warp(const Params &p, long tiles, int t0, int rows, const float *red)
{
    float rn[ER];
    row_scales(p, t0, rows, rn);
    for (long i = 0; i < tiles; i++) {
        int b = (int)(i & 1);
        bar_wait(FULL + b);
        finish(p, (blockIdx.x + i * gridDim.x) * BU, t0, rows, red + b * (RED_B / 4), rn);
        if (i + 2 < tiles)
            bar_arrive(EMPTY + b);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) mmv(const Params p)
{
    KERNEL_OPEN();
    extern __shared__ __align__(16) float red[];
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
    int rg = w / KS, ks = w % KS;
    int nsw = ks < STEPS ? (STEPS - ks + KS - 1) / KS : 0;   // my steps a tile
    long tiles = blockIdx.x < TILES ? (TILES - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    char *xsm = (char *)red + 2 * RED_B;
    if (w >= WARPS) {   // an epilogue warp
        pdl_begin();
        int rows = rows_of(p.a[5], ROWS), t0 = blockIdx.y * NB;
        if (t0 >= rows)
            return;
        if (XSM)
            stage_x(p, t0, rows, xsm);
        epilogue_warp(p, tiles, t0, rows, red);
        return;
    }
    char *ring = (char *)red + RING_AT + (long)w * DEPTH * RS;
    Issuer is;
    is.tile = blockIdx.x, is.left = tiles * nsw, is.st = ks, is.n = 0;
    if (!FRESH && is.left > 0)
        is.f = feed_of(p, is.tile * BU, rg);
    for (int d = 0; d < DEPTH - 1; d++)   // before the wait: the weights do not depend on the launch before
        issue_next(p, is, rg, ks, ring, 0, 0);
    pdl_begin();
    int rows = rows_of(p.a[5], ROWS), t0 = blockIdx.y * NB;
    if (t0 >= rows) {
        cp_wait_all();
        return;
    }
    if (XA)   // the first stages' activations, in the groups of their weights' stages
        for (int d = 0; d < DEPTH - 1 && d < is.n && nsw > 0; d++) {
            issue_x(p, ks + (d % nsw) * KS, t0, rows, ring + (long)d * RS);
            cp_commit();
        }
    if (XSM)
        stage_x(p, t0, rows, xsm);
    int ci = 0;   // the stage computed
    for (long tt = 0; tt < tiles; tt++) {   // my block's tile tt
        float acc[2][NT][4];
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int n = 0; n < NT; n++)
#pragma unroll
                for (int i = 0; i < 4; i++)
                    acc[m][n][i] = 0.0f;
        for (int k = 0; k < nsw; k++, ci++) {
            cp_wait();
            __syncwarp();   // every lane's copies of stage ci landed; every lane is past stage ci - 1
            issue_next(p, is, rg, ks, ring, t0, rows);
            compute(p, ring + (long)(ci % DEPTH) * RS, ks + k * KS, t0, rows, xsm, acc);
        }
        int b = (int)(tt & 1);
        if (tt >= 2)
            bar_wait(EMPTY + b);   // the epilogue has read tile tt - 2's sums
        float *mine = red + b * (RED_B / 4) + (long)(ks * RG + rg) * NB * RP;
#pragma unroll
        for (int m = 0; m < 2; m++)
#pragma unroll
            for (int n = 0; n < NT; n++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    mine[(8 * n + 2 * q + (e & 1)) * RP + 16 * m + g + 8 * (e >> 1)] = acc[m][n][e];
        bar_arrive(FULL + b);
    }
    cp_wait_all();
}
