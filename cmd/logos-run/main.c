/* logos-run — runs a stream of LOGOS programs over a prompt and prints the
 * generated token ids; the CPU reference executes every op. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "logos.h"

typedef struct Opts {
    const char *write_weights, *logits, *out, *input;
    WeightsArg w;
    long ngen;
    int quiet;
    Arena *a;             /* the prompts' ids */
    Prompt prompts[256];
    int nprompts;
} Opts;

static int parse_ids(Arena *a, const char *text, const char *where, Prompt *pr)
{
    int cap = 16;
    pr->ids = arena_alloc(a, sizeof *pr->ids * (size_t)cap);
    pr->n = 0;
    for (const char *p = text;;) {
        while (*p == ' ' || *p == '\t' || *p == ',' || *p == '\n' || *p == '\r')
            p++;
        if (!*p)
            return 0;
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (end == p || errno || v < -2147483647L || v > 2147483647L ||
            (*end && !strchr(" \t,\n\r", *end))) {
            diag("%s: '%.*s' is not a token id", where, (int)strcspn(p, " \t,\n\r"), p);
            return EXIT_USAGE;
        }
        if (pr->n == cap)
            pr->ids = vec_grow(a, pr->ids, &cap, sizeof *pr->ids);
        pr->ids[pr->n++] = (int32_t)v;
        p = end;
    }
}

/* -P FILE: a prompt a line. */
static int prompts_from_file(void *field, const char *flag, const char *path)
{
    (void)flag;
    Opts *o = field;
    Arena *a = o->a;
    Src *s = src_read(a, path);
    if (!s)
        return EXIT_INPUT;
    char *text = arena_strdup(a, s->text);
    int line = 0;
    for (char *l; (l = strsep(&text, "\n"));) {
        line++;
        if (strspn(l, " \t\r") == strlen(l))
            continue;
        if (o->nprompts == 256) {
            diag_file(path, "more than 256 prompts");
            return EXIT_INPUT;
        }
        int st = parse_ids(a, l, arena_printf(a, "%s:%d", path, line), &o->prompts[o->nprompts++]);
        if (st)
            return EXIT_INPUT;
    }
    return 0;
}

/* -p IDS: one prompt. */
static int prompt_opt(void *field, const char *flag, const char *value)
{
    Opts *o = field;
    if (o->nprompts == 256) {
        diag("at most 256 prompts");
        return EXIT_USAGE;
    }
    return parse_ids(o->a, value, flag, &o->prompts[o->nprompts++]) ? EXIT_USAGE : 0;
}

static const Opt opts[] = {
    {.arg = "FILE", .help = "the program stream (stdin when absent or -)"},
    WEIGHTS_OPTS(Opts, w),
    {.l = "write-weights", .kind = OPT_STR, .at = offsetof(Opts, write_weights), .arg = "DIR",
     .help = "write the synthetic weights the stream declares, then stop"},
    {.s = 'p', .kind = OPT_CALL, .fn = prompt_opt, .arg = "IDS",
     .help = "a prompt of token ids (\"1 2 3\"); once per sequence of a batch"},
    {.s = 'P', .kind = OPT_CALL, .fn = prompts_from_file, .arg = "FILE", .help = "prompts from FILE, one per line"},
    {.s = 'n', .kind = OPT_LONG, .at = offsetof(Opts, ngen), .arg = "N", .lo = 0, .hi = 1 << 24,
     .help = "tokens to generate (default 16)"},
    {.l = "logits", .kind = OPT_STR, .at = offsetof(Opts, logits), .arg = "FILE",
     .help = "write every step's logits as raw f32"},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(Opts, out), .arg = "FILE",
     .help = "write the token ids to FILE instead of stdout"},
    {.s = 'q', .kind = OPT_FLAG, .at = offsetof(Opts, quiet), .help = "no figures on stderr"},
    {0},
};
static const Cli cli = {"usage: logos-run (--weights DIR | --synthetic SEED) [-p IDS]... [-P FILE] [-n N]\n"
                        "                 [--logits FILE] [-o FILE] [FILE]\n"
                        "       logos-run --synthetic SEED --write-weights DIR [FILE]\n",
                        opts};

/* What the options ask for fits together; 0 or EXIT_USAGE. */
static int coherent(const Opts *o)
{
    if (weights_given(&o->w))
        return EXIT_USAGE;
    if (o->write_weights && !o->w.synthetic) {
        diag("--write-weights writes synthetic weights: give --synthetic SEED");
        return EXIT_USAGE;
    }
    if (!o->write_weights && o->nprompts == 0) {
        diag("give a prompt: -p \"1 2 3\" or -P FILE");
        return EXIT_USAGE;
    }
    return 0;
}

static int options(Arena *a, int argc, char **argv, Opts *o)
{
    o->ngen = 16;
    o->a = a;
    int n, st = opt_parse(&cli, o, argc, argv, &n);
    if (st)
        return st;
    if (n > 1) {
        diag("one program stream at a time: '%s' and '%s'", argv[1], argv[2]);
        return EXIT_USAGE;
    }
    o->input = n ? argv[1] : "-";
    return coherent(o);
}

static int generate(Stream *st, Env *env, Opts *o)
{
    OutFile tokens = {0}, logits = {0};
    int s = outfile_open(&tokens, o->out, stdout);
    if (!s)
        s = outfile_open(&logits, o->logits, NULL);
    st->logits = logits.f;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!s)
        s = run_generate(st, env, o->prompts, o->nprompts, (int)o->ngen, tokens.f);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    s = outfile_close(&logits, s);
    s = outfile_close(&tokens, s);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    if (!s && !o->quiet)
        diag("cpu reference: %ld tokens generated in %.3f s", st->generated, secs);
    return s;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-run";
    Arena *a = arena_new();
    Opts o = {0};
    Stream st = {0};
    int s = options(a, argc, argv, &o);
    if (s == OPT_DONE) {
        arena_free(a);
        return stdout_done(EXIT_OK);
    }
    diag_progress = !o.quiet;
    if (!s)
        s = stream_load(a, o.input, &st);
    if (!s && o.write_weights) {
        for (int k = 0; !s && k < st.nprogs; k++)
            s = weights_write_synthetic(st.progs[k], o.write_weights, o.w.seed);
        arena_free(a);
        return s;
    }
    if (!s)
        s = run_plan(&st);
    Env *env = env_new();
    if (!s)
        s = stream_bind(&st, env, &o.w);
    if (!s && !o.quiet)
        diag("no GPU lane in this build: running the CPU reference");
    if (!s)
        s = generate(&st, env, &o);
    env_free(env);
    stream_close(&st);
    arena_free(a);
    return s;
}
