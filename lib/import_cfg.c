/* import_cfg.c — a Hugging Face config.json (transformers 4 and 5 spellings)
 * read into a Cfg: the family from model_type (or architectures), shapes,
 * norms, the rope and its scaling (rope_theta + rope_scaling, or
 * rope_parameters, per layer type where given), which layers slide
 * (layer_types, or each family's older rule), and each family's fixed
 * choices (Gemma 2's caps, sandwich and (1 + w) norms, gpt-oss's sinks and
 * mixture). Defaults are those of each family's config class. */
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
    for (char *p = n; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p))
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
    if (v != floor(v) || v < 0 || v > 2147483647.0) {
        j->err = imp_fail(j->file, "'%s' is not a whole number from 0 to 2147483647", key);
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
    if (mt)
        return imp_fail(j->file, "unknown architecture '%s' (model_type; known: llama mistral qwen2 qwen3 gemma2 "
                        "gpt_oss)", mt), -1;
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

/* Which layers slide: layer_types, else the family's rule. */
static void read_sliding(J *j, Cfg *c)
{
    c->sliding = arena_alloc(j->c->a, (size_t)(c->layers > 0 ? c->layers : 1));
    json_t *lt = json_object_get(j->root, "layer_types");
    long win = jint(j, j->root, "sliding_window", c->family == FAM_GEMMA2 ? 4096 : c->family == FAM_GPTOSS ? 128 : 0);
    if ((c->family == FAM_QWEN2 || c->family == FAM_QWEN3) && !jbool(j, j->root, "use_sliding_window", 0))
        win = 0;
    c->window = win;
    if (json_is_array(lt)) {
        if ((long)json_array_size(lt) != c->layers) {
            j->err = imp_fail(j->file, "layer_types has %zu entries for %ld layers", json_array_size(lt), c->layers);
            return;
        }
        for (long l = 0; l < c->layers; l++) {
            const char *s = json_string_value(json_array_get(lt, (size_t)l));
            if (!s || (strcmp(s, "sliding_attention") && strcmp(s, "full_attention"))) {
                j->err = imp_fail(j->file, "layer_types[%ld] is not sliding_attention or full_attention "
                                  "(logos-import reads attention layers only)", l);
                return;
            }
            c->sliding[l] = win && !strcmp(s, "sliding_attention");
        }
        return;
    }
    long from = jint(j, j->root, "max_window_layers", 0);
    for (long l = 0; l < c->layers && win; l++) {
        switch (c->family) {
        case FAM_GEMMA2:
        case FAM_GPTOSS: c->sliding[l] = l % 2 == 0; break;
        case FAM_QWEN2:
        case FAM_QWEN3: c->sliding[l] = l >= from; break;
        default: c->sliding[l] = 1;
        }
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
}

int cfg_from_json(Ckpt *c, const char *dir)
{
    const char *path = arena_printf(c->a, "%s/config.json", dir);
    c->cfgfile = path;
    json_error_t e;
    J j = {c, path, NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f)
        return imp_fail(path, "missing: a Hugging Face checkpoint folder needs its config.json");
    j.root = json_loadf(f, JSON_REJECT_DUPLICATES, &e);
    fclose(f);
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
    double prf = jnum(&j, j.root, "partial_rotary_factor", 1);
    g->rot = prf < 1 ? (long)(g->head_dim * prf) : 0;
    read_ropes(&j, fams[fi].theta, g->ctx, g->rope);
    if (!j.err)
        read_sliding(&j, g);
    if (!j.err)
        read_family(&j, g);
    json_decref(j.root);
    return j.err ? EXIT_INPUT : 0;
}

/* Shapes must be positive and fit; the family's fixed choices; ctx. */
int cfg_finish(Ckpt *c, long ctx)
{
    Cfg *g = &c->cfg;
    const char *f = c->cfgfile;
    struct { const char *name; long v; } need[] = {
        {"vocab", g->vocab}, {"hidden size", g->dim}, {"layers", g->layers}, {"heads", g->heads},
        {"kv heads", g->kv_heads}, {"head width", g->head_dim}, {"feed-forward width", g->hidden}};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        if (need[i].v <= 0)
            return imp_fail(f, "the %s is missing or not positive", need[i].name);
    if (g->layers > 65536)
        return imp_fail(f, "%ld layers are more than 65536", g->layers);
    if (g->heads % g->kv_heads)
        return imp_fail(f, "%ld heads are not a multiple of %ld kv heads", g->heads, g->kv_heads);
    if (g->family == FAM_GPTOSS && (g->experts <= 0 || g->top_k <= 0 || g->top_k > g->experts))
        return imp_fail(f, "the experts (%ld) and experts per token (%ld) are not a mixture", g->experts, g->top_k);
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
