/* ref.c — the CPU reference executor: runs a checked program's statements in
 * order against an Env, in f32 with f64 accumulation in reductions. It is the
 * numeric oracle the kernels are compared against, and logos-run's fallback.
 * Input errors (a position past a state, a token past a table, a missing
 * input) unwind to ref_run by longjmp, which frees the run's arena. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

/* A value: concrete shape and data (in the run's arena or a view of the
 * env). Causal rows S[..pos] keep the rows each stacked row reads in ends. */
typedef struct Val {
    int base, rank;
    long d[LOGOS_MAXRANK];
    long n;
    float *f;
    int32_t *i;
    const int32_t *ends;
    long nends;
    int aliased;   /* a view of a state's rows, which later writes change */
} Val;

typedef struct Local {
    const char *name;
    Val v;
} Local;

typedef struct Run {
    const Prog *p;
    Env *env;
    Arena *a;          /* every value of the run */
    Local *loc; int nloc, cloc;
    long *size;        /* bound sizes by declaration index; -1 unbound */
    jmp_buf fail;
} Run;

/* A weight read by logical rows (through its unpair permutation). */
typedef struct WRows {
    const Buf *b;
    long rows, cols;
    int hd, rot;
} WRows;

static Val eval(Run *r, const Expr *e);

/* ---- errors ---- */

_Noreturn static void ref_fail(Run *r, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_at(r->p->src, line, col, "%s", msg);
    longjmp(r->fail, 1);
}

/* ---- values ---- */

static Val val_new(Run *r, int base, int rank, const long *d)
{
    Val v = {.base = base, .rank = rank, .n = 1};
    for (int i = 0; i < rank; i++) {
        v.d[i] = d[i];
        v.n *= d[i];
    }
    void *m = arena_alloc(r->a, (size_t)v.n * 4);
    if (base == T_I32)
        v.i = m;
    else
        v.f = m;
    return v;
}

static Val val_of_buf(const Buf *b)
{
    Val v = {.base = b->base, .rank = b->rank, .n = b->n, .f = b->f, .i = b->i};
    memcpy(v.d, b->d, sizeof v.d);
    return v;
}

static Val val_copy(Run *r, const Val *x)
{
    Val v = val_new(r, x->base, x->rank, x->d);
    memcpy(x->base == T_I32 ? (void *)v.i : (void *)v.f, x->base == T_I32 ? (void *)x->i : (void *)x->f,
           (size_t)x->n * 4);
    return v;
}

static long val_last(const Val *v)
{
    return v->rank ? v->d[v->rank - 1] : 1;
}

static double dot(const float *a, const float *b, long n)
{
    double s = 0;
    for (long i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* ---- attributes ---- */

static const Attr *attr(const Expr *e, const char *name)
{
    for (int i = 0; i < e->nattrs; i++)
        if (strcmp(e->attrs[i].name, name) == 0)
            return &e->attrs[i];
    return NULL;
}

static double attr_num(const Expr *e, const char *name, double dflt)
{
    const Attr *a = attr(e, name);
    return a ? a->num : dflt;
}

static const char *attr_word(const Expr *e, const char *name, const char *dflt)
{
    const Attr *a = attr(e, name);
    return a ? a->text : dflt;
}

/* ---- names ---- */

static const Decl *decl_of(const Run *r, const char *name)
{
    int i = prog_find_decl(r->p, name);
    return i < 0 ? NULL : &r->p->decls[i];
}

static Local *local(Run *r, const char *name)
{
    for (int i = r->nloc - 1; i >= 0; i--)
        if (strcmp(r->loc[i].name, name) == 0)
            return &r->loc[i];
    return NULL;
}

/* The declared weight or state an operand names, as the env holds it. */
static Buf *named_buf(Run *r, const Expr *e, int kind)
{
    ASSERT(e->op == E_NAME);
    const Decl *d = decl_of(r, e->name);
    ASSERT(d && d->kind == kind);
    Buf *b = env_get(r->env, e->name);
    ASSERT(b);
    return b;
}

static int is_decl(const Run *r, const Expr *e, int kind)
{
    const Decl *d = e->op == E_NAME ? decl_of(r, e->name) : NULL;
    return d && d->kind == kind;
}

/* A size spelled as a number or a declared size's name. */
static long size_of(Run *r, const char *s, int line, int col)
{
    if (s[0] >= '0' && s[0] <= '9')
        return strtol(s, NULL, 10);
    int i = prog_find_decl(r->p, s);
    ASSERT(i >= 0 && r->p->decls[i].kind == D_SIZE);
    if (r->size[i] < 0)
        ref_fail(r, line, col, "size '%s' is not bound by any input", s);
    return r->size[i];
}

/* ---- weight rows (through the unpair permutation) ---- */

static WRows wrows(Run *r, const Expr *e)
{
    const Buf *b = named_buf(r, e, D_WEIGHT);
    const Decl *d = decl_of(r, e->name);
    WRows w = {b, 0, b->d[b->rank - 1], d->unpair_hd, d->unpair_rot};
    w.rows = b->n / w.cols;
    return w;
}

static long file_row(const WRows *w, long r)
{
    if (!w->hd)
        return r;
    long h = r / w->hd, i = r % w->hd, half = w->rot / 2;
    if (i < half)
        return h * w->hd + 2 * i;
    if (i < w->rot)
        return h * w->hd + 2 * (i - half) + 1;
    return r;
}

/* Logical row r as f32: a pointer into an f32 weight, or tmp dequantized. */
static const float *wrow(const WRows *w, long r, float *tmp)
{
    long at = file_row(w, r) * w->cols;
    if (w->b->base == T_F32)
        return w->b->f + at;
    for (long c = 0; c < w->cols; c += 32) {
        float s = f16_to_f32(w->b->s[(at + c) / 32]);
        for (long j = 0; j < 32; j++)
            tmp[c + j] = (float)w->b->q[at + c + j] * s;
    }
    return tmp;
}

/* y[t][o] = W[r0+o] · x[t] for o < nout, t < T (x rows of cols values). */
static void product(Run *r, const WRows *w, long r0, long nout, const float *x, long T, float *y)
{
    float *tmp = w->b->base == T_Q8 ? arena_alloc(r->a, (size_t)w->cols * 4) : NULL;
    for (long o = 0; o < nout; o++) {
        const float *row = wrow(w, r0 + o, tmp);
        for (long t = 0; t < T; t++)
            y[t * nout + o] = (float)dot(row, x + t * w->cols, w->cols);
    }
}

/* A whole weight as f32 rows in logical order. */
static float *weight_values(Run *r, const WRows *w)
{
    float *out = arena_alloc(r->a, (size_t)(w->rows * w->cols) * 4);
    for (long i = 0; i < w->rows; i++) {
        float *dst = out + i * w->cols;
        const float *src = wrow(w, i, dst);
        if (src != dst)
            memcpy(dst, src, (size_t)w->cols * 4);
    }
    return out;
}

/* ---- positions and rows ---- */

/* 1-based position p of a state of `rows` rows, checked; returns p - 1. */
static long position(Run *r, const Expr *at, long p, long rows, const char *name)
{
    if (p < 1)
        ref_fail(r, at->line, at->col, "position %ld: positions start at 1", p);
    if (p > rows)
        ref_fail(r, at->line, at->col, "position %ld is past the %ld rows of %s", p, rows, name);
    return p - 1;
}

/* The indices an index operand names: a literal row, an i32 or i32[n]. */
static Val indices(Run *r, const Expr *i)
{
    if (i->op == E_NUM) {
        Val v = val_new(r, T_I32, 0, NULL);
        v.i[0] = (int32_t)i->num;
        return v;
    }
    Val v = eval(r, i);
    ASSERT(v.base == T_I32 && v.rank <= 1);
    return v;
}

/* Shape of rows taken by index v from a tensor of shape d (rank). */
static Val rows_val(Run *r, const Val *ix, int rank, const long *d)
{
    long od[LOGOS_MAXRANK];
    int orank = 0;
    if (ix->rank == 1)
        od[orank++] = ix->d[0];
    for (int k = 1; k < rank; k++)
        od[orank++] = d[k];
    return val_new(r, T_F32, orank, od);
}

static Val lookup_weight(Run *r, const Expr *e, const Val *ix)
{
    WRows w = wrows(r, e->args[0]);
    const Buf *b = w.b;
    long per = w.rows / b->d[0], width = per * w.cols;
    Val out = rows_val(r, ix, b->rank, b->d);
    for (long k = 0; k < ix->n; k++) {
        long id = ix->i[k];
        if (id < 0 || id >= b->d[0])
            ref_fail(r, e->args[1]->line, e->args[1]->col, "token %ld is past the %ld rows of %s", id, b->d[0],
                     e->args[0]->name);
        for (long j = 0; j < per; j++) {
            float *dst = out.f + k * width + j * w.cols;
            const float *src = wrow(&w, id * per + j, dst);
            if (src != dst)
                memcpy(dst, src, (size_t)w.cols * 4);
        }
    }
    return out;
}

static Val lookup_state(Run *r, const Expr *e, const Val *ix)
{
    const Buf *b = named_buf(r, e->args[0], D_STATE);
    long width = buf_cols(b);
    Val out = rows_val(r, ix, b->rank, b->d);
    for (long k = 0; k < ix->n; k++) {
        long row = position(r, e->args[1], ix->i[k], b->d[0], e->args[0]->name);
        memcpy(out.f + k * width, b->f + row * width, (size_t)width * 4);
    }
    return out;
}

static Val lookup_rows(Run *r, const Expr *e, const Val *ix)
{
    Val x = eval(r, e->args[0]);
    ASSERT(x.rank >= 1 && x.base == T_F32 && !x.ends);
    long width = x.n / x.d[0];
    Val out = rows_val(r, ix, x.rank, x.d);
    for (long k = 0; k < ix->n; k++) {
        long id = ix->i[k];
        if (id < 0 || id >= x.d[0])
            ref_fail(r, e->args[1]->line, e->args[1]->col, "row %ld is past the %ld rows of %s", id, x.d[0],
                     e->args[0]->op == E_NAME ? e->args[0]->name : "the tensor");
        memcpy(out.f + k * width, x.f + id * width, (size_t)width * 4);
    }
    return out;
}

static Val eval_index(Run *r, const Expr *e)
{
    Val ix = indices(r, e->args[1]);
    if (is_decl(r, e->args[0], D_WEIGHT))
        return lookup_weight(r, e, &ix);
    if (is_decl(r, e->args[0], D_STATE))
        return lookup_state(r, e, &ix);
    return lookup_rows(r, e, &ix);
}

/* S[..p]: the first p rows; S[..pos] with i32[T]: causal rows. */
static Val eval_upto(Run *r, const Expr *e)
{
    Buf *b = named_buf(r, e->args[0], D_STATE);
    Val ix = eval(r, e->args[1]);
    for (long k = 0; k < ix.n; k++)
        position(r, e->args[1], ix.i[k], b->d[0], e->args[0]->name);
    Val v = val_of_buf(b);
    v.aliased = 1;
    if (ix.rank == 0)
        v.d[0] = ix.i[0];
    else {
        v.ends = ix.i;
        v.nends = ix.n;
    }
    v.n = v.n / b->d[0] * v.d[0];
    return v;
}

static Val eval_reshape(Run *r, const Expr *e)
{
    Val v = eval(r, e->args[0]);
    long n = 1;
    v.rank = e->rank;
    for (int i = 0; i < e->rank; i++) {
        v.d[i] = size_of(r, e->dims[i], e->line, e->col);
        n *= v.d[i];
    }
    ASSERT(n == v.n);
    return v;
}

/* ---- elementwise ---- */

static float arith(int op, float a, float b)
{
    switch (op) {
    case OP_ADD: return a + b;
    case OP_SUB: return a - b;
    case OP_MUL: return a * b;
    case OP_DIV: return a / b;
    default: BUG("not an arithmetic op");
    }
}

static double sigmoid(double x)
{
    return 1 / (1 + exp(-x));
}

static float gelu_tanh(float x)
{
    double t = tanh(sqrt(2 / M_PI) * ((double)x + 0.044715 * (double)x * x * x));
    return (float)(0.5 * x * (1 + t));
}

static float silu(float x)
{
    return (float)(x * sigmoid(x));
}

static float unary(const Expr *e, float x)
{
    switch (e->op) {
    case OP_NEG: return -x;
    case OP_SILU: return silu(x);
    case OP_GELU: return gelu_tanh(x);
    case OP_SIGMOID: return (float)sigmoid(x);
    case OP_SOFTPLUS: return x > 20 ? x : (float)log1p(exp(x));
    case OP_EXP: return (float)exp(x);
    case OP_TANH: return (float)tanh(x);
    case OP_SOFTCAP: {
        double c = attr_num(e, "cap", 1);
        return (float)(c * tanh(x / c));
    }
    case OP_CLAMP: {
        double lo = attr_num(e, "min", -INFINITY), hi = attr_num(e, "max", INFINITY);
        return (float)(x < lo ? lo : x > hi ? hi : x);
    }
    case OP_ALLREDUCE: return x;
    default: BUG("not a unary op");
    }
}

static Val eval_unary(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]);
    Val y = val_new(r, T_F32, x.rank, x.d);
    for (long i = 0; i < x.n; i++)
        y.f[i] = unary(e, x.f[i]);
    return y;
}

/* Strides of x for each axis of an output of rank `rank`: 0 where x
 * broadcasts (a missing or unit axis). */
static void bstrides(const Val *x, int rank, const long *od, long *st)
{
    long s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        int k = x->rank - rank + i;
        long n = k >= 0 ? x->d[k] : 1;
        st[i] = n == 1 && od[i] != 1 ? 0 : s;
        s *= n;
    }
}

static Val eval_binary(Run *r, const Expr *e)
{
    Val a = eval(r, e->args[0]), b = eval(r, e->args[1]);
    int rank = a.rank > b.rank ? a.rank : b.rank;
    long od[LOGOS_MAXRANK], sa[LOGOS_MAXRANK], sb[LOGOS_MAXRANK], ix[LOGOS_MAXRANK] = {0};
    for (int i = 0; i < rank; i++) {
        int ka = a.rank - rank + i, kb = b.rank - rank + i;
        long na = ka >= 0 ? a.d[ka] : 1, nb = kb >= 0 ? b.d[kb] : 1;
        ASSERT(na == nb || na == 1 || nb == 1);
        od[i] = na > nb ? na : nb;
    }
    Val y = val_new(r, T_F32, rank, od);
    if (a.n == y.n && b.n == y.n) {
        for (long i = 0; i < y.n; i++)
            y.f[i] = arith(e->op, a.f[i], b.f[i]);
        return y;
    }
    bstrides(&a, rank, od, sa);
    bstrides(&b, rank, od, sb);
    long pa = 0, pb = 0;
    for (long i = 0; i < y.n; i++) {
        y.f[i] = arith(e->op, a.f[pa], b.f[pb]);
        for (int k = rank - 1; k >= 0; k--) {   /* odometer step */
            pa += sa[k];
            pb += sb[k];
            if (++ix[k] < od[k])
                break;
            pa -= sa[k] * od[k];
            pb -= sb[k] * od[k];
            ix[k] = 0;
        }
    }
    return y;
}

/* ---- norms ---- */

static Val eval_norm(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]), w = {0};
    if (e->nargs == 2)
        w = eval(r, e->args[1]);
    double eps = attr_num(e, "eps", 0), off = attr_num(e, "offset", 0);
    long n = val_last(&x);
    Val y = val_new(r, T_F32, x.rank, x.d);
    for (long row = 0; row < x.n / n; row++) {
        const float *xr = x.f + row * n;
        double ss = dot(xr, xr, n);
        double inv = 1 / sqrt(e->op == OP_RMSNORM ? ss / n + eps : ss + eps);
        for (long i = 0; i < n; i++) {
            float v = (float)(xr[i] * inv);
            y.f[row * n + i] = w.f ? v * (float)(w.f[i] + off) : v;
        }
    }
    return y;
}

/* ---- rows and shapes ---- */

static Val eval_matmul(Run *r, const Expr *e)
{
    WRows w = wrows(r, e->args[0]);
    Val x = eval(r, e->args[1]);
    ASSERT(val_last(&x) == w.cols);
    long d[LOGOS_MAXRANK];
    memcpy(d, x.d, sizeof d);
    d[x.rank - 1] = w.rows;
    Val y = val_new(r, T_F32, x.rank, d);
    product(r, &w, 0, w.rows, x.f, x.n / w.cols, y.f);
    return y;
}

static Val eval_argmax(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]);
    long n = val_last(&x);
    Val y = val_new(r, T_I32, x.rank - 1, x.d);
    for (long row = 0; row < x.n / n; row++) {
        const float *xr = x.f + row * n;
        long best = 0;
        for (long i = 1; i < n; i++)
            if (xr[i] > xr[best])
                best = i;
        y.i[row] = (int32_t)best;
    }
    return y;
}

static Val eval_stack(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]);
    long d[LOGOS_MAXRANK] = {e->nargs};
    memcpy(d + 1, x.d, sizeof d[0] * (size_t)x.rank);
    Val y = val_new(r, T_F32, x.rank + 1, d);
    for (int k = 0; k < e->nargs; k++) {
        Val a = k ? eval(r, e->args[k]) : x;
        ASSERT(a.n == x.n);
        memcpy(y.f + k * x.n, a.f, (size_t)x.n * 4);
    }
    return y;
}

static Val eval_concat(Run *r, const Expr *e)
{
    Val *a = arena_alloc(r->a, sizeof *a * (size_t)e->nargs);
    long width = 0;
    for (int k = 0; k < e->nargs; k++) {
        a[k] = eval(r, e->args[k]);
        width += val_last(&a[k]);
    }
    Val y = a[0];
    y.d[y.rank - 1] = width;
    y = val_new(r, T_F32, y.rank, y.d);
    long rows = y.n / width, at = 0;
    for (int k = 0; k < e->nargs; k++) {
        long w = val_last(&a[k]);
        ASSERT(a[k].n == rows * w);
        for (long row = 0; row < rows; row++)
            memcpy(y.f + row * width + at, a[k].f + row * w, (size_t)w * 4);
        at += w;
    }
    return y;
}

static Val eval_slice(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]);
    long at = (long)attr_num(e, "at", 0), n = (long)attr_num(e, "n", 1), w = val_last(&x);
    ASSERT(at >= 0 && at + n <= w);
    Val y = x;
    y.d[y.rank - 1] = n;
    y = val_new(r, T_F32, y.rank, y.d);
    for (long row = 0; row < x.n / w; row++)
        memcpy(y.f + row * n, x.f + row * w + at, (size_t)n * 4);
    return y;
}

static Val eval_last(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]);
    Val y = val_new(r, T_F32, x.rank - 1, x.d + 1);
    memcpy(y.f, x.f + (x.d[0] - 1) * y.n, (size_t)y.n * 4);
    return y;
}

static Val eval_range(Run *r, const Expr *e)
{
    Val s = eval(r, e->args[0]);
    const Attr *a = attr(e, "n");
    long n = a->isnum ? (long)a->num : size_of(r, a->text, a->line, a->col);
    Val y = val_new(r, T_I32, 1, &n);
    for (long i = 0; i < n; i++)
        y.i[i] = s.i[0] + (int32_t)i;
    return y;
}

static Val eval_allgather(Run *r, const Expr *e)
{
    if (attr_num(e, "ranks", 1) != 1)
        ref_fail(r, e->line, e->col, "allgather needs the other ranks: run the split program with one process per chip");
    return eval(r, e->args[0]);
}

/* ---- rotary position embedding ---- */

/* inv[i] = theta^(-2i/rot), rescaled as transformers' llama3 or yarn rope
 * parameters compute it. */
static void rope_freqs(const Expr *e, long rot, double *inv)
{
    double theta = attr_num(e, "theta", 10000), factor = attr_num(e, "factor", 1),
           orig = attr_num(e, "orig", 0);
    const char *sc = attr_word(e, "scaling", "none");
    for (long i = 0; i < rot / 2; i++)
        inv[i] = pow(theta, -2.0 * (double)i / (double)rot);
    if (strcmp(sc, "llama3") == 0) {
        double low = attr_num(e, "low", 1), high = attr_num(e, "high", 4);
        for (long i = 0; i < rot / 2; i++) {
            double wl = 2 * M_PI / inv[i];
            if (wl > orig / low)
                inv[i] /= factor;
            else if (wl >= orig / high) {
                double sm = (orig / wl - low) / (high - low);
                inv[i] = (1 - sm) * inv[i] / factor + sm * inv[i];
            }
        }
    } else if (strcmp(sc, "yarn") == 0) {
        double fast = attr_num(e, "beta_fast", 32), slow = attr_num(e, "beta_slow", 1), dim = (double)rot;
        double lo = floor(dim * log(orig / (fast * 2 * M_PI)) / (2 * log(theta)));
        double hi = ceil(dim * log(orig / (slow * 2 * M_PI)) / (2 * log(theta)));
        lo = lo < 0 ? 0 : lo;
        hi = hi > dim - 1 ? dim - 1 : hi;
        if (hi == lo)
            hi += 0.001;
        for (long i = 0; i < rot / 2; i++) {
            double ramp = ((double)i - lo) / (hi - lo);
            double ex = 1 - (ramp < 0 ? 0 : ramp > 1 ? 1 : ramp);
            inv[i] = inv[i] / factor * (1 - ex) + inv[i] * ex;
        }
    }
}

/* NEOX rotation of one position's heads [heads,hd] over the first rot values. */
static void rope_row(const float *x, long heads, long hd, long rot, long pos, const double *inv, double af,
                     float *y)
{
    long h2 = rot / 2;
    memcpy(y, x, sizeof *y * (size_t)(heads * hd));
    for (long i = 0; i < h2; i++) {
        double a = (double)(pos - 1) * inv[i], c = cos(a) * af, s = sin(a) * af;
        for (long h = 0; h < heads; h++) {
            const float *xh = x + h * hd;
            y[h * hd + i] = (float)(xh[i] * c - xh[i + h2] * s);
            y[h * hd + i + h2] = (float)(xh[i + h2] * c + xh[i] * s);
        }
    }
}

static Val eval_rope(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]), pos = eval(r, e->args[1]);
    long hd = val_last(&x), heads = x.d[x.rank - 2], rot = (long)attr_num(e, "rot", (double)hd);
    double *inv = arena_alloc(r->a, sizeof *inv * (size_t)(rot / 2 + 1));
    rope_freqs(e, rot, inv);
    Val y = val_new(r, T_F32, x.rank, x.d);
    for (long t = 0; t < pos.n; t++) {
        if (pos.i[t] < 1)
            ref_fail(r, e->args[1]->line, e->args[1]->col, "position %d: positions start at 1", pos.i[t]);
        rope_row(x.f + t * heads * hd, heads, hd, rot, pos.i[t], inv, attr_num(e, "attn_factor", 1),
                 y.f + t * heads * hd);
    }
    return y;
}

/* ---- attention ---- */

/* Softmax in place over s[lo..n) in f64, with the max subtracted; a sink,
 * when given, joins the denominator (the weights then sum below 1). */
static void softmax(double *s, long lo, long n, const float *sink)
{
    double mx = sink ? *sink : -INFINITY, sum = 0;
    for (long j = lo; j < n; j++)
        mx = s[j] > mx ? s[j] : mx;
    for (long j = lo; j < n; j++)
        sum += s[j] = exp(s[j] - mx);
    if (sink)
        sum += exp(*sink - mx);
    for (long j = lo; j < n; j++)
        s[j] /= sum;
}

typedef struct Attn {
    long nh, nkv, hd, vd;
    double scale, cap;
    long window;
    const float *sinks;
} Attn;

/* One query's heads q [nh,hd] at position p over rows K, V [n,nkv,*]. */
static void attend_one(const Attn *a, const float *q, const float *K, const float *V, long n, long p, float *out,
                       double *s)
{
    long lo = a->window && p - a->window > 0 ? p - a->window : 0, grp = a->nh / a->nkv;
    for (long h = 0; h < a->nh; h++) {
        long kh = h / grp;
        for (long j = lo; j < n; j++) {
            s[j] = a->scale * dot(q + h * a->hd, K + (j * a->nkv + kh) * a->hd, a->hd);
            if (a->cap)
                s[j] = a->cap * tanh(s[j] / a->cap);
        }
        softmax(s, lo, n, a->sinks ? a->sinks + h : NULL);
        for (long v = 0; v < a->vd; v++) {
            double acc = 0;
            for (long j = lo; j < n; j++)
                acc += s[j] * V[(j * a->nkv + kh) * a->vd + v];
            out[h * a->vd + v] = (float)acc;
        }
    }
}

static Val eval_attend(Run *r, const Expr *e)
{
    Val q = eval(r, e->args[0]), K = eval(r, e->args[1]), V = eval(r, e->args[2]), sk = {0};
    if (e->nargs == 4)
        sk = eval(r, e->args[3]);
    int st = q.rank == 3;
    Attn a = {q.d[st], K.d[1], K.d[2], V.d[2], attr_num(e, "scale", 1), attr_num(e, "softcap", 0),
              (long)attr_num(e, "window", 0), sk.f};
    long T = st ? q.d[0] : 1;
    ASSERT(!st || (K.ends && K.nends == T));
    Val y = q;
    y.d[st + 1] = a.vd;
    y = val_new(r, T_F32, y.rank, y.d);
    double *s = arena_alloc(r->a, sizeof *s * (size_t)K.d[0]);
    for (long t = 0; t < T; t++) {
        long n = st ? K.ends[t] : K.d[0];
        attend_one(&a, q.f + t * a.nh * a.hd, K.f, V.f, n, n, y.f + t * a.nh * a.vd, s);
    }
    return y;
}

/* Latent attention of one query over rows C [n, lora+rope]. */
static void latent_one(Run *r, const Expr *e, const float *qr, const float *qp, const float *C, long n,
                       const long *shape, float *out)
{
    long nh = shape[0], wq = shape[1], rope = shape[2], vd = shape[3], lora = (long)attr_num(e, "lora", 0);
    long nope = wq - rope, row = lora + rope;
    WRows wk = wrows(r, e->args[3]), wv = wrows(r, e->args[4]);
    float *tmp = arena_alloc(r->a, sizeof *tmp * (size_t)lora), *c = arena_alloc(r->a, sizeof *c * (size_t)lora);
    double *u = arena_alloc(r->a, sizeof *u * (size_t)lora), *s = arena_alloc(r->a, sizeof *s * (size_t)n);
    float *uf = arena_alloc(r->a, sizeof *uf * (size_t)lora);
    for (long h = 0; h < nh; h++) {
        memset(u, 0, sizeof *u * (size_t)lora);
        for (long i = 0; i < nope; i++) {
            const float *w = wrow(&wk, h * nope + i, tmp);
            for (long l = 0; l < lora; l++)
                u[l] += (double)qr[h * wq + i] * w[l];
        }
        for (long l = 0; l < lora; l++)
            uf[l] = (float)u[l];
        for (long j = 0; j < n; j++)
            s[j] = attr_num(e, "scale", 1) * (dot(uf, C + j * row, lora) + dot(qp + h * rope, C + j * row + lora, rope));
        softmax(s, 0, n, NULL);
        for (long l = 0; l < lora; l++) {
            double acc = 0;
            for (long j = 0; j < n; j++)
                acc += s[j] * C[j * row + l];
            c[l] = (float)acc;
        }
        for (long v = 0; v < vd; v++)
            out[h * vd + v] = (float)dot(wrow(&wv, h * vd + v, tmp), c, lora);
    }
}

static Val eval_latent(Run *r, const Expr *e)
{
    Val qr = eval(r, e->args[0]), qp = eval(r, e->args[1]), C = eval(r, e->args[2]);
    int st = qr.rank == 3;
    long nh = qr.d[st], T = st ? qr.d[0] : 1;
    WRows wv = wrows(r, e->args[4]);
    long shape[4] = {nh, qr.d[st + 1], qp.d[st + 1], wv.rows / nh};
    ASSERT(!st || (C.ends && C.nends == T));
    Val y = qr;
    y.d[st + 1] = shape[3];
    y = val_new(r, T_F32, y.rank, y.d);
    for (long t = 0; t < T; t++)
        latent_one(r, e, qr.f + t * nh * shape[1], qp.f + t * nh * shape[2], C.f, st ? C.ends[t] : C.d[0], shape,
                   y.f + t * nh * shape[3]);
    return y;
}

/* ---- recurrent mixers ---- */

static Val eval_conv(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]), b = {0};
    Buf *R = named_buf(r, e->args[1], D_STATE);
    WRows ww = wrows(r, e->args[2]);
    if (e->nargs == 4)
        b = eval(r, e->args[3]);
    const float *w = weight_values(r, &ww);
    long ch = val_last(&x), k = ww.cols;
    float *win = arena_alloc(r->a, sizeof *win * (size_t)(k * ch));
    Val y = val_new(r, T_F32, x.rank, x.d);
    for (long t = 0; t < x.n / ch; t++) {
        memcpy(win, R->f, sizeof *win * (size_t)((k - 1) * ch));
        memcpy(win + (k - 1) * ch, x.f + t * ch, sizeof *win * (size_t)ch);
        for (long c = 0; c < ch; c++) {
            double acc = b.f ? b.f[c] : 0;
            for (long i = 0; i < k; i++)
                acc += (double)w[c * k + i] * win[i * ch + c];
            y.f[t * ch + c] = (float)acc;
        }
        memcpy(R->f, win + ch, sizeof *win * (size_t)((k - 1) * ch));
    }
    return y;
}

/* One step of the gated delta rule for value head h's state S [dk,dv]. */
static void delta_head(float *S, const float *q, const float *k, const float *v, double g, double beta, long dk,
                       long dv, float *o, double *u)
{
    double dec = exp(g);
    for (long i = 0; i < dk * dv; i++)
        S[i] = (float)(S[i] * dec);
    for (long j = 0; j < dv; j++)
        u[j] = 0;
    for (long i = 0; i < dk; i++)
        for (long j = 0; j < dv; j++)
            u[j] += (double)S[i * dv + j] * k[i];
    for (long j = 0; j < dv; j++)
        u[j] = beta * (v[j] - u[j]);
    for (long i = 0; i < dk; i++)
        for (long j = 0; j < dv; j++)
            S[i * dv + j] = (float)(S[i * dv + j] + k[i] * u[j]);
    for (long j = 0; j < dv; j++)
        u[j] = 0;
    for (long i = 0; i < dk; i++)
        for (long j = 0; j < dv; j++)
            u[j] += (double)S[i * dv + j] * q[i];
    for (long j = 0; j < dv; j++)
        o[j] = (float)u[j];
}

static Val eval_delta(Run *r, const Expr *e)
{
    Val q = eval(r, e->args[0]), k = eval(r, e->args[1]), v = eval(r, e->args[2]), g = eval(r, e->args[3]),
        beta = eval(r, e->args[4]);
    Buf *S = named_buf(r, e->args[5], D_STATE);
    int st = q.rank == 3;
    long nk = q.d[st], dk = q.d[st + 1], nv = v.d[st], dv = v.d[st + 1], T = st ? q.d[0] : 1;
    double *u = arena_alloc(r->a, sizeof *u * (size_t)dv);
    Val y = val_new(r, T_F32, v.rank, v.d);
    for (long t = 0; t < T; t++)
        for (long h = 0; h < nv; h++) {
            long kh = h / (nv / nk), qo = (t * nk + kh) * dk;
            delta_head(S->f + h * dk * dv, q.f + qo, k.f + qo, v.f + (t * nv + h) * dv, g.f[t * nv + h],
                       beta.f[t * nv + h], dk, dv, y.f + (t * nv + h) * dv, u);
        }
    return y;
}

/* ---- mixture of experts ---- */

/* Index of the best c[i] among keep[i] (ties to the lower index), or -1. */
static long best_of(const double *c, const char *keep, long n)
{
    long b = -1;
    for (long i = 0; i < n; i++)
        if (keep[i] && (b < 0 || c[i] > c[b]))
            b = i;
    return b;
}

/* Drops the experts of all but the topk_groups best groups. */
static void keep_groups(const double *c, long ne, long groups, long tg, int pairs, char *keep, double *gs,
                        char *gk)
{
    long gsz = ne / groups;
    for (long g = 0; g < groups; g++) {
        long b1 = best_of(c + g * gsz, keep + g * gsz, gsz);
        double sc = c[g * gsz + b1];
        if (pairs && gsz > 1) {
            keep[g * gsz + b1] = 0;
            sc += c[g * gsz + best_of(c + g * gsz, keep + g * gsz, gsz)];
            keep[g * gsz + b1] = 1;
        }
        gs[g] = sc;
        gk[g] = 1;
    }
    for (long i = 0; i < groups - tg; i++) {   /* drop the worst, ties to the higher index */
        long w = -1;
        for (long g = 0; g < groups; g++)
            if (gk[g] && (w < 0 || gs[g] <= gs[w]))
                w = g;
        gk[w] = 0;
        memset(keep + w * gsz, 0, (size_t)gsz);
    }
}

static void route_row(Run *r, const Expr *e, const float *lg, const float *bias, long ne, float *out)
{
    const char *score = attr_word(e, "score", "softmax");
    long k = (long)attr_num(e, "k", 1), groups = (long)attr_num(e, "groups", 1);
    double *s = arena_alloc(r->a, sizeof *s * (size_t)(3 * ne)), *c = s + ne, *w = c + ne;
    char *keep = arena_alloc(r->a, (size_t)(2 * ne)), *kept = keep + ne;
    for (long i = 0; i < ne; i++)
        s[i] = strcmp(score, "sigmoid") == 0 ? sigmoid(lg[i]) : lg[i];
    if (strcmp(score, "softmax") == 0)
        softmax(s, 0, ne, NULL);
    for (long i = 0; i < ne; i++) {
        c[i] = s[i] + (bias ? bias[i] : 0);
        keep[i] = 1;
    }
    if (groups > 1)
        keep_groups(c, ne, groups, (long)attr_num(e, "topk_groups", (double)groups), bias != NULL, keep, w,
                    kept);
    memset(kept, 0, (size_t)ne);
    for (long j = 0; j < k; j++) {
        long b = best_of(c, keep, ne);
        keep[b] = 0;
        kept[b] = 1;
    }
    for (long i = 0; i < ne; i++)
        w[i] = kept[i] ? s[i] : -INFINITY;
    if (strcmp(score, "topk_softmax") == 0)
        softmax(w, 0, ne, NULL);
    double sum = 0, scale = attr_num(e, "scale", 1);
    for (long i = 0; i < ne; i++)
        sum += w[i] = kept[i] ? w[i] : 0;
    for (long i = 0; i < ne; i++)
        out[i] = (float)(w[i] / (attr_num(e, "norm", 0) ? sum : 1) * scale);
}

static Val eval_route(Run *r, const Expr *e)
{
    Val l = eval(r, e->args[0]), b = {0};
    if (e->nargs == 2)
        b = eval(r, e->args[1]);
    long ne = val_last(&l);
    Val y = val_new(r, T_F32, l.rank, l.d);
    for (long t = 0; t < l.n / ne; t++)
        route_row(r, e, l.f + t * ne, b.f, ne, y.f + t * ne);
    return y;
}

/* The gated pair's activation: silu(g)*u, gelu_tanh(g)*u, or gpt-oss's. */
static float gated(const char *act, double alpha, double limit, float g, float u)
{
    if (strcmp(act, "silu") == 0)
        return silu(g) * u;
    if (strcmp(act, "gelu_tanh") == 0)
        return gelu_tanh(g) * u;
    double gc = g > limit ? limit : g, uc = u < -limit ? -limit : u > limit ? limit : u;
    return (float)((uc + 1) * gc * sigmoid(alpha * gc));
}

static Val eval_moe(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]), rt = eval(r, e->args[1]), bias[3] = {{0}};
    WRows wg = wrows(r, e->args[2]), wu = wrows(r, e->args[3]), wd = wrows(r, e->args[4]);
    for (int i = 5; i < e->nargs; i++)
        bias[i - 5] = eval(r, e->args[i]);
    long d = val_last(&x), ne = val_last(&rt), ff = wg.rows / ne;
    const char *act = attr_word(e, "act", "silu");
    double alpha = attr_num(e, "alpha", 1.702), limit = attr_num(e, "limit", 7);
    float *g = arena_alloc(r->a, sizeof *g * (size_t)(2 * ff + d)), *u = g + ff, *o = u + ff;
    double *acc = arena_alloc(r->a, sizeof *acc * (size_t)d);
    Val y = val_new(r, T_F32, x.rank, x.d);
    for (long t = 0; t < x.n / d; t++) {
        memset(acc, 0, sizeof *acc * (size_t)d);
        for (long ex = 0; ex < ne; ex++) {
            float re = rt.f[t * ne + ex];
            if (re == 0)
                continue;
            product(r, &wg, ex * ff, ff, x.f + t * d, 1, g);
            product(r, &wu, ex * ff, ff, x.f + t * d, 1, u);
            for (long i = 0; i < ff; i++) {
                float gb = g[i] + (bias[0].f ? bias[0].f[ex * ff + i] : 0);
                float ub = u[i] + (bias[1].f ? bias[1].f[ex * ff + i] : 0);
                g[i] = gated(act, alpha, limit, gb, ub);
            }
            product(r, &wd, ex * d, d, g, 1, o);
            for (long i = 0; i < d; i++)
                acc[i] += (double)re * (o[i] + (bias[2].f ? bias[2].f[ex * d + i] : 0));
        }
        for (long i = 0; i < d; i++)
            y.f[t * d + i] = (float)acc[i];
    }
    return y;
}

/* A name's value: a local, an input, or an f32 weight (rows unpaired). */
static Val eval_name(Run *r, const Expr *e)
{
    Local *l = local(r, e->name);
    if (l)
        return l->v;
    const Decl *d = decl_of(r, e->name);
    ASSERT(d && (d->kind == D_IN || d->kind == D_WEIGHT));
    Buf *b = env_get(r->env, e->name);
    ASSERT(b);
    Val v = val_of_buf(b);
    if (d->kind == D_WEIGHT) {
        ASSERT(b->base == T_F32);
        if (d->unpair_hd) {
            WRows w = wrows(r, e);
            v.f = weight_values(r, &w);
        }
    }
    return v;
}

static Val eval(Run *r, const Expr *e)
{
    switch (e->op) {
    case E_NAME: return eval_name(r, e);
    case E_NUM: {
        Val v = val_new(r, T_F32, 0, NULL);
        v.f[0] = (float)e->num;
        return v;
    }
    case OP_MATMUL: return eval_matmul(r, e);
    case OP_INDEX: return eval_index(r, e);
    case OP_UPTO: return eval_upto(r, e);
    case OP_RESHAPE: return eval_reshape(r, e);
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: return eval_binary(r, e);
    case OP_NEG: case OP_SILU: case OP_GELU: case OP_SIGMOID: case OP_SOFTPLUS: case OP_EXP:
    case OP_TANH: case OP_SOFTCAP: case OP_CLAMP: case OP_ALLREDUCE: return eval_unary(r, e);
    case OP_RMSNORM: case OP_L2NORM: return eval_norm(r, e);
    case OP_ROPE: return eval_rope(r, e);
    case OP_ATTEND: return eval_attend(r, e);
    case OP_LATENT: return eval_latent(r, e);
    case OP_CONV: return eval_conv(r, e);
    case OP_DELTA: return eval_delta(r, e);
    case OP_ROUTE: return eval_route(r, e);
    case OP_MOE: return eval_moe(r, e);
    case OP_ARGMAX: return eval_argmax(r, e);
    case OP_STACK: return eval_stack(r, e);
    case OP_CONCAT: return eval_concat(r, e);
    case OP_SLICE: return eval_slice(r, e);
    case OP_LAST: return eval_last(r, e);
    case OP_RANGE: return eval_range(r, e);
    case OP_ALLGATHER: return eval_allgather(r, e);
    default: BUG("unknown op");
    }
}

/* ---- statements ---- */

static void run_assign(Run *r, const Stmt *s)
{
    Val v = eval(r, s->value);
    ASSERT(!v.ends);
    const Decl *d = decl_of(r, s->name);
    if (d && d->kind == D_OUT) {
        Buf *b = env_alloc(r->env, s->name, v.base, v.rank, v.d);
        memcpy(v.base == T_I32 ? (void *)b->i : (void *)b->f, v.base == T_I32 ? (void *)v.i : (void *)v.f,
               (size_t)v.n * 4);
        v = val_of_buf(b);
    } else if (v.aliased) {
        v = val_copy(r, &v);
    }
    Local *l = VEC_PUSH(r->a, r->loc, r->nloc, r->cloc);
    l->name = s->name;
    l->v = v;
}

static void run_write(Run *r, const Stmt *s)
{
    Buf *b = env_get(r->env, s->name);
    ASSERT(b);
    Val ix = eval(r, s->index), v = eval(r, s->value);
    long width = buf_cols(b);
    ASSERT(ix.base == T_I32 && v.n == ix.n * width);
    for (long k = 0; k < ix.n; k++) {
        long row = position(r, s->index, ix.i[k], b->d[0], s->name);
        memmove(b->f + row * width, v.f + k * width, (size_t)width * 4);
    }
}

/* ---- declarations against the env ---- */

static void bind_input(Run *r, int di)
{
    const Decl *d = &r->p->decls[di];
    const Buf *b = env_get(r->env, d->name);
    if (!b)
        ref_fail(r, d->line, d->col, "input '%s' is not given", d->name);
    if (b->base != d->base || b->rank != d->rank)
        ref_fail(r, d->line, d->col, "input '%s' is given as %s with %d dimensions, not %s with %d", d->name,
                 base_name(b->base), b->rank, base_name(d->base), d->rank);
    for (int k = 0; k < d->rank; k++) {
        const char *s = d->dims[k];
        int si = s[0] >= '0' && s[0] <= '9' ? -1 : prog_find_decl(r->p, s);
        long want = si < 0 ? strtol(s, NULL, 10) : r->size[si];
        if (si >= 0 && want < 0)
            r->size[si] = want = b->d[k];
        if (b->d[k] != want)
            ref_fail(r, d->line, d->col, "input '%s' has %ld values on axis %d where %s is %ld", d->name, b->d[k],
                     k, s, want);
    }
}

static void declared_dims(const Decl *d, long *dims, long *n)
{
    *n = 1;
    for (int k = 0; k < d->rank; k++) {
        dims[k] = strtol(d->dims[k], NULL, 10);
        *n *= dims[k];
    }
}

static void bind_state(Run *r, const Decl *d)
{
    long dims[LOGOS_MAXRANK], n;
    declared_dims(d, dims, &n);
    const Buf *b = env_get(r->env, d->name);
    if (!b)
        b = env_alloc(r->env, d->name, T_F32, d->rank, dims);
    if (b->base != T_F32 || b->n != n || b->d[0] != dims[0])
        ref_fail(r, d->line, d->col, "state '%s' is held with another shape than its declaration", d->name);
}

static void check_weight(Run *r, const Decl *d)
{
    long dims[LOGOS_MAXRANK], n;
    declared_dims(d, dims, &n);
    const Buf *b = env_get(r->env, d->name);
    if (!b)
        ref_fail(r, d->line, d->col, "weight '%s' is not bound", d->name);
    if (b->base != d->base || b->rank != d->rank || b->n != n || memcmp(b->d, dims, sizeof dims[0] * (size_t)d->rank))
        ref_fail(r, d->line, d->col, "weight '%s' is bound with another type or shape than its declaration",
                 d->name);
}

static void bind_decls(Run *r)
{
    for (int i = 0; i < r->p->ndecls; i++)
        r->size[i] = -1;
    for (int i = 0; i < r->p->ndecls; i++) {
        const Decl *d = &r->p->decls[i];
        if (d->kind == D_IN)
            bind_input(r, i);
        else if (d->kind == D_STATE)
            bind_state(r, d);
        else if (d->kind == D_WEIGHT)
            check_weight(r, d);
    }
}

int ref_run(const Prog *p, Env *env)
{
    Run r = {.p = p, .env = env, .a = arena_new()};
    r.size = arena_alloc(r.a, sizeof *r.size * (size_t)(p->ndecls + 1));
    if (setjmp(r.fail)) {
        arena_free(r.a);
        return EXIT_INPUT;
    }
    bind_decls(&r);
    for (int i = 0; i < p->nstmts; i++) {
        const Stmt *s = &p->stmts[i];
        if (s->kind == S_WRITE)
            run_write(&r, s);
        else
            run_assign(&r, s);
    }
    arena_free(r.a);
    return EXIT_OK;
}
