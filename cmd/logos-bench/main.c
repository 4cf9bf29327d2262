/* logos-bench — times the decode step of a plan (or of a program stream,
 * fused with logos-fuse's defaults) at one or more positions: the bytes the
 * step must read against the read ceiling it measures itself, the step's
 * time over many graph replays, each launch alone, and the gap between;
 * a table, CSV, JSON or an SVG roofline. --compare times a second plan in
 * the same run. On the CPU it times the reference and says so. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "logos.h"

typedef struct Opts {
    const char *input, *compare, *svg;
    WeightsArg w;
    long reps, launch_reps, pos[16];
    int npos, fmt, device;   /* fmt: 0 table, 1 csv, 2 json */
    double ceiling;
} Opts;

static int pos_opt(void *field, const char *flag, const char *value)
{
    Opts *o = field;
    if (o->npos == 16) {
        diag("at most 16 positions");
        return EXIT_USAGE;
    }
    return arg_long(flag, value, 1, 1 << 24, &o->pos[o->npos++]);
}

static const Opt opts[] = {
    {.arg = "FILE", .help = "a plan or program stream with a decode step (stdin when absent)"},
    WEIGHTS_OPTS(Opts, w),
    {.l = "pos", .kind = OPT_CALL, .fn = pos_opt, .arg = "P",
     .help = "the position the step is timed at (default 512, or the context); again for more"},
    {.s = 'n', .kind = OPT_LONG, .at = offsetof(Opts, reps), .arg = "REPLAYS", .lo = 1, .hi = 1000000,
     .help = "timed steps at each position (default 100 on the GPU, 4 on the CPU)"},
    {.l = "launch-reps", .kind = OPT_LONG, .at = offsetof(Opts, launch_reps), .arg = "N", .lo = 1, .hi = 10000,
     .help = "timings of each launch alone (default 20)"},
    {.l = "compare", .kind = OPT_STR, .at = offsetof(Opts, compare), .arg = "PLAN2",
     .help = "time a second plan in the same run and print the ratio"},
    {.l = "device", .kind = OPT_WORD, .at = offsetof(Opts, device), .arg = "D", .what = "auto cuda cpu",
     .help = "auto (the GPU when a driver answers, the default), cuda or cpu"},
    {.l = "ceiling", .kind = OPT_NUM, .at = offsetof(Opts, ceiling), .arg = "GBPS", .lo = 1e-3, .hi = 1e6,
     .help = "compare with this read bandwidth (GB/s) instead of the measured one"},
    {.l = "csv", .kind = OPT_FLAG, .at = offsetof(Opts, fmt), .lo = 1, .help = "CSV output"},
    {.l = "json", .kind = OPT_FLAG, .at = offsetof(Opts, fmt), .lo = 2, .help = "JSON output"},
    {.l = "svg", .kind = OPT_STR, .at = offsetof(Opts, svg), .arg = "FILE",
     .help = "draw every launch on a roofline into FILE (SVG)"},
    {0},
};
static const Cli cli = {"usage: logos-bench (--weights DIR | --synthetic SEED) [--pos P]... [-n REPLAYS]\n"
                        "                   [--compare PLAN2] [--device D] [--ceiling GBPS]\n"
                        "                   [--csv | --json] [--svg FILE] [FILE]\n",
                        opts};

static int options(int argc, char **argv, Opts *o)
{
    int n, st = opt_parse(&cli, o, argc, argv, &n);
    if (st)
        return st;
    if (n > 1) {
        diag("one plan at a time (a second one: --compare PLAN2)");
        return EXIT_USAGE;
    }
    o->input = n ? argv[1] : "-";
    return weights_given(&o->w);
}

/* A stream of decode steps alone, and its lane. */
static int load(Arena *a, const char *path, const Opts *o, Stream *st)
{
    if (stream_load(a, path, st) || stream_phases(st))
        return EXIT_INPUT;
    if (!st->has[PH_STEP] || st->has[PH_CHUNK]) {
        diag_file(st->src, "logos-bench times decode steps: give a plan or stream of decode-step programs only");
        return EXIT_INPUT;
    }
    FuseOpts fo;
    fuse_defaults(&fo, st->ctx);
    int s;
    Lane *lane = lane_choose(st, o->device, &fo, 1, &s);   /* the table says which lane ran */
    fo.quiet = 1;
    for (int k = 0; lane && k < st->nprogs; k++)   /* plans count the bytes on the CPU too, where the lane has kernels */
        if (!st->plans[k])
            st->plans[k] = fuse(st->a, st->progs[k], st->graphs[k], &fo);
    return lane ? stream_open(st, lane, &o->w) : s;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int on_gpu(const Stream *st)
{
    return !strcmp(st->lane->name, "cuda");
}

/* A program's weights' bytes, each once, when it runs on the CPU unfused. */
static double prog_step_bytes(const Prog *p, StrMap *seen)
{
    double bytes = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_WEIGHT || strmap_get(seen, d->name) >= 0)
            continue;
        strmap_put(seen, d->name, 1);
        bytes += (double)etype_bytes(d->base == T_Q8 ? ET_Q8 : ET_F32, d->count);
    }
    return bytes;
}

/* The CPU reference's step times at a position. */
static int cpu_times(Stream *st, long pos, int reps, double *ms)
{
    int32_t tok = 1;
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        int s = run_step(st, tok, (int32_t)pos, &tok);
        if (s)
            return s;
        ms[i] = (now() - t0) * 1e3;
    }
    return 0;
}

/* Every launch of the step's plans, each alone, in order. */
static int launches(Arena *a, Stream *st, BenchPos *b, int reps)
{
    int n = 0;
    for (int k = 0; k < st->nprogs; k++)
        n += phase_is(st, k, PH_STEP) ? st->plans[k]->nls : 0;
    b->lk = arena_alloc(a, sizeof *b->lk * (size_t)(n + 1));
    b->li = arena_alloc(a, sizeof *b->li * (size_t)(n + 1));
    b->launch_ms = arena_alloc(a, sizeof *b->launch_ms * (size_t)(n + 1));
    b->launch_reps = reps;
    for (int k = 0; k < st->nprogs; k++) {
        if (!phase_is(st, k, PH_STEP))
            continue;
        int s = cuda_launch_times(st->lane, st, k, reps, b->launch_ms + b->nlaunch);
        if (s)
            return s;
        for (int i = 0; i < st->plans[k]->nls; i++, b->nlaunch++) {
            b->lk[b->nlaunch] = k;
            b->li[b->nlaunch] = i;
        }
    }
    return 0;
}

static int measure_pos(Arena *a, BenchRun *r, long pos, const Opts *o, BenchPos *b)
{
    Stream *st = r->st;
    StrMap *seen = strmap_new(a);
    b->pos = pos;
    for (int k = 0; k < st->nprogs; k++)
        if (phase_is(st, k, PH_STEP))
            b->bytes += st->plans[k] ? plan_step_bytes(st->plans[k], pos, seen) : prog_step_bytes(st->progs[k], seen);
    int gpu = on_gpu(st);
    b->reps = (int)(o->reps ? o->reps : gpu ? 100 : 4);
    b->ms = arena_alloc(a, sizeof *b->ms * (size_t)b->reps);
    int s = gpu ? cuda_step_times(st->lane, st, pos, b->reps, b->ms) : cpu_times(st, pos, b->reps, b->ms);
    if (!s && gpu)
        s = launches(a, st, b, (int)(o->launch_reps ? o->launch_reps : 20));
    bench_summarize(b);
    return s;
}

static int measure(Arena *a, BenchRun *r, const Opts *o)
{
    long ctx = r->st->ctx;
    long def = ctx > 0 && ctx < 512 ? ctx : 512;
    int np = o->npos ? o->npos : 1;
    r->ps = arena_alloc(a, sizeof *r->ps * (size_t)np);
    for (int p = 0; p < np; p++) {
        long pos = o->npos ? o->pos[p] : def;
        if (ctx > 0 && pos > ctx) {
            diag("position %ld is past the %ld positions the states hold", pos, ctx);
            return EXIT_INPUT;
        }
        int s = measure_pos(a, r, pos, o, &r->ps[r->nps++]);
        if (s)
            return s;
    }
    const Plan *pl = r->st->plans[0];
    r->numerics = pl ? pl->numerics : NUM_PRECISE;
    r->fuse_quant = pl ? pl->fuse_quant : 0;
    return 0;
}

static int head(const Stream *st, const Opts *o, BenchHead *h)
{
    h->ceiling = o->ceiling;
    if (!on_gpu(st))
        return 0;
    h->gpu = lane_cuda_device(st->lane, &h->sms);
    double measured;
    int s = cuda_ceiling(st->lane, &measured, &h->buffer_gb);
    if (!o->ceiling)
        h->ceiling = measured;
    return s;
}

static int report(const BenchRun *r, int nr, const BenchHead *h, const Opts *o)
{
    if (o->fmt == 1)
        bench_csv(stdout, r, nr, h);
    else if (o->fmt == 2)
        bench_json(stdout, r, nr, h);
    else
        bench_table(stdout, r, nr, h);
    if (!o->svg)
        return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    bench_svg(mem, r, nr, h);
    fclose(mem);
    int s = outfile_whole(o->svg, text, len);
    free(text);
    return s;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-bench";
    Arena *a = arena_new();
    Opts o = {0};
    Stream st[2] = {{0}};
    BenchRun runs[2] = {{.label = NULL}};
    BenchHead h = {0};
    int nr = 1, s = options(argc, argv, &o);
    if (s == OPT_DONE) {
        arena_free(a);
        return stdout_done(EXIT_OK);
    }
    diag_progress = 1;
    runs[0] = (BenchRun){.label = o.input, .st = &st[0]};
    if (o.compare) {
        runs[1] = (BenchRun){.label = o.compare, .st = &st[1]};
        nr = 2;
    }
    for (int i = 0; !s && i < nr; i++)
        s = load(a, runs[i].label, &o, runs[i].st);
    if (!s)
        s = head(&st[0], &o, &h);
    for (int i = 0; !s && i < nr; i++)
        s = measure(a, &runs[i], &o);
    if (!s)
        s = report(runs, nr, &h, &o);
    for (int i = 0; i < nr; i++)
        stream_close(&st[i]);
    arena_free(a);
    return stdout_done(s);
}
