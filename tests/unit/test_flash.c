/* test_flash.c — unit tests of flash.cu's arithmetic on the CPU
 * (lib/ref_flash.c): flash_attend against a straightforward attention in
 * f64 on random inputs (never zeros), within what f16 operands allow; at
 * the tiles' edges (keys not a whole number of tiles, tiles of 32 past 128
 * values, a window, whose block starts its tiles at its first row's key),
 * with a cap, sinks, rows without keys and values not finite in f16; and
 * the reference taking it for the attention a plan's flash launch covers
 * (RefNum, plan_ref_numerics), not bit for bit its f32 attention. Prints
 * TAP lines; exits 1 on a failure. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"
#include "progtext.h"
#include "rnd.h"
#include "tap.h"

static uint64_t seed = 0x2545f4914f6cdd1dull;
static Arena *A;

/* A random value in [-1,1], never near zero. */
static float rnd(void)
{
    return rnd_next(&seed);
}

static float *rnds(long n)
{
    float *x = arena_alloc(A, sizeof *x * (size_t)n);
    for (long i = 0; i < n; i++)
        x[i] = rnd();
    return x;
}

/* One attention: its shape, its inputs, flash_attend's output. */
typedef struct Att {
    FlashAttn f;
    long rows, nctx;
    const float *q, *K, *V;
    int32_t *pos;
    float *y;
} Att;

/* Random q, K, V (and sinks) of this shape; row t at position pos0 + t. */
static Att att(FlashAttn f, long rows, long nctx, int32_t pos0, int sinks)
{
    Att a = {.f = f, .rows = rows, .nctx = nctx};
    a.q = rnds(rows * f.nh * f.hd);
    a.K = rnds(nctx * f.nkv * f.hd);
    a.V = rnds(nctx * f.nkv * f.vd);
    a.pos = arena_alloc(A, sizeof *a.pos * (size_t)rows);
    a.y = arena_alloc(A, sizeof *a.y * (size_t)(rows * f.nh * f.vd));
    for (long t = 0; t < rows; t++)
        a.pos[t] = pos0 + (int32_t)t;
    if (sinks)
        a.f.sinks = rnds(f.nh);
    return a;
}

static void flash(Att *a)
{
    flash_attend(&a->f, a->q, a->pos, a->rows, a->K, a->V, a->nctx, a->y);
}

/* Row t's head h in f64: softmax over keys [lo, hi) with the sink, values
 * not finite read as 0 (what a masked garbage row must give). */
static void want_row(const Att *a, long t, long h, double *w, double *s)
{
    const FlashAttn *f = &a->f;
    long g = h / (f->nh / f->nkv), hi = a->pos[t] < 0 ? 0 : a->pos[t] > a->nctx ? a->nctx : a->pos[t];
    long lo = f->window && hi > f->window ? hi - f->window : 0;
    double mx = f->sinks ? f->sinks[h] : -INFINITY, sum = 0;
    for (long j = lo; j < hi; j++) {
        double d = 0;
        for (long i = 0; i < f->hd; i++)
            d += (double)a->q[(t * f->nh + h) * f->hd + i] * a->K[(j * f->nkv + g) * f->hd + i];
        s[j] = f->cap ? f->cap * tanh(f->scale * d / f->cap) : f->scale * d;
        mx = fmax(mx, s[j]);
    }
    for (long j = lo; j < hi; j++)
        sum += s[j] = exp(s[j] - mx);
    sum += f->sinks ? exp(f->sinks[h] - mx) : 0;
    for (long v = 0; v < f->vd; v++) {
        double acc = 0;
        for (long j = lo; j < hi; j++) {
            float x = a->V[(j * f->nkv + g) * f->vd + v];
            acc += s[j] * (fabsf(x) <= 65504.0f ? x : 0);
        }
        w[v] = sum > 0 ? acc / sum : 0;
    }
}

/* max |y - want| over max |want|. */
static double err_f64(const Att *a)
{
    double *w = arena_alloc(A, sizeof *w * (size_t)a->f.vd), *s = arena_alloc(A, sizeof *s * (size_t)(a->nctx + 1));
    double err = 0, mag = 1e-30;
    for (long t = 0; t < a->rows; t++)
        for (long h = 0; h < a->f.nh; h++) {
            want_row(a, t, h, w, s);
            for (long v = 0; v < a->f.vd; v++) {
                err = fmax(err, fabs(a->y[(t * a->f.nh + h) * a->f.vd + v] - w[v]));
                mag = fmax(mag, fabs(w[v]));
            }
        }
    return err / mag;
}

/* The f16 operands (q scale and K: 2^-11 of a score each; P and V: 2^-11
 * of a term) leave some 1e-4 to 1e-3 of the largest value: 2e-3. */
static void near_f64(Att *a, const char *what)
{
    flash(a);
    double e = err_f64(a);
    printf("# %s: %.2e of the largest value from f64\n", what, e);
    ok(e < 2e-3, what);
}

static int same_bits(const float *x, const float *y, long n)
{
    return memcmp(x, y, sizeof *x * (size_t)n) == 0;
}

/* ---- against f64 ---- */

static void test_shapes(void)
{
    Att a = att((FlashAttn){8, 2, 64, 32, 0.125f, 0, 0, NULL}, 70, 128, 11, 0);
    near_f64(&a, "70 rows at 11 (280 stacked, keys to 80: not whole tiles of 64), 4 query heads a key head");
    Att b = att((FlashAttn){4, 1, 256, 256, 0.0625f, 0, 0, NULL}, 40, 64, 1, 1);
    near_f64(&b, "head 256: tiles of 32 keys; sinks");
    Att c = att((FlashAttn){8, 2, 128, 128, 0.088f, 50, 40, NULL}, 70, 256, 1, 0);
    near_f64(&c, "window 40 (blocks' tiles from their first row's key), cap 50");
    Att d = att((FlashAttn){4, 2, 16, 16, 0.25f, 30, 0, NULL}, 100, 128, 1, 0);
    near_f64(&d, "head 16, 100 rows, cap 30");
    Att e = att((FlashAttn){14, 2, 64, 64, 1.0f, 0, 50, NULL}, 40, 128, 60, 1);
    near_f64(&e, "larger scores (scale 1), 7 query heads a key head, window 50, sinks");
}

/* ---- the edges ---- */

/* Rows whose position is 0 (or below) have no keys: 0, sinks or not. */
static void test_no_keys(void)
{
    for (int sinks = 0; sinks < 2; sinks++) {
        Att a = att((FlashAttn){4, 2, 32, 32, 0.17f, 0, 0, NULL}, 20, 64, 1, sinks);
        a.pos[0] = 0;
        a.pos[7] = -3;
        flash(&a);
        int zero = 1;
        for (long i = 0; i < 4 * 32; i++)
            zero &= a.y[i] == 0.0f && a.y[7 * 4 * 32 + i] == 0.0f;
        ok(zero && err_f64(&a) < 2e-3, sinks ? "rows without keys give 0 (sinks)" : "rows without keys give 0");
    }
}

/* A value not finite in f16 (NaN, 1e5, inf) is read as 0. */
static void test_nonfinite_values(void)
{
    Att a = att((FlashAttn){4, 2, 32, 32, 0.17f, 0, 0, NULL}, 20, 64, 1, 0);
    float *V = arena_alloc(A, sizeof *V * 64 * 2 * 32);
    memcpy(V, a.V, sizeof *V * 64 * 2 * 32);
    V[(3 * 2 + 1) * 32 + 5] = NAN;
    V[(10 * 2 + 0) * 32 + 0] = 1e5f;
    V[(12 * 2 + 1) * 32 + 31] = -INFINITY;
    V[(19 * 2 + 0) * 32 + 7] = 65520.0f;   /* rounds past f16's largest */
    Att b = a;
    b.V = V;
    b.y = arena_alloc(A, sizeof *b.y * 20 * 4 * 32);
    flash(&b);
    int fin = 1;
    for (long i = 0; i < 20 * 4 * 32; i++)
        fin &= isfinite(b.y[i]);
    V[(3 * 2 + 1) * 32 + 5] = V[(10 * 2 + 0) * 32 + 0] = V[(12 * 2 + 1) * 32 + 31] = V[(19 * 2 + 0) * 32 + 7] = 0;
    a.V = V;   /* the same values, 0 where b's are not finite */
    flash(&a);
    ok(fin && same_bits(a.y, b.y, 20 * 4 * 32) && err_f64(&b) < 2e-3,
       "values not finite in f16 (NaN, inf, 1e5, 65520) read as 0");
}

/* A row's tiles start at the first key of its block of 64 stacked rows:
 * under a window of 100 its block's earlier rows start them before its
 * own first key, and the weights' f16 rounding against another running
 * maximum gives other bits than the row alone in its block. */
static void test_block_tiles(void)
{
    FlashAttn f = {4, 2, 32, 32, 0.5f, 0, 100, NULL};
    Att a = att(f, 30, 256, 171, 0);   /* rows 171 .. 200: keys from 71 .. 100 */
    flash(&a);
    Att one = a;   /* the last row alone: its tiles from key 100 */
    one.rows = 1;
    one.q = a.q + 29 * 4 * 32;
    one.pos = a.pos + 29;
    one.y = arena_alloc(A, sizeof *one.y * 4 * 32);
    flash(&one);
    double d = 0;
    for (long i = 0; i < 4 * 32; i++)
        d = fmax(d, fabs(one.y[i] - a.y[29 * 4 * 32 + i]));
    ok(!same_bits(one.y, a.y + 29 * 4 * 32, 4 * 32) && d < 2e-3 && err_f64(&one) < 2e-3,
       "a row's tiles start at its block's first key, not its own");
}

/* ---- the reference ---- */

static Prog *prog(const char *text)
{
    return prog_text(A, text);
}

static const char *chunk_src =
    "logos 1 t t\nsize T\nin bpos : i32[T]\nin bq : f32[T,8,64]\nin sk : f32[8]\nstate K : f32[128,2,64]\n"
    "state V : f32[128,2,32]\nout bo : f32[T,8,32]\n"
    "bo = attend(bq, K[..bpos], V[..bpos], sk, scale=0.125, softcap=20, window=50)\nend\n";

/* The chunk's inputs into env, from a. */
static void bind(Env *env, const Att *a)
{
    long dq[3] = {a->rows, 8, 64}, dk[3] = {128, 2, 64}, dv[3] = {128, 2, 32}, ds = 8;
    memcpy(env_alloc(env, "bq", T_F32, 3, dq)->f, a->q, sizeof(float) * (size_t)(a->rows * 8 * 64));
    memcpy(env_alloc(env, "K", T_F32, 3, dk)->f, a->K, sizeof(float) * 128 * 2 * 64);
    memcpy(env_alloc(env, "V", T_F32, 3, dv)->f, a->V, sizeof(float) * 128 * 2 * 32);
    memcpy(env_alloc(env, "sk", T_F32, 1, &ds)->f, a->f.sinks, sizeof(float) * 8);
    memcpy(env_alloc(env, "bpos", T_I32, 1, &a->rows)->i, a->pos, sizeof(int32_t) * (size_t)a->rows);
}

/* bo after running p as num says. */
static float *run_chunk(const Prog *p, const Att *a, const RefNum *num)
{
    Env *env = env_new();
    bind(env, a);
    float *y = arena_alloc(A, sizeof *y * (size_t)(a->rows * 8 * 32));
    if (ref_run_numerics(p, env, num, -1)) {
        printf("Bail out! the chunk does not run\n");
        exit(1);
    }
    memcpy(y, env_get(env, "bo")->f, sizeof *y * (size_t)(a->rows * 8 * 32));
    env_free(env);
    return y;
}

static void test_reference(void)
{
    Prog *p = prog(chunk_src);
    Att a = att((FlashAttn){8, 2, 64, 32, 0.125f, 20, 50, NULL}, 70, 128, 11, 1);
    flash(&a);
    long n = 70 * 8 * 32;
    const Expr *at[] = {p->stmts[0].value};
    float *f32 = run_chunk(p, &a, &(RefNum){0}), *fl = run_chunk(p, &a, &(RefNum){0, at, 1, NULL, 0});
    Env *env = env_new();
    bind(env, &a);
    ok(ref_run(p, env) == 0 && same_bits(f32, env_get(env, "bo")->f, n), "a zeroed RefNum runs as ref_run");
    env_free(env);
    ok(same_bits(fl, a.y, n), "RefNum's flash attention call is flash_attend's, bit for bit");
    double d = 0, mag = 0;
    for (long i = 0; i < n; i++) {
        d = fmax(d, fabs(fl[i] - f32[i]));
        mag = fmax(mag, fabs(f32[i]));
    }
    printf("# flash against f32: %.2e of the largest value\n", d / mag);
    ok(!same_bits(fl, f32, n) && d / mag < 2e-3, "and not the f32 attention's bits: it rounds to f16");
    Graph *g = graph_build(A, p);
    FuseOpts fo;
    fuse_defaults(&fo, 128);
    fo.quiet = 1;
    RefNum num[3];
    for (int k = NUM_PRECISE; k <= NUM_Q8X2; k++) {
        fo.numerics = k;
        Plan *pl = fuse(A, p, g, &fo);
        num[k] = pl ? plan_ref_numerics(A, pl) : (RefNum){-1, NULL, 0, NULL, 0};
    }
    ok(num[NUM_Q8].quant == 1 && num[NUM_Q8].nflash == 1 && num[NUM_Q8].flash[0] == at[0] &&
           num[NUM_PRECISE].quant == 0 && num[NUM_PRECISE].nflash == 0 && num[NUM_Q8X2].quant == 2 &&
           num[NUM_Q8X2].nflash == 0,
       "plan_ref_numerics: q8's flash launch covers the attention call; precise and q8x2 run attend");
}

int main(void)
{
    diag_tool = "test_flash";
    A = arena_new();
    test_shapes();
    test_no_keys();
    test_nonfinite_values();
    test_block_tiles();
    test_reference();
    arena_free(A);
    return tap_done();
}
