/* logos-bench — times decode steps of a program stream and prints the
 * bytes of weights each step reads against the time it took: a table, or
 * CSV or JSON. Without a GPU lane it times the CPU reference. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "logos.h"

typedef struct Opts {
    const char *input;
    WeightsArg w;
    long steps, pos;
    int fmt;   /* 0 table, 1 csv, 2 json */
    double ceiling;
} Opts;

static const Opt opts[] = {
    {.arg = "FILE", .help = "a program stream with a decode step (stdin when absent)"},
    WEIGHTS_OPTS(Opts, w),
    {.s = 'n', .kind = OPT_LONG, .at = offsetof(Opts, steps), .arg = "STEPS", .lo = 1, .hi = 1000000,
     .help = "decode steps timed (default 8), after one untimed step"},
    {.l = "pos", .kind = OPT_LONG, .at = offsetof(Opts, pos), .arg = "P", .lo = 1, .hi = 1000000000,
     .help = "the position of the first step (default 1)"},
    {.l = "ceiling", .kind = OPT_NUM, .at = offsetof(Opts, ceiling), .arg = "GBPS", .lo = 1e-3, .hi = 1e6,
     .help = "the read bandwidth to compare with (GB/s)"},
    {.l = "csv", .kind = OPT_FLAG, .at = offsetof(Opts, fmt), .lo = 1, .help = "CSV output"},
    {.l = "json", .kind = OPT_FLAG, .at = offsetof(Opts, fmt), .lo = 2, .help = "JSON output"},
    {0},
};
static const Cli cli = {"usage: logos-bench (--weights DIR | --synthetic SEED) [-n STEPS] [--pos P]\n"
                        "                   [--ceiling GBPS] [--csv | --json] [FILE]\n",
                        opts};

static int options(int argc, char **argv, Opts *o)
{
    o->steps = 8;
    o->pos = 1;
    int n, st = opt_parse(&cli, o, argc, argv, &n);
    if (st)
        return st;
    if (n > 1) {
        diag("one program stream at a time");
        return EXIT_USAGE;
    }
    o->input = n ? argv[1] : "-";
    return weights_given(&o->w);
}

/* Bytes of weights the step programs declare (each weight counted once). */
static double step_bytes(Env *env, const Stream *st)
{
    double bytes = 0;
    int n;
    const Decl **w = prog_weights(st->a, st->progs, st->nprogs, &n);
    for (int i = 0; i < n; i++) {
        const Buf *b = env_get(env, w[i]->name);
        bytes += b->base == T_Q8 ? (double)b->n * (1 + 2.0 / Q8_BLOCK) : (double)b->n * 4;
    }
    return bytes;
}

/* The stream: decode-step programs only. */
static int load(Arena *a, const char *path, Stream *st)
{
    if (stream_load(a, path, st) || run_plan(st))
        return EXIT_INPUT;
    if (!st->has[PH_STEP] || st->has[PH_CHUNK]) {
        diag_file(st->src, "logos-bench times decode steps: give a stream of decode-step programs only");
        return EXIT_INPUT;
    }
    return 0;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void report(const Opts *o, const char *model, double bytes, double secs)
{
    double ms = 1e3 * secs / o->steps, gbps = bytes / (secs / o->steps) / 1e9;
    char frac[32] = "-", pct[32] = "-";
    if (o->ceiling) {   /* no ceiling given: no fraction of it */
        snprintf(frac, sizeof frac, "%.4f", gbps / o->ceiling);
        snprintf(pct, sizeof pct, "%.1f%%", 100 * gbps / o->ceiling);
    }
    if (o->fmt == 1) {
        printf("model,lane,steps,ms_per_step,weight_bytes,gb_per_s,fraction_of_ceiling\n");
        printf("%s,cpu,%ld,%.4f,%.0f,%.4f,%s\n", model, o->steps, ms, bytes, gbps, o->ceiling ? frac : "");
    } else if (o->fmt == 2) {
        printf("{\"model\": \"%s\", \"lane\": \"cpu\", \"steps\": %ld, \"ms_per_step\": %.4f, "
               "\"weight_bytes\": %.0f, \"gb_per_s\": %.4f, \"fraction_of_ceiling\": %s}\n",
               model, o->steps, ms, bytes, gbps, o->ceiling ? frac : "null");
    } else {
        printf("%-24s %-5s %6s %12s %14s %10s %8s\n", "model", "lane", "steps", "ms/step", "weight bytes", "GB/s",
               "ceiling");
        printf("%-24s %-5s %6ld %12.4f %14.0f %10.3f %8s\n", model, "cpu", o->steps, ms, bytes, gbps, pct);
    }
}

int main(int argc, char **argv)
{
    diag_tool = "logos-bench";
    Arena *a = arena_new();
    Opts o = {0};
    Stream st = {0};
    int s = options(argc, argv, &o);
    if (s == OPT_DONE) {
        arena_free(a);
        return stdout_done(EXIT_OK);
    }
    diag_progress = 1;
    if (!s)
        s = load(a, o.input, &st);
    Env *env = env_new();
    if (!s)
        s = stream_bind(&st, env, &o.w);
    if (!s && st.ctx > 0 && o.pos + o.steps > st.ctx) {
        diag("steps at positions %ld to %ld are past the %ld positions the states hold", o.pos, o.pos + o.steps,
             st.ctx);
        s = EXIT_INPUT;
    }
    int32_t tok = 1;
    if (!s)
        s = run_step(&st, env, tok, (int32_t)o.pos, &tok);   /* untimed: first touches */
    double t0 = now();
    for (int k = 1; !s && k <= o.steps; k++)
        s = run_step(&st, env, tok, (int32_t)(o.pos + k), &tok);
    double secs = now() - t0;
    if (!s)
        report(&o, st.progs[0]->model, step_bytes(env, &st), secs);
    env_free(env);
    stream_close(&st);
    arena_free(a);
    return stdout_done(s);
}
