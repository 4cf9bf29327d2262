/* bench_timeline.c — logos-bench --timeline: the records the kernels'
 * timeline marks left in one replay (kernels/common.cuh: a record a block,
 * its kernel, multiprocessor, start, wait and end) gathered into a span a
 * launch, and the spans written as CSV. A launch's blocks are the next ones
 * of its kernel in start order: a launch of one instantiation starts every
 * block before the next launch of it starts any (each launch in between
 * starts only when the one before it has started whole). */
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
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* One launch's span from its n records (times in ns since t0). */
static void span_of(const uint64_t *r, long n, uint64_t t0, TlSpan *s)
{
    unsigned char seen[TL_SMS / 8] = {0};
    uint64_t start = r[1], started = r[1], waited = 0, first_end = r[3], end = r[3];
    s->sms = 0;
    for (long j = 0; j < n; j++, r += 4) {
        unsigned sm = (unsigned)(r[0] >> 32 & 0xffff) % TL_SMS;
        if (!(seen[sm / 8] >> (sm % 8) & 1))
            s->sms++;
        seen[sm / 8] |= (unsigned char)(1u << (sm % 8));
        start = r[1] < start ? r[1] : start;
        started = r[1] > started ? r[1] : started;
        waited = r[2] > waited ? r[2] : waited;
        first_end = r[3] < first_end ? r[3] : first_end;
        end = r[3] > end ? r[3] : end;
    }
    s->blocks = n;
    s->start = (double)(start - t0) / 1e3;
    s->started = (double)(started - t0) / 1e3;
    s->waited = waited ? (double)(waited - t0) / 1e3 : -1;
    s->first_end = (double)(first_end - t0) / 1e3;
    s->end = (double)(end - t0) / 1e3;
}

long timeline_spans(uint64_t *recs, long n, const int *kid, const long *blocks, int nl, TlSpan *out)
{
    if (n <= 0)
        return nl ? 0 : -1;
    qsort(recs, (size_t)n, 4 * sizeof *recs, by_kernel_start);
    uint64_t t0 = recs[1];
    long *next = malloc(65536 * sizeof *next);   /* each kernel's first record not yet taken, -1: none */
    if (!next)
        return 0;
    for (int k = 0; k < 65536; k++)
        next[k] = -1;
    for (long j = n - 1; j >= 0; j--) {
        next[recs[4 * j] >> 48] = j;
        t0 = recs[4 * j + 1] < t0 ? recs[4 * j + 1] : t0;
    }
    long bad = -1;
    for (int i = 0; i < nl && bad < 0; i++) {
        long at = next[kid[i]], end = at + blocks[i];
        int ok = at >= 0 && end <= n && recs[4 * (end - 1)] >> 48 == (uint64_t)kid[i];
        for (long j = at; ok && j < end; j++) {   /* a wait, where taken, within its block's life */
            const uint64_t *r = recs + 4 * j;
            ok = r[3] >= r[1] && (r[2] == 0 || (r[2] >= r[1] && r[2] <= r[3]));
        }
        if (!ok)
            bad = i;
        else {
            span_of(recs + 4 * at, blocks[i], t0, &out[i]);
            next[kid[i]] = end < n && recs[4 * end] >> 48 == (uint64_t)kid[i] ? end : -1;
        }
    }
    for (int i = 0; bad < 0 && i < nl; i++)   /* every record taken */
        if (next[kid[i]] >= 0)
            bad = nl;
    free(next);
    return bad;
}

void timeline_csv(FILE *f, const BenchRun *r, int nr, const BenchHead *h)
{
    (void)h;
    fprintf(f, "plan,model,form,pos,launch,kernel,blocks,sms,start_us,started_us,waited_us,first_end_us,end_us\n");
    for (int i = 0; i < nr; i++)
        for (int p = 0; p < r[i].nps; p++) {
            const BenchPos *b = &r[i].ps[p];
            for (int j = 0; b->tl && j < b->nlaunch; j++) {
                const Plan *pl = r[i].st->plans[b->lk[j]];
                const TlSpan *s = &b->tl[j];
                char brief[96], waited[32] = "";
                launch_brief(pl, b->li[j], brief, sizeof brief);
                if (s->waited >= 0)
                    snprintf(waited, sizeof waited, "%.3f", s->waited);
                fprintf(f, "%s,%s,%s,%ld,%d,%s,%ld,%d,%.3f,%.3f,%s,%.3f,%.3f\n", r[i].label,
                        r[i].st->progs[0]->model, r[i].st->progs[r[i].prog]->form, b->pos, pl->ls[b->li[j]].line,
                        brief, s->blocks, s->sms, s->start, s->started, waited, s->first_end, s->end);
            }
        }
}
