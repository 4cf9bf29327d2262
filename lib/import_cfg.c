/* import_cfg.c — a Hugging Face config.json (transformers 4 and 5 spellings)
 * read into a Cfg: the family from model_type (or architectures), shapes,
 * norms, the rope and its scaling (rope_theta + rope_scaling, or
 * rope_parameters, per layer type where given), each layer's mixer and
 * whether it slides (layer_types, or each family's older rule), and each
 * family's fixed choices (Gemma 2's caps, sandwich and (1 + w) norms,
 * gpt-oss's sinks and mixture, DeepSeek-V2's latent attention and routing,
 * Qwen3-Next's delta rule, gated attention and gated shared expert, LFM2's
 * short convolution and its feed-forward width rule). Defaults are those of
 * each family's config class. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

static const struct {
    const char *model_type, *arch;
    int fam;
    int tied;          /* tie_word_embeddings by default */
    double theta;      /* rope_theta by default */
} fams[] = {
    {"llama", "LlamaForCausalLM", FAM_LLAMA, 0, 10000},
    {"mistral", "MistralForCausalLM", FAM_MISTRAL, 0, 10000},
    {"qwen2", "Qwen2ForCausalLM", FAM_QWEN2, 0, 10000},
    {"qwen3", "Qwen3ForCausalLM", FAM_QWEN3, 0, 10000},
    {"gemma2", "Gemma2ForCausalLM", FAM_GEMMA2, 1, 10000},
    {"gpt_oss", "GptOssForCausalLM", FAM_GPTOSS, 0, 150000},
    {"deepseek_v2", "DeepseekV2ForCausalLM", FAM_DEEPSEEK2, 0, 10000},
    {"qwen3_next", "Qwen3NextForCausalLM", FAM_QWEN3NEXT, 0, 10000},
    {"lfm2", "Lfm2ForCausalLM", FAM_LFM2, 1, 1000000},
};
enum { NFAMS = sizeof fams / sizeof *fams };

const char *family_name(int fam)
{
    for (int i = 0; i < NFAMS; i++)
        if (fams[i].fam == fam)
            return fams[i].model_type;
    return "?";
}

const char *sanitize_name(Arena *a, const char *s)
{
    const char *slash = strrchr(s, '/');
    char *n = arena_strdup(a, slash && slash[1] ? slash + 1 : s);
    for (char *p = n; *p; p++)   /* a spec's name: a header word, never '..' */
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p) ||
            (*p == '.' && p > n && p[-1] == '.'))
            *p = '_';
    return *n ? n : "model";
}

/* ---- reading values ---- */

typedef struct J {
    Ckpt *c;
    const char *file;
    json_t *root;
    int err;
} J;

static double jnum(J *j, json_t *o, const char *key, double dflt)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return dflt;
    if (!json_is_number(v)) {
        j->err = imp_fail(j->file, "'%s' is not a number", key);
        return dflt;
    }
    return json_number_value(v);
}

static long jint(J *j, json_t *o, const char *key, long dflt)
{
    double v = jnum(j, o, key, (double)dflt);
    if (v != floor(v) || v < 0 || v > (double)LOGOS_MAXINT) {
        j->err = imp_fail(j->file, "'%s' is not a whole number from 0 to %ld", key, LOGOS_MAXINT);
        return dflt;
    }
    return (long)v;
}

static int jbool(J *j, json_t *o, const char *key, int dflt)
{
    json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return dflt;
    if (!json_is_boolean(v)) {
        j->err = imp_fail(j->file, "'%s' is not true or false", key);
        return dflt;
    }
    return json_is_true(v);
}

static const char *jstr(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* ---- pieces of the config ---- */

static int find_family(J *j)
{
    const char *mt = jstr(j->root, "model_type");
    const char *ar = json_string_value(json_array_get(json_object_get(j->root, "architectures"), 0));
    for (int i = 0; i < NFAMS; i++)
        if ((mt && !strcmp(mt, fams[i].model_type)) || (!mt && ar && !strcmp(ar, fams[i].arch)))
            return i;
    const char *known = "";
    for (int i = 0; i < NFAMS; i++)
        known = arena_printf(j->c->a, "%s%s%s", known, i ? " " : "", fams[i].model_type);
    if (mt)
        return imp_fail(j->file, "unknown architecture '%s' (model_type; known: %s)", mt, known), -1;
    if (ar)
        return imp_fail(j->file, "unknown architecture '%s' (architectures)", ar), -1;
    return imp_fail(j->file, "no model_type or architectures: the architecture is unknown"), -1;
}

/* yarn's attention factor as transformers computes it when not given. */
static double yarn_mscale(double factor, double m)
{
    return factor <= 1 ? 1 : 0.1 * m * log(factor) + 1;
}

/* One rope: rope_scaling (4.x: theta beside it) or rope_parameters (5.x). */
static void read_rope(J *j, json_t *o, CRope *r, double theta, long maxpos)
{
    r->theta = jnum(j, o, "rope_theta", theta);
    const char *type = jstr(o, "rope_type");
    type = type ? type : jstr(o, "type");
    if (!type || !strcmp(type, "default"))
        return;
    r->factor = jnum(j, o, "factor", 1);
    r->orig = jint(j, o, "original_max_position_embeddings", maxpos);
    r->mscale_all = jnum(j, o, "mscale_all_dim", 0);
    if (!strcmp(type, "llama3")) {
        r->scaling = SCALE_LLAMA3;
        r->low = jnum(j, o, "low_freq_factor", 1);
        r->high = jnum(j, o, "high_freq_factor", 4);
    } else if (!strcmp(type, "yarn")) {
        r->scaling = SCALE_YARN;
        r->beta_fast = jnum(j, o, "beta_fast", 32);
        r->beta_slow = jnum(j, o, "beta_slow", 1);
        r->truncate = jbool(j, o, "truncate", 1);
        double m = jnum(j, o, "mscale", 0), mall = jnum(j, o, "mscale_all_dim", 0);
        double dflt = m && mall ? yarn_mscale(r->factor, m) / yarn_mscale(r->factor, mall) : yarn_mscale(r->factor, 1);
        r->attn_factor = jnum(j, o, "attention_factor", dflt);
    } else {
        j->err = imp_fail(j->file, "rope scaling '%s' cannot be written by logos-author yet", type);
    }
}

static void read_ropes(J *j, double theta, long maxpos, CRope rope[2])
{
    json_t *rp = json_object_get(j->root, "rope_parameters");
    json_t *rs = json_object_get(j->root, "rope_scaling");
    theta = jnum(j, j->root, "rope_theta", theta);
    if (json_is_object(rp) && json_is_object(json_object_get(rp, "full_attention"))) {
        read_rope(j, json_object_get(rp, "full_attention"), &rope[0], theta, maxpos);
        json_t *sl = json_object_get(rp, "sliding_attention");
        if (json_is_object(sl))
            read_rope(j, sl, &rope[1], theta, maxpos);
        else
            rope[1] = rope[0];
        return;
    }
    json_t *o = json_is_object(rp) ? rp : json_is_object(rs) ? rs : NULL;
    if (o)
        read_rope(j, o, &rope[0], theta, maxpos);
    else
        rope[0].theta = theta;
    rope[1] = rope[0];
}

/* A layer_types entry: its mixer and whether it slides; -1 when the family
 * has no such layer. */
static int layer_type(int fam, const char *s, int *sliding)
{
    *sliding = 0;
    if (!s)
        return -1;
    if (!strcmp(s, "full_attention"))
        return fam == FAM_DEEPSEEK2 ? MIX_LATENT : MIX_ATTN;
    if (!strcmp(s, "sliding_attention") && fam != FAM_DEEPSEEK2 && fam != FAM_QWEN3NEXT && fam != FAM_LFM2)
        return *sliding = 1, MIX_ATTN;
    if (!strcmp(s, "linear_attention") && fam == FAM_QWEN3NEXT)
        return MIX_DELTA;
    if (!strcmp(s, "conv") && fam == FAM_LFM2)
        return MIX_CONV;
    return -1;
}

static const char *layer_type_names(int fam)
{
    switch (fam) {
    case FAM_DEEPSEEK2: return "full_attention";
    case FAM_QWEN3NEXT: return "full_attention, linear_attention";
    case FAM_LFM2: return "full_attention, conv";
    default: return "full_attention, sliding_attention";
    }
}

/* The family's rule where there is no layer_types: which layers slide, and
 * Qwen3-Next's full_attention_interval, LFM2's full_attn_idxs. */
static void older_layers(J *j, Cfg *c, long win)
{
    long from = jint(j, j->root, "max_window_layers", 0);
    long every = c->family == FAM_QWEN3NEXT ? jint(j, j->root, "full_attention_interval", 4) : 0;
    json_t *idx = json_object_get(j->root, "full_attn_idxs");
    for (long l = 0; l < c->layers; l++) {
        switch (c->family) {
        case FAM_GEMMA2:
        case FAM_GPTOSS: c->sliding[l] = win && l % 2 == 0; break;
        case FAM_QWEN2:
        case FAM_QWEN3: c->sliding[l] = win && l >= from; break;
        case FAM_DEEPSEEK2: c->mixer[l] = MIX_LATENT; break;
        case FAM_QWEN3NEXT: c->mixer[l] = every && (l + 1) % every == 0 ? MIX_ATTN : MIX_DELTA; break;
        case FAM_LFM2: c->mixer[l] = json_is_array(idx) ? MIX_CONV : MIX_ATTN; break;
        default: c->sliding[l] = win != 0;
        }
    }
    for (size_t i = 0; c->family == FAM_LFM2 && i < json_array_size(idx); i++) {
        json_int_t l = json_integer_value(json_array_get(idx, i));
        if (!json_is_integer(json_array_get(idx, i)) || l < 0 || l >= c->layers) {
            j->err = imp_fail(j->file, "full_attn_idxs[%zu] is not a layer index", i);
            return;
        }
        c->mixer[l] = MIX_ATTN;
    }
}

/* Each layer's mixer and whether it slides: layer_types, else the family's rule. */
static void read_layers(J *j, Cfg *c)
{
    size_t n = (size_t)(c->layers > 0 ? c->layers : 1);
    c->sliding = arena_alloc(j->c->a, n);
    c->mixer = arena_alloc(j->c->a, n);
    json_t *lt = json_object_get(j->root, "layer_types");
    long win = jint(j, j->root, "sliding_window", c->family == FAM_GEMMA2 ? 4096 : c->family == FAM_GPTOSS ? 128 : 0);
    if ((c->family == FAM_QWEN2 || c->family == FAM_QWEN3) && !jbool(j, j->root, "use_sliding_window", 0))
        win = 0;
    if (c->family == FAM_DEEPSEEK2 || c->family == FAM_QWEN3NEXT || c->family == FAM_LFM2)
        win = 0;
    c->window = win;
    if (!json_is_array(lt)) {
        older_layers(j, c, win);
        return;
    }
    if ((long)json_array_size(lt) != c->layers) {
        j->err = imp_fail(j->file, "layer_types has %zu entries for %ld layers", json_array_size(lt), c->layers);
        return;
    }
    for (long l = 0; l < c->layers; l++) {
        const char *s = json_string_value(json_array_get(lt, (size_t)l));
        int sliding, mix = layer_type(c->family, s, &sliding);
        if (mix < 0) {
            j->err = imp_fail(j->file, "layer_types[%ld] is not a layer type of %s (%s)", l,
                              family_name(c->family), layer_type_names(c->family));
            return;
        }
        c->mixer[l] = (char)mix;
        c->sliding[l] = win && sliding;
    }
}

static int read_act(J *j, const char *act, int *out)
{
    if (!act || !strcmp(act, "silu") || !strcmp(act, "swish"))
        *out = ACT_SILU;
    else if (!strcmp(act, "gelu_pytorch_tanh") || !strcmp(act, "gelu_tanh") || !strcmp(act, "gelu_new"))
        *out = ACT_GELU_TANH;
    else
        return j->err = imp_fail(j->file, "activation '%s' is not one logos-author writes (silu, gelu_pytorch_tanh)",
                                 act);
    return 0;
}

/* The layers of a mixture: from `first` on, every `step`-th, none of `skip`. */
static void moe_layers(J *j, Cfg *c, long first, long step, json_t *skip)
{
    c->moe = arena_alloc(j->c->a, (size_t)(c->layers > 0 ? c->layers : 1));
    if (step <= 0) {
        j->err = imp_fail(j->file, "'decoder_sparse_step' is not positive");
        return;
    }
    for (long l = 0; l < c->layers; l++)
        c->moe[l] = c->experts > 0 && l >= first && (l + 1) % step == 0;
    for (size_t i = 0; i < json_array_size(skip); i++) {
        json_int_t l = json_integer_value(json_array_get(skip, i));
        if (json_is_integer(json_array_get(skip, i)) && l >= 0 && l < c->layers)
            c->moe[l] = 0;
    }
}

/* DeepSeek-V2: latent attention with rotary pairs of neighbours, dense layers
 * up to first_k_dense_replace, then a softmax mixture (greedy or
 * group-limited) with shared experts. transformers' router ignores
 * norm_topk_prob, and so does the spec written here. */
static void read_deepseek(J *j, Cfg *c)
{
    json_t *r = j->root;
    c->paired = 1;
    c->q_lora = jint(j, r, "q_lora_rank", 0);
    c->kv_lora = jint(j, r, "kv_lora_rank", 512);
    c->nope = jint(j, r, "qk_nope_head_dim", 128);
    c->rope_dim = jint(j, r, "qk_rope_head_dim", 64);
    c->v_dim = jint(j, r, "v_head_dim", 128);
    const CRope *ro = &c->rope[0];
    double m = ro->scaling != SCALE_NONE && ro->mscale_all ? yarn_mscale(ro->factor, ro->mscale_all) : 1;
    c->latent_scale = m * m / sqrt((double)(c->nope + c->rope_dim));
    c->experts = jint(j, r, "n_routed_experts", 64);
    c->top_k = jint(j, r, "num_experts_per_tok", 0);
    c->moe_hidden = jint(j, r, "moe_intermediate_size", 1407);
    c->shared_hidden = jint(j, r, "n_shared_experts", 2) * c->moe_hidden;
    c->moe_scale = jnum(j, r, "routed_scaling_factor", 1);
    const char *tm = jstr(r, "topk_method");
    if (tm && !strcmp(tm, "group_limited_greedy")) {
        c->groups = jint(j, r, "n_group", 0);
        c->topk_groups = jint(j, r, "topk_group", 0);
        if (c->groups <= 0 || c->topk_groups <= 0)
            j->err = imp_fail(j->file, "group_limited_greedy routing needs a positive n_group and topk_group");
    } else if (tm && strcmp(tm, "greedy")) {
        j->err = imp_fail(j->file, "topk_method '%s' cannot be written (greedy, group_limited_greedy)", tm);
    }
    if (jbool(j, r, "attention_bias", 0) || jbool(j, r, "mlp_bias", 0))
        j->err = imp_fail(j->file, "attention_bias and mlp_bias: latent attention and experts with biases "
                          "cannot be written");
    c->q_bias = c->k_bias = c->v_bias = c->o_bias = 0;
    moe_layers(j, c, jint(j, r, "first_k_dense_replace", 0), 1, NULL);
}

/* Qwen3-Next: gated delta layers and gated attention (q/k norms, partial
 * rotation), zero-centered norms, a mixture with a gated shared expert
 * except on mlp_only_layers. */
static void read_qwen3next(J *j, Cfg *c)
{
    json_t *r = j->root;
    c->norm_offset = 1;
    c->qk_norm = c->out_gate = 1;
    c->head_dim = jint(j, r, "head_dim", 256);
    c->dk_heads = jint(j, r, "linear_num_key_heads", 16);
    c->dv_heads = jint(j, r, "linear_num_value_heads", 32);
    c->dk_dim = jint(j, r, "linear_key_head_dim", 128);
    c->dv_dim = jint(j, r, "linear_value_head_dim", 128);
    c->dconv = jint(j, r, "linear_conv_kernel_dim", 4);
    c->experts = jint(j, r, "num_experts", 512);
    c->top_k = jint(j, r, "num_experts_per_tok", 10);
    c->moe_hidden = jint(j, r, "moe_intermediate_size", 512);
    c->shared_hidden = jint(j, r, "shared_expert_intermediate_size", 512);
    c->shared_gate = 1;
    c->moe_norm = jbool(j, r, "norm_topk_prob", 1);
    moe_layers(j, c, 0, jint(j, r, "decoder_sparse_step", 1), json_object_get(r, "mlp_only_layers"));
}

/* LFM2: short convolutions and attention with q/k norms; its feed-forward
 * width is block_ff_dim (or intermediate_size) adjusted as Lfm2MLP does:
 * two thirds, times block_ffn_dim_multiplier, up to block_multiple_of. */
static void read_lfm2(J *j, Cfg *c)
{
    json_t *r = j->root;
    c->qk_norm = 1;
    c->eps = jnum(j, r, "norm_eps", 1e-5);
    c->tied = jbool(j, r, "tie_embedding", c->tied);
    long ff = jint(j, r, "block_ff_dim", jint(j, r, "intermediate_size", 12288));
    json_t *mult = json_object_get(r, "block_ffn_dim_multiplier");
    if (jbool(j, r, "block_auto_adjust_ff_dim", 1)) {
        ff = (long)(2.0 * (double)ff / 3);
        if (!json_is_null(mult)) {
            long of = jint(j, r, "block_multiple_of", 256);
            double m = jnum(j, r, "block_ffn_dim_multiplier", 1) * (double)ff;
            if (!(m < (double)LOGOS_MAXINT - (double)of))
                j->err = imp_fail(j->file, "'block_ffn_dim_multiplier' makes the feed-forward width %.0f, past %ld",
                                  m, LOGOS_MAXINT);
            ff = m > 0 && !j->err ? (long)m : 0;
            ff = of > 0 ? of * ((ff + of - 1) / of) : ff;
        }
    }
    c->hidden = ff;
    c->conv_kernel = jint(j, r, "conv_L_cache", 3);
    c->conv_bias = jbool(j, r, "conv_bias", 0);
    c->q_bias = c->k_bias = c->v_bias = c->o_bias = 0;
}

static void read_family(J *j, Cfg *c)
{
    int ab = jbool(j, j->root, "attention_bias", c->family == FAM_GPTOSS);
    c->q_bias = c->k_bias = c->v_bias = c->o_bias = ab;
    if (c->family == FAM_QWEN2) {
        c->q_bias = c->k_bias = c->v_bias = 1;
        c->o_bias = 0;
    }
    c->qk_norm = c->family == FAM_QWEN3;
    const char *act = jstr(j->root, "hidden_activation");
    read_act(j, act ? act : jstr(j->root, "hidden_act"), &c->act);
    if (c->family == FAM_GEMMA2) {
        double qpas = jnum(j, j->root, "query_pre_attn_scalar", (double)c->head_dim);
        c->scale = qpas > 0 ? 1 / sqrt(qpas) : 0;
        c->attn_softcap = jnum(j, j->root, "attn_logit_softcapping", 0);
        c->final_softcap = jnum(j, j->root, "final_logit_softcapping", 0);
    }
    if (c->family == FAM_GPTOSS) {
        c->sinks = 1;
        c->experts = jint(j, j->root, "num_local_experts", 0);
        c->top_k = jint(j, j->root, "num_experts_per_tok", 0);
        c->oai_alpha = jnum(j, j->root, "swiglu_alpha", 1.702);
        c->oai_limit = jnum(j, j->root, "swiglu_limit", 7);
    }
    if (c->family == FAM_DEEPSEEK2)
        read_deepseek(j, c);
    else if (c->family == FAM_QWEN3NEXT)
        read_qwen3next(j, c);
    else if (c->family == FAM_LFM2)
        read_lfm2(j, c);
}

/* The rope parameters of full attention: rope_parameters (per layer type or
 * not), else rope_scaling, else NULL. */
static json_t *rope_object(J *j)
{
    json_t *rp = json_object_get(j->root, "rope_parameters");
    if (json_is_object(json_object_get(rp, "full_attention")))
        return json_object_get(rp, "full_attention");
    if (json_is_object(rp))
        return rp;
    json_t *rs = json_object_get(j->root, "rope_scaling");
    return json_is_object(rs) ? rs : NULL;
}

int cfg_from_json(Ckpt *c, const char *dir)
{
    const char *path = arena_printf(c->a, "%s/config.json", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return imp_fail(path, "missing: a Hugging Face checkpoint folder needs its config.json");
    int st = cfg_from_file(c, f, path, dir);
    fclose(f);
    return st;
}

int cfg_from_file(Ckpt *c, FILE *f, const char *path, const char *dir)
{
    c->cfgfile = path;
    json_error_t e;
    J j = {c, path, NULL, 0};
    j.root = json_loadf(f, JSON_REJECT_DUPLICATES, &e);
    if (!j.root)
        return imp_fail(path, "not JSON: %s (line %d)", e.text, e.line);
    int fi = json_is_object(j.root) ? find_family(&j) : (imp_fail(path, "not a JSON object"), -1);
    if (fi < 0) {
        json_decref(j.root);
        return EXIT_INPUT;
    }
    Cfg *g = &c->cfg;
    g->family = fams[fi].fam;
    const char *np = jstr(j.root, "_name_or_path");
    g->name = sanitize_name(c->a, np && *np ? np : dir);
    g->vocab = jint(&j, j.root, "vocab_size", 0);
    g->dim = jint(&j, j.root, "hidden_size", 0);
    g->layers = jint(&j, j.root, "num_hidden_layers", 0);
    g->heads = jint(&j, j.root, "num_attention_heads", 0);
    g->kv_heads = jint(&j, j.root, "num_key_value_heads", g->heads);
    g->head_dim = jint(&j, j.root, "head_dim", g->heads ? g->dim / g->heads : 0);
    g->hidden = jint(&j, j.root, "intermediate_size", 0);
    g->eps = jnum(&j, j.root, "rms_norm_eps", 1e-6);
    g->ctx = jint(&j, j.root, "max_position_embeddings", 0);
    g->tied = jbool(&j, j.root, "tie_word_embeddings", fams[fi].tied);
    double prf = jnum(&j, j.root, "partial_rotary_factor", g->family == FAM_QWEN3NEXT ? 0.25 : 1);
    prf = jnum(&j, rope_object(&j), "partial_rotary_factor", prf);
    if (!(prf > 0 && prf <= 1))
        j.err = imp_fail(path, "'partial_rotary_factor' is %g, not a fraction of the head from 0 to 1", prf);
    read_ropes(&j, fams[fi].theta, g->ctx, g->rope);
    if (g->layers > 65536)   /* before a byte a layer is allocated */
        j.err = imp_fail(path, "%ld layers are more than 65536", g->layers);
    if (!j.err)
        read_layers(&j, g);
    if (!j.err)
        read_family(&j, g);
    g->rot = prf < 1 ? (long)((double)g->head_dim * prf) : 0;
    json_decref(j.root);
    return j.err ? EXIT_INPUT : 0;
}

/* Each layer's mixer and feed-forward kind where the reader left them: all
 * attention, gpt-oss's all mixtures. */
static void default_kinds(Ckpt *c)
{
    Cfg *g = &c->cfg;
    if (!g->mixer)
        g->mixer = arena_alloc(c->a, (size_t)g->layers);
    if (!g->moe) {
        g->moe = arena_alloc(c->a, (size_t)g->layers);
        memset(g->moe, g->family == FAM_GPTOSS, (size_t)g->layers);
    }
    if (g->family == FAM_GPTOSS)
        g->moe_hidden = g->hidden;
}

/* The widths the layers' kinds need, each positive; the convolutions'
 * kernels at least 2. */
static int check_widths(const Cfg *g, const char *f, const int *has, int dense, int moe)
{
    struct { int on; const char *name; long v; } need[] = {
        {has[MIX_ATTN], "heads", g->heads}, {has[MIX_ATTN], "kv heads", g->kv_heads},
        {has[MIX_ATTN], "head width", g->head_dim}, {dense, "feed-forward width", g->hidden},
        {moe, "feed-forward width", g->moe_hidden}, {has[MIX_LATENT], "heads", g->heads},
        {has[MIX_LATENT], "kv_lora_rank", g->kv_lora}, {has[MIX_LATENT], "qk_nope_head_dim", g->nope},
        {has[MIX_LATENT], "qk_rope_head_dim", g->rope_dim}, {has[MIX_LATENT], "v_head_dim", g->v_dim},
        {has[MIX_DELTA], "linear_num_key_heads", g->dk_heads}, {has[MIX_DELTA], "linear_num_value_heads", g->dv_heads},
        {has[MIX_DELTA], "linear_key_head_dim", g->dk_dim}, {has[MIX_DELTA], "linear_value_head_dim", g->dv_dim}};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (need[i].on && need[i].v <= 0)
            return imp_fail(f, "the %s: missing or not positive", need[i].name);
    if (has[MIX_DELTA] && g->dconv < 2)
        return imp_fail(f, "linear_conv_kernel_dim is %ld: a short convolution's kernel is at least 2", g->dconv);
    if (has[MIX_CONV] && g->conv_kernel < 2)
        return imp_fail(f, "conv_L_cache is %ld: a short convolution's kernel is at least 2", g->conv_kernel);
    if (has[MIX_ATTN] && g->heads % g->kv_heads)
        return imp_fail(f, "%ld heads are not a multiple of %ld kv heads", g->heads, g->kv_heads);
    if (has[MIX_DELTA] && g->dv_heads % g->dk_heads)
        return imp_fail(f, "%ld value heads are not a multiple of %ld key heads", g->dv_heads, g->dk_heads);
    if (has[MIX_LATENT] && g->rope_dim % 2)
        return imp_fail(f, "qk_rope_head_dim %ld is odd", g->rope_dim);
    if (moe && (g->experts <= 0 || g->top_k <= 0 || g->top_k > g->experts))
        return imp_fail(f, "the experts (%ld) and experts per token (%ld) are not a mixture", g->experts, g->top_k);
    if (moe && g->groups && (g->experts % g->groups || g->topk_groups > g->groups))
        return imp_fail(f, "%ld experts in %ld groups, %ld of them kept, are not group-limited routing", g->experts,
                        g->groups, g->topk_groups);
    return 0;
}

/* The key of a value as the checkpoint spells it: config.json's, or the
 * GGUF's under its architecture. */
static const char *key_of(const Ckpt *c, const char *json, const char *gguf)
{
    return c->gguf ? arena_printf(c->a, "%s.%s", family_name(c->cfg.family), gguf) : json;
}

/* Attention's rotated width is even and within the head; a scaling's
 * original context is at least 1. */
static int check_rope(const Ckpt *c, int attn)
{
    const Cfg *g = &c->cfg;
    const char *f = c->cfgfile, *rk = key_of(c, "partial_rotary_factor", "rope.dimension_count");
    if (attn && !g->rot && g->head_dim % 2)
        return imp_fail(f, "the head width %ld (%s) is odd: rope rotates pairs of values", g->head_dim,
                        key_of(c, "head_dim", "attention.key_length"));
    if (attn && c->gguf && g->rot > g->head_dim)
        return imp_fail(f, "%s %ld is more than the head width %ld", rk, g->rot, g->head_dim);
    if (attn && g->rot % 2)
        return c->gguf ? imp_fail(f, "%s %ld is odd: rope rotates pairs of values", rk, g->rot)
                       : imp_fail(f, "%s rotates %ld values of a head of %ld: an odd number", rk, g->rot, g->head_dim);
    for (int i = 0; i < 2; i++)
        if ((g->rope[i].scaling == SCALE_YARN || g->rope[i].scaling == SCALE_LLAMA3) && g->rope[i].orig < 1)
            return imp_fail(f, "%s is %ld: rope scaling needs an original context of at least 1",
                            key_of(c, "original_max_position_embeddings", "rope.scaling.original_context_length"),
                            g->rope[i].orig);
    return 0;
}

/* The values a spec holds as integers, at most LOGOS_MAXINT (those computed
 * from two keys can pass it). */
static int check_ints(const Cfg *g, const char *f)
{
    struct { const char *name; long v; } ints[] = {
        {"vocab", g->vocab}, {"feed-forward width", g->hidden},
        {"shared experts' width (n_shared_experts x moe_intermediate_size)", g->shared_hidden}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if (ints[i].v > LOGOS_MAXINT)
            return imp_fail(f, "the %s is %ld, more than %ld", ints[i].name, ints[i].v, LOGOS_MAXINT);
    return 0;
}

/* No weight holds more than LOGOS_MAXVALUES values: the largest of each
 * kind of layer, counted in doubles so that nothing overflows. */
static int check_sizes(const Cfg *g, const char *f, const int *has, int dense, int moe)
{
    double d = (double)g->dim, qk = (double)(g->nope + g->rope_dim);
    struct { int on; const char *name; double n; } w[] = {
        {1, "embedding (vocab x hidden size)", (double)g->vocab * d},
        {has[MIX_ATTN], "query projection", d * (double)g->heads * (double)g->head_dim * (g->out_gate ? 2 : 1)},
        {has[MIX_ATTN], "key projection", d * (double)g->kv_heads * (double)g->head_dim},
        {has[MIX_LATENT], "query projection", (double)(g->q_lora ? g->q_lora : g->dim) * (double)g->heads * qk},
        {has[MIX_LATENT], "latent projection", d * (double)(g->kv_lora + g->rope_dim)},
        {has[MIX_LATENT], "latent's key and value", (double)g->kv_lora * (double)g->heads * (double)(g->nope + g->v_dim)},
        {has[MIX_LATENT], "output projection", d * (double)g->heads * (double)g->v_dim},
        {has[MIX_DELTA], "delta rule's input projection",
         d * (double)(2 * g->dk_heads * g->dk_dim + 2 * g->dv_heads * g->dv_dim)},
        {has[MIX_CONV], "convolution's input projection", 3 * d * d},
        {dense, "feed-forward block", d * (double)g->hidden},
        {moe, "experts", (double)g->experts * (double)g->moe_hidden * d},
        {moe, "shared expert", (double)g->shared_hidden * d}};
    for (size_t i = 0; i < sizeof w / sizeof *w; i++)
        if (w[i].on && w[i].n > (double)LOGOS_MAXVALUES)
            return imp_fail(f, "the %s would hold %.4g values, more than 2^40", w[i].name, w[i].n);
    return 0;
}

/* Whether any layer has mixer m (has[m]), a dense or a mixture block. */
static void layer_kinds(const Cfg *g, int *has, int *dense, int *moe)
{
    *dense = *moe = 0;
    for (long l = 0; l < g->layers; l++) {
        has[(int)g->mixer[l]] = 1;
        *dense |= !g->moe[l];
        *moe |= g->moe[l];
    }
}

/* Shapes must be positive and fit, the rope possible; the family's fixed
 * choices; ctx. */
int cfg_finish(Ckpt *c, long ctx)
{
    Cfg *g = &c->cfg;
    const char *f = c->cfgfile;
    struct { const char *name; long v; } need[] = {{"vocab", g->vocab}, {"hidden size", g->dim}, {"layers", g->layers}};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (need[i].v <= 0)
            return imp_fail(f, "the %s: missing or not positive", need[i].name);
    if (g->layers > 65536)
        return imp_fail(f, "%ld layers are more than 65536", g->layers);
    default_kinds(c);
    int has[4] = {0}, dense, moe;
    layer_kinds(g, has, &dense, &moe);
    int st = check_widths(g, f, has, dense, moe);
    if (!st)
        st = check_rope(c, has[MIX_ATTN]);
    if (!st)
        st = check_ints(g, f);
    if (!st)
        st = check_sizes(g, f, has, dense, moe);
    if (st)
        return st;
    if (!g->sliding) {
        g->sliding = arena_alloc(c->a, (size_t)g->layers);
        for (long l = 0; l < g->layers && g->window; l++)
            g->sliding[l] = g->family == FAM_GEMMA2 ? l % 2 == 0 : 1;
    }
    if (g->family == FAM_GEMMA2) {
        g->sandwich = 1;
        g->act = ACT_GELU_TANH;
        g->embed_scale = sqrt((double)g->dim);
        g->norm_offset = g->norm_offset < 0 ? 0 : 1;   /* -1: a GGUF already holds 1 + w */
    }
    long max = g->ctx > 0 ? g->ctx : 4096;
    g->ctx = ctx > 0 ? ctx : max < 4096 ? max : 4096;
    return 0;
}
