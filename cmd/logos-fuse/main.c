/* logos-fuse — reads a stream of LOGOS programs and prints the launch plan
 * of each for the CUDA lane (man5/logos-plan.5): the shared rules decide
 * by dataflow what one launch covers, the lane's kernels whether it can. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Opts {
    const char *out, *crossover;
    FuseOpts f;
    int numerics, no_lane_rules, no_fuse_quant;
    long rows, sms, mma_rows, mmv_rows, latent_rows, mmh_rows, xr_rows, mmi_rows, preload_kb;
    int quiet;
} Opts;

static int lane(void *field, const char *flag, const char *value)
{
    (void)field;
    (void)flag;
    if (strcmp(value, "cuda")) {
        diag("unknown lane '%s' (lanes: cuda)", value);
        return EXIT_USAGE;
    }
    return 0;
}

static const Opt opts[] = {
    {.arg = "FILE", .help = "the program stream (stdin when absent or -)"},
    {.l = "lane", .kind = OPT_CALL, .arg = "L", .fn = lane, .help = "the lane whose kernels decide the fusion (cuda)"},
    {.l = "numerics", .kind = OPT_WORD, .at = offsetof(Opts, numerics), .arg = "N", .what = "q8x2 q8 precise",
     .help = "activations read by products: q8x2 (two int8 words a value, the\n"
             "default), q8 (one int8 word with a scale per 32 values) or precise (f32)"},
    {.l = "fuse-quant", .kind = OPT_FLAG, .at = offsetof(Opts, f.fuse_quant),
     .help = "producers quantize their outputs in their epilogues (the default)"},
    {.l = "no-fuse-quant", .kind = OPT_FLAG, .at = offsetof(Opts, no_fuse_quant),
     .help = "products quantize what they read themselves"},
    {.l = "no-lane-rules", .kind = OPT_FLAG, .at = offsetof(Opts, no_lane_rules),
     .help = "hold the lane's own rules back: shared rules only"},
    {.l = "rows", .kind = OPT_LONG, .at = offsetof(Opts, rows), .arg = "N", .lo = 1, .hi = 65536,
     .what = "a number of rows", .help = "the most rows of one prefill chunk (default: the context, at most 512)"},
    {.l = "sms", .kind = OPT_LONG, .at = offsetof(Opts, sms), .arg = "N", .lo = 1, .hi = 1024,
     .what = "a number of multiprocessors", .help = "the GPU's multiprocessors, for split attention and a GEMV's grid (default 132)"},
    {.l = "mma-rows", .kind = OPT_LONG, .at = offsetof(Opts, mma_rows), .arg = "N", .lo = 2, .hi = 65536,
     .what = "a number of rows",
     .help = "stacked rows from which products run on the tensor cores in tiles (default 128)"},
    {.l = "mmv-rows", .kind = OPT_LONG, .at = offsetof(Opts, mmv_rows), .arg = "N", .lo = 2, .hi = 65536,
     .what = "a number of rows",
     .help = "stacked rows from which, below --mma-rows, they run there in passes of 32 (default 2)"},
    {.l = "latent-rows", .kind = OPT_LONG, .at = offsetof(Opts, latent_rows), .arg = "N", .lo = 1, .hi = 65536,
     .what = "a number of rows",
     .help = "chunk rows from which a latent attention runs expanded (default 128)"},
    {.l = "mmh-rows", .kind = OPT_LONG, .at = offsetof(Opts, mmh_rows), .arg = "N", .lo = 1, .hi = 65536,
     .what = "a number of rows",
     .help = "stacked rows from which products in tiles run in f16 (mmh; default 128)"},
    {.l = "xr-rows", .kind = OPT_LONG, .at = offsetof(Opts, xr_rows), .arg = "N", .lo = 1, .hi = 65,
     .what = "a number of rows",
     .help = "stacked rows from which, up to 64, products run in f16 with x resident\n"
             "(mmh TM 64; default 65: never)"},
    {.l = "mmi-rows", .kind = OPT_LONG, .at = offsetof(Opts, mmi_rows), .arg = "N", .lo = 1, .hi = 65,
     .what = "a number of rows",
     .help = "stacked rows from which, up to 64, products run in int8 wgmma\n"
             "(mmi; default 32, then only those large enough; 65: never)"},
    {.l = "preload-kb", .kind = OPT_LONG, .at = offsetof(Opts, preload_kb), .arg = "N", .lo = 0, .hi = 200,
     .what = "a number of KB",
     .help = "the most KB of weights a block of a decode step's product after an\n"
             "attention, a norm or a convolution takes into shared memory before its\n"
             "wait (default 0: never)"},
    {.l = "crossover", .kind = OPT_STR, .at = offsetof(Opts, crossover), .arg = "FILE",
     .help = "the crossovers from FILE, a table of the bench's times\n"
             "(tests/gpu/crossover's lines); --mmv-rows, --mma-rows and\n"
             "--mmi-rows override it"},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(Opts, out), .arg = "FILE", .help = "write the plans to FILE"},
    {.s = 'v', .kind = OPT_FLAG, .at = offsetof(Opts, f.verbose), .help = "say each decision and its reason on stderr"},
    {.s = 'q', .kind = OPT_FLAG, .at = offsetof(Opts, quiet), .help = "no decisions on stderr, even with -v"},
    {0},
};
static const Cli cli = {"usage: logos-fuse [--lane cuda] [--numerics N] [--no-fuse-quant] [--no-lane-rules]\n"
                        "                  [--rows N] [--sms N] [--mma-rows N] [--mmv-rows N]\n"
                        "                  [--latent-rows N] [--mmh-rows N] [--xr-rows N] [--mmi-rows N]\n"
                        "                  [--preload-kb N]\n"
                        "                  [--crossover FILE]\n"
                        "                  [-o FILE] [-v] [FILE]\n",
                        opts};

/* The row bound of a program's sizes: the knob, or its context (the rows of
 * the states it writes by position), at most 512. */
static int rows_of(const Opts *o, const Stream *st)
{
    if (o->rows)
        return (int)o->rows;
    return st->ctx > 0 && st->ctx < 512 ? (int)st->ctx : 512;
}

/* Every program's plan into f; 0 or EXIT_INPUT. */
static int fuse_stream(Arena *a, Stream *st, const FuseOpts *fo, FILE *f)
{
    for (int k = 0; k < st->nprogs; k++) {
        if (st->plans[k]) {
            diag_file(st->src, "the input is already a plan: logos-fuse reads programs");
            return EXIT_INPUT;
        }
        Plan *pl = fuse(a, st->progs[k], st->graphs[k], fo);
        if (!pl)
            return EXIT_INPUT;
        plan_print(f, pl);
    }
    return 0;
}

/* The crossovers the flags leave open, from the table of times; -v says
 * which and why. */
static int crossovers(Arena *a, Opts *o)
{
    Crossover c;
    int s = crossover_read(a, o->crossover, o->f.numerics, &c);
    if (s)
        return s;
    if (!o->mmv_rows)
        o->f.mmv_rows = c.mmv.rows;
    if (!o->mma_rows)
        o->f.mma_rows = c.mma.rows;
    if (!o->mmi_rows)
        o->f.mmi_table = c.mmi.rows;
    if (o->f.verbose)
        crossover_say(&c);
    return 0;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-fuse";
    Opts o = {0};
    int nargs, s = opt_parse(&cli, &o, argc, argv, &nargs);
    if (s)
        return s == OPT_DONE ? stdout_done(EXIT_OK) : s;
    if (nargs > 1) {
        diag("one program stream at a time");
        return EXIT_USAGE;
    }
    Arena *a = arena_new();
    Stream st = {0};
    s = stream_load(a, nargs ? argv[1] : "-", &st);
    if (!s)
        s = stream_phases(&st);
    o.f.numerics = o.numerics == 0 ? NUM_Q8X2 : o.numerics == 1 ? NUM_Q8 : NUM_PRECISE;
    o.f.fuse_quant = !o.no_fuse_quant && o.f.numerics != NUM_PRECISE;
    o.f.lane_rules = !o.no_lane_rules;
    o.f.rows = rows_of(&o, &st);
    o.f.sms = o.sms ? (int)o.sms : 132;
    o.f.mma_rows = (int)o.mma_rows;
    o.f.mmv_rows = (int)o.mmv_rows;
    o.f.latent_rows = (int)o.latent_rows;
    o.f.mmh_rows = (int)o.mmh_rows;
    o.f.xr_rows = (int)o.xr_rows;
    o.f.mmi_rows = (int)o.mmi_rows;
    o.f.preload_kb = (int)o.preload_kb;
    o.f.verbose &= !o.quiet;
    if (!s && o.crossover)
        s = crossovers(a, &o);
    char *text;
    size_t len;
    FILE *mem = mem_stream(&text, &len);
    if (!mem)
        s = EXIT_SYSTEM;
    if (!s)
        s = fuse_stream(a, &st, &o.f, mem);
    if (mem)
        fclose(mem);
    if (!s)   /* whole or nothing */
        s = outfile_whole(o.out, text, len);
    free(text);
    arena_free(a);
    return stdout_done(s);
}
