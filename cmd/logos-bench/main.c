/* logos-bench — times decode steps of a program stream and prints the
 * bytes of weights each step reads against the time it took: a table, or
 * CSV or JSON. Without a GPU lane it times the CPU reference. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-bench (--weights DIR | --synthetic SEED) [-n STEPS] [--pos P]\n"
    "                   [--ceiling GBPS] [--csv | --json] [FILE]\n"
    "  FILE              a program stream with a decode step (stdin when absent)\n"
    "  -n STEPS          decode steps timed (default 8), after one untimed step\n"
    "  --pos P           the position of the first step (default 1)\n"
    "  --ceiling GBPS    the read bandwidth to compare with (GB/s)\n"
    "  --csv, --json     machine-readable output\n"
    "  -h                this help\n";

typedef struct Opts {
    const char *input;
    WeightsArg w;
    int steps, pos, fmt;   /* fmt: 0 table, 1 csv, 2 json */
    double ceiling;
} Opts;

static int number(const char *flag, const char *v, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (!*v || *end || errno || x < lo || x > hi) {
        diag("%s takes a number from %g to %g, not '%s'", flag, lo, hi, v);
        return EXIT_USAGE;
    }
    *out = x;
    return 0;
}

/* -n, --pos, --ceiling; 0 or EXIT_USAGE. */
static int value_option(const char *f, const char *arg, Opts *o)
{
    long v;
    if (!strcmp(f, "-n")) {
        if (arg_long(f, arg, 1, 1000000, &v))
            return EXIT_USAGE;
        o->steps = (int)v;
    } else if (!strcmp(f, "--pos")) {
        if (arg_long(f, arg, 1, 1000000000, &v))
            return EXIT_USAGE;
        o->pos = (int)v;
    } else if (!strcmp(f, "--ceiling")) {
        if (number(f, arg, 1e-3, 1e6, &o->ceiling))
            return EXIT_USAGE;
    } else {
        diag("unknown option '%s'", f);
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    return 0;
}

static int options(int argc, char **argv, Opts *o)
{
    int i = 1;
    o->steps = 8;
    o->pos = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *f = argv[i], *arg = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(f, "-h") || !strcmp(f, "--help")) {
            fputs(usage, stdout);
            exit(EXIT_OK);
        } else if (!strcmp(f, "--csv") || !strcmp(f, "--json")) {
            o->fmt = f[2] == 'c' ? 1 : 2;
            continue;
        }
        if (!arg) {
            diag("%s needs a value", f);
            return EXIT_USAGE;
        }
        int took = weights_option(f, arg, &o->w);
        if (took < 0)
            return EXIT_USAGE;
        if (!took && value_option(f, arg, o))
            return EXIT_USAGE;
        i++;
    }
    o->input = i < argc ? argv[i] : "-";
    if (argc - i > 1) {
        diag("one program stream at a time");
        return EXIT_USAGE;
    }
    return weights_given(&o->w);
}

/* Bytes of weights the step programs declare (each weight counted once). */
static double step_bytes(const Stream *st)
{
    double bytes = 0;
    int n;
    const Decl **w = prog_weights(st->a, st->progs, st->nprogs, &n);
    for (int i = 0; i < n; i++)
        bytes += w[i]->base == T_Q8 ? (double)w[i]->count * (1 + 2.0 / Q8_BLOCK) : (double)w[i]->count * 4;
    return bytes;
}

/* The stream: decode-step programs only. */
static int load(Arena *a, const char *path, Stream *st)
{
    if (stream_load(a, path, st) || stream_phases(st))
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
        printf("%s,cpu,%d,%.4f,%.0f,%.4f,%s\n", model, o->steps, ms, bytes, gbps, o->ceiling ? frac : "");
    } else if (o->fmt == 2) {
        printf("{\"model\": \"%s\", \"lane\": \"cpu\", \"steps\": %d, \"ms_per_step\": %.4f, "
               "\"weight_bytes\": %.0f, \"gb_per_s\": %.4f, \"fraction_of_ceiling\": %s}\n",
               model, o->steps, ms, bytes, gbps, o->ceiling ? frac : "null");
    } else {
        printf("%-24s %-5s %6s %12s %14s %10s %8s\n", "model", "lane", "steps", "ms/step", "weight bytes", "GB/s",
               "ceiling");
        printf("%-24s %-5s %6d %12.4f %14.0f %10.3f %8s\n", model, "cpu", o->steps, ms, bytes, gbps, pct);
    }
}

int main(int argc, char **argv)
{
    diag_tool = "logos-bench";
    Arena *a = arena_new();
    Opts o = {0};
    Stream st = {0};
    int s = options(argc, argv, &o);
    if (!s)
        s = load(a, o.input, &st);
    if (!s)
        s = stream_open(&st, lane_cpu(), &o.w);
    if (!s && st.ctx > 0 && o.pos + o.steps > st.ctx) {
        diag("steps at positions %d to %d are past the %ld positions the states hold", o.pos, o.pos + o.steps,
             st.ctx);
        s = EXIT_INPUT;
    }
    int32_t tok = 1;
    if (!s)
        s = run_step(&st, tok, o.pos, &tok);   /* untimed: first touches */
    double t0 = now();
    for (int k = 1; !s && k <= o.steps; k++)
        s = run_step(&st, tok, o.pos + k, &tok);
    double secs = now() - t0;
    if (!s)
        report(&o, st.progs[0]->model, step_bytes(&st), secs);
    stream_close(&st);
    arena_free(a);
    return stdout_done(s);
}
