/* ref_flash.c — kernels/flash.cu's arithmetic on the CPU: a prefill chunk's
 * causal attention with the kernel's f16 operands, its tiles of keys and
 * its online softmax, so that the reference running a plan under
 * LOGOS_REF_NUMERICS (and the kernel tests' twin) computes what a flash
 * launch does, but for the order of the f32 sums inside the tensor cores.
 *
 * Per key head g the stacked rows i = t GG + h % GG (GG = nh / nkv) fall in
 * blocks of 64, as the kernel's blocks take them; a row walks its keys
 * [lo, hi) in tiles of BK keys (64, or 32 where hd or vd passes 128)
 * from jlo, the least lo of its block's rows that have keys, and per tile
 *
 *   s_j  = f16(scale q) . f16(K_j), in f32   (capped: cap tanh(s_j / cap))
 *   m'   = max(m, max_j s_j);  u = m', or 0 where it is -inf
 *   corr = e^(m - u);  P_j = e^(s_j - u)
 *   l    = corr l + sum_j P_j;  o = corr o + sum_j f16(P_j) v16(V_j);  m = m'
 *
 * then y = o / l (sinks: o e^(m - M) / (l e^(m - M) + e^(sink - M)), M =
 * max(m, sink)), 0 where the denominator is 0 (a row without keys). v16 is
 * a value as f16, 0 where it is not finite in f16 (NaN, or past 65504): a
 * masked key's weight is 0 and 0 times a garbage row stays 0. A dot of f16
 * operands goes 16 products a step, each step's products summed (in f64)
 * and added into the f32 sum once, as an mma step adds; l sums in four
 * parts (the four lanes of a row: key columns 8n + 2ti, + 1) joined as
 * (l0 + l1) + (l2 + l3); e^x is 2^(x log2 e) in f32; and where the
 * kernel's compiler contracts a product and a sum into an fma (nvcc's
 * default: l's first sum after the rescale, the sinks' denominator), so
 * does this. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "logos.h"

enum { BQ = 64 };   /* stacked query rows a block of the kernel */
static const float L2E = 1.4426950408889634f;   /* e^x = 2^(x L2E) */

/* One key head's keys and values as the kernel stages them (f16 values
 * held in f32), and the scratch of one row. */
typedef struct Head {
    const FlashAttn *f;
    long bk;             /* keys a tile */
    float *kh, *vh;      /* [key][hd], [key][vd]; zero past the last key */
    float *qh, *s, *o;   /* the row's f16 query, a tile's scores then weights, its output */
} Head;

/* A row's running maximum and sums. */
typedef struct RowSum {
    float m, l[4];
} RowSum;

/* x as f16 holds it: rounded to nearest even, past 65504's rounding inf. */
static float h16(float x)
{
    return f16_to_f32(f32_to_f16(x));
}

/* A value as the kernel stages it: f16, 0 where it is not finite in f16. */
static float v16(float x)
{
    return fabsf(x) <= 65504.0f ? h16(x) : 0.0f;
}

/* c + a . b over n values (b at stride bs) of f16 operands, n at most 16:
 * one mma step into an f32 accumulator (products exact, summed in f64, the
 * sum rounded once). */
static float mma_step(float c, const float *a, const float *b, long bs, long n)
{
    double s = c;
    for (long k = 0; k < n; k++)
        s += (double)a[k] * b[k * bs];
    return (float)s;
}

/* Row t's keys [lo, hi), as the kernel clamps its position. */
static void keys(const FlashAttn *f, int32_t pos, long nctx, long *lo, long *hi)
{
    *hi = pos < 0 ? 0 : pos > nctx ? nctx : pos;
    *lo = f->window && *hi > f->window ? *hi - f->window : 0;
}

/* Key head g's keys and values below jmax, as f16. */
static void stage(Head *hd, const float *K, const float *V, long g, long jmax)
{
    const FlashAttn *f = hd->f;
    for (long j = 0; j < jmax; j++) {
        for (long d = 0; d < f->hd; d++)
            hd->kh[j * f->hd + d] = h16(K[(j * f->nkv + g) * f->hd + d]);
        for (long d = 0; d < f->vd; d++)
            hd->vh[j * f->vd + d] = v16(V[(j * f->nkv + g) * f->vd + d]);
    }
}

/* The scores of keys j0 .. j0 + bk - 1 into hd->s (-inf outside [lo, hi)),
 * capped; their maximum. */
static float scores(const Head *hd, long j0, long lo, long hi)
{
    const FlashAttn *f = hd->f;
    float mx = -INFINITY;
    for (long c = 0; c < hd->bk; c++) {
        long j = j0 + c;
        float x = -INFINITY;
        if (j >= lo && j < hi) {
            x = 0.0f;
            for (long d = 0; d < f->hd; d += 16)
                x = mma_step(x, hd->qh + d, hd->kh + j * f->hd + d, 1, f->hd - d < 16 ? f->hd - d : 16);
            if (f->cap > 0.0f)
                x = f->cap * tanhf(x / f->cap);
        }
        hd->s[c] = x;
        mx = fmaxf(mx, x);
    }
    return mx;
}

/* One tile of keys from j0 for the row in hd's scratch: its sums rescaled
 * to the new maximum, its weights added. */
static void tile(Head *hd, long j0, long lo, long hi, RowSum *rs)
{
    const FlashAttn *f = hd->f;
    float mn = fmaxf(rs->m, scores(hd, j0, lo, hi)), u = mn == -INFINITY ? 0.0f : mn;
    float corr = exp2f((rs->m - u) * L2E);   /* m = -inf: 0 */
    rs->m = mn;
    for (long v = 0; v < f->vd; v++)
        hd->o[v] *= corr;
    for (long c = 0; c < hd->bk; c++) {
        float p = exp2f((hd->s[c] - u) * L2E);   /* -inf: 0 */
        long ti = c % 8 / 2;   /* the lane whose part of l it joins; its first fuses with the rescale */
        rs->l[ti] = c < 8 && c % 2 == 0 ? fmaf(rs->l[ti], corr, p) : rs->l[ti] + p;
        hd->s[c] = h16(p);
    }
    for (long c = 0; c < hd->bk; c += 16)
        for (long v = 0; v < f->vd; v++)
            hd->o[v] = mma_step(hd->o[v], hd->s + c, hd->vh + (j0 + c) * f->vd + v, f->vd, 16);
}

/* y's row: o over its denominator (with head h's sink), 0 without one. */
static void finish(const Head *hd, const RowSum *rs, long h, float *y)
{
    const FlashAttn *f = hd->f;
    float l = (rs->l[0] + rs->l[1]) + (rs->l[2] + rs->l[3]), scale = 1.0f, denom = l;
    if (f->sinks) {
        float sk = f->sinks[h], mm = fmaxf(rs->m, sk);
        scale = rs->m == -INFINITY ? 0.0f : expf(rs->m - mm);
        denom = fmaf(denom, scale, expf(sk - mm));
    }
    float fac = denom > 0.0f ? scale / denom : 0.0f;
    for (long v = 0; v < f->vd; v++)
        y[v] = hd->o[v] * fac;
}

/* Query row t's head h, whose block's keys start at jlo. */
static void row(Head *hd, const float *q, long t, long h, long jlo, long lo, long hi, float *y)
{
    const FlashAttn *f = hd->f;
    RowSum rs = {-INFINITY, {0, 0, 0, 0}};
    for (long d = 0; d < f->hd; d++)
        hd->qh[d] = h16(q[(t * f->nh + h) * f->hd + d] * f->scale);
    memset(hd->o, 0, sizeof *hd->o * (size_t)f->vd);
    for (long j0 = lo > jlo ? jlo + (lo - jlo) / hd->bk * hd->bk : jlo; j0 < hi; j0 += hd->bk)
        tile(hd, j0, lo, hi, &rs);
    finish(hd, &rs, h, y + (t * f->nh + h) * f->vd);
}

/* The first key of the block of stacked rows [i0, i1): the least lo of
 * its rows that have keys (none: past every key). */
static long first_key(const long *lo, const long *hi, long i0, long i1, long gg)
{
    long jlo = LONG_MAX;
    for (long i = i0; i < i1; i++)
        if (lo[i / gg] < hi[i / gg] && lo[i / gg] < jlo)
            jlo = lo[i / gg];
    return jlo;
}

void flash_attend(const FlashAttn *f, const float *q, const int32_t *pos, long rows, const float *K, const float *V,
                  long nctx, float *y)
{
    ASSERT(f->nkv > 0 && f->nh % f->nkv == 0);
    long gg = f->nh / f->nkv, all = rows * gg, jmax = 0;
    Arena *a = arena_new();
    long *lo = arena_alloc(a, sizeof *lo * (size_t)(rows + 1)), *hi = arena_alloc(a, sizeof *hi * (size_t)(rows + 1));
    for (long t = 0; t < rows; t++) {
        keys(f, pos[t], nctx, &lo[t], &hi[t]);
        jmax = hi[t] > jmax ? hi[t] : jmax;
    }
    Head hd = {.f = f, .bk = f->hd > 128 || f->vd > 128 ? 32 : 64};
    hd.kh = arena_alloc(a, sizeof *hd.kh * (size_t)((jmax + hd.bk) * f->hd));
    hd.vh = arena_alloc(a, sizeof *hd.vh * (size_t)((jmax + hd.bk) * f->vd));
    hd.qh = arena_alloc(a, sizeof *hd.qh * (size_t)f->hd);
    hd.s = arena_alloc(a, sizeof *hd.s * (size_t)hd.bk);
    hd.o = arena_alloc(a, sizeof *hd.o * (size_t)f->vd);
    for (long g = 0; g < f->nkv; g++) {
        stage(&hd, K, V, g, jmax);
        for (long i0 = 0; i0 < all; i0 += BQ) {
            long i1 = i0 + BQ < all ? i0 + BQ : all, jlo = first_key(lo, hi, i0, i1, gg);
            for (long i = i0; i < i1; i++)
                row(&hd, q, i / gg, g * gg + i % gg, jlo, lo[i / gg], hi[i / gg], y);
        }
    }
    arena_free(a);
}
