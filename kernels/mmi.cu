// mmi.cu — products of one activation by Q8_0 checkpoint rows for up to
// 64 stacked rows (a decode batch) on the tensor cores in int8 (wgmma
// m64nNRk32 .s32.s8.s8, sm_90a), in up to four parts, with their
// epilogues: the weights and the activation both stay int8 as TMA wrote
// them, and the per-32 scales are applied to each slab's int32 sums
// (bench/wi8.cu, bench/NOTES.md session forty-four).
//
//   a_p[t, o] = sum over 32-value slabs j of
//               (Wq_p[o, j] . x[t, j]) sW_p[o, j] sx[t, j]     (f32 sums)
//   epilogue, in order:  + b_p[o]                      (bit p of BIAS)
//                        y_0 = act(a_0) * a_1          (GATE: 1 silu, 2 gelu_tanh)
//                        c * tanh(v / c)               (CAP = c > 0, part 0)
//                        sigmoid(gs[t]) * v            (GS, part 0)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ: 32-value blocks quantized as warp_quant)
//
// Shapes: x (rows, K) a8 (XQ 1), rows = n or ROWS, at most NR (16, 32 or
// 64: wgmma's N); W_p (N_p, K) Q8_0; y_p, r_p (rows, N_p); b_p (N_p). K is
// whole 256-value stages. Under GATE there are two parts, the gate and up
// of one hidden width (N_0 = N_1), and y_1 is unused.
// The parameters are mmh's, in its order; after them the lane puts the
// launch's tensor maps (parameter 21: 128 bytes each, in device memory):
// x's quants (box 128 x NR rows, the 128-byte swizzle) and scales (box 8 x
// NR), then each part's quants (box 128 x BP rows, the 128-byte swizzle)
// and scales (box 8 x BP), BP = 128 (64 under GATE).
//
// A tile is 128 weight rows (under GATE 64 gate rows and their 64 up
// rows), the parts' tiles end to end; a stage is a tile's 256 values of K:
// two boxes of its weights' quants, their 8 scales a row, x's two 128-value
// atoms of NR rows and their scales (NR x 8 floats), by TMA onto one
// mbarrier, in a ring of STAGES. Launch: GRID blocks of 512 threads (four
// warpgroups, a block a multiprocessor), the tiles' stages (tile-major:
// each tile's K in turn) cut into one even run a block (stream-K). In a
// stage warpgroup g's wgmma takes 64 weight rows (64 (g & 1) ..) by half
// of x's NR rows (NR/2 (g >> 1) ..: four warps a scheduler, bench/NOTES.md
// run249) one slab at a time, fresh (scale-d 0), into one of two register
// sets while the other set's sums go into the f32 sums:
//   v = (2^23 + 2^22 + dot as a float's bits) sW - (2^23 + 2^22) sW   (exact)
//   sums += v sx
// (mma.cu's trick; the magic added by an integer add, since a wgmma's
// accumulator cannot start from it). At the end of its part of a tile a
// block that took the whole of K runs the epilogue; a tile split between
// blocks is split at the end of its first block's run and at the start of
// the others': they leave their sums in part (place b: GRID places of 128
// x NR floats) as their runs begin and count on cnt (a count a tile), and
// the first block, at its run's end, waits for the count, adds their sums
// to its own in block order (the same sums every run), sets the count
// back to 0 and runs the epilogue (give and take below). The weights'
// first stages are asked for before the launch before is waited for.
// Shared memory: the ring (STAGES slots), the sums' tile (NR x 129
// floats), the mbarriers; plus 1 KB to align to 1024.

constexpr int KT = 256, SLABS = KT / 32, THREADS = 512, BW = 128;
constexpr int Y_AT = 6, B_AT = 10, R_AT = 14, GS_AT = 18, PART_AT = 19, CNT_AT = 20, MAPS_AT = 21;
#include "parts.cuh"
constexpr int BP = GATED ? BW / 2 : BW;                      // a part's rows a tile
constexpr int XA = NR * 128;                                 // an atom of x: its NR rows' 128 values
constexpr int S_WQ = 0, S_WS = 2 * BW * 128, S_XQ = (S_WS + BW * 16 + 1023) / 1024 * 1024, S_XS = S_XQ + 2 * XA;
constexpr int SLOT = (S_XS + NR * 32 + 1023) / 1024 * 1024;
constexpr unsigned STAGE_BYTES = 2 * BW * 128 + BW * 16 + 2 * XA + NR * 32;
constexpr int EP = BW + 1;                                   // floats a row of the sums' tile
constexpr int E_AT = STAGES * SLOT, BAR_AT = (E_AT + NR * EP * 4 + 15) / 16 * 16;
constexpr int KTN = K / KT;                                  // stages a tile
constexpr int NH = NR / 2;                                   // x's rows a warpgroup: its half of NR
constexpr int ND = NH / 2;                                   // a thread's sums
static_assert(K % KT == 0, "K whole 256-value stages");
static_assert(NR == 16 || NR == 32 || NR == 64, "x's rows a wgmma: 16, 32 or 64");
static_assert(ROWS <= NR, "at most NR rows of x");
static_assert(XQ == 1, "x a8");
static_assert(!GATED || PARTS == 2, "a gated pair alone");

#include "tma.cuh"

// ---- the stages

// Stage L (tile L / KTN, its K stage L % KTN) into slot st, counted on
// bar: its weights (which set the bytes the barrier waits for), or x.
DEV void issue(const Params &p, u32 st, u32 bar, long L, bool W)
{
    int kt = (int)(L % KTN);
    if (!W) {
        tma2d(st + S_XQ, map_of(p, 0), kt * KT, 0, bar);
        tma2d(st + S_XQ + XA, map_of(p, 0), kt * KT + 128, 0, bar);
        tma2d(st + S_XS, map_of(p, 1), kt * SLABS, 0, bar);
        return;
    }
    Unit tile = tile_of((u32)(L / KTN));
    int q = tile.part;
    mb_expect(bar, STAGE_BYTES);
    tma2d(st + S_WQ, map_of(p, 2 + 2 * q), kt * KT, tile.row, bar);
    tma2d(st + S_WQ + BW * 128, map_of(p, 2 + 2 * q), kt * KT + 128, tile.row, bar);
    tma2d(st + S_WS, map_of(p, 3 + 2 * q), kt * SLABS, tile.row, bar);
    if (GATED) {   // the up rows beside the gate rows
        tma2d(st + S_WQ + BP * 128, map_of(p, 4), kt * KT, tile.row, bar);
        tma2d(st + S_WQ + BW * 128 + BP * 128, map_of(p, 4), kt * KT + 128, tile.row, bar);
        tma2d(st + S_WS + BP * 16, map_of(p, 5), kt * SLABS, tile.row, bar);
    }
}

// ---- wgmma

#define R8(i) "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]), "+r"(d[i + 6]), "+r"(d[i + 7])
#define D8 "%0,%1,%2,%3,%4,%5,%6,%7"
#define D16 D8 ",%8,%9,%10,%11,%12,%13,%14,%15"
#define D32 D16 ",%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"

// d (the warpgroup's 64 weight rows x its NH rows of x, int32) = a (64 x
// 32 int8) b (32 x NH int8): one slab's sums, fresh
DEV void wgmma_s8(int *d, u64 da, u64 db)
{
    if constexpr (NH == 32)
        asm volatile("wgmma.mma_async.sync.aligned.m64n32k32.s32.s8.s8 {" D16 "}, %16, %17, 0;\n"
                     : R8(0), R8(8)
                     : "l"(da), "l"(db));
    else if constexpr (NH == 16)
        asm volatile("wgmma.mma_async.sync.aligned.m64n16k32.s32.s8.s8 {" D8 "}, %8, %9, 0;\n"
                     : R8(0)
                     : "l"(da), "l"(db));
    else
        asm volatile("wgmma.mma_async.sync.aligned.m64n8k32.s32.s8.s8 {%0,%1,%2,%3}, %4, %5, 0;\n"
                     : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
                     : "l"(da), "l"(db));
}

// A slab's sums d into the f32 sums: the weight rows' scale w0 (row g of
// the warp's 16) and w1 (row g + 8); xs[c] x's scales of the rows 8 c + 2
// tq and + 1 of the warpgroup's NH (.x: this slab's; the caller passes the
// pair it loaded).
DEV void scale_in(float *acc, const int *d, float w0, float w1, const float2 *xs)
{
    float n0 = -MAGICF * w0, n1 = -MAGICF * w1;
#pragma unroll
    for (int c = 0; c < NH / 8; c++)
#pragma unroll
        for (int k = 0; k < 4; k++) {
            float v = fmaf(__int_as_float(d[4 * c + k] + MAGIC), k < 2 ? w0 : w1, k < 2 ? n0 : n1);
            acc[4 * c + k] = fmaf(v, k & 1 ? xs[c].y : xs[c].x, acc[4 * c + k]);
        }
}

// x's scales of slabs s and s + 1 (a pair: .x and .y) for this thread's
// rows 8 c + 2 tq (xa) and + 1 (xb), from the stage's NR x 8 floats.
DEV void scales_x(const float *xs, int s, float2 *xa, float2 *xb)
{
    int t0 = (threadIdx.x >> 8) * NH + 2 * (threadIdx.x & 3);   // the warpgroup's half of x's rows
#pragma unroll
    for (int c = 0; c < NH / 8; c++) {
        xa[c] = *(const float2 *)(xs + (t0 + 8 * c) * SLABS + s);
        xb[c] = *(const float2 *)(xs + (t0 + 8 * c + 1) * SLABS + s);
    }
}

// The weight rows' scale of slab s (0 .. 7 of the stage) among the 8 f16 of w.
DEV float w_scale(uint4 w, int s)
{
    u32 word = s < 2 ? w.x : s < 4 ? w.y : s < 6 ? w.z : w.w;
    return h2f((u16)(s & 1 ? word >> 16 : word & 0xFFFF));
}

// One stage in slot st (its shared address sa): each slab's wgmma, and
// the slab before's sums scaled in while it runs.
DEV void stage(float *acc, int *d0, int *d1, const char *st, u32 sa)
{
    int wr = (threadIdx.x >> 7) & 1, wc = threadIdx.x >> 8;   // the warpgroup's weight rows (64 wr ..) and x's rows (NH wc ..)
    int r = wr * 64 + ((threadIdx.x >> 5) & 3) * 16 + ((threadIdx.x & 31) >> 2);
    uint4 w0 = *(const uint4 *)(st + S_WS + r * 16), w1 = *(const uint4 *)(st + S_WS + (r + 8) * 16);
    const float *xs = (const float *)(st + S_XS);
    float2 xa[NH / 8], xb[NH / 8], sx[NH / 8];
    u32 a = sa + S_WQ + wr * 64 * 128, b = sa + S_XQ + wc * NH * 128;
#pragma unroll
    for (int s = 0; s <= SLABS; s++) {
        if (s < SLABS) {
            wg_fence();
            wgmma_s8(s & 1 ? d1 : d0, desc(a + (s >> 2) * BW * 128 + 32 * (s & 3)),
                     desc(b + (s >> 2) * XA + 32 * (s & 3)));
            wg_commit();
        }
        if (s == 0)
            continue;
        int e = s - 1;   // the slab whose sums are done
        if (s < SLABS)
            wg_wait<1>();
        else
            wg_wait<0>();
        if (!(e & 1))
            scales_x(xs, e, xa, xb);
#pragma unroll
        for (int c = 0; c < NH / 8; c++)
            sx[c] = e & 1 ? make_float2(xa[c].y, xb[c].y) : make_float2(xa[c].x, xb[c].x);
        scale_in(acc, e & 1 ? d1 : d0, w_scale(w0, e), w_scale(w1, e), sx);
    }
}

// ---- the epilogue

// The tile's sums through the epilogue: a warp a (row of x, 32 columns), a
// unit a lane, FU of its (row, columns) at a time, their loads (residual,
// bias, gate) issued together before any is used; part 0's blocks
// quantized whole under OQ (a tile starts at a multiple of 64 rows of its
// part, and N_0 is whole blocks under OQ).
constexpr int FU = 4;
DEV void finish(const Params &p, Unit tile, int rows, const float *e)
{
    constexpr int IT = NR * (BP / 32), WARPS = THREADS / 32;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    long n = rows_in(tile.part);
    for (int i0 = w; i0 < IT; i0 += FU * WARPS) {
        Pre pre[FU];
#pragma unroll
        for (int u = 0; u < FU; u++) {
            int i = i0 + u * WARPS, t = i / (BP / 32), c = i % (BP / 32) * 32 + lane;
            pre[u] = Pre{0.0f, 0.0f, 0.0f, 0.0f};
            if (i < IT && t < rows && tile.row + c < n)
                pre[u] = epilogue_loads(p, Unit{tile.part, tile.row + c}, t);
        }
#pragma unroll
        for (int u = 0; u < FU; u++) {
            int i = i0 + u * WARPS, t = i / (BP / 32), j = i % (BP / 32), c = j * 32 + lane;
            if (i >= IT || t >= rows || tile.row + j * 32 >= n)
                continue;
            float v = 0.0f;
            if (tile.row + c < n)
                v = epilogue_with(p, Unit{tile.part, tile.row + c}, t, e[t * EP + c], GATED ? e[t * EP + c + BP] : 0.0f,
                                  pre[u]);
            if (OQ && tile.part == 0)
                warp_quant(v, p.a[Y_AT], (long)ROWS * N0, ((long)t * N0 + tile.row + j * 32) / 32, OQ);
        }
    }
}

// The block of stage L: blocks b take stages S b / G .. S (b + 1) / G.
DEV long owner(long L, long S)
{
    return ((L + 1) * gridDim.x + S - 1) / S - 1;
}

// A tile whose K two or more blocks took (blocks b0 .. b1, stream-K): the
// blocks after its first give their sums (give: into place b of part,
// [128 weight rows][NR], the layout of the wgmma's sums, then a count on
// cnt[t]) as their runs begin, and the tile's first block, whose run ends
// inside the tile, takes them at its run's end (take: waits until all
// b1 - b0 have counted, adds each in block order to its own, sets the
// count back to 0): no block waits on another mid-run, and the sums are
// the same every run.
DEV float *place_of(const Params &p, long b)
{
    return (float *)p.a[PART_AT] + b * (long)(BW * NR);
}

// This thread's pairs of the sums (acc[a], acc[a + 1]: weight row m of
// the tile, x's rows x and x + 1; j = m NR + x, their place in a part),
// the wgmma's layout.
#define FOR_PAIRS(body)                                                                                              \
    _Pragma("unroll") for (int c = 0; c < NH / 8; c++) _Pragma("unroll") for (int h = 0; h < 2; h++)                \
    {                                                                                                                \
        int m = ((threadIdx.x >> 7) & 1) * 64 + ((threadIdx.x >> 5) & 3) * 16 + ((threadIdx.x & 31) >> 2) + h * 8; \
        int x = (threadIdx.x >> 8) * NH + 8 * c + 2 * (threadIdx.x & 3), j = m * NR + x, a = 4 * c + 2 * h;        \
        body;                                                                                                        \
    }

// The thread's sums into the sums' tile (x's row by the tile's weight rows).
DEV void sums_to(float *e, const float *acc)
{
    FOR_PAIRS((e[x * EP + m] = acc[a], e[(x + 1) * EP + m] = acc[a + 1]));
}

DEV void give(const Params &p, const float *acc, long t)
{
    float *mine = place_of(p, blockIdx.x);
    FOR_PAIRS(__stcg((float2 *)(mine + j), make_float2(acc[a], acc[a + 1])));
    __syncthreads();
    if (threadIdx.x == 0) {   // the block's stores (ordered by the barrier) before the count
        __threadfence();
        atomicAdd((int *)p.a[CNT_AT] + t, 1);
    }
}

DEV void take(const Params &p, float *acc, long t, long b1)
{
    volatile int *cnt = (volatile int *)p.a[CNT_AT] + t;
    if (threadIdx.x == 0) {
        while (*cnt < (int)(b1 - blockIdx.x))
            ;
        __threadfence();   // the parts' loads after the count's
        *cnt = 0;
    }
    __syncthreads();
    for (long b = blockIdx.x + 1; b <= b1; b++) {   // each block's part in turn, its loads all in flight at once
        const float *src = place_of(p, b);
        float2 v[NH / 4];
        FOR_PAIRS(v[2 * c + h] = __ldcg((const float2 *)(src + j)));
        FOR_PAIRS((acc[a] += v[2 * c + h].x, acc[a + 1] += v[2 * c + h].y));
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) mmi(const Params p)
{
    KERNEL_OPEN();
    extern __shared__ __align__(1024) char smraw[];
    u32 base = (smem_addr(smraw) + 1023) & ~1023u;
    char *sm = smraw + (base - smem_addr(smraw));
    float *e = (float *)(sm + E_AT);
    long S = (long)all_tiles() * KTN, lo = S * blockIdx.x / gridDim.x, hi = S * (blockIdx.x + 1) / gridDim.x;
    long n = hi - lo;
    if (threadIdx.x == 0) {   // the barriers, and the weights' first stages before the wait
        for (int s = 0; s < STAGES; s++)
            mb_init(base + BAR_AT + 8 * s, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < STAGES && s < n; s++)
            issue(p, base + s * SLOT, base + BAR_AT + 8 * s, lo + s, true);
    }
    pdl_wait();
    int rows = rows_of(p.a[5], ROWS);
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES && s < n; s++)
            issue(p, base + s * SLOT, base + BAR_AT + 8 * s, lo + s, false);
    __syncthreads();
    float acc[ND];
    int d0[ND], d1[ND];
#pragma unroll
    for (int i = 0; i < ND; i++)
        acc[i] = 0.0f;
    for (long i = 0; i < n; i++) {
        long L = lo + i, t = L / KTN, t0 = t * KTN;
        int s = (int)(i % STAGES);
        mb_wait(base + BAR_AT + 8 * s, (int)(i / STAGES) & 1);
        stage(acc, d0, d1, sm + s * SLOT, base + s * SLOT);
        __syncthreads();   // every warpgroup done with the slot
        if (threadIdx.x == 0 && i + STAGES < n) {
            issue(p, base + s * SLOT, base + BAR_AT + 8 * s, L + STAGES, true);
            issue(p, base + s * SLOT, base + BAR_AT + 8 * s, L + STAGES, false);
        }
        if (L - t0 < KTN - 1 && i < n - 1)
            continue;
        if (i == n - 1)
            pdl_launch();
        if (lo > t0) {   // the same in every thread: so are the barriers below
            give(p, acc, t);
        } else {
            if (hi < t0 + KTN)
                take(p, acc, t, owner(t0 + KTN - 1, S));
            sums_to(e, acc);
            __syncthreads();
            finish(p, tile_of((u32)t), rows, e);
            __syncthreads();   // the sums' tile free for the next
        }
#pragma unroll
        for (int k = 0; k < ND; k++)
            acc[k] = 0.0f;
    }
    if (n <= 0)
        pdl_launch();
}
