// mmh.cu — products of one activation by Q8_0 checkpoint rows for stacked
// rows on the tensor cores in f16 (wgmma, sm_90a), in up to four parts,
// with their epilogues: mma.cu's products by the other road issue 11 names,
// the weights dequantized to f16 tiles in shared memory (bench/wgh.cu's
// wgt, bench/NOTES.md run158: 1.6-1.9x mma.cu at the 8B's shapes).
//
//   a_p[t, o] = sum over k of f16(qx[t, k] f16(sx[t, k / 32]))
//                             * f16(Wq_p[o, k] sW_p[o, k / 32])    (f32 sums)
//   epilogue, in order:  + b_p[o]                      (bit p of BIAS)
//                        y_0 = act(a_0) * a_1          (GATE: 1 silu, 2 gelu_tanh)
//                        c * tanh(v / c)               (CAP = c > 0, part 0)
//                        sigmoid(gs[t]) * v            (GS, part 0)
//                        r_p[t, o] + v                 (bit p of RES)
//   y_p[t, o] = v  (y_0 in format OQ: 32-value blocks quantized as warp_quant)
//
// The activation comes quantized (a8: XIN 1): its int8 values times their
// block's scale are what mma.cu multiplies exactly; here each is rounded
// to f16 (and the scale first), and so is each weight: some 1e-4 of
// relative error a sum, where the a8 quantization itself is ~1e-2. Or it
// comes so rounded already (a8h: XIN 3, its producer's warp_quant wrote
// each f16(q f16(d))), the same values, taken by TMA as they are.
// Shapes: x (rows, K) a8 or a8h, rows = n or ROWS; W_p (N_p, K) Q8_0; y_p, r_p
// (rows, N_p); b_p (N_p). K is whole 256-value blocks (the scales' rows
// whole 16-byte boxes). Under GATE there are two parts, the gate and up of
// one hidden width (N_0 = N_1), and y_1 is unused.
// The parameters are mma's, in its order, less nw (no norm prologue); after
// them the lane puts the launch's tensor maps (parameter 19: 128 bytes
// each, in device memory, encoded once the plan's buffers are placed):
// x's quants (box 64 x 128 rows) and scales (box 4 x 128; a8h: its f16
// values, box 64 x 128 in the 128-byte swizzle, and no scales), then each
// part's quants (box 64 x BP rows) and scales (box 8 x BP), BP = BN (BN / 2
// under GATE).
// Launch: 256 threads (2 warpgroups of 64 rows), grid (rows / 128, tiles,
// SK) rounded up: a tile is BP rows of one part (under GATE, BP gate rows
// and their BP up rows side by side), the parts' tiles end to end; under
// SK > 1 (2 or 4) K's stages are split over the SK blocks along z, a
// cluster (1, 1, SK) whose rank 0 gathers their sums through the cluster's
// shared memory before the epilogue (mma.cu's splits). Under TAIL > 0 the
// last TAIL tiles (in the order the blocks go: x, then y) each go to two
// blocks of half K, the grid's y grown by enough rows of blocks for the
// second halves; each half leaves its sums in part, and the second to
// finish adds the first's and runs the epilogue (cnt: a count a tail tile,
// set back to 0 by the second). K goes 64
// values a stage through a ring of STAGES (TMA, thread 0 filling a stage
// once both warpgroups' wgmmas two stages back are done, an mbarrier a
// stage for its bytes); each stage is dequantized by the 256 threads into
// one of two f16 tiles of x and of W (the 128-byte swizzle's layout: 16-byte
// chunk c of row r at c ^ (r % 8); an a8h x is in it in its slot, as TMA
// wrote it, and only W is dequantized) while the wgmmas of the stage before
// run, then each warpgroup's wgmma m64nBNk16 takes its 64 rows by the BN
// weight rows (f32 accumulate over all of K). The weights' first stages
// are asked for before the launch before is waited for.
// Shared memory: the ring (STAGES slots of x's 8 KB and 2 KB of scales, or
// an a8h x's 16 KB, W's BN x 64 bytes and BN x 16 of scales), the f16
// tiles (2 x 16 KB of x, none for a8h, 2 x BN x 128 bytes of W), the mbarriers; the epilogue's 128 x (BN + 1) floats
// over the ring and the tiles; plus 1 KB to align to 1024. A block whose
// rows all lie past the run's (a short last chunk) lets its first stages
// land and leaves.
//
// TM 256 (x a8h, BN 128) turns the roles over: the weights are wgmma's A,
// each thread dequantizing its fragments (its 2 rows' 16 values a stage)
// straight from the ring into registers, and x's 256 rows of the tile are
// B, read in their slot as TMA wrote them: no f16 tiles, one
// __syncthreads a stage, each stage's wgmmas (m64n256k16, a warpgroup's
// 64 weight rows by the 256 rows) waited for before the next stage's
// fragments are made, whose words are loaded while they run. W's quants
// come by TMA in the 64-byte swizzle (chunk c of row r at c ^ (r / 2 %
// 4)), so that a warp's 32-bit loads of 8 rows meet no bank twice; x's
// box is 64 x 256. Grid (rows / 256, tiles, SK), a ring of 5 stages of
// 32 + 8 + 2 KB, the sums' 256 x 129 floats over it. Bench/NOTES.md run173:
// fewer bytes of shared memory a product, but not fewer from the L2, the
// wall: a win only where the tiles fill the chip unsplit (the lane's
// rule).
//
// TM 64 (x resident, XR: at most 64 rows of x a8h, BN 128, no TAIL) keeps
// TM 256's roles for a decode batch, whose 64 rows of f16 x are as many
// bytes from the L2 as the int8 weight tile they multiply: a cluster of SK
// blocks (1 to 16) along z takes one tile at a time, block z holding x's
// rows for its KPER stages of K (K / SK values, 256 to 1024: an 8 KB atom
// of 64 rows x 64 values and an mbarrier each, by TMA in the 128-byte
// swizzle, loaded once) in shared memory for every tile it takes; the CY
// clusters (the grid's y) take tiles y, y + CY, ...; W streams through the
// ring of 5 stages (10 KB: W alone) from tile to tile; each stage's
// wgmmas m64n64k16 (a warpgroup's 64 weight rows by x's 64 rows); at each
// tile's end the blocks' sums go to the sums' tile (64 x 129 floats, its
// own place past the atoms) and meet at rank 0 (gather_splits), whose
// epilogue is the one above. Launch: grid (1, CY, SK), a cluster (1, 1,
// SK). Not yet run on a GPU (bench/NOTES.md run181).

constexpr int KT = 64, THREADS = 256;
constexpr int Y_AT = 6, B_AT = 10, R_AT = 14, GS_AT = 18, PART_AT = 19, CNT_AT = 20, MAPS_AT = 21;
#include "parts.cuh"
constexpr bool WA = TM > 0;                         // W as wgmma's A, dequantized in registers; x's TM rows as B
constexpr bool XR = TM == 64;                       // x resident: a block keeps its split's x, looping over tiles
constexpr int BM = WA ? TM : 128;                   // activation rows a tile
constexpr int BP = GATED ? BN / 2 : BN;             // a part's rows a tile
constexpr int DN = WA ? TM : BN;                    // the columns of a warpgroup's sums (64 rows of them)
constexpr int STAGES = WA ? 5 : BN == 256 ? 4 : 6;
constexpr bool XH = XIN == 3;                       // x arrives a8h: f16, swizzled by TMA, read in its slot
constexpr int XB = XR ? 0 : XH ? BM * KT * 2 : BM * KT, XSB = XH ? 0 : BM * 16;   // a stage's x, its scales
constexpr int S_XQ = 0, S_XS = XB, S_WQ = S_XS + XSB, S_WS = S_WQ + BN * KT;
constexpr int SLOT = (S_WS + BN * 16 + 1023) / 1024 * 1024;
constexpr int A16 = XH ? 0 : BM * KT * 2, B16 = WA ? 0 : BN * KT * 2;
constexpr int KTILES = K / KT;
constexpr int KPER = KTILES / SK;                   // stages of K a split (SK divides them)
constexpr int KHALF = KTILES / 2;                   // a tail tile's half (TAIL)
constexpr int XA = BM * KT * 2;                     // under XR: an atom of x, 64 values of its 64 rows
constexpr int XR_AT = STAGES * SLOT, NXA = XR ? KPER : 0;
constexpr int X16_AT = XR_AT + NXA * XA, W16_AT = X16_AT + 2 * A16, BAR_AT = W16_AT + 2 * B16;
constexpr int XBAR_AT = BAR_AT + 8 * STAGES;        // under XR: an mbarrier an atom of x
constexpr int EP = BN + 1;                          // floats a row of the sums' tile
constexpr int E_AT = XR ? (XBAR_AT + 8 * NXA + 15) / 16 * 16 : 0;   // the sums' tile: its own under XR, else over the ring
constexpr unsigned STAGE_BYTES = XB + XSB + BN * KT + BN * 16;
static_assert(K % 256 == 0, "K whole 256-value blocks");
static_assert(XIN == 1 || XIN == 3, "x a8 or a8h");
static_assert(KTILES % SK == 0, "whole stages a split");
static_assert(!TAIL || SK == 1, "a tail split, or clusters, not both");
static_assert(BN == 128 || BN == 256, "a tile is 128 or 256 weight rows");
static_assert(!WA || ((TM == 256 || TM == 64) && XH && BN == 128), "W in registers: tiles of 256 or 64 rows of x a8h, 128 weight rows");
static_assert(!XR || (KPER % 4 == 0 && KPER <= 16 && !TAIL), "x resident: its split whole scale boxes, at most 1024 values");
static_assert(XR || BM * EP * 4 <= BAR_AT, "the sums' tile fits over the ring and the f16 tiles");
static_assert(!GATED || PARTS == 2, "a gated pair alone");

#include "tma.cuh"

// Stage kt's weights (W is true) or activations into the slot of the
// block's i-th stage, both counted on its barrier (the weights' call sets
// the bytes it waits for).
DEV void issue(const Params &p, u32 base, int i, int kt, Unit tile, int m0, bool W)
{
    u32 st = base + (i % STAGES) * SLOT, bar = base + BAR_AT + 8 * (i % STAGES);
    if (W) {
        mb_expect(bar, STAGE_BYTES);
        int q = tile.part;
        tma2d(st + S_WQ, map_of(p, 2 + 2 * q), kt * KT, tile.row, bar);
        tma2d(st + S_WS, map_of(p, 3 + 2 * q), kt / 4 * 8, tile.row, bar);   // 8 slabs: 4 stages' scales
        if (GATED) {   // the up rows beside the gate rows
            tma2d(st + S_WQ + BP * KT, map_of(p, 4), kt * KT, tile.row, bar);
            tma2d(st + S_WS + BP * 16, map_of(p, 5), kt / 4 * 8, tile.row, bar);
        }
    } else {
        tma2d(st + S_XQ, map_of(p, 0), kt * KT, m0, bar);
        if (!XH)
            tma2d(st + S_XS, map_of(p, 1), kt / 2 * 4, m0, bar);   // 4 slabs: 2 stages' scales
    }
}

// ---- f16 arithmetic (PTX: no toolkit header)

DEV u32 prmt(u32 a, u32 b, u32 sel)
{
    u32 d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}

DEV u32 hsub2(u32 a, u32 b)
{
    u32 d;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

DEV u32 hmul2(u32 a, u32 b)
{
    u32 d;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}

// Four int8 of a word times d2 (a scale in both halves) as two f16 pairs
// (values 0, 1 and 2, 3): the bytes as 1024 + (q + 128) in f16 (exact),
// less 1152, times the scale (one rounding).
DEV void deq4(u32 w, u32 d2, u32 &lo, u32 &hi)
{
    const u32 off = 0x64806480u;   // 1152, 1152
    u32 x = w ^ 0x80808080u;
    lo = hmul2(hsub2(prmt(x, 0x64646464u, 0x4140), off), d2);
    hi = hmul2(hsub2(prmt(x, 0x64646464u, 0x4342), off), d2);
}

// 16 int8 values (a 16-byte chunk) times d2 into the swizzled f16 tile t
// at row r, 16-value chunk c (two 16-byte f16 chunks).
DEV void deq16(const char *src, u32 d2, char *t, int r, int c)
{
    uint4 w = *(const uint4 *)src, o0, o1;
    deq4(w.x, d2, o0.x, o0.y);
    deq4(w.y, d2, o0.z, o0.w);
    deq4(w.z, d2, o1.x, o1.y);
    deq4(w.w, d2, o1.z, o1.w);
    *(uint4 *)(t + r * 128 + (((2 * c) ^ (r & 7)) << 4)) = o0;
    *(uint4 *)(t + r * 128 + (((2 * c + 1) ^ (r & 7)) << 4)) = o1;
}

// Slot st's int8 rows into the f16 tiles x16 and w16: a thread takes
// 16-value chunks (row e / 4, values 16 (e % 4) ..), x's (f32 scales,
// rounded to f16 first) and W's (f16 scales).
DEV void dequant(const char *st, char *x16, char *w16, int kt)
{
#pragma unroll
    for (int i = 0; i < (XH ? 0 : BM * 4 / THREADS); i++) {
        int e = threadIdx.x + i * THREADS, r = e / 4, c = e % 4;
        u32 d = f2h(((const float *)(st + S_XS))[r * 4 + (kt & 1) * 2 + c / 2]);
        deq16(st + S_XQ + r * KT + c * 16, d | d << 16, x16, r, c);
    }
#pragma unroll
    for (int i = 0; i < BN * 4 / THREADS; i++) {
        int e = threadIdx.x + i * THREADS, r = e / 4, c = e % 4;
        u32 d = ((const u16 *)(st + S_WS))[r * 8 + (kt & 3) * 2 + c / 2];
        deq16(st + S_WQ + r * KT + c * 16, d | d << 16, w16, r, c);
    }
}

// ---- wgmma

DEV void proxy_fence()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

#define F8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define F32X(i) F8(i), F8(i + 8), F8(i + 16), F8(i + 24)
#define F64(i) F32X(i), F32X(i + 32)

// The accumulators' operands of a wgmma of n64 (D32), n128 (D64) and n256 (D128)
#define D32 "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31"
#define D64                                                                                                    \
    D32 ",%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,"   \
    "%57,%58,%59,%60,%61,%62,%63"
#define D128                                                                                                   \
    D64 ",%64,%65,%66,%67,%68,%69,%70,%71,%72,%73,%74,%75,%76,%77,%78,%79,%80,%81,%82,%83,%84,%85,%86,%87,%88,"  \
    "%89,%90,%91,%92,%93,%94,%95,%96,%97,%98,%99,%100,%101,%102,%103,%104,%105,%106,%107,%108,%109,%110,%111,"   \
    "%112,%113,%114,%115,%116,%117,%118,%119,%120,%121,%122,%123,%124,%125,%126,%127"

// d (the warpgroup's 64 x BN, f32) += a (64 x 16 f16) b (16 x BN f16)
DEV void wgmma(float *d, u64 da, u64 db)
{
    if constexpr (BN == 256)
        asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" D128 "}, %128, %129, 1, 1, 1, 0, 0;\n"
                     : F64(0), F64(64)
                     : "l"(da), "l"(db));
    else
        asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {" D64 "}, %64, %65, 1, 1, 1, 0, 0;\n"
                     : F64(0)
                     : "l"(da), "l"(db));
}

// Under WA: d (the warpgroup's 64 weight rows x 256 activation rows, f32)
// += a (64 x 16 f16, the warpgroup's A fragment in registers: mma.m16n8k16's
// a0..a7 a warp) b (16 x 256 f16, x's rows in the slot)
DEV void wgmma_ra(float *d, const u32 *a, u64 db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {" D128 "}, {%128,%129,%130,%131}, %132, "
                 "1, 1, 1, 0;\n"
                 : F64(0), F64(64)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

// Under XR: d (the warpgroup's 64 weight rows x 64 activation rows, f32)
// += a (64 x 16 f16 in registers) b (16 x 64 f16, an atom of x)
DEV void wgmma_ra64(float *d, const u32 *a, u64 db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {" D32 "}, {%32,%33,%34,%35}, %36, 1, 1, 1, 0;\n"
                 : F32X(0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

// Under WA: stage kt's weights in slot st as this thread's A fragments,
// a[4 j ..] for the stage's k16 step j. Its rows r and r + 8 of the tile
// (r = 64 warpgroup + 16 warp + lane / 4), their values 2 (lane % 4) ..
// + 1 and + 8 .. + 9 of each step: bytes of the words h and h + 2 (h =
// lane % 4 / 2) of the step's 16-byte chunk, in the 64-byte swizzle (chunk
// c of row r at c ^ (r / 2 % 4): the 8 rows of a load on 8 banks' groups
// of 4). wa_fetch loads them (w) and their blocks' scales (sc: two f16 a
// row); wa_make dequantizes them, each pair with its block's scale.
DEV void wa_fetch(const char *st, int kt, u32 (&w)[16], u32 (&sc)[2])
{
    int lane = threadIdx.x & 31, h = (lane & 3) >> 1;
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
        int r = (threadIdx.x >> 5) * 16 + (lane >> 2) + rr * 8, sw = (r >> 1) & 3;
        const char *row = st + S_WQ + r * KT;
        sc[rr] = *(const u32 *)(st + S_WS + r * 16 + (kt & 3) * 4);   // the stage's two blocks' scales
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const char *c = row + ((j ^ sw) << 4) + 4 * h;
            w[8 * rr + 2 * j] = *(const u32 *)c;
            w[8 * rr + 2 * j + 1] = *(const u32 *)(c + 8);
        }
    }
}

DEV void wa_make(const u32 (&w)[16], const u32 (&sc)[2], u32 (&a)[16])
{
    u32 sel = threadIdx.x & 1 ? 0x7632u : 0x5410u;
#pragma unroll
    for (int rr = 0; rr < 2; rr++)
#pragma unroll
        for (int j = 0; j < 4; j++) {
            u32 d = j < 2 ? sc[rr] & 0xFFFFu : sc[rr] >> 16;
            deq4(prmt(w[8 * rr + 2 * j], w[8 * rr + 2 * j + 1], sel), d | d << 16, a[4 * j + rr], a[4 * j + 2 + rr]);
        }
#pragma unroll
    for (int j = 0; j < 16; j++)   // whole before the fence (the compiler would sink their arithmetic past it)
        asm volatile("" : "+r"(a[j])::"memory");
}

// Under WA, one stage: its fragments made from the words fetched (w, sc)
// while the stage before ran, its wgmmas issued on x's rows at b (in the
// slot; under XR an atom of x), the next stage's words fetched from slot
// next (of stage kt, once its mbarrier bar is past parity par; none where
// next is null) while they run, then they waited for (ptxas serializes the
// wgmmas where registers they read are written while any runs).
DEV void wa_step(float *d, u32 (&w)[16], u32 (&sc)[2], u32 b, const char *next, int kt, u32 bar, int par)
{
    u32 a[16];
    wa_make(w, sc, a);
    wg_fence();
#pragma unroll
    for (int j = 0; j < KT / 16; j++)
        if constexpr (XR)
            wgmma_ra64(d, a + 4 * j, desc(b + 32 * j));
        else
            wgmma_ra(d, a + 4 * j, desc(b + 32 * j));
    wg_commit();
    if (next) {
        mb_wait(bar, par);
        wa_fetch(next, kt, w, sc);
    }
    wg_wait<0>();
}

// Under WA (TM 256), K's stages (wa_step), each slot refilled once both
// warpgroups are done with it.
DEV void wa_stages(const Params &p, u32 base, const char *sm, int k0, int nk, Unit tile, int m0, float *d)
{
    u32 w[16], sc[2];
    mb_wait(base + BAR_AT, 0);
    wa_fetch(sm, k0, w, sc);
    for (int i = 0; i < nk; i++) {
        int n = (i + 1) % STAGES;
        wa_step(d, w, sc, base + i % STAGES * SLOT + S_XQ, i + 1 < nk ? sm + n * SLOT : nullptr, k0 + i + 1,
                base + BAR_AT + 8 * n, ((i + 1) / STAGES) & 1);
        __syncthreads();   // both warpgroups done with slot i % STAGES
        if (threadIdx.x == 0 && i + STAGES < nk) {
            issue(p, base, i + STAGES, k0 + i + STAGES, tile, m0, true);
            issue(p, base, i + STAGES, k0 + i + STAGES, tile, m0, false);
        }
    }
}

// K's stages (TM 0): each stage's W (and an a8 x) dequantized into the f16
// tiles of its parity while the wgmmas of the stage before run, the
// slot two stages back refilled once both warpgroups are done with it.
DEV void tile_stages(const Params &p, u32 base, char *sm, int k0, int nk, Unit tile, int m0, float *d)
{
    int wg = threadIdx.x >> 5 >> 2;
    for (int i = 0; i < nk; i++) {
        int s = i % STAGES, kt = k0 + i;
        mb_wait(base + BAR_AT + 8 * s, (i / STAGES) & 1);
        wg_wait<1>();      // this warpgroup's wgmmas of stage i - 2 done
        __syncthreads();   // and the other's: slot i - 2 and tiles i % 2 free
        if (threadIdx.x == 0 && i >= 2 && i - 2 + STAGES < nk) {
            issue(p, base, i - 2 + STAGES, kt - 2 + STAGES, tile, m0, true);
            issue(p, base, i - 2 + STAGES, kt - 2 + STAGES, tile, m0, false);
        }
        char *x16 = sm + X16_AT + (i & 1) * A16, *w16 = sm + W16_AT + (i & 1) * B16;
        dequant(sm + s * SLOT, x16, w16, kt);
        proxy_fence();
        __syncthreads();
        u32 a = (XH ? base + s * SLOT + S_XQ : smem_addr(x16)) + wg * 64 * 128, b = smem_addr(w16);
        wg_fence();
#pragma unroll
        for (int j = 0; j < KT / 16; j++)
            wgmma(d, desc(a + 32 * j), desc(b + 32 * j));
        wg_commit();
    }
}

// ---- the epilogue

// The tile's sums through the epilogue: a warp a (row, 32 columns), a
// unit a lane; part 0's blocks quantized whole under OQ (a tile starts at
// a multiple of 32 rows of its part, and N_0 is whole blocks under OQ).
DEV void finish(const Params &p, Unit tile, int m0, int rows, const float *e)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    long n = rows_in(tile.part);
    for (int i = w; i < BM * (BP / 32); i += THREADS / 32) {
        int r = i / (BP / 32), j = i % (BP / 32);
        long t = m0 + r, o = (long)tile.row + j * 32 + lane;
        if (t >= rows || tile.row + j * 32 >= n)
            continue;
        int c = j * 32 + lane, ok = o < n;
        float v = 0.0f;
        if (ok)
            v = epilogue(p, Unit{tile.part, (int)o}, t, e[r * EP + c], GATED ? e[r * EP + c + BP] : 0.0f);
        if (OQ && tile.part == 0)
            warp_quant(v, p.a[Y_AT], (long)ROWS * N0, (t * N0 + tile.row + j * 32) / 32, OQ);
    }
}

// Under TAIL the two halves of tail tile i meet: each leaves its sums at
// its place in part (2 TAIL places of BM x BN floats: tile i's halves at 2
// i and 2 i + 1); the first to finish stops (false), the second adds the
// other's to its own (a + b as b + a: the same sums whichever is first),
// sets the tile's count back to 0 for the next launch, and goes on to the
// epilogue (true).
DEV bool meet_halves(const Params &p, float *e, long i, int half)
{
    __shared__ int first;
    float *part = (float *)p.a[PART_AT] + 2 * i * BM * BN;
    int *cnt = (int *)p.a[CNT_AT];
    float *mine = part + half * BM * BN, *other = part + (1 - half) * BM * BN;
    for (int j = threadIdx.x; j < BM * BN; j += THREADS)
        __stcg(mine + j, e[(j / BN) * EP + j % BN]);
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        first = atomicAdd(cnt + i, 1) == 0;
    __syncthreads();
    if (first)
        return false;
    __threadfence();
    for (int j = threadIdx.x; j < BM * BN; j += THREADS)
        e[(j / BN) * EP + j % BN] += __ldcg(other + j);
    if (threadIdx.x == 0)
        cnt[i] = 0;
    __syncthreads();
    return true;
}

// A warpgroup's sums d into the sums' tile e: under WA d's rows are
// weight rows, its columns x's (e holds x's rows), else the other way.
DEV void sums_to(float *e, const float *d)
{
    int wg = threadIdx.x >> 5 >> 2, w = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int n = 0; n < DN / 8; n++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            int m = wg * 64 + w * 16 + g + (i >> 1) * 8, c = n * 8 + 2 * tq + (i & 1);   // d's row, column
            e[WA ? c * EP + m : m * EP + c] = d[n * 4 + i];
        }
}

// ---- x resident (XR: TM 64)

// The block's i-th stage under XR: tile y + C (i / KPER), its stage z
// KPER + i % KPER.
DEV void xr_issue(const Params &p, u32 base, long i)
{
    Unit tile = tile_of((u32)(blockIdx.y + gridDim.y * (i / KPER)));
    issue(p, base, (int)(i % STAGES), (int)(blockIdx.z * KPER + i % KPER), tile, 0, true);
}

// Under XR a cluster of SK blocks along z takes a tile at a time, tiles
// y, y + C, ... (C clusters, the grid's y); block z keeps x's 64 rows of
// its split (KPER stages, an atom and an mbarrier each) in shared memory
// for all of them, and its ring of weight stages runs on from tile to
// tile. At each tile's end the split's sums meet at rank 0 (gather_splits)
// and go through the epilogue there.
DEV void xr_tiles(const Params &p, u32 base, char *sm)
{
    long mine = ((long)all_tiles() - (long)blockIdx.y + gridDim.y - 1) / gridDim.y, n = mine * KPER;
    if (threadIdx.x == 0) {   // the barriers, and the weights' first stages before the wait
        for (int s = 0; s < STAGES + NXA; s++)
            mb_init(base + BAR_AT + 8 * s, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int i = 0; i < STAGES && i < n; i++)
            xr_issue(p, base, i);
    }
    pdl_wait();
    int rows = rows_of(p.a[5], ROWS);
    if (threadIdx.x == 0)
        for (int a = 0; a < NXA; a++) {
            mb_expect(base + XBAR_AT + 8 * a, XA);
            tma2d(base + XR_AT + a * XA, map_of(p, 0), (int)(blockIdx.z * KPER + a) * KT, 0, base + XBAR_AT + 8 * a);
        }
    __syncthreads();
    float d[32], *e = (float *)(sm + E_AT);
    u32 w[16], sc[2];
#pragma unroll
    for (int i = 0; i < 32; i++)
        d[i] = 0.0f;
    if (n > 0) {
        mb_wait(base + BAR_AT, 0);
        wa_fetch(sm, blockIdx.z * KPER, w, sc);
    } else
        pdl_launch();
    for (long i = 0; i < n; i++) {
        int j = (int)(i % KPER), s = (int)((i + 1) % STAGES);
        mb_wait(base + XBAR_AT + 8 * j, 0);
        wa_step(d, w, sc, base + XR_AT + j * XA, i + 1 < n ? sm + s * SLOT : nullptr,
                (int)(blockIdx.z * KPER + (i + 1) % KPER), base + BAR_AT + 8 * s, (int)((i + 1) / STAGES) & 1);
        __syncthreads();   // both warpgroups done with the slot
        if (threadIdx.x == 0 && i + STAGES < n)
            xr_issue(p, base, i + STAGES);
        if (j < KPER - 1)
            continue;
        if (i == n - 1)
            pdl_launch();
        sums_to(e, d);
#pragma unroll
        for (int k = 0; k < 32; k++)
            d[k] = 0.0f;
        __syncthreads();
        if (SK == 1 || gather_splits(e, BM * EP, SK))
            finish(p, tile_of((u32)(blockIdx.y + gridDim.y * (i / KPER))), 0, rows, e);
        __syncthreads();   // the sums' tile free for the next
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) mmh(const Params p)
{
    KERNEL_OPEN();
    extern __shared__ __align__(1024) char smraw[];
    u32 base = (smem_addr(smraw) + 1023) & ~1023u;
    char *sm = smraw + (base - smem_addr(smraw));
    if constexpr (XR) {
        xr_tiles(p, base, sm);
        return;
    }
    // this block's tile and stages of K, k0 .. k0 + nk: a split of SK; or
    // under TAIL, in the order the blocks go (x, then y), the whole tiles,
    // the tail tiles' first halves, then their second halves (blocks past
    // those idle)
    long all = (long)gridDim.x * all_tiles(), lin = (long)blockIdx.y * gridDim.x + blockIdx.x, tail = -1;
    int half = 0;
    if (TAIL && lin >= all) {
        if (lin >= all + TAIL) {
            pdl_launch();
            return;
        }
        lin -= TAIL, half = 1;
    }
    if (TAIL && lin >= all - TAIL)
        tail = lin - (all - TAIL);
    Unit tile = tile_of((u32)(lin / gridDim.x));
    int m0 = (int)(lin % gridDim.x) * BM;
    int k0 = tail >= 0 ? half * KHALF : blockIdx.z * KPER, nk = tail >= 0 ? KHALF : KPER;
    if (threadIdx.x == 0) {   // the barriers, and the weights' first stages before the wait
        for (int s = 0; s < STAGES; s++)
            mb_init(base + BAR_AT + 8 * s, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < STAGES && s < nk; s++)
            issue(p, base, s, k0 + s, tile, m0, true);
    }
    pdl_wait();
    int rows = rows_of(p.a[5], ROWS);
    if (threadIdx.x == 0)
        for (int s = 0; s < STAGES && s < nk; s++)
            issue(p, base, s, k0 + s, tile, m0, false);
    __syncthreads();
    if (m0 >= rows) {   // nothing to compute (the whole cluster, both halves): the copies in flight land first
        for (int s = 0; s < STAGES && s < nk; s++)
            mb_wait(base + BAR_AT + 8 * s, 0);
        pdl_launch();
        return;
    }
    float d[DN / 2];
#pragma unroll
    for (int i = 0; i < DN / 2; i++)
        d[i] = 0.0f;
    if constexpr (TM == 256)
        wa_stages(p, base, sm, k0, nk, tile, m0, d);
    else if constexpr (TM == 0)
        tile_stages(p, base, sm, k0, nk, tile, m0, d);
    wg_wait<0>();
    // The next launch only now (as mma.cu: begun early, its blocks would
    // wait beside these for all of K).
    pdl_launch();
    __syncthreads();   // every warpgroup done with the ring: the sums' tile goes over it
    float *e = (float *)sm;
    sums_to(e, d);
    __syncthreads();
    if (SK > 1 && !gather_splits(e, BM * EP, SK))
        return;
    if (TAIL && tail >= 0 && !meet_halves(p, e, tail, half))
        return;
    finish(p, tile, m0, rows, e);
}
