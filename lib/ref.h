/* ref.h — what ref.c and ref_ops.c share: a run's values and state, and
 * the helpers the ops use (values, attributes, weight rows). */
#ifndef REF_H
#define REF_H

#include <setjmp.h>

#include "logos.h"

/* A value: concrete shape and data (in the run's arena or a view of the
 * env). Causal rows S[..pos] keep the rows each stacked row reads in ends. */
typedef struct Val {
    int base, rank;
    long d[LOGOS_MAXRANK];
    long n;
    float *f;
    int32_t *i;
    const int32_t *ends;
    long nends;
    int aliased;   /* a view of a state's rows, which later writes change */
} Val;

typedef struct Run {
    const Prog *p;
    Env *env;
    Arena *a;          /* every value of the run */
    Val *val;          /* each statement's value, once it has run */
    Buf **buf;         /* each declaration's buffer in env (NULL for sizes) */
    long *size;        /* each symbol's bound value (Prog.syms, 1-based); -1 unbound */
    RefNum num;        /* products quantized and attention by flash as a plan's launches (0: f32) */
    const RefColl *coll;   /* a split program's chips (tp.c), or NULL */
    int run;           /* the caller's count of runs (logos-run's steps), -1 where it keeps none */
    int trace_prog;    /* LOGOS_TRACE's program, with run its names (trace.c); -1: not tracing */
    jmp_buf fail;
} Run;

/* A weight read by logical rows (through its unpair permutation). */
typedef struct WRows {
    const Buf *b;
    long rows, cols;
    int hd, rot, at;   /* unpair(hd, rot, at) of its declaration */
    int h16;           /* a product mmh computes (RefNum): operands rounded to f16 */
} WRows;

Val val_new(Run *r, int base, int rank, const long *d);
long val_last(const Val *v);
/* ref_dot.c: a . b in f64 (eight sums in a fixed order); a Q8_0 row
 * (quants and f16 scales, whole 32-value blocks) dequantized to f32, and
 * its dot with x without the row written out (the same value). */
double dot(const float *a, const float *b, long n);
void dot_pair(const float *a, const float *b0, const float *b1, long n, double *out);
void dequant_q8(const int8_t *q, const uint16_t *sc, long n, float *out);
double dot_q8(const int8_t *q, const uint16_t *sc, const float *x, long n);
void dot_q8_pair(const int8_t *qa, const uint16_t *sa, const int8_t *qb, const uint16_t *sb, const float *x, long n,
                 double *out);
Buf *named_buf(Run *r, const Expr *e, int kind);
WRows wrows(Run *r, const Expr *e);
const float *wrow(const WRows *w, long r, float *tmp);
void product(Run *r, const WRows *w, long r0, long nout, const float *x, long T, float *y);
/* product() on the calling thread alone, its quantized input in scratch (2
 * T cols floats) rather than the run's arena: safe on several threads at
 * once (eval_moe's experts). */
void product_alone(const Run *r, const WRows *w, long r0, long nout, const float *x, long T, float *y,
                   float *scratch);
float *weight_values(Run *r, const WRows *w);
/* Threads for work multiply-adds (product(), eval_moe): one below 4 M. */
int ref_threads(double work);
_Noreturn void ref_fail(Run *r, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
long dim_of(Run *r, const Dim *d, int line, int col);
Val eval_unary(Run *r, const Expr *e);
Val eval_binary(Run *r, const Expr *e);
Val eval_norm(Run *r, const Expr *e);
Val eval_matmul(Run *r, const Expr *e);
Val eval_argmax(Run *r, const Expr *e);
Val eval_stack(Run *r, const Expr *e);
Val eval_concat(Run *r, const Expr *e);
Val eval_slice(Run *r, const Expr *e);
Val eval_last(Run *r, const Expr *e);
Val eval_range(Run *r, const Expr *e);
Val eval_allgather(Run *r, const Expr *e);
Val eval_rope(Run *r, const Expr *e);
Val eval_attend(Run *r, const Expr *e);
Val eval_latent(Run *r, const Expr *e);
Val eval_conv(Run *r, const Expr *e);
Val eval_delta(Run *r, const Expr *e);
Val eval_route(Run *r, const Expr *e);
Val eval_moe(Run *r, const Expr *e);
Val eval(Run *r, const Expr *e);
/* LOGOS_REF_TIES's fraction (ref_ties_read), 0 where unset. */
double ref_ties(void);

#endif
