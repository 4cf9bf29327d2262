/* cuda_tp.c — a split stream on GPUs (man5/logos-placement.5): each chip is
 * a CUDA lane of its own (cuda_lane.c) on its GPU, driven by a thread of its
 * own with its context current there, its stream, its part of the weights
 * (bound from the whole files, or synthesized as the whole's values) and
 * its NCCL communicator; the plan's collectives are NCCL calls on the
 * chip's stream, between its launches, captured into its graph with them.
 * The seam's calls (bind, put, run, fetch) go to every chip's thread at
 * once and return when all are done; fetch reads chip 0's outputs, which
 * are every chip's. One process drives all the chips (ncclCommInitAll), or
 * one chip of a split stream whose other chips are other processes, on
 * this host or others (--rank: ncclCommInitRank). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_lane.h"

/* ---- the collectives inside a chip's plan ---- */

static int coll(CudaLane *c, Rt *rt, const PColl *cl)
{
    CUdeviceptr x = rt->ptr[cl->x], y = rt->ptr[cl->y];
    if (cl->op == OP_ALLREDUCE)
        return nccl_allreduce(c->comm, x, y, cl->rows * cl->cols, c->stream);
    return nccl_allgather(c->comm, x, y, cl->rows, cl->cols, c->chips ? c->chips : 1, c->stream);
}

int lane_step(CudaLane *c, Rt *rt, int i, int pdl)
{
    const Plan *pl = rt->pl;
    int joined = 0;
    for (int j = 0; j < pl->ncs; j++)
        if (pl->cs[j].at == i) {
            int s = coll(c, rt, &pl->cs[j]);
            if (s)
                return s;
            joined = 1;
        }
    return i < pl->nls ? lane_launch(c, rt, i, pdl && !joined) : 0;
}

/* ---- the chips' threads ---- */

enum Do { DO_OPEN, DO_JOIN, DO_BIND, DO_PUT, DO_RUN, DO_FETCH, DO_CLOSE };

typedef struct Job {
    int what;            /* enum Do */
    int only;            /* the one chip that does it, or -1: every chip */
    int skip;            /* a chip that does not, or -1 */
    Stream *st;
    const WeightsArg *w;
    int k, d;
    const void *v;
    long n;
    Buf *out;
} Job;

typedef struct TpLane TpLane;
typedef struct Chip {
    TpLane *tp;
    int rank, device;    /* its rank among the stream's chips, its GPU */
    CudaLane *c;         /* made on the chip's thread */
    pthread_t th;
    int started, status;
} Chip;

struct TpLane {
    Lane lane;
    int n, chips;        /* the chips this process drives, of the stream's */
    Chip *ch;
    const TpArg *arg;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    int gen, pending;    /* the job's generation; chips still at it */
    Job job;
    char names[256];     /* the GPUs' names, for the figures */
};

static int do_job(Chip *me, const Job *j)
{
    CudaLane *c = me->c;
    int s = 0;
    switch (j->what) {
    case DO_OPEN:
        if (!(me->c = cuda_lane_new(me->device, &s)))
            return s;
        me->c->rank = me->rank;
        me->c->chips = me->tp->chips;
        return 0;
    case DO_JOIN: return nccl_init_rank(&c->comm, me->tp->chips, me->rank, me->tp->arg ? me->tp->arg->id : NULL);
    case DO_BIND: return c->lane.bind(&c->lane, j->st, j->w);
    case DO_PUT: return c->lane.put(&c->lane, j->k, j->d, j->v, j->n);
    case DO_RUN: return c->lane.run(&c->lane, j->k);
    case DO_FETCH: return c->lane.fetch(&c->lane, j->k, j->d, j->out);
    case DO_CLOSE:
        if (c) {
            void *comm = c->comm;
            c->lane.close(&c->lane);
            nccl_close(comm);
        }
        me->c = NULL;
        return 0;
    default: BUG("a job of no kind");
    }
}

static void *chip_main(void *arg)
{
    Chip *me = arg;
    TpLane *t = me->tp;
    int seen = 0;
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (t->gen == seen)
            pthread_cond_wait(&t->go, &t->mu);
        seen = t->gen;
        Job j = t->job;
        pthread_mutex_unlock(&t->mu);
        int s = (j.only < 0 || j.only == me->rank) && j.skip != me->rank ? do_job(me, &j) : 0;
        pthread_mutex_lock(&t->mu);
        me->status = s;
        if (--t->pending == 0)
            pthread_cond_broadcast(&t->done);
        if (j.what == DO_CLOSE)
            break;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

/* Every started chip does j; the first failing chip's status, in rank order. */
static int all(TpLane *t, Job j)
{
    pthread_mutex_lock(&t->mu);
    t->job = j;
    t->gen++;
    t->pending = 0;
    for (int r = 0; r < t->n; r++)
        t->pending += t->ch[r].started;
    pthread_cond_broadcast(&t->go);
    while (t->pending)
        pthread_cond_wait(&t->done, &t->mu);
    int s = 0;
    for (int r = 0; r < t->n && !s; r++)
        s = t->ch[r].started ? t->ch[r].status : 0;
    pthread_mutex_unlock(&t->mu);
    return s;
}

/* ---- the seam ---- */

/* Chip 0 first, which compiles the kernels into the cache, then the others
 * at once, which read them there; the prompt chunk's rows set here, where
 * the chips would each set them. */
static int chips_bind(Lane *l, Stream *st, const WeightsArg *w)
{
    TpLane *t = (TpLane *)l;
    for (int k = 0; k < st->nprogs; k++)
        if (prog_has_size(st->progs[k]) && (!st->chunk_rows || st->plans[k]->rows < st->chunk_rows))
            st->chunk_rows = st->plans[k]->rows;
    int first = t->ch[0].rank, s = all(t, (Job){.what = DO_BIND, .only = first, .skip = -1, .st = st, .w = w});
    return s ? s : all(t, (Job){.what = DO_BIND, .only = -1, .skip = first, .st = st, .w = w});
}

static int chips_put(Lane *l, int k, int d, const void *v, long n)
{
    return all((TpLane *)l, (Job){.what = DO_PUT, .only = -1, .skip = -1, .k = k, .d = d, .v = v, .n = n});
}

static int chips_run(Lane *l, int k)
{
    return all((TpLane *)l, (Job){.what = DO_RUN, .only = -1, .skip = -1, .k = k});
}

static int chips_fetch(Lane *l, int k, int d, Buf *out)
{
    TpLane *t = (TpLane *)l;
    return all(t, (Job){.what = DO_FETCH, .only = t->ch[0].rank, .skip = -1, .k = k, .d = d, .out = out});
}

static void chips_close(Lane *l)
{
    TpLane *t = (TpLane *)l;
    all(t, (Job){.what = DO_CLOSE, .only = -1, .skip = -1});
    for (int r = 0; r < t->n; r++)
        if (t->ch[r].started)
            pthread_join(t->ch[r].th, NULL);
    pthread_cond_destroy(&t->go);
    pthread_cond_destroy(&t->done);
    pthread_mutex_destroy(&t->mu);
    free(t->ch);
    free(t);
}

/* ---- opening ---- */

/* The GPUs this process drives: --devices, else 0 ... n-1, or with --rank R
 * the GPU R modulo those this host has. */
static int devices(TpLane *t, const TpArg *a)
{
    int have = 0;
    CK(cu.DeviceGetCount(&have));
    for (int r = 0; r < t->n; r++) {
        Chip *ch = &t->ch[r];
        ch->rank = a && a->rank >= 0 ? (int)a->rank : r;
        ch->device = a && a->devices ? a->devices[r] : a && a->rank >= 0 ? (int)(a->rank % have) : r;
        if (ch->device >= have) {
            diag("GPU %d is not on this host: it has %d (--devices)", ch->device, have);
            return EXIT_SYSTEM;
        }
    }
    return 0;
}

static int start(TpLane *t)
{
    for (int r = 0; r < t->n; r++) {
        t->ch[r].tp = t;
        int err = pthread_create(&t->ch[r].th, NULL, chip_main, &t->ch[r]);
        if (err) {
            diag("cannot start the thread of chip %d: %s", t->ch[r].rank, strerror(err));
            return EXIT_SYSTEM;
        }
        t->ch[r].started = 1;
    }
    return 0;
}

/* The communicators: all of this process's chips at once, or this rank's
 * with the others' processes. */
static int join_chips(TpLane *t)
{
    if (t->arg && t->arg->rank >= 0)
        return all(t, (Job){.what = DO_JOIN, .only = -1, .skip = -1});
    int *devs = calloc((size_t)t->n, sizeof *devs);
    void **comms = calloc((size_t)t->n, sizeof *comms);
    if (!devs || !comms)
        BUG("out of memory");
    for (int r = 0; r < t->n; r++)
        devs[r] = t->ch[r].device;
    int s = nccl_init_all(comms, t->n, devs);
    for (int r = 0; r < t->n; r++)
        t->ch[r].c->comm = s ? NULL : comms[r];
    free(devs);
    free(comms);
    return s;
}

static void names(TpLane *t)
{
    size_t at = 0;
    for (int r = 0; r < t->n && at < sizeof t->names; r++)
        at += (size_t)snprintf(t->names + at, sizeof t->names - at, "%s%d: %s", r ? ", " : "", t->ch[r].device,
                               t->ch[r].c->dev.name);
}

Lane *lane_tp(Stream *st, int *status)
{
    TpLane *t = calloc(1, sizeof *t);
    if (!t) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    t->lane = (Lane){"cuda-nccl", chips_bind, chips_put, chips_run, chips_fetch, chips_close};
    t->arg = st->tp;
    t->chips = st->chips ? st->chips : 1;
    t->n = t->arg && t->arg->rank >= 0 ? 1 : t->chips;
    t->ch = calloc((size_t)t->n, sizeof *t->ch);
    if (!t->ch)
        BUG("out of memory");
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->go, NULL);
    pthread_cond_init(&t->done, NULL);
    int s = devices(t, t->arg);
    if (!s)
        s = start(t);
    if (!s)
        s = all(t, (Job){.what = DO_OPEN, .only = -1, .skip = -1});
    if (!s)
        s = join_chips(t);
    if (s) {
        chips_close(&t->lane);
        *status = s;
        return NULL;
    }
    names(t);
    return &t->lane;
}

const char *lane_tp_devices(const Lane *l, int *chips, int *here)
{
    const TpLane *t = (const TpLane *)l;
    *chips = t->chips;
    *here = t->n;
    return t->names;
}
