/* fuse.h — what fuse.c (the rules: which nodes one launch covers) and
 * lane_cuda.c (the CUDA lane: buffers, constants, grids) share. */
#ifndef FUSE_H
#define FUSE_H

#include "logos.h"

enum GKind { GK_EMBED, GK_GEMV, GK_NORM, GK_ROPE, GK_ATTEND, GK_ARGMAX, GK_ELEM, GK_COPY, GK_RANGE, GK_CONV, GK_ROUTE,
             GK_MOE, GK_COLL,     /* GK_COLL: a collective of a split program, not a launch */
             GK_LATENT, GK_CONCAT, GK_DELTA };

/* The nodes one launch covers, and what its kernel needs to know of them. */
typedef struct Group {
    int kind;
    int *nodes, nn, cn;      /* the compute nodes it covers */
    int node;                /* its main node (the op that names the kernel) */
    /* GK_GEMV: products of one activation in parts */
    int parts, prod[4];      /* each part's product */
    int out[4];              /* the node whose value each part writes */
    int bias[4], res[4];     /* each part's bias weight and residual operand, or -1 */
    int gate;                /* 1 silu, 2 gelu_tanh: parts 0 and 1 are a gated pair */
    double cap;              /* the soft-cap of part 0, 0 when none */
    int argmax;              /* the arg-max of part 0, or -1 */
    int gs;                  /* part 0 times sigmoid of this value's row (a gated output), or -1; GK_MOE:
                                the shared expert's */
    int sh[3];               /* GK_MOE: the shared expert's gate, up and down products (moe_shared), or -1 */
    int cat;                 /* a concatenation of its parts' outputs they write in place, or -1 */
    int norm;                /* the rmsnorm taken as the prologue, or -1 */
    int nout;                /* 1: the norm is read by later launches too, and this one writes it (NOUT) */
    int pre;                 /* sandwich_prologue: the norm before the add `add` (its other operand resid)
                                whose sum the prologue's norm takes, or -1 */
    int xr;                  /* 1: that sum is read by later launches too, and this one writes it (XR) */
    int xg;                  /* the activation is x times sigmoid of this value (gate_prologue), or -1 */
    int sq, sqw;             /* norm_split: the norm whose first half this product's epilogue computes (its
                                quants, in sqw words a value, and sums of squares), or -1 */
    int rn;                  /* norm_split: the norm whose row scale this product applies, or -1 */
    int x;                   /* the activation read (under the norm when there is one) */
    /* GK_ROPE, and GK_ATTEND under rope_attend: the rotated queries and
     * keys, the appended values */
    int rparts, rope[3];     /* each part's rope node (-1: a value row written as it is) */
    int rx[3], rnorm[3];     /* its input (under its norm) and its per-head norm, or -1 */
    int rwrite[3];           /* the state row write it ends in, or -1 */
    int rya[3];              /* its place in that row when the row is a concat of parts, or -1 */
    int rflat[3];            /* 1: a concat's operand, a whole row (one head) */
    int rin_place;           /* 1: a part reads a slice in place or writes a concat's place */
    int pos;                 /* the positions node */
    /* GK_NORM MODE 1: the residual add and its other operand; MODE 2
     * (ngate): the product by silu of resid taken (the gated RMS norm) */
    int add, resid, ngate;
    double scale;            /* GK_EMBED: the literal it is multiplied by */
    int oq;                  /* the output quantized in the epilogue: 0, or words a value */
    /* GK_CONV: the input (the gate in's first operand), the gate in's
     * second and the gate out's other operand (-1 when none), each a value
     * or a slice the launch reads in place; the activation (1 silu) */
    int cx[3], act;
    /* GK_DELTA: q, k and v as read (a slice the launch reads in place, or a
     * value), the L2 norms of q and k it takes (-1 when none) and the
     * literal scales after them */
    int dx[3], dnorm[2];
    double dscale[2];
    /* and the decay and beta as read (g: softplus's operand under dga's
     * -exp(A) * softplus(.), A the weight dga; beta: sigmoid's operand
     * under dbf), the ops taken into the launch */
    int dgx[2], dga, dbf;
    /* GK_ATTEND under batch_attend: the attention groups of a batch's
     * sequences, row t of the launch group seq[t] (seq[0] this one; the
     * others cover nothing of their own, their nodes moved here) */
    int *seq, nseq;
    int wide;                /* GK_LATENT: a wide chunk's, run expanded (latent_expanded) */
} Group;

typedef struct Fz {
    Arena *a;
    const Prog *p;
    const Graph *g;
    const FuseOpts *o;
    int **cons, *ncons;      /* each node's consumers */
    int *group;              /* each node's group, or -1 */
    Group *gs; int ng, cg;
    int *order;              /* the groups in launch order */
    Plan *pl;
    int *buf;                /* each node's buffer in pl, or -1 */
    unsigned taken;          /* the rules taken, a bit each (enum Rule) */
    int bad;                 /* a launch its kernel cannot take (lane_cuda.c's finish): EXIT_INPUT, after a message */
} Fz;

enum Rule { RU_NORM_PROLOGUE, RU_GEMV_PARTS, RU_GATED_PAIR, RU_EPILOGUE, RU_RESIDUAL, RU_LM_ARGMAX,
            RU_ROPE_APPEND, RU_CHUNKS_APART, RU_FUSE_QUANT,
            RU_CONV_GATES, RU_MOE_KEPT, RU_ROPE_ATTEND,
            RU_LATENT_ABSORBED, RU_CONCAT_ROWS, RU_DELTA_STEPS, RU_BATCH_ATTEND, RU_MOE_SHARED, RU_GATE_PROLOGUE,
            RU_LATENT_EXPANDED, RU_SANDWICH_PROLOGUE, RU_PRELOAD, RU_EARLY_TRIGGER, RU_NORM_SPLIT, RU_NORM_PAIR,
            RU_COUNT };

/* fuse.c */
int fuse_groups(Fz *f);                          /* 0, or EXIT_INPUT after a message */
int view_root(const Graph *g, int node);         /* through reshapes */
int quant_out(const Fz *f, const Group *gr);     /* the node its quantizing epilogue writes */
int is_decl_of(const Fz *f, int k, int kind);   /* node k a declaration of that kind (D_WEIGHT...) */
void fuse_note(Fz *f, int node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void took(Fz *f, int rule);
/* lane_cuda.c */
int lane_emit(Fz *f);                            /* buffers and launches into f->pl */

#endif
