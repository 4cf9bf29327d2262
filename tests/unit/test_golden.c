/* test_golden.c — the golden op programs (tests/golden/ops/NAME.logos) run on
 * the CPU reference on fixed inputs, their outputs compared with the values
 * recorded beside them in NAME.out (relative error below 1e-5 of each
 * output's largest value; i32 outputs exactly).
 *
 * The fixed inputs: every size is 3; an i32 input is 3, or 1, 2, 3 when it is
 * a vector (positions and tokens); an f32 input, and every state before the
 * program runs, holds the synthetic values of its name (weights_synth, seed
 * 1); weights are the synthetic weights of logos-run --synthetic 1. Each
 * program of a stream runs on its own. A program the reference refuses
 * (allgather over two ranks, in one process), or whose weights do not bind,
 * records the message instead.
 *
 * Run from the repository root; `test_golden --write` records every NAME.out
 * anew (after a deliberate change to the reference: review the diff). Prints
 * TAP lines; exits 1 on a failure. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logos.h"

enum { SEED = 1, SIZE = 3, MAXFILES = 256 };
static const char *DIRNAME = "tests/golden/ops";
static const double TOL = 1e-5;
static int ntest, nfail;

static void ok(int pass, const char *what, const char *name)
{
    ntest++;
    nfail += !pass;
    printf("%sok %d - %s: %s\n", pass ? "" : "not ", ntest, name, what);
}

/* ---- fixed inputs ---- */

/* The declared dims of d, every size as SIZE. */
static int dims_of(const Decl *d, long *dims)
{
    for (int k = 0; k < d->rank; k++) {
        char *end;
        long v = strtol(d->dims[k], &end, 10);
        dims[k] = *end ? SIZE : v;
    }
    return d->rank;
}

static void bind_input(Env *env, const Decl *d)
{
    long dims[LOGOS_MAXRANK];
    int rank = dims_of(d, dims);
    Buf *b = env_alloc(env, d->name, d->base == T_I32 ? T_I32 : T_F32, rank, dims);
    if (d->base == T_I32)
        for (long i = 0; i < b->n; i++)
            b->i[i] = rank ? (int32_t)(i + 1) : SIZE;
    else
        weights_synth(d->name, rank, dims, SEED, b->f);
}

/* Inputs and states of p in env; weights bound in *w. 0 or an exit status. */
static int fixed_env(const Prog *p, Env *env, Weights **w)
{
    for (int i = 0; i < p->ndecls; i++)
        if (p->decls[i].kind == D_IN || p->decls[i].kind == D_STATE)
            bind_input(env, &p->decls[i]);
    return weights_bind(w, p, env, NULL, SEED);
}

/* ---- the record of a run ---- */

static void print_out(FILE *f, const Decl *d, const Buf *b)
{
    fprintf(f, "out %s %s[", d->name, base_name(b->base));
    for (int k = 0; k < b->rank; k++)
        fprintf(f, "%s%ld", k ? "," : "", b->d[k]);
    fprintf(f, "]\n");
    for (long i = 0; i < b->n; i++) {
        fputs(i % 8 ? " " : "", f);
        if (b->base == T_I32)
            fprintf(f, "%d", b->i[i]);
        else
            fprintf(f, "%.9g", (double)b->f[i]);
        if (i % 8 == 7 && i + 1 < b->n)
            fputc('\n', f);
    }
    if (b->n)
        fputc('\n', f);
}

/* Binds and runs p with stderr caught; its first line goes into the record
 * when the reference refuses the program. */
static void record_prog(FILE *f, const Prog *p, int k)
{
    Weights *w = NULL;
    Env *env = env_new();
    fprintf(f, "program %d %s\n", k, p->form);
    FILE *err = tmpfile();
    fflush(stderr);
    int saved = dup(2);
    dup2(fileno(err), 2);
    int rc = fixed_env(p, env, &w);
    if (!rc)
        rc = ref_run(p, env);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    if (rc) {
        char line[512] = "";
        rewind(err);
        if (!fgets(line, sizeof line, err))
            strcpy(line, "(no message)\n");
        fprintf(f, "error %s", line);
    }
    fclose(err);
    for (int i = 0; !rc && i < p->ndecls; i++)
        if (p->decls[i].kind == D_OUT)
            print_out(f, &p->decls[i], env_get(env, p->decls[i].name));
    env_free(env);
    weights_close(w);
}

/* The record of every program of the file NAME.logos, in memory. */
static char *record(Arena *a, const char *name)
{
    Src *src = src_read(a, arena_printf(a, "%s/%s.logos", DIRNAME, name));
    ASSERT(src);
    src->name = arena_printf(a, "%s.logos", name);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    fprintf(f, "# %s.logos on fixed inputs (tests/unit/test_golden.c)\n", name);
    Lexer lx;
    lex_init(&lx, src);
    int err = 0, k = 0;
    for (Prog *p; (p = parse_prog(a, &lx, &err));) {
        ASSERT(check_prog(a, p) == 0);
        record_prog(f, p, ++k);
    }
    ASSERT(!err);
    fclose(f);
    return text;
}

/* ---- comparing records ---- */

/* The next line of *s (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **s)
{
    if (!*s || !**s)
        return NULL;
    char *l = *s, *nl = strchr(l, '\n');
    *s = nl ? nl + 1 : NULL;
    if (nl)
        *nl = 0;
    return l;
}

/* Largest |value| of the number lines that follow, up to the next word line. */
static double scale_of(const char *rest)
{
    double m = 0;
    for (const char *p = rest; *p && !(p[0] >= 'a' && p[0] <= 'z');) {
        char *end;
        double v = strtod(p, &end);
        if (end == p)
            break;
        m = fmax(m, fabs(v));
        p = end + strspn(end, " \n");
    }
    return m;
}

/* Do two number lines agree within TOL of the output's scale? */
static int numbers_agree(const char *got, const char *want, double scale, char *why, size_t n)
{
    for (;;) {
        char *eg, *ew;
        double g = strtod(got, &eg), w = strtod(want, &ew);
        if (eg == got || ew == want) {
            if (eg == got && ew == want && !*eg && !*ew)
                return 1;
            snprintf(why, n, "a different count of values");
            return 0;
        }
        if (!(fabs(g - w) <= TOL * scale)) {   /* a NaN never agrees */
            snprintf(why, n, "%.9g where %.9g was recorded", g, w);
            return 0;
        }
        got = eg;
        want = ew;
    }
}

/* Compares the records line by line; the first difference in why. */
static int agree(char *got, char *want, char *why, size_t n)
{
    double scale = 0;
    for (int line = 1;; line++) {
        char *g = next_line(&got), *w = next_line(&want);
        if (!g || !w) {
            snprintf(why, n, "line %d: the record %s", line, g ? "ends early" : w ? "has more" : "");
            return !g && !w;
        }
        int words = w[0] >= 'a' && w[0] <= 'z';
        if (words || w[0] == '#') {
            if (strcmp(g, w)) {
                snprintf(why, n, "line %d: '%.60s' where '%.60s' was recorded", line, g, w);
                return 0;
            }
            if (!strncmp(w, "out ", 4))
                scale = fmax(scale_of(want), 1e-30);
            continue;
        }
        char num[160];
        if (!numbers_agree(g, w, scale, num, sizeof num)) {
            snprintf(why, n, "line %d: %s", line, num);
            return 0;
        }
    }
}

/* ---- files ---- */

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of DIRNAME's files ending in ext, sorted, without ext. */
static int names(Arena *a, const char *ext, char **out)
{
    DIR *d = opendir(DIRNAME);
    ASSERT(d);
    int n = 0;
    size_t el = strlen(ext);
    for (struct dirent *de; (de = readdir(d)) && n < MAXFILES;) {
        size_t l = strlen(de->d_name);
        if (l > el && !strcmp(de->d_name + l - el, ext))
            out[n++] = arena_strndup(a, de->d_name, l - el);
    }
    closedir(d);
    qsort(out, (size_t)n, sizeof *out, by_name);
    return n;
}

static char *read_text(Arena *a, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fclose(f);
    Src *s = src_read(a, path);
    return s ? (char *)s->text : NULL;
}

static void check_one(Arena *a, const char *name, int write)
{
    char *got = record(a, name), *path = arena_printf(a, "%s/%s.out", DIRNAME, name);
    if (write) {
        FILE *f = fopen(path, "wb");
        ok(f && fputs(got, f) >= 0 && fclose(f) == 0, "recorded", name);
    } else {
        char *want = read_text(a, path), why[256] = "";
        int pass = want && agree(got, want, why, sizeof why);
        if (!want)
            snprintf(why, sizeof why, "%s is missing (test_golden --write records it)", path);
        if (!pass)
            printf("# %s: %s\n", name, why);
        ok(pass, "outputs on fixed inputs as recorded", name);
    }
    free(got);
}

/* Every NAME.out belongs to a NAME.logos. */
static void no_strays(Arena *a, char **progs, int np)
{
    char *outs[MAXFILES];
    int n = names(a, ".out", outs), stray = 0;
    for (int i = 0; i < n; i++)
        if (!bsearch(&outs[i], progs, (size_t)np, sizeof *progs, by_name)) {
            printf("# %s.out has no %s.logos\n", outs[i], outs[i]);
            stray = 1;
        }
    ok(!stray, "every record belongs to a program", DIRNAME);
}

int main(int argc, char **argv)
{
    int write = argc > 1 && !strcmp(argv[1], "--write");
    diag_tool = "logos";
    Arena *a = arena_new();
    char *progs[MAXFILES];
    int n = names(a, ".logos", progs);
    ok(n >= 50, "the golden op programs are found", DIRNAME);
    for (int i = 0; i < n; i++)
        check_one(a, progs[i], write);
    no_strays(a, progs, n);
    arena_free(a);
    printf("1..%d\n", ntest);
    return nfail != 0;
}
