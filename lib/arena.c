/* arena.c — an arena per document: many small allocations, freed whole. */
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
