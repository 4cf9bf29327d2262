/* plan_check.c — what logos-run checks of a plan before any launch: every
 * buffer agrees with what it holds (a declaration's type and size, a view
 * inside its base, a rope table from a rope, a table's entries named
 * buffers of its type and count), every launch names a kernel
 * of the table with all its constants in range, an argument of an accepted
 * kind and element type for each parameter, buffers large enough for what
 * its constants make it read and write, the grid, block and shared memory
 * its constants ask for; every collective joining f32 buffers large
 * enough, not overlapping unless in place, covering its collective node;
 * and every compute node of the program covered by exactly one launch or
 * collective. Each problem is reported at its line of the plan. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Pc {
    Plan *pl;
    int errors;
} Pc;

static void bad(Pc *c, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void bad(Pc *c, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_at(c->pl->src, line, col, "%s", msg);
    c->errors++;
}

/* ---- buffers ---- */

/* The element type a declaration's values have on the lane. */
static int decl_etype(const Decl *d)
{
    return d->base == T_Q8 ? ET_Q8 : d->base == T_I32 ? ET_I32 : d->base == T_F16 ? ET_F16 : ET_F32;
}

/* A declaration's values with its sizes at the plan's row bound. */
static long decl_values(const Plan *pl, const Decl *d)
{
    long n = 1;
    for (int i = 0; i < d->rank; i++)
        n *= dim_bound(&d->ty.d[i], pl->rows);
    return n;
}

static void check_decl_buf(Pc *c, const PBuf *b)
{
    static const int kind_of[] = {[D_WEIGHT] = B_WEIGHT, [D_STATE] = B_STATE, [D_IN] = B_IN, [D_OUT] = B_OUT,
                                  [D_SIZE] = B_SIZE};
    const Plan *pl = c->pl;
    if (b->decl < 0) {
        bad(c, b->line, b->col, "'%s' is not a declaration of the program", b->name);
        return;
    }
    const Decl *d = &pl->prog->decls[b->decl];
    if (kind_of[d->kind] != b->kind) {
        bad(c, b->line, b->col, "'%s' is declared at line %d as another kind of tensor", b->name, d->line);
        return;
    }
    if (b->kind == B_SIZE) {
        if (b->etype != ET_I32 || b->count != 1)
            bad(c, b->line, b->col, "size '%s' is one i32", b->name);
        return;
    }
    int et = decl_etype(d);
    int ok = b->etype == et;
    long want = decl_values(pl, d);
    if (!ok || b->count != want)
        bad(c, b->line, b->col, "'%s' is %s %ld: its declaration at line %d holds %s %ld", b->name,
            etype_name(b->etype), b->count, d->line, etype_name(et), want);
}

/* A table's entries: named buffers (they live the whole run, so the lane
 * writes their addresses once, at load) of its element type, each holding
 * its count of values. */
static void check_table(Pc *c, const PBuf *b)
{
    const Plan *pl = c->pl;
    for (int i = 0; i < b->nents; i++) {
        const PBuf *e = &pl->bufs[b->ents[i]];
        if (e->kind != B_WEIGHT && e->kind != B_STATE && e->kind != B_IN && e->kind != B_OUT)
            bad(c, b->line, b->col, "table '%s' holds '%s' (%s): a table holds weight, state, in or out buffers", b->name,
                e->name, bufkind_word(e->kind));
        else if (e->etype != b->etype || e->count < b->count)
            bad(c, b->line, b->col, "table '%s' holds %s %ld a buffer, but '%s' is %s %ld", b->name,
                etype_name(b->etype), b->count, e->name, etype_name(e->etype), e->count);
    }
}

static void check_buf(Pc *c, int i)
{
    Plan *pl = c->pl;
    PBuf *b = &pl->bufs[i];
    switch (b->kind) {
    case B_WEIGHT: case B_STATE: case B_IN: case B_OUT: case B_SIZE:
        check_decl_buf(c, b);
        break;
    case B_TEMP:
        if (b->at % 16)
            bad(c, b->line, b->col, "temporary '%s' starts at byte %ld: temporaries start at multiples of 16",
                b->name, b->at);
        if (b->at + plan_buf_bytes(pl, i) > pl->pool)
            pl->pool = b->at + plan_buf_bytes(pl, i);
        break;
    case B_VIEW: {
        const PBuf *base = &pl->bufs[b->base];
        if (base->etype != b->etype || b->at + b->count > base->count ||
            (b->etype != ET_F32 && b->etype != ET_I32 && b->etype != ET_F16 && b->at))
            bad(c, b->line, b->col, "view '%s' (%s, values %ld..%ld) does not lie inside '%s' (%s %ld)", b->name,
                etype_name(b->etype), b->at, b->at + b->count - 1, base->name, etype_name(base->etype),
                base->count);
        break;
    }
    case B_CONST: {
        const GNode *n = &pl->g->n[b->node];
        if (n->op != OP_ROPE) {
            bad(c, b->line, b->col, "constant table '%s' is a rope's frequencies: node %d.%d is not a rope", b->name,
                n->stmt + 1, n->sub);
            break;
        }
        long rot = (long)attr_num(n->e, "rot", (double)n->ty.d[n->ty.rank - 1].n);
        if (b->etype != ET_F64 || b->count != rot / 2)
            bad(c, b->line, b->col, "constant table '%s' must be f64 %ld: the frequencies of a rope", b->name,
                rot / 2);
        break;
    }
    case B_TABLE:
        check_table(c, b);
        break;
    default:
        break;
    }
}

/* ---- launches ---- */

/* A table for parameter p: enough entries, each of a kind and element
 * type the parameter takes, holding what the kernel reads of each. */
static void check_table_arg(Pc *c, const PLaunch *l, int p, const KNeed *need)
{
    const Plan *pl = c->pl;
    const Kernel *k = kernel_info(l->kernel);
    const KParam *kp = &k->p[p];
    const PBuf *t = &pl->bufs[l->arg[p]];
    if (t->nents < need->entries[p]) {
        bad(c, l->line, 1, "table '%s' holds %d buffer%s; %s's %s needs %ld", t->name, t->nents,
            t->nents == 1 ? "" : "s", k->name, kp->name, need->entries[p]);
        return;
    }
    for (int i = 0; i < t->nents; i++) {
        const PBuf *e = &pl->bufs[t->ents[i]];
        if (!strchr(kp->kinds, bufkind_letter(e->kind))) {
            bad(c, l->line, 1, "%s's %s does not take '%s' (%s) in its table '%s'", k->name, kp->name, e->name,
                bufkind_word(e->kind), t->name);
            return;
        }
    }
    if (!(kp->dtypes >> t->etype & 1))
        bad(c, l->line, 1, "%s's %s does not take %s values ('%s')", k->name, kp->name, etype_name(t->etype), t->name);
    else if (need->count[p] > t->count)
        bad(c, l->line, 1, "table '%s' holds %ld values a buffer; %s's %s needs %ld", t->name, t->count, k->name,
            kp->name, need->count[p]);
}

/* 0 where kernel k's parameter p takes buffer b's kind and element type,
 * or b is a table (its entries are check_table_arg's); else -1, why saying
 * which it does not take. */
int plan_arg_fits(const Plan *pl, int k, int p, int b, char *why, size_t n)
{
    const Kernel *kn = kernel_info(k);
    const KParam *kp = &kn->p[p];
    const PBuf *buf = &pl->bufs[b];
    int kind = pl->bufs[plan_base(pl, b)].kind;
    if (kind == B_TABLE)
        return 0;
    if (!strchr(kp->kinds, bufkind_letter(kind))) {
        char kinds[96] = "";
        for (const char *q = kp->kinds; *q; q++)
            for (int b2 = 0; b2 < B_COUNT; b2++)
                if (bufkind_letter(b2) == *q)
                    snprintf(kinds + strlen(kinds), sizeof kinds - strlen(kinds), "%s%s",
                             q == kp->kinds ? "" : q[1] ? ", " : " or ", bufkind_word(b2));
        snprintf(why, n, "%s's %s takes a %s buffer, not '%s' (%s)", kn->name, kp->name, kinds, buf->name,
                 bufkind_word(kind));
        return -1;
    }
    if (!(kp->dtypes >> buf->etype & 1)) {
        snprintf(why, n, "%s's %s does not take %s values ('%s')", kn->name, kp->name, etype_name(buf->etype),
                 buf->name);
        return -1;
    }
    return 0;
}

static void check_arg(Pc *c, const PLaunch *l, int p, const KNeed *need)
{
    const Plan *pl = c->pl;
    const Kernel *k = kernel_info(l->kernel);
    const KParam *kp = &k->p[p];
    int b = l->arg[p];
    if (b < 0) {
        if (need->count[p] > 0 && !kp->optional)
            bad(c, l->line, 1, "%s needs its %s", k->name, kp->name);
        else if (need->count[p] > 0)
            bad(c, l->line, 1, "%s's constants read its %s, which is absent", k->name, kp->name);
        return;
    }
    const PBuf *buf = &pl->bufs[b];
    int kind = pl->bufs[plan_base(pl, b)].kind;
    if ((kind == B_TABLE) != (need->entries[p] > 0)) {
        if (kind == B_TABLE)
            bad(c, l->line, 1, "%s's %s takes a buffer under these constants, not the table '%s'", k->name, kp->name,
                buf->name);
        else
            bad(c, l->line, 1, "%s's %s takes a table of %ld buffers under these constants, not '%s' (%s)", k->name,
                kp->name, need->entries[p], buf->name, bufkind_word(kind));
        return;
    }
    if (kind == B_TABLE) {
        check_table_arg(c, l, p, need);
        return;
    }
    char why[256];
    if (plan_arg_fits(pl, l->kernel, p, b, why, sizeof why))
        bad(c, l->line, 1, "%s", why);
    else if (need->etype[p] >= 0 && buf->etype != need->etype[p])
        bad(c, l->line, 1, "%s's %s holds %s values ('%s') where its constants ask for %s", k->name, kp->name,
            etype_name(buf->etype), buf->name, etype_name(need->etype[p]));
    else if (need->count[p] > buf->count)
        bad(c, l->line, 1, "buffer '%s' holds %ld values; %s's %s needs %ld", buf->name, buf->count, k->name,
            kp->name, need->count[p]);
}

static void check_launch(Pc *c, const PLaunch *l)
{
    const Kernel *k = kernel_info(l->kernel);
    KNeed need;
    char why[200];
    if (kernel_need(l->kernel, l->c, &need, why, sizeof why)) {
        bad(c, l->line, 1, "%s: these constants do not fit together: %s", k->name, why);
        return;
    }
    if (l->grid[0] != need.grid[0] || l->grid[1] != need.grid[1] || l->grid[2] != need.grid[2])
        bad(c, l->line, 1, "%s: grid %ld %ld %ld where its constants need %ld %ld %ld", k->name, l->grid[0],
            l->grid[1], l->grid[2], need.grid[0], need.grid[1], need.grid[2]);
    if (l->block != need.block)
        bad(c, l->line, 1, "%s: block %d where the kernel is written for %d threads", k->name, l->block,
            need.block);
    if (l->smem < need.smem)
        bad(c, l->line, 1, "%s: %ld bytes of shared memory where its constants need %ld", k->name, l->smem,
            need.smem);
    for (int p = 0; p < k->np; p++)
        check_arg(c, l, p, &need);
}

/* ---- collectives ---- */

static int is_coll(const GNode *n)
{
    return n->op == OP_ALLREDUCE || n->op == OP_ALLGATHER;
}

/* Buffer b's bytes as [*from, *to) of its base's memory (a temporary's in
 * the pool); the base, or -2 for the pool. */
static int extent(const Plan *pl, int b, long *from, long *to)
{
    long at = 0;
    for (; pl->bufs[b].kind == B_VIEW; b = pl->bufs[b].base)
        at += etype_bytes(pl->bufs[b].etype, pl->bufs[b].at);
    *from = at + (pl->bufs[b].kind == B_TEMP ? pl->bufs[b].at : 0);
    *to = *from + plan_buf_bytes(pl, b);
    return pl->bufs[b].kind == B_TEMP ? -2 : b;
}

static void coll_buf(Pc *c, const PColl *cl, int b, const char *param, const char *kinds, long need)
{
    const Plan *pl = c->pl;
    const PBuf *buf = &pl->bufs[b];
    const char *op = op_info[cl->op].name;
    int kind = pl->bufs[plan_base(pl, b)].kind;
    if (!strchr(kinds, bufkind_letter(kind)))
        bad(c, cl->line, 1, "%s's %s takes a %s buffer, not '%s' (%s)", op, param,
            kinds[1] == 'o' && !kinds[2] ? "temp or out" : "temp, in, state or out", buf->name, bufkind_word(kind));
    else if (buf->etype != ET_F32)
        bad(c, cl->line, 1, "%s's %s does not take %s values ('%s'): the chips join f32", op, param,
            etype_name(buf->etype), buf->name);
    else if (need > buf->count)
        bad(c, cl->line, 1, "buffer '%s' holds %ld values; %s's %s needs %ld", buf->name, buf->count, op, param, need);
}

static void check_coll(Pc *c, const PColl *cl)
{
    const Plan *pl = c->pl;
    const Graph *g = pl->g;
    const char *op = op_info[cl->op].name;
    long n = cl->rows * cl->cols, out = cl->op == OP_ALLGATHER ? n * plan_chips(pl) : n;
    coll_buf(c, cl, cl->x, "x", "tiso", n);
    coll_buf(c, cl, cl->y, "y", "to", out);
    long xf, xt, yf, yt;
    if (cl->x != cl->y && extent(pl, cl->x, &xf, &xt) == extent(pl, cl->y, &yf, &yt) && xf < yt && yf < xt)
        bad(c, cl->line, 1, "%s's x '%s' and y '%s' overlap: a collective runs in place only with x and y one buffer",
            op, pl->bufs[cl->x].name, pl->bufs[cl->y].name);
    if (cl->x == cl->y && cl->op == OP_ALLGATHER)
        bad(c, cl->line, 1, "allgather cannot run in place: its y is wider than its x");
    if (cl->ncovers != 1) {
        bad(c, cl->line, 1, "a collective covers one node, its %s, not %d", op, cl->ncovers);
        return;
    }
    const GNode *nd = &g->n[cl->covers[0]], *x = &g->n[nd->args[0]];
    if (nd->op != cl->op) {
        bad(c, cl->line, 1, "node %d.%d is not an %s (it computes %s)", nd->stmt + 1, nd->sub, op,
            nd->op < OP_COUNT ? op_info[nd->op].name : "a row write");
        return;
    }
    long want = 1;
    for (int i = 0; i < x->ty.rank; i++)
        want *= dim_bound(&x->ty.d[i], pl->rows);
    long cols = x->ty.rank ? x->ty.d[x->ty.rank - 1].n : 1;
    if (cl->cols != cols || n != want)
        bad(c, cl->line, 1, "%s joins %ld row%s of %ld values; node %d.%d's operand is %ld row%s of %ld", op,
            cl->rows, cl->rows == 1 ? "" : "s", cl->cols, nd->stmt + 1, nd->sub, want / cols,
            want / cols == 1 ? "" : "s", cols);
}

/* Every compute node covered by exactly one launch or collective; a
 * collective's node by a collective. */
static void cover(Pc *c, int *by, int n, int line, int coll)
{
    const Graph *g = c->pl->g;
    if (!graph_computes(g, n))
        bad(c, line, 1, "node %d.%d computes nothing (a view or a leaf): it is not covered", g->n[n].stmt + 1,
            g->n[n].sub);
    else if (by[n])
        bad(c, line, 1, "statement %d (line %d) node %d is covered twice: at lines %d and %d", g->n[n].stmt + 1,
            g->p->stmts[g->n[n].stmt].line, g->n[n].sub, by[n], line);
    else if (!coll && is_coll(&g->n[n]))
        bad(c, line, 1, "node %d.%d is an %s: a collective line computes it, not a kernel", g->n[n].stmt + 1,
            g->n[n].sub, op_info[g->n[n].op].name);
    else
        by[n] = line;
}

static void check_covers(Pc *c)
{
    const Plan *pl = c->pl;
    const Graph *g = pl->g;
    int *by = calloc((size_t)g->nn, sizeof *by);
    if (!by) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    for (int i = 0; i < pl->nls; i++)
        for (int j = 0; j < pl->ls[i].ncovers; j++)
            cover(c, by, pl->ls[i].covers[j], pl->ls[i].line, 0);
    for (int i = 0; i < pl->ncs; i++)
        for (int j = 0; j < pl->cs[i].ncovers; j++)
            cover(c, by, pl->cs[i].covers[j], pl->cs[i].line, 1);
    for (int n = 0; n < g->nn; n++)
        if (graph_computes(g, n) && !by[n]) {
            const Stmt *s = &g->p->stmts[g->n[n].stmt];
            bad(c, s->line, s->col, "statement %d node %d (%s) is covered by no launch", g->n[n].stmt + 1,
                g->n[n].sub, g->n[n].op < OP_COUNT ? op_info[g->n[n].op].name : "row write");
        }
    free(by);
}

int plan_check(Plan *pl)
{
    Pc c = {pl, 0};
    pl->pool = 0;
    for (int i = 0; i < pl->nbufs; i++)
        check_buf(&c, i);
    int early = plan_rule(pl, "early_trigger");
    for (int i = 0; i < pl->nls; i++) {
        check_launch(&c, &pl->ls[i]);
        if (early && !kernel_early_safe(pl->ls[i].kernel))
            bad(&c, pl->ls[i].line, 1, "rule early_trigger: %s may read before its wait what a launch before it wrote",
                kernel_info(pl->ls[i].kernel)->name);
    }
    for (int i = 0; i < pl->ncs; i++)
        check_coll(&c, &pl->cs[i]);
    check_covers(&c);
    return c.errors;
}
