/* trace.c — LOGOS_TRACE=DIR: every value a run computes written to DIR, one
 * raw file a value, so that the CUDA lane can be held against the CPU
 * reference statement by statement (tests/gpu/trace.py finds the first
 * statement where they part). A file is DIR/RUN.PROG.NAME: RUN counts the
 * lane's runs from 0, PROG is the program's index in the stream, NAME a
 * statement's name or a state's; the values are raw little-endian f32 (i32
 * for integer values). The reference also appends "RUN PROG NAME TYPE" to
 * DIR/order, the statements in the order it computed them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static int broken;   /* a write failed: said once, tracing stops */

const char *trace_dir(void)
{
    const char *d = getenv("LOGOS_TRACE");
    return d && *d && !broken ? d : NULL;
}

static void trace_fail(const char *path)
{
    diag("LOGOS_TRACE: cannot write %s: %s (tracing stops)", path, strerror(errno));
    broken = 1;
}

void trace_write(int run, int prog, const char *name, const void *v, long bytes)
{
    const char *dir = trace_dir();
    if (!dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.%d.%s", dir, run, prog, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(v, 1, (size_t)bytes, f) != (size_t)bytes || fclose(f)) {
        if (f)
            fclose(f);
        trace_fail(path);
    }
}

void trace_order(int run, int prog, const char *name, int i32)
{
    const char *dir = trace_dir();
    if (!dir)
        return;
    char path[4096];
    snprintf(path, sizeof path, "%s/order", dir);
    FILE *f = fopen(path, "a");
    if (!f || fprintf(f, "%d %d %s %s\n", run, prog, name, i32 ? "i32" : "f32") < 0 || fclose(f)) {
        if (f)
            fclose(f);
        trace_fail(path);
    }
}
