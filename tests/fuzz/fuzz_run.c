/* fuzz_run.c — libFuzzer harness: a stream of programs or plans that loads
 * is run on the CPU reference (logos-run --device cpu --synthetic 1): a
 * prompt of two tokens a sequence, then two tokens generated greedily. Its
 * property: whatever loads runs to its tokens or stops with a message,
 * never a crash or a sanitizer's report. Streams whose declarations hold
 * more than 16 M values are skipped (synthetic weights of that size are
 * not what a fuzzer should spend its time on), and so are split ones.
 * Built by tests/fuzz/run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "logos.h"

/* The values every declaration of the stream holds, at their bounds. */
static double values(const Stream *st)
{
    double v = 0;
    for (int k = 0; k < st->nprogs; k++)
        for (int i = 0; i < st->progs[k]->ndecls; i++) {
            const Type *t = &st->progs[k]->decls[i].ty;
            double n = 1;
            for (int d = 0; d < t->rank; d++)
                n *= (double)t->d[d].n;
            v += n;
        }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena *a = arena_new();
    const char *text = arena_strndup(a, (const char *)data, size);
    Stream st = {0};
    if (!stream_load_src(a, src_from_string(a, "<fuzz>", text), &st) && !stream_phases(&st) && !st.chips &&
        values(&st) <= 16e6) {
        WeightsArg w = {.seed = 1, .synthetic = 1};
        if (!stream_open(&st, lane_cpu(), &w)) {
            int n = st.batch ? st.batch : 1;
            int32_t ids[2] = {1, 2};
            Prompt p[64];
            for (int i = 0; i < n && i < 64; i++)
                p[i] = (Prompt){ids, 2};
            FILE *null = fopen("/dev/null", "w");
            if (n <= 64)
                run_generate(&st, p, n, 2, null);
            fclose(null);
        }
        stream_close(&st);
    }
    arena_free(a);
    return 0;
}
