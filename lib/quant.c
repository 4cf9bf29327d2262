/* quant.c — the number formats of weight files: IEEE half (f16) to and from
 * f32 with round-to-nearest-even, Q8_0 blocks (32 int8 quants and one f16
 * scale), and reading one row of a bound weight as f32. */
#include <math.h>
#include <string.h>

#include "logos.h"
#include "vec.h"

/* Keeps the top bits of m above `shift`, rounding to nearest, ties to even. */
static uint32_t round_shift(uint32_t m, int shift)
{
    uint32_t r = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    return r + (rem > half || (rem == half && (r & 1)));
}

uint16_t f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t a = x & 0x7fffffff, e = a >> 23;
    if (a > 0x7f800000)   /* NaN: stays quiet, keeps its top payload bits */
        return sign | 0x7e00 | (uint16_t)((a >> 13) & 0x3ff);
    if (a >= 0x477ff000)  /* 65520 and above (and inf) round to inf */
        return sign | 0x7c00;
    if (a >= 0x38800000)  /* normal half; a carry out of the mantissa bumps the exponent */
        return sign | (uint16_t)round_shift(a - (112u << 23), 13);
    if (a < 0x33000000)   /* below 2^-25: rounds to zero */
        return sign;
    /* subnormal half: the value in units of 2^-24 */
    return sign | (uint16_t)round_shift((a & 0x7fffff) | 0x800000, (int)(126 - e));
}

/* One 32-value block of x at d = amax/127: each quant x/d rounded half away
 * from zero (lroundf's rounding, without the call), clamped to +-127, a
 * NaN 0 (NaN never the largest). Eight values at a time in the compiler's
 * vectors, the comparisons' masks standing for branches, AVX2 where the
 * processor has it (CLONES, vec.h): synthetic weights of 80 billion values
 * pass through here. */
CLONES static void q8_block(const float *x, int8_t *q, uint16_t *s)
{
    V8F xv[Q8_BLOCK / 8], am = {0}, zero = {0};
    const V8F c127 = zero + 127, half = zero + 0.5f;
    memcpy(xv, x, sizeof xv);
    for (int k = 0; k < Q8_BLOCK / 8; k++) {
        V8F a = (V8F)((V8I)xv[k] & 0x7fffffff);
        V8I gt = a > am;
        am = (V8F)(((V8I)a & gt) | ((V8I)am & ~gt));
    }
    float amax = 0;
    for (int i = 0; i < 8; i++)
        amax = am[i] > amax ? am[i] : amax;
    float d = amax / 127;
    *s = f32_to_f16(d);
    V8F id = zero + (d > 0 ? d : 1.0f), on = zero + (d > 0 ? 1.0f : 0.0f);
    for (int k = 0; k < Q8_BLOCK / 8; k++) {
        V8F v = xv[k] / id;
        v = (V8F)((V8I)(v * on) & (v == v));
        V8I hi = v > c127, lo = v < -c127, in = ~(hi | lo);
        v = (V8F)(((V8I)c127 & hi) | ((V8I)-c127 & lo) | ((V8I)v & in));
        V8I t = __builtin_convertvector(v, V8I);   /* toward zero; exact, as is what it leaves */
        V8F f = v - __builtin_convertvector(t, V8F);
        t = t - (f >= half) + (f <= -half);        /* a mask is -1 where it holds */
        V8C c = __builtin_convertvector(t, V8C);
        memcpy(q + 8 * k, &c, sizeof c);
    }
}

void q8_quantize(const float *x, long n, int8_t *q, uint16_t *s)
{
    ASSERT(n % Q8_BLOCK == 0);
    for (long b = 0; b < n / Q8_BLOCK; b++)
        q8_block(x + b * Q8_BLOCK, q + b * Q8_BLOCK, s + b);
}

void q8_dequantize(const int8_t *q, const uint16_t *s, long n, float *x)
{
    ASSERT(n % Q8_BLOCK == 0);
    for (long i = 0; i < n; i++)
        x[i] = (float)q[i] * f16_to_f32(s[i / Q8_BLOCK]);
}

/* One 32-value block of x quantized at d = amax/127 into out: words int8
 * words (2: a second of the residue in 254ths) read back as f32, or under
 * h16 (one word) each quant times d rounded to f16, the product rounded to
 * f16, as mmh.cu reads them. */
static void act_block(const float *x, int words, int h16, float *out)
{
    float amax = 0;
    for (int i = 0; i < Q8_BLOCK; i++)
        amax = fmaxf(amax, fabsf(x[i]));
    float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f, dh = f16_to_f32(f32_to_f16(d));
    for (int i = 0; i < Q8_BLOCK; i++) {
        float u = x[i] * id, hi = rintf(u), v = hi;
        if (words == 2)
            v += fminf(fmaxf(rintf((u - hi) * 254.0f), -127.0f), 127.0f) * (1.0f / 254.0f);
        out[i] = h16 ? f16_to_f32(f32_to_f16(hi * dh)) : v * d;
    }
}

void act_quantize(const float *x, long n, int words, float *out)
{
    ASSERT(n % Q8_BLOCK == 0);
    for (long b = 0; b < n; b += Q8_BLOCK)
        act_block(x + b, words, 0, out + b);
}

void act_quantize_h16(const float *x, long n, float *out)
{
    ASSERT(n % Q8_BLOCK == 0);
    for (long b = 0; b < n; b += Q8_BLOCK)
        act_block(x + b, 1, 1, out + b);
}

void buf_row(const Buf *w, long r, float *out)
{
    ASSERT(w->rank >= 1 && r >= 0 && r < w->d[0]);
    long cols = w->n / w->d[0];
    if (w->base == T_Q8)
        q8_dequantize(w->q + r * cols, w->s + r * cols / Q8_BLOCK, cols, out);
    else if (w->base == T_F32)
        memcpy(out, w->f + r * cols, (size_t)cols * sizeof *out);
    else
        BUG("buf_row of a tensor that is neither f32 nor q8");
}
