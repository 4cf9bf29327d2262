/* lanes.c — which lane a stream runs on: --device cpu (the reference),
 * cuda (the GPU, or exit 3 saying why not), or auto (the GPU when a driver
 * answers and the lane has a kernel for every op, else the reference with
 * a notice); a split stream's chips on GPUs over NCCL (cuda_tp.c), which
 * must open too. Programs given without plans are fused here with
 * logos-fuse's defaults. Whether --tp, --rank and --devices fit the
 * stream. */
#include <string.h>

#include "logos.h"

void fuse_defaults(FuseOpts *o, long ctx)
{
    memset(o, 0, sizeof *o);
    /* two int8 words a value, quantized by their producers: int8 speed within
     * 1e-3 of f32 (one word is faster still, but misses the lane's 2e-2 bound
     * on the tiny models: logos-fuse(1)) */
    o->numerics = NUM_Q8X2;
    o->fuse_quant = 1;
    o->lane_rules = 1;
    o->rows = ctx > 0 && ctx < 512 ? (int)ctx : 512;
    o->sms = 132;
}

/* Plans for the programs that came without one; 0, or EXIT_INPUT after the
 * message of an op the lane has no kernel for. */
static int plans_for(Stream *st, const FuseOpts *fo)
{
    for (int k = 0; k < st->nprogs; k++) {
        if (st->plans[k])
            continue;
        Plan *pl = fuse(st->a, st->progs[k], st->graphs[k], fo);
        if (!pl)
            return EXIT_INPUT;
        st->plans[k] = pl;
    }
    return 0;
}

/* Does a program of st join chips (a split program, or a collective on
 * one chip)? Such a stream runs over NCCL. */
static int joins(const Stream *st)
{
    for (int k = 0; k < st->nprogs; k++)
        for (int i = 0; i < st->graphs[k]->nn; i++)
            if (st->progs[k]->chips || st->graphs[k]->n[i].op == OP_ALLREDUCE || st->graphs[k]->n[i].op == OP_ALLGATHER)
                return 1;
    return 0;
}

/* Why a lane on GPUs cannot run st: a split stream needs NCCL, then every
 * stream the driver and a device; NULL when both answer. */
static const char *gpu_why(Arena *a, const Stream *st)
{
    const char *why = joins(st) ? nccl_why() : NULL;
    if (why)
        return arena_printf(a, "a split stream needs NCCL: %s", why);
    return cuda_why();
}

Lane *lane_choose(Stream *st, int device, const FuseOpts *fo, int quiet, int *status)
{
    *status = 0;
    if (device == DEV_CPU)
        return lane_cpu();
    if (st->tp && st->tp->rank >= 0)   /* the other chips are processes on GPUs: no reference to fall back on */
        device = DEV_CUDA;
    const char *why = gpu_why(st->a, st);
    if (why) {
        if (device == DEV_CUDA) {
            diag("--device cuda: %s", why);
            *status = EXIT_SYSTEM;
            return NULL;
        }
        if (!quiet)
            diag("notice: %s: running the CPU reference", why);
        return lane_cpu();
    }
    if (plans_for(st, fo)) {
        if (device == DEV_CUDA) {
            *status = EXIT_INPUT;
            return NULL;
        }
        if (!quiet)
            diag("notice: the CUDA lane cannot run this stream: running the CPU reference");
        return lane_cpu();
    }
    if (joins(st))
        return lane_tp(st, status);
    return lane_cuda_on(st->tp && st->tp->devices ? st->tp->devices[0] : 0, status);
}

int tp_fits(const Stream *st)
{
    const TpArg *t = st->tp;
    int chips = st->chips ? st->chips : 1;
    if (!t)
        return 0;
    if (t->chips && t->chips != chips) {
        if (st->chips)
            diag("--tp %ld: the stream is split over %d chip%s", t->chips, chips, chips == 1 ? "" : "s");
        else
            diag("--tp %ld: the stream is not split (logos-author --tp %ld writes the split forms)", t->chips, t->chips);
        return EXIT_INPUT;
    }
    if (t->rank >= 0 && !st->chips) {
        diag("--rank %ld: the stream is not split: it runs in one process", t->rank);
        return EXIT_INPUT;
    }
    if (t->rank >= chips) {
        diag("--rank %ld: the stream's chips are ranks 0 to %d", t->rank, chips - 1);
        return EXIT_INPUT;
    }
    int here = t->rank >= 0 ? 1 : chips;
    if (t->devices && t->ndevices != here) {
        diag("--devices names %d GPU%s; this process runs %d chip%s%s", t->ndevices, t->ndevices == 1 ? "" : "s",
             here, here == 1 ? "" : "s", t->rank >= 0 ? " (--rank)" : "");
        return EXIT_INPUT;
    }
    return 0;
}
