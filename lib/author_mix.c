/* author_mix.c — a layer's mixer as statements: attention (grouped heads,
 * biases, q/k norms, rope, soft-cap, sinks, window, output gate), latent
 * attention (MLA), the gated delta rule with its convolution ring, and the
 * short convolution. What reads a position or carried state runs per
 * sequence in a batch (author.c's per_seq). */
#include <math.h>
#include <string.h>

#include "author.h"

static const char *dims2(Em *e, long a, long b) { return arena_printf(e->a, "%ld,%ld", a, b); }

/* A projection W @ xn (+ bias), W of class wc with `out` rows placed as
 * `place` says on a split form's chips (its bias alike). */
static const char *proj_at(Em *e, const char *w, int l, long out, int wc, const char *xn, const char *bias,
                           const char *place)
{
    const char *p = arena_printf(e->a, "%s @ %s", weight_at(e, wname(e, w, l), wc, dims2(e, out, e->s->dim), place),
                                 xn);
    return bias ? arena_printf(e->a, "%s + %s", p, vec_at(e, bias, l, out, place)) : p;
}

static const char *proj(Em *e, const char *w, int l, long out, int wc, const char *xn, const char *bias)
{
    return proj_at(e, w, l, out, wc, xn, bias, "");
}

/* Declares a weight bound through the rope pairing permutation (whole
 * groups of hd rows on each chip of a split form). */
static void unpaired_at(Em *e, const char *w, int l, long rows, long cols, int wc, int hd, int rot, int at,
                        const char *place)
{
    int q8 = e->s->fmt[wc] == FMT_Q8;
    const char *u = at ? arena_printf(e->a, " unpair(%d, %d, %d)", hd, rot, at)
                    : rot != hd ? arena_printf(e->a, " unpair(%d, %d)", hd, rot) : arena_printf(e->a, " unpair(%d)", hd);
    em_decl(e, "weight %s : %s[%ld,%ld]%s%s", wname(e, w, l), q8 ? "q8" : "f32", rows, cols, u, place);
}

static void unpaired(Em *e, const char *w, int l, long rows, long cols, int wc, int hd, int rot, int at)
{
    unpaired_at(e, w, l, rows, cols, wc, hd, rot, at, "");
}

/* ---- attention ---- */

typedef struct AttnPart {
    const AttnSpec *A;
    const Split *sp;         /* the heads a chip holds */
    const char *q, *k, *v;   /* [.., heads, width] */
} AttnPart;

static const char *attend_attrs(Em *e, const AttnSpec *A)
{
    double scale = A->scale ? A->scale : 1 / sqrt((double)A->head_dim);
    const char *s = arena_printf(e->a, "scale=%s", num(e, scale));
    if (A->softcap)
        s = arena_printf(e->a, "%s, softcap=%s", s, num(e, A->softcap));
    if (A->window)
        s = arena_printf(e->a, "%s, window=%d", s, A->window);
    return s;
}

/* rope, the cache append and attention: the part that reads positions. */
static void attn_part(Em *e, int l, const char *res, const void *arg)
{
    const AttnPart *p = arg;
    const AttnSpec *A = p->A;
    const char *ra = rope_attrs(e, &A->rope, A->head_dim), *pos = posn(e);
    const char *q = row(e, p->q), *k = row(e, p->k), *v = row(e, p->v);
    const char *qh = e->seq >= 0 ? arena_printf(e->a, "qh%d_s%d", l, e->seq) : nm(e, "qh", l);
    const char *sinks = A->sinks ? arena_printf(e->a, ", %s", vec_at(e, "sk", l, p->sp->nh, p->sp->q)) : "";
    long nkv = p->sp->nkv;
    em(e, "%s = rope(%s, %s, %s)", qh, q, pos, ra);
    if (e->mode == M_FWD) {   /* no history: the token attends to itself */
        const char *kh = nm(e, "kh", l);
        em(e, "%s = rope(%s, %s, %s)", kh, k, pos, ra);
        em(e, "%s = attend(%s, %s ~ [1,%ld,%d], %s ~ [1,%ld,%d]%s, %s)", res, qh, kh, nkv, A->head_dim, v, nkv,
           A->value_dim, sinks, attend_attrs(e, A));
        return;
    }
    const char *kc = state(e, "Kc", l, arena_printf(e->a, "%d,%ld,%d", e->s->ctx, nkv, A->head_dim));
    const char *vc = state(e, "Vc", l, arena_printf(e->a, "%d,%ld,%d", e->s->ctx, nkv, A->value_dim));
    em(e, "%s[%s] = rope(%s, %s, %s)", kc, pos, k, pos, ra);
    em(e, "%s[%s] = %s", vc, pos, v);
    em(e, "%s = attend(%s, %s[..%s], %s[..%s]%s, %s)", res, qh, kc, pos, vc, pos, sinks, attend_attrs(e, A));
}

static void qk_weight(Em *e, const AttnSpec *A, const char *w, int l, long rows, int hd, const char *place)
{
    int rot = A->rope.dim ? A->rope.dim : A->head_dim;
    if (A->rope.interleaved)
        unpaired_at(e, w, l, rows, e->s->dim, WC_ATTN, hd, rot, 0, place);
    else
        weight_at(e, wname(e, w, l), WC_ATTN, dims2(e, rows, e->s->dim), place);
}

/* Attention; on a split form a chip's heads (tp_heads), closed after the
 * output product. */
static const char *attention(Em *e, const AttnSpec *A, int l, const char *xn)
{
    Split sp = tp_heads(e, A);
    long nh = sp.nh, nkv = sp.nkv, hd = A->head_dim, vd = A->value_dim;
    int gate = A->out_gate;
    /* a gated query projection holds each head's query then its gate */
    qk_weight(e, A, "wq", l, nh * hd * (gate ? 2 : 1), (int)(gate ? 2 * hd : hd), sp.q);
    qk_weight(e, A, "wk", l, nkv * hd, (int)hd, sp.kv);
    const char *q = nm(e, "q", l), *k = nm(e, "k", l), *v = nm(e, "v", l), *g = nm(e, "g", l);
    const char *qp = proj_at(e, "wq", l, nh * hd * (gate ? 2 : 1), WC_ATTN, xn, A->q_bias ? "qb" : NULL, sp.q);
    if (gate) {
        const char *qg = nm(e, "qg", l);
        em(e, "%s = %s ~ %s", qg, qp, shp(e, dims2(e, nh, 2 * hd)));
        em(e, "%s = slice(%s, at=0, n=%ld)", q, qg, hd);
        em(e, "%s = slice(%s, at=%ld, n=%ld)", g, qg, hd, hd);
    } else {
        em(e, "%s = %s ~ %s", q, qp, shp(e, dims2(e, nh, hd)));
    }
    em(e, "%s = %s ~ %s", k, proj_at(e, "wk", l, nkv * hd, WC_ATTN, xn, A->k_bias ? "kb" : NULL, sp.kv),
       shp(e, dims2(e, nkv, hd)));
    em(e, "%s = %s ~ %s", v, proj_at(e, "wv", l, nkv * vd, WC_ATTN, xn, A->v_bias ? "vb" : NULL, sp.kv),
       shp(e, dims2(e, nkv, vd)));
    if (A->qk_norm) {
        const char *qn = nm(e, "qn", l), *kn = nm(e, "kn", l);
        em(e, "%s = %s", qn, norm(e, q, vec(e, "nq", l, hd), e->s->norm_offset));
        em(e, "%s = %s", kn, norm(e, k, vec(e, "nk", l, hd), e->s->norm_offset));
        q = qn;
        k = kn;
    }
    AttnPart part = {A, &sp, q, k, v};
    const char *o = nm(e, "o", l);
    per_seq(e, o, l, attn_part, &part);
    if (gate) {
        const char *og = nm(e, "og", l);
        em(e, "%s = %s * sigmoid(%s)", og, o, g);
        o = og;
    }
    const char *wo = weight_at(e, wname(e, "wo", l), WC_ATTN, dims2(e, e->s->dim, nh * vd), sp.cols);
    const char *y = tp_close(e, arena_printf(e->a, "%s @ (%s ~ %s)", wo, o, shp(e, arena_printf(e->a, "%ld", nh * vd))));
    /* the bias inside the residual add, as the model adds them: x + (wo o + b) */
    return A->o_bias ? arena_printf(e->a, "(%s + %s)", y, vec(e, "ob", l, e->s->dim)) : y;
}

/* ---- latent attention ---- */

typedef struct LatentPart {
    const LatentSpec *M;
    const char *qr, *qpp, *cn, *kp;
} LatentPart;

static void latent_part(Em *e, int l, const char *res, const void *arg)
{
    const LatentPart *p = arg;
    const LatentSpec *M = p->M;
    const char *ra = rope_attrs(e, &M->rope, M->rope_dim), *pos = posn(e);
    const char *qp = e->seq >= 0 ? arena_printf(e->a, "qp%d_s%d", l, e->seq) : nm(e, "qp", l);
    double scale = M->scale ? M->scale : 1 / sqrt((double)(M->nope + M->rope_dim));
    const char *attrs = arena_printf(e->a, "scale=%s, lora=%d", num(e, scale), M->kv_lora);
    const char *wk = weight(e, wname(e, "wkb", l), WC_ATTN, dims2(e, (long)M->heads * M->nope, M->kv_lora));
    const char *wv = weight(e, wname(e, "wvb", l), WC_ATTN, dims2(e, (long)M->heads * M->value_dim, M->kv_lora));
    const char *halves = arena_printf(e->a, "%s, %s", wk, wv);
    em(e, "%s = rope(%s, %s, %s)", qp, row(e, p->qpp), pos, ra);
    const char *kr = arena_printf(e->a, "rope(%s, %s, %s) ~ %s", row(e, p->kp), pos, ra,
                                  shp(e, arena_printf(e->a, "%d", M->rope_dim)));
    const char *cached = arena_printf(e->a, "concat(%s, %s)", row(e, p->cn), kr);
    if (e->mode == M_FWD) {
        em(e, "%s = latent(%s, %s, %s ~ [1,%d], %s, %s)", res, p->qr, qp, cached, M->kv_lora + M->rope_dim, halves,
           attrs);
        return;
    }
    const char *kc = state(e, "Kc", l, arena_printf(e->a, "%d,%d", e->s->ctx, M->kv_lora + M->rope_dim));
    em(e, "%s[%s] = %s", kc, pos, cached);
    em(e, "%s = latent(%s, %s, %s[..%s], %s, %s)", res, row(e, p->qr), qp, kc, pos, halves, attrs);
}

static const char *latent(Em *e, const LatentSpec *M, int l, const char *xn)
{
    long nh = M->heads, qw = M->nope + M->rope_dim, lora = M->kv_lora, rd = M->rope_dim;
    int il = M->rope.interleaved;
    const char *qr = nm(e, "qr", l), *qpp = nm(e, "qpp", l), *ckv = nm(e, "ckv", l);
    const char *cn = nm(e, "cn", l), *kp = nm(e, "kp", l);
    const char *q;
    if (M->q_lora) {
        const char *cq = nm(e, "cq", l);
        em(e, "%s = %s", cq, norm_eps(e, proj(e, "wqa", l, M->q_lora, WC_ATTN, xn, NULL), vec(e, "nqa", l, M->q_lora), 0,
                                      M->norm_eps));
        if (il)
            unpaired(e, "wqb", l, nh * qw, M->q_lora, WC_ATTN, (int)qw, (int)rd, M->nope);
        else
            weight(e, wname(e, "wqb", l), WC_ATTN, dims2(e, nh * qw, M->q_lora));
        q = arena_printf(e->a, "wqb%d @ %s", l, cq);
    } else {
        if (il)
            unpaired(e, "wq", l, nh * qw, e->s->dim, WC_ATTN, (int)qw, (int)rd, M->nope);
        q = proj(e, "wq", l, nh * qw, WC_ATTN, xn, NULL);
    }
    em(e, "%s = %s ~ %s", qr, q, shp(e, dims2(e, nh, qw)));
    em(e, "%s = slice(%s, at=%d, n=%ld)", qpp, qr, M->nope, rd);
    if (il)
        unpaired(e, "wkva", l, lora + rd, e->s->dim, WC_ATTN, (int)(lora + rd), (int)rd, (int)lora);
    em(e, "%s = %s", ckv, proj(e, "wkva", l, lora + rd, WC_ATTN, xn, NULL));
    em(e, "%s = %s", cn, norm_eps(e, arena_printf(e->a, "slice(%s, at=0, n=%ld)", ckv, lora), vec(e, "nkva", l, lora), 0,
                                  M->norm_eps));
    em(e, "%s = slice(%s, at=%ld, n=%ld) ~ %s", kp, ckv, lora, rd, shp(e, arena_printf(e->a, "1,%ld", rd)));
    LatentPart part = {M, qr, qpp, cn, kp};
    const char *ct = nm(e, "ct", l);
    per_seq(e, ct, l, latent_part, &part);
    long vw = nh * M->value_dim;
    return arena_printf(e->a, "%s @ (%s ~ %s)", weight(e, wname(e, "wo", l), WC_ATTN, dims2(e, e->s->dim, vw)), ct,
                        shp(e, arena_printf(e->a, "%ld", vw)));
}

/* ---- the gated delta rule ---- */

typedef struct DeltaPart {
    const DeltaSpec *D;
    const char *qkv, *g, *beta;
} DeltaPart;

static void delta_part(Em *e, int l, const char *res, const void *arg)
{
    const DeltaPart *p = arg;
    const DeltaSpec *D = p->D;
    long nk = D->k_heads, nv = D->v_heads, dk = D->k_dim, dv = D->v_dim, ch = 2 * nk * dk + nv * dv;
    const char *sfx = e->seq >= 0 ? arena_printf(e->a, "%d_s%d", l, e->seq) : arena_printf(e->a, "%d", l);
    const char *pre = e->stacked ? "b" : "";
    const char *ring = state(e, "Rc", l, dims2(e, D->conv - 1, ch));
    const char *sd = state(e, "Sd", l, arena_printf(e->a, "%ld,%ld,%ld", nv, dk, dv));
    em_decl(e, "weight wcv%d : f32[%ld,%d]", l, ch, D->conv);
    em(e, "%sdc%s = silu(conv(%s, %s, wcv%d))", pre, sfx, row(e, p->qkv), ring, l);
    em(e, "%sdq%s = l2norm(slice(%sdc%s, at=0, n=%ld) ~ %s, eps=1e-6) * %s", pre, sfx, pre, sfx, nk * dk,
       shp(e, dims2(e, nk, dk)), num(e, 1 / sqrt((double)dk)));
    em(e, "%sdk%s = l2norm(slice(%sdc%s, at=%ld, n=%ld) ~ %s, eps=1e-6)", pre, sfx, pre, sfx, nk * dk, nk * dk,
       shp(e, dims2(e, nk, dk)));
    em(e, "%sdv%s = slice(%sdc%s, at=%ld, n=%ld) ~ %s", pre, sfx, pre, sfx, 2 * nk * dk, nv * dv,
       shp(e, dims2(e, nv, dv)));
    em(e, "%s = delta(%sdq%s, %sdk%s, %sdv%s, %s, %s, %s)", res, pre, sfx, pre, sfx, pre, sfx, row(e, p->g),
       row(e, p->beta), sd);
}

static const char *delta(Em *e, const DeltaSpec *D, int l, const char *xn)
{
    long nk = D->k_heads, nv = D->v_heads, dk = D->k_dim, dv = D->v_dim;
    const char *qkv = nm(e, "qkv", l), *z = nm(e, "z", l), *g = nm(e, "dg", l), *beta = nm(e, "beta", l);
    const char *pq = proj(e, "wdq", l, nk * dk, WC_MIXER, xn, NULL);
    const char *pk = proj(e, "wdk", l, nk * dk, WC_MIXER, xn, NULL);
    const char *pv = proj(e, "wdv", l, nv * dv, WC_MIXER, xn, NULL);
    em(e, "%s = concat(%s, %s, %s)", qkv, pq, pk, pv);
    em(e, "%s = %s ~ %s", z, proj(e, "wdz", l, nv * dv, WC_MIXER, xn, NULL), shp(e, dims2(e, nv, dv)));
    em(e, "%s = sigmoid(%s)", beta, proj(e, "wdb", l, nv, WC_MIXER, xn, NULL));
    const char *alog = vec(e, "alog", l, nv), *pa = proj(e, "wda", l, nv, WC_MIXER, xn, NULL);
    em(e, "%s = -exp(%s) * softplus(%s + %s)", g, alog, pa, vec(e, "dtb", l, nv));
    DeltaPart part = {D, qkv, g, beta};
    const char *o = nm(e, "do", l), *on = nm(e, "don", l);
    per_seq(e, o, l, delta_part, &part);
    em(e, "%s = %s * silu(%s)", on, norm(e, o, vec(e, "ndn", l, dv), 0), z);
    return arena_printf(e->a, "%s @ (%s ~ %s)", weight(e, wname(e, "wo", l), WC_MIXER, dims2(e, e->s->dim, nv * dv)), on,
                        shp(e, arena_printf(e->a, "%ld", nv * dv)));
}

/* ---- the short convolution ---- */

typedef struct ConvPart {
    const ConvSpec *C;
    const char *u;
} ConvPart;

static void conv_part(Em *e, int l, const char *res, const void *arg)
{
    const ConvPart *p = arg;
    long d = e->s->dim;
    const char *ring = state(e, "Rc", l, dims2(e, p->C->kernel - 1, d));
    em_decl(e, "weight wcv%d : f32[%ld,%d]", l, d, p->C->kernel);
    const char *bias = p->C->bias ? arena_printf(e->a, ", %s", vec(e, "cvb", l, d)) : "";
    em(e, "%s = conv(%s, %s, wcv%d%s)", res, row(e, p->u), ring, l, bias);
}

static const char *shortconv(Em *e, const ConvSpec *C, int l, const char *xn)
{
    long d = e->s->dim;
    const char *bcx = nm(e, "bcx", l), *u = nm(e, "cu", l), *y = nm(e, "cy", l);
    em(e, "%s = %s", bcx, proj(e, "wci", l, 3 * d, WC_MIXER, xn, C->bias ? "cib" : NULL));
    em(e, "%s = slice(%s, at=0, n=%ld) * slice(%s, at=%ld, n=%ld)", u, bcx, d, bcx, 2 * d, d);
    ConvPart part = {C, u};
    per_seq(e, y, l, conv_part, &part);
    const char *o = arena_printf(e->a, "%s @ (slice(%s, at=%ld, n=%ld) * %s)",
                                 weight(e, wname(e, "wco", l), WC_MIXER, dims2(e, d, d)), bcx, d, d, y);
    return C->bias ? arena_printf(e->a, "%s + %s", o, vec(e, "cob", l, d)) : o;
}

const char *mixer(Em *e, const LayerSpec *L, int l, const char *xn)
{
    ASSERT(!e->chips || L->mixer == MIX_ATTN);   /* spec_tp_block splits attention alone */
    switch (L->mixer) {
    case MIX_ATTN: return attention(e, &L->attn, l, xn);
    case MIX_LATENT: return latent(e, &L->latent, l, xn);
    case MIX_DELTA: return delta(e, &L->delta, l, xn);
    case MIX_CONV: return shortconv(e, &L->conv, l, xn);
    default: BUG("unknown mixer");
    }
}
