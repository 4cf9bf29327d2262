/* print.c — the canonical printer: one spelling of every program, so that
 * parsing then printing gives the same bytes and programs diff cleanly. */
#include <string.h>

#include "logos.h"

static const char *decl_word[] = {"size", "in", "weight", "state", "out"};

/* Binding strength: a lower one needs parentheses under a higher one. */
static int prec(const Expr *e)
{
    switch (e->op) {
    case OP_RESHAPE: return 1;
    case OP_ADD: case OP_SUB: return 2;
    case OP_MUL: case OP_DIV: return 3;
    case OP_MATMUL: return 4;
    case OP_NEG: return 5;
    case OP_INDEX: case OP_UPTO: return 6;
    default: return 7;
    }
}

static void sub(FILE *f, const Expr *e, int min)
{
    if (prec(e) < min) {
        fputc('(', f);
        print_expr(f, e);
        fputc(')', f);
    } else {
        print_expr(f, e);
    }
}

static void dims(FILE *f, int rank, const char *const *d)
{
    fputc('[', f);
    for (int i = 0; i < rank; i++)
        fprintf(f, "%s%s", i ? "," : "", d[i]);
    fputc(']', f);
}

static void call(FILE *f, const Expr *e)
{
    fprintf(f, "%s(", op_info[e->op].name);
    for (int i = 0; i < e->nargs; i++) {
        if (i)
            fputs(", ", f);
        print_expr(f, e->args[i]);
    }
    for (int i = 0; i < e->nattrs; i++)
        fprintf(f, "%s%s=%s", i || e->nargs ? ", " : "", e->attrs[i].name, e->attrs[i].text);
    fputc(')', f);
}

static const char *infix(int op)
{
    switch (op) {
    case OP_ADD: return " + ";
    case OP_SUB: return " - ";
    case OP_MUL: return " * ";
    case OP_DIV: return " / ";
    case OP_MATMUL: return " @ ";
    default: return NULL;
    }
}

void print_expr(FILE *f, const Expr *e)
{
    const char *in = infix(e->op);
    int p = prec(e);
    if (in) {
        /* + - * / group to the left, @ to the right; a product under * or /
         * keeps its parentheses, as numpy's readers expect */
        int keep = e->op == OP_MUL || e->op == OP_DIV ? 5 : 0;
        sub(f, e->args[0], e->op == OP_MATMUL ? p + 1 : e->args[0]->op == OP_MATMUL && keep ? keep : p);
        fputs(in, f);
        sub(f, e->args[1], e->op == OP_MATMUL ? p : e->args[1]->op == OP_MATMUL && keep ? keep : p + 1);
        return;
    }
    switch (e->op) {
    case E_NAME:
    case E_NUM:
        fputs(e->name, f);
        return;
    case OP_NEG:
        fputc('-', f);
        sub(f, e->args[0], p);
        return;
    case OP_INDEX:
    case OP_UPTO:
        sub(f, e->args[0], p);
        fputs(e->op == OP_UPTO ? "[.." : "[", f);
        print_expr(f, e->args[1]);
        fputc(']', f);
        return;
    case OP_RESHAPE:
        sub(f, e->args[0], p);
        fputs(" ~ ", f);
        dims(f, e->rank, e->dims);
        return;
    default:
        call(f, e);
    }
}

static void print_type(FILE *f, int base, int rank, const char *const *d)
{
    fputs(base_name(base), f);
    if (rank)
        dims(f, rank, d);
}

static void comments(FILE *f, char **pre, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(f, "%s\n", pre[i]);
}

static void trail(FILE *f, const char *c)
{
    if (c)
        fprintf(f, "  %s", c);
    fputc('\n', f);
}

static void print_decl(FILE *f, const Decl *d)
{
    comments(f, d->pre, d->npre);
    fprintf(f, "%s %s", decl_word[d->kind], d->name);
    if (d->kind != D_SIZE) {
        fputs(" : ", f);
        print_type(f, d->base, d->rank, d->dims);
    }
    if (d->unpair_hd) {
        fprintf(f, " unpair(%d", d->unpair_hd);
        if (d->unpair_rot != d->unpair_hd || d->unpair_at)
            fprintf(f, ", %d", d->unpair_rot);
        if (d->unpair_at)
            fprintf(f, ", %d", d->unpair_at);
        fputc(')', f);
    }
    if (d->split)
        fprintf(f, " split(%s, %d)", d->split == SPLIT_ROWS ? "rows" : "cols", d->parts);
    trail(f, d->trail);
}

static void print_stmt(FILE *f, const Stmt *s)
{
    comments(f, s->pre, s->npre);
    fputs(s->name, f);
    if (s->kind == S_WRITE) {
        fputc('[', f);
        print_expr(f, s->index);
        fputc(']', f);
    }
    fputs(" = ", f);
    print_expr(f, s->value);
    trail(f, s->trail);
}

void print_prog(FILE *f, const Prog *p)
{
    comments(f, p->pre, p->npre);
    fprintf(f, "logos %d %s", p->version, p->form);
    if (p->layer >= 0)
        fprintf(f, " %d", p->layer);
    fprintf(f, " %s", p->model);
    trail(f, p->trail);
    if (p->chips) {
        comments(f, p->chips_pre, p->nchips_pre);
        fprintf(f, "chips %d", p->chips);
        trail(f, p->chips_trail);
    }
    for (int i = 0; i < p->ndecls; i++)
        print_decl(f, &p->decls[i]);
    for (int i = 0; i < p->nstmts; i++)
        print_stmt(f, &p->stmts[i]);
    comments(f, p->endpre, p->nendpre);
    fputs("end", f);
    trail(f, p->endtrail);
    comments(f, p->post, p->npost);
}
