/* vec.h — the compiler's vector types (GCC's and Clang's) that the CPU
 * reference's hot loops are written in (ref_dot.c, quant.c), and CLONES:
 * on x86-64 under GCC such a function is built a second time for AVX2 and
 * the one the processor runs is chosen at load (not under the sanitizers,
 * whose builds keep the plain one). The vector width changes how many
 * values an instruction takes, never a result. */
#ifndef VEC_H
#define VEC_H

typedef double V4D __attribute__((vector_size(32)));
typedef float V4F __attribute__((vector_size(16)));
typedef float V8F __attribute__((vector_size(32)));
typedef int V8I __attribute__((vector_size(32)));
typedef signed char V8C __attribute__((vector_size(8)));

/* VEC_AVX2: where a function may also be built for AVX2 and chosen at
 * load (CLONES, or ref_dot.c's own resolver) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define VEC_AVX2 1
#define CLONES __attribute__((target_clones("avx2", "default")))
#else
#define CLONES
#endif

#endif
