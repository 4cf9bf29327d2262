/* test_tp_plan.c — a split program's plan (logos-fuse: its launches and its
 * collectives) run on the CPU reference as its chips, through run.c's lane
 * as logos-run --device cpu runs it, against the split program itself and
 * the single-chip program: for every tiny spec check_tp accepts
 * (examples/tiny) and a wide variant of each (8 heads on 4 kv heads) that
 * splits at more widths, at each width of 1, 2 and 4 that
 * check_tp accepts:
 *   - tp_decode_step's plan generates the tokens and logits of the
 *     program, to the bit, and those of decode_step (logits within 1e-5
 *     relative to their largest magnitude, the same tokens);
 *   - tp_decode_batch's plan (3 sequences) those of decode_batch;
 *   - the plans of decode_embed, each tp_decode_layer and decode_head as one
 *     stream those of decode_step;
 *   - every plan prints, parses and checks again (stream_load), each
 *     launch's kernel, grid and parameter slots the same when read back.
 * Weights are synthetic. Prints TAP lines (the worst agreement of each spec
 * and width as a comment); run from the repository root. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logos.h"
#include "progtext.h"
#include "tiny.h"

enum { SEED = 5, NGEN = 5, B = 3, MAXOUT = 1 << 16 };
static const double TOL = 1e-5;
static int ntest, nfail;

static void ok(int pass, const char *spec, int chips, const char *what)
{
    ntest++;
    nfail += !pass;
    printf("%sok %d - %s at %d chips: %s\n", pass ? "" : "not ", ntest, spec, chips, what);
}

/* ---- streams as files ---- */

/* The text of a form (a split one at chips > 0) appended to f. */
static void form(Arena *a, const Spec *s, const char *name, int layer, int chips, FILE *f)
{
    int st = chips ? author_tp(a, s, name, layer, B, chips, 0, f) : author(a, s, name, layer, B, 0, f);
    ASSERT(st == 0);
}

/* A plan printed and read back has the same launches: kernel, grid and
 * every parameter slot's buffer (none past the kernel's parameters). */
static int reads_back(Arena *a, const Plan *pl)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    ASSERT(m);
    plan_print(m, pl);
    fclose(m);
    Lexer lx;
    lex_init(&lx, src_from_string(a, "plan", text));
    int err = 0, same = 1;
    Plan *back = plan_parse(a, &lx, &err);
    free(text);
    if (!back || err || back->nls != pl->nls)
        return 0;
    for (int i = 0; i < pl->nls; i++) {
        same &= back->ls[i].kernel == pl->ls[i].kernel && back->ls[i].grid[0] == pl->ls[i].grid[0];
        for (int k = 0; k < KMAXP; k++)
            same &= back->ls[i].arg[k] == pl->ls[i].arg[k];
    }
    return same;
}

/* Every program of the text at path fused with logos-fuse's defaults, the
 * plans written to out. */
static void fuse_file(Arena *a, const char *path, long ctx, const char *out)
{
    Src *src = src_read(a, path);
    ASSERT(src);
    Lexer lx;
    lex_init(&lx, src);
    FuseOpts fo;
    fuse_defaults(&fo, ctx);
    fo.quiet = 1;
    FILE *f = fopen(out, "w");
    ASSERT(f);
    int err = 0;
    for (Prog *p; (p = parse_prog(a, &lx, &err));) {
        ASSERT(check_prog(a, p) == 0);
        Plan *pl = fuse(a, p, graph_build(a, p), &fo);
        ASSERT(pl);
        ASSERT(reads_back(a, pl));
        plan_print(f, pl);
    }
    ASSERT(!err);
    fclose(f);
}

typedef struct Out {
    int32_t tok[B * (NGEN + 1)];
    int ntok;
    float *logits;
    long nlogits;
    int status;
} Out;

/* Runs the stream at path on the CPU lane over the prompts. */
static void gen(const char *path, const Prompt *pr, int npr, Out *o)
{
    Arena *a = arena_new();
    Stream st = {0};
    FILE *tok = tmpfile(), *lg = tmpfile();
    ASSERT(tok && lg);
    WeightsArg w = {.seed = SEED, .synthetic = 1};
    int s = stream_load(a, path, &st);
    if (!s)
        s = stream_phases(&st);
    if (!s)
        s = stream_open(&st, lane_cpu(), &w);
    st.logits = lg;
    if (!s)
        s = run_generate(&st, pr, npr, NGEN, tok);
    stream_close(&st);
    o->status = s;
    rewind(tok);
    o->ntok = 0;
    for (int b, id; o->ntok < B * (NGEN + 1) && (npr > 1 ? fscanf(tok, "%d %d", &b, &id) == 2
                                                         : fscanf(tok, "%d", &id) == 1);)
        o->tok[o->ntok++] = id;
    o->nlogits = ftell(lg) / 4;
    o->logits = malloc((size_t)o->nlogits * 4 + 4);
    rewind(lg);
    ASSERT(fread(o->logits, 4, (size_t)o->nlogits, lg) == (size_t)o->nlogits);
    fclose(tok);
    fclose(lg);
    arena_free(a);
}

/* ---- comparisons ---- */

static int same_tokens(const Out *x, const Out *y)
{
    return x->ntok == y->ntok && x->ntok > 0 && memcmp(x->tok, y->tok, sizeof *x->tok * (size_t)x->ntok) == 0;
}

static int bitwise(const Out *x, const Out *y)
{
    return !x->status && !y->status && same_tokens(x, y) && x->nlogits == y->nlogits && x->nlogits > 0 &&
           memcmp(x->logits, y->logits, 4 * (size_t)x->nlogits) == 0;
}

static int close_to(const Out *got, const Out *want, double *worst)
{
    if (got->status || want->status || got->nlogits != want->nlogits || !got->nlogits)
        return 0;
    double d = rel(got->logits, want->logits, got->nlogits);
    *worst = fmax(*worst, d);
    return d < TOL && same_tokens(got, want);
}

/* ---- the checks ---- */

typedef struct Case {
    Arena *a;
    const Spec *s;
    const char *name;
    int chips;
    char dir[64];
    double worst;
} Case;

static char *path(Case *c, const char *file)
{
    return arena_printf(c->a, "%s/%s", c->dir, file);
}

/* Writes the forms (NULL-ended; "layers" for every tp_decode_layer) into
 * FILE, and their plans into FILE.plan. */
static const char *stream(Case *c, const char *file, const char *const *forms, int chips)
{
    FILE *f = fopen(path(c, file), "w");
    ASSERT(f);
    for (int i = 0; forms[i]; i++)
        if (strcmp(forms[i], "layers") == 0)
            for (int l = 0; l < c->s->nlayers; l++)
                form(c->a, c->s, "tp_decode_layer", l, chips, f);
        else
            form(c->a, c->s, forms[i], -1, strncmp(forms[i], "tp_", 3) ? 0 : chips, f);
    fclose(f);
    const char *plan = arena_printf(c->a, "%s.plan", path(c, file));
    fuse_file(c->a, path(c, file), c->s->ctx, plan);
    return plan;
}

static void check(Case *c, const char *what, const char *single, const char *tp, const char *plan,
                  const Prompt *pr, int npr)
{
    Out want, prog, got;
    gen(single, pr, npr, &want);
    gen(tp, pr, npr, &prog);
    gen(plan, pr, npr, &got);
    ok(bitwise(&got, &prog), c->name, c->chips, arena_printf(c->a, "%s: the plan generates the program's tokens "
                                                               "and logits, to the bit", what));
    ok(close_to(&got, &want, &c->worst), c->name, c->chips,
       arena_printf(c->a, "%s: the plan generates the single chip's tokens, logits within 1e-5", what));
    free(want.logits);
    free(prog.logits);
    free(got.logits);
}

static void width(Arena *a, const Spec *s, const char *name, int chips)
{
    Case c = {.a = a, .s = s, .name = name, .chips = chips};
    snprintf(c.dir, sizeof c.dir, "/tmp/logos-tp-plan.XXXXXX");
    ASSERT(mkdtemp(c.dir));
    int32_t p0[] = {17, 201, 3}, p1[] = {5}, p2[] = {99, 142};
    Prompt one = {p0, 3}, three[B] = {{p0, 3}, {p1, 1}, {p2, 2}};

    const char *step[] = {"decode_step", NULL}, *tpstep[] = {"tp_decode_step", NULL};
    stream(&c, "single", step, 0);
    const char *plan = stream(&c, "tp", tpstep, chips);
    check(&c, "tp_decode_step", path(&c, "single"), path(&c, "tp"), plan, &one, 1);

    const char *batch[] = {"decode_batch", NULL}, *tpbatch[] = {"tp_decode_batch", NULL};
    stream(&c, "batch", batch, 0);
    plan = stream(&c, "tpbatch", tpbatch, chips);
    check(&c, "tp_decode_batch", path(&c, "batch"), path(&c, "tpbatch"), plan, three, B);

    const char *cut[] = {"decode_embed", "layers", "decode_head", NULL};
    plan = stream(&c, "cut", cut, chips);
    check(&c, "decode_embed, tp_decode_layer..., decode_head", path(&c, "single"), path(&c, "cut"), plan, &one, 1);

    printf("# %s at %d chips: worst logits %.2e of their largest magnitude\n", name, chips, c.worst);
    const char *files[] = {"single", "tp", "batch", "tpbatch", "cut"};
    for (int i = 0; i < 5; i++) {
        unlink(path(&c, files[i]));
        unlink(arena_printf(a, "%s.plan", path(&c, files[i])));
    }
    rmdir(c.dir);
}

/* The wide variant of s: 8 heads on 4 kv heads (its formats kept: an f32
 * decode_batch does not fuse yet, the gemv's quantizing epilogue). */
static Spec *wide(Arena *a, const Spec *s)
{
    Spec *w = arena_alloc(a, sizeof *w);
    *w = *s;
    w->name = arena_printf(a, "%s-wide", s->name);
    w->kinds = arena_alloc(a, sizeof *w->kinds * (size_t)s->nkinds);
    for (int k = 0; k < s->nkinds; k++) {
        w->kinds[k] = s->kinds[k];
        w->kinds[k].attn.heads = 8;
        w->kinds[k].attn.kv_heads = 4;
    }
    return w;
}

static int spec_widths(Arena *a, const Spec *s)
{
    static const int widths[] = {1, 2, 4};
    int n = 0;
    for (int i = 0; i < 3; i++) {
        const char *why = spec_tp_block(a, s, widths[i]);
        if (why) {
            printf("# %s does not split over %d chips: %s\n", s->name, widths[i], why);
            continue;
        }
        width(a, s, s->name, widths[i]);
        n++;
    }
    return n;
}

int main(void)
{
    diag_tool = "test_tp_plan";
    char *files[64];
    int nf = tiny_specs(files, 64), four = 0;
    ASSERT(nf > 0);
    for (int i = 0; i < nf; i++) {
        Arena *a = arena_new();
        const Spec *s = spec_load(a, files[i]);
        ASSERT(s);
        if (!spec_tp_block(a, s, 1)) {
            spec_widths(a, s);
            four += spec_widths(a, wide(a, s)) == 3;
        }
        arena_free(a);
        free(files[i]);
    }
    ok(four >= 4, "examples/tiny", 4, "at least four families' wide variants split at 1, 2 and 4 chips");
    printf("1..%d\n", ntest);
    return nfail != 0;
}
