/* run.c — drives a stream of programs over prompts: the prompt phase (a
 * prefill chunk's programs), then decode steps (or a batch of them) that
 * generate tokens greedily. Programs of one phase run in order on one env,
 * so a cut form's output is the next program's input by name. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static int declares(const Prog *p, int kind, const char *name)
{
    for (int i = 0; i < p->ndecls; i++)
        if (p->decls[i].kind == kind && !strcmp(p->decls[i].name, name))
            return 1;
    return 0;
}

/* The phase a program belongs to: a chunk's programs declare a size; in a
 * stream where any program reads pos_s0, the others run as the batch's. */
static int phase_of(const Stream *st, const Prog *p)
{
    for (int i = 0; i < p->ndecls; i++)
        if (p->decls[i].kind == D_SIZE)
            return PH_CHUNK;
    return st->batched ? PH_BATCH : PH_STEP;
}

static long decl_rows(const Decl *d)
{
    return d->rank ? strtol(d->dims[0], NULL, 10) : 0;
}

int stream_load(Arena *a, const char *path, Stream *st)
{
    Src *src = src_read(a, path);
    if (!src)
        return EXIT_INPUT;
    st->a = a;
    st->src = src->name;
    Lexer lx;
    lex_init(&lx, src);
    int err = 0;
    for (Prog *p; (p = parse_prog(a, &lx, &err));) {
        if (check_prog(a, p))
            return EXIT_INPUT;
        *VEC_PUSH(a, st->progs, st->nprogs, st->cprogs) = p;
    }
    if (err)
        return EXIT_INPUT;
    if (st->nprogs == 0) {
        diag_file(src->name, "no program in the input");
        return EXIT_INPUT;
    }
    return 0;
}

static int same_shape(const Decl *a, const Decl *b)
{
    if (a->base != b->base || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (strcmp(a->dims[i], b->dims[i]))
            return 0;
    return 1;
}

/* The programs of a stream share their states by name: each state is
 * declared alike wherever it is declared. */
static int states_agree(const Stream *st)
{
    for (int k = 0; k < st->nprogs; k++)
        for (int i = 0; i < st->progs[k]->ndecls; i++) {
            const Decl *d = &st->progs[k]->decls[i];
            for (int j = 0; d->kind == D_STATE && j < k; j++) {
                int o = prog_find_decl(st->progs[j], d->name);
                const Decl *e = o >= 0 ? &st->progs[j]->decls[o] : NULL;
                if (e && e->kind == D_STATE && !same_shape(d, e)) {
                    diag_at(st->progs[k]->src, d->line, d->col,
                            "state '%s' is declared with another shape at line %d", d->name, e->line);
                    return EXIT_INPUT;
                }
            }
        }
    return 0;
}

/* The rows of a weight looked up by an i32 input (token ids): the
 * vocabulary, the least of them when there are several. */
static void token_tables(const Prog *p, const Expr *e, long *vocab)
{
    if (e->op == OP_INDEX && e->args[0]->op == E_NAME && e->args[1]->op == E_NAME) {
        int w = prog_find_decl(p, e->args[0]->name), t = prog_find_decl(p, e->args[1]->name);
        if (w >= 0 && t >= 0 && p->decls[w].kind == D_WEIGHT && p->decls[t].kind == D_IN &&
            p->decls[t].base == T_I32 && (*vocab < 0 || decl_rows(&p->decls[w]) < *vocab))
            *vocab = decl_rows(&p->decls[w]);
    }
    for (int i = 0; i < e->nargs; i++)
        token_tables(p, e->args[i], vocab);
}

/* The rows of the states written by position (KV caches): the context, the
 * least of them; and the vocabulary. */
static void extents(const Prog *p, long *ctx, long *vocab)
{
    for (int i = 0; i < p->nstmts; i++) {
        const Stmt *s = &p->stmts[i];
        int d = s->kind == S_WRITE ? prog_find_decl(p, s->name) : -1;
        if (d >= 0 && (*ctx < 0 || decl_rows(&p->decls[d]) < *ctx))
            *ctx = decl_rows(&p->decls[d]);
        token_tables(p, s->value, vocab);
    }
}

/* Facts of a stream: its phases, the vocabulary and the context. */
int run_plan(Stream *st)
{
    st->vocab = -1;
    st->ctx = -1;
    st->batch = 0;
    st->batched = 0;
    for (int k = 0; k < st->nprogs; k++)
        st->batched |= declares(st->progs[k], D_IN, "pos_s0");
    for (int k = 0; k < st->nprogs; k++) {
        const Prog *p = st->progs[k];
        int ph = phase_of(st, p);
        st->has[ph] = 1;
        extents(p, &st->ctx, &st->vocab);
        for (int i = 0; i < p->ndecls; i++) {
            const Decl *d = &p->decls[i];
            if (d->kind == D_IN && !strncmp(d->name, "pos_s", 5) && ph == PH_BATCH &&
                atoi(d->name + 5) + 1 > st->batch)
                st->batch = atoi(d->name + 5) + 1;
        }
    }
    int single = 0;
    for (int k = 0; k < st->nprogs; k++)
        single |= declares(st->progs[k], D_IN, "pos") || declares(st->progs[k], D_IN, "tok");
    if (states_agree(st))
        return EXIT_INPUT;
    if (st->has[PH_BATCH] && (single || st->has[PH_CHUNK])) {
        diag_file(st->src, "a batch of decode steps does not mix with single-sequence programs in one stream");
        return EXIT_INPUT;
    }
    return 0;
}

static void set_i32(Env *env, const char *name, const int32_t *v, int n, int vector)
{
    long d = n;
    Buf *b = env_alloc(env, name, T_I32, vector ? 1 : 0, &d);
    memcpy(b->i, v, sizeof *v * (size_t)n);
}

/* Runs every program of one phase; returns 0 or an exit status. */
static int run_phase(Stream *st, Env *env, int ph)
{
    for (int k = 0; k < st->nprogs; k++)
        if (phase_of(st, st->progs[k]) == ph) {
            int s = ref_run(st->progs[k], env);
            if (s)
                return s;
        }
    return 0;
}

/* The phase's logits (B rows for a batch) and next tokens. */
static int harvest(Stream *st, Env *env, int32_t *next, int rows)
{
    Buf *lg = env_get(env, "logits"), *nx = env_get(env, "next");
    if (!lg && !nx) {
        diag_file(st->src, "the stream's last program has no 'logits' or 'next' output to generate from");
        return EXIT_INPUT;
    }
    if (nx && (nx->base != T_I32 || nx->n != rows)) {
        diag_file(st->src, "'next' must be i32%s: one token for each of the %d sequence%s", rows > 1 ? "[B]" : "",
                  rows, rows == 1 ? "" : "s");
        return EXIT_INPUT;
    }
    if (lg && (lg->base != T_F32 || lg->n % rows)) {
        diag_file(st->src, "'logits' must be f32 rows, one for each of the %d sequence%s", rows, rows == 1 ? "" : "s");
        return EXIT_INPUT;
    }
    long v = lg ? lg->n / rows : 0;
    if (lg && st->logits && fwrite(lg->f, sizeof(float), (size_t)lg->n, st->logits) != (size_t)lg->n) {
        diag("cannot write the logits");
        return EXIT_SYSTEM;
    }
    for (int r = 0; r < rows; r++) {
        if (nx) {
            next[r] = nx->i[r];
            continue;
        }
        long best = 0;
        for (long j = 1; j < v; j++)
            if (lg->f[r * v + j] > lg->f[r * v + best])
                best = j;
        next[r] = (int32_t)best;
    }
    return 0;
}

static int check_prompt(Stream *st, const Prompt *pr, int ngen)
{
    if (pr->n == 0) {
        diag("the prompt is empty: give at least one token id");
        return EXIT_INPUT;
    }
    for (int i = 0; i < pr->n; i++)
        if (pr->ids[i] < 0 || (st->vocab > 0 && pr->ids[i] >= st->vocab)) {
            diag("prompt token %d is %d: token ids run from 0 to %ld", i + 1, pr->ids[i], st->vocab - 1);
            return EXIT_INPUT;
        }
    long need = pr->n + (ngen > 0 ? ngen - 1 : 0);
    if (st->ctx > 0 && need > st->ctx) {
        diag("the prompt (%d tokens) and %d generated tokens need %ld positions; the program's states hold %ld",
             pr->n, ngen, need, st->ctx);
        return EXIT_INPUT;
    }
    return 0;
}

int stream_bind(Stream *st, Env *env, const WeightsArg *w)
{
    st->weights = arena_alloc(st->a, sizeof *st->weights * (size_t)st->nprogs);
    for (int k = 0; k < st->nprogs; k++) {
        int s = weights_bind(&st->weights[k], st->progs[k], env, w->dir, w->seed);
        if (s)
            return s;
    }
    return 0;
}

void stream_close(Stream *st)
{
    for (int k = 0; st->weights && k < st->nprogs; k++)
        weights_close(st->weights[k]);
    st->weights = NULL;
}

int run_step(Stream *st, Env *env, int32_t tok, int32_t pos, int32_t *next)
{
    set_i32(env, "tok", &tok, 1, 0);
    set_i32(env, "pos", &pos, 1, 0);
    int s = run_phase(st, env, PH_STEP);
    return s ? s : harvest(st, env, next, 1);
}

/* One sequence: the prompt as a chunk or step by step, then decode steps. */
static int run_one(Stream *st, Env *env, const Prompt *pr, int ngen, FILE *out)
{
    int32_t next = 0, pos;
    int s;
    if (st->has[PH_CHUNK]) {
        int32_t one = 1;
        set_i32(env, "toks", pr->ids, pr->n, 1);
        set_i32(env, "pos0", &one, 1, 0);
        if ((s = run_phase(st, env, PH_CHUNK)) || (s = harvest(st, env, &next, 1)))
            return s;
    } else {
        for (pos = 1; pos <= pr->n; pos++)
            if ((s = run_step(st, env, pr->ids[pos - 1], pos, &next)))
                return s;
    }
    for (int g = 0; g < ngen; g++) {
        fprintf(out, "%d\n", next);
        fflush(out);   /* a pipe sees each token as it comes */
        st->generated++;
        if (g == ngen - 1)
            break;
        if ((s = run_step(st, env, next, pr->n + 1 + g, &next)))
            return s;
    }
    return 0;
}

/* B sequences stepping together: sequence b feeds its prompt, then what it
 * generates; it prints `b id` for each generated token. */
static int run_batch(Stream *st, Env *env, const Prompt *pr, int ngen, FILE *out)
{
    int B = st->batch, longest = 0;
    size_t nb = B > 0 ? (size_t)B : 1;
    int32_t *toks = arena_alloc(st->a, nb * sizeof *toks), *next = arena_alloc(st->a, nb * sizeof *next);
    int *made = arena_alloc(st->a, nb * sizeof *made);
    for (int b = 0; b < B; b++)
        longest = pr[b].n > longest ? pr[b].n : longest;
    int s = 0;
    for (int step = 0; !s && step < longest + ngen - 1; step++) {
        for (int b = 0; b < B; b++) {
            toks[b] = step < pr[b].n ? pr[b].ids[step] : next[b];
            int32_t pos = step + 1;
            set_i32(env, arena_printf(st->a, "pos_s%d", b), &pos, 1, 0);
        }
        set_i32(env, "toks", toks, B, 1);
        if ((s = run_phase(st, env, PH_BATCH)) || (s = harvest(st, env, next, B)))
            break;
        for (int b = 0; b < B; b++)
            if (step + 1 >= pr[b].n && made[b] < ngen) {
                fprintf(out, "%d %d\n", b, next[b]);
                fflush(out);
                made[b]++;
                st->generated++;
            }
    }
    return s;
}

int run_generate(Stream *st, Env *env, const Prompt *prompts, int nprompts, int ngen, FILE *out)
{
    if (!st->has[PH_STEP] && !st->has[PH_BATCH] && ngen > 1) {
        diag_file(st->src, "the stream has no decode step: it gives one token after the prompt, not %d", ngen);
        return EXIT_INPUT;
    }
    int want = st->has[PH_BATCH] ? st->batch : 1;
    if (nprompts != want) {
        diag("the stream runs %d sequence%s: give %d prompt%s, not %d", want, want == 1 ? "" : "s", want,
             want == 1 ? "" : "s", nprompts);
        return EXIT_INPUT;
    }
    for (int b = 0; b < nprompts; b++) {
        int s = check_prompt(st, &prompts[b], ngen);
        if (s)
            return s;
    }
    return st->has[PH_BATCH] ? run_batch(st, env, prompts, ngen, out) : run_one(st, env, prompts, ngen, out);
}
