/* graph.c — the flattened dataflow graph of a checked program, what fusion
 * and both executors read: numbered nodes (op, operands, checked type,
 * source statement, use count), views marked as aliases of their operand's
 * memory, state writes as nodes of their own with ordering edges to the
 * reads and writes of the same state around them; and each declaration's
 * role (a token, positions, the logits ...) found from how it is used. */
#include <string.h>

#include "logos.h"

typedef struct Gb {
    Arena *a;
    Graph *g;
    int stmt, sub;
    /* per state declaration: its last writer and the readers since */
    int *last_write;
    int **readers; int *nread, *cread;
} Gb;

static int add_node(Gb *b, GNode n)
{
    Graph *g = b->g;
    *VEC_PUSH(b->a, g->n, g->nn, g->cn) = n;
    return g->nn - 1;
}

static void edge(Gb *b, int to, int from)
{
    GNode *n = &b->g->n[to];
    if (from < 0)
        return;
    for (int i = 0; i < n->nafter; i++)
        if (n->after[i] == from)
            return;
    int cap = n->nafter;   /* grows one at a time: edges are few */
    int *e = arena_alloc(b->a, sizeof *e * (size_t)(cap + 1));
    if (cap)
        memcpy(e, n->after, sizeof *e * (size_t)cap);
    e[cap] = from;
    n->after = e;
    n->nafter = cap + 1;
}

/* A node that reads state s (declaration index) runs after its last write. */
static void reads_state(Gb *b, int node, int s)
{
    edge(b, node, b->last_write[s]);
    *VEC_PUSH(b->a, b->readers[s], b->nread[s], b->cread[s]) = node;
}

/* A node that writes state s runs after its last write and every read since. */
static void writes_state(Gb *b, int node, int s)
{
    edge(b, node, b->last_write[s]);
    for (int i = 0; i < b->nread[s]; i++)
        if (b->readers[s][i] != node)
            edge(b, node, b->readers[s][i]);
    b->nread[s] = 0;
    b->last_write[s] = node;
}

int graph_is_decl(const Graph *g, int node, int kind)
{
    const GNode *n = &g->n[node];
    return n->op == G_DECL && g->p->decls[n->decl].kind == kind;
}

static int is_state(const Gb *b, int node)
{
    return graph_is_decl(b->g, node, D_STATE);
}

static int is_view(const Expr *e)
{
    switch (e->op) {
    case OP_RESHAPE: case OP_UPTO: return 1;
    case OP_INDEX: return e->args[1]->op == E_NUM;   /* a literal row of a value */
    default: return 0;
    }
}

static int expr_node(Gb *b, const Expr *e);

static int name_node(Gb *b, const Expr *e)
{
    const Graph *g = b->g;
    ASSERT(e->decl >= 0 || e->def >= 0);
    return e->def >= 0 ? g->stmt_node[e->def] : g->decl_node[e->decl];
}

static int expr_node(Gb *b, const Expr *e)
{
    if (e->op == E_NAME)
        return name_node(b, e);
    int *args = e->nargs ? arena_alloc(b->a, sizeof *args * (size_t)e->nargs) : NULL;
    for (int i = 0; i < e->nargs; i++)
        args[i] = expr_node(b, e->args[i]);
    GNode n = {.op = e->op == E_NUM ? G_NUM : e->op, .nargs = e->nargs, .args = args, .ty = e->ty,
              .stmt = b->stmt, .decl = -1, .e = e};
    if (e->op == OP_INDEX && is_state(b, args[0]))
        n.view = 0;
    else
        n.view = e->op != E_NUM && is_view(e);
    if (e->op != E_NUM)
        n.sub = ++b->sub;
    int id = add_node(b, n);
    for (int i = 0; i < e->nargs; i++) {
        b->g->n[args[i]].uses++;
        if (is_state(b, args[i])) {
            int s = b->g->n[args[i]].decl;
            if (e->op < OP_COUNT && op_role(e->op, i) == 's') {
                reads_state(b, id, s);
                writes_state(b, id, s);
            } else {
                reads_state(b, id, s);
            }
        }
    }
    return id;
}

static void stmt_nodes(Gb *b, int si)
{
    const Stmt *s = &b->g->p->stmts[si];
    b->stmt = si;
    b->sub = 0;
    if (s->kind == S_ASSIGN) {
        b->g->stmt_node[si] = expr_node(b, s->value);
        return;
    }
    int st = b->g->decl_node[s->decl], ix = expr_node(b, s->index), v = expr_node(b, s->value);
    int *args = arena_alloc(b->a, sizeof *args * 3);
    args[0] = st;
    args[1] = ix;
    args[2] = v;
    GNode w = {.op = G_WRITE, .nargs = 3, .args = args, .ty = b->g->p->decls[s->decl].ty, .stmt = si,
              .sub = ++b->sub, .decl = s->decl};
    int id = add_node(b, w);
    for (int i = 0; i < 3; i++)
        b->g->n[args[i]].uses++;
    writes_state(b, id, s->decl);
    b->g->stmt_node[si] = id;
}

/* A stack whose rows are each computed for it alone is a view: an executor
 * may compute each row in place inside it. */
static void stacks_in_place(Graph *g)
{
    for (int k = 0; k < g->nn; k++) {
        GNode *n = &g->n[k];
        if (n->op != OP_STACK)
            continue;
        int ok = 1;
        for (int i = 0; i < n->nargs && ok; i++) {
            const GNode *a = &g->n[n->args[i]];
            ok = a->op < OP_COUNT && !a->view && a->uses == 1;
            for (int j = 0; j < i && ok; j++)
                ok = n->args[j] != n->args[i];
        }
        n->view = ok;
    }
}

/* ---- roles ---- */

/* The role a use gives operand node `arg` of node `user` (operand i). */
static int use_role(const Graph *g, const GNode *user, int i)
{
    switch (user->op) {
    case OP_INDEX:
        if (i == 1)
            return graph_is_decl(g, user->args[0], D_WEIGHT) ? R_TOKEN : R_POS;
        return R_NONE;
    case OP_UPTO: return i == 1 ? R_POS : R_NONE;
    case OP_ROPE: return i == 1 ? R_POS : R_NONE;
    case OP_RANGE: return R_POS0;
    case G_WRITE: return i == 1 ? R_POS : R_NONE;
    default: return R_NONE;
    }
}

/* The value an output's statement computes, under soft-caps. */
static const GNode *under_caps(const Graph *g, const GNode *n)
{
    while (n->op == OP_SOFTCAP || n->op == OP_RESHAPE)
        n = &g->n[n->args[0]];
    return n;
}

static void find_roles(Graph *g)
{
    const Prog *p = g->p;
    for (int k = 0; k < g->nn; k++) {
        const GNode *n = &g->n[k];
        for (int i = 0; i < n->nargs; i++) {
            const GNode *a = &g->n[n->args[i]];
            int r = use_role(g, n, i);
            if (a->op != G_DECL || p->decls[a->decl].kind != D_IN || r == R_NONE)
                continue;
            if (r == R_TOKEN && a->ty.rank == 1)
                r = R_TOKENS;
            if (r == R_POS && a->ty.rank == 1)
                r = R_POSITIONS;
            if (g->role[a->decl] == R_NONE)
                g->role[a->decl] = r;
        }
        if (n->op == OP_ARGMAX && n->args[0] >= 0) {
            const GNode *x = &g->n[n->args[0]];
            int si = x->stmt;
            if (si >= 0 && g->stmt_node[si] == n->args[0] && p->stmts[si].decl >= 0)
                g->role[p->stmts[si].decl] = R_LOGITS;
        }
    }
    for (int si = 0; si < p->nstmts; si++) {
        const Stmt *s = &p->stmts[si];
        if (s->kind != S_ASSIGN || s->decl < 0)
            continue;
        const Decl *d = &p->decls[s->decl];
        const GNode *v = under_caps(g, &g->n[g->stmt_node[si]]);
        if (d->base == T_I32)
            g->role[s->decl] = R_NEXT;
        else if (g->role[s->decl] == R_NONE && v->op == OP_MATMUL)
            g->role[s->decl] = R_LOGITS;
    }
    int seq = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        /* an i32 input nothing reads still takes its place: a position, or tokens */
        if (d->kind == D_IN && g->role[i] == R_NONE && d->base == T_I32 && !g->n[g->decl_node[i]].uses)
            g->role[i] = d->rank ? R_TOKENS : R_POS;
        if (d->kind == D_IN && g->role[i] == R_NONE)
            g->role[i] = R_HIDDEN;
        if (g->role[i] == R_POS)
            g->seq[i] = seq++;
    }
}

Graph *graph_build(Arena *a, const Prog *p)
{
    Graph *g = arena_alloc(a, sizeof *g);
    size_t nd = (size_t)p->ndecls + 1;
    g->p = p;
    g->decl_node = arena_alloc(a, sizeof *g->decl_node * nd);
    g->stmt_node = arena_alloc(a, sizeof *g->stmt_node * ((size_t)p->nstmts + 1));
    g->role = arena_alloc(a, sizeof *g->role * nd);
    g->seq = arena_alloc(a, sizeof *g->seq * nd);
    Gb b = {.a = a, .g = g};
    b.last_write = arena_alloc(a, sizeof *b.last_write * nd);
    b.readers = arena_alloc(a, sizeof *b.readers * nd);
    b.nread = arena_alloc(a, sizeof *b.nread * nd);
    b.cread = arena_alloc(a, sizeof *b.cread * nd);
    for (int i = 0; i < p->ndecls; i++) {
        b.last_write[i] = -1;
        g->seq[i] = -1;
        g->decl_node[i] = add_node(&b, (GNode){.op = G_DECL, .ty = p->decls[i].ty, .stmt = -1, .decl = i});
    }
    for (int i = 0; i < p->nstmts; i++)
        stmt_nodes(&b, i);
    stacks_in_place(g);
    find_roles(g);
    return g;
}

int graph_computes(const Graph *g, int node)
{
    const GNode *n = &g->n[node];
    return n->op != G_DECL && n->op != G_NUM && !n->view;
}

int graph_find_role(const Graph *g, int role, int seq)
{
    for (int i = 0; i < g->p->ndecls; i++)
        if (g->role[i] == role && (role != R_POS || g->seq[i] == seq))
            return i;
    return -1;
}

const char *role_name(int role)
{
    static const char *names[] = {"none", "token", "tokens", "position", "positions", "chunk start",
                                  "hidden state", "logits", "next token"};
    return names[role];
}
