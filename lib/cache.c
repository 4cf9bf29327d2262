/* cache.c — kernel instantiations compiled once: each source's cubin is kept
 * under $XDG_CACHE_HOME/logos (or ~/.cache/logos), named by an XXH3-128 of
 * the source (its constants included), NVRTC's options, the architecture,
 * NVRTC's version and the tools' version; an entry is written to a
 * temporary and renamed into place, and one that fails to load is compiled
 * again, never trusted. Missing entries compile in parallel, a thread each
 * up to the machine's processors (NVRTC compiles separate programs
 * concurrently). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cu.h"

static int report(const KJob *j);
static void compile_missing(KJob *jobs, int n, int arch);

const char *cache_dir(void)
{
    static char dir[4096];
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (x && *x)
        snprintf(dir, sizeof dir, "%s/logos", x);
    else
        snprintf(dir, sizeof dir, "%s/.cache/logos", home && *home ? home : "/tmp");
    return dir;
}

void cache_key(const char *src, int arch, char *out)
{
    char tail[256];
    int n = snprintf(tail, sizeof tail, "\n//%s sm_%d nvrtc %d logos %s", nvrtc_options(), arch, nvrtc_version(),
                     LOGOS_VERSION);
    XXH3_state_t st;
    XXH3_128bits_reset(&st);
    XXH3_128bits_update(&st, src, strlen(src));
    XXH3_128bits_update(&st, tail, (size_t)n);
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.high64, (unsigned long long)h.low64);
}

static char *entry_path(const char *key)
{
    size_t n = strlen(cache_dir()) + 48;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s.cubin", cache_dir(), key);
    return p;
}

/* The cached cubin of a key, or 0 with c empty. */
static int read_entry(const char *key, Cubin *c)
{
    char *path = entry_path(key);
    FILE *f = path ? fopen(path, "rb") : NULL;
    free(path);
    if (!f)
        return 0;
    memset(c, 0, sizeof *c);
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n > 0 && fseek(f, 0, SEEK_SET) == 0 && (c->data = malloc((size_t)n)) &&
            fread(c->data, 1, (size_t)n, f) == (size_t)n)
            c->size = (size_t)n;
    }
    fclose(f);
    if (!c->size) {
        free(c->data);
        c->data = NULL;
    }
    return c->size > 0;
}

static int mkdirs(const char *dir)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            if (mkdir(p, 0777) && errno != EEXIST)
                return -1;
            *s = '/';
        }
    return mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
}

/* Writes an entry atomically; a cache that cannot be written only costs
 * the next start a compile, so failures are silent. */
static void write_entry(const char *key, const Cubin *c)
{
    if (mkdirs(cache_dir()))
        return;
    char *path = entry_path(key);
    if (!path)
        return;
    size_t n = strlen(path) + 32;
    char *tmp = malloc(n);
    if (tmp) {
        snprintf(tmp, n, "%s.%ld.tmp", path, (long)getpid());
        FILE *f = fopen(tmp, "wbx");
        int ok = f && fwrite(c->data, 1, c->size, f) == c->size;
        if (f && fclose(f))
            ok = 0;
        if (!ok || rename(tmp, path))
            unlink(tmp);
    }
    free(tmp);
    free(path);
}

/* ---- compiling on threads ---- */

typedef struct Work {
    KJob *jobs;
    int n, arch;
    int next;
    pthread_mutex_t mu;
} Work;

static void compile(KJob *j, int arch)
{
    j->status = nvrtc_compile(j->src, j->file, kernel_common(), "common.cuh", arch, &j->cubin);
    if (!j->status) {
        j->out->compiled = 1;
        j->out->regs = j->cubin.regs;
        j->out->stack = j->cubin.stack;
        j->out->spill = j->cubin.spill_st + j->cubin.spill_ld;
    }
}

static void *worker(void *arg)
{
    Work *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->mu);
        int i = w->next < w->n ? w->next++ : -1;
        while (i >= 0 && w->jobs[i].cubin.data) {   /* already read from the cache */
            i = w->next < w->n ? w->next++ : -1;
        }
        pthread_mutex_unlock(&w->mu);
        if (i < 0)
            return NULL;
        compile(&w->jobs[i], w->arch);
    }
}

static void compile_missing(KJob *jobs, int n, int arch)
{
    nvrtc_open();   /* once, before the threads: opening is not thread-safe */
    nvrtc_version();
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = cpus > 1 ? (int)(cpus < 32 ? cpus : 32) : 1;
    Work w = {jobs, n, arch, 0, PTHREAD_MUTEX_INITIALIZER};
    pthread_t th[32];
    int started = 0;
    for (int t = 1; t < nt; t++)
        if (pthread_create(&th[started], NULL, worker, &w) == 0)
            started++;
    worker(&w);
    for (int t = 0; t < started; t++)
        pthread_join(th[t], NULL);
}

static int report(const KJob *j)
{
    diag("kernel %s does not compile (%s):", j->name, j->status == EXIT_SYSTEM ? "NVRTC could not run" : "NVRTC's log");
    fprintf(stderr, "%s\n", j->cubin.log ? j->cubin.log : "");
    return EXIT_SYSTEM;
}

static int load_one(KJob *j, int arch, const char *key)
{
    CUresult r = cu.ModuleLoadData(&j->out->mod, j->cubin.data);
    if (r && !j->out->compiled) {   /* a cached entry that does not load: compile it again */
        cubin_free(&j->cubin);
        compile(j, arch);
        if (j->status)
            return report(j);
        r = cu.ModuleLoadData(&j->out->mod, j->cubin.data);
    }
    if (r)
        return cu_fail("cuModuleLoadData(kernel)", r, __FILE__, __LINE__);
    if (j->out->compiled)
        write_entry(key, &j->cubin);
    CK(cu.ModuleGetFunction(&j->out->fn, j->out->mod, j->name));
    return 0;
}

int cache_load(KJob *jobs, int n, int arch)
{
    char (*keys)[33] = calloc((size_t)n + 1, sizeof *keys);
    if (!keys) {
        diag("out of memory");
        return EXIT_SYSTEM;
    }
    for (int i = 0; i < n; i++) {
        cache_key(jobs[i].src, arch, keys[i]);
        read_entry(keys[i], &jobs[i].cubin);
    }
    compile_missing(jobs, n, arch);
    int s = 0;
    for (int i = 0; i < n && !s; i++)
        s = jobs[i].cubin.data ? load_one(&jobs[i], arch, keys[i]) : report(&jobs[i]);
    for (int i = 0; i < n; i++)
        cubin_free(&jobs[i].cubin);
    free(keys);
    return s;
}

/* ---- compiling without a device: the cache filled ahead, the resources reported ---- */

/* A launch's constants that are not 0, as a plan spells them. */
static const char *consts_text(Arena *a, const PLaunch *l)
{
    const Kernel *k = kernel_info(l->kernel);
    char *s = arena_strdup(a, "");
    for (int i = 0; i < k->nc; i++) {
        char v[64];
        if (l->c[i] == 0)
            continue;
        kernel_const_text(&k->c[i], l->c[i], v, sizeof v);
        s = arena_printf(a, "%s%s%s=%s", s, *s ? " " : "", k->c[i].name, v);
    }
    return s;
}

int cache_compile_stream(Stream *st, int arch, FILE *out)
{
    StrMap *seen = strmap_new(st->a);
    KJob *jobs = NULL;
    int n = 0, cap = 0;
    int marks = kernel_marks_env();
    for (int k = 0; k < st->nprogs; k++) {
        const Plan *pl = st->plans[k];
        int flags = pl ? plan_kernel_flags(pl, marks) : 0;
        for (int i = 0; pl && i < pl->nls; i++) {
            const PLaunch *l = &pl->ls[i];
            char *src = kernel_source(l->kernel, l->c, flags);
            if (strmap_get(seen, src) >= 0) {
                free(src);
                continue;
            }
            strmap_put(seen, arena_strdup(st->a, src), n);
            KJob *j = VEC_PUSH(st->a, jobs, n, cap);
            *j = (KJob){.src = src, .name = kernel_info(l->kernel)->name, .file = kernel_info(l->kernel)->file};
            j->out = arena_alloc(st->a, sizeof *j->out);
            j->consts = consts_text(st->a, l);
        }
    }
    compile_missing(jobs, n, arch);
    int s = 0, bad = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        KJob *j = &jobs[i];
        char key[33];
        cache_key(j->src, arch, key);
        if (j->status) {
            s = report(j);
            failed++;
        } else {
            write_entry(key, &j->cubin);
            bad |= j->out->stack || j->out->spill;
            fprintf(out, "%-8s %4d registers %4ld bytes stack %4ld bytes spilled  %s\n", j->name, j->out->regs,
                    j->out->stack, j->out->spill, j->consts);
        }
        cubin_free(&j->cubin);
        free(j->src);
    }
    if (failed)
        fprintf(out, "%d kernel instantiations for sm_%d: %d did not compile\n", n, arch, failed);
    else
        fprintf(out, "%d kernel instantiations for sm_%d%s\n", n, arch,
                bad ? ", some with local memory (a stack frame or spills)" : ", none with local memory");
    return s;
}
