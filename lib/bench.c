/* bench.c — what a plan's launches must read and compute, from the plan
 * alone: each launch's bytes (the weights it reads whole, the cache rows an
 * attention reads at a position, its activations) and FLOPs, a step's bytes
 * (every weight once, the cache rows read at that position, the states), a
 * launch's short description; the figures logos-bench prints. */
#include <math.h>
#include <string.h>

#include "logos.h"

static double C(const PLaunch *l, const char *name)
{
    int i = kernel_const(l->kernel, name);
    return i < 0 ? 0 : l->c[i];
}

static double buf_bytes(const Plan *pl, int b)
{
    return b < 0 ? 0 : (double)plan_buf_bytes(pl, b);
}

/* The key rows an attention launch reads for a query at position pos. */
static double attend_rows(const PLaunch *l, long pos)
{
    double ctx = C(l, "NCTX"), win = C(l, "WINDOW");
    double hi = C(l, "MODE") == 2 ? ctx : (double)pos < ctx ? (double)pos : ctx;
    return win > 0 && hi > win ? win : hi;
}

static double attend_bytes(const Plan *pl, const PLaunch *l, long pos)
{
    double esize = C(l, "KV") == 2 ? 2 : 4, rows = attend_rows(l, pos) * C(l, "ROWS");
    (void)pl;
    return rows * C(l, "NKV") * (C(l, "HD") + C(l, "VD")) * esize;
}

/* The bytes launch l reads of weight buffer b, its parameter p needing
 * count values: an embedding gathers ROWS rows of its V, every other kernel
 * reads what it needs, the whole weight when it needs all of it. */
static double weight_read(const Plan *pl, const PLaunch *l, int b, long count)
{
    if (l->kernel == KN_EMBED) {
        double v = C(l, "V"), rows = C(l, "ROWS");
        return buf_bytes(pl, b) * (rows < v ? rows / v : 1);
    }
    if (l->kernel == KN_MOE) {   /* the kept experts' rows: at most K of E a row */
        double e = C(l, "E"), kept = C(l, "K") * C(l, "ROWS");
        return buf_bytes(pl, b) * (kept < e ? kept / e : 1);
    }
    if (count >= pl->bufs[b].count)
        return buf_bytes(pl, b);
    return (double)etype_bytes(pl->bufs[b].etype, count);
}

/* Is parameter p one a kernel writes or keeps its own scratch in? */
static int written(const KParam *p)
{
    return p->name[0] == 'y' || !strcmp(p->name, "next") || !strcmp(p->name, "part") || !strcmp(p->name, "cnt");
}

double launch_bytes(const Plan *pl, int i, long pos)
{
    const PLaunch *l = &pl->ls[i];
    const Kernel *k = kernel_info(l->kernel);
    KNeed need;
    char why[160];
    if (kernel_need(l->kernel, l->c, &need, why, sizeof why))
        return 0;
    double bytes = 0;
    for (int p = 0; p < k->np; p++) {
        int b = l->arg[p];
        if (b < 0 || written(&k->p[p]))
            continue;
        int kind = pl->bufs[plan_base(pl, b)].kind;
        if (l->kernel == KN_ATTEND && (!strcmp(k->p[p].name, "k") || !strcmp(k->p[p].name, "v")))
            continue;
        if (kind == B_WEIGHT)
            bytes += weight_read(pl, l, b, need.count[p]);
        else if (need.count[p] > 0)
            bytes += (double)etype_bytes(pl->bufs[b].etype, need.count[p]);
    }
    if (l->kernel == KN_ATTEND)
        bytes += attend_bytes(pl, l, pos);
    return bytes;
}

double launch_flops(const Plan *pl, int i, long pos)
{
    const PLaunch *l = &pl->ls[i];
    switch (l->kernel) {
    case KN_GEMV: case KN_MMA: {
        double n = C(l, "N0") + C(l, "N1") + C(l, "N2") + C(l, "N3");
        return 2 * C(l, "K") * n * C(l, "ROWS");
    }
    case KN_ATTEND:
        return 2 * attend_rows(l, pos) * C(l, "ROWS") * C(l, "NH") * (C(l, "HD") + C(l, "VD"));
    default:
        return launch_bytes(pl, i, pos) / 4;   /* an op or so a value */
    }
}

/* A step's bytes: each weight once, at the most any launch reads of it (an
 * embedding's gathered rows, or the whole of a weight a product reads too,
 * as a tied head does), the cache rows attention reads at pos. seen carries
 * the weights counted across the plans of a stream: 0 read whole, n > 0 the
 * n bytes of gathered rows counted so far. */
double plan_step_bytes(const Plan *pl, long pos, StrMap *seen)
{
    double bytes = 0;
    for (int i = 0; i < pl->nls; i++) {
        const PLaunch *l = &pl->ls[i];
        const Kernel *k = kernel_info(l->kernel);
        KNeed need;
        char why[160];
        if (kernel_need(l->kernel, l->c, &need, why, sizeof why))
            continue;
        for (int p = 0; p < k->np; p++) {
            int b = l->arg[p] < 0 ? -1 : plan_base(pl, l->arg[p]);
            if (b < 0 || pl->bufs[b].kind != B_WEIGHT)
                continue;
            double r = weight_read(pl, l, b, need.count[p]);
            int had = strmap_get(seen, pl->bufs[b].name);
            if (had == 0 || (had > 0 && r <= had))
                continue;
            bytes += r - (had > 0 ? had : 0);
            strmap_put(seen, pl->bufs[b].name, r >= buf_bytes(pl, b) || r > 2e9 ? 0 : (int)r);
        }
        if (l->kernel == KN_ATTEND)
            bytes += attend_bytes(pl, l, pos);
    }
    return bytes;
}

void launch_brief(const Plan *pl, int i, char *buf, size_t n)
{
    const PLaunch *l = &pl->ls[i];
    const char *name = kernel_info(l->kernel)->name;
    static const char *fmt[] = {"f32", "a8", "a8x2"};
    switch (l->kernel) {
    case KN_MMA:
        snprintf(buf, n, "%s %.0fx%.0f%s%s rows q8 %s", name, C(l, "N0") + C(l, "N1") + C(l, "N2") + C(l, "N3"),
                 C(l, "K"), C(l, "PARTS") > 1 ? "/" : "", C(l, "PARTS") > 1 ? (C(l, "GATE") ? "gated" : "parts") : "",
                 fmt[(int)C(l, "XQ")]);
        break;
    case KN_GEMV:
        snprintf(buf, n, "%s %.0fx%.0f%s%s%s %s%s", name, C(l, "N0") + C(l, "N1") + C(l, "N2") + C(l, "N3"),
                 C(l, "K"), C(l, "PARTS") > 1 ? "/" : "", C(l, "PARTS") > 1 ? (C(l, "GATE") ? "gated" : "parts") : "",
                 C(l, "ROWS") > 1 ? " rows" : "", C(l, "WQ") ? "q8" : "f32", fmt[(int)C(l, "XQ")]);
        break;
    case KN_ATTEND:
        snprintf(buf, n, "%s %.0fh/%.0fkv x%.0f split %.0f", name, C(l, "NH"), C(l, "NKV"), C(l, "HD"), C(l, "SPLIT"));
        break;
    case KN_EMBED: case KN_NORM:
        snprintf(buf, n, "%s %.0f", name, C(l, "D"));
        break;
    case KN_ROPE:
        snprintf(buf, n, "%s %.0f parts", name, C(l, "PARTS"));
        break;
    default:
        snprintf(buf, n, "%s", name);
    }
    (void)pl;
}
