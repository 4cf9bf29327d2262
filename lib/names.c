/* names.c — a table of names to indices: open addressing with FNV-1a
 * hashes, held in an arena, so that looking a name up costs the same in a
 * program of ten names as in one of a million (the checker's names, the
 * author's declarations, the manifest's weights). The table keeps the
 * caller's pointer to each name, not a copy. */
#include <string.h>

#include "logos.h"

typedef struct Slot {
    const char *s;   /* NULL: empty */
    size_t n;
    int v;
} Slot;

struct Names {
    Arena *a;
    Slot *slot;
    size_t cap, count;   /* cap a power of two, at most half full */
};

static size_t hash(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
    return (size_t)(h ^ (h >> 32));
}

Names *names_new(Arena *a)
{
    Names *t = arena_alloc(a, sizeof *t);
    t->a = a;
    t->cap = 64;
    t->slot = arena_alloc(a, sizeof *t->slot * t->cap);
    return t;
}

/* The slot of name: where it is, or the empty slot where it would go. */
static Slot *probe(const Names *t, const char *s, size_t n)
{
    for (size_t i = hash(s, n) & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        Slot *e = &t->slot[i];
        if (!e->s || (e->n == n && memcmp(e->s, s, n) == 0))
            return e;
    }
}

static void grow(Names *t)
{
    Slot *old = t->slot;
    size_t ocap = t->cap;
    t->cap *= 2;
    t->slot = arena_alloc(t->a, sizeof *t->slot * t->cap);
    for (size_t i = 0; i < ocap; i++)
        if (old[i].s)
            *probe(t, old[i].s, old[i].n) = old[i];
}

int names_find(const Names *t, const char *name, size_t n)
{
    const Slot *e = probe(t, name, n);
    return e->s ? e->v : -1;
}

int names_add(Names *t, const char *name, size_t n, int index)
{
    Slot *e = probe(t, name, n);
    if (e->s)
        return e->v;
    if (2 * (t->count + 1) > t->cap) {
        grow(t);
        e = probe(t, name, n);
    }
    *e = (Slot){name, n, index};
    t->count++;
    return -1;
}
