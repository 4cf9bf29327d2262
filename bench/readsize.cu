// readsize.cu — how fast one launch can read N bytes on this GPU, by N and
// grid: a grid-stride streaming read (rd) and a read where each block
// takes its own contiguous slice (rds, as a GEMV's blocks do), each timed
// by CUDA events around one launch after the L2 is flushed, best and mean
// of 20 (bench/NOTES.md, run56). Not part of the build; on the GPU machine:
//
//   nvcc -O3 -arch=sm_90 -o /tmp/readsize bench/readsize.cu && /tmp/readsize
//
// With sizes in bytes as arguments (bench/probe/floor.sh), one line each:
// the size and the best time in ms of a grid-stride read of it over grids
// of 132 to 1056 blocks (0 bytes: an empty launch's time).
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void rd(const int4 *p, long n, int *out) {
  int4 acc = make_int4(0,0,0,0);
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x, st = (long)gridDim.x * blockDim.x;
  #pragma unroll 8
  for (; i < n; i += st) { int4 v = __ldcs(p + i); acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w; }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678) out[0] = 1;
}
// each block its contiguous slice (static partition), like a GEMV
__global__ void rds(const int4 *p, long n, int *out) {
  long per = (n + gridDim.x - 1) / gridDim.x, b = blockIdx.x * per, e = b + per < n ? b + per : n;
  int4 acc = make_int4(0,0,0,0);
  #pragma unroll 8
  for (long i = b + threadIdx.x; i < e; i += blockDim.x) { int4 v = __ldcs(p + i); acc.x ^= v.x; acc.y ^= v.y; acc.z ^= v.z; acc.w ^= v.w; }
  if ((acc.x ^ acc.y ^ acc.z ^ acc.w) == 0x12345678) out[0] = 1;
}
// The best time of a grid-stride read of s bytes, L2 emptied before each.
static float floor_ms(const char *buf, char *flush, int *o, long s, cudaEvent_t a, cudaEvent_t b) {
  float best = 1e9;
  for (int g : {132, 264, 528, 1056})
    for (int r = 0; r < 20; r++) {
      cudaMemsetAsync(flush, r, 256 << 20);
      cudaEventRecord(a);
      rd<<<g, 512>>>((const int4 *)buf, s / 16, o);
      cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); if (ms < best) best = ms;
    }
  return best;
}
int main(int argc, char **argv) {
  long big = 4L << 30; char *buf; int *o; cudaMalloc(&buf, big); cudaMalloc(&o, 4); cudaMemset(buf, 1, big);
  char *flush; cudaMalloc(&flush, 256 << 20);
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  if (argc > 1) {
    for (int i = 1; i < argc; i++) {
      long s = atol(argv[i]);
      s = s < 0 ? 0 : s > big ? big : s;
      printf("%ld %.5f\n", s, floor_ms(buf, flush, o, s, a, b));
    }
    return 0;
  }
  long sizes[] = {16L, 17L<<20, 25L<<20, 64L<<20, 125L<<20, 525L<<20, 4L<<30};
  int grids[] = {132, 264, 528, 1056};
  for (int k = 0; k < 2; k++)
  for (long s : sizes) for (int g : grids) {
    float best = 1e9, tot = 0; int reps = 20;
    for (int r = 0; r < reps; r++) {
      cudaMemsetAsync(flush, r, 256 << 20);
      cudaEventRecord(a);
      if (k == 0) rd<<<g, 512>>>((const int4 *)buf, s / 16, o); else rds<<<g, 512>>>((const int4 *)buf, s / 16, o);
      cudaEventRecord(b); cudaEventSynchronize(b);
      float ms; cudaEventElapsedTime(&ms, a, b); tot += ms; if (ms < best) best = ms;
    }
    printf("%s size %6ld MB grid %5d: best %8.4f ms  %7.1f GB/s  mean %8.4f ms %7.1f GB/s\n", k ? "static" : "stride", s >> 20, g, best, s / best / 1e6, tot / reps, s / (tot / reps) / 1e6);
  }
  return 0;
}
