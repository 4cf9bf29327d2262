/* import_map.c — a Cfg written as a ModelSpec (man5/logos-spec.5), and the
 * checkpoint tensor behind each weight the authored program declares: the
 * Hugging Face name or llama.cpp's GGUF name of each LOGOS weight, and how
 * its values are laid out (gpt-oss's experts are x @ W with gate and up
 * interleaved, so they are transposed and split). */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

/* ---- the spec ---- */

static const char *fnum(Arena *a, double v)
{
    return arena_printf(a, "%.9g", v);
}

/* nl: a line break with the indentation of a flow mapping's continuation. */
static const char *rope_yaml(Arena *a, const Cfg *g, const CRope *r, const char *nl)
{
    const char *s = arena_printf(a, "theta: %s", fnum(a, r->theta));
    if (g->rot && g->rot != g->head_dim)
        s = arena_printf(a, "%s, dim: %ld", s, g->rot);
    if (g->interleaved && !g->unpermute)
        s = arena_printf(a, "%s, pairing: interleaved", s);
    if (r->scaling == SCALE_LLAMA3)
        s = arena_printf(a, "%s,%s  scaling: {type: llama3, factor: %s, low: %s, high: %s, orig: %ld}", s, nl,
                         fnum(a, r->factor), fnum(a, r->low), fnum(a, r->high), r->orig);
    else if (r->scaling == SCALE_YARN)
        s = arena_printf(a, "%s,%s  scaling: {type: yarn, factor: %s, orig: %ld, beta_fast: %s, "
                         "beta_slow: %s, attn_factor: %s%s}", s, nl, fnum(a, r->factor), r->orig, fnum(a, r->beta_fast),
                         fnum(a, r->beta_slow), fnum(a, r->attn_factor), r->truncate ? "" : ", truncate: false");
    return s;
}

static const char *attn_yaml(Arena *a, const Cfg *g, int sliding, const char *nl)
{
    const char *s = arena_printf(a, "heads: %ld, kv_heads: %ld, head_dim: %ld", g->heads, g->kv_heads, g->head_dim);
    if (g->q_bias || g->k_bias || g->v_bias || g->o_bias)
        s = arena_printf(a, "%s,%sbias: {q: %s, k: %s, v: %s, o: %s}", s, nl, g->q_bias ? "true" : "false",
                         g->k_bias ? "true" : "false", g->v_bias ? "true" : "false", g->o_bias ? "true" : "false");
    if (g->qk_norm)
        s = arena_printf(a, "%s, qk_norm: true", s);
    if (g->attn_softcap)
        s = arena_printf(a, "%s, softcap: %s", s, fnum(a, g->attn_softcap));
    if (g->sinks)
        s = arena_printf(a, "%s, sinks: true", s);
    if (sliding)
        s = arena_printf(a, "%s, window: %ld", s, g->window);
    if (g->scale && fabs(g->scale * sqrt((double)g->head_dim) - 1) > 1e-12)
        s = arena_printf(a, "%s, scale: %s", s, fnum(a, g->scale));
    return arena_printf(a, "%s,%srope: {%s}", s, nl, rope_yaml(a, g, &g->rope[sliding], nl));
}

static const char *ffn_yaml(Arena *a, const Cfg *g, const char *nl)
{
    if (g->family == FAM_GPTOSS)
        return arena_printf(a, "moe: {experts: %ld, top_k: %ld, hidden: %ld, act: oai, alpha: %s, limit: %s,%s"
                            "score: topk_softmax, router_bias: true, expert_bias: true}",
                            g->experts, g->top_k, g->hidden, fnum(a, g->oai_alpha), fnum(a, g->oai_limit), nl);
    return arena_printf(a, "dense: {hidden: %ld, act: %s}", g->hidden, g->act == ACT_GELU_TANH ? "gelu_tanh" : "silu");
}

static const char *layer_yaml(Arena *a, const Cfg *g, int sliding, const char *ind)
{
    const char *nl = arena_printf(a, "\n%s      ", ind);
    const char *s = arena_printf(a, "%smixer:\n%s  attention: {%s}\n%sffn:\n%s  %s\n", ind, ind,
                                 attn_yaml(a, g, sliding, nl), ind, ind, ffn_yaml(a, g, nl));
    return g->sandwich ? arena_printf(a, "%s%snorm: sandwich\n", s, ind) : s;
}

/* The shortest period of the sliding pattern, or 0 past 8. */
static long period(const Cfg *g)
{
    for (long p = 1; p <= 8 && p <= g->layers; p++) {
        long l = p;
        while (l < g->layers && g->sliding[l] == g->sliding[l % p])
            l++;
        if (l == g->layers)
            return p;
    }
    return 0;
}

static const char *layout_yaml(Arena *a, const Cfg *g)
{
    long ns = 0;
    for (long l = 0; l < g->layers; l++)
        ns += g->sliding[l];
    if (ns == 0 || ns == g->layers)
        return arena_printf(a, "layer:\n%s", layer_yaml(a, g, ns > 0, "  "));
    const char *s = arena_printf(a, "kinds:\n  full:\n%s  sliding:\n%s", layer_yaml(a, g, 0, "    "),
                                 layer_yaml(a, g, 1, "    "));
    long p = period(g), n = p ? p : g->layers;
    s = arena_printf(a, "%s%s: [", s, p ? "pattern" : "per_layer");
    for (long l = 0; l < n; l++)
        s = arena_printf(a, "%s%s%s", s, l ? (l % 8 ? ", " : ",\n  ") : "", g->sliding[l] ? "sliding" : "full");
    return arena_printf(a, "%s]\n", s);
}

static const char *formats_yaml(Arena *a, const Cfg *g, int fmt)
{
    if (fmt == FMT_F32 || g->dim % 32)
        return "{default: f32}";
    const char *s = "{default: q8, router: f32";
    if (g->hidden % 32)
        s = arena_printf(a, "%s, ffn: f32, expert: f32", s);
    if (g->heads * g->head_dim % 32)
        s = arena_printf(a, "%s, attn: f32", s);
    return arena_printf(a, "%s}", s);
}

char *cfg_spec_yaml(Arena *a, const Cfg *g, int fmt)
{
    const char *s = arena_printf(a, "# written by logos-import (%s)\nname: %s\nvocab: %ld\ndim: %ld\nlayers: %ld\n"
                                 "ctx: %ld\nnorm: {eps: %s%s}\n", family_name(g->family), g->name, g->vocab, g->dim,
                                 g->layers, g->ctx, fnum(a, g->eps), g->norm_offset ? ", offset: 1" : "");
    if (g->embed_scale && g->embed_scale != 1)
        s = arena_printf(a, "%sembed: {scale: %s}\n", s, fnum(a, g->embed_scale));
    s = arena_printf(a, "%shead: {tied: %s", s, g->tied ? "true" : "false");
    if (g->final_softcap)
        s = arena_printf(a, "%s, softcap: %s", s, fnum(a, g->final_softcap));
    s = arena_printf(a, "%s}\nformats: %s\n", s, formats_yaml(a, g, fmt));
    return arena_printf(a, "%s%s", s, layout_yaml(a, g));
}

/* ---- where each weight comes from ---- */

typedef struct Rule {
    const char *logos;      /* the weight's name before its layer number */
    const char *hf, *gguf;  /* the tensor's name (%d: the layer); NULL: none */
    int xform, parity;
} Rule;

static const Rule rules[] = {
    {"emb", "model.embed_tokens.weight", "token_embd.weight", X_PLAIN, 0},
    {"nf", "model.norm.weight", "output_norm.weight", X_PLAIN, 0},
    {"head", "lm_head.weight", "output.weight", X_PLAIN, 0},
    {"nm", "model.layers.%d.input_layernorm.weight", "blk.%d.attn_norm.weight", X_PLAIN, 0},
    {"wq", "model.layers.%d.self_attn.q_proj.weight", "blk.%d.attn_q.weight", X_UNPERM, 0},
    {"wk", "model.layers.%d.self_attn.k_proj.weight", "blk.%d.attn_k.weight", X_UNPERM, 0},
    {"wv", "model.layers.%d.self_attn.v_proj.weight", "blk.%d.attn_v.weight", X_PLAIN, 0},
    {"wo", "model.layers.%d.self_attn.o_proj.weight", "blk.%d.attn_output.weight", X_PLAIN, 0},
    {"qb", "model.layers.%d.self_attn.q_proj.bias", "blk.%d.attn_q.bias", X_UNPERM, 0},
    {"kb", "model.layers.%d.self_attn.k_proj.bias", "blk.%d.attn_k.bias", X_UNPERM, 0},
    {"vb", "model.layers.%d.self_attn.v_proj.bias", "blk.%d.attn_v.bias", X_PLAIN, 0},
    {"ob", "model.layers.%d.self_attn.o_proj.bias", "blk.%d.attn_output.bias", X_PLAIN, 0},
    {"nq", "model.layers.%d.self_attn.q_norm.weight", "blk.%d.attn_q_norm.weight", X_PLAIN, 0},
    {"nk", "model.layers.%d.self_attn.k_norm.weight", "blk.%d.attn_k_norm.weight", X_PLAIN, 0},
    {"nfn", "model.layers.%d.post_attention_layernorm.weight", "blk.%d.ffn_norm.weight", X_PLAIN, 0},
    {"wg", "model.layers.%d.mlp.gate_proj.weight", "blk.%d.ffn_gate.weight", X_PLAIN, 0},
    {"wu", "model.layers.%d.mlp.up_proj.weight", "blk.%d.ffn_up.weight", X_PLAIN, 0},
    {"wd", "model.layers.%d.mlp.down_proj.weight", "blk.%d.ffn_down.weight", X_PLAIN, 0},
    {"gb", "model.layers.%d.mlp.gate_proj.bias", NULL, X_PLAIN, 0},
    {"ub", "model.layers.%d.mlp.up_proj.bias", NULL, X_PLAIN, 0},
    {"db", "model.layers.%d.mlp.down_proj.bias", NULL, X_PLAIN, 0},
    {"sk", "model.layers.%d.self_attn.sinks", NULL, X_PLAIN, 0},
    {"wr", "model.layers.%d.mlp.router.weight", NULL, X_PLAIN, 0},
    {"rb", "model.layers.%d.mlp.router.bias", NULL, X_PLAIN, 0},
    {"weg", "model.layers.%d.mlp.experts.gate_up_proj", NULL, X_GU_T, 0},
    {"weu", "model.layers.%d.mlp.experts.gate_up_proj", NULL, X_GU_T, 1},
    {"egb", "model.layers.%d.mlp.experts.gate_up_proj_bias", NULL, X_HALF, 0},
    {"eub", "model.layers.%d.mlp.experts.gate_up_proj_bias", NULL, X_HALF, 1},
    {"wed", "model.layers.%d.mlp.experts.down_proj", NULL, X_T, 0},
    {"edb", "model.layers.%d.mlp.experts.down_proj_bias", NULL, X_PLAIN, 0},
};

/* Gemma 2's four norms a layer: its post_attention_layernorm follows the
 * mixer, pre_feedforward_layernorm leads the FFN. */
static const Rule gemma_rules[] = {
    {"nfn", "model.layers.%d.pre_feedforward_layernorm.weight", "blk.%d.ffn_norm.weight", X_PLAIN, 0},
    {"npm", "model.layers.%d.post_attention_layernorm.weight", "blk.%d.post_attention_norm.weight", X_PLAIN, 0},
    {"npf", "model.layers.%d.post_feedforward_layernorm.weight", "blk.%d.post_ffw_norm.weight", X_PLAIN, 0},
};

static const Rule *find_rule(int family, const char *base)
{
    for (size_t i = 0; family == FAM_GEMMA2 && i < sizeof gemma_rules / sizeof *gemma_rules; i++)
        if (!strcmp(gemma_rules[i].logos, base))
            return &gemma_rules[i];
    for (size_t i = 0; i < sizeof rules / sizeof *rules; i++)
        if (!strcmp(rules[i].logos, base))
            return &rules[i];
    return NULL;
}

/* The source shape a transform reads to give the shape d. */
static void source_shape(int xform, int rank, const long *d, long *s)
{
    memcpy(s, d, sizeof *d * (size_t)rank);
    if (xform == X_HALF)
        s[rank - 1] = 2 * d[rank - 1];
    else if (xform == X_GU_T) {
        s[1] = d[2];
        s[2] = 2 * d[1];
    } else if (xform == X_T) {
        s[1] = d[2];
        s[2] = d[1];
    }
}

static int check_tensor(const Ckpt *c, const Tensor *t, int rank, const long *want)
{
    if (t->dtype == DT_OTHER)
        return imp_fail(t->file, "tensor '%s' has dtype %s, which logos-import cannot read (%s)", t->name, t->dtname,
                        c->gguf ? "F32, F16, BF16, Q8_0" : "F32, F16, BF16");
    int same = t->rank == rank;
    for (int k = 0; same && k < rank; k++)
        same = t->d[k] == want[k];
    if (!same)
        return imp_fail(t->file, "tensor '%s' has shape %s, but %s makes it %s", t->name,
                        shape_str(c->a, t->rank, t->d), c->gguf ? "the metadata" : "config.json",
                        shape_str(c->a, rank, want));
    return 0;
}

int map_weight(const Ckpt *c, const char *name, int rank, const long *d, Source *src)
{
    size_t n = strcspn(name, "0123456789");
    const char *base = arena_strndup(c->a, name, n);
    int layer = name[n] ? atoi(name + n) : -1;
    const Rule *r = find_rule(c->cfg.family, base);
    const char *tmpl = r ? (c->gguf ? r->gguf : r->hf) : NULL;
    if (!tmpl)
        return imp_fail(c->path, "weight '%s' has no tensor in a %s checkpoint", name, family_name(c->cfg.family));
    const char *tname = layer >= 0 ? arena_printf(c->a, tmpl, layer) : tmpl;
    const Tensor *t = ckpt_find(c, tname);
    if (!t)
        return imp_fail(c->path, "tensor '%s' is missing (for weight '%s')", tname, name);
    *src = (Source){t, r->xform, r->parity, c->cfg.head_dim};
    if (src->xform == X_UNPERM && !(c->gguf && c->cfg.interleaved && c->cfg.unpermute))
        src->xform = X_PLAIN;
    if (c->gguf && c->cfg.interleaved && !c->cfg.unpermute && (!strcmp(base, "qb") || !strcmp(base, "kb")))
        return imp_fail(c->path, "tensor '%s': a q/k bias in interleaved order needs --rewrite-rope", tname);
    long want[LOGOS_MAXRANK];
    source_shape(src->xform, rank, d, want);
    return check_tensor(c, t, rank, want);
}
