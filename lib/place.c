/* place.c — a split program's placement (man5/logos-placement.5): which
 * part of each whole weight file a chip reads. Every chip of a program's
 * `chips N` runs the same statements on shapes of its own; a weight declared
 * `split(rows, P)` or `split(cols, P)` is one of P equal parts of a whole
 * along its first or last axis, and chip r reads part r*P/N (P divides N:
 * with P < N, N/P neighbouring chips read the same part). A weight with no
 * split is whole on every chip. */
#include <stdlib.h>

#include "logos.h"

static const char *axis_name(int split)
{
    return split == SPLIT_ROWS ? "rows" : "cols";
}

static int axis_of(const Decl *d)
{
    return d->split == SPLIT_ROWS ? 0 : d->rank - 1;
}

const char *place_why(Arena *a, const Prog *p, const Decl *d)
{
    if (!d->split)
        return NULL;
    const char *sp = arena_printf(a, "split(%s, %d)", axis_name(d->split), d->parts);
    if (!p->chips)
        return arena_printf(a, "'%s' is %s, but the program declares no chips", d->name, sp);
    if (d->parts > p->chips || p->chips % d->parts)
        return arena_printf(a, "'%s' is %s: %d parts do not divide %d chips", d->name, sp, d->parts, p->chips);
    if (d->split == SPLIT_COLS && d->rank < 2)
        return arena_printf(a, "'%s' is a vector: it splits by rows, not cols", d->name);
    long dims[LOGOS_MAXRANK], n = 1;
    place_whole(d, dims);
    for (int i = 0; i < d->rank; i++)
        if (__builtin_mul_overflow(n, dims[i], &n) || n > LOGOS_MAXVALUES)
            return arena_printf(a, "'%s' is %s of a whole of more than 2^40 values", d->name, sp);
    return NULL;
}

void place_whole(const Decl *d, long *dims)
{
    for (int i = 0; i < d->rank; i++)
        dims[i] = strtol(d->dims[i], NULL, 10);
    if (d->split)
        dims[axis_of(d)] *= d->parts;
}

int place_part(const Decl *d, int chips, int rank, long *from, long *to)
{
    if (!d->split)
        return -1;
    long n = strtol(d->dims[axis_of(d)], NULL, 10), k = (long)rank * d->parts / chips;
    *from = k * n;
    *to = *from + n;
    return axis_of(d);
}

const char *place_part_text(Arena *a, const Decl *d, int chips, int rank)
{
    long from, to;
    if (place_part(d, chips, rank, &from, &to) < 0)
        return "all";
    return arena_printf(a, "%s=%ld:%ld", axis_name(d->split), from, to);
}
