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
 *   roles   each operand's role, a letter per operand (the last repeats):
 *           v a value, w a declared weight read as checkpoint rows,
 *           r the base whose rows are taken (a weight, a state or a value),
 *           s a state the op updates in place
 *   shape   the shape rule in check.c (shape_<shape>)
 *
 * The man page logos(7) documents every row; keep them in step.
 */
#ifndef X
#error "define X(id, name, amin, amax, kind, fuse, attrs, roles, shape)"
#endif

/* sugar: written by syntax, never by name */
X(MATMUL,  "@",        2, 2,  K_PRODUCT, F_PROD, "",                          "wv", matmul)
X(INDEX,   "[]",       2, 2,  K_SUGAR,   F_NONE, "",                          "rv", index)
X(UPTO,    "[..]",     2, 2,  K_VIEW,    F_NONE, "",                          "rv", upto)
X(RESHAPE, "~",        1, 1,  K_VIEW,    F_NONE, "",                          "v", reshape)
X(ADD,     "+",        2, 2,  K_ELEM,    F_EPI,  "",                          "v", bcast)
X(SUB,     "-",        2, 2,  K_ELEM,    F_EPI,  "",                          "v", bcast)
X(MUL,     "*",        2, 2,  K_ELEM,    F_EPI,  "",                          "v", bcast)
X(DIV,     "/",        2, 2,  K_ELEM,    F_EPI,  "",                          "v", bcast)
X(NEG,     "-x",       1, 1,  K_ELEM,    F_EPI,  "",                          "v", same)
/* activations */
X(SILU,    "silu",     1, 1,  K_ELEM,    F_EPI,  "",                          "v", same)
X(GELU,    "gelu_tanh",1, 1,  K_ELEM,    F_EPI,  "",                          "v", same)
X(SIGMOID, "sigmoid",  1, 1,  K_ELEM,    F_EPI,  "",                          "v", same)
X(SOFTPLUS,"softplus", 1, 1,  K_ELEM,    F_EPI,  "",                          "v", same)
X(EXP,     "exp",      1, 1,  K_ELEM,    F_EPI,  "",                          "v", same)
X(TANH,    "tanh",     1, 1,  K_ELEM,    F_EPI,  "",                          "v", same)
X(SOFTCAP, "softcap",  1, 1,  K_ELEM,    F_EPI,  "cap:f!",                    "v", same)
X(CLAMP,   "clamp",    1, 1,  K_ELEM,    F_EPI,  "min:f max:f",               "v", same)
/* norms over the last axis (per head when the last axis is a head) */
X(RMSNORM, "rmsnorm",  1, 2,  K_REDUCE,  F_PROD, "eps:f! offset:f",           "v", norm)
X(L2NORM,  "l2norm",   1, 1,  K_REDUCE,  F_PROD, "eps:f!",                    "v", norm)
/* rotary position embedding, NEOX pairing over the first rot values of a head */
X(ROPE,    "rope",     2, 2,  K_ELEM,    F_PROD,
  "theta:f! rot:i scaling:s factor:f low:f high:f orig:i beta_fast:f beta_slow:f truncate:i attn_factor:f",
  "v", rope)
/* attention */
X(ATTEND,  "attend",   3, 4,  K_ATTN,    F_NONE, "scale:f! softcap:f window:i", "v", attend)
X(LATENT,  "latent",   5, 5,  K_ATTN,    F_NONE, "scale:f! lora:i!",           "vvvww", latent)
/* recurrent mixers: the operand of role s is updated in place */
X(CONV,    "conv",     3, 4,  K_STATE,   F_PROD, "",                          "vswv", conv)
X(DELTA,   "delta",    6, 6,  K_STATE,   F_PROD, "",                          "vvvvvs", delta)
/* mixture of experts */
X(ROUTE,   "route",    1, 2,  K_REDUCE,  F_NONE,
  "k:i! score:s! groups:i topk_groups:i norm:i scale:f",                       "v", route)
X(MOE,     "moe",      5, 8,  K_PRODUCT, F_NONE, "act:s! alpha:f limit:f",    "vvwwwv", moe)
/* rows and shapes */
X(ARGMAX,  "argmax",   1, 1,  K_REDUCE,  F_NONE, "",                          "v", argmax)
X(STACK,   "stack",    1, -1, K_VIEW,    F_NONE, "",                          "v", stack)
X(CONCAT,  "concat",   1, -1, K_VIEW,    F_NONE, "",                          "v", concat)
X(SLICE,   "slice",    1, 1,  K_VIEW,    F_NONE, "at:i! n:i!",                "v", slice)
X(LAST,    "last",     1, 1,  K_VIEW,    F_NONE, "",                          "v", last)
X(RANGE,   "range",    1, 1,  K_VIEW,    F_NONE, "n:z!",                      "v", range)
/* collectives of a split program */
X(ALLREDUCE,"allreduce",1, 1, K_COLL,    F_NONE, "",                          "v", same)
X(ALLGATHER,"allgather",1, 1, K_COLL,    F_NONE, "ranks:i!",                  "v", allgather)
