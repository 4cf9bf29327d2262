/* env.c — tensors by name (weights, states, inputs, outputs), shared by the
 * programs of a stream: a buffer the env allocates is owned and freed by it,
 * a bound one is a view of memory the caller keeps alive. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Entry {
    char *name;
    Buf b;
    void *own;   /* the allocation behind b, or NULL for a view */
} Entry;

struct Env {
    Entry **e;
    int n, cap;
    Arena *a;       /* the map's */
    StrMap *ix;     /* name -> its entry's index (a search a name was
                     * quadratic in a program's layers) */
};

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    return p;
}

Env *env_new(void)
{
    Env *e = xcalloc(1, sizeof(Env));
    e->a = arena_new();
    e->ix = strmap_new(e->a);
    return e;
}

void env_free(Env *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->n; i++) {
        free(e->e[i]->own);
        free(e->e[i]->name);
        free(e->e[i]);
    }
    free(e->e);
    arena_free(e->a);
    free(e);
}

static Entry *find(Env *e, const char *name)
{
    int i = strmap_get(e->ix, name);
    return i < 0 ? NULL : e->e[i];
}

Buf *env_get(Env *e, const char *name)
{
    Entry *x = find(e, name);
    return x ? &x->b : NULL;
}

/* The entry for name, created empty when absent; an old buffer is freed. */
static Entry *slot(Env *e, const char *name)
{
    Entry *x = find(e, name);
    if (x) {
        free(x->own);
        x->own = NULL;
        return x;
    }
    if (e->n == e->cap) {
        e->cap = e->cap ? e->cap * 2 : 16;
        Entry **g = realloc(e->e, (size_t)e->cap * sizeof *g);
        if (!g) {
            diag("out of memory");
            exit(EXIT_SYSTEM);
        }
        e->e = g;
    }
    x = xcalloc(1, sizeof *x);
    x->name = strdup(name);
    if (!x->name) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    e->e[e->n++] = x;
    strmap_put(e->ix, x->name, e->n - 1);
    return x;
}

/* Zeroed memory for name's buffer; out of memory names the buffer, its
 * type and its size, and exits with EXIT_SYSTEM. */
static void *buf_calloc(const char *name, const Buf *b, size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (p)
        return p;
    char shape[32 * LOGOS_MAXRANK] = "";
    for (int i = 0, k = 0; i < b->rank; i++)
        k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%ld", i ? "," : "", b->d[i]);
    diag("out of memory: '%s' (%s[%s]) needs %zu bytes", name, base_name(b->base), shape, bytes);
    exit(EXIT_SYSTEM);
}

Buf *env_alloc(Env *e, const char *name, int base, int rank, const long *d)
{
    ASSERT(rank >= 0 && rank <= LOGOS_MAXRANK);
    Entry *x = slot(e, name);
    Buf b = {.base = base, .rank = rank, .n = 1};
    for (int i = 0; i < rank; i++) {
        b.d[i] = d[i];
        b.n *= d[i];
    }
    if (base == T_Q8) {
        ASSERT(b.n % 32 == 0);
        x->own = buf_calloc(name, &b, (size_t)b.n + (size_t)(b.n / 32) * sizeof(uint16_t));
        b.q = x->own;
        b.s = (const uint16_t *)((int8_t *)x->own + b.n);
    } else {
        x->own = buf_calloc(name, &b, (size_t)b.n * 4);
        if (base == T_I32)
            b.i = x->own;
        else
            b.f = x->own;
    }
    x->b = b;
    return &x->b;
}

Buf *env_bind(Env *e, const char *name, Buf b)
{
    Entry *x = slot(e, name);
    x->b = b;
    return &x->b;
}

static long buf_rows(const Buf *b)
{
    return b->rank ? b->d[0] : 1;
}

long buf_cols(const Buf *b)
{
    return b->n / buf_rows(b);
}
