/* tap.h — the TAP lines the unit tests print: `ok N - what` or `not ok N -
 * what` a check, then tap_done's plan line `1..N` and the exit status (1
 * when one failed). */
#ifndef TAP_H
#define TAP_H

#include <stdio.h>

static int ntest, nfail;

static void ok(int cond, const char *what)
{
    ntest++;
    if (!cond)
        nfail++;
    printf("%sok %d - %s\n", cond ? "" : "not ", ntest, what);
}

static int tap_done(void)
{
    printf("1..%d\n", ntest);
    return nfail != 0;
}

#endif
