// wr64.cu — probe: Q8_0 products of 64 stacked rows (issue 11's decode
// batch of 64) on wgmma in f16 with the activations resident in shared
// memory: can 64 rows stream the weights near the read ceiling, where mmv
// reaches 1.1 TB/s and mmh's 64-row tiles lost (bench/NOTES.md run170,
// run173, run180)? Not part of the build.
//
//   y[m, n] = sum_k f16(x[m, k]) f16(q[n, k] d[n, k / 32])     (f32 sums)
//   x (64, K) f16; q (N, K) int8; d (N, K / 32) f16; y (64, N) f32
//
// mmh's TM order (the weights wgmma's A, dequantized from the ring into
// registers; the activations B) with two changes for 64 rows, whose f16
// activations are as many bytes from the L2 as a 128-row weight tile:
//   - K is cut in slices of KS values and a block keeps its slice of x
//     (64 x KS f16, 128 KB at KS 1024) in shared memory, loaded by TMA in
//     64-value atoms (an mbarrier each, so the first stage waits for its
//     atom alone), reused for every weight tile of the slice;
//   - the work is stream-K: the stages (slice, tile of 128 weight rows, 64
//     values of K), slice by slice, tile by tile, are cut into one even run
//     a block (a block a multiprocessor), and each tile's part a block
//     computes is added into y with red.global.add (ATOM 1: a float at a
//     time; ATOM 2: y transposed, (N, 64), two floats at a time; ATOM 0:
//     not written, the sums wrong: the stages alone).
// Block: 256 threads, two warpgroups of 64 weight rows; a stage is 128
// weight rows x 64 values (8 KB by TMA in the 64-byte swizzle, 2 KB of
// scales: 4 stages' a row), a ring of STAGES.
//
//   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -DKS=1024 -DATOM=1 \
//        -Xptxas -v -o /tmp/wr bench/wr64.cu -lcuda && /tmp/wr 28672 4096
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
#define PROBE "wr64"
#include "probe.cuh"

#ifndef KS
#define KS 1024
#endif
#ifndef STAGES
#define STAGES 5
#endif
#ifndef ATOM
#define ATOM 1
#endif
#ifndef CL
#define CL 0
#endif
constexpr int M = 64, KT = 64, THREADS = 256, BNW = 128;
constexpr int NA = KS / KT;                          // x's atoms a slice, the stages of a tile's slice
constexpr int XA = M * KT * 2;                       // an atom: 64 rows x 128 bytes
constexpr int S_WQ = 0, S_WS = BNW * KT, SLOT = (S_WS + BNW * 16 + 1023) / 1024 * 1024;
constexpr int RING_AT = NA * XA, BAR_AT = RING_AT + STAGES * SLOT, XBAR_AT = BAR_AT + 8 * STAGES;
constexpr int SMEM = XBAR_AT + 8 * NA + 1024;
constexpr u32 WBYTES = BNW * KT + BNW * 16;
static_assert(SMEM <= 227 * 1024, "shared memory");
static_assert(NA % 4 == 0, "a slice whole scale boxes");


struct P {
    CUtensorMap x, q, d;
    float *y;
    int N, K;
};

__device__ __forceinline__ u32 prmt(u32 a, u32 b, u32 sel)
{
    u32 d;
    asm("prmt.b32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(sel));
    return d;
}
__device__ __forceinline__ u32 hsub2(u32 a, u32 b)
{
    u32 d;
    asm("sub.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
__device__ __forceinline__ u32 hmul2(u32 a, u32 b)
{
    u32 d;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
    return d;
}
// four int8 of a word times d2 as two f16 pairs: 1024 + (q + 128) exact, less 1152, times d
__device__ __forceinline__ void deq4(u32 w, u32 d2, u32 &lo, u32 &hi)
{
    const u32 off = 0x64806480u;
    u32 x = w ^ 0x80808080u;
    lo = hmul2(hsub2(prmt(x, 0x64646464u, 0x4140), off), d2);
    hi = hmul2(hsub2(prmt(x, 0x64646464u, 0x4342), off), d2);
}

// This thread's A words of a stage (mmh.cu's wa_fetch: rows r and r + 8,
// the 64-byte swizzle) and its rows' two scales of global stage kt.
__device__ __forceinline__ void wa_fetch(const char *st, int kt, u32 (&w)[16], u32 (&sc)[2])
{
    int lane = threadIdx.x & 31, h = (lane & 3) >> 1;
#pragma unroll
    for (int rr = 0; rr < 2; rr++) {
        int r = (threadIdx.x >> 5) * 16 + (lane >> 2) + rr * 8, sw = (r >> 1) & 3;
        const char *row = st + S_WQ + r * KT;
        sc[rr] = *(const u32 *)(st + S_WS + r * 16 + (kt & 3) * 4);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            const char *c = row + ((j ^ sw) << 4) + 4 * h;
            w[8 * rr + 2 * j] = *(const u32 *)c;
            w[8 * rr + 2 * j + 1] = *(const u32 *)(c + 8);
        }
    }
}

__device__ __forceinline__ void wa_make(const u32 (&w)[16], const u32 (&sc)[2], u32 (&a)[16])
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
    for (int j = 0; j < 16; j++)
        asm volatile("" : "+r"(a[j])::"memory");
}

#define F8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
// d (64 weight rows x 64 activation rows) += a (64 x 16, registers) b (16 x 64, x's atom)
__device__ __forceinline__ void wgmma64(float *d, const u32 *a, u64 db)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,"
                 "%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, {%32,%33,%34,%35}, %36, "
                 "1, 1, 1, 0;\n"
                 : F8(0), F8(8), F8(16), F8(24)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

struct Pos {
    int s, t, j;   // slice, tile, stage of the tile's slice
};

__device__ __forceinline__ Pos pos_of(long L, int T)
{
    long item = L / NA;
    return Pos{(int)(item / T), (int)(item % T), (int)(L % NA)};
}

// the block's i-th stage, K stage kt of tile t, into its slot
__device__ void issue_stage(const P &p, u32 base, long i, int kt, int t)
{
    u32 st = base + RING_AT + (u32)(i % STAGES) * SLOT, bar = base + BAR_AT + 8 * (u32)(i % STAGES);
    mb_expect(bar, WBYTES);
    tma2d(st + S_WQ, &p.q, kt * KT, t * BNW, bar);
    tma2d(st + S_WS, &p.d, kt / 4 * 8, t * BNW, bar);
}

// the block's i-th stage, stage L of all
__device__ void issue_w(const P &p, u32 base, long i, long L, int T)
{
    Pos q = pos_of(L, T);
    issue_stage(p, base, i, q.s * NA + q.j, q.t);
}

// the ring's and x's atoms' mbarriers
__device__ void init_bars(u32 base)
{
    for (int s = 0; s < STAGES + NA; s++)   // XBAR_AT follows the ring's
        mb_init(base + BAR_AT + 8 * s, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// slice s of x, atom by atom
__device__ void issue_x(const P &p, u32 base, int s)
{
    for (int a = 0; a < NA; a++) {
        u32 bar = base + XBAR_AT + 8 * a;
        mb_expect(bar, XA);
        tma2d(base + a * XA, &p.x, (s * NA + a) * KT, 0, bar);
    }
}

// the warpgroup's sums of tile t into y
__device__ void flush(const P &p, int t, const float *d)
{
    int w = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
#pragma unroll
    for (int n = 0; n < 8; n++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            long o = (long)t * BNW + wg * 64 + w * 16 + g + h * 8;   // the weight row
            int c = n * 8 + 2 * tq;                                  // the activation rows c, c + 1
            float v0 = d[n * 4 + 2 * h], v1 = d[n * 4 + 2 * h + 1];
            if (ATOM == 1) {
                asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p.y + (long)c * p.N + o), "f"(v0) : "memory");
                asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p.y + (long)(c + 1) * p.N + o), "f"(v1) : "memory");
            } else if (ATOM == 2) {
                asm volatile("red.global.add.v2.f32 [%0], {%1, %2};" ::"l"(p.y + o * M + c), "f"(v0), "f"(v1) : "memory");
            } else {   // ATOM 0: one place a thread (the sums made, hardly any bytes)
                p.y[threadIdx.x] = v0 + v1;
            }
        }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) wr(const __grid_constant__ P p)
{
    extern __shared__ __align__(1024) char smraw[];
    u32 base = (saddr(smraw) + 1023) & ~1023u;
    char *sm = smraw + (base - saddr(smraw));
    int T = p.N / BNW;
    long S = (long)(p.K / KS) * T * NA, lo = S * blockIdx.x / gridDim.x, hi = S * (blockIdx.x + 1) / gridDim.x;
    if (lo >= hi)
        return;
    if (threadIdx.x == 0) {
        init_bars(base);
        for (int i = 0; i < STAGES && lo + i < hi; i++)
            issue_w(p, base, i, lo + i, T);
        issue_x(p, base, pos_of(lo, T).s);
    }
    __syncthreads();
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        d[i] = 0.0f;
    u32 w[16], sc[2], a[16];
    int xpar = 0;
    Pos q = pos_of(lo, T);
    mb_wait(base + BAR_AT, 0);
    wa_fetch(sm + RING_AT, q.s * NA + q.j, w, sc);
    for (long i = 0; lo + i < hi; i++) {
        long L = lo + i;
        mb_wait(base + XBAR_AT + 8 * q.j, xpar);
        wa_make(w, sc, a);
        wg_fence();
        u32 b = base + q.j * XA;
#pragma unroll
        for (int j = 0; j < KT / 16; j++)
            wgmma64(d, a + 4 * j, desc(b + 32 * j));
        wg_commit();
        Pos nq = q;
        if (L + 1 < hi) {
            int n = (int)((i + 1) % STAGES);
            nq = pos_of(L + 1, T);
            mb_wait(base + BAR_AT + 8 * n, (int)((i + 1) / STAGES) & 1);
            wa_fetch(sm + RING_AT + n * SLOT, nq.s * NA + nq.j, w, sc);
        }
        wg_wait<0>();
        __syncthreads();   // both warpgroups done with the slot (and with x, where the slice ends)
        if (threadIdx.x == 0 && L + STAGES < hi)
            issue_w(p, base, i + STAGES, L + STAGES, T);
        if (q.j == NA - 1 || L + 1 == hi) {
            flush(p, q.t, d);
#pragma unroll
            for (int k = 0; k < 32; k++)
                d[k] = 0.0f;
        }
        if (L + 1 < hi && nq.s != q.s) {
            if (threadIdx.x == 0)
                issue_x(p, base, nq.s);
            xpar ^= 1;
        }
        q = nq;
    }
}


#ifndef SK
#define SK 4
#endif
// CL: the other order. A cluster of SK blocks along z takes a tile of
// weight rows at a time, block z its slice of K (K / SK values, its x
// loaded once); the clusters take tiles y, y + C, ... (C clusters fill the
// chip); at each tile's end each block leaves its sums in shared memory
// and rank 0 adds the others' through the cluster's shared memory (rank
// by rank: the same sums every run) and writes y. The weights' ring runs
// on across tiles.
constexpr int EP = M + 1;                            // floats a weight row of the sums' tile
constexpr int E_AT = XBAR_AT + 8 * NA + 8;           // the sums' tile (x's atoms, the ring, the barriers before it)
constexpr int CSMEM = E_AT + BNW * EP * 4 + 1024;
static_assert(CSMEM <= 227 * 1024, "shared memory (CL)");

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
__device__ __forceinline__ float ld_cluster(u32 addr, u32 r)
{
    u32 at;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(at) : "r"(addr), "r"(r));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(at) : "memory");
    return v;
}

// the block's i-th stage: tile y + C (i / NA), K stage z NA + i % NA
__device__ void issue_c(const P &p, u32 base, long i)
{
    issue_stage(p, base, i, (int)(blockIdx.z * NA + i % NA), (int)(blockIdx.y + gridDim.y * (i / NA)));
}

extern "C" __global__ void __launch_bounds__(THREADS, 1) wrc(const __grid_constant__ P p)
{
    extern __shared__ __align__(1024) char smraw[];
    u32 base = (saddr(smraw) + 1023) & ~1023u;
    char *sm = smraw + (base - saddr(smraw));
    float *e = (float *)(sm + E_AT);
    int T = p.N / BNW, mine = (T - (int)blockIdx.y + (int)gridDim.y - 1) / (int)gridDim.y;
    long n = (long)mine * NA;
    if (threadIdx.x == 0) {
        init_bars(base);
        for (int i = 0; i < STAGES && i < n; i++)
            issue_c(p, base, i);
        issue_x(p, base, blockIdx.z);
    }
    __syncthreads();
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; i++)
        d[i] = 0.0f;
    u32 w[16], sc[2], a[16];
    if (n > 0) {
        mb_wait(base + BAR_AT, 0);
        wa_fetch(sm + RING_AT, blockIdx.z * NA, w, sc);
    }
    int wq = (threadIdx.x >> 5) & 3, wg = threadIdx.x >> 7, lane = threadIdx.x & 31, g = lane >> 2, tq = lane & 3;
    for (long i = 0; i < n; i++) {
        int j = (int)(i % NA);
        mb_wait(base + XBAR_AT + 8 * j, 0);
        wa_make(w, sc, a);
        wg_fence();
        u32 b = base + j * XA;
#pragma unroll
        for (int k = 0; k < KT / 16; k++)
            wgmma64(d, a + 4 * k, desc(b + 32 * k));
        wg_commit();
        if (i + 1 < n) {
            int s = (int)((i + 1) % STAGES);
            mb_wait(base + BAR_AT + 8 * s, (int)((i + 1) / STAGES) & 1);
            wa_fetch(sm + RING_AT + s * SLOT, (int)(blockIdx.z * NA + (i + 1) % NA), w, sc);
        }
        wg_wait<0>();
        __syncthreads();
        if (threadIdx.x == 0 && i + STAGES < n)
            issue_c(p, base, i + STAGES);
        if (j == NA - 1) {   // the tile's end: the cluster's sums meet at rank 0
            int t = (int)(blockIdx.y + gridDim.y * (i / NA));
#pragma unroll
            for (int c = 0; c < 8; c++)
#pragma unroll
                for (int k = 0; k < 4; k++) {
                    int m = wg * 64 + wq * 16 + g + (k >> 1) * 8, r = c * 8 + 2 * tq + (k & 1);
                    e[m * EP + r] = d[c * 4 + k];
                    d[c * 4 + k] = 0.0f;
                }
            cluster_sync();
            if (blockIdx.z == 0) {
                u32 at = saddr(e);
                for (int q = threadIdx.x; q < BNW * M; q += THREADS) {
                    int m = q % BNW, r = q / BNW;   // consecutive threads: consecutive weight rows of y's row r
                    float v = e[m * EP + r];
                    for (int z = 1; z < SK; z++)
                        v += ld_cluster(at + (m * EP + r) * 4, z);
                    p.y[(long)r * p.N + (long)t * BNW + m] = v;
                }
            }
            cluster_sync();
        }
    }
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 28672, K = argc > 2 ? atoi(argv[2]) : 4096;
    if (N % BNW || K % KS) {
        fprintf(stderr, "wr64: N a multiple of %d, K of %d\n", BNW, KS);
        return 2;
    }
    std::vector<__half> x((size_t)M * K), d((size_t)N * K / 32);
    std::vector<int8_t> q((size_t)N * K);
    for (auto &v : x) v = __float2half(((int)(rnd() % 2001) - 1000) / 1000.0f);
    for (auto &v : q) v = (int8_t)(rnd() % 255 - 127);
    for (auto &v : d) v = __float2half(1e-3f * (1 + rnd() % 1000) / 500.0f);
    __half *dx, *dd;
    int8_t *dq;
    float *dy, *sink;
    float4 *big;
    const long nbig = (512l << 20) / 16;
    CK(cudaMalloc(&dx, x.size() * 2)); CK(cudaMalloc(&dq, q.size())); CK(cudaMalloc(&dd, d.size() * 2));
    CK(cudaMalloc(&dy, (size_t)M * N * 4)); CK(cudaMalloc(&big, nbig * 16)); CK(cudaMalloc(&sink, 4));
    CK(cudaMemset(big, 0, nbig * 16));
    CK(cudaMemcpy(dx, x.data(), x.size() * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dq, q.data(), q.size(), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dd, d.data(), d.size() * 2, cudaMemcpyHostToDevice));
    P p;
    tmap(&p.x, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, dx, K, M, (uint64_t)K * 2, KT, M, CU_TENSOR_MAP_SWIZZLE_128B);
    tmap(&p.q, CU_TENSOR_MAP_DATA_TYPE_UINT8, dq, K, N, K, KT, BNW, CU_TENSOR_MAP_SWIZZLE_64B);
    tmap(&p.d, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, dd, K / 32, N, (uint64_t)K / 32 * 2, 8, BNW, CU_TENSOR_MAP_SWIZZLE_NONE);
    p.y = dy, p.N = N, p.K = K;
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaFuncSetAttribute(wr, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
    CK(cudaFuncSetAttribute(wrc, cudaFuncAttributeMaxDynamicSharedMemorySize, CSMEM));
    if (SK > 8)
        CK(cudaFuncSetAttribute(wrc, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = 1, at[0].val.clusterDim.y = 1, at[0].val.clusterDim.z = SK;
    cfg.blockDim = dim3(THREADS), cfg.dynamicSmemBytes = CSMEM, cfg.attrs = at, cfg.numAttrs = 1;
    int clusters = 0;
    if (CL) {
        if (K != SK * KS) {
            fprintf(stderr, "wr64: CL takes K = SK x KS (%d x %d)\n", SK, KS);
            return 2;
        }
        cfg.gridDim = dim3(1, 1, SK);
        CK(cudaOccupancyMaxActiveClusters(&clusters, wrc, &cfg));
        cfg.gridDim = dim3(1, clusters, SK);
    }
    auto launch = [&]() {
        if (CL)
            CK(cudaLaunchKernelEx(&cfg, wrc, p));
        else
            wr<<<sms, THREADS, SMEM>>>(p);
    };
    CK(cudaMemset(dy, 0, (size_t)M * N * 4));
    launch();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> y((size_t)M * N);
    CK(cudaMemcpy(y.data(), dy, y.size() * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (int s = 0; s < 4000; s++) {
        int m = rnd() % M, n = rnd() % N;
        double ref = 0, mag = 0;
        for (int k = 0; k < K; k++) {
            double wv = __half2float(__float2half((float)q[(size_t)n * K + k] * __half2float(d[(size_t)n * K / 32 + k / 32])));
            double v = __half2float(x[(size_t)m * K + k]);
            ref += v * wv;
            mag += fabs(v * wv);
        }
        float got = ATOM == 2 && !CL ? y[(size_t)n * M + m] : y[(size_t)m * N + n];
        double e = fabs(got - ref) / (mag > 0 ? mag : 1);
        if (!(e <= worst))
            worst = e;
    }
    double ms = median_ms(launch, big, nbig, sink, sms, dy, (size_t)M * N * 4), bytes = (double)N * K * (1 + 2.0 / 32);
    if (ATOM == 0 && !CL)
        worst = 0;
    if (CL)
        printf("CL SK %d clusters %d ", SK, clusters);
    printf("wr64 KS %d STAGES %d ATOM %d  N %d K %d: %.2f us  %.0f GB/s of weights  %.1f TFLOP/s  worst rel err %.2e\n",
           KS, STAGES, ATOM, N, K, ms * 1e3, bytes / ms / 1e6, 2.0 * M * N * K / ms / 1e9, worst);
    return worst < 1e-5 ? 0 : 1;
}
