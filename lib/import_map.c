/* import_map.c — the checkpoint tensor behind each weight the authored
 * program declares: the Hugging Face name or llama.cpp's GGUF name of each
 * LOGOS weight, and how its values are laid out (gpt-oss's experts are
 * x @ W with gate and up interleaved, so they are transposed and split;
 * DeepSeek-V2's and Qwen3-Next's experts are one tensor each, stacked;
 * kv_b_proj, in_proj_qkvz and in_proj_ba hold several weights in groups of
 * rows per head; a depthwise convolution has a unit axis). */
#include <stdlib.h>
#include <string.h>

#include "import.h"

/* ---- where each weight comes from ---- */

typedef struct Rule {
    const char *logos;      /* the weight's name before its layer number */
    const char *hf, *gguf;  /* the tensor's name (%d: the layer, then the expert); NULL: none */
    int xform, parity;
    int on;                 /* 0: every layer; else 1 + the enum Mixer of the layers it serves */
} Rule;

static const Rule rules[] = {
    {"emb", "model.embed_tokens.weight", "token_embd.weight", X_PLAIN, 0, 0},
    {"nf", "model.norm.weight", "output_norm.weight", X_PLAIN, 0, 0},
    {"head", "lm_head.weight", "output.weight", X_PLAIN, 0, 0},
    {"nm", "model.layers.%d.input_layernorm.weight", "blk.%d.attn_norm.weight", X_PLAIN, 0, 0},
    {"wq", "model.layers.%d.self_attn.q_proj.weight", "blk.%d.attn_q.weight", X_UNPERM, 0, 0},
    {"wk", "model.layers.%d.self_attn.k_proj.weight", "blk.%d.attn_k.weight", X_UNPERM, 0, 0},
    {"wv", "model.layers.%d.self_attn.v_proj.weight", "blk.%d.attn_v.weight", X_PLAIN, 0, 0},
    {"wo", "model.layers.%d.self_attn.o_proj.weight", "blk.%d.attn_output.weight", X_PLAIN, 0, 0},
    {"qb", "model.layers.%d.self_attn.q_proj.bias", "blk.%d.attn_q.bias", X_UNPERM, 0, 0},
    {"kb", "model.layers.%d.self_attn.k_proj.bias", "blk.%d.attn_k.bias", X_UNPERM, 0, 0},
    {"vb", "model.layers.%d.self_attn.v_proj.bias", "blk.%d.attn_v.bias", X_PLAIN, 0, 0},
    {"ob", "model.layers.%d.self_attn.o_proj.bias", "blk.%d.attn_output.bias", X_PLAIN, 0, 0},
    {"nq", "model.layers.%d.self_attn.q_norm.weight", "blk.%d.attn_q_norm.weight", X_PLAIN, 0, 0},
    {"nk", "model.layers.%d.self_attn.k_norm.weight", "blk.%d.attn_k_norm.weight", X_PLAIN, 0, 0},
    {"nfn", "model.layers.%d.post_attention_layernorm.weight", "blk.%d.ffn_norm.weight", X_PLAIN, 0, 0},
    {"wg", "model.layers.%d.mlp.gate_proj.weight", "blk.%d.ffn_gate.weight", X_PLAIN, 0, 0},
    {"wu", "model.layers.%d.mlp.up_proj.weight", "blk.%d.ffn_up.weight", X_PLAIN, 0, 0},
    {"wd", "model.layers.%d.mlp.down_proj.weight", "blk.%d.ffn_down.weight", X_PLAIN, 0, 0},
    {"gb", "model.layers.%d.mlp.gate_proj.bias", NULL, X_PLAIN, 0, 0},
    {"ub", "model.layers.%d.mlp.up_proj.bias", NULL, X_PLAIN, 0, 0},
    {"db", "model.layers.%d.mlp.down_proj.bias", NULL, X_PLAIN, 0, 0},
    {"sk", "model.layers.%d.self_attn.sinks", NULL, X_PLAIN, 0, 0},
    {"wr", "model.layers.%d.mlp.router.weight", NULL, X_PLAIN, 0, 0},
    {"rb", "model.layers.%d.mlp.router.bias", NULL, X_PLAIN, 0, 0},
    {"weg", "model.layers.%d.mlp.experts.gate_up_proj", NULL, X_GU_T, 0, 0},
    {"weu", "model.layers.%d.mlp.experts.gate_up_proj", NULL, X_GU_T, 1, 0},
    {"egb", "model.layers.%d.mlp.experts.gate_up_proj_bias", NULL, X_HALF, 0, 0},
    {"eub", "model.layers.%d.mlp.experts.gate_up_proj_bias", NULL, X_HALF, 1, 0},
    {"wed", "model.layers.%d.mlp.experts.down_proj", NULL, X_T, 0, 0},
    {"edb", "model.layers.%d.mlp.experts.down_proj_bias", NULL, X_PLAIN, 0, 0},
    {0},
};

/* Gemma 2's four norms a layer: its post_attention_layernorm follows the
 * mixer, pre_feedforward_layernorm leads the FFN. */
static const Rule gemma_rules[] = {
    {"nfn", "model.layers.%d.pre_feedforward_layernorm.weight", "blk.%d.ffn_norm.weight", X_PLAIN, 0, 0},
    {"npm", "model.layers.%d.post_attention_layernorm.weight", "blk.%d.post_attention_norm.weight", X_PLAIN, 0, 0},
    {"npf", "model.layers.%d.post_feedforward_layernorm.weight", "blk.%d.post_ffw_norm.weight", X_PLAIN, 0, 0},
    {0},
};

/* DeepSeek-V2's latent attention (kv_b_proj holds each head's key rows then
 * its value rows), its router and experts, one tensor each. */
static const Rule deepseek_rules[] = {
    {"wqa", "model.layers.%d.self_attn.q_a_proj.weight", NULL, X_PLAIN, 0, 0},
    {"nqa", "model.layers.%d.self_attn.q_a_layernorm.weight", NULL, X_PLAIN, 0, 0},
    {"wqb", "model.layers.%d.self_attn.q_b_proj.weight", NULL, X_PLAIN, 0, 0},
    {"wkva", "model.layers.%d.self_attn.kv_a_proj_with_mqa.weight", NULL, X_PLAIN, 0, 0},
    {"nkva", "model.layers.%d.self_attn.kv_a_layernorm.weight", NULL, X_PLAIN, 0, 0},
    {"wkb", "model.layers.%d.self_attn.kv_b_proj.weight", NULL, X_ROWS, 0, 0},
    {"wvb", "model.layers.%d.self_attn.kv_b_proj.weight", NULL, X_ROWS, 0, 0},
    {"wr", "model.layers.%d.mlp.gate.weight", NULL, X_PLAIN, 0, 0},
    {"weg", "model.layers.%d.mlp.experts.%d.gate_proj.weight", NULL, X_EXPERTS, 0, 0},
    {"weu", "model.layers.%d.mlp.experts.%d.up_proj.weight", NULL, X_EXPERTS, 0, 0},
    {"wed", "model.layers.%d.mlp.experts.%d.down_proj.weight", NULL, X_EXPERTS, 0, 0},
    {"wsg", "model.layers.%d.mlp.shared_experts.gate_proj.weight", NULL, X_PLAIN, 0, 0},
    {"wsu", "model.layers.%d.mlp.shared_experts.up_proj.weight", NULL, X_PLAIN, 0, 0},
    {"wsd", "model.layers.%d.mlp.shared_experts.down_proj.weight", NULL, X_PLAIN, 0, 0},
    {0},
};

/* Qwen3-Next's delta layers (in_proj_qkvz and in_proj_ba in groups per key
 * head), its router, experts and gated shared expert. */
static const Rule qwen3next_rules[] = {
    {"wdq", "model.layers.%d.linear_attn.in_proj_qkvz.weight", NULL, X_ROWS, 0, 0},
    {"wdk", "model.layers.%d.linear_attn.in_proj_qkvz.weight", NULL, X_ROWS, 0, 0},
    {"wdv", "model.layers.%d.linear_attn.in_proj_qkvz.weight", NULL, X_ROWS, 0, 0},
    {"wdz", "model.layers.%d.linear_attn.in_proj_qkvz.weight", NULL, X_ROWS, 0, 0},
    {"wdb", "model.layers.%d.linear_attn.in_proj_ba.weight", NULL, X_ROWS, 0, 0},
    {"wda", "model.layers.%d.linear_attn.in_proj_ba.weight", NULL, X_ROWS, 0, 0},
    {"alog", "model.layers.%d.linear_attn.A_log", NULL, X_PLAIN, 0, 0},
    {"dtb", "model.layers.%d.linear_attn.dt_bias", NULL, X_PLAIN, 0, 0},
    {"wcv", "model.layers.%d.linear_attn.conv1d.weight", NULL, X_UNIT, 0, 0},
    {"ndn", "model.layers.%d.linear_attn.norm.weight", NULL, X_PLAIN, 0, 0},
    {"wo", "model.layers.%d.linear_attn.out_proj.weight", NULL, X_PLAIN, 0, 1 + MIX_DELTA},
    {"wr", "model.layers.%d.mlp.gate.weight", NULL, X_PLAIN, 0, 0},
    {"weg", "model.layers.%d.mlp.experts.%d.gate_proj.weight", NULL, X_EXPERTS, 0, 0},
    {"weu", "model.layers.%d.mlp.experts.%d.up_proj.weight", NULL, X_EXPERTS, 0, 0},
    {"wed", "model.layers.%d.mlp.experts.%d.down_proj.weight", NULL, X_EXPERTS, 0, 0},
    {"wsg", "model.layers.%d.mlp.shared_expert.gate_proj.weight", NULL, X_PLAIN, 0, 0},
    {"wsu", "model.layers.%d.mlp.shared_expert.up_proj.weight", NULL, X_PLAIN, 0, 0},
    {"wsd", "model.layers.%d.mlp.shared_expert.down_proj.weight", NULL, X_PLAIN, 0, 0},
    {"wsgt", "model.layers.%d.mlp.shared_expert_gate.weight", NULL, X_PLAIN, 0, 0},
    {0},
};

/* LFM2's names: its norms, attention with q/k layer norms and out_proj, the
 * short convolution, the feed-forward w1, w3, w2, embedding_norm last. */
static const Rule lfm2_rules[] = {
    {"nf", "model.embedding_norm.weight", NULL, X_PLAIN, 0, 0},
    {"nm", "model.layers.%d.operator_norm.weight", NULL, X_PLAIN, 0, 0},
    {"nfn", "model.layers.%d.ffn_norm.weight", NULL, X_PLAIN, 0, 0},
    {"wo", "model.layers.%d.self_attn.out_proj.weight", NULL, X_PLAIN, 0, 1 + MIX_ATTN},
    {"nq", "model.layers.%d.self_attn.q_layernorm.weight", NULL, X_PLAIN, 0, 0},
    {"nk", "model.layers.%d.self_attn.k_layernorm.weight", NULL, X_PLAIN, 0, 0},
    {"wci", "model.layers.%d.conv.in_proj.weight", NULL, X_PLAIN, 0, 0},
    {"cib", "model.layers.%d.conv.in_proj.bias", NULL, X_PLAIN, 0, 0},
    {"wcv", "model.layers.%d.conv.conv.weight", NULL, X_UNIT, 0, 0},
    {"cvb", "model.layers.%d.conv.conv.bias", NULL, X_PLAIN, 0, 0},
    {"wco", "model.layers.%d.conv.out_proj.weight", NULL, X_PLAIN, 0, 0},
    {"cob", "model.layers.%d.conv.out_proj.bias", NULL, X_PLAIN, 0, 0},
    {"wg", "model.layers.%d.feed_forward.w1.weight", NULL, X_PLAIN, 0, 0},
    {"wu", "model.layers.%d.feed_forward.w3.weight", NULL, X_PLAIN, 0, 0},
    {"wd", "model.layers.%d.feed_forward.w2.weight", NULL, X_PLAIN, 0, 0},
    {0},
};

static const Rule *family_rules(int family)
{
    switch (family) {
    case FAM_GEMMA2: return gemma_rules;
    case FAM_DEEPSEEK2: return deepseek_rules;
    case FAM_QWEN3NEXT: return qwen3next_rules;
    case FAM_LFM2: return lfm2_rules;
    default: return NULL;
    }
}

/* The rule of `base` for a layer with `mixer` (-1: no layer): the family's
 * own first, then the common one. */
static const Rule *find_rule(int family, int mixer, const char *base)
{
    const Rule *tables[2] = {family_rules(family), rules};
    for (int k = 0; k < 2; k++)
        for (const Rule *r = tables[k]; r && r->logos; r++)
            if (!strcmp(r->logos, base) && (!r->on || r->on == 1 + mixer))
                return r;
    return NULL;
}

/* X_ROWS: where each weight lies in its tensor's groups of rows. */
static int rows_of(const Cfg *g, const char *base, Source *src)
{
    long r = g->dk_heads ? g->dv_heads / g->dk_heads : 0, vw = r * g->dv_dim, qkvz = 2 * g->dk_dim + 2 * vw;
    long kv = g->nope + g->v_dim;
    const struct { const char *base; long group, at, n; } t[] = {
        {"wkb", kv, 0, g->nope}, {"wvb", kv, g->nope, g->v_dim}, {"wdq", qkvz, 0, g->dk_dim},
        {"wdk", qkvz, g->dk_dim, g->dk_dim}, {"wdv", qkvz, 2 * g->dk_dim, vw}, {"wdz", qkvz, 2 * g->dk_dim + vw, vw},
        {"wdb", 2 * r, 0, r}, {"wda", 2 * r, r, r}};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (!strcmp(t[i].base, base)) {
            src->group = t[i].group;
            src->at = t[i].at;
            src->n = t[i].n;
            return 0;
        }
    BUG("no row groups for this weight");
}

/* The source shape a transform reads to give the shape d; its rank. */
static int source_shape(const Source *src, int rank, const long *d, long *s)
{
    memcpy(s, d, sizeof *d * (size_t)rank);
    switch (src->xform) {
    case X_HALF: s[rank - 1] = 2 * d[rank - 1]; break;
    case X_GU_T: s[1] = d[2]; s[2] = 2 * d[1]; break;
    case X_T: s[1] = d[2]; s[2] = d[1]; break;
    case X_ROWS: s[rank - 2] = d[rank - 2] / src->n * src->group; break;
    case X_UNIT:
        memcpy(s + 2, d + 1, sizeof *d * (size_t)(rank - 1));
        s[1] = 1;
        return rank + 1;
    case X_EXPERTS:   /* each expert's tensor */
        memcpy(s, d + 1, sizeof *d * (size_t)(rank - 1));
        return rank - 1;
    }
    return rank;
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

static const Tensor *need_tensor(const Ckpt *c, const char *tname, const char *name)
{
    const Tensor *t = ckpt_find(c, tname);
    if (!t)
        imp_fail(c->path, "tensor '%s' is missing (for weight '%s')", tname, name);
    return t;
}

/* X_EXPERTS: one tensor an expert, each of the shape `want`. */
static int find_experts(const Ckpt *c, const char *tmpl, int layer, const char *name, long ne, int rank,
                        const long *want, Source *src)
{
    src->parts = arena_alloc(c->a, sizeof *src->parts * (size_t)ne);
    src->nparts = ne;
    for (long e = 0; e < ne; e++) {
        const Tensor *t = need_tensor(c, arena_printf(c->a, tmpl, layer, (int)e), name);
        if (!t)
            return EXIT_INPUT;
        int st = check_tensor(c, t, rank, want);
        if (st)
            return st;
        src->parts[e] = t;
    }
    src->t = src->parts[0];
    return 0;
}

int map_weight(const Ckpt *c, const char *name, int rank, const long *d, Source *src)
{
    size_t n = strcspn(name, "0123456789");
    const char *base = arena_strndup(c->a, name, n);
    int layer = name[n] ? atoi(name + n) : -1;
    int mixer = layer >= 0 && layer < c->cfg.layers ? c->cfg.mixer[layer] : -1;
    const Rule *r = find_rule(c->cfg.family, mixer, base);
    const char *tmpl = r ? (c->gguf ? r->gguf : r->hf) : NULL;
    if (!tmpl)
        return imp_fail(c->path, "weight '%s' has no tensor in a %s checkpoint", name, family_name(c->cfg.family));
    *src = (Source){.xform = r->xform, .parity = r->parity, .hd = c->cfg.head_dim};
    if (src->xform == X_ROWS)
        rows_of(&c->cfg, base, src);
    long want[LOGOS_MAXRANK + 1];
    int srank = source_shape(src, rank, d, want);
    if (src->xform == X_EXPERTS)
        return find_experts(c, tmpl, layer, name, d[0], srank, want, src);
    const char *tname = layer >= 0 ? arena_printf(c->a, tmpl, layer) : tmpl;
    if (!(src->t = need_tensor(c, tname, name)))
        return EXIT_INPUT;
    if (src->xform == X_UNPERM && !(c->gguf && c->cfg.interleaved && c->cfg.unpermute))
        src->xform = X_PLAIN;
    if (c->gguf && c->cfg.interleaved && !c->cfg.unpermute && (!strcmp(base, "qb") || !strcmp(base, "kb")))
        return imp_fail(c->path, "tensor '%s': a q/k bias in interleaved order needs --rewrite-rope", tname);
    return check_tensor(c, src->t, srank, want);
}
