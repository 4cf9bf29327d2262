/* author.h — what author.c and author_mix.c share: the emitter of one
 * program (its declarations and statements, the form's kind of rows). */
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
    Names *declared;     /* "kind name" of each declaration written */
} Em;

typedef void PartFn(Em *e, int l, const char *res, const void *arg);

void em_decl(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void em(Em *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *num(Em *e, double v);
const char *nm(Em *e, const char *base, int l);
const char *shp(Em *e, const char *inner);
const char *weight(Em *e, const char *name, int wclass, const char *dims);
const char *wname(Em *e, const char *base, int l);
const char *vec(Em *e, const char *base, int l, long n);
const char *norm(Em *e, const char *x, const char *w, int offset);
const char *norm_eps(Em *e, const char *x, const char *w, int offset, double eps);
const char *rope_attrs(Em *e, const Rope *r, int width);
const char *posn(Em *e);
const char *state(Em *e, const char *base, int l, const char *dims);
void per_seq(Em *e, const char *out, int l, PartFn *fn, const void *arg);
const char *row(Em *e, const char *stacked);
const char *layer_input(Em *e, int l);

/* author_mix.c: a layer's mixer on the normed input xn; returns the
 * expression of its output (width dim). */
const char *mixer(Em *e, const LayerSpec *L, int l, const char *xn);

#endif
