/* logos-bench — times a form of a plan (or of a program stream, fused
 * with logos-fuse's defaults): a decode step (--form step, the default), a
 * prefill chunk (--form prefill --chunk T) or a batch of decode steps
 * (--form decode_batch --batch B), at one or more positions. The bytes a
 * run must read against the read ceiling it measures itself, the ops of
 * its Q8_0 products against the tensor-core rate it measures too (chunks
 * and batches), the run's time over many graph replays, each launch alone,
 * and the gap between; a table, CSV, JSON or an SVG roofline. --compare
 * times a second plan in the same run. On the CPU it times the reference
 * and says so. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Opts {
    const char *input, *compare, *svg, *timeline, *blocks;
    WeightsArg w;
    long reps, launch_reps, pos[16], chunk, batch;
    int npos, fmt, device, form;   /* fmt: 0 table, 1 csv, 2 json; form: enum BenchFormKind */
    int csv, json;                 /* the flags that set fmt */
    double ceiling, tensor;
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
    {.arg = "FILE", .help = "a plan or program stream with the form timed (stdin when absent)"},
    WEIGHTS_OPTS(Opts, w),
    {.l = "form", .kind = OPT_WORD, .at = offsetof(Opts, form), .arg = "F", .what = "step prefill decode_batch",
     .help = "what is timed: step (a decode step, the default), prefill\n"
             "(a chunk) or decode_batch (a batch of decode steps)"},
    {.l = "chunk", .kind = OPT_LONG, .at = offsetof(Opts, chunk), .arg = "T", .lo = 1, .hi = 65536,
     .help = "the prefill chunk's tokens, 1 to 65536 (default: the plan's rows)"},
    {.l = "batch", .kind = OPT_LONG, .at = offsetof(Opts, batch), .arg = "B", .lo = 1, .hi = 256,
     .help = "the batch's sequences, 1 to 256 (default: the stream's)"},
    {.l = "pos", .kind = OPT_CALL, .fn = pos_opt, .arg = "P",
     .help = "the position timed at, a chunk's first row (default 512, or the\n"
             "context when it holds fewer; 1 for a chunk); again for more"},
    {.s = 'n', .kind = OPT_LONG, .at = offsetof(Opts, reps), .arg = "REPLAYS", .lo = 1, .hi = 1000000,
     .help = "timed runs at each position (default 100 on the GPU, 4 on the CPU)"},
    {.l = "launch-reps", .kind = OPT_LONG, .at = offsetof(Opts, launch_reps), .arg = "N", .lo = 1, .hi = 10000,
     .help = "timings of each launch alone (default 20)"},
    {.l = "compare", .kind = OPT_STR, .at = offsetof(Opts, compare), .arg = "PLAN2",
     .help = "time a second plan in the same run and print the ratio"},
    {.l = "device", .kind = OPT_WORD, .at = offsetof(Opts, device), .arg = "D", .what = "auto cuda cpu",
     .help = "auto (the GPU when a driver answers, the default), cuda or cpu"},
    {.l = "ceiling", .kind = OPT_NUM, .at = offsetof(Opts, ceiling), .arg = "GBPS", .lo = 1e-3, .hi = 1e6,
     .help = "compare with this read bandwidth (GB/s) instead of the measured one"},
    {.l = "tensor-rate", .kind = OPT_NUM, .at = offsetof(Opts, tensor), .arg = "TOPS", .lo = 1e-6, .hi = 1e6,
     .help = "compare a chunk or a batch with this int8 rate (TOP/s)\n"
             "instead of the measured one"},
    {.l = "csv", .kind = OPT_FLAG, .at = offsetof(Opts, csv), .help = "CSV output"},
    {.l = "json", .kind = OPT_FLAG, .at = offsetof(Opts, json), .help = "JSON output"},
    {.l = "svg", .kind = OPT_STR, .at = offsetof(Opts, svg), .arg = "FILE",
     .help = "draw every launch on a roofline into FILE (SVG)"},
    {.l = "timeline", .kind = OPT_STR, .at = offsetof(Opts, timeline), .arg = "FILE",
     .help = "write when each launch's blocks started, waited and ended in\n"
             "one replay into FILE (CSV; the kernels carry the marks)"},
    {.l = "timeline-blocks", .kind = OPT_STR, .at = offsetof(Opts, blocks), .arg = "FILE",
     .help = "the same replay a row a block (its multiprocessor, start,\n"
             "wait, end) into FILE (CSV)"},
    {0},
};
static const Cli cli = {"usage: logos-bench (--weights DIR | --synthetic SEED) [--form F] [--chunk T | --batch B]\n"
                        "                   [--pos P]... [-n REPLAYS] [--compare PLAN2] [--device D]\n"
                        "                   [--ceiling GBPS] [--tensor-rate TOPS] [--csv | --json] [--svg FILE]\n"
                        "                   [--timeline FILE] [--timeline-blocks FILE] [FILE]\n",
                        opts};

/* Whether the kernels carry the timeline's marks: --timeline or --timeline-blocks. */
static int marked(const Opts *o)
{
    return o->timeline || o->blocks;
}

static int options(int argc, char **argv, Opts *o)
{
    int n, st = opt_parse(&cli, o, argc, argv, &n);
    if (st)
        return st;
    if (n > 1) {
        diag("one plan at a time (a second one: --compare PLAN2)");
        return EXIT_USAGE;
    }
    if (o->chunk && o->form != BF_PREFILL) {
        diag("--chunk is for --form prefill");
        return EXIT_USAGE;
    }
    if (o->batch && o->form != BF_BATCH) {
        diag("--batch is for --form decode_batch");
        return EXIT_USAGE;
    }
    if (o->csv && o->json) {
        diag("--csv or --json: one output format");
        return EXIT_USAGE;
    }
    o->fmt = o->csv ? 1 : o->json ? 2 : 0;
    o->input = n ? argv[1] : "-";
    return weights_given(&o->w);
}

/* A stream that holds the form, its plans (made for the chunk's rows) and
 * its lane; the form's rows from the first stream when not given. */
static int load(Arena *a, const char *path, const Opts *o, BenchForm *f, Stream *st)
{
    if (stream_load(a, path, st) || stream_phases(st) || bench_holds(st, f->form))
        return EXIT_INPUT;
    FuseOpts fo;
    fuse_defaults(&fo, st->ctx);
    if (f->form == BF_PREFILL && f->rows)
        fo.rows = (int)f->rows;
    int s;
    Lane *lane = lane_choose(st, o->device, &fo, 1, &s);   /* the table says which lane ran */
    fo.quiet = 1;
    for (int k = 0; lane && k < st->nprogs; k++)   /* plans count the bytes on the CPU too, where the lane has kernels */
        if (!st->plans[k])
            st->plans[k] = fuse(st->a, st->progs[k], st->graphs[k], &fo);
    if (lane && (s = bench_fits(st, f, fo.rows))) {
        lane->close(lane);
        return s;
    }
    if (lane && marked(o) && strcmp(lane->name, "cuda")) {
        diag("%s needs the GPU: %s runs on the %s", o->timeline ? "--timeline" : "--timeline-blocks", path,
             lane->name);
        lane->close(lane);
        return EXIT_SYSTEM;
    }
    if (lane && marked(o) && (s = cuda_timeline_on(lane))) {
        lane->close(lane);
        return s;
    }
    return lane ? stream_open(st, lane, &o->w) : s;
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

/* Every launch of the phase's plans, each alone, in order. */
static int launches(Arena *a, Stream *st, int ph, BenchPos *b, int reps)
{
    int n = 0;
    for (int k = 0; k < st->nprogs; k++)
        n += phase_is(st, k, ph) ? st->plans[k]->nls : 0;
    b->lk = arena_alloc(a, sizeof *b->lk * (size_t)(n + 1));
    b->li = arena_alloc(a, sizeof *b->li * (size_t)(n + 1));
    b->launch_ms = arena_alloc(a, sizeof *b->launch_ms * (size_t)(n + 1));
    b->launch_reps = reps;
    for (int k = 0; k < st->nprogs; k++) {
        if (!phase_is(st, k, ph))
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

/* The bytes and ops of the form's run at pos, counted from its plans. */
static void count(Stream *st, const BenchForm *f, BenchPos *b)
{
    StrMap *seen = strmap_new(st->a);
    BenchAt at = bench_at(b->pos, f->form == BF_PREFILL ? f->rows : 0);
    for (int k = 0; k < st->nprogs; k++) {
        if (!phase_is(st, k, bench_phase(f->form)))
            continue;
        b->bytes += st->plans[k] ? plan_step_bytes(st->plans[k], at, seen) : prog_step_bytes(st->progs[k], seen);
        b->ops += st->plans[k] ? plan_step_ops(st->plans[k], at) : 0;
    }
}

static int measure_pos(Arena *a, BenchRun *r, long pos, const Opts *o, const BenchForm *f, BenchPos *b)
{
    Stream *st = r->st;
    b->pos = pos;
    b->rows = f->rows;
    count(st, f, b);
    int gpu = on_gpu(st);
    b->reps = (int)(o->reps ? o->reps : gpu ? 100 : 4);
    b->ms = arena_alloc(a, sizeof *b->ms * (size_t)b->reps);
    int s = gpu ? cuda_form_times(st->lane, st, f, pos, b->reps, b->ms) : bench_cpu_times(st, f, pos, b->reps, b->ms);
    if (!s && gpu)
        s = launches(a, st, bench_phase(f->form), b, (int)(o->launch_reps ? o->launch_reps : 20));
    if (!s && gpu && marked(o))
        s = cuda_timeline(st->lane, st, f, b);
    bench_summarize(b);
    return s;
}

static int measure(Arena *a, BenchRun *r, const Opts *o, const BenchForm *f)
{
    long ctx = r->st->ctx;
    long def = f->form == BF_PREFILL ? 1 : ctx > 0 && ctx < 512 ? ctx : 512;
    int np = o->npos ? o->npos : 1;
    r->ps = arena_alloc(a, sizeof *r->ps * (size_t)np);
    for (int p = 0; p < np; p++) {
        long pos = o->npos ? o->pos[p] : def;
        int s = bench_pos_fits(r->st, f, pos);
        if (!s)
            s = measure_pos(a, r, pos, o, f, &r->ps[r->nps++]);
        if (s)
            return s;
    }
    while (!phase_is(r->st, r->prog, bench_phase(f->form)))
        r->prog++;
    const Plan *pl = r->st->plans[r->prog];
    r->numerics = pl ? pl->numerics : NUM_PRECISE;
    r->fuse_quant = pl ? pl->fuse_quant : 0;
    return 0;
}

/* The device and the rates the runs are measured against: the read
 * ceiling, and for a chunk or a batch the tensor cores' rate. */
static int head(const Stream *st, const Opts *o, BenchHead *h)
{
    h->form = o->form;
    h->ceiling = o->ceiling;
    h->tensor = o->form == BF_STEP ? 0 : o->tensor;
    if (!on_gpu(st))
        return 0;
    h->gpu = lane_cuda_device(st->lane, &h->sms);
    h->marks = marked(o);
    double measured;
    int s = cuda_ceiling(st->lane, &measured, &h->buffer_gb);
    if (!o->ceiling)
        h->ceiling = measured;
    if (!s && o->form != BF_STEP && !o->tensor)
        s = cuda_tensor_rate(st->lane, &h->tensor);
    return s;
}

/* What draw writes, into path whole (nothing there on failure). */
static int to_file(const char *path, void (*draw)(FILE *, const BenchRun *, int, const BenchHead *),
                   const BenchRun *r, int nr, const BenchHead *h)
{
    char *text;
    size_t len;
    FILE *mem = mem_stream(&text, &len);
    if (!mem)
        return EXIT_SYSTEM;
    draw(mem, r, nr, h);
    fclose(mem);
    int s = outfile_whole(path, text, len);
    free(text);
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
    int s = o->svg ? to_file(o->svg, bench_svg, r, nr, h) : 0;
    s = !s && o->timeline ? to_file(o->timeline, timeline_csv, r, nr, h) : s;
    return !s && o->blocks ? to_file(o->blocks, timeline_blocks_csv, r, nr, h) : s;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-bench";
    Arena *a = arena_new();
    Opts o = {0};
    Stream st[2] = {{0}};
    BenchRun runs[2] = {{.label = NULL}};
    BenchHead h = {0};
    BenchForm f = {0};
    int nr = 1, s = options(argc, argv, &o);
    if (s == OPT_DONE) {
        arena_free(a);
        return stdout_done(EXIT_OK);
    }
    diag_progress = 1;
    f = (BenchForm){o.form, o.form == BF_PREFILL ? o.chunk : o.batch};
    runs[0] = (BenchRun){.label = o.input, .st = &st[0]};
    if (o.compare) {
        runs[1] = (BenchRun){.label = o.compare, .st = &st[1]};
        nr = 2;
    }
    for (int i = 0; !s && i < nr; i++)
        s = load(a, runs[i].label, &o, &f, runs[i].st);
    if (!s)
        s = head(&st[0], &o, &h);
    for (int i = 0; !s && i < nr; i++)
        s = measure(a, &runs[i], &o, &f);
    if (!s)
        s = report(runs, nr, &h, &o);
    for (int i = 0; i < nr; i++)
        stream_close(&st[i]);
    arena_free(a);
    return stdout_done(s);
}
