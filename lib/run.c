/* run.c — drives a stream of programs (or plans) over prompts through a lane:
 * the prompt phase (a prefill chunk's programs), then decode steps (or a
 * batch of them) that generate tokens greedily. The lane is the seam every
 * executor implements (bind, put, run, fetch): the CPU reference here, CUDA
 * in cuda_lane.c. A program's inputs and outputs are found by their role in
 * its dataflow graph (graph.c), not by their names; the programs of one
 * phase run in order, and a cut form's output reaches the next program's
 * input of the same name inside the lane. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

/* ---- loading ---- */

/* Does the text start with a plan (its first word, past comments, is "plan")? */
static int is_plan_text(const Src *s)
{
    const char *p = s->text;
    for (;;) {
        p += strspn(p, " \t\r\n");
        if (*p != '#')
            break;
        p += strcspn(p, "\n");
    }
    return strncmp(p, "plan", 4) == 0 && (p[4] == ' ' || p[4] == '\t');
}

static void add_prog(Stream *st, Prog *p, Plan *plan)
{
    int n = st->nprogs;
    *VEC_PUSH(st->a, st->progs, st->nprogs, st->cprogs) = p;
    *VEC_PUSH(st->a, st->plans, n, st->cplans) = plan;
}

int stream_load(Arena *a, const char *path, Stream *st)
{
    Src *src = src_read(a, path);
    return src ? stream_load_src(a, src, st) : EXIT_INPUT;
}

int stream_load_src(Arena *a, const Src *src, Stream *st)
{
    st->a = a;
    st->src = src->name;
    Lexer lx;
    lex_init(&lx, src);
    int err = 0;
    if (is_plan_text(src)) {
        for (Plan *pl; (pl = plan_parse(a, &lx, &err));)
            add_prog(st, pl->prog, pl);
    } else {
        int bad = 0;
        for (Prog *p; (p = parse_prog(a, &lx, &err));) {
            if (check_prog(a, p))   /* every program's problems, not the first's only */
                bad = 1;
            add_prog(st, p, NULL);
        }
        err |= bad;
    }
    if (err)
        return EXIT_INPUT;
    if (st->nprogs == 0) {
        diag_file(src->name, "no program in the input");
        return EXIT_INPUT;
    }
    st->graphs = arena_alloc(a, sizeof *st->graphs * (size_t)st->nprogs);
    for (int k = 0; k < st->nprogs; k++)
        st->graphs[k] = st->plans[k] ? st->plans[k]->g : graph_build(a, st->progs[k]);
    return 0;
}

/* ---- phases and extents ---- */

int prog_has_size(const Prog *p)
{
    for (int i = 0; i < p->ndecls; i++)
        if (p->decls[i].kind == D_SIZE)
            return 1;
    return 0;
}

/* The sequences a program steps together: its positions, its token vector
 * of constant length, or its vector of next tokens; 0 when none says. */
static int batch_rows(const Graph *g)
{
    const Prog *p = g->p;
    int pos = 0, rows = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (g->role[i] == R_POS)
            pos++;
        if ((g->role[i] == R_TOKENS || g->role[i] == R_NEXT) && d->rank == 1 && !d->ty.d[0].sym)
            rows = (int)d->ty.d[0].n;
    }
    return rows ? rows : pos > 1 ? pos : 0;
}

static int phase_of(const Stream *st, int k)
{
    if (prog_has_size(st->progs[k]))
        return PH_CHUNK;
    return st->batch ? PH_BATCH : PH_STEP;
}

int phase_is(const Stream *st, int k, int ph)
{
    return phase_of(st, k) == ph;
}

/* The rows of the weight an input of role r indexes (a token table), the
 * least over the tables. */
static void token_tables(const Graph *g, long *vocab)
{
    for (int k = 0; k < g->nn; k++) {
        const GNode *n = &g->n[k];
        if (n->op != OP_INDEX)
            continue;
        const GNode *w = &g->n[n->args[0]], *ix = &g->n[n->args[1]];
        if (ix->op != G_DECL || !graph_is_decl(g, n->args[0], D_WEIGHT))
            continue;
        int r = g->role[ix->decl];
        long rows = w->ty.d[0].n;
        if ((r == R_TOKEN || r == R_TOKENS) && (*vocab < 0 || rows < *vocab))
            *vocab = rows;
    }
}

/* The rows of the states written by position (KV caches): the context, the
 * least of them. */
static void written_rows(const Graph *g, long *ctx)
{
    for (int k = 0; k < g->nn; k++) {
        const GNode *n = &g->n[k];
        if (n->op == G_WRITE && (*ctx < 0 || n->ty.d[0].n < *ctx))
            *ctx = n->ty.d[0].n;
    }
}

static int same_type(const Decl *a, const Decl *b)
{
    if (a->base != b->base || a->rank != b->rank)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->ty.d[i].n != b->ty.d[i].n)
            return 0;
    return 1;
}

/* The programs of a stream share their states by name: each state is
 * declared alike wherever it is declared. */
static int states_agree(const Stream *st)
{
    StrMap *seen = strmap_new(st->a);   /* state name -> program * 2^20 + declaration */
    for (int k = 0; k < st->nprogs; k++)
        for (int i = 0; i < st->progs[k]->ndecls; i++) {
            const Decl *d = &st->progs[k]->decls[i];
            if (d->kind != D_STATE)
                continue;
            int at = strmap_get(seen, d->name);
            if (at < 0) {
                strmap_put(seen, d->name, k << 20 | i);
                continue;
            }
            const Decl *e = &st->progs[at >> 20]->decls[at & 0xfffff];
            if (!same_type(d, e)) {
                diag_at(st->progs[k]->src, d->line, d->col, "state '%s' is declared with another shape at line %d",
                        d->name, e->line);
                return EXIT_INPUT;
            }
        }
    return 0;
}

/* The chips of the split programs, one number for all of them. */
static int stream_chips(Stream *st)
{
    int first = -1;
    st->chips = 0;
    for (int k = 0; k < st->nprogs; k++) {
        const Prog *p = st->progs[k];
        if (!p->chips)
            continue;
        if (first >= 0 && p->chips != st->chips) {
            diag_at(p->src, p->chips_line, 1, "the program is split over %d chips; the stream's program %d over %d",
                    p->chips, first + 1, st->chips);
            return EXIT_INPUT;
        }
        first = first < 0 ? k : first;
        st->chips = p->chips;
    }
    return 0;
}

int stream_phases(Stream *st)
{
    if (stream_chips(st))
        return EXIT_INPUT;
    st->vocab = -1;
    st->ctx = -1;
    st->batch = 0;
    int single = 0;
    for (int k = 0; k < st->nprogs; k++) {
        const Graph *g = st->graphs[k];
        int b = batch_rows(g);
        st->batch = b > st->batch ? b : st->batch;
        single |= graph_find_role(g, R_TOKEN, 0) >= 0;
        token_tables(g, &st->vocab);
        written_rows(g, &st->ctx);
    }
    for (int k = 0; k < st->nprogs; k++)
        st->has[phase_of(st, k)] = 1;
    if (states_agree(st))
        return EXIT_INPUT;
    if (st->has[PH_BATCH] && (single || st->has[PH_CHUNK])) {
        diag_file(st->src, "a batch of decode steps does not mix with single-sequence programs in one stream");
        return EXIT_INPUT;
    }
    return 0;
}

/* ---- one phase through the lane ---- */

/* Gives n i32 values to every program of the phase with an input of this
 * role (and sequence, for positions). */
static int put_role(Stream *st, int ph, int role, int seq, const void *v, long n)
{
    for (int k = 0; k < st->nprogs; k++) {
        if (phase_of(st, k) != ph)
            continue;
        int d = graph_find_role(st->graphs[k], role, seq);
        if (d < 0)
            continue;
        int s = st->lane->put(st->lane, k, d, v, n);
        if (s)
            return s;
    }
    return 0;
}

int run_phase(Stream *st, int ph)
{
    for (int k = 0; k < st->nprogs; k++)
        if (phase_of(st, k) == ph) {
            int s = st->lane->run(st->lane, k);
            if (s)
                return s;
        }
    return 0;
}

/* The phase's logits (B rows for a batch) and next tokens, from the last of
 * its programs that has either. */
static int harvest(Stream *st, int ph, int32_t *next, int rows)
{
    int lgk = -1, nxk = -1, lgd = -1, nxd = -1;
    for (int k = 0; k < st->nprogs; k++) {
        if (phase_of(st, k) != ph)
            continue;
        int l = graph_find_role(st->graphs[k], R_LOGITS, 0), x = graph_find_role(st->graphs[k], R_NEXT, 0);
        if (l >= 0 || x >= 0) {
            lgk = l >= 0 ? k : -1, lgd = l;
            nxk = x >= 0 ? k : -1, nxd = x;
        }
    }
    if (lgk < 0 && nxk < 0) {
        diag_file(st->src, "the stream's last program has no logits or next token to generate from");
        return EXIT_INPUT;
    }
    Buf lg = {0}, nx = {0};
    int s = 0;
    if (lgk >= 0 && (s = st->lane->fetch(st->lane, lgk, lgd, &lg)))
        return s;
    if (nxk >= 0 && (s = st->lane->fetch(st->lane, nxk, nxd, &nx)))
        return s;
    if (nxk >= 0 && nx.n != rows) {
        diag_file(st->src, "'%s' must be i32%s: one token for each of the %d sequence%s",
                  st->progs[nxk]->decls[nxd].name, rows > 1 ? "[B]" : "", rows, rows == 1 ? "" : "s");
        return EXIT_INPUT;
    }
    if (lgk >= 0 && lg.n % rows) {
        diag_file(st->src, "'%s' must be f32 rows, one for each of the %d sequence%s",
                  st->progs[lgk]->decls[lgd].name, rows, rows == 1 ? "" : "s");
        return EXIT_INPUT;
    }
    long v = lgk >= 0 ? lg.n / rows : 0;
    if (lgk >= 0 && st->logits && fwrite(lg.f, sizeof(float), (size_t)lg.n, st->logits) != (size_t)lg.n) {
        diag("cannot write the logits");
        return EXIT_SYSTEM;
    }
    for (int r = 0; r < rows; r++) {
        if (nxk >= 0) {
            next[r] = nx.i[r];
            continue;
        }
        long best = 0;
        for (long j = 1; j < v; j++)
            if (lg.f[r * v + j] > lg.f[r * v + best])
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

int stream_open(Stream *st, Lane *lane, const WeightsArg *w)
{
    st->lane = lane;
    return lane->bind(lane, st, w);
}

void stream_close(Stream *st)
{
    if (st->lane)
        st->lane->close(st->lane);
    st->lane = NULL;
}

int step_inputs(Stream *st, int32_t tok, int32_t pos)
{
    int s = put_role(st, PH_STEP, R_TOKEN, 0, &tok, 1);
    return s ? s : put_role(st, PH_STEP, R_POS, 0, &pos, 1);
}

int chunk_inputs(Stream *st, const int32_t *toks, int n, int32_t pos0)
{
    int s = put_role(st, PH_CHUNK, R_TOKENS, 0, toks, n);
    return s ? s : put_role(st, PH_CHUNK, R_POS0, 0, &pos0, 1);
}

int batch_step_inputs(Stream *st, const int32_t *toks, const int32_t *pos)
{
    for (int b = 0; b < st->batch; b++) {
        int s = put_role(st, PH_BATCH, R_POS, b, &pos[b], 1);
        if (s)
            return s;
    }
    return put_role(st, PH_BATCH, R_TOKENS, 0, toks, st->batch);
}

int run_step(Stream *st, int32_t tok, int32_t pos, int32_t *next)
{
    int s = step_inputs(st, tok, pos);
    if (!s)
        s = run_phase(st, PH_STEP);
    return s ? s : harvest(st, PH_STEP, next, 1);
}

/* The prompt as chunks of at most chunk_rows tokens from position 1; the
 * next token after the last chunk. */
static int run_chunks(Stream *st, const Prompt *pr, int32_t *next)
{
    int rows = st->chunk_rows > 0 ? st->chunk_rows : pr->n;
    for (int at = 0; at < pr->n; at += rows) {
        int n = pr->n - at < rows ? pr->n - at : rows;
        int s = chunk_inputs(st, pr->ids + at, n, at + 1);
        if (!s)
            s = run_phase(st, PH_CHUNK);
        if (s)
            return s;
    }
    return harvest(st, PH_CHUNK, next, 1);
}

/* Prints one generated token and flushes it, so a filter downstream sees
 * each as it comes. */
static int emit(const Stream *st, FILE *out, const char *fmt, int a, int b)
{
    fprintf(out, fmt, a, b);
    if (fflush(out) != 0) {
        if (st->outname)
            diag_file(st->outname, "cannot write: %s", strerror(errno));
        else
            diag("cannot write to standard output: %s", strerror(errno));
        return EXIT_SYSTEM;
    }
    return 0;
}

/* The token sequence b's step after its prompt takes: the one it was told to
 * follow (--follow), else its own greedy next. */
static int32_t fed(const Stream *st, int b, int g, int32_t next)
{
    const Prompt *f = b < st->nfollow ? &st->follow[b] : NULL;
    return f && g < f->n ? f->ids[g] : next;
}

/* One sequence: the prompt as chunks or step by step, then decode steps. */
static int run_one(Stream *st, const Prompt *pr, int ngen, FILE *out)
{
    int32_t next = 0, pos;
    int s;
    if (st->has[PH_CHUNK]) {
        if ((s = run_chunks(st, pr, &next)))
            return s;
    } else {
        for (pos = 1; pos <= pr->n; pos++)
            if ((s = run_step(st, pr->ids[pos - 1], pos, &next)))
                return s;
    }
    for (int g = 0; g < ngen; g++) {
        if ((s = emit(st, out, "%d\n", next, 0)))
            return s;
        st->generated++;
        if (g == ngen - 1)
            break;
        if ((s = run_step(st, fed(st, 0, g, next), pr->n + 1 + g, &next)))
            return s;
    }
    return 0;
}

/* B sequences stepping together: sequence b feeds its prompt, then what it
 * generates; it prints `b id` for each generated token. */
static int run_batch(Stream *st, const Prompt *pr, int ngen, FILE *out)
{
    int B = st->batch, longest = 0;
    int32_t *toks = arena_alloc(st->a, (size_t)B * sizeof *toks), *next = arena_alloc(st->a, (size_t)B * sizeof *next);
    int32_t *pos = arena_alloc(st->a, (size_t)B * sizeof *pos);
    int *made = arena_alloc(st->a, (size_t)B * sizeof *made);
    for (int b = 0; b < B; b++)
        longest = pr[b].n > longest ? pr[b].n : longest;
    int s = 0;
    for (int step = 0; !s && step < longest + ngen - 1; step++) {
        for (int b = 0; b < B; b++) {
            toks[b] = step < pr[b].n ? pr[b].ids[step] : fed(st, b, step - pr[b].n, next[b]);
            pos[b] = step + 1;
        }
        if ((s = batch_step_inputs(st, toks, pos)) || (s = run_phase(st, PH_BATCH)) ||
            (s = harvest(st, PH_BATCH, next, B)))
            break;
        for (int b = 0; !s && b < B; b++)
            if (step + 1 >= pr[b].n && made[b] < ngen) {
                s = emit(st, out, "%d %d\n", b, next[b]);
                made[b]++;
                st->generated++;
            }
    }
    return s;
}

int run_generate(Stream *st, const Prompt *prompts, int nprompts, int ngen, FILE *out)
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
    for (int b = 0; b < st->nfollow; b++)
        for (int i = 0; i < st->follow[b].n; i++)
            if (st->follow[b].ids[i] < 0 || (st->vocab > 0 && st->follow[b].ids[i] >= st->vocab)) {
                diag("--follow token %d is %d: token ids run from 0 to %ld", i + 1, st->follow[b].ids[i], st->vocab - 1);
                return EXIT_INPUT;
            }
    return st->has[PH_BATCH] ? run_batch(st, prompts, ngen, out) : run_one(st, prompts, ngen, out);
}

/* ---- the CPU reference as a lane ---- */

/* A split stream runs as its chips, each with an env of its own (its part
 * of the weights, its states): a split program through tp.c, a program not
 * split (a cut form's embedding or head, the replicated spine) on every
 * chip in turn; outputs are read from chip 0, whose are every chip's. */
typedef struct CpuLane {
    Lane lane;
    Stream *st;
    int chips;
    Env **envs;          /* each chip's */
    Weights **weights;   /* one binding per program and chip */
    int runs;            /* runs so far, LOGOS_TRACE's numbering */
    int ref_numerics;    /* LOGOS_REF_NUMERICS: a plan's program computed as its launches compute */
    RefNum *num;         /* each program's way (zeroed: f32), set at bind */
} CpuLane;

static int cpu_bind(Lane *l, Stream *st, const WeightsArg *w)
{
    CpuLane *c = (CpuLane *)l;
    c->st = st;
    c->chips = st->chips ? st->chips : 1;
    c->envs = arena_alloc(st->a, sizeof *c->envs * (size_t)c->chips);
    for (int r = 0; r < c->chips; r++)
        c->envs[r] = env_new();
    c->weights = arena_alloc(st->a, sizeof *c->weights * (size_t)st->nprogs * (size_t)c->chips);
    /* a plan's products read their activations quantized as its numerics
     * say, and its flash launches' attention is flash.cu's, as the CUDA
     * lane's are (LOGOS_REF_NUMERICS) */
    c->num = arena_alloc(st->a, sizeof *c->num * (size_t)st->nprogs);
    for (int k = 0; c->ref_numerics && st->plans && k < st->nprogs; k++)
        if (st->plans[k])
            c->num[k] = plan_ref_numerics(st->a, st->plans[k]);
    for (int k = 0; k < st->nprogs; k++)
        for (int r = 0; r < c->chips; r++) {
            const Prog *p = st->progs[k];
            ASSERT(p->chips <= c->chips);   /* stream_phases found the stream's chips */
            Weights **wk = &c->weights[k * c->chips + r];
            int s = p->chips ? weights_bind_chip(wk, p, c->envs[r], w->dir, w->seed, r)
                             : weights_bind(wk, p, c->envs[r], w->dir, w->seed);
            if (s)
                return s;
        }
    return 0;
}

static int cpu_put(Lane *l, int k, int d, const void *v, long n)
{
    CpuLane *c = (CpuLane *)l;
    const Decl *decl = &c->st->progs[k]->decls[d];
    long dims[LOGOS_MAXRANK];
    for (int i = 0; i < decl->rank; i++)   /* the first axis from n, the others declared */
        dims[i] = i ? decl->ty.d[i].n : 1;
    long per = 1;
    for (int i = 1; i < decl->rank; i++)
        per *= dims[i];
    if (decl->rank)
        dims[0] = n / per;
    for (int r = 0; r < c->chips; r++) {
        Buf *b = env_alloc(c->envs[r], decl->name, decl->base == T_I32 ? T_I32 : T_F32, decl->rank, dims);
        memcpy(decl->base == T_I32 ? (void *)b->i : (void *)b->f, v, 4 * (size_t)n);
    }
    return 0;
}

static int cpu_run(Lane *l, int k)
{
    CpuLane *c = (CpuLane *)l;
    const Prog *p = c->st->progs[k];
    if (p->chips > 1)
        return tp_run(p, c->envs);
    int run = c->runs++;
    if (c->chips == 1 && trace_dir())
        return ref_run_trace(p, c->envs[0], &c->num[k], run, k);
    for (int r = 0; r < c->chips; r++) {
        int s = c->chips == 1 ? ref_run_numerics(p, c->envs[r], &c->num[k], run) : ref_run(p, c->envs[r]);
        if (s)
            return s;
    }
    return 0;
}

static int cpu_fetch(Lane *l, int k, int d, Buf *out)
{
    CpuLane *c = (CpuLane *)l;
    const Buf *b = env_get(c->envs[0], c->st->progs[k]->decls[d].name);
    ASSERT(b);   /* ref_run leaves every output in env */
    *out = *b;
    return 0;
}

static void cpu_close(Lane *l)
{
    CpuLane *c = (CpuLane *)l;
    for (int k = 0; c->weights && k < c->st->nprogs * c->chips; k++)
        weights_close(c->weights[k]);
    for (int r = 0; c->envs && r < c->chips; r++)
        env_free(c->envs[r]);
    free(c);
}

Lane *lane_cpu(void)
{
    CpuLane *c = calloc(1, sizeof *c);
    if (!c) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    c->lane = (Lane){"cpu reference", cpu_bind, cpu_put, cpu_run, cpu_fetch, cpu_close};
    const char *rn = getenv("LOGOS_REF_NUMERICS");
    c->ref_numerics = rn && *rn && strcmp(rn, "0");
    return &c->lane;
}
