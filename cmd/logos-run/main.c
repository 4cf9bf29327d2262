/* logos-run — runs a stream of LOGOS programs over a prompt and prints the
 * generated token ids; the CPU reference executes every op. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-run (--weights DIR | --synthetic SEED) [-p IDS]... [-P FILE] [-n N]\n"
    "                 [--logits FILE] [-o FILE] [FILE]\n"
    "       logos-run --synthetic SEED --write-weights DIR [FILE]\n"
    "  FILE              the program stream (stdin when absent or -)\n"
    "  --weights DIR     load each weight from DIR/NAME.f or DIR/NAME.q and NAME.s\n"
    "  --synthetic SEED  deterministic synthetic weights instead of files\n"
    "  --write-weights DIR  write the synthetic weights the stream declares, then stop\n"
    "  -p IDS            a prompt of token ids (\"1 2 3\"); once per sequence of a batch\n"
    "  -P FILE           prompts from FILE, one per line\n"
    "  -n N              tokens to generate (default 16)\n"
    "  --logits FILE     write every step's logits as raw f32\n"
    "  -o FILE           write the token ids to FILE instead of stdout\n"
    "  -q                no figures on stderr\n"
    "  -h                this help\n";

typedef struct Opts {
    const char *write_weights, *logits, *out, *input;
    WeightsArg w;
    int ngen, quiet;
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

static int prompts_from_file(Arena *a, const char *path, Opts *o)
{
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

/* One option that takes a value; 0 or an exit status. */
static int option(Arena *a, const char *f, const char *arg, Opts *o)
{
    long v;
    int took = weights_option(f, arg, &o->w);
    if (took)
        return took < 0 ? EXIT_USAGE : 0;
    if (!strcmp(f, "--write-weights")) {
        o->write_weights = arg;
    } else if (!strcmp(f, "-n")) {
        if (arg_long(f, arg, 0, 1 << 24, &v))
            return EXIT_USAGE;
        o->ngen = (int)v;
    } else if (!strcmp(f, "-p")) {
        if (o->nprompts == 256) {
            diag("at most 256 prompts");
            return EXIT_USAGE;
        }
        return parse_ids(a, arg, "-p", &o->prompts[o->nprompts++]) ? EXIT_USAGE : 0;
    } else if (!strcmp(f, "-P")) {
        return prompts_from_file(a, arg, o);
    } else if (!strcmp(f, "--logits")) {
        o->logits = arg;
    } else if (!strcmp(f, "-o")) {
        o->out = arg;
    } else {
        diag("unknown option '%s'", f);
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    return 0;
}

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
    int i = 1;
    o->ngen = 16;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "-h") || !strcmp(f, "--help")) {
            fputs(usage, stdout);
            exit(EXIT_OK);
        } else if (!strcmp(f, "-q")) {
            o->quiet = 1;
        } else if (i + 1 == argc) {
            diag("%s needs a value", f);
            return EXIT_USAGE;
        } else {
            int st = option(a, f, argv[++i], o);
            if (st)
                return st;
        }
    }
    if (argc - i > 1) {
        diag("one program stream at a time: '%s' and '%s'", argv[i], argv[i + 1]);
        return EXIT_USAGE;
    }
    o->input = i < argc ? argv[i] : "-";
    return coherent(o);
}

static int generate(Stream *st, Opts *o)
{
    OutFile tokens = {0}, logits = {0};
    int s = outfile_open(&tokens, o->out, stdout);
    if (!s)
        s = outfile_open(&logits, o->logits, NULL);
    st->logits = logits.f;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!s)
        s = run_generate(st, o->prompts, o->nprompts, o->ngen, tokens.f);
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
    if (!s)
        s = stream_load(a, o.input, &st);
    if (!s && o.write_weights) {
        for (int k = 0; !s && k < st.nprogs; k++)
            s = weights_write_synthetic(st.progs[k], o.write_weights, o.w.seed);
        arena_free(a);
        return s;
    }
    if (!s)
        s = stream_phases(&st);
    if (!s)
        s = stream_open(&st, lane_cpu(), &o.w);
    if (!s && !o.quiet)
        diag("no GPU lane in this build: running the CPU reference");
    if (!s)
        s = generate(&st, &o);
    stream_close(&st);
    arena_free(a);
    return s;
}
