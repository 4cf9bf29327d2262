/* fuzz_text.c — libFuzzer harness: a stream of LOGOS programs or plans
 * through the loader (lexer, parser, checker, dataflow graph; a plan's
 * kernel table checks), with three properties a crash reports:
 *   - a loaded stream printed (programs canonically, plans as plans) loads
 *     again and prints the same bytes (but a launch's closing comment, the
 *     program lines it covers: a fused plan's count the lines of the
 *     program fused, a loaded plan's its own);
 *   - every checked program fuses (logos-fuse --lane cuda, under the
 *     knobs a hash of the input picks) or is refused with a message;
 *   - a plan the fuser printed loads (logos-run's checks pass on it).
 * Built by tests/fuzz/run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

/* The stream's programs (or plans) printed into a malloc'd string. */
static char *printed(const Stream *st, size_t *len)
{
    char *t = NULL;
    FILE *f = open_memstream(&t, len);
    if (!f)
        abort();
    for (int k = 0; k < st->nprogs; k++) {
        if (st->plans[k])
            plan_print(f, st->plans[k]);
        else
            print_prog(f, st->progs[k]);
    }
    fclose(f);
    return t;
}

/* t with each launch's closing comment ("  # line 4", "  # lines 4-9")
 * taken out, in place. */
static void uncomment(char *t)
{
    char *w = t;
    for (const char *r = t; *r;) {
        if (!strncmp(r, "  # line", 8))
            r += strcspn(r, "\n");
        else
            *w++ = *r++;
    }
    *w = 0;
}

/* text loads, and prints back as itself (but its launches' closing
 * comments): else a crash. */
static void reloads(Arena *a, const char *what, char *text)
{
    Stream st = {0};
    if (stream_load_src(a, src_from_string(a, what, text), &st)) {
        fprintf(stderr, "fuzz_text: %s does not load again:\n%s", what, text);
        abort();
    }
    size_t len;
    char *again = printed(&st, &len);
    uncomment(again);
    uncomment(text);
    if (strcmp(again, text)) {
        fprintf(stderr, "fuzz_text: %s prints otherwise when loaded again:\n%s\n---\n%s", what, text, again);
        abort();
    }
    free(again);
}

/* logos-fuse's knobs, picked by a hash of the input: the numerics, the
 * quantizing epilogues, the lane rules, the chip's multiprocessors (few
 * make attention and products split) and the row crossovers (low ones
 * send small stacks to mmv, mma, mmh and x resident, latent attention
 * expanded), so that every rule's road is walked. */
static void knobs(FuseOpts *fo, const Stream *st, const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++)
        h = (h ^ data[i]) * 16777619u;
    static const int sms[] = {132, 1, 8, 24}, rows[] = {0, 1, 16, 33};
    fuse_defaults(fo, 512);
    fo->numerics = h % 3 == 0 ? NUM_Q8 : h % 3 == 1 ? NUM_Q8X2 : NUM_PRECISE;
    h /= 3;
    fo->fuse_quant = fo->numerics != NUM_PRECISE && h % 4 != 3;
    fo->lane_rules = h % 8 != 7;
    h /= 8;
    fo->sms = sms[h % 4];
    h /= 4;
    fo->mma_rows = rows[h % 4];
    fo->mmv_rows = rows[(h / 4) % 2];
    fo->mmh_rows = rows[(h / 8) % 4];
    fo->xr_rows = rows[(h / 32) % 4];
    fo->latent_rows = rows[(h / 128) % 4];
    fo->rows = st->ctx > 0 && st->ctx < 512 ? (int)st->ctx : 512;
    fo->quiet = 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Arena *a = arena_new();
    const char *text = arena_strndup(a, (const char *)data, size);
    Stream st = {0};
    if (!stream_load_src(a, src_from_string(a, "<fuzz>", text), &st) && !stream_phases(&st)) {
        size_t len;
        char *p = printed(&st, &len);
        reloads(a, "the printed stream", p);
        free(p);
        FuseOpts fo;
        knobs(&fo, &st, data, size);
        char *plans = NULL;
        FILE *f = open_memstream(&plans, &len);
        int fused = 1;
        for (int k = 0; k < st.nprogs && fused; k++) {
            Plan *pl = st.plans[k] ? NULL : fuse(a, st.progs[k], st.graphs[k], &fo);
            if (pl)
                plan_print(f, pl);
            fused = pl != NULL;
        }
        fclose(f);
        if (fused)
            reloads(a, "the fused plan", plans);
        free(plans);
    }
    arena_free(a);
    return 0;
}
