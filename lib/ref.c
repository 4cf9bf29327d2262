/* ref.c — the CPU reference executor: runs a checked program's statements in
 * order against an Env, in f32 with f64 accumulation in reductions. It is the
 * numeric oracle the kernels are compared against, and logos-run's fallback.
 * Input errors (a position past a state, a token past a table, a missing
 * input) unwind to ref_run by longjmp, which frees the run's arena. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ref.h"


/* ---- errors ---- */

_Noreturn void ref_fail(Run *r, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!r->coll || r->coll->stop(r->coll->ctx))   /* of a split program's chips, the first reports */
        diag_at(r->p->src, line, col, "%s", msg);
    longjmp(r->fail, 1);
}

/* ---- values ---- */

Val val_new(Run *r, int base, int rank, const long *d)
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

long val_last(const Val *v)
{
    return v->rank ? v->d[v->rank - 1] : 1;
}

/* ---- names ---- */

/* The declared weight or state an operand names, as the env holds it. */
Buf *named_buf(Run *r, const Expr *e, int kind)
{
    ASSERT(e->op == E_NAME && e->decl >= 0 && r->p->decls[e->decl].kind == kind && r->buf[e->decl]);
    return r->buf[e->decl];
}

static int is_decl(const Run *r, const Expr *e, int kind)
{
    return e->op == E_NAME && e->def < 0 && e->decl >= 0 && r->p->decls[e->decl].kind == kind;
}

/* A dimension's value: its constant, or the size an input bound. */
long dim_of(Run *r, const Dim *d, int line, int col)
{
    if (!d->sym)
        return d->n;
    if (r->size[d->sym] < 0)
        ref_fail(r, line, col, "size '%s' is not bound by any input", r->p->syms[d->sym - 1].name);
    return r->size[d->sym];
}

/* ---- weight rows (through the unpair permutation) ---- */

WRows wrows(Run *r, const Expr *e)
{
    const Buf *b = named_buf(r, e, D_WEIGHT);
    const Decl *d = &r->p->decls[e->decl];
    /* a vector's rows are its values */
    WRows w = {b, 0, b->rank == 1 ? 1 : b->d[b->rank - 1], d->unpair_hd, d->unpair_rot, d->unpair_at, 0};
    w.rows = b->n / w.cols;
    return w;
}

static long file_row(const WRows *w, long r)
{
    return unpair_row(w->hd, w->rot, w->at, r);
}

/* Logical row r as f32: a pointer into an f32 weight, or tmp dequantized. */
const float *wrow(const WRows *w, long r, float *tmp)
{
    long at = file_row(w, r) * w->cols;
    if (w->b->base == T_F32)
        return w->b->f + at;
    dequant_q8(w->b->q + at, w->b->s + at / Q8_BLOCK, w->cols, tmp);
    return tmp;
}

/* y[t][o] = W[r0+o] · x[t] for o < nout, t < T (x rows of cols values). */
/* Rows [o0, o1) of a product: what one thread of product() computes. */
typedef struct Slice {
    const WRows *w;
    long r0, nout, o0, o1, T;
    const float *x;
    float *y;
} Slice;

/* Rows [o0, o1) of a decode step's product by Q8_0 weights: each row's dot
 * taken from its quants (no row written out), two rows at a time. */
static void step_rows(const Slice *s)
{
    const Buf *b = s->w->b;
    long o = s->o0, n = s->w->cols;
    for (; o + 2 <= s->o1; o += 2) {   /* two rows' sums at once: the same values */
        long at = file_row(s->w, s->r0 + o) * n, bt = file_row(s->w, s->r0 + o + 1) * n;
        double v[2];
        dot_q8_pair(b->q + at, b->s + at / Q8_BLOCK, b->q + bt, b->s + bt / Q8_BLOCK, s->x, n, v);
        s->y[o] = (float)v[0], s->y[o + 1] = (float)v[1];
    }
    if (o < s->o1) {
        long at = file_row(s->w, s->r0 + o) * n;
        s->y[o] = (float)dot_q8(b->q + at, b->s + at / Q8_BLOCK, s->x, n);
    }
}

/* Weight rows a stacked product takes at once (ROWS_AT_ONCE f32 rows in
 * the cache while every row of x passes by them once). */
enum { ROWS_AT_ONCE = 8 };

/* Rows [o0, o1) of a stacked product (T rows of x): ROWS_AT_ONCE weight
 * rows made f32 at a time, then every pair of x's rows against each of
 * them, so that x is read once for those rows, not once a row. Each value
 * is the same dot as alone. */
static void stacked_rows(const Slice *s, float *tmp)
{
    long n = s->w->cols;
    const float *rows[ROWS_AT_ONCE];
    for (long o0 = s->o0; o0 < s->o1; o0 += ROWS_AT_ONCE) {
        int nr = s->o1 - o0 < ROWS_AT_ONCE ? (int)(s->o1 - o0) : ROWS_AT_ONCE;
        for (int r = 0; r < nr; r++) {
            float *mine = tmp ? tmp + r * n : NULL;
            rows[r] = wrow(s->w, s->r0 + o0 + r, mine);
            if (s->w->h16 && rows[r] == mine)   /* mmh's weights: f16(q d), one rounding */
                for (long c = 0; c < n; c++)
                    mine[c] = f16_to_f32(f32_to_f16(mine[c]));
        }
        long t = 0;
        for (; t + 2 <= s->T; t += 2)   /* two rows of x at once: the same values */
            for (int r = 0; r < nr; r++) {
                double v[2];
                dot_pair(rows[r], s->x + t * n, s->x + (t + 1) * n, n, v);
                s->y[t * s->nout + o0 + r] = (float)v[0], s->y[(t + 1) * s->nout + o0 + r] = (float)v[1];
            }
        if (t < s->T)
            for (int r = 0; r < nr; r++)
                s->y[t * s->nout + o0 + r] = (float)dot(rows[r], s->x + t * n, n);
    }
}

static void *product_rows(void *arg)
{
    const Slice *s = arg;
    const Buf *b = s->w->b;
    if (b->base == T_Q8 && !s->w->h16 && s->T == 1 && s->w->cols % Q8_BLOCK == 0) {   /* a step: no row written out */
        step_rows(s);
        return NULL;
    }
    float *tmp = b->base == T_Q8 ? malloc((size_t)s->w->cols * ROWS_AT_ONCE * 4) : NULL;
    if (b->base == T_Q8 && !tmp) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    stacked_rows(s, tmp);
    free(tmp);
    return NULL;
}

/* LOGOS_REF_NUDGE=F[:SEED] (a diagnostic, logos-run(1)): each value an f16
 * state keeps, and under LOGOS_REF_NUMERICS each activation a product
 * quantizes, is moved by F of itself, up or down by a hash of its place and
 * SEED (default 0), before it rounds: two lanes' last-bit differences in
 * f32, at the places where they become a step of f16 or of an int8 word.
 * Each seed is one draw of those differences' signs. */
static struct {
    double by;
    uint64_t seed;
    int read;
} nudging;

/* A fraction from 0 to 1 at the start of e into *v: where it ends, or NULL
 * where e does not start with one. */
static const char *fraction(const char *e, double *v)
{
    char *end;
    *v = strtod(e, &end);
    return end != e && *v >= 0 && *v <= 1 ? end : NULL;
}

/* The variable name's value, NULL where unset or empty; *read set. */
static const char *env_value(const char *name, int *read)
{
    const char *e = getenv(name);
    *read = 1;
    return e && *e ? e : NULL;
}

/* EXIT_USAGE after saying that name's value e is not `what`; *v back to 0. */
static int env_refused(const char *name, const char *e, const char *what, double *v)
{
    diag("%s: '%s' is not %s", name, e, what);
    *v = 0;
    return EXIT_USAGE;
}

/* Reads LOGOS_REF_NUDGE once; 0, or EXIT_USAGE after a message naming the
 * value when it is not a fraction from 0 to 1 with an optional :SEED. */
int ref_nudge_read(void)
{
    const char *e = env_value("LOGOS_REF_NUDGE", &nudging.read);
    if (!e)
        return 0;
    const char *end = fraction(e, &nudging.by);
    if (end && *end == ':' && end[1] >= '0' && end[1] <= '9') {
        char *rest;
        nudging.seed = strtoull(end + 1, &rest, 10);
        end = rest;
    }
    if (!end || *end)
        return env_refused("LOGOS_REF_NUDGE", e, "a fraction from 0 to 1, with :SEED after it or not", &nudging.by);
    return 0;
}

/* LOGOS_REF_TIES=F (a diagnostic, logos-run(1)): each route whose last
 * kept and best dropped expert (or group) score lie within F of each other,
 * relative to the larger, is said on stderr: a top-k choice that two lanes
 * whose f32 arithmetic differs in its last bits may make differently. */
static struct {
    double within;
    int read;
} ties;

int ref_ties_read(void)
{
    const char *e = env_value("LOGOS_REF_TIES", &ties.read);
    if (!e)
        return 0;
    const char *end = fraction(e, &ties.within);
    if (!end || *end)
        return env_refused("LOGOS_REF_TIES", e, "a fraction from 0 to 1", &ties.within);
    return 0;
}

double ref_ties(void)
{
    if (!ties.read)
        ref_ties_read();
    return ties.within;
}

static double nudge(void)   /* a product and a write each ask */
{
    if (!nudging.read)
        ref_nudge_read();
    return nudging.by;
}

static float nudged(float v, long at, double by)
{
    uint64_t h = ((uint64_t)at ^ nudging.seed * 0xd6e8feb86659fd93u) * 0x9e3779b97f4a7c15u;
    h ^= h >> 29;
    return (float)(v * (1 + ((h >> 7) & 1 ? by : -by)));
}

/* Whether a product by w reads its activations quantized (RefNum's quant),
 * as the lane's products read them. */
static int quantizes(const Run *r, const WRows *w)
{
    return r->num.quant && w->b->base == T_Q8 && w->cols % Q8_BLOCK == 0;
}

/* x (T rows of w's cols) as the lane's products read it (RefNum's quant,
 * nudged under LOGOS_REF_NUDGE) into q (T cols floats) and returns q; x
 * itself where the numerics leave it as it is. nudge_tmp holds as many floats
 * where LOGOS_REF_NUDGE is set. */
static const float *product_input(const Run *r, const WRows *w, long r0, const float *x, long T, float *q,
                                  float *nudge_tmp)
{
    if (!quantizes(r, w))
        return x;
    double by = nudge();
    if (by) {
        for (long i = 0; i < T * w->cols; i++)
            nudge_tmp[i] = nudged(x[i], (w->cols << 32) + r0 * 7919 + i, by);
        x = nudge_tmp;
    }
    if (w->h16 && r->num.quant == 1)
        act_quantize_h16(x, T * w->cols, q);
    else
        act_quantize(x, T * w->cols, r->num.quant, q);
    return q;
}

/* product() on this thread alone, its scratch the caller's (2 T cols
 * floats): what a thread of a larger op (eval_moe) computes. */
void product_alone(const Run *r, const WRows *w, long r0, long nout, const float *x, long T, float *y,
                   float *scratch)
{
    x = product_input(r, w, r0, x, T, scratch, scratch + T * w->cols);
    Slice s = {w, r0, nout, 0, nout, T, x, y};
    product_rows(&s);
}

/* Threads for work multiply-adds: the machine's processors (up to 32)
 * from 4 M on, one below it (or on one processor). */
int ref_threads(double work)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return work < (double)(1L << 22) || cpus < 2 ? 1 : cpus > 32 ? 32 : (int)cpus;
}

/* y[t][o] = W[r0+o] . x[t]: on the machine's processors when the product is
 * large (every value computed alone, so the result is the same on any
 * number of threads). */
void product(Run *r, const WRows *w, long r0, long nout, const float *x, long T, float *y)
{
    if (quantizes(r, w)) {
        size_t bytes = sizeof *x * (size_t)(T * w->cols);
        x = product_input(r, w, r0, x, T, arena_alloc(r->a, bytes), nudge() ? arena_alloc(r->a, bytes) : NULL);
    }
    int nt = ref_threads((double)nout * (double)w->cols * (double)T);
    Slice s[32];
    pthread_t th[32];
    int started = 0;
    for (int i = 0; i < nt; i++)
        s[i] = (Slice){w, r0, nout, nout * i / nt, nout * (i + 1) / nt, T, x, y};
    for (int i = 1; i < nt; i++)
        if (pthread_create(&th[started], NULL, product_rows, &s[i]) == 0)
            started++;
        else
            product_rows(&s[i]);
    product_rows(&s[0]);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

/* A whole weight as f32 rows in logical order. */
float *weight_values(Run *r, const WRows *w)
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
        v.d[i] = dim_of(r, &e->ty.d[i], e->line, e->col);
        n *= v.d[i];
    }
    ASSERT(n == v.n);
    return v;
}

/* A collective across the chips of a split program, through r->coll. When
 * another chip has stopped (it reported why), this one stops quietly. */
static Val eval_coll(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]);
    long cols = val_last(&x), rows = x.n / cols;
    long d[LOGOS_MAXRANK];
    memcpy(d, x.d, sizeof d);
    if (e->op == OP_ALLGATHER)
        d[x.rank - 1] *= r->coll->chips;   /* the checker gives it rank 1 or more */
    Val y = val_new(r, T_F32, x.rank, d);
    if (r->coll->join(r->coll->ctx, e->op, x.f, rows, cols, y.f))
        longjmp(r->fail, 1);
    return y;
}

/* A name's value: a statement's, an input, or an f32 weight (rows unpaired). */
static Val eval_name(Run *r, const Expr *e)
{
    if (e->def >= 0)
        return r->val[e->def];
    const Decl *d = &r->p->decls[e->decl];
    ASSERT(d->kind == D_IN || d->kind == D_WEIGHT);
    Buf *b = r->buf[e->decl];
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

Val eval(Run *r, const Expr *e)
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
    case OP_TANH: case OP_SOFTCAP: case OP_CLAMP: return eval_unary(r, e);
    case OP_ALLREDUCE: return r->coll ? eval_coll(r, e) : eval_unary(r, e);
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
    case OP_ALLGATHER: return r->coll ? eval_coll(r, e) : eval_allgather(r, e);
    default: BUG("unknown op");
    }
}

/* ---- statements ---- */

static void run_assign(Run *r, const Stmt *s, int si)
{
    Val v = eval(r, s->value);
    ASSERT(!v.ends);
    if (s->decl >= 0) {   /* an output */
        Buf *b = env_alloc(r->env, s->name, v.base, v.rank, v.d);
        memcpy(v.base == T_I32 ? (void *)b->i : (void *)b->f, v.base == T_I32 ? (void *)v.i : (void *)v.f,
               (size_t)v.n * 4);
        v = val_of_buf(b);
    } else if (v.aliased) {
        v = val_copy(r, &v);
    }
    r->val[si] = v;
    if (r->trace_prog >= 0 && !v.ends) {
        trace_write(r->run, r->trace_prog, s->name, v.base == T_I32 ? (void *)v.i : (void *)v.f, v.n * 4);
        trace_order(r->run, r->trace_prog, s->name, v.base == T_I32);
    }
}

static void run_write(Run *r, const Stmt *s)
{
    Buf *b = r->buf[s->decl];
    ASSERT(b);
    Val ix = eval(r, s->index), v = eval(r, s->value);
    long width = buf_cols(b);
    ASSERT(ix.base == T_I32 && v.n == ix.n * width);
    int f16 = r->p->decls[s->decl].base == T_F16;
    double by = f16 ? nudge() : 0;
    for (long k = 0; k < ix.n; k++) {
        long row = position(r, s->index, ix.i[k], b->d[0], s->name);
        memmove(b->f + row * width, v.f + k * width, (size_t)width * 4);
        for (long j = 0; f16 && j < width; j++) {   /* an f16 state keeps what f16 holds */
            float *x = &b->f[row * width + j];
            *x = f16_to_f32(f32_to_f16(by ? nudged(*x, ((long)s->decl << 40) + row * width + j, by) : *x));
        }
    }
}

/* ---- declarations against the env ---- */

static void bind_input(Run *r, int di)
{
    const Decl *d = &r->p->decls[di];
    Buf *b = env_get(r->env, d->name);
    if (!b)
        ref_fail(r, d->line, d->col, "input '%s' is not given", d->name);
    if (b->base != d->base || b->rank != d->rank)
        ref_fail(r, d->line, d->col, "input '%s' is given as %s with %d dimensions, not %s with %d", d->name,
                 base_name(b->base), b->rank, base_name(d->base), d->rank);
    for (int k = 0; k < d->rank; k++) {
        const Dim *dim = &d->ty.d[k];
        long want = dim->sym ? r->size[dim->sym] : dim->n;
        if (dim->sym && want < 0)
            r->size[dim->sym] = want = b->d[k];
        if (b->d[k] != want)
            ref_fail(r, d->line, d->col, "input '%s' has %ld values on axis %d where %s is %ld", d->name, b->d[k],
                     k, d->dims[k], want);
    }
    r->buf[di] = b;
}

/* A declaration's constant dimensions (the checker bounds every one). */
static void declared_dims(const Decl *d, long *dims)
{
    for (int k = 0; k < d->rank; k++) {
        ASSERT(!d->ty.d[k].sym);
        dims[k] = d->ty.d[k].n;
    }
}

static void bind_state(Run *r, int di)
{
    const Decl *d = &r->p->decls[di];
    long dims[LOGOS_MAXRANK];
    declared_dims(d, dims);
    Buf *b = env_get(r->env, d->name);
    if (!b)
        b = env_alloc(r->env, d->name, T_F32, d->rank, dims);
    if (b->base != T_F32 || b->n != d->count || b->d[0] != dims[0])
        ref_fail(r, d->line, d->col, "state '%s' is held with another shape than its declaration", d->name);
    r->buf[di] = b;
}

static void check_weight(Run *r, int di)
{
    const Decl *d = &r->p->decls[di];
    long dims[LOGOS_MAXRANK];
    declared_dims(d, dims);
    Buf *b = env_get(r->env, d->name);
    if (!b)
        ref_fail(r, d->line, d->col, "weight '%s' is not bound", d->name);
    if (b->base != d->base || b->rank != d->rank || b->n != d->count ||
        memcmp(b->d, dims, sizeof dims[0] * (size_t)d->rank))
        ref_fail(r, d->line, d->col, "weight '%s' is bound with another type or shape than its declaration",
                 d->name);
    r->buf[di] = b;
}

static void bind_decls(Run *r)
{
    for (int i = 0; i <= r->p->nsyms; i++)
        r->size[i] = -1;
    for (int i = 0; i < r->p->ndecls; i++) {
        const Decl *d = &r->p->decls[i];
        if (d->kind == D_IN)
            bind_input(r, i);
        else if (d->kind == D_STATE)
            bind_state(r, i);
        else if (d->kind == D_WEIGHT)
            check_weight(r, i);
    }
}

/* Each state as it is after the run, under LOGOS_TRACE. */
static void trace_states(Run *r)
{
    for (int i = 0; i < r->p->ndecls; i++)
        if (r->p->decls[i].kind == D_STATE && r->buf[i])
            trace_write(r->run, r->trace_prog, r->p->decls[i].name, r->buf[i]->f, r->buf[i]->n * 4);
}

static int run_all(const Prog *p, Env *env, const RefColl *coll, const RefNum *num, int run, int trace_prog)
{
    Run r = {.p = p, .env = env, .a = arena_new(), .coll = coll, .num = num ? *num : (RefNum){0},
             .run = run, .trace_prog = trace_prog};
    ASSERT(p->names);   /* checked */
    nudge();            /* read before any op's threads ask */
    r.size = arena_alloc(r.a, sizeof *r.size * (size_t)(p->nsyms + 1));
    r.val = arena_alloc(r.a, sizeof *r.val * (size_t)(p->nstmts + 1));
    r.buf = arena_alloc(r.a, sizeof *r.buf * (size_t)(p->ndecls + 1));
    if (setjmp(r.fail)) {
        arena_free(r.a);
        return EXIT_INPUT;
    }
    ASSERT(!coll || coll->chips == (p->chips ? p->chips : 1));
    if (p->chips > 1 && !coll)
        ref_fail(&r, p->chips_line, 1, "the program is split over %d chips: each chip runs its part", p->chips);
    bind_decls(&r);
    for (int i = 0; i < p->nstmts; i++) {
        const Stmt *s = &p->stmts[i];
        if (s->kind == S_WRITE)
            run_write(&r, s);
        else
            run_assign(&r, s, i);
    }
    if (trace_prog >= 0)
        trace_states(&r);
    arena_free(r.a);
    return EXIT_OK;
}

int ref_run_coll(const Prog *p, Env *env, const RefColl *coll)
{
    return run_all(p, env, coll, NULL, -1, -1);
}

int ref_run(const Prog *p, Env *env)
{
    return run_all(p, env, NULL, NULL, -1, -1);
}

int ref_run_numerics(const Prog *p, Env *env, const RefNum *num, int run)
{
    return run_all(p, env, NULL, num, run, -1);
}

int ref_run_trace(const Prog *p, Env *env, const RefNum *num, int run, int prog)
{
    return run_all(p, env, NULL, num, run, prog);
}
