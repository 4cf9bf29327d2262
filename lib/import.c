/* import.c — logos-import's pipeline: open a checkpoint (a Hugging Face
 * folder or a GGUF file), read its configuration, write the spec it gives,
 * author that spec's decode step to learn the weights it declares, find each
 * weight's tensor (all of them, before any file is written) and check its
 * tokenizer, remove an earlier import's spec.yaml, stream every weight into
 * its files, write the tokenizer, and put spec.yaml in place last. Also the entry points the fuzzers call. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "import.h"

static int vfail(int status, const char *file, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    diag_file(file, "%s", msg);
    return status;
}

int imp_fail(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int st = vfail(EXIT_INPUT, file, fmt, ap);
    va_end(ap);
    return st;
}

int imp_sysfail(const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int st = vfail(EXIT_SYSTEM, file, fmt, ap);
    va_end(ap);
    return st;
}

int ckpt_open(Ckpt *c, const char *path, struct stat *sb)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || fstat(fd, sb) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        imp_fail(path, "cannot open: %s", strerror(e));
        return -1;
    }
    *VEC_PUSH(c->a, c->fds, c->nfds, c->cfds) = fd;
    return fd;
}

const Tensor *ckpt_find(const Ckpt *c, const char *name)
{
    for (int i = 0; i < c->nt; i++)
        if (c->t[i].name && !strcmp(c->t[i].name, name))
            return &c->t[i];
    return NULL;
}

Tensor *ckpt_add(Ckpt *c)
{
    Tensor *t = VEC_PUSH(c->a, c->t, c->nt, c->ct);
    memset(t, 0, sizeof *t);
    t->fd = -1;
    t->dtype = DT_OTHER;
    t->dtname = "?";
    return t;
}

const char *shape_str(Arena *a, int rank, const long *d)
{
    const char *s = "[";
    for (int k = 0; k < rank; k++)
        s = arena_printf(a, "%s%s%ld", s, k ? "," : "", d[k]);
    return arena_printf(a, "%s]", s);
}

long dtype_size(int dtype)
{
    switch (dtype) {
    case DT_F32: return 4;
    case DT_F16:
    case DT_BF16: return 2;
    case DT_Q8_0: return 34;
    default: return 0;
    }
}

/* ---- the fuzzers' entry points ---- */

int import_st_header(const unsigned char *buf, size_t len)
{
    Ckpt c = {.a = arena_new(), .path = "<fuzz>"};
    int st = st_parse(&c, "<fuzz>", -1, buf, len, len);
    arena_free(c.a);
    return st;
}

static Spec *load_spec(const Ckpt *c, const char *text);

/* A configuration cfg_finish took, as import would go on with it: its spec
 * read back (one that does not load is a message, not a crash) and each
 * format's decode step authored from it. */
static int fuzz_spec_of(Ckpt *c)
{
    int st = cfg_finish(c, 0);
    for (int fmt = FMT_F32; !st && fmt <= FMT_Q8; fmt++) {
        Spec *s = load_spec(c, cfg_spec_yaml(c->a, &c->cfg, fmt));
        char *text = NULL;
        size_t len = 0;
        FILE *mem = s ? open_memstream(&text, &len) : NULL;
        st = mem ? author(c->a, s, "decode_step", -1, 0, 0, mem) : EXIT_INPUT;
        if (mem)
            fclose(mem);
        free(text);
    }
    return st;
}

int import_gguf_header(const unsigned char *buf, size_t len)
{
    Ckpt c = {.a = arena_new(), .path = "<fuzz>", .cfgfile = "<fuzz>", .gguf = 1};
    int st = gguf_parse(&c, "<fuzz>", -1, buf, len);
    if (!st)
        st = fuzz_spec_of(&c);
    arena_free(c.a);
    return st;
}

int import_config(const unsigned char *buf, size_t len)
{
    Ckpt c = {.a = arena_new(), .path = "<fuzz>"};
    FILE *f = fmemopen((void *)buf, len, "rb");
    int st = f ? cfg_from_file(&c, f, "<fuzz>/config.json", "<fuzz>") : EXIT_SYSTEM;
    if (f)
        fclose(f);
    if (!st)
        st = fuzz_spec_of(&c);
    arena_free(c.a);
    return st;
}

/* ---- the pipeline ---- */

/* A weight the authored decode step declares. */
typedef struct Want {
    const char *name;
    int q8, rank;
    long d[LOGOS_MAXRANK];
    Source src;
} Want;

static int open_input(Ckpt *c, const char *in)
{
    struct stat sb;
    if (stat(in, &sb) != 0)
        return imp_fail(in, "cannot open: %s", strerror(errno));
    size_t n = strlen(in);
    if (S_ISDIR(sb.st_mode)) {
        int st = cfg_from_json(c, in);
        return st ? st : st_open_dir(c, in);
    }
    if (S_ISREG(sb.st_mode) && n > 5 && !strcmp(in + n - 5, ".gguf")) {
        c->gguf = 1;
        c->cfgfile = in;
        return gguf_open(c, in);
    }
    return imp_fail(in, "neither a checkpoint folder nor a .gguf file");
}

/* Creates OUT when absent (*made says so, for removing it again when the
 * import fails before writing a weight). */
static int make_outdir(const char *out, int *made)
{
    struct stat sb;
    *made = 0;
    if (stat(out, &sb) == 0)
        return S_ISDIR(sb.st_mode) ? 0 : imp_sysfail(out, "exists and is not a directory");
    if (mkdir(out, 0777) != 0)
        return imp_sysfail(out, "cannot create: %s", strerror(errno));
    *made = 1;
    return 0;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    size_t n = strlen(text);
    int ok = f && fwrite(text, 1, n, f) == n;
    ok = f && fclose(f) == 0 && ok;
    if (!ok) {
        remove(path);
        return imp_sysfail(path, "cannot write: %s", strerror(errno));
    }
    return 0;
}

/* The spec written for the checkpoint, read from memory: one that does not
 * load comes of a configuration cfg_finish did not know to reject, and its
 * messages name `<spec from DIR/config.json>`. */
static Spec *load_spec(const Ckpt *c, const char *text)
{
    Src *src = src_from_string(c->a, arena_printf(c->a, "<spec from %s>", c->cfgfile), text);
    Spec *s = spec_parse(c->a, src);
    if (!s)
        imp_fail(c->cfgfile, "the checkpoint's configuration gives an impossible spec (above)");
    return s;
}

/* The weights of the spec's decode step, each once. */
static int authored_weights(const Ckpt *c, const char *spectext, Want **out, int *nout)
{
    Arena *a = c->a;
    Spec *s = load_spec(c, spectext);
    if (!s)
        return EXIT_INPUT;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem)
        return imp_sysfail(c->cfgfile, "out of memory");
    int st = author(a, s, "decode_step", -1, 0, 0, mem);
    if (fclose(mem) != 0) {
        free(text);
        return imp_sysfail(c->cfgfile, "out of memory");
    }
    Src *src = src_from_string(a, "<authored>", text);
    free(text);
    if (st)
        return st;
    Lexer lx;
    lex_init(&lx, src);
    int err = 0, cap = 0;
    Prog *p = parse_prog(a, &lx, &err);
    if (!p || check_prog(a, p))
        BUG("the authored decode step does not check");
    for (int i = 0; i < p->ndecls; i++) {
        const Decl *d = &p->decls[i];
        if (d->kind != D_WEIGHT)
            continue;
        Want *w = VEC_PUSH(a, *out, *nout, cap);
        *w = (Want){.name = d->name, .q8 = d->base == T_Q8, .rank = d->rank};
        for (int k = 0; k < d->rank; k++)
            w->d[k] = strtol(d->dims[k], NULL, 10);
    }
    return 0;
}

/* A finished import's spec.yaml goes before the first weight file is
 * replaced: the folder then holds no finished import until the new one is. */
static int unfinish(const char *spec)
{
    if (remove(spec) != 0 && errno != ENOENT)
        return imp_sysfail(spec, "cannot remove: %s", strerror(errno));
    return 0;
}

static int import_into(Ckpt *c, const ImportOpts *o)
{
    Cfg *g = &c->cfg;
    g->unpermute = o->rewrite_rope && g->interleaved;
    const char *yaml = cfg_spec_yaml(c->a, g, o->fmt);
    Want *w = NULL;
    TokImport tok;
    int nw = 0, made = 0;
    /* every tensor found and checked, and the tokenizer, before OUT is touched */
    int st = authored_weights(c, yaml, &w, &nw);
    for (int i = 0; !st && i < nw; i++)
        st = map_weight(c, w[i].name, w[i].rank, w[i].d, &w[i].src);
    if (!st)
        st = tok_import_find(c->a, o->in, &tok);
    if (!st)
        st = make_outdir(o->out, &made);
    if (st)
        return st;
    const char *spec = arena_printf(c->a, "%s/spec.yaml", o->out);
    const char *tmp = arena_printf(c->a, "%s/.spec.yaml.tmp%ld", o->out, (long)getpid());
    st = unfinish(spec);
    for (int i = 0; !st && i < nw; i++)
        st = write_weight(o->out, w[i].name, w[i].q8, w[i].rank, w[i].d, &w[i].src);
    if (!st)
        st = tok_import_write(c->a, &tok, o->out);
    if (!st)
        st = write_file(tmp, yaml);
    if (!st && rename(tmp, spec) != 0)
        st = imp_sysfail(spec, "cannot rename into place: %s", strerror(errno));
    if (st) {
        remove(tmp);
        if (made)
            rmdir(o->out);   /* only when nothing was written into it */
        return st;
    }
    int files = 0;
    for (int i = 0; i < nw; i++)
        files += 1 + w[i].q8;
    if (!o->quiet)
        diag("wrote %s and %d weight files (%s%s)", spec, files, o->fmt == FMT_Q8 ? "q8" : "f32",
             g->interleaved && !g->unpermute ? ", q/k rows interleaved" : "");
    if (!o->quiet && tok.from)
        diag("wrote %s/%s (%s, %d tokens)", o->out, tok.name, tok.kind, tok.vocab);
    return 0;
}

int import_run(const ImportOpts *o)
{
    Ckpt c = {.a = arena_new(), .path = o->in};
    int st = open_input(&c, o->in);
    if (!st)
        st = cfg_finish(&c, o->ctx);
    if (!st)
        st = import_into(&c, o);
    for (int i = 0; i < c.nfds; i++)
        close(c.fds[i]);
    arena_free(c.a);
    return st;
}
