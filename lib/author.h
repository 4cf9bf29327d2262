/* author.h — what author.c, author_mix.c and author_tp.c share: the emitter
 * of one program (its declarations and statements, the form's kind of rows,
 * the chips a split form runs on). */
#ifndef AUTHOR_H
#define AUTHOR_H

#include "logos.h"

/* The rows a form's statements run on. */
enum { M_FWD, M_STEP, M_CHUNK, M_BATCH };

typedef struct Em {
    Arena *a;
    const Spec *s;
    FILE *decls, *body;
    int mode;
    int batch;           /* B for M_BATCH */
    int stacked;         /* names carry the b prefix, shapes the rows */
    int seq;             /* the sequence of a batch's per-sequence part, or -1 */
    const char *rows;    /* "T" or B */
    int chips;           /* a split form's chips (logos-placement(5)); 0: one chip, no split */
    StrMap *declared;    /* "kind name" of each declaration written */
} Em;

typedef void PartFn(Em *e, int l, const char *res, const void *arg);

void em_decl(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void em(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *num(Em *e, double v);
const char *nm(Em *e, const char *base, int l);
const char *shp(Em *e, const char *inner);
const char *weight(Em *e, const char *name, int wclass, const char *dims);
const char *weight_at(Em *e, const char *name, int wclass, const char *dims, const char *place);
const char *wname(Em *e, const char *base, int l);
const char *vec(Em *e, const char *base, int l, long n);
const char *vec_at(Em *e, const char *base, int l, long n, const char *place);
const char *norm(Em *e, const char *x, const char *w, int offset);
const char *norm_eps(Em *e, const char *x, const char *w, int offset, double eps);
const char *rope_attrs(Em *e, const Rope *r, int width);
const char *posn(Em *e);
const char *state(Em *e, const char *base, int l, const char *dims);
void per_seq(Em *e, const char *out, int l, PartFn *fn, const void *arg);
const char *row(Em *e, const char *stacked);
const char *layer_input(Em *e, int l);

/* author_tp.c: the split of a layer over e->chips chips (nothing when 0). */
typedef struct Split {
    long nh, nkv;                 /* a chip's query and key/value heads */
    const char *q, *kv, *cols;    /* the placements of the query rows, key and
                                   * value rows, and the output's columns */
} Split;
long tp_part(Em *e, long n);                        /* n / chips */
const char *tp_rows(Em *e, long parts);             /* " split(rows, P)" or "" */
const char *tp_cols(Em *e);                         /* " split(cols, N)" or "" */
const char *tp_close(Em *e, const char *y);         /* allreduce(y) where the split closes */
Split tp_heads(Em *e, const AttnSpec *A);
/* Each chip's part of every weight the programs declare, as author_tp's
 * manifest lines. */
void tp_manifest(Arena *a, Prog *const *progs, int n, int chips, FILE *out);

/* author_mix.c: a layer's mixer on the normed input xn; returns the
 * expression of its output (width dim). */
const char *mixer(Em *e, const LayerSpec *L, int l, const char *xn);

#endif
