/* test_lane_kernels.c — the lane's own kernels, which no plan names and so
 * no `logos-run --compile` reaches: bench.cu (logos-bench's readbw and
 * mmarate) and synth.cu (synthetic weights, each format), compiled by NVRTC
 * for sm_90 with no GPU, each entry function there and none with a stack
 * frame or spills. Skipped where NVRTC does not open. Prints `ok N - what`
 * or `not ok N - what` per check; exits 1 when any check fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"
#include "tap.h"


/* Every "N bytes <what>" in ptxas's log has N 0. */
static int all_zero(const char *log, const char *what)
{
    for (const char *p = strstr(log, what); p; p = strstr(p + 1, what)) {
        const char *q = p;
        while (q > log && q[-1] == ' ')
            q--;
        if (q > log && q[-1] != '0')
            return 0;
        if (q - 1 > log && q[-2] >= '0' && q[-2] <= '9')
            return 0;
    }
    return 1;
}

/* file compiled with consts for sm_90: each of the names an entry function
 * of it, no local memory. */
static void compiles(const char *file, const char *consts, const char *const *names, int n)
{
    char what[160], entry[96];
    char *src = lane_kernel_source(file, consts);
    Cubin c;
    int s = nvrtc_compile(src, file, kernel_common(), "common.cuh", 90, &c);
    snprintf(what, sizeof what, "%s (%s) compiles for sm_90", file, *consts ? consts : "no constants");
    ok(s == 0, what);
    if (s)
        printf("# %s\n", c.log);
    for (int i = 0; !s && i < n; i++) {
        snprintf(entry, sizeof entry, "entry function '%s'", names[i]);
        snprintf(what, sizeof what, "%s: %s is there", file, names[i]);
        ok(strstr(c.log, entry) != NULL, what);
    }
    if (!s) {
        snprintf(what, sizeof what, "%s: no stack frame, no spills", file);
        ok(all_zero(c.log, "bytes stack frame") && all_zero(c.log, "bytes spill stores") &&
               all_zero(c.log, "bytes spill loads"), what);
    }
    cubin_free(&c);
    free(src);
}

int main(void)
{
    const char *why = nvrtc_open();
    if (why) {
        printf("ok 1 # skip NVRTC does not open: %s\n1..1\n", why);
        return 0;
    }
    static const char *const bench[] = {"readbw", "mmarate"}, *const synth[] = {"synth"};
    compiles("bench.cu", "", bench, 2);
    compiles("synth.cu", "constexpr long Q8 = 0;", synth, 1);
    compiles("synth.cu", "constexpr long Q8 = 1;", synth, 1);
    return tap_done();
}
