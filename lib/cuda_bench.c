/* cuda_bench.c — logos-bench's measurements on the CUDA lane: the read
 * ceiling (a streaming read of a buffer far larger than the L2, timed by
 * events, the median of several), the tensor cores' int8 rate (mma.sync on
 * register operands in every warp of every multiprocessor, the median of
 * several), a form's time (its phase's plans replayed as their graphs, each
 * replay between two events, the inputs changing between replays), and each
 * launch alone (the L2 emptied by a streaming read before each timed
 * launch, so no launch is flattered by the last). */
#include <stdlib.h>
#include <string.h>

#include "cuda_lane.h"

/* The lane's bench.cu (readbw and mmarate), loaded on first use. */
static int bench_module(CudaLane *c)
{
    if (c->rd_kern >= 0)
        return 0;
    c->rd_kern = lane_kernel(c, lane_kernel_source("bench.cu", ""), "readbw", "bench.cu");
    int s = lane_load(c);
    if (s)
        return s;
    CK(cu.MemAlloc(&c->rd_sink, 16));
    return 0;
}

/* The read kernel's buffer, at least bytes long. */
static int reader(CudaLane *c, long bytes)
{
    int s = bench_module(c);
    if (s || c->rd_words * 16 >= bytes)
        return s;
    if (c->rd_buf)
        CK(cu.MemFree(c->rd_buf));
    c->rd_buf = 0;
    CK(cu.MemAlloc(&c->rd_buf, (size_t)bytes));
    CK(cu.MemsetD8(c->rd_buf, 1, (size_t)bytes));
    c->rd_words = bytes / 16;
    return 0;
}

static int read_once(CudaLane *c, long words)
{
    LParams p = {{(void *)(uintptr_t)c->rd_buf, (void *)(uintptr_t)words, (void *)(uintptr_t)c->rd_sink}};
    void *args[] = {&p};
    CK(cu.LaunchKernel(c->kerns[c->rd_kern].fn, (unsigned)(c->dev.sms * 8), 1, 1, 256, 1, 1, 0, c->stream, args,
                       NULL));
    return 0;
}

/* ms between two events around fn's work on the lane's stream. */
typedef int Work(CudaLane *c, void *arg);

static int timed(CudaLane *c, Work *fn, void *arg, double *ms)
{
    CUevent e0, e1;
    CK(cu.EventCreate(&e0, 0));
    CK(cu.EventCreate(&e1, 0));
    CK(cu.EventRecord(e0, c->stream));
    int s = fn(c, arg);
    if (s)
        return s;
    CK(cu.EventRecord(e1, c->stream));
    CK(cu.EventSynchronize(e1));
    float f;
    CK(cu.EventElapsedTime(&f, e0, e1));
    *ms = f;
    cu.EventDestroy(e0);
    cu.EventDestroy(e1);
    return 0;
}

static int read_all(CudaLane *c, void *arg)
{
    (void)arg;
    return read_once(c, c->rd_words);
}

int cuda_ceiling(Lane *l, double *gbs, double *buffer_gb)
{
    CudaLane *c = (CudaLane *)l;
    long bytes = 4L << 30;
    int s = reader(c, bytes);
    double ms[12];
    for (int i = 0; !s && i < 12; i++)
        s = timed(c, read_all, NULL, &ms[i]);
    if (s)
        return s;
    double m = bench_median(ms + 2, 10);   /* the first two warm the clocks */
    *gbs = (double)c->rd_words * 16 / (m * 1e-3) / 1e9;
    *buffer_gb = (double)c->rd_words * 16 / 1e9;
    return 0;
}

/* A round of one warp of mmarate: bench.cu's MMA_ACC (8) mma of 2 16 8 32 ops. */
#define ROUND_OPS (8.0 * 8192)

/* mmarate's launch: 4 blocks of 8 warps a multiprocessor, n rounds. */
typedef struct Rate {
    CUfunction fn;
    long blocks, rounds;
} Rate;

static int rate_once(CudaLane *c, void *arg)
{
    Rate *r = arg;
    LParams p = {{(void *)(uintptr_t)r->rounds, (void *)(uintptr_t)c->rd_sink}};
    void *args[] = {&p};
    CK(cu.LaunchKernel(r->fn, (unsigned)r->blocks, 1, 1, 256, 1, 1, 0, c->stream, args, NULL));
    return 0;
}

int cuda_tensor_rate(Lane *l, double *tops)
{
    CudaLane *c = (CudaLane *)l;
    Rate r = {NULL, (long)c->dev.sms * 4, 16384};
    int s = bench_module(c);
    if (s)
        return s;
    CK(cu.ModuleGetFunction(&r.fn, c->kerns[c->rd_kern].mod, "mmarate"));
    double ms[12];
    for (int i = 0; !s && i < 12; i++)
        s = timed(c, rate_once, &r, &ms[i]);
    if (s)
        return s;
    double m = bench_median(ms + 2, 10);   /* the first two warm the clocks */
    *tops = (double)r.blocks * 8 * (double)r.rounds * ROUND_OPS / (m * 1e-3) / 1e12;
    return 0;
}

typedef struct PhaseArg {
    Stream *st;
    int ph;
} PhaseArg;

static int phase_work(CudaLane *c, void *arg)
{
    (void)c;
    PhaseArg *a = arg;
    return run_phase(a->st, a->ph);
}

int cuda_form_times(Lane *l, Stream *st, const BenchForm *f, long pos, int reps, double *ms)
{
    CudaLane *c = (CudaLane *)l;
    PhaseArg a = {st, bench_phase(f->form)};
    for (int i = -5; i < reps; i++) {   /* five untimed: graphs made, clocks up */
        int s = bench_inputs(st, f, pos, i + 5);
        double t;
        if (!s)
            s = timed(c, phase_work, &a, &t);
        if (s)
            return s;
        if (i >= 0)
            ms[i] = t;
    }
    return 0;
}

typedef struct OneArg {
    Rt *rt;
    int i;
} OneArg;

static int one_work(CudaLane *c, void *arg)
{
    OneArg *o = arg;
    return lane_launch(c, o->rt, o->i, 0);
}

int cuda_launch_times(Lane *l, Stream *st, int k, int reps, double *ms)
{
    CudaLane *c = (CudaLane *)l;
    (void)st;
    int s = reader(c, 256L << 20);
    double *t = calloc((size_t)reps, sizeof *t);
    if (!t)
        return EXIT_SYSTEM;
    Rt *rt = &c->rt[k];
    for (int i = 0; !s && i < rt->pl->nls; i++) {
        OneArg a = {rt, i};
        for (int r = 0; !s && r < reps; r++) {
            s = read_once(c, (256L << 20) / 16);   /* the L2 emptied */
            if (!s)
                s = timed(c, one_work, &a, &t[r]);
        }
        if (!s)
            ms[i] = bench_median(t, reps);
    }
    free(t);
    return s;
}

/* ---- --timeline ---- */

enum { TL_ROOM = 1 << 21 };   /* records: 64 MB */

int cuda_timeline_on(Lane *l)
{
    CudaLane *c = (CudaLane *)l;
    uint64_t head[2] = {0, TL_ROOM};
    c->marks = 1;
    if (c->tl)
        return 0;
    CK(cu.MemAlloc(&c->tl, (size_t)(2 + 4L * TL_ROOM) * sizeof(uint64_t)));
    CK(cu.MemcpyHtoD(c->tl, head, sizeof head));
    return 0;
}

/* The records of one replay of the phase, after one untimed, into
 * st's arena. */
static int replay_marks(CudaLane *c, Stream *st, const BenchForm *f, long pos, TlRun *t)
{
    uint64_t zero = 0, taken;
    int ph = bench_phase(f->form), s = bench_inputs(st, f, pos, 0);
    if (!s)
        s = run_phase(st, ph);
    if (s)
        return s;
    CK(cu.StreamSynchronize(c->stream));
    CK(cu.MemcpyHtoD(c->tl, &zero, sizeof zero));
    if ((s = run_phase(st, ph)))
        return s;
    CK(cu.StreamSynchronize(c->stream));
    CK(cu.MemcpyDtoH(&taken, c->tl, sizeof taken));
    if (taken > TL_ROOM) {
        diag("--timeline: a replay at position %ld ran %llu blocks, past the %d records kept", pos,
             (unsigned long long)taken, TL_ROOM);
        return EXIT_SYSTEM;
    }
    t->n = (long)taken;
    t->recs = arena_alloc(st->a, (size_t)(4 * t->n + 1) * sizeof *t->recs);
    t->which = arena_alloc(st->a, (size_t)(t->n + 1) * sizeof *t->which);
    CK(cu.MemcpyDtoH(t->recs, c->tl + 2 * sizeof(uint64_t), (size_t)(4 * t->n) * sizeof *t->recs));
    return 0;
}

int cuda_timeline(Lane *l, Stream *st, const BenchForm *f, BenchPos *b)
{
    CudaLane *c = (CudaLane *)l;
    int nl = b->nlaunch;
    TlRun *t = arena_alloc(st->a, sizeof *t);
    t->span = arena_alloc(st->a, sizeof *t->span * (size_t)(nl + 1));
    int s = replay_marks(c, st, f, b->pos, t);
    if (s)
        return s;
    int *kid = arena_alloc(st->a, sizeof *kid * (size_t)(nl + 1));
    long *blocks = arena_alloc(st->a, sizeof *blocks * (size_t)(nl + 1));
    for (int j = 0; j < nl; j++) {
        const PLaunch *pl = &c->rt[b->lk[j]].pl->ls[b->li[j]];
        kid[j] = c->rt[b->lk[j]].kern[b->li[j]];
        blocks[j] = pl->grid[0] * pl->grid[1] * pl->grid[2];
    }
    long bad = timeline_spans(t, kid, blocks, nl);
    if (bad >= 0 && bad < nl)
        diag("--timeline: the replay at position %ld did not record the %ld blocks of the launch at line %d (%ld "
             "records in all)",
             b->pos, blocks[bad], c->rt[b->lk[bad]].pl->ls[b->li[bad]].line, t->n);
    else if (bad == nl)
        diag("--timeline: the replay at position %ld left records no launch of the plan accounts for", b->pos);
    if (bad >= 0)
        return EXIT_SYSTEM;
    b->tl = t;
    return 0;
}
