/* lane_cuda.c — the CUDA lane's half of fusion: each group of fuse.c
 * becomes a launch of one kernel of the table, with its constants, grid,
 * block and shared memory decided here (rows a warp, activation rows staged
 * together, chunks of split attention by chunks_apart); and the plan's
 * buffers: every declaration, a temporary for each value that crosses
 * launches (temporaries share the pool where their lives allow), views for
 * reshapes, rows and stacks computed in place, scratch for the reductions
 * that finish in their last block, and the rope frequencies. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fuse.h"

/* ---- buffers ---- */

static const GNode *N(const Fz *f, int k)
{
    return &f->g->n[k];
}

static int add_buf(Fz *f, PBuf b)
{
    Plan *pl = f->pl;
    b.decl = b.decl ? b.decl : -1;
    *VEC_PUSH(f->a, pl->bufs, pl->nbufs, pl->cbufs) = b;
    if (strmap_get(pl->names, b.name) < 0)
        strmap_put(pl->names, b.name, pl->nbufs - 1);
    return pl->nbufs - 1;
}

/* A size at the plan's row bound (dim_bound). */
static long bound(const Fz *f, const Dim *d)
{
    return dim_bound(d, f->o->rows);
}

/* Values of a type with its sizes at the plan's row bound. */
static long type_values(const Fz *f, const Type *t)
{
    long n = 1;
    for (int i = 0; i < t->rank; i++)
        n *= bound(f, &t->d[i]);
    return n;
}

static void decl_bufs(Fz *f)
{
    static const int kinds[] = {[D_SIZE] = B_SIZE, [D_IN] = B_IN, [D_WEIGHT] = B_WEIGHT, [D_STATE] = B_STATE,
                                [D_OUT] = B_OUT};
    for (int i = 0; i < f->p->ndecls; i++) {
        const Decl *d = &f->p->decls[i];
        int et = d->kind == D_SIZE || d->base == T_I32 ? ET_I32 : d->base == T_Q8 ? ET_Q8
                 : d->base == T_F16 ? ET_F16 : ET_F32;
        long n = d->kind == D_SIZE ? 1 : type_values(f, &d->ty);
        int b = add_buf(f, (PBuf){.name = d->name, .kind = kinds[d->kind], .etype = et, .count = n, .decl = i,
                                  .node = -1, .base = -1});
        f->pl->bufs[b].decl = i;
        f->buf[f->g->decl_node[i]] = b;
    }
}

/* The name of node k's value: its statement's, or statement.node inside one;
 * inside a statement that writes a state an earlier one wrote too
 * (Vc0[pos] = ... twice), statement@number.node, so that no two buffers
 * share a name. */
static const char *node_name(const Fz *f, int k)
{
    const GNode *n = N(f, k);
    const Stmt *s = &f->p->stmts[n->stmt];
    if (f->g->stmt_node[n->stmt] == k)
        return s->name;
    for (int i = 0; s->kind == S_WRITE && i < n->stmt; i++)   /* an assignment's name is its own */
        if (f->p->stmts[i].kind == S_WRITE && !strcmp(f->p->stmts[i].name, s->name))
            return arena_printf(f->a, "%s@%d.%d", s->name, n->stmt + 1, n->sub);
    return arena_printf(f->a, "%s.%d", s->name, n->sub);
}

/* The group whose launch writes node k: its own, or for a stack computed
 * in place its first row's (a batch's attention writes its stack whole). */
static int writer_of(const Fz *f, int k)
{
    const GNode *n = N(f, k);
    return n->op == OP_STACK && n->view ? f->group[n->args[0]] : f->group[k];
}

static int etype_of(const Fz *f, int k)
{
    if (N(f, k)->ty.base == T_I32)
        return ET_I32;
    int g = f->group[k];
    if (g >= 0 && f->gs[g].oq && f->gs[g].out[0] == k)
        return act_etype(f->gs[g].oq);
    if (g >= 0 && f->gs[g].sq == k)   /* norm_split's quants, written by the products before the norm */
        return act_etype(f->gs[g].sqw);
    g = writer_of(f, k);
    if (g >= 0 && f->gs[g].oq && quant_out(f, &f->gs[g]) == k)   /* batch_attend's quantized stack */
        return act_etype(f->gs[g].oq);
    return ET_F32;
}

static int buf_of(Fz *f, int k);

/* A view node's buffer: a reshape is its base's; rows [..p] are the state;
 * a literal row lies inside its base. */
static int view_buf(Fz *f, int k)
{
    const GNode *n = N(f, k);
    int base = buf_of(f, n->args[0]);
    if (n->op != OP_INDEX)
        return base;
    long row = (long)N(f, n->args[1])->e->num, per = type_values(f, &n->ty);
    PBuf *bb = &f->pl->bufs[base];
    return add_buf(f, (PBuf){.name = arena_printf(f->a, "%s[%ld]", bb->name, row), .kind = B_VIEW,
                             .etype = bb->etype, .count = per, .at = row * per, .base = base, .node = -1});
}

/* Node k's buffer, made when first asked for. */
static int buf_of(Fz *f, int k)
{
    if (f->buf[k] >= 0)
        return f->buf[k];
    const GNode *n = N(f, k);
    if (n->view && n->op != OP_STACK)
        return f->buf[k] = view_buf(f, k);
    int s = n->stmt;
    int b;
    if (s >= 0 && f->g->stmt_node[s] == k && f->p->stmts[s].decl >= 0 && n->op != G_WRITE)
        b = f->buf[f->g->decl_node[f->p->stmts[s].decl]];
    else
        b = add_buf(f, (PBuf){.name = node_name(f, k), .kind = B_TEMP, .etype = etype_of(f, k),
                              .count = type_values(f, &n->ty), .node = -1, .base = -1});
    return f->buf[k] = b;
}

/* Node k's buffer as a view of per values at `at` inside buffer b. */
static void place(Fz *f, int k, int b, long at, long per)
{
    f->buf[k] = add_buf(f, (PBuf){.name = node_name(f, k), .kind = B_VIEW, .etype = f->pl->bufs[b].etype,
                                  .count = per, .at = at, .base = b, .node = -1});
}

/* A stack computed in place: its rows are views inside its buffer (f32:
 * a quantized stack, which a batch's attention writes whole, has no rows
 * of its own; a row of a8 values is not a buffer of them). */
static void stack_rows(Fz *f)
{
    for (int k = 0; k < f->g->nn; k++) {
        const GNode *n = N(f, k);
        if (n->op != OP_STACK || !n->view)
            continue;
        int b = buf_of(f, k);
        if (f->pl->bufs[b].etype != ET_F32)
            continue;
        long per = type_values(f, &N(f, n->args[0])->ty);
        for (int i = 0; i < n->nargs; i++)
            place(f, n->args[i], b, i * per, per);
    }
}

/* A concatenation its product's parts write in place (fuse.c's
 * concat_parts): each operand a view at its place in its buffer. */
static void concat_places(Fz *f)
{
    for (int i = 0; i < f->ng; i++) {
        int k = f->gs[i].cat;
        if (k < 0)
            continue;
        const GNode *c = N(f, k);
        int b = buf_of(f, k);
        long at = 0;
        for (int j = 0; j < c->nargs; j++) {
            long per = type_values(f, &N(f, c->args[j])->ty);
            place(f, c->args[j], b, at, per);
            at += per;
        }
    }
}

/* A buffer of kind (B_SCRATCH, or a B_TEMP no node names) of n values. */
static int unnamed_buf(Fz *f, const char *name, int kind, int et, long n)
{
    return add_buf(f, (PBuf){.name = name, .kind = kind, .etype = et, .count = n, .node = -1, .base = -1});
}

static int scratch(Fz *f, const char *name, int et, long n)
{
    return unnamed_buf(f, name, B_SCRATCH, et, n);
}

/* The size buffer of a symbolic dimension, or -1. */
static int size_buf(const Fz *f, const Dim *d)
{
    if (!d->sym)
        return -1;
    int di = prog_find_decl(f->p, f->p->syms[d->sym - 1].name);
    return di >= 0 && f->p->decls[di].kind == D_SIZE ? f->buf[f->g->decl_node[di]] : -1;
}

/* Rows before the last `keep` axes of t: their count at the bound, and the
 * size buffer when the first is symbolic. */
static long lead_rows(const Fz *f, const Type *t, int keep, int *n)
{
    long r = 1;
    *n = -1;
    for (int i = 0; i < t->rank - keep; i++) {
        r *= bound(f, &t->d[i]);
        if (t->d[i].sym && *n < 0)
            *n = size_buf(f, &t->d[i]);
    }
    return r;
}

/* ---- launches ---- */

typedef struct L {
    Fz *f;
    PLaunch *l;
} L;

static L launch(Fz *f, int kernel, const Group *gr)
{
    Plan *pl = f->pl;
    PLaunch *l = VEC_PUSH(f->a, pl->ls, pl->nls, pl->cls);
    memset(l, 0, sizeof *l);
    l->kernel = kernel;
    for (int i = 0; i < KMAXP; i++)
        l->arg[i] = -1;
    l->covers = gr->nodes;
    l->ncovers = gr->nn;
    return (L){f, l};
}

static void C(L L, const char *name, double v)
{
    int i = kernel_const(L.l->kernel, name);
    ASSERT(i >= 0);
    L.l->c[i] = v;
}

static void refuse(L L, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Passes buffer buf as parameter name; refuses the plan where the kernel
 * does not take its kind of buffer or its element type (an elementwise op
 * on an f16 cache: elem.cu reads f32 alone), as logos-run's check would. */
static void A(L L, const char *name, int buf)
{
    int i = kernel_param(L.l->kernel, name);
    ASSERT(i >= 0);
    L.l->arg[i] = buf;
    char why[256];
    if (buf >= 0 && !L.f->bad && plan_arg_fits(L.f->pl, L.l->kernel, i, buf, why, sizeof why))
        refuse(L, "%s", why);
}

/* The scratch of a launch whose blocks leave partial results for the last
 * to merge: NODE.part (parts f32 values) and, where counts > 0, NODE.count
 * (counts i32 counters, zero between launches). */
static void merge_scratch(L L, Fz *f, int node, long parts, long counts)
{
    const char *nm = node_name(f, node);
    A(L, "part", scratch(f, arena_printf(f->a, "%s.part", nm), ET_F32, parts));
    if (counts > 0)
        A(L, "cnt", scratch(f, arena_printf(f->a, "%s.count", nm), ET_I32, counts));
}

/* A scratch buffer that launches one after another share (each leaves it
 * as it found it: mmh's tail sets its counts back to 0), as large as the
 * largest asks: NAME, made when first asked for. */
static int shared_scratch(Fz *f, const char *name, int et, long n)
{
    int b0 = plan_buf(f->pl, name);
    if (b0 < 0)
        return scratch(f, name, et, n);
    for (int b = b0; b < f->pl->nbufs; b++) {   /* the first of that name, unless another kind took it first */
        PBuf *x = &f->pl->bufs[b];
        if (x->kind == B_SCRATCH && !strcmp(x->name, name)) {
            x->count = n > x->count ? n : x->count;
            return b;
        }
    }
    return scratch(f, name, et, n);
}

/* Refuses the plan (f->bad) at the first statement launch L covers: the
 * program's shapes or numbers ask what L's kernel cannot do (an eps of 1e5
 * past its constant's range; values of odd width, which attend.cu reads a
 * pair at a time). The rules check what they can before they fuse; this is
 * the kernel table's last word, so that every plan printed loads. */
static void refuse(L L, const char *fmt, ...)
{
    const GNode *n = N(L.f, L.l->covers[0]);
    const Prog *p = L.f->p;
    int line = n->stmt >= 0 ? p->stmts[n->stmt].line : p->decls[n->decl].line;
    char why[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!L.f->o->quiet)
        diag_at(p->src, line, n->e ? n->e->col : 1, "the CUDA lane has no kernel for this: %s", why);
    L.f->bad = EXIT_INPUT;
}

/* Sets the grid, block and shared memory the constants ask for; refuses
 * the plan where they are outside their kernel's ranges or ask what it
 * cannot take. */
static void finish(L L)
{
    const Kernel *k = kernel_info(L.l->kernel);
    KNeed need;
    char why[200];
    if (L.f->bad)
        return;
    for (int i = 0; i < k->nc; i++) {
        double v = L.l->c[i];
        if (!isfinite(v) || v < k->c[i].lo || v > k->c[i].hi) {
            refuse(L, "%s's %s would be %g, outside %g to %g", k->name, k->c[i].name, v, k->c[i].lo, k->c[i].hi);
            return;
        }
    }
    if (kernel_need(L.l->kernel, L.l->c, &need, why, sizeof why)) {
        refuse(L, "%s: %s", k->name, why);
        return;
    }
    memcpy(L.l->grid, need.grid, sizeof need.grid);
    L.l->block = need.block;
    L.l->smem = need.smem;
}

static long last(const Type *t)
{
    return t->d[t->rank - 1].n;
}

static int wq(const Fz *f, int prod)
{
    return N(f, N(f, prod)->args[0])->ty.base == T_Q8;
}

/* Units a warp: one, so that the groups are many and the blocks share them
 * evenly; 4 under a quantizing epilogue (a block holds whole 32-value
 * blocks of its output). */
static int gemv_wr(int oq)
{
    return oq ? 4 : 1;
}

/* ---- products of stacked rows on the tensor cores (mma.cu) ---- */

/* Which kernel a product group runs on: KN_MMA for stacked rows at least
 * --mma-rows of them, KN_MMV for at least --mmv-rows (fewer than
 * --mma-rows) whose activations arrive quantized in the numerics' format,
 * KN_GEMV otherwise; the tensor cores need every part Q8_0 over whole
 * 32-value blocks, quantized numerics (q8, q8x2) and no arg-max. -v says
 * the decision for stacked rows. */
/* The activation words a value the numerics quantize to: 0 (precise,
 * f32), 1 (q8, a8) or 2 (q8x2, a8x2). */
static int act_words(const Fz *f)
{
    return f->o->numerics == NUM_PRECISE ? 0 : f->o->numerics == NUM_Q8 ? 1 : 2;
}

static long mmv_tiles(long rows, int xq);

/* The width K of a product group's activation (its first weight's rows). */
static long prod_k(Fz *f, const Group *gr)
{
    return N(f, N(f, gr->prod[0])->args[0])->ty.d[1].n;
}

/* The format (0 f32, 1 a8, 2 a8x2, 3 a8h) of the activation buffer a
 * product group reads, as placed. */
static int x_format(Fz *f, const Group *gr)
{
    return etype_format(f->pl->bufs[plan_base(f->pl, buf_of(f, gr->x))].etype);
}

/* mmh's tile: 256 weight rows where the units are at least 6144, else 128
 * (twice the blocks where the outputs are narrow: bench/NOTES.md run158,
 * 0.67-0.69x at 4096 outputs with 256). */
static long mmh_bn(Fz *f, const Group *gr, long tm)
{
    long units = 0;
    if (tm)
        return 128;
    for (int p = 0; p < gr->parts; p++)
        units += gr->gate && p == 1 ? 0 : last(&N(f, gr->prod[p])->ty);
    return units >= 6144 ? 256 : 128;
}

/* The group's tiles of bn weight rows (bn / 2 gate rows and their up
 * rows under a gated pair), each part's end to end (kernels.c's
 * mmh_tiles, as need_mmh and need_mmi count them). */
static long group_tiles(Fz *f, const Group *gr, long bn)
{
    long np[4] = {0};
    for (int p = 0; p < gr->parts; p++)
        np[p] = last(&N(f, gr->prod[p])->ty);
    return mmh_tiles(bn, gr->gate, np, gr->parts);
}

/* An mmi launch's stages of 256 values of K over its tiles of 128 weight
 * rows (*tiles: how many), as mmi.cu's blocks share them. */
static long mmi_stages(Fz *f, const Group *gr, long *tiles)
{
    *tiles = group_tiles(f, gr, 128);
    return *tiles * (prod_k(f, gr) / 256);
}

/* Why, at the default --mmi-rows, a product of rows stacked rows that mmi
 * could take stays off it, or NULL: its fixed costs (a launch's start, the
 * tiles split between blocks meeting at their ends) outweigh its faster
 * stages unless it has at least 4 stages of 256 values a multiprocessor,
 * and, within mmv's one pass of 32 rows, at least a tile of 128 weight
 * rows a multiprocessor too. On an H100, q8 batches of 32 and 64 (f16
 * caches, position 512): the 8B's q/k/v, gated pair, down and LM head won
 * on mmi at 64 rows and its o lost (512 stages); at 32 rows the gated
 * pair and the LM head won and down (32 tiles) lost; Qwen3-0.6B's and
 * Qwen2.5-0.5B's steps, whose products have 64 to 192 stages, ran 3-13%
 * slower all on mmi (bench/NOTES.md run246, run253). The stages do not
 * count where mmv would split K unevenly between its warps (mmv_uneven),
 * as mmi's blocks share any K evenly: Gemma-2-2B's q/k/v at K 2304 on
 * mmi took its step at 48 and 64 rows 12.8% and 9.9% faster (run273, an
 * H100); at 32 rows (32 tiles) that launch was 19% slower there.
 * *uneven: whether that is what took the product to mmi. */
static const char *mmi_small(Fz *f, const Group *gr, long rows, int *uneven)
{
    static char why[128];
    long tiles, stages = mmi_stages(f, gr, &tiles), sms = f->o->sms;
    *uneven = stages < 4 * sms && mmv_uneven(prod_k(f, gr), gr->gate);
    if (stages < 4 * sms && !*uneven)
        snprintf(why, sizeof why, "%ld stages of 256 values, fewer than 4 a multiprocessor (%ld)", stages, 4 * sms);
    else if (rows <= 32 && tiles < sms)
        snprintf(why, sizeof why, "%ld tiles of 128 weight rows for %ld rows, fewer than a multiprocessor's (%ld)",
                 tiles, rows, sms);
    else
        return NULL;
    return why;
}

/* The blocks of an mmh launch of the group over rows: its row tiles by
 * its tiles of weight rows. */
static long mmh_blocks(Fz *f, const Group *gr, long rows, long tm)
{
    long bm = tm ? tm : 128;
    return (rows + bm - 1) / bm * group_tiles(f, gr, mmh_bn(f, gr, tm));
}

/* mmh's splits of K (SK): where its tiles fill at most half the chip, K
 * goes to clusters of 2 or 4 blocks while the grid stays within one wave
 * (a block a multiprocessor: mmh's shared memory) and each split keeps 32
 * stages of 64 values (bench/NOTES.md run165, run170: the 1B's down 88 ->
 * 76 us split in 2, the 8B's down at 128 rows 123 -> 114 in 4; splits of
 * 16 stages lost to mma, the 8B's o at 128 rows 50 -> 69 us). */
static long mmh_splits(const Fz *f, long blocks, long K)
{
    long sk = 1;
    while (sk < 4 && blocks * sk * 2 <= f->o->sms && K / 64 / (sk * 2) >= 32)
        sk *= 2;
    return sk;
}

/* mmh's tail (TAIL): where its whole tiles (a block a multiprocessor)
 * take more than one round of the chip and the last round leaves half of
 * it or more idle, that round's tiles each go to two blocks of half K
 * (at least 32 stages each): the 8B's gated pair at 512 rows, 448 tiles
 * on 132, 3 rounds and 52 whole tiles become 3 and 104 half ones
 * (bench/NOTES.md run172: 340 -> 326 us a launch, not the half round's
 * 12%: the rounds do not go in lockstep). */
static long mmh_tail(const Fz *f, long tiles, long K)
{
    long rest = tiles % f->o->sms;
    return tiles > f->o->sms && rest && 2 * rest <= f->o->sms && K / 64 / 2 >= 32 ? rest : 0;
}

/* Clusters of sk blocks the chip holds at once (a block a multiprocessor):
 * its multiprocessors taken as groups (GPCs) of about 16.5, a cluster
 * within one. An estimate: the H200's own counts
 * (cudaOccupancyMaxActiveClusters, bench/wr64.cu in bench/NOTES.md run183)
 * are 30 clusters of 4, 15 of 8 and 7 of 14, where this says 32, 16 and 8. */
static long xr_clusters(const Fz *f, long sk)
{
    long sms = f->o->sms, gpcs = (sms + 17) / 18;
    return sk == 1 ? sms : gpcs * (sms / gpcs / sk);
}

/* mmh with x resident (TM 64, mmh.cu's XR): the split of K (SK, 1 to 16,
 * past 8 clusters that are not portable, one a GPC: each block K / SK
 * values of x, 256 to 1024 in whole 256-value blocks)
 * whose rounds of tiles over the clusters the chip holds take the fewest
 * stages (ties: the fewer splits), and those clusters (*cy); 0 where K has
 * no such split. */
static long xr_splits(const Fz *f, long tiles, long K, long *cy)
{
    long best = 0, cost = 0;
    for (long sk = 1; sk <= 16; sk++) {
        if (K % (sk * 256) || K / sk > 1024)
            continue;
        long c = xr_clusters(f, sk), y = tiles < c ? tiles : c, r = (tiles + y - 1) / y;
        if (!best || r * (K / sk) < cost)
            best = sk, cost = r * (K / sk), *cy = y;
    }
    return best;
}

static int writes_a8h(Fz *f, const Group *gr);

/* Does the activation of group gr come a8h, or from a launch that can
 * write it so (half_acts)? */
static int a8h_source(Fz *f, const Group *gr)
{
    int k = view_root(f->g, gr->x), g = writer_of(f, k);
    if (g < 0 || quant_out(f, &f->gs[g]) != k)
        return 0;
    return f->gs[g].oq == 3 || writes_a8h(f, &f->gs[g]);
}

/* The kernel of a product group whose activation arrives in format xin (0
 * f32, 1 a8 (or a8h, its values in f16), 2 a8x2); with say, -v's lines. */
static int product_kernel(Fz *f, const Group *gr, int xin, int say)
{
    int n, cross = mma_crossover(f->o), vcross = mmv_crossover(f->o);   /* fuse.c's mma_bound: the same facts */
    long rows = lead_rows(f, &N(f, gr->prod[0])->ty, 1, &n), K = prod_k(f, gr);
    int q8 = 1, xq = act_words(f);
    for (int p = 0; p < gr->parts; p++)
        q8 &= wq(f, gr->prod[p]);
    if (rows < 2)
        return KN_GEMV;
    int mma = rows >= cross, mmv = !mma && rows >= vcross;
    const char *why = !mma && !mmv ? "fewer rows than --mmv-rows and --mma-rows" : !q8 ? "f32 weights"
                      : K % 32 ? "not whole 32-value blocks" : !xq ? "f32 activations"
                      : gr->argmax >= 0 ? "an arg-max epilogue"
                      : xin && xin != xq ? "activations in another format"
                      : mmv && gr->norm >= 0 ? "a norm prologue"
                      : gr->xg >= 0 ? "a gate prologue"
                      : mmv && !xin ? "activations not quantized before it (--mmv-rows reads them so)" : NULL;
    if (why) {
        if (say)
            fuse_note(f, gr->node, "products of %ld stacked rows as GEMVs: %s (%d, %d)", rows, why, vcross, cross);
        return KN_GEMV;
    }
    if (mma) {
        long blocks = mmh_blocks(f, gr, rows, 0);
        const char *no = rows < mmh_crossover(f->o) ? "fewer rows than --mmh-rows" : xq != 1 || xin != 1
                         ? "activations not a8 (q8 numerics, quantized before it)"
                         : K % 256 ? "K not whole 256-value blocks" : gr->gate && gr->parts != 2
                         ? "a gated pair beside other parts"
                         : blocks * mmh_splits(f, blocks, K) < f->o->sms / 2
                         ? "its tiles, K split, fill less than half the chip (mma splits K further)" : NULL;
        if (!no) {
            if (say)
                fuse_note(f, gr->node, "products of %ld stacked rows on the tensor cores in f16 tiles (mmh): at least "
                          "--mma-rows %d and --mmh-rows %d", rows, cross, mmh_crossover(f->o));
            return KN_MMH;
        }
        if (say)
            fuse_note(f, gr->node, "products of %ld stacked rows on the tensor cores in int8 tiles (mma): at least "
                      "--mma-rows %d; not f16 tiles: %s", rows, cross, no);
        return KN_MMA;
    }
    int xr_asked = f->o->xr_rows > 0 && rows >= f->o->xr_rows;   /* a given --xr-rows takes its rows from mmi */
    if (rows >= mmi_crossover(f->o) && rows <= 64 && xq == 1 && xin == 1 && K % 256 == 0 && gr->norm < 0 &&
        (!gr->gate || gr->parts == 2) && !xr_asked) {
        int uneven = 0;
        const char *small = f->o->mmi_rows > 0 ? NULL : mmi_small(f, gr, rows, &uneven);
        if (!small) {
            if (say)
                fuse_note(f, gr->node, "products of %ld stacked rows on the tensor cores in int8 wgmma (mmi): at "
                          "least --mmi-rows %d, at most 64%s", rows, mmi_crossover(f->o),
                          uneven ? "; mmv would split its K unevenly between its warps" : "");
            return KN_MMI;
        }
        if (say)
            fuse_note(f, gr->node, "products of %ld stacked rows not in int8 wgmma (mmi): %s (a given --mmi-rows "
                      "takes them)", rows, small);
    }
    long cy;
    if (rows >= xr_crossover(f->o) && rows <= 64 && xq == 1 && K % 256 == 0 && (!gr->gate || gr->parts == 2) &&
        xr_splits(f, mmh_blocks(f, gr, rows, 64), K, &cy) && a8h_source(f, gr)) {
        if (say)
            fuse_note(f, gr->node, "products of %ld stacked rows on the tensor cores in f16 with x resident (mmh TM "
                      "64): at least --xr-rows %d, at most 64", rows, xr_crossover(f->o));
        return KN_MMH;
    }
    long per = 8 * mmv_tiles(rows, xq), passes = (rows + per - 1) / per;
    if (say)
        fuse_note(f, gr->node, "products of %ld stacked rows on the tensor cores in %ld pass%s of up to %ld: at least "
                  "--mmv-rows %d, fewer than --mma-rows %d", rows, passes, passes == 1 ? "" : "es", per, vcross, cross);
    return KN_MMV;
}

/* The format (product_kernel's xin) of the activation node k is read as. */
static int act_format(Fz *f, int k)
{
    int xin = etype_format(etype_of(f, view_root(f->g, k)));
    return xin == 3 ? 1 : xin;
}

/* ---- a8h: a quantized activation held as f16 where mmh alone reads it ---- */

/* Does every reader of node k, through reshapes, read it as the activation
 * of products that run on mmh? */
static int read_by_mmh(Fz *f, int k)
{
    if (!f->ncons[k])
        return 0;
    for (int i = 0; i < f->ncons[k]; i++) {
        int c = f->cons[k][i], g = f->group[c];
        if (N(f, c)->op == OP_RESHAPE) {
            if (!read_by_mmh(f, c))
                return 0;
            continue;
        }
        if (g < 0 || f->gs[g].kind != GK_GEMV || view_root(f->g, f->gs[g].x) != view_root(f->g, k) ||
            product_kernel(f, &f->gs[g], 1, 0) != KN_MMH)
            return 0;
    }
    return 1;
}

/* Can group g's launch write its output a8h: a norm, an attention, a
 * convolution, or products in tiles (mma, mmh), writing a8 now. */
static int writes_a8h(Fz *f, const Group *gr)
{
    if (gr->oq != 1 || !gr->nn || f->buf[gr->out[0]] >= 0 || N(f, gr->out[0])->view)
        return 0;   /* placed already: a view inside another buffer, or a declared one */
    switch (gr->kind) {
    case GK_NORM: case GK_CONV: return 1;
    case GK_ATTEND:   /* a batch's: up to x resident's 64 rows (past them unchecked on a GPU yet: run181) */
        return gr->nseq <= 64;
    case GK_GEMV: {
        int kn = product_kernel(f, gr, act_format(f, gr->x), 0);
        return kn == KN_MMA || kn == KN_MMH;
    }
    default: return 0;
    }
}

/* Under q8, an activation quantized in its producer's epilogue (fuse_quant)
 * whose every reader is an mmh launch is written as f16, each value
 * f16(q f16(d)) (a8h: the values mmh would make of its a8 ones, so the
 * same sums), and taken by TMA as it is: no dequantization in each of
 * mmh's blocks (bench/NOTES.md run158: 0.77x the launch). */
static void half_acts(Fz *f)
{
    for (int i = 0; i < f->ng; i++) {
        Group *gr = &f->gs[i];
        int k = quant_out(f, gr);
        if (!writes_a8h(f, gr) || !read_by_mmh(f, k))
            continue;
        gr->oq = 3;
        fuse_note(f, k, "a8h: %s written as f16 (each a8 value f16(q f16(d))): its every reader an mmh launch, which "
                  "takes it by TMA as it is", node_name(f, k));
    }
}

/* ---- norm_split: a norm between stacked products, in their epilogues ---- */

/* The groups reading node k (through reshapes) into g, each once; -1 when
 * more than `most`, or a reader that is not a product group taking k as
 * its quantized activation on mmv. */
static int split_readers(Fz *f, int k, int root, int *g, int n, int most)
{
    for (int i = 0; i < f->ncons[k]; i++) {
        int c = f->cons[k][i], r = f->group[c], seen = 0;
        if (N(f, c)->op == OP_RESHAPE) {
            if ((n = split_readers(f, c, root, g, n, most)) < 0)
                return -1;
            continue;
        }
        if (r < 0 || f->gs[r].kind != GK_GEMV || view_root(f->g, f->gs[r].x) != root || f->gs[r].norm >= 0 ||
            f->gs[r].xg >= 0 || f->gs[r].rn >= 0 || product_kernel(f, &f->gs[r], act_format(f, root), 0) != KN_MMV)
            return -1;
        for (int j = 0; j < n; j++)
            seen |= g[j] == r;
        if (!seen) {
            if (n == most)
                return -1;
            g[n++] = r;
        }
    }
    return n;
}

/* Why the norm group nm may not run split between the product before it
 * and the products after it (rule norm_split), or NULL; its producer in
 * *pg and its readers' groups in g (*ng of them). */
static const char *no_split(Fz *f, const Group *nm, int *pg, int *g, int *ng)
{
    const GNode *n = N(f, nm->node);
    if (n->op != OP_RMSNORM || nm->add >= 0 || nm->ngate)
        return "not a plain RMS norm";
    if (nm->oq != 1 && nm->oq != 2)
        return "its output is not quantized in its epilogue (fuse_quant)";
    int x = view_root(f->g, n->args[0]), w = writer_of(f, x);
    if (n->nargs == 2 && !is_decl_of(f, n->args[1], D_WEIGHT))
        return "its weight is computed, not a weight";
    if (w < 0 || f->gs[w].kind != GK_GEMV || f->gs[w].out[0] != x || f->gs[w].parts != 1 || f->gs[w].gate ||
        f->gs[w].oq || f->gs[w].argmax >= 0 || f->gs[w].sq >= 0 ||
        type_values(f, &N(f, x)->ty) != type_values(f, &n->ty) || last(&N(f, x)->ty) != last(&n->ty))
        return "its input is not the one output of products before it";
    if (product_kernel(f, &f->gs[w], act_format(f, f->gs[w].x), 0) != KN_MMV)
        return "the products before it do not run on mmv";
    if ((*ng = split_readers(f, nm->node, nm->node, g, 0, 8)) <= 0)
        return "a reader is not products on mmv taking it as their activation";
    *pg = w;
    return NULL;
}

/* Rule norm_split: an RMS norm of stacked rows whose input is the one
 * output of products on mmv (a residual's sum) and whose readers are
 * products on mmv runs in their epilogues: the products before it write
 * its values before the row's scale, quantized, and each 32-value block's
 * sum of squares; the products after it scale each row (mmv.cu's SQ and
 * RN). One launch fewer a norm, and no trip through memory of its own. */
static void norm_split(Fz *f)
{
    if (!f->o->lane_rules)
        return;
    for (int i = 0; i < f->ng; i++) {
        Group *nm = &f->gs[i];
        int pg, g[8], ng, sz;
        if (nm->kind != GK_NORM || !nm->nn || lead_rows(f, &N(f, nm->node)->ty, 1, &sz) < 2)
            continue;
        const char *why = no_split(f, nm, &pg, g, &ng);
        if (why) {
            if (N(f, nm->node)->op == OP_RMSNORM)
                fuse_note(f, nm->node, "no norm_split: %s", why);
            continue;
        }
        Group *p = &f->gs[pg];
        p->sq = nm->node;
        p->sqw = nm->oq;
        for (int j = 0; j < ng; j++)
            f->gs[g[j]].rn = nm->node;
        for (int j = 0; j < nm->nn; j++) {
            f->group[nm->nodes[j]] = pg;
            *VEC_PUSH(f->a, p->nodes, p->nn, p->cn) = nm->nodes[j];
        }
        nm->nn = 0;
        fuse_note(f, nm->node, "rule norm_split: %s runs in the epilogues of the products before it (its quants and "
                  "sums of squares) and after it (each row's scale)", node_name(f, nm->node));
        took(f, RU_NORM_SPLIT);
    }
}

static int temp_of(Fz *f, int node, const char *suffix, long n);

/* norm_split's sums of squares of norm k: NORM.ss, a block of 32 values a
 * sum, made when first asked for. */
static int split_sums(Fz *f, int k)
{
    const char *name = arena_printf(f->a, "%s.ss", node_name(f, k));
    int b = plan_buf(f->pl, name);
    return b >= 0 ? b : temp_of(f, k, "ss", type_values(f, &N(f, k)->ty) / 32);
}

/* A product group's parts and epilogue as a GEMV's, an MMA's or an MMV's
 * constants and arguments (K, PARTS, ROWS, N0.., W0.., y0.., b0.., r0..,
 * BIAS, RES, GATE, CAP, OQ, x, n); its units, the outputs it writes (a
 * gated pair's up part writes none of its own). */
static long product_consts(L L, Fz *f, const Group *gr, long rows, int n)
{
    static const char *Nn[] = {"N0", "N1", "N2", "N3"}, *W[] = {"W0", "W1", "W2", "W3"},
                      *Y[] = {"y0", "y1", "y2", "y3"}, *B[] = {"b0", "b1", "b2", "b3"}, *R[] = {"r0", "r1", "r2", "r3"};
    long units = 0;
    int bias = 0, res = 0;
    for (int p = 0; p < gr->parts; p++) {
        long np = last(&N(f, gr->prod[p])->ty);
        C(L, Nn[p], (double)np);
        A(L, W[p], buf_of(f, N(f, gr->prod[p])->args[0]));
        units += gr->gate && p == 1 ? 0 : np;
        if (!(gr->gate && p == 1))
            A(L, Y[p], buf_of(f, gr->out[p]));
        if (gr->bias[p] >= 0) {
            bias |= 1 << p;
            A(L, B[p], buf_of(f, gr->bias[p]));
        }
        if (gr->res[p] >= 0) {
            res |= 1 << p;
            A(L, R[p], buf_of(f, gr->res[p]));
        }
    }
    C(L, "K", (double)prod_k(f, gr));
    C(L, "PARTS", gr->parts);
    C(L, "ROWS", (double)rows);
    C(L, "BIAS", bias);
    C(L, "RES", res);
    C(L, "GATE", gr->gate);
    C(L, "CAP", gr->cap);
    C(L, "OQ", gr->oq);
    C(L, "GS", gr->gs >= 0);
    A(L, "gs", gr->gs >= 0 ? buf_of(f, gr->gs) : -1);
    A(L, "x", buf_of(f, gr->x));
    A(L, "n", n);
    return units;
}

/* A norm folded into the product's prologue: its constants and weight. */
static void norm_prologue(L L, Fz *f, const Group *gr)
{
    if (gr->norm < 0)
        return;
    const GNode *nm = N(f, gr->norm);
    C(L, "NORM", 1);
    C(L, "EPS", attr_num(nm->e, "eps", 0));
    C(L, "OFFSET", attr_num(nm->e, "offset", 0));
    C(L, "NW", nm->nargs == 2);
    if (nm->nargs == 2)
        A(L, "nw", buf_of(f, nm->args[1]));
}

/* A sandwich norm before the norm prologue (fuse.c's sandwich): its
 * weight, its residual, and where the sum goes when later launches read
 * it (XR). */
static void sandwich_prologue(L L, Fz *f, const Group *gr)
{
    C(L, "PRE", gr->pre >= 0);
    C(L, "XR", gr->xr);
    if (gr->pre < 0)
        return;
    A(L, "pw", buf_of(f, N(f, gr->pre)->args[1]));
    A(L, "pr", buf_of(f, gr->resid));
    if (gr->xr)
        A(L, "xo", buf_of(f, gr->add));
}

/* mma's splits of K (SK), under q8: where its tiles (BM rows by 128
 * weight rows, 64 units under a gated pair) fill less than one wave of the
 * chip's places (`blocks` a multiprocessor: mma.cu's BLOCKS), K goes to
 * clusters of 2, 4 or 8 blocks, as many as keep the grid within the wave
 * and two stages of K a split; -v says so. */
static long mma_splits(Fz *f, const Group *gr, long rows, long units, long K, int blocks)
{
    long wide = gr->gate ? 64 : 128, tiles = (rows + 63) / 64 * ((units + wide - 1) / wide);
    long places = (long)f->o->sms * blocks, stages = (K + 127) / 128, sk = 1;
    while (sk < 8 && tiles * sk * 2 <= places && stages >= sk * 4)
        sk *= 2;
    if (sk > 1)
        fuse_note(f, gr->node, "%ld tiles of the product fill %ld of %ld places: K split over clusters of %ld blocks",
                  tiles, tiles, places, sk);
    return sk;
}

static void emit_mma(Fz *f, const Group *gr)
{
    L L = launch(f, KN_MMA, gr);
    int n, xin = x_format(f, gr);
    long rows = lead_rows(f, &N(f, gr->prod[0])->ty, 1, &n);
    long units = product_consts(L, f, gr, rows, n), K = prod_k(f, gr);
    C(L, "XIN", xin);
    C(L, "XQ", act_words(f));
    /* two blocks of 64 rows a multiprocessor: 3-7% ahead of 128 on the 8B's
     * chunks (run44), 2-11% (run93); f16 tiles under q8 were 37% slower
     * (run46), and Q8_0 dequantized to f16 for wgmma 0.80x (run156,
     * bench/wgh.cu): int8 kept */
    C(L, "BM", 64);
    /* under q8x2 a split's bounds cost the registers its lo words need
     * (it spills): unsplit */
    C(L, "SK", act_words(f) == 1 ? mma_splits(f, gr, rows, units, K, xin == act_words(f) ? 2 : 1) : 1);
    norm_prologue(L, f, gr);
    finish(L);
}

/* mmh's weights in registers (TM 256: tiles of 256 rows of x by 128
 * weight rows, mmh.cu's opening comment) where x is a8h, its rows whole
 * tiles of 256 (or 2048 and more) and those tiles alone fill more than
 * half the chip; else tiles of 128 rows of x (TM 0), split where they
 * fill less. Bench/NOTES.md run173-run175: the 8B's chunk of 2048 rows
 * 91.5 -> 82.7 ms; at 512 rows its gated pair ~10.5 -> 9.55 ms (32
 * launches) and q/k/v 2.2 -> 2.1, while o and down, 64 such tiles on 132
 * multiprocessors, lost split (2.2 -> 3.3, 5.1 -> 5.4). */
static long mmh_tm(Fz *f, const Group *gr, long rows, int xin)
{
    if (xin == 3 && rows <= 64)
        return 64;
    if (xin != 3 || rows < 256 || (rows % 256 && rows < 2048))
        return 0;
    return mmh_blocks(f, gr, rows, 256) * 2 > f->o->sms ? 256 : 0;
}

/* mmh: the products in f16 tiles of mmh_bn's weight rows. */
static void emit_mmh(Fz *f, const Group *gr)
{
    L L = launch(f, KN_MMH, gr);
    int n;
    long rows = lead_rows(f, &N(f, gr->prod[0])->ty, 1, &n);
    product_consts(L, f, gr, rows, n);
    int xin = x_format(f, gr);
    long tm = mmh_tm(f, gr, rows, xin), K = prod_k(f, gr), blocks = mmh_blocks(f, gr, rows, tm);
    long cy = 0, sk = tm == 64 ? xr_splits(f, blocks, K, &cy) : mmh_splits(f, blocks, K),
         tail = tm == 64 ? 0 : mmh_tail(f, blocks, K);
    C(L, "XIN", xin);
    C(L, "BN", (double)mmh_bn(f, gr, tm));
    if (tm == 64) {
        fuse_note(f, gr->node, "x resident: %ld tiles of 128 weight rows by %ld clusters of %ld blocks, each block "
                  "%ld values of K of the %ld rows of x held in shared memory (TM 64)", blocks, cy, sk, K / sk, rows);
    } else if (rows <= 64)
        fuse_note(f, gr->node, "x not a8h: %ld rows in a tile of 128 (TM 0), not x resident", rows);
    else if (tm)
        fuse_note(f, gr->node, "%ld tiles of %ld rows of x by 128 weight rows, the weights dequantized in registers (TM)",
                  blocks, tm);
    if (sk > 1 && tm != 64)
        fuse_note(f, gr->node, "%ld tiles of the product fill %ld of %d multiprocessors: K split over clusters of %ld "
                  "blocks", blocks, blocks, f->o->sms, sk);
    if (tail) {
        fuse_note(f, gr->node, "%ld tiles of the product on %d multiprocessors: the last %ld, a round of their own, "
                  "each as two blocks of half K", blocks, f->o->sms, tail);
        A(L, "part", shared_scratch(f, "mmh.tail.part", ET_F32, 2 * tail * (tm ? tm : 128) * mmh_bn(f, gr, tm)));
        A(L, "cnt", shared_scratch(f, "mmh.tail.count", ET_I32, tail));
    }
    C(L, "SK", (double)sk);
    C(L, "TAIL", (double)tail);
    C(L, "TM", (double)tm);
    C(L, "CY", (double)cy);
    finish(L);
}

/* Activation rows a pass of mmv: tiles of 8, at most 4 (passes of 32),
 * under q8x2 at most 2 (its lo words' fragments spill at 4 where K is
 * short). */
static long mmv_tiles(long rows, int xq)
{
    long most = xq == 2 ? 2 : 4;
    return rows >= 8 * most ? most : (rows + 7) / 8;
}

/* mmv's shared memory (227 KB): the pass's activation rows staged whole
 * (XS 1) where they fit in 160 KB beside a ring of 3 stages a warp;
 * else each step's slice of them in the stage with its weights (XS 2),
 * so that no step waits on the L2 for its fragments. The rings as deep as
 * 4 (8 x 3 x 4 KB of weights in flight a multiprocessor) and at least 2.
 * Run63: a ring of 4 against 2, 52.5 against 54.4 µs for the 8B's gated
 * pair at 16 rows; its rows staged whole against from the L2, 52.5
 * against 62.4 µs. */
static void mmv_memory(L L, long K, long nt, int xq)
{
    const long most = 227 * 1024;
    long act = mmv_smem(K, nt, xq, 1, 3) - mmv_smem(K, nt, xq, 0, 3);
    int xs = act <= 160 * 1024 && mmv_smem(K, nt, xq, 1, 3) <= most ? 1 : 2, depth = 4;
    while (depth > 2 && mmv_smem(K, nt, xq, xs, depth) > most)
        depth--;
    if (mmv_smem(K, nt, xq, xs, depth) > most)
        xs = 0, depth = 4;
    C(L, "XS", xs);
    C(L, "DEPTH", depth);
}

/* mmi: x's rows a wgmma (16, 32 or 64), a block a multiprocessor sharing
 * the tiles' stages (at most one each), the deepest ring of at most 5
 * stages that fits. */
static void emit_mmi(Fz *f, const Group *gr)
{
    L L = launch(f, KN_MMI, gr);
    int n;
    long rows = lead_rows(f, &N(f, gr->prod[0])->ty, 1, &n);
    product_consts(L, f, gr, rows, n);
    long nr = rows <= 16 ? 16 : rows <= 32 ? 32 : 64, tiles, stages = mmi_stages(f, gr, &tiles);
    long grid = stages < f->o->sms ? stages : f->o->sms, ring = 5;
    while (ring > 2 && mmi_smem(nr, ring) > 227 * 1024)
        ring--;
    C(L, "XQ", 1);
    C(L, "NR", (double)nr);
    C(L, "GRID", (double)grid);
    C(L, "STAGES", (double)ring);
    A(L, "part", shared_scratch(f, "mmi.part", ET_F32, grid * 128 * nr));
    A(L, "cnt", shared_scratch(f, "mmi.count", ET_I32, tiles));
    fuse_note(f, gr->node, "int8 wgmma: %ld tiles of 128 weight rows by %ld rows of x, %ld stages of 256 values on %ld "
              "blocks", tiles, nr, stages, grid);
    finish(L);
}

/* norm_split's halves in an mmv launch: the first (SQ: the norm's weight,
 * its quants, its sums) where its products come before a norm, the second
 * (RN: the sums, its eps) where they read one. */
static void split_consts(L L, Fz *f, const Group *gr)
{
    const GNode *q = gr->sq >= 0 ? N(f, gr->sq) : NULL, *r = gr->rn >= 0 ? N(f, gr->rn) : NULL;
    C(L, "SQ", q ? gr->sqw : 0);
    C(L, "RN", r != NULL);
    C(L, "EPS", r ? attr_num(r->e, "eps", 0) : 0);
    C(L, "OFFSET", q ? attr_num(q->e, "offset", 0) : 0);
    C(L, "NW", q && q->nargs == 2);
    if (q && q->nargs == 2)
        A(L, "nw", buf_of(f, q->args[1]));
    if (q) {
        A(L, "q", buf_of(f, gr->sq));
        A(L, "so", split_sums(f, gr->sq));
    }
    if (r)
        A(L, "ss", split_sums(f, gr->rn));
}

static void emit_mmv(Fz *f, const Group *gr)
{
    L L = launch(f, KN_MMV, gr);
    int n;
    long rows = lead_rows(f, &N(f, gr->prod[0])->ty, 1, &n);
    long units = product_consts(L, f, gr, rows, n), nt = mmv_tiles(rows, act_words(f));
    C(L, "XQ", act_words(f));
    C(L, "NT", (double)nt);
    split_consts(L, f, gr);
    /* a block a multiprocessor: as many rounds of tiles as the chip needs
     * for every pass, and the fewest blocks that take them in that many */
    long tiles = (units + 31) / 32, passes = (rows + 8 * nt - 1) / (8 * nt);
    long rounds = (tiles * passes + f->o->sms - 1) / f->o->sms;
    C(L, "GRID", (double)((tiles + rounds - 1) / rounds));
    mmv_memory(L, prod_k(f, gr), nt, act_words(f));
    finish(L);
}

/* Where a launch reads value k: a slice its group took in its base's
 * rows at the slice's place, any other value in its own rows of `ch`. */
static int slice_read(Fz *f, const Group *gr, int k, long ch, long *stride, long *at)
{
    const GNode *n = N(f, k);
    *stride = ch;
    *at = 0;
    if (n->op != OP_SLICE || f->group[k] != (int)(gr - f->gs))
        return buf_of(f, k);
    *stride = last(&N(f, n->args[0])->ty);
    *at = (long)attr_num(n->e, "at", 0);
    return buf_of(f, n->args[0]);
}

/* gate_prologue: the gate's buffer, and where a row's runs of it lie (a
 * slice the group took: runs of its width at its base's pitch; else one
 * run of K); none: 1 1 0. */
static void gate_read(L L, Fz *f, const Group *gr, long K)
{
    long w = 1, pitch = 1, at = 0;
    int b = -1;
    if (gr->xg >= 0) {
        b = slice_read(f, gr, gr->xg, K, &pitch, &at);
        w = b == buf_of(f, gr->xg) ? K : last(&N(f, gr->xg)->ty);   /* read in its base: a slice's runs */
    }
    C(L, "XG", gr->xg >= 0);
    C(L, "XGW", (double)w);
    C(L, "XGP", (double)pitch);
    C(L, "XGA", (double)at);
    A(L, "xg", b);
}

/* Whether kernel k is a launch that reads few bytes in a chain of
 * dependent trips, leaving the memory idle: an attention (latent too), a
 * short convolution, a norm. */
static int reads_little(int k)
{
    return k == KN_ATTEND || k == KN_LATENT || k == KN_CONV || k == KN_NORM;
}

/* rule preload: a decode step's product right after a launch that reads
 * little (reads_little: an attention's o product, Qwen3-Next's after its
 * gated norm, LFM2's after its convolution) takes its weight rows whole
 * into shared memory before it waits (gemv.cu's PF), the fewest groups a
 * block that keep the grid within one block a multiprocessor, so that they
 * stream while that launch runs; where they fit --preload-kb (0, the
 * default: never, and nothing said). Its groups a block (PF), or 0. */
static long preload_groups(Fz *f, const Group *gr, long K, long units, long groups, int wr, long rows, long tr,
                           int q8w)
{
    const Plan *pl = f->pl;
    int kb = f->o->preload_kb;
    if (!kb || !f->o->lane_rules || pl->nls < 2 || !reads_little(pl->ls[pl->nls - 2].kernel) || rows != 1 ||
        tr != 1 || !q8w || gr->parts != 1 || gr->gate || gr->argmax >= 0 || gr->norm >= 0 || gr->pre >= 0 ||
        gr->xg >= 0 || gr->nout || units % (8 * wr))
        return 0;
    long pf = (groups + f->o->sms - 1) / f->o->sms, bytes = pf * 8 * wr * (K + K / 16);
    if (bytes > 1024L * kb) {
        fuse_note(f, gr->node, "rule preload: not taken: a block's %ld KB of weights pass --preload-kb %d",
                  (bytes + 1023) / 1024, kb);
        return 0;
    }
    took(f, RU_PRELOAD);
    fuse_note(f, gr->node, "rule preload: after %s, %ld group%s of %d rows a block (%ld KB) into shared memory "
              "before its wait", kernel_info(pl->ls[pl->nls - 2].kernel)->name, pf, pf > 1 ? "s" : "", 8 * wr,
              (bytes + 1023) / 1024);
    return pf;
}

static void emit_gemv(Fz *f, const Group *gr)
{
    int kn = product_kernel(f, gr, act_format(f, gr->x), 1);
    ASSERT(kn == KN_GEMV || !gr->nout);   /* prologue takes no norm for rows bound for the tensor cores */
    if (kn == KN_MMA) {
        emit_mma(f, gr);
        return;
    }
    if (kn == KN_MMH) {
        emit_mmh(f, gr);
        return;
    }
    if (kn == KN_MMV) {
        emit_mmv(f, gr);
        return;
    }
    if (kn == KN_MMI) {
        emit_mmi(f, gr);
        return;
    }
    L L = launch(f, KN_GEMV, gr);
    const GNode *w0 = N(f, N(f, gr->prod[0])->args[0]);
    long K = w0->ty.d[1].n;
    int n, xin = x_format(f, gr);
    long rows = lead_rows(f, &N(f, gr->prod[0])->ty, 1, &n);
    int xq = act_words(f), q8w = wq(f, gr->prod[0]);
    if (!q8w || K % 32) {
        if (xq)
            fuse_note(f, gr->node, "f32 activations: %s", K % 32 ? "the width is not whole 32-value blocks" : "the weights are f32");
        xq = xin;
    }
    long units = product_consts(L, f, gr, rows, n);
    /* f32 math for stacked rows: fewer rows a warp, or the registers spill;
     * under a quantizing epilogue (4 rows a warp) one activation row a pass */
    int wr = gemv_wr(gr->oq), narrow = !xq && rows > 1 && wr > 2;
    if (narrow && !gr->oq)
        wr = 2;
    long tr = rows < 8 ? rows : 8;
    tr = wr >= 4 && tr > 2 ? 2 : wr == 2 && tr > 4 ? 4 : tr;   /* the registers of many rows and many slots */
    if (narrow && gr->oq)
        tr = 1;
    while (tr > 1 && tr * (xq ? xq * K + K / 8 : 4 * K) > 96 * 1024)
        tr--;
    if (rows > tr)
        fuse_note(f, gr->node, "%ld stacked rows in %ld passes of %ld rows (%d a warp): each pass reads the weights again",
                  rows, (rows + tr - 1) / tr, tr, wr);
    C(L, "WQ", q8w);
    C(L, "XIN", xin);
    C(L, "XQ", xq);
    C(L, "TR", (double)tr);
    C(L, "WR", wr);
    C(L, "ARGMAX", gr->argmax >= 0);
    norm_prologue(L, f, gr);
    C(L, "NOUT", gr->nout);
    if (gr->nout)
        A(L, "xo", buf_of(f, gr->norm));
    gate_read(L, f, gr, K);
    sandwich_prologue(L, f, gr);
    if (gr->argmax >= 0)
        A(L, "next", buf_of(f, gr->argmax));
    /* as many rounds of groups as the chip needs, and the fewest blocks that
     * take them in that many: every block the same rounds, to one */
    long groups = (units + 8 * wr - 1) / (8 * wr), holds = (long)f->o->sms *
        gemv_blocks_per_sm(K, q8w, (long)wr * (gr->gate ? 2 : 1), tr, gr->gate != 0, xq, gr->norm >= 0,
                           gr->argmax >= 0);
    long rounds = (groups + holds - 1) / holds, pf = preload_groups(f, gr, K, units, groups, wr, rows, tr, q8w);
    C(L, "GRID", (double)(pf ? (groups + pf - 1) / pf : (groups + rounds - 1) / rounds));
    C(L, "PF", (double)pf);
    finish(L);
    if (gr->argmax >= 0) {
        long g = L.l->grid[0];
        merge_scratch(L, f, gr->argmax, 2 + 2 * rows * g, 0);
    }
}

/* The rope frequencies of rope node k, as logos-run computes them. */
static int freq_buf(Fz *f, int k)
{
    const GNode *n = N(f, k);
    long rot = (long)attr_num(n->e, "rot", (double)last(&n->ty));
    return add_buf(f, (PBuf){.name = arena_printf(f->a, "%s.freq", node_name(f, k)), .kind = B_CONST,
                             .etype = ET_F64, .count = rot / 2, .node = k, .base = -1});
}

/* Where part p of a rope group reads its input (node k, heads h of w
 * values): a slice the group took is read in place in its base, at its
 * offset, each of its rows a head (hp the base's row) or a row of heads
 * (hp w); *xs the values between the part's rows. Else k's own buffer. */
static int rope_read(Fz *f, const Group *gr, int k, long h, long w, long *hp, long *xa, long *xs)
{
    int s = view_root(f->g, k);
    *hp = w;
    *xa = 0;
    *xs = h * w;
    if (N(f, s)->op != OP_SLICE || f->group[s] != (int)(gr - f->gs))
        return buf_of(f, k);
    long base = last(&N(f, N(f, s)->args[0])->ty), n = last(&N(f, s)->ty);
    *xa = (long)attr_num(N(f, s)->e, "at", 0);
    *hp = n == w ? base : w;
    *xs = n == w ? h * base : base;
    return buf_of(f, N(f, s)->args[0]);
}

static void emit_rope(Fz *f, const Group *gr)
{
    static const char *X[] = {"x0", "x1", "x2"}, *Y[] = {"y0", "y1", "y2"}, *NW[] = {"nw0", "nw1", "nw2"},
                      *H[] = {"H0", "H1", "H2"}, *Wc[] = {"W0", "W1", "W2"}, *XS[] = {"XS0", "XS1", "XS2"},
                      *OP[] = {"OP0", "OP1", "OP2"}, *NO[] = {"NORM0", "NORM1", "NORM2"},
                      *DS[] = {"DST0", "DST1", "DST2"}, *SR[] = {"SROWS0", "SROWS1", "SROWS2"},
                      *HP[] = {"HP0", "HP1", "HP2"}, *XA[] = {"XA0", "XA1", "XA2"}, *YS[] = {"YS0", "YS1", "YS2"},
                      *YA[] = {"YA0", "YA1", "YA2"};
    L L = launch(f, KN_ROPE, gr);
    const GNode *r0 = N(f, gr->rope[0]);
    const Type *pt = &N(f, gr->pos)->ty;
    int n = -1;
    long rows = pt->rank ? bound(f, &pt->d[0]) : 1;
    if (pt->rank)
        n = size_buf(f, &pt->d[0]);
    for (int p = 0; p < gr->rparts; p++) {
        const Type *t = &N(f, gr->rx[p])->ty;
        long h = gr->rflat[p] ? 1 : t->d[t->rank - 2].n, w = last(t), hp, xa, xs;
        int xb = rope_read(f, gr, gr->rx[p], h, w, &hp, &xa, &xs);
        C(L, H[p], (double)h);
        C(L, Wc[p], (double)w);
        C(L, XS[p], (double)xs);
        C(L, HP[p], (double)hp);
        C(L, XA[p], (double)xa);
        C(L, OP[p], gr->rope[p] >= 0);
        A(L, X[p], xb);
        if (gr->rnorm[p] >= 0) {
            const GNode *nm = N(f, gr->rnorm[p]);
            C(L, NO[p], 1);
            C(L, "EPS", attr_num(nm->e, "eps", 0));
            C(L, "OFF", attr_num(nm->e, "offset", 0));
            A(L, NW[p], buf_of(f, nm->args[1]));
        }
        if (gr->rwrite[p] >= 0) {
            int sb = buf_of(f, N(f, gr->rwrite[p])->args[0]);
            C(L, DS[p], f->pl->bufs[sb].etype == ET_F16 ? 2 : 1);
            const Type *st = &N(f, gr->rwrite[p])->ty;
            C(L, SR[p], (double)st->d[0].n);
            C(L, YS[p], (double)(type_values(f, st) / st->d[0].n));
            C(L, YA[p], gr->rya[p] >= 0 ? gr->rya[p] : 0);
            A(L, Y[p], sb);
        } else {
            C(L, YS[p], (double)(h * w));
            C(L, YA[p], 0);
            A(L, Y[p], buf_of(f, gr->rope[p]));
        }
    }
    C(L, "PARTS", gr->rparts);
    C(L, "ROT", attr_num(r0->e, "rot", (double)last(&r0->ty)));
    C(L, "AF", attr_num(r0->e, "attn_factor", 1));
    C(L, "POS", pt->rank ? 1 : 0);
    C(L, "ROWS", (double)rows);
    A(L, "freq", freq_buf(f, gr->rope[0]));
    A(L, "pos", buf_of(f, gr->pos));
    A(L, "n", n);
    finish(L);
}

/* chunks_apart: an attention whose rows' head blocks alone leave the chip
 * idle runs a block a chunk of its key rows: at run time the rows are cut
 * into as many chunks as make per_sm blocks a multiprocessor busy (*busy;
 * no more, or the blocks past the chip's would run in a second wave), at
 * most 64 (the last block merges them), each at least 16 rows (more when
 * the context passes 1024 of them). A batch's head blocks past a wave
 * stay whole rows: cut into the chunks that fill whole waves, the 8B's 64
 * rows' attention took 1.88 -> 2.31 ms (bench/NOTES.md run183; a block's
 * fixed cost, ~12 us, outweighs the wave it saves). */
static long chunks(const Fz *f, long blocks, long ctx, int mode, int per_sm, long *chunk, long *busy)
{
    long slots = (long)per_sm * f->o->sms;
    *chunk = ctx;
    *busy = 0;
    if (mode == 2 || blocks >= f->o->sms || ctx <= ATTEND_CHUNK)
        return 1;
    *chunk = (ctx + 1023) / 1024 > ATTEND_CHUNK ? (ctx + 1023) / 1024 : ATTEND_CHUNK;
    long split = (ctx + *chunk - 1) / *chunk;
    *busy = slots / blocks > 1 ? slots / blocks : 1;   /* one wave */
    *busy = *busy < 64 ? *busy : 64;                   /* and at most 64 chunks for the last block to merge */
    *busy = *busy < split ? *busy : split;
    return split;
}

/* attend.cu's LR under MODE 0: a decode step's chunk of at least
 * ATTEND_LRR rows is scored a row a lane (where attend_lr takes its
 * heads). The first position
 * whose chunks are that long (a chunk is the larger of CHUNK rows and the
 * rows over BUSY), or 0 where none is within the context or the window. */
static long lane_rows_from(long mode, long hd, long vd, long hg, long ctx, long window, long split, long chunk,
                           long busy)
{
    if (mode != 0 || !attend_lr(hd, vd, hg))
        return 0;
    long len = split > 1 && chunk < ATTEND_LRR ? (busy ? (ATTEND_LRR - 1) * busy + 1 : 0) : ATTEND_LRR;
    long most = window > 0 && window < ctx ? window : ctx;
    return len > 0 && len <= most ? len : 0;
}

/* A batch's attention on the tensor cores (attend.cu's TC): tiles of 32
 * keys a warp (TC 1), or of 16 (TC 2) where their smaller shared memory
 * lets more blocks share a multiprocessor and that takes the batch's head
 * blocks in fewer waves (the rows all at one position, a part-full last
 * wave costs a whole one: the 8B's 64 rows, 512 blocks, are 2 waves of 3
 * a multiprocessor, 1 of 4; bench/NOTES.md run184: its attention 1.88 ->
 * 1.49 ms). Under every numerics: the 3.7e-5 under precise of run184's
 * kernel case came back the same from tiles of 32 (run185), the f16
 * caches' rounding, not the tiles. */
static int tc_tiles(const Fz *f, long blocks, long hd, long vd)
{
    long s1 = attend_tc_blocks_per_sm(hd, vd, 1) * (long)f->o->sms,
         s2 = attend_tc_blocks_per_sm(hd, vd, 2) * (long)f->o->sms;
    return (blocks + s2 - 1) / s2 < (blocks + s1 - 1) / s1 ? 2 : 1;
}

/* attend.cu's QP and VN: the key and value values a lane holds of a row
 * (a head of hd, values of vd). */
static void lane_values(long hd, long vd, long *qp, long *vn)
{
    *qp = (hd + 31) / 32;
    *vn = hd % 32 == 0 && vd % 32 == 0 ? vd / 32 : 2 * ((vd + 63) / 64);
}

/* Whether hg query heads' shared slots hold a head of hd to turn (a rope
 * in the attention: HD at most HG (VD + 2)). */
static int turn_fits(long hg, long hd, long vd)
{
    return hg * (vd + 2) >= hd;
}

/* attend.cu's R under MODE 0: the key rows a warp loads a round with hg
 * query heads a block (their registers against 80, or 88 without a rope). */
static long rows_a_round(long hd, long vd, long hg, int rope)
{
    long qp, vn;
    lane_values(hd, vd, &qp, &vn);
    long rw = (rope ? 80 - hg * (qp + vn + 2) : 88 - hg * (qp + vn)) / (qp + vn + hg);
    return rw > 8 ? 8 : rw < 2 ? 2 : rw;
}

/* A decode step's attention, whose first round of rows is loaded before
 * the wait (EARLY): the most query heads a block, at most hg and dividing
 * the key head's g, whose rows a round take a short chunk (ATTEND_CHUNK
 * rows over 4 warps) in one, so that no row is loaded after the wait
 * (bench/NOTES.md run231); hg where none does. */
static long heads_one_round(long g, long hg, long hd, long vd, int rope)
{
    for (long d = hg; d >= 1; d--)
        if (g % d == 0 && (!rope || turn_fits(d, hd, vd)) && 4 * rows_a_round(hd, vd, d, rope) >= ATTEND_CHUNK)
            return d;
    return hg;
}

/* The query heads an attention block takes of a key head's g, its head
 * width hd and value width vd: all g where a thread holds each head's query,
 * values, maximum and sum in at most 64 registers (attend.cu: a lane holds
 * hd/32 query and vd/32 value values a head), else the most, dividing g,
 * in 40 (and under a rope at least hd / (vd + 2): its turning's scratch). */
static long heads_a_block(long g, long hd, long vd, int rope)
{
    long qp, vn;
    lane_values(hd, vd, &qp, &vn);
    long per = qp + vn + 2;
    if (g * per <= 64)
        return g;
    long hg = 1;
    for (long d = 1; d <= g; d++)
        if (g % d == 0 && d * per <= 40)
            hg = d;
    while (rope && hg < g && !turn_fits(hg, hd, vd))   /* the next divisor up */
        for (hg++; g % hg; hg++)
            ;
    return hg;
}

/* Whether a chunk's causal attention (MODE 1, more than one row bound)
 * runs on the tensor cores (flash.cu): under the q8 numerics only (its f16
 * operands leave some 1e-4 of relative error, more where scores are large:
 * too near q8x2's 1e-3 end to end), heads and values of whole 16-value
 * steps of at most 256; -v says the decision. */
static int take_flash(Fz *f, const Group *gr, long rows, long hd, long vd)
{
    const char *why = f->o->numerics != NUM_Q8 ? "f16 operands (near q8x2's 1e-3) are for --numerics q8 only"
                      : hd % 16 || vd % 16 ? "heads or values not whole 16-value steps"
                      : hd > 256 || vd > 256 ? "heads or values wider than 256"
                      : NULL;
    if (why)
        fuse_note(f, gr->node, "attention of %ld causal rows by attend, not on the tensor cores: %s", rows, why);
    else
        fuse_note(f, gr->node, "attention of %ld causal rows on the tensor cores (flash): f16 operands, "
                  "tiles of 64 rows by %d keys", rows, hd > 128 || vd > 128 ? 32 : 64);
    return !why;
}

/* The constants attend.cu and flash.cu share: the heads, widths, rows,
 * cache and the attention's attributes. */
static void attention_consts(L L, Fz *f, const Group *gr, long rows, long ctx, int kv)
{
    const GNode *a = N(f, gr->node), *q = N(f, a->args[0]), *k = N(f, a->args[1]), *v = N(f, a->args[2]);
    C(L, "NH", (double)q->ty.d[q->ty.rank - 2].n);
    C(L, "NKV", (double)k->ty.d[1].n);
    C(L, "HD", (double)last(&q->ty));
    C(L, "VD", (double)last(&v->ty));
    C(L, "ROWS", (double)rows);
    C(L, "NCTX", (double)ctx);
    C(L, "KV", kv);
    C(L, "SCALE", attr_num(a->e, "scale", 1));
    C(L, "CAP", attr_num(a->e, "softcap", 0));
    C(L, "WINDOW", attr_num(a->e, "window", 0));
    C(L, "SINKS", a->nargs == 4);
}

/* flash.cu: a chunk's causal attention on the tensor cores, the constants
 * and parameters attend's MODE 1 would have. */
static void emit_flash(Fz *f, const Group *gr, int kb, int vb, int n, long rows, long ctx, int kv)
{
    L L = launch(f, KN_FLASH, gr);
    const GNode *a = N(f, gr->node), *q = N(f, a->args[0]), *k = N(f, a->args[1]);
    long nh = q->ty.d[1].n;
    attention_consts(L, f, gr, rows, ctx, kv);
    C(L, "QS", (double)(nh * last(&q->ty)));
    C(L, "OQ", gr->oq);
    A(L, "q", buf_of(f, a->args[0]));
    A(L, "k", kb);
    A(L, "v", vb);
    A(L, "pos", buf_of(f, k->args[1]));
    A(L, "n", n);
    if (a->nargs == 4)
        A(L, "sinks", buf_of(f, a->args[3]));
    A(L, "y", buf_of(f, gr->node));
    finish(L);
}

/* A table of the buffers of declaration nodes decl[0..n) (batch_attend):
 * NAME.seqs after the first, one a plan for the same buffers. */
static int table_buf(Fz *f, const int *decl, int n)
{
    const PBuf *first = &f->pl->bufs[buf_of(f, decl[0])];
    const char *name = arena_printf(f->a, "%s.seqs", first->name);
    int b = plan_buf(f->pl, name), et = first->etype;
    long count = first->count;
    int *ents = arena_alloc(f->a, sizeof *ents * (size_t)n);
    for (int i = 0; i < n; i++)
        ents[i] = buf_of(f, decl[i]);
    if (b >= 0) {
        ASSERT(f->pl->bufs[b].nents == n && !memcmp(f->pl->bufs[b].ents, ents, sizeof *ents * (size_t)n));
        return b;
    }
    return add_buf(f, (PBuf){.name = name, .kind = B_TABLE, .etype = et, .count = count, .ents = ents, .nents = n,
                             .node = -1, .base = -1});
}

/* batch_attend (MODE 3): each sequence's positions, keys and values in
 * tables (pos, k and v), row t's in entry t; the tables' buffers in *kb
 * and *vb; whether every position is an input the host writes. */
static int batch_tables(L L, Fz *f, const Group *gr, int *kb, int *vb)
{
    int n = gr->nseq, early = 1, *pos = arena_alloc(f->a, sizeof *pos * (size_t)n),
        *ks = arena_alloc(f->a, sizeof *ks * (size_t)n), *vs = arena_alloc(f->a, sizeof *vs * (size_t)n);
    for (int t = 0; t < n; t++) {
        const GNode *a = N(f, f->gs[gr->seq[t]].node);
        pos[t] = N(f, a->args[1])->args[1];
        ks[t] = N(f, a->args[1])->args[0];
        vs[t] = N(f, a->args[2])->args[0];
        early &= f->pl->bufs[buf_of(f, pos[t])].kind == B_IN;
    }
    A(L, "pos", table_buf(f, pos, n));
    *kb = table_buf(f, ks, n);
    *vb = table_buf(f, vs, n);
    return early;
}

/* The stacked value whose row t node k is (batch_attend): its buffer. */
static int rows_buf(Fz *f, int k)
{
    return buf_of(f, N(f, k)->args[0]);
}

static void emit_attend(Fz *f, const Group *gr)
{
    const GNode *a = N(f, gr->node), *q = N(f, a->args[0]), *k = N(f, a->args[1]), *v = N(f, a->args[2]);
    int st = q->ty.rank == 3, n = -1, mode = 2, kv = 0, batch = gr->nseq > 1, early = 0;
    long rows = st ? bound(f, &q->ty.d[0]) : batch ? gr->nseq : 1, ctx = k->ty.d[0].n;
    if (st)
        n = size_buf(f, &q->ty.d[0]);
    int kb, vb;
    if (k->op == OP_UPTO) {
        const GNode *ix = N(f, k->args[1]);
        mode = batch ? 3 : ix->ty.rank ? 1 : 0;
        kb = buf_of(f, k->args[0]);
        vb = buf_of(f, v->args[0]);
        kv = f->pl->bufs[kb].etype == ET_F16 ? 2 : 1;
        ctx = N(f, k->args[0])->ty.d[0].n;
        if (mode == 1 && st && rows > 1 && !gr->rparts && take_flash(f, gr, rows, last(&q->ty), last(&v->ty))) {
            emit_flash(f, gr, kb, vb, n, rows, ctx, kv);
            return;
        }
    } else {
        kb = buf_of(f, a->args[1]);
        vb = buf_of(f, a->args[2]);
    }
    L L = launch(f, KN_ATTEND, gr);
    if (mode == 3) {
        early = batch_tables(L, f, gr, &kb, &vb);   /* each row's position and caches from tables */
    } else if (mode != 2) {
        A(L, "pos", buf_of(f, k->args[1]));
        early = mode == 0 && rows == 1 && !st && f->pl->bufs[buf_of(f, k->args[1])].kind == B_IN;
    }
    long nh = q->ty.d[st].n, nkv = k->ty.d[1].n;
    long hg = heads_a_block(nh / nkv, last(&q->ty), last(&v->ty), gr->rparts > 0);
    if (hg < nh / nkv)
        fuse_note(f, gr->node, "attention: %ld query heads a key head of %ld values, %ld a block (a thread's registers)",
                  nh / nkv, last(&q->ty), hg);
    if (early && mode == 0) {
        long one = heads_one_round(nh / nkv, hg, last(&q->ty), last(&v->ty), gr->rparts > 0);
        if (one < hg)
            fuse_note(f, gr->node, "attention: %ld query head%s a block, not %ld: a chunk of %d rows in one round, "
                      "loaded before the wait", one, one > 1 ? "s" : "", hg, ATTEND_CHUNK);
        hg = one;
    }
    /* a batch's rows over f16 caches: each warp's tiles of 32 keys on the
     * tensor cores (q and the weights split into two f16 words each, so the
     * sums stand as f32 ones: every numerics); as many blocks a
     * multiprocessor as their tiles' shared memory leaves room for */
    long hd = last(&q->ty), vd = last(&v->ty), blocks = nh / hg * rows, chunk, busy;
    int tc = attend_tc(mode, kv, hd, vd, hg) ? tc_tiles(f, blocks, hd, vd) : 0;
    int per_sm = tc ? attend_tc_blocks_per_sm(hd, vd, tc) : 4;
    long split = chunks(f, blocks, ctx, mode, per_sm, &chunk, &busy);
    if (split > 1)
        took(f, RU_CHUNKS_APART);
    if (split > 1)
        fuse_note(f, gr->node, "rule chunks_apart: %ld head blocks leave the chip idle: up to %ld chunks of at "
                  "least %ld rows", blocks, busy, chunk);
    attention_consts(L, f, gr, rows, ctx, kv);
    long from = lane_rows_from(mode, hd, vd, hg, ctx, (long)attr_num(a->e, "window", 0), split, chunk, busy);
    if (from)
        fuse_note(f, gr->node, "attention: a row a lane from position %ld (chunks of at least %d rows)", from,
                  ATTEND_LRR);
    C(L, "HG", (double)hg);
    C(L, "SPLIT", (double)split);
    C(L, "CHUNK", (double)chunk);
    C(L, "BUSY", (double)busy);
    C(L, "MODE", mode);
    C(L, "QS", (double)(nh * last(&q->ty)));
    C(L, "OQ", gr->oq);
    /* a decode step (or a batch's) whose positions the host writes: the
     * rows but the newest are loaded before the wait for the launch before */
    C(L, "EARLY", early);
    if (tc) {
        C(L, "TC", tc);
        fuse_note(f, gr->node, "a batch's attention on the tensor cores: tiles of %d keys a warp, f16 caches, "
                  "q and the weights as two f16 words each", tc == 2 ? 16 : 32);
    }
    if (gr->rparts) {   /* rope_attend: the rope's queries, keys and values as they come */
        const GNode *r0 = N(f, gr->rope[0]);
        C(L, "ROPE", 1);
        C(L, "ROT", attr_num(r0->e, "rot", (double)last(&r0->ty)));
        C(L, "AF", attr_num(r0->e, "attn_factor", 1));
        for (int p = 0; p < 2; p++)
            if (gr->rnorm[p] >= 0) {
                const GNode *nm = N(f, gr->rnorm[p]);
                C(L, p ? "NK" : "NQ", 1);
                C(L, "REPS", attr_num(nm->e, "eps", 0));
                C(L, "ROFF", attr_num(nm->e, "offset", 0));
                A(L, p ? "knw" : "qnw", buf_of(f, nm->args[1]));
            }
        A(L, "q", batch ? rows_buf(f, gr->rx[0]) : buf_of(f, gr->rx[0]));
        A(L, "kx", batch ? rows_buf(f, gr->rx[1]) : buf_of(f, gr->rx[1]));
        A(L, "vx", batch ? rows_buf(f, gr->rx[2]) : buf_of(f, gr->rx[2]));
        A(L, "freq", freq_buf(f, gr->rope[0]));
    } else {
        A(L, "q", batch ? rows_buf(f, a->args[0]) : buf_of(f, a->args[0]));
    }
    A(L, "k", kb);
    A(L, "v", vb);
    A(L, "n", n);
    if (a->nargs == 4)
        A(L, "sinks", buf_of(f, a->args[3]));
    A(L, "y", batch ? buf_of(f, f->cons[gr->node][0]) : buf_of(f, gr->node));   /* batch_attend: the stack's rows */
    if (split > 1)
        merge_scratch(L, f, gr->node, rows * nkv * (busy ? busy : split) * (nh / nkv) * (last(&v->ty) + 2),
                      rows * (nh / hg));
    finish(L);
}

static void emit_embed(Fz *f, const Group *gr)
{
    L L = launch(f, KN_EMBED, gr);
    const GNode *x = N(f, gr->node), *w = N(f, x->args[0]), *ids = N(f, x->args[1]);
    int n = -1;
    long rows = ids->ty.rank ? bound(f, &ids->ty.d[0]) : 1;
    if (ids->ty.rank)
        n = size_buf(f, &ids->ty.d[0]);
    C(L, "D", (double)last(&w->ty));
    C(L, "V", (double)w->ty.d[0].n);
    C(L, "WQ", w->ty.base == T_Q8);
    C(L, "ROWS", (double)rows);
    C(L, "OQ", gr->oq);
    C(L, "SCALE", gr->scale);
    A(L, "W", buf_of(f, x->args[0]));
    A(L, "ids", buf_of(f, x->args[1]));
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->out[0]));
    finish(L);
}

static void emit_norm(Fz *f, const Group *gr)
{
    L L = launch(f, KN_NORM, gr);
    const GNode *nm = N(f, gr->node);
    const Type *t = &nm->ty;
    int n;
    long rows = lead_rows(f, t, 1, &n), rpn = 1;
    for (int i = 1; i < t->rank - 1; i++)
        rpn *= t->d[i].n;
    C(L, "D", (double)last(t));
    C(L, "ROWS", (double)rows);
    C(L, "RPN", (double)(n >= 0 ? rpn : 1));
    C(L, "KIND", nm->op == OP_L2NORM);
    C(L, "EPS", attr_num(nm->e, "eps", 0));
    C(L, "OFFSET", attr_num(nm->e, "offset", 0));
    C(L, "NW", nm->nargs == 2);
    C(L, "MODE", gr->add >= 0 ? 1 : gr->ngate ? 2 : 0);
    C(L, "OQ", gr->oq);
    A(L, "x", buf_of(f, nm->args[0]));
    if (nm->nargs == 2)
        A(L, "w", buf_of(f, nm->args[1]));
    if (gr->add >= 0 || gr->ngate)
        A(L, "r", buf_of(f, gr->resid));
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->out[0]));
    finish(L);
}

/* Rule norm_pair: the group in order after group a (the norm at order i
 * with its residual, Gemma 2's after the attention) that only norms a's
 * sum, whole rows of it, with the same eps, offset and weight or none (the
 * norm before the feed-forward products): its order, or -1. */
static int norm_pair_next(Fz *f, int i)
{
    const Group *a = &f->gs[f->order[i]];
    int j = i + 1;
    while (j < f->ng && !f->gs[f->order[j]].nn)
        j++;
    if (!f->o->lane_rules || j >= f->ng || a->kind != GK_NORM || a->add < 0 || a->oq)
        return -1;
    const Group *b = &f->gs[f->order[j]];
    const GNode *na = N(f, a->node), *nb = N(f, b->node);
    if (b->kind != GK_NORM || b->add >= 0 || b->ngate || na->op != OP_RMSNORM || nb->op != OP_RMSNORM ||
        nb->args[0] != a->out[0] || na->nargs != nb->nargs || na->ty.rank > 2 ||
        attr_num(na->e, "eps", 0) != attr_num(nb->e, "eps", 0) ||
        attr_num(na->e, "offset", 0) != attr_num(nb->e, "offset", 0))
        return -1;
    return j;
}

/* Groups a and b (norm_pair_next) as one rownorm launch (MODE 3) that
 * covers both. */
static void emit_norm_pair(Fz *f, const Group *a, const Group *b)
{
    L L = launch(f, KN_NORM, a);
    const GNode *nm = N(f, a->node), *nb = N(f, b->node);
    int n;
    long rows = lead_rows(f, &nm->ty, 1, &n);
    int *cov = arena_alloc(f->a, sizeof *cov * (size_t)(a->nn + b->nn));
    memcpy(cov, a->nodes, sizeof *cov * (size_t)a->nn);
    memcpy(cov + a->nn, b->nodes, sizeof *cov * (size_t)b->nn);
    L.l->covers = cov;
    L.l->ncovers = a->nn + b->nn;
    C(L, "D", (double)last(&nm->ty));
    C(L, "ROWS", (double)rows);
    C(L, "RPN", 1);
    C(L, "KIND", 0);
    C(L, "EPS", attr_num(nm->e, "eps", 0));
    C(L, "OFFSET", attr_num(nm->e, "offset", 0));
    C(L, "NW", nm->nargs == 2);
    C(L, "MODE", 3);
    C(L, "OQ", b->oq);
    A(L, "x", buf_of(f, nm->args[0]));
    if (nm->nargs == 2) {
        A(L, "w", buf_of(f, nm->args[1]));
        A(L, "w2", buf_of(f, nb->args[1]));
    }
    A(L, "r", buf_of(f, a->resid));
    A(L, "n", n);
    A(L, "y", buf_of(f, a->out[0]));
    A(L, "y2", buf_of(f, b->out[0]));
    fuse_note(f, b->node, "rule norm_pair: %s, the norm of %s, runs in the launch of the norm and residual that make it",
              node_name(f, b->node), node_name(f, a->out[0]));
    took(f, RU_NORM_PAIR);
    finish(L);
}

static void emit_argmax(Fz *f, const Group *gr)
{
    L L = launch(f, KN_ARGMAX, gr);
    const GNode *x = N(f, N(f, gr->node)->args[0]);
    int n;
    long rows = lead_rows(f, &x->ty, 1, &n);
    C(L, "V", (double)last(&x->ty));
    C(L, "ROWS", (double)rows);
    A(L, "x", buf_of(f, N(f, gr->node)->args[0]));
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->node));
    finish(L);
}

/* An operand's broadcast as (i / div) % mod over the flat output: its kept
 * axes (not a constant 1) must be one run, each the output's; 0, or -1. */
static int bcast(const Fz *f, const Type *o, const Type *x, long *div, long *mod)
{
    int first = -1, lastk = -1;
    for (int i = 0; i < o->rank; i++) {
        int k = x->rank - o->rank + i;
        int kept = k >= 0 && (x->d[k].sym || x->d[k].n != 1);
        if (!kept)
            continue;
        if (first >= 0 && lastk != i - 1)
            return -1;
        first = first < 0 ? i : first;
        lastk = i;
    }
    *div = *mod = 1;
    for (int i = lastk + 1; first >= 0 && i < o->rank; i++)
        *div *= bound(f, &o->d[i]);
    for (int i = first; first >= 0 && i <= lastk; i++)
        *mod *= bound(f, &o->d[i]);
    return 0;
}

static int elem_code(int op)
{
    switch (op) {
    case OP_ADD: return 0;
    case OP_SUB: return 1;
    case OP_MUL: return 2;
    case OP_DIV: return 3;
    case OP_NEG: return 4;
    case OP_SILU: return 5;
    case OP_GELU: return 6;
    case OP_SIGMOID: return 7;
    case OP_SOFTPLUS: return 8;
    case OP_EXP: return 9;
    case OP_TANH: return 10;
    case OP_SOFTCAP: return 11;
    case OP_CLAMP: return 12;
    default: return 13;
    }
}

static int emit_elem(Fz *f, const Group *gr)
{
    const GNode *e = N(f, gr->node);
    const Type *o = &e->ty;
    int n;
    long rows = o->rank && o->d[0].sym ? bound(f, &o->d[0]) : 1;
    lead_rows(f, o, o->rank ? o->rank - 1 : 0, &n);
    L L = launch(f, KN_ELEM, gr);
    C(L, "OP", elem_code(e->op));
    C(L, "N", (double)type_values(f, o));
    C(L, "ROWS", (double)rows);
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->node));
    for (int i = 0; i < e->nargs; i++) {
        const GNode *x = N(f, e->args[i]);
        const char *dv = i ? "BDIV" : "ADIV", *md = i ? "BMOD" : "AMOD";
        if (x->op == G_NUM) {
            if (!i) {
                fuse_note(f, gr->node, "no kernel: a literal on the left of %s", op_info[e->op].name);
                return EXIT_INPUT;
            }
            C(L, "BLIT", 1);
            C(L, "BVAL", x->e->num);
            C(L, dv, 1);
            C(L, md, 1);
            continue;
        }
        long div, mod;
        if (bcast(f, o, &x->ty, &div, &mod)) {
            if (!f->o->quiet)
                diag_at(f->p->src, e->e->line, e->e->col, "the CUDA lane has no kernel for this broadcast of %s",
                    op_info[e->op].name);
            return EXIT_INPUT;
        }
        C(L, dv, (double)div);
        C(L, md, (double)mod);
        A(L, i ? "b" : "a", buf_of(f, e->args[i]));
    }
    if (e->nargs == 1) {
        C(L, "BDIV", 1);
        C(L, "BMOD", 1);
    }
    if (e->op == OP_SOFTCAP)
        C(L, "P0", attr_num(e->e, "cap", 1));
    if (e->op == OP_CLAMP) {
        C(L, "P0", attr_num(e->e, "min", -1e30));
        C(L, "P1", attr_num(e->e, "max", 1e30));
    }
    finish(L);
    return 0;
}

static long row_width(const Fz *f, const Type *t)
{
    long n = 1;
    for (int i = 1; i < t->rank; i++)
        n *= bound(f, &t->d[i]);
    return n;
}

/* Rows of t's leading axes (all but keep) a unit of its runtime size: a
 * slice of [T, H, W] moves H rows a unit of T. */
static long rows_per_n(const Type *t, int keep)
{
    long r = 1;
    int sym = 0;
    for (int i = 0; i < t->rank - keep; i++) {
        r *= t->d[i].sym ? 1 : t->d[i].n;
        sym |= t->d[i].sym != 0;
    }
    return sym ? r : 1;
}

static void emit_copy(Fz *f, const Group *gr)
{
    L L = launch(f, KN_COPY, gr);
    const GNode *c = N(f, gr->node);
    int n = -1, x, y = c->op == G_WRITE ? -1 : buf_of(f, gr->node), idx = -1, src = 0, dst = 0;   /* a write: the state's */
    long rows = 1, w, xw, yw, xrows, yrows, xat = 0, rpn = 1;
    const Type *t = &c->ty;
    if (c->op == G_WRITE) {   /* a state's rows at positions */
        const Type *pt = &N(f, c->args[1])->ty;
        x = buf_of(f, c->args[2]);
        y = buf_of(f, c->args[0]);
        idx = buf_of(f, c->args[1]);
        rows = pt->rank ? bound(f, &pt->d[0]) : 1;
        if (pt->rank)
            n = size_buf(f, &pt->d[0]);
        dst = 1;
        w = xw = yw = row_width(f, t);
        xrows = rows;
        yrows = t->d[0].n;
    } else if (c->op == OP_INDEX) {   /* a state's rows by position, or a gather */
        const GNode *b = N(f, c->args[0]), *ix = N(f, c->args[1]);
        int state = is_decl_of(f, c->args[0], D_STATE);
        x = buf_of(f, c->args[0]);
        idx = buf_of(f, c->args[1]);
        src = state ? 3 : 2;
        rows = ix->ty.rank ? bound(f, &ix->ty.d[0]) : 1;
        if (ix->ty.rank)
            n = size_buf(f, &ix->ty.d[0]);
        w = xw = yw = row_width(f, &b->ty);
        xrows = bound(f, &b->ty.d[0]);
        yrows = rows;
    } else if (c->op == OP_LAST) {
        const GNode *b = N(f, c->args[0]);
        x = buf_of(f, c->args[0]);
        src = 1;
        n = size_buf(f, &b->ty.d[0]);
        w = xw = yw = row_width(f, &b->ty);
        xrows = bound(f, &b->ty.d[0]);
        yrows = 1;
    } else {   /* a slice of the last axis */
        const GNode *b = N(f, c->args[0]);
        x = buf_of(f, c->args[0]);
        w = (long)attr_num(c->e, "n", 1);
        xat = (long)attr_num(c->e, "at", 0);
        xw = last(&b->ty);
        yw = w;
        rows = lead_rows(f, &b->ty, 1, &n);
        rpn = rows_per_n(&b->ty, 1);
        xrows = yrows = rows;
    }
    int xe = f->pl->bufs[plan_base(f->pl, x)].etype, ye = f->pl->bufs[plan_base(f->pl, y)].etype;
    C(L, "W", (double)w);
    C(L, "XW", (double)xw);
    C(L, "YW", (double)yw);
    C(L, "XAT", (double)xat);
    C(L, "YAT", 0);
    C(L, "ROWS", (double)rows);
    C(L, "SRC", src);
    C(L, "DST", dst);
    C(L, "XT", xe == ET_F16);
    C(L, "YT", ye == ET_F16);
    C(L, "XROWS", (double)xrows);
    C(L, "YROWS", (double)yrows);
    C(L, "RPN", (double)rpn);
    A(L, "x", x);
    A(L, "idx", idx);
    A(L, "n", n);
    A(L, "y", y);
    finish(L);
}

static void emit_range(Fz *f, const Group *gr)
{
    L L = launch(f, KN_RANGE, gr);
    const GNode *r = N(f, gr->node);
    C(L, "ROWS", (double)bound(f, &r->ty.d[0]));
    A(L, "start", buf_of(f, r->args[0]));
    A(L, "n", size_buf(f, &r->ty.d[0]));
    A(L, "y", buf_of(f, gr->node));
    finish(L);
}

/* A split program's collective (allreduce, allgather) between the launches
 * before and after it: the chips join the operand's rows. */
static void emit_coll(Fz *f, const Group *gr)
{
    Plan *pl = f->pl;
    const GNode *c = N(f, gr->node);
    const Type *t = &N(f, c->args[0])->ty;
    long cols = t->rank ? last(t) : 1;
    *VEC_PUSH(f->a, pl->cs, pl->ncs, pl->ccs) = (PColl){.op = c->op, .rows = type_values(f, t) / cols, .cols = cols,
        .x = buf_of(f, c->args[0]), .y = buf_of(f, gr->node), .at = pl->nls, .covers = gr->nodes, .ncovers = gr->nn};
}

/* ---- the short convolution ---- */

static void emit_conv(Fz *f, const Group *gr)
{
    L L = launch(f, KN_CONV, gr);
    const GNode *cv = N(f, gr->node);
    int n;
    long rows = lead_rows(f, &cv->ty, 1, &n), ch = last(&cv->ty), s, at;
    C(L, "C", (double)ch);
    C(L, "KW", (double)N(f, cv->args[2])->ty.d[1].n);
    C(L, "ROWS", (double)rows);
    A(L, "x", slice_read(f, gr, gr->cx[0], ch, &s, &at));
    C(L, "XS", (double)s);
    C(L, "XA", (double)at);
    C(L, "GIN", gr->cx[1] >= 0);
    A(L, "x2", gr->cx[1] >= 0 ? slice_read(f, gr, gr->cx[1], ch, &s, &at) : -1);
    C(L, "X2S", (double)(gr->cx[1] >= 0 ? s : ch));
    C(L, "X2A", (double)(gr->cx[1] >= 0 ? at : 0));
    C(L, "GOUT", gr->cx[2] >= 0);
    A(L, "g", gr->cx[2] >= 0 ? slice_read(f, gr, gr->cx[2], ch, &s, &at) : -1);
    C(L, "GS", (double)(gr->cx[2] >= 0 ? s : ch));
    C(L, "GA", (double)(gr->cx[2] >= 0 ? at : 0));
    C(L, "BIAS", cv->nargs == 4);
    C(L, "ACT", gr->act);
    C(L, "OQ", gr->oq);
    A(L, "R", buf_of(f, cv->args[1]));
    A(L, "w", buf_of(f, cv->args[2]));
    if (cv->nargs == 4)
        A(L, "b", buf_of(f, cv->args[3]));
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->out[0]));
    finish(L);
}

/* ---- the mixture of experts ---- */

static void emit_route(Fz *f, const Group *gr)
{
    L L = launch(f, KN_ROUTE, gr);
    const GNode *r = N(f, gr->node);
    static const char *scores[] = {"softmax", "sigmoid", "topk_softmax"};
    const char *sc = attr_word(r->e, "score", "softmax");
    int n, code = 0;
    long rows = lead_rows(f, &r->ty, 1, &n), groups = (long)attr_num(r->e, "groups", 1);
    for (int i = 0; i < 3; i++)
        code = strcmp(sc, scores[i]) == 0 ? i : code;
    C(L, "E", (double)last(&r->ty));
    C(L, "K", attr_num(r->e, "k", 1));
    C(L, "ROWS", (double)rows);
    C(L, "SCORE", code);
    C(L, "BIAS", r->nargs == 2);
    C(L, "GROUPS", (double)groups);
    C(L, "TG", attr_num(r->e, "topk_groups", (double)groups));
    C(L, "NORM", attr_num(r->e, "norm", 0) != 0);
    C(L, "SCALE", attr_num(r->e, "scale", 1));
    A(L, "x", buf_of(f, r->args[0]));
    if (r->nargs == 2)
        A(L, "b", buf_of(f, r->args[1]));
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->node));
    finish(L);
}

/* Does what runs just before the next launch (the last launch so far,
 * or a split program's collective after it) read or write buffer b (or a
 * view of its base)? A collective counts as using every buffer: the
 * chips' joining is not a launch that programmatic dependent launch
 * orders (the cautious answer). */
static int last_uses(const Plan *pl, int b)
{
    if (pl->ncs && pl->cs[pl->ncs - 1].at == pl->nls)
        return 1;
    if (pl->nls == 0)
        return 0;
    const PLaunch *l = &pl->ls[pl->nls - 1];
    for (int p = 0; p < KMAXP; p++)
        if (l->arg[p] >= 0 && plan_base(pl, l->arg[p]) == plan_base(pl, b))
            return 1;
    return 0;
}

/* The experts' gate and up (PHASE 0, into the scratch h: it covers no
 * node) and their down product (PHASE 1, the mixture's value); under
 * moe_shared the shared expert's too, its hidden values after the kept
 * experts' in h. */
static void emit_moe(Fz *f, const Group *gr)
{
    static const char *acts[] = {"silu", "gelu_tanh", "oai"};
    const GNode *m = N(f, gr->node), *wg = N(f, m->args[2]), *wd = N(f, m->args[4]);
    const char *act = attr_word(m->e, "act", "silu");
    int n, code = 2, words = act_words(f), q = wg->ty.base == T_Q8;
    long rows = lead_rows(f, &m->ty, 1, &n), d = last(&m->ty), ff = wg->ty.d[1].n, e = wg->ty.d[0].n;
    long k = (long)attr_num(N(f, m->args[1])->e, "k", 1);
    for (int i = 0; i < 3; i++)
        code = strcmp(act, acts[i]) == 0 ? i : code;
    long sh = gr->sh[0] >= 0 ? last(&N(f, gr->sh[0])->ty) / ff : 0;   /* moe_shared: the shared expert's segments */
    int h = scratch(f, arena_printf(f->a, "%s.hidden", node_name(f, gr->node)), ET_F32, rows * (k + sh) * ff);
    /* x staged before the wait where the launch before neither made nor
     * read it (programmatic dependent launch: what launches before that
     * one wrote is done) */
    int xearly = !last_uses(f->pl, buf_of(f, m->args[0]));
    for (int phase = 0; phase < 2; phase++) {
        L L = launch(f, KN_MOE, gr);
        if (phase == 0)
            L.l->ncovers = 0;
        C(L, "PHASE", phase);
        C(L, "D", (double)d);
        C(L, "FF", (double)ff);
        C(L, "E", (double)e);
        C(L, "K", (double)k);
        C(L, "ROWS", (double)rows);
        C(L, "WQ", q);
        C(L, "XQ", q && d % 32 == 0 ? words : 0);   /* as the reference's products round them */
        C(L, "HQ", wd->ty.base == T_Q8 && ff % 32 == 0 ? words : 0);
        C(L, "ACT", code);
        C(L, "ALPHA", attr_num(m->e, "alpha", 1.702));
        C(L, "LIMIT", attr_num(m->e, "limit", 7));
        C(L, "GB", m->nargs == 8);
        C(L, "DB", m->nargs == 8);
        A(L, "rt", buf_of(f, m->args[1]));
        A(L, "n", n);
        A(L, "h", h);
        if (phase == 0) {
            A(L, "Wg", buf_of(f, m->args[2]));
            A(L, "Wu", buf_of(f, m->args[3]));
            A(L, "x", buf_of(f, m->args[0]));
            if (m->nargs == 8) {
                A(L, "bg", buf_of(f, m->args[5]));
                A(L, "bu", buf_of(f, m->args[6]));
            }
        } else {
            A(L, "Wd", buf_of(f, m->args[4]));
            if (m->nargs == 8)
                A(L, "bd", buf_of(f, m->args[7]));
            A(L, "y", buf_of(f, gr->out[0]));
            if (gr->res[0] >= 0)
                A(L, "r", buf_of(f, gr->res[0]));
        }
        C(L, "RES", phase == 1 && gr->res[0] >= 0);
        C(L, "SH", (double)sh);
        C(L, "GSH", gr->gs >= 0);
        C(L, "XEARLY", phase == 0 && xearly);
        if (sh && phase == 0) {
            A(L, "Wsg", buf_of(f, N(f, gr->sh[0])->args[0]));
            A(L, "Wsu", buf_of(f, N(f, gr->sh[1])->args[0]));
        } else if (sh) {
            A(L, "Wsd", buf_of(f, N(f, gr->sh[2])->args[0]));
            if (gr->gs >= 0)
                A(L, "gs", buf_of(f, gr->gs));
        }
        finish(L);
    }
}

/* ---- latent attention and concatenations ---- */

/* A temporary of n f32 values that no node names: NODE.SUFFIX. */
static int temp_of(Fz *f, int node, const char *suffix, long n)
{
    return unnamed_buf(f, arena_printf(f->a, "%s.%s", node_name(f, node), suffix), B_TEMP, ET_F32, n);
}

/* A wide chunk's expanded attention (MODE 1 throughout: a chunk's rows,
 * each over the cache up to its position): its heads, widths, rows and
 * cache rows, and the buffers latent_expand fills (q, k, v) and reads
 * (pos, n). */
typedef struct Wide {
    long nh, hd, vd, rows, ctx;
    int q, k, v, pos, n;
} Wide;

/* The constants and parameters attend.cu and flash.cu take alike for it. */
static void wide_attention(L L, Fz *f, const Group *gr, const Wide *w)
{
    C(L, "NH", (double)w->nh);
    C(L, "NKV", (double)w->nh);
    C(L, "HD", (double)w->hd);
    C(L, "VD", (double)w->vd);
    C(L, "ROWS", (double)w->rows);
    C(L, "NCTX", (double)w->ctx);
    C(L, "KV", 1);
    C(L, "SCALE", attr_num(N(f, gr->node)->e, "scale", 1));
    C(L, "QS", (double)(w->nh * w->hd));
    A(L, "q", w->q);
    A(L, "k", w->k);
    A(L, "v", w->v);
    A(L, "pos", w->pos);
    A(L, "n", w->n);
    A(L, "y", buf_of(f, gr->node));
}

/* latent_expanded: the cache's rows expanded into each head's keys and
 * values and the queries' parts side by side (latent_expand.cu, covering
 * nothing), then attention over them as NH heads of NOPE + ROPE (the
 * group's one covering launch): a chunk's causal rows under q8 on the
 * tensor cores (flash.cu, f16 operands, as take_flash says), else attend.cu
 * in f32. */
static void emit_latent_wide(Fz *f, const Group *gr)
{
    const GNode *a = N(f, gr->node), *q = N(f, a->args[0]), *qp = N(f, a->args[1]), *c = N(f, a->args[2]);
    const GNode *wk = N(f, a->args[3]), *wv = N(f, a->args[4]);
    long nh = q->ty.d[1].n, nope = wk->ty.d[0].n / nh;
    Wide w = {nh, nope + last(&qp->ty), wv->ty.d[0].n / nh, bound(f, &q->ty.d[0]),
              N(f, c->args[0])->ty.d[0].n, -1, -1, -1, buf_of(f, c->args[1]), size_buf(f, &q->ty.d[0])};
    w.k = temp_of(f, gr->node, "k", w.ctx * nh * w.hd);
    w.v = temp_of(f, gr->node, "v", w.ctx * nh * w.vd);
    w.q = temp_of(f, gr->node, "q", w.rows * nh * w.hd);
    L L = launch(f, KN_LATENT_EXPAND, gr);
    L.l->ncovers = 0;
    C(L, "NH", (double)nh);
    C(L, "NOPE", (double)nope);
    C(L, "QW", (double)last(&q->ty));
    C(L, "ROPE", (double)last(&qp->ty));
    C(L, "LORA", (double)wk->ty.d[1].n);
    C(L, "VD", (double)w.vd);
    C(L, "ROWS", (double)w.rows);
    C(L, "NCTX", (double)w.ctx);
    C(L, "MODE", 1);
    C(L, "KQ", wk->ty.base == T_Q8);
    C(L, "VQ", wv->ty.base == T_Q8);
    A(L, "qr", buf_of(f, a->args[0]));
    A(L, "qp", buf_of(f, a->args[1]));
    A(L, "kc", buf_of(f, c->args[0]));
    A(L, "wk", buf_of(f, a->args[3]));
    A(L, "wv", buf_of(f, a->args[4]));
    A(L, "pos", w.pos);
    A(L, "n", w.n);
    A(L, "k", w.k);
    A(L, "v", w.v);
    A(L, "q", w.q);
    finish(L);
    if (take_flash(f, gr, w.rows, w.hd, w.vd)) {   /* q8: flash.cu over the heads' own keys */
        L = launch(f, KN_FLASH, gr);
        wide_attention(L, f, gr, &w);
        finish(L);
        return;
    }
    L = launch(f, KN_ATTEND, gr);
    long chunk, busy, split = chunks(f, nh * w.rows, w.ctx, 1, 4, &chunk, &busy);
    if (split > 1) {
        took(f, RU_CHUNKS_APART);
        fuse_note(f, gr->node, "rule chunks_apart: %ld head blocks leave the chip idle: up to %ld chunks of at "
                  "least %ld rows", nh * w.rows, busy, chunk);
    }
    wide_attention(L, f, gr, &w);
    C(L, "HG", 1);
    C(L, "SPLIT", (double)split);
    C(L, "CHUNK", (double)chunk);
    C(L, "BUSY", (double)busy);
    C(L, "MODE", 1);
    if (split > 1)
        merge_scratch(L, f, gr->node, w.rows * nh * split * (w.vd + 2), w.rows * nh);
    finish(L);
}

/* latent(qr, qp, C, wk, wv): MODE 0 the cache's rows up to one position,
 * 1 up to each row's, 2 a value's rows; a wide chunk's expanded. */
static void emit_latent(Fz *f, const Group *gr)
{
    if (gr->wide) {
        emit_latent_wide(f, gr);
        return;
    }
    L L = launch(f, KN_LATENT, gr);
    const GNode *a = N(f, gr->node), *q = N(f, a->args[0]), *qp = N(f, a->args[1]), *c = N(f, a->args[2]);
    const GNode *wk = N(f, a->args[3]), *wv = N(f, a->args[4]);
    int st = q->ty.rank == 3, n = -1, mode = 2, kb = buf_of(f, a->args[2]);
    long rows = st ? bound(f, &q->ty.d[0]) : 1, ctx = c->ty.d[0].n;
    long nh = q->ty.d[st].n, rope = last(&qp->ty), lora = wk->ty.d[1].n;
    if (st)
        n = size_buf(f, &q->ty.d[0]);
    if (c->op == OP_UPTO) {
        mode = N(f, c->args[1])->ty.rank ? 1 : 0;
        kb = buf_of(f, c->args[0]);
        ctx = N(f, c->args[0])->ty.d[0].n;
        A(L, "pos", buf_of(f, c->args[1]));
    }
    C(L, "NH", (double)nh);
    C(L, "NOPE", (double)(wk->ty.d[0].n / nh));
    C(L, "QW", (double)last(&q->ty));
    C(L, "ROPE", (double)rope);
    C(L, "LORA", (double)lora);
    C(L, "VD", (double)(wv->ty.d[0].n / nh));
    C(L, "ROWS", (double)rows);
    C(L, "NCTX", (double)ctx);
    C(L, "MODE", mode);
    C(L, "KQ", wk->ty.base == T_Q8);
    C(L, "VQ", wv->ty.base == T_Q8);
    C(L, "SCALE", attr_num(a->e, "scale", 1));
    /* chunks_apart: a head a block leaves the chip idle, so the cache rows
     * go in chunks of at least 64, as many as keep two blocks a
     * multiprocessor busy (at most 64), merged by the last; the kernel cuts
     * n rows into as many chunks as hold 64 each, at most SPLIT. At least
     * 64, not 32: each chunk folds the query again and leaves a partial to
     * merge (run136, DeepSeek-V2-Lite at 512: the latent alone 24.1 -> 21.4
     * us, the step 1.781 -> 1.769 ms; 4096, 16 chunks of 256, as before) */
    const long least = 64;
    long blocks = nh * rows, split = 1;
    if (mode != 2 && blocks < f->o->sms && ctx > least) {
        split = 2L * f->o->sms / blocks;   /* one wave: two blocks a multiprocessor */
        split = split < 64 ? split : 64;
        split = split < (ctx + least - 1) / least ? split : (ctx + least - 1) / least;
    }
    if (split > 1) {
        took(f, RU_CHUNKS_APART);
        fuse_note(f, gr->node, "rule chunks_apart: %ld head blocks leave the chip idle: up to %ld chunks of at "
                  "least %ld rows", blocks, split, least);
    }
    C(L, "SPLIT", (double)split);
    C(L, "CHUNK", split > 1 ? (double)least : (double)ctx);
    A(L, "qr", buf_of(f, a->args[0]));
    A(L, "qp", buf_of(f, a->args[1]));
    A(L, "kc", kb);
    A(L, "wk", buf_of(f, a->args[3]));
    A(L, "wv", buf_of(f, a->args[4]));
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->node));
    if (split > 1)
        merge_scratch(L, f, gr->node, rows * nh * split * (lora + 2), rows * nh);
    finish(L);
}

/* ---- the gated delta rule, concatenation ---- */

static void emit_delta(Fz *f, const Group *gr)
{
    static const char *X[] = {"q", "k", "v"}, *XS[] = {"QX", "KX", "VX"}, *XA[] = {"QA", "KA", "VA"},
                      *NO[] = {"QN", "KN"}, *SC[] = {"QSC", "KSC"}, *rest[] = {"g", "beta", "S"};
    L L = launch(f, KN_DELTA, gr);
    const GNode *d = N(f, gr->node), *q = N(f, d->args[0]), *v = N(f, d->args[2]);
    int n;
    long rows = lead_rows(f, &q->ty, 2, &n), nk = q->ty.d[q->ty.rank - 2].n, nv = v->ty.d[v->ty.rank - 2].n;
    long dk = last(&q->ty), dv = last(&v->ty), s, at;
    C(L, "NK", (double)nk);
    C(L, "NV", (double)nv);
    C(L, "DK", (double)dk);
    C(L, "DV", (double)dv);
    C(L, "ROWS", (double)rows);
    for (int i = 0; i < 3; i++) {
        A(L, X[i], slice_read(f, gr, gr->dx[i], i < 2 ? nk * dk : nv * dv, &s, &at));
        C(L, XS[i], (double)s);
        C(L, XA[i], (double)at);
    }
    for (int i = 0; i < 2; i++) {
        C(L, NO[i], gr->dnorm[i] >= 0);
        C(L, SC[i], gr->dscale[i]);
        if (gr->dnorm[i] >= 0)
            C(L, "EPS", attr_num(N(f, gr->dnorm[i])->e, "eps", 0));
    }
    A(L, rest[0], buf_of(f, gr->dgx[0]));
    A(L, rest[1], buf_of(f, gr->dgx[1]));
    A(L, rest[2], buf_of(f, d->args[5]));
    C(L, "GF", gr->dga >= 0);
    C(L, "BF", gr->dbf);
    A(L, "ga", gr->dga >= 0 ? buf_of(f, gr->dga) : -1);
    A(L, "n", n);
    A(L, "y", buf_of(f, gr->node));
    finish(L);
}

/* concat(a, b, ...): a copy a part, the last covering the group, each
 * into its place in the rows (of the state at the positions when the
 * group ends in its write). */
static void emit_concat(Fz *f, const Group *gr)
{
    const GNode *c = N(f, gr->node), *w = gr->out[0] != gr->node ? N(f, gr->out[0]) : NULL;
    long width = last(&c->ty), at = 0, rows, yrows, rpn = 1;
    int n = -1, y, idx = -1;
    if (w) {
        const Type *pt = &N(f, w->args[1])->ty;
        rows = pt->rank ? bound(f, &pt->d[0]) : 1;
        if (pt->rank)
            n = size_buf(f, &pt->d[0]);
        y = buf_of(f, w->args[0]);
        idx = buf_of(f, w->args[1]);
        yrows = w->ty.d[0].n;
    } else {
        rows = yrows = lead_rows(f, &c->ty, 1, &n);
        rpn = rows_per_n(&c->ty, 1);
        y = buf_of(f, gr->node);
    }
    for (int i = 0; i < c->nargs; i++) {
        L L = launch(f, KN_COPY, gr);
        if (i < c->nargs - 1)
            L.l->ncovers = 0;
        long pw = last(&N(f, c->args[i])->ty);
        int x = buf_of(f, c->args[i]);
        C(L, "W", (double)pw);
        C(L, "XW", (double)pw);
        C(L, "YW", (double)width);
        C(L, "XAT", 0);
        C(L, "YAT", (double)at);
        C(L, "ROWS", (double)rows);
        C(L, "SRC", 0);
        C(L, "DST", w != NULL);
        C(L, "XT", f->pl->bufs[plan_base(f->pl, x)].etype == ET_F16);
        C(L, "YT", f->pl->bufs[plan_base(f->pl, y)].etype == ET_F16);
        C(L, "XROWS", (double)rows);
        C(L, "YROWS", (double)yrows);
        C(L, "RPN", (double)rpn);
        A(L, "x", x);
        A(L, "idx", idx);
        A(L, "n", n);
        A(L, "y", y);
        finish(L);
        at += pw;
    }
}

/* ---- the pool: temporaries share memory where their lives allow ---- */

/* Each temporary's life: the first and last launch that use it. */
typedef struct Life {
    int *first, *last;
} Life;

static Life lives(Fz *f)
{
    Plan *pl = f->pl;
    int nb = pl->nbufs;
    Life lv = {arena_alloc(f->a, sizeof *lv.first * (size_t)(nb + 1)),
               arena_alloc(f->a, sizeof *lv.last * (size_t)(nb + 1))};
    for (int b = 0; b < nb; b++)
        lv.first[b] = -1;
    for (int i = 0; i < pl->nls; i++)
        for (int p = 0; p < KMAXP; p++) {
            int b = pl->ls[i].arg[p];
            if (b < 0)
                continue;
            b = plan_base(pl, b);
            if (lv.first[b] < 0)
                lv.first[b] = i;
            lv.last[b] = i;
        }
    for (int j = 0; j < pl->ncs; j++)   /* a collective's buffers live over the launches either side of it */
        for (int p = 0; p < 2; p++) {
            int b = plan_base(pl, p ? pl->cs[j].y : pl->cs[j].x), at = pl->cs[j].at;
            int lo = at > 0 ? at - 1 : 0, hi = at < pl->nls ? at : pl->nls - 1;
            lv.first[b] = lv.first[b] < 0 || lo < lv.first[b] ? lo : lv.first[b];
            lv.last[b] = hi > lv.last[b] ? hi : lv.last[b];
        }
    return lv;
}

static int meet(const Life *lv, int a, int b)
{
    return !(lv->first[a] > lv->last[b] || lv->first[b] > lv->last[a]);
}

/* A temporary and its first launch, to sort by that. */
typedef struct Born {
    int first, b;
} Born;

static int by_first(const void *x, const void *y)
{
    const Born *a = x, *b = y;
    return a->first != b->first ? (a->first > b->first) - (a->first < b->first) : (a->b > b->b) - (a->b < b->b);
}

/* The temporaries alive with each temporary b, those before it alone:
 * near[b][0 .. nnear[b]). A sweep in order of first launch keeps those
 * still alive, so that the pairs cost what they are (every temporary
 * against every other was quadratic in a program's layers). */
static void alive_with(Fz *f, const Life *lv, int **near, int *nnear)
{
    Plan *pl = f->pl;
    int nb = pl->nbufs, nt = 0, na = 0, *cnear = arena_alloc(f->a, sizeof *cnear * (size_t)(nb + 1));
    int *act = arena_alloc(f->a, sizeof *act * (size_t)(nb + 1));
    Born *t = arena_alloc(f->a, sizeof *t * (size_t)(nb + 1));
    for (int b = 0; b < nb; b++)
        if (pl->bufs[b].kind == B_TEMP)
            t[nt++] = (Born){lv->first[b], b};
    qsort(t, (size_t)nt, sizeof *t, by_first);
    for (int i = 0; i < nt; i++) {
        int b = t[i].b, keep = 0;
        for (int j = 0; j < na; j++)   /* those that died before b's first launch meet nothing after it */
            if (lv->last[act[j]] >= lv->first[b])
                act[keep++] = act[j];
        na = keep;
        for (int j = 0; j < na; j++) {
            int o = act[j], lo = o < b ? o : b, hi = o < b ? b : o;
            if (meet(lv, o, b))
                *VEC_PUSH(f->a, near[hi], nnear[hi], cnear[hi]) = lo;
        }
        act[na++] = b;
    }
}

typedef struct Span {
    long at, end;
} Span;

static int by_at(const void *x, const void *y)
{
    const Span *a = x, *b = y;
    return (a->at > b->at) - (a->at < b->at);
}

static long pool_size(const Plan *pl, int b)
{
    return (plan_buf_bytes(pl, b) + 255) & ~255L;
}

/* The lowest offset where size bytes meet none of the n spans (sorted in
 * place). */
static long lowest_clear(Span *s, int n, long size)
{
    long at = 0;
    if (n)
        qsort(s, (size_t)n, sizeof *s, by_at);
    for (int i = 0; i < n && s[i].at < at + size; i++)   /* each span that starts before the end meets it */
        if (s[i].end > at)
            at = s[i].end;
    return at;
}

/* Each temporary, in the order made, at the lowest offset clear of every
 * placed temporary alive with it. */
static void pool(Fz *f)
{
    Plan *pl = f->pl;
    int nb = pl->nbufs;
    Life lv = lives(f);
    int **near = arena_alloc(f->a, sizeof *near * (size_t)(nb + 1));
    int *nnear = arena_alloc(f->a, sizeof *nnear * (size_t)(nb + 1));
    alive_with(f, &lv, near, nnear);
    Span *s = NULL;
    int cs = 0;
    long top = 0;
    for (int b = 0; b < nb; b++) {
        PBuf *x = &pl->bufs[b];
        if (x->kind != B_TEMP)
            continue;
        int n = 0;
        for (int i = 0; i < nnear[b]; i++) {
            int o = near[b][i];
            *VEC_PUSH(f->a, s, n, cs) = (Span){pl->bufs[o].at, pl->bufs[o].at + pool_size(pl, o)};
        }
        long size = pool_size(pl, b);
        x->at = lowest_clear(s, n, size);
        top = x->at + size > top ? x->at + size : top;
    }
    pl->pool = top;
}

/* rule early_trigger: a decode step whose every launch reads before its
 * wait only what no launch of the step writes (kernel_early_safe: the
 * embedding, norms, elementwise ops, rope, products, attention, arg-max,
 * copies and ranges read weights, the caches' older rows and the position
 * there) has every block let the next launch begin as it starts
 * (kernels/common.cuh's LOGOS_ET), not once it is past its own wait: the
 * launches further on load their weights sooner (run226h: the dense steps
 * 0.2-1.6% faster on an H100, the 8B's q8x2 0.3% slower). */
static void early_trigger(Fz *f)
{
    const Plan *pl = f->pl;
    if (!f->o->lane_rules || strcmp(f->p->form, "decode_step") || !pl->nls || !pl->ls[0].ncovers)
        return;
    for (int i = 0; i < pl->nls; i++)
        if (!kernel_early_safe(pl->ls[i].kernel)) {
            fuse_note(f, pl->ls[i].ncovers ? pl->ls[i].covers[0] : pl->ls[0].covers[0],
                      "rule early_trigger: not taken: %s may read before its wait what a launch before it wrote",
                      kernel_info(pl->ls[i].kernel)->name);
            return;
        }
    took(f, RU_EARLY_TRIGGER);
    fuse_note(f, pl->ls[0].covers[0], "rule early_trigger: each of the %d launches lets the next begin as its blocks start",
              pl->nls);
}

int lane_emit(Fz *f)
{
    f->buf = arena_alloc(f->a, sizeof *f->buf * (size_t)f->g->nn);
    for (int k = 0; k < f->g->nn; k++)
        f->buf[k] = -1;
    decl_bufs(f);
    concat_places(f);
    half_acts(f);   /* before stack_rows places a batch's quantized stack in its format */
    norm_split(f);
    stack_rows(f);
    for (int i = 0; i < f->ng; i++) {
        const Group *gr = &f->gs[f->order[i]];
        if (!gr->nn)
            continue;   /* folded into another group's launch */
        switch (gr->kind) {
        case GK_GEMV: emit_gemv(f, gr); break;
        case GK_ROPE: emit_rope(f, gr); break;
        case GK_ATTEND: emit_attend(f, gr); break;
        case GK_EMBED: emit_embed(f, gr); break;
        case GK_NORM: {
            int j = norm_pair_next(f, i);
            if (j >= 0) {
                emit_norm_pair(f, gr, &f->gs[f->order[j]]);
                i = j;   /* the groups between are empty */
            } else {
                emit_norm(f, gr);
            }
            break;
        }
        case GK_ARGMAX: emit_argmax(f, gr); break;
        case GK_ELEM:
            if (emit_elem(f, gr))
                return EXIT_INPUT;
            break;
        case GK_COPY: emit_copy(f, gr); break;
        case GK_RANGE: emit_range(f, gr); break;
        case GK_COLL: emit_coll(f, gr); break;
        case GK_CONV: emit_conv(f, gr); break;
        case GK_ROUTE: emit_route(f, gr); break;
        case GK_MOE: emit_moe(f, gr); break;
        case GK_LATENT: emit_latent(f, gr); break;
        case GK_CONCAT: emit_concat(f, gr); break;
        case GK_DELTA: emit_delta(f, gr); break;
        default: BUG("a group of no kind");
        }
        if (f->bad)
            return f->bad;
    }
    pool(f);
    early_trigger(f);
    return 0;
}
