/* progtext.h — a program from its text for the unit tests: lexed, parsed
 * and checked, or the test bails out (TAP's "Bail out!"). */
#ifndef PROGTEXT_H
#define PROGTEXT_H

#include <stdio.h>
#include <stdlib.h>

#include "logos.h"

static Prog *prog_text(Arena *a, const char *text)
{
    Lexer lx;
    int err = 0;
    lex_init(&lx, src_from_string(a, "test.logos", text));
    Prog *p = parse_prog(a, &lx, &err);
    if (!p || err || check_prog(a, p)) {
        printf("Bail out! a test program does not check\n");
        exit(1);
    }
    return p;
}

#endif
