// route.cu — route: a mixture's routing weights from its router logits, in
// f64 as the CPU reference computes them (lib/ref_ops.c route_row):
//
//   s[i] = SCORE 0: softmax(x)[i]   1: sigmoid(x[i])   2: x[i] (topk_softmax)
//   c[i] = s[i] + b[i]                              (b 0 without BIAS)
//   GROUPS > 1: experts in GROUPS groups of E / GROUPS; a group's score is
//     its best c (with BIAS: its best two summed); all but the TG best groups
//     dropped (the worst first, ties to the higher group)
//   kept = the K best c of the groups left, ties to the lower expert
//   w[i] = s[i] kept, else 0; SCORE 2: the softmax of the kept s
//   y[i] = w[i] / (NORM ? sum of w : 1) * SCALE
//
// Shapes: x (rows, E) f32; b (E) f32; y (rows, E) f32, the unkept experts'
// weights 0; rows = n or ROWS.
// Launch: grid ROWS, a block a row, in one of two ways (WARP: E at most
// 256, where it was the faster on the H200; bench/NOTES.md run119-run120):
// WARP: block 32, a warp a row with no barrier: lane l holds c of experts
//   l, l + 32, ... (NW of them) in registers, a bit each for those still
//   in the running and those kept; each of the K picks is the lane's best
//   then the warp's (value, expert); each exponential once (the sum's,
//   kept for s; s apart from c only under BIAS).
// else: block 32 NW, a thread an expert, each exponential once and in
//   parallel; each expert's rank among its warp's by 32 shuffles, the
//   warps' K best each the candidates, the K best candidates by their
//   ranks among the candidates (shared memory); maxima and sums the
//   block's.
// Either way the groups' drop is the first warp's.

#include "routing.cuh"

using R = Routing<E, K, SCORE, BIAS, GROUPS, TG, NORM>;

extern "C" __global__ void __launch_bounds__(E <= 256 ? 32 : 1024) route(const Params p)
{
    pdl_begin();
    long t = blockIdx.x;
    if (t >= rows_of(p.a[2], ROWS))
        return;
    const float *x = (const float *)p.a[0] + t * E, *b = (const float *)p.a[1];
    float *y = (float *)p.a[3] + t * E;
    if (E <= 256)
        R::warp_row(x, b, SCALE, y);
    else
        R::block_row(x, b, SCALE, y);
}
