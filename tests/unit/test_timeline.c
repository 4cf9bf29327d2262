/* test_timeline.c — logos-bench --timeline's gathering (bench_timeline.c's
 * timeline_spans): records of three launches, two of one kernel, given out
 * of order, come back as each launch's span (first and last start, the
 * last wait, first and last end, its blocks and multiprocessors); a launch
 * short of a block, a kernel with no record and records left over are
 * each named; equal starts split by block index. Prints TAP lines. */
#include <math.h>
#include <stdlib.h>

#include "logos.h"
#include "tap.h"

/* A record as kernels/common.cuh writes it (times in ns). */
static void rec(uint64_t *r, uint64_t kernel, uint64_t sm, uint64_t block, uint64_t start, uint64_t wait, uint64_t end)
{
    r[0] = kernel << 48 | sm << 32 | block;
    r[1] = start;
    r[2] = wait;
    r[3] = end;
}

/* timeline_spans over the first n records of t. */
static long spans(TlRun *t, long n, const int *kid, const long *blocks, int nl)
{
    t->n = n;
    return timeline_spans(t, kid, blocks, nl);
}

static int near(double a, double b)
{
    return fabs(a - b) < 1e-9;
}

/* Launch 0: kernel 5, two blocks; launch 1: kernel 2, three blocks (no
 * wait); launch 2: kernel 5 again, two blocks. Base time 1,000,000 ns. */
static long fill(uint64_t *r)
{
    const uint64_t t = 1000000;
    long n = 0;
    rec(r + 4 * n++, 5, 7, 1, t + 3000, t + 3500, t + 9000);   /* launch 2, block 1 */
    rec(r + 4 * n++, 2, 0, 2, t + 1500, 0, t + 2600);
    rec(r + 4 * n++, 5, 3, 0, t + 0, t + 400, t + 1200);       /* launch 0, block 0 */
    rec(r + 4 * n++, 2, 1, 0, t + 1000, 0, t + 2000);
    rec(r + 4 * n++, 5, 3, 1, t + 100, t + 700, t + 1100);     /* launch 0, block 1 */
    rec(r + 4 * n++, 2, 1, 1, t + 1100, 0, t + 2500);
    rec(r + 4 * n++, 5, 9, 0, t + 2900, t + 3300, t + 8000);   /* launch 2, block 0 */
    return n;
}

int main(void)
{
    uint64_t r[4 * 16];
    int kid[3] = {5, 2, 5}, which[16];
    long blocks[3] = {2, 3, 2};
    TlSpan s[3];
    TlRun t = {s, r, which, 0, 0};
    long n = fill(r);
    ok(spans(&t, n, kid, blocks, 3) == -1, "three launches, records out of order: all accounted for");
    ok(s[0].blocks == 2 && s[0].sms == 1 && near(s[0].start, 0) && near(s[0].started, 0.1) &&
           near(s[0].waited, 0.7) && near(s[0].first_end, 1.1) && near(s[0].end, 1.2),
       "the first launch's span (one multiprocessor, its last wait)");
    ok(s[1].blocks == 3 && s[1].sms == 2 && near(s[1].start, 1.0) && near(s[1].started, 1.5) && s[1].waited < 0 &&
           near(s[1].first_end, 2.0) && near(s[1].end, 2.6),
       "the second launch's span (no wait: -1)");
    ok(s[2].blocks == 2 && s[2].sms == 2 && near(s[2].start, 2.9) && near(s[2].waited, 3.5) && near(s[2].end, 9.0),
       "the kernel's second launch takes its later blocks");
    int each = t.t0 == 1000000;
    for (long j = 0; j < n; j++)   /* each record with a launch of its kernel, launch 2 its two latest */
        each &= (uint64_t)kid[which[j]] == r[4 * j] >> 48 && (which[j] == 2) == (r[4 * j + 1] >= 1002900);
    ok(each, "each record's launch, and the replay's first start");

    n = fill(r);
    long short_of[3] = {2, 4, 2};
    ok(spans(&t, n, kid, short_of, 3) == 1, "a launch short of a block is named");
    n = fill(r);
    int other[3] = {5, 4, 5};
    ok(spans(&t, n, other, blocks, 3) == 1, "a launch whose kernel left no record is named");
    n = fill(r);
    ok(spans(&t, n, kid, blocks, 2) == 2, "records no launch accounts for: nl");
    n = fill(r);
    r[4 * 2 + 2] = 2000000;   /* a wait past its block's end */
    ok(spans(&t, n, kid, blocks, 3) == 0, "a wait outside its block's life is refused");
    ok(spans(&t, 0, kid, blocks, 3) == 0, "no records: the first launch is named");

    /* the timer's ticks make the last start of one launch equal the first
     * of the kernel's next: the block index decides */
    n = 0;
    rec(r + 4 * n++, 7, 1, 0, 0, 0, 50);
    rec(r + 4 * n++, 7, 2, 1, 100, 0, 150);
    rec(r + 4 * n++, 7, 3, 0, 100, 0, 300);
    rec(r + 4 * n++, 7, 4, 1, 200, 0, 260);
    int same[2] = {7, 7};
    long two[2] = {2, 2};
    ok(spans(&t, n, same, two, 2) == -1 && near(s[0].end, 0.15) && near(s[1].start, 0.1) &&
           near(s[1].end, 0.3),
       "equal starts: a block index the launch holds goes to the next launch");
    ok(spans(&t, 0, kid, blocks, 0) == -1, "no records, no launches: nothing to say");
    return tap_done();
}
