/* ops.c — the op table's rows as data (see ops.h), lookup by name, and a
 * call's attributes by name. */
#include <string.h>

#include "logos.h"

const OpInfo op_info[OP_COUNT] = {
#define X(id, name, amin, amax, kind, fuse, attrs, roles, shape) \
    [OP_##id] = {name, amin, amax, kind, fuse, attrs, roles},
#include "ops.h"
#undef X
};

/* Ops written as calls are the ones whose name is a word; the others are
 * spelled by syntax (@, [], [..], ~, + - * /, unary -). */
int op_callable(int op)
{
    return op >= 0 && op < OP_COUNT && op_info[op].name[0] >= 'a' && op_info[op].name[0] <= 'z';
}

int op_role(int op, int i)
{
    const char *r = op_info[op].roles;
    size_t n = strlen(r);
    return r[(size_t)i < n ? (size_t)i : n - 1];
}

int op_state(int op)
{
    const char *s = strchr(op_info[op].roles, 's');
    return s ? (int)(s - op_info[op].roles) : -1;
}

int op_lookup(const char *name)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (op_callable(i) && strcmp(op_info[i].name, name) == 0)
            return i;
    return -1;
}

const char *base_name(int base)
{
    static const char *names[] = {"none", "f32", "i32", "q8", "f16"};
    return names[base];
}

const Attr *attr_get(const Expr *e, const char *name)
{
    for (int i = 0; i < e->nattrs; i++)
        if (strcmp(e->attrs[i].name, name) == 0)
            return &e->attrs[i];
    return NULL;
}

double attr_num(const Expr *e, const char *name, double dflt)
{
    const Attr *a = attr_get(e, name);
    return a ? a->num : dflt;
}

const char *attr_word(const Expr *e, const char *name, const char *dflt)
{
    const Attr *a = attr_get(e, name);
    return a ? a->text : dflt;
}
