/* author.c — a model's computation written as LOGOS programs from its
 * ModelSpec, for every form of the authoring seed: the single-token forward,
 * the decode step, the prefill chunk, the batch of decode steps, each cut
 * into embedding, layers and head, and the tensor-parallel forms. Nothing is
 * written for one model: a layer's statements follow from its mixer, its
 * feed-forward block and its norms. The mixers' statements are in
 * author_mix.c, how a split form divides a layer over its chips in
 * author_tp.c. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "author.h"

/* ---- emitting ---- */

void em_decl(Em *e, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    /* the first declaration of a name stands ("kind name" is the key) */
    const char *sp = strchr(line, ' ');
    sp = sp ? strchr(sp + 1, ' ') : NULL;
    size_t key = sp ? (size_t)(sp - line) : strlen(line);
    char *k = arena_strndup(e->a, line, key);
    if (strmap_get(e->declared, k) >= 0)
        return;
    strmap_put(e->declared, k, 0);
    if (strncmp(line, "weight ", 7) == 0) {   /* a weight names the files it is loaded from */
        const char *name = line + 7;
        int n = (int)strcspn(name, " ");
        if (strstr(line, ": q8["))
            fprintf(e->decls, "%s  # %.*s.q %.*s.s\n", line, n, name, n, name);
        else
            fprintf(e->decls, "%s  # %.*s.f\n", line, n, name);
        return;
    }
    fprintf(e->decls, "%s\n", line);
}

void em(Em *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(e->body, fmt, ap);
    va_end(ap);
    fputc('\n', e->body);
}

const char *num(Em *e, double v)
{
    return arena_printf(e->a, "%.9g", v);
}

/* A stacked tensor's name carries the b prefix. */
const char *nm(Em *e, const char *base, int l)
{
    return arena_printf(e->a, "%s%s%d", e->stacked ? "b" : "", base, l);
}

/* A shape with the rows of a stacked form in front: "[T,4,16]" or "[4,16]". */
const char *shp(Em *e, const char *inner)
{
    return e->stacked ? arena_printf(e->a, "[%s,%s]", e->rows, inner) : arena_printf(e->a, "[%s]", inner);
}

/* Declares a weight of a class's format (q8 where the spec says so), with
 * its placement on a split form's chips (" split(rows, 2)", or ""). */
const char *weight_at(Em *e, const char *name, int wclass, const char *dims, const char *place)
{
    int q8 = wclass >= 0 && e->s->fmt[wclass] == FMT_Q8;
    em_decl(e, "weight %s : %s[%s]%s", name, q8 ? "q8" : "f32", dims, place);
    return name;
}

const char *weight(Em *e, const char *name, int wclass, const char *dims)
{
    return weight_at(e, name, wclass, dims, "");
}

const char *wname(Em *e, const char *base, int l)
{
    return arena_printf(e->a, "%s%d", base, l);
}

/* An f32 vector weight (norms, biases), placed as `place` says. */
const char *vec_at(Em *e, const char *base, int l, long n, const char *place)
{
    const char *w = wname(e, base, l);
    em_decl(e, "weight %s : f32[%ld]%s", w, n, place);
    return w;
}

const char *vec(Em *e, const char *base, int l, long n)
{
    return vec_at(e, base, l, n, "");
}

/* rmsnorm of x by the spec's norm (with the (1+w) variant when it says). */
const char *norm_eps(Em *e, const char *x, const char *w, int offset, double eps)
{
    const char *off = offset ? ", offset=1" : "";
    return arena_printf(e->a, "rmsnorm(%s, %s, eps=%s%s)", x, w, num(e, eps), off);
}

const char *norm(Em *e, const char *x, const char *w, int offset)
{
    return norm_eps(e, x, w, offset, e->s->norm_eps);
}

/* The rope attributes of a rotation. */
const char *rope_attrs(Em *e, const Rope *r, int width)
{
    const char *s = arena_printf(e->a, "theta=%s", num(e, r->theta));
    if (r->dim && r->dim < width)
        s = arena_printf(e->a, "%s, rot=%d", s, r->dim);
    if (r->scaling == SCALE_LLAMA3)
        s = arena_printf(e->a, "%s, scaling=llama3, factor=%s, low=%s, high=%s, orig=%d", s, num(e, r->factor),
                         num(e, r->low), num(e, r->high), r->orig);
    else if (r->scaling == SCALE_YARN)
        s = arena_printf(e->a, "%s, scaling=yarn, factor=%s, orig=%d, beta_fast=%s, beta_slow=%s", s,
                         num(e, r->factor), r->orig, num(e, r->beta_fast ? r->beta_fast : 32),
                         num(e, r->beta_slow ? r->beta_slow : 1));
    if (r->scaling == SCALE_YARN && !r->truncate)
        s = arena_printf(e->a, "%s, truncate=0", s);
    if (r->attn_factor && r->attn_factor != 1)
        s = arena_printf(e->a, "%s, attn_factor=%s", s, num(e, r->attn_factor));
    return s;
}

/* ---- positions and state ---- */

/* The position a row reads in the current part: pos, bpos, or pos_s{b}. */
const char *posn(Em *e)
{
    if (e->seq >= 0)
        return arena_printf(e->a, "pos_s%d", e->seq);
    return e->stacked ? "bpos" : "pos";
}

/* A state's name: Kc3, or Kc3_s1 for sequence 1 of a batch. */
const char *state(Em *e, const char *base, int l, const char *dims)
{
    const char *s = e->seq >= 0 ? arena_printf(e->a, "%s%d_s%d", base, l, e->seq) : wname(e, base, l);
    /* attention's caches (Kc, Vc) in f16 when the spec stores them so */
    int f16 = e->s->cache_f16 && (!strcmp(base, "Kc") || !strcmp(base, "Vc"));
    em_decl(e, "state %s : %s[%s]", s, f16 ? "f16" : "f32", dims);
    return s;
}

/* Runs a per-sequence part: for a batch, once per sequence on its row (the
 * part's result `out` is stacked back); otherwise once on the whole. The
 * part function writes one statement assigning `res`. */
void per_seq(Em *e, const char *out, int l, PartFn *fn, const void *arg)
{
    if (e->mode != M_BATCH) {
        fn(e, l, out, arg);
        return;
    }
    e->stacked = 0;
    for (int b = 0; b < e->batch; b++) {
        e->seq = b;
        fn(e, l, arena_printf(e->a, "%s_s%d", out + 1, b), arg);
    }
    e->seq = -1;
    e->stacked = 1;
    fprintf(e->body, "%s = stack(", out);
    for (int b = 0; b < e->batch; b++)
        fprintf(e->body, "%s%s_s%d", b ? ", " : "", out + 1, b);
    fputs(")\n", e->body);
}

/* The row of sequence `seq` of a stacked tensor (inside a per-sequence part). */
const char *row(Em *e, const char *stacked)
{
    return e->seq >= 0 ? arena_printf(e->a, "%s[%d]", stacked, e->seq) : stacked;
}

/* ---- the feed-forward blocks ---- */

static const char *act_name(int act)
{
    return act == ACT_GELU_TANH ? "gelu_tanh" : act == ACT_OAI ? "oai" : "silu";
}

static const char *gated(Em *e, int act, const char *g, const char *u)
{
    return arena_printf(e->a, "%s(%s) * (%s)", act == ACT_GELU_TANH ? "gelu_tanh" : "silu", g, u);
}

/* The gated pair; split over chips by its hidden columns (gate and up rows,
 * down columns), the sum closed after the down product. */
static const char *dense(Em *e, const DenseSpec *f, int l, const char *xn)
{
    long d = e->s->dim, h = tp_part(e, f->hidden);
    const char *dh = arena_printf(e->a, "%ld,%ld", h, d), *hd = arena_printf(e->a, "%ld,%ld", d, h);
    const char *rows = tp_rows(e, e->chips);
    const char *g = arena_printf(e->a, "%s @ %s", weight_at(e, wname(e, "wg", l), WC_FFN, dh, rows), xn);
    const char *u = arena_printf(e->a, "%s @ %s", weight_at(e, wname(e, "wu", l), WC_FFN, dh, rows), xn);
    if (f->bias) {
        g = arena_printf(e->a, "%s + %s", g, vec_at(e, "gb", l, h, rows));
        u = arena_printf(e->a, "%s + %s", u, vec_at(e, "ub", l, h, rows));
    }
    const char *a = nm(e, "fa", l);
    em(e, "%s = %s", a, gated(e, f->act, g, u));
    const char *wd = weight_at(e, wname(e, "wd", l), WC_FFN, hd, tp_cols(e));
    const char *y = tp_close(e, arena_printf(e->a, "%s @ %s", wd, a));
    return f->bias ? arena_printf(e->a, "%s + %s", y, vec(e, "db", l, d)) : y;
}

static const char *route(Em *e, const MoeSpec *m, int l, const char *xn)
{
    long d = e->s->dim, ne = m->experts;
    const char *logits = arena_printf(e->a, "%s @ %s", weight(e, wname(e, "wr", l), WC_ROUTER,
                                                                arena_printf(e->a, "%ld,%ld", ne, d)), xn);
    const char *bias = "";
    if (m->router_bias && m->score == SCORE_TOPK_SOFTMAX)   /* a linear bias of the router (gpt-oss) */
        logits = arena_printf(e->a, "%s + %s", logits, vec(e, "rb", l, ne));
    else if (m->router_bias)                                  /* a selection bias (DeepSeek-V3) */
        bias = arena_printf(e->a, ", %s", vec(e, "rb", l, ne));
    static const char *scores[] = {"softmax", "sigmoid", "topk_softmax"};
    const char *attrs = arena_printf(e->a, "k=%d, score=%s", m->top_k, scores[m->score]);
    if (m->groups > 1)
        attrs = arena_printf(e->a, "%s, groups=%d, topk_groups=%d", attrs, m->groups, m->topk_groups);
    if (m->norm)
        attrs = arena_printf(e->a, "%s, norm=1", attrs);
    if (m->scale && m->scale != 1)
        attrs = arena_printf(e->a, "%s, scale=%s", attrs, num(e, m->scale));
    const char *r = nm(e, "rt", l);
    em(e, "%s = route(%s%s, %s)", r, logits, bias, attrs);
    return r;
}

static const char *moe(Em *e, const MoeSpec *m, int l, const char *xn)
{
    long d = e->s->dim, ne = m->experts, h = m->hidden;
    ASSERT(!e->chips);   /* spec_tp_block: a mixture does not split yet */
    const char *r = route(e, m, l, xn);
    const char *up = arena_printf(e->a, "%ld,%ld,%ld", ne, h, d), *down = arena_printf(e->a, "%ld,%ld,%ld", ne, d, h);
    const char *wg = weight(e, wname(e, "weg", l), WC_EXPERT, up);
    const char *wu = weight(e, wname(e, "weu", l), WC_EXPERT, up);
    const char *wd = weight(e, wname(e, "wed", l), WC_EXPERT, down);
    const char *ops = arena_printf(e->a, "%s, %s, %s, %s, %s", xn, r, wg, wu, wd);
    if (m->expert_bias) {
        const char *bh = arena_printf(e->a, "%ld,%ld", ne, h), *bd = arena_printf(e->a, "%ld,%ld", ne, d);
        em_decl(e, "weight %s : f32[%s]", wname(e, "egb", l), bh);
        em_decl(e, "weight %s : f32[%s]", wname(e, "eub", l), bh);
        em_decl(e, "weight %s : f32[%s]", wname(e, "edb", l), bd);
        ops = arena_printf(e->a, "%s, egb%d, eub%d, edb%d", ops, l, l, l);
    }
    const char *attrs = arena_printf(e->a, "act=%s", act_name(m->act));
    if (m->act == ACT_OAI)
        attrs = arena_printf(e->a, "%s, alpha=%s, limit=%s", attrs, num(e, m->alpha), num(e, m->limit));
    const char *y = nm(e, "fm", l);
    em(e, "%s = moe(%s, %s)", y, ops, attrs);
    if (!m->shared_hidden)
        return y;
    long sh = m->shared_hidden;
    const char *sdh = arena_printf(e->a, "%ld,%ld", sh, d), *shd = arena_printf(e->a, "%ld,%ld", d, sh);
    const char *sa = nm(e, "fsa", l);
    const char *sg = arena_printf(e->a, "%s @ %s", weight(e, wname(e, "wsg", l), WC_FFN, sdh), xn);
    const char *su = arena_printf(e->a, "%s @ %s", weight(e, wname(e, "wsu", l), WC_FFN, sdh), xn);
    em(e, "%s = %s", sa, gated(e, m->act, sg, su));
    const char *sy = arena_printf(e->a, "%s @ %s", weight(e, wname(e, "wsd", l), WC_FFN, shd), sa);
    if (m->shared_gate)
        sy = arena_printf(e->a, "sigmoid(%s @ %s) * (%s)",
                          weight(e, wname(e, "wsgt", l), WC_ROUTER, arena_printf(e->a, "1,%ld", d)), xn, sy);
    return arena_printf(e->a, "%s + %s", y, sy);
}

/* ---- one layer ---- */

/* Writes layer l reading `in`; its output is nm("h", l). */
static void layer(Em *e, int l, const char *in)
{
    const LayerSpec *L = spec_layer(e->s, l);
    long d = e->s->dim;
    int off = e->s->norm_offset;
    const char *xn = nm(e, "xn", l);
    em(e, "%s = %s", xn, norm(e, in, vec(e, "nm", l, d), off));
    const char *a = mixer(e, L, l, xn);
    if (L->sandwich) {
        const char *pa = nm(e, "pa", l);
        em(e, "%s = %s", pa, norm(e, a, vec(e, "npm", l, d), off));
        a = pa;
    }
    const char *r = nm(e, "r", l), *fn = nm(e, "fn", l);
    em(e, "%s = %s + %s", r, in, a);
    em(e, "%s = %s", fn, norm(e, r, vec(e, "nfn", l, d), off));
    const char *f = L->ffn == FFN_MOE ? moe(e, &L->moe, l, fn) : dense(e, &L->dense, l, fn);
    if (L->sandwich) {
        const char *pf = nm(e, "pf", l);
        em(e, "%s = %s", pf, norm(e, f, vec(e, "npf", l, d), off));
        f = pf;
    }
    em(e, "%s = %s + %s", nm(e, "h", l), r, f);
}

/* ---- embedding and head ---- */

static const char *emb_weight(Em *e)
{
    return weight(e, "emb", WC_EMBED, arena_printf(e->a, "%d,%d", e->s->vocab, e->s->dim));
}

static void embed(Em *e, const char *out, const char *ids)
{
    const char *x = arena_printf(e->a, "%s[%s]", emb_weight(e), ids);
    if (e->s->embed_scale && e->s->embed_scale != 1)
        x = arena_printf(e->a, "%s * %s", x, num(e, e->s->embed_scale));
    em(e, "%s = %s", out, x);
}

static void logits(Em *e, const char *h)
{
    const Spec *s = e->s;
    const char *xf = e->mode == M_BATCH ? "bxf" : "xf";
    const char *dims = e->mode == M_BATCH ? arena_printf(e->a, "%d,%d", e->batch, s->vocab)
                                          : arena_printf(e->a, "%d", s->vocab);
    em_decl(e, "out logits : f32[%s]", dims);
    if (e->mode == M_CHUNK) {
        em(e, "xl = last(%s)", h);
        h = "xl";
    }
    em_decl(e, "weight nf : f32[%d]", s->dim);
    em(e, "%s = %s", xf, norm(e, h, "nf", s->norm_offset));
    const char *w = s->tied ? emb_weight(e) : weight(e, "head", WC_HEAD, arena_printf(e->a, "%d,%d", s->vocab, s->dim));
    const char *y = arena_printf(e->a, "%s @ %s", w, xf);
    if (s->logit_softcap)
        y = arena_printf(e->a, "softcap(%s, cap=%s)", y, num(e, s->logit_softcap));
    em(e, "logits = %s", y);
}

static void head(Em *e, const char *h, int next)
{
    logits(e, h);
    if (!next)
        return;
    em_decl(e, "out next : i32%s", e->mode == M_BATCH ? arena_printf(e->a, "[%d]", e->batch) : "");
    em(e, "next = argmax(logits)");
}

/* ---- inputs of each kind of step ---- */

/* Declares the positions a step's rows read. */
static void positions(Em *e)
{
    switch (e->mode) {
    case M_FWD:
    case M_STEP:
        em_decl(e, "in pos : i32");
        break;
    case M_CHUNK:
        em_decl(e, "in pos0 : i32");
        em(e, "bpos = range(pos0, n=T)");
        break;
    case M_BATCH:
        for (int b = 0; b < e->batch; b++)
            em_decl(e, "in pos_s%d : i32", b);
        break;
    }
}

static void tokens(Em *e, const char *x)
{
    switch (e->mode) {
    case M_STEP:
        em_decl(e, "in tok : i32");
        embed(e, x, "tok");
        break;
    case M_CHUNK:
        em_decl(e, "in toks : i32[T]");
        embed(e, x, "toks");
        break;
    case M_BATCH:
        em_decl(e, "in toks : i32[%d]", e->batch);
        embed(e, x, "toks");
        break;
    default:
        BUG("no tokens in this form");
    }
}

const char *layer_input(Em *e, int l)
{
    if (l == 0)
        return e->stacked ? "X" : "x";
    return nm(e, "h", l - 1);
}

static void declare_input(Em *e, const char *name)
{
    em_decl(e, "in %s : f32%s", name, shp(e, arena_printf(e->a, "%d", e->s->dim)));
}

static void declare_output(Em *e, const char *name)
{
    em_decl(e, "out %s : f32%s", name, shp(e, arena_printf(e->a, "%d", e->s->dim)));
}

/* ---- the forms ---- */

static void layers(Em *e, int from, int to)
{
    for (int l = from; l < to; l++) {
        if (l > from)
            fputc('\n', e->body);
        layer(e, l, layer_input(e, l));
    }
}

static void f_forward(Em *e, int l)
{
    (void)l;
    declare_input(e, "x");
    positions(e);
    layers(e, 0, e->s->nlayers);
    head(e, nm(e, "h", e->s->nlayers - 1), 0);
}

static void f_step(Em *e, int l)
{
    (void)l;
    positions(e);
    tokens(e, layer_input(e, 0));
    layers(e, 0, e->s->nlayers);
    head(e, nm(e, "h", e->s->nlayers - 1), 1);
}

static void f_embed(Em *e, int l)
{
    (void)l;
    declare_output(e, layer_input(e, 0));
    tokens(e, layer_input(e, 0));
}

static void f_layer(Em *e, int l)
{
    declare_input(e, layer_input(e, l));
    positions(e);
    declare_output(e, nm(e, "h", l));
    layer(e, l, layer_input(e, l));
}

static void f_head(Em *e, int l)
{
    (void)l;
    const char *h = nm(e, "h", e->s->nlayers - 1);
    declare_input(e, h);
    head(e, h, e->mode != M_FWD);
}

typedef struct Form {
    const char *name;
    int mode, has_layer;
    void (*fn)(Em *e, int l);
    int split;           /* a tensor-parallel form: every layer split over the chips */
} Form;

static const Form forms[] = {
    {"forward", M_FWD, 0, f_forward, 0},
    {"decode_step", M_STEP, 0, f_step, 0},
    {"prefill", M_CHUNK, 0, f_step, 0},
    {"decode_batch", M_BATCH, 0, f_step, 0},
    {"decode_embed", M_STEP, 0, f_embed, 0},
    {"decode_layer", M_STEP, 1, f_layer, 0},
    {"decode_head", M_STEP, 0, f_head, 0},
    {"layer", M_FWD, 1, f_layer, 0},
    {"head", M_FWD, 0, f_head, 0},
    {"prefill_embed", M_CHUNK, 0, f_embed, 0},
    {"stacked_layer", M_CHUNK, 1, f_layer, 0},
    {"prefill_head", M_CHUNK, 0, f_head, 0},
    {"decode_batch_embed", M_BATCH, 0, f_embed, 0},
    {"decode_batch_head", M_BATCH, 0, f_head, 0},
    /* the embedding and the head on the replicated spine, every layer split */
    {"tp_decode_step", M_STEP, 0, f_step, 1},
    {"tp_decode_layer", M_STEP, 1, f_layer, 1},
    {"tp_decode_batch", M_BATCH, 0, f_step, 1},
    {"tp_stacked_layer", M_BATCH, 1, f_layer, 1},
    {NULL, 0, 0, NULL, 0},
};

static const Form *find_form(const char *name)
{
    for (int i = 0; forms[i].name; i++)
        if (strcmp(forms[i].name, name) == 0)
            return &forms[i];
    return NULL;
}

int author_form_info(const char *name, int *has_layer)
{
    if (!strcmp(name, "generate") || !strcmp(name, "layer_input") || !strcmp(name, "stacked_layer_input")) {
        *has_layer = name[0] != 'g';
        return 1;
    }
    const Form *f = find_form(name);
    if (!f)
        return 0;
    *has_layer = f->has_layer;
    return f->split ? 2 : 1;
}

/* Writes one program of `form` into out as the author emits it. */
static void one(Arena *a, const Spec *s, const Form *f, int l, int batch, int chips, FILE *out)
{
    Em e = {.a = a, .s = s, .mode = f->mode, .batch = batch, .seq = -1, .declared = strmap_new(a), .chips = chips};
    e.stacked = f->mode == M_CHUNK || f->mode == M_BATCH;
    e.rows = f->mode == M_CHUNK ? "T" : arena_printf(a, "%d", batch);
    char *dtext = NULL, *btext = NULL;
    size_t dlen = 0, blen = 0;
    e.decls = open_memstream(&dtext, &dlen);
    e.body = open_memstream(&btext, &blen);
    if (!e.decls || !e.body)
        BUG("out of memory");
    if (f->mode == M_CHUNK)
        em_decl(&e, "size T");
    f->fn(&e, l);
    fclose(e.decls);
    fclose(e.body);
    fprintf(out, "logos %d %s", LOGOS_LANG, f->name);
    if (f->has_layer)
        fprintf(out, " %d", l);
    fprintf(out, " %s\n", s->name);
    if (chips)
        fprintf(out, "chips %d\n", chips);
    fprintf(out, "%s%send\n", dtext, btext);
    free(dtext);
    free(btext);
}

/* The emitted programs, parsed and checked (a program that would not check
 * is a bug here), printed canonically or as the manifest of their weights. */
static void finish(Arena *a, const char *text, int manifest, int chips, FILE *out)
{
    Src *src = src_from_string(a, "<authored>", text);
    Lexer lx;
    lex_init(&lx, src);
    int err = 0, n = 0, cap = 0;
    Prog **progs = NULL;
    for (Prog *p; (p = parse_prog(a, &lx, &err));) {
        if (check_prog(a, p))
            BUG("the authored program does not check");
        *VEC_PUSH(a, progs, n, cap) = p;
        if (!manifest)
            print_prog(out, p);
    }
    if (err)
        BUG("the authored program does not parse");
    if (manifest && chips) {
        tp_manifest(a, progs, n, chips, out);
        return;
    }
    int nw = 0;
    const Decl **w = manifest ? prog_weights(a, progs, n, &nw) : NULL;
    for (int i = 0; i < nw; i++) {
        long count;
        ASSERT(decl_count(w[i], &count) == 0);
        if (w[i]->base == T_Q8)
            fprintf(out, "%s q8 %ld %s.q %s.s\n", w[i]->name, count, w[i]->name, w[i]->name);
        else
            fprintf(out, "%s f32 %ld %s.f\n", w[i]->name, count, w[i]->name);
    }
}

/* Can every layer be written, and split over the chips of a split form? */
static int writable(Arena *a, const Spec *s, const Form *f, int chips)
{
    for (int k = 0; k < s->nlayers; k++) {
        const char *why = spec_not_yet(a, s, k);
        if (why) {
            const LayerSpec *ls = spec_layer(s, k);
            fprintf(stderr, "%s: %s:%d: layer %d (%s) cannot be written yet: %s\n", diag_tool, s->file, ls->line, k,
                    ls->kind, why);
            return EXIT_INPUT;
        }
    }
    const char *why = f && f->split ? spec_tp_block(a, s, chips) : NULL;
    if (why) {
        diag_file(s->file, "does not split over %d chips: %s", chips, why);
        return EXIT_INPUT;
    }
    return 0;
}

int author_tp(Arena *a, const Spec *s, const char *form, int l, int batch, int chips, int manifest, FILE *out)
{
    const Form *f = find_form(form);
    ASSERT(!f || !f->split || chips >= 1);
    if (f && !f->split)
        chips = 0;
    if (writable(a, s, f, chips))
        return EXIT_INPUT;
    if (!strcmp(form, "layer_input") || !strcmp(form, "stacked_layer_input")) {
        Em e = {.a = a, .s = s, .stacked = form[0] == 's', .seq = -1};
        fprintf(out, "%s\n", layer_input(&e, l));
        return 0;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *raw = open_memstream(&text, &len);
    if (!raw)
        BUG("out of memory");
    if (!strcmp(form, "generate")) {
        one(a, s, find_form("prefill"), -1, batch, 0, raw);
        one(a, s, find_form("decode_step"), -1, 0, 0, raw);
    } else {
        if (!strcmp(form, "stacked_layer") && batch > 0) {
            static const Form rows = {"stacked_layer", M_BATCH, 1, f_layer, 0};
            f = &rows;
        }
        one(a, s, f, l, batch > 0 ? batch : 4, chips, raw);
    }
    fclose(raw);
    finish(a, text, manifest, chips, out);
    free(text);
    return 0;
}

int author(Arena *a, const Spec *s, const char *form, int l, int batch, int manifest, FILE *out)
{
    return author_tp(a, s, form, l, batch, 0, manifest, out);
}

const char *author_forms(void)
{
    return "forward decode_step prefill decode_batch decode_embed decode_layer decode_head layer head "
           "layer_input prefill_embed stacked_layer stacked_layer_input prefill_head decode_batch_embed "
           "decode_batch_head generate tp_decode_step tp_decode_layer tp_decode_batch tp_stacked_layer";
}
