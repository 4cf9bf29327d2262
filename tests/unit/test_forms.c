/* test_forms.c — the forms of the authoring seed agree with each other on
 * the CPU reference, for every tiny spec in examples/tiny (every family):
 * forward's logits equal decode_step's at position 1; T decode steps equal
 * one prefill chunk (logits and caches), a chunk then steps equals steps all
 * along, and a chunk may start after steps; a batch of B sequences at
 * different positions equals B single steps (logits and caches); the cut
 * forms chained equal the whole form (decode, prefill, batch, forward).
 * Weights are synthetic (random, nonzero); relative error below 1e-5.
 * Prints TAP lines; run from the repository root. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"
#include "progtext.h"
#include "tiny.h"

enum { SEED = 7, T = 5, B = 3, LONG = 24 };
static const double TOL = 1e-5;
static int ntest, nfail;

static void ok(int pass, const char *fmt, const char *spec, const char *what)
{
    ntest++;
    if (!pass)
        nfail++;
    printf("%sok %d - %s: ", pass ? "" : "not ", ntest, spec);
    printf(fmt, what);
    putchar('\n');
}

/* ---- programs ---- */

typedef struct Ctx {
    Arena *a;
    const Spec *s;
    Weights *w[512];
    int nw;
} Ctx;

static Prog *prog(Ctx *c, const char *form, int layer, int batch)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int st = author(c->a, c->s, form, layer, batch, 0, m);
    fclose(m);
    ASSERT(st == 0);
    Prog *p = prog_named(c->a, form, text);
    free(text);
    return p;
}

static void bind(Ctx *c, Prog *p, Env *env)
{
    ASSERT(c->nw < 512);
    ASSERT(weights_bind(&c->w[c->nw++], p, env, NULL, SEED) == 0);
}

static void set_i32(Env *env, const char *name, const int32_t *v, int n, int vector)
{
    long d = n;
    Buf *b = env_alloc(env, name, T_I32, vector, &d);
    memcpy(b->i, v, sizeof *v * (size_t)n);
}

static void run(Ctx *c, Prog *p, Env *env)
{
    bind(c, p, env);
    ASSERT(ref_run(p, env) == 0);
}

static float *copy(Env *env, const char *name, long *n)
{
    Buf *b = env_get(env, name);
    ASSERT(b && b->f);
    float *f = malloc(sizeof *f * (size_t)b->n);
    memcpy(f, b->f, sizeof *f * (size_t)b->n);
    *n = b->n;
    return f;
}

/* Compares every state the program declares in two envs (names in e2 may
 * carry a suffix); returns the largest relative error. */
static double states(const Prog *p, Env *e1, Env *e2, const char *suffix)
{
    double worst = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_STATE)
            continue;
        char name[128];
        snprintf(name, sizeof name, "%s%s", d->name, suffix);
        Buf *a = env_get(e1, d->name), *b = env_get(e2, name);
        ASSERT(a && b && a->n == b->n);
        worst = fmax(worst, rel(a->f, b->f, a->n));
    }
    return worst;
}

static int32_t toks[LONG + 8];

static void step(Ctx *c, Prog *p, Env *env, int32_t tok, int32_t pos)
{
    set_i32(env, "tok", &tok, 1, 0);
    set_i32(env, "pos", &pos, 1, 0);
    run(c, p, env);
}

static void chunk(Ctx *c, Prog *p, Env *env, const int32_t *ids, int n, int32_t pos0)
{
    set_i32(env, "toks", ids, n, 1);
    set_i32(env, "pos0", &pos0, 1, 0);
    run(c, p, env);
}

/* ---- the checks ---- */

static void forward_vs_step(Ctx *c, const char *name)
{
    Env *e1 = env_new(), *e2 = env_new();
    int32_t one = 1;
    step(c, prog(c, "decode_step", -1, 0), e1, toks[0], 1);
    set_i32(e2, "tok", &toks[0], 1, 0);
    set_i32(e2, "pos", &one, 1, 0);
    run(c, prog(c, "decode_embed", -1, 0), e2);
    run(c, prog(c, "forward", -1, 0), e2);
    long n;
    float *a = copy(e1, "logits", &n), *b = copy(e2, "logits", &n);
    ok(rel(b, a, n) < TOL, "%s", name, "forward's logits equal decode_step's at position 1");
    free(a);
    free(b);
    env_free(e1);
    env_free(e2);
}

/* A chunk of n tokens (longer than the tiny specs' windows of 16 when n is
 * LONG) against n steps. */
static void long_chunk(Ctx *c, const char *name, int n)
{
    Prog *ps = prog(c, "decode_step", -1, 0), *pc = prog(c, "prefill", -1, 0);
    Env *e1 = env_new(), *e2 = env_new();
    for (int t = 0; t < n; t++)
        step(c, ps, e1, toks[t], t + 1);
    chunk(c, pc, e2, toks, n, 1);
    long k;
    float *a = copy(e1, "logits", &k), *b = copy(e2, "logits", &k);
    ok(rel(b, a, k) < TOL && states(ps, e1, e2, "") < TOL, "%s", name,
       "24 decode steps and a chunk of 24 tokens (past a window of 16) agree");
    free(a);
    free(b);
    env_free(e1);
    env_free(e2);
}

static void steps_vs_chunk(Ctx *c, const char *name)
{
    Prog *ps = prog(c, "decode_step", -1, 0), *pc = prog(c, "prefill", -1, 0);
    Env *e1 = env_new(), *e2 = env_new(), *e3 = env_new();
    for (int t = 0; t < T; t++)
        step(c, ps, e1, toks[t], t + 1);
    chunk(c, pc, e2, toks, T, 1);
    /* steps, then a chunk that starts after them */
    step(c, ps, e3, toks[0], 1);
    step(c, ps, e3, toks[1], 2);
    chunk(c, pc, e3, toks + 2, T - 2, 3);
    long n;
    float *a = copy(e1, "logits", &n), *b = copy(e2, "logits", &n), *d = copy(e3, "logits", &n);
    ok(rel(b, a, n) < TOL && states(ps, e1, e2, "") < TOL, "%s", name,
       "T decode steps and one prefill chunk leave the same caches and last logits");
    ok(rel(d, a, n) < TOL && states(ps, e1, e3, "") < TOL, "%s", name,
       "steps then a chunk from position 3 equal steps all along");
    int agree = 1;
    for (int t = T; t < T + 3; t++) {
        step(c, ps, e1, toks[t], t + 1);
        step(c, ps, e2, toks[t], t + 1);
        free(a);
        free(b);
        a = copy(e1, "logits", &n);
        b = copy(e2, "logits", &n);
        agree &= rel(b, a, n) < TOL && states(ps, e1, e2, "") < TOL;
    }
    ok(agree, "%s", name, "a chunk followed by steps equals steps all along");
    free(a);
    free(b);
    free(d);
    env_free(e1);
    env_free(e2);
    env_free(e3);
}

/* Copies every state of p from src into dst under NAME_s{b}. */
static void move_states(const Prog *p, Env *src, Env *dst, int b)
{
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_STATE)
            continue;
        Buf *s = env_get(src, d->name);
        char name[128];
        snprintf(name, sizeof name, "%s_s%d", d->name, b);
        Buf *t = env_alloc(dst, name, T_F32, s->rank, s->d);
        memcpy(t->f, s->f, sizeof *s->f * (size_t)s->n);
    }
}

static void batch_vs_steps(Ctx *c, const char *name)
{
    Prog *ps = prog(c, "decode_step", -1, 0), *pb = prog(c, "decode_batch", -1, B);
    Env *single[B], *eb = env_new();
    int32_t next[B];
    for (int b = 0; b < B; b++) {   /* sequence b has b + 1 tokens of history */
        single[b] = env_new();
        for (int t = 0; t <= b; t++)
            step(c, ps, single[b], toks[b + t], t + 1);
        move_states(ps, single[b], eb, b);
        next[b] = toks[7 + b];
        int32_t pos = b + 2;
        set_i32(eb, arena_printf(c->a, "pos_s%d", b), &pos, 1, 0);
    }
    set_i32(eb, "toks", next, B, 1);
    run(c, pb, eb);
    double worst = 0;
    Buf *lb = env_get(eb, "logits");
    long v = lb->n / B;
    for (int b = 0; b < B; b++) {
        step(c, ps, single[b], next[b], b + 2);
        Buf *ls = env_get(single[b], "logits");
        worst = fmax(worst, rel(lb->f + b * v, ls->f, v));
        char sfx[16];
        snprintf(sfx, sizeof sfx, "_s%d", b);
        worst = fmax(worst, states(ps, single[b], eb, sfx));
        env_free(single[b]);
    }
    ok(worst < TOL, "%s", name, "decode_batch of 3 sequences at positions 2, 3, 4 equals 3 single steps");
    env_free(eb);
}

/* Chains cut forms: the decode step's, then the forward's, the prefill's and
 * the batch's, each against its whole form. */
static void decode_chain(Ctx *c, const char *name)
{
    Prog *whole = prog(c, "decode_step", -1, 0), *embed = prog(c, "decode_embed", -1, 0);
    Prog *head = prog(c, "decode_head", -1, 0), *layers[64];
    int L = c->s->nlayers;
    ASSERT(L <= 64);
    for (int l = 0; l < L; l++)
        layers[l] = prog(c, "decode_layer", l, 0);
    Env *e1 = env_new(), *e2 = env_new();
    double worst = 0;
    for (int t = 0; t < 3; t++) {
        step(c, whole, e1, toks[t], t + 1);
        int32_t pos = t + 1;
        set_i32(e2, "tok", &toks[t], 1, 0);
        set_i32(e2, "pos", &pos, 1, 0);
        run(c, embed, e2);
        for (int l = 0; l < L; l++)
            run(c, layers[l], e2);
        run(c, head, e2);
        long n;
        float *a = copy(e1, "logits", &n), *b = copy(e2, "logits", &n);
        worst = fmax(worst, rel(b, a, n));
        free(a);
        free(b);
    }
    ok(worst < TOL && states(whole, e1, e2, "") < TOL, "%s", name,
       "decode_embed, each decode_layer and decode_head chained equal decode_step");
    env_free(e1);
    env_free(e2);
}

static void forward_chain(Ctx *c, const char *name)
{
    Env *e1 = env_new(), *e2 = env_new();
    int32_t one = 1;
    for (int k = 0; k < 2; k++) {
        Env *e = k ? e2 : e1;
        set_i32(e, "tok", &toks[1], 1, 0);
        set_i32(e, "pos", &one, 1, 0);
        run(c, prog(c, "decode_embed", -1, 0), e);
    }
    run(c, prog(c, "forward", -1, 0), e1);
    for (int l = 0; l < c->s->nlayers; l++)
        run(c, prog(c, "layer", l, 0), e2);
    run(c, prog(c, "head", -1, 0), e2);
    long n;
    float *a = copy(e1, "logits", &n), *b = copy(e2, "logits", &n);
    ok(rel(b, a, n) < TOL, "%s", name, "each layer and head chained equal forward");
    free(a);
    free(b);
    env_free(e1);
    env_free(e2);
}

static void prefill_chain(Ctx *c, const char *name)
{
    Prog *whole = prog(c, "prefill", -1, 0);
    Env *e1 = env_new(), *e2 = env_new();
    chunk(c, whole, e1, toks, T, 1);
    chunk(c, prog(c, "prefill_embed", -1, 0), e2, toks, T, 1);
    for (int l = 0; l < c->s->nlayers; l++)
        run(c, prog(c, "stacked_layer", l, 0), e2);
    run(c, prog(c, "prefill_head", -1, 0), e2);
    long n;
    float *a = copy(e1, "logits", &n), *b = copy(e2, "logits", &n);
    ok(rel(b, a, n) < TOL && states(prog(c, "decode_step", -1, 0), e1, e2, "") < TOL, "%s", name,
       "prefill_embed, each stacked_layer and prefill_head chained equal prefill");
    free(a);
    free(b);
    env_free(e1);
    env_free(e2);
}

static void batch_chain(Ctx *c, const char *name)
{
    Env *e1 = env_new(), *e2 = env_new();
    int32_t ids[B] = {11, 22, 33};
    for (int k = 0; k < 2; k++) {
        Env *e = k ? e2 : e1;
        set_i32(e, "toks", ids, B, 1);
        for (int b = 0; b < B; b++) {
            int32_t one = 1;
            set_i32(e, arena_printf(c->a, "pos_s%d", b), &one, 1, 0);
        }
    }
    run(c, prog(c, "decode_batch", -1, B), e1);
    run(c, prog(c, "decode_batch_embed", -1, B), e2);
    for (int l = 0; l < c->s->nlayers; l++)
        run(c, prog(c, "stacked_layer", l, B), e2);
    run(c, prog(c, "decode_batch_head", -1, B), e2);
    long n;
    float *a = copy(e1, "logits", &n), *b = copy(e2, "logits", &n);
    ok(rel(b, a, n) < TOL, "%s", name,
       "decode_batch_embed, each stacked_layer of batch rows and decode_batch_head chained equal decode_batch");
    free(a);
    free(b);
    env_free(e1);
    env_free(e2);
}

static void family(const char *path)
{
    Ctx c = {.a = arena_new()};
    c.s = spec_load(c.a, path);
    ASSERT(c.s);
    const char *name = c.s->name;
    forward_vs_step(&c, name);
    steps_vs_chunk(&c, name);
    long_chunk(&c, name, LONG);
    batch_vs_steps(&c, name);
    decode_chain(&c, name);
    forward_chain(&c, name);
    prefill_chain(&c, name);
    batch_chain(&c, name);
    for (int i = 0; i < c.nw; i++)
        weights_close(c.w[i]);
    arena_free(c.a);
}

int main(void)
{
    diag_tool = "test_forms";
    for (int i = 0; i < LONG + 8; i++)
        toks[i] = (int32_t)((i * 97 + 3) % 251);
    char *files[64];
    int n = tiny_specs(files, 64);
    if (n < 0) {
        printf("not ok 1 - examples/tiny: run from the repository root\n");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        family(files[i]);
        free(files[i]);
    }
    printf("1..%d\n", ntest);
    return nfail != 0;
}
