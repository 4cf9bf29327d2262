/* ref_dot.c — the CPU reference's inner products: f64 sums in one fixed
 * order on every machine, written with the compiler's vector types so that
 * the sums stay in registers, four at a time under AVX2 where the
 * processor has it (vec.h). Each product of two floats is exact in f64, so
 * a sum's value depends only on its order: sum k (k < 8) takes the terms i = k mod 8,
 * then the eight are added as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) +
 * (s6 + s7)), then the terms past the last whole eight one by one. The
 * vector width changes how many sums an instruction adds, never which
 * terms a sum takes or their order. C11 without FMA contraction (-std=c11
 * keeps a * b + c two roundings), so no machine fuses them either. A Q8_0
 * row's step is also written in AVX2's own instructions (GCC 12 takes the
 * vector types' int8 conversion apart value by value), the same operations
 * in the same order, chosen once at load; and two rows (or two rows of x)
 * go at once, each its own sums, so that one's adds run while the other's
 * are in flight (bench/NOTES.md, session twenty-seven: a Llama-3-8B
 * layer's decode step about 1.8 times faster, the values bit for bit). */
#include <string.h>

#include "ref.h"
#include "vec.h"

#ifdef VEC_AVX2
#include <immintrin.h>
#endif

/* Terms i .. i + 3 of a and b as f64, multiplied: into *out. */
#define QUAD(out, a, b)                                                     \
    do {                                                                    \
        V4F qa_, qb_;                                                       \
        memcpy(&qa_, (a), sizeof qa_);                                      \
        memcpy(&qb_, (b), sizeof qb_);                                      \
        *(out) = __builtin_convertvector(qa_, V4D) * __builtin_convertvector(qb_, V4D); \
    } while (0)

static double tree(const double *s)
{
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* Terms i .. i + 7 of a and b: the first four into s0, the others into s1. */
static inline __attribute__((always_inline)) void eight(const float *a, const float *b, V4D *s0, V4D *s1)
{
    V4D p;
    QUAD(&p, a, b);
    *s0 += p;
    QUAD(&p, a + 4, b + 4);
    *s1 += p;
}

/* The eight sums' total, then the terms past the last whole eight. */
static inline __attribute__((always_inline)) double finish(const V4D *s0, const V4D *s1, const float *a, const float *b,
                                                           long i, long n)
{
    double s[8];
    memcpy(s, s0, sizeof *s0);
    memcpy(s + 4, s1, sizeof *s1);
    double t = tree(s);
    for (; i < n; i++)
        t += (double)a[i] * b[i];
    return t;
}

CLONES double dot(const float *a, const float *b, long n)
{
    V4D s0 = {0, 0, 0, 0}, s1 = s0;
    long i = 0;
    for (; i + 8 <= n; i += 8)
        eight(a + i, b + i, &s0, &s1);
    return finish(&s0, &s1, a, b, i, n);
}

/* dot(a, b0, n) and dot(a, b1, n) in out[0] and out[1]: the same sums,
 * two at a time (a processor adds the one while the other's add is in
 * flight). */
CLONES void dot_pair(const float *a, const float *b0, const float *b1, long n, double *out)
{
    V4D s0 = {0, 0, 0, 0}, s1 = s0, u0 = s0, u1 = s0;
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        eight(a + i, b0 + i, &s0, &s1);
        eight(a + i, b1 + i, &u0, &u1);
    }
    out[0] = finish(&s0, &s1, a, b0, i, n);
    out[1] = finish(&u0, &u1, a, b1, i, n);
}

/* A Q8_0 row (n quants q, an f16 scale sc a 32) dequantized to f32 (each quant
 * times its scale, rounded to f32: wrow's values) into out, eight at a
 * time. */
CLONES void dequant_q8(const int8_t *q, const uint16_t *sc, long n, float *out)
{
    for (long c = 0; c < n; c += Q8_BLOCK) {
        float d = f16_to_f32(sc[c / Q8_BLOCK]);
        V8F s = {d, d, d, d, d, d, d, d};
        for (long j = 0; j < Q8_BLOCK; j += 8) {
            V8C v;
            memcpy(&v, q + c + j, sizeof v);
            V8F f = __builtin_convertvector(v, V8F) * s;
            memcpy(out + c + j, &f, sizeof f);
        }
    }
}

/* Terms j .. j + 7 of a Q8_0 block (quants q, its scale in every lane of
 * d) times x's: the first four into s0, the others into s1.
 * q8_rows_plain takes it; q8_rows_avx2 takes its twin below. */
static inline __attribute__((always_inline)) void eight_q8(const int8_t *q, const V8F *d, const float *x, V4D *s0, V4D *s1)
{
    V8C v;
    V8F xv;
    memcpy(&v, q, sizeof v);
    memcpy(&xv, x, sizeof xv);
    V8F w = __builtin_convertvector(v, V8F) * *d;
    V4F wl = {w[0], w[1], w[2], w[3]}, wh = {w[4], w[5], w[6], w[7]};
    V4F xl = {xv[0], xv[1], xv[2], xv[3]}, xh = {xv[4], xv[5], xv[6], xv[7]};
    *s0 += __builtin_convertvector(wl, V4D) * __builtin_convertvector(xl, V4D);
    *s1 += __builtin_convertvector(wh, V4D) * __builtin_convertvector(xh, V4D);
}

#ifdef VEC_AVX2
/* eight_q8 in AVX2's own instructions (GCC 12 takes __builtin_convertvector
 * of eight int8 apart value by value): the same operations, in order. */
static inline __attribute__((always_inline, target("avx2"))) void eight_q8_avx2(const int8_t *q, const V8F *d,
                                                                                const float *x, V4D *s0, V4D *s1)
{
    __m256 w = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)q))), *d);
    *s0 = _mm256_add_pd(*s0, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(w)), _mm256_cvtps_pd(_mm_loadu_ps(x))));
    *s1 = _mm256_add_pd(*s1, _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(w, 1)), _mm256_cvtps_pd(_mm_loadu_ps(x + 4))));
}
#endif

/* The f16 scale at sc in every lane of *d. */
static inline __attribute__((always_inline)) void splat(const uint16_t *sc, V8F *d)
{
    float v = f16_to_f32(*sc);
    *d = (V8F){v, v, v, v, v, v, v, v};
}

/* out[r] = dot(the row dequant_q8 gives of quants q[r] and scales sc[r], x,
 * n) for r < rows (1 or 2), without writing the rows out: the same terms in
 * the same sums, so the same values; two rows' sums at once (a processor
 * adds the one while the other's add is in flight). n whole 32-value
 * blocks. STEP is eight_q8 or its AVX2 twin. */
#define Q8_ROWS(STEP)                                                                               \
    V4D s[2][2] = {{{0, 0, 0, 0}, {0, 0, 0, 0}}, {{0, 0, 0, 0}, {0, 0, 0, 0}}};                  \
    for (long c = 0; c < n; c += Q8_BLOCK) {                                                       \
        for (int r = 0; r < rows; r++) {                                                           \
            V8F d;                                                                                 \
            splat(sc[r] + c / Q8_BLOCK, &d);                                                       \
            for (long j = 0; j < Q8_BLOCK; j += 8)                                                 \
                STEP(q[r] + c + j, &d, x + c + j, &s[r][0], &s[r][1]);                             \
        }                                                                                          \
    }                                                                                              \
    for (int r = 0; r < rows; r++)                                                                 \
        out[r] = finish(&s[r][0], &s[r][1], x, x, n, n)

#ifdef VEC_AVX2
__attribute__((target("avx2"))) static void q8_rows_avx2(const int8_t *const *q, const uint16_t *const *sc, int rows,
                                                          const float *x, long n, double *out)
{
    Q8_ROWS(eight_q8_avx2);
}
#endif

static void q8_rows_plain(const int8_t *const *q, const uint16_t *const *sc, int rows, const float *x, long n,
                          double *out)
{
    Q8_ROWS(eight_q8);
}

typedef void Q8Rows(const int8_t *const *, const uint16_t *const *, int, const float *, long, double *);

#ifdef VEC_AVX2
/* q8_rows is chosen once, at load, as CLONES' functions are. */
static Q8Rows *q8_rows_for_this_processor(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? q8_rows_avx2 : q8_rows_plain;
}
static Q8Rows q8_rows __attribute__((ifunc("q8_rows_for_this_processor")));
#else
static Q8Rows *const q8_rows = q8_rows_plain;
#endif

double dot_q8(const int8_t *q, const uint16_t *sc, const float *x, long n)
{
    double v;
    q8_rows(&q, &sc, 1, x, n, &v);
    return v;
}

void dot_q8_pair(const int8_t *qa, const uint16_t *sa, const int8_t *qb, const uint16_t *sb, const float *x, long n,
                 double *out)
{
    const int8_t *q[2] = {qa, qb};
    const uint16_t *sc[2] = {sa, sb};
    q8_rows(q, sc, 2, x, n, out);
}
