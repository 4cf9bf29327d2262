// probe.cuh — what the 64-row probes (bench/wr64.cu, bench/wi8.cu) share:
// u32/u64, CK (a CUDA call checked, PROBE naming the probe in its
// message), shared addresses, mbarriers, TMA copies, wgmma's fences and
// the 128-byte swizzle's descriptor on the device; on the host the L2's
// flush, tensor maps, a launch's median time and a small random
// generator. Not part of the build.
// Define PROBE (the probe's name, a string) before including it.
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>
typedef uint32_t u32;
typedef uint64_t u64;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, PROBE ": %s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ u32 saddr(const void *p) { return (u32)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mb_init(u32 b, int n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(n) : "memory"); }
__device__ __forceinline__ void mb_expect(u32 b, u32 n)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(n) : "memory");
}
__device__ __forceinline__ void mb_wait(u32 b, int par)
{
    u32 ok;
    do {
        asm volatile("{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\nselp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(ok) : "r"(b), "r"(par) : "memory");
    } while (!ok);
}
__device__ __forceinline__ void tma2d(u32 dst, const CUtensorMap *m, int c0, int c1, u32 bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"((u64)m), "r"(c0), "r"(c1), "r"(bar) : "memory");
}
__device__ __forceinline__ void bulk(u32 dst, const void *src, u32 n, u32 bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(dst), "l"((u64)src), "r"(n), "r"(bar) : "memory");
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() { asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory"); }

// K-major rows of 128 bytes in the 128-byte swizzle, 8-row groups 1024 apart
__device__ __forceinline__ u64 desc(u32 addr)
{
    return (u64)((addr & 0x3FFFF) >> 4) | (u64)1 << 16 | (u64)(1024 >> 4) << 32 | (u64)1 << 62;
}

__global__ void flush_l2(const float4 *b, long n, float *sink)
{
    float4 s = {0, 0, 0, 0};
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
        float4 v = b[i];
        s.x += v.x, s.y += v.y, s.z += v.z, s.w += v.w;
    }
    if (s.x == 1.2345f)
        *sink = s.y + s.z + s.w;
}

static void tmap(CUtensorMap *m, CUtensorMapDataType ty, void *ptr, uint64_t inner, uint64_t rows, uint64_t pitch,
                 uint32_t bi, uint32_t br, CUtensorMapSwizzle sw)
{
    static PFN_cuTensorMapEncodeTiled_v12000 enc;
    if (!enc) {
        cudaDriverEntryPointQueryResult q;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", (void **)&enc, 12000, cudaEnableDefault, &q) !=
                cudaSuccess || !enc) {
            fprintf(stderr, PROBE ": no cuTensorMapEncodeTiled\n");
            exit(1);
        }
    }
    cuuint64_t dim[2] = {inner, rows}, str[1] = {pitch};
    cuuint32_t box[2] = {bi, br}, es[2] = {1, 1};
    CUresult r = enc(m, ty, 2, ptr, dim, str, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, PROBE ": cuTensorMapEncodeTiled: %d\n", (int)r);
        exit(1);
    }
}

static uint64_t rs = 88172645463325252ull;
static uint32_t rnd() { rs ^= rs << 13; rs ^= rs >> 7; rs ^= rs << 17; return (uint32_t)rs; }

// The median of 12 timings of launch() (after 3 more), each after the L2
// is emptied (flush_l2 over big's nbig float4s, sms multiprocessors) and
// the ybytes of dy zeroed; ms.
template <class F> static double median_ms(F launch, const float4 *big, long nbig, float *sink, int sms, void *dy,
                                           size_t ybytes)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> ts;
    for (int r = 0; r < 15; r++) {
        flush_l2<<<4 * sms, 512>>>(big, nbig, sink);
        cudaMemsetAsync(dy, 0, ybytes);
        cudaEventRecord(e0);
        launch();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (r >= 3)
            ts.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(ts.begin(), ts.end());
    return ts[ts.size() / 2];
}
