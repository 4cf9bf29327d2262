/* progtext.h — a program from its text for the unit tests: lexed, parsed
 * and checked, or the test bails out (TAP's "Bail out!"); and the relative
 * distance the tests compare values by. */
#ifndef PROGTEXT_H
#define PROGTEXT_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "logos.h"

/* The program of text, its source named name (in its messages). */
static inline Prog *prog_named(Arena *a, const char *name, const char *text)
{
    Lexer lx;
    int err = 0;
    lex_init(&lx, src_from_string(a, name, text));
    Prog *p = parse_prog(a, &lx, &err);
    if (!p || err || check_prog(a, p)) {
        printf("Bail out! a test program does not check\n");
        exit(1);
    }
    return p;
}

static inline Prog *prog_text(Arena *a, const char *text)
{
    return prog_named(a, "test.logos", text);
}

/* Max |a - b| over max |b| (or max |a - b| where b is all 0). */
static inline double rel(const float *a, const float *b, long n)
{
    double num = 0, den = 0;
    for (long i = 0; i < n; i++) {
        num = fmax(num, fabs((double)a[i] - b[i]));
        den = fmax(den, fabs((double)b[i]));
    }
    return den > 0 ? num / den : num;
}

#endif
