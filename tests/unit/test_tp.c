/* test_tp.c — the tensor-parallel forms run as N simulated chips on the CPU
 * reference (lib/tp.c) agree with the single-chip forms, for every tiny
 * spec check_tp accepts (examples/tiny) and for a wide variant of each
 * (every class f32, 8 heads and 4 kv heads, interleaved partial rotation,
 * an output gate, dense biases) that splits at more widths; at each width
 * of 1, 2, 4 and 8 that check_tp accepts:
 *   - tp_decode_step, step after step, equals decode_step (logits, next
 *     token); every chip's logits are the same to the bit; each chip's KV
 *     caches hold its kv heads' part of the single chip's;
 *   - tp_decode_batch of 3 sequences equals decode_batch;
 *   - decode_embed, each tp_decode_layer and decode_head chained equal
 *     decode_step; decode_batch_embed, each tp_stacked_layer and
 *     decode_batch_head chained equal decode_batch;
 *   - chips bound to the whole weight files (weights_write_synthetic of the
 *     single-chip program) compute what decode_step does.
 * And what is refused, with its exact message: a whole file of a part's
 * size, a split program run as one chip or bound as one, and an input error
 * on every chip (reported once, not once a chip).
 * Weights are synthetic (random, nonzero); logits within 1e-5 relative to
 * their largest magnitude. Prints TAP lines (the worst agreement of each
 * spec and width as a comment); run from the repository root. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logos.h"
#include "progtext.h"
#include "tiny.h"

enum { SEED = 11, STEPS = 4, B = 3, MAXCHIPS = 8 };
static const double TOL = 1e-5;
static int ntest, nfail;

static void ok(int pass, const char *spec, int chips, const char *what)
{
    ntest++;
    nfail += !pass;
    printf("%sok %d - %s at %d chips: %s\n", pass ? "" : "not ", ntest, spec, chips, what);
}

/* ---- programs, weights and runs ---- */

typedef struct Ctx {
    Arena *a;
    const Spec *s;
    int chips;
    Weights **w;
    int nw, cw;
    double worst;   /* the largest relative difference of logits seen */
} Ctx;

static Prog *prog(Ctx *c, const char *form, int layer, int chips)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int st = author_tp(c->a, c->s, form, layer, B, chips, 0, m);
    fclose(m);
    ASSERT(st == 0);
    Prog *p = prog_named(c->a, form, text);
    free(text);
    return p;
}

static void keep(Ctx *c, Weights *w)
{
    *VEC_PUSH(c->a, c->w, c->nw, c->cw) = w;
}

static void run1(Ctx *c, Prog *p, Env *env)
{
    Weights *w;
    ASSERT(weights_bind(&w, p, env, NULL, SEED) == 0);
    keep(c, w);
    ASSERT(ref_run(p, env) == 0);
}

/* Runs split program p on the chips' envs, their weights synthetic or
 * read from dir. */
static void run_tp(Ctx *c, Prog *p, Env **envs, const char *dir)
{
    for (int r = 0; r < c->chips; r++) {
        Weights *w;
        ASSERT(weights_bind_chip(&w, p, envs[r], dir, SEED, r) == 0);
        keep(c, w);
    }
    ASSERT(tp_run(p, envs) == 0);
}

static void set_i32(Env *env, const char *name, const int32_t *v, int n, int vector)
{
    long d = n;
    Buf *b = env_alloc(env, name, T_I32, vector, &d);
    memcpy(b->i, v, sizeof *v * (size_t)n);
}

/* Copies a tensor of src into dst under the same name. */
static void copy_buf(Env *src, Env *dst, const char *name)
{
    Buf *s = env_get(src, name);
    ASSERT(s && s->f);
    Buf *t = env_alloc(dst, name, s->base, s->rank, s->d);
    memcpy(t->f, s->f, sizeof *s->f * (size_t)s->n);
}

static Env **envs_new(int n)
{
    Env **e = calloc((size_t)n, sizeof *e);
    for (int r = 0; r < n; r++)
        e[r] = env_new();
    return e;
}

static void envs_free(Env **e, int n)
{
    for (int r = 0; r < n; r++)
        env_free(e[r]);
    free(e);
}

/* ---- comparisons ---- */

/* The chips' `name` against the single chip's: within TOL, and the chips'
 * the same to the bit. */
static int agree(Ctx *c, Env *single, Env **chips, const char *name)
{
    Buf *want = env_get(single, name);
    ASSERT(want && want->f);
    int pass = 1;
    for (int r = 0; r < c->chips; r++) {
        Buf *got = env_get(chips[r], name);
        ASSERT(got && got->n == want->n);
        double d = rel(got->f, want->f, want->n);
        c->worst = fmax(c->worst, d);
        pass &= d < TOL && memcmp(got->f, env_get(chips[0], name)->f, sizeof *got->f * (size_t)got->n) == 0;
    }
    return pass;
}

static int same_ids(Env *single, Env **chips, int n, const char *name)
{
    Buf *want = env_get(single, name);
    int pass = 1;
    for (int r = 0; r < n; r++) {
        Buf *got = env_get(chips[r], name);
        pass &= got && got->n == want->n && memcmp(got->i, want->i, sizeof *got->i * (size_t)got->n) == 0;
    }
    return pass;
}

/* Chip r's cache `name` [ctx, kv, w] against its kv heads' part of the
 * single chip's: kv heads fall into min(kv, chips) parts, chip r holds part
 * r * parts / chips (logos-placement(5)). */
static int cache_part(Ctx *c, Env *single, Env **chips, const char *name)
{
    Buf *whole = env_get(single, name);
    int pass = 1;
    for (int r = 0; r < c->chips; r++) {
        Buf *b = env_get(chips[r], name);
        long ctx = whole->d[0], kv = whole->d[1], w = whole->d[2], mine = b->d[1];
        long parts = kv < c->chips ? kv : c->chips, first = r * parts / c->chips * mine;
        ASSERT(b->d[0] == ctx && b->d[2] == w && mine * parts == kv);
        for (long t = 0; t < ctx; t++)
            pass &= rel(b->f + t * mine * w, whole->f + (t * kv + first) * w, mine * w) < TOL;
    }
    return pass;
}

/* ---- the checks ---- */

static const int32_t toks[] = {17, 201, 3, 99, 142, 64, 250, 8};

static void one_step_inputs(Env *e, int t)
{
    int32_t pos = t + 1;
    set_i32(e, "tok", &toks[t], 1, 0);
    set_i32(e, "pos", &pos, 1, 0);
}

/* Step t of a batch: sequence b brings a token of its own at position t + 1. */
static void batch_inputs(Env *e, int t)
{
    int32_t ids[B];
    for (int b = 0; b < B; b++) {
        int32_t pos = t + 1;
        char name[32];
        snprintf(name, sizeof name, "pos_s%d", b);
        set_i32(e, name, &pos, 1, 0);
        ids[b] = toks[(t + 3 * b) % 8];
    }
    set_i32(e, "toks", ids, B, 1);
}

static void steps(Ctx *c, const char *spec, const char *dir)
{
    Prog *whole = prog(c, "decode_step", -1, 0), *split = prog(c, "tp_decode_step", -1, c->chips);
    Env *e1 = env_new(), **ec = envs_new(c->chips);
    int pass = 1, next = 1;
    for (int t = 0; t < STEPS; t++) {
        one_step_inputs(e1, t);
        run1(c, whole, e1);
        for (int r = 0; r < c->chips; r++)
            one_step_inputs(ec[r], t);
        run_tp(c, split, ec, dir);
        pass &= agree(c, e1, ec, "logits");
        next &= same_ids(e1, ec, c->chips, "next");
    }
    int caches = 1;
    for (int i = 0; i < whole->ndecls; i++)
        if (whole->decls[i].kind == D_STATE)
            caches &= cache_part(c, e1, ec, whole->decls[i].name);
    if (dir) {
        ok(pass && next, spec, c->chips, "chips bound to the whole weight files equal decode_step");
    } else {
        ok(pass, spec, c->chips, "tp_decode_step's logits equal decode_step's, 4 steps, the chips' to the bit");
        ok(next, spec, c->chips, "tp_decode_step's next tokens are decode_step's on every chip");
        ok(caches, spec, c->chips, "each chip's KV caches hold its kv heads' part of decode_step's");
    }
    env_free(e1);
    envs_free(ec, c->chips);
}

static void batch(Ctx *c, const char *spec)
{
    Prog *whole = prog(c, "decode_batch", -1, 0), *split = prog(c, "tp_decode_batch", -1, c->chips);
    Env *e1 = env_new(), **ec = envs_new(c->chips);
    int pass = 1;
    for (int t = 0; t < 3; t++) {
        batch_inputs(e1, t);
        run1(c, whole, e1);
        for (int r = 0; r < c->chips; r++)
            batch_inputs(ec[r], t);
        run_tp(c, split, ec, NULL);
        pass &= agree(c, e1, ec, "logits") && same_ids(e1, ec, c->chips, "next");
    }
    ok(pass, spec, c->chips, "tp_decode_batch of 3 sequences equals decode_batch, 3 steps");
    env_free(e1);
    envs_free(ec, c->chips);
}

/* The cut forms chained: `embed` on one chip, `layer` L on the chips (its
 * input copied to each), `head` on one chip from chip 0's last output;
 * against the whole form `form`. batched: the batch's forms. */
static void chain(Ctx *c, const char *spec, int batched)
{
    const char *form = batched ? "decode_batch" : "decode_step";
    Prog *whole = prog(c, form, -1, 0);
    Prog *embed = prog(c, batched ? "decode_batch_embed" : "decode_embed", -1, 0);
    Prog *head = prog(c, batched ? "decode_batch_head" : "decode_head", -1, 0);
    int L = c->s->nlayers;
    Prog **layers = arena_alloc(c->a, sizeof *layers * (size_t)L);
    for (int l = 0; l < L; l++)
        layers[l] = prog(c, batched ? "tp_stacked_layer" : "tp_decode_layer", l, c->chips);
    Env *e1 = env_new(), *e2 = env_new(), **ec = envs_new(c->chips);
    int pass = 1;
    for (int t = 0; t < 3; t++) {
        Env *ins[2] = {e1, e2};
        for (int k = 0; k < 2; k++)
            batched ? batch_inputs(ins[k], t) : one_step_inputs(ins[k], t);
        for (int r = 0; r < c->chips; r++)
            batched ? batch_inputs(ec[r], t) : one_step_inputs(ec[r], t);
        run1(c, whole, e1);
        run1(c, embed, e2);
        for (int r = 0; r < c->chips; r++)
            copy_buf(e2, ec[r], batched ? "X" : "x");
        for (int l = 0; l < L; l++)
            run_tp(c, layers[l], ec, NULL);
        copy_buf(ec[0], e2, arena_printf(c->a, "%sh%d", batched ? "b" : "", L - 1));
        run1(c, head, e2);
        pass &= rel(env_get(e2, "logits")->f, env_get(e1, "logits")->f, env_get(e1, "logits")->n) < TOL;
        c->worst = fmax(c->worst, rel(env_get(e2, "logits")->f, env_get(e1, "logits")->f, env_get(e1, "logits")->n));
    }
    ok(pass, spec, c->chips, batched ? "decode_batch_embed, each tp_stacked_layer and decode_batch_head chained "
                                       "equal decode_batch"
                                     : "decode_embed, each tp_decode_layer and decode_head chained equal decode_step");
    env_free(e1);
    env_free(e2);
    envs_free(ec, c->chips);
}

/* Writes the single-chip program's weights (whole files) into a new
 * directory; its path. */
static char *whole_files(Ctx *c)
{
    char *dir = arena_strdup(c->a, "/tmp/test_tp.XXXXXX");
    ASSERT(mkdtemp(dir));
    ASSERT(weights_write_synthetic(prog(c, "decode_step", -1, 0), dir, SEED) == 0);
    return dir;
}

static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    ASSERT(d);
    for (struct dirent *de; (de = readdir(d));)
        if (de->d_name[0] != '.') {
            char path[512];
            snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

static void width(const Spec *s, const char *spec, int chips)
{
    Ctx c = {.a = arena_new(), .s = s, .chips = chips};
    steps(&c, spec, NULL);
    batch(&c, spec);
    chain(&c, spec, 0);
    chain(&c, spec, 1);
    char *dir = whole_files(&c);
    steps(&c, spec, dir);
    remove_dir(dir);
    printf("# %s at %d chips: logits agree within %.2g (relative to the largest)\n", spec, chips, c.worst);
    for (int i = 0; i < c.nw; i++)
        weights_close(c.w[i]);
    arena_free(c.a);
}

/* ---- refusals ---- */

/* What fn(arg) writes to stderr (the fd, for diag's writes). */
static char *stderr_of(int (*fn)(void *), void *arg, int *rc)
{
    FILE *tmp = tmpfile();
    ASSERT(tmp);
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    *rc = fn(arg);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ASSERT(fseek(tmp, 0, SEEK_END) == 0);
    long n = ftell(tmp);
    char *text = calloc(1, (size_t)n + 1);
    rewind(tmp);
    ASSERT(fread(text, 1, (size_t)n, tmp) == (size_t)n);
    fclose(tmp);
    return text;
}

typedef struct Try {
    Ctx *c;
    Prog *p;
    Env **envs;
    const char *dir;
} Try;

static int try_bind_chip(void *arg)
{
    Try *t = arg;
    Weights *w = NULL;
    int rc = weights_bind_chip(&w, t->p, t->envs[0], t->dir, SEED, 0);
    weights_close(w);
    return rc;
}

static int try_bind(void *arg)
{
    Try *t = arg;
    Weights *w = NULL;
    int rc = weights_bind(&w, t->p, t->envs[0], NULL, SEED);
    weights_close(w);
    return rc;
}

static int try_ref(void *arg)
{
    Try *t = arg;
    return ref_run(t->p, t->envs[0]);
}

static int try_tp(void *arg)
{
    Try *t = arg;
    return tp_run(t->p, t->envs);
}

static void expect(const char *got, int rc, const char *want, const char *what)
{
    int pass = rc == EXIT_INPUT && strcmp(got, want) == 0;
    if (!pass) {
        printf("# got status %d and:\n", rc);
        for (const char *l = got; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0))
            printf("#   %.*s\n", (int)strcspn(l, "\n"), l);
    }
    ok(pass, "tiny-llama", 2, what);
}

static void refusals(const Spec *s)
{
    Ctx c = {.a = arena_new(), .s = s, .chips = 2};
    Prog *p = prog(&c, "tp_decode_step", -1, 2);
    Env **envs = envs_new(2);
    char *dir = whole_files(&c), *path = arena_printf(c.a, "%s/wq0.q", dir);
    ASSERT(truncate(path, 2048) == 0);   /* a chip's part where the whole belongs */
    Try t = {&c, p, envs, dir};
    int rc;
    char *got = stderr_of(try_bind_chip, &t, &rc);
    expect(got, rc, arena_printf(c.a, "test_tp: %s: 2048 bytes, expected 4096 (q8[64,64], the whole of split(rows, 2): "
                                 "one int8 quant per value)\n", path),
           "a whole file of a part's size is refused, naming the whole's shape");
    free(got);
    remove_dir(dir);
    got = stderr_of(try_bind, &t, &rc);
    expect(got, rc, "test_tp: tp_decode_step: the program is split over 2 chips, which run together "
                    "(logos-placement(5)): one chip runs it at --tp 1\n",
           "weights_bind refuses a program split over 2 chips");
    free(got);
    got = stderr_of(try_ref, &t, &rc);
    expect(got, rc, "test_tp: tp_decode_step:2:1: the program is split over 2 chips: each chip runs its part\n"
                    "  chips 2\n  ^\n",
           "ref_run refuses to run a program split over 2 chips as one");
    free(got);
    for (int r = 0; r < 2; r++) {   /* weights bound, no inputs */
        Weights *w;
        ASSERT(weights_bind_chip(&w, p, envs[r], NULL, SEED, r) == 0);
        keep(&c, w);
    }
    got = stderr_of(try_tp, &t, &rc);
    expect(got, rc, "test_tp: tp_decode_step:3:4: input 'pos' is not given\n  in pos : i32\n     ^\n",
           "an input missing on every chip is reported once");
    free(got);
    envs_free(envs, 2);
    for (int i = 0; i < c.nw; i++)
        weights_close(c.w[i]);
    arena_free(c.a);
}

/* ---- the specs ---- */

/* The wide variant of s: every class f32, 8 heads on 4 kv heads, the
 * rotation interleaved over half of each head, an output gate, dense biases. */
static Spec *wide(Arena *a, const Spec *s)
{
    Spec *w = arena_alloc(a, sizeof *w);
    *w = *s;
    w->name = arena_printf(a, "%s-wide", s->name);
    for (int k = 0; k < WC_COUNT; k++)
        w->fmt[k] = FMT_F32;
    w->kinds = arena_alloc(a, sizeof *w->kinds * (size_t)s->nkinds);
    for (int k = 0; k < s->nkinds; k++) {
        LayerSpec *L = &w->kinds[k];
        *L = s->kinds[k];
        L->attn.heads = 8;
        L->attn.kv_heads = 4;
        L->attn.rope.interleaved = 1;
        L->attn.rope.dim = L->attn.head_dim / 2;
        L->attn.out_gate = 1;
        L->dense.bias = 1;
    }
    return w;
}

static void spec_widths(Arena *a, const Spec *s)
{
    static const int widths[] = {1, 2, 4, 8};
    for (int i = 0; i < 4; i++) {
        const char *why = spec_tp_block(a, s, widths[i]);
        if (why)
            printf("# %s does not split over %d chips: %s\n", s->name, widths[i], why);
        else
            width(s, s->name, widths[i]);
    }
}

int main(void)
{
    diag_tool = "test_tp";
    char *files[64];
    int n = tiny_specs(files, 64);
    if (n < 0) {
        printf("not ok 1 - examples/tiny: run from the repository root\n");
        return 1;
    }
    int families = 0;
    for (int i = 0; i < n; i++) {
        Arena *a = arena_new();
        Spec *s = spec_load(a, files[i]);
        ASSERT(s);
        if (!strcmp(s->name, "tiny-llama"))
            refusals(s);
        if (spec_tp_block(a, s, 1)) {
            printf("# %s: check_tp refuses it: %s\n", s->name, spec_tp_block(a, s, 1));
        } else {
            families++;
            spec_widths(a, s);
            spec_widths(a, wide(a, s));
        }
        arena_free(a);
        free(files[i]);
    }
    ok(families >= 4, "examples/tiny", 1, "at least four families split (llama, mistral, qwen3, gemma2)");
    printf("1..%d\n", ntest);
    return nfail != 0;
}
