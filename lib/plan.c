/* plan.c — launch plans as text (man5/logos-plan.5): printing, parsing, and
 * the check logos-run makes before any launch. A plan is a header (lane,
 * numerics, knobs, the lane rules taken), the program itself, its buffers
 * (tables among them: named buffers' addresses, a batch's caches) and its
 * launches in order, then `done`; each launch names a kernel of the
 * table with its constants, its grid, block and shared memory, a buffer
 * for each parameter, and the program statements (or nodes of them) it
 * covers. A plan never carries code. */
#include <math.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char *kind_words[B_COUNT] = {"weight", "state", "in", "out", "temp", "const", "scratch", "size", "view",
                                          "table"};
static const char kind_letters[B_COUNT] = {'w', 's', 'i', 'o', 't', 'c', 'x', 'z', 'v', 'p'};
static const char *num_words[] = {"precise", "q8", "q8x2"};

const char *numerics_name(int n)
{
    return num_words[n];
}

char bufkind_letter(int kind)
{
    return kind_letters[kind];
}

const char *bufkind_word(int kind)
{
    return kind_words[kind];
}

int plan_buf(const Plan *pl, const char *name)
{
    return strmap_get(pl->names, name);   /* kept by whoever adds the buffers: the lane, the parser */
}

int plan_chips(const Plan *pl)
{
    return pl->prog->chips ? pl->prog->chips : 1;
}

int plan_base(const Plan *pl, int b)
{
    for (int guard = 0; pl->bufs[b].kind == B_VIEW && guard < pl->nbufs; guard++)
        b = pl->bufs[b].base;
    return b;
}

long plan_buf_bytes(const Plan *pl, int b)
{
    return etype_bytes(pl->bufs[b].etype, pl->bufs[b].count);
}

/* The expressions of the nodes of op a or op b that a plan's launches of
 * kernel k cover, into *out; their count. */
static int covered(Arena *a, const Plan *pl, int k, int op_a, int op_b, const Expr ***out)
{
    int n = 0;
    for (int i = 0; i < pl->nls; i++)
        n += pl->ls[i].kernel == k ? pl->ls[i].ncovers : 0;
    *out = arena_alloc(a, sizeof **out * (size_t)(n + 1));
    n = 0;
    for (int i = 0; i < pl->nls; i++)
        for (int c = 0; pl->ls[i].kernel == k && c < pl->ls[i].ncovers; c++) {
            const GNode *g = &pl->g->n[pl->ls[i].covers[c]];
            if (g->op == op_a || g->op == op_b)
                (*out)[n++] = g->e;
        }
    return n;
}

RefNum plan_ref_numerics(Arena *a, const Plan *pl)
{
    RefNum num = {pl->numerics == NUM_Q8 ? 1 : pl->numerics == NUM_Q8X2 ? 2 : 0, NULL, 0, NULL, 0};
    /* flash's attention (and latent_expanded's), mmh's products */
    num.nflash = covered(a, pl, KN_FLASH, OP_ATTEND, OP_LATENT, &num.flash);
    num.nh16 = covered(a, pl, KN_MMH, OP_MATMUL, OP_MATMUL, &num.h16);
    return num;
}

/* ---- covers: statements whole, or nodes of them ---- */

/* Each statement's compute nodes in node order: list[first[s] ..
 * first[s + 1]), found in one pass over the graph (a plan of a large batch
 * has tens of thousands of statements and nodes; a search a statement made
 * printing and reading it quadratic). */
typedef struct StmtIx {
    Arena *a;   /* where the index and a launch's scratch live */
    int *first, *list;
} StmtIx;

/* The index of each statement's compute nodes, or (all) of all its nodes. */
static StmtIx stmt_index(Arena *a, const Graph *g, int all)
{
    int ns = g->p->nstmts;
    StmtIx x = {a, arena_alloc(a, sizeof *x.first * (size_t)(ns + 2)), arena_alloc(a, sizeof *x.list * (size_t)(g->nn + 1))};
    memset(x.first, 0, sizeof *x.first * (size_t)(ns + 2));
    for (int k = 0; k < g->nn; k++)
        if (g->n[k].stmt >= 0 && g->n[k].stmt < ns && (all || graph_computes(g, k)))
            x.first[g->n[k].stmt + 2]++;
    for (int s = 0; s < ns; s++)
        x.first[s + 2] += x.first[s + 1];
    for (int k = 0; k < g->nn; k++)
        if (g->n[k].stmt >= 0 && g->n[k].stmt < ns && (all || graph_computes(g, k)))
            x.list[x.first[g->n[k].stmt + 1]++] = k;
    return x;
}

/* The compute nodes of statement s, in order: their count, *out the first. */
static int stmt_nodes(const StmtIx *x, int s, const int **out)
{
    *out = x->list + x->first[s];
    return x->first[s + 1] - x->first[s];
}

static int covers_node(const int *covers, int ncovers, int node)
{
    for (int i = 0; i < ncovers; i++)
        if (covers[i] == node)
            return 1;
    return 0;
}

/* The statements (S) a launch covers whole, the nodes (S.N) of those it
 * covers in part, in statement order. */
static void print_covers(FILE *f, const Graph *g, const StmtIx *x, const int *covers, int ncovers)
{
    int lo = 1 << 30, hi = 0, ns = 0, *st = arena_alloc(x->a, sizeof *st * (size_t)(ncovers + 1));
    for (int i = 0; i < ncovers; i++)
        st[ns++] = g->n[covers[i]].stmt;
    qsort(st, (size_t)ns, sizeof *st, int_cmp);
    for (int i = 0; i < ns; i++) {
        int s = st[i];
        if (s < 0 || (i > 0 && s == st[i - 1]))
            continue;
        const int *nodes;
        int n = stmt_nodes(x, s, &nodes), have = 0;
        for (int j = 0; j < n; j++)
            have += covers_node(covers, ncovers, nodes[j]);
        if (!have)
            continue;
        int line = g->p->stmts[s].line;
        lo = line < lo ? line : lo;
        hi = line > hi ? line : hi;
        if (have == n) {
            fprintf(f, " %d", s + 1);
            continue;
        }
        for (int j = 0; j < n; j++)
            if (covers_node(covers, ncovers, nodes[j]))
                fprintf(f, " %d.%d", s + 1, g->n[nodes[j]].sub);
    }
    if (hi)
        fprintf(f, lo == hi ? "  # line %d" : "  # lines %d-%d", lo, hi);
}

/* ---- printing ---- */

static void print_buf(FILE *f, const Plan *pl, const PBuf *b)
{
    fprintf(f, "buffer %s %s %s %ld", b->name, kind_words[b->kind], etype_name(b->etype), b->count);
    if (b->kind == B_TEMP)
        fprintf(f, " at %ld", b->at);
    if (b->kind == B_VIEW)
        fprintf(f, " of %s at %ld", pl->bufs[b->base].name, b->at);
    if (b->kind == B_CONST) {
        const GNode *n = &pl->g->n[b->node];
        fprintf(f, " from %d.%d", n->stmt + 1, n->sub);
    }
    if (b->kind == B_TABLE) {
        fputs(" of", f);
        for (int i = 0; i < b->nents; i++)
            fprintf(f, " %s", pl->bufs[b->ents[i]].name);
    }
    fputc('\n', f);
}

static void print_launch(FILE *f, const Plan *pl, const StmtIx *x, const PLaunch *l)
{
    const Kernel *k = kernel_info(l->kernel);
    fprintf(f, "launch %s", k->name);
    for (int i = 0; i < k->nc; i++) {
        char v[64];
        kernel_const_text(&k->c[i], l->c[i], v, sizeof v);
        fprintf(f, " %s=%s", k->c[i].name, v);
    }
    fprintf(f, " grid %ld %ld %ld block %d smem %ld args", l->grid[0], l->grid[1], l->grid[2], l->block, l->smem);
    for (int i = 0; i < k->np; i++)
        fprintf(f, " %s=%s", k->p[i].name, l->arg[i] < 0 ? "-" : pl->bufs[l->arg[i]].name);
    fputs(" covers", f);
    print_covers(f, pl->g, x, l->covers, l->ncovers);
    fputc('\n', f);
}

static void print_coll(FILE *f, const Plan *pl, const StmtIx *x, const PColl *c)
{
    fprintf(f, "collective %s ROWS=%ld COLS=%ld args x=%s y=%s covers", op_info[c->op].name, c->rows, c->cols,
            pl->bufs[c->x].name, pl->bufs[c->y].name);
    print_covers(f, pl->g, x, c->covers, c->ncovers);
    fputc('\n', f);
}

void plan_print(FILE *f, const Plan *pl)
{
    fprintf(f, "plan 1 cuda\nnumerics %s\n", num_words[pl->numerics]);
    fprintf(f, "knob fuse_quant %d\nknob lane_rules %d\nknob rows %d\n", pl->fuse_quant, pl->lane_rules, pl->rows);
    for (int i = 0; i < pl->nrules; i++)
        fprintf(f, "rule %s\n", pl->rules[i]);
    print_prog(f, pl->prog);
    for (int i = 0; i < pl->nbufs; i++)
        print_buf(f, pl, &pl->bufs[i]);
    Arena *a = arena_new();
    StmtIx x = stmt_index(a, pl->g, 0);
    int j = 0;
    for (int i = 0; i <= pl->nls; i++) {
        for (; j < pl->ncs && pl->cs[j].at == i; j++)
            print_coll(f, pl, &x, &pl->cs[j]);
        if (i < pl->nls)
            print_launch(f, pl, &x, &pl->ls[i]);
    }
    arena_free(a);
    fputs("done\n", f);
}

/* ---- reading lines of words ---- */

typedef struct Word {
    const char *p;
    int len, col;
} Word;

typedef struct Rd {
    Arena *a;
    const Src *src;
    size_t pos;          /* start of the next line */
    int line;            /* its number */
    size_t cur;          /* start of the current line */
    Word *w; int nw, cw; /* the current line's words (comments dropped) */
    int at;              /* the current line's number */
    size_t gap;          /* start of the lines without words before it */
    int gapline;         /* their first's number */
    StmtIx ix;           /* the program's statements' nodes, once a cover asks */
    StmtIx every;        /* all their nodes, once an S.N word asks */
    jmp_buf fail;
} Rd;

static _Noreturn void fail_at(Rd *r, int col, const char *fmt, const char *a1, const char *a2)
{
    char msg[400];
    snprintf(msg, sizeof msg, fmt, a1, a2);
    diag_at(r->src, r->at, col, "%s", msg);
    longjmp(r->fail, 1);
}

static _Noreturn void fail_w(Rd *r, const Word *w, const char *fmt, const char *a2)
{
    char s[80];
    snprintf(s, sizeof s, "%.*s", w->len > 60 ? 60 : w->len, w->p);
    fail_at(r, w->col, fmt, s, a2);
}

/* Reads the next line's words; 0 at the end of the text. */
static int next_line(Rd *r)
{
    const char *t = r->src->text;
    if (r->pos >= r->src->len)
        return 0;
    r->nw = 0;
    r->at = r->line;
    r->cur = r->pos;
    size_t i = r->pos;
    while (i < r->src->len && t[i] != '\n' && t[i] != '#') {
        while (i < r->src->len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\r'))
            i++;
        if (i >= r->src->len || t[i] == '\n' || t[i] == '#')
            break;
        size_t s = i;
        while (i < r->src->len && t[i] != ' ' && t[i] != '\t' && t[i] != '\r' && t[i] != '\n' && t[i] != '#')
            i++;
        *VEC_PUSH(r->a, r->w, r->nw, r->cw) = (Word){t + s, (int)(i - s), (int)(s - r->pos) + 1};
    }
    while (i < r->src->len && t[i] != '\n')
        i++;
    r->pos = i < r->src->len ? i + 1 : i;
    r->line++;
    return 1;
}

/* The next line with words; 0 at the end. */
static int next_words(Rd *r)
{
    r->gap = r->pos;
    r->gapline = r->line;
    while (next_line(r))
        if (r->nw)
            return 1;
    return 0;
}

static int word_is(const Word *w, const char *s)
{
    return (int)strlen(s) == w->len && memcmp(w->p, s, (size_t)w->len) == 0;
}

static char *word_str(Rd *r, const Word *w)
{
    return arena_strndup(r->a, w->p, (size_t)w->len);
}

static long word_long(Rd *r, const Word *w, long lo, long hi, const char *what)
{
    long v;
    if (parse_long(word_str(r, w), lo, hi, &v))
        fail_w(r, w, "'%s' is not %s", what);
    return v;
}

static void want_words(Rd *r, int n, const char *usage)
{
    if (r->nw != n)
        fail_at(r, r->w[0].col, "%s: %s", usage, r->nw < n ? "too few words" : "too many words");
}

/* ---- the header ---- */

static void header(Rd *r, Plan *pl)
{
    if (!word_is(&r->w[0], "plan"))
        fail_w(r, &r->w[0], "expected a plan, found '%s'", "");
    want_words(r, 3, "a plan starts: plan 1 cuda");
    if (!word_is(&r->w[1], "1"))
        fail_w(r, &r->w[1], "plan version '%s' is not supported (this is version 1)", "");
    if (!word_is(&r->w[2], "cuda"))
        fail_w(r, &r->w[2], "unknown lane '%s' (lanes: cuda)", "");
    pl->line = r->at;
    pl->rows = 1;
    pl->lane_rules = 1;
}

static void knob(Rd *r, Plan *pl)
{
    want_words(r, 3, "knob NAME VALUE");
    if (word_is(&r->w[1], "fuse_quant"))
        pl->fuse_quant = (int)word_long(r, &r->w[2], 0, 1, "0 or 1");
    else if (word_is(&r->w[1], "lane_rules"))
        pl->lane_rules = (int)word_long(r, &r->w[2], 0, 1, "0 or 1");
    else if (word_is(&r->w[1], "rows"))
        pl->rows = (int)word_long(r, &r->w[2], 1, 65536, "a whole number from 1 to 65536");
    else
        fail_w(r, &r->w[1], "unknown knob '%s' (knobs: fuse_quant, lane_rules, rows)", "");
}

static void header_line(Rd *r, Plan *pl)
{
    const Word *w = &r->w[0];
    if (word_is(w, "numerics")) {
        want_words(r, 2, "numerics precise|q8|q8x2");
        for (pl->numerics = 0; pl->numerics < 3 && !word_is(&r->w[1], num_words[pl->numerics]); pl->numerics++)
            ;
        if (pl->numerics == 3)
            fail_w(r, &r->w[1], "unknown numerics '%s' (precise, q8, q8x2)", "");
    } else if (word_is(w, "knob")) {
        knob(r, pl);
    } else if (word_is(w, "rule")) {
        want_words(r, 2, "rule NAME");
        *VEC_PUSH(r->a, pl->rules, pl->nrules, pl->crules) = word_str(r, &r->w[1]);
    } else {
        fail_w(r, w, "expected numerics, knob, rule or the program, found '%s'", "");
    }
}

/* The program, read by the language's parser from the comment lines before
 * it to those after it (its own, as in a stream of programs). */
static void program(Rd *r, Plan *pl)
{
    Lexer lx = {r->src, r->gap, r->gapline, 1};
    int err = 0;
    pl->prog = parse_prog(r->a, &lx, &err);
    if (err || !pl->prog || check_prog(r->a, pl->prog))
        longjmp(r->fail, 1);
    pl->g = graph_build(r->a, pl->prog);
    r->pos = lx.pos;
    r->line = lx.line;
    if (lx.col != 1)   /* the rest of the `end` line */
        next_line(r);
}

/* ---- buffers ---- */

static int node_of(Rd *r, const Plan *pl, const Word *w, int whole_ok, int *stmt)
{
    char *s = word_str(r, w), *dot = strchr(s, '.');
    long st, sub = 0;
    if (dot)
        *dot = 0;
    if (parse_long(s, 1, pl->prog->nstmts, &st) || (dot && parse_long(dot + 1, 1, 1 << 20, &sub)) ||
        (!dot && !whole_ok))
        fail_w(r, w, "'%s' is not a statement (S) or a node of one (S.N) of this program", "");
    *stmt = (int)st - 1;
    if (!dot)
        return -1;
    if (!r->every.first)
        r->every = stmt_index(r->a, pl->g, 1);
    const int *nodes;
    int n = stmt_nodes(&r->every, (int)st - 1, &nodes);
    for (int j = 0; j < n; j++)   /* the first in node order, as a search of the graph finds */
        if (pl->g->n[nodes[j]].sub == sub)
            return nodes[j];
    fail_w(r, w, "statement %s has no such node", "");
}

static void buffer_line(Rd *r, Plan *pl)
{
    if (r->nw < 5)
        fail_at(r, r->w[0].col, "%s%s", "buffer NAME KIND TYPE COUNT [at N] [of BUF at N] [from S.N] [of BUF ...]: too few words", "");
    PBuf b = {.name = word_str(r, &r->w[1]), .decl = -1, .node = -1, .base = -1, .line = r->at, .col = r->w[1].col};
    if (plan_buf(pl, b.name) >= 0)
        fail_w(r, &r->w[1], "buffer '%s' is declared twice", "");
    for (b.kind = 0; b.kind < B_COUNT && !word_is(&r->w[2], kind_words[b.kind]); b.kind++)
        ;
    if (b.kind == B_COUNT)
        fail_w(r, &r->w[2], "unknown buffer kind '%s' (weight, state, in, out, temp, const, scratch, size, view, table)", "");
    b.etype = etype_lookup(r->w[3].p, (size_t)r->w[3].len);
    if (b.etype < 0)
        fail_w(r, &r->w[3], "unknown element type '%s' (f32, i32, f16, f64, q8, a8, a8x2, a8h)", "");
    b.count = word_long(r, &r->w[4], 1, LOGOS_MAXVALUES, "a count of values from 1 to 2^40");
    int i = 5, stmt;
    if (b.kind == B_VIEW) {
        if (r->nw != 9 || !word_is(&r->w[5], "of") || !word_is(&r->w[7], "at"))
            fail_at(r, r->w[0].col, "%s%s", "a view is: buffer NAME view TYPE COUNT of BUF at N", "");
        b.base = plan_buf(pl, word_str(r, &r->w[6]));
        if (b.base < 0)
            fail_w(r, &r->w[6], "buffer '%s' is not declared before the view", "");
        b.at = word_long(r, &r->w[8], 0, LOGOS_MAXVALUES, "a value offset");
        i = 9;
    } else if (b.kind == B_TEMP) {
        if (r->nw != 7 || !word_is(&r->w[5], "at"))
            fail_at(r, r->w[0].col, "%s%s", "a temporary is: buffer NAME temp TYPE COUNT at BYTES", "");
        b.at = word_long(r, &r->w[6], 0, 1L << 45, "a byte offset");
        i = 7;
    } else if (b.kind == B_CONST) {
        if (r->nw != 7 || !word_is(&r->w[5], "from"))
            fail_at(r, r->w[0].col, "%s%s", "a constant table is: buffer NAME const f64 COUNT from S.N", "");
        b.node = node_of(r, pl, &r->w[6], 0, &stmt);
        i = 7;
    } else if (b.kind == B_TABLE) {
        if (r->nw < 7 || !word_is(&r->w[5], "of"))
            fail_at(r, r->w[0].col, "%s%s", "a table is: buffer NAME table TYPE COUNT of BUF BUF ...", "");
        int cap = 0;
        for (i = 6; i < r->nw; i++) {
            int e = plan_buf(pl, word_str(r, &r->w[i]));
            if (e < 0)
                fail_w(r, &r->w[i], "buffer '%s' is not declared before the table", "");
            *VEC_PUSH(r->a, b.ents, b.nents, cap) = e;
        }
    }
    if (r->nw != i)
        fail_w(r, &r->w[i], "unexpected '%s' after the buffer", "");
    b.decl = b.kind <= B_OUT || b.kind == B_SIZE ? prog_find_decl(pl->prog, b.name) : -1;
    *VEC_PUSH(r->a, pl->bufs, pl->nbufs, pl->cbufs) = b;
    strmap_put(pl->names, b.name, pl->nbufs - 1);   /* declared once: checked above */
}

/* ---- launches ---- */

static void launch_const(Rd *r, PLaunch *l, const Word *w, char *given)
{
    const char *eq = memchr(w->p, '=', (size_t)w->len);
    char *name = arena_strndup(r->a, w->p, eq ? (size_t)(eq - w->p) : (size_t)w->len);
    int i = eq ? kernel_const(l->kernel, name) : -1;
    const Kernel *k = kernel_info(l->kernel);
    if (i < 0)
        fail_w(r, w, "'%s' is not a constant of %s", k->name);
    if (given[i])
        fail_w(r, w, "constant '%s' is given twice", "");
    given[i] = 1;
    char *v = arena_strndup(r->a, eq + 1, (size_t)(w->p + w->len - eq - 1)), *end;
    double x = strtod(v, &end);
    const KConst *c = &k->c[i];
    if (!*v || *end || !isfinite(x) || (!c->isf && x != floor(x)))
        fail_w(r, w, "'%s' is not a %s", c->isf ? "number" : "whole number");
    if (x < c->lo || x > c->hi) {
        char range[96];
        snprintf(range, sizeof range, "%s (%s takes %.10g to %.10g)", k->name, c->name, c->lo, c->hi);
        fail_w(r, w, "'%s' is outside its range in %s", range);
    }
    l->c[i] = x;
}

static void launch_arg(Rd *r, Plan *pl, PLaunch *l, const Word *w, char *given)
{
    const char *eq = memchr(w->p, '=', (size_t)w->len);
    char *name = arena_strndup(r->a, w->p, eq ? (size_t)(eq - w->p) : (size_t)w->len);
    const Kernel *k = kernel_info(l->kernel);
    int i = eq ? kernel_param(l->kernel, name) : -1;
    if (i < 0)
        fail_w(r, w, "'%s' is not a parameter of %s", k->name);
    if (given[i])
        fail_w(r, w, "argument '%s' is given twice", "");
    given[i] = 1;
    char *v = arena_strndup(r->a, eq + 1, (size_t)(w->p + w->len - eq - 1));
    if (strcmp(v, "-") == 0) {
        if (!k->p[i].optional)
            fail_w(r, w, "'%s': the parameter is not optional", "");
        l->arg[i] = -1;
        return;
    }
    l->arg[i] = plan_buf(pl, v);
    if (l->arg[i] < 0)
        fail_w(r, w, "'%s': no such buffer", "");
}

static int word_number(Rd *r, int *i, long lo, long hi, const char *what)
{
    if (*i >= r->nw)
        fail_at(r, r->w[r->nw - 1].col, "the line ends before its %s%s", what, "");
    return (int)word_long(r, &r->w[(*i)++], lo, hi, what);
}

static void expect_word(Rd *r, int i, const char *want)
{
    if (i >= r->nw)
        fail_at(r, r->w[r->nw - 1].col, "the line ends before '%s'%s", want, "");
    if (!word_is(&r->w[i], want))
        fail_w(r, &r->w[i], "expected '%s', found '%s'", want);
}

/* The statements (S) and nodes (S.N) from word i on. */
static void read_covers(Rd *r, const Plan *pl, int i, int **covers, int *ncovers)
{
    int cap = 0;
    for (; i < r->nw; i++) {
        int stmt, node = node_of(r, pl, &r->w[i], 1, &stmt);
        if (node >= 0) {
            *VEC_PUSH(r->a, *covers, *ncovers, cap) = node;
            continue;
        }
        if (!r->ix.first)
            r->ix = stmt_index(r->a, pl->g, 0);
        const int *nodes;
        int n = stmt_nodes(&r->ix, stmt, &nodes);
        for (int j = 0; j < n; j++)
            *VEC_PUSH(r->a, *covers, *ncovers, cap) = nodes[j];
    }
}

static void launch_line(Rd *r, Plan *pl)
{
    PLaunch l = {.line = r->at};
    for (int p = 0; p < KMAXP; p++)   /* a parameter the kernel does not have: none, not buffer 0 */
        l.arg[p] = -1;
    if (r->nw < 2)
        fail_at(r, r->w[0].col, "%s%s", "launch KERNEL CONST=V ... grid X Y Z block N smem N args P=BUF ... covers ...", "");
    char *kname = word_str(r, &r->w[1]);
    l.kernel = kernel_lookup(kname);
    if (l.kernel < 0)
        fail_w(r, &r->w[1], "unknown kernel '%s'", "");
    const Kernel *k = kernel_info(l.kernel);
    char cgiven[KMAXC] = {0}, pgiven[KMAXP] = {0};
    int i = 2;
    for (; i < r->nw && !word_is(&r->w[i], "grid"); i++)
        launch_const(r, &l, &r->w[i], cgiven);
    for (int c = 0; c < k->nc; c++)
        if (!cgiven[c])
            fail_at(r, r->w[1].col, "%s is missing its constant %s", k->name, k->c[c].name);
    expect_word(r, i++, "grid");
    for (int d = 0; d < 3; d++)
        l.grid[d] = word_number(r, &i, 1, 2147483647L, "grid size");
    expect_word(r, i++, "block");
    l.block = word_number(r, &i, 1, 1024, "block size");
    expect_word(r, i++, "smem");
    l.smem = word_number(r, &i, 0, 232448, "shared memory bytes");
    expect_word(r, i++, "args");
    for (; i < r->nw && !word_is(&r->w[i], "covers"); i++)
        launch_arg(r, pl, &l, &r->w[i], pgiven);
    for (int p = 0; p < k->np; p++)
        if (!pgiven[p])
            fail_at(r, r->w[1].col, "%s is missing its argument %s", k->name, k->p[p].name);
    expect_word(r, i++, "covers");
    read_covers(r, pl, i, &l.covers, &l.ncovers);
    *VEC_PUSH(r->a, pl->ls, pl->nls, pl->cls) = l;
}

/* ---- collectives ---- */

/* NAME=VALUE of a collective: NAME's index in names, its value in *v. */
static int coll_word(Rd *r, const Word *w, const char *const *names, const char *what, char *given, Word *v)
{
    const char *eq = memchr(w->p, '=', (size_t)w->len);
    int i = 0;
    for (; eq && names[i]; i++)
        if ((size_t)(eq - w->p) == strlen(names[i]) && memcmp(names[i], w->p, strlen(names[i])) == 0)
            break;
    if (!eq || !names[i])
        fail_w(r, w, "'%s' is not %s", what);
    if (given[i])
        fail_w(r, w, "'%s' is given twice", "");
    given[i] = 1;
    int at = (int)(eq + 1 - w->p);
    *v = (Word){eq + 1, w->len - at, w->col + at};
    return i;
}

static void coll_line(Rd *r, Plan *pl)
{
    PColl c = {.line = r->at, .at = pl->nls, .x = -1, .y = -1};
    if (r->nw < 2)
        fail_at(r, r->w[0].col, "%s%s", "collective OP ROWS=N COLS=N args x=BUF y=BUF covers ...", "");
    if (word_is(&r->w[1], "allreduce"))
        c.op = OP_ALLREDUCE;
    else if (word_is(&r->w[1], "allgather"))
        c.op = OP_ALLGATHER;
    else
        fail_w(r, &r->w[1], "unknown collective '%s' (allreduce, allgather)", "");
    static const char *const consts[] = {"ROWS", "COLS", NULL}, *const params[] = {"x", "y", NULL};
    const char *op = op_info[c.op].name;
    char cg[2] = {0}, ag[2] = {0};
    int i = 2;
    Word v;
    for (; i < r->nw && !word_is(&r->w[i], "args"); i++) {
        int k = coll_word(r, &r->w[i], consts, "a constant of a collective (ROWS, COLS)", cg, &v);
        *(k ? &c.cols : &c.rows) = word_long(r, &v, 1, 1L << 30, "a whole number from 1 to 2^30");
    }
    for (int k = 0; k < 2; k++)
        if (!cg[k])
            fail_at(r, r->w[1].col, "%s is missing its constant %s", op, consts[k]);
    expect_word(r, i++, "args");
    for (; i < r->nw && !word_is(&r->w[i], "covers"); i++) {
        int k = coll_word(r, &r->w[i], params, "a parameter of a collective (x, y)", ag, &v);
        int b = plan_buf(pl, word_str(r, &v));
        if (b < 0)
            fail_w(r, &v, "'%s': no such buffer", "");
        *(k ? &c.y : &c.x) = b;
    }
    for (int k = 0; k < 2; k++)
        if (!ag[k])
            fail_at(r, r->w[1].col, "%s is missing its argument %s", op, params[k]);
    expect_word(r, i++, "covers");
    read_covers(r, pl, i, &c.covers, &c.ncovers);
    *VEC_PUSH(r->a, pl->cs, pl->ncs, pl->ccs) = c;
}

static Plan *parse_one(Rd *r)
{
    if (!next_words(r))
        return NULL;
    Plan *pl = arena_alloc(r->a, sizeof *pl);
    pl->src = r->src;
    pl->names = strmap_new(r->a);
    header(r, pl);
    for (;;) {
        if (!next_words(r))
            fail_at(r, 1, "%s%s", "the plan ends before its program", "");
        if (word_is(&r->w[0], "logos")) {
            program(r, pl);
            break;
        }
        header_line(r, pl);
    }
    for (;;) {
        if (!next_words(r))
            fail_at(r, 1, "%s%s", "the plan ends without 'done'", "");
        if (word_is(&r->w[0], "done")) {
            want_words(r, 1, "done");
            break;
        }
        if (word_is(&r->w[0], "buffer"))
            buffer_line(r, pl);
        else if (word_is(&r->w[0], "launch"))
            launch_line(r, pl);
        else if (word_is(&r->w[0], "collective"))
            coll_line(r, pl);
        else
            fail_w(r, &r->w[0], "expected buffer, launch, collective or done, found '%s'", "");
    }
    return pl;
}

Plan *plan_parse(Arena *a, Lexer *lx, int *err)
{
    Rd r = {.a = a, .src = lx->src, .pos = lx->pos, .line = lx->line};
    *err = 0;
    if (setjmp(r.fail)) {
        *err = 1;
        return NULL;
    }
    Plan *pl = parse_one(&r);
    lx->pos = r.pos;
    lx->line = r.line;
    lx->col = 1;
    if (pl && plan_check(pl)) {
        *err = 1;
        return NULL;
    }
    return pl;
}

int plan_rule(const Plan *pl, const char *name)
{
    for (int i = 0; i < pl->nrules; i++)
        if (!strcmp(pl->rules[i], name))
            return 1;
    return 0;
}
