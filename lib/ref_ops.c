/* ref_ops.c — the CPU reference's ops: elementwise and activations, norms,
 * products and row ops, rope, attention and latent attention, the recurrent
 * mixers and the mixture of experts, each as logos(7) defines it (attention
 * a plan's flash launch covers as flash.cu computes it, under RefNum). */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ref.h"

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

Val eval_unary(Run *r, const Expr *e)
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

Val eval_binary(Run *r, const Expr *e)
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

Val eval_norm(Run *r, const Expr *e)
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

/* Whether e is among the n expressions of list (RefNum's: a plan's flash
 * or mmh launches cover it). */
static int listed(const Expr *const *list, int n, const Expr *e)
{
    for (int i = 0; i < n; i++)
        if (list[i] == e)
            return 1;
    return 0;
}

Val eval_matmul(Run *r, const Expr *e)
{
    WRows w = wrows(r, e->args[0]);
    Val x = eval(r, e->args[1]);
    ASSERT(val_last(&x) == w.cols);
    w.h16 = listed(r->num.h16, r->num.nh16, e);
    long d[LOGOS_MAXRANK];
    memcpy(d, x.d, sizeof d);
    d[x.rank - 1] = w.rows;
    Val y = val_new(r, T_F32, x.rank, d);
    product(r, &w, 0, w.rows, x.f, x.n / w.cols, y.f);
    return y;
}

Val eval_argmax(Run *r, const Expr *e)
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

Val eval_stack(Run *r, const Expr *e)
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

Val eval_concat(Run *r, const Expr *e)
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

Val eval_slice(Run *r, const Expr *e)
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

Val eval_last(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]);
    Val y = val_new(r, T_F32, x.rank - 1, x.d + 1);
    memcpy(y.f, x.f + (x.d[0] - 1) * y.n, (size_t)y.n * 4);
    return y;
}

Val eval_range(Run *r, const Expr *e)
{
    Val s = eval(r, e->args[0]);
    const Attr *a = attr_get(e, "n");
    long n = dim_of(r, &e->ty.d[0], a->line, a->col);
    Val y = val_new(r, T_I32, 1, &n);
    for (long i = 0; i < n; i++)
        y.i[i] = s.i[0] + (int32_t)i;
    return y;
}

Val eval_allgather(Run *r, const Expr *e)
{
    if (attr_num(e, "ranks", 1) != 1)
        ref_fail(r, e->line, e->col, "allgather needs the other ranks: run the split program with one process per chip");
    return eval(r, e->args[0]);
}

/* ---- rotary position embedding ---- */

/* inv[i] = theta^(-2i/rot), rescaled as transformers' llama3 or yarn rope
 * parameters compute it. */
void rope_freqs(const Expr *e, long rot, double *inv)
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
        double lo = dim * log(orig / (fast * 2 * M_PI)) / (2 * log(theta));
        double hi = dim * log(orig / (slow * 2 * M_PI)) / (2 * log(theta));
        if (attr_num(e, "truncate", 1)) {   /* whole dimensions, as transformers does by default */
            lo = floor(lo);
            hi = ceil(hi);
        }
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

Val eval_rope(Run *r, const Expr *e)
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

/* Whether a plan's flash launch covers this attention call (RefNum). */
static int by_flash(const Run *r, const Expr *e)
{
    return listed(r->num.flash, r->num.nflash, e);
}

Val eval_attend(Run *r, const Expr *e)
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
    if (st && by_flash(r, e)) {   /* a chunk's causal rows, as flash.cu computes them */
        FlashAttn f = {a.nh, a.nkv, a.hd, a.vd, (float)a.scale, (float)a.cap, a.window, a.sinks};
        flash_attend(&f, q.f, K.ends, T, K.f, V.f, K.d[0], y.f);
        return y;
    }
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

/* A wide chunk's latent attention as a plan's flash launch computes it
 * (rule latent_expanded under q8: latent_expand.cu, then flash.cu): the
 * cache's rows up to the last row's end expanded into each head's keys
 * (its unrotated part through Wk, then the shared rotated key) and values
 * (through Wv) in f32, the queries' two parts side by side, then
 * flash_attend over nh heads of its own keys. */
static void latent_flash(Run *r, const Expr *e, const Val *qr, const Val *qp, const Val *C, const long *shape,
                         float *y)
{
    long nh = shape[0], wq = shape[1], rope = shape[2], vd = shape[3], lora = (long)attr_num(e, "lora", 0);
    long nope = wq - rope, hd = nope + rope, row = lora + rope, T = qr->d[0], n = 0;
    for (long t = 0; t < T; t++)
        n = C->ends[t] > n ? C->ends[t] : n;
    n = n < C->d[0] ? n : C->d[0];
    WRows wk = wrows(r, e->args[3]), wv = wrows(r, e->args[4]);
    float *tmp = arena_alloc(r->a, sizeof *tmp * (size_t)lora);
    float *K = arena_alloc(r->a, sizeof *K * (size_t)((n ? n : 1) * nh * hd));
    float *V = arena_alloc(r->a, sizeof *V * (size_t)((n ? n : 1) * nh * vd));
    float *Q = arena_alloc(r->a, sizeof *Q * (size_t)(T * nh * hd));
    for (long h = 0; h < nh; h++) {
        for (long i = 0; i < nope + vd; i++) {
            const float *w = i < nope ? wrow(&wk, h * nope + i, tmp) : wrow(&wv, h * vd + i - nope, tmp);
            for (long j = 0; j < n; j++) {
                float v = (float)dot(w, C->f + j * row, lora);
                if (i < nope)
                    K[(j * nh + h) * hd + i] = v;
                else
                    V[(j * nh + h) * vd + i - nope] = v;
            }
        }
        for (long j = 0; j < n; j++)
            memcpy(K + (j * nh + h) * hd + nope, C->f + j * row + lora, sizeof *K * (size_t)rope);
        for (long t = 0; t < T; t++) {
            memcpy(Q + (t * nh + h) * hd, qr->f + (t * nh + h) * wq, sizeof *Q * (size_t)nope);
            memcpy(Q + (t * nh + h) * hd + nope, qp->f + (t * nh + h) * rope, sizeof *Q * (size_t)rope);
        }
    }
    FlashAttn f = {nh, nh, hd, vd, (float)attr_num(e, "scale", 1), 0, 0, NULL};
    flash_attend(&f, Q, C->ends, T, K, V, n, y);
}

Val eval_latent(Run *r, const Expr *e)
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
    if (st && by_flash(r, e)) {
        latent_flash(r, e, &qr, &qp, &C, shape, y.f);
        return y;
    }
    for (long t = 0; t < T; t++)
        latent_one(r, e, qr.f + t * nh * shape[1], qp.f + t * nh * shape[2], C.f, st ? C.ends[t] : C.d[0], shape,
                   y.f + t * nh * shape[3]);
    return y;
}

/* ---- recurrent mixers ---- */

Val eval_conv(Run *r, const Expr *e)
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

Val eval_delta(Run *r, const Expr *e)
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

/* Under LOGOS_REF_TIES (its fraction near, above 0): says so where the
 * last kept (index ik, score kept) and the best dropped (id, dropped) of
 * row t's experts or groups lie within near of each other, relative to the
 * larger. */
static void say_tie(const Run *r, const Expr *e, long t, double near, const char *what, long nkept, long ik,
                    double kept, long id, double dropped)
{
    double big = fmax(fabs(kept), fabs(dropped));
    if (id < 0 || !(kept - dropped <= near * big))
        return;
    double apart = big > 0 ? (kept - dropped) / big : 0;
    char run[32] = "";
    if (r->run >= 0)
        snprintf(run, sizeof run, "run %d, ", r->run);
    diag("%s:%d: %srow %ld: near tie: %s %ld, the last of %ld kept, scores %.9g and %s %ld, the best dropped, "
         "%.9g: %.1e apart",
         r->p->src->name, e->line, run, t, what, ik, nkept, kept, what, id, dropped, apart);
}

/* The worst of the kept groups gk by their scores gs (ties to the higher
 * index), or -1: the next one keep_groups drops. */
static long worst_group(const double *gs, const char *gk, long groups)
{
    long w = -1;
    for (long g = 0; g < groups; g++)
        if (gk[g] && (w < 0 || gs[g] <= gs[w]))
            w = g;
    return w;
}

/* Drops the experts of all but the topk_groups best groups; returns the
 * last group dropped (the best of them), or -1 where none is. */
static long keep_groups(const double *c, long ne, long groups, long tg, int pairs, char *keep, double *gs,
                        char *gk)
{
    long gsz = ne / groups, w = -1;
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
    for (long i = 0; i < groups - tg; i++) {   /* drop the worst */
        w = worst_group(gs, gk, groups);
        gk[w] = 0;
        memset(keep + w * gsz, 0, (size_t)gsz);
    }
    return w;
}

static void route_row(Run *r, const Expr *e, long t, const float *lg, const float *bias, long ne, float *out)
{
    const char *score = attr_word(e, "score", "softmax");
    long k = (long)attr_num(e, "k", 1), groups = (long)attr_num(e, "groups", 1);
    double *s = arena_alloc(r->a, sizeof *s * (size_t)(3 * ne)), *c = s + ne, *w = c + ne;
    char *keep = arena_alloc(r->a, (size_t)(2 * ne)), *kept = keep + ne;
    double near = ref_ties();   /* LOGOS_REF_TIES: 0, no notices */
    for (long i = 0; i < ne; i++)
        s[i] = strcmp(score, "sigmoid") == 0 ? sigmoid(lg[i]) : lg[i];
    if (strcmp(score, "softmax") == 0)
        softmax(s, 0, ne, NULL);
    for (long i = 0; i < ne; i++) {
        c[i] = s[i] + (bias ? bias[i] : 0);
        keep[i] = 1;
    }
    if (groups > 1) {
        long tg = (long)attr_num(e, "topk_groups", (double)groups);
        long bd = keep_groups(c, ne, groups, tg, bias != NULL, keep, w, kept);
        long wk = near > 0 ? worst_group(w, kept, groups) : -1;
        if (wk >= 0)
            say_tie(r, e, t, near, "group", tg, wk, w[wk], bd, bd >= 0 ? w[bd] : 0);
    }
    memset(kept, 0, (size_t)ne);
    long last = -1;
    for (long j = 0; j < k; j++) {
        long b = best_of(c, keep, ne);
        ASSERT(b >= 0);   /* the checker keeps k within the kept groups' experts */
        keep[b] = 0;
        kept[b] = 1;
        last = b;
    }
    if (near > 0) {
        long next = best_of(c, keep, ne);
        say_tie(r, e, t, near, "expert", k, last, c[last], next, next >= 0 ? c[next] : 0);
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

Val eval_route(Run *r, const Expr *e)
{
    Val l = eval(r, e->args[0]), b = {0};
    if (e->nargs == 2)
        b = eval(r, e->args[1]);
    long ne = val_last(&l);
    Val y = val_new(r, T_F32, l.rank, l.d);
    for (long t = 0; t < l.n / ne; t++)
        route_row(r, e, t, l.f + t * ne, b.f, ne, y.f + t * ne);
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

/* A mixture's work: each row's kept experts, one job each, computed on the
 * machine's processors (each job alone, so the sums are the same on any
 * number of threads), then added up a row at a time in the experts' order. */
typedef struct MoeJob {
    long t, ex;
    float *o;   /* the expert's output for row t, d values */
} MoeJob;

typedef struct Moe {
    const Run *r;
    WRows wg, wu, wd;
    const float *x, *bias[3];
    long d, ff;
    const char *act;
    double alpha, limit;
    MoeJob *jobs;
    long njobs, next;
    pthread_mutex_t mu;
} Moe;

static void moe_job(const Moe *m, const MoeJob *j, float *g, float *u, float *scratch)
{
    const float *x = m->x + j->t * m->d;
    product_alone(m->r, &m->wg, j->ex * m->ff, m->ff, x, 1, g, scratch);
    product_alone(m->r, &m->wu, j->ex * m->ff, m->ff, x, 1, u, scratch);
    for (long i = 0; i < m->ff; i++) {
        float gb = g[i] + (m->bias[0] ? m->bias[0][j->ex * m->ff + i] : 0);
        float ub = u[i] + (m->bias[1] ? m->bias[1][j->ex * m->ff + i] : 0);
        g[i] = gated(m->act, m->alpha, m->limit, gb, ub);
    }
    product_alone(m->r, &m->wd, j->ex * m->d, m->d, g, 1, j->o, scratch);
}

/* Takes jobs until none is left. */
static void *moe_worker(void *arg)
{
    Moe *m = arg;
    long wide = m->d > m->ff ? m->d : m->ff;
    float *g = malloc(sizeof *g * (size_t)(2 * m->ff + 2 * wide));
    if (!g) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    for (;;) {
        pthread_mutex_lock(&m->mu);
        long i = m->next < m->njobs ? m->next++ : -1;
        pthread_mutex_unlock(&m->mu);
        if (i < 0)
            break;
        moe_job(m, &m->jobs[i], g, g + m->ff, g + 2 * m->ff);
    }
    free(g);
    return NULL;
}

/* The jobs on as many threads as the machine has (up to 32) where their
 * work is large enough to share out, on this one where it is not. */
static void moe_run(Moe *m)
{
    int nt = ref_threads(3.0 * (double)m->njobs * (double)m->ff * (double)m->d), started = 0;
    pthread_t th[32];
    m->next = 0;
    for (int i = 1; i < nt && i < m->njobs; i++)
        if (pthread_create(&th[started], NULL, moe_worker, m) == 0)
            started++;
    moe_worker(m);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
}

enum { MOE_JOBS = 2048 };   /* experts' outputs held at once (and up to a row's more) */

Val eval_moe(Run *r, const Expr *e)
{
    Val x = eval(r, e->args[0]), rt = eval(r, e->args[1]), bias[3] = {{0}};
    for (int i = 5; i < e->nargs; i++)
        bias[i - 5] = eval(r, e->args[i]);
    Moe m = {.r = r, .wg = wrows(r, e->args[2]), .wu = wrows(r, e->args[3]), .wd = wrows(r, e->args[4]),
             .x = x.f, .bias = {bias[0].f, bias[1].f, bias[2].f}, .d = val_last(&x),
             .act = attr_word(e, "act", "silu"), .alpha = attr_num(e, "alpha", 1.702),
             .limit = attr_num(e, "limit", 7), .mu = PTHREAD_MUTEX_INITIALIZER};
    long d = m.d, ne = val_last(&rt), rows = x.n / d;
    m.ff = m.wg.rows / ne;
    m.jobs = arena_alloc(r->a, sizeof *m.jobs * (size_t)(MOE_JOBS + ne));
    double *acc = arena_alloc(r->a, sizeof *acc * (size_t)d);
    Val y = val_new(r, T_F32, x.rank, x.d);
    float *o = NULL;
    long held = 0;   /* jobs' outputs o holds */
    for (long t0 = 0, t1; t0 < rows; t0 = t1) {   /* rows [t0, t1): whole rows, about MOE_JOBS jobs */
        m.njobs = 0;
        for (t1 = t0; t1 < rows && m.njobs < MOE_JOBS; t1++)
            for (long ex = 0; ex < ne; ex++)
                if (rt.f[t1 * ne + ex] != 0)
                    m.jobs[m.njobs++] = (MoeJob){t1, ex, NULL};
        if (m.njobs > held) {
            free(o);
            held = m.njobs;
            o = malloc(sizeof *o * (size_t)(held * d));
            if (!o) {
                diag("out of memory");
                exit(EXIT_SYSTEM);
            }
        }
        for (long j = 0; j < m.njobs; j++)
            m.jobs[j].o = o + j * d;
        moe_run(&m);
        for (long j = 0, t = t0; t < t1; t++) {   /* the jobs are in row order, then expert order */
            memset(acc, 0, sizeof *acc * (size_t)d);
            for (; j < m.njobs && m.jobs[j].t == t; j++) {
                float re = rt.f[t * ne + m.jobs[j].ex];
                const float *b2 = bias[2].f ? bias[2].f + m.jobs[j].ex * d : NULL;
                for (long i = 0; i < d; i++)
                    acc[i] += (double)re * (m.jobs[j].o[i] + (b2 ? b2[i] : 0));
            }
            for (long i = 0; i < d; i++)
                y.f[t * d + i] = (float)acc[i];
        }
    }
    free(o);
    return y;
}
