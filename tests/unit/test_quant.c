/* test_quant.c — unit tests of lib/quant.c and lib/weights.c: f16 conversion,
 * Q8_0 blocks, rows of bound weights, synthetic weights written to files and
 * bound back, and the weight files refused. Prints `ok N - what` or
 * `not ok N - what` per check; exits 1 when any check fails. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logos.h"
#include "progtext.h"
#include "tap.h"


/* ---- f16 ---- */

static int bits_of(float f, uint16_t want)
{
    uint16_t h = f32_to_f16(f);
    if (h != want)
        printf("# f32_to_f16(%a) = 0x%04x, want 0x%04x\n", f, h, want);
    return h == want;
}

static void test_f16_exact(void)
{
    static const struct {
        float f;
        uint16_t h;
    } cases[] = {{0.0f, 0x0000}, {-0.0f, 0x8000}, {1.0f, 0x3c00}, {-2.0f, 0xc000}, {65504.0f, 0x7bff},
                 {0x1p-24f, 0x0001}, {0x1p-14f, 0x0400}, {0x1.ff8p-15f, 0x03ff}, {INFINITY, 0x7c00},
                 {-INFINITY, 0xfc00}};
    int good = 1;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        good &= bits_of(cases[i].f, cases[i].h);
        float back = f16_to_f32(cases[i].h);
        good &= memcmp(&back, &cases[i].f, sizeof back) == 0;
    }
    ok(good, "f16: exact values convert both ways (0, -0, 1, -2, 65504, 2^-24, 2^-14, inf)");
    ok(isnan(f16_to_f32(f32_to_f16(NAN))), "f16: NaN stays NaN");
}

static void test_f16_all(void)
{
    int good = 1;
    for (uint32_t h = 0; h <= 0xffff; h++) {
        if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff))
            continue;   /* NaN */
        good &= f32_to_f16(f16_to_f32((uint16_t)h)) == h;
    }
    ok(good, "f16: every non-NaN half survives f16 -> f32 -> f16");
}

static void test_f16_rounding(void)
{
    int good = 1;
    good &= bits_of(1 + 0x1p-11f, 0x3c00);             /* tie, to even (down) */
    good &= bits_of(1 + 3 * 0x1p-11f, 0x3c02);         /* tie, to even (up) */
    good &= bits_of(1 + 0x1p-11f + 0x1p-20f, 0x3c01);  /* above the tie */
    good &= bits_of(-(1 + 3 * 0x1p-11f), 0xbc02);
    good &= bits_of(65519.0f, 0x7bff);                 /* below the tie with inf */
    good &= bits_of(65520.0f, 0x7c00);                 /* the tie goes to inf (even) */
    good &= bits_of(0x1p-25f, 0x0000);                 /* subnormal tie, to even zero */
    good &= bits_of(0x1.0002p-25f, 0x0001);
    good &= bits_of(3 * 0x1p-25f, 0x0002);             /* 1.5 units: to even 2 */
    good &= bits_of(0x1p-30f, 0x0000);
    good &= bits_of(0x1p-14f - 0x1p-25f, 0x0400);      /* subnormal tie rounds up into normals */
    good &= bits_of(0x1.ffep-1f, 0x3c00);              /* a carry into the exponent */
    ok(good, "f16: round to nearest, ties to even, in normals, subnormals and at overflow");
}

/* ---- Q8_0 ---- */

static uint64_t rng = 0x1234567;

static double uniform(void)
{
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng >> 11) * 0x1p-53;
}

/* The bound of |x - q*s| when q = round(x/d), d = amax/127 exact, and s =
 * f16(d) is the stored scale:
 *   |x - q*s| <= |x - q*d| + |q|*|d - s|
 *   |x - q*d| <= d/2                        (rounding x/d to an integer)
 *   |q| <= |x|/d + 1/2
 *   |d - s| <= max(d*2^-11, 2^-25)         (f16 rounding: half an ulp of 11
 *                                            significant bits, or half the
 *                                            subnormal step 2^-24)
 * plus a few f32 roundings (x/d, q*s) of relative size 2^-24 each, covered by
 * 1e-6 of |x| + d. */
static double q8_bound(float x, double d)
{
    double es = fmax(d * 0x1p-11, 0x1p-25);
    return d / 2 + (fabs(x) / d + 0.5) * es + 1e-6 * (fabs(x) + d);
}

static int check_block(const float *x, const int8_t *q, uint16_t s, const float *y)
{
    float amax = 0;
    int qmax = 0, good = 1;
    for (int i = 0; i < 32; i++)
        amax = fmaxf(amax, fabsf(x[i]));
    float d = amax / 127;
    good &= s == f32_to_f16(d);
    for (int i = 0; i < 32; i++) {
        good &= q[i] == (int8_t)lroundf(x[i] / d);
        good &= fabs((double)x[i] - y[i]) <= q8_bound(x[i], d);
        qmax = abs(q[i]) > qmax ? abs(q[i]) : qmax;
    }
    return good && qmax == 127;
}

static void test_q8_random(void)
{
    static const double mags[] = {1e-4, 1e-2, 1, 37, 1e3, 6e4};
    enum { N = 32 * 64 };
    float x[N], y[N];
    int8_t q[N];
    uint16_t s[N / 32];
    int good = 1;
    for (size_t m = 0; m < sizeof mags / sizeof *mags; m++) {
        for (int i = 0; i < N; i++)
            x[i] = (float)(mags[m] * (2 * uniform() - 1) * (i % 7 == 0 ? 0.01 : 1));
        q8_quantize(x, N, q, s);
        q8_dequantize(q, s, N, y);
        for (int b = 0; b < N / 32; b++)
            good &= check_block(x + 32 * b, q + 32 * b, s[b], y + 32 * b);
    }
    ok(good, "q8: random blocks of six magnitudes: q = round(x/d), s = f16(d), |x - q*s| within half a step");
}

/* The quants as their definition gives them: x/d rounded half away from
 * zero (lroundf), clamped to +-127, a NaN 0, d = amax/127 (0: all 0). */
static int q8_by_definition(const float *x, const int8_t *q)
{
    float amax = 0;
    for (int i = 0; i < 32; i++)
        if (fabsf(x[i]) > amax)
            amax = fabsf(x[i]);
    float d = amax / 127;
    for (int i = 0; i < 32; i++) {
        float v = d > 0 ? x[i] / d : 0;
        long want = v != v ? 0 : v >= 127 ? 127 : v <= -127 ? -127 : lroundf(v);
        if (q[i] != want) {
            printf("# x %a (d %a): quant %d, want %ld\n", x[i], d, q[i], want);
            return 0;
        }
    }
    return 1;
}

/* Blocks whose quotients land on halves (ties round away from zero), just
 * either side of them, and blocks with NaN, infinities, subnormals. */
static void test_q8_definition(void)
{
    enum { B = 9 };
    float x[B * 32];
    int8_t q[B * 32];
    uint16_t s[B];
    for (int i = 0; i < 32; i++) {
        float t = (float)(i - 16) + 0.5f;   /* amax 127 below: d 1, x/d = t */
        x[i] = t, x[32 + i] = nextafterf(t, 0), x[64 + i] = nextafterf(t, 2 * t);
        x[96 + i] = (float)(2 * uniform() - 1) * 1e-40f;   /* subnormal */
        x[128 + i] = i == 3 ? NAN : (float)(2 * uniform() - 1);
        x[160 + i] = i == 5 ? INFINITY : (float)(2 * uniform() - 1);
        x[192 + i] = i == 7 ? -INFINITY : i == 8 ? NAN : 1;
        x[224 + i] = (float)(i % 3) * 0.25f;   /* quotients 0, 63.5, 127 */
        x[256 + i] = -(float)(i % 5) * 31.75f; /* x/d at 0, 31.75 ... 127 */
    }
    for (int b = 0; b < 3; b++)
        x[32 * b + 31] = 127;
    int good = 1;
    q8_quantize(x, B * 32, q, s);
    for (int b = 0; b < B; b++)
        good &= q8_by_definition(x + 32 * b, q + 32 * b);
    ok(good, "q8: quants as lroundf gives them at ties and beside them, with NaN, infinities and subnormals");
}

static void test_q8_zero(void)
{
    float x[64] = {0}, y[64];
    int8_t q[64];
    uint16_t s[2];
    x[40] = 3;   /* the second block is not zero */
    memset(q, 1, sizeof q);
    q8_quantize(x, 64, q, s);
    q8_dequantize(q, s, 64, y);
    int good = s[0] == 0;
    for (int i = 0; i < 32; i++)
        good &= q[i] == 0 && y[i] == 0;
    ok(good && q[40] == 127 && fabsf(y[40] - 3) <= 3 * 0x1p-11f, "q8: a block of zeros gives zero quants, scale and values");
}

/* act_quantize_h16: the a8 values as mmh.cu reads them, f16(q f16(d)):
 * a block of amax 12.7 has d 0.1, f16(0.1) = 0x2e66 (0.0999755859375);
 * 127 quants of it round to f16's 12.6953125 (0x4a59), not 12.7 or the
 * product 12.696899...; a block of zeros stays 0; act_quantize's own value
 * is q d unrounded. */
static void test_act_h16(void)
{
    float x[64] = {0}, y[64], z[64];
    x[0] = 12.7f, x[1] = -0.1f, x[2] = 5.0f;
    act_quantize_h16(x, 64, y);
    act_quantize(x, 64, 1, z);
    float dh = f16_to_f32(0x2e66);
    int good = f32_to_f16(0.1f) == 0x2e66 && y[0] == f16_to_f32(f32_to_f16(127 * dh)) && y[0] == 12.6953125f &&
               y[1] == -dh && y[2] == f16_to_f32(f32_to_f16(50 * dh)) && z[0] == 127 * (12.7f / 127.0f);
    for (int i = 32; i < 64; i++)
        good &= y[i] == 0;
    ok(good, "act_quantize_h16: each a8 value f16(q f16(d)), as mmh.cu reads it");
}

static void test_buf_row(void)
{
    float f[4 * 64], row[64], want[64];
    int8_t q[4 * 64];
    uint16_t s[8];
    for (int i = 0; i < 4 * 64; i++)
        f[i] = (float)(i % 13) - 6.5f;
    q8_quantize(f, 4 * 64, q, s);
    Buf bf = {.base = T_F32, .rank = 2, .d = {4, 64}, .n = 256, .f = f};
    Buf bq = {.base = T_Q8, .rank = 2, .d = {4, 64}, .n = 256, .q = q, .s = s};
    buf_row(&bf, 2, row);
    int good = memcmp(row, f + 128, sizeof row) == 0;
    buf_row(&bq, 3, row);
    q8_dequantize(q + 192, s + 6, 64, want);
    ok(good && memcmp(row, want, sizeof row) == 0, "buf_row: an f32 row is copied, a q8 row dequantized");
}

/* ---- weights ---- */

static const char program[] =
    "logos 1 decode_step tiny\n"
    "in tok : i32\n"
    "weight emb : q8[8,64]\n"
    "weight an0 : f32[64]\n"
    "weight wq0 : f32[5,64]\n"
    "weight we0 : q8[2,3,32]\n"
    "out y : f32[64]\n"
    "y = rmsnorm(emb[tok], an0, eps=1e-5)\n"
    "end\n";

static Prog *parse_program(Arena *a)
{
    return prog_text(a, program);
}

/* dir/file in one of four static buffers (two may be live in one call). */
static char *path_in(const char *dir, const char *file)
{
    static char buf[4][4096];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "%s/%s", dir, file);
    return b;
}

static void write_bytes(const char *path, long n)
{
    FILE *f = fopen(path, "wb");
    for (long i = 0; i < n; i++)
        fputc((int)(i & 0xff), f);
    fclose(f);
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            unlink(path_in(dir, e->d_name));
    closedir(d);
    rmdir(dir);
}

static int same_buf(const Buf *a, const Buf *b)
{
    if (!a || !b || a->base != b->base || a->rank != b->rank || a->n != b->n ||
        memcmp(a->d, b->d, sizeof a->d))
        return 0;
    if (a->base == T_F32)
        return memcmp(a->f, b->f, (size_t)a->n * 4) == 0;
    return memcmp(a->q, b->q, (size_t)a->n) == 0 && memcmp(a->s, b->s, (size_t)a->n / 32 * 2) == 0;
}

static void test_synth(void)
{
    long d[2] = {5, 64}, d1[1] = {64};
    float a[320], b[320], c[320], v[64];
    weights_synth("wq0", 2, d, 7, a);
    weights_synth("wq0", 2, d, 7, b);
    weights_synth("wq0", 2, d, 8, c);
    int good = memcmp(a, b, sizeof a) == 0 && memcmp(a, c, sizeof a) != 0;
    double lim = sqrt(3.0 / 64);
    for (int i = 0; i < 320; i++)
        good &= fabsf(a[i]) <= lim;
    weights_synth("an0", 1, d1, 7, v);
    for (int i = 0; i < 64; i++)
        good &= v[i] >= 0.75f && v[i] <= 1.25f && v[i] != 1;
    ok(good, "synth: deterministic by seed, rank 1 in [0.75, 1.25], rank 2 within sqrt(3/cols)");
}

/* Writes the program's weights into dir and binds them back: equal to the
 * synthetic values bound in memory. */
static void test_roundtrip(const Prog *p, const char *dir)
{
    Env *mem = env_new(), *disk = env_new();
    Weights *wm, *wd;
    int rc = weights_write_synthetic(p, dir, 42);
    ok(rc == 0, "write_synthetic: writes every weight's files");
    ok(access(path_in(dir, "emb.q"), F_OK) == 0 && access(path_in(dir, "emb.s"), F_OK) == 0 &&
           access(path_in(dir, "an0.f"), F_OK) == 0,
       "write_synthetic: emb.q, emb.s, an0.f exist");
    rc |= weights_bind(&wm, p, mem, NULL, 42);
    rc |= weights_bind(&wd, p, disk, dir, 42);
    ok(rc == 0, "bind: synthetic and from the directory");
    int good = 1;
    const char *names[] = {"emb", "an0", "wq0", "we0"};
    for (int i = 0; i < 4; i++)
        good &= same_buf(env_get(mem, names[i]), env_get(disk, names[i]));
    ok(good, "bind: the files hold exactly the synthetic values (q8 quants and scales equal)");
    float want[64], row[64];
    long d[2] = {8, 64};
    float all[8 * 64];
    weights_synth("emb", 2, d, 42, all);
    buf_row(env_get(disk, "emb"), 5, row);
    int8_t q[64];
    uint16_t s[2];
    q8_quantize(all + 5 * 64, 64, q, s);
    q8_dequantize(q, s, 64, want);
    ok(memcmp(row, want, sizeof row) == 0, "bind: a q8 row from files is the quantized synthetic row");
    weights_close(wm);
    weights_close(wd);
    env_free(mem);
    env_free(disk);
}

/* The status of binding the program's weights from dir. */
static int bind_status(const Prog *p, const char *dir)
{
    Env *env = env_new();
    Weights *w = NULL;
    int rc = weights_bind(&w, p, env, dir, 0);
    weights_close(w);
    env_free(env);
    return rc;
}

static void restore(const Prog *p, const char *dir)
{
    if (weights_write_synthetic(p, dir, 42) != 0) {
        printf("Bail out! cannot rewrite the weights\n");
        exit(1);
    }
}

static void test_refused(const Prog *p, const char *dir, const char *outside)
{
    unlink(path_in(dir, "an0.f"));
    ok(bind_status(p, dir) == EXIT_INPUT, "refused: a missing file");
    restore(p, dir);
    write_bytes(path_in(dir, "an0.f"), 255);
    ok(bind_status(p, dir) == EXIT_INPUT, "refused: a short file");
    write_bytes(path_in(dir, "an0.f"), 257);
    ok(bind_status(p, dir) == EXIT_INPUT, "refused: a long file");
    restore(p, dir);
    write_bytes(path_in(dir, "emb.s"), 30);
    ok(bind_status(p, dir) == EXIT_INPUT, "refused: a .s of the wrong size");
    restore(p, dir);
    write_bytes(outside, 256);
    unlink(path_in(dir, "an0.f"));
    ok(symlink(outside, path_in(dir, "an0.f")) == 0 && bind_status(p, dir) == EXIT_INPUT,
       "refused: a symlink that resolves outside the directory");
    unlink(path_in(dir, "an0.f"));
    restore(p, dir);
    rename(path_in(dir, "an0.f"), path_in(dir, "an0.real"));
    ok(symlink("an0.real", path_in(dir, "an0.f")) == 0 && bind_status(p, dir) == 0,
       "accepted: a symlink that resolves inside the directory");
    unlink(path_in(dir, "an0.f"));
    mkdir(path_in(dir, "an0.f"), 0700);
    ok(bind_status(p, dir) == EXIT_INPUT, "refused: a directory in place of a file");
    rmdir(path_in(dir, "an0.f"));
    restore(p, dir);
    int before = diag_errors;
    unlink(path_in(dir, "emb.q"));
    write_bytes(path_in(dir, "wq0.f"), 3);
    ok(bind_status(p, dir) == EXIT_INPUT && diag_errors - before == 2, "refused: every bad file is reported");
    restore(p, dir);
    ok(bind_status(p, path_in(dir, "nowhere")) == EXIT_INPUT, "refused: a weights directory that does not exist");
}

static void test_kept(const Prog *p, const char *dir)
{
    Env *env = env_new();
    long d[1] = {64};
    Buf *mine = env_alloc(env, "an0", T_F32, 1, d);
    mine->f[0] = 123;
    unlink(path_in(dir, "an0.f"));
    Weights *w;
    int rc = weights_bind(&w, p, env, dir, 0);
    ok(rc == 0 && env_get(env, "an0")->f[0] == 123 && env_get(env, "emb"),
       "bind: a weight already in the env is kept (its file is not read)");
    weights_close(w);
    env_free(env);
    restore(p, dir);
}

int main(void)
{
    diag_tool = "test_quant";
    test_f16_exact();
    test_f16_all();
    test_f16_rounding();
    test_q8_random();
    test_q8_zero();
    test_q8_definition();
    test_act_h16();
    test_buf_row();
    test_synth();

    char dir[] = "/tmp/test_quant.XXXXXX", outside[] = "/tmp/test_quant_out.XXXXXX";
    int ofd = mkstemp(outside);
    if (!mkdtemp(dir) || ofd < 0) {
        printf("Bail out! cannot make temporary files\n");
        return 1;
    }
    close(ofd);
    Arena *a = arena_new();
    Prog *p = parse_program(a);
    test_roundtrip(p, dir);
    test_refused(p, dir, outside);
    test_kept(p, dir);
    arena_free(a);
    remove_dir(dir);
    unlink(outside);

    return tap_done();
}
