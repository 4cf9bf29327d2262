/* ref_dot.c — the CPU reference's inner products: f64 sums in one fixed
 * order on every machine, written with the compiler's vector types so that
 * the sums stay in registers, four at a time under AVX2 where the
 * processor has it (vec.h). Each product of two floats is exact in f64, so
 * a sum's value depends only on its order: sum k (k < 8) takes the terms i = k mod 8,
 * then the eight are added as ((s0 + s1) + (s2 + s3)) + ((s4 + s5) +
 * (s6 + s7)), then the terms past the last whole eight one by one. The
 * vector width changes how many sums an instruction adds, never which
 * terms a sum takes or their order. C11 without FMA contraction (-std=c11
 * keeps a * b + c two roundings), so no machine fuses them either. */
#include <string.h>

#include "ref.h"
#include "vec.h"

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

CLONES double dot(const float *a, const float *b, long n)
{
    V4D s0 = {0, 0, 0, 0}, s1 = s0, p;
    long i = 0;
    for (; i + 8 <= n; i += 8) {
        QUAD(&p, a + i, b + i);
        s0 += p;
        QUAD(&p, a + i + 4, b + i + 4);
        s1 += p;
    }
    double s[8];
    memcpy(s, &s0, sizeof s0);
    memcpy(s + 4, &s1, sizeof s1);
    double t = tree(s);
    for (; i < n; i++)
        t += (double)a[i] * b[i];
    return t;
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

/* dot(the row dequant_q8 gives, x, n) without writing the row out: the
 * same terms in the same sums, so the same value. n whole 32-value blocks. */
CLONES double dot_q8(const int8_t *q, const uint16_t *sc, const float *x, long n)
{
    V4D s0 = {0, 0, 0, 0}, s1 = s0;
    for (long c = 0; c < n; c += Q8_BLOCK) {
        float d = f16_to_f32(sc[c / Q8_BLOCK]);
        V8F s = {d, d, d, d, d, d, d, d};
        for (long j = 0; j < Q8_BLOCK; j += 8) {
            V8C v;
            V8F xv;
            memcpy(&v, q + c + j, sizeof v);
            memcpy(&xv, x + c + j, sizeof xv);
            V8F w = __builtin_convertvector(v, V8F) * s;
            V4F wl = {w[0], w[1], w[2], w[3]}, wh = {w[4], w[5], w[6], w[7]};
            V4F xl = {xv[0], xv[1], xv[2], xv[3]}, xh = {xv[4], xv[5], xv[6], xv[7]};
            s0 += __builtin_convertvector(wl, V4D) * __builtin_convertvector(xl, V4D);
            s1 += __builtin_convertvector(wh, V4D) * __builtin_convertvector(xh, V4D);
        }
    }
    double t[8];
    memcpy(t, &s0, sizeof s0);
    memcpy(t + 4, &s1, sizeof s1);
    return tree(t);
}
