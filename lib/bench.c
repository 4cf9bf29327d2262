/* bench.c — what a plan's launches must read and compute, from the plan
 * alone: each launch's bytes (the weights it reads whole, the cache rows an
 * attention or a latent attention reads at a position, its activations),
 * FLOPs and the ops of its Q8_0 products, a step's bytes (every weight once,
 * the cache rows read at that position, the recurrent states) and ops, a launch's short description; the
 * figures logos-bench prints. A prefill chunk's launches that take the
 * runtime size compute its rows, not the plan's bound; an attention over a
 * chunk reads the cache up to the chunk's last row. */
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

BenchAt bench_at(long pos, long rows)
{
    return (BenchAt){pos, rows};
}

/* The share of its plan's rows a launch computes: at.rows of them when it
 * takes the runtime size (n: rows, or rows of RPN each), else all. */
static double row_share(const PLaunch *l, BenchAt at)
{
    int n = kernel_param(l->kernel, "n");
    double rows = C(l, "ROWS"), rpn = C(l, "RPN") > 0 ? C(l, "RPN") : 1;
    if (n < 0 || l->arg[n] < 0 || at.rows <= 0 || rows <= 0 || (double)at.rows * rpn >= rows)
        return 1;
    return (double)at.rows * rpn / rows;
}

static double rows_of(const PLaunch *l, BenchAt at)
{
    return C(l, "ROWS") * row_share(l, at);
}

double launch_rows(const Plan *pl, int i, BenchAt at)
{
    return rows_of(&pl->ls[i], at);
}

/* Whether a launch is an attention over a cache (attend, or a chunk's
 * causal rows on the tensor cores: flash, attend's MODE 1), and its mode. */
static int attention(const PLaunch *l)
{
    return l->kernel == KN_ATTEND || l->kernel == KN_FLASH;
}

static double mode_of(const PLaunch *l)
{
    return l->kernel == KN_FLASH ? 1 : C(l, "MODE");
}

/* The key rows an attention's query at position pos reads. */
static double attend_span(const PLaunch *l, double pos)
{
    double ctx = C(l, "NCTX"), win = C(l, "WINDOW");
    double hi = mode_of(l) == 2 ? ctx : pos < ctx ? pos : ctx;
    return win > 0 && hi > win ? win : hi;
}

/* The key rows an attention launch reads for a query at position pos. */
static double attend_rows(const PLaunch *l, long pos)
{
    return attend_span(l, (double)pos);
}

/* The cache rows an attention (or a latent attention) reads, each once: a
 * chunk's (MODE 1, its rows at positions pos, pos + 1 ...) from the first
 * row's oldest to the last row's newest; else the rows of a query at pos,
 * for each of its rows. */
static double cache_rows(const PLaunch *l, BenchAt at)
{
    if (mode_of(l) == 1) {
        double first = attend_span(l, (double)at.pos), ctx = C(l, "NCTX");
        double hi0 = (double)at.pos < ctx ? (double)at.pos : ctx, last = (double)at.pos + rows_of(l, at) - 1;
        return (last < ctx ? last : ctx) - (hi0 - first);
    }
    return attend_rows(l, at.pos) * C(l, "ROWS");
}

static double attend_bytes(const PLaunch *l, BenchAt at)
{
    return cache_rows(l, at) * C(l, "NKV") * (C(l, "HD") + C(l, "VD")) * (C(l, "KV") == 2 ? 2 : 4);
}

/* Whether a launch reads a latent attention's cache rows (latent, or a
 * wide chunk's latent_expand), and the bytes of those it reads (as an
 * attention's, no window), rows of LORA + ROPE f32. */
static int latent_read(const PLaunch *l)
{
    return l->kernel == KN_LATENT || l->kernel == KN_LATENT_EXPAND;
}

static double latent_bytes(const PLaunch *l, BenchAt at)
{
    return cache_rows(l, at) * (C(l, "LORA") + C(l, "ROPE")) * 4;
}

/* The FLOPs of an attention: a chunk's rows each over its own keys. */
static double attend_flops(const PLaunch *l, BenchAt at)
{
    double keys = 0, rows = rows_of(l, at);
    if (mode_of(l) == 1)
        for (long t = 0; t < (long)rows; t++)
            keys += attend_span(l, (double)(at.pos + t));
    else
        keys = attend_rows(l, at.pos) * rows;
    return 2 * keys * C(l, "NH") * (C(l, "HD") + C(l, "VD"));
}

/* The bytes launch l reads of weight buffer b, its parameter p needing
 * count values: an embedding gathers its rows of its V, a mixture reads
 * its rows' kept experts (its shared expert's weights, the parameters
 * from Wsg on, whole), every other kernel reads what it needs, the whole
 * weight when it needs all of it. */
static double weight_read(const Plan *pl, const PLaunch *l, int p, int b, long count, BenchAt at)
{
    if (l->kernel == KN_EMBED) {
        double v = C(l, "V"), rows = rows_of(l, at);
        return buf_bytes(pl, b) * (rows < v ? rows / v : 1);
    }
    if (l->kernel == KN_MOE && p < kernel_param(KN_MOE, "Wsg")) {   /* the kept experts' rows: at most K of E a row */
        double e = C(l, "E"), kept = C(l, "K") * rows_of(l, at);
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

double launch_bytes(const Plan *pl, int i, BenchAt at)
{
    const PLaunch *l = &pl->ls[i];
    const Kernel *k = kernel_info(l->kernel);
    KNeed need;
    char why[160];
    if (kernel_need(l->kernel, l->c, &need, why, sizeof why))
        return 0;
    double bytes = 0, share = row_share(l, at);
    for (int p = 0; p < k->np; p++) {
        int b = l->arg[p];
        if (b < 0 || written(&k->p[p]))
            continue;
        int kind = pl->bufs[plan_base(pl, b)].kind;
        if (attention(l) && (!strcmp(k->p[p].name, "k") || !strcmp(k->p[p].name, "v")))
            continue;
        if (latent_read(l) && !strcmp(k->p[p].name, "kc"))
            continue;
        if (kind == B_WEIGHT)
            bytes += weight_read(pl, l, p, b, need.count[p], at);
        else if (need.count[p] > 0)   /* activations: the rows computed; states and tables whole */
            bytes += (double)etype_bytes(pl->bufs[b].etype, need.count[p]) *
                     (kind == B_STATE || kind == B_CONST ? 1 : share);
    }
    if (attention(l))
        bytes += attend_bytes(l, at);
    if (latent_read(l))
        bytes += latent_bytes(l, at);
    return bytes;
}

/* The multiply-adds, twice, of a product: its outputs N (the parts' end to
 * end) by its inner width K, for each of its rows. */
static double product(const PLaunch *l, BenchAt at)
{
    return 2 * C(l, "K") * (C(l, "N0") + C(l, "N1") + C(l, "N2") + C(l, "N3")) * rows_of(l, at);
}

double launch_flops(const Plan *pl, int i, BenchAt at)
{
    const PLaunch *l = &pl->ls[i];
    switch (l->kernel) {
    case KN_GEMV: case KN_MMA: case KN_MMV: case KN_MMH: case KN_MMI:
        return product(l, at);
    case KN_ATTEND: case KN_FLASH:
        return attend_flops(l, at);
    default:
        return launch_bytes(pl, i, at) / 4;   /* an op or so a value */
    }
}

double launch_ops(const Plan *pl, int i, BenchAt at)
{
    const PLaunch *l = &pl->ls[i];
    switch (l->kernel) {
    case KN_GEMV:
        return C(l, "WQ") ? product(l, at) : 0;
    case KN_MMA: case KN_MMV: case KN_MMH: case KN_MMI:
        return product(l, at);
    case KN_MOE: {   /* each row's kept experts and shared segments: gate and up (PHASE 0), then down */
        double per = 2 * (C(l, "K") + C(l, "SH")) * C(l, "D") * C(l, "FF") * rows_of(l, at);
        return C(l, "WQ") ? (C(l, "PHASE") ? per : 2 * per) : 0;
    }
    default:
        return 0;
    }
}

/* The bytes a launch reads of the states it does not read as an
 * attention's or a latent attention's cache (a delta rule's state, a
 * convolution's ring: whole; a copy's rows of a state), each state once a
 * step (seen). */
static double state_read(const Plan *pl, const PLaunch *l, const KNeed *need, StrMap *seen)
{
    const Kernel *k = kernel_info(l->kernel);
    double bytes = 0;
    if (attention(l) || latent_read(l))
        return 0;
    for (int p = 0; p < k->np; p++) {
        int b = l->arg[p] < 0 ? -1 : plan_base(pl, l->arg[p]);
        if (b < 0 || pl->bufs[b].kind != B_STATE || written(&k->p[p]) || need->count[p] <= 0 ||
            strmap_get(seen, pl->bufs[b].name) >= 0)
            continue;
        bytes += (double)etype_bytes(pl->bufs[b].etype, need->count[p]);
        strmap_put(seen, pl->bufs[b].name, 0);
    }
    return bytes;
}

/* A step's bytes: each weight once, at the most any launch reads of it (an
 * embedding's gathered rows, or the whole of a weight a product reads too,
 * as a tied head does), the cache rows attention and latent attention read
 * at pos, the recurrent states. seen carries the weights and states counted
 * across the plans of a stream: 0 read whole, n > 0 the n bytes of a
 * weight's gathered rows counted so far. */
double plan_step_bytes(const Plan *pl, BenchAt at, StrMap *seen)
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
            double r = weight_read(pl, l, p, b, need.count[p], at);
            int had = strmap_get(seen, pl->bufs[b].name);
            if (had == 0 || (had > 0 && r <= had))
                continue;
            bytes += r - (had > 0 ? had : 0);
            strmap_put(seen, pl->bufs[b].name, r >= buf_bytes(pl, b) || r > 2e9 ? 0 : (int)r);
        }
        if (attention(l))
            bytes += attend_bytes(l, at);
        if (latent_read(l))
            bytes += latent_bytes(l, at);
        bytes += state_read(pl, l, &need, seen);
    }
    return bytes;
}

double plan_step_ops(const Plan *pl, BenchAt at)
{
    double ops = 0;
    for (int i = 0; i < pl->nls; i++)
        ops += launch_ops(pl, i, at);
    return ops;
}

void launch_brief(const Plan *pl, int i, char *buf, size_t n)
{
    const PLaunch *l = &pl->ls[i];
    const char *name = kernel_info(l->kernel)->name;
    switch (l->kernel) {
    case KN_MMA: case KN_MMV: case KN_MMH: case KN_MMI:
        snprintf(buf, n, "%s %.0fx%.0f%s%s rows q8 %s", name, C(l, "N0") + C(l, "N1") + C(l, "N2") + C(l, "N3"),
                 C(l, "K"), C(l, "PARTS") > 1 ? "/" : "", C(l, "PARTS") > 1 ? (C(l, "GATE") ? "gated" : "parts") : "",
                 l->kernel == KN_MMH ? (C(l, "XIN") == 3 ? "a8h" : "a8 in f16") : etype_name(act_etype(C(l, "XQ"))));
        break;
    case KN_GEMV:
        snprintf(buf, n, "%s %.0fx%.0f%s%s%s %s%s", name, C(l, "N0") + C(l, "N1") + C(l, "N2") + C(l, "N3"),
                 C(l, "K"), C(l, "PARTS") > 1 ? "/" : "", C(l, "PARTS") > 1 ? (C(l, "GATE") ? "gated" : "parts") : "",
                 C(l, "ROWS") > 1 ? " rows" : "", C(l, "WQ") ? "q8" : "f32", etype_name(act_etype(C(l, "XQ"))));
        break;
    case KN_ATTEND: {
        char hg[32] = "";   /* fewer query heads a block than a key head's */
        if (C(l, "HG") * C(l, "NKV") < C(l, "NH"))
            snprintf(hg, sizeof hg, " hg%.0f", C(l, "HG"));
        snprintf(buf, n, "%s %.0fh/%.0fkv x%.0f%s split %.0f", name, C(l, "NH"), C(l, "NKV"), C(l, "HD"), hg,
                 C(l, "SPLIT"));
        break;
    }
    case KN_FLASH:
        snprintf(buf, n, "%s %.0fh/%.0fkv x%.0f f16", name, C(l, "NH"), C(l, "NKV"), C(l, "HD"));
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
