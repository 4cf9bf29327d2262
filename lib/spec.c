/* spec.c — the ModelSpec (man5/logos-spec.5): fills a Spec from the YAML
 * tree spec_yaml.c reads, through tables of fields, checks its shapes, and
 * answers the seed's check (spec_not_yet). Every rejection is one located
 * message and NULL. */
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "spec.h"

enum { MAX_LAYERS = 65536, MAX_FIELDS = 24 };

/* Values the schema recognizes but the language cannot express yet. They
 * extend logos.h's enums so the parser can keep them; spec_not_yet names
 * them. A layer with `norm: layernorm` is stored with sandwich = -1. */
enum { SCALE_LINEAR = SCALE_YARN + 1, SCALE_DYNAMIC, SCALE_LONGROPE };
enum { ACT_GELU_ERF = ACT_OAI + 1, ACT_RELU2 };
enum { NORM_PRE, NORM_SANDWICH, NORM_LAYERNORM, SANDWICH_LAYERNORM = -1 };

static const char *const act_names[] = {"silu", "gelu_tanh", "oai", "gelu", "relu2", NULL};
static const char *const scale_names[] = {"none", "llama3", "yarn", "linear", "dynamic",
                                          "longrope", NULL};
static const char *const score_names[] = {"softmax", "sigmoid", "topk_softmax", NULL};
static const char *const fmt_names[] = {"f32", "q8", NULL};
static const char *const pairing_names[] = {"neox", "interleaved", NULL};
static const char *const norm_names[] = {"pre", "sandwich", "layernorm", NULL};
static const char *const class_names[WC_COUNT] = {"embed", "head", "attn", "ffn",
                                                  "expert", "router", "mixer"};

/* ---- fields: a section's keys, their types and where they go ---------- */

enum FType { T_INT, T_NUM, T_BOOL, T_STR, T_ENUM, T_SUB, T_NODE };
typedef struct Field {
    const char *key;
    int type;
    size_t off;              /* into the section's struct */
    int req;
    long lo, hi;             /* T_INT's range (hi 0: INT32_MAX); T_NUM: lo 1 means > 0 */
    const char *const *names;                        /* T_ENUM's spellings */
    int (*sub)(P *p, const Node *v, void *base);     /* T_SUB's parser */
} Field;

typedef struct Section {
    const char *where;       /* "in attention" */
    const Field *f;
} Section;

static const Section *sections(void);

static int field_index(const Field *f, const char *key)
{
    for (int i = 0; f[i].key; i++)
        if (strcmp(f[i].key, key) == 0)
            return i;
    return -1;
}

static int unknown_key(P *p, const Node *k, const char *where)
{
    for (const Section *s = sections(); s->where; s++)
        if (field_index(s->f, k->s) >= 0)
            return spec_fail(p, k, "unknown key '%s' %s ('%s' goes %s)", k->s, where, k->s, s->where);
    return spec_fail(p, k, "unknown key '%s' %s", k->s, where);
}

/* Index in m->kids of the first key spelled key, or -1. */
static int key_at(const Node *m, const char *key)
{
    for (int i = 0; m && m->kind == N_MAP && i < m->n; i += 2)
        if (m->kids[i]->kind == N_SCALAR && !strcmp(m->kids[i]->s, key))
            return i;
    return -1;
}

/* The value under key in mapping m, or NULL. */
static const Node *map_get(const Node *m, const char *key)
{
    int i = key_at(m, key);
    return i < 0 ? NULL : m->kids[i + 1];
}

static int want_map(P *p, const Node *m, const char *key)
{
    if (m->kind != N_MAP)
        return spec_fail(p, m, "expected a mapping for '%s', got %s", key, spec_show(p, m));
    return 0;
}

/* The keys of mapping m into got[] by field, rejecting unknown and repeated keys. */
static int collect(P *p, const Node *m, const char *key, const char *where, const Field *f,
                   const Node **got)
{
    if (want_map(p, m, key))
        return -1;
    for (int i = 0; f[i].key; i++)
        got[i] = NULL;
    for (int i = 0; i < m->n; i += 2) {
        const Node *k = m->kids[i];
        if (k->kind != N_SCALAR)
            return spec_fail(p, k, "a key must be a word, got %s", spec_show(p, k));
        int j = field_index(f, k->s);
        if (j < 0)
            return unknown_key(p, k, where);
        if (got[j])
            return spec_fail(p, k, "duplicate key '%s' (first at line %d)", k->s,
                        m->kids[key_at(m, k->s)]->line);
        got[j] = m->kids[i + 1];
    }
    return 0;
}

static int want_scalar(P *p, const Node *v, const char *what, const char *key)
{
    if (v->kind != N_SCALAR || !v->plain || v->len == 0)
        return spec_fail(p, v, "expected %s for '%s', got %s", what, key, spec_show(p, v));
    return 0;
}

static int get_int(P *p, const Node *v, const Field *f, int *out)
{
    if (want_scalar(p, v, "an integer", f->key))
        return -1;
    char *end;
    long long x = strtoll(v->s, &end, 10);
    if (end != v->s + v->len || strspn(v->s, "+-0123456789") != v->len)
        return spec_fail(p, v, "expected an integer for '%s', got %s", f->key, spec_show(p, v));
    long hi = f->hi ? f->hi : LOGOS_MAXINT;
    if (x < f->lo)
        return spec_fail(p, v, "'%s' must be at least %ld, got %s", f->key, f->lo, spec_show(p, v));
    if (x > hi)
        return spec_fail(p, v, "'%s' must be at most %ld, got %s", f->key, hi, spec_show(p, v));
    *out = (int)x;
    return 0;
}

static int get_num(P *p, const Node *v, const Field *f, double *out)
{
    if (want_scalar(p, v, "a number", f->key))
        return -1;
    char *end;
    double x = strtod(v->s, &end);
    if (end != v->s + v->len || !isfinite(x) || strspn(v->s, "+-.0123456789eE") != v->len)
        return spec_fail(p, v, "expected a number for '%s', got %s", f->key, spec_show(p, v));
    if (x < 0 || (f->lo && x == 0))
        return spec_fail(p, v, "'%s' must be %s, got %s", f->key,
                    f->lo ? "positive" : "at least 0", spec_show(p, v));
    *out = x;
    return 0;
}

static int get_bool(P *p, const Node *v, const char *key, int *out)
{
    if (v->kind == N_SCALAR && v->plain && (!strcmp(v->s, "true") || !strcmp(v->s, "false"))) {
        *out = v->s[0] == 't';
        return 0;
    }
    return spec_fail(p, v, "expected true or false for '%s', got %s", key, spec_show(p, v));
}

static int get_enum(P *p, const Node *v, const Field *f, int *out)
{
    if (v->kind == N_SCALAR)
        for (int i = 0; f->names[i]; i++)
            if (!strcmp(v->s, f->names[i])) {
                *out = i;
                return 0;
            }
    char list[256] = "";
    for (int i = 0; f->names[i]; i++) {
        strcat(list, i ? ", " : "");
        strcat(list, f->names[i]);
    }
    return spec_fail(p, v, "expected one of %s for '%s', got %s", list, f->key, spec_show(p, v));
}

/* What a string may not hold, shown ("'/'", "a newline"), or NULL: a string
 * (the model's name) is a word of a program's header, and never '..' (it
 * may name files and folders). */
static const char *bad_word(P *p, const char *s)
{
    if (strstr(s, ".."))
        return "'..'";
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (isalnum(*c) || *c == '.' || *c == '_' || *c == '-')
            continue;
        if (*c == '\n' || *c == ' ' || *c == '\t')
            return *c == '\n' ? "a newline" : *c == ' ' ? "a space" : "a tab";
        return *c > 32 && *c < 127 ? arena_printf(p->a, "'%c'", *c) : arena_printf(p->a, "the byte 0x%02x", *c);
    }
    return NULL;
}

static int get_str(P *p, const Node *v, const char *key, const char **out)
{
    if (v->kind != N_SCALAR || v->len == 0)
        return spec_fail(p, v, "expected a string for '%s', got %s", key, spec_show(p, v));
    const char *bad = bad_word(p, v->s);
    if (bad)
        return spec_fail(p, v, "'%s' holds %s: it is a word of letters, digits, '.', '_' and '-', without '..'", key, bad);
    *out = v->s;
    return 0;
}

static int fill_one(P *p, const Node *v, const Field *f, void *base)
{
    char *at = (char *)base + f->off;
    switch (f->type) {
    case T_INT: return get_int(p, v, f, (int *)at);
    case T_NUM: return get_num(p, v, f, (double *)at);
    case T_BOOL: return get_bool(p, v, f->key, (int *)at);
    case T_STR: return get_str(p, v, f->key, (const char **)at);
    case T_ENUM: return get_enum(p, v, f, (int *)at);
    case T_SUB: return f->sub(p, v, base);
    default: return 0;
    }
}

/* Fill base from the collected values in table order; required fields first. */
static int fill(P *p, const Node *m, const char *where, const Field *f, const Node **got,
                void *base)
{
    for (int i = 0; f[i].key; i++)
        if (f[i].req && !got[i])
            return spec_fail(p, m, "missing '%s' %s", f[i].key, where);
    for (int i = 0; f[i].key; i++)
        if (got[i] && fill_one(p, got[i], &f[i], base))
            return -1;
    return 0;
}

static int parse_map(P *p, const Node *m, const char *key, const char *where, const Field *f,
                     void *base, const Node **got)
{
    return collect(p, m, key, where, f, got) || fill(p, m, where, f, got, base) ? -1 : 0;
}


/* The one key of a mapping that must hold exactly one of f's keys. */
static int one_of(P *p, const Node *m, const char *key, const char *where, const Field *f,
                  const Node **got)
{
    if (collect(p, m, key, where, f, got))
        return -1;
    int which = -1;
    for (int i = 0; f[i].key; i++) {
        if (got[i] && which >= 0)
            return spec_fail(p, got[i],
                        "'%s' has both '%s' and '%s'; give one", key, f[which].key, f[i].key);
        if (got[i])
            which = i;
    }
    if (which < 0) {
        char list[128] = "";
        for (int i = 0; f[i].key; i++)
            strcat(strcat(list, i ? ", " : ""), f[i].key);
        return spec_fail(p, m, "'%s' needs one of %s", key, list);
    }
    return which;
}

/* ---- shapes -------------------------------------------------------------- */

/* A q8 tensor of class wc reads its input in 32-value blocks. */
static int blocks(P *p, const Node *at, int wc, const char *what, long width)
{
    if (p->s->fmt[wc] == FMT_Q8 && width % 32)
        return spec_fail(p, at, "%s %ld is not a whole number of 32-value blocks (formats.%s is q8)",
                    what, width, class_names[wc]);
    return 0;
}

static int dim_blocks(P *p, int wc)
{
    return blocks(p, p->dim, wc, "dim", p->s->dim);
}

/* rope.dim (where given) is even and fits the rotated head width; without
 * it the whole head turns, so the head width is even. */
static int rope_fits(P *p, const Node *rope, const Rope *r, const char *head, int width)
{
    const Node *at = map_get(rope, "dim");
    if ((!at || !r->dim) && rope && width % 2)   /* the whole head turned */
        return spec_fail(p, rope, "rope rotates pairs of values, and %s %d is odd (an even rope dim turns part of "
                         "each head)", head, width);
    if (!at || !r->dim)
        return 0;
    if (r->dim % 2)
        return spec_fail(p, at, "rope dim %d is odd", r->dim);
    if (r->dim > width)
        return spec_fail(p, at, "rope dim %d is wider than the head (%s %d)", r->dim, head, width);
    return 0;
}

/* ---- sections ------------------------------------------------------------ */

#define F(T, m) offsetof(T, m)

static int sub_scaling(P *p, const Node *v, void *base);
static const Field scaling_fields[] = {
    {"type", T_ENUM, .off = F(Rope, scaling), .req = 1, .names = scale_names},
    {"factor", T_NUM, .off = F(Rope, factor), .lo = 1},
    {"low", T_NUM, .off = F(Rope, low)},
    {"high", T_NUM, .off = F(Rope, high)},
    {"orig", T_INT, .off = F(Rope, orig), .lo = 1},
    {"beta_fast", T_NUM, .off = F(Rope, beta_fast)},
    {"beta_slow", T_NUM, .off = F(Rope, beta_slow)},
    {"attn_factor", T_NUM, .off = F(Rope, attn_factor), .lo = 1},
    {"truncate", T_BOOL, .off = F(Rope, truncate)},
    {0},
};

/* What each scaling type needs: llama3 factor, low, high, orig; yarn factor
 * and orig; the others factor. */
static int scaling_needs(P *p, const Node *v, const Rope *r, const Node **got)
{
    static const char *const need[][5] = {
        [SCALE_LLAMA3] = {"factor", "low", "high", "orig"},
        [SCALE_YARN] = {"factor", "orig"},
        [SCALE_LINEAR] = {"factor"}, [SCALE_DYNAMIC] = {"factor"}, [SCALE_LONGROPE] = {"factor"},
    };
    for (int i = 0; need[r->scaling][i]; i++)
        if (!got[field_index(scaling_fields, need[r->scaling][i])])
            return spec_fail(p, v, "missing '%s' in 'scaling' (type %s needs it)",
                        need[r->scaling][i], scale_names[r->scaling]);
    if (r->scaling == SCALE_LLAMA3 && r->high <= r->low)
        return spec_fail(p, got[field_index(scaling_fields, "high")],
                    "'high' (%.10g) must exceed 'low' (%.10g)", r->high, r->low);
    return 0;
}

static int sub_scaling(P *p, const Node *v, void *base)
{
    Rope *r = base;
    const Node *got[MAX_FIELDS];
    r->beta_fast = 32;
    r->beta_slow = 1;
    r->truncate = 1;
    if (parse_map(p, v, "scaling", "in scaling", scaling_fields, r, got))
        return -1;
    if (scaling_needs(p, v, r, got))
        return -1;
    if (r->scaling == SCALE_YARN && !got[field_index(scaling_fields, "attn_factor")])
        r->attn_factor = r->factor > 1 ? 0.1 * log(r->factor) + 1 : 1;
    if (r->scaling != SCALE_YARN && !r->attn_factor)
        r->attn_factor = 1;
    return 0;
}

static int sub_pairing(P *p, const Node *v, void *base)
{
    static const Field f = {"pairing", T_ENUM, 0, .names = pairing_names};
    return get_enum(p, v, &f, &((Rope *)base)->interleaved);
}

static const Field rope_fields[] = {
    {"theta", T_NUM, .off = F(Rope, theta), .req = 1, .lo = 1},
    {"dim", T_INT, .off = F(Rope, dim), .lo = 1},
    {"pairing", T_SUB, .sub = sub_pairing},
    {"scaling", T_SUB, .sub = sub_scaling},
    {0},
};

static int parse_rope(P *p, const Node *v, Rope *r)
{
    const Node *got[MAX_FIELDS];
    return parse_map(p, v, "rope", "in rope", rope_fields, r, got);
}

static const Field bias_fields[] = {
    {"q", T_BOOL, .off = F(AttnSpec, q_bias)},
    {"k", T_BOOL, .off = F(AttnSpec, k_bias)},
    {"v", T_BOOL, .off = F(AttnSpec, v_bias)},
    {"o", T_BOOL, .off = F(AttnSpec, o_bias)},
    {0},
};

/* bias: true (q, k and v) or false, or a mapping of q, k, v, o. */
static int sub_bias(P *p, const Node *v, void *base)
{
    AttnSpec *t = base;
    const Node *got[MAX_FIELDS];
    if (v->kind == N_MAP)
        return parse_map(p, v, "bias", "in bias", bias_fields, t, got);
    int on;
    if (get_bool(p, v, "bias", &on))
        return -1;
    t->q_bias = t->k_bias = t->v_bias = on;
    return 0;
}

static int sub_attn_rope(P *p, const Node *v, void *base)
{
    return parse_rope(p, v, &((AttnSpec *)base)->rope);
}

static const Field attn_fields[] = {
    {"heads", T_INT, .off = F(AttnSpec, heads), .req = 1, .lo = 1},
    {"kv_heads", T_INT, .off = F(AttnSpec, kv_heads), .req = 1, .lo = 1},
    {"head_dim", T_INT, .off = F(AttnSpec, head_dim), .req = 1, .lo = 1},
    {"value_dim", T_INT, .off = F(AttnSpec, value_dim), .lo = 1},
    {"rope", T_SUB, .req = 1, .sub = sub_attn_rope},
    {"bias", T_SUB, .sub = sub_bias},
    {"qk_norm", T_BOOL, .off = F(AttnSpec, qk_norm)},
    {"softcap", T_NUM, .off = F(AttnSpec, softcap)},
    {"sinks", T_BOOL, .off = F(AttnSpec, sinks)},
    {"window", T_INT, .off = F(AttnSpec, window)},
    {"out_gate", T_BOOL, .off = F(AttnSpec, out_gate)},
    {"scale", T_NUM, .off = F(AttnSpec, scale), .lo = 1},
    {0},
};

static int sub_attention(P *p, const Node *v, void *base)
{
    LayerSpec *L = base;
    AttnSpec *t = &L->attn;
    const Node *got[MAX_FIELDS];
    L->mixer = MIX_ATTN;
    if (parse_map(p, v, "attention", "in attention", attn_fields, t, got))
        return -1;
    if (!t->value_dim)
        t->value_dim = t->head_dim;
    if (t->heads % t->kv_heads)
        return spec_fail(p, got[1], "heads %d are not a multiple of kv_heads %d", t->heads, t->kv_heads);
    if (rope_fits(p, got[4], &t->rope, "head_dim", t->head_dim) || dim_blocks(p, WC_ATTN))
        return -1;
    return blocks(p, got[3] ? got[3] : got[2], WC_ATTN, "attention heads*value_dim",
                  (long)t->heads * t->value_dim);
}

static int sub_latent_rope(P *p, const Node *v, void *base)
{
    return parse_rope(p, v, &((LatentSpec *)base)->rope);
}

static const Field latent_fields[] = {
    {"heads", T_INT, .off = F(LatentSpec, heads), .req = 1, .lo = 1},
    {"q_lora", T_INT, .off = F(LatentSpec, q_lora)},
    {"kv_lora", T_INT, .off = F(LatentSpec, kv_lora), .req = 1, .lo = 1},
    {"nope", T_INT, .off = F(LatentSpec, nope), .req = 1, .lo = 1},
    {"rope_dim", T_INT, .off = F(LatentSpec, rope_dim), .req = 1, .lo = 1},
    {"value_dim", T_INT, .off = F(LatentSpec, value_dim), .req = 1, .lo = 1},
    {"rope", T_SUB, .req = 1, .sub = sub_latent_rope},
    {"scale", T_NUM, .off = F(LatentSpec, scale), .lo = 1},
    {"norm_eps", T_NUM, .off = F(LatentSpec, norm_eps), .lo = 1},
    {0},
};

static int sub_latent(P *p, const Node *v, void *base)
{
    LayerSpec *L = base;
    LatentSpec *t = &L->latent;
    const Node *got[MAX_FIELDS];
    L->mixer = MIX_LATENT;
    t->norm_eps = 1e-6;
    if (parse_map(p, v, "latent", "in latent", latent_fields, t, got))
        return -1;
    if (t->rope_dim % 2)
        return spec_fail(p, got[4], "rope_dim %d is odd", t->rope_dim);
    if (rope_fits(p, got[6], &t->rope, "rope_dim", t->rope_dim) || dim_blocks(p, WC_ATTN))
        return -1;
    if (t->q_lora && blocks(p, got[1], WC_ATTN, "latent q_lora", t->q_lora))
        return -1;
    if (blocks(p, got[2], WC_ATTN, "latent kv_lora", t->kv_lora))
        return -1;
    return blocks(p, got[5], WC_ATTN, "latent heads*value_dim", (long)t->heads * t->value_dim);
}

static const Field delta_fields[] = {
    {"k_heads", T_INT, .off = F(DeltaSpec, k_heads), .req = 1, .lo = 1},
    {"v_heads", T_INT, .off = F(DeltaSpec, v_heads), .req = 1, .lo = 1},
    {"k_dim", T_INT, .off = F(DeltaSpec, k_dim), .req = 1, .lo = 1},
    {"v_dim", T_INT, .off = F(DeltaSpec, v_dim), .req = 1, .lo = 1},
    {"conv", T_INT, .off = F(DeltaSpec, conv), .req = 1, .lo = 2},
    {0},
};

static int sub_delta(P *p, const Node *v, void *base)
{
    LayerSpec *L = base;
    DeltaSpec *t = &L->delta;
    const Node *got[MAX_FIELDS];
    L->mixer = MIX_DELTA;
    if (parse_map(p, v, "delta", "in delta", delta_fields, t, got))
        return -1;
    if (t->v_heads % t->k_heads)
        return spec_fail(p, got[1], "v_heads %d are not a multiple of k_heads %d", t->v_heads,
                    t->k_heads);
    if (dim_blocks(p, WC_MIXER))
        return -1;
    return blocks(p, got[3], WC_MIXER, "delta v_heads*v_dim", (long)t->v_heads * t->v_dim);
}

static const Field conv_fields[] = {
    {"kernel", T_INT, .off = F(ConvSpec, kernel), .req = 1, .lo = 2},
    {"bias", T_BOOL, .off = F(ConvSpec, bias)},
    {0},
};

static int sub_conv(P *p, const Node *v, void *base)
{
    LayerSpec *L = base;
    const Node *got[MAX_FIELDS];
    L->mixer = MIX_CONV;
    if (parse_map(p, v, "conv", "in conv", conv_fields, &L->conv, got))
        return -1;
    return dim_blocks(p, WC_MIXER);
}

static const Field mixer_fields[] = {
    {"attention", T_SUB, .sub = sub_attention},
    {"latent", T_SUB, .sub = sub_latent},
    {"delta", T_SUB, .sub = sub_delta},
    {"conv", T_SUB, .sub = sub_conv},
    {0},
};

static int sub_mixer(P *p, const Node *v, void *base)
{
    const Node *got[MAX_FIELDS];
    int i = one_of(p, v, "mixer", "in mixer", mixer_fields, got);
    return i < 0 ? -1 : mixer_fields[i].sub(p, got[i], base);
}

static const Field dense_fields[] = {
    {"hidden", T_INT, .off = F(DenseSpec, hidden), .req = 1, .lo = 1},
    {"act", T_ENUM, .off = F(DenseSpec, act), .names = act_names},
    {"bias", T_BOOL, .off = F(DenseSpec, bias)},
    {0},
};

static int sub_dense(P *p, const Node *v, void *base)
{
    LayerSpec *L = base;
    DenseSpec *t = &L->dense;
    const Node *got[MAX_FIELDS];
    L->ffn = FFN_DENSE;
    if (parse_map(p, v, "dense", "in dense", dense_fields, t, got))
        return -1;
    if (t->act == ACT_OAI)
        return spec_fail(p, got[1], "act 'oai' is for moe only");
    if (dim_blocks(p, WC_FFN))
        return -1;
    return blocks(p, got[0], WC_FFN, "ffn hidden", t->hidden);
}

static const Field shared_fields[] = {
    {"hidden", T_INT, .off = F(MoeSpec, shared_hidden), .req = 1, .lo = 1},
    {"gate", T_BOOL, .off = F(MoeSpec, shared_gate)},
    {0},
};

/* The shared expert is a dense pair (class ffn); its gate reads x (router). */
static int sub_shared(P *p, const Node *v, void *base)
{
    MoeSpec *t = base;
    const Node *got[MAX_FIELDS];
    if (parse_map(p, v, "shared", "in shared", shared_fields, t, got) || dim_blocks(p, WC_FFN))
        return -1;
    if (blocks(p, got[0], WC_FFN, "shared expert hidden", t->shared_hidden))
        return -1;
    return t->shared_gate ? dim_blocks(p, WC_ROUTER) : 0;
}

static const Field moe_fields[] = {
    {"experts", T_INT, .off = F(MoeSpec, experts), .req = 1, .lo = 1},
    {"top_k", T_INT, .off = F(MoeSpec, top_k), .req = 1, .lo = 1},
    {"hidden", T_INT, .off = F(MoeSpec, hidden), .req = 1, .lo = 1},
    {"act", T_ENUM, .off = F(MoeSpec, act), .names = act_names},
    {"score", T_ENUM, .off = F(MoeSpec, score), .names = score_names},
    {"router_bias", T_BOOL, .off = F(MoeSpec, router_bias)},
    {"groups", T_INT, .off = F(MoeSpec, groups), .lo = 1},
    {"topk_groups", T_INT, .off = F(MoeSpec, topk_groups), .lo = 1},
    {"norm", T_BOOL, .off = F(MoeSpec, norm)},
    {"scale", T_NUM, .off = F(MoeSpec, scale), .lo = 1},
    {"expert_bias", T_BOOL, .off = F(MoeSpec, expert_bias)},
    {"alpha", T_NUM, .off = F(MoeSpec, alpha), .lo = 1},
    {"limit", T_NUM, .off = F(MoeSpec, limit), .lo = 1},
    {"shared", T_SUB, .sub = sub_shared},
    {0},
};
enum { MOE_EXPERTS, MOE_TOPK, MOE_HIDDEN, MOE_ACT, MOE_GROUPS = 6, MOE_TOPKG, MOE_ALPHA = 11, MOE_LIMIT };

static int moe_shape(P *p, const MoeSpec *t, const Node **got)
{
    if (t->top_k > t->experts)
        return spec_fail(p, got[MOE_TOPK], "top_k %d exceeds experts %d", t->top_k, t->experts);
    if (t->experts % t->groups)
        return spec_fail(p, got[MOE_GROUPS], "groups %d do not divide experts %d", t->groups,
                    t->experts);
    if (t->topk_groups > t->groups)
        return spec_fail(p, got[MOE_TOPKG], "topk_groups %d exceeds groups %d", t->topk_groups,
                    t->groups);
    if (t->top_k > t->experts / t->groups * t->topk_groups)
        return spec_fail(p, got[MOE_TOPK], "top_k %d exceeds the %d experts of %d kept groups",
                    t->top_k, t->experts / t->groups * t->topk_groups, t->topk_groups);
    for (int i = MOE_ALPHA; i <= MOE_LIMIT; i++)
        if (got[i] && t->act != ACT_OAI)
            return spec_fail(p, got[i], "'%s' is for act: oai only", moe_fields[i].key);
    if (dim_blocks(p, WC_EXPERT) || dim_blocks(p, WC_ROUTER))
        return -1;
    return blocks(p, got[MOE_HIDDEN], WC_EXPERT, "expert hidden", t->hidden);
}

static int sub_moe(P *p, const Node *v, void *base)
{
    LayerSpec *L = base;
    MoeSpec *t = &L->moe;
    const Node *got[MAX_FIELDS];
    L->ffn = FFN_MOE;
    t->scale = 1;
    t->groups = 1;
    if (parse_map(p, v, "moe", "in moe", moe_fields, t, got))
        return -1;
    if (!got[MOE_TOPKG])
        t->topk_groups = t->groups;
    if (t->act == ACT_OAI && !got[MOE_ALPHA])
        t->alpha = 1.702;
    if (t->act == ACT_OAI && !got[MOE_LIMIT])
        t->limit = 7.0;
    return moe_shape(p, t, got);
}

static const Field ffn_fields[] = {
    {"dense", T_SUB, .sub = sub_dense},
    {"moe", T_SUB, .sub = sub_moe},
    {0},
};

static int sub_ffn(P *p, const Node *v, void *base)
{
    const Node *got[MAX_FIELDS];
    int i = one_of(p, v, "ffn", "in ffn", ffn_fields, got);
    return i < 0 ? -1 : ffn_fields[i].sub(p, got[i], base);
}

static const Field layer_fields[] = {
    {"mixer", T_SUB, .req = 1, .sub = sub_mixer},
    {"ffn", T_SUB, .req = 1, .sub = sub_ffn},
    {"norm", T_ENUM, .off = F(LayerSpec, sandwich), .names = norm_names},
    {0},
};

/* One layer kind, defined at key k with value v. */
static int parse_layer(P *p, const Node *k, const Node *v, LayerSpec *L)
{
    const Node *got[MAX_FIELDS];
    L->kind = k->s;
    L->line = k->line;
    if (parse_map(p, v, k->s, "in a layer", layer_fields, L, got))
        return -1;
    if (L->sandwich == NORM_LAYERNORM)
        L->sandwich = SANDWICH_LAYERNORM;
    return 0;
}

/* ---- sizes: no tensor past what a program may declare ------------------ */

static double dmax(double a, double b) { return a > b ? a : b; }

/* The most values one of a layer's tensors (weights and states) holds. */
static double largest(const Spec *s, const LayerSpec *L)
{
    double d = s->dim, ctx = s->ctx, m = 0;
    const AttnSpec *A = &L->attn;
    const LatentSpec *M = &L->latent;
    const DeltaSpec *D = &L->delta;
    if (L->mixer == MIX_ATTN)
        m = dmax(dmax(2.0 * A->heads * A->head_dim, (double)A->heads * A->value_dim) * d,
                 (double)A->kv_heads * dmax(A->head_dim, A->value_dim) * dmax(d, ctx));
    else if (L->mixer == MIX_LATENT)
        m = dmax(dmax((double)M->heads * ((double)M->nope + M->rope_dim) * dmax(d, M->q_lora),
                      ((double)M->kv_lora + M->rope_dim) * dmax(d, ctx)),
                 (double)M->heads * dmax(dmax(M->nope, M->value_dim) * (double)M->kv_lora, M->value_dim * d));
    else if (L->mixer == MIX_DELTA)
        m = dmax((2.0 * D->k_heads * D->k_dim + (double)D->v_heads * D->v_dim) * dmax(d, D->conv),
                 (double)D->v_heads * D->v_dim * dmax(D->k_dim, d));
    else
        m = 3 * d * d;
    if (L->ffn == FFN_MOE)
        return dmax(m, dmax((double)L->moe.experts * L->moe.hidden, L->moe.shared_hidden) * d);
    return dmax(m, (double)L->dense.hidden * d);
}

/* A bound on the widest dimension (or attribute) a layer's programs
 * declare: its heads' widths side by side, as its projections and caches
 * hold them, counted in doubles and generously (no real layer comes near
 * LOGOS_MAXINT), so that the author's sums and products stay whole numbers
 * a program may hold. */
static double widest(const Spec *s, const LayerSpec *L)
{
    const AttnSpec *A = &L->attn;
    const LatentSpec *M = &L->latent;
    const DeltaSpec *D = &L->delta;
    double w = 0;
    if (L->mixer == MIX_ATTN)
        w = (2.0 * A->heads + 2.0 * A->kv_heads) * dmax(A->head_dim, A->value_dim);
    else if (L->mixer == MIX_LATENT)
        w = (double)M->heads * ((double)M->nope + M->rope_dim + M->value_dim + M->kv_lora) + M->kv_lora +
            M->rope_dim + M->q_lora;
    else if (L->mixer == MIX_DELTA)
        w = 2.0 * D->k_heads * D->k_dim + 2.0 * D->v_heads * D->v_dim + D->v_heads;
    else if (L->mixer == MIX_CONV)
        w = 3.0 * s->dim;
    if (L->ffn == FFN_MOE)
        return dmax(w, 2.0 * dmax(dmax(L->moe.hidden, L->moe.shared_hidden), L->moe.experts));
    return dmax(w, 2.0 * L->dense.hidden);
}

/* Every tensor stays within LOGOS_MAXVALUES values, and every width within
 * LOGOS_MAXINT. */
static int sizes_fit(P *p, const Node *top)
{
    const Spec *s = p->s;
    if ((double)s->vocab * s->dim > (double)LOGOS_MAXVALUES)
        return spec_fail(p, top, "vocab %d by dim %d is more than 2^40 values", s->vocab, s->dim);
    for (int k = 0; k < s->nkinds; k++) {
        const LayerSpec *L = &s->kinds[k];
        Node at = {.kind = N_SCALAR, .line = L->line, .col = 1};
        if (largest(s, L) > (double)LOGOS_MAXVALUES)
            return spec_fail(p, &at, "layer kind '%s' has a tensor of more than 2^40 values", L->kind);
        double wide = widest(s, L);
        if (wide > (double)LOGOS_MAXINT)
            return spec_fail(p, &at, "layer kind '%s' is %.0f values wide (its heads' widths side by side), past "
                             "%ld, the widest a program may declare", L->kind, wide, LOGOS_MAXINT);
    }
    return 0;
}

/* ---- the top level ------------------------------------------------------- */

static const Field norm_fields[] = {
    {"eps", T_NUM, .off = F(Spec, norm_eps), .req = 1, .lo = 1},
    {"offset", T_INT, .off = F(Spec, norm_offset), .hi = 1},
    {0},
};

static int sub_norm(P *p, const Node *v, void *base)
{
    const Node *got[MAX_FIELDS];
    return parse_map(p, v, "norm", "in norm", norm_fields, base, got);
}

static const Field embed_fields[] = {
    {"scale", T_NUM, .off = F(Spec, embed_scale), .lo = 1},
    {0},
};

static int sub_embed(P *p, const Node *v, void *base)
{
    const Node *got[MAX_FIELDS];
    return parse_map(p, v, "embed", "in embed", embed_fields, base, got);
}

static const Field head_fields[] = {
    {"tied", T_BOOL, .off = F(Spec, tied)},
    {"softcap", T_NUM, .off = F(Spec, logit_softcap)},
    {0},
};

static int sub_head(P *p, const Node *v, void *base)
{
    const Node *got[MAX_FIELDS];
    return parse_map(p, v, "head", "in head", head_fields, base, got);
}

/* formats: `default` first, then each class (-1 until given). */
typedef struct Formats {
    int def, c[WC_COUNT];
} Formats;

static const Field formats_fields[] = {
    {"default", T_ENUM, .off = F(Formats, def), .names = fmt_names},
    {"embed", T_ENUM, .off = F(Formats, c[WC_EMBED]), .names = fmt_names},
    {"head", T_ENUM, .off = F(Formats, c[WC_HEAD]), .names = fmt_names},
    {"attn", T_ENUM, .off = F(Formats, c[WC_ATTN]), .names = fmt_names},
    {"ffn", T_ENUM, .off = F(Formats, c[WC_FFN]), .names = fmt_names},
    {"expert", T_ENUM, .off = F(Formats, c[WC_EXPERT]), .names = fmt_names},
    {"router", T_ENUM, .off = F(Formats, c[WC_ROUTER]), .names = fmt_names},
    {"mixer", T_ENUM, .off = F(Formats, c[WC_MIXER]), .names = fmt_names},
    {0},
};

static int sub_formats(P *p, const Node *v, void *base)
{
    Spec *s = base;
    Formats f = {FMT_Q8, {-1, -1, -1, -1, -1, -1, -1}};
    const Node *got[MAX_FIELDS];
    if (parse_map(p, v, "formats", "in formats", formats_fields, &f, got))
        return -1;
    for (int i = 0; i < WC_COUNT; i++)
        s->fmt[i] = f.c[i] < 0 ? f.def : f.c[i];
    return 0;
}

enum { TOP_NAME, TOP_VOCAB, TOP_DIM, TOP_LAYERS, TOP_CTX, TOP_CACHE, TOP_NORM, TOP_EMBED, TOP_HEAD,
       TOP_FORMATS, TOP_LAYER, TOP_KINDS, TOP_PATTERN, TOP_FIRST, TOP_PER_LAYER };
static const char *const cache_names[] = {"f32", "f16", NULL};
static const Field top_fields[] = {
    [TOP_NAME] = {"name", T_STR, .off = F(Spec, name), .req = 1},
    [TOP_VOCAB] = {"vocab", T_INT, .off = F(Spec, vocab), .req = 1, .lo = 1},
    [TOP_DIM] = {"dim", T_INT, .off = F(Spec, dim), .req = 1, .lo = 1},
    [TOP_LAYERS] = {"layers", T_INT, .off = F(Spec, nlayers), .req = 1, .lo = 1, .hi = MAX_LAYERS},
    [TOP_CTX] = {"ctx", T_INT, .off = F(Spec, ctx), .req = 1, .lo = 1},
    [TOP_CACHE] = {"cache", T_ENUM, .off = F(Spec, cache_f16), .names = cache_names},
    [TOP_NORM] = {"norm", T_SUB, .req = 1, .sub = sub_norm},
    [TOP_EMBED] = {"embed", T_SUB, .sub = sub_embed},
    [TOP_HEAD] = {"head", T_SUB, .sub = sub_head},
    [TOP_FORMATS] = {"formats", T_SUB, .sub = sub_formats},
    [TOP_LAYER] = {"layer", T_NODE},
    [TOP_KINDS] = {"kinds", T_NODE},
    [TOP_PATTERN] = {"pattern", T_NODE},
    [TOP_FIRST] = {"first", T_NODE},
    [TOP_PER_LAYER] = {"per_layer", T_NODE},
    {0},
};

static const Section *sections(void)
{
    static const Section all[] = {
        {"at the top level", top_fields}, {"in norm", norm_fields},
        {"in embed", embed_fields}, {"in head", head_fields},
        {"in formats", formats_fields}, {"in a layer", layer_fields},
        {"in mixer", mixer_fields}, {"in attention", attn_fields},
        {"in latent", latent_fields}, {"in delta", delta_fields},
        {"in conv", conv_fields}, {"in ffn", ffn_fields}, {"in dense", dense_fields},
        {"in moe", moe_fields}, {"in shared", shared_fields}, {"in rope", rope_fields},
        {"in scaling", scaling_fields}, {"in bias", bias_fields}, {NULL, NULL},
    };
    return all;
}

/* ---- layouts: layer, or kinds with pattern (after first) or per_layer ------ */

typedef struct KindName {
    const char *name;
    int idx;
    const Node *at;
} KindName;

static int by_name(const void *x, const void *y)
{
    const KindName *a = x, *b = y;
    int c = strcmp(a->name, b->name);
    return c ? c : (a->at->line > b->at->line) - (a->at->line < b->at->line);
}

/* kinds: parse each, then sort their names for duplicates and lookups. */
static KindName *parse_kinds(P *p, const Node *m)
{
    Spec *s = p->s;
    if (want_map(p, m, "kinds"))
        return NULL;
    if (m->n == 0) {
        spec_fail(p, m, "'kinds' is empty");
        return NULL;
    }
    s->nkinds = m->n / 2;
    s->kinds = arena_alloc(p->a, (size_t)s->nkinds * sizeof *s->kinds);
    KindName *names = arena_alloc(p->a, (size_t)s->nkinds * sizeof *names);
    for (int i = 0; i < s->nkinds; i++) {
        const Node *k = m->kids[2 * i];
        if (k->kind != N_SCALAR || k->len == 0) {
            spec_fail(p, k, "a kind's name must be a word, got %s", spec_show(p, k));
            return NULL;
        }
        names[i] = (KindName){k->s, i, k};
    }
    qsort(names, (size_t)s->nkinds, sizeof *names, by_name);
    for (int i = 1; i < s->nkinds; i++)
        if (!strcmp(names[i].name, names[i - 1].name)) {
            spec_fail(p, names[i].at, "duplicate kind '%s' (first at line %d)", names[i].name,
                 names[i - 1].at->line);
            return NULL;
        }
    for (int i = 0; i < s->nkinds; i++)
        if (parse_layer(p, m->kids[2 * i], m->kids[2 * i + 1], &s->kinds[i]))
            return NULL;
    return names;
}

static int cmp_key(const void *key, const void *elem)
{
    return strcmp(key, ((const KindName *)elem)->name);
}

/* The kind indices a list of names gives, in `out` (n entries). */
static int name_list(P *p, const Node *v, const char *key, const KindName *names, int *out)
{
    if (v->kind != N_SEQ)
        return spec_fail(p, v, "expected a list of kind names for '%s', got %s", key, spec_show(p, v));
    for (int i = 0; i < v->n; i++) {
        const Node *e = v->kids[i];
        const KindName *k = e->kind == N_SCALAR
            ? bsearch(e->s, names, (size_t)p->s->nkinds, sizeof *names, cmp_key) : NULL;
        if (!k)
            return spec_fail(p, e, "'%s' names no kind: %s is not defined in 'kinds'", key,
                        spec_show(p, e));
        out[i] = k->idx;
    }
    return 0;
}

static int list_len(P *p, const Node *v, const char *key, int max, const char *rel)
{
    if (v->kind != N_SEQ)
        return spec_fail(p, v, "expected a list of kind names for '%s', got %s", key, spec_show(p, v));
    if (v->n == 0)
        return spec_fail(p, v, "'%s' is empty", key);
    if (rel[0] == '=' ? v->n != max : v->n > max)
        return spec_fail(p, v, "'%s' names %d layers, but 'layers' is %d", key, v->n, max);
    return 0;
}

/* first then pattern cyclically, or per_layer, into s->layer_kind. */
static int assign(P *p, const Node **got, const KindName *names)
{
    Spec *s = p->s;
    const Node *pat = got[TOP_PATTERN], *first = got[TOP_FIRST], *per = got[TOP_PER_LAYER];
    if (per)
        return list_len(p, per, "per_layer", s->nlayers, "=")
            || name_list(p, per, "per_layer", names, s->layer_kind) ? -1 : 0;
    int nf = 0;
    if (first) {
        if (list_len(p, first, "first", s->nlayers, "<=")
            || name_list(p, first, "first", names, s->layer_kind))
            return -1;
        nf = first->n;
    }
    int *cycle = arena_alloc(p->a, (size_t)(pat->n ? pat->n : 1) * sizeof *cycle);
    if (list_len(p, pat, "pattern", INT32_MAX, "<=") || name_list(p, pat, "pattern", names, cycle))
        return -1;
    for (int l = nf; l < s->nlayers; l++)
        s->layer_kind[l] = cycle[(l - nf) % pat->n];
    return 0;
}

static int kinds_layout(P *p, const Node *top, const Node **got)
{
    const Node *pat = got[TOP_PATTERN], *per = got[TOP_PER_LAYER];
    if (pat && per)
        return spec_fail(p, per, "give either 'pattern' or 'per_layer', not both");
    if (!pat && !per)
        return spec_fail(p, top, "'kinds' needs a 'pattern' or a 'per_layer'");
    if (got[TOP_FIRST] && per)
        return spec_fail(p, got[TOP_FIRST], "'first' goes with 'pattern', not 'per_layer'");
    const KindName *names = parse_kinds(p, got[TOP_KINDS]);
    if (!names || assign(p, got, names))
        return -1;
    int *used = arena_alloc(p->a, (size_t)p->s->nkinds * sizeof *used);
    for (int l = 0; l < p->s->nlayers; l++)
        used[p->s->layer_kind[l]] = 1;
    for (int i = 0; i < p->s->nkinds; i++)
        if (!used[i])
            return spec_fail(p, got[TOP_KINDS]->kids[2 * i],
                        "kind '%s' is defined but no layer uses it", p->s->kinds[i].kind);
    return 0;
}

static int layout(P *p, const Node *top, const Node **got)
{
    Spec *s = p->s;
    s->layer_kind = arena_alloc(p->a, (size_t)s->nlayers * sizeof *s->layer_kind);
    if (got[TOP_LAYER] && got[TOP_KINDS])
        return spec_fail(p, got[TOP_KINDS], "give either 'layer' or 'kinds', not both");
    if (got[TOP_KINDS])
        return kinds_layout(p, top, got);
    if (!got[TOP_LAYER])
        return spec_fail(p, top, "missing 'layer' (or 'kinds' with 'pattern' or 'per_layer')");
    for (int i = TOP_PATTERN; i <= TOP_PER_LAYER; i++)
        if (got[i])
            return spec_fail(p, got[i], "'%s' goes with 'kinds', not 'layer'", top_fields[i].key);
    s->nkinds = 1;
    s->kinds = arena_alloc(p->a, sizeof *s->kinds);
    return parse_layer(p, top->kids[key_at(top, "layer")], got[TOP_LAYER], s->kinds);
}

static int parse_top(P *p, const Node *top)
{
    Spec *s = p->s;
    const Node *got[MAX_FIELDS];
    if (top->kind != N_MAP)
        return spec_fail(p, top, "the top level must be a mapping of keys, got %s", spec_show(p, top));
    s->embed_scale = 1;
    for (int i = 0; i < WC_COUNT; i++)
        s->fmt[i] = FMT_Q8;
    if (collect(p, top, "the spec", "at the top level", top_fields, got))
        return -1;
    p->dim = got[TOP_DIM];
    if (fill(p, top, "at the top level", top_fields, got, s) || dim_blocks(p, WC_EMBED))
        return -1;
    if (!s->tied && dim_blocks(p, WC_HEAD))
        return -1;
    return layout(p, top, got) || sizes_fit(p, top);
}

Spec *spec_load(Arena *a, const char *path)
{
    Src *src = src_read(a, path);
    return src ? spec_parse(a, src) : NULL;
}

Spec *spec_parse(Arena *a, const Src *src)
{
    P p = {.a = a, .src = src};
    p.s = arena_alloc(a, sizeof *p.s);
    p.s->file = p.src->name;
    const Node *top = spec_read_yaml(&p);
    if (!top || parse_top(&p, top))
        return NULL;
    return p.s;
}

const LayerSpec *spec_layer(const Spec *s, int l)
{
    ASSERT(l >= 0 && l < s->nlayers);
    return &s->kinds[s->layer_kind[l]];
}

/* ---- the seed's check (check_tp is in spec_check.c) ---------------------------- */

const char *spec_not_yet(Arena *a, const Spec *s, int l)
{
    const LayerSpec *L = spec_layer(s, l);
    if (L->sandwich == SANDWICH_LAYERNORM)
        return "norm 'layernorm' (a LayerNorm) is not in the language yet";
    const Rope *r = L->mixer == MIX_ATTN ? &L->attn.rope
        : L->mixer == MIX_LATENT ? &L->latent.rope : NULL;
    if (r && r->scaling > SCALE_YARN)
        return arena_printf(a, "rope scaling '%s' is not in the language yet",
                            scale_names[r->scaling]);
    int act = L->ffn == FFN_DENSE ? L->dense.act : L->moe.act;
    if (act > ACT_OAI)
        return arena_printf(a, "act '%s' is not in the language yet", act_names[act]);
    return NULL;
}
