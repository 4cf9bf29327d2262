/* ops.h — the LOGOS op table: one row per op of the language.
 *
 * Columns:
 *   id      enum suffix (OP_<id>)
 *   name    spelling in programs (infix and sugar ops have a descriptive name)
 *   amin    least number of tensor operands
 *   amax    most number of tensor operands (-1: any number >= amin)
 *   kind    K_ELEM elementwise, K_REDUCE reduction over the last axis,
 *           K_PRODUCT reads checkpoint rows, K_STATE owns a state operand,
 *           K_VIEW changes no value, K_ATTN attention over rows,
 *           K_COLL a collective across chips, K_SUGAR written by syntax
 *   fuse    F_EPI folds into a producer's epilogue, F_PROD a producer that
 *           takes an epilogue, F_NONE neither
 *   attrs   named attributes, "name:type" separated by spaces; types are
 *           f (number), i (integer), s (a word), z (integer or size name);
 *           a trailing '!' marks a required attribute
 *   state   index of the operand the op updates in place (-1: none)
 *   shape   the shape rule in check.c (shape_<shape>)
 *
 * The man page logos(7) documents every row; keep them in step.
 */
#ifndef X
#error "define X(id, name, amin, amax, kind, fuse, attrs, state, shape)"
#endif

/* sugar: written by syntax, never by name */
X(MATMUL,  "@",        2, 2,  K_PRODUCT, F_PROD, "",                          -1, matmul)
X(INDEX,   "[]",       2, 2,  K_SUGAR,   F_NONE, "",                          -1, index)
X(UPTO,    "[..]",     2, 2,  K_VIEW,    F_NONE, "",                          -1, upto)
X(RESHAPE, "~",        1, 1,  K_VIEW,    F_NONE, "",                          -1, reshape)
X(ADD,     "+",        2, 2,  K_ELEM,    F_EPI,  "",                          -1, bcast)
X(SUB,     "-",        2, 2,  K_ELEM,    F_EPI,  "",                          -1, bcast)
X(MUL,     "*",        2, 2,  K_ELEM,    F_EPI,  "",                          -1, bcast)
X(DIV,     "/",        2, 2,  K_ELEM,    F_EPI,  "",                          -1, bcast)
X(NEG,     "-x",       1, 1,  K_ELEM,    F_EPI,  "",                          -1, same)
/* activations */
X(SILU,    "silu",     1, 1,  K_ELEM,    F_EPI,  "",                          -1, same)
X(GELU,    "gelu_tanh",1, 1,  K_ELEM,    F_EPI,  "",                          -1, same)
X(SIGMOID, "sigmoid",  1, 1,  K_ELEM,    F_EPI,  "",                          -1, same)
X(SOFTPLUS,"softplus", 1, 1,  K_ELEM,    F_EPI,  "",                          -1, same)
X(EXP,     "exp",      1, 1,  K_ELEM,    F_EPI,  "",                          -1, same)
X(TANH,    "tanh",     1, 1,  K_ELEM,    F_EPI,  "",                          -1, same)
X(SOFTCAP, "softcap",  1, 1,  K_ELEM,    F_EPI,  "cap:f!",                    -1, same)
X(CLAMP,   "clamp",    1, 1,  K_ELEM,    F_EPI,  "min:f max:f",               -1, same)
/* norms over the last axis (per head when the last axis is a head) */
X(RMSNORM, "rmsnorm",  1, 2,  K_REDUCE,  F_PROD, "eps:f! offset:f",           -1, norm)
X(L2NORM,  "l2norm",   1, 1,  K_REDUCE,  F_PROD, "eps:f!",                    -1, norm)
/* rotary position embedding, NEOX pairing over the first rot values of a head */
X(ROPE,    "rope",     2, 2,  K_ELEM,    F_PROD,
  "theta:f! rot:i scaling:s factor:f low:f high:f orig:i beta_fast:f beta_slow:f truncate:i attn_factor:f",
  -1, rope)
/* attention */
X(ATTEND,  "attend",   3, 4,  K_ATTN,    F_NONE, "scale:f! softcap:f window:i", -1, attend)
X(LATENT,  "latent",   5, 5,  K_ATTN,    F_NONE, "scale:f! lora:i!",           -1, latent)
/* recurrent mixers: the operand at `state` is updated in place */
X(CONV,    "conv",     3, 4,  K_STATE,   F_PROD, "",                          1,  conv)
X(DELTA,   "delta",    6, 6,  K_STATE,   F_PROD, "",                          5,  delta)
/* mixture of experts */
X(ROUTE,   "route",    1, 2,  K_REDUCE,  F_NONE,
  "k:i! score:s! groups:i topk_groups:i norm:i scale:f",                       -1, route)
X(MOE,     "moe",      5, 8,  K_PRODUCT, F_NONE, "act:s! alpha:f limit:f",    -1, moe)
/* rows and shapes */
X(ARGMAX,  "argmax",   1, 1,  K_REDUCE,  F_NONE, "",                          -1, argmax)
X(STACK,   "stack",    1, -1, K_VIEW,    F_NONE, "",                          -1, stack)
X(CONCAT,  "concat",   1, -1, K_VIEW,    F_NONE, "",                          -1, concat)
X(SLICE,   "slice",    1, 1,  K_VIEW,    F_NONE, "at:i! n:i!",                -1, slice)
X(LAST,    "last",     1, 1,  K_VIEW,    F_NONE, "",                          -1, last)
X(RANGE,   "range",    1, 1,  K_VIEW,    F_NONE, "n:z!",                      -1, range)
/* collectives of a split program */
X(ALLREDUCE,"allreduce",1, 1, K_COLL,    F_NONE, "",                          -1, same)
X(ALLGATHER,"allgather",1, 1, K_COLL,    F_NONE, "ranks:i!",                  -1, allgather)
