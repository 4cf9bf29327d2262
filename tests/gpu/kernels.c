/* kernels.c — every kernel of the CUDA lane against its CPU twin: small
 * programs that fuse into each kernel and each of its variants (parts, the
 * gated pair, biases, residuals, the norm prologue (written out for later
 * launches that read it too: NOUT) and a sandwich norm with its residual
 * before it (PRE, its sum written out: XR), soft-cap and arg-max,
 * a gated output (times sigmoid of a value a row),
 * quantizing epilogues, its rows preloaded into shared memory after a launch
 * that reads little (PF, logos-fuse --preload-kb); norms (with a residual, or gated by silu), rope with its per-head norms and the cache
 * appends in f32 and f16; attention with soft-cap, sinks, a window, grouped
 * heads (a key head's query heads over several blocks where they are many
 * and wide), split chunks, causal rows (under q8 a chunk's on the tensor
 * cores: flash.cu), a batch's sequences in one launch each at its own
 * position over its own cache (f32 and f16, with and without the rope);
 * embeddings, elementwise ops with broadcasting, row copies, ranges; the
 * short convolution with its gates,
 * bias and activation over its ring; routing (softmax, sigmoid, top-k
 * softmax, groups, a selection bias, norm and scale) and the experts' two
 * products over the kept experts, q8 and f32, with gpt-oss's biases and
 * clamped activation and the layer's residual, and the shared expert
 * folded in (moe_shared: segments, a sigmoid gate); the tensor cores' products of stacked rows with
 * their parts, norm, bias, residual, gated pair, soft-cap and quantizing
 * epilogue; latent attention absorbed over its cache, q8 and f32 halves, a
 * decode step and a chunk's causal rows, and a wide chunk's expanded
 * (latent_expand.cu, then attend over its heads), with the rope launch that reads
 * its query's and latent row's slices in place and writes the row's parts
 * (the normed latent, the turned key) into their places in its cache; the gated delta rule over a step and a chunk's rows with
 * grouped heads, its q and k normed in its prologue or not, read in place
 * or not, its decay and beta computed in the launch or read; concatenation), at several shapes, on random inputs
 * (never zeros) with the GPU's outputs poisoned before every run
 * (LOGOS_POISON), over several steps so that states fill. The CPU twin is
 * the reference running the same program as its plan computes it
 * (ref_run_numerics, plan_ref_numerics): under q8 and q8x2 its products'
 * activations quantized as the lane's are, and the attention a flash launch
 * covers as flash.cu computes it (ref_flash.c); the error that this gives
 * against f32 is printed beside the GPU's. The states kept in f16 are
 * compared too: values one f16 step apart (an f32 difference in the last
 * bits rounding either way) are counted and set the precise bound to 1e-4,
 * any further apart fail (cache_flips).
 *
 *   build/test/gpu_kernels      one line a case and numerics, then a count;
 *                               exit 0 all passed, 1 one failed, 3 no GPU
 *   KERNELS_LANE=cpu ...        the harness checks itself where no GPU answers:
 *                               the CPU reference on both sides, the lane's
 *                               under LOGOS_REF_NUMERICS (so 0 apart)
 *   KERNELS_MATCH=TEXT ...      only the cases whose description holds TEXT
 *                               (or one of TEXT's parts between '|': "route|moe")
 *   KERNELS_SHARD=K/N ...       only the cases i with i % N == K, each line
 *                               led by its place among all and a tab, so that
 *                               N shards run side by side (tests/gpu/run) can
 *                               be put back in order; exit 2 for a K/N that is
 *                               not 0 <= K < N
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logos.h"

typedef struct Case {
    const char *what;    /* the kernels and variants it exercises */
    const char *src;     /* the program (its header is added) */
    int steps;           /* steps with fresh inputs, the states carried */
    int sms;             /* the multiprocessors the fuser splits attention for (0: 132); as many as
                            a batch's head blocks, or fewer, give a block each row's whole cache,
                            its warps several 32-row tiles each */
} Case;

/* A decode step of 4 query heads a key head of 128 over caches of type T
 * (the 8B's heads): rope, appends, attention. */
#define LONG_STEP(T)                                                                                       \
    "in q : f32[8,128]\nin k : f32[2,128]\nin v : f32[2,128]\nin pos : i32\nstate Kc : " T "[512,2,128]\n"   \
    "state Vc : " T "[512,2,128]\nout o : f32[8,128]\nqh = rope(q, pos, theta=500000)\n"                        \
    "Kc[pos] = rope(k, pos, theta=500000)\nVc[pos] = v\no = attend(qh, Kc[..pos], Vc[..pos], scale=0.088)\n"

/* Sequence S of the f32 batch: rope, appends, attention. */
#define BATCH_ROPE(S)                                                                                      \
    "qh_s" S " = rope(q[" S "], pos_s" S ", theta=1000000)\n"                                              \
    "Kc_s" S "[pos_s" S "] = rope(k[" S "], pos_s" S ", theta=1000000)\nVc_s" S "[pos_s" S "] = v[" S "]\n"  \
    "o_s" S " = attend(qh_s" S ", Kc_s" S "[..pos_s" S "], Vc_s" S "[..pos_s" S "], scale=0.125)\n"
#define BATCH_STATES(S) "in pos_s" S " : i32\nstate Kc_s" S " : f32[512,2,64]\nstate Vc_s" S " : f32[512,2,64]\n"

/* The f16 batch's declarations: 4 sequences, heads of 128 (BATCH_F16P:
 * without the per-head norms' weights). */
#define BATCH_F16P                                                                                         \
    "in q : f32[4,16,128]\nin k : f32[4,2,128]\nin v : f32[4,2,128]\nin pos_s0 : i32\nin pos_s1 : i32\n"      \
    "in pos_s2 : i32\nin pos_s3 : i32\n"                                                                     \
    "state Kc_s0 : f16[256,2,128]\nstate Vc_s0 : f16[256,2,128]\nstate Kc_s1 : f16[256,2,128]\n"             \
    "state Vc_s1 : f16[256,2,128]\nstate Kc_s2 : f16[256,2,128]\nstate Vc_s2 : f16[256,2,128]\n"             \
    "state Kc_s3 : f16[256,2,128]\nstate Vc_s3 : f16[256,2,128]\nout o : f32[4,16,128]\n"
#define BATCH_F16 BATCH_F16P "weight nq : f32[128]\nweight nk : f32[128]\n"

/* Sequence S of the f16 batch appending its keys and values as they come,
 * over a window of W rows: the f32 inputs round to the same f16 on both
 * sides, so the caches agree bit for bit and the attention's own arithmetic
 * is what the bound holds. */
#define BATCH_SEQP(S, W)                                                                                   \
    "Kc_s" S "[pos_s" S "] = k[" S "]\nVc_s" S "[pos_s" S "] = v[" S "]\n"                                   \
    "o_s" S " = attend(q[" S "], Kc_s" S "[..pos_s" S "], Vc_s" S "[..pos_s" S "], scale=0.088, softcap=30, " \
    "window=" W ")\n"

/* Sequence S of the f16 batch: its rope under per-head norms, its appends
 * and its attention over a window of W rows (BATCH_SEQ: 40). */
#define BATCH_SEQW(S, W)                                                                                    \
    "qh_s" S " = rope(rmsnorm(q[" S "], nq, eps=1e-06), pos_s" S ", theta=500000)\n"                       \
    "Kc_s" S "[pos_s" S "] = rope(rmsnorm(k[" S "], nk, eps=1e-06), pos_s" S ", theta=500000)\n"          \
    "Vc_s" S "[pos_s" S "] = v[" S "]\n"                                                                   \
    "o_s" S " = attend(qh_s" S ", Kc_s" S "[..pos_s" S "], Vc_s" S "[..pos_s" S "], scale=0.088, softcap=30, " \
    "window=" W ")\n"
#define BATCH_SEQ(S) BATCH_SEQW(S, "40")
/* The f16 batch to 142 rows over a window of 130: roped (BATCH_W130) or
 * appended as they come (BATCH_P130). */
#define BATCH_W130                                                                                         \
    BATCH_F16 BATCH_SEQW("0", "130") BATCH_SEQW("1", "130") BATCH_SEQW("2", "130") BATCH_SEQW("3", "130")    \
    "o = stack(o_s0, o_s1, o_s2, o_s3)\n"
#define BATCH_P130                                                                                         \
    BATCH_F16P BATCH_SEQP("0", "130") BATCH_SEQP("1", "130") BATCH_SEQP("2", "130") BATCH_SEQP("3", "130")   \
    "o = stack(o_s0, o_s1, o_s2, o_s3)\n"

/* Four sequences' attention over f16 caches, its stack read by the o
 * product with a residual. */
#define BATCH_O \
     "in q : f32[4,16,128]\nin k : f32[4,2,128]\nin v : f32[4,2,128]\nin pos_s0 : i32\nin pos_s1 : i32\n" \
     "in pos_s2 : i32\nin pos_s3 : i32\nin r : f32[4,512]\nweight nq : f32[128]\nweight nk : f32[128]\n" \
     "weight wo : q8[512,2048]\n" \
     "state Kc_s0 : f16[256,2,128]\nstate Vc_s0 : f16[256,2,128]\nstate Kc_s1 : f16[256,2,128]\n" \
     "state Vc_s1 : f16[256,2,128]\nstate Kc_s2 : f16[256,2,128]\nstate Vc_s2 : f16[256,2,128]\n" \
     "state Kc_s3 : f16[256,2,128]\nstate Vc_s3 : f16[256,2,128]\nout y : f32[4,512]\n" \
     BATCH_SEQ("0") BATCH_SEQ("1") BATCH_SEQ("2") BATCH_SEQ("3") "o = stack(o_s0, o_s1, o_s2, o_s3)\n" \
     "y = r + wo @ (o ~ [4,2048])\n"

static const Case cases[] = {
    {"gemv q8 96x64", "in x : f32[64]\nweight w : q8[96,64]\nout y : f32[96]\ny = w @ x\n", 2, 0},
    {"gemv q8 4096x4096", "in x : f32[4096]\nweight w : q8[4096,4096]\nout y : f32[4096]\ny = w @ x\n", 2, 0},
    {"gemv q8 1000x2048, 3 rows", "in x : f32[3,2048]\nweight w : q8[1000,2048]\nout y : f32[3,1000]\ny = w @ x\n", 2, 0},
    {"gemv f32 7x30, 5 rows", "in x : f32[5,30]\nweight w : f32[7,30]\nout y : f32[5,7]\ny = w @ x\n", 2, 0},
    {"gemv parts, norm prologue, bias, residual",
     "in x : f32[256]\nin r : f32[128]\nweight nw : f32[256]\nweight w0 : q8[256,256]\nweight w1 : q8[64,256]\n"
     "weight w2 : q8[128,256]\nweight b0 : f32[256]\nout y0 : f32[256]\nout y1 : f32[64]\nout y2 : f32[128]\n"
     "a = rmsnorm(x, nw, eps=1e-05, offset=1)\ny0 = w0 @ a + b0\ny1 = w1 @ a\ny2 = r + w2 @ a\n", 2, 0},
    {"gemv gated output (sigmoid of a value a row) and a residual: Qwen3-Next's shared expert; 3 rows",
     "in x : f32[512]\nin r : f32[2048]\nin s : f32[1]\nin x3 : f32[3,512]\nin r3 : f32[3,2048]\nin s3 : f32[3,1]\n"
     "weight w : q8[2048,512]\nout y : f32[2048]\nout y3 : f32[3,2048]\n"
     "y = r + sigmoid(s) * (w @ x)\ny3 = r3 + (w @ x3) * sigmoid(s3)\n", 2, 0},
    {"gemv gated silu, quantizing epilogue, down",
     "in x : f32[512]\nin r : f32[512]\nweight nw : f32[512]\nweight wg : q8[1536,512]\nweight wu : q8[1536,512]\n"
     "weight wd : q8[512,1536]\nout y : f32[512]\n"
     "a = rmsnorm(x, nw, eps=1e-06)\nh = silu(wg @ a) * (wu @ a)\ny = r + wd @ h\n", 2, 0},
    {"gemv gated gelu_tanh, 4 rows",
     "in x : f32[4,256]\nweight wg : q8[512,256]\nweight wu : q8[512,256]\nout h : f32[4,512]\n"
     "h = gelu_tanh(wg @ x) * (wu @ x)\n", 2, 0},
    {"gemv LM head: norm, soft-cap, arg-max",
     "in x : f32[1024]\nweight nw : f32[1024]\nweight e : q8[8000,1024]\nout logits : f32[8000]\nout next : i32\n"
     "a = rmsnorm(x, nw, eps=1e-05)\nlogits = softcap(e @ a, cap=30)\nnext = argmax(logits)\n", 2, 0},
    {"rownorm of rows of 2048 in registers: post-norm residual, l2, quantizing for stacked products (mmv)",
     "in x : f32[4,2048]\nin r : f32[4,2048]\nweight w : f32[2048]\nweight wq : q8[256,2048]\n"
     "out z : f32[4,2048]\nout u : f32[4,2048]\nout y : f32[4,256]\n"
     "z = r + rmsnorm(x, w, eps=1e-05)\nu = l2norm(x, eps=1e-06)\na = rmsnorm(x, w, eps=1e-06, offset=1)\ny = wq @ a\n", 2, 0},
    {"rownorm pair (norm_pair, Gemma 2's): a norm and its residual, then the norm of the sum quantized for stacked "
     "products (mmv), rows of 2304 and of 64",
     "in x : f32[6,2304]\nin r : f32[6,2304]\nweight na : f32[2304]\nweight nb : f32[2304]\nweight wq : q8[256,2304]\n"
     "in x2 : f32[3,64]\nin r2 : f32[3,64]\nweight nc : f32[64]\nweight nd : f32[64]\nweight wr : q8[96,64]\n"
     "out s : f32[6,2304]\nout y : f32[6,256]\nout s2 : f32[3,64]\nout y2 : f32[3,96]\n"
     "s = r + rmsnorm(x, na, eps=1e-06, offset=1)\ny = wq @ rmsnorm(s, nb, eps=1e-06, offset=1)\n"
     "s2 = r2 + rmsnorm(x2, nc, eps=1e-06, offset=1)\ny2 = wr @ rmsnorm(s2, nd, eps=1e-06, offset=1)\n", 2, 0},
    {"rownorm gated (rmsnorm(x, w) * silu(z), Qwen3-Next's after the delta rule): per-head rows, then quantized for "
     "the product that reads it; and a chunk's rows",
     "size T\nin x : f32[32,128]\nin z : f32[32,128]\nin xs : f32[T,4,64]\nin zs : f32[T,4,64]\nweight w : f32[128]\n"
     "weight ws : f32[64]\nweight wo : q8[256,4096]\nout y : f32[256]\nout u : f32[T,4,64]\n"
     "g = rmsnorm(x, w, eps=1e-06) * silu(z)\ny = wo @ (g ~ [4096])\nu = rmsnorm(xs, ws, eps=1e-06) * silu(zs)\n", 2, 0},
    {"rownorm rms, l2, post-norm residual",
     "in x : f32[3,96]\nin r : f32[3,96]\nweight w : f32[96]\nout y : f32[3,96]\nout z : f32[3,96]\n"
     "out u : f32[3,96]\ny = rmsnorm(x, w, eps=1e-06, offset=1)\nz = r + rmsnorm(x, w, eps=1e-05)\nu = l2norm(x, eps=1e-06)\n", 2, 0},
    {"rope + per-head norms + appends, attend split",
     "in q : f32[8,64]\nin k : f32[2,64]\nin v : f32[2,64]\nin pos : i32\nweight nq : f32[64]\nweight nk : f32[64]\n"
     "state Kc : f32[512,2,64]\nstate Vc : f32[512,2,64]\nout o : f32[8,64]\n"
     "qh = rope(rmsnorm(q, nq, eps=1e-06), pos, theta=1000000)\nKc[pos] = rope(rmsnorm(k, nk, eps=1e-06), pos, theta=1000000)\n"
     "Vc[pos] = v\no = attend(qh, Kc[..pos], Vc[..pos], scale=0.125)\n", 40, 0},
    {"rope llama3, f16 cache, attend soft-cap, window",
     "in q : f32[4,128]\nin k : f32[4,128]\nin v : f32[4,128]\nin pos : i32\n"
     "state Kc : f16[256,4,128]\nstate Vc : f16[256,4,128]\nout o : f32[4,128]\n"
     "qh = rope(q, pos, theta=500000, scaling=llama3, factor=32, low=1, high=4, orig=8192)\n"
     "Kc[pos] = rope(k, pos, theta=500000, scaling=llama3, factor=32, low=1, high=4, orig=8192)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], scale=0.08, softcap=50, window=7)\n", 24, 0},
    /* a decode step's chunks of 64 rows and more are scored a row a lane
     * (attend.cu's LR under MODE 0): a block the whole cache (--sms 1) from
     * position 64, then six chunks merged (--sms 3) from 379 */
    {"rope + appends, attend a row a lane from chunks of 64 rows (--sms 1): f32, 4 query heads a key head of 128",
     LONG_STEP("f32"), 100, 1},
    {"rope + appends, attend a row a lane from chunks of 64 rows, six merged (--sms 3): f16, 4 query heads a key head "
     "of 128",
     LONG_STEP("f16"), 400, 3},
    /* rule preload (off by default; the cases whose description says
     * "preloaded" fuse with --preload-kb 200): the product after a
     * decode step's attention takes its rows whole into shared memory
     * before its wait (gemv.cu's PF): a group a block; 22 a block over 3
     * multiprocessors, the last block's short; rows of 896 (scales of 56
     * bytes a row); after a gated norm, after a convolution */
    {"rope + appends, attend, the o product preloaded (PF 1): 4 query heads a key head of 128, residual",
     "in q : f32[8,128]\nin k : f32[2,128]\nin v : f32[2,128]\nin pos : i32\nin r : f32[512]\n"
     "weight wo : q8[512,1024]\nstate Kc : f32[64,2,128]\nstate Vc : f32[64,2,128]\nout y : f32[512]\n"
     "qh = rope(q, pos, theta=500000)\nKc[pos] = rope(k, pos, theta=500000)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], scale=0.088)\ny = r + wo @ (o ~ [1024])\n", 20, 0},
    {"rope + appends, attend, the o product preloaded (PF 22, --sms 3): 520 rows, the last block short",
     "in q : f32[8,128]\nin k : f32[2,128]\nin v : f32[2,128]\nin pos : i32\nin r : f32[520]\n"
     "weight wo : q8[520,1024]\nstate Kc : f32[64,2,128]\nstate Vc : f32[64,2,128]\nout y : f32[520]\n"
     "qh = rope(q, pos, theta=500000)\nKc[pos] = rope(k, pos, theta=500000)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], scale=0.088)\ny = r + wo @ (o ~ [1024])\n", 20, 3},
    {"rope + appends, attend, the o product preloaded (PF 1): 7 query heads a key head of 64, rows of 896",
     "in q : f32[14,64]\nin k : f32[2,64]\nin v : f32[2,64]\nin pos : i32\nin r : f32[896]\n"
     "weight wo : q8[896,896]\nstate Kc : f32[64,2,64]\nstate Vc : f32[64,2,64]\nout y : f32[896]\n"
     "qh = rope(q, pos, theta=1000000)\nKc[pos] = rope(k, pos, theta=1000000)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], scale=0.125)\ny = r + wo @ (o ~ [896])\n", 20, 0},
    {"rownorm gated, then the product preloaded (PF 1, after a norm), residual",
     "in x : f32[32,128]\nin z : f32[32,128]\nin r : f32[512]\nweight w : f32[128]\nweight wo : q8[512,4096]\n"
     "out y : f32[512]\ng = rmsnorm(x, w, eps=1e-06) * silu(z)\ny = r + wo @ (g ~ [4096])\n", 3, 0},
    {"sconv: a decode step's gates, then the product preloaded (PF 1, after the convolution)",
     "in p : f32[384]\nin r : f32[64]\nweight w : f32[128,3]\nweight wo : q8[64,128]\nstate R : f32[2,128]\n"
     "out y : f32[64]\nc = slice(p, at=0, n=128) * slice(p, at=256, n=128)\n"
     "z = slice(p, at=128, n=128) * conv(c, R, w)\ny = r + wo @ z\n", 6, 0},
    {"rope + appends, attend a row a lane from chunks of 64 rows (--sms 1): soft-cap, window 100, 2 query heads a key "
     "head of 256",
     "in q : f32[4,256]\nin k : f32[2,256]\nin v : f32[2,256]\nin pos : i32\n"
     "state Kc : f32[256,2,256]\nstate Vc : f32[256,2,256]\nout o : f32[4,256]\n"
     "qh = rope(q, pos, theta=10000)\nKc[pos] = rope(k, pos, theta=10000)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], scale=0.0625, softcap=50, window=100)\n", 130, 1},
    {"rope + appends, attend a row a lane from chunks of 64 rows (--sms 1): sinks, window 80, f16, head 64",
     "in q : f32[8,64]\nin k : f32[2,64]\nin v : f32[2,64]\nin pos : i32\nweight sk : f32[8]\n"
     "state Kc : f16[256,2,64]\nstate Vc : f16[256,2,64]\nout o : f32[8,64]\n"
     "qh = rope(q, pos, theta=150000)\nKc[pos] = rope(k, pos, theta=150000)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], sk, scale=0.125, window=80)\n", 110, 1},
    {"rope partial rot, yarn; attend sinks, head 256",
     "in q : f32[2,256]\nin k : f32[1,256]\nin v : f32[1,256]\nin pos : i32\nweight sk : f32[2]\n"
     "state Kc : f32[64,1,256]\nstate Vc : f32[64,1,256]\nout o : f32[2,256]\n"
     "qh = rope(q, pos, theta=10000, rot=64, scaling=yarn, factor=4, orig=4096)\n"
     "Kc[pos] = rope(k, pos, theta=10000, rot=64, scaling=yarn, factor=4, orig=4096)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], sk, scale=0.0625)\n", 12, 0},
    {"rope partial rot + per-head norms + appends, attend split: 8 query heads a key head of 256, 2 a block",
     "in q : f32[16,256]\nin k : f32[2,256]\nin v : f32[2,256]\nin pos : i32\nweight nq : f32[256]\n"
     "weight nk : f32[256]\nstate Kc : f32[128,2,256]\nstate Vc : f32[128,2,256]\nout o : f32[16,256]\n"
     "qh = rope(rmsnorm(q, nq, eps=1e-06, offset=1), pos, theta=10000000, rot=64)\n"
     "Kc[pos] = rope(rmsnorm(k, nk, eps=1e-06, offset=1), pos, theta=10000000, rot=64)\nVc[pos] = v\n"
     "o = attend(qh, Kc[..pos], Vc[..pos], scale=0.0625)\n", 40, 0},
    {"causal rows of a chunk, 8 query heads a key head of 256, 2 a block",
     "size T\nin q : f32[T,16,256]\nin k : f32[T,2,256]\nin v : f32[T,2,256]\nin pos0 : i32\n"
     "state Kc : f32[64,2,256]\nstate Vc : f32[64,2,256]\nout o : f32[T,16,256]\n"
     "p = range(pos0, n=T)\nqh = rope(q, p, theta=10000, rot=64)\nKc[p] = rope(k, p, theta=10000, rot=64)\nVc[p] = v\n"
     "o = attend(qh, Kc[..p], Vc[..p], scale=0.0625)\n", 3, 0},
    {"rope of 100 rows: 32 query heads, 8 key heads turned and appended, 8 value heads (4 heads a block)",
     "in q : f32[100,32,64]\nin k : f32[100,8,64]\nin v : f32[100,8,64]\nin pos0 : i32\n"
     "state Kc : f32[512,8,64]\nstate Vc : f32[512,8,64]\nout qh : f32[100,32,64]\n"
     "p = range(pos0, n=100)\nqh = rope(q, p, theta=500000)\nKc[p] = rope(k, p, theta=500000)\nVc[p] = v\n", 3, 0},
    {"causal rows of a chunk: range, rope, appends, attend",
     "size T\nin q : f32[T,4,32]\nin k : f32[T,2,32]\nin v : f32[T,2,32]\nin pos0 : i32\n"
     "state Kc : f32[64,2,32]\nstate Vc : f32[64,2,32]\nout o : f32[T,4,32]\n"
     "p = range(pos0, n=T)\nqh = rope(q, p, theta=10000)\nKc[p] = rope(k, p, theta=10000)\nVc[p] = v\n"
     "o = attend(qh, Kc[..p], Vc[..p], scale=0.17)\n", 3, 0},
    /* a chunk's causal rows: under q8 on the tensor cores (flash.cu),
     * under precise and q8x2 by attend.cu; chunks a step, so that the
     * later steps read the cache rows of the earlier ones too (the
     * bound under q8: flash_alone) */
    {"flash: T causal rows, 4 query heads a key head of 64, values of 32",
     "size T\nin q : f32[T,8,64]\nin k : f32[T,2,64]\nin v : f32[T,2,32]\nin pos0 : i32\n"
     "state Kc : f32[64,2,64]\nstate Vc : f32[64,2,32]\nout o : f32[T,8,32]\n"
     "p = range(pos0, n=T)\nKc[p] = k\nVc[p] = v\no = attend(q, Kc[..p], Vc[..p], scale=0.125)\n", 3, 0},
    {"flash: 70 causal rows (280 stacked), head 128, f16 cache, soft-cap, window 40",
     "in q : f32[70,8,128]\nin k : f32[70,2,128]\nin v : f32[70,2,128]\nin pos0 : i32\n"
     "state Kc : f16[256,2,128]\nstate Vc : f16[256,2,128]\nout o : f32[70,8,128]\n"
     "p = range(pos0, n=70)\nKc[p] = k\nVc[p] = v\no = attend(q, Kc[..p], Vc[..p], scale=0.088, softcap=50, window=40)\n", 3, 0},
    {"flash: T causal rows, head 256, 4 query heads a key head, sinks",
     "size T\nin q : f32[T,8,256]\nin k : f32[T,2,256]\nin v : f32[T,2,256]\nin pos0 : i32\nweight sk : f32[8]\n"
     "state Kc : f32[64,2,256]\nstate Vc : f32[64,2,256]\nout o : f32[T,8,256]\n"
     "p = range(pos0, n=T)\nKc[p] = k\nVc[p] = v\no = attend(q, Kc[..p], Vc[..p], sk, scale=0.0625)\n", 3, 0},
    {"flash: 40 rows, 7 query heads a key head of 64, sinks, window 50, quantized out",
     "in q : f32[40,14,64]\nin k : f32[40,2,64]\nin v : f32[40,2,64]\nin pos0 : i32\nweight sk : f32[14]\n"
     "weight w : q8[64,896]\nstate Kc : f32[128,2,64]\nstate Vc : f32[128,2,64]\nout y : f32[40,64]\n"
     "p = range(pos0, n=40)\nKc[p] = k\nVc[p] = v\no = attend(q, Kc[..p], Vc[..p], sk, scale=0.125, window=50)\n"
     "y = w @ (o ~ [40,896])\n", 3, 0},
    {"flash: 100 causal rows, head 16, 2 query heads a key head, soft-cap",
     "in q : f32[100,4,16]\nin k : f32[100,2,16]\nin v : f32[100,2,16]\nin pos0 : i32\n"
     "state Kc : f32[128,2,16]\nstate Vc : f32[128,2,16]\nout o : f32[100,4,16]\n"
     "p = range(pos0, n=100)\nKc[p] = k\nVc[p] = v\no = attend(q, Kc[..p], Vc[..p], scale=0.25, softcap=30)\n", 3, 0},
    {"batch_attend: 3 sequences at their own positions, rope + appends, attend split, 4 query heads a key head",
     "in q : f32[3,8,64]\nin k : f32[3,2,64]\nin v : f32[3,2,64]\nin pos_s0 : i32\nin pos_s1 : i32\nin pos_s2 : i32\n"
     "state Kc_s0 : f32[512,2,64]\nstate Vc_s0 : f32[512,2,64]\nstate Kc_s1 : f32[512,2,64]\n"
     "state Vc_s1 : f32[512,2,64]\nstate Kc_s2 : f32[512,2,64]\nstate Vc_s2 : f32[512,2,64]\nout o : f32[3,8,64]\n"
     "qh_s0 = rope(q[0], pos_s0, theta=1000000)\nKc_s0[pos_s0] = rope(k[0], pos_s0, theta=1000000)\nVc_s0[pos_s0] = v[0]\n"
     "o_s0 = attend(qh_s0, Kc_s0[..pos_s0], Vc_s0[..pos_s0], scale=0.125)\n"
     "qh_s1 = rope(q[1], pos_s1, theta=1000000)\nKc_s1[pos_s1] = rope(k[1], pos_s1, theta=1000000)\nVc_s1[pos_s1] = v[1]\n"
     "o_s1 = attend(qh_s1, Kc_s1[..pos_s1], Vc_s1[..pos_s1], scale=0.125)\n"
     "qh_s2 = rope(q[2], pos_s2, theta=1000000)\nKc_s2[pos_s2] = rope(k[2], pos_s2, theta=1000000)\nVc_s2[pos_s2] = v[2]\n"
     "o_s2 = attend(qh_s2, Kc_s2[..pos_s2], Vc_s2[..pos_s2], scale=0.125)\no = stack(o_s0, o_s1, o_s2)\n", 40, 0},
    {"batch_attend: 4 sequences, f16 caches, per-head norms, soft-cap, window, 8 query heads a key head of 128",
     BATCH_F16 BATCH_SEQ("0") BATCH_SEQ("1") BATCH_SEQ("2") BATCH_SEQ("3") "o = stack(o_s0, o_s1, o_s2, o_s3)\n", 24, 0},
    {"batch_attend: the f16 batch to 142 rows, window 130, a block a sequence (--sms 16): 32-row tiles a warp",
     BATCH_W130, 30, 16},
    /* 16 head blocks: 6 waves of 3 a multiprocessor in tiles of 32 keys, 4
     * of 4 in tiles of 16 (TC 2, lane_cuda.c's tc_tiles) */
    {"batch_attend: the f16 batch to 142 rows, window 130, a block a sequence (--sms 1): 16-row tiles a warp (TC 2)",
     BATCH_W130, 30, 1},
    /* the same without the norms and rope: caches equal bit for bit */
    {"batch_attend: the f16 batch to 142 rows appended as they come (--sms 16): 32-row tiles a warp",
     BATCH_P130, 30, 16},
    {"batch_attend: the f16 batch to 142 rows appended as they come (--sms 1): 16-row tiles a warp (TC 2)",
     BATCH_P130, 30, 1},
    {"batch_attend: 8 sequences to 290 rows, a block a sequence (--sms 1): several 32-row tiles a warp",
     "in q : f32[8,8,64]\nin k : f32[8,2,64]\nin v : f32[8,2,64]\n" BATCH_STATES("0") BATCH_STATES("1")
     BATCH_STATES("2") BATCH_STATES("3") BATCH_STATES("4") BATCH_STATES("5") BATCH_STATES("6") BATCH_STATES("7")
     "out o : f32[8,8,64]\n" BATCH_ROPE("0") BATCH_ROPE("1") BATCH_ROPE("2") BATCH_ROPE("3") BATCH_ROPE("4")
     BATCH_ROPE("5") BATCH_ROPE("6") BATCH_ROPE("7") "o = stack(o_s0, o_s1, o_s2, o_s3, o_s4, o_s5, o_s6, o_s7)\n",
     30, 1},
    {"batch_attend quantizing its stack for the o product (mmv under q8, q8x2): 4 sequences",
     BATCH_O, 24, 0},
    {"batch_attend without a rope: 2 sequences, appends a launch each, sinks, head 32",
     "in q : f32[2,4,32]\nin k : f32[2,2,32]\nin v : f32[2,2,32]\nin pos_s0 : i32\nin pos_s1 : i32\nweight sk : f32[4]\n"
     "state Kc_s0 : f32[128,2,32]\nstate Vc_s0 : f32[128,2,32]\nstate Kc_s1 : f32[128,2,32]\n"
     "state Vc_s1 : f32[128,2,32]\nout o : f32[2,4,32]\n"
     "Kc_s0[pos_s0] = k[0]\nVc_s0[pos_s0] = v[0]\no_s0 = attend(q[0], Kc_s0[..pos_s0], Vc_s0[..pos_s0], sk, scale=0.17)\n"
     "Kc_s1[pos_s1] = k[1]\nVc_s1[pos_s1] = v[1]\no_s1 = attend(q[1], Kc_s1[..pos_s1], Vc_s1[..pos_s1], sk, scale=0.17)\n"
     "o = stack(o_s0, o_s1)\n", 12, 0},
    {"embed q8 with a scale, embed f32",
     "in tok : i32\nweight e : q8[300,128]\nweight f : f32[50,96]\nout y : f32[128]\nout z : f32[96]\n"
     "y = e[tok] * 8\nz = f[tok]\n", 3, 0},
    {"elem: unary ops, broadcasts, a literal",
     "in x : f32[3,64]\nin b : f32[64]\nin c : f32[3,1]\nout y1 : f32[3,64]\nout y2 : f32[3,64]\nout y3 : f32[3,64]\n"
     "out y4 : f32[3,64]\nout y5 : f32[3,64]\nout y6 : f32[3,64]\nout y7 : f32[3,64]\n"
     "y1 = x + b\ny2 = x * c\ny3 = x - 2\ny4 = silu(x) / (b * b + 1)\ny5 = sigmoid(x) + tanh(x)\n"
     "y6 = clamp(x, min=-0.5, max=0.5) + softplus(x)\ny7 = softcap(exp(x), cap=2)\n", 2, 0},
    {"copy: last, slice, gather, a state's row",
     "size T\nin x : f32[T,48]\nin ix : i32[4]\nin pos : i32\nin w : f32[48]\nstate S : f32[16,48]\n"
     "out a : f32[48]\nout s : f32[T,16]\nout g : f32[4,48]\nout r : f32[48]\n"
     "S[pos] = w\na = last(x)\ns = slice(x, at=8, n=16)\ng = x[ix]\nr = S[pos]\n", 3, 0},
    {"sconv: gates in and out in place, a decode step",
     "in p : f32[192]\nweight w : f32[64,3]\nstate R : f32[2,64]\nout y : f32[64]\n"
     "y = slice(p, at=64, n=64) * conv(slice(p, at=0, n=64) * slice(p, at=128, n=64), R, w)\n", 6, 0},
    {"sconv: a chunk's rows, bias, silu, width 4",
     "size T\nin x : f32[T,96]\nweight w : f32[96,4]\nweight b : f32[96]\nstate R : f32[3,96]\nout y : f32[T,96]\n"
     "y = silu(conv(x, R, w, b))\n", 3, 0},
    {"sconv: a chunk's gates, quantizing epilogue, product",
     "size T\nin p : f32[T,384]\nin r : f32[T,64]\nweight w : f32[128,3]\nweight wo : q8[64,128]\n"
     "state R : f32[2,128]\nout y : f32[T,64]\n"
     "c = slice(p, at=0, n=128) * slice(p, at=256, n=128)\nz = slice(p, at=128, n=128) * conv(c, R, w)\n"
     "y = r + wo @ z\n", 3, 0},
    {"route softmax, norm; moe silu, 5 rows",
     "size T\nin x : f32[T,64]\nweight wr : f32[8,64]\nweight eg : q8[8,32,64]\nweight eu : q8[8,32,64]\n"
     "weight ed : q8[8,64,32]\nout rt : f32[T,8]\nout y : f32[T,64]\n"
     "rt = route(wr @ x, k=2, score=softmax, norm=1)\ny = moe(x, rt, eg, eu, ed, act=silu)\n", 2, 0},
    {"route sigmoid, groups, selection bias, scale; moe gelu_tanh",
     "in x : f32[128]\nin lg : f32[16]\nweight sb : f32[16]\nweight eg : q8[16,64,128]\nweight eu : q8[16,64,128]\n"
     "weight ed : q8[16,128,64]\nout rt : f32[16]\nout y : f32[128]\n"
     "rt = route(lg, sb, k=4, score=sigmoid, groups=4, topk_groups=2, norm=1, scale=2.5)\n"
     "y = moe(x, rt, eg, eu, ed, act=gelu_tanh)\n", 3, 0},
    {"route softmax of 160 in 8 groups of 20 (groups across warps), top 6 of 3 groups, 5 rows",
     "size T\nin lg : f32[T,160]\nout rt : f32[T,160]\nrt = route(lg, k=6, score=softmax, groups=8, topk_groups=3)\n", 2,
     0},
    {"route sigmoid of 256 in 8 groups, selection bias, top 8 of 4 groups, norm, scale",
     "in lg : f32[256]\nweight sb : f32[256]\nout rt : f32[256]\n"
     "rt = route(lg, sb, k=8, score=sigmoid, groups=8, topk_groups=4, norm=1, scale=2.5)\n", 2, 0},
    {"route a thread an expert: sigmoid of 384 in 8 groups, selection bias, top 8 of 4 groups, norm, scale, 3 rows",
     "size T\nin lg : f32[T,384]\nweight sb : f32[384]\nout rt : f32[T,384]\n"
     "rt = route(lg, sb, k=8, score=sigmoid, groups=8, topk_groups=4, norm=1, scale=2.5)\n", 2, 0},
    {"route a thread an expert: topk_softmax of 1024, top 32 (a warp's whole 32 candidates), 2 rows",
     "size T\nin lg : f32[T,1024]\nout rt : f32[T,1024]\nrt = route(lg, k=32, score=topk_softmax)\n", 2, 0},
    {"route a thread an expert: softmax of 300 (a warp part empty), top 3",
     "in lg : f32[300]\nout rt : f32[300]\nrt = route(lg, k=3, score=softmax)\n", 2, 0},
    {"route a thread an expert: softmax of 512, norm (SOFTK: the picks on the logits), ties (clamped), top 10, 3 rows",
     "size T\nin lg : f32[T,512]\nout rt : f32[T,512]\nrt = route(clamp(lg, max=0.2), k=10, score=softmax, norm=1)\n",
     2, 0},
    {"route a thread an expert: softmax of 288, norm (SOFTK), top 10 of 9 warps (no bound from the warps' bests)",
     "in lg : f32[288]\nout rt : f32[288]\nrt = route(lg, k=10, score=softmax, norm=1)\n", 2, 0},
    {"route a thread an expert: topk_softmax of 512, norm, ties (clamped), top 8, 2 rows",
     "size T\nin lg : f32[T,512]\nout rt : f32[T,512]\nrt = route(clamp(lg, max=0.5), k=8, score=topk_softmax, norm=1)\n",
     2, 0},
    {"route a thread an expert: sigmoid of 640, selection bias, top 6, scale",
     "in lg : f32[640]\nweight sb : f32[640]\nout rt : f32[640]\nrt = route(lg, sb, k=6, score=sigmoid, scale=2)\n", 2,
     0},
    {"route topk_softmax; moe gpt-oss, biases, f32 experts, the layer's residual in the down launch, 5 rows",
     "size T\nin x : f32[T,96]\nin r : f32[T,96]\nin lg : f32[T,4]\nweight eg : f32[4,48,96]\nweight eu : f32[4,48,96]\n"
     "weight ed : f32[4,96,48]\nweight egb : f32[4,48]\nweight eub : f32[4,48]\nweight edb : f32[4,96]\n"
     "out y : f32[T,96]\n"
     "y = r + moe(x, route(lg, k=2, score=topk_softmax), eg, eu, ed, egb, eub, edb, act=oai, alpha=1.702, limit=7)\n", 2, 0},
    {"route softmax of 512, top 10; moe q8 256x64, the layer's residual in the down launch",
     "in x : f32[256]\nin r : f32[256]\nin lg : f32[512]\nweight eg : q8[512,64,256]\nweight eu : q8[512,64,256]\n"
     "weight ed : q8[512,256,64]\nout y : f32[256]\n"
     "y = r + moe(x, route(lg, k=10, score=softmax, norm=1), eg, eu, ed, act=silu)\n", 2, 0},
    {"gemv NOUT: a norm read by three launches (a gated pair in parts, a q8 product, f32 rows) in the q8 one's "
     "prologue, written out for the others",
     "in x : f32[128]\nweight nw : f32[128]\nweight wa : q8[96,128]\nweight wb : q8[64,128]\n"
     "weight wc : q8[32,128]\nweight wr : f32[8,128]\nweight wg : q8[64,128]\nweight wu : q8[64,128]\n"
     "out ya : f32[96]\nout yb : f32[64]\nout yc : f32[32]\nout yr : f32[8]\nout yg : f32[64]\n"
     "n = rmsnorm(x, nw, eps=1e-06, offset=1)\nya = wa @ n\nyb = wb @ n\nyc = wc @ n\nyr = wr @ n\n"
     "yg = silu(wg @ n) * (wu @ n)\n", 2, 0},
    {"gemv PRE: Gemma 2's sandwich norms in the next products' prologue: after attention in the gated pair's (its "
     "sum written out: XR), after the feed-forward in q/k/v parts' (not written)",
     "in x : f32[256]\nin u : f32[256]\nweight npm : f32[256]\nweight nfn : f32[256]\nweight npf : f32[256]\n"
     "weight nm : f32[256]\nweight wg : q8[512,256]\nweight wu : q8[512,256]\nweight wd : q8[256,512]\n"
     "weight wq : q8[128,256]\nweight wk : q8[64,256]\nout yq : f32[128]\nout yk : f32[64]\n"
     "r = x + rmsnorm(u, npm, eps=1e-06, offset=1)\nfn = rmsnorm(r, nfn, eps=1e-06, offset=1)\n"
     "fa = gelu_tanh(wg @ fn) * (wu @ fn)\nh = r + rmsnorm(wd @ fa, npf, eps=1e-06, offset=1)\n"
     "xn = rmsnorm(h, nm, eps=1e-06, offset=1)\nyq = wq @ xn\nyk = wk @ xn\n", 2, 0},
    {"gemv PRE: the last sandwich norm before a soft-capped head's arg-max (its sum an output: XR), 3 rows "
     "(f32 weights: GEMV rows), the residual on the right, K 2304 (Gemma-2-2B's width)",
     "size T\nin x : f32[T,2304]\nin u : f32[T,2304]\nweight npf : f32[2304]\nweight nf : f32[2304]\n"
     "weight e : f32[1000,2304]\nout h : f32[T,2304]\nout logits : f32[T,1000]\nout next : i32[T]\n"
     "h = rmsnorm(u, npf, eps=1e-06) + x\nlogits = softcap(e @ rmsnorm(h, nf, eps=1e-06), cap=30)\n"
     "next = argmax(logits)\n", 2, 0},
    {"gemv XG: Qwen3-Next's attention output gate in the o product's prologue (q8, a residual), the gate a slice "
     "of the query's rows read in place",
     "in o : f32[16,256]\nin qg : f32[16,512]\nin r : f32[512]\nweight wo : q8[512,4096]\nout y : f32[512]\n"
     "g = slice(qg, at=256, n=256)\nog = o * sigmoid(g)\ny = r + wo @ (og ~ [4096])\n", 2, 0},
    {"gemv XG: sigmoid on the left, the gate a value of its own, f32 weights, 3 rows",
     "size T\nin o : f32[T,8,64]\nin g : f32[T,8,64]\nweight wo : f32[96,512]\nout y : f32[T,96]\n"
     "og = sigmoid(g) * o\ny = wo @ (og ~ [T,512])\n", 2, 0},
    {"gemv XG: a gate slice of runs of 24 (not whole 16-value segments: copied out first), q8 parts, 2 rows",
     "size T\nin o : f32[T,8,24]\nin qg : f32[T,8,48]\nweight wa : q8[64,192]\nweight wb : q8[32,192]\n"
     "out ya : f32[T,64]\nout yb : f32[T,32]\n"
     "g = slice(qg, at=8, n=24)\nog = o * sigmoid(g)\nya = wa @ (og ~ [T,192])\nyb = wb @ (og ~ [T,192])\n", 2, 0},
    {"gemv NOUT: DeepSeek-V2's router takes the mixture's norm (K 2048, 64 f32 rows), the experts read it",
     "in x : f32[2048]\nin r : f32[2048]\nweight nw : f32[2048]\nweight wr : f32[64,2048]\n"
     "weight eg : q8[64,64,2048]\nweight eu : q8[64,64,2048]\nweight ed : q8[64,2048,64]\nout y : f32[2048]\n"
     "n = rmsnorm(x, nw, eps=1e-06)\ny = r + moe(n, route(wr @ n, k=6, score=softmax), eg, eu, ed, act=silu)\n", 2, 0},
    {"moe q8 of 384 gate and up blocks (three a multiprocessor), 8 experts of 2048 over 256, top 6 (48 KB of hidden "
     "values staged under precise numerics), the layer's residual",
     "in x : f32[256]\nin r : f32[256]\nin lg : f32[8]\nweight eg : q8[8,2048,256]\nweight eu : q8[8,2048,256]\n"
     "weight ed : q8[8,256,2048]\nout y : f32[256]\n"
     "y = r + moe(x, route(lg, k=6, score=softmax), eg, eu, ed, act=silu)\n", 2, 0},
    {"moe whose activation the launch before makes (its gate and up stage it after the wait, no XEARLY)",
     "in h : f32[64]\nin lg : f32[8]\nweight nw : f32[64]\nweight eg : q8[8,32,64]\nweight eu : q8[8,32,64]\n"
     "weight ed : q8[8,64,32]\nout y : f32[64]\n"
     "rt = route(lg, k=2, score=softmax)\nx = rmsnorm(h, nw, eps=1e-06)\ny = moe(x, rt, eg, eu, ed, act=silu)\n", 3, 0},
    {"moe_shared: DeepSeek-V2's shared expert of two segments in the experts' launches, the layer's residual, 5 rows",
     "size T\nin x : f32[T,64]\nin r : f32[T,64]\nweight wr : f32[8,64]\nweight eg : q8[8,32,64]\n"
     "weight eu : q8[8,32,64]\nweight ed : q8[8,64,32]\nweight sg : q8[64,64]\nweight su : q8[64,64]\n"
     "weight sd : q8[64,64]\nout y : f32[T,64]\n"
     "rt = route(wr @ x, k=2, score=softmax)\nsa = silu(sg @ x) * (su @ x)\n"
     "y = r + moe(x, rt, eg, eu, ed, act=silu) + sd @ sa\n", 2, 0},
    {"moe_shared: Qwen3-Next's gated shared expert (sigmoid of a value a row) in the experts' launches, 512 of top 10",
     "in x : f32[256]\nin r : f32[256]\nweight wr : f32[512,256]\nweight wt : f32[1,256]\n"
     "weight eg : q8[512,64,256]\nweight eu : q8[512,64,256]\nweight ed : q8[512,256,64]\nweight sg : q8[64,256]\n"
     "weight su : q8[64,256]\nweight sd : q8[256,64]\nout y : f32[256]\n"
     "rt = route(wr @ x, k=10, score=softmax, norm=1)\nsa = silu(sg @ x) * (su @ x)\n"
     "y = r + moe(x, rt, eg, eu, ed, act=silu) + sigmoid(wt @ x) * (sd @ sa)\n", 2, 0},
    {"moe_shared: f32 experts and a gelu_tanh shared expert of three segments, no residual, 3 rows",
     "size T\nin x : f32[T,96]\nin lg : f32[T,8]\nweight eg : f32[8,48,96]\nweight eu : f32[8,48,96]\n"
     "weight ed : f32[8,96,48]\nweight sg : f32[144,96]\nweight su : f32[144,96]\nweight sd : f32[96,144]\n"
     "out y : f32[T,96]\n"
     "sa = gelu_tanh(sg @ x) * (su @ x)\n"
     "y = moe(x, route(lg, k=3, score=softmax), eg, eu, ed, act=gelu_tanh) + sd @ sa\n", 2, 0},
    {"latent absorbed, q8 halves; one rope launch: slices read in place, the concat's parts into their places",
     "in qr : f32[4,32]\nin ckv : f32[48]\nin pos : i32\nweight nk : f32[32]\nweight wk : q8[64,32]\n"
     "weight wv : q8[64,32]\nstate Kc : f32[64,48]\nout o : f32[4,16]\n"
     "qp = rope(slice(qr, at=16, n=16), pos, theta=10000)\n"
     "Kc[pos] = concat(rmsnorm(slice(ckv, at=0, n=32), nk, eps=1e-06), "
     "rope(slice(ckv, at=32, n=16) ~ [1,16], pos, theta=10000) ~ [16])\n"
     "o = latent(qr, qp, Kc[..pos], wk, wv, scale=0.17, lora=32)\n", 40, 0},
    {"rope of slices read in place, a chunk's latent rows appended part by part (a norm, a turned key); latent rows",
     "size T\nin qr : f32[T,4,32]\nin ckv : f32[T,48]\nin pos0 : i32\nweight nk : f32[32]\nweight wk : q8[64,32]\n"
     "weight wv : q8[64,32]\nstate Kc : f32[64,48]\nout o : f32[T,4,16]\n"
     "p = range(pos0, n=T)\nqp = rope(slice(qr, at=16, n=16), p, theta=10000)\n"
     "Kc[p] = concat(rmsnorm(slice(ckv, at=0, n=32), nk, eps=1e-06, offset=1), "
     "rope(slice(ckv, at=32, n=16) ~ [T,1,16], p, theta=10000) ~ [T,16])\n"
     "o = latent(qr, qp, Kc[..p], wk, wv, scale=0.17, lora=32)\n", 3, 0},
    {"DeepSeek-V2-Lite's attention whole: yarn rope of the query's slice, the latent row's norm of 512 and turned key "
     "appended in one launch, latent over 512",
     "in qr : f32[16,192]\nin ckv : f32[576]\nin pos : i32\nweight nk : f32[512]\nweight wk : q8[2048,512]\n"
     "weight wv : q8[2048,512]\nstate Kc : f32[96,576]\nout o : f32[16,128]\n"
     "qp = rope(slice(qr, at=128, n=64), pos, theta=10000, scaling=yarn, factor=40, orig=4096, beta_fast=32, "
     "beta_slow=1)\nKc[pos] = concat(rmsnorm(slice(ckv, at=0, n=512), nk, eps=1e-06), rope(slice(ckv, at=512, n=64) "
     "~ [1,64], pos, theta=10000, scaling=yarn, factor=40, orig=4096, beta_fast=32, beta_slow=1) ~ [64])\n"
     "o = latent(qr, qp, Kc[..pos], wk, wv, scale=0.1147214, lora=512)\n", 70, 0},
    {"latent absorbed over a cache of 2048 rows: up to 32 chunks of at least 64, the merge's loop (more chunks than "
     "a thread holds), two of them busy from 128 positions",
     "in qr : f32[4,32]\nin qp : f32[4,16]\nin c : f32[48]\nin pos : i32\nweight wk : q8[64,32]\n"
     "weight wv : q8[64,32]\nstate Kc : f32[2048,48]\nout o : f32[4,16]\n"
     "Kc[pos] = c\no = latent(qr, qp, Kc[..pos], wk, wv, scale=0.17, lora=32)\n", 140, 0},
    {"latent absorbed, DeepSeek-V2-Lite's heads, 16 of 128+64 over 512, two chunks busy from 128 positions",
     "in qr : f32[16,192]\nin qp : f32[16,64]\nin c : f32[576]\nin pos : i32\nweight wk : q8[2048,512]\n"
     "weight wv : q8[2048,512]\nstate Kc : f32[160,576]\nout o : f32[16,128]\n"
     "Kc[pos] = c\no = latent(qr, qp, Kc[..pos], wk, wv, scale=0.1147214, lora=512)\n", 140, 0},
    {"latent absorbed, f32 halves, lora 40, causal rows of a chunk; concat of rows",
     "size T\nin qr : f32[T,3,32]\nin qp : f32[T,3,8]\nin a : f32[T,40]\nin b : f32[T,8]\nin pos0 : i32\n"
     "weight wk : f32[72,40]\nweight wv : f32[60,40]\nstate Kc : f32[32,48]\nout o : f32[T,3,20]\n"
     "out ab : f32[T,48]\n"
     "p = range(pos0, n=T)\nab = concat(a, b)\nKc[p] = ab\no = latent(qr, qp, Kc[..p], wk, wv, scale=0.2, lora=40)\n", 3, 0},
    {"delta: a decode step, grouped heads, a value width of 24",
     "in q : f32[2,16]\nin k : f32[2,16]\nin v : f32[4,24]\nin g : f32[4]\nin b : f32[4]\n"
     "state S : f32[4,16,24]\nout y : f32[4,24]\n"
     "y = delta(l2norm(q, eps=1e-06), l2norm(k, eps=1e-06), v, -softplus(g), sigmoid(b), S)\n", 8, 0},
    {"delta: Qwen3-Next's decay and beta in the launch (-exp(A) softplus(a), sigmoid(b)), a decode step",
     "in q : f32[2,16]\nin k : f32[2,16]\nin v : f32[4,24]\nin a : f32[4]\nin b : f32[4]\nweight al : f32[4]\n"
     "state S : f32[4,16,24]\nout y : f32[4,24]\n"
     "y = delta(l2norm(q, eps=1e-06), l2norm(k, eps=1e-06), v, -exp(al) * softplus(a), sigmoid(b), S)\n", 8, 0},
    {"delta: the decay and beta in the launch over a chunk's rows (softplus first); beta as it is",
     "size T\nin q : f32[T,2,32]\nin k : f32[T,2,32]\nin v : f32[T,4,64]\nin a : f32[T,4]\nin b : f32[T,4]\n"
     "weight al : f32[4]\nstate S : f32[4,32,64]\nstate S2 : f32[4,32,64]\nout y : f32[T,4,64]\nout z : f32[T,4,64]\n"
     "y = delta(l2norm(q, eps=1e-06), l2norm(k, eps=1e-06), v, softplus(a) * -exp(al), sigmoid(b), S)\n"
     "z = delta(l2norm(q, eps=1e-06), l2norm(k, eps=1e-06), v, -exp(al) * softplus(a), b, S2)\n", 3, 0},
    {"delta: a chunk's rows in order, two column blocks",
     "size T\nin q : f32[T,2,32]\nin k : f32[T,2,32]\nin v : f32[T,4,64]\nin g : f32[T,4]\nin b : f32[T,4]\n"
     "state S : f32[4,32,64]\nout y : f32[T,4,64]\n"
     "y = delta(l2norm(q, eps=1e-06), l2norm(k, eps=1e-06), v, -softplus(g), sigmoid(b), S)\n", 3, 0},
    {"delta: Qwen3-Next's heads, 16 key heads of 128, 32 value heads of 128",
     "in q : f32[16,128]\nin k : f32[16,128]\nin v : f32[32,128]\nin g : f32[32]\nin b : f32[32]\n"
     "state S : f32[32,128,128]\nout y : f32[32,128]\n"
     "y = delta(l2norm(q, eps=1e-06) * 0.088, l2norm(k, eps=1e-06), v, -softplus(g), sigmoid(b), S)\n", 4, 0},
    {"delta: q, k and v read in place from one row, no norms; the chunk's q and k normed",
     "size T\nin p : f32[T,128]\nin g : f32[T,4]\nin b : f32[T,4]\nstate S : f32[4,16,16]\nstate S2 : f32[4,16,16]\n"
     "out y : f32[T,4,16]\nout z : f32[T,4,16]\n"
     "y = delta(slice(p, at=0, n=32) ~ [T,2,16], slice(p, at=32, n=32) ~ [T,2,16], slice(p, at=64, n=64) ~ [T,4,16], "
     "-softplus(g), sigmoid(b), S)\n"
     "z = delta(l2norm(slice(p, at=0, n=32) ~ [T,2,16], eps=1e-06) * 0.25, l2norm(slice(p, at=32, n=32) ~ [T,2,16], "
     "eps=1e-06), slice(p, at=64, n=64) ~ [T,4,16], -softplus(g), sigmoid(b), S2)\n", 3, 0},
    {"concat of one row, the product's parts writing their places (no copies), read by a convolution",
     "in x : f32[64]\nweight wa : q8[32,64]\nweight wb : q8[96,64]\nweight wz : q8[32,64]\nweight w : f32[128,3]\n"
     "state R : f32[2,128]\nout y : f32[128]\nout z : f32[32]\n"
     "y = conv(concat(wa @ x, wb @ x), R, w)\nz = wz @ x\n", 3, 0},
    {"concat: products of one activation, a chunk's rows",
     "size T\nin x : f32[T,64]\nweight wa : q8[32,64]\nweight wb : q8[96,64]\nin z : f32[T,8]\n"
     "out y : f32[T,136]\ny = concat(wa @ x, wb @ x, z)\n", 2, 0},
};

/* The tensor cores (mma.cu): rows past the default crossover, and rows
 * under it with --mma-rows 2; rows, units and K not whole tiles. Their
 * passes of up to 32 rows (mmv.cu): 3 to 127 rows whose activations arrive
 * quantized (after a norm, or a quantizing epilogue), at the defaults
 * (--mmi-rows 65 where mmi would take them). */
typedef struct MmaCase {
    Case c;
    int rows;            /* --mma-rows for its plan (0: the default) */
    int xr;              /* --xr-rows for its plan (0: the default) */
    int mmi;             /* --mmi-rows for its plan (0: the default) */
} MmaCase;

/* A norm, a gated SwiGLU pair quantizing its output, the down product and
 * a residual: T rows of width D, hidden width H. */
#define GATED_DOWN(T, D, H)                                                                                 \
    "in x : f32[" T "," D "]\nin r : f32[" T "," D "]\nweight nw : f32[" D "]\nweight wg : q8[" H "," D "]\n" \
    "weight wu : q8[" H "," D "]\nweight wd : q8[" D "," H "]\nout y : f32[" T "," D "]\n"                  \
    "a = rmsnorm(x, nw, eps=1e-06)\nh = silu(wg @ a) * (wu @ a)\ny = r + wd @ h\n"

/* A norm, then one product soft-capped: T rows of width K, N outputs. */
#define SOFTCAP_NORM(T, K, N)                                                                      \
    "in x : f32[" T "," K "]\nweight nw : f32[" K "]\nweight w : q8[" N "," K "]\nout y : f32[" T "," N \
    "]\na = rmsnorm(x, nw, eps=1e-05)\ny = softcap(w @ a, cap=30)\n"

/* A norm, then one product added to a residual: T rows of width K, N outputs. */
#define RES_NORM(T, K, N)                                                                                        \
    "in x : f32[" T "," K "]\nin r : f32[" T "," N "]\nweight nw : f32[" K "]\nweight w : q8[" N "," K "]\n" \
    "out y : f32[" T "," N "]\na = rmsnorm(x, nw, eps=1e-05)\ny = r + w @ a\n"

/* A norm, then three products of it in parts: the first with a bias, the
 * third added to a residual; T rows of width D. */
#define PARTS_NORM(T, D, N0, N1, N2)                                                                             \
    "in x : f32[" T "," D "]\nin r : f32[" T "," N2 "]\nweight nw : f32[" D "]\nweight w0 : q8[" N0 "," D "]\n" \
    "weight w1 : q8[" N1 "," D "]\nweight w2 : q8[" N2 "," D "]\nweight b0 : f32[" N0 "]\nout y0 : f32[" T "," N0 \
    "]\nout y1 : f32[" T "," N1 "]\nout y2 : f32[" T "," N2 "]\n"                                            \
    "a = rmsnorm(x, nw, eps=1e-05)\ny0 = w0 @ a + b0\ny1 = w1 @ a\ny2 = r + w2 @ a\n"

/* Rule norm_split: a residual's sum on mmv, its norm (weight, offset 1)
 * read by a gated pair quantizing for its down product, whose sum's norm
 * is read by a product with a residual, whose sum's norm (no weight) is
 * read by two parts with a bias: the launches between take one norm's
 * second half and the next one's first. T rows of width 512, hidden H. */
#define SPLIT_NORMS(T, H)                                                                                      \
    "in x : f32[" T ",512]\nin r : f32[" T ",512]\nweight n0 : f32[512]\nweight wo : q8[512,512]\n"          \
    "weight n1 : f32[512]\nweight wg : q8[" H ",512]\nweight wu : q8[" H ",512]\nweight wd : q8[512," H "]\n" \
    "weight n2 : f32[512]\nweight wv : q8[512,512]\nweight wh : q8[300,512]\nweight bh : f32[300]\n"          \
    "weight wk : q8[64,512]\nout h3 : f32[" T ",512]\nout y : f32[" T ",300]\nout k : f32[" T ",64]\n"         \
    "a0 = rmsnorm(x, n0, eps=1e-05)\nh = r + wo @ a0\na1 = rmsnorm(h, n1, eps=1e-05, offset=1)\n"           \
    "f = silu(wg @ a1) * (wu @ a1)\nh2 = h + wd @ f\nh3 = h2 + wv @ rmsnorm(h2, n2, eps=1e-06)\n"            \
    "a3 = rmsnorm(h3, eps=1e-05)\ny = wh @ a3 + bh\nk = wk @ a3\n"

static const MmaCase mma_cases[] = {
    {{"mma q8 96x64, 130 rows", "in x : f32[130,64]\nweight w : q8[96,64]\nout y : f32[130,96]\ny = w @ x\n", 2, 0}, 0, 0, 0},
    {{"mma q8 1000x4096, 70 rows", "in x : f32[70,4096]\nweight w : q8[1000,4096]\nout y : f32[70,1000]\ny = w @ x\n",
     2, 0}, 2, 0, 0},
    {{"mma q8 200x96, bias, residual, 67 rows",
     "in x : f32[67,96]\nin r : f32[67,200]\nweight w : q8[200,96]\nweight b : f32[200]\nout y : f32[67,200]\n"
     "y = r + (w @ x + b)\n", 2, 0}, 2, 0, 0},
    {{"mma gated output (sigmoid of a value a row), residual, 67 rows",
     "in x : f32[67,96]\nin r : f32[67,200]\nin s : f32[67,1]\nweight w : q8[200,96]\nout y : f32[67,200]\n"
     "y = r + sigmoid(s) * (w @ x)\n", 2, 0}, 2, 0, 0},
    {{"mma q8 40x32, 3 rows", "in x : f32[3,32]\nweight w : q8[40,32]\nout y : f32[3,40]\ny = w @ x\n", 2, 0}, 2, 0, 0},
    {{"mma parts, norm prologue, bias, residual, 33 rows",
     "in x : f32[33,256]\nin r : f32[33,128]\nweight nw : f32[256]\nweight w0 : q8[256,256]\nweight w1 : q8[64,256]\n"
     "weight w2 : q8[128,256]\nweight b0 : f32[256]\nout y0 : f32[33,256]\nout y1 : f32[33,64]\nout y2 : f32[33,128]\n"
     "a = rmsnorm(x, nw, eps=1e-05, offset=1)\ny0 = w0 @ a + b0\ny1 = w1 @ a\ny2 = r + w2 @ a\n", 2, 0}, 2, 0, 0},
    {{"mma gated silu, quantizing epilogue, down, T rows",
     "size T\n" GATED_DOWN("T", "512", "1536"), 2, 0}, 2, 0, 0},
    {{"mma gated gelu_tanh 80x2048, 100 rows",
     "in x : f32[100,2048]\nweight wg : q8[80,2048]\nweight wu : q8[80,2048]\nout h : f32[100,80]\n"
     "h = gelu_tanh(wg @ x) * (wu @ x)\n", 2, 0}, 2, 0, 0},
    {{"mma q8 512x4096, soft-cap, 129 rows",
     "in x : f32[129,4096]\nweight w : q8[512,4096]\nout y : f32[129,512]\ny = softcap(w @ x, cap=30)\n", 2, 0}, 0, 0, 0},
    /* mmh.cu (--mmh-rows 128, the default): activations quantized before
     * (a norm's epilogue, a gated pair's), K whole 256-value blocks; q8
     * alone (precise runs GEMVs, q8x2 mma.cu); rows, units and parts not
     * whole tiles, tiles of 128 and of 256 weight rows */
    {{"mmh after a norm 640x4096, 200 rows (--sms 8)",
     "in x : f32[200,4096]\nweight nw : f32[4096]\nweight w : q8[640,4096]\nout y : f32[200,640]\n"
     "a = rmsnorm(x, nw, eps=1e-05)\ny = w @ a\n", 2, 8}, 0, 0, 0},
    {{"mmh parts after a norm, bias, residual, 300 rows (tiles of 256)",
     PARTS_NORM("300", "256", "5120", "1024", "1000"), 2, 0}, 0, 0, 0},
    {{"mmh gated silu, quantizing epilogue, down, 257 rows",
     GATED_DOWN("257", "512", "1536"), 2, 0}, 0, 0, 0},
    {{"mmh gated gelu_tanh 6400x256 after a norm, 130 rows (tiles of 256)",
     "in x : f32[130,256]\nweight nw : f32[256]\nweight wg : q8[6400,256]\nweight wu : q8[6400,256]\n"
     "out h : f32[130,6400]\na = rmsnorm(x, nw, eps=1e-05)\nh = gelu_tanh(wg @ a) * (wu @ a)\n", 2, 0}, 0, 0, 0},
    {{"mmh soft-cap after a norm 512x4096, 129 rows (--sms 8)",
     SOFTCAP_NORM("129", "4096", "512"), 2, 8}, 0, 0, 0},
    /* a8h (--sms 8, 40: tiles that fill half of a smaller chip): the
     * activation written as f16 by its producer (a norm's epilogue above,
     * flash's, an int8 gated pair's) where mmh launches alone read it; a8
     * where an mma launch reads it too */
    {{"mmh a8h after flash, heads of 128, 130 rows (--sms 8)",
     "in q : f32[130,4,128]\nin k : f32[130,2,128]\nin v : f32[130,2,128]\nin pos0 : i32\nweight w : q8[256,512]\n"
     "state Kc : f32[512,2,128]\nstate Vc : f32[512,2,128]\nout y : f32[130,256]\n"
     "p = range(pos0, n=130)\nKc[p] = k\nVc[p] = v\no = attend(q, Kc[..p], Vc[..p], scale=0.088)\n"
     "y = w @ (o ~ [130,512])\n", 2, 8}, 0, 0, 0},
    {{"mmh a8h after an int8 gated pair (split K, quantizing), down with residual, 200 rows (--sms 40)",
     GATED_DOWN("200", "2048", "256"), 2, 40}, 0, 0, 0},
    {{"mmh a8 after a norm also read by mma: four parts, and a fifth product, 200 rows (--sms 8)",
     "in x : f32[200,512]\nweight nw : f32[512]\nweight w0 : q8[512,512]\nweight w1 : q8[512,512]\n"
     "weight w2 : q8[512,512]\nweight w3 : q8[512,512]\nweight w4 : q8[64,512]\nout y0 : f32[200,512]\n"
     "out y1 : f32[200,512]\nout y2 : f32[200,512]\nout y3 : f32[200,512]\nout y4 : f32[200,64]\n"
     "a = rmsnorm(x, nw, eps=1e-05)\ny0 = w0 @ a\ny1 = w1 @ a\ny2 = w2 @ a\ny3 = w3 @ a\ny4 = w4 @ a\n", 2, 8}, 0, 0, 0},
    /* mmh's splits of K (clusters of 2 and 4) where its tiles fill little
     * of a chip of --sms multiprocessors */
    {{"mmh K split over clusters of 4, after a norm, residual, 200 rows (--sms 24)",
     RES_NORM("200", "8192", "256"), 2, 24}, 0, 0, 0},
    {{"mmh gated pair, K split over clusters of 2, writing a8h for mmh's down, 150 rows (--sms 32)",
     GATED_DOWN("150", "4096", "512"), 2, 32}, 0, 0, 0},
    /* mmh's tail: the tiles of a last round that would leave half the chip
     * idle each as two blocks of half K, meeting through a scratch buffer */
    {{"mmh tail: 6 tiles on 4 multiprocessors, the last 2 halved, after a norm, residual, 300 rows (--sms 4)",
     RES_NORM("300", "4096", "256"), 3, 4}, 0, 0, 0},
    {{"mmh tail: a gated pair's 16 tiles on 12 multiprocessors, the last 4 halved, writing a8h for down, 200 rows "
      "(--sms 12)",
     GATED_DOWN("200", "4096", "512"), 3, 12}, 0, 0, 0},
    /* mmh's weights in registers (TM 256): x's rows whole tiles of 256
     * (or 2048 and more), its tiles filling more than half the chip */
    {{"mmh weights in registers: parts after a norm, bias, residual, 512 rows (--sms 8)",
     PARTS_NORM("512", "256", "512", "128", "384"), 2, 8}, 0, 0, 0},
    {{"mmh weights in registers: a gated pair writing a8h, down with residual, 768 rows (--sms 8)",
     GATED_DOWN("768", "512", "1024"), 2, 8}, 0, 0, 0},
    {{"mmh weights in registers and a tail: a gated pair's 16 tiles on 12 multiprocessors, 512 rows (--sms 12)",
     GATED_DOWN("512", "4096", "512"), 2, 12}, 0, 0, 0},
    {{"mmh weights in registers, rows past a whole tile: soft-cap after a norm 1024x1024, 2100 rows (--sms 8)",
     SOFTCAP_NORM("2100", "1024", "1024"), 1, 8}, 0, 0, 0},
    /* mmh with x resident (TM 64, --xr-rows 33): 33 to 64 rows of a8h, K
     * split over clusters whose blocks each hold their values of x, the
     * clusters taking the tiles in turn */
    {{"mmh x resident: parts after a norm, bias, residual, 40 rows (--sms 8)",
     PARTS_NORM("40", "1024", "512", "128", "384"), 2, 8}, 0, 33, 0},
    {{"mmh x resident: a gated pair of 17 tiles writing a8 for mmv's down (K 1056), 64 rows (--sms 12)",
     GATED_DOWN("64", "2048", "1056"), 2, 12}, 0, 33, 0},
    {{"mmh x resident: a gated pair writing a8h for its down, both split, 50 rows",
     GATED_DOWN("50", "4096", "1536"), 2, 0}, 0, 33, 0},
    {{"mmh x resident: soft-cap after a norm, K 8192 over clusters of 8, 33 rows (--sms 16)",
     SOFTCAP_NORM("33", "8192", "300"), 2, 16}, 0, 33, 0},
    {{"mmh x resident: K 14336 over clusters of 14 (not portable), residual after a norm, 40 rows",
     RES_NORM("40", "14336", "256"), 2, 0}, 0, 33, 0},
    {{"mmh x resident: the o product of a batch's attention, which writes its stack a8h, 4 sequences (--xr-rows 3)",
     BATCH_O, 24, 0}, 0, 3, 0},
    /* mmi (--mmi-rows): up to 64 rows of an a8 activation in int8 wgmma,
     * under q8 (q8x2 runs them on mmv, precise on GEMVs); the tiles'
     * stages shared by the blocks (stream-K), tiles whose K two or more
     * blocks took meeting in part in block order; x's rows a wgmma 16, 32
     * and 64; parts and units not whole tiles */
    {{"mmi parts after a norm, bias, residual, 40 rows (--sms 8)",
     PARTS_NORM("40", "1024", "512", "128", "384"), 2, 8}, 0, 0, 3},
    {{"mmi gated silu, quantizing epilogue, down, 64 rows",
     GATED_DOWN("64", "2048", "1536"), 2, 0}, 0, 0, 3},
    {{"mmi gated silu, hidden 1024, quantizing epilogue, down, 20 rows (--sms 12)",
     GATED_DOWN("20", "2048", "1024"), 2, 12}, 0, 0, 3},
    {{"mmi soft-cap after a norm 300x8192, 33 rows (--sms 16)",
     SOFTCAP_NORM("33", "8192", "300"), 2, 16}, 0, 0, 3},
    {{"mmi K 14336 a tile over 4 blocks, residual after a norm, 16 rows (--sms 8)",
     RES_NORM("16", "14336", "256"), 2, 8}, 0, 0, 3},
    {{"mmi gated output (sigmoid of a value a row) after a norm, residual, 5 rows",
     "in x : f32[5,256]\nin r : f32[5,100]\nin s : f32[5,1]\nweight nw : f32[256]\nweight w : q8[100,256]\n"
     "out y : f32[5,100]\na = rmsnorm(x, nw, eps=1e-05)\ny = r + sigmoid(s) * (w @ a)\n", 2, 0}, 0, 0, 3},
    {{"mmi the o product of a batch's attention, 4 sequences (--mmi-rows 3)", BATCH_O, 24, 0}, 0, 0, 3},
    {{"mmv parts after a norm, bias, residual, 5 rows",
     "in x : f32[5,256]\nin r : f32[5,100]\nweight nw : f32[256]\nweight w0 : q8[256,256]\nweight w1 : q8[64,256]\n"
     "weight w2 : q8[100,256]\nweight b0 : f32[256]\nout y0 : f32[5,256]\nout y1 : f32[5,64]\nout y2 : f32[5,100]\n"
     "a = rmsnorm(x, nw, eps=1e-05, offset=1)\ny0 = w0 @ a + b0\ny1 = w1 @ a\ny2 = r + w2 @ a\n", 2, 0}, 0, 0, 0},
    {{"mmv gated output (sigmoid of a value a row) after a norm, residual, 5 rows",
     "in x : f32[5,256]\nin r : f32[5,100]\nin s : f32[5,1]\nweight nw : f32[256]\nweight w : q8[100,256]\n"
     "out y : f32[5,100]\na = rmsnorm(x, nw, eps=1e-05)\ny = r + sigmoid(s) * (w @ a)\n", 2, 0}, 0, 0, 0},
    {{"mmv gated silu, quantizing epilogue, down, 17 rows",
     GATED_DOWN("17", "512", "1536"), 2, 0}, 0, 0, 0},
    {{"mmv gated gelu_tanh 80x2048, 40 rows (2 passes)",
     "in x : f32[40,2048]\nweight nw : f32[2048]\nweight wg : q8[80,2048]\nweight wu : q8[80,2048]\n"
     "out h : f32[40,80]\na = rmsnorm(x, nw, eps=1e-06)\nh = gelu_tanh(wg @ a) * (wu @ a)\n", 2, 0}, 0, 0, 65},
    {{"mmv q8 512x4096, soft-cap, 9 rows",
     "in x : f32[9,4096]\nweight nw : f32[4096]\nweight w : q8[512,4096]\nout y : f32[9,512]\n"
     "y = softcap(w @ rmsnorm(x, nw, eps=1e-06), cap=30)\n", 2, 0}, 0, 0, 0},
    {{"mmv q8 1000x96, 3 rows",
     "in x : f32[3,96]\nweight nw : f32[96]\nweight w : q8[1000,96]\nout y : f32[3,1000]\n"
     "y = w @ rmsnorm(x, nw, eps=1e-06)\n", 2, 0}, 0, 0, 0},
    {{"mmv gated silu 1056x2048, quantizing epilogue, then down, 2 rows (a pass of 8 rows, 2 of them x's)",
     GATED_DOWN("2", "2048", "1056"), 2, 0}, 0, 0, 0},
    {{"mmv q8 1000x4096, 100 rows (4 passes)",
     "in x : f32[100,4096]\nweight nw : f32[4096]\nweight w : q8[1000,4096]\nout y : f32[100,1000]\n"
     "y = w @ rmsnorm(x, nw, eps=1e-06)\n", 2, 0}, 0, 0, 0},
    {{"mmv q8 1150x4096, 16 rows, 4 or 5 tiles a block (--sms 8): the sums' two buffers in turn, the epilogue warps behind",
     "in x : f32[16,4096]\nweight nw : f32[4096]\nweight w : q8[1150,4096]\nout y : f32[16,1150]\n"
     "y = w @ rmsnorm(x, nw, eps=1e-06)\n", 3, 8}, 0, 0, 0},
    {{"mmv gated silu 1056x2048, quantizing epilogue, then down, 11 rows, 4 to 8 tiles a block (--sms 8)",
     GATED_DOWN("11", "2048", "1056"), 3, 8}, 0, 0, 0},
    {{"mmv q8 512x14336 residual after a norm, 16 rows (XS 2: each step's rows in its stage, NT 2)",
     RES_NORM("16", "14336", "512"), 2, 0}, 0, 0, 0},
    {{"mmv gated silu 1024x4096, quantizing epilogue, then down, 24 rows (XS 2, NT 3)",
     GATED_DOWN("24", "4096", "1024"), 2, 0}, 0, 0, 0},
    {{"mmv norm_split: two norms in the epilogues of the products around them, 16 rows",
     SPLIT_NORMS("16", "1024"), 2, 0}, 0, 0, 65},
    {{"mmv norm_split: two norms in the epilogues of the products around them, 3 rows",
     SPLIT_NORMS("3", "512"), 2, 0}, 0, 0, 65},
    {{"mmv norm_split: two norms in the epilogues of the products around them, 40 rows (2 or 3 passes, --sms 8)",
     SPLIT_NORMS("40", "1024"), 2, 8}, 0, 0, 65},
};

/* Latent attention over a chunk's rows expanded (rule latent_expanded):
 * their plans fused with --latent-rows 2 (the cases above with 65536, so
 * that theirs stay absorbed whatever the default). */
typedef struct LatentCase {
    Case c;
    int rows;            /* --latent-rows for its plan */
} LatentCase;

static const LatentCase latent_cases[] = {
    {{"latent expanded (a wide chunk): f32 halves, lora 40, causal rows; concat of rows",
     "size T\nin qr : f32[T,3,32]\nin qp : f32[T,3,8]\nin a : f32[T,40]\nin b : f32[T,8]\nin pos0 : i32\n"
     "weight wk : f32[72,40]\nweight wv : f32[60,40]\nstate Kc : f32[32,48]\nout o : f32[T,3,20]\n"
     "out ab : f32[T,48]\n"
     "p = range(pos0, n=T)\nab = concat(a, b)\nKc[p] = ab\no = latent(qr, qp, Kc[..p], wk, wv, scale=0.2, lora=40)\n", 3, 0}, 2},
    {{"latent expanded (a wide chunk), DeepSeek-V2-Lite's heads: 16 of 128+64 over 512, q8 halves, a cache of 200 "
     "rows (its last tile part full), chunks of 5 rows over 40 steps",
     "size T\nin qr : f32[T,16,192]\nin qp : f32[T,16,64]\nin c : f32[T,576]\nin pos0 : i32\n"
     "weight wk : q8[2048,512]\nweight wv : q8[2048,512]\nstate Kc : f32[200,576]\nout o : f32[T,16,128]\n"
     "p = range(pos0, n=T)\nKc[p] = c\no = latent(qr, qp, Kc[..p], wk, wv, scale=0.1147214, lora=512)\n", 40, 0}, 2},
};

static double rel_err(const float *a, const float *b, long n, int *finite)
{
    double d = 0, r = 0;
    *finite = 1;
    for (long i = 0; i < n; i++) {
        if (!isfinite(a[i]))
            *finite = 0;
        d += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        r += (double)b[i] * b[i];
    }
    return sqrt(d) / (r > 0 ? sqrt(r) : 1);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static int self_check;   /* KERNELS_LANE=cpu */

/* Each case and numerics its own draws (whatever ran before it: a
 * KERNELS_MATCH or a shard gives a case the inputs the whole run does). */
static void rng_seed(size_t i, int numerics)
{
    rng = 0x9e3779b97f4a7c15u ^ ((uint64_t)(i * 3 + (size_t)numerics + 1) * 0xbf58476d1ce4e5b9u);
    if (!rng)
        rng = 1;
}

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

/* Random inputs of program p for step s (positions from 1 up, a batch's
 * k-th position input 37 k further on, a chunk of 5 rows, tokens and
 * indices inside their tables), into env and the lane. */
static int inputs(Stream *st, Env *env, int s)
{
    const Prog *p = st->progs[0];
    const Graph *g = st->graphs[0];
    int npos = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_IN)
            continue;
        long n = 1, dims[LOGOS_MAXRANK];
        for (int k = 0; k < d->rank; k++) {
            dims[k] = d->ty.d[k].sym ? 5 : d->ty.d[k].n;
            n *= dims[k];
        }
        Buf *b = env_alloc(env, d->name, d->base == T_I32 ? T_I32 : T_F32, d->rank, dims);
        for (long j = 0; j < n; j++) {
            if (d->base != T_I32)
                b->f[j] = (float)(2 * uniform() - 1);
            else if (g->role[i] == R_POS)
                b->i[j] = s + 1 + 37 * npos;
            else if (g->role[i] == R_POS0)
                b->i[j] = 5 * s + 1;
            else
                b->i[j] = (int32_t)(uniform() * 4);   /* a token or a row of 5 */
        }
        npos += g->role[i] == R_POS;
        int r = st->lane->put(st->lane, 0, i, d->base == T_I32 ? (const void *)b->i : (const void *)b->f, n);
        if (r)
            return r;
    }
    return 0;
}

/* Each output of the step, GPU against CPU; the worst error, or -1 on a
 * value no launch wrote. */
static double compare(Stream *st, Env *env, Env *exact, double *qerr, int *tokens_ok)
{
    const Prog *p = st->progs[0];
    double worst = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_OUT)
            continue;
        Buf g;
        if (st->lane->fetch(st->lane, 0, i, &g))
            return -1;
        const Buf *c = env_get(env, d->name), *x = env_get(exact, d->name);
        if (d->base == T_I32) {
            *tokens_ok &= !memcmp(g.i, c->i, (size_t)c->n * 4);
            continue;
        }
        int fin;
        double e = rel_err(g.f, c->f, c->n, &fin);
        if (!fin)
            return -1;
        worst = e > worst ? e : worst;
        int f2;
        double q = rel_err(c->f, x->f, c->n, &f2);
        *qerr = q > *qerr ? q : *qerr;
    }
    return worst;
}

/* The f16 states after the steps, GPU against CPU: *flips counts the values
 * one f16 step apart, the same value but for an f32 rounding that fell on
 * either side of a half step (a rope's sine by the GPU's intrinsic against
 * the CPU's libm, a norm's sum in another order), or apart by no more than
 * 2^-16 of their row's largest (near zero f16's steps are finer than f32's
 * rounding of values of the row's size: run186 saw a few); the return
 * counts those further apart, or is -1 where a state cannot be fetched. */
static long cache_flips(Stream *st, Env *env, long *flips)
{
    const Prog *p = st->progs[0];
    long far = 0;
    *flips = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_STATE || d->base != T_F16)
            continue;
        Buf g;
        const Buf *c = env_get(env, d->name);
        if (!c || st->lane->fetch(st->lane, 0, i, &g) || g.n != c->n)
            return -1;
        long width = c->n / c->d[0];
        for (long r = 0; r < c->n; r += width) {
            float scale = 0;
            for (long j = r; j < r + width; j++)
                scale = fabsf(c->f[j]) > scale ? fabsf(c->f[j]) : scale;
            for (long j = r; j < r + width; j++) {
                uint16_t h = f32_to_f16(g.f[j]), w = f32_to_f16(c->f[j]);
                if (h == w || !((h | w) & 0x7fff))
                    continue;
                int step = (!((h ^ w) & 0x8000) && (h - w == 1 || w - h == 1)) ||
                           fabsf(g.f[j] - c->f[j]) <= scale * 0x1p-16f;
                step ? (*flips)++ : far++;
            }
        }
    }
    return far;
}

static int write_case(const Case *c, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "logos 1 kernel_test case\n%send\n", c->src);
    return fclose(f);
}

/* Whether a plan's outputs under q8 are flash.cu's alone: a flash launch,
 * and no activation held quantized. The twin computes flash.cu's
 * arithmetic (ref_flash.c: its f16 operands, tiles and online softmax), so
 * what is left is the order of the f32 sums inside the tensor cores (and
 * exp2f's last bits), some 1e-6: bound 1e-4. A quantized activation's int8
 * words are flipped by such a difference (flash's quantized output read by
 * a product): the numerics' bound, 2e-3. */
static int flash_alone(const Plan *pl)
{
    int flash = 0;
    for (int i = 0; i < pl->nls; i++)
        flash |= pl->ls[i].kernel == KN_FLASH;
    for (int b = 0; b < pl->nbufs; b++)
        if (pl->bufs[b].etype == ET_A8 || pl->bufs[b].etype == ET_A8X2 || pl->bufs[b].etype == ET_A8H)
            return 0;
    return flash;
}

/* A case named after a product kernel (its first word: mma, mmh, mmv or
 * mmi) holds under q8 only if its plan launches that kernel: so that a
 * changed default cannot move a case to another kernel unseen. NULL when
 * it does, or the case names none; else the kernel's name. */
static const char *kernel_missing(const Case *c, const Plan *pl, int numerics)
{
    static const char *named[] = {"mma", "mmh", "mmv", "mmi"};
    size_t n = strcspn(c->what, " ");
    for (size_t i = 0; numerics == NUM_Q8 && i < sizeof named / sizeof *named; i++)
        if (n == strlen(named[i]) && !strncmp(c->what, named[i], n)) {
            int k = kernel_lookup(named[i]);
            for (int j = 0; j < pl->nls; j++)
                if (pl->ls[j].kernel == k)
                    return NULL;
            return named[i];
        }
    return NULL;
}

/* What leads each case's line: under KERNELS_SHARD its place among all. */
static char lead[24];

/* One case under one numerics: 0 passed, 1 failed, 3 no GPU. */
static int run_case(const Case *c, int numerics, const char *path, int mma_rows, int latent_rows, int xr_rows,
                    int mmi_rows)
{
    Arena *a = arena_new();
    Stream st = {0};
    int s = stream_load(a, path, &st);
    FuseOpts fo;
    fuse_defaults(&fo, 512);
    fo.numerics = numerics;
    fo.fuse_quant = numerics != NUM_PRECISE;
    fo.mma_rows = mma_rows;
    fo.latent_rows = latent_rows;
    fo.xr_rows = xr_rows;
    fo.mmi_rows = mmi_rows;
    if (c->sms)
        fo.sms = c->sms;
    fo.preload_kb = strstr(c->what, "preloaded") ? 200 : 0;   /* rule preload's cases: --preload-kb 200 */
    if (!s && !(st.plans[0] = fuse(a, st.progs[0], st.graphs[0], &fo)))
        s = EXIT_INPUT;
    const char *missing = s ? NULL : kernel_missing(c, st.plans[0], numerics);
    if (!s)
        s = stream_phases(&st);
    Lane *lane = s ? NULL : self_check ? lane_cpu() : lane_cuda(&s);
    WeightsArg w = {.seed = 5, .synthetic = 1};
    if (lane)
        s = stream_open(&st, lane, &w);
    Env *cpu = env_new(), *exact = env_new();
    Weights *wc = NULL, *we = NULL;
    if (!s)
        s = weights_bind(&wc, st.progs[0], cpu, NULL, 5) || weights_bind(&we, st.progs[0], exact, NULL, 5);
    double worst = 0, qerr = 0;
    int ok = !s, tokens = 1;
    RefNum num = s ? (RefNum){0} : plan_ref_numerics(a, st.plans[0]);   /* the numerics' products, flash.cu's attention */
    for (int k = 0; ok && k < c->steps; k++) {
        ok = !inputs(&st, cpu, k) && !ref_run_numerics(st.progs[0], cpu, &num, -1) &&
             !st.lane->run(st.lane, 0);
        Env *copy = exact;   /* the same inputs for the f32 twin */
        for (int i = 0; ok && i < st.progs[0]->ndecls; i++)
            if (st.progs[0]->decls[i].kind == D_IN) {
                const Buf *b = env_get(cpu, st.progs[0]->decls[i].name);
                Buf *x = env_alloc(copy, st.progs[0]->decls[i].name, b->base, b->rank, b->d);
                memcpy(b->base == T_I32 ? (void *)x->i : (void *)x->f, b->base == T_I32 ? (void *)b->i : (void *)b->f,
                       (size_t)b->n * 4);
            }
        ok = ok && !ref_run(st.progs[0], exact);
        double e = ok ? compare(&st, cpu, exact, &qerr, &tokens) : -1;
        if (e < 0)
            ok = 0;
        worst = e > worst ? e : worst;
    }
    long flips = 0, far = ok ? cache_flips(&st, cpu, &flips) : 0;
    ok = ok && far >= 0;
    /* an f16 cache value a step apart moves what reads it by up to 2^-11 of
     * itself: under precise the bound is then the f16 step's, 1e-4, the
     * attention's own arithmetic held to 2e-5 by the cases whose caches
     * agree bit for bit */
    double bound = numerics == NUM_PRECISE ? (flips ? 1e-4 : 2e-5) : ok && flash_alone(st.plans[0]) ? 1e-4 : 2e-3;
    int pass = ok && far == 0 && worst <= bound && tokens && !missing;
    char fl[96] = "";
    if (flips || far)
        snprintf(fl, sizeof fl, "  f16 caches: %ld a step apart, %ld further", flips, far);
    printf("%s%-48s %-8s %s  gpu vs cpu %.2e (bound %.0e)  quantization alone %.2e%s%s\n", lead, c->what,
           numerics_name(numerics), pass ? "ok  " : "FAIL", worst, bound, qerr, fl,
           !ok ? "  (a run failed, or a value was never written)" : !tokens ? "  (arg-max differs)" : "");
    if (missing)
        printf("%s  its plan has no %s launch\n", lead, missing);
    weights_close(wc);
    weights_close(we);
    env_free(cpu);
    env_free(exact);
    stream_close(&st);
    arena_free(a);
    return s == EXIT_SYSTEM ? 3 : !pass;
}

/* Does what hold one of the parts of match between '|'? */
static int matches(const char *what, const char *match)
{
    for (const char *p = match;; p++) {
        const char *end = strchr(p, '|');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        for (const char *w = what; n && *w; w++)
            if (!strncmp(w, p, n))
                return 1;
        if (!end)
            return 0;
        p = end;
    }
}

int main(void)
{
    diag_tool = "gpu_kernels";
    const char *shard = getenv("KERNELS_SHARD");
    int sk = 0, sn = 1;
    char extra;
    if (shard && (sscanf(shard, "%d/%d%c", &sk, &sn, &extra) != 2 || sn < 1 || sk < 0 || sk >= sn)) {
        fprintf(stderr, "gpu_kernels: KERNELS_SHARD: '%s' is not K/N with 0 <= K < N\n", shard);
        return 2;
    }
    const char *lane = getenv("KERNELS_LANE");
    self_check = lane && !strcmp(lane, "cpu");
    const char *why = self_check ? NULL : cuda_why();
    if (why) {
        printf("gpu_kernels: skipped: %s\n", why);
        return 3;
    }
    setenv("LOGOS_POISON", "1", 1);
    if (self_check)   /* the CPU lane computes each plan as the twin does */
        setenv("LOGOS_REF_NUMERICS", "1", 1);
    char path[] = "/tmp/logos-kernel-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 3;
    close(fd);
    int pass = 0, fail = 0;
    const char *match = getenv("KERNELS_MATCH");
    size_t ncases = sizeof cases / sizeof cases[0], nmma = sizeof mma_cases / sizeof mma_cases[0],
           nlat = sizeof latent_cases / sizeof latent_cases[0];
    for (size_t i = 0; i < ncases + nmma + nlat; i++) {
        size_t m = i - ncases, l = i - ncases - nmma;
        const Case *c = i < ncases ? &cases[i] : m < nmma ? &mma_cases[m].c : &latent_cases[l].c;
        int mma_rows = i >= ncases && m < nmma ? mma_cases[m].rows : 0;
        int latent_rows = i >= ncases + nmma ? latent_cases[l].rows : 65536;
        int xr_rows = i >= ncases && m < nmma ? mma_cases[m].xr : 0;
        int mmi_rows = i >= ncases && m < nmma ? mma_cases[m].mmi : 0;
        if ((match && !matches(c->what, match)) || (int)(i % (size_t)sn) != sk)
            continue;
        if (write_case(c, path))
            return 3;
        for (int n = NUM_PRECISE; n <= NUM_Q8X2; n++) {
            if (shard)
                snprintf(lead, sizeof lead, "%05zu.%d\t", i, n);
            rng_seed(i, n);
            int r = run_case(c, n, path, mma_rows, latent_rows, xr_rows, mmi_rows);
            if (r == 3) {
                unlink(path);
                return 3;
            }
            r ? fail++ : pass++;
        }
    }
    unlink(path);
    printf("gpu_kernels: %d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
