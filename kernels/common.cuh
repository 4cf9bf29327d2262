// common.cuh — what every kernel of the lane shares, with no toolkit header
// (NVRTC compiles these with nothing but this file): the parameter block,
// f16 conversions by inline PTX, warp and block reductions, the quantized
// activation formats and their producer, programmatic dependent launch.
//
// Formats of a buffer of n values (n a multiple of 32 where quantized):
//   f32, i32   4 bytes a value; f16: 2 bytes; f64: 8 (constant tables)
//   q8         a weight: int8 quants [n], then one f16 scale per 32 values
//              at byte align16(n)              value = q * s
//   a8         an activation: int8 [n], then one f32 scale per 32 values
//              at byte align16(n)              value = q * s
//   a8x2       an activation in two words: int8 hi [n], int8 lo [n], then
//              one f32 scale per 32 at byte align16(2n)
//                                              value = s * (hi + lo / 254)
// A block of 32 values x is quantized with d = max|x| / 127, id = 1/d (0
// when d is 0): hi = rint(x * id); lo = rint((x * id - hi) * 254), clamped
// to [-127, 127]. lib/quant.c's act_quantize is its CPU twin.

typedef signed char i8;
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;

#define MAXPARAMS 28   // lib/logos.h's KMAXP
struct Params {
    void *a[MAXPARAMS];
};

#define DEV static __device__ __forceinline__
#define NEG_INF __int_as_float(0xff800000)

DEV float h2f(u16 h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

DEV u16 f2h(float f)
{
    u16 h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

DEV float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

DEV float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// The sum of v over the block (blockDim.x a multiple of 32, at most 1024);
// every thread gets it. red holds 32 floats of shared memory.
DEV float block_sum(float v, float *red)
{
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
    v = warp_sum(v);
    __syncthreads();
    if (lane == 0)
        red[w] = v;
    __syncthreads();
    v = lane < nw ? red[lane] : 0.0f;
    return warp_sum(v);
}

DEV long align16(long n)
{
    return (n + 15) & ~15L;
}

// SWZ, the order f32 activations are staged in over Q8_0 weights (gemv.cu,
// moe.cu): a row of n values (whole 16-value segments) keeps segment c as
// four float4s at c, n/16 + c, 2 n/16 + c and 3 n/16 + c, so that the
// lanes of a warp, each reading its own segment a float4 at a time, read
// consecutive 16 bytes (laid end to end, lanes 64 bytes apart would meet
// four to a bank). swz4: where float4 k (0 to 3) of segment c of such a
// row lies, in float4s.
DEV long swz4(long c, long k, long n)
{
    return k * (n / 16) + c;
}

// The runtime row count: the size a plan binds at run time, or the bound.
DEV int rows_of(const void *n, int bound)
{
    return n ? *(const int *)n : bound;
}

// Asynchronous copies to shared memory (cp.async): n (0 or N) bytes of src
// to dst, zero-filling to N (16, or 8 where named); a group of them
// committed, and waits for the groups.
DEV u32 smem_addr(const void *p)
{
    u32 r;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(r) : "l"(p));
    return r;
}

// cp16 to a shared-memory address (smem_addr's) already in hand.
DEV void cp16s(u32 dst, const void *src, int n)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(n) : "memory");
}

DEV void cp16(void *dst, const void *src, int n)
{
    cp16s(smem_addr(dst), src, n);
}

// Four 8 x 16-byte matrices of shared memory, lane l giving the address of
// row l % 8 of matrix l / 8; register i gets matrix i, lane l holding bytes
// 4 (l % 4) .. + 4 of its row l / 4.
DEV void ldsm4(u32 *r, u32 at)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
}

// ldsm4 transposed: lane l holding, of matrix i's rows 2 (l % 4) and
// 2 (l % 4) + 1, the two bytes at 2 (l / 4) (an 8 x 8 f16 matrix's column).
DEV void ldsm4t(u32 *r, u32 at)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(at));
}

// d += a (16 x 16, row) . b (16 x 8, col), f16 in, f32 accumulate (flash.cu,
// attend.cu's TC).
DEV void mma16(float *d, const u32 *a, const u32 *b)
{
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// Two values as an f16 pair: lo in the low half.
DEV u32 pack(float lo, float hi)
{
    return (u32)f2h(lo) | (u32)f2h(hi) << 16;
}

// The int8 tensor-core product of mma.cu and mmv.cu.
constexpr int MAGIC = 0x4b400000;               // the bits of 2^23 + 2^22
constexpr float MAGICF = 12582912.0f;           // 2^23 + 2^22

// d = a (16 x 32, row) . b (32 x 8, col) + MAGIC, int8 in, int32 out: the
// bits of the float 2^23 + 2^22 + the sum (exact: |sum| <= 32 127 127 <
// 2^22), so that the sum is that float less 2^23 + 2^22, with no
// conversion.
DEV void mma_k32(int *d, const u32 *a, const u32 *b)
{
    int z = MAGIC;
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(z), "r"(z), "r"(z), "r"(z));
}

// A slab's sum from mma_k32's bits, exactly.
DEV float i2f(int d)
{
    return __int_as_float(d) - MAGICF;
}

// The four int8 values of word w (byte k value k) as exact floats without
// I2F, a quarter-rate conversion on sm_90 (a Q8_0 product over f32
// activations needs one a weight byte, as many as the read ceiling brings):
// each byte with its sign bit flipped (b + 128) is put by a byte permute
// under 2^23's exponent, 0x4B000000 | (b + 128) = 2^23 + 128 + b, and 2^23 + 128
// is taken off, exactly for every int8.
DEV void i8f(u32 w, float *f)
{
    u32 u = w ^ 0x80808080u;
#pragma unroll
    for (int k = 0; k < 4; k++)
        f[k] = __uint_as_float(__byte_perm(u, 0x4B000000u, 0x7440u + k)) - 8388736.0f;
}

// acc + the four int8 values of word w (i8f) . x, summed in order: a
// precise product's step over a 4-value piece of a staged SWZ segment
// (gemv.cu's use, moe.cu's chunk_dot).
DEV float dot4f(u32 w, float4 x, float acc)
{
    float f[4];
    i8f(w, f);
    acc += f[0] * x.x;   // each a fused multiply-add (NVRTC contracts)
    acc += f[1] * x.y;
    acc += f[2] * x.z;
    return acc + f[3] * x.w;
}

DEV void cp8(void *dst, const void *src, int n)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(smem_addr(dst)), "l"(src), "r"(n) : "memory");
}

DEV void cp_commit()
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// Waits until at most N of this thread's committed groups are in flight.
template <int N>
DEV void cp_wait_n()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

DEV void cp_wait_all()
{
    cp_wait_n<0>();
}

// The timeline (logos-bench --timeline): compiled with LOGOS_TL, each block
// of a plan's kernel notes when it began, when the last of its warps came
// back from pdl_wait and when its last thread left, with its multiprocessor,
// as one record of four words in the lane's buffer logos_tl:
//   logos_tl[0]  records taken (atomic)     logos_tl[1]  room for records
//   record r at logos_tl + 2 + 4r:
//     [0] logos_tl_kernel << 48 | smid << 32 | the block's linear index
//     [1] start  [2] wait (0: never waited)  [3] end     (%globaltimer, ns)
// Every plan kernel opens with KERNEL_OPEN(): the marks under LOGOS_TL,
// the early trigger under LOGOS_ET (below), nothing without either.
// The marks cost a barrier at the start and a shared atomic a thread at
// the end; the lane sets both variables after loading the module.
// LOGOS_ET (a plan's rule early_trigger): every block lets the next launch
// begin as it starts, not once it is past its own wait, so that launches
// further on load their weights sooner. The dependents' waits still wait
// for this grid whole; what it would break is a launch that reads before
// its wait what a launch two or more before it wrote (moe's XEARLY): the
// rule is taken only where every launch reads there only weights, the
// caches' older rows and the position (lib/kernels.c's kernel_early_safe).
#ifdef LOGOS_ET
#define ET_OPEN() asm volatile("griddepcontrol.launch_dependents;")
#else
#define ET_OPEN() (void)0
#endif
#ifdef LOGOS_TL
extern "C" {
__device__ u64 *logos_tl;
__device__ u64 logos_tl_kernel;
}
struct TlBlock {
    u64 start, wait;
    u32 left;
};
DEV TlBlock *tl_block()
{
    __shared__ TlBlock b;
    return &b;
}
DEV u64 tl_now()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
struct TlScope {
    __device__ TlScope()
    {
        TlBlock *b = tl_block();
        if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
            b->start = tl_now();
            b->wait = 0;
            b->left = blockDim.x * blockDim.y * blockDim.z;
        }
        __syncthreads();
    }
    __device__ ~TlScope()
    {
        TlBlock *b = tl_block();
        __threadfence_block();
        if (atomicSub(&b->left, 1u) != 1u || !logos_tl)
            return;
        u64 i = atomicAdd(logos_tl, 1ull);
        if (i >= logos_tl[1])
            return;
        u32 sm;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
        u64 blk = blockIdx.x + (u64)gridDim.x * (blockIdx.y + (u64)gridDim.y * blockIdx.z);
        u64 *r = logos_tl + 2 + 4 * i;
        r[0] = logos_tl_kernel << 48 | (u64)sm << 32 | blk;
        r[1] = b->start;
        r[2] = b->wait;
        r[3] = tl_now();
    }
};
#define KERNEL_OPEN() TlScope tl_scope_; ET_OPEN()
DEV void tl_waited()
{
    if ((threadIdx.x & 31) == 0)
        atomicMax(&tl_block()->wait, tl_now());
}
#else
#define KERNEL_OPEN() ET_OPEN()
DEV void tl_waited() {}
#endif

// Programmatic dependent launch: wait for the grids this one depends on
// (a no-op when it was launched without the attribute); let the next grid
// begin its launch (its blocks then take the places this grid leaves and
// wait there); or both at once.
DEV void pdl_wait()
{
    asm volatile("griddepcontrol.wait;" ::: "memory");
    tl_waited();
}

DEV void pdl_launch()
{
    asm volatile("griddepcontrol.launch_dependents;");
}

DEV void pdl_begin()
{
    pdl_wait();
    pdl_launch();
}

// Thread block clusters (sm_90): every block of the cluster waits here
// until all have arrived, what each wrote before visible to all after;
// and a float of another block's shared memory, at the place addr (a
// smem_addr) has in this block's, from the block of rank r.
DEV void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

DEV float ld_cluster(u32 addr, u32 r)
{
    u32 at;
    float v;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(at) : "r"(addr), "r"(r));
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(at) : "memory");
    return v;
}

// K split over a cluster (1, 1, sk) along z (mma.cu's and mmh.cu's SK):
// each block holds its split's n sums at e in shared memory; the block of
// rank 0 adds the others' to its own, rank by rank (the same order every
// run), and goes on to the epilogue (true); the others wait until it has
// read them, and stop (false).
DEV bool gather_splits(float *e, int n, int sk)
{
    cluster_sync();
    if (blockIdx.z == 0) {
        u32 at = smem_addr(e);
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            float v = e[i];
            for (int r = 1; r < sk; r++)
                v += ld_cluster(at + i * 4, r);
            e[i] = v;
        }
    }
    cluster_sync();
    __syncthreads();
    return blockIdx.z == 0;
}

// Quantizes the 32 values a warp holds (one a lane) into format words (1:
// a8, 2: a8x2; 3: a8h, the a8 values held as f16, each f16(q f16(d)) as
// mmh.cu would round them, no scales) at block b of a buffer of n values.
DEV void warp_quant(float x, void *buf, long n, long b, int words)
{
    int lane = threadIdx.x & 31;
    float amax = warp_max(fabsf(x));
    float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
    float u = x * id, hi = rintf(u);
    if (words == 3) {
        ((u16 *)buf)[b * 32 + lane] = f2h(hi * h2f(f2h(d)));
        return;
    }
    i8 *q = (i8 *)buf;
    q[b * 32 + lane] = (i8)hi;
    if (words == 2) {
        float lo = fminf(fmaxf(rintf((u - hi) * 254.0f), -127.0f), 127.0f);
        q[n + b * 32 + lane] = (i8)lo;
    }
    float *s = (float *)((char *)buf + align16(n * words));
    if (lane == 0)
        s[b] = d;
}

// a . b over 4 int8 pairs, plus c; and over 16 (an int4 each).
DEV int dp4a(int a, int b, int c)
{
    int d;
    asm("dp4a.s32.s32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

DEV int dot16(int4 a, int4 b)
{
    return dp4a(a.x, b.x, dp4a(a.y, b.y, dp4a(a.z, b.z, dp4a(a.w, b.w, 0))));
}

// Value i of an activation buffer in format f (0 f32, 1 a8, 2 a8x2, 3
// a8h) of n values.
DEV float act_load(const void *buf, long n, long i, int f)
{
    if (f == 0)
        return ((const float *)buf)[i];
    if (f == 3)
        return h2f(((const u16 *)buf)[i]);
    const i8 *q = (const i8 *)buf;
    const float *s = (const float *)((const char *)buf + align16(n * f));
    float v = (float)q[i];
    if (f == 2)
        v += (float)q[n + i] * (1.0f / 254.0f);
    return v * s[i >> 5];
}

// Stores value i of a buffer of n values in format f, when f is f32 (a
// quantized store goes through warp_quant).
DEV void f32_store(void *buf, long i, float v)
{
    ((float *)buf)[i] = v;
}

DEV float sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

DEV float silu(float x)
{
    return x / (1.0f + expf(-x));
}

DEV float gelu_tanh(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

// The best (value, index) over a warp: the larger value, the lower index
// among equal ones; every lane gets it.
DEV void arg_reduce(float &best, int &bi)
{
    for (int o = 16; o > 0; o >>= 1) {
        float ov = __shfl_xor_sync(0xffffffffu, best, o);
        int oi = __shfl_xor_sync(0xffffffffu, bi, o);
        if (ov > best || (ov == best && oi < bi))
            best = ov, bi = oi;
    }
}

// A load that skips the L1: for what other blocks of this grid wrote.
// A release-acquire fence at the GPU's scope: this thread's writes before
// it are seen before its writes after it, by every block.
DEV void fence_gpu()
{
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

DEV float ldcg(const float *p)
{
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(p));
    return v;
}
