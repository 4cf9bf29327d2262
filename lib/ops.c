/* ops.c — the op table's rows as data (see ops.h), lookup by name, and a
 * call's attributes by name. */
#include <string.h>

#include "logos.h"

const OpInfo op_info[OP_COUNT] = {
#define X(id, name, amin, amax, kind, fuse, attrs, state, shape) \
    [OP_##id] = {name, amin, amax, kind, fuse, attrs, state},
#include "ops.h"
#undef X
};

int op_lookup(const char *name)
{
    for (int i = 0; i < OP_COUNT; i++)
        if (op_info[i].kind != K_SUGAR && strcmp(op_info[i].name, name) == 0 &&
            (name[0] >= 'a' && name[0] <= 'z') && i != OP_NEG)
            return i;
    return -1;
}

const char *base_name(int base)
{
    static const char *names[] = {"none", "f32", "i32", "q8"};
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
