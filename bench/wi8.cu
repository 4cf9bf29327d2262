// wi8.cu — probe: Q8_0 products of 64 stacked rows (issue 11's decode
// batch of 64) on wgmma in int8, the order bench/NOTES.md's "After run184"
// left untried. Can the int8 tensor cores, with the per-32 scales applied
// to each slab's int32 sums, stream the weights near the read ceiling
// where mmv (mma.sync, 1.1 TB/s) and the f16 orders (wr64, mmh TM 64:
// ~1.3 TB/s) did not? Not part of the build.
//
//   y[m, n] = sum over 32-value slabs j of
//             (sum_k x[m, k] q[n, k] over the slab) d[n, j] s[j, m]
//   x (64, K) int8, s (K / 32, 64) f32 (the a8 activation: quants and
//   scales, the scales slab-major); q (N, K) int8, d (N, K / 32) f16
//   (Q8_0); y (64, N) f32.
//
// Both operands stay int8 in shared memory, as TMA wrote them in the
// 128-byte swizzle: a warpgroup's wgmma m64n64k32.s32.s8.s8 takes 64
// weight rows (A) by x's 64 rows (B) for one 32-value slab, its int32
// sums fresh (scale-d 0) into one of two register sets while the
// warpgroup turns the other set's sums into its f32 accumulators:
//   v = (2^23 + 2^22 + dot as a float's bits) d - (2^23 + 2^22) d   (exact)
//   acc += v s
// (an integer add and two fma an output a slab: mma.cu's trick, the
// magic added by the add since wgmma's accumulator cannot start from it).
// Per multiprocessor a 64-value stage of 128 weight rows (8.5 KB) costs
// ~416 issue cycles of these, against ~438 cycles of its share of a 4.5
// TB/s read ceiling and 128 of the tensor cores.
//
// Order (wr64's stream-K): K is cut in slices of KS values; a block keeps
// its slice of x (64 x KS int8 in 128-value atoms, and the slice's scales)
// in shared memory for every weight tile of the slice; the stages (slice,
// tile of 128 weight rows, 256 values of K) are cut into one even run a
// block, a block a multiprocessor; each tile's part is added into y by
// red.global.add (ATOM 1) or not written (ATOM 0: the stages alone, sums
// wrong). A stage: two TMA boxes of 128 rows x 128 bytes and one of the
// rows' 8 scales, in a ring of STAGES.
//
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -DKS=1024 -DATOM=1 \
//        -Xptxas -v -o /tmp/wi8 bench/wi8.cu && /tmp/wi8 28672 4096
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cmath>
#include <vector>
#include <algorithm>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#define PROBE "wi8"
#include "probe.cuh"

#ifndef KS
#define KS 1024
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef ATOM
#define ATOM 1
#endif
#ifndef XS
#define XS 0   // 1: x streamed with each stage (tile-major), not resident
#endif
constexpr int M = 64, KT = 256, THREADS = 256, BNW = 128, SLABS = KT / 32;
constexpr int NA = XS ? 1 : KS / KT;                 // stages a slice (XS: a stage's own x)
constexpr int XATOMS = XS ? 0 : KS / 128, XA = M * 128;   // x's 128-value atoms of a slice, 8 KB each
constexpr int XS_AT = XATOMS * XA, XSB = XS ? 0 : KS / 32 * M * 4;   // the slice's scales, slab-major
constexpr int S_WQ = 0, S_WS = 2 * BNW * 128, S_XQ = (S_WS + BNW * 16 + 1023) / 1024 * 1024, S_XS = S_XQ + 2 * XA;
constexpr int SLOT = ((XS ? S_XS + SLABS * M * 4 : S_WS + BNW * 16) + 1023) / 1024 * 1024;
constexpr int RING_AT = (XS_AT + XSB + 1023) / 1024 * 1024, BAR_AT = RING_AT + STAGES * SLOT;
constexpr int XBAR_AT = BAR_AT + 8 * STAGES;
constexpr int SMEM = XBAR_AT + 8 + 1024;
constexpr u32 WBYTES = 2 * BNW * 128 + BNW * 16 + (XS ? 2 * XA + SLABS * M * 4 : 0);
static_assert(SMEM <= 227 * 1024, "shared memory");
static_assert(KS % KT == 0, "a slice whole stages");


struct P {
    CUtensorMap x, q, d;
    const float *s;
    float *y;
    int N, K;
};

#define R8(i) "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]), "+r"(d[i + 6]), "+r"(d[i + 7])
// d (64 weight rows x 64 activation rows, int32) = a (64 x 32 int8) b (32 x 64 int8), fresh
__device__ __forceinline__ void wgmma_s8(int *d, u64 da, u64 db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,"
                 "%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, %32, %33, 0;\n"
                 : R8(0), R8(8), R8(16), R8(24)
                 : "l"(da), "l"(db));
}

// acc += the slab's sums d times the weight rows' scales w (rows g, g + 8) and x's
// rows' scales (xs: the slab's 64, this thread's columns 8 c + 2 tq, + 1)
__device__ __forceinline__ void scale_in(float *acc, const int *d, float w0, float w1, const float *xs)
{
    const float mg = 12582912.0f;   // 2^23 + 2^22
    float n0 = -mg * w0, n1 = -mg * w1;
    int tq = threadIdx.x & 3;
#pragma unroll
    for (int c = 0; c < 8; c++) {
        float2 s = *(const float2 *)(xs + 8 * c + 2 * tq);
#pragma unroll
        for (int k = 0; k < 4; k++) {
            float w = k < 2 ? w0 : w1, n = k < 2 ? n0 : n1, sx = k & 1 ? s.y : s.x;
            float v = fmaf(__int_as_float(d[4 * c + k] + 0x4B400000), w, n);
            acc[4 * c + k] = fmaf(v, sx, acc[4 * c + k]);
        }
    }
}

struct Pos {
    int s, t, j;   // slice, tile, stage of the tile's slice
};

// stage L of all: slice-major (slice, tile, stage of the slice), or under
// XS tile-major (tile, K stage: a slice a stage)
__device__ __forceinline__ Pos pos_of(long L, int T, int KTN)
{
    if (XS)
        return Pos{(int)(L % KTN), (int)(L / KTN), 0};
    long item = L / NA;
    return Pos{(int)(item / T), (int)(item % T), (int)(L % NA)};
}

// the block's i-th stage, stage L of all
__device__ void issue_w(const P &p, u32 base, long i, long L, int T)
{
    Pos q = pos_of(L, T, p.K / KT);
    int kt = q.s * NA + q.j;
    u32 st = base + RING_AT + (u32)(i % STAGES) * SLOT, bar = base + BAR_AT + 8 * (u32)(i % STAGES);
    mb_expect(bar, WBYTES);
    tma2d(st + S_WQ, &p.q, kt * KT, q.t * BNW, bar);
    tma2d(st + S_WQ + BNW * 128, &p.q, kt * KT + 128, q.t * BNW, bar);
    tma2d(st + S_WS, &p.d, kt * SLABS, q.t * BNW, bar);
    if (XS) {   // the stage's x and its scales
        tma2d(st + S_XQ, &p.x, kt * KT, 0, bar);
        tma2d(st + S_XQ + XA, &p.x, kt * KT + 128, 0, bar);
        bulk(st + S_XS, p.s + (long)kt * SLABS * M, SLABS * M * 4, bar);
    }
}

// slice s of x and its scales
__device__ void issue_x(const P &p, u32 base, int s)
{
    u32 bar = base + XBAR_AT;
    mb_expect(bar, XATOMS * XA + XSB);
    for (int a = 0; a < XATOMS; a++)
        tma2d(base + a * XA, &p.x, s * KS + a * 128, 0, bar);
    bulk(base + XS_AT, p.s + (long)s * (KS / 32) * M, XSB, bar);
}

// the warpgroup's sums of tile t into y
__device__ void flush(const P &p, int t, const float *acc)
{
    int w = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int c = 0; c < 8; c++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            long o = (long)t * BNW + wg * 64 + w * 16 + g + h * 8;   // the weight row
            int m = c * 8 + 2 * tq;                                  // x's rows m, m + 1
            float v0 = acc[c * 4 + 2 * h], v1 = acc[c * 4 + 2 * h + 1];
            if (ATOM == 1) {
                asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p.y + (long)m * p.N + o), "f"(v0) : "memory");
                asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p.y + (long)(m + 1) * p.N + o), "f"(v1) : "memory");
            }
        }
    if (ATOM == 0) {   // the sums made, hardly any bytes written
        float t = 0.0f;
#pragma unroll
        for (int k = 0; k < 32; k++)
            t += acc[k];
        if (t == 1.2345f)
            p.y[threadIdx.x] = t;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) wi8(const __grid_constant__ P p)
{
    extern __shared__ __align__(1024) char smraw[];
    u32 base = (saddr(smraw) + 1023) & ~1023u;
    char *sm = smraw + (base - saddr(smraw));
    int T = p.N / BNW;
    long S = XS ? (long)(p.K / KT) * T : (long)(p.K / KS) * T * NA, lo = S * blockIdx.x / gridDim.x, hi = S * (blockIdx.x + 1) / gridDim.x;
    if (lo >= hi)
        return;
    if (threadIdx.x == 0) {
        for (int s = 0; s <= STAGES; s++)   // XBAR_AT follows the ring's
            mb_init(base + BAR_AT + 8 * s, 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int i = 0; i < STAGES && lo + i < hi; i++)
            issue_w(p, base, i, lo + i, T);
        if (!XS)
            issue_x(p, base, pos_of(lo, T, p.K / KT).s);
    }
    __syncthreads();
    float acc[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        acc[i] = 0.0f;
    int d0[32], d1[32];
    int wg = threadIdx.x >> 7, row = wg * 64 + ((threadIdx.x >> 5) & 3) * 16 + ((threadIdx.x & 31) >> 2);
    int xpar = 0;
    Pos q = pos_of(lo, T, p.K / KT);
    for (long i = 0; lo + i < hi; i++) {
        long L = lo + i;
        int slot = (int)(i % STAGES);
        if (!XS)
            mb_wait(base + XBAR_AT, xpar);
        mb_wait(base + BAR_AT + 8 * slot, (int)(i / STAGES) & 1);
        const char *st = sm + RING_AT + slot * SLOT;
        u32 sta = base + RING_AT + slot * SLOT;
        uint4 wr0 = *(const uint4 *)(st + S_WS + row * 16), wr1 = *(const uint4 *)(st + S_WS + (row + 8) * 16);
        const __half *h0 = (const __half *)&wr0, *h1 = (const __half *)&wr1;
        const float *xs = XS ? (const float *)(st + S_XS) : (const float *)(sm + XS_AT) + q.j * SLABS * M;
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++) {
            u64 da = desc(sta + S_WQ + (sl >> 2) * BNW * 128 + wg * 64 * 128 + 32 * (sl & 3));
            u64 db = desc((XS ? sta + S_XQ : base + q.j * 2 * XA) + (sl >> 2) * XA + 32 * (sl & 3));
            wg_fence();
            wgmma_s8(sl & 1 ? d1 : d0, da, db);
            wg_commit();
            if (sl > 0) {
                wg_wait<1>();
                scale_in(acc, sl & 1 ? d0 : d1, __half2float(h0[sl - 1]), __half2float(h1[sl - 1]), xs + (sl - 1) * M);
            }
        }
        wg_wait<0>();
        scale_in(acc, d1, __half2float(h0[SLABS - 1]), __half2float(h1[SLABS - 1]), xs + (SLABS - 1) * M);
        Pos nq = L + 1 < hi ? pos_of(L + 1, T, p.K / KT) : q;
        __syncthreads();   // both warpgroups done with the slot (and with x, where the slice ends)
        if (threadIdx.x == 0 && L + STAGES < hi)
            issue_w(p, base, i + STAGES, L + STAGES, T);
        if ((XS ? q.s == p.K / KT - 1 : q.j == NA - 1) || L + 1 == hi) {
            flush(p, q.t, acc);
#pragma unroll
            for (int k = 0; k < 32; k++)
                acc[k] = 0.0f;
        }
        if (!XS && L + 1 < hi && nq.s != q.s) {
            if (threadIdx.x == 0)
                issue_x(p, base, nq.s);
            xpar ^= 1;
        }
        q = nq;
    }
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 28672, K = argc > 2 ? atoi(argv[2]) : 4096;
    if (N % BNW || K % (XS ? KT : KS)) {
        fprintf(stderr, "wi8: N a multiple of %d, K of %d\n", BNW, KS);
        return 2;
    }
    std::vector<int8_t> x((size_t)M * K), q((size_t)N * K);
    std::vector<float> s((size_t)K / 32 * M);
    std::vector<__half> d((size_t)N * K / 32);
    for (auto &v : x) v = (int8_t)(rnd() % 255 - 127);
    for (auto &v : s) v = 1e-2f * (1 + rnd() % 1000) / 500.0f;
    for (auto &v : q) v = (int8_t)(rnd() % 255 - 127);
    for (auto &v : d) v = __float2half(1e-3f * (1 + rnd() % 1000) / 500.0f);
    int8_t *dx, *dq;
    __half *dd;
    float *ds, *dy, *sink;
    float4 *big;
    const long nbig = (512l << 20) / 16;
    CK(cudaMalloc(&dx, x.size())); CK(cudaMalloc(&dq, q.size())); CK(cudaMalloc(&dd, d.size() * 2));
    CK(cudaMalloc(&ds, s.size() * 4));
    CK(cudaMalloc(&dy, (size_t)M * N * 4)); CK(cudaMalloc(&big, nbig * 16)); CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(big, 0, nbig * 16));
    CK(cudaMemcpy(dx, x.data(), x.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dq, q.data(), q.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dd, d.data(), d.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(ds, s.data(), s.size() * 4, cudaMemcpyHostToDevice));
    P p;
    tmap(&p.x, CU_TENSOR_MAP_DATA_TYPE_UINT8, dx, K, M, K, 128, M, CU_TENSOR_MAP_SWIZZLE_128B);
    tmap(&p.q, CU_TENSOR_MAP_DATA_TYPE_UINT8, dq, K, N, K, 128, BNW, CU_TENSOR_MAP_SWIZZLE_128B);
    tmap(&p.d, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, dd, K / 32, N, (uint64_t)K / 32 * 2, 8, BNW, CU_TENSOR_MAP_SWIZZLE_NONE);
    p.s = ds, p.y = dy, p.N = N, p.K = K;
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaFuncSetAttribute(wi8, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    auto launch = [&]() { wi8<<<sms, THREADS, SMEM>>>(p); };
    CK(cudaMemset(dy, 0, (size_t)M * N * 4));
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> y((size_t)M * N);
    CK(cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int t = 0; t < 4000; t++) {
        int m = rnd() % M, n = rnd() % N;
        double ref = 0, mag = 0;
        for (int j = 0; j < K / 32; j++) {
            long dot = 0;
            for (int k = 32 * j; k < 32 * j + 32; k++)
                dot += (long)x[(size_t)m * K + k] * q[(size_t)n * K + k];
            double v = (double)dot * __half2float(d[(size_t)n * K / 32 + j]) * s[(size_t)j * M + m];
            ref += v;
            mag += fabs(v);
        }
        double e = fabs(y[(size_t)m * N + n] - ref) / (mag > 0 ? mag : 1);
        if (!(e <= worst))
            worst = e;
    }
    double ms = median_ms(launch, big, nbig, sink, sms, dy, (size_t)M * N * 4), bytes = (double)N * K * (1 + 2.0 / 32);
    if (ATOM == 0)
        worst = 0;
    printf("wi8 XS %d KS %d STAGES %d ATOM %d  N %d K %d: %.2f us  %.0f GB/s of weights  %.1f TOP/s  worst rel err %.2e\n",
           XS, KS, STAGES, ATOM, N, K, ms * 1e3, bytes / ms / 1e6, 2.0 * M * N * K / ms / 1e9, worst);
    return worst < 1e-5 ? 0 : 1;
}
