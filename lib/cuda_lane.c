/* cuda_lane.c — the CUDA lane behind run.c's seam. bind: every plan's
 * kernels compiled (or read from the cache) and loaded, the stream's named
 * buffers (weights, states, inputs, outputs, sizes) allocated once and
 * shared by name across its plans, weights uploaded from their files or
 * synthesized on the GPU, one pool for the temporaries, each plan's scratch,
 * rope tables and tables of buffers' addresses; put: an input (and the
 * sizes it binds) copied to the device; run: a plan's launches, captured
 * once as a CUDA graph (with programmatic dependent launch between them)
 * and replayed, every input read from device memory; fetch: an output
 * copied back. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_lane.h"

/* ---- memory ---- */

static int dalloc(CudaLane *c, long bytes, CUdeviceptr *p)
{
    CUresult r = cu.MemAlloc(p, (size_t)(bytes > 0 ? bytes : 1));
    if (r)
        return cu_fail("cuMemAlloc_v2", r, __FILE__, __LINE__);
    *VEC_PUSH(c->a, c->owned, c->nowned, c->cowned) = *p;
    CK(cu.MemsetD8(*p, 0, (size_t)(bytes > 0 ? bytes : 1)));
    return 0;
}

/* The stream's buffer of this name, made when first seen (zeroed); -1 and a
 * message when two plans disagree on it. */
static int named(CudaLane *c, const PBuf *b, int *out, int *made)
{
    long bytes = etype_bytes(b->etype, b->count);
    int i = strmap_get(c->names, b->name);
    *made = 0;
    if (i >= 0) {
        DBuf *d = &c->bufs[i];
        if (d->etype != b->etype || (d->bytes != bytes && b->kind != B_IN && b->kind != B_OUT)) {
            diag_file(c->st->src, "'%s' is %s %ld in one plan and %s %ld bytes in another", b->name,
                      etype_name(b->etype), b->count, etype_name(d->etype), d->bytes);
            return EXIT_INPUT;
        }
        if (bytes > d->bytes) {   /* an input or output of more rows in another plan */
            CUdeviceptr p;
            int s = dalloc(c, bytes, &p);
            if (s)
                return s;
            d->p = p;
            d->bytes = bytes;
        }
        *out = i;
        return 0;
    }
    DBuf d = {.name = b->name, .bytes = bytes, .etype = b->etype};
    int s = dalloc(c, bytes, &d.p);
    if (s)
        return s;
    strmap_put(c->names, b->name, c->nbufs);
    *VEC_PUSH(c->a, c->bufs, c->nbufs, c->cbufs) = d;
    *out = c->nbufs - 1;
    *made = 1;
    return 0;
}

static long etype_size(int et)
{
    return et == ET_F16 ? 2 : et == ET_F64 ? 8 : 4;
}

/* ---- kernels ---- */

int lane_kernel(CudaLane *c, char *src, const char *name, const char *file)
{
    int i = strmap_get(c->srcs, src);
    if (i >= 0) {
        free(src);
        return i;
    }
    strmap_put(c->srcs, arena_strdup(c->a, src), c->nkerns);
    CuKernel *k = VEC_PUSH(c->a, c->kerns, c->nkerns, c->ckerns);
    memset(k, 0, sizeof *k);
    KJob *j = VEC_PUSH(c->a, c->jobs, c->njobs, c->cjobs);
    *j = (KJob){.src = src, .name = name, .file = file};
    return c->nkerns - 1;
}

/* Points kernel k's timeline marks (kernels/common.cuh: logos_tl, its
 * index logos_tl_kernel) at the lane's records; a kernel without them (the
 * lane's own, or compiled before) is left alone. */
static int timeline_marks(CudaLane *c, int k)
{
    CUdeviceptr at, id;
    size_t n;
    if (cu.ModuleGetGlobal(&at, &n, c->kerns[k].mod, "logos_tl") ||
        cu.ModuleGetGlobal(&id, &n, c->kerns[k].mod, "logos_tl_kernel"))
        return 0;
    uint64_t kid = (uint64_t)k;
    CK(cu.MemcpyHtoD(at, &c->tl, sizeof c->tl));
    CK(cu.MemcpyHtoD(id, &kid, sizeof kid));
    return 0;
}

/* Compiles or reads every kernel the stream asks for, all at once. */
int lane_load(CudaLane *c)
{
    double t0 = mono_s();
    int first = c->nkerns - c->njobs;   /* the jobs are the newest kernels, in order */
    for (int i = 0; i < c->njobs; i++)
        c->jobs[i].out = &c->kerns[first + i];
    int s = cache_load(c->jobs, c->njobs, c->dev.major * 10 + c->dev.minor);
    for (int i = 0; !s && c->tl && i < c->njobs; i++)
        s = timeline_marks(c, first + i);
    for (int i = 0; i < c->njobs; i++) {
        free(c->jobs[i].src);
        c->compiled += c->kerns[first + i].compiled;
    }
    c->njobs = 0;
    c->compile_s += mono_s() - t0;
    return s;
}

/* ---- weights ---- */

static void progress(const char *what, double t0, long done, long total, int *shown)
{
    double t = mono_s() - t0;
    if (t < 1 || total <= 0)
        return;
    fprintf(stderr, "\r%s: %s %ld of %ld MB (%.0f%%)", diag_tool, what, done >> 20, total >> 20, 100.0 * (double)done / (double)total);
    *shown = 1;
}

static int synth_kernels(CudaLane *c)
{
    if (c->synth[0] >= 0)
        return 0;
    c->synth[0] = lane_kernel(c, lane_kernel_source("synth.cu", "constexpr long Q8 = 0;"), "synth", "synth.cu");
    c->synth[1] = lane_kernel(c, lane_kernel_source("synth.cu", "constexpr long Q8 = 1;"), "synth", "synth.cu");
    return lane_load(c);
}

static int synth_weight(CudaLane *c, const Decl *d, CUdeviceptr p, uint64_t seed)
{
    long dims[LOGOS_MAXRANK], whole = d->count, at = 0, width = d->count, from, to;
    place_whole(d, dims);   /* a split weight's part is the whole's values (synth.cu) */
    int axis = c->chips ? place_part(d, c->chips, c->rank, &from, &to) : -1;
    if (axis == 0)
        at = from * (d->count / (to - from));
    else if (axis > 0)
        whole = dims[d->rank - 1], at = from, width = to - from;
    uint64_t state;
    double add, mul;
    weights_synth_params(d->name, d->rank, dims, seed, &state, &add, &mul);
    uint64_t addb, mulb;
    memcpy(&addb, &add, 8);
    memcpy(&mulb, &mul, 8);
    LParams pr = {{(void *)(uintptr_t)p, (void *)(uintptr_t)state, (void *)(uintptr_t)addb,
                         (void *)(uintptr_t)mulb, (void *)(uintptr_t)d->count, (void *)(uintptr_t)whole,
                         (void *)(uintptr_t)at, (void *)(uintptr_t)width}};
    void *args[] = {&pr};
    const CuKernel *k = &c->kerns[c->synth[d->base == T_Q8]];
    long blocks = (d->count + 255) / 256;
    CK(cu.LaunchKernel(k->fn, (unsigned)(blocks < 65536 ? blocks : 65536), 1, 1, 256, 1, 1, 0, c->stream, args, NULL));
    return 0;
}

/* Copies a weight bound in env (mmapped files) to the device. */
static int upload_weight(const Buf *b, CUdeviceptr p)
{
    if (b->base == T_Q8) {
        CK(cu.MemcpyHtoD(p, b->q, (size_t)b->n));
        CK(cu.MemcpyHtoD(p + (CUdeviceptr)((b->n + 15) & ~15L), b->s, (size_t)(b->n / 32) * 2));
    } else {
        CK(cu.MemcpyHtoD(p, b->f, (size_t)b->n * 4));
    }
    return 0;
}

/* A weight declared unpair(hd, rot, at) (a rope's interleaved pairs): its
 * rows as the CPU reference reads them, logical row r the file's row
 * unpair_row(r) — fetched, moved on the host, written back (quants and
 * scales of q8 rows alike). */
static int unpair_weight(CudaLane *c, const Decl *d, CUdeviceptr p)
{
    if (!d->unpair_hd)
        return 0;
    CK(cu.StreamSynchronize(c->stream));   /* the weight synthesized on the lane's stream */
    long cols = d->ty.d[d->ty.rank - 1].n, rows = d->count / cols, qbytes = d->base == T_Q8 ? 1 : 4;
    long sbytes = d->base == T_Q8 ? cols / 32 * 2 : 0, soff = (d->count * qbytes + 15) & ~15L;
    long total = soff + rows * sbytes;
    char *a = malloc((size_t)total), *b = malloc((size_t)total);
    if (!a || !b) {
        free(a);
        free(b);
        diag("out of memory reordering the rows of weight '%s'", d->name);
        return EXIT_SYSTEM;
    }
    CUresult r = cu.MemcpyDtoH(a, p, (size_t)total);
    for (long i = 0; r == 0 && i < rows; i++) {
        long f = unpair_row(d->unpair_hd, d->unpair_rot, d->unpair_at, i);
        memcpy(b + i * cols * qbytes, a + f * cols * qbytes, (size_t)(cols * qbytes));
        if (sbytes)
            memcpy(b + soff + i * sbytes, a + soff + f * sbytes, (size_t)sbytes);
    }
    if (r == 0)
        r = cu.MemcpyHtoD(p, b, (size_t)total);
    free(a);
    free(b);
    CK(r);
    return 0;
}

typedef struct Fill {
    const WeightsArg *w;
    Env *env;            /* the files' weights, mmapped */
    Weights **maps;
    double t0;
    long done, total;
    int shown;
} Fill;

static int fill_weight(CudaLane *c, Fill *f, const Plan *pl, const PBuf *b, CUdeviceptr p)
{
    const Decl *d = &pl->prog->decls[b->decl];
    int s;
    if (f->w->synthetic) {
        if ((s = synth_kernels(c)) || (s = synth_weight(c, d, p, f->w->seed)))
            return s;
    } else {
        const Buf *hb = env_get(f->env, d->name);
        ASSERT(hb);   /* weights_bind bound every weight of every program */
        if ((s = upload_weight(hb, p)))
            return s;
    }
    if ((s = unpair_weight(c, d, p)))
        return s;
    f->done += etype_bytes(b->etype, b->count);
    progress(f->w->synthetic ? "synthesizing weights on the GPU" : "uploading weights", f->t0, f->done, f->total,
             &f->shown);
    return 0;
}

/* ---- plans ---- */

static void rope_table(const Plan *pl, const PBuf *b, double *inv)
{
    const GNode *n = &pl->g->n[b->node];
    rope_freqs(n->e, 2 * b->count, inv);
}

/* Each buffer of plan k: the stream's by name, the pool's, a view's, its own. */
static int plan_buffers(CudaLane *c, int k, Fill *f)
{
    Rt *rt = &c->rt[k];
    Plan *pl = rt->pl;
    rt->ptr = arena_alloc(c->a, sizeof *rt->ptr * (size_t)(pl->nbufs + 1));
    for (int i = 0; i < pl->nbufs; i++) {
        const PBuf *b = &pl->bufs[i];
        int s = 0, di, made;
        switch (b->kind) {
        case B_WEIGHT: case B_STATE: case B_IN: case B_OUT: case B_SIZE:
            if ((s = named(c, b, &di, &made)))
                return s;
            rt->ptr[i] = c->bufs[di].p;
            if (made && b->kind == B_WEIGHT && (s = fill_weight(c, f, pl, b, rt->ptr[i])))
                return s;
            break;
        case B_TEMP: rt->ptr[i] = c->pool + (CUdeviceptr)b->at; break;
        case B_VIEW: rt->ptr[i] = rt->ptr[b->base] + (CUdeviceptr)(b->at * etype_size(b->etype)); break;
        case B_SCRATCH:
            if ((s = dalloc(c, etype_bytes(b->etype, b->count), &rt->ptr[i])))
                return s;
            break;
        case B_CONST: {
            double *inv = calloc((size_t)b->count + 1, sizeof *inv);
            if (!inv)
                return EXIT_SYSTEM;
            rope_table(pl, b, inv);
            s = dalloc(c, b->count * 8, &rt->ptr[i]);
            if (!s && cu.MemcpyHtoD(rt->ptr[i], inv, (size_t)b->count * 8))
                s = cu_fail("cuMemcpyHtoD_v2(rope table)", 1, __FILE__, __LINE__);
            free(inv);
            if (s)
                return s;
            break;
        }
        case B_TABLE: {   /* its entries' addresses (named buffers, made above), once */
            CUdeviceptr *at = calloc((size_t)b->nents, sizeof *at);
            if (!at)
                return EXIT_SYSTEM;
            for (int e = 0; e < b->nents; e++)
                at[e] = rt->ptr[b->ents[e]];
            s = dalloc(c, (long)b->nents * (long)sizeof *at, &rt->ptr[i]);
            if (!s && cu.MemcpyHtoD(rt->ptr[i], at, (size_t)b->nents * sizeof *at))
                s = cu_fail("cuMemcpyHtoD_v2(a table of buffers)", 1, __FILE__, __LINE__);
            free(at);
            if (s)
                return s;
            break;
        }
        default: BUG("a buffer of no kind");
        }
    }
    return 0;
}

static void plan_kernels(CudaLane *c, int k)
{
    Rt *rt = &c->rt[k];
    Plan *pl = rt->pl;
    rt->kern = arena_alloc(c->a, sizeof *rt->kern * (size_t)(pl->nls + 1));
    int flags = plan_kernel_flags(pl, c->marks);
    for (int i = 0; i < pl->nls; i++) {
        const Kernel *kn = kernel_info(pl->ls[i].kernel);
        rt->kern[i] = lane_kernel(c, kernel_source(pl->ls[i].kernel, pl->ls[i].c, flags), kn->name, kn->file);
    }
}

/* ---- mmh's and mmi's tensor maps ---- */

/* One 2-D tensor map (128 bytes at m): rows of `inner` elements (type ty:
 * 0 u8, 6 f16, 7 f32, cuda.h's numbers) at pitch bytes, boxes of bi x br,
 * swizzled (cuda.h's 0 none, 2 the 64-byte swizzle, 3 the 128-byte), L2 promotion of 256
 * bytes. */
static int tmap(void *m, int ty, CUdeviceptr at, long inner, long rows, long pitch, unsigned bi, unsigned br,
                int swizzle)
{
    uint64_t dim[2] = {(uint64_t)inner, (uint64_t)rows}, str[1] = {(uint64_t)pitch};
    unsigned box[2] = {bi, br}, es[2] = {1, 1};
    CK(cu.TensorMapEncodeTiled(m, ty, 2, (void *)(uintptr_t)at, dim, str, box, es, 0, swizzle, 3, 0));
    return 0;
}

/* cuda.h's numbers: the element types and swizzles of the maps below. */
enum { MAP_U8 = 0, MAP_F16 = 6, MAP_F32 = 7, MAP_SW64 = 2, MAP_SW128 = 3 };

/* Whether this driver encodes tensor maps; else says why kernel can't run. */
static int maps_ok(const char *kernel)
{
    if (cu.TensorMapEncodeTiled)
        return 1;
    diag("this driver has no cuTensorMapEncodeTiled: %s needs CUDA 12 or later", kernel);
    return 0;
}

/* An mmh or mmi launch's (kernel kn) weights' tensor maps, m[2] on: each
 * part's quants (boxes of inner x bp rows, swizzled sw) and scales (boxes
 * of 8 x bp). */
static int weight_maps(unsigned char (*m)[128], const Rt *rt, const PLaunch *l, int kn, long bp, unsigned inner,
                       int sw)
{
    static const char *Nn[] = {"N0", "N1", "N2", "N3"};
    long K = (long)l->c[kernel_const(kn, "K")];
    int parts = (int)l->c[kernel_const(kn, "PARTS")];
    for (int q = 0; q < parts; q++) {
        long np = (long)l->c[kernel_const(kn, Nn[q])];
        CUdeviceptr w = rt->ptr[l->arg[q]];
        if (tmap(m[2 + 2 * q], MAP_U8, w, K, np, K, inner, (unsigned)bp, sw) ||
            tmap(m[3 + 2 * q], MAP_F16, w + (CUdeviceptr)((np * K + 15) / 16 * 16), K / 32, np, K / 32 * 2, 8,
                 (unsigned)bp, 0))
            return -1;
    }
    return 0;
}

/* A launch's n tensor maps at m into device memory, its parameter 21. */
static int maps_out(CudaLane *c, const void *m, int n, LParams *p)
{
    CUdeviceptr d;
    if (dalloc(c, 128L * n, &d))
        return EXIT_SYSTEM;
    CK(cu.MemcpyHtoD(d, m, 128 * (size_t)n));
    p->a[21] = (void *)(uintptr_t)d;
    return 0;
}

/* An mmh launch's tensor maps (mmh.cu's opening comment), in device
 * memory, its parameter 21: x's quants and scales (a8h: its f16 values in
 * the 128-byte swizzle, no scales; under TM a box of TM rows), then each
 * part's (under TM its quants in the 64-byte swizzle). */
static int mmh_maps(CudaLane *c, const Rt *rt, const PLaunch *l, LParams *p)
{
    _Alignas(64) unsigned char m[10][128];
    long K = (long)l->c[kernel_const(KN_MMH, "K")], rows = (long)l->c[kernel_const(KN_MMH, "ROWS")];
    long bn = (long)l->c[kernel_const(KN_MMH, "BN")], gate = (long)l->c[kernel_const(KN_MMH, "GATE")];
    int parts = (int)l->c[kernel_const(KN_MMH, "PARTS")];
    long tm = (long)l->c[kernel_const(KN_MMH, "TM")];   /* W in registers: x's box TM rows, W's rows in the 64-byte swizzle */
    if (!maps_ok("mmh"))
        return EXIT_SYSTEM;
    CUdeviceptr x = rt->ptr[l->arg[4]];
    memset(m, 0, sizeof m);
    if (l->c[kernel_const(KN_MMH, "XIN")] == 3) {
        if (tmap(m[0], MAP_F16, x, K, rows, 2 * K, 64, tm ? (unsigned)tm : 128, MAP_SW128))
            return EXIT_SYSTEM;
    } else if (tmap(m[0], MAP_U8, x, K, rows, K, 64, 128, 0) ||
               tmap(m[1], MAP_F32, x + (CUdeviceptr)((rows * K + 15) / 16 * 16), K / 32, rows, K / 32 * 4, 4, 128, 0))
        return EXIT_SYSTEM;
    if (weight_maps(m, rt, l, KN_MMH, gate ? bn / 2 : bn, 64, tm ? MAP_SW64 : 0))
        return EXIT_SYSTEM;
    return maps_out(c, m, 2 + 2 * parts, p);
}

/* An mmi launch's tensor maps (mmi.cu's opening comment), in device
 * memory, its parameter 21: x's quants (the 128-byte swizzle) and scales,
 * boxes of NR rows; then each part's quants (the 128-byte swizzle) and
 * scales, boxes of 128 rows (64 under GATE). */
static int mmi_maps(CudaLane *c, const Rt *rt, const PLaunch *l, LParams *p)
{
    _Alignas(64) unsigned char m[10][128];
    long K = (long)l->c[kernel_const(KN_MMI, "K")], rows = (long)l->c[kernel_const(KN_MMI, "ROWS")];
    long nr = (long)l->c[kernel_const(KN_MMI, "NR")], gate = (long)l->c[kernel_const(KN_MMI, "GATE")];
    int parts = (int)l->c[kernel_const(KN_MMI, "PARTS")];
    if (!maps_ok("mmi"))
        return EXIT_SYSTEM;
    CUdeviceptr x = rt->ptr[l->arg[4]];
    memset(m, 0, sizeof m);
    if (tmap(m[0], MAP_U8, x, K, rows, K, 128, (unsigned)nr, MAP_SW128) ||
        tmap(m[1], MAP_F32, x + (CUdeviceptr)((rows * K + 15) / 16 * 16), K / 32, rows, K / 32 * 4, 8, (unsigned)nr, 0) ||
        weight_maps(m, rt, l, KN_MMI, gate ? 64 : 128, 128, MAP_SW128))
        return EXIT_SYSTEM;
    return maps_out(c, m, 2 + 2 * parts, p);
}

static int plan_params(CudaLane *c, int k)
{
    Rt *rt = &c->rt[k];
    Plan *pl = rt->pl;
    rt->params = arena_alloc(c->a, sizeof *rt->params * (size_t)(pl->nls + 1));
    for (int i = 0; i < pl->nls; i++) {
        const PLaunch *l = &pl->ls[i];
        for (int p = 0; p < KMAXP; p++)
            rt->params[i].a[p] = l->arg[p] < 0 ? NULL : (void *)(uintptr_t)rt->ptr[l->arg[p]];
        if (l->kernel == KN_MMH && mmh_maps(c, rt, l, &rt->params[i]))
            return EXIT_SYSTEM;
        if (l->kernel == KN_MMI && mmi_maps(c, rt, l, &rt->params[i]))
            return EXIT_SYSTEM;
        /* past the default 48 KB a block, static shared memory counted (at
         * most 8 KB in the library: moe's routing row of 1024 experts) */
        if (l->smem > 40 * 1024) {
            if (l->smem > c->dev.smem_optin) {
                diag_at(pl->src, l->line, 1, "%s asks for %ld bytes of shared memory; this GPU gives a block %d",
                        kernel_info(l->kernel)->name, l->smem, c->dev.smem_optin);
                return EXIT_INPUT;
            }
            CK(cu.FuncSetAttribute(c->kerns[rt->kern[i]].fn, CU_FUNC_MAX_DYNAMIC_SMEM, (int)l->smem));
        }
        /* clusters past the portable 8 (mmh's x resident splits up to 16) */
        if (kernel_cluster(l->kernel, l->c) > 8)
            CK(cu.FuncSetAttribute(c->kerns[rt->kern[i]].fn, CU_FUNC_NON_PORTABLE_CLUSTER, 1));
    }
    return 0;
}

/* ---- the seam ---- */

/* Whether the stream's buffers fit in the GPU's free memory, before any is
 * made: the named ones once each (at their largest), the pool, each plan's
 * scratch. Where they do not, a message with the sums by kind and the
 * largest state (a batch's caches: ctx x sequences), and 1. */
static int fits(CudaLane *c, long pool)
{
    size_t fr = 0, all = 0;
    if (cu.MemGetInfo(&fr, &all))
        return 0;   /* no figure: cuMemAlloc says it */
    const Stream *st = c->st;
    StrMap *seen = strmap_new(c->a);
    int nb = 0;
    for (int k = 0; k < st->nprogs; k++)
        nb += st->plans[k]->nbufs;
    double *size = arena_alloc(c->a, sizeof *size * (size_t)(nb + 1)), by[B_COUNT] = {0}, big = 0,
           need = (double)pool;
    const char *bigname = "";
    nb = 0;
    for (int k = 0; k < st->nprogs; k++)
        for (int i = 0; i < st->plans[k]->nbufs; i++) {
            const PBuf *b = &st->plans[k]->bufs[i];
            double n = (double)etype_bytes(b->etype, b->count);
            if (b->kind == B_TEMP || b->kind == B_VIEW)
                continue;
            if (b->kind != B_SCRATCH && b->kind != B_CONST && b->kind != B_TABLE) {   /* named: once, at its largest */
                int j = strmap_get(seen, b->name);
                if (j < 0) {
                    j = nb++;
                    strmap_put(seen, b->name, j);
                    size[j] = 0;
                }
                if (n <= size[j])
                    continue;
                n -= size[j];
                size[j] += n;
            }
            by[b->kind] += n;
            need += n;
            if (b->kind == B_STATE && n > big) {   /* a state's size never changes between plans */
                big = n;
                bigname = b->name;
            }
        }
    if (need <= (double)fr)
        return 0;
    diag_file(st->src, "the plan's buffers take %.1f GB of GPU memory and the GPU has %.1f GB free (of %.1f): "
              "weights %.1f GB, states %.1f GB (the largest '%s', %.2f GB: a cache's rows are the spec's ctx, "
              "one a sequence), temporaries %.1f GB", need / 1e9, (double)fr / 1e9, (double)all / 1e9,
              by[B_WEIGHT] / 1e9, by[B_STATE] / 1e9, bigname, big / 1e9, (double)pool / 1e9);
    return EXIT_INPUT;
}

static int cuda_bind(Lane *l, Stream *st, const WeightsArg *w)
{
    CudaLane *c = (CudaLane *)l;
    c->st = st;
    c->rt = arena_alloc(c->a, sizeof *c->rt * (size_t)st->nprogs);
    long pool = 0, total = 0;
    for (int k = 0; k < st->nprogs; k++) {
        Plan *pl = st->plans[k];
        ASSERT(pl);   /* logos-run fuses programs before the lane opens */
        ASSERT(!pl->ncs || c->comm);   /* lane_choose gives a stream that joins chips to lane_tp */
        c->rt[k].pl = pl;
        pool = pl->pool > pool ? pl->pool : pool;
        for (int i = 0; i < pl->nbufs; i++)
            total += pl->bufs[i].kind == B_WEIGHT ? etype_bytes(pl->bufs[i].etype, pl->bufs[i].count) : 0;
        if (prog_has_size(pl->prog) && (!st->chunk_rows || pl->rows < st->chunk_rows))
            st->chunk_rows = pl->rows;
        plan_kernels(c, k);
    }
    int s = fits(c, pool);
    if (!s)
        s = lane_load(c);
    c->poolsize = pool;
    if (s || (s = dalloc(c, pool, &c->pool)))
        return s;
    Fill f = {.w = w, .t0 = mono_s(), .total = total};
    if (!w->synthetic) {
        f.env = env_new();
        f.maps = arena_alloc(c->a, sizeof *f.maps * (size_t)st->nprogs);
        for (int k = 0; k < st->nprogs && !s; k++)
            s = st->progs[k]->chips ? weights_bind_chip(&f.maps[k], st->progs[k], f.env, w->dir, 0, c->rank)
                                    : weights_bind(&f.maps[k], st->progs[k], f.env, w->dir, 0);
    }
    for (int k = 0; k < st->nprogs && !s; k++)
        if (!(s = plan_buffers(c, k, &f)))
            s = plan_params(c, k);
    if (!s && cu.StreamSynchronize(c->stream))
        s = cu_fail("cuStreamSynchronize(weights)", 1, __FILE__, __LINE__);
    if (f.shown)
        fputc('\n', stderr);
    for (int k = 0; f.maps && k < st->nprogs; k++)
        weights_close(f.maps[k]);
    env_free(f.env);
    return s;
}

/* The named buffer of program k's declaration d. */
static DBuf *decl_buf(CudaLane *c, int k, int d)
{
    int i = strmap_get(c->names, c->st->progs[k]->decls[d].name);
    ASSERT(i >= 0);
    return &c->bufs[i];
}

static int cuda_put(Lane *l, int k, int d, const void *v, long n)
{
    CudaLane *c = (CudaLane *)l;
    const Plan *pl = c->rt[k].pl;
    const Decl *decl = &pl->prog->decls[d];
    DBuf *b = decl_buf(c, k, d);
    if (n * 4 > b->bytes) {
        diag("%ld values for '%s', which holds %ld (the plan's rows: logos-fuse --rows)", n, decl->name, b->bytes / 4);
        return EXIT_INPUT;
    }
    CK(cu.MemcpyHtoD(b->p, v, (size_t)n * 4));
    long per = 1;
    for (int i = 1; i < decl->rank; i++)
        per *= decl->ty.d[i].n;
    for (int i = 0; i < decl->rank; i++) {   /* the sizes this input binds */
        if (!decl->ty.d[i].sym)
            continue;
        int sd = prog_find_decl(pl->prog, pl->prog->syms[decl->ty.d[i].sym - 1].name);
        if (sd < 0 || pl->prog->decls[sd].kind != D_SIZE)
            continue;
        int32_t rows = (int32_t)(n / per);
        CK(cu.MemcpyHtoD(decl_buf(c, k, sd)->p, &rows, 4));
    }
    return 0;
}

/* Whether LOGOS_TWICE names launch l: an item (separated by spaces or
 * commas) is a kernel's name, or NAME:CONST=VALUE for its launches whose
 * constant has that value (gemv:GATE=1). */
static int twice_names(const char *list, const PLaunch *l)
{
    const char *name = kernel_info(l->kernel)->name;
    for (const char *s = list + strspn(list, " ,"); *s; s += strspn(s, " ,")) {
        char item[128];
        size_t n = strcspn(s, " ,");
        snprintf(item, sizeof item, "%.*s", (int)n, s);
        s += n;
        char *colon = strchr(item, ':'), *eq = colon ? strchr(colon, '=') : NULL;
        if (colon)
            *colon = 0;
        if (strcmp(item, name))
            continue;
        if (!colon)
            return 1;
        if (eq) {
            *eq = 0;
            int j = kernel_const(l->kernel, colon + 1);
            if (j >= 0 && l->c[j] == atof(eq + 1))
                return 1;
        }
    }
    return 0;
}

int lane_launch(CudaLane *c, Rt *rt, int i, int pdl)
{
    const PLaunch *l = &rt->pl->ls[i];
    void *args[] = {&rt->params[i]};
    CuLaunchAttr attr[2] = {{0}};
    unsigned na = 0;
    /* LOGOS_PDL_SKIP names kernels that wait for the launch before them
     * whole (no programmatic dependent launch), to look for a race. */
    if (c->pdl_skip && strstr(c->pdl_skip, kernel_info(l->kernel)->name))
        pdl = 0;
    if (pdl && i > 0) {
        attr[na].id = CU_ATTR_PROGRAMMATIC_SERIALIZATION;
        attr[na++].v.value = 1;
    }
    int cz = kernel_cluster(l->kernel, l->c);
    if (cz > 1) {
        attr[na].id = CU_ATTR_CLUSTER_DIMENSION;
        attr[na].v.dim[0] = 1, attr[na].v.dim[1] = 1, attr[na++].v.dim[2] = (unsigned)cz;
    }
    CuLaunchConfig cfg = {(unsigned)l->grid[0], (unsigned)l->grid[1], (unsigned)l->grid[2], (unsigned)l->block, 1,
                          1, (unsigned)l->smem, c->stream, attr, na};
    CK(cu.LaunchKernelEx(&cfg, c->kerns[rt->kern[i]].fn, args, NULL));
    /* LOGOS_TWICE names kernels launched twice: a step's time with and
     * without tells what they cost inside it (the values are then wrong
     * where a launch adds into what it reads) */
    if (c->twice && twice_names(c->twice, l))
        CK(cu.LaunchKernelEx(&cfg, c->kerns[rt->kern[i]].fn, args, NULL));
    return 0;
}

/* Captures a plan's launches as one graph; nonzero when capture fails. */
static int capture(CudaLane *c, Rt *rt)
{
    CUgraph g = NULL;
    if (cu.StreamBeginCapture(c->stream, 1))
        return -1;
    int bad = 0;
    for (int i = 0; i <= rt->pl->nls && !bad; i++)
        bad = lane_step(c, rt, i, c->pdl);
    CUresult r = cu.StreamEndCapture(c->stream, &g);
    if (bad || r || !g || cu.GraphInstantiate(&rt->graph, g, 0)) {
        if (g)
            cu.GraphDestroy(g);
        rt->graph = NULL;
        return -1;
    }
    cu.GraphDestroy(g);
    return 0;
}

/* Every output and temporary of plan k as NaN (all bits set), so that a
 * value no launch wrote shows. */
static int poison(CudaLane *c, Rt *rt)
{
    CK(cu.StreamSynchronize(c->stream));
    CK(cu.MemsetD8(c->pool, 0xff, (size_t)(c->poolsize > 0 ? c->poolsize : 1)));
    for (int i = 0; i < rt->pl->nbufs; i++)
        if (rt->pl->bufs[i].kind == B_OUT)
            CK(cu.MemsetD8(rt->ptr[i], 0xff, (size_t)plan_buf_bytes(rt->pl, i)));
    return 0;
}

/* Buffer b of a plan under LOGOS_TRACE (trace.c): a statement's value (a
 * temporary or an output named as its statement, f32 or i32, not a view) or
 * a state (states 1: only those). */
static int trace_buf(Rt *rt, int k, int run, int b, int states)
{
    const PBuf *pb = &rt->pl->bufs[b];
    int named = pb->kind == B_STATE ? states : !states && (pb->kind == B_TEMP || pb->kind == B_OUT);
    if (!named || strchr(pb->name, '.') || (pb->etype != ET_F32 && pb->etype != ET_I32))
        return 0;
    long bytes = plan_buf_bytes(rt->pl, b);
    void *h = malloc((size_t)bytes);
    if (!h)
        return EXIT_SYSTEM;
    CUresult r = cu.MemcpyDtoH(h, rt->ptr[b], (size_t)bytes);
    if (!r)
        trace_write(run, k, pb->name, h, bytes);
    free(h);
    CK(r);
    return 0;
}

/* Plan k launched one by one, every statement's value written as its
 * launch leaves it, and the states at the end (LOGOS_TRACE). */
static int trace_run(CudaLane *c, Rt *rt, int k)
{
    int run = c->runs++;
    for (int i = 0; i <= rt->pl->nls; i++) {
        int s = lane_step(c, rt, i, 0);
        CK(cu.StreamSynchronize(c->stream));
        for (int p = 0; !s && i < rt->pl->nls && p < KMAXP; p++)
            if (rt->pl->ls[i].arg[p] >= 0)
                s = trace_buf(rt, k, run, rt->pl->ls[i].arg[p], 0);
        if (s)
            return s;
    }
    for (int b = 0; b < rt->pl->nbufs; b++) {
        int s = trace_buf(rt, k, run, b, 1);
        if (s)
            return s;
    }
    return 0;
}

static int cuda_run(Lane *l, int k)
{
    CudaLane *c = (CudaLane *)l;
    Rt *rt = &c->rt[k];
    int s = c->poison ? poison(c, rt) : 0;
    if (s)
        return s;
    if (trace_dir())
        return trace_run(c, rt, k);
    if (!rt->graph && !rt->eager && capture(c, rt)) {
        diag("notice: plan %d could not be captured as a CUDA graph: launching its kernels one by one", k + 1);
        rt->eager = 1;
    }
    if (rt->graph) {
        CK(cu.GraphLaunch(rt->graph, c->stream));
        return 0;
    }
    for (int i = 0; i <= rt->pl->nls; i++) {
        int s = lane_step(c, rt, i, 0);
        if (s)
            return s;
    }
    return 0;
}

static int cuda_fetch(Lane *l, int k, int d, Buf *out)
{
    CudaLane *c = (CudaLane *)l;
    const Decl *decl = &c->st->progs[k]->decls[d];
    DBuf *b = decl_buf(c, k, d);
    CK(cu.StreamSynchronize(c->stream));
    *out = (Buf){.base = decl->base, .rank = decl->rank, .n = 1};
    for (int i = 0; i < decl->rank; i++) {
        out->d[i] = decl->ty.d[i].n;
        out->n *= out->d[i];
    }
    int f16 = decl->base == T_F16;   /* a state kept in f16, read as f32 as the reference keeps it */
    size_t host = f16 && out->n * 4 > b->bytes ? (size_t)out->n * 4 : (size_t)b->bytes;
    if (!b->host && !(b->host = malloc(host)))
        return EXIT_SYSTEM;
    CK(cu.MemcpyDtoH(b->host, b->p, (size_t)b->bytes));
    for (long j = out->n - 1; f16 && j >= 0; j--)   /* from the end: the halves sit in the floats' first half */
        ((float *)b->host)[j] = f16_to_f32(((const uint16_t *)b->host)[j]);
    if (decl->base == T_I32)
        out->i = b->host;
    else
        out->f = b->host;
    return 0;
}

static void cuda_close(Lane *l)
{
    CudaLane *c = (CudaLane *)l;
    if (cu.ok && c->stream)
        cu.StreamSynchronize(c->stream);
    for (int k = 0; c->rt && c->st && k < c->st->nprogs; k++)
        if (c->rt[k].graph)
            cu.GraphExecDestroy(c->rt[k].graph);
    for (int i = 0; i < c->nowned; i++)
        cu.MemFree(c->owned[i]);
    if (c->rd_buf)
        cu.MemFree(c->rd_buf);
    if (c->tl)
        cu.MemFree(c->tl);
    if (c->rd_sink)
        cu.MemFree(c->rd_sink);
    for (int i = 0; i < c->nkerns; i++)
        if (c->kerns[i].mod)
            cu.ModuleUnload(c->kerns[i].mod);
    for (int i = 0; i < c->nbufs; i++)
        free(c->bufs[i].host);
    if (c->stream)
        cu.StreamDestroy(c->stream);
    arena_free(c->a);
    free(c);
}

Lane *lane_cuda(int *status)
{
    return lane_cuda_on(0, status);
}

Lane *lane_cuda_on(int ordinal, int *status)
{
    CudaLane *c = cuda_lane_new(ordinal, status);
    return c ? &c->lane : NULL;
}

CudaLane *cuda_lane_new(int ordinal, int *status)
{
    CudaLane *c = calloc(1, sizeof *c);
    if (!c) {
        diag("out of memory");
        exit(EXIT_SYSTEM);
    }
    c->lane = (Lane){"cuda", cuda_bind, cuda_put, cuda_run, cuda_fetch, cuda_close};
    c->a = arena_new();
    c->names = strmap_new(c->a);
    c->srcs = strmap_new(c->a);
    c->synth[0] = c->synth[1] = c->rd_kern = -1;
    c->pdl = !getenv("LOGOS_NO_PDL");
    c->pdl_skip = getenv("LOGOS_PDL_SKIP");
    c->twice = getenv("LOGOS_TWICE");
    c->poison = getenv("LOGOS_POISON") != NULL;
    c->marks = kernel_marks_env();
    *status = cu_device(&c->dev, ordinal);
    if (!*status && cu.StreamCreate(&c->stream, 0))
        *status = cu_fail("cuStreamCreate", 1, __FILE__, __LINE__);
    if (*status) {
        cuda_close(&c->lane);
        return NULL;
    }
    return c;
}

const char *lane_cuda_device(const Lane *l, int *sms)
{
    const CudaLane *c = (const CudaLane *)l;
    *sms = c->dev.sms;
    return c->dev.name;
}

void lane_cuda_startup(const Lane *l, double *compile_s, int *compiled, int *kernels)
{
    const CudaLane *c = (const CudaLane *)l;
    *compile_s = c->compile_s;
    *compiled = c->compiled;
    *kernels = c->nkerns;
}
