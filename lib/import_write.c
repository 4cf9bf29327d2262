/* import_write.c — a checkpoint tensor streamed into a weight's files
 * (man5/logos-weights.5): a few megabytes of rows at a time (one head's rows
 * when they are put back in order, one expert when it is transposed, one
 * group when rows are taken from groups, one expert's tensor after another) are
 * read with pread, turned into f32 (f16 and bf16 widened, Q8_0 blocks
 * multiplied out) and written as f32 or quantized to Q8_0. A Q8_0 tensor
 * bound for a q8 weight is split into its quants and scales bit for bit
 * instead. Each file is written under a temporary name beside it and
 * renamed when whole. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "import.h"

enum { CHUNK = 4 << 20 };   /* values a plain chunk holds, about */

/* The files of one weight while they are written. */
typedef struct Out {
    const char *path[2], *tmp[2];
    FILE *f[2];
    int q8;
} Out;

static int pread_all(const Tensor *t, void *buf, size_t n, uint64_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = pread(t->fd, (char *)buf + done, n - done, (off_t)(off + done));
        if (r <= 0)
            return imp_sysfail(t->file, "cannot read tensor '%s': %s", t->name, r ? strerror(errno) : "end of file");
        done += (size_t)r;
    }
    return 0;
}

int read_f32(const Tensor *t, uint64_t at, long n, float *out)
{
    if (t->dtype == DT_Q8_0) {   /* at and n are whole blocks */
        unsigned char *b = malloc((size_t)n / 32 * 34);
        int st = b ? pread_all(t, b, (size_t)n / 32 * 34, t->off + at / 32 * 34) : imp_sysfail(t->file, "out of memory");
        for (long k = 0; !st && k < n / 32; k++) {
            uint16_t d = (uint16_t)(b[34 * k] | b[34 * k + 1] << 8);
            q8_dequantize((const int8_t *)b + 34 * k + 2, &d, 32, out + 32 * k);
        }
        free(b);
        return st;
    }
    long sz = dtype_size(t->dtype);
    if (t->dtype == DT_F32)
        return pread_all(t, out, (size_t)n * 4, t->off + at * 4);
    uint16_t *h = malloc((size_t)n * (size_t)sz);
    int st = h ? pread_all(t, h, (size_t)n * 2, t->off + at * 2) : imp_sysfail(t->file, "out of memory");
    for (long i = 0; !st && i < n; i++) {
        if (t->dtype == DT_F16) {
            out[i] = f16_to_f32(h[i]);
        } else {
            uint32_t bits = (uint32_t)h[i] << 16;
            memcpy(&out[i], &bits, 4);
        }
    }
    free(h);
    return st;
}

/* ---- the files ---- */

static int out_open(Out *o, const char *dir, const char *name, int q8)
{
    *o = (Out){.q8 = q8};
    const char *ext[2] = {q8 ? "q" : "f", "s"};
    for (int i = 0; i < 1 + q8; i++) {
        size_t n = strlen(dir) + strlen(name) + 48;
        char *p = malloc(n), *t = malloc(n);
        o->path[i] = p;
        o->tmp[i] = t;
        if (!p || !t)
            return imp_sysfail(dir, "out of memory");
        snprintf(p, n, "%s/%s.%s", dir, name, ext[i]);
        snprintf(t, n, "%s/.%s.%s.tmp%ld", dir, name, ext[i], (long)getpid());
        o->f[i] = fopen(t, "wb");
        if (!o->f[i])
            return imp_sysfail(p, "cannot create: %s", strerror(errno));
        tmp_keep(t);
    }
    return 0;
}

/* Closes the files; renames them when ok, else removes the temporaries. */
static int out_close(Out *o, int st)
{
    for (int i = 0; i < 2; i++) {
        if (o->f[i] && fclose(o->f[i]) != 0 && !st)
            st = imp_sysfail(o->tmp[i], "cannot write: %s", strerror(errno));
        if (o->tmp[i] && !st && rename(o->tmp[i], o->path[i]) != 0)
            st = imp_sysfail(o->path[i], "cannot rename into place: %s", strerror(errno));
    }
    for (int i = 0; i < 2; i++) {
        if (o->f[i])
            tmp_drop(o->tmp[i]);
        if (st && o->tmp[i])
            remove(o->tmp[i]);
        free((void *)o->path[i]);
        free((void *)o->tmp[i]);
    }
    return st;
}

static int out_put(Out *o, int i, const void *p, size_t n)
{
    if (fwrite(p, 1, n, o->f[i]) != n)
        return imp_sysfail(o->tmp[i], "cannot write: %s", strerror(errno));
    return 0;
}

/* n values (whole rows) as f32, or quantized. */
static int out_values(Out *o, const float *x, long n)
{
    if (!o->q8)
        return out_put(o, 0, x, (size_t)n * 4);
    int8_t *q = malloc((size_t)n);
    uint16_t *s = malloc((size_t)n / 32 * 2);
    int st = q && s ? 0 : imp_sysfail(o->tmp[0], "out of memory");
    if (!st) {
        q8_quantize(x, n, q, s);
        st = out_put(o, 0, q, (size_t)n);
    }
    if (!st)
        st = out_put(o, 1, s, (size_t)n / 32 * 2);
    free(q);
    free(s);
    return st;
}

/* ---- producing the rows ---- */

/* Q8_0 rows copied apart into quants and scales, reordered when asked. */
static int copy_q8(Out *o, const Source *src, long rows, long cols)
{
    const Tensor *t = src->t;
    long nb = cols / 32, rb = nb * 34, per = CHUNK / cols > 0 ? CHUNK / cols : 1;
    if (src->xform == X_UNPERM)
        per = src->hd;
    unsigned char *b = malloc((size_t)(rb * per));
    int8_t *q = malloc((size_t)(cols * per));
    uint16_t *s = malloc((size_t)(nb * per) * 2);
    int st = b && q && s ? 0 : imp_sysfail(t->file, "out of memory");
    for (long r0 = 0; !st && r0 < rows; r0 += per) {
        long nr = rows - r0 < per ? rows - r0 : per;
        st = pread_all(t, b, (size_t)(nr * rb), t->off + (uint64_t)(r0 * rb));
        for (long r = 0; !st && r < nr; r++) {
            long from = src->xform == X_UNPERM ? unpair_row((int)src->hd, (int)src->hd, 0, r) : r;
            for (long k = 0; k < nb; k++) {
                const unsigned char *blk = b + from * rb + k * 34;
                s[r * nb + k] = (uint16_t)(blk[0] | blk[1] << 8);
                memcpy(q + r * cols + k * 32, blk + 2, 32);
            }
        }
        if (!st)
            st = out_put(o, 0, q, (size_t)(nr * cols));
        if (!st)
            st = out_put(o, 1, s, (size_t)(nr * nb) * 2);
    }
    free(b);
    free(q);
    free(s);
    return st;
}

/* Whole rows in the file's order, or one head at a time put back. */
static int stream_rows(Out *o, const Source *src, long rows, long cols)
{
    long per = src->xform == X_UNPERM ? src->hd : CHUNK / cols > 0 ? CHUNK / cols : 1;
    float *x = malloc((size_t)(per * cols) * 4), *y = malloc((size_t)(per * cols) * 4);
    int st = x && y ? 0 : imp_sysfail(src->t->file, "out of memory");
    for (long r0 = 0; !st && r0 < rows; r0 += per) {
        long nr = rows - r0 < per ? rows - r0 : per;
        st = read_f32(src->t, (uint64_t)(r0 * cols), nr * cols, x);
        for (long r = 0; !st && src->xform == X_UNPERM && r < nr; r++)
            memcpy(y + r * cols, x + unpair_row((int)src->hd, (int)src->hd, 0, r) * cols, (size_t)cols * 4);
        if (!st)
            st = out_values(o, src->xform == X_UNPERM ? y : x, nr * cols);
    }
    free(x);
    free(y);
    return st;
}

/* Rows [at, at+n) of each group of a source's rows, one group at a time. */
static int stream_groups(Out *o, const Source *src, long rows, long cols)
{
    float *x = malloc((size_t)(src->n * cols) * 4);
    int st = x ? 0 : imp_sysfail(src->t->file, "out of memory");
    for (long g = 0; !st && g < rows / src->n; g++) {
        st = read_f32(src->t, (uint64_t)((g * src->group + src->at) * cols), src->n * cols, x);
        if (!st)
            st = out_values(o, x, src->n * cols);
    }
    free(x);
    return st;
}

/* Experts stacked from one tensor each, in order. */
static int stream_parts(Out *o, const Source *src, long rows, long cols)
{
    int st = 0;
    for (long e = 0; !st && e < src->nparts; e++) {
        Source part = {.t = src->parts[e], .xform = X_PLAIN};
        st = stream_rows(o, &part, rows / src->nparts, cols);
    }
    return st;
}

/* gpt-oss's experts, one at a time: d [E, n, m] from the source's [E, a, b]. */
static int stream_experts(Out *o, const Source *src, int rank, const long *d)
{
    long ne = d[0], per = 1;
    for (int k = 1; k < rank; k++)
        per *= d[k];
    long srcper = src->xform == X_HALF ? 2 * per : src->xform == X_GU_T ? 2 * per : per;
    float *x = malloc((size_t)srcper * 4), *y = malloc((size_t)per * 4);
    int st = x && y ? 0 : imp_sysfail(src->t->file, "out of memory");
    for (long e = 0; !st && e < ne; e++) {
        st = read_f32(src->t, (uint64_t)(e * srcper), srcper, x);
        if (src->xform == X_HALF) {
            for (long j = 0; j < per; j++)
                y[j] = x[2 * j + src->parity];
        } else {
            long n = d[1], m = d[2];   /* y [n, m]; X_GU_T: x [m, 2n]; X_T: x [m, n] */
            long stride = src->xform == X_GU_T ? 2 * n : n;
            for (long j = 0; j < n; j++)
                for (long i = 0; i < m; i++)
                    y[j * m + i] = x[i * stride + (src->xform == X_GU_T ? 2 * j + src->parity : j)];
        }
        if (!st)
            st = out_values(o, y, per);
    }
    free(x);
    free(y);
    return st;
}

int write_weight(const char *outdir, const char *name, int q8, int rank, const long *d, const Source *src)
{
    long n = 1;
    for (int k = 0; k < rank; k++)
        n *= d[k];
    long cols = d[rank - 1], rows = n / cols;
    if (rank == 1 && !q8) {   /* a vector's values are its rows (a bias put back in order) */
        rows = n;
        cols = 1;
    }
    Out o;
    int st = out_open(&o, outdir, name, q8);
    int inplace = src->xform == X_PLAIN || src->xform == X_UNPERM || src->xform == X_UNIT;
    if (!st && q8 && src->t->dtype == DT_Q8_0 && inplace)
        st = copy_q8(&o, src, rows, cols);
    else if (!st && inplace)
        st = stream_rows(&o, src, rows, cols);
    else if (!st && src->xform == X_ROWS)
        st = stream_groups(&o, src, rows, cols);
    else if (!st && src->xform == X_EXPERTS)
        st = stream_parts(&o, src, rows, cols);
    else if (!st)
        st = stream_experts(&o, src, rank, d);
    return out_close(&o, st);
}
