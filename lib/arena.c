/* arena.c — an arena per document: many small allocations, freed whole;
 * the containers built on it (a map from strings, growable arrays) and
 * qsort's order of ints. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Block {
    struct Block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
} Block;

struct Arena {
    Block *head;
};

static Block *block_new(size_t size)
{
    Block *b = malloc(sizeof *b + size);
    if (!b) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    b->next = NULL;
    b->used = 0;
    b->size = size;
    return b;
}

Arena *arena_new(void)
{
    Arena *a = calloc(1, sizeof *a);
    if (!a) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    return a;
}

void arena_free(Arena *a)
{
    if (!a)
        return;
    for (Block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    free(a);
}

void *arena_alloc(Arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    Block *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t size = n > 65536 ? n : 65536;
        b = block_new(size);
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s)
{
    return arena_strndup(a, s, strlen(s));
}

char *arena_printf(Arena *a, const char *fmt, ...)
{
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    ASSERT(n >= 0);
    char *p = arena_alloc(a, (size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, aq);
    va_end(aq);
    return p;
}

void *vec_grow(Arena *a, void *ptr, int *cap, size_t elem)
{
    int ncap = *cap ? *cap * 2 : 8;
    void *p = arena_alloc(a, (size_t)ncap * elem);
    if (ptr)
        memcpy(p, ptr, (size_t)*cap * elem);
    *cap = ncap;
    return p;
}

/* ---- a string map in an arena: open addressing, FNV-1a, doubled when half full ---- */

typedef struct Slot {
    const char *key;
    int val;
} Slot;

struct StrMap {
    Arena *a;
    Slot *s;
    int cap, n;
};

static unsigned long strhash(const char *s)
{
    unsigned long h = 1469598103934665603UL;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211UL;
    return h;
}

StrMap *strmap_new(Arena *a)
{
    StrMap *m = arena_alloc(a, sizeof *m);
    m->a = a;
    m->cap = 64;
    m->s = arena_alloc(a, sizeof *m->s * (size_t)m->cap);
    return m;
}

static Slot *strmap_slot(const StrMap *m, const char *key)
{
    unsigned long i = strhash(key) & (unsigned long)(m->cap - 1);
    while (m->s[i].key && strcmp(m->s[i].key, key) != 0)
        i = (i + 1) & (unsigned long)(m->cap - 1);
    return &m->s[i];
}

int strmap_get(const StrMap *m, const char *key)
{
    if (!m)
        return -1;
    const Slot *s = strmap_slot(m, key);
    return s->key ? s->val : -1;
}

void strmap_put(StrMap *m, const char *key, int val)
{
    if (2 * (m->n + 1) > m->cap) {
        Slot *old = m->s;
        int ocap = m->cap;
        m->cap *= 2;
        m->s = arena_alloc(m->a, sizeof *m->s * (size_t)m->cap);
        for (int i = 0; i < ocap; i++)
            if (old[i].key)
                *strmap_slot(m, old[i].key) = old[i];
    }
    Slot *s = strmap_slot(m, key);
    if (!s->key)
        m->n++;
    s->key = key;
    s->val = val;
}

int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
