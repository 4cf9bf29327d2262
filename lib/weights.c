/* weights.c — a program's weights: read from their files (every file checked
 * against its declaration before any is mapped, then mmapped read-only),
 * synthesized deterministically from a seed, or written out as files
 * (man5/logos-weights.5 is the format). A split program's weight is one
 * chip's part of a whole (man5/logos-placement.5): its files hold the whole,
 * and a chip binds its rows in place or copies its columns. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "logos.h"

enum { PROGRESS_EVERY = 1 << 20 };   /* values between looks at the clock */

typedef struct Map {
    void *p;
    size_t len;
} Map;

struct Weights {
    Arena *a;        /* synthetic q8 quants and scales, bookkeeping */
    Map *maps;
    int nmaps, cmaps;
};

/* A weight to bind: its declaration and the concrete shape of its files
 * (the whole of a split weight), and the part a chip binds. */
typedef struct Want {
    const Decl *decl;
    int rank;
    long d[LOGOS_MAXRANK];
    long n;
    const char *type;   /* "q8[256,64]" for messages */
    int axis;           /* the part's axis (place_part), -1: the whole */
    long from, to;
} Want;

/* One file of a weight, while it is checked and mapped. */
typedef struct WFile {
    const char *path;
    long bytes;
    int fd;
    void *map;
} WFile;

/* ---- progress ---- */

/* A progress line on stderr (when diag_progress) for work that lasts more
 * than a second: after the first second one a second, rewritten in place on
 * a terminal, and a last one with the time when the work ends. */
typedef struct Progress {
    const char *what;     /* "synthesizing weights" */
    double total, done;   /* values */
    double t0, shown;     /* when it began; when a line was last shown (0: never) */
    int width;            /* of the last line, on a terminal */
} Progress;

static Progress progress_start(const char *what, double total)
{
    return (Progress){.what = what, .total = total, .t0 = mono_s()};
}

static void progress_line(Progress *p, double t, int end)
{
    char line[160];
    int n = end ? snprintf(line, sizeof line, "%s: %s: %.1f million values in %.1f s", diag_tool, p->what,
                           p->total / 1e6, t - p->t0)
                : snprintf(line, sizeof line, "%s: %s: %.0f%% of %.1f million values", diag_tool, p->what,
                           p->total > 0 ? 100 * p->done / p->total : 100, p->total / 1e6);
    if (isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r%-*s%s", p->width, line, end ? "\n" : "");
        p->width = n;
    } else {
        fprintf(stderr, "%s\n", line);
    }
    p->shown = t;
}

/* n more values done; a line when a second passed since the start and the
 * last line. */
static void progress_add(Progress *p, double n)
{
    p->done += n;
    if (!diag_progress)
        return;
    double t = mono_s();
    if (t - p->t0 >= 1 && t - p->shown >= 1)
        progress_line(p, t, 0);
}

/* The last line, when any was shown. */
static void progress_end(Progress *p)
{
    if (diag_progress && p->shown)
        progress_line(p, mono_s(), 1);
}

/* ---- synthetic values ---- */

/* A splitmix64 stream and the affine map of its uniforms to values. */
typedef struct Synth {
    uint64_t state;
    double add, mul;
} Synth;

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3u;
    return h;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Rank 1: 1 + 0.25(2u-1); rank >= 2: (2u-1)sqrt(3/cols), cols the last
 * dimension, so a product by it keeps unit variance. */
static Synth synth_init(const char *name, int rank, const long *d, uint64_t seed)
{
    Synth s = {seed ^ fnv1a(name), 1, 0.25};
    if (rank >= 2)
        s = (Synth){s.state, 0, sqrt(3.0 / (double)d[rank - 1])};
    return s;
}

void weights_synth_params(const char *name, int rank, const long *d, uint64_t seed, uint64_t *state, double *add,
                          double *mul)
{
    Synth s = synth_init(name, rank, d, seed);
    *state = s.state;
    *add = s.add;
    *mul = s.mul;
}

static float synth_next(Synth *s)
{
    double u = (double)(splitmix64(&s->state) >> 40) * 0x1p-24;
    return (float)(s->add + s->mul * (2 * u - 1));
}

void weights_synth(const char *name, int rank, const long *d, uint64_t seed, float *out)
{
    Synth s = synth_init(name, rank, d, seed);
    long n = 1;
    for (int i = 0; i < rank; i++)
        n *= d[i];
    for (long i = 0; i < n; i++)
        out[i] = synth_next(&s);
}

/* The next k (<= 32) synthetic values; quantized as one block when q != NULL. */
static void synth_block(Synth *sy, int k, float *x, int8_t *q, uint16_t *s)
{
    for (int j = 0; j < k; j++)
        x[j] = synth_next(sy);
    if (q)
        q8_quantize(x, Q8_BLOCK, q, s);
}

/* ---- declarations to shapes ---- */

static int plain_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
            return 0;
    return 1;
}

/* Reports msg at d (a program built in memory has no source to point into). */
static int bad_decl(const Prog *p, const Decl *d, const char *msg)
{
    if (p->src)
        diag_at(p->src, d->line, d->col, "%s", msg);
    else
        diag_file("<program>", "%s", msg);
    return 1;
}

/* The shape of weight declaration d's files and chip rank's part of it;
 * nonzero after reporting. */
static int want_of(Arena *a, const Prog *p, const Decl *d, int rank, Want *w)
{
    if (!plain_name(d->name))
        return bad_decl(p, d, arena_printf(a, "weight name '%s' would read outside the weights directory", d->name));
    *w = (Want){.decl = d, .rank = d->rank, .n = 1};
    place_whole(d, w->d);   /* the checker bounds every declaration and its whole */
    w->axis = place_part(d, p->chips, rank, &w->from, &w->to);
    char *type = arena_printf(a, "%s[", base_name(d->base));
    for (int i = 0; i < d->rank; i++) {
        w->n *= w->d[i];
        type = arena_printf(a, "%s%s%ld", type, i ? "," : "", w->d[i]);
    }
    w->type = arena_printf(a, "%s]", type);
    if (d->split)
        w->type = arena_printf(a, "%s, the whole of split(%s, %d)", w->type, d->split == SPLIT_ROWS ? "rows" : "cols",
                               d->parts);
    return 0;
}

/* The weights of p not yet in env (all of them when env is NULL), as chip
 * rank binds them; the count, or -1 after reporting. */
static int wants(Arena *a, const Prog *p, Env *env, int rank, Want **out)
{
    Want *w = arena_alloc(a, sizeof *w * (size_t)(p->ndecls + 1));
    int n = 0, bad = 0;
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_WEIGHT || (env && env_get(env, d->name)))
            continue;
        if (want_of(a, p, d, rank, &w[n]))
            bad = 1;
        else
            n++;
    }
    *out = w;
    return bad ? -1 : n;
}

/* ---- files ---- */

static const char *ext_why(char ext)
{
    return ext == 'f' ? "four bytes per value" : ext == 'q' ? "one int8 quant per value"
                                                            : "one f16 scale per 32 values";
}

static long ext_bytes(const Want *w, char ext)
{
    return ext == 'f' ? w->n * 4 : ext == 'q' ? w->n : w->n / Q8_BLOCK * 2;
}

/* The file extensions of a weight: "f" or "qs". */
static const char *exts(const Want *w)
{
    return w->decl->base == T_Q8 ? "qs" : "f";
}

/* Does the resolved path lie inside the resolved directory? */
static int inside(const char *real, const char *realdir)
{
    size_t n = strlen(realdir);
    if (n == 1)   /* "/" */
        return 1;
    return strncmp(real, realdir, n) == 0 && real[n] == '/';
}

/* Opens one file after checking where it resolves, its type and size: NULL,
 * or what is wrong with it (in a). */
static const char *open_checked(Arena *a, WFile *f, const Want *w, char ext, const char *realdir)
{
    char *real = realpath(f->path, NULL);
    if (!real) {
        if (errno == ENOENT)
            return arena_printf(a, "missing (expected %ld bytes for %s)", f->bytes, w->type);
        return arena_printf(a, "%s", strerror(errno));
    }
    int in = inside(real, realdir);
    f->fd = in ? open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
    int err = errno;
    free(real);
    if (!in)
        return "resolves outside the weights directory";
    struct stat st;
    if (f->fd < 0 || fstat(f->fd, &st) != 0)
        return arena_printf(a, "%s", strerror(f->fd < 0 ? err : errno));
    if (!S_ISREG(st.st_mode))
        return "not a regular file";
    if (st.st_size != (off_t)f->bytes)
        return arena_printf(a, "%lld bytes, expected %ld (%s: %s)", (long long)st.st_size, f->bytes, w->type,
                            ext_why(ext));
    return NULL;
}

/* The bad files named one by one; past them one line counts the rest (an
 * empty directory for a model of thousands of weights would otherwise
 * print thousands of lines). */
#define BAD_SHOWN 10

/* Checks every file of every weight, leaving each open; 0 or EXIT_INPUT. */
static int check_files(Arena *a, const Want *w, int nw, WFile *files, const char *dir, const char *realdir)
{
    int bad = 0, k = 0;
    for (int i = 0; i < nw; i++)
        for (const char *e = exts(&w[i]); *e; e++, k++) {
            files[k] = (WFile){arena_printf(a, "%s/%s.%c", dir, w[i].decl->name, *e), ext_bytes(&w[i], *e), -1, NULL};
            const char *why = open_checked(a, &files[k], &w[i], *e, realdir);
            if (why && ++bad <= BAD_SHOWN)
                diag_file(files[k].path, "%s", why);
        }
    if (bad > BAD_SHOWN)
        diag_file(dir, "%d more weight files missing or wrong: %d of the %d it must hold (logos-author --manifest "
                       "lists them)",
                  bad - BAD_SHOWN, bad, k);
    return bad ? EXIT_INPUT : 0;
}

static void keep_map(Weights *wt, void *p, size_t len)
{
    *VEC_PUSH(wt->a, wt->maps, wt->nmaps, wt->cmaps) = (Map){p, len};
}

/* Maps every checked file; 0 or EXIT_SYSTEM (what was mapped is kept in wt
 * for weights_close). */
static int map_files(Weights *wt, WFile *files, int nf)
{
    for (int k = 0; k < nf; k++) {
        void *p = mmap(NULL, (size_t)files[k].bytes, PROT_READ, MAP_PRIVATE, files[k].fd, 0);
        if (p == MAP_FAILED) {
            diag_file(files[k].path, "cannot map: %s", strerror(errno));
            return EXIT_SYSTEM;
        }
        keep_map(wt, p, (size_t)files[k].bytes);
        files[k].map = p;
    }
    return 0;
}

static Buf want_buf(const Want *w)
{
    Buf b = {.base = w->decl->base, .rank = w->rank, .n = w->n};
    memcpy(b.d, w->d, sizeof b.d);
    return b;
}

/* Copies columns [from, to) of each row of `rows` rows of `cols` elements
 * of `size` bytes. */
static void *copy_cols(Arena *a, const void *src, long rows, long cols, long from, long to, size_t size)
{
    size_t width = (size_t)(to - from) * size;
    unsigned char *dst = arena_alloc(a, (size_t)rows * width);
    for (long r = 0; r < rows; r++)
        memcpy(dst + (size_t)r * width, (const unsigned char *)src + ((size_t)(r * cols + from)) * size, width);
    return dst;
}

/* The part of the whole b a chip binds: rows [from, to) in place (a row is
 * every value under one index of the first axis), columns copied. */
static Buf part_of(Weights *wt, const Want *w, Buf b)
{
    if (w->axis < 0)
        return b;
    long cols = b.d[b.rank - 1], rows = b.n / cols, per = b.n / b.d[0];
    b.d[w->axis] = w->to - w->from;
    b.n = b.n / w->d[w->axis] * b.d[w->axis];
    if (w->axis == 0 && b.base == T_Q8) {
        b.q += w->from * per;
        b.s += w->from * per / Q8_BLOCK;
    } else if (w->axis == 0) {
        b.f += w->from * per;
    } else if (b.base == T_Q8) {
        b.q = copy_cols(wt->a, b.q, rows, cols, w->from, w->to, 1);
        b.s = copy_cols(wt->a, b.s, rows, cols / Q8_BLOCK, w->from / Q8_BLOCK, w->to / Q8_BLOCK, 2);
    } else {
        b.f = copy_cols(wt->a, b.f, rows, cols, w->from, w->to, 4);
    }
    return b;
}

static void bind_files(Weights *wt, Env *env, const Want *w, int nw, const WFile *files)
{
    for (int i = 0, k = 0; i < nw; i++) {
        Buf b = want_buf(&w[i]);
        if (b.base == T_Q8) {
            b.q = files[k++].map;
            b.s = files[k++].map;
        } else {
            b.f = files[k++].map;
        }
        env_bind(env, w[i].decl->name, part_of(wt, &w[i], b));
    }
}

static int bind_dir(Weights *wt, Env *env, const Want *w, int nw, const char *dir)
{
    char *realdir = realpath(dir, NULL);
    int dfd = realdir ? open(realdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd < 0) {
        diag_file(dir, "%s", strerror(errno));
        free(realdir);
        return EXIT_INPUT;
    }
    close(dfd);
    WFile *files = arena_alloc(wt->a, sizeof *files * 2 * (size_t)(nw + 1));
    int nf = 0;
    for (int i = 0; i < nw; i++)
        nf += (int)strlen(exts(&w[i]));
    int rc = check_files(wt->a, w, nw, files, dir, realdir);
    free(realdir);
    if (!rc)
        rc = map_files(wt, files, nf);
    for (int k = 0; k < nf; k++)
        if (files[k].fd >= 0)
            close(files[k].fd);
    if (!rc)
        bind_files(wt, env, w, nw, files);
    return rc;
}

/* The number of values of the nw weights. */
static double want_values(const Want *w, int nw)
{
    double n = 0;
    for (int i = 0; i < nw; i++)
        n += (double)w[i].n;
    return n;
}

/* Synthetic values of the whole, the chip's part bound. */
/* One weight's synthetic values, into memory made for them. */
typedef struct SynJob {
    const Want *w;
    uint64_t seed;
    float *f;
    int8_t *q;
    uint16_t *s;
} SynJob;

typedef struct SynPool {
    SynJob *jobs;
    int n, next;
    double done;              /* values made so far, for the progress line */
    pthread_mutex_t mu;
} SynPool;

static void synth_job(const SynJob *j)
{
    const Want *w = j->w;
    if (j->f) {
        weights_synth(w->decl->name, w->rank, w->d, j->seed, j->f);
        return;
    }
    Synth sy = synth_init(w->decl->name, w->rank, w->d, j->seed);
    float x[Q8_BLOCK];
    for (long k = 0; k < w->n; k += Q8_BLOCK)
        synth_block(&sy, Q8_BLOCK, x, j->q + k, j->s + k / Q8_BLOCK);
}

/* Takes jobs until none is left; the caller's thread also reports progress. */
static void *synth_worker(void *arg)
{
    SynPool *sp = arg;
    for (;;) {
        pthread_mutex_lock(&sp->mu);
        int i = sp->next < sp->n ? sp->next++ : -1;
        pthread_mutex_unlock(&sp->mu);
        if (i < 0)
            return NULL;
        synth_job(&sp->jobs[i]);
        pthread_mutex_lock(&sp->mu);
        sp->done += (double)sp->jobs[i].w->n;
        pthread_mutex_unlock(&sp->mu);
    }
}

/* Every weight's memory made first (the env and the arena are not shared
 * across threads), then the values made on the machine's processors, a
 * weight a thread at a time: the same values on any number of threads. */
static void bind_synthetic(Weights *wt, Env *env, const Want *w, int nw, uint64_t seed)
{
    Progress pg = progress_start("synthesizing weights", want_values(w, nw));
    SynPool sp = {.jobs = arena_alloc(wt->a, sizeof *sp.jobs * (size_t)(nw + 1)), .n = nw,
                  .mu = PTHREAD_MUTEX_INITIALIZER};
    for (int i = 0; i < nw; i++) {
        SynJob *j = &sp.jobs[i];
        *j = (SynJob){.w = &w[i], .seed = seed};
        if (w[i].decl->base != T_Q8 && w[i].axis < 0)
            j->f = env_alloc(env, w[i].decl->name, T_F32, w[i].rank, w[i].d)->f;
        else if (w[i].decl->base != T_Q8)
            j->f = arena_alloc(wt->a, (size_t)w[i].n * sizeof *j->f);
        else {
            j->q = arena_alloc(wt->a, (size_t)w[i].n);
            j->s = arena_alloc(wt->a, (size_t)(w[i].n / Q8_BLOCK) * sizeof *j->s);
        }
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = cpus > 1 ? (int)(cpus < 32 ? cpus : 32) : 1, started = 0;
    pthread_t th[32];
    for (int t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, synth_worker, &sp) == 0)
            started++;
    double shown = 0;
    for (;;) {   /* this thread works too, and says how far all have come */
        pthread_mutex_lock(&sp.mu);
        int i = sp.next < sp.n ? sp.next++ : -1;
        double done = sp.done;
        pthread_mutex_unlock(&sp.mu);
        progress_add(&pg, done - shown);
        shown = done;
        if (i < 0)
            break;
        synth_job(&sp.jobs[i]);
        pthread_mutex_lock(&sp.mu);
        sp.done += (double)sp.jobs[i].w->n;
        pthread_mutex_unlock(&sp.mu);
    }
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
    progress_add(&pg, sp.done - shown);
    for (int i = 0; i < nw; i++) {
        const SynJob *j = &sp.jobs[i];
        if (j->f && w[i].axis < 0 && w[i].decl->base != T_Q8)
            continue;   /* allocated in env, filled in place */
        Buf b = want_buf(&w[i]);
        if (j->f)
            b.f = j->f;
        b.q = j->q;
        b.s = j->s;
        env_bind(env, w[i].decl->name, part_of(wt, &w[i], b));
    }
    progress_end(&pg);
}

int weights_bind(Weights **wp, const Prog *p, Env *env, const char *dir, uint64_t seed)
{
    *wp = NULL;
    if (p->chips > 1) {
        diag_file(p->src ? p->src->name : "<program>", "the program is split over %d chips, which run together "
                  "(logos-placement(5)): one chip runs it at --tp 1", p->chips);
        return EXIT_INPUT;
    }
    return weights_bind_chip(wp, p, env, dir, seed, 0);
}

int weights_bind_chip(Weights **wp, const Prog *p, Env *env, const char *dir, uint64_t seed, int rank)
{
    ASSERT(rank >= 0 && rank < (p->chips ? p->chips : 1));
    Weights *wt = calloc(1, sizeof *wt);
    if (!wt) {
        diag("out of memory");
        return EXIT_SYSTEM;
    }
    wt->a = arena_new();
    Want *w;
    int nw = wants(wt->a, p, env, rank, &w), rc = nw < 0 ? EXIT_INPUT : 0;
    if (!rc && dir)
        rc = bind_dir(wt, env, w, nw, dir);
    else if (!rc)
        bind_synthetic(wt, env, w, nw, seed);
    if (rc) {
        weights_close(wt);
        wt = NULL;
    }
    *wp = wt;
    return rc;
}

void weights_close(Weights *w)
{
    if (!w)
        return;
    for (int i = 0; i < w->nmaps; i++)
        munmap(w->maps[i].p, w->maps[i].len);
    arena_free(w->a);
    free(w);
}

/* ---- writing synthetic weights ---- */

static size_t put_le(unsigned char *b, uint32_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return (size_t)bytes;
}

/* Writes one file's bytes (ext 'f', 'q' or 's') of weight w to f; its
 * values count in pg once, with the 'f' or 'q' file. */
static int emit(FILE *f, const Want *w, char ext, uint64_t seed, Progress *pg)
{
    Synth sy = synth_init(w->decl->name, w->rank, w->d, seed);
    float x[Q8_BLOCK];
    int8_t q[Q8_BLOCK];
    uint16_t s;
    unsigned char buf[4 * Q8_BLOCK];
    for (long i = 0; i < w->n; i += Q8_BLOCK) {
        int k = w->n - i < Q8_BLOCK ? (int)(w->n - i) : Q8_BLOCK;
        synth_block(&sy, k, x, ext == 'f' ? NULL : q, &s);
        size_t len = 0;
        for (int j = 0; ext == 'f' && j < k; j++) {
            uint32_t bits;
            memcpy(&bits, &x[j], sizeof bits);
            len += put_le(buf + len, bits, 4);
        }
        for (int j = 0; ext == 'q' && j < k; j++)
            buf[len++] = (unsigned char)q[j];
        if (ext == 's')
            len = put_le(buf, s, 2);
        if (fwrite(buf, 1, len, f) != len)
            return -1;
        if (ext != 's' && (i + k) % PROGRESS_EVERY == 0)
            progress_add(pg, PROGRESS_EVERY);
    }
    if (ext != 's')
        progress_add(pg, (double)(w->n % PROGRESS_EVERY));
    return 0;
}

/* Writes DIR/NAME.ext through a temporary renamed over it; 0 or EXIT_SYSTEM. */
static int write_one(Arena *a, const Want *w, char ext, const char *dir, uint64_t seed, Progress *pg)
{
    const char *name = w->decl->name;
    char *path = arena_printf(a, "%s/%s.%c", dir, name, ext);
    char *tmp = arena_printf(a, "%s/.%s.%c.tmp%ld", dir, name, ext, (long)getpid());
    FILE *f = fopen(tmp, "wbx");
    if (!f) {
        diag_file(path, "cannot write: %s", strerror(errno));
        return EXIT_SYSTEM;
    }
    tmp_keep(tmp);
    int bad = emit(f, w, ext, seed, pg);
    int err = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (!bad && rename(tmp, path) != 0) {
        bad = 1;
        err = errno;
    }
    tmp_drop(tmp);
    if (bad) {
        diag_file(path, "cannot write: %s", strerror(err));
        unlink(tmp);
        return EXIT_SYSTEM;
    }
    return 0;
}

int weights_write_synthetic(const Prog *p, const char *dir, uint64_t seed)
{
    struct stat st;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        diag_file(dir, "%s", strerror(errno));
        return EXIT_SYSTEM;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        diag_file(dir, "not a directory: --write-weights writes a file a weight into one");
        return EXIT_SYSTEM;
    }
    Arena *a = arena_new();
    Want *w;
    int nw = wants(a, p, NULL, 0, &w), rc = nw < 0 ? EXIT_INPUT : 0;
    Progress pg = progress_start("writing weights", want_values(w, nw > 0 ? nw : 0));
    for (int i = 0; i < nw && !rc; i++)
        for (const char *e = exts(&w[i]); *e && !rc; e++)
            rc = write_one(a, &w[i], *e, dir, seed, &pg);
    if (!rc)
        progress_end(&pg);
    arena_free(a);
    return rc;
}

int weights_seed_opt(void *field, const char *flag, const char *value)
{
    WeightsArg *w = field;
    long v;
    if (arg_long(flag, value, 0, 2147483647L, &v))
        return EXIT_USAGE;
    w->seed = (uint64_t)v;
    w->synthetic = 1;
    return 0;
}

int weights_given(const WeightsArg *w)
{
    if (!!w->dir + w->synthetic == 1)
        return 0;
    diag("give the weights: --weights DIR or --synthetic SEED (one of them)");
    return EXIT_USAGE;
}

long unpair_row(int hd, int rot, int at, long r)
{
    if (!hd)
        return r;
    long h = r / hd, i = r % hd - at, half = rot / 2, base = h * hd + at;
    if (i < 0 || i >= rot)
        return r;
    return i < half ? base + 2 * i : base + 2 * (i - half) + 1;
}
