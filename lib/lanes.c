/* lanes.c — which lane a stream runs on: --device cpu (the reference),
 * cuda (the GPU, or exit 3 saying why not), or auto (the GPU when a driver
 * answers and the lane has a kernel for every op, else the reference with
 * a notice). Programs given without plans are fused here with logos-fuse's
 * defaults. */
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

Lane *lane_choose(Stream *st, int device, const FuseOpts *fo, int quiet, int *status)
{
    *status = 0;
    if (device == DEV_CPU)
        return lane_cpu();
    const char *why = cuda_why();
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
    return lane_cuda(status);
}
