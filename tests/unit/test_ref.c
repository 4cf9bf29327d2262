/* test_ref.c — unit tests of the CPU reference executor (lib/ref.c): small
 * programs run by ref_run against straightforward computations written here
 * again (and a few values worked out by hand), compared by relative error.
 * Every op of the table (ops.h) is covered by a numeric check: each test
 * marks the ops it checks, and the last check names any op none checked.
 * A program that fails to run stops the tests ("Bail out!"). Prints TAP
 * lines; exits 1 on a failure. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logos.h"
#include "progtext.h"
#include "ref.h"
#include "rnd.h"
#include "tap.h"

static int covered[OP_COUNT];   /* ops a numeric check has checked */
static Arena *A;
static uint64_t seed = 88172645463325252ull;

/* A random value in [-1,1], never near zero. */
static float rnd(void)
{
    return rnd_next(&seed);
}

/* max |got - want| over max |want|: below 1e-5. */
static void close_to(const float *got, const double *want, long n, const char *what)
{
    double err = 0, mag = 1e-30;
    for (long i = 0; i < n; i++) {
        err = fmax(err, fabs(got[i] - want[i]));
        mag = fmax(mag, fabs(want[i]));
    }
    if (err / mag >= 1e-5)
        printf("# %s: relative error %g\n", what, err / mag);
    ok(err / mag < 1e-5, what);
}

static Prog *prog(const char *text)
{
    return prog_text(A, text);
}

static float *fill(Env *env, const char *name, int rank, long d0, long d1, long d2)
{
    long d[3] = {d0, d1, d2};
    Buf *b = env_alloc(env, name, T_F32, rank, d);
    for (long i = 0; i < b->n; i++)
        b->f[i] = rnd();
    return b->f;
}

static int32_t *ints(Env *env, const char *name, int rank, long n, const int32_t *v)
{
    Buf *b = env_alloc(env, name, T_I32, rank, &n);
    memcpy(b->i, v, sizeof *v * (size_t)b->n);
    return b->i;
}

static float *out(Env *env, const char *name)
{
    Buf *b = env_get(env, name);
    return b ? b->f : NULL;
}

/* Runs p; a failure ends the tests: every check after a run is numeric. */
static void run(const Prog *p, Env *env)
{
    int rc = ref_run(p, env);
    if (rc) {
        printf("Bail out! ref_run returned %d on a test program\n", rc);
        exit(1);
    }
}

/* The ops the checks of a test cover, OP_COUNT-terminated. */
static void covers(const int *ops)
{
    for (; *ops != OP_COUNT; ops++)
        covered[*ops] = 1;
}
#define COVERS(...) covers((const int[]){__VA_ARGS__, OP_COUNT})

/* Each |got - want| within 1e-6 of |want| (values of any size). */
static void each_close(const float *got, const double *want, long n, const char *what)
{
    long bad = -1;
    for (long i = 0; i < n && bad < 0; i++)
        if (!(fabs(got[i] - want[i]) <= 1e-6 * fabs(want[i]) + 1e-30))
            bad = i;
    if (bad >= 0)
        printf("# %s: value %ld is %.9g, not %.9g\n", what, bad, (double)got[bad], want[bad]);
    ok(bad < 0, what);
}

/* ---- products ---- */

static void test_matmul(void)
{
    Prog *p = prog("logos 1 t t\nsize T\nin x : f32[T,64]\nweight w : f32[48,64]\n"
                   "weight wq : q8[48,64] unpair(16,8)\nout y : f32[T,48]\nout yq : f32[T,48]\n"
                   "y = w @ x\nyq = wq @ x\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 2, 3, 64, 0), *w = fill(env, "w", 2, 48, 64, 0), wf[48 * 64];
    long d[2] = {48, 64};
    Buf *q = env_alloc(env, "wq", T_Q8, 2, d);
    for (long i = 0; i < 48 * 64; i++)
        wf[i] = rnd();
    q8_quantize(wf, 48 * 64, (int8_t *)q->q, (uint16_t *)q->s);
    run(p, env);
    double want[3 * 48], wantq[3 * 48];
    for (long t = 0; t < 3; t++)
        for (long o = 0; o < 48; o++) {
            long i = o % 16, fr = o - i + (i < 4 ? 2 * i : i < 8 ? 2 * (i - 4) + 1 : i);
            double s = 0, sq = 0;
            for (long c = 0; c < 64; c++) {
                s += (double)w[o * 64 + c] * x[t * 64 + c];
                sq += q->q[fr * 64 + c] * (double)f16_to_f32(q->s[(fr * 64 + c) / 32]) * x[t * 64 + c];
            }
            want[t * 48 + o] = s;
            wantq[t * 48 + o] = sq;
        }
    close_to(out(env, "y"), want, 3 * 48, "f32 matmul of 3 rows");
    close_to(out(env, "yq"), wantq, 3 * 48, "q8 matmul through unpair(16,8)");
    COVERS(OP_MATMUL);
    env_free(env);
}

/* A row of a vector weight is one value. */
static void test_vector_lookup(void)
{
    Prog *p = prog("logos 1 t t\nin tok : i32\nweight v : f32[8]\nout y : f32\ny = v[tok]\nend\n");
    Env *env = env_new();
    float *v = fill(env, "v", 1, 8, 0, 0);
    ints(env, "tok", 0, 1, (int32_t[]){5});
    run(p, env);
    ok(out(env, "y")[0] == v[5], "a vector weight's row 5 is its value 5");
    COVERS(OP_INDEX);
    env_free(env);
}

/* unpair(12, 4, 8): in each group of 12 rows, rows 8..11 are rotated pairs
 * read as (8, 10, 9, 11); the rest in place (a latent query's layout). */
static void test_unpair_at(void)
{
    Prog *p = prog("logos 1 t t\nin x : f32[64]\nweight w : f32[24,64] unpair(12, 4, 8)\nout y : f32[24]\n"
                   "y = w @ x\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 1, 64, 0, 0), *w = fill(env, "w", 2, 24, 64, 0);
    run(p, env);
    double want[24];
    static const int from[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 9, 11};
    for (long o = 0; o < 24; o++) {
        long fr = o - o % 12 + from[o % 12];
        double s = 0;
        for (long c = 0; c < 64; c++)
            s += (double)w[fr * 64 + c] * x[c];
        want[o] = s;
    }
    close_to(out(env, "y"), want, 24, "unpair(12, 4, 8) reads rows 8, 10, 9, 11 of each group");
    env_free(env);
}

/* ---- norms and rope ---- */

static void test_rmsnorm(void)
{
    Prog *p = prog("logos 1 t t\nin x : f32[64]\nweight g : f32[16]\nout y : f32[4,16]\n"
                   "y = rmsnorm(x ~ [4,16], g, eps=1e-5, offset=1)\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 1, 64, 0, 0), *g = fill(env, "g", 1, 16, 0, 0);
    run(p, env);
    double want[64];
    for (int h = 0; h < 4; h++) {
        double ss = 0;
        for (int i = 0; i < 16; i++)
            ss += (double)x[h * 16 + i] * x[h * 16 + i];
        for (int i = 0; i < 16; i++)
            want[h * 16 + i] = x[h * 16 + i] / sqrt(ss / 16 + 1e-5) * (1 + g[i]);
    }
    close_to(out(env, "y"), want, 64, "per-head rmsnorm with offset 1");
    COVERS(OP_RMSNORM, OP_RESHAPE);
    env_free(env);
}

static double llama3_freq(int i, int rot)
{
    double f = pow(500000, -2.0 * i / rot), wl = 2 * M_PI / f;
    if (wl < 8192 / 4.0)
        return f;
    if (wl > 8192 / 1.0)
        return f / 32;
    double sm = (8192 / wl - 1) / (4 - 1);
    return (1 - sm) * f / 32 + sm * f;
}

static void test_rope(void)
{
    Prog *p = prog("logos 1 t t\nin pos : i32\nin x : f32[4,16]\nout y : f32[4,16]\n"
                   "y = rope(x, pos, theta=500000, rot=8, scaling=llama3, factor=32, low=1, high=4, orig=8192)\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 2, 4, 16, 0);
    ints(env, "pos", 0, 1, (int32_t[]){37});
    run(p, env);
    double want[64];
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 16; i++)
            want[h * 16 + i] = x[h * 16 + i];
    for (int h = 0; h < 4; h++)
        for (int i = 0; i < 4; i++) {
            double a = 36 * llama3_freq(i, 8), x0 = x[h * 16 + i], x1 = x[h * 16 + i + 4];
            want[h * 16 + i] = x0 * cos(a) - x1 * sin(a);
            want[h * 16 + i + 4] = x1 * cos(a) + x0 * sin(a);
        }
    close_to(out(env, "y"), want, 64, "rope: NEOX pairs, rot 8 of 16, llama3 scaling");
    COVERS(OP_ROPE);
    env_free(env);
}

static double yarn_freq(int i, int dim, int truncate)
{
    double base = 10000, orig = 64, factor = 4;
    double lo = dim * log(orig / (32 * 2 * M_PI)) / (2 * log(base));
    double hi = dim * log(orig / (1 * 2 * M_PI)) / (2 * log(base));
    if (truncate) {
        lo = floor(lo);
        hi = ceil(hi);
    }
    lo = fmax(lo, 0);
    hi = fmin(hi, dim - 1);
    double ramp = fmin(1, fmax(0, (i - lo) / (hi == lo ? 0.001 : hi - lo)));
    double ex = pow(base, -2.0 * i / dim);
    return ex / factor * ramp + ex * (1 - ramp);
}

static void test_yarn(int truncate)
{
    Prog *p = prog(truncate ? "logos 1 t t\nin pos : i32\nin x : f32[2,16]\nout y : f32[2,16]\n"
                              "y = rope(x, pos, theta=10000, scaling=yarn, factor=4, orig=64, attn_factor=1.2)\nend\n"
                            : "logos 1 t t\nin pos : i32\nin x : f32[2,16]\nout y : f32[2,16]\n"
                              "y = rope(x, pos, theta=10000, scaling=yarn, factor=4, orig=64, truncate=0, "
                              "attn_factor=1.2)\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 2, 2, 16, 0);
    ints(env, "pos", 0, 1, (int32_t[]){50});
    run(p, env);
    double want[32];
    for (int h = 0; h < 2; h++)
        for (int i = 0; i < 8; i++) {
            double a = 49 * yarn_freq(i, 16, truncate), x0 = x[h * 16 + i], x1 = x[h * 16 + i + 8];
            want[h * 16 + i] = 1.2 * (x0 * cos(a) - x1 * sin(a));
            want[h * 16 + i + 8] = 1.2 * (x1 * cos(a) + x0 * sin(a));
        }
    close_to(out(env, "y"), want, 32, truncate ? "rope with yarn scaling and attn_factor"
                                               : "rope with yarn scaling, fractional ramp ends (truncate=0)");
    env_free(env);
}

/* ---- attention ---- */

static const char *attend_src =
    "logos 1 t t\nin pos : i32\nin q : f32[4,8]\nin sk : f32[4]\nstate K : f32[16,2,8]\n"
    "state V : f32[16,2,6]\nout o : f32[4,6]\n"
    "o = attend(q, K[..pos], V[..pos], sk, scale=0.35, softcap=1.5, window=4)\nend\n";

static void attend_want(const float *q, const float *K, const float *V, const float *sk, int p, double *want)
{
    for (int h = 0; h < 4; h++) {
        int kh = h / 2;
        double s[16], mx = sk ? sk[h] : -1e300, sum = 0;
        int lo = p > 4 ? p - 4 : 0;
        for (int j = lo; j < p; j++) {
            double d = 0;
            for (int i = 0; i < 8; i++)
                d += (double)q[h * 8 + i] * K[(j * 2 + kh) * 8 + i];
            s[j] = 1.5 * tanh(0.35 * d / 1.5);
            mx = fmax(mx, s[j]);
        }
        for (int j = lo; j < p; j++)
            sum += exp(s[j] - mx);
        sum += sk ? exp(sk[h] - mx) : 0;
        for (int v = 0; v < 6; v++) {
            double acc = 0;
            for (int j = lo; j < p; j++)
                acc += exp(s[j] - mx) / sum * V[(j * 2 + kh) * 6 + v];
            want[h * 6 + v] = acc;
        }
    }
}

static void test_attend(void)
{
    Prog *p = prog(attend_src);
    Env *env = env_new();
    float *q = fill(env, "q", 2, 4, 8, 0), *sk = fill(env, "sk", 1, 4, 0, 0);
    float *K = fill(env, "K", 3, 16, 2, 8), *V = fill(env, "V", 3, 16, 2, 6);
    ints(env, "pos", 0, 1, (int32_t[]){10});
    run(p, env);
    double want[24];
    attend_want(q, K, V, sk, 10, want);
    close_to(out(env, "o"), want, 24, "attend: GQA, softcap, window 4, sinks");
    COVERS(OP_ATTEND, OP_UPTO);
    env_free(env);
}

static void test_stacked_attend(void)
{
    Prog *one = prog(attend_src);
    Prog *st = prog("logos 1 t t\nsize T\nin bpos : i32[T]\nin bq : f32[T,4,8]\nin sk : f32[4]\n"
                    "state K : f32[16,2,8]\nstate V : f32[16,2,6]\nout bo : f32[T,4,6]\n"
                    "bo = attend(bq, K[..bpos], V[..bpos], sk, scale=0.35, softcap=1.5, window=4)\nend\n");
    Env *env = env_new();
    float *bq = fill(env, "bq", 3, 3, 4, 8);
    fill(env, "sk", 1, 4, 0, 0);
    fill(env, "K", 3, 16, 2, 8);
    fill(env, "V", 3, 16, 2, 6);
    ints(env, "bpos", 1, 3, (int32_t[]){5, 6, 7});
    run(st, env);
    float got[72];
    memcpy(got, out(env, "bo"), sizeof got);
    double want[72];
    for (int t = 0; t < 3; t++) {
        memcpy(fill(env, "q", 2, 4, 8, 0), bq + t * 32, 32 * sizeof(float));
        ints(env, "pos", 0, 1, (int32_t[]){5 + t});
        run(one, env);
        for (int i = 0; i < 24; i++)
            want[t * 24 + i] = out(env, "o")[i];
    }
    close_to(got, want, 72, "stacked attend (causal rows) equals 3 single attends");
    env_free(env);
}

static void test_latent(void)
{
    Prog *p = prog("logos 1 t t\nin pos : i32\nin qr : f32[2,12]\nin qp : f32[2,4]\nstate C : f32[8,20]\n"
                   "weight wk : f32[16,16]\nweight wv : f32[12,16]\nout o : f32[2,6]\n"
                   "o = latent(qr, qp, C[..pos], wk, wv, scale=0.3, lora=16)\nend\n");
    Env *env = env_new();
    float *qr = fill(env, "qr", 2, 2, 12, 0), *qp = fill(env, "qp", 2, 2, 4, 0), *C = fill(env, "C", 2, 8, 20, 0);
    float *wk = fill(env, "wk", 2, 16, 16, 0), *wv = fill(env, "wv", 2, 12, 16, 0);
    ints(env, "pos", 0, 1, (int32_t[]){5});
    run(p, env);
    double want[12];
    for (int h = 0; h < 2; h++) {
        double u[16] = {0}, s[5], c[16] = {0}, mx = -1e300, sum = 0;
        for (int i = 0; i < 8; i++)
            for (int l = 0; l < 16; l++)
                u[l] += (double)qr[h * 12 + i] * wk[(h * 8 + i) * 16 + l];
        for (int j = 0; j < 5; j++) {
            double d = 0;
            for (int l = 0; l < 16; l++)
                d += u[l] * C[j * 20 + l];
            for (int l = 0; l < 4; l++)
                d += (double)qp[h * 4 + l] * C[j * 20 + 16 + l];
            s[j] = 0.3 * d;
            mx = fmax(mx, s[j]);
        }
        for (int j = 0; j < 5; j++)
            sum += exp(s[j] - mx);
        for (int j = 0; j < 5; j++)
            for (int l = 0; l < 16; l++)
                c[l] += exp(s[j] - mx) / sum * C[j * 20 + l];
        for (int v = 0; v < 6; v++) {
            double o = 0;
            for (int l = 0; l < 16; l++)
                o += (double)wv[(h * 6 + v) * 16 + l] * c[l];
            want[h * 6 + v] = o;
        }
    }
    close_to(out(env, "o"), want, 12, "latent attention over 5 cache rows");
    COVERS(OP_LATENT);
    env_free(env);
}

/* ---- recurrent mixers ---- */

static void test_conv(void)
{
    Prog *one = prog("logos 1 t t\nin x : f32[8]\nweight w : f32[8,4]\nweight b : f32[8]\n"
                     "state R : f32[3,8]\nout y : f32[8]\ny = conv(x, R, w, b)\nend\n");
    Prog *st = prog("logos 1 t t\nsize T\nin bx : f32[T,8]\nweight w : f32[8,4]\nweight b : f32[8]\n"
                    "state R2 : f32[3,8]\nout by : f32[T,8]\nby = conv(bx, R2, w, b)\nend\n");
    Env *env = env_new();
    float *w = fill(env, "w", 2, 8, 4, 0), *b = fill(env, "b", 1, 8, 0, 0), *seq = fill(env, "bx", 2, 3, 8, 0);
    float got[24];
    double want[24];
    for (int t = 0; t < 3; t++) {
        memcpy(fill(env, "x", 1, 8, 0, 0), seq + t * 8, 8 * sizeof(float));
        run(one, env);
        memcpy(got + t * 8, out(env, "y"), 8 * sizeof(float));
        for (int c = 0; c < 8; c++) {
            double acc = b[c];
            for (int i = 0; i < 4; i++) {
                int s = t + i - 3;
                acc += s >= 0 ? (double)w[c * 4 + i] * seq[s * 8 + c] : 0;
            }
            want[t * 8 + c] = acc;
        }
    }
    close_to(got, want, 24, "conv ring over 3 steps equals the direct convolution");
    run(st, env);
    close_to(out(env, "by"), want, 24, "stacked conv rows equal the 3 steps");
    double last[24];
    for (int i = 0; i < 24; i++)
        last[i] = seq[i];
    close_to(env_get(env, "R")->f, last, 24, "the ring keeps the last 3 inputs");
    close_to(env_get(env, "R2")->f, last, 24, "the stacked ring keeps the last 3 inputs");
    COVERS(OP_CONV);
    env_free(env);
}

static void test_delta(void)
{
    Prog *p = prog("logos 1 t t\nin q : f32[2,4]\nin k : f32[2,4]\nin v : f32[4,3]\nin g : f32[4]\n"
                   "in beta : f32[4]\nstate S : f32[4,4,3]\nout o : f32[4,3]\n"
                   "o = delta(q, k, v, g, beta, S)\nend\n");
    Env *env = env_new();
    double S[48] = {0}, want[12];
    for (int step = 0; step < 2; step++) {
        float *q = fill(env, "q", 2, 2, 4, 0), *k = fill(env, "k", 2, 2, 4, 0), *v = fill(env, "v", 2, 4, 3, 0);
        float *g = fill(env, "g", 1, 4, 0, 0), *beta = fill(env, "beta", 1, 4, 0, 0);
        run(p, env);
        for (int h = 0; h < 4; h++) {
            double *Sh = S + h * 12;
            const float *kk = k + (h / 2) * 4, *qq = q + (h / 2) * 4;
            for (int i = 0; i < 12; i++)
                Sh[i] *= exp(g[h]);
            for (int j = 0; j < 3; j++) {
                double kv = 0;
                for (int i = 0; i < 4; i++)
                    kv += Sh[i * 3 + j] * kk[i];
                double u = beta[h] * (v[h * 3 + j] - kv);
                for (int i = 0; i < 4; i++)
                    Sh[i * 3 + j] += kk[i] * u;
            }
            for (int j = 0; j < 3; j++) {
                double o = 0;
                for (int i = 0; i < 4; i++)
                    o += Sh[i * 3 + j] * qq[i];
                want[h * 3 + j] = o;
            }
        }
    }
    close_to(out(env, "o"), want, 12, "delta rule, second step's output");
    close_to(env_get(env, "S")->f, S, 48, "delta rule, state after 2 steps");
    COVERS(OP_DELTA);
    env_free(env);
}

/* ---- routing and experts ---- */

/* The route expected: scores s, selection c; keep[] marks allowed experts. */
static void route_want(const float *lg, const float *bias, const char *score, int k, int groups, int tg, int norm,
                       double scale, double *want)
{
    double s[8], c[8], mx = -1e300, sum = 0;
    int allowed[8], kept[8] = {0};
    for (int i = 0; i < 8; i++)
        mx = fmax(mx, lg[i]);
    for (int i = 0; i < 8; i++)
        sum += exp(lg[i] - mx);
    for (int i = 0; i < 8; i++) {
        s[i] = !strcmp(score, "softmax") ? exp(lg[i] - mx) / sum : !strcmp(score, "sigmoid") ? 1 / (1 + exp(-lg[i])) : lg[i];
        c[i] = s[i] + (bias ? bias[i] : 0);
        allowed[i] = 1;
    }
    int gsz = 8 / groups, gkeep[8];
    double gs[8];
    for (int g = 0; g < groups; g++) {
        double a = -1e300, b = -1e300;   /* best two */
        for (int i = g * gsz; i < (g + 1) * gsz; i++) {
            if (c[i] > a) {
                b = a;
                a = c[i];
            } else if (c[i] > b) {
                b = c[i];
            }
        }
        gs[g] = bias ? a + b : a;
        gkeep[g] = 0;
    }
    for (int n = 0; n < tg; n++) {
        int best = -1;
        for (int g = 0; g < groups; g++)
            if (!gkeep[g] && (best < 0 || gs[g] > gs[best]))
                best = g;
        gkeep[best] = 1;
    }
    for (int i = 0; i < 8; i++)
        allowed[i] = gkeep[i / gsz];
    for (int n = 0; n < k; n++) {
        int best = -1;
        for (int i = 0; i < 8; i++)
            if (allowed[i] && !kept[i] && (best < 0 || c[i] > c[best]))
                best = i;
        kept[best] = 1;
    }
    double w[8], tot = 0, km = -1e300;
    for (int i = 0; i < 8; i++)
        km = kept[i] ? fmax(km, s[i]) : km;
    for (int i = 0; i < 8; i++) {
        w[i] = !kept[i] ? 0 : !strcmp(score, "topk_softmax") ? exp(s[i] - km) : s[i];
        tot += w[i];
    }
    int renorm = norm || !strcmp(score, "topk_softmax");
    for (int i = 0; i < 8; i++)
        want[i] = w[i] / (renorm ? tot : 1) * scale;
}

static void test_route(void)
{
    Prog *p = prog("logos 1 t t\nin l : f32[8]\nin bias : f32[8]\nout a : f32[8]\nout b : f32[8]\nout c : f32[8]\n"
                   "a = route(l, k=2, score=softmax, norm=1)\n"
                   "b = route(l, bias, k=3, score=sigmoid, groups=4, topk_groups=2, norm=1, scale=2.5)\n"
                   "c = route(l, k=2, score=topk_softmax)\nend\n");
    Env *env = env_new();
    float *l = fill(env, "l", 1, 8, 0, 0), *bias = fill(env, "bias", 1, 8, 0, 0);
    run(p, env);
    double want[8];
    route_want(l, NULL, "softmax", 2, 1, 1, 1, 1, want);
    close_to(out(env, "a"), want, 8, "route softmax top-2, renormalized");
    route_want(l, bias, "sigmoid", 3, 4, 2, 1, 2.5, want);
    close_to(out(env, "b"), want, 8, "route sigmoid with bias, 4 groups keeping 2, scale 2.5");
    route_want(l, NULL, "topk_softmax", 2, 1, 1, 0, 1, want);
    close_to(out(env, "c"), want, 8, "route topk_softmax top-2");
    COVERS(OP_ROUTE);
    env_free(env);
}

static double sig(double x)
{
    return 1 / (1 + exp(-x));
}

static void moe_want(const float *x, const float *r, const float *wg, const float *wu, const float *wd,
                     const float *bg, const float *bu, const float *bd, int oai, double *want)
{
    for (int i = 0; i < 16; i++)
        want[i] = 0;
    for (int e = 0; e < 4; e++) {
        if (r[e] == 0)
            continue;
        float a[32];
        for (int f = 0; f < 32; f++) {
            double g = bg ? bg[e * 32 + f] : 0, u = bu ? bu[e * 32 + f] : 0;
            for (int c = 0; c < 16; c++) {
                g += (double)wg[(e * 32 + f) * 16 + c] * x[c];
                u += (double)wu[(e * 32 + f) * 16 + c] * x[c];
            }
            if (oai) {
                g = fmin(g, 0.5);
                u = fmax(-0.5, fmin(u, 0.5));
                a[f] = (float)((u + 1) * g * sig(1.702 * g));
            } else {
                a[f] = (float)(g * sig(g) * u);
            }
        }
        for (int o = 0; o < 16; o++) {
            double y = bd ? bd[e * 16 + o] : 0;
            for (int f = 0; f < 32; f++)
                y += (double)wd[(e * 16 + o) * 32 + f] * a[f];
            want[o] += r[e] * y;
        }
    }
}

static void test_moe(void)
{
    Prog *p = prog("logos 1 t t\nin x : f32[16]\nin r : f32[4]\nweight wg : f32[4,32,16]\n"
                   "weight wu : f32[4,32,16]\nweight wd : f32[4,16,32]\nweight bg : f32[4,32]\n"
                   "weight bu : f32[4,32]\nweight bd : f32[4,16]\nout s : f32[16]\nout o : f32[16]\n"
                   "s = moe(x, r, wg, wu, wd, act=silu)\n"
                   "o = moe(x, r, wg, wu, wd, bg, bu, bd, act=oai, limit=0.5)\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 1, 16, 0, 0), *r = fill(env, "r", 1, 4, 0, 0);
    float *wg = fill(env, "wg", 3, 4, 32, 16), *wu = fill(env, "wu", 3, 4, 32, 16), *wd = fill(env, "wd", 3, 4, 16, 32);
    float *bg = fill(env, "bg", 2, 4, 32, 0), *bu = fill(env, "bu", 2, 4, 32, 0), *bd = fill(env, "bd", 2, 4, 16, 0);
    r[1] = r[2] = 0;
    run(p, env);
    double want[16];
    moe_want(x, r, wg, wu, wd, NULL, NULL, NULL, 0, want);
    close_to(out(env, "s"), want, 16, "moe silu over 2 kept experts");
    moe_want(x, r, wg, wu, wd, bg, bu, bd, 1, want);
    close_to(out(env, "o"), want, 16, "moe oai with biases, limit 0.5");
    COVERS(OP_MOE);
    env_free(env);
}

/* One row of a silu mixture of ne experts of ff over d values, in f64. */
static void moe_row_want(const float *x, const float *r, const float *wg, const float *wu, const float *wd,
                         long ne, long ff, long d, double *want)
{
    for (long o = 0; o < d; o++)
        want[o] = 0;
    float *a = malloc(sizeof *a * (size_t)ff);
    for (long e = 0; e < ne; e++) {
        if (r[e] == 0)
            continue;
        for (long f = 0; f < ff; f++) {
            double g = 0, u = 0;
            for (long c = 0; c < d; c++) {
                g += (double)wg[(e * ff + f) * d + c] * x[c];
                u += (double)wu[(e * ff + f) * d + c] * x[c];
            }
            a[f] = (float)(g * sig(g) * u);
        }
        for (long o = 0; o < d; o++) {
            double y = 0;
            for (long f = 0; f < ff; f++)
                y += (double)wd[(e * ff * d) + o * ff + f] * a[f];
            want[o] += r[e] * y;
        }
    }
    free(a);
}

/* A mixture large enough that its experts run on several threads, over
 * more rows than it holds at once (MOE_JOBS, 2048 experts' outputs: 683
 * rows of three): each row as the same mixture of that row alone gives it
 * (one thread), bit for bit, and as the f64 sums give it. */
static void test_moe_rows(void)
{
    enum { T = 1000, NE = 8, FF = 64, D = 64 };
    Prog *p = prog("logos 1 t t\nin x : f32[1000,64]\nin r : f32[1000,8]\nin x1 : f32[64]\nin r1 : f32[8]\n"
                   "weight wg : f32[8,64,64]\nweight wu : f32[8,64,64]\nweight wd : f32[8,64,64]\n"
                   "out s : f32[1000,64]\nout s1 : f32[64]\n"
                   "s = moe(x, r, wg, wu, wd, act=silu)\ns1 = moe(x1, r1, wg, wu, wd, act=silu)\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 2, T, D, 0), *r = fill(env, "r", 2, T, NE, 0);
    float *wg = fill(env, "wg", 3, NE, FF, D), *wu = fill(env, "wu", 3, NE, FF, D), *wd = fill(env, "wd", 3, NE, D, FF);
    for (long t = 0; t < T; t++)   /* three kept experts a row */
        for (long e = 0; e < NE; e++)
            if (e != t % NE && e != (t + 3) % NE && e != (t + 5) % NE)
                r[t * NE + e] = 0;
    memcpy(fill(env, "x1", 1, D, 0, 0), x + (T - 1) * D, sizeof *x * D);
    memcpy(fill(env, "r1", 1, NE, 0, 0), r + (T - 1) * NE, sizeof *r * NE);
    run(p, env);
    const float *got = out(env, "s");
    ok(memcmp(got + (T - 1) * D, out(env, "s1"), sizeof *got * D) == 0,
       "moe: a row of 1000 (experts on several threads) as the row alone gives it, bit for bit");
    double want[D];
    moe_row_want(x, r, wg, wu, wd, NE, FF, D, want);
    close_to(got, want, D, "moe: the first row of 1000 as f64 sums give it");
    moe_row_want(x + (T - 1) * D, r + (T - 1) * NE, wg, wu, wd, NE, FF, D, want);
    close_to(got + (T - 1) * D, want, D, "moe: the last row of 1000 (past the rows held at once)");
    env_free(env);
}

/* ---- rows, shapes, states, errors ---- */

static void test_rows(void)
{
    Prog *p = prog("logos 1 t t\nin x : f32[2,10]\nin pos : i32\nin bpos : i32[2]\nstate S : f32[4,10]\n"
                   "out m : i32[2]\nout y : f32[10]\nout z : f32[2,10]\nout c : f32[13]\nout w : f32[2,10]\n"
                   "m = argmax(x)\nS[pos] = x[1]\nS[bpos] = x * 2\ny = S[pos]\nz = S[bpos]\n"
                   "c = concat(slice(last(x), at=2, n=3), x[0] - 1)\nw = stack(x[1], x[0])\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 2, 2, 10, 0);
    x[4] = x[7] = 5;
    x[10 + 9] = 7;
    ints(env, "pos", 0, 1, (int32_t[]){1});
    ints(env, "bpos", 1, 2, (int32_t[]){3, 4});
    run(p, env);
    int32_t *m = env_get(env, "m")->i;
    ok(m[0] == 4 && m[1] == 9, "argmax: first largest per row");
    double want[20];
    for (int i = 0; i < 10; i++)
        want[i] = x[10 + i];
    close_to(out(env, "y"), want, 10, "state row write then read at position 1");
    for (int i = 0; i < 20; i++)
        want[i] = 2 * x[i];
    close_to(out(env, "z"), want, 20, "state rows written at positions [3,4]");
    for (int i = 0; i < 13; i++)
        want[i] = i < 3 ? x[12 + i] : x[i - 3] - 1;
    close_to(out(env, "c"), want, 13, "concat of slice of last and a broadcast difference");
    for (int i = 0; i < 20; i++)
        want[i] = x[(i + 10) % 20];
    close_to(out(env, "w"), want, 20, "stack of rows");
    COVERS(OP_ARGMAX, OP_INDEX, OP_CONCAT, OP_SLICE, OP_LAST, OP_SUB, OP_MUL, OP_STACK);
    env_free(env);
}

/* Runs p expecting an input error whose message contains `msg`. */
static void expect_error(const Prog *p, Env *env, const char *msg, const char *what)
{
    char buf[4096] = {0};
    FILE *t = tmpfile();
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(t), 2);
    int rc = ref_run(p, env);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(t);
    size_t n = fread(buf, 1, sizeof buf - 1, t);
    buf[n] = 0;
    fclose(t);
    if (!strstr(buf, msg))
        printf("# got: %s", buf);
    ok(rc == EXIT_INPUT && strstr(buf, msg) != NULL, what);
}

static void test_errors(void)
{
    Prog *p = prog("logos 1 t t\nin tok : i32\nin pos : i32\nweight emb : f32[16,8]\nstate K : f32[4,8]\n"
                   "out y : f32[8]\nK[pos] = emb[tok]\ny = K[pos]\nend\n");
    Env *env = env_new();
    fill(env, "emb", 2, 16, 8, 0);
    expect_error(p, env, "input 'tok' is not given", "a missing input is an input error");
    ints(env, "tok", 0, 1, (int32_t[]){3});
    ints(env, "pos", 0, 1, (int32_t[]){5});
    expect_error(p, env, "test.logos:7:3: position 5 is past the 4 rows of K", "a position past a state's rows");
    ints(env, "pos", 0, 1, (int32_t[]){0});
    expect_error(p, env, "position 0: positions start at 1", "position 0 is an input error");
    ints(env, "pos", 0, 1, (int32_t[]){2});
    ints(env, "tok", 0, 1, (int32_t[]){16});
    expect_error(p, env, "token 16 is past the 16 rows of emb", "a token past the table");
    env_free(env);
}

/* ---- elementwise ---- */

/* Values worked out by hand: a [2,3] and a [3] that broadcasts along rows. */
static void test_arith(void)
{
    Prog *p = prog("logos 1 t t\nin x : f32[2,3]\nin y : f32[3]\nout a : f32[2,3]\nout s : f32[2,3]\n"
                   "out m : f32[2,3]\nout d : f32[2,3]\nout n : f32[2,3]\nout k : f32[2,3]\n"
                   "a = x + y\ns = x - y\nm = x * y\nd = x / y\nn = -x\nk = 2 * x - 1\nend\n");
    Env *env = env_new();
    memcpy(fill(env, "x", 2, 2, 3, 0), (float[]){1, -2, 3.5f, 0.25f, 4, -6}, 6 * sizeof(float));
    memcpy(fill(env, "y", 1, 3, 0, 0), (float[]){2, -0.5f, 4}, 3 * sizeof(float));
    run(p, env);
    each_close(out(env, "a"), (double[]){3, -2.5, 7.5, 2.25, 3.5, -2}, 6, "x + y, y broadcast along rows");
    each_close(out(env, "s"), (double[]){-1, -1.5, -0.5, -1.75, 4.5, -10}, 6, "x - y");
    each_close(out(env, "m"), (double[]){2, 1, 14, 0.5, -2, -24}, 6, "x * y");
    each_close(out(env, "d"), (double[]){0.5, 4, 0.875, 0.125, -8, -1.5}, 6, "x / y");
    each_close(out(env, "n"), (double[]){-1, 2, -3.5, -0.25, -4, 6}, 6, "-x");
    each_close(out(env, "k"), (double[]){1, -5, 6, -0.5, 7, -13}, 6, "2 * x - 1: number literals");
    COVERS(OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_NEG);
    env_free(env);
}

/* The activations over -30..30, against their formulas in double, and at
 * x = 1 against values worked out beforehand (to 16 digits). */
static void test_activations(void)
{
    static const double xs[9] = {-30, -5, -1, -0.5, 0, 0.5, 1, 5, 30};
    static const char *names[9] = {"silu", "gelu_tanh", "sigmoid", "softplus", "exp", "tanh",
                                   "softcap(cap=1.5)", "clamp(min=-0.75, max=2)", "clamp(max=0.5)"};
    static const double at1[9] = {0.7310585786300049, 0.8411919906082768, 0.7310585786300049, 1.3132616875182228,
                                  2.718281828459045,  0.7615941559557649, 0.8741744180218654, 1, 0.5};
    Prog *p = prog("logos 1 t t\nin x : f32[9]\nout a0 : f32[9]\nout a1 : f32[9]\nout a2 : f32[9]\nout a3 : f32[9]\n"
                   "out a4 : f32[9]\nout a5 : f32[9]\nout a6 : f32[9]\nout a7 : f32[9]\nout a8 : f32[9]\n"
                   "a0 = silu(x)\na1 = gelu_tanh(x)\na2 = sigmoid(x)\na3 = softplus(x)\na4 = exp(x)\na5 = tanh(x)\n"
                   "a6 = softcap(x, cap=1.5)\na7 = clamp(x, min=-0.75, max=2)\na8 = clamp(x, max=0.5)\nend\n");
    Env *env = env_new();
    float *x = fill(env, "x", 1, 9, 0, 0);
    for (int i = 0; i < 9; i++)
        x[i] = (float)xs[i];
    run(p, env);
    for (int f = 0; f < 9; f++) {
        double want[9];
        for (int i = 0; i < 9; i++) {
            double v = xs[i], sg = 1 / (1 + exp(-v));
            double g = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
            double all[9] = {v * sg, g, sg, log1p(exp(v)), exp(v), tanh(v), 1.5 * tanh(v / 1.5),
                             fmin(fmax(v, -0.75), 2), fmin(v, 0.5)};
            want[i] = all[f];
        }
        const float *got = out(env, arena_printf(A, "a%d", f));
        each_close(got, want, 9, arena_printf(A, "%s over -30..30", names[f]));
        each_close(got + 6, at1 + f, 1, arena_printf(A, "%s at 1 is %.16g", names[f], at1[f]));
    }
    COVERS(OP_SILU, OP_GELU, OP_SIGMOID, OP_SOFTPLUS, OP_EXP, OP_TANH, OP_SOFTCAP, OP_CLAMP);
    env_free(env);
}

/* Rows (3,4,0,0) and (1,2,2,4) both have length 5. */
static void test_l2norm(void)
{
    Prog *p = prog("logos 1 t t\nin x : f32[8]\nout y : f32[2,4]\ny = l2norm(x ~ [2,4], eps=1e-6)\nend\n");
    Env *env = env_new();
    memcpy(fill(env, "x", 1, 8, 0, 0), (float[]){3, 4, 0, 0, 1, 2, 2, 4}, 8 * sizeof(float));
    run(p, env);
    double n = sqrt(25 + 1e-6);
    each_close(out(env, "y"), (double[]){3 / n, 4 / n, 0, 0, 1 / n, 2 / n, 2 / n, 4 / n}, 8,
               "per-head l2norm: (3,4,0,0)/5 and (1,2,2,4)/5");
    COVERS(OP_L2NORM, OP_RESHAPE);
    env_free(env);
}

/* range(7, n=4) and range(7, n=T) with T = 3 bound from an input. */
static void test_range(void)
{
    Prog *p = prog("logos 1 t t\nsize T\nin p : i32\nin x : f32[T,2]\nout r : i32[4]\nout rt : i32[T]\n"
                   "r = range(p, n=4)\nrt = range(p, n=T)\nend\n");
    Env *env = env_new();
    ints(env, "p", 0, 1, (int32_t[]){7});
    fill(env, "x", 2, 3, 2, 0);
    run(p, env);
    const Buf *r = env_get(env, "r"), *rt = env_get(env, "rt");
    ok(r->n == 4 && !memcmp(r->i, (int32_t[]){7, 8, 9, 10}, 16), "range(7, n=4) is 7 8 9 10");
    ok(rt->n == 3 && !memcmp(rt->i, (int32_t[]){7, 8, 9}, 12), "range(7, n=T) with T = 3 is 7 8 9");
    COVERS(OP_RANGE);
    env_free(env);
}

/* On one chip a sum over the chips is the value itself, and so is a gather
 * of one rank; a gather of two needs the other process. */
static void test_collectives(void)
{
    Prog *p = prog("logos 1 t t\nin x : f32[5]\nout s : f32[5]\nout g : f32[5]\n"
                   "s = allreduce(x) * 2\ng = allgather(x, ranks=1)\nend\n");
    Env *env = env_new();
    memcpy(fill(env, "x", 1, 5, 0, 0), (float[]){1.5f, -2, 0, 3, -0.25f}, 5 * sizeof(float));
    run(p, env);
    each_close(out(env, "s"), (double[]){3, -4, 0, 6, -0.5}, 5, "allreduce on one chip is the value");
    each_close(out(env, "g"), (double[]){1.5, -2, 0, 3, -0.25}, 5, "allgather of one rank is the value");
    Prog *two = prog("logos 1 t t\nin x : f32[5]\nout g : f32[10]\ng = allgather(x, ranks=2)\nend\n");
    expect_error(two, env, "test.logos:4:5: allgather needs the other ranks", "allgather of two ranks needs them");
    COVERS(OP_ALLREDUCE, OP_ALLGATHER);
    env_free(env);
}

/* Every op of the table has been checked numerically above. */
static void test_coverage(void)
{
    char missing[1024] = "";
    for (int op = 0; op < OP_COUNT; op++)
        if (!covered[op])
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " %s", op_info[op].name);
    if (*missing)
        printf("# ops without a numeric check:%s\n", missing);
    ok(!*missing, "every op of the table has a numeric check");
}

/* ref_dot.c's sums against their definition: term i into sum i mod 8,
 * then ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the rest;
 * the Q8_0 row's dot as dot over the row dequant_q8 writes; bit for bit. */
static double dot_by_definition(const float *a, const float *b, long n)
{
    double s[8] = {0};
    long i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; k++)
            s[k] = s[k] + (double)a[i + k] * (double)b[i + k];
    double t = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
    for (; i < n; i++)
        t = t + (double)a[i] * (double)b[i];
    return t;
}

static void test_dots(void)
{
    enum { N = 2048 };
    static const long lens[] = {1, 7, 8, 9, 31, 32, 100, 2047, N};
    float *a = malloc(sizeof *a * N), *b = malloc(sizeof *b * N), *row = malloc(sizeof *row * N);
    int8_t *q = malloc(N);
    uint16_t sc[N / Q8_BLOCK];
    for (long i = 0; i < N; i++)
        a[i] = rnd() * 1e3f, b[i] = rnd(), q[i] = (int8_t)(rnd() * 127);
    for (long k = 0; k < N / Q8_BLOCK; k++)
        sc[k] = f32_to_f16(0.01f + fabsf(rnd()));
    int same = 1;
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++)
        same &= dot(a, b, lens[l]) == dot_by_definition(a, b, lens[l]);
    ok(same, "dot: the f64 sums in their fixed order, bit for bit, at lengths 1 to 2048");
    dequant_q8(q, sc, N, row);
    int deq = 1;
    for (long i = 0; i < N; i++)
        deq &= row[i] == (float)q[i] * f16_to_f32(sc[i / Q8_BLOCK]);
    ok(deq, "dequant_q8: each quant times its block's scale, rounded to f32");
    int fused = 1;
    for (long n = Q8_BLOCK; n <= N; n *= 4)
        fused &= dot_q8(q, sc, b, n) == dot(row, b, n);
    ok(fused, "dot_q8: a Q8_0 row's dot as dot over its dequantized row, bit for bit");
    int pairs = 1;
    for (size_t l = 0; l < sizeof lens / sizeof *lens; l++) {
        double v[2];
        dot_pair(b, a, row, lens[l], v);
        pairs &= v[0] == dot(b, a, lens[l]) && v[1] == dot(b, row, lens[l]);
    }
    for (long n = Q8_BLOCK; n <= N / 2; n *= 4) {
        double v[2];
        dot_q8_pair(q, sc, q + N / 2, sc + N / 2 / Q8_BLOCK, b, n, v);
        pairs &= v[0] == dot_q8(q, sc, b, n) && v[1] == dot_q8(q + N / 2, sc + N / 2 / Q8_BLOCK, b, n);
    }
    ok(pairs, "dot_pair and dot_q8_pair: each of the two sums as dot and dot_q8 alone, bit for bit");
    free(a), free(b), free(row), free(q);
}

int main(void)
{
    A = arena_new();
    diag_tool = "test_ref";
    test_dots();
    test_matmul();
    test_unpair_at();
    test_vector_lookup();
    test_rmsnorm();
    test_rope();
    test_yarn(1);
    test_yarn(0);
    test_attend();
    test_stacked_attend();
    test_latent();
    test_conv();
    test_delta();
    test_route();
    test_moe();
    test_moe_rows();
    test_rows();
    test_errors();
    test_arith();
    test_activations();
    test_l2norm();
    test_range();
    test_collectives();
    test_coverage();
    arena_free(A);
    return tap_done();
}
