/* fuse.c — the rules that decide, by dataflow, which nodes of a program's
 * graph one launch covers: products of one activation merge into one
 * product in parts, with the norm that feeds them as its prologue and the
 * elementwise ops that read them (bias, gate and activation, soft-cap,
 * residual, arg-max) as its epilogue; rope takes its per-head norm and its
 * cache append, a rope of the same attributes that does not wait on it, and
 * the value append; a short convolution takes
 * the gate before it, its activation and the gate after it; an embedding
 * takes its scale; a norm takes the residual it feeds; a producer whose readers are
 * all products quantizes in its epilogue (fuse_quant). Each rule asks the
 * lane's facts (the kernels' conditions) before it fuses, and says why not
 * under -v. Nodes no rule takes run alone. The groups are then ordered by
 * their dataflow and state edges, and lane_cuda.c turns them into launches. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

/* ---- notes (-v) ---- */

void fuse_note(Fz *f, int node, const char *fmt, ...)
{
    if (!f->o->verbose)
        return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const GNode *n = &f->g->n[node];
    int line = n->stmt >= 0 ? f->p->stmts[n->stmt].line : f->p->decls[n->decl].line;
    fprintf(stderr, "%s: %s:%d: %s\n", diag_tool, f->p->src ? f->p->src->name : "<program>", line, msg);
}

static const char *rule_names[RU_COUNT] = {"norm_prologue", "gemv_parts", "gated_pair", "epilogue", "residual",
                                           "lm_argmax", "rope_append", "chunks_apart", "fuse_quant",
                                           "conv_gates", "moe_kept", "rope_attend",
                                           "latent_absorbed", "concat_rows", "delta_steps", "batch_attend",
                                           "moe_shared", "gate_prologue", "latent_expanded",
                                           "sandwich_prologue", "preload", "early_trigger", "norm_split",
                                           "norm_pair"};

void took(Fz *f, int rule)
{
    f->taken |= 1u << rule;
}

static const char *stmt_name(const Fz *f, int node)
{
    int s = f->g->n[node].stmt;
    return s >= 0 ? f->p->stmts[s].name : f->p->decls[f->g->n[node].decl].name;
}

/* ---- the graph, read ---- */

static const GNode *N(const Fz *f, int k)
{
    return &f->g->n[k];
}

int view_root(const Graph *g, int node)
{
    while (g->n[node].op == OP_RESHAPE)
        node = g->n[node].args[0];
    return node;
}

static void consumers(Fz *f)
{
    const Graph *g = f->g;
    f->cons = arena_alloc(f->a, sizeof *f->cons * (size_t)g->nn);
    f->ncons = arena_alloc(f->a, sizeof *f->ncons * (size_t)g->nn);
    int *cap = arena_alloc(f->a, sizeof *cap * (size_t)g->nn);
    for (int k = 0; k < g->nn; k++)
        for (int i = 0; i < g->n[k].nargs; i++) {
            int a = g->n[k].args[i];
            *VEC_PUSH(f->a, f->cons[a], f->ncons[a], cap[a]) = k;
        }
}

/* The one consumer of node k, or -1. */
static int only_use(const Fz *f, int k)
{
    return f->ncons[k] == 1 ? f->cons[k][0] : -1;
}

int is_decl_of(const Fz *f, int k, int kind)
{
    return graph_is_decl(f->g, k, kind);
}

static int free_node(const Fz *f, int k)
{
    return f->group[k] < 0;
}

static long last_dim(const Type *t)
{
    return t->rank ? t->d[t->rank - 1].n : 1;
}

static int same_type(const Type *a, const Type *b)
{
    if (a->base != b->base || a->rank != b->rank || a->ragged || b->ragged)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->d[i].sym != b->d[i].sym || (!a->d[i].sym && a->d[i].n != b->d[i].n))
            return 0;
    return 1;
}

/* Types alike but in their last dimension: a value a row of b's rows when
 * a's last is 1. */
static int same_rows(const Type *a, const Type *b)
{
    if (a->rank != b->rank || a->ragged || b->ragged)
        return 0;
    for (int i = 0; i + 1 < a->rank; i++)
        if (a->d[i].sym != b->d[i].sym || (!a->d[i].sym && a->d[i].n != b->d[i].n))
            return 0;
    return 1;
}

static int is_output(const Fz *f, int k);

/* Node x, op op, read by use alone and no output? */
static int lone(const Fz *f, int x, int use, int op)
{
    return N(f, x)->op == op && only_use(f, x) == use && free_node(f, x) && !is_output(f, x);
}

/* The first attribute a and b spell differently (or one lacks), NULL when
 * none: its name, and its spelling in each ("-" where absent). */
static const char *attr_diff(const Expr *a, const Expr *b, const char **ta, const char **tb)
{
    for (int r = 0; r < 2; r++) {
        const Expr *x = r ? b : a, *y = r ? a : b;
        for (int i = 0; i < x->nattrs; i++) {
            const Attr *o = attr_get(y, x->attrs[i].name);
            if (!o || strcmp(o->text, x->attrs[i].text)) {
                *(r ? tb : ta) = x->attrs[i].text;
                *(r ? ta : tb) = o ? o->text : "-";
                return x->attrs[i].name;
            }
        }
    }
    return NULL;
}

/* Two calls with the same attributes, spelled alike. */
static int same_attrs(const Expr *a, const Expr *b)
{
    const char *ta, *tb;
    return !attr_diff(a, b, &ta, &tb);
}

/* ---- groups ---- */

static Group *new_group(Fz *f, int kind, int node)
{
    Group *gr = VEC_PUSH(f->a, f->gs, f->ng, f->cg);
    memset(gr, 0, sizeof *gr);
    gr->kind = kind;
    gr->node = node;
    gr->argmax = gr->norm = gr->x = gr->pos = gr->add = gr->resid = gr->gs = gr->cat = gr->xg = gr->pre = -1;
    gr->sq = gr->rn = -1;
    for (int i = 0; i < 4; i++)
        gr->prod[i] = gr->out[i] = gr->bias[i] = gr->res[i] = -1;
    for (int i = 0; i < 3; i++)
        gr->rope[i] = gr->rx[i] = gr->rnorm[i] = gr->rwrite[i] = gr->rya[i] = gr->sh[i] = -1;
    return gr;
}

static void take(Fz *f, Group *gr, int node)
{
    ASSERT(f->group[node] < 0);
    f->group[node] = (int)(gr - f->gs);
    *VEC_PUSH(f->a, gr->nodes, gr->nn, gr->cn) = node;
}

/* ---- products: parts, gated pairs, epilogues, the norm prologue ---- */

/* The weight's format of a product: T_Q8 or T_F32. */
static int wformat(const Fz *f, int prod)
{
    return N(f, N(f, prod)->args[0])->ty.base;
}

/* An optional bias after node k: ADD(k, w) with w an f32 weight vector of
 * k's last width. The add node, or -1. */
static int bias_after(const Fz *f, int k, int *w)
{
    int u = only_use(f, k);
    if (u < 0 || N(f, u)->op != OP_ADD)
        return -1;
    int o = N(f, u)->args[0] == k ? N(f, u)->args[1] : N(f, u)->args[0];
    if (!is_decl_of(f, o, D_WEIGHT) || N(f, o)->ty.base != T_F32 || N(f, o)->ty.rank != 1 ||
        N(f, o)->ty.d[0].n != last_dim(&N(f, k)->ty) || !same_type(&N(f, u)->ty, &N(f, k)->ty))
        return -1;
    *w = o;
    return u;
}

/* Is prod the gate of a gated pair act(prod [+ b]) * (up [+ b])? The up
 * product, the act (1 silu, 2 gelu_tanh) and the mul in *up, *act, *mul. */
static int gate_of(const Fz *f, int prod, int *up, int *act, int *mul)
{
    int w, k = prod, b = bias_after(f, prod, &w);
    if (b >= 0)
        k = b;
    int a = only_use(f, k);
    if (a < 0 || (N(f, a)->op != OP_SILU && N(f, a)->op != OP_GELU))
        return 0;
    int m = only_use(f, a);
    if (m < 0 || N(f, m)->op != OP_MUL)
        return 0;
    int other = N(f, m)->args[0] == a ? N(f, m)->args[1] : N(f, m)->args[0];
    int u = other;
    if (N(f, u)->op == OP_ADD) {   /* the up's bias */
        int x = N(f, u)->args[0], y = N(f, u)->args[1];
        u = N(f, x)->op == OP_MATMUL ? x : y;
        int wb;
        if (N(f, u)->op != OP_MATMUL || bias_after(f, u, &wb) != other)
            return 0;
    }
    if (N(f, u)->op != OP_MATMUL || u == prod || only_use(f, u) < 0 || !free_node(f, u) ||
        view_root(f->g, N(f, u)->args[1]) != view_root(f->g, N(f, prod)->args[1]) ||
        N(f, u)->ty.d[N(f, u)->ty.rank - 1].n != N(f, prod)->ty.d[N(f, prod)->ty.rank - 1].n ||
        wformat(f, u) != wformat(f, prod))
        return 0;
    *up = u;
    *act = N(f, a)->op == OP_SILU ? 1 : 2;
    *mul = m;
    return 1;
}

static long mma_bound(const Fz *f, const Group *gr);

/* The group's earliest node: nothing before it reads a node of the group. */
static int first_node(const Group *gr)
{
    int lo = gr->nodes[0];
    for (int i = 1; i < gr->nn; i++)
        lo = gr->nodes[i] < lo ? gr->nodes[i] : lo;
    return lo;
}

/* A walk over the graph's nodes lo to hi (a node's operands come before
 * it): a mark each, seen[k - lo], and a stack (free both). Sized to the
 * span, not the graph: a walk a group over the whole graph was quadratic
 * in a program's layers. */
static int *walk_mem(int lo, int hi, char **seen)
{
    size_t n = hi >= lo ? (size_t)(hi - lo) + 1 : 1;
    *seen = calloc(n, 1);
    int *stack = malloc(sizeof *stack * n);
    if (!*seen || !stack) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    return stack;
}

/* Does node k read (through its arguments and ordering edges, back to
 * node lo, before which nothing reads a node of it) a node of group g? A
 * launch of g cannot wait on what it makes. */
static int reads_group(const Fz *f, int k, int g, int lo)
{
    if (k < lo)   /* its operands come before it */
        return 0;
    char *seen;
    int *stack = walk_mem(lo, k, &seen), ns = 0, hit = 0;
    stack[ns++] = k;
    seen[k - lo] = 1;
    while (ns && !hit) {
        const GNode *n = N(f, stack[--ns]);
        for (int i = 0; i < n->nargs + n->nafter; i++) {
            int a = i < n->nargs ? n->args[i] : n->after[i - n->nargs];
            if (a < lo || seen[a - lo])
                continue;
            hit |= f->group[a] == g;
            seen[a - lo] = 1;
            stack[ns++] = a;
        }
    }
    free(seen);
    free(stack);
    return hit;
}

/* Takes part p's epilogue after node k: a bias, then (part 0) a soft-cap,
 * then a residual add, then (part 0, one output) an arg-max, but not
 * where the rows go to the tensor cores' passes (mmv takes none). */
static void epilogue(Fz *f, Group *gr, int p, int k)
{
    int w, b = bias_after(f, k, &w);
    if (b >= 0 && !(gr->gate && p == 0)) {
        take(f, gr, b);
        gr->bias[p] = w;
        k = b;
        fuse_note(f, b, "rule epilogue: the bias %s folds into the product's epilogue", f->p->decls[N(f, w)->decl].name);
        took(f, RU_EPILOGUE);
    }
    int u = only_use(f, k);
    if (p == 0 && u >= 0 && N(f, u)->op == OP_SOFTCAP) {
        take(f, gr, u);
        gr->cap = attr_num(N(f, u)->e, "cap", 0);
        k = u;
        u = only_use(f, k);
        fuse_note(f, k, "rule epilogue: the soft-cap folds into the product's epilogue");
        took(f, RU_EPILOGUE);
    }
    if (p == 0 && gr->parts == 1 && u >= 0 && N(f, u)->op == OP_MUL && free_node(f, u) && !is_output(f, u)) {
        /* a gated output: sigmoid(s) * (W x), s a value a row (Qwen3-Next's
         * shared expert) */
        int o = N(f, u)->args[0] == k ? N(f, u)->args[1] : N(f, u)->args[0];
        const GNode *sg = N(f, o);
        if (o != k && lone(f, o, u, OP_SIGMOID) &&
            last_dim(&sg->ty) == 1 && same_rows(&sg->ty, &N(f, k)->ty) &&
            same_type(&N(f, u)->ty, &N(f, k)->ty)) {
            take(f, gr, u);
            take(f, gr, o);
            gr->gs = sg->args[0];
            fuse_note(f, u, "rule epilogue: the gate of %s, a sigmoid of a value a row, folds into the product's epilogue",
                      stmt_name(f, u));
            took(f, RU_EPILOGUE);
            k = u;
            u = only_use(f, k);
        }
    }
    if (u >= 0 && N(f, u)->op == OP_ADD) {
        int o = N(f, u)->args[0] == k ? N(f, u)->args[1] : N(f, u)->args[0], g = (int)(gr - f->gs);
        if (o != k && same_type(&N(f, o)->ty, &N(f, k)->ty) && same_type(&N(f, u)->ty, &N(f, k)->ty) &&
            f->group[o] != g && !reads_group(f, o, g, first_node(gr))) {   /* not another part's output */
            take(f, gr, u);
            gr->res[p] = o;
            k = u;
            u = only_use(f, k);
            fuse_note(f, k, "rule residual: %s's residual add folds into the product's epilogue", stmt_name(f, k));
            took(f, RU_RESIDUAL);
        }
    }
    gr->out[p] = k;
    if (p == 0 && gr->parts == 1 + (gr->gate != 0) && u >= 0 && N(f, u)->op == OP_ARGMAX) {
        long rows = mma_bound(f, gr);
        if (rows) {
            fuse_note(f, u, "no lm_argmax: %ld stacked rows go to the tensor cores (--mmv-rows, --mma-rows), "
                      "which take no arg-max; it runs alone", rows);
            return;
        }
        take(f, gr, u);
        gr->argmax = u;
        fuse_note(f, u, "rule lm_argmax: the arg-max folds into the LM head's product");
        took(f, RU_LM_ARGMAX);
    }
}

/* The stacked rows of a product group bound for the tensor cores (at
 * least the fewer of the two crossovers' rows, Q8_0 parts over whole
 * 32-value blocks, quantized numerics, no arg-max: the facts the lane's
 * take_mma and take_mmv decide by, less the activation's format, which the
 * norm decides here), else 0. */
static long mma_bound(const Fz *f, const Group *gr)
{
    const Type *pt = &N(f, gr->prod[0])->ty;
    long rows = 1;
    int q8 = f->o->numerics != NUM_PRECISE && gr->argmax < 0 && !(N(f, N(f, gr->prod[0])->args[0])->ty.d[1].n % 32);
    for (int i = 0; i < pt->rank - 1; i++)
        rows *= dim_bound(&pt->d[i], f->o->rows);
    for (int p = 0; p < gr->parts; p++)
        q8 &= N(f, N(f, gr->prod[p])->args[0])->ty.base == T_Q8;
    return q8 && rows >= tc_crossover(f->o) ? rows : 0;
}

/* Is x read (through reshapes) by anything but the group's products? */
static int read_elsewhere(const Fz *f, const Group *gr, int x)
{
    int stack[64], ns = 0, other = 0;
    stack[ns++] = x;
    while (ns) {
        int k = stack[--ns];
        for (int i = 0; i < f->ncons[k]; i++) {
            int c = f->cons[k][i];
            if (N(f, c)->op == OP_RESHAPE && ns < 64) {
                stack[ns++] = c;
                continue;
            }
            int mine = 0;
            for (int p = 0; p < gr->parts; p++)
                mine |= gr->prod[p] == c;
            other |= !mine;
        }
    }
    return other;
}

/* Why the norm m, read by the add a alone, may not join the prologue of
 * gr's norm nm as a sandwich norm before its residual, or NULL. */
static const char *no_sandwich(const Fz *f, const GNode *a, const GNode *m, const GNode *nm)
{
    long K = last_dim(&m->ty);
    if (m->nargs != 2 || !is_decl_of(f, m->args[1], D_WEIGHT))
        return "its weight is not a weight";
    if (attr_num(m->e, "eps", 0) != attr_num(nm->e, "eps", 0) ||
        attr_num(m->e, "offset", 0) != attr_num(nm->e, "offset", 0))
        return "its eps or offset differs from the prologue's norm's";
    if (!same_type(&m->ty, &a->ty) || !same_type(&N(f, a->args[0])->ty, &N(f, a->args[1])->ty) ||
        m->ty.base != T_F32)
        return "the add's operands are not f32 values of one shape";
    if (K % 16 || K > 4096)
        return "its rows are not whole 16-value segments of at most 4096 values (the prologue's registers)";
    return NULL;
}

/* A norm prologue's input r = s + rmsnorm(u, w) (a sandwich norm, its
 * residual after it: Gemma 2's after attention and after the
 * feed-forward): the prologue computes r from u and s first, the inner
 * norm's eps and offset those of its own norm; where later launches read
 * r too (the next residual), block 0 writes it (XR). One launch fewer. */
static void sandwich(Fz *f, Group *gr)
{
    int r = gr->x, m = -1;
    const GNode *a = N(f, r);
    if (!f->o->lane_rules || a->op != OP_ADD || !free_node(f, r) || gr->nout)
        return;
    for (int i = 0; i < 2 && m < 0; i++)
        if (a->args[i] != a->args[1 - i] && lone(f, a->args[i], r, OP_RMSNORM))
            m = a->args[i];
    if (m < 0)
        return;
    const char *why = no_sandwich(f, a, N(f, m), N(f, gr->norm));
    if (why) {
        fuse_note(f, m, "no sandwich_prologue: %s runs alone: %s", stmt_name(f, m), why);
        return;
    }
    take(f, gr, r);
    take(f, gr, m);
    gr->pre = m;
    gr->add = r;
    gr->resid = a->args[0] == m ? a->args[1] : a->args[0];
    gr->x = N(f, m)->args[0];
    gr->xr = is_output(f, r);
    for (int i = 0; i < f->ncons[r]; i++)
        gr->xr |= f->cons[r][i] != gr->norm;
    fuse_note(f, r, "rule sandwich_prologue: %s and its residual %s are computed in the prologue of the products of "
              "%s%s", stmt_name(f, m), stmt_name(f, r), stmt_name(f, gr->prod[0]),
              gr->xr ? ", which write it for the launches after that read it" : "");
    took(f, RU_SANDWICH_PROLOGUE);
}

/* Takes the norm that feeds every product of the group as its prologue;
 * where other launches read it too (a mixture's norm: the router, the
 * experts; Qwen3-Next's: two products in parts), the first group of
 * products that is not a gated pair takes it and writes it for them
 * (NOUT): one launch fewer. A gated pair keeps to a norm of its own (its
 * registers; and a shared expert's pair must stay free for moe_shared). */
static void prologue(Fz *f, Group *gr)
{
    int x = gr->x;
    const GNode *n = N(f, x);
    if (n->op != OP_RMSNORM || !free_node(f, x))
        return;
    if (n->nargs == 2 && !is_decl_of(f, n->args[1], D_WEIGHT)) {
        fuse_note(f, x, "no prologue: the norm's weight is computed, not a weight");
        return;
    }
    /* every block of an MMA would norm and quantize its 64 rows again for
     * each tile of outputs it takes (and an MMV reads them quantized); the
     * norm runs once instead, quantizing in its epilogue */
    long rows = mma_bound(f, gr);
    if (rows) {
        fuse_note(f, x, "no prologue: %ld stacked rows go to the tensor cores, whose blocks would each norm them again",
                  rows);
        return;
    }
    gr->nout = read_elsewhere(f, gr, x);
    if (gr->nout && (gr->gate || !f->o->lane_rules)) {
        gr->nout = 0;
        fuse_note(f, x, "no prologue: %s is read by more than this launch's products%s", stmt_name(f, x),
                  gr->gate ? ", and a gated pair does not write it out" : "");
        return;
    }
    take(f, gr, x);
    gr->norm = x;
    gr->x = n->args[0];
    if (gr->nout)
        fuse_note(f, x, "rule norm_prologue: %s is computed in the prologue of the products of %s, which write it for "
                  "the launches after that read it too", stmt_name(f, x), stmt_name(f, gr->prod[0]));
    else
        fuse_note(f, x, "rule norm_prologue: %s is computed in the prologue of the products that read it",
                  stmt_name(f, x));
    took(f, RU_NORM_PROLOGUE);
    sandwich(f, gr);
}

/* The products' activation x * sigmoid(g), read by them alone: the mul
 * and the sigmoid join the launch, whose prologue gates each value as it
 * stages it (Qwen3-Next's attention output gate before its o product);
 * g a slice read by the sigmoid alone is taken too, read in place in its
 * base where its runs are whole 16-value segments dividing K at places of
 * whole 4-value words. One launch instead of two or three. Not with a norm
 * prologue, nor for stacked rows bound for the tensor cores' tiles (MMA);
 * rows that would go to MMV in passes stay GEMV rows (MMV reads quantized
 * activations). */
static void gate_prologue(Fz *f, Group *gr)
{
    int x = gr->x, a, s;
    const GNode *m = N(f, x);
    long K = N(f, N(f, gr->prod[0])->args[0])->ty.d[1].n;
    if (!f->o->lane_rules || gr->norm >= 0 || m->op != OP_MUL || !free_node(f, x) || is_output(f, x))
        return;
    a = m->args[0], s = m->args[1];
    if (N(f, s)->op != OP_SIGMOID)
        a = m->args[1], s = m->args[0];
    if (N(f, s)->op != OP_SIGMOID || a == s || !free_node(f, s) || only_use(f, s) != x || is_output(f, s))
        return;
    int g = N(f, s)->args[0];
    const Type *t = &m->ty;
    if (!same_type(&N(f, a)->ty, t) || !same_type(&N(f, g)->ty, t) || t->base != T_F32 || K % 16) {
        fuse_note(f, x, "no gate_prologue: %s is not a gate of f32 values of its own shape, in whole 16-value "
                  "segments", stmt_name(f, x));
        return;
    }
    if (read_elsewhere(f, gr, x)) {
        fuse_note(f, x, "no gate_prologue: %s is read by more than this launch's products", stmt_name(f, x));
        return;
    }
    long rows = mma_bound(f, gr);
    if (rows >= mma_crossover(f->o)) {   /* below, its f32 activations keep it a GEMV */
        fuse_note(f, x, "no gate_prologue: %ld stacked rows go to the tensor cores in tiles", rows);
        return;
    }
    take(f, gr, x);
    take(f, gr, s);
    const GNode *gn = N(f, g);
    if (gn->op == OP_SLICE && only_use(f, g) == s && free_node(f, g) && !is_output(f, g)) {
        long w = last_dim(&gn->ty), pitch = last_dim(&N(f, gn->args[0])->ty), at = (long)attr_num(gn->e, "at", 0);
        if (w % 16 == 0 && K % w == 0 && pitch % 4 == 0 && at % 4 == 0)
            take(f, gr, g);
        else
            fuse_note(f, g, "the gate %s is copied out of its row: its runs of %ld are not whole 16-value segments "
                      "dividing %ld at places of whole 4-value words", stmt_name(f, g), w, K);
    }
    gr->xg = g;
    gr->x = a;
    fuse_note(f, x, "rule gate_prologue: %s is gated in the prologue of the products that read it%s", stmt_name(f, x),
              f->group[g] == (int)(gr - f->gs) ? ", its gate read in place" : "");
    took(f, RU_GATE_PROLOGUE);
}

/* Does product k join gr's parts (the lane's facts, and under the held-back
 * lane rules the tensor cores' whole 128-output tiles)? */
static int joins(Fz *f, const Group *gr, int k, int need)
{
    if (gr->parts + need > 4) {
        fuse_note(f, k, "no part: a product in parts has at most four");
        return 0;
    }
    if (wformat(f, k) != wformat(f, gr->prod[0])) {
        fuse_note(f, k, "no part: the weights' formats differ (one launch reads one format)");
        return 0;
    }
    if (!f->o->lane_rules && last_dim(&N(f, k)->ty) % 128) {
        fuse_note(f, k, "no part: lane rules held back, and %ld outputs are not whole 128-output tiles",
                  last_dim(&N(f, k)->ty));
        return 0;
    }
    return 1;
}

static void add_part(Fz *f, Group *gr, int prod)
{
    take(f, gr, prod);
    gr->prod[gr->parts++] = prod;
}

/* Takes the gated pair act(g [+ b]) * (up [+ b]) as parts 0 and 1; the mul. */
static int gated_pair(Fz *f, Group *gr, int g, int up, int act, int mul)
{
    add_part(f, gr, g);
    add_part(f, gr, up);
    gr->gate = act;
    gr->node = g;
    int w, gb = bias_after(f, g, &w);
    if (gb >= 0) {
        take(f, gr, gb);
        gr->bias[0] = w;
    }
    int ub = bias_after(f, up, &w);
    if (ub >= 0) {
        take(f, gr, ub);
        gr->bias[1] = w;
    }
    take(f, gr, only_use(f, gb >= 0 ? gb : g));
    take(f, gr, mul);
    fuse_note(f, mul, "rule gated_pair: %s and %s with %s as one product launch",
              f->p->decls[N(f, N(f, g)->args[0])->decl].name, f->p->decls[N(f, N(f, up)->args[0])->decl].name,
              act == 1 ? "silu" : "gelu_tanh");
    took(f, RU_GATED_PAIR);
    return mul;
}

/* The free products of activation x (through its reshapes) from node first
 * on, the first 256 in node order, into prods: found among x's readers,
 * not by a walk to the program's end (fusing was quadratic in layers). */
static int products_of(Fz *f, int x, int first, int *prods)
{
    int *stack = NULL, ns = 0, cs = 0, *all = NULL, n = 0, ca = 0, m = 0;
    *VEC_PUSH(f->a, stack, ns, cs) = x;
    while (ns) {
        int v = stack[--ns];
        for (int i = 0; i < f->ncons[v]; i++) {
            int c = f->cons[v][i];
            const GNode *cn = N(f, c);
            if (cn->op == OP_RESHAPE && cn->args[0] == v)
                *VEC_PUSH(f->a, stack, ns, cs) = c;
            else if (cn->op == OP_MATMUL && c >= first && free_node(f, c) && view_root(f->g, cn->args[1]) == x)
                *VEC_PUSH(f->a, all, n, ca) = c;
        }
    }
    if (n)
        qsort(all, (size_t)n, sizeof *all, int_cmp);
    for (int i = 0; i < n && m < 256; i++)   /* a product reading x twice is listed once */
        if (!m || prods[m - 1] != all[i])
            prods[m++] = all[i];
    return m;
}

/* The products of activation x: gated pairs first, then the others, in
 * groups of at most four parts. */
static void product_group(Fz *f, int first)
{
    int x = view_root(f->g, N(f, first)->args[1]);
    int prods[256], n = products_of(f, x, first, prods);
    while (n) {
        Group *gr = new_group(f, GK_GEMV, prods[0]);
        gr->x = x;
        int up, act, mul, gmul = -1, used = 0;
        for (int i = 0; i < n && !gr->parts; i++)
            if (gate_of(f, prods[i], &up, &act, &mul))
                gmul = gated_pair(f, gr, prods[i], up, act, mul);
        for (int i = 0; i < n; i++) {
            int k = prods[i];
            if (!free_node(f, k))
                continue;
            if (!gr->parts || joins(f, gr, k, 1)) {
                add_part(f, gr, k);
                if (gr->parts > 1) {
                    fuse_note(f, k, "rule gemv_parts: %s joins the product of %s as part %d", stmt_name(f, k),
                              stmt_name(f, gr->prod[0]), gr->parts - 1);
                    took(f, RU_GEMV_PARTS);
                }
            }
        }
        for (int p = 0; p < gr->parts; p++)
            if (!(gr->gate && p == 1))
                epilogue(f, gr, p, gr->gate && p == 0 ? gmul : gr->prod[p]);
        prologue(f, gr);
        gate_prologue(f, gr);
        for (int i = 0; i < n; i++)
            if (free_node(f, prods[i]))
                prods[used++] = prods[i];
        n = used;
    }
}

/* ---- rope with its norms and the cache appends ---- */

/* Does node k wait on group gr's launch: does an operand or ordering edge
 * of it but node but read (back to the group's first node) a node of gr? */
static int waits_on(const Fz *f, const Group *gr, int k, int but)
{
    const GNode *n = N(f, k);
    int g = (int)(gr - f->gs), lo = first_node(gr);
    for (int i = 0; i < n->nargs + n->nafter; i++) {
        int a = i < n->nargs ? n->args[i] : n->after[i - n->nargs];
        if (a != but && a >= lo && (f->group[a] == g || reads_group(f, a, g, lo)))
            return 1;
    }
    return 0;
}

/* The state write of node k at positions pos, when it is k's one use. */
static int write_of(const Fz *f, int k, int pos)
{
    int u = only_use(f, k);
    if (u < 0 || N(f, u)->op != G_WRITE || N(f, u)->args[2] != k || N(f, u)->args[1] != pos || !free_node(f, u))
        return -1;
    return u;
}

/* The node a view chain from k ends at, when each view on the way is read
 * by the next alone (u the chain's one reader): the slice a part may read
 * in place; -1 else. */
static int slice_under(const Fz *f, int k, int u)
{
    while (N(f, k)->op == OP_RESHAPE) {
        if (only_use(f, k) != u)
            return -1;
        u = k;
        k = N(f, k)->args[0];
    }
    return lone(f, k, u, OP_SLICE) ? k : -1;
}

/* A rope part's input x (read by u alone), of heads h of w values: a slice
 * of the last dimension is read in place where each of its rows is one
 * head (w its width) or a whole row of heads (h w its width), and taken. */
static void part_read(Fz *f, Group *gr, int x, int u, long h, long w)
{
    int s = slice_under(f, x, u);
    if (s < 0)
        return;
    long n = last_dim(&N(f, s)->ty);
    if (n != w && n != h * w)
        return;
    take(f, gr, s);
    gr->rin_place = 1;
    fuse_note(f, s, "rule rope_append: the rope's launch reads %s's values from %ld in place, not a copy",
              stmt_name(f, view_root(f->g, N(f, s)->args[0])), (long)attr_num(N(f, s)->e, "at", 0));
}

static long part_heads(const Type *t, int flat)
{
    return flat || t->rank < 2 ? 1 : t->d[t->rank - 2].n;
}

static void rope_part(Fz *f, Group *gr, int r)
{
    int p = gr->rparts++;
    gr->rope[p] = r;
    take(f, gr, r);
    int x = N(f, r)->args[0];
    const GNode *xn = N(f, x);
    if (xn->op == OP_RMSNORM && only_use(f, x) == r && free_node(f, x) &&
        xn->nargs == 2 && is_decl_of(f, xn->args[1], D_WEIGHT) && last_dim(&xn->ty) <= 1024) {   /* rope.cu: a weight */
        take(f, gr, x);
        gr->rnorm[p] = x;
        x = xn->args[0];
        fuse_note(f, r, "rule rope_append: the per-head norm %s folds into the rope", stmt_name(f, gr->rnorm[p]));
        took(f, RU_ROPE_APPEND);
    }
    gr->rx[p] = x;
    part_read(f, gr, x, gr->rnorm[p] >= 0 ? gr->rnorm[p] : r, part_heads(&N(f, x)->ty, 0), last_dim(&N(f, x)->ty));
    int w = write_of(f, r, gr->pos);
    if (w >= 0) {
        take(f, gr, w);
        gr->rwrite[p] = w;
        fuse_note(f, w, "rule rope_append: rope and the append to %s are one op", f->p->decls[N(f, w)->decl].name);
        took(f, RU_ROPE_APPEND);
    }
}

/* The norm a concat's operand k is, when the rope's launch can take it
 * as a part's per-head norm (a weight's, a row of at most 1024 values, read by the
 * concat alone, its eps and offset those of the group's other norms); -1
 * else. */
static int concat_norm(const Fz *f, const Group *gr, int k, int c)
{
    const GNode *n = N(f, k);
    if (!lone(f, k, c, OP_RMSNORM) || n->nargs < 2 || !is_decl_of(f, n->args[1], D_WEIGHT) || last_dim(&n->ty) > 1024)
        return -1;
    for (int p = 0; p < gr->rparts; p++)
        if (gr->rnorm[p] >= 0 && (attr_num(N(f, gr->rnorm[p])->e, "eps", 0) != attr_num(n->e, "eps", 0) ||
                                  attr_num(N(f, gr->rnorm[p])->e, "offset", 0) != attr_num(n->e, "offset", 0)))
            return -1;
    return k;
}

/* rope_append for a row made of parts: a turned part that is one operand
 * of a concat appended at the group's positions (DeepSeek-V2's latent row:
 * the normed latent, then the turned shared key) writes its place in the
 * state's row, and each other operand (a value, or a norm of one) joins
 * the launch as a part of its own written to its place: no copies. */
static int rope_concat(Fz *f, Group *gr)
{
    for (int p = 0; p < gr->rparts; p++) {
        if (gr->rwrite[p] >= 0)
            continue;
        int v = gr->rope[p], c = only_use(f, v);
        while (c >= 0 && N(f, c)->op == OP_RESHAPE)
            v = c, c = only_use(f, c);
        if (c < 0 || N(f, c)->op != OP_CONCAT || !free_node(f, c) || is_output(f, c))
            continue;
        const GNode *cn = N(f, c);
        int w = write_of(f, c, gr->pos), ok = w >= 0 && gr->rparts + cn->nargs - 1 <= 3;
        for (int i = 0; ok && i < cn->nargs; i++) {
            const GNode *a = N(f, cn->args[i]);
            ok = cn->args[i] == v || (free_node(f, cn->args[i]) && a->ty.rank == cn->ty.rank &&
                                      last_dim(&a->ty) <= 1024 && a->op != OP_ROPE);
        }
        if (!ok || waits_on(f, gr, c, v) || waits_on(f, gr, w, c))   /* across a cycle */
            continue;
        take(f, gr, c);
        take(f, gr, w);
        gr->rin_place = 1;
        long at = 0;
        for (int i = 0; i < cn->nargs; i++) {
            int k = cn->args[i];
            if (k == v) {
                gr->rwrite[p] = w;
                gr->rya[p] = (int)at;
            } else {
                int q = gr->rparts++, nm = concat_norm(f, gr, k, c);
                gr->rflat[q] = 1;
                gr->rnorm[q] = nm;
                if (nm >= 0) {
                    take(f, gr, nm);
                    k = N(f, nm)->args[0];
                    took(f, RU_ROPE_APPEND);
                }
                gr->rx[q] = k;
                gr->rwrite[q] = w;
                gr->rya[q] = (int)at;
                part_read(f, gr, k, nm >= 0 ? nm : c, 1, last_dim(&N(f, k)->ty));
            }
            at += last_dim(&N(f, k)->ty);
        }
        fuse_note(f, w, "rule rope_append: the rope's launch writes each part of %s into its place in %s's row",
                  stmt_name(f, c), f->p->decls[N(f, w)->decl].name);
        took(f, RU_ROPE_APPEND);
        return 1;
    }
    return 0;
}

/* Does rope k, at group gr's positions and of no launch yet, read what
 * gr's launch makes (a later layer's rope, or one after this rope's
 * attention)? Then so do the ropes after it: a search for a part of gr
 * ends there. */
static int rope_after(const Fz *f, const Group *gr, int k)
{
    const GNode *r = N(f, k);
    return r->op == OP_ROPE && r->args[1] == gr->pos && free_node(f, k) &&
           reads_group(f, k, (int)(gr - f->gs), first_node(gr));
}

/* May rope k turn in the launch of rope group gr (first its first rope)?
 * 1 when it may; 0 when it is not a free rope of the group's positions
 * and shape, or its attributes differ (a launch turns with one table of
 * frequencies: -v says so); -1 when it, or its append, reads what the
 * launch makes: the search ends. */
static int rope_partner(Fz *f, const Group *gr, int first, int k)
{
    const GNode *r = N(f, k), *r0 = N(f, first);
    if (r->op != OP_ROPE || !free_node(f, k) || r->args[1] != gr->pos)
        return 0;
    int w = write_of(f, k, gr->pos);
    if (rope_after(f, gr, k) || (w >= 0 && waits_on(f, gr, w, k)))
        return -1;
    if (last_dim(&r->ty) != last_dim(&r0->ty) || r->ty.rank != r0->ty.rank)
        return 0;
    const char *ta, *tb, *why = attr_diff(r0->e, r->e, &ta, &tb);
    if (why) {
        fuse_note(f, k, "no rope_append: %s and %s turn in launches of their own: their %s differs (%s, %s), and "
                  "a launch turns with one table of frequencies", stmt_name(f, first), stmt_name(f, k), why, ta, tb);
        return 0;
    }
    return 1;
}

/* The append of a value row at the group's positions that may join rope
 * group gr from node k on (its value read by none of the launch): its
 * write, or -1 (none before a rope that reads what the launch makes). */
static int value_append(Fz *f, const Group *gr, int k)
{
    const GNode *r0 = N(f, gr->rope[0]);
    for (; k < f->g->nn && !rope_after(f, gr, k); k++) {
        const GNode *w = N(f, k);
        if (w->op != G_WRITE || !free_node(f, k) || w->args[1] != gr->pos || N(f, w->args[2])->op == OP_ROPE ||
            N(f, w->args[2])->ty.rank != r0->ty.rank || last_dim(&N(f, w->args[2])->ty) > 1024)
            continue;
        if (!waits_on(f, gr, k, -1))
            return k;
    }
    return -1;
}

static void rope_group(Fz *f, int first)
{
    const GNode *r0 = N(f, first);
    Group *gr = new_group(f, GK_ROPE, first);
    gr->pos = r0->args[1];
    rope_part(f, gr, first);
    for (int k = first + 1, m = 0; k < f->g->nn && gr->rparts < 2 && m >= 0; k++)
        if ((m = rope_partner(f, gr, first, k)) > 0) {
            rope_part(f, gr, k);
            fuse_note(f, k, "rule rope_append: %s turns in the same launch as %s", stmt_name(f, k), stmt_name(f, first));
            took(f, RU_ROPE_APPEND);
        }
    if (rope_concat(f, gr))
        return;
    int k = value_append(f, gr, first + 1);   /* a value row appended at the same positions */
    if (k < 0)
        return;
    int p = gr->rparts++;
    gr->rx[p] = N(f, k)->args[2];
    gr->rwrite[p] = k;
    take(f, gr, k);
    fuse_note(f, k, "rule rope_append: the append to %s joins the rope's launch", f->p->decls[N(f, k)->decl].name);
    took(f, RU_ROPE_APPEND);
}

static int unsupported(Fz *f, int k);

/* ---- the short convolution with its gates ---- */

/* Is node k the value of an output of the program (its statement's)? */
static int is_output(const Fz *f, int k)
{
    int s = N(f, k)->stmt;
    return s >= 0 && f->p->stmts[s].decl >= 0 && f->g->stmt_node[s] == k;
}

/* Operand k of gate u: a slice read by u alone is taken, the launch
 * reading its base in place. */
static int gate_operand(Fz *f, Group *gr, int u, int k)
{
    if (N(f, k)->op == OP_SLICE && only_use(f, k) == u && free_node(f, k))
        take(f, gr, k);
    return k;
}

/* Is u a mul of two distinct operands of the convolved rows' type t? Its
 * operands in *a and *b. */
static int gate_mul(const Fz *f, int u, const Type *t, int *a, int *b)
{
    if (u < 0 || N(f, u)->op != OP_MUL || !free_node(f, u) || !same_type(&N(f, u)->ty, t))
        return 0;
    *a = N(f, u)->args[0];
    *b = N(f, u)->args[1];
    return *a != *b && same_type(&N(f, *a)->ty, t) && same_type(&N(f, *b)->ty, t);
}

/* conv(x, R, w[, b]): the gate in (x a mul of two values or slices read
 * by it alone), silu after it, and the gate out (a mul of its result by a
 * value or a slice), one launch with the ring. */
static int conv_group(Fz *f, int k)
{
    const GNode *cv = N(f, k);
    if (!is_decl_of(f, cv->args[2], D_WEIGHT) || N(f, cv->args[2])->ty.base != T_F32)
        return unsupported(f, k);   /* the kernel reads f32 taps */
    Group *gr = new_group(f, GK_CONV, k);
    take(f, gr, k);
    const Type *t = &cv->ty;
    int x = cv->args[0], a, b;
    gr->cx[0] = x;
    gr->cx[1] = gr->cx[2] = -1;
    if (only_use(f, x) == k && !is_output(f, x) && gate_mul(f, x, t, &a, &b)) {
        take(f, gr, x);
        gr->cx[0] = gate_operand(f, gr, x, a);
        gr->cx[1] = gate_operand(f, gr, x, b);
        fuse_note(f, x, "rule conv_gates: the gate in, %s, folds into the convolution's launch", stmt_name(f, x));
        took(f, RU_CONV_GATES);
    } else {
        fuse_note(f, k, "no conv_gates: the convolved rows are not a mul of two values read by the convolution alone "
                  "(a batch's sequences each convolve a row over a ring of their own: a launch each)");
    }
    int y = k, u = only_use(f, k);
    if (u >= 0 && N(f, u)->op == OP_SILU && free_node(f, u) && !is_output(f, k)) {
        take(f, gr, u);
        gr->act = 1;
        y = u;
        u = only_use(f, u);
        fuse_note(f, y, "rule conv_gates: silu folds into the convolution's epilogue");
        took(f, RU_CONV_GATES);
    }
    if (!is_output(f, y) && gate_mul(f, u, t, &a, &b)) {
        take(f, gr, u);
        gr->cx[2] = gate_operand(f, gr, u, a == y ? b : a);
        y = u;
        fuse_note(f, u, "rule conv_gates: the gate out, in %s, folds into the convolution's epilogue", stmt_name(f, u));
        took(f, RU_CONV_GATES);
    }
    gr->out[0] = y;
    return 0;
}

/* ---- attention, embeddings, norms and the rest ---- */

static void embed_group(Fz *f, int k)
{
    Group *gr = new_group(f, GK_EMBED, k);
    take(f, gr, k);
    gr->scale = 1;
    int u = only_use(f, k);
    if (u >= 0 && N(f, u)->op == OP_MUL) {
        int o = N(f, u)->args[0] == k ? N(f, u)->args[1] : N(f, u)->args[0];
        if (N(f, o)->op == G_NUM) {
            take(f, gr, u);
            gr->scale = N(f, o)->e->num;
            gr->out[0] = u;
            fuse_note(f, u, "rule epilogue: the embedding's scale %g folds into its lookup", gr->scale);
            took(f, RU_EPILOGUE);
        }
    }
    if (gr->out[0] < 0)
        gr->out[0] = k;
}

static void norm_group(Fz *f, int k)
{
    Group *gr = new_group(f, GK_NORM, k);
    take(f, gr, k);
    gr->out[0] = k;
    int u = only_use(f, k);
    if (u >= 0 && N(f, u)->op == OP_ADD && free_node(f, u)) {
        int o = N(f, u)->args[0] == k ? N(f, u)->args[1] : N(f, u)->args[0];
        if (o != k && same_type(&N(f, o)->ty, &N(f, k)->ty)) {
            take(f, gr, u);
            gr->add = u;
            gr->resid = o;
            gr->out[0] = u;
            fuse_note(f, u, "rule residual: %s's add folds into the norm that feeds it", stmt_name(f, u));
            took(f, RU_RESIDUAL);
        }
    }
    /* the gated RMS norm (Qwen3-Next's after the delta rule): norm * silu(z) */
    if (u >= 0 && gr->add < 0 && N(f, u)->op == OP_MUL && free_node(f, u)) {
        int o = N(f, u)->args[0] == k ? N(f, u)->args[1] : N(f, u)->args[0];
        if (o != k && lone(f, o, u, OP_SILU) &&
            same_type(&N(f, N(f, o)->args[0])->ty, &N(f, k)->ty) && same_type(&N(f, u)->ty, &N(f, k)->ty)) {
            take(f, gr, u);
            take(f, gr, o);
            gr->ngate = 1;
            gr->resid = N(f, o)->args[0];
            gr->out[0] = u;
            fuse_note(f, u, "rule epilogue: the gate silu(%s) of %s folds into its norm's launch",
                      stmt_name(f, gr->resid), stmt_name(f, u));
            took(f, RU_EPILOGUE);
        }
    }
}

static void single(Fz *f, int kind, int k)
{
    Group *gr = new_group(f, kind, k);
    take(f, gr, k);
    gr->out[0] = k;
}

static int unsupported(Fz *f, int k)
{
    const GNode *n = N(f, k);
    if (!f->o->quiet)
        diag_at(f->p->src, n->e->line, n->e->col, "the CUDA lane has no kernel for %s yet (run it with logos-run --device cpu)",
            op_info[n->op].name);
    return EXIT_INPUT;
}

/* moe(x, rt, wg, wu, wd[, bg, bu, bd]) with rt a route's weights (its k
 * bounds the experts kept), the three expert weights of one format and
 * the biases weights: two launches reading only the kept experts' rows. */
static int moe_group(Fz *f, int k)
{
    const GNode *m = N(f, k);
    int rt = m->args[1], fmt = N(f, m->args[2])->ty.base, ok = N(f, rt)->op == OP_ROUTE;
    for (int i = 2; i < m->nargs; i++)
        ok &= is_decl_of(f, m->args[i], D_WEIGHT) && (i > 4 || N(f, m->args[i])->ty.base == fmt);
    if (!ok) {
        fuse_note(f, k, "no kernel: the routing weights are not a route's, or the experts' weights differ in format "
                  "or are not weights");
        return unsupported(f, k);
    }
    Group *gr = new_group(f, GK_MOE, k);
    take(f, gr, k);
    gr->out[0] = k;
    int u = only_use(f, k);   /* the layer's residual add, in the down launch's epilogue */
    if (u >= 0 && N(f, u)->op == OP_ADD && free_node(f, u)) {
        int o = N(f, u)->args[0] == k ? N(f, u)->args[1] : N(f, u)->args[0];
        if (o != k && same_type(&N(f, o)->ty, &N(f, k)->ty) && same_type(&N(f, u)->ty, &N(f, k)->ty)) {
            take(f, gr, u);
            gr->res[0] = o;
            gr->out[0] = u;
            fuse_note(f, u, "rule residual: %s's add folds into the experts' down launch", stmt_name(f, u));
            took(f, RU_RESIDUAL);
        }
    }
    fuse_note(f, k, "rule moe_kept: the experts' gate and up, then their down product, each one launch reading "
              "only the %ld kept experts' rows", (long)attr_num(N(f, rt)->e, "k", 1));
    took(f, RU_MOE_KEPT);
    return 0;
}

/* ---- moe_shared: the shared expert in the experts' launches ---- */

/* The shared expert of mixture group m: a gated pair S of the mixture's
 * activation, its act the experts', no bias, no norm of its own, its
 * hidden width whole segments of the experts' (at most 16), read only by a
 * product D (one part, no bias) whose epilogue adds it to the mixture's
 * value (after the layer's residual or not), optionally times sigmoid of
 * a value a row; both of the experts' format and not bound for the tensor
 * cores. S's group, D's group in *d; -1 when there is none. */
static int shared_of(Fz *f, const Group *m, int *d)
{
    const GNode *mo = N(f, m->node), *wg = N(f, mo->args[2]);
    const char *act = attr_word(mo->e, "act", "silu");
    int code = strcmp(act, "silu") == 0 ? 1 : strcmp(act, "gelu_tanh") == 0 ? 2 : 0;
    int u = only_use(f, m->out[0]), dg = u >= 0 ? f->group[u] : -1;
    if (!code || dg < 0)
        return -1;
    const Group *D = &f->gs[dg];
    if (D->kind != GK_GEMV || D->parts != 1 || D->gate || D->res[0] != m->out[0] || D->bias[0] >= 0 ||
        D->argmax >= 0 || D->cap != 0 || D->norm >= 0 || D->cat >= 0 || !D->nn)
        return -1;
    int a = view_root(f->g, N(f, D->prod[0])->args[1]), sg = f->group[a];
    if (sg < 0 || only_use(f, a) != D->prod[0])
        return -1;
    const Group *S = &f->gs[sg];
    if (S->kind != GK_GEMV || S->gate != code || S->parts != 2 || S->out[0] != a || S->bias[0] >= 0 ||
        S->bias[1] >= 0 || S->norm >= 0 || S->gs >= 0 || S->cat >= 0 || !S->nn ||
        view_root(f->g, S->x) != view_root(f->g, mo->args[0]))
        return -1;
    long ff = wg->ty.d[1].n, fs = last_dim(&N(f, S->prod[0])->ty);
    const char *why = NULL;
    if (wformat(f, S->prod[0]) != wg->ty.base || wformat(f, D->prod[0]) != wg->ty.base)
        why = "its weights' format is not the experts'";
    else if (fs % ff || fs / ff > 16)
        why = "its hidden width is not at most 16 whole segments of the experts'";
    else if (mma_bound(f, S) || mma_bound(f, D))
        why = "its stacked rows go to the tensor cores";
    if (why) {
        fuse_note(f, a, "no moe_shared: the shared expert %s stays apart: %s", stmt_name(f, a), why);
        return -1;
    }
    *d = dg;
    return sg;
}

/* Moves every node of group from into group to; from makes no launch. */
static void absorb(Fz *f, Group *to, Group *from)
{
    for (int j = 0; j < from->nn; j++) {
        f->group[from->nodes[j]] = (int)(to - f->gs);
        *VEC_PUSH(f->a, to->nodes, to->nn, to->cn) = from->nodes[j];
    }
    from->nn = 0;
}

/* Would joining group from into group to join them across a cycle: does a
 * node of to read, through a launch of neither, a node of from? Nodes of
 * no launch (views) are looked through. (A launch cannot wait on what it
 * makes: `Vc0[pos] = -(v0)` in the rope's launch and `Vc0[pos] = v0`
 * after it, before the attention that would take the rope.) */
static int joins_across(const Fz *f, const Group *to, const Group *from)
{
    int t = (int)(to - f->gs), g = (int)(from - f->gs), lo = first_node(from), ns = 0, hit = 0;
    int base = lo, hi = lo;
    for (int j = 0; j < to->nn; j++) {
        base = to->nodes[j] < base ? to->nodes[j] : base;
        hi = to->nodes[j] > hi ? to->nodes[j] : hi;
    }
    char *seen;
    int *stack = walk_mem(base, hi, &seen);
    for (int j = 0; j < to->nn; j++)
        stack[ns++] = to->nodes[j], seen[to->nodes[j] - base] = 1;
    while (ns && !hit) {
        const GNode *n = N(f, stack[--ns]);
        for (int i = 0; i < n->nargs + n->nafter && !hit; i++) {
            int a = i < n->nargs ? n->args[i] : n->after[i - n->nargs];
            if (a < lo || seen[a - base] || f->group[a] == g)
                continue;
            seen[a - base] = 1;
            if (f->group[a] < 0)
                stack[ns++] = a;
            else if (f->group[a] != t)
                hit = reads_group(f, a, g, lo);
        }
    }
    free(seen);
    free(stack);
    return hit;
}

static void moe_shared(Fz *f)
{
    if (!f->o->lane_rules)
        return;
    for (int i = 0; i < f->ng; i++) {
        int dg, sg = f->gs[i].kind == GK_MOE && f->gs[i].nn ? shared_of(f, &f->gs[i], &dg) : -1;
        if (sg < 0)
            continue;
        Group *m = &f->gs[i], *S = &f->gs[sg], *D = &f->gs[dg];
        long fs = last_dim(&N(f, S->prod[0])->ty), ff = N(f, N(f, m->node)->args[2])->ty.d[1].n;
        m->sh[0] = S->prod[0];
        m->sh[1] = S->prod[1];
        m->sh[2] = D->prod[0];
        m->gs = D->gs;
        m->out[0] = D->out[0];
        fuse_note(f, D->out[0], "rule moe_shared: the shared expert (%s, %s, %s) folds into the experts' launches, "
                  "%ld segment%s of %ld hidden values%s", f->p->decls[N(f, N(f, S->prod[0])->args[0])->decl].name,
                  f->p->decls[N(f, N(f, S->prod[1])->args[0])->decl].name,
                  f->p->decls[N(f, N(f, D->prod[0])->args[0])->decl].name, fs / ff, fs / ff > 1 ? "s" : "", ff,
                  D->gs >= 0 ? ", its gate a sigmoid of a value a row" : "");
        absorb(f, m, S);
        absorb(f, m, D);
        took(f, RU_MOE_SHARED);
    }
}

/* ---- latent attention and concatenations ---- */

/* The most bytes a wide chunk's expanded keys and values may take. */
#define LATENT_WIDE_BYTES (1L << 30)

/* Whether latent attention k is a wide chunk's, run expanded (the lane's
 * own rule, taken before the shared rules): stacked rows of at least
 * --latent-rows (the chunk's bound), over the cache's rows up to each row's
 * position, its expanded keys and values within
 * LATENT_WIDE_BYTES and its values of an even width (attend.cu reads them a
 * pair at a time). -v says why not where the rows are wide. */
static int latent_wide(Fz *f, int k)
{
    const GNode *m = N(f, k), *q = N(f, m->args[0]), *c = N(f, m->args[2]);
    const GNode *wk = N(f, m->args[3]), *wv = N(f, m->args[4]);
    if (!f->o->lane_rules || q->ty.rank != 3)
        return 0;
    long rows = dim_bound(&q->ty.d[0], f->o->rows), nh = q->ty.d[1].n;
    if (rows < latent_crossover(f->o)) {
        fuse_note(f, k, "latent absorbed: a chunk of %ld rows is not wide (--latent-rows %d)", rows,
                  latent_crossover(f->o));
        return 0;
    }
    if (c->op != OP_UPTO || N(f, c->args[1])->ty.rank != 1)   /* a chunk's rows over the cache up to each */
        return 0;
    long ctx = N(f, c->args[0])->ty.d[0].n, hd = wk->ty.d[0].n / nh + last_dim(&N(f, m->args[1])->ty), vd = wv->ty.d[0].n / nh;
    double bytes = 4.0 * (double)ctx * (double)nh * (double)(hd + vd);
    const char *why = vd % 2 ? "its value width is odd (attention reads values a pair at a time)"
                      : bytes > (double)LATENT_WIDE_BYTES ? "its expanded keys and values would pass 1 GiB"
                      : NULL;
    if (why) {
        fuse_note(f, k, "latent absorbed, not expanded, for a wide chunk of %ld rows: %s", rows, why);
        return 0;
    }
    fuse_note(f, k, "rule latent_expanded: a wide chunk (%ld rows, --latent-rows %d): the cache's %ld rows expanded "
              "into %ld heads' keys of %ld and values of %ld (%.3g MB), then attention over them", rows,
              latent_crossover(f->o), ctx, nh, hd, vd, bytes / 1e6);
    return 1;
}

/* latent(qr, qp, C, wk, wv): the halves of the expansion weights of one
 * format each, f32 or Q8_0; C the cache's rows up to the positions (of an
 * f32 state: no kernel reads an f16 one yet) or a value: one launch,
 * absorbed. */
static int latent_group(Fz *f, int k)
{
    const GNode *m = N(f, k);
    for (int i = 3; i < 5; i++)
        if (!is_decl_of(f, m->args[i], D_WEIGHT)) {
            fuse_note(f, k, "no kernel: a half of the latent's expansion is computed, not a weight");
            return unsupported(f, k);
        }
    const GNode *c = N(f, m->args[2]);
    if (c->op == OP_UPTO && N(f, c->args[0])->ty.base == T_F16) {   /* latent.cu, latent_expand.cu: f32 rows */
        if (!f->o->quiet)
            diag_at(f->p->src, m->e->line, m->e->col, "the CUDA lane has no kernel for latent over an f16 cache yet "
                    "(run it with logos-run --device cpu, or keep the spec's cache f32)");
        return EXIT_INPUT;
    }
    const Type *q = &N(f, m->args[0])->ty, *p = &N(f, m->args[1])->ty;
    long nope = last_dim(q) - last_dim(p);
    single(f, GK_LATENT, k);
    if (latent_wide(f, k)) {
        f->gs[f->group[k]].wide = 1;
        took(f, RU_LATENT_EXPANDED);
        return 0;
    }
    fuse_note(f, k, "rule latent_absorbed: the key half of the expansion folds into the query per head, attention "
              "reads the latent cache, the value half applies after: one launch, a block a head");
    if (f->o->numerics != NUM_PRECISE)
        fuse_note(f, k, "the per-head products read each head's %ld unrotated query values in place as f32%s", nope,
                  nope % 32 || last_dim(q) % 32 ? " (they miss whole 32-value blocks: no quantized read)"
                                                : " (the reference multiplies them unrounded)");
    took(f, RU_LATENT_ABSORBED);
    return 0;
}

/* concat(a, b, ...): a copy a part into its place in the rows, straight
 * into a state's rows where the concatenation is only written there (and
 * is no output of the program). */
/* A concatenation of one row whose operands are all outputs of one
 * product launch's parts (none quantized, each read by it alone): the
 * parts write their places in its buffer, and it is no launch (Qwen3-Next's
 * q, k and v side by side for the convolution). */
static int concat_parts(Fz *f, int k)
{
    const GNode *c = N(f, k);
    int g = c->nargs ? f->group[c->args[0]] : -1;
    if (!f->o->lane_rules || c->ty.rank != 1 || g < 0 || f->gs[g].kind != GK_GEMV || f->gs[g].cat >= 0 ||
        mma_bound(f, &f->gs[g]))
        return 0;
    Group *gr = &f->gs[g];
    for (int i = 0; i < c->nargs; i++) {
        int a = c->args[i], p = -1;
        for (int q = 0; q < gr->parts; q++)
            p = gr->out[q] == a && !(gr->gate && q == 1) ? q : p;
        if (f->group[a] != g || p < 0 || (p == 0 && gr->oq) || only_use(f, a) != k || is_output(f, a))
            return 0;
        for (int j = 0; j < i; j++)
            if (c->args[j] == a)
                return 0;
    }
    take(f, gr, k);
    gr->cat = k;
    fuse_note(f, k, "rule concat_rows: the product's parts write their places in %s's concatenation: no copies",
              stmt_name(f, k));
    took(f, RU_CONCAT_ROWS);
    return 1;
}

static void concat_group(Fz *f, int k)
{
    if (concat_parts(f, k))
        return;
    single(f, GK_CONCAT, k);
    Group *gr = &f->gs[f->group[k]];
    int u = only_use(f, k);
    if (u >= 0 && N(f, u)->op == G_WRITE && N(f, u)->args[2] == k && free_node(f, u) && !is_output(f, k)) {
        take(f, gr, u);
        gr->out[0] = u;
        fuse_note(f, u, "rule concat_rows: each part of %s is copied into its place in %s's rows", stmt_name(f, u),
                  f->p->decls[N(f, u)->decl].name);
    } else {
        fuse_note(f, k, "rule concat_rows: each part of %s is copied into its place in the rows", stmt_name(f, k));
    }
    took(f, RU_CONCAT_ROWS);
}

/* ---- the gated delta rule ---- */

/* May the launch of delta node d take x, an L2 norm read by use alone, as
 * the norm of its operand i (q's and k's with one eps)? */
static int delta_norm(const Fz *f, const Group *gr, int i, int x, int use)
{
    const GNode *n = N(f, x);
    return i < 2 && n->op == OP_L2NORM && n->nargs == 1 && only_use(f, x) == use && free_node(f, x) &&
           !is_output(f, x) && (i == 0 || gr->dnorm[0] < 0 ||
                                attr_num(n->e, "eps", 0) == attr_num(N(f, gr->dnorm[0])->e, "eps", 0));
}

/* Operand i of delta node d, through what the launch takes of it: a
 * literal scale after a per-head L2 norm (q and k), the norm, and a slice
 * of a wider row (under its reshape to heads) read in place. */
static void delta_operand(Fz *f, Group *gr, int d, int i)
{
    int x = N(f, d)->args[i], use = d;
    if (i < 2)
        gr->dscale[i] = 1;
    if (i < 2 && lone(f, x, use, OP_MUL)) {
        int a = N(f, x)->args[0], b = N(f, x)->args[1], lit = N(f, a)->op == G_NUM ? a : b, y = lit == a ? b : a;
        if (N(f, lit)->op == G_NUM && delta_norm(f, gr, i, y, x)) {
            take(f, gr, x);
            gr->dscale[i] = N(f, lit)->e->num;
            use = x;
            x = y;
        }
    }
    if (delta_norm(f, gr, i, x, use)) {
        take(f, gr, x);
        gr->dnorm[i] = x;
        use = x;
        x = N(f, x)->args[0];
        fuse_note(f, x, "rule delta_steps: the L2 norm of the delta rule's %s folds into its prologue", i ? "k" : "q");
    }
    const GNode *n = N(f, x);
    if (n->op == OP_RESHAPE && only_use(f, x) == use) {
        int sl = n->args[0];
        if (lone(f, sl, x, OP_SLICE)) {
            take(f, gr, sl);
            x = sl;
            fuse_note(f, sl, "rule delta_steps: the delta rule reads %s in place", stmt_name(f, sl));
        }
    }
    gr->dx[i] = x;
}

/* The decay's and beta's elementwise ops into the launch: Qwen3-Next's
 * g = -exp(A) * softplus(a) (A a weight of a value a head, a of g's own
 * shape) and beta = sigmoid(b), five launches of a value a head fewer a
 * layer. */
static void delta_gates(Fz *f, Group *gr, int d)
{
    const GNode *dn = N(f, d);
    int g = dn->args[3], b = dn->args[4];
    long nv = N(f, dn->args[2])->ty.d[N(f, dn->args[2])->ty.rank - 2].n;
    gr->dgx[0] = g;
    gr->dgx[1] = b;
    gr->dga = -1;
    if (lone(f, b, d, OP_SIGMOID) && N(f, b)->nargs == 1 && same_type(&N(f, N(f, b)->args[0])->ty, &N(f, b)->ty)) {
        take(f, gr, b);
        gr->dgx[1] = N(f, b)->args[0];
        gr->dbf = 1;
        fuse_note(f, b, "rule delta_steps: beta's sigmoid folds into the delta rule's launch");
    }
    if (!lone(f, g, d, OP_MUL))
        return;
    for (int o = 0; o < 2; o++) {
        int ng = N(f, g)->args[o], sp = N(f, g)->args[1 - o], ex = N(f, ng)->args[0];
        if (!lone(f, ng, g, OP_NEG) || !lone(f, ex, ng, OP_EXP) || !lone(f, sp, g, OP_SOFTPLUS))
            continue;
        const GNode *w = N(f, N(f, ex)->args[0]);
        if (!is_decl_of(f, N(f, ex)->args[0], D_WEIGHT) || w->ty.rank != 1 || w->ty.d[0].n != nv ||
            w->ty.base != T_F32 || !same_type(&N(f, N(f, sp)->args[0])->ty, &N(f, g)->ty))
            continue;
        take(f, gr, g);
        take(f, gr, ng);
        take(f, gr, ex);
        take(f, gr, sp);
        gr->dga = N(f, ex)->args[0];
        gr->dgx[0] = N(f, sp)->args[0];
        fuse_note(f, g, "rule delta_steps: the decay -exp(%s) * softplus(.) folds into the delta rule's launch",
                  f->p->decls[w->decl].name);
        return;
    }
}

/* delta(q, k, v, g, beta, S): one launch, a block a value head and 32 of
 * its columns holding the state in registers across a chunk's rows (its
 * steps in order), with the L2 norms of q and k as its prologue and its
 * operands read in place; the kernel's facts: heads of f32 values, the key
 * width whole fours of at most 256, the value width at most 1024. */
static int delta_group(Fz *f, int k)
{
    const GNode *d = N(f, k), *q = N(f, d->args[0]), *v = N(f, d->args[2]);
    long dk = last_dim(&q->ty), dv = last_dim(&v->ty);
    if (dk % 4 || dk > 256 || dv > 1024 || !is_decl_of(f, d->args[5], D_STATE)) {
        fuse_note(f, k, "no kernel: the key width %ld is not whole fours of at most 256, the value width %ld "
                  "passes 1024, or the state is not a state", dk, dv);
        return unsupported(f, k);
    }
    Group *gr = new_group(f, GK_DELTA, k);
    take(f, gr, k);
    gr->out[0] = k;
    gr->dnorm[0] = gr->dnorm[1] = -1;
    for (int i = 0; i < 3; i++)
        delta_operand(f, gr, k, i);
    delta_gates(f, gr, k);
    fuse_note(f, k, "rule delta_steps: the delta rule's rows in order in one launch, the state of %s on the chip "
              "across them", f->p->decls[N(f, d->args[5])->decl].name);
    took(f, RU_DELTA_STEPS);
    return 0;
}

static int other_group(Fz *f, int k)
{
    const GNode *n = N(f, k);
    switch (n->op) {
    case OP_INDEX:
        if (is_decl_of(f, n->args[0], D_WEIGHT))
            embed_group(f, k);
        else
            single(f, GK_COPY, k);
        return 0;
    case OP_RMSNORM: case OP_L2NORM: norm_group(f, k); return 0;
    case OP_ROPE: rope_group(f, k); return 0;
    case OP_ATTEND: single(f, GK_ATTEND, k); return 0;
    case OP_ARGMAX: single(f, GK_ARGMAX, k); return 0;
    case OP_RANGE: single(f, GK_RANGE, k); return 0;
    case OP_ALLREDUCE: case OP_ALLGATHER: single(f, GK_COLL, k); return 0;
    case OP_ROUTE: single(f, GK_ROUTE, k); return 0;
    case OP_MOE: return moe_group(f, k);
    case OP_LATENT: return latent_group(f, k);
    case OP_CONCAT: concat_group(f, k); return 0;
    case G_WRITE: case OP_LAST: case OP_SLICE: single(f, GK_COPY, k); return 0;
    case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_NEG: case OP_SILU: case OP_GELU: case OP_SIGMOID:
    case OP_SOFTPLUS: case OP_EXP: case OP_TANH: case OP_SOFTCAP: case OP_CLAMP:
        single(f, GK_ELEM, k);
        return 0;
    default:
        return unsupported(f, k);
    }
}

/* ---- quantizing epilogues (fuse_quant) ---- */

/* Is every reader of node k, through reshapes, a product group reading it
 * as its activation without a norm? */
static int read_by_products(const Fz *f, int k)
{
    if (!f->ncons[k] || (N(f, k)->stmt >= 0 && f->p->stmts[N(f, k)->stmt].decl >= 0 &&
                         f->g->stmt_node[N(f, k)->stmt] == k))
        return 0;   /* an output of the program stays f32 */
    for (int i = 0; i < f->ncons[k]; i++) {
        int c = f->cons[k][i];
        if (N(f, c)->op == OP_RESHAPE) {
            if (!read_by_products(f, c))
                return 0;
            continue;
        }
        int g = f->group[c];
        if (g < 0 || f->gs[g].kind != GK_GEMV || f->gs[g].norm >= 0 || f->gs[g].xg >= 0 ||
            view_root(f->g, f->gs[g].x) != view_root(f->g, k))
            return 0;
    }
    return 1;
}

/* The node a group's quantizing epilogue writes: its output, or under
 * batch_attend the stack of its rows. */
int quant_out(const Fz *f, const Group *gr)
{
    return gr->kind == GK_ATTEND && gr->nseq > 1 ? f->cons[gr->node][0] : gr->out[0];
}

static void quantizing(Fz *f)
{
    if (f->o->numerics == NUM_PRECISE || !f->o->fuse_quant)
        return;
    for (int i = 0; i < f->ng; i++) {
        Group *gr = &f->gs[i];
        int k = quant_out(f, gr), width = 0;
        if (!gr->nn)   /* taken into another launch */
            continue;
        if (k < 0 || !read_by_products(f, k))
            continue;
        switch (gr->kind) {
        case GK_GEMV:
            width = gr->parts == 1 + (gr->gate != 0) && gr->argmax < 0 && !(last_dim(&N(f, k)->ty) % 32);
            if (width && gr->gate && gr->norm < 0 && !mma_bound(f, gr)) {   /* a shared expert beside its mixture */
                fuse_note(f, k, "no fuse_quant: a gated pair with no norm prologue rounds its activation itself, "
                          "and at the epilogue's 4 rows a warp its registers spill");
                continue;
            }
            break;
        case GK_ATTEND: case GK_NORM: case GK_EMBED: case GK_CONV:
            width = !(last_dim(&N(f, k)->ty) % 32);
            break;
        case GK_LATENT:
            fuse_note(f, k, "no fuse_quant: the latent attention's kernel writes f32");
            continue;
        default:
            break;
        }
        if (!width) {
            fuse_note(f, k, "no fuse_quant: %s's rows are not whole 32-value blocks of one output", stmt_name(f, k));
            continue;
        }
        gr->oq = f->o->numerics == NUM_Q8 ? 1 : 2;
        fuse_note(f, k, "rule fuse_quant: %s is quantized in its producer's epilogue", stmt_name(f, k));
        took(f, RU_FUSE_QUANT);
    }
}

/* ---- order ---- */

/* The groups group g depends on, each once (mark[h] == g once listed): the
 * group computing node k; through a view, what the view reads and the
 * writes it must follow. */
typedef struct Deps {
    int *h, n, cap;
    int *mark;
} Deps;

static void depend(const Fz *f, int g, int k, Deps *d)
{
    const GNode *n = N(f, k);
    if (n->view) {
        for (int i = 0; i < n->nargs; i++)
            depend(f, g, n->args[i], d);
        for (int i = 0; i < n->nafter; i++)
            depend(f, g, n->after[i], d);
        return;
    }
    int p = f->group[k];
    if (p >= 0 && p != g && d->mark[p] != g) {
        d->mark[p] = g;
        *VEC_PUSH(f->a, d->h, d->n, d->cap) = p;
    }
}

/* Ready groups, least node first (then least group): a binary heap. */
static int heap_less(const Fz *f, int a, int b)
{
    return f->gs[a].node < f->gs[b].node || (f->gs[a].node == f->gs[b].node && a < b);
}

static void heap_push(const Fz *f, int *h, int *n, int g)
{
    int i = (*n)++;
    for (; i > 0 && heap_less(f, g, h[(i - 1) / 2]); i = (i - 1) / 2)
        h[i] = h[(i - 1) / 2];
    h[i] = g;
}

static int heap_pop(const Fz *f, int *h, int *n)
{
    int top = h[0], last = h[--*n], i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n)
            break;
        if (c + 1 < *n && heap_less(f, h[c + 1], h[c]))
            c++;
        if (!heap_less(f, h[c], last))
            break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0)
        h[i] = last;
    return top;
}

/* Kahn's order of the groups, the ready group with the least node first,
 * into out: edges listed once each, so a batch's thousands of groups order
 * in time linear in the edges (a matrix of every pair was cubic). The
 * groups placed: fewer than f->ng across a cycle. */
static int kahn(Fz *f, int *out)
{
    int ng = f->ng;
    Deps d = {.mark = arena_alloc(f->a, sizeof *d.mark * (size_t)(ng + 1))};
    int *from = arena_alloc(f->a, sizeof *from * (size_t)(ng + 1)), *indeg = arena_alloc(f->a, sizeof *indeg * (size_t)(ng + 1));
    for (int g = 0; g < ng; g++)
        d.mark[g] = -1;
    for (int g = 0; g < ng; g++) {
        from[g] = d.n;
        for (int i = 0; i < f->gs[g].nn; i++) {
            const GNode *n = N(f, f->gs[g].nodes[i]);
            for (int a = 0; a < n->nargs; a++)
                depend(f, g, n->args[a], &d);
            for (int a = 0; a < n->nafter; a++)
                depend(f, g, n->after[a], &d);
        }
        indeg[g] = d.n - from[g];
    }
    from[ng] = d.n;
    /* successors: group h's dependants, next[first[h] .. first[h + 1]) */
    int *first = arena_alloc(f->a, sizeof *first * (size_t)(ng + 2)), *next = arena_alloc(f->a, sizeof *next * (size_t)(d.n + 1));
    memset(first, 0, sizeof *first * (size_t)(ng + 2));
    for (int e = 0; e < d.n; e++)
        first[d.h[e] + 2]++;
    for (int h = 0; h < ng; h++)
        first[h + 2] += first[h + 1];
    for (int g = 0; g < ng; g++)
        for (int e = from[g]; e < from[g + 1]; e++)
            next[first[d.h[e] + 1]++] = g;
    int *heap = arena_alloc(f->a, sizeof *heap * (size_t)(ng + 1)), nh = 0;
    for (int g = 0; g < ng; g++)
        if (!indeg[g])
            heap_push(f, heap, &nh, g);
    int placed = 0;
    while (nh > 0) {
        int g = heap_pop(f, heap, &nh);
        out[placed++] = g;
        for (int e = first[g]; e < first[g + 1]; e++)
            if (--indeg[next[e]] == 0)
                heap_push(f, heap, &nh, next[e]);
    }
    return placed;
}

static void order(Fz *f)
{
    f->order = arena_alloc(f->a, sizeof *f->order * (size_t)(f->ng + 1));
    ASSERT(kahn(f, f->order) == f->ng);   /* the rules never join nodes across a cycle */
}

/* ---- rope_attend: a decode step's rope in its attention's launch ---- */

/* Does attention group a read what rope group r makes: the queries r turns
 * into a value only a reads, the keys r turns and the values r appends to
 * the states a reads up to one position (a decode step's one row), both
 * states of one format? */
static int rope_feeds(const Fz *f, const Group *a, const Group *r)
{
    const GNode *at = N(f, a->node);
    int q = at->args[0];
    if (r->kind != GK_ROPE || r->rin_place || r->rparts != 3 || r->rope[0] != q || r->rwrite[0] >= 0 || only_use(f, q) != a->node ||
        r->rope[1] < 0 || r->rwrite[1] < 0 || r->rope[2] >= 0 || r->rnorm[2] >= 0 || r->rwrite[2] < 0 ||
        N(f, r->pos)->ty.rank != 0 || N(f, q)->ty.rank != 2)
        return 0;
    const GNode *k = N(f, at->args[1]), *v = N(f, at->args[2]);
    if (k->op != OP_UPTO || v->op != OP_UPTO || k->args[1] != r->pos || v->args[1] != r->pos)
        return 0;
    const GNode *ks = N(f, N(f, r->rwrite[1])->args[0]), *vs = N(f, N(f, r->rwrite[2])->args[0]);
    return k->args[0] == N(f, r->rwrite[1])->args[0] && v->args[0] == N(f, r->rwrite[2])->args[0] &&
           ks->ty.base == vs->ty.base;
}

/* The attention turns its block's queries; the block of the newest row
 * turns and appends that row: one launch fewer a layer. */
static void rope_into_attend(Fz *f)
{
    if (!f->o->lane_rules)
        return;
    for (int i = 0; i < f->ng; i++) {
        Group *a = &f->gs[i];
        int rg = a->kind == GK_ATTEND ? f->group[N(f, a->node)->args[0]] : -1;
        if (rg < 0 || !rope_feeds(f, a, &f->gs[rg]))
            continue;
        Group *r = &f->gs[rg];
        const GNode *at = N(f, a->node);
        long hd = last_dim(&N(f, at->args[0])->ty), vd = last_dim(&N(f, at->args[2])->ty),
             g = N(f, at->args[0])->ty.d[0].n / N(f, at->args[1])->ty.d[1].n;
        if (g * (vd + 2) < hd || hd > 1024) {   /* attend.cu turns a head in its query heads' slots */
            fuse_note(f, a->node, "rope apart: a head of %ld values is wider than %ld query heads' slots of %ld "
                      "(rope_attend turns a head in them)", hd, g, vd + 2);
            continue;
        }
        if (joins_across(f, a, r)) {
            fuse_note(f, a->node, "rope apart: the attention waits on a launch that waits on the rope's");
            continue;
        }
        absorb(f, a, r);
        a->rparts = r->rparts;
        a->pos = r->pos;
        memcpy(a->rope, r->rope, sizeof a->rope);
        memcpy(a->rx, r->rx, sizeof a->rx);
        memcpy(a->rnorm, r->rnorm, sizeof a->rnorm);
        memcpy(a->rwrite, r->rwrite, sizeof a->rwrite);
        fuse_note(f, a->node, "rule rope_attend: %s turns its queries and appends the newest key and value row",
                  stmt_name(f, a->node));
        took(f, RU_ROPE_ATTEND);
    }
}

/* ---- batch_attend: a batch's attentions of one layer in one launch ---- */

/* Node k as row r of a stacked value (an index of it by a literal): r, and
 * the value in *base; -1 when it is not. */
static int row_of(const Fz *f, int k, int *base)
{
    const GNode *n = N(f, k);
    if (n->op != OP_INDEX || N(f, n->args[1])->op != G_NUM)
        return -1;
    *base = view_root(f->g, n->args[0]);
    return (int)N(f, n->args[1])->e->num;
}

/* The rows attention group gr reads of stacked values: its queries, and
 * under a rope the key and value rows it turns and appends (-1: none); the
 * row they are all of in *row, -1 when they are not rows of one index. */
static void rows_read(const Fz *f, const Group *gr, int *base, int *row)
{
    int x[3] = {gr->rparts ? gr->rx[0] : N(f, gr->node)->args[0], gr->rparts ? gr->rx[1] : -1,
                gr->rparts ? gr->rx[2] : -1};
    *row = -2;
    for (int i = 0; i < 3; i++) {
        base[i] = -1;
        if (x[i] < 0)
            continue;
        int r = row_of(f, x[i], &base[i]);
        *row = r < 0 || (*row != -2 && r != *row) ? -1 : r;
    }
}

/* The stack that takes attention node k as its row r, in place; -1 when
 * none does. */
static int stacked_in(const Fz *f, int k, int r)
{
    int u = only_use(f, k);
    if (u < 0 || N(f, u)->op != OP_STACK || !N(f, u)->view || r >= N(f, u)->nargs || N(f, u)->args[r] != k)
        return -1;
    return u;
}

/* Are the positions and caches of attention node k declarations (a
 * table's entries are named buffers), the positions one (a step's)? */
static int named_rows(const Fz *f, int k)
{
    const GNode *a = N(f, k), *kk = N(f, a->args[1]), *v = N(f, a->args[2]);
    return kk->op == OP_UPTO && v->op == OP_UPTO && kk->args[1] == v->args[1] && N(f, kk->args[1])->op == G_DECL &&
           N(f, kk->args[1])->ty.rank == 0 && N(f, kk->args[0])->op == G_DECL && N(f, v->args[0])->op == G_DECL;
}

/* Two optional calls (a rope, a norm), both absent or alike: one op, its
 * attributes spelled alike, and with `weight` one weight (operand 1). */
static int same_opt(const Fz *f, int a, int b, int weight)
{
    if (a < 0 || b < 0)
        return a == b;
    const GNode *x = N(f, a), *y = N(f, b);
    return x->op == y->op && x->nargs == y->nargs && same_attrs(x->e, y->e) &&
           (!weight || x->nargs < 2 || x->args[1] == y->args[1]);
}

/* Does attention group b compute what group a does for another sequence:
 * the same shapes and attributes, the same sinks, cache format and rope? */
static int alike(const Fz *f, const Group *a, const Group *b)
{
    const GNode *x = N(f, a->node), *y = N(f, b->node);
    if (x->nargs != y->nargs || !same_attrs(x->e, y->e) || (x->nargs == 4 && x->args[3] != y->args[3]) ||
        a->rparts != b->rparts || a->oq || b->oq)
        return 0;
    if (!same_type(&N(f, x->args[0])->ty, &N(f, y->args[0])->ty))
        return 0;
    for (int i = 1; i < 3; i++)   /* the caches (rows up to a position: their states) */
        if (N(f, x->args[i])->op != N(f, y->args[i])->op ||
            !same_type(&N(f, N(f, x->args[i])->args[0])->ty, &N(f, N(f, y->args[i])->args[0])->ty))
            return 0;
    for (int p = 0; p < a->rparts; p++)
        if (!same_opt(f, a->rope[p], b->rope[p], 0) || !same_opt(f, a->rnorm[p], b->rnorm[p], 1))
            return 0;
    return 1;
}

/* batch_cycles' walk over the groups: their marks and a stack (the marked
 * listed in vis, to clear them after), and the rank of each group in an
 * order of them all made before the first batch joins (ranked: 1 made, -1
 * none, the groups on a cycle). A path from one of a batch's attentions
 * back to another then passes only groups ranked between them, unless it
 * passes a batch joined since, whose edges the order no longer holds:
 * every such edge lies at ranks up to top. So each batch's walk stays
 * within its layer, not every layer before it. */
typedef struct Walk {
    char *seen, *in;
    int *stack, ns, *vis, nv;
    int *rank, ranked, top;
} Walk;

static Walk walk_new(Fz *f)
{
    size_t ng = (size_t)f->ng + 1;
    return (Walk){.seen = arena_alloc(f->a, ng), .in = arena_alloc(f->a, ng),
                  .stack = arena_alloc(f->a, sizeof(int) * ng), .vis = arena_alloc(f->a, sizeof(int) * ng),
                  .top = -1};
}

/* The least rank of the groups seq (n of them), below which the walk may
 * stop, else -1; the order made when first asked for. */
static int walk_floor(Fz *f, Walk *w, const int *seq, int n)
{
    if (!w->ranked) {
        int *by = arena_alloc(f->a, sizeof *by * (size_t)(f->ng + 1));
        w->rank = arena_alloc(f->a, sizeof *w->rank * (size_t)(f->ng + 1));
        w->ranked = kahn(f, by) == f->ng ? 1 : -1;
        for (int i = 0; w->ranked > 0 && i < f->ng; i++)
            w->rank[by[i]] = i;
    }
    if (w->ranked < 0)
        return -1;
    int lo = w->rank[seq[0]];
    for (int i = 1; i < n; i++)
        lo = w->rank[seq[i]] < lo ? w->rank[seq[i]] : lo;
    return lo > w->top ? lo : -1;
}

/* Pushes the groups group g depends on through node k (depend's edges),
 * but those ranked below lo (-1: none are left out). */
static void dep_push(const Fz *f, int g, int k, Walk *w, int lo)
{
    const GNode *n = N(f, k);
    if (n->view) {
        for (int i = 0; i < n->nargs; i++)
            dep_push(f, g, n->args[i], w, lo);
        for (int i = 0; i < n->nafter; i++)
            dep_push(f, g, n->after[i], w, lo);
        return;
    }
    int p = f->group[k];
    if (p >= 0 && p != g && !w->seen[p] && (lo < 0 || w->rank[p] >= lo)) {
        w->seen[p] = 1;
        w->vis[w->nv++] = p;
        w->stack[w->ns++] = p;
    }
}

static void deps_push(const Fz *f, int g, Walk *w, int lo)
{
    for (int j = 0; j < f->gs[g].nn; j++) {
        const GNode *x = N(f, f->gs[g].nodes[j]);
        for (int a = 0; a < x->nargs; a++)
            dep_push(f, g, x->args[a], w, lo);
        for (int a = 0; a < x->nafter; a++)
            dep_push(f, g, x->after[a], w, lo);
    }
}

/* Does any of the groups seq (n of them) depend on another, or on a group
 * that does: would one launch of them all wait on itself? */
static int batch_cycles(Fz *f, const int *seq, int n, Walk *w)
{
    int lo = walk_floor(f, w, seq, n), cyc = 0;
    w->ns = w->nv = 0;
    for (int i = 0; i < n; i++)
        w->in[seq[i]] = 1;
    for (int i = 0; i < n; i++)
        deps_push(f, seq[i], w, lo);
    while (w->ns && !cyc) {
        int g = w->stack[--w->ns];
        cyc = w->in[g];
        if (!cyc)
            deps_push(f, g, w, lo);
    }
    for (int i = 0; i < w->nv; i++)
        w->seen[w->vis[i]] = 0;
    for (int i = 0; i < n; i++)
        w->in[seq[i]] = 0;
    return cyc;
}

/* A batch joined: the order no longer holds its groups' edges. */
static void walk_joined(Walk *w, const int *seq, int n)
{
    for (int i = 0; w->ranked > 0 && i < n; i++)
        w->top = w->rank[seq[i]] > w->top ? w->rank[seq[i]] : w->top;
}

/* The rows each attention group reads (rows_read): its row and bases,
 * and the groups of one query base in a list each (head by the base's
 * node, next by group, in group order), so that a sequence's rows are
 * found among those of its stacked queries, not among every group. */
typedef struct Rows {
    int *row, *base, *head, *next;   /* base: 3 a group */
} Rows;

static Rows rows_index(Fz *f)
{
    Rows x = {arena_alloc(f->a, sizeof *x.row * (size_t)(f->ng + 1)),
              arena_alloc(f->a, sizeof *x.base * 3 * (size_t)(f->ng + 1)),
              arena_alloc(f->a, sizeof *x.head * (size_t)(f->g->nn + 1)),
              arena_alloc(f->a, sizeof *x.next * (size_t)(f->ng + 1))};
    for (int k = 0; k < f->g->nn; k++)
        x.head[k] = -1;
    for (int i = f->ng - 1; i >= 0; i--) {
        x.next[i] = -1;
        x.row[i] = -1;
        if (f->gs[i].kind != GK_ATTEND)
            continue;
        int *b = &x.base[3 * i];
        rows_read(f, &f->gs[i], b, &x.row[i]);
        if (b[0] >= 0) {
            x.next[i] = x.head[b[0]];
            x.head[b[0]] = i;
        }
    }
    return x;
}

/* The attention groups of the other sequences of group h (row 0 of its
 * stacked values), in row order, into seq (h first): why not, or NULL. */
static const char *batch_of(Fz *f, const Rows *x, Walk *w, int h, int *seq, int *n)
{
    const Group *a = &f->gs[h];
    const int *base = &x->base[3 * h];
    *n = 0;
    seq[(*n)++] = h;
    for (int r = 1;; r++) {
        int found = -1;
        for (int i = x->head[base[0]]; i >= 0 && found < 0; i = x->next[i]) {
            const int *b2 = &x->base[3 * i];
            if (f->gs[i].nn && i != h && x->row[i] == r && b2[1] == base[1] && b2[2] == base[2])
                found = i;
        }
        if (found < 0)
            break;
        seq[(*n)++] = found;
    }
    if (*n < 2)
        return NULL;
    int stack = stacked_in(f, a->node, 0);
    for (int t = 0; t < *n; t++) {
        const Group *g = &f->gs[seq[t]];
        if (!alike(f, a, g))
            return "the sequences' attentions differ (shapes, attributes, sinks, the caches' format, the rope, a "
                   "quantized output)";
        if (!named_rows(f, g->node))
            return "a sequence's position or cache is not a declaration (a table holds named buffers)";
        if (stack < 0 || stacked_in(f, g->node, t) != stack)
            return "the sequences' outputs are not the rows of one stack, in order";
    }
    if (batch_cycles(f, seq, *n, w))
        return "one sequence's attention depends on another's";
    return NULL;
}

/* The decode steps of a batch attend each with a cache of its own: one
 * launch a layer for all of them, a row a sequence (attend.cu MODE 3),
 * where their queries (and the rope's key and value rows) are rows 0, 1 ...
 * of stacked values and their outputs the rows of one stack. */
static void batch_attend(Fz *f)
{
    if (!f->o->lane_rules)
        return;
    int *seq = malloc(sizeof *seq * (size_t)(f->ng + 1));
    if (!seq) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    Rows x = rows_index(f);
    Walk w = walk_new(f);
    for (int h = 0; h < f->ng; h++) {
        Group *a = &f->gs[h];
        int n;
        if (a->kind != GK_ATTEND || !a->nn || a->nseq || x.row[h] != 0)
            continue;
        const char *why = batch_of(f, &x, &w, h, seq, &n);
        if (why)
            fuse_note(f, a->node, "no batch_attend: %s: a launch a sequence", why);
        if (why || n < 2)
            continue;
        a->seq = arena_alloc(f->a, sizeof *a->seq * (size_t)n);
        memcpy(a->seq, seq, sizeof *seq * (size_t)n);
        a->nseq = n;
        for (int t = 1; t < n; t++) {
            Group *g = &f->gs[seq[t]];
            for (int j = 0; j < g->nn; j++) {
                f->group[g->nodes[j]] = h;
                *VEC_PUSH(f->a, a->nodes, a->nn, a->cn) = g->nodes[j];
            }
            g->nn = 0;
        }
        walk_joined(&w, seq, n);
        fuse_note(f, a->node, "rule batch_attend: the attentions of %d sequences, %s to %s, one launch: a row a "
                  "sequence, its position and caches from tables", n, stmt_name(f, a->node),
                  stmt_name(f, f->gs[seq[n - 1]].node));
        took(f, RU_BATCH_ATTEND);
    }
    free(seq);
}

int fuse_groups(Fz *f)
{
    const Graph *g = f->g;
    consumers(f);
    f->group = arena_alloc(f->a, sizeof *f->group * (size_t)g->nn);
    for (int k = 0; k < g->nn; k++)
        f->group[k] = -1;
    for (int k = 0; k < g->nn; k++)
        if (g->n[k].op == OP_MATMUL && free_node(f, k))
            product_group(f, k);
    for (int k = 0; k < g->nn; k++)   /* before norms: a rope takes its per-head norm */
        if (g->n[k].op == OP_ROPE && free_node(f, k))
            rope_group(f, k);
    for (int k = 0; k < g->nn; k++)   /* before elementwise ops: a convolution takes its gates */
        if (g->n[k].op == OP_CONV && free_node(f, k) && conv_group(f, k))
            return EXIT_INPUT;
    for (int k = 0; k < g->nn; k++)   /* before norms and slices: a delta rule takes its q's and k's */
        if (g->n[k].op == OP_DELTA && free_node(f, k) && delta_group(f, k))
            return EXIT_INPUT;
    for (int k = 0; k < g->nn; k++)
        if (graph_computes(g, k) && free_node(f, k) && other_group(f, k))
            return EXIT_INPUT;
    moe_shared(f);
    rope_into_attend(f);
    batch_attend(f);   /* before quantizing: a batch's attention quantizes the stack it writes */
    quantizing(f);
    order(f);
    return 0;
}

Plan *fuse(Arena *a, Prog *p, Graph *g, const FuseOpts *o)
{
    Plan *pl = arena_alloc(a, sizeof *pl);
    *pl = (Plan){.src = p->src, .numerics = o->numerics, .fuse_quant = o->fuse_quant, .lane_rules = o->lane_rules,
                 .rows = o->rows, .prog = p, .g = g, .names = strmap_new(a)};
    Fz f = {.a = a, .p = p, .g = g, .o = o, .pl = pl};
    if (fuse_groups(&f) || lane_emit(&f))
        return NULL;
    for (int r = 0; r < RU_COUNT; r++)
        if (f.taken >> r & 1)
            *VEC_PUSH(a, pl->rules, pl->nrules, pl->crules) = rule_names[r];
    return pl;
}
