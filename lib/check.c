/* check.c — is a program well-formed and well-typed? Each name is defined
 * once before use; each op's operands and attributes agree with its row of
 * the op table and its shape rule; states change only through row writes and
 * the ops that own them; every `out` is assigned. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

enum { N_SIZE, N_IN, N_WEIGHT, N_STATE, N_OUT, N_LOCAL };   /* N_* match D_* */

typedef struct Name {
    const char *name;
    int kind, line, set;
    Type ty;          /* base T_NONE: its statement was rejected (no more messages) */
    int col;
    int decl, def;    /* its declaration, the statement assigning it (-1: none) */
} Name;

typedef struct Ck {
    Arena *a;
    Prog *p;
    Name *names; int nnames, cnames;
    StrMap *index;    /* name -> index in names */
    int errors;
} Ck;

/* ---- names ---- */

static Name *find(Ck *c, const char *name)
{
    int i = strmap_get(c->index, name);
    return i < 0 ? NULL : &c->names[i];
}

static Name *add_name(Ck *c, Name n)
{
    strmap_put(c->index, n.name, c->nnames);
    Name *l = VEC_PUSH(c->a, c->names, c->nnames, c->cnames);
    *l = n;
    return l;
}

static int err(Ck *c, const Expr *e, const char *msg)
{
    diag_at(c->p->src, e->line, e->col, "%s", msg);
    c->errors++;
    return -1;
}

static int errl(Ck *c, int line, int col, const char *msg)
{
    diag_at(c->p->src, line, col, "%s", msg);
    c->errors++;
    return -1;
}

static int sym_of(Ck *c, const char *name, long bound)
{
    for (int i = 0; i < c->p->nsyms; i++)
        if (strcmp(c->p->syms[i].name, name) == 0)
            return i + 1;
    Sym *s = VEC_PUSH(c->a, c->p->syms, c->p->nsyms, c->p->csyms);
    s->name = name;
    s->bound = bound;
    return c->p->nsyms;
}

/* ---- types ---- */

static char *type_str(Ck *c, const Type *t)
{
    char *s = arena_strdup(c->a, base_name(t->base));
    if (t->rank == 0)
        return s;
    s = arena_printf(c->a, "%s[", s);
    for (int i = 0; i < t->rank; i++) {
        const Dim *d = &t->d[i];
        const char *sep = i ? "," : "";
        s = d->sym ? arena_printf(c->a, "%s%s%s", s, sep, c->p->syms[d->sym - 1].name)
                   : arena_printf(c->a, "%s%s%ld", s, sep, d->n);
    }
    return arena_printf(c->a, "%s]%s", s, t->ragged ? " (causal rows)" : "");
}

static const char *dim_str(Ck *c, const Dim *d)
{
    return d->sym ? c->p->syms[d->sym - 1].name : arena_printf(c->a, "%ld", d->n);
}

static int dim_eq(const Dim *a, const Dim *b)
{
    return a->sym == b->sym && (a->sym || a->n == b->n);
}

static int type_eq(const Type *a, const Type *b)
{
    if (a->base != b->base || a->rank != b->rank || a->ragged != b->ragged)
        return 0;
    for (int i = 0; i < a->rank; i++)
        if (!dim_eq(&a->d[i], &b->d[i]))
            return 0;
    return 1;
}

static Dim cdim(long n) { return (Dim){n, 0}; }

static Type mk(int base, int rank, const Dim *d)
{
    Type t = {base, rank, {{0, 0}}, 0, {0, 0}};
    for (int i = 0; i < rank; i++)
        t.d[i] = d[i];
    return t;
}

static const Dim *last_dim(const Type *t) { return &t->d[t->rank - 1]; }

/* A dim spelled in a declaration or a view: a number or a size name. */
static int spelled_dim(Ck *c, const char *s, int line, int col, Dim *out)
{
    if (s[0] >= '0' && s[0] <= '9') {
        *out = cdim(strtol(s, NULL, 10));
        if (out->n <= 0)
            return errl(c, line, col, arena_printf(c->a, "dimension %s is not positive", s));
        return 0;
    }
    Name *n = find(c, s);
    if (!n || n->kind != N_SIZE)
        return errl(c, line, col, arena_printf(c->a, "'%s' is not a declared size", s));
    *out = (Dim){0, sym_of(c, n->name, -1)};
    return 0;
}

/* ---- attributes ---- */

/* Finds attribute `name` in an op's attrs column; returns its type letter
 * and whether it is required, or 0. */
static int attr_spec(const char *attrs, const char *name, int *required)
{
    size_t n = strlen(name);
    for (const char *p = attrs; *p;) {
        const char *colon = strchr(p, ':');
        if (colon && (size_t)(colon - p) == n && memcmp(p, name, n) == 0) {
            *required = colon[2] == '!';
            return colon[1];
        }
        p = strchr(p, ' ');
        if (!p)
            break;
        p++;
    }
    return 0;
}

static char *attr_names(Ck *c, const char *attrs)
{
    char *s = arena_strdup(c->a, "");
    for (const char *p = attrs; *p;) {
        const char *colon = strchr(p, ':');
        s = arena_printf(c->a, "%s%s%.*s", s, *s ? ", " : "", (int)(colon - p), p);
        p = strchr(p, ' ');
        if (!p)
            break;
        p++;
    }
    return s;
}

static int is_int(const Attr *a)
{
    return a->isnum && !strpbrk(a->text, ".eE") && a->num >= -(double)LOGOS_MAXINT && a->num <= (double)LOGOS_MAXINT;
}

static int check_attr(Ck *c, const Expr *e, const Attr *a)
{
    const OpInfo *op = &op_info[e->op];
    int req, type = attr_spec(op->attrs, a->name, &req);
    if (!type) {
        const char *has = *op->attrs ? arena_printf(c->a, " (it takes %s)", attr_names(c, op->attrs))
                                     : " (it takes none)";
        return errl(c, a->line, a->col,
                    arena_printf(c->a, "unknown attribute '%s' for %s%s", a->name, op->name, has));
    }
    const char *want = NULL;
    if (type == 'f' && !a->isnum)
        want = "a number";
    else if (type == 'i' && !is_int(a))
        want = arena_printf(c->a, "a whole number from %ld to %ld", -LOGOS_MAXINT, LOGOS_MAXINT);
    else if (type == 's' && a->isnum)
        want = "a word";
    else if (type == 'z' && a->isnum && !is_int(a))
        want = arena_printf(c->a, "a whole number from %ld to %ld or a size name", -LOGOS_MAXINT, LOGOS_MAXINT);
    if (want)
        return errl(c, a->line, a->col, arena_printf(c->a, "attribute '%s' of %s takes %s, not '%s'",
                                                     a->name, op->name, want, a->text));
    return 0;
}

static int check_attrs(Ck *c, const Expr *e)
{
    const OpInfo *op = &op_info[e->op];
    int bad = 0;
    for (int i = 0; i < e->nattrs; i++) {
        bad |= check_attr(c, e, &e->attrs[i]);
        for (int j = 0; j < i; j++)
            if (strcmp(e->attrs[i].name, e->attrs[j].name) == 0)
                bad |= errl(c, e->attrs[i].line, e->attrs[i].col,
                            arena_printf(c->a, "attribute '%s' given twice", e->attrs[i].name));
    }
    for (const char *p = op->attrs; *p;) {
        const char *colon = strchr(p, ':');
        char *name = arena_strndup(c->a, p, (size_t)(colon - p));
        if (colon[2] == '!' && !attr_get(e, name))
            bad |= err(c, e, arena_printf(c->a, "%s needs attribute '%s'", op->name, name));
        p = strchr(p, ' ');
        if (!p)
            break;
        p++;
    }
    return bad ? -1 : 0;
}

static int word_in(Ck *c, const Expr *e, const char *name, const char *const *ok)
{
    const Attr *a = attr_get(e, name);
    if (!a)
        return 0;
    char *list = arena_strdup(c->a, "");
    for (int i = 0; ok[i]; i++) {
        if (strcmp(a->text, ok[i]) == 0)
            return 0;
        list = arena_printf(c->a, "%s%s%s", list, i ? ", " : "", ok[i]);
    }
    return errl(c, a->line, a->col, arena_printf(c->a, "attribute '%s' of %s is one of %s, not '%s'",
                                                 name, op_info[e->op].name, list, a->text));
}

/* ---- shape rules: each sets e->ty from its operands' types ---- */

typedef int ShapeFn(Ck *c, Expr *e);

static int want_f32(Ck *c, const Expr *op, const char *what)
{
    if (op->ty.base == T_F32 && !op->ty.ragged)
        return 0;
    return err(c, op, arena_printf(c->a, "%s must be f32, not %s", what, type_str(c, &op->ty)));
}

static int want_rank(Ck *c, const Expr *op, int lo, int hi, const char *what)
{
    if (op->ty.rank >= lo && op->ty.rank <= hi)
        return 0;
    return err(c, op, arena_printf(c->a, "%s must have %d%s%s dimensions, not %s", what, lo,
                                   hi > lo ? " to " : "", hi > lo ? arena_printf(c->a, "%d", hi) : "",
                                   type_str(c, &op->ty)));
}

static int want_dim(Ck *c, const Expr *op, int axis, const Dim *d, const char *what)
{
    const Dim *have = &op->ty.d[axis < 0 ? op->ty.rank + axis : axis];
    if (dim_eq(have, d))
        return 0;
    return err(c, op, arena_printf(c->a, "%s: %s where %s is needed (the operand is %s)", what, dim_str(c, have),
                                   dim_str(c, d), type_str(c, &op->ty)));
}

static int is_weight(Ck *c, const Expr *e)
{
    Name *n = e->op == E_NAME ? find(c, e->name) : NULL;
    return n && n->kind == N_WEIGHT;
}

static int want_weight(Ck *c, const Expr *e, int rank, const char *what)
{
    if (!is_weight(c, e))
        return err(c, e, arena_printf(c->a, "%s must be a declared weight", what));
    return want_rank(c, e, rank, rank, what);
}

static int shape_same(Ck *c, Expr *e)
{
    if (want_f32(c, e->args[0], "the operand"))
        return -1;
    e->ty = e->args[0]->ty;
    return 0;
}

static int shape_bcast(Ck *c, Expr *e)
{
    const Type *a = &e->args[0]->ty, *b = &e->args[1]->ty;
    if (want_f32(c, e->args[0], "the left operand") | want_f32(c, e->args[1], "the right operand"))
        return -1;
    int r = a->rank > b->rank ? a->rank : b->rank;
    Type t = {T_F32, r, {{0, 0}}, 0, {0, 0}};
    for (int i = 0; i < r; i++) {
        int ia = a->rank - r + i, ib = b->rank - r + i;
        const Dim *da = ia >= 0 ? &a->d[ia] : NULL, *db = ib >= 0 ? &b->d[ib] : NULL;
        if (!da || (!da->sym && da->n == 1))
            t.d[i] = db ? *db : *da;
        else if (!db || (!db->sym && db->n == 1) || dim_eq(da, db))
            t.d[i] = *da;
        else
            return err(c, e, arena_printf(c->a, "shapes %s and %s do not broadcast",
                                          type_str(c, a), type_str(c, b)));
    }
    e->ty = t;
    return 0;
}

static int shape_matmul(Ck *c, Expr *e)
{
    Expr *w = e->args[0], *x = e->args[1];
    if (!is_weight(c, w))
        return err(c, w, "the left of '@' must be a declared weight (a product reads checkpoint rows)");
    if (want_rank(c, w, 2, 2, "the weight of a product") || want_f32(c, x, "the right of '@'") ||
        want_rank(c, x, 1, 3, "the right of '@'"))
        return -1;
    if (want_dim(c, x, -1, &w->ty.d[1], "the product's columns"))
        return -1;
    e->ty = x->ty;
    e->ty.d[x->ty.rank - 1] = w->ty.d[0];
    return 0;
}

static int want_index(Ck *c, const Expr *i)
{
    if (i->op == E_NUM && !strpbrk(i->name, ".eE"))
        return i->num < 2147483648.0 ? 0 : err(c, i, "a row number must be below 2^31");
    if (i->ty.base == T_I32 && i->ty.rank <= 1)
        return 0;
    return err(c, i, arena_printf(c->a, "an index must be i32 or i32[n], not %s", type_str(c, &i->ty)));
}

static Name *state_of(Ck *c, const Expr *e)
{
    Name *n = e->op == E_NAME ? find(c, e->name) : NULL;
    return n && n->kind == N_STATE ? n : NULL;
}

static int shape_index(Ck *c, Expr *e)
{
    Expr *a = e->args[0], *i = e->args[1];
    if (want_index(c, i))
        return -1;
    if (a->ty.rank < 1 || a->ty.ragged)
        return err(c, a, arena_printf(c->a, "%s has no rows to index", type_str(c, &a->ty)));
    if (a->ty.base == T_I32)
        return err(c, a, "rows of an i32 tensor are not indexed");
    if (i->op == E_NUM) {
        if (state_of(c, a))
            return err(c, i, "a state's rows are positions: index it by an i32 input");
        if (!a->ty.d[0].sym && (long)i->num >= a->ty.d[0].n)
            return err(c, i, arena_printf(c->a, "row %s is past the %ld rows of %s", i->name,
                                          a->ty.d[0].n, type_str(c, &a->ty)));
    }
    Type t = a->ty;
    t.base = T_F32;
    if (i->ty.rank == 1) {
        t.d[0] = i->ty.d[0];
    } else {
        t.rank--;
        memmove(t.d, t.d + 1, sizeof t.d[0] * (size_t)t.rank);
    }
    e->ty = t;
    return 0;
}

static int shape_upto(Ck *c, Expr *e)
{
    Expr *a = e->args[0], *i = e->args[1];
    Name *s = state_of(c, a);
    if (!s)
        return err(c, a, "a row range [..p] reads a state's first p rows: the base must be a state");
    if (i->ty.base != T_I32 || i->ty.rank > 1)
        return err(c, i, arena_printf(c->a, "the end of a row range must be i32 or i32[n], not %s",
                                      type_str(c, &i->ty)));
    if (i->op != E_NAME)
        return err(c, i, "the end of a row range is a name (an i32 input or a range of positions)");
    Type t = a->ty;
    t.base = T_F32;   /* an f16 state's rows read as f32 */
    const char *key = i->name;
    t.d[0] = (Dim){a->ty.d[0].n, sym_of(c, arena_printf(c->a, "..%s", key), a->ty.d[0].n)};
    t.ragged = i->ty.rank == 1;
    if (t.ragged)
        t.along = i->ty.d[0];
    e->ty = t;
    return 0;
}

/* Stacked queries [T,...] and the causal rows they read agree on T. */
static int want_along(Ck *c, const Expr *kv, const Expr *q)
{
    if (!kv->ty.ragged || dim_eq(&kv->ty.along, &q->ty.d[0]))
        return 0;
    return err(c, kv, arena_printf(c->a, "these causal rows serve %s queries, not %s", dim_str(c, &kv->ty.along),
                                   dim_str(c, &q->ty.d[0])));
}

/* Size of a type as a constant part and a sorted list of symbols. */
static int same_size(const Type *a, const Type *b)
{
    long na = 1, nb = 1;
    int sa[LOGOS_MAXRANK] = {0}, sb[LOGOS_MAXRANK] = {0}, ka = 0, kb = 0;
    for (int i = 0; i < a->rank; i++)
        a->d[i].sym ? (void)(sa[ka++] = a->d[i].sym) : (void)(na *= a->d[i].n);
    for (int i = 0; i < b->rank; i++)
        b->d[i].sym ? (void)(sb[kb++] = b->d[i].sym) : (void)(nb *= b->d[i].n);
    if (na != nb || ka != kb)
        return 0;
    for (int i = 0; i < ka; i++) {
        int found = 0;
        for (int j = 0; j < kb; j++)
            if (sb[j] == sa[i]) {
                sb[j] = -1;
                found = 1;
                break;
            }
        if (!found)
            return 0;
    }
    return 1;
}

static int shape_reshape(Ck *c, Expr *e)
{
    Expr *x = e->args[0];
    if (x->ty.ragged || x->ty.rank == 0 || x->ty.base != T_F32)
        return err(c, e, arena_printf(c->a, "%s cannot be viewed in another shape", type_str(c, &x->ty)));
    Type t = {T_F32, e->rank, {{0, 0}}, 0, {0, 0}};
    for (int i = 0; i < e->rank; i++)
        if (spelled_dim(c, e->dims[i], e->line, e->col, &t.d[i]))
            return -1;
    if (!same_size(&x->ty, &t))
        return err(c, e, arena_printf(c->a, "cannot view %s as %s: the sizes differ",
                                      type_str(c, &x->ty), type_str(c, &t)));
    e->ty = t;
    return 0;
}

static int shape_norm(Ck *c, Expr *e)
{
    Expr *x = e->args[0];
    if (want_f32(c, x, "the normed tensor") || want_rank(c, x, 1, 4, "the normed tensor"))
        return -1;
    if (e->nargs == 2 && (want_f32(c, e->args[1], "the norm's weight") ||
                          want_rank(c, e->args[1], 1, 1, "the norm's weight") ||
                          want_dim(c, e->args[1], 0, last_dim(&x->ty), "the norm's weight")))
        return -1;
    e->ty = x->ty;
    return 0;
}

/* Stacked (leading T, positions i32[T]) or single (positions i32) rows. */
static int positions(Ck *c, const Expr *x, const Expr *pos, int rank)
{
    int stacked = x->ty.rank == rank + 1;
    if (pos->ty.base != T_I32 || pos->ty.rank != stacked ||
        (stacked && !dim_eq(&pos->ty.d[0], &x->ty.d[0])))
        return err(c, pos, arena_printf(c->a, "positions must be i32%s for %s, not %s",
                                        stacked ? arena_printf(c->a, "[%s]", dim_str(c, &x->ty.d[0])) : "",
                                        type_str(c, &x->ty), type_str(c, &pos->ty)));
    return 0;
}

static int shape_rope(Ck *c, Expr *e)
{
    static const char *scalings[] = {"none", "llama3", "yarn", NULL};
    Expr *x = e->args[0];
    if (want_f32(c, x, "the rotated tensor") || want_rank(c, x, 2, 3, "the rotated tensor (heads × width)") ||
        positions(c, x, e->args[1], 2) || word_in(c, e, "scaling", scalings))
        return -1;
    long hd = last_dim(&x->ty)->n, rot = (long)attr_num(e, "rot", (double)hd);
    if (!attr_get(e, "rot") && hd % 2)
        return err(c, e, arena_printf(c->a, "the head width %ld is odd: rope rotates pairs of values", hd));
    if (last_dim(&x->ty)->sym || rot < 2 || rot > hd || rot % 2)
        return err(c, e, arena_printf(c->a, "the rotated width %ld must be even and at most the head width %ld",
                                      rot, hd));
    const Attr *sc = attr_get(e, "scaling");
    const char *need = sc && !strcmp(sc->text, "llama3") ? "factor low high orig"
                       : sc && !strcmp(sc->text, "yarn") ? "factor orig" : "";
    for (const char *p = need; *p;) {
        const char *sp = strchr(p, ' ');
        char *name = arena_strndup(c->a, p, sp ? (size_t)(sp - p) : strlen(p));
        if (!attr_get(e, name))
            return err(c, e, arena_printf(c->a, "%s scaling needs attribute '%s'", sc->text, name));
        p = sp ? sp + 1 : p + strlen(p);
    }
    e->ty = x->ty;
    return 0;
}

static int shape_attend(Ck *c, Expr *e)
{
    Expr *q = e->args[0], *k = e->args[1], *v = e->args[2];
    if (want_f32(c, q, "the queries") || want_rank(c, q, 2, 3, "the queries (heads × width)"))
        return -1;
    int stacked = q->ty.rank == 3;
    for (int i = 1; i <= 2; i++) {
        Expr *kv = e->args[i];
        const char *what = i == 1 ? "the keys" : "the values";
        if (kv->ty.base != T_F32 || kv->ty.rank != 3)
            return err(c, kv, arena_printf(c->a, "%s must be f32[rows,heads,width], not %s", what,
                                           type_str(c, &kv->ty)));
        if (kv->ty.ragged != stacked)
            return err(c, kv, stacked ? arena_printf(c->a, "stacked queries read %s's causal rows X[..positions]", what)
                                      : arena_printf(c->a, "one query reads rows X[..pos] of %s, not causal rows", what));
    }
    if (q->ty.d[stacked].sym || k->ty.d[1].sym)
        return err(c, e, "attention's heads must be constant");
    if (want_along(c, k, q) || want_along(c, v, q))
        return -1;
    long nh = q->ty.d[stacked].n, nkv = k->ty.d[1].n;
    if (want_dim(c, k, 2, last_dim(&q->ty), "the keys' width") ||
        want_dim(c, v, 1, &k->ty.d[1], "the values' heads") || want_dim(c, v, 0, &k->ty.d[0], "the values' rows"))
        return -1;
    if (k->ty.d[0].n != v->ty.d[0].n)   /* row ranges of two states: the same positions of both */
        return err(c, v, arena_printf(c->a, "the values' state holds %ld rows and the keys' %ld: an attention reads "
                                      "the same rows of both", v->ty.d[0].n, k->ty.d[0].n));
    if (nh % nkv)
        return err(c, e, arena_printf(c->a, "%ld query heads do not group over %ld key heads", nh, nkv));
    if (e->nargs == 4 && (want_f32(c, e->args[3], "the sinks") || want_rank(c, e->args[3], 1, 1, "the sinks") ||
                          want_dim(c, e->args[3], 0, &q->ty.d[stacked], "the sinks (one per head)")))
        return -1;
    if (attr_get(e, "window") && attr_num(e, "window", 0) < 1)
        return err(c, e, "the window must be at least 1");
    e->ty = q->ty;
    e->ty.d[stacked + 1] = v->ty.d[2];
    return 0;
}

static int shape_latent(Ck *c, Expr *e)
{
    Expr *qr = e->args[0], *qp = e->args[1], *kc = e->args[2], *wk = e->args[3], *wv = e->args[4];
    if (want_f32(c, qr, "the query") || want_rank(c, qr, 2, 3, "the query (heads × width)") ||
        want_f32(c, qp, "the rotated query") || want_rank(c, qp, qr->ty.rank, qr->ty.rank, "the rotated query"))
        return -1;
    int st = qr->ty.rank == 3;
    long nh = qr->ty.d[st].n, rope = qp->ty.d[st + 1].n, nope = qr->ty.d[st + 1].n - rope;
    long lora = (long)attr_num(e, "lora", 0);
    if (want_dim(c, qp, st, &qr->ty.d[st], "the rotated query's heads") ||
        (nope <= 0 ? err(c, qp, "the rotated part is wider than the query") : 0))
        return -1;
    if (kc->ty.base != T_F32 || kc->ty.rank != 2 || kc->ty.ragged != st)
        return err(c, kc, arena_printf(c->a, "the latent cache must be %s rows f32[rows,lora+rope], not %s",
                                       st ? "causal" : "the first pos", type_str(c, &kc->ty)));
    if (want_along(c, kc, qr))
        return -1;
    if (want_dim(c, kc, 1, &(Dim){lora + rope, 0}, "the latent cache row (lora then rotated key)") ||
        want_weight(c, wk, 2, "the key half") || want_weight(c, wv, 2, "the value half") ||
        want_dim(c, wk, 0, &(Dim){nh * nope, 0}, "the key half's rows (heads × unrotated width)") ||
        want_dim(c, wk, 1, &(Dim){lora, 0}, "the key half's columns") ||
        want_dim(c, wv, 1, &(Dim){lora, 0}, "the value half's columns"))
        return -1;
    if (wv->ty.d[0].n % nh)
        return err(c, wv, "the value half's rows are not a whole number per head");
    e->ty = qr->ty;
    e->ty.d[st + 1] = cdim(wv->ty.d[0].n / nh);
    return 0;
}

static int shape_conv(Ck *c, Expr *e)
{
    Expr *x = e->args[0], *r = e->args[1], *w = e->args[2];
    if (want_f32(c, x, "the convolved input") || want_rank(c, x, 1, 2, "the convolved input"))
        return -1;
    if (!state_of(c, r))
        return err(c, r, "the convolution's ring (its second operand) must be a state");
    if (r->ty.base != T_F32)
        return err(c, r, "the convolution's ring is an f32 state, not f16");
    if (want_weight(c, w, 2, "the convolution's weight") ||
        want_dim(c, w, 0, last_dim(&x->ty), "the convolution's channels"))
        return -1;
    if (want_dim(c, r, 1, last_dim(&x->ty), "the ring's channels") ||
        want_dim(c, r, 0, &(Dim){w->ty.d[1].n - 1, 0}, "the ring's rows (kernel width - 1)"))
        return -1;
    if (e->nargs == 4 && (want_f32(c, e->args[3], "the convolution's bias") ||
                          want_rank(c, e->args[3], 1, 1, "the convolution's bias") ||
                          want_dim(c, e->args[3], 0, last_dim(&x->ty), "the convolution's bias")))
        return -1;
    e->ty = x->ty;
    return 0;
}

static int shape_delta(Ck *c, Expr *e)
{
    Expr *q = e->args[0], *k = e->args[1], *v = e->args[2], *s = e->args[5];
    if (want_f32(c, q, "the queries") || want_rank(c, q, 2, 3, "the queries (heads × width)"))
        return -1;
    int st = q->ty.rank == 3;
    if (!state_of(c, s))
        return err(c, s, "the delta rule's memory (its sixth operand) must be a state");
    if (s->ty.base != T_F32)
        return err(c, s, "the delta rule's memory is an f32 state, not f16");
    Dim vh = v->ty.rank == q->ty.rank ? v->ty.d[st] : cdim(0);
    if (!type_eq(&q->ty, &k->ty))
        return err(c, k, arena_printf(c->a, "the keys %s must match the queries %s", type_str(c, &k->ty),
                                      type_str(c, &q->ty)));
    if (want_f32(c, v, "the values") || want_rank(c, v, q->ty.rank, q->ty.rank, "the values") ||
        (st && want_dim(c, v, 0, &q->ty.d[0], "the values' rows")))
        return -1;
    for (int i = 3; i <= 4; i++) {
        Expr *x = e->args[i];
        if (want_f32(c, x, i == 3 ? "the decay" : "beta") || want_rank(c, x, st + 1, st + 1, "a per-head gate") ||
            want_dim(c, x, st, &vh, "a per-head gate (one per value head)"))
            return -1;
    }
    if (vh.sym || q->ty.d[st].sym)
        return err(c, e, "the delta rule's heads must be constant");
    if (vh.n % q->ty.d[st].n)
        return err(c, e, arena_printf(c->a, "%ld value heads do not group over %ld key heads", vh.n,
                                      q->ty.d[st].n));
    if (want_rank(c, s, 3, 3, "the delta state") || want_dim(c, s, 0, &vh, "the state's heads") ||
        want_dim(c, s, 1, last_dim(&q->ty), "the state's key width") ||
        want_dim(c, s, 2, last_dim(&v->ty), "the state's value width"))
        return -1;
    e->ty = v->ty;
    return 0;
}

static int shape_route(Ck *c, Expr *e)
{
    static const char *scores[] = {"softmax", "sigmoid", "topk_softmax", NULL};
    Expr *l = e->args[0];
    if (want_f32(c, l, "the router logits") || want_rank(c, l, 1, 2, "the router logits") ||
        word_in(c, e, "score", scores))
        return -1;
    if (e->nargs == 2 && (want_f32(c, e->args[1], "the selection bias") ||
                          want_rank(c, e->args[1], 1, 1, "the selection bias") ||
                          want_dim(c, e->args[1], 0, last_dim(&l->ty), "the selection bias")))
        return -1;
    long ne = last_dim(&l->ty)->n, k = (long)attr_num(e, "k", 1), g = (long)attr_num(e, "groups", 1),
         tg = (long)attr_num(e, "topk_groups", (double)g);
    if (k < 1 || k > ne)
        return err(c, e, arena_printf(c->a, "top-k %ld must be between 1 and the %ld experts", k, ne));
    if (g < 1 || ne % g || tg < 1 || tg > g)
        return err(c, e, arena_printf(c->a, "%ld groups (keeping %ld) do not divide %ld experts", g, tg, ne));
    if (k > tg * (ne / g))
        return err(c, e, arena_printf(c->a, "top-k %ld is more than the %ld experts in the groups kept", k,
                                      tg * (ne / g)));
    e->ty = l->ty;
    return 0;
}

static int shape_moe(Ck *c, Expr *e)
{
    static const char *acts[] = {"silu", "gelu_tanh", "oai", NULL};
    Expr *x = e->args[0], *r = e->args[1];
    if (want_f32(c, x, "the mixture's input") || want_rank(c, x, 1, 2, "the mixture's input") ||
        want_f32(c, r, "the routing weights") || want_rank(c, r, x->ty.rank, x->ty.rank, "the routing weights") ||
        word_in(c, e, "act", acts))
        return -1;
    const Dim *d = last_dim(&x->ty), *ne = last_dim(&r->ty);
    int e0 = c->errors;
    for (int i = 2; i <= 4; i++)
        if (want_weight(c, e->args[i], 3, "an expert weight") ||
            want_dim(c, e->args[i], 0, ne, "an expert weight's experts"))
            return -1;
    Expr *wg = e->args[2], *wu = e->args[3], *wd = e->args[4];
    const Dim *ff = &wg->ty.d[1];
    if (want_dim(c, wg, 2, d, "the gate's columns") || !type_eq(&wg->ty, &wu->ty) ||
        want_dim(c, wd, 1, d, "the down product's rows") || want_dim(c, wd, 2, ff, "the down product's columns"))
        return c->errors > e0 ? -1 : err(c, wu, "the up weights must match the gate's");
    if (e->nargs != 5 && e->nargs != 8)
        return err(c, e, arena_printf(c->a, "moe takes its expert biases as three (bg, bu, bd), not %d", e->nargs - 5));
    for (int i = 5; i < e->nargs; i++) {
        const Dim *cols = i == 7 ? d : ff;
        if (want_f32(c, e->args[i], "an expert bias") || want_rank(c, e->args[i], 2, 2, "an expert bias") || want_dim(c, e->args[i], 0, ne, "an expert bias") ||
            want_dim(c, e->args[i], 1, cols, "an expert bias"))
            return -1;
    }
    e->ty = x->ty;
    return 0;
}

static int shape_argmax(Ck *c, Expr *e)
{
    Expr *x = e->args[0];
    if (want_f32(c, x, "argmax's operand") || want_rank(c, x, 1, 2, "argmax's operand"))
        return -1;
    e->ty = mk(T_I32, x->ty.rank - 1, x->ty.d);
    return 0;
}

static int shape_stack(Ck *c, Expr *e)
{
    Expr *x = e->args[0];
    if (want_f32(c, x, "a stacked row") || want_rank(c, x, 0, LOGOS_MAXRANK - 1, "a stacked row"))
        return -1;
    for (int i = 1; i < e->nargs; i++)
        if (!type_eq(&x->ty, &e->args[i]->ty))
            return err(c, e->args[i], arena_printf(c->a, "stacked rows differ: %s and %s", type_str(c, &x->ty),
                                                   type_str(c, &e->args[i]->ty)));
    e->ty = x->ty;
    e->ty.rank++;
    memmove(e->ty.d + 1, x->ty.d, sizeof x->ty.d[0] * (size_t)x->ty.rank);
    e->ty.d[0] = cdim(e->nargs);
    return 0;
}

static int shape_concat(Ck *c, Expr *e)
{
    Expr *x = e->args[0];
    if (want_f32(c, x, "a concatenated tensor") || want_rank(c, x, 1, LOGOS_MAXRANK, "a concatenated tensor"))
        return -1;
    Type t = x->ty;
    for (int i = 1; i < e->nargs; i++) {
        Expr *y = e->args[i];
        if (want_f32(c, y, "a concatenated tensor") || want_rank(c, y, t.rank, t.rank, "a concatenated tensor"))
            return -1;
        for (int k = 0; k < t.rank - 1; k++)
            if (want_dim(c, y, k, &t.d[k], "concatenated tensors differ before their last axis"))
                return -1;
        if (last_dim(&y->ty)->sym || last_dim(&t)->sym)
            return err(c, y, "concatenation needs constant last axes");
        t.d[t.rank - 1].n += last_dim(&y->ty)->n;
    }
    e->ty = t;
    return 0;
}

static int shape_slice(Ck *c, Expr *e)
{
    Expr *x = e->args[0];
    if (want_f32(c, x, "the sliced tensor") || want_rank(c, x, 1, LOGOS_MAXRANK, "the sliced tensor"))
        return -1;
    long at = (long)attr_num(e, "at", 0), n = (long)attr_num(e, "n", 0), w = last_dim(&x->ty)->n;
    if (at < 0 || n < 1 || at + n > w || last_dim(&x->ty)->sym)
        return err(c, e, arena_printf(c->a, "values %ld..%ld are not inside the last axis of %s", at, at + n - 1,
                                      type_str(c, &x->ty)));
    e->ty = x->ty;
    e->ty.d[x->ty.rank - 1] = cdim(n);
    return 0;
}

static int shape_last(Ck *c, Expr *e)
{
    Expr *x = e->args[0];
    if (want_f32(c, x, "last's operand") || want_rank(c, x, 1, LOGOS_MAXRANK, "last's operand"))
        return -1;
    e->ty = mk(T_F32, x->ty.rank - 1, x->ty.d + 1);
    return 0;
}

static int shape_range(Ck *c, Expr *e)
{
    Expr *s = e->args[0];
    if (s->ty.base != T_I32 || s->ty.rank != 0)
        return err(c, s, arena_printf(c->a, "range starts at an i32, not %s", type_str(c, &s->ty)));
    const Attr *n = attr_get(e, "n");
    Dim d;
    if (n->isnum ? (n->num < 1 ? errl(c, n->line, n->col, "range needs n >= 1") : (d = cdim((long)n->num), 0))
                 : spelled_dim(c, n->text, n->line, n->col, &d))
        return -1;
    e->ty = mk(T_I32, 1, &d);
    return 0;
}

static int shape_allgather(Ck *c, Expr *e)
{
    if (shape_same(c, e) || want_rank(c, e->args[0], 1, LOGOS_MAXRANK, "the gathered tensor"))
        return -1;
    long r = (long)attr_num(e, "ranks", 0);
    if (r < 1)
        return err(c, e, "ranks must be at least 1");
    if (c->p->chips && r != c->p->chips)
        return err(c, e, arena_printf(c->a, "allgather joins %ld ranks, but the program runs on %d chips", r,
                                      c->p->chips));
    e->ty.d[e->ty.rank - 1].n *= r;
    return 0;
}

static ShapeFn *const shape_of[OP_COUNT] = {
#define X(id, name, amin, amax, kind, fuse, attrs, roles, shape) [OP_##id] = shape_##shape,
#include "ops.h"
#undef X
};

/* ---- expressions ---- */

static int expr(Ck *c, Expr *e);

/* Where may a name of this kind appear? Weights and states only where an op
 * reads them as such (`how` says which operand role). */
enum { USE_VALUE, USE_ROWS, USE_WEIGHT, USE_STATE };

static int use_role(const Expr *parent, int i)
{
    if (!parent)
        return USE_VALUE;
    switch (op_role(parent->op, i)) {
    case 'r': return USE_ROWS;
    case 'w': return USE_WEIGHT;
    case 's': return USE_STATE;
    default: return USE_VALUE;
    }
}

static int name_ref(Ck *c, Expr *e, int role)
{
    Name *n = find(c, e->name);
    if (!n)
        return err(c, e, arena_printf(c->a, "'%.60s' is not defined", e->name));
    if (n->ty.base == T_NONE && n->kind != N_SIZE)
        return -1;   /* already reported where it was defined */
    if (n->kind == N_SIZE)
        return err(c, e, arena_printf(c->a, "'%s' is a size, not a tensor", e->name));
    if (n->kind == N_OUT && !n->set)
        return err(c, e, arena_printf(c->a, "'%s' is read before it is assigned", e->name));
    if (n->kind == N_STATE && role != USE_ROWS && role != USE_STATE)
        return err(c, e, arena_printf(c->a, "state '%s' is read through its rows (%s[i], %s[..i]) "
                                            "or by the op that owns it", e->name, e->name, e->name));
    if (n->kind != N_STATE && role == USE_STATE)
        return err(c, e, arena_printf(c->a, "'%s' is not a state: this operand is updated in place", e->name));
    if (n->kind == N_WEIGHT && n->ty.base == T_Q8 && role == USE_VALUE)
        return err(c, e, arena_printf(c->a, "q8 weight '%s' is read only by products and row lookups", e->name));
    e->ty = n->ty;
    e->decl = n->decl;
    e->def = n->def;
    return 0;
}

static int call_arity(Ck *c, const Expr *e)
{
    const OpInfo *op = &op_info[e->op];
    if (e->nargs >= op->amin && (op->amax < 0 || e->nargs <= op->amax))
        return 0;
    const char *want = op->amax < 0 ? arena_printf(c->a, "at least %d", op->amin)
                       : op->amin == op->amax ? arena_printf(c->a, "%d", op->amin)
                                              : arena_printf(c->a, "%d to %d", op->amin, op->amax);
    return err(c, e, arena_printf(c->a, "%s takes %s operand%s, not %d", op->name, want,
                                  op->amax == 1 ? "" : "s", e->nargs));
}

static int expr_in(Ck *c, Expr *e, const Expr *parent, int i)
{
    if (e->op == E_NAME)
        return name_ref(c, e, use_role(parent, i));
    if (e->op == E_NUM) {
        e->ty = mk(T_F32, 0, NULL);
        return 0;
    }
    return expr(c, e);
}

static int expr(Ck *c, Expr *e)
{
    int bad = 0;
    for (int i = 0; i < e->nargs; i++)
        bad |= expr_in(c, e->args[i], e, i);
    if (bad)
        return -1;
    if (op_callable(e->op) && (call_arity(c, e) || check_attrs(c, e)))
        return -1;
    return shape_of[e->op](c, e);
}

/* ---- statements ---- */

static int check_write(Ck *c, Stmt *s)
{
    Name *n = find(c, s->name);
    if (!n || n->kind != N_STATE)
        return errl(c, s->line, s->col, arena_printf(c->a, n ? "'%s' is not a state: only a state's rows are written"
                                                             : "'%s' is not defined", s->name));
    s->decl = n->decl;
    if (expr_in(c, s->index, NULL, 0) | expr_in(c, s->value, NULL, 0))
        return -1;
    Expr *i = s->index;
    if (i->ty.base != T_I32 || i->ty.rank > 1)
        return err(c, i, arena_printf(c->a, "a state row write takes an i32 position or i32[n] positions, not %s",
                                      type_str(c, &i->ty)));
    Type row = n->ty;
    row.base = T_F32;
    if (i->ty.rank == 1) {
        row.d[0] = i->ty.d[0];
    } else {
        row.rank--;
        memmove(row.d, row.d + 1, sizeof row.d[0] * (size_t)row.rank);
    }
    if (!type_eq(&row, &s->value->ty))
        return err(c, s->value, arena_printf(c->a, "writing %s into rows %s of state '%s'",
                                             type_str(c, &s->value->ty), type_str(c, &row), s->name));
    return 0;
}

static int redefined(Ck *c, const Stmt *s, const Name *n)
{
    const char *m;
    switch (n->kind) {
    case N_STATE:
        m = arena_printf(c->a, "state '%s' is written only by row writes (%s[pos] = ...)", s->name, s->name);
        break;
    case N_IN:
    case N_WEIGHT:
    case N_SIZE:
        m = arena_printf(c->a, "'%s' is %s (declared at line %d): it is not assigned", s->name,
                         n->kind == N_IN ? "an input" : n->kind == N_WEIGHT ? "a weight" : "a size", n->line);
        break;
    default:
        m = arena_printf(c->a, "'%s' is already defined at line %d", s->name, n->line);
    }
    return errl(c, s->line, s->col, m);
}

static int assign_value(Ck *c, Stmt *s, Name *n)
{
    if (expr_in(c, s->value, NULL, 0))
        return -1;
    if (s->value->ty.ragged)
        return err(c, s->value, "causal rows X[..positions] are read only by attention");
    if (n && !type_eq(&n->ty, &s->value->ty))
        return err(c, s->value, arena_printf(c->a, "output '%s' is declared %s but assigned %s", s->name,
                                             type_str(c, &n->ty), type_str(c, &s->value->ty)));
    return 0;
}

static int check_assign(Ck *c, Stmt *s, int num)
{
    Name *n = find(c, s->name);
    if (n && !(n->kind == N_OUT && !n->set))
        return redefined(c, s, n);
    int bad = assign_value(c, s, n);
    if (n) {   /* an output, set even when rejected: one message is enough */
        n->set = 1;
        n->line = s->line;
        n->def = num;
        s->decl = n->decl;
        return bad;
    }
    s->decl = -1;
    add_name(c, (Name){s->name, N_LOCAL, s->line, 1, bad ? (Type){0} : s->value->ty, s->col, -1, num});
    return bad;
}

static int check_decl(Ck *c, Decl *d, int di)
{
    Name *old = find(c, d->name);
    if (old)
        return errl(c, d->line, d->col, arena_printf(c->a, "'%s' is already declared at line %d", d->name, old->line));
    Type t = {d->base, d->rank, {{0, 0}}, 0, {0, 0}};
    for (int i = 0; i < d->rank; i++)
        if (spelled_dim(c, d->dims[i], d->line, d->col, &t.d[i]))
            return -1;
    if (d->kind == D_SIZE)
        sym_of(c, d->name, -1);
    long count;
    int symbolic = 0;
    for (int i = 0; i < d->rank; i++)
        symbolic |= t.d[i].sym != 0;
    if (!symbolic && decl_count(d, &count))
        return errl(c, d->line, d->col, arena_printf(c->a, "'%s' holds more than 2^40 values", d->name));
    if (d->base == T_Q8 && d->kind != D_WEIGHT)
        return errl(c, d->line, d->col, "only weights are stored q8");
    if (d->base == T_F16 && d->kind != D_STATE)
        return errl(c, d->line, d->col, "only states are stored f16");
    if (d->base == T_Q8 && (d->rank < 2 || d->dims[d->rank - 1][0] > '9' || t.d[d->rank - 1].n % 32))
        return errl(c, d->line, d->col, arena_printf(c->a, "a q8 weight's rows must be whole 32-value blocks: %s",
                                                     type_str(c, &t)));
    if ((d->kind == D_WEIGHT || d->kind == D_STATE) && (d->rank == 0 || d->base == T_I32))
        return errl(c, d->line, d->col, arena_printf(c->a, "a %s is %s tensor, not %s",
                                                     d->kind == D_WEIGHT ? "weight" : "state",
                                                     d->kind == D_WEIGHT ? "an f32 or q8" : "an f32", type_str(c, &t)));
    for (int i = 0; i < d->rank; i++)
        if (t.d[i].sym && (d->kind == D_WEIGHT || d->kind == D_STATE))
            return errl(c, d->line, d->col, "weights and states have constant shapes");
    if (d->unpair_hd) {
        if (t.d[0].n % d->unpair_hd || d->unpair_at + d->unpair_rot > d->unpair_hd || d->unpair_rot % 2)
            return errl(c, d->line, d->col, arena_printf(c->a, "unpair(%d, %d, %d) does not fit groups of %d in %ld rows",
                                                         d->unpair_hd, d->unpair_rot, d->unpair_at, d->unpair_hd,
                                                         t.d[0].n));
    }
    const char *why = d->kind == D_WEIGHT ? place_why(c->a, c->p, d) : NULL;
    if (why)
        return errl(c, d->line, d->col, why);
    d->ty = t;
    d->count = symbolic ? 0 : count;
    add_name(c, (Name){d->name, d->kind, d->line, 0, t, d->col, di, -1});
    return 0;
}

int decl_count(const Decl *d, long *n)
{
    *n = 1;
    for (int i = 0; i < d->rank; i++) {
        const char *s = d->dims[i];
        if (s[0] < '0' || s[0] > '9')
            return -1;
        long v = strtol(s, NULL, 10);
        if (__builtin_mul_overflow(*n, v, n) || *n > LOGOS_MAXVALUES)
            return -1;
    }
    return 0;
}

const Decl **prog_weights(Arena *a, Prog *const *progs, int n, int *count)
{
    const Decl **w = NULL;
    int cap = 0;
    StrMap *seen = strmap_new(a);
    *count = 0;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < progs[k]->ndecls; i++) {
            const Decl *d = &progs[k]->decls[i];
            if (d->kind != D_WEIGHT || strmap_get(seen, d->name) >= 0)
                continue;
            strmap_put(seen, d->name, *count);
            *VEC_PUSH(a, w, *count, cap) = d;
        }
    return w;
}

int prog_find_decl(const Prog *p, const char *name)
{
    if (p->names) {
        int i = strmap_get(p->names, name);
        return i >= 0 ? i : -1;
    }
    for (int i = 0; i < p->ndecls; i++)
        if (strcmp(p->decls[i].name, name) == 0)
            return i;
    return -1;
}

/* The names the program resolved: each declaration's index, or -2 - the
 * statement assigning a local. */
static void keep_names(Ck *c)
{
    c->p->names = strmap_new(c->a);
    for (int i = 0; i < c->nnames; i++) {
        const Name *n = &c->names[i];
        strmap_put(c->p->names, n->name, n->decl >= 0 ? n->decl : -2 - n->def);
    }
}

int check_prog(Arena *a, Prog *p)
{
    Ck c = {.a = a, .p = p, .index = strmap_new(a)};
    p->names = NULL;
    for (int i = 0; i < p->ndecls; i++)
        check_decl(&c, &p->decls[i], i);
    if (c.errors)
        return c.errors;
    for (int i = 0; i < p->nstmts; i++) {
        Stmt *s = &p->stmts[i];
        if (s->kind == S_WRITE)
            check_write(&c, s);
        else
            check_assign(&c, s, i);
    }
    for (int i = 0; i < c.nnames; i++)
        if (c.names[i].kind == N_OUT && !c.names[i].set)
            errl(&c, c.names[i].line, c.names[i].col, arena_printf(a, "output '%s' is never assigned", c.names[i].name));
    if (p->nstmts == 0 && !c.errors)
        errl(&c, p->line, 1, "the program has no statements");
    if (!c.errors)
        keep_names(&c);
    return c.errors;
}
