/* bench_timeline.c — logos-bench --timeline: the records the kernels'
 * timeline marks left in one replay (kernels/common.cuh: a record a block,
 * its kernel, multiprocessor, start, wait and end) gathered into a span a
 * launch, and written as CSV: a row a launch (--timeline), or a row a
 * block with its launch (--timeline-blocks). A launch's blocks are the next ones
 * of its kernel in start order: a launch of one instantiation starts every
 * block before the next launch of it starts any (each launch in between
 * starts only when the one before it has started whole). Where the timer's
 * ticks make two starts equal, a block index a launch has already taken
 * goes to the next launch of the kernel. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

enum { TL_SMS = 1024 };

static int by_kernel_start(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    uint64_t kx = x[0] >> 48, ky = y[0] >> 48;
    if (kx != ky)
        return kx < ky ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : (x[0] & 0xffffffff) < (y[0] & 0xffffffff) ? -1 : 1;
}

/* A launch's span as its records come (times in ns; spans_done makes them
 * µs from t0). */
typedef struct Acc {
    long n;
    int sms;
    uint64_t start, started, waited, first_end, end;
    unsigned char sm[TL_SMS / 8];
} Acc;

static void take(Acc *a, const uint64_t *r)
{
    unsigned sm = (unsigned)(r[0] >> 32 & 0xffff) % TL_SMS;
    if (!a->n++) {
        a->start = a->started = r[1];
        a->first_end = a->end = r[3];
        a->waited = 0;
    }
    if (!(a->sm[sm / 8] >> (sm % 8) & 1))
        a->sms++;
    a->sm[sm / 8] |= (unsigned char)(1u << (sm % 8));
    a->start = r[1] < a->start ? r[1] : a->start;
    a->started = r[1] > a->started ? r[1] : a->started;
    a->waited = r[2] > a->waited ? r[2] : a->waited;
    a->first_end = r[3] < a->first_end ? r[3] : a->first_end;
    a->end = r[3] > a->end ? r[3] : a->end;
}

static void spans_done(const Acc *a, int nl, uint64_t t0, TlSpan *out)
{
    for (int i = 0; i < nl; i++) {
        out[i].blocks = a[i].n;
        out[i].sms = a[i].sms;
        out[i].start = (double)(a[i].start - t0) / 1e3;
        out[i].started = (double)(a[i].started - t0) / 1e3;
        out[i].waited = a[i].waited ? (double)(a[i].waited - t0) / 1e3 : -1;
        out[i].first_end = (double)(a[i].first_end - t0) / 1e3;
        out[i].end = (double)(a[i].end - t0) / 1e3;
    }
}

/* Kernel k's records [from, to), in start order, each to the first of the
 * kernel's launches not yet whole that lacks its block (a record whose
 * start ties with a later launch's falls to that one); 0, or -1 where a
 * record fits none. */
static int assign(const uint64_t *recs, long from, long to, uint64_t k, const int *kid, const long *blocks, int nl,
                  unsigned char *taken, const long *off, Acc *acc, int *which)
{
    int cur = 0;
    while (cur < nl && (uint64_t)kid[cur] != k)
        cur++;
    for (long j = from; j < to; j++) {
        const uint64_t *r = recs + 4 * j;
        long b = (long)(r[0] & 0xffffffff);
        if (r[3] < r[1] || (r[2] && (r[2] < r[1] || r[2] > r[3])))
            return -1;   /* a wait, where taken, within its block's life */
        int i = cur;
        while (i < nl && ((uint64_t)kid[i] != k || b >= blocks[i] || taken[off[i] + b]))
            i++;
        if (i == nl)
            return -1;
        taken[off[i] + b] = 1;
        which[j] = i;
        take(&acc[i], r);
        while (cur < nl && ((uint64_t)kid[cur] != k || acc[cur].n == blocks[cur]))
            cur++;
    }
    return 0;
}

long timeline_spans(TlRun *t, const int *kid, const long *blocks, int nl)
{
    uint64_t *recs = t->recs;
    long n = t->n;
    if (n <= 0)
        return nl ? 0 : -1;
    qsort(recs, (size_t)n, 4 * sizeof *recs, by_kernel_start);
    uint64_t t0 = recs[1];
    for (long j = 0; j < n; j++)
        t0 = recs[4 * j + 1] < t0 ? recs[4 * j + 1] : t0;
    t->t0 = t0;
    long *off = malloc(sizeof *off * (size_t)(nl + 1)), total = 0;
    Acc *acc = calloc((size_t)nl + 1, sizeof *acc);
    for (int i = 0; off && i < nl; i++) {
        off[i] = total;
        total += blocks[i];
    }
    unsigned char *taken = calloc((size_t)total + 1, 1);
    long bad = !off || !acc || !taken ? 0 : -1;
    for (long j = 0, e; bad < 0 && j < n; j = e) {   /* each kernel's records */
        for (e = j; e < n && recs[4 * e] >> 48 == recs[4 * j] >> 48; e++)
            ;
        if (assign(recs, j, e, recs[4 * j] >> 48, kid, blocks, nl, taken, off, acc, t->which))
            bad = -2;   /* records left over: said after a launch not whole */
    }
    for (int i = 0; acc && bad < 0 && i < nl; i++)
        if (acc[i].n != blocks[i])
            bad = i;
    bad = bad == -2 ? nl : bad;
    if (bad < 0)
        spans_done(acc, nl, t0, t->span);
    free(off);
    free(acc);
    free(taken);
    return bad;
}

/* A row's first columns: plan, model, form, pos, launch (its plan line),
 * kernel; launch j of b. */
static void row_head(FILE *f, const BenchRun *r, const BenchPos *b, int j)
{
    const Plan *pl = r->st->plans[b->lk[j]];
    char brief[96];
    launch_brief(pl, b->li[j], brief, sizeof brief);
    fprintf(f, "%s,%s,%s,%ld,%d,%s,", r->label, r->st->progs[0]->model, r->st->progs[r->prog]->form, b->pos,
            pl->ls[b->li[j]].line, brief);
}

void timeline_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    (void)h;
    fprintf(f, "plan,model,form,pos,launch,kernel,blocks,sms,start_us,started_us,waited_us,first_end_us,end_us\n");
    for (int i = 0; i < nr; i++)
        for (int p = 0; p < r[i].nps; p++) {
            const BenchPos *b = &r[i].ps[p];
            for (int j = 0; b->tl && j < b->nlaunch; j++) {
                const TlSpan *s = &b->tl->span[j];
                char waited[32] = "";
                if (s->waited >= 0)
                    snprintf(waited, sizeof waited, "%.3f", s->waited);
                row_head(f, &r[i], b, j);
                fprintf(f, "%ld,%d,%.3f,%.3f,%s,%.3f,%.3f\n", s->blocks, s->sms, s->start, s->started, waited,
                        s->first_end, s->end);
            }
        }
}

/* Record order for the blocks' CSV: by launch, then start. */
typedef struct Ord {
    int which;
    uint64_t start;
    long j;
} Ord;

static int by_launch_start(const void *a, const void *b)
{
    const Ord *x = a, *y = b;
    if (x->which != y->which)
        return x->which < y->which ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start ? 1 : x->j < y->j ? -1 : 1;
}

static void blocks_of(FILE *f, const BenchRun *r, const BenchPos *b)
{
    const TlRun *t = b->tl;
    Ord *o = malloc(sizeof *o * (size_t)(t->n + 1));
    if (!o)
        return;
    for (long j = 0; j < t->n; j++)
        o[j] = (Ord){t->which[j], t->recs[4 * j + 1], j};
    qsort(o, (size_t)t->n, sizeof *o, by_launch_start);
    for (long q = 0; q < t->n; q++) {
        const uint64_t *rec = t->recs + 4 * o[q].j;
        char waited[32] = "";
        if (rec[2])
            snprintf(waited, sizeof waited, "%.3f", (double)(rec[2] - t->t0) / 1e3);
        row_head(f, r, b, o[q].which);
        fprintf(f, "%llu,%llu,%.3f,%s,%.3f\n", (unsigned long long)(rec[0] & 0xffffffff),
                (unsigned long long)(rec[0] >> 32 & 0xffff), (double)(rec[1] - t->t0) / 1e3, waited,
                (double)(rec[3] - t->t0) / 1e3);
    }
    free(o);
}

void timeline_blocks_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    (void)h;
    fprintf(f, "plan,model,form,pos,launch,kernel,block,sm,start_us,waited_us,end_us\n");
    for (int i = 0; i < nr; i++)
        for (int p = 0; p < r[i].nps; p++)
            if (r[i].ps[p].tl)
                blocks_of(f, &r[i], &r[i].ps[p]);
}
