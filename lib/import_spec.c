/* import_spec.c — a Cfg written as a ModelSpec (man5/logos-spec.5): the
 * top level, the formats (a class whose input widths are not whole 32-value
 * blocks stays f32), and the layers as kinds (a mixer, a feed-forward block
 * and whether the layer slides) laid out as one layer, a pattern after some
 * first layers, or a list per layer. */
#include <math.h>
#include <string.h>

#include "import.h"

static const char *fnum(Arena *a, double v)
{
    return arena_printf(a, "%.9g", v);
}

static const char *yes(int b)
{
    return b ? "true" : "false";
}

/* ---- a layer's mixer and feed-forward block ---- */

/* nl: a line break with the indentation of a flow mapping's continuation. */
static const char *rope_yaml(Arena *a, const Cfg *g, const CRope *r, int partial, const char *nl)
{
    const char *s = arena_printf(a, "theta: %s", fnum(a, r->theta));
    if (partial && g->rot && g->rot != g->head_dim)
        s = arena_printf(a, "%s, dim: %ld", s, g->rot);
    if ((g->interleaved && !g->unpermute) || g->paired)
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
        s = arena_printf(a, "%s,%sbias: {q: %s, k: %s, v: %s, o: %s}", s, nl, yes(g->q_bias), yes(g->k_bias),
                         yes(g->v_bias), yes(g->o_bias));
    if (g->qk_norm)
        s = arena_printf(a, "%s, qk_norm: true", s);
    if (g->out_gate)
        s = arena_printf(a, "%s, out_gate: true", s);
    if (g->attn_softcap)
        s = arena_printf(a, "%s, softcap: %s", s, fnum(a, g->attn_softcap));
    if (g->sinks)
        s = arena_printf(a, "%s, sinks: true", s);
    if (sliding)
        s = arena_printf(a, "%s, window: %ld", s, g->window);
    if (g->scale && fabs(g->scale * sqrt((double)g->head_dim) - 1) > 1e-12)
        s = arena_printf(a, "%s, scale: %s", s, fnum(a, g->scale));
    return arena_printf(a, "attention: {%s,%srope: {%s}}", s, nl, rope_yaml(a, g, &g->rope[sliding], 1, nl));
}

static const char *latent_yaml(Arena *a, const Cfg *g, const char *nl)
{
    const char *s = arena_printf(a, "heads: %ld, q_lora: %ld, kv_lora: %ld, nope: %ld, rope_dim: %ld, value_dim: %ld",
                                 g->heads, g->q_lora, g->kv_lora, g->nope, g->rope_dim, g->v_dim);
    if (fabs(g->latent_scale * sqrt((double)(g->nope + g->rope_dim)) - 1) > 1e-12)
        s = arena_printf(a, "%s,%sscale: %s", s, nl, fnum(a, g->latent_scale));
    return arena_printf(a, "latent: {%s,%srope: {%s}}", s, nl, rope_yaml(a, g, &g->rope[0], 0, nl));
}

static const char *mixer_yaml(Arena *a, const Cfg *g, int mixer, int sliding, const char *nl)
{
    switch (mixer) {
    case MIX_LATENT: return latent_yaml(a, g, nl);
    case MIX_DELTA:
        return arena_printf(a, "delta: {k_heads: %ld, v_heads: %ld, k_dim: %ld, v_dim: %ld, conv: %ld}", g->dk_heads,
                            g->dv_heads, g->dk_dim, g->dv_dim, g->dconv);
    case MIX_CONV: return arena_printf(a, "conv: {kernel: %ld, bias: %s}", g->conv_kernel, yes(g->conv_bias));
    default: return attn_yaml(a, g, sliding, nl);
    }
}

static const char *moe_yaml(Arena *a, const Cfg *g, const char *nl)
{
    if (g->family == FAM_GPTOSS)
        return arena_printf(a, "moe: {experts: %ld, top_k: %ld, hidden: %ld, act: oai, alpha: %s, limit: %s,%s"
                            "score: topk_softmax, router_bias: true, expert_bias: true}",
                            g->experts, g->top_k, g->moe_hidden, fnum(a, g->oai_alpha), fnum(a, g->oai_limit), nl);
    const char *s = arena_printf(a, "experts: %ld, top_k: %ld, hidden: %ld, act: %s", g->experts, g->top_k,
                                 g->moe_hidden, g->act == ACT_GELU_TANH ? "gelu_tanh" : "silu");
    if (g->groups)
        s = arena_printf(a, "%s,%sgroups: %ld, topk_groups: %ld", s, nl, g->groups, g->topk_groups);
    if (g->moe_norm)
        s = arena_printf(a, "%s, norm: true", s);
    if (g->moe_scale && g->moe_scale != 1)
        s = arena_printf(a, "%s, scale: %s", s, fnum(a, g->moe_scale));
    if (g->shared_hidden)
        s = arena_printf(a, "%s,%sshared: {hidden: %ld%s}", s, nl, g->shared_hidden, g->shared_gate ? ", gate: true" : "");
    return arena_printf(a, "moe: {%s}", s);
}

static const char *ffn_yaml(Arena *a, const Cfg *g, int moe, const char *nl)
{
    if (moe)
        return moe_yaml(a, g, nl);
    return arena_printf(a, "dense: {hidden: %ld, act: %s}", g->hidden, g->act == ACT_GELU_TANH ? "gelu_tanh" : "silu");
}

/* ---- the layers' kinds ---- */

typedef struct Kind {
    int mixer, moe, sliding;
    const char *name;
} Kind;

static int kind_key(const Cfg *g, long l)
{
    return g->mixer[l] * 4 + g->moe[l] * 2 + g->sliding[l];
}

static const char *mixer_word(const Kind *k, long nsliding)
{
    static const char *words[] = {"attn", "latent", "delta", "conv"};
    if (k->mixer == MIX_ATTN && nsliding)
        return k->sliding ? "sliding" : "full";
    return words[k->mixer];
}

/* The distinct kinds, ordered by mixer, feed-forward and window, named by
 * their mixer ("full" and "sliding" where layers slide), by their
 * feed-forward block where the mixer is the same, or both. */
static int kinds_of(Arena *a, const Cfg *g, Kind *k)
{
    int seen[16] = {0}, n = 0;
    long nsliding = 0;
    for (long l = 0; l < g->layers; l++) {
        seen[kind_key(g, l)] = 1;
        nsliding += g->sliding[l];
    }
    for (int key = 0; key < 16; key++)
        if (seen[key])
            k[n++] = (Kind){key / 4, key / 2 % 2, key % 2, NULL};
    int same_mixer = 1;
    for (int i = 1; i < n; i++)
        same_mixer &= !strcmp(mixer_word(&k[i], nsliding), mixer_word(&k[0], nsliding));
    for (int i = 0; i < n; i++) {
        const char *w = mixer_word(&k[i], nsliding), *f = k[i].moe ? "moe" : "dense";
        int clash = 0;
        for (int o = 0; o < n; o++)
            clash |= o != i && !strcmp(mixer_word(&k[o], nsliding), w);
        k[i].name = !clash ? w : same_mixer ? f : arena_printf(a, "%s_%s", w, f);
    }
    return n;
}

static const char *layer_yaml(Arena *a, const Cfg *g, const Kind *k, const char *ind)
{
    const char *nl = arena_printf(a, "\n%s      ", ind);
    const char *s = arena_printf(a, "%smixer:\n%s  %s\n%sffn:\n%s  %s\n", ind, ind,
                                 mixer_yaml(a, g, k->mixer, k->sliding, nl), ind, ind, ffn_yaml(a, g, k->moe, nl));
    return g->sandwich ? arena_printf(a, "%s%snorm: sandwich\n", s, ind) : s;
}

/* The shortest period of the layers' kinds from layer `from` on, or 0 past 8. */
static long period(const Cfg *g, long from)
{
    for (long p = 1; p <= 8 && from + p <= g->layers; p++) {
        long l = from + p;
        while (l < g->layers && kind_key(g, l) == kind_key(g, from + (l - from) % p))
            l++;
        if (l == g->layers)
            return p;
    }
    return 0;
}

/* "key: [a, b, ...]" of layers [from, to), eight names a line. */
static const char *names_yaml(Arena *a, const Cfg *g, const Kind *k, int nk, const char *key, long from, long to)
{
    const char *s = arena_printf(a, "%s: [", key);
    for (long l = from; l < to; l++) {
        const char *name = "";
        for (int i = 0; i < nk; i++)
            if (kind_key(g, l) == k[i].mixer * 4 + k[i].moe * 2 + k[i].sliding)
                name = k[i].name;
        s = arena_printf(a, "%s%s%s", s, l > from ? ((l - from) % 8 ? ", " : ",\n  ") : "", name);
    }
    return arena_printf(a, "%s]\n", s);
}

static const char *layout_yaml(Arena *a, const Cfg *g)
{
    Kind k[16];
    int nk = kinds_of(a, g, k);
    if (nk == 1)
        return arena_printf(a, "layer:\n%s", layer_yaml(a, g, &k[0], "  "));
    const char *s = "kinds:\n";
    for (int i = 0; i < nk; i++)
        s = arena_printf(a, "%s  %s:\n%s", s, k[i].name, layer_yaml(a, g, &k[i], "    "));
    long first = 0, p = 0;   /* the fewest names: first layers, then a pattern */
    for (long f = 0; f <= 8 && f < g->layers; f++) {
        long q = period(g, f);
        if (q && (!p || f + q < first + p)) {
            first = f;
            p = q;
        }
    }
    if (!p)
        return arena_printf(a, "%s%s", s, names_yaml(a, g, k, nk, "per_layer", 0, g->layers));
    if (first)
        s = arena_printf(a, "%s%s", s, names_yaml(a, g, k, nk, "first", 0, first));
    return arena_printf(a, "%s%s", s, names_yaml(a, g, k, nk, "pattern", first, first + p));
}

/* ---- the formats ---- */

static const char *formats_yaml(Arena *a, const Cfg *g, int fmt)
{
    if (fmt == FMT_F32 || g->dim % 32)
        return "{default: f32}";
    int ffn = 0, expert = 0, attn = 0, mixer = 0;
    for (long l = 0; l < g->layers; l++) {
        ffn |= g->moe[l] ? g->shared_hidden % 32 != 0 : g->hidden % 32 != 0;
        expert |= g->moe[l] && g->moe_hidden % 32;
        if (g->mixer[l] == MIX_ATTN)
            attn |= g->heads * g->head_dim % 32 != 0;
        if (g->mixer[l] == MIX_LATENT)
            attn |= g->q_lora % 32 || g->kv_lora % 32 || g->heads * g->v_dim % 32;
        if (g->mixer[l] == MIX_DELTA)
            mixer |= g->dv_heads * g->dv_dim % 32 != 0;
    }
    return arena_printf(a, "{default: q8, router: f32%s%s%s%s}", ffn ? ", ffn: f32" : "", expert ? ", expert: f32" : "",
                        attn ? ", attn: f32" : "", mixer ? ", mixer: f32" : "");
}

char *cfg_spec_yaml(Arena *a, const Cfg *g, int fmt)
{
    const char *s = arena_printf(a, "# written by logos-import (%s)\nname: %s\nvocab: %ld\ndim: %ld\nlayers: %ld\n"
                                 "ctx: %ld\nnorm: {eps: %s%s}\n", family_name(g->family), g->name, g->vocab, g->dim,
                                 g->layers, g->ctx, fnum(a, g->eps), g->norm_offset ? ", offset: 1" : "");
    if (g->embed_scale && g->embed_scale != 1)
        s = arena_printf(a, "%sembed: {scale: %s}\n", s, fnum(a, g->embed_scale));
    s = arena_printf(a, "%shead: {tied: %s", s, yes(g->tied));
    if (g->final_softcap)
        s = arena_printf(a, "%s, softcap: %s", s, fnum(a, g->final_softcap));
    s = arena_printf(a, "%s}\nformats: %s\n", s, formats_yaml(a, g, fmt));
    return arena_printf(a, "%s%s", s, layout_yaml(a, g));
}
