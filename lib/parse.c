/* parse.c — LOGOS text to programs: a header, declarations, statements and
 * `end`, by recursive descent. The first error stops the parse of a stream. */
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

enum { MAX_DEPTH = 200 };

typedef struct Parser {
    Arena *a;
    Lexer *lx;
    Token tok, ahead;
    int have_ahead, depth, started;
    jmp_buf fail;
    char **pre; int npre, cpre;   /* comments waiting for the next item */
} Parser;

static const char *keywords[] = {"logos", "size", "in", "weight", "state", "out", "end", NULL};

static int is_keyword(const char *s, int len)
{
    for (int i = 0; keywords[i]; i++)
        if ((int)strlen(keywords[i]) == len && memcmp(keywords[i], s, (size_t)len) == 0)
            return 1;
    return 0;
}

static _Noreturn void fail(Parser *ps, const Token *t, const char *msg)
{
    int line = t->line, col = t->col;
    const Src *s = ps->lx->src;
    if (t->kind == TK_EOF && col == 1 && line > 1) {   /* point past the last line's end */
        const char *end = s->text + s->len - 1, *p = end;
        while (p > s->text && p[-1] != '\n')
            p--;
        line--;
        col = (int)(end - p) + 1;
    }
    diag_at(s, line, col, "%s", msg);
    longjmp(ps->fail, 1);
}

static _Noreturn void fail_tok(Parser *ps, const char *want)
{
    Token *t = &ps->tok;
    const char *got = tok_name(t->kind);
    char *m;
    if (t->kind == TK_IDENT || t->kind == TK_NUM)
        m = arena_printf(ps->a, "expected %s, found '%.*s'", want, t->len > 40 ? 40 : t->len, t->p);
    else if (t->kind == TK_BAD) {
        unsigned char c = (unsigned char)*t->p;
        m = c >= 32 && c < 127 ? arena_printf(ps->a, "unexpected character '%c'", c)
                               : arena_printf(ps->a, "unexpected byte 0x%02x", c);
    } else
        m = arena_printf(ps->a, "expected %s, found %s", want, got);
    fail(ps, t, m);
}

enum { MAX_NAME = 256 };

static void next(Parser *ps)
{
    if (ps->have_ahead) {
        ps->tok = ps->ahead;
        ps->have_ahead = 0;
    } else {
        ps->tok = lex_next(ps->lx);
    }
    if ((ps->tok.kind == TK_IDENT || ps->tok.kind == TK_NUM) && ps->tok.len > MAX_NAME)
        fail(ps, &ps->tok, ps->tok.kind == TK_IDENT ? "a name longer than 256 characters"
                                                    : "a number longer than 256 characters");
}

static Token *peek2(Parser *ps)
{
    if (!ps->have_ahead) {
        ps->ahead = lex_next(ps->lx);
        ps->have_ahead = 1;
    }
    return &ps->ahead;
}

static int is(Parser *ps, int kind) { return ps->tok.kind == kind; }

static Token expect(Parser *ps, int kind, const char *want)
{
    if (!is(ps, kind))
        fail_tok(ps, want);
    Token t = ps->tok;
    next(ps);
    return t;
}

static char *text(Parser *ps, const Token *t) { return arena_strndup(ps->a, t->p, (size_t)t->len); }

static int tok_is(const Token *t, const char *s)
{
    return t->kind == TK_IDENT && (int)strlen(s) == t->len && memcmp(t->p, s, (size_t)t->len) == 0;
}

/* A comment's text without trailing blanks. */
static char *comment_text(Parser *ps, const Token *t)
{
    int n = t->len;
    while (n > 0 && (t->p[n - 1] == ' ' || t->p[n - 1] == '\t' || t->p[n - 1] == '\r'))
        n--;
    return arena_strndup(ps->a, t->p, (size_t)n);
}

/* Skips blank and comment-only lines, keeping the comments (a run of blank
 * lines is kept as one empty entry) for the next item. */
static void skip_lines(Parser *ps)
{
    int blank = 0;
    for (;;) {
        if (is(ps, TK_COMMENT)) {
            *VEC_PUSH(ps->a, ps->pre, ps->npre, ps->cpre) = comment_text(ps, &ps->tok);
            next(ps);
            if (!is(ps, TK_EOF))
                expect(ps, TK_NL, "end of line");
            blank = 0;
        } else if (is(ps, TK_NL)) {
            if (!blank && ps->started)
                *VEC_PUSH(ps->a, ps->pre, ps->npre, ps->cpre) = "";
            blank = 1;
            next(ps);
        } else {
            break;
        }
    }
}

static char **take_pre(Parser *ps, int *n)
{
    char **p = ps->pre;
    *n = ps->npre;
    ps->pre = NULL;
    ps->npre = ps->cpre = 0;
    return p;
}

/* An optional trailing comment, then the end of the line (or input). */
static const char *line_end(Parser *ps)
{
    const char *c = NULL;
    if (is(ps, TK_COMMENT)) {
        c = comment_text(ps, &ps->tok);
        next(ps);
    }
    if (!is(ps, TK_EOF))
        expect(ps, TK_NL, "end of line");
    return c;
}

/* ---- expressions ---- */

static Expr *expr(Parser *ps);

static Expr *node(Parser *ps, int op, const Token *at, int nargs)
{
    Expr *e = arena_alloc(ps->a, sizeof *e);
    e->op = op;
    e->line = at->line;
    e->col = at->col;
    e->nargs = nargs;
    if (nargs)
        e->args = arena_alloc(ps->a, sizeof *e->args * (size_t)nargs);
    return e;
}

/* 1: + or -, 2: * or /, 0: any other op. */
static int chain_class(int op)
{
    return op == OP_ADD || op == OP_SUB ? 1 : op == OP_MUL || op == OP_DIV ? 2 : 0;
}

/* Sets e's depth from its operands; a tree deeper than MAX_DEPTH is refused
 * so that no later pass recurses without bound. */
static Expr *deepen(Parser *ps, Expr *e)
{
    int d = 0;
    for (int i = 0; i < e->nargs; i++)
        if (e->args[i]->depth > d)
            d = e->args[i]->depth;
    e->depth = d + 1;
    if (e->depth > MAX_DEPTH) {   /* a flat chain of + - (or * /) is as deep as it is long */
        Token at = {0, e->line, e->col, NULL, 0};
        int c = chain_class(e->op);
        fail(ps, &at, !c || chain_class(e->args[0]->op) != c ? "expression nested too deeply (more than 200 levels)"
                      : c == 1 ? "this sum is too long (more than 200 levels deep): give some of its terms a name"
                               : "this product is too long (more than 200 levels deep): give some of its factors a name");
    }
    return e;
}

static Expr *binary(Parser *ps, int op, const Token *at, Expr *l, Expr *r)
{
    Expr *e = node(ps, op, at, 2);
    e->args[0] = l;
    e->args[1] = r;
    return deepen(ps, e);
}

static void enter(Parser *ps)
{
    if (++ps->depth > MAX_DEPTH)
        fail(ps, &ps->tok, "expression nested too deeply");
}

static Attr attr_value(Parser *ps, const Token *name)
{
    Attr at = {text(ps, name), NULL, 0, 0, name->line, name->col};
    Token v = ps->tok;
    if (is(ps, TK_MINUS)) {
        next(ps);
        Token n = expect(ps, TK_NUM, "a number after '-'");
        at.text = arena_printf(ps->a, "-%.*s", n.len, n.p);
        at.num = -strtod(at.text + 1, NULL);
        at.isnum = 1;
    } else if (is(ps, TK_NUM)) {
        next(ps);
        at.text = text(ps, &v);
        at.num = strtod(at.text, NULL);
        at.isnum = 1;
    } else if (is(ps, TK_IDENT)) {
        next(ps);
        at.text = text(ps, &v);
    } else {
        fail_tok(ps, "an attribute value (a number or a word)");
    }
    return at;
}

static Expr *call(Parser *ps, const Token *name)
{
    Expr *e = node(ps, -1, name, 0);
    e->name = text(ps, name);
    int cargs = 0, cattrs = 0;
    next(ps);   /* the name */
    next(ps);   /* '(' */
    if (!is(ps, TK_RP)) {
        for (;;) {
            if (is(ps, TK_IDENT) && peek2(ps)->kind == TK_EQ) {
                Token n = ps->tok;
                next(ps);
                next(ps);
                *VEC_PUSH(ps->a, e->attrs, e->nattrs, cattrs) = attr_value(ps, &n);
            } else {
                if (e->nattrs)
                    fail(ps, &ps->tok, "operands come before named attributes");
                *VEC_PUSH(ps->a, e->args, e->nargs, cargs) = expr(ps);
            }
            if (!is(ps, TK_COMMA))
                break;
            next(ps);
        }
    }
    expect(ps, TK_RP, "',' or ')'");
    int op = op_lookup(e->name);
    if (op < 0)
        fail(ps, name, arena_printf(ps->a, "unknown op '%s'", e->name));
    e->op = op;
    return deepen(ps, e);
}

static Expr *primary(Parser *ps)
{
    Token t = ps->tok;
    if (is(ps, TK_NUM)) {
        next(ps);
        Expr *e = node(ps, E_NUM, &t, 0);
        e->name = text(ps, &t);
        e->num = strtod(e->name, NULL);
        return e;
    }
    if (is(ps, TK_IDENT)) {
        if (is_keyword(t.p, t.len))
            fail(ps, &t, arena_printf(ps->a, "'%.*s' is a keyword, not a name", t.len, t.p));
        if (peek2(ps)->kind == TK_LP)
            return call(ps, &t);
        next(ps);
        Expr *e = node(ps, E_NAME, &t, 0);
        e->name = text(ps, &t);
        return e;
    }
    if (is(ps, TK_LP)) {
        next(ps);
        Expr *e = expr(ps);
        expect(ps, TK_RP, "')'");
        return e;
    }
    fail_tok(ps, "an operand");
}

static Expr *postfix(Parser *ps)
{
    Expr *e = primary(ps);
    while (is(ps, TK_LB)) {
        Token at = ps->tok;
        next(ps);
        int op = OP_INDEX;
        if (is(ps, TK_DOTDOT)) {
            op = OP_UPTO;
            next(ps);
        }
        Expr *i = expr(ps);
        expect(ps, TK_RB, "']'");
        e = binary(ps, op, &at, e, i);
    }
    return e;
}

static Expr *unary(Parser *ps)
{
    if (is(ps, TK_MINUS)) {
        Token at = ps->tok;
        next(ps);
        enter(ps);
        Expr *e = node(ps, OP_NEG, &at, 1);
        e->args[0] = unary(ps);
        ps->depth--;
        return deepen(ps, e);
    }
    return postfix(ps);
}

static Expr *product(Parser *ps)
{
    Expr *l = unary(ps);
    if (!is(ps, TK_AT))
        return l;
    Token at = ps->tok;
    next(ps);
    enter(ps);
    Expr *r = product(ps);
    ps->depth--;
    return binary(ps, OP_MATMUL, &at, l, r);
}

static Expr *term(Parser *ps)
{
    Expr *l = product(ps);
    while (is(ps, TK_STAR) || is(ps, TK_SLASH)) {
        Token at = ps->tok;
        next(ps);
        l = binary(ps, at.kind == TK_STAR ? OP_MUL : OP_DIV, &at, l, product(ps));
    }
    return l;
}

static Expr *sum(Parser *ps)
{
    Expr *l = term(ps);
    while (is(ps, TK_PLUS) || is(ps, TK_MINUS)) {
        Token at = ps->tok;
        next(ps);
        l = binary(ps, at.kind == TK_PLUS ? OP_ADD : OP_SUB, &at, l, term(ps));
    }
    return l;
}

/* A dim: a whole number or a size name. */
static const char *dim(Parser *ps)
{
    Token t = ps->tok;
    if (is(ps, TK_NUM)) {
        for (int i = 0; i < t.len; i++)
            if (t.p[i] < '0' || t.p[i] > '9')
                fail(ps, &t, "a dimension must be a whole number");
        if (t.len > 12)
            fail(ps, &t, "dimension too large");
        next(ps);
        return text(ps, &t);
    }
    expect(ps, TK_IDENT, "a dimension (a whole number or a size name)");
    return text(ps, &t);
}

static int dims(Parser *ps, const char **out)
{
    expect(ps, TK_LB, "'['");
    int n = 0;
    for (;;) {
        if (n == LOGOS_MAXRANK)
            fail(ps, &ps->tok, "more than 5 dimensions");
        out[n++] = dim(ps);
        if (!is(ps, TK_COMMA))
            break;
        next(ps);
    }
    expect(ps, TK_RB, "',' or ']'");
    return n;
}

static Expr *expr(Parser *ps)
{
    enter(ps);
    Expr *e = sum(ps);
    while (is(ps, TK_TILDE)) {
        Token at = ps->tok;
        next(ps);
        Expr *v = node(ps, OP_RESHAPE, &at, 1);
        v->args[0] = e;
        v->rank = dims(ps, v->dims);
        e = deepen(ps, v);
    }
    ps->depth--;
    return e;
}

/* ---- declarations and statements ---- */

static int decl_kind(const Token *t)
{
    static const char *names[] = {"size", "in", "weight", "state", "out"};
    for (int k = 0; k < 5; k++)
        if (tok_is(t, names[k]))
            return k;
    return -1;
}

static int type_base(Parser *ps)
{
    Token t = ps->tok;
    if (tok_is(&t, "f32") || tok_is(&t, "i32") || tok_is(&t, "q8") || tok_is(&t, "f16")) {
        next(ps);
        return tok_is(&t, "f16") ? T_F16 : t.p[0] == 'f' ? T_F32 : t.p[0] == 'i' ? T_I32 : T_Q8;
    }
    fail_tok(ps, "a type (f32, i32, q8 or f16)");
}

static int small_int(Parser *ps, const char *what)
{
    Token t = expect(ps, TK_NUM, what);
    char *end;
    long v = strtol(t.p, &end, 10);
    if (t.len > 9 || v <= 0 || end != t.p + t.len)
        fail(ps, &t, arena_printf(ps->a, "expected %s", what));
    return (int)v;
}

/* `unpair(HD[, ROT[, AT]])` after a weight's type. */
static void unpair(Parser *ps, Decl *d)
{
    if (!tok_is(&ps->tok, "unpair"))
        fail_tok(ps, "end of line or unpair(...)");
    next(ps);
    expect(ps, TK_LP, "'('");
    d->unpair_hd = d->unpair_rot = small_int(ps, "a head width");
    if (is(ps, TK_COMMA)) {
        next(ps);
        d->unpair_rot = small_int(ps, "a rotated width");
        if (is(ps, TK_COMMA)) {
            next(ps);
            Token t = expect(ps, TK_NUM, "the first rotated row");
            char *end;
            long v = strtol(t.p, &end, 10);
            if (end != t.p + t.len || v < 0 || t.len > 9)   /* as small_int's bound */
                fail(ps, &t, "expected the first rotated row (a whole number)");
            d->unpair_at = (int)v;
        }
    }
    expect(ps, TK_RP, "')'");
}

/* `split(rows|cols, PARTS)` after a weight's type (logos-placement(5)). */
static void split(Parser *ps, Decl *d)
{
    next(ps);
    expect(ps, TK_LP, "'('");
    Token t = ps->tok;
    if (!tok_is(&t, "rows") && !tok_is(&t, "cols"))
        fail_tok(ps, "rows or cols");
    next(ps);
    d->split = t.p[0] == 'r' ? SPLIT_ROWS : SPLIT_COLS;
    expect(ps, TK_COMMA, "','");
    Token n = ps->tok;
    const char *what = arena_printf(ps->a, "a number of parts from 1 to %d", LOGOS_MAXCHIPS);
    d->parts = small_int(ps, what);
    if (d->parts > LOGOS_MAXCHIPS)
        fail(ps, &n, arena_printf(ps->a, "expected %s", what));
    expect(ps, TK_RP, "')'");
}

/* What may follow a weight's type: unpair(...), then split(...). */
static void weight_suffix(Parser *ps, Decl *d)
{
    if (tok_is(&ps->tok, "unpair"))
        unpair(ps, d);
    if (tok_is(&ps->tok, "split"))
        split(ps, d);
    if (is(ps, TK_IDENT))
        fail_tok(ps, d->split ? "end of line" : d->unpair_hd ? "end of line or split(...)"
                                                            : "end of line, unpair(...) or split(...)");
}

/* `chips N` first after the header: a program every chip of N runs. */
static void chips(Parser *ps, Prog *p)
{
    Token at = ps->tok;
    if (p->chips || p->ndecls || p->nstmts)
        fail(ps, &at, "'chips' comes once, before the declarations");
    p->chips_pre = take_pre(ps, &p->nchips_pre);
    p->chips_line = at.line;
    next(ps);
    Token n = ps->tok;
    const char *what = arena_printf(ps->a, "a number of chips from 1 to %d", LOGOS_MAXCHIPS);
    p->chips = small_int(ps, what);
    if (p->chips > LOGOS_MAXCHIPS)
        fail(ps, &n, arena_printf(ps->a, "expected %s", what));
    p->chips_trail = line_end(ps);
}

static void decl(Parser *ps, Prog *p, int kind)
{
    Decl *d = VEC_PUSH(ps->a, p->decls, p->ndecls, p->cdecls);
    d->pre = take_pre(ps, &d->npre);
    d->kind = kind;
    next(ps);
    Token n = ps->tok;
    expect(ps, TK_IDENT, "a name");
    if (is_keyword(n.p, n.len))
        fail(ps, &n, arena_printf(ps->a, "'%.*s' is a keyword, not a name", n.len, n.p));
    d->name = text(ps, &n);
    d->line = n.line;
    d->col = n.col;
    if (kind != D_SIZE) {
        expect(ps, TK_COLON, "':'");
        d->base = type_base(ps);
        if (is(ps, TK_LB))
            d->rank = dims(ps, d->dims);
        if (kind == D_WEIGHT)
            weight_suffix(ps, d);
    }
    d->trail = line_end(ps);
}

static void stmt(Parser *ps, Prog *p)
{
    Stmt *s = VEC_PUSH(ps->a, p->stmts, p->nstmts, p->cstmts);
    s->pre = take_pre(ps, &s->npre);
    Token n = ps->tok;
    expect(ps, TK_IDENT, "a statement");
    if (is_keyword(n.p, n.len))
        fail(ps, &n, arena_printf(ps->a, "'%.*s' is a keyword, not a name", n.len, n.p));
    s->name = text(ps, &n);
    s->line = n.line;
    s->col = n.col;
    s->kind = S_ASSIGN;
    if (is(ps, TK_LB)) {
        next(ps);
        s->kind = S_WRITE;
        s->index = expr(ps);
        expect(ps, TK_RB, "']'");
    }
    expect(ps, TK_EQ, "'='");
    s->value = expr(ps);
    s->trail = line_end(ps);
}

static void header(Parser *ps, Prog *p)
{
    Token t = ps->tok;
    if (!tok_is(&t, "logos"))
        fail(ps, &t, "a program starts with its header: logos VERSION FORM [LAYER] MODEL");
    p->line = t.line;
    Token w[5], x;
    int n = 0;
    while ((x = lex_word(ps->lx)).kind == TK_WORD)
        if (n < 5)
            w[n++] = x;
    ps->tok = x;
    if (n < 3 || n > 4)
        fail(ps, n ? &w[n - 1] : &t, "the header is: logos VERSION FORM [LAYER] MODEL");
    char *ver = text(ps, &w[0]);
    if (strcmp(ver, "1") != 0)
        fail(ps, &w[0], arena_printf(ps->a, "language version '%s' is not supported (this is version %d)",
                                     ver, LOGOS_LANG));
    p->version = 1;
    p->form = text(ps, &w[1]);
    p->layer = -1;
    if (n == 4) {
        char *end;
        long l = strtol(w[2].p, &end, 10);
        if (end != w[2].p + w[2].len || l < 0 || l > 1000000)
            fail(ps, &w[2], "the layer is a whole number");
        p->layer = (int)l;
    }
    p->model = text(ps, &w[n - 1]);
    p->trail = line_end(ps);
}

static void body(Parser *ps, Prog *p)
{
    for (;;) {
        skip_lines(ps);
        if (is(ps, TK_EOF))
            fail(ps, &ps->tok, "unexpected end of input: the program has no 'end'");
        if (tok_is(&ps->tok, "end")) {
            p->endpre = take_pre(ps, &p->nendpre);
            Token end = ps->tok;
            next(ps);
            if (is(ps, TK_COMMENT)) {
                p->endtrail = comment_text(ps, &ps->tok);
                next(ps);
            }
            if (is(ps, TK_EQ) || is(ps, TK_LB))
                fail(ps, &end, "'end' is a keyword, not a name");
            if (!is(ps, TK_NL) && !is(ps, TK_EOF))
                fail_tok(ps, "end of line after 'end'");
            return;
        }
        int k = decl_kind(&ps->tok), after = k >= 0 ? peek2(ps)->kind : TK_EQ;
        if (tok_is(&ps->tok, "chips") && peek2(ps)->kind == TK_NUM) {
            chips(ps, p);
        } else if (after != TK_EQ && after != TK_LB) {   /* a keyword, then anything but a statement's '=' or '[' */
            if (p->nstmts)
                fail(ps, &ps->tok, "declarations come before statements");
            decl(ps, p, k);
        } else {
            stmt(ps, p);
        }
    }
}

/* Comments after a program's `end` stay with it, but when another program
 * follows: they are its own and the lexer goes back. Before anything else
 * (the rest of a plan: its buffers) the lexer stops at that thing. */
static void trailing(Parser *ps, Prog *p)
{
    Lexer save = *ps->lx, at = save;
    char **post = NULL;
    int n = 0, cap = 0, blank = 0;
    for (Token t; (t = lex_next(ps->lx)).kind != TK_EOF; at = *ps->lx) {
        if (t.kind == TK_COMMENT) {
            *VEC_PUSH(ps->a, post, n, cap) = comment_text(ps, &t);
            blank = 0;
        } else if (t.kind == TK_NL) {
            if (!blank && n)
                *VEC_PUSH(ps->a, post, n, cap) = "";
            blank = 1;
        } else if (tok_is(&t, "logos")) {
            *ps->lx = save;   /* the next program's */
            return;
        } else {
            *ps->lx = at;     /* stop before it */
            break;
        }
    }
    while (n && !post[n - 1][0])
        n--;
    p->post = post;
    p->npost = n;
}

Prog *parse_prog(Arena *a, Lexer *lx, int *err)
{
    Parser ps = {.a = a, .lx = lx};
    *err = 0;
    if (setjmp(ps.fail)) {
        *err = 1;
        return NULL;
    }
    next(&ps);
    skip_lines(&ps);
    if (is(&ps, TK_EOF))
        return NULL;
    Prog *p = arena_alloc(a, sizeof *p);
    p->src = lx->src;
    p->pre = take_pre(&ps, &p->npre);
    header(&ps, p);
    ps.started = 1;
    body(&ps, p);
    trailing(&ps, p);
    /* give back a token read ahead of the program's end */
    ASSERT(!ps.have_ahead);
    return p;
}
