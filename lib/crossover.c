/* crossover.c — the stacked rows from which a product leaves the GEMV for
 * the tensor cores (mmv's passes), from which it takes their tiles (mma),
 * and from which, up to 64, it runs in int8 wgmma (mmi) rather than mmv,
 * derived from a table of step times the bench measured: tests/gpu/crossover
 * prints one line a batch,
 *
 *   shape  numerics  rows  gemv_ms  mmv_ms  mma_ms  [mmi_ms]  [fastest]
 *
 * ("-" where a plan was not timed; a seventh word that is not a time or "-"
 * is the fastest's name; a first line naming the columns, blank lines and
 * '#' comments skipped). Of the lines of one numerics, a kernel's
 * crossover is the fewest measured rows at which it was faster than the
 * one it replaces (mmi: mmv, at most 64 rows) and stays faster at every
 * larger measured row count that timed both; none such: it is never taken
 * (65536). A table that times mmi nowhere leaves --mmi-rows at its
 * default (tables written before the column). */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

enum { XROWS = 256, NEVER = 65536 };

typedef struct XRow {
    long rows;
    double ms[4];   /* gemv, mmv, mma, mmi; < 0: not timed */
    int line, col;  /* where its rows are */
} XRow;

/* One field: a whitespace-delimited word of line s at *p, copied to w; its
 * column (from 1) into *col when col is not NULL. */
static int field(const char *s, size_t *p, char *w, size_t cap, int *col)
{
    while (s[*p] == ' ' || s[*p] == '\t')
        (*p)++;
    if (col)
        *col = (int)*p + 1;
    size_t n = 0;
    while (s[*p] && s[*p] != ' ' && s[*p] != '\t' && s[*p] != '\n') {
        if (n + 1 < cap)
            w[n++] = s[*p];
        (*p)++;
    }
    w[n] = 0;
    return n > 0;
}

/* A time in ms (a positive number) or "-" (-1); 0 or -1 on a bad word. */
static int ms_of(const char *w, double *out)
{
    if (!strcmp(w, "-")) {
        *out = -1.0;
        return 0;
    }
    char *end;
    double v = strtod(w, &end);
    if (*end || !(v > 0.0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

static const char *num_name(int numerics)
{
    return numerics == NUM_Q8 ? "q8" : numerics == NUM_Q8X2 ? "q8x2" : "precise";
}

#define COLUMNS "expected 'shape numerics rows gemv_ms mmv_ms mma_ms [mmi_ms] [fastest]' (tests/gpu/crossover's lines)"

/* Line ln (at text t) into r when it is of this numerics: 1 taken, 0 another
 * numerics, -1 after a located message. */
static int parse_line(const Src *src, int ln, const char *t, int numerics, XRow *r)
{
    char w[8][64];
    int col[9];
    size_t p = 0;
    int n = 0;
    while (n < 8 && field(t, &p, w[n], sizeof w[n], &col[n]))
        n++;
    char extra[64];
    r->ms[3] = -1.0;
    int mmi = n >= 7 && ms_of(w[6], &r->ms[3]) == 0;   /* else the seventh word names the fastest */
    if (n < 6 || (!mmi && n == 8) || field(t, &p, extra, sizeof extra, &col[8])) {
        diag_at(src, ln, n < 6 ? col[n] : n == 8 && !mmi ? col[7] : col[8], COLUMNS);
        return -1;
    }
    if (strcmp(w[1], "q8") && strcmp(w[1], "q8x2") && strcmp(w[1], "precise")) {
        diag_at(src, ln, col[1], "numerics '%s' is none of q8x2, q8 and precise", w[1]);
        return -1;
    }
    if (parse_long(w[2], 1, NEVER, &r->rows)) {
        diag_at(src, ln, col[2], "rows '%s' is not a whole number from 1 to %d", w[2], NEVER);
        return -1;
    }
    for (int k = 0; k < 3; k++)
        if (ms_of(w[3 + k], &r->ms[k])) {
            diag_at(src, ln, col[3 + k], "'%s' is neither a time in ms nor '-'", w[3 + k]);
            return -1;
        }
    if (r->ms[3] >= 0 && r->rows > 64) {
        diag_at(src, ln, col[6], "mmi timed at %ld rows: it runs at most 64", r->rows);
        return -1;
    }
    r->line = ln, r->col = col[2];
    return strcmp(w[1], num_name(numerics)) == 0;
}

static int by_rows(const void *a, const void *b)
{
    long x = ((const XRow *)a)->rows, y = ((const XRow *)b)->rows;
    return (x > y) - (x < y);
}

/* The fewest rows from which kernel k beats kernel over at every measured
 * row count that timed both, and the times there; rows `none` where no row
 * count timed both. */
static Cross crossover_of(const XRow *r, int n, int k, int over, int none)
{
    int from = -1, both = 0;
    for (int i = n - 1; i >= 0; i--) {
        if (r[i].ms[k] < 0 || r[i].ms[over] < 0)
            continue;
        both = 1;
        if (r[i].ms[k] >= r[i].ms[over])
            break;
        from = i;
    }
    if (from < 0)
        return (Cross){.rows = both ? NEVER : none};
    return (Cross){.rows = (int)r[from].rows, .timed = 1, .ms = {r[from].ms[k], r[from].ms[over]}};
}

int crossover_read(Arena *a, const char *path, int numerics, Crossover *c)
{
    Src *src = src_read(a, path);
    if (!src)
        return EXIT_INPUT;
    XRow *r = arena_alloc(a, XROWS * sizeof *r);
    int n = 0, ln = 0;
    for (const char *t = src->text; *t;) {
        const char *nl = strchr(t, '\n');
        ln++;
        size_t p = 0;
        char first[64];
        int blank = !field(t, &p, first, sizeof first, NULL);
        if (!blank && first[0] != '#' && !(ln == 1 && !strcmp(first, "shape"))) {
            if (n == XROWS) {
                diag_at(src, ln, 1, "more than %d lines of times", XROWS);
                return EXIT_INPUT;
            }
            int got = parse_line(src, ln, t, numerics, &r[n]);
            if (got < 0)
                return EXIT_INPUT;
            for (int i = 0; got && i < n; i++)
                if (r[i].rows == r[n].rows) {
                    diag_at(src, ln, r[n].col, "%ld rows under %s timed again (line %d)", r[n].rows, num_name(numerics),
                            r[i].line);
                    return EXIT_INPUT;
                }
            n += got;
        }
        t = nl ? nl + 1 : t + strlen(t);
    }
    if (n == 0 && numerics != NUM_PRECISE) {
        diag_file(src->name, "no times under %s (products of stacked rows read %s activations)", num_name(numerics),
                  num_name(numerics));
        return EXIT_INPUT;
    }
    qsort(r, (size_t)n, sizeof *r, by_rows);
    c->src = src->name;
    c->mmv = crossover_of(r, n, 1, 0, NEVER);   /* never, where nothing timed them */
    c->mma = crossover_of(r, n, 2, 1, NEVER);
    c->mmi = crossover_of(r, n, 3, 1, 0);       /* 0: the default stays */
    return 0;
}

/* One kernel's half of the -v line. */
static void say_one(FILE *f, const char *flag, const Cross *x, const char *who, const char *over)
{
    if (!x->timed)
        fprintf(f, "%s %d (%s never measured faster than %s to the last row count)", flag, x->rows, who, over);
    else
        fprintf(f, "%s %d (%d rows: %s %.3f ms, %s %.3f)", flag, x->rows, x->rows, who, x->ms[0], over, x->ms[1]);
}

void crossover_say(const Crossover *c)
{
    fprintf(stderr, "%s: %s: from the bench's times: ", diag_tool, c->src);
    say_one(stderr, "--mmv-rows", &c->mmv, "mmv", "the GEMV");
    fprintf(stderr, ", ");
    say_one(stderr, "--mma-rows", &c->mma, "mma", "mmv");
    if (c->mmi.rows) {
        fprintf(stderr, ", ");
        say_one(stderr, "--mmi-rows", &c->mmi, "mmi", "mmv");
    } else {
        fprintf(stderr, ", --mmi-rows %d (the default: no row count timed mmi)", MMI_ROWS);
    }
    fprintf(stderr, "\n");
}
