/* fuzz_spec.c — libFuzzer harness: a ModelSpec (YAML) through the spec
 * reader and its checks, then logos-author's decode_step, prefill and
 * decode_batch (a batch of 2) for it, with two properties a crash reports:
 * what logos-author prints for a spec it accepts is a stream that loads
 * (every program checks), and each of its programs fuses or is refused
 * with a message. Built by tests/fuzz/run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

/* The programs author() printed for form: loaded, fused. */
static void authored(Arena *a, const Spec *s, const char *form, int batch)
{
    char *t = NULL;
    size_t len;
    FILE *f = open_memstream(&t, &len);
    if (!f)
        abort();
    int st = author(a, s, form, -1, batch, 0, f);
    fclose(f);
    if (!st) {
        Stream sm = {0};
        if (stream_load_src(a, src_from_string(a, form, t), &sm) || stream_phases(&sm)) {
            fprintf(stderr, "fuzz_spec: logos-author %s printed a stream that does not load:\n%s", form, t);
            abort();
        }
        FuseOpts fo;
        fuse_defaults(&fo, 512);
        fo.numerics = NUM_Q8;
        fo.fuse_quant = 1;
        fo.quiet = 1;
        for (int k = 0; k < sm.nprogs; k++)
            if (!fuse(a, sm.progs[k], sm.graphs[k], &fo))
                break;
    }
    free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena *a = arena_new();
    const char *text = arena_strndup(a, (const char *)data, size);
    Spec *s = spec_parse(a, src_from_string(a, "<fuzz>.yaml", text));
    int ok = s != NULL;
    for (int l = 0; ok && l < s->nlayers; l++)
        ok = !spec_not_yet(a, s, l);
    if (ok && s->nlayers <= 4) {   /* the real shapes' many layers are slow to fuse; their kinds are the same */
        authored(a, s, "decode_step", 0);
        authored(a, s, "prefill", 0);
        authored(a, s, "decode_batch", 2);
    }
    arena_free(a);
    return 0;
}
