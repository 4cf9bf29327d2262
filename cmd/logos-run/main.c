/* logos-run — runs a stream of LOGOS programs or plans over a prompt and
 * prints the generated token ids, each as it comes: on the GPU through the
 * CUDA lane (plans, or programs it fuses with logos-fuse's defaults), a
 * split stream on its chips' GPUs over NCCL, or on the CPU reference. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Opts {
    const char *write_weights, *logits, *out, *input;
    WeightsArg w;
    TpArg tp;
    int devices[LOGOS_MAXCHIPS];
    long ngen;
    int quiet, device, compile;
    long arch;
    Arena *a;             /* the prompts' ids */
    Prompt prompts[256], follow[256];
    int nprompts, nfollow;
} Opts;

/* The word at p as a message shows it: at most 32 bytes ("..." past them),
 * bytes that are not printable ASCII as '?'. */
static const char *shown_word(Arena *a, const char *p)
{
    size_t n = strcspn(p, " \t,\n\r"), k = n > 32 ? 32 : n;
    char *s = arena_alloc(a, k + 4);
    for (size_t i = 0; i < k; i++)
        s[i] = p[i] > 32 && p[i] < 127 ? p[i] : '?';
    strcpy(s + k, n > k ? "..." : "");
    return s;
}

/* The ids of text into pr; 0, or EXIT_USAGE after naming the bad word at
 * where (and its column, where col is set: a line of a file). */
static int parse_ids(Arena *a, const char *text, const char *where, int col, Prompt *pr)
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
            diag("%s%s: '%s' is not a token id", where, col ? arena_printf(a, ":%d", (int)(p - text) + 1) : "",
                 shown_word(a, p));
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
    int line = 0, found = 0;
    for (char *l; (l = strsep(&text, "\n"));) {
        line++;
        if (strspn(l, " \t\r") == strlen(l))
            continue;
        if (o->nprompts == 256) {
            diag_file(path, "more than 256 prompts");
            return EXIT_INPUT;
        }
        int st = parse_ids(a, l, arena_printf(a, "%s:%d", path, line), 1, &o->prompts[o->nprompts++]);
        if (st)
            return EXIT_INPUT;
        found = 1;
    }
    if (!found) {
        diag_file(path, "no prompt in it: one prompt a line, token ids");
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
    return parse_ids(o->a, value, flag, 0, &o->prompts[o->nprompts++]) ? EXIT_USAGE : 0;
}

/* --follow IDS: what one sequence is fed after its prompt. */
static int follow_opt(void *field, const char *flag, const char *value)
{
    Opts *o = field;
    if (o->nfollow == 256) {
        diag("at most 256 lists to follow");
        return EXIT_USAGE;
    }
    return parse_ids(o->a, value, flag, 0, &o->follow[o->nfollow++]) ? EXIT_USAGE : 0;
}

/* --devices 0,1: the GPUs of this process's chips, each once. */
static int devices_opt(void *field, const char *flag, const char *value)
{
    Opts *o = field;
    o->tp.devices = o->devices;
    o->tp.ndevices = 0;
    for (const char *p = value;; p++) {
        long d;
        size_t n = strcspn(p, ",");
        char *one = arena_strndup(o->a, p, n);
        if (o->tp.ndevices == LOGOS_MAXCHIPS || parse_long(one, 0, 1023, &d)) {
            diag("%s takes GPU numbers from 0 to 1023 separated by commas (0,1), not '%s'", flag, value);
            return EXIT_USAGE;
        }
        for (int i = 0; i < o->tp.ndevices; i++)
            if (o->devices[i] == d) {
                diag("%s names GPU %ld twice", flag, d);
                return EXIT_USAGE;
            }
        o->devices[o->tp.ndevices++] = (int)d;
        p += n;
        if (!*p)
            return 0;
    }
}

static const Opt opts[] = {
    {.arg = "FILE", .help = "the program stream (stdin when absent or -)"},
    WEIGHTS_OPTS(Opts, w),
    {.l = "write-weights", .kind = OPT_STR, .at = offsetof(Opts, write_weights), .arg = "DIR",
     .help = "write the synthetic weights the stream declares, then stop"},
    {.s = 'p', .kind = OPT_CALL, .fn = prompt_opt, .arg = "IDS",
     .help = "a prompt of token ids (\"1 2 3\"); once per sequence of a batch"},
    {.s = 'P', .kind = OPT_CALL, .fn = prompts_from_file, .arg = "FILE", .help = "prompts from FILE, one per line"},
    {.l = "follow", .kind = OPT_CALL, .fn = follow_opt, .arg = "IDS",
     .help = "feed these tokens after the prompt instead of the greedy ones\n"
             "(once per sequence; the greedy ids are still printed)"},
    {.s = 'n', .kind = OPT_LONG, .at = offsetof(Opts, ngen), .arg = "N", .lo = 0, .hi = 1 << 24,
     .help = "tokens to generate (default 16)"},
    {.l = "logits", .kind = OPT_STR, .at = offsetof(Opts, logits), .arg = "FILE",
     .help = "write every step's logits as raw f32"},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(Opts, out), .arg = "FILE",
     .help = "write the token ids to FILE instead of stdout"},
    {.l = "device", .kind = OPT_WORD, .at = offsetof(Opts, device), .arg = "D", .what = "auto cuda cpu",
     .help = "auto (the GPU when a driver answers, the default), cuda or cpu"},
    {.l = "tp", .kind = OPT_LONG, .at = offsetof(Opts, tp.chips), .arg = "N", .lo = 1, .hi = LOGOS_MAXCHIPS,
     .what = "a number of chips", .help = "the chips a split stream runs on (its `chips N`; default: as it says)"},
    {.l = "devices", .kind = OPT_CALL, .fn = devices_opt, .arg = "LIST",
     .help = "the GPUs of this process's chips, one a chip (default 0,1 ...)"},
    {.l = "rank", .kind = OPT_LONG, .at = offsetof(Opts, tp.rank), .arg = "R", .lo = 0, .hi = LOGOS_MAXCHIPS - 1,
     .what = "a chip's rank", .help = "run chip R alone, the other chips other processes (NCCL)"},
    {.l = "nccl-id", .kind = OPT_STR, .at = offsetof(Opts, tp.id), .arg = "FILE",
     .help = "with --rank: where rank 0 writes NCCL's unique id, the others read it"},
    {.l = "compile", .kind = OPT_FLAG, .at = offsetof(Opts, compile),
     .help = "compile every kernel the plans ask for into the cache, print\n"
             "each one's registers, stack and spills, and stop (no GPU needed)"},
    {.l = "arch", .kind = OPT_LONG, .at = offsetof(Opts, arch), .arg = "SM", .lo = 90, .hi = 200,
     .what = "a compute capability (90 for sm_90)", .help = "the architecture --compile compiles for (default 90)"},
    {.s = 'q', .kind = OPT_FLAG, .at = offsetof(Opts, quiet), .help = "no figures or notices on stderr"},
    {0},
};
static const Cli cli = {"usage: logos-run (--weights DIR | --synthetic SEED) [-p IDS]... [-P FILE] [-n N]\n"
                        "                 [--device D] [--tp N] [--devices LIST] [--logits FILE] [-o FILE] [FILE]\n"
                        "       logos-run ... --tp N --rank R [--nccl-id FILE] [--devices GPU] [FILE]\n"
                        "       logos-run --synthetic SEED --write-weights DIR [FILE]\n",
                        opts};

/* One process per GPU: --rank on a GPU, with a rendezvous. */
static int coherent_tp(const Opts *o)
{
    if (o->tp.id && o->tp.rank < 0) {
        diag("--nccl-id is for one process per GPU: give each its --rank");
        return EXIT_USAGE;
    }
    if (o->tp.rank < 0)
        return 0;
    if (o->device == DEV_CPU) {
        diag("--rank runs one chip on a GPU; the CPU reference runs every chip in one process");
        return EXIT_USAGE;
    }
    const char *env = getenv("NCCL_COMM_ID");
    if (!o->tp.id && !(env && *env)) {
        diag("--rank needs a rendezvous: --nccl-id FILE, or NCCL_COMM_ID=HOST:PORT in the environment");
        return EXIT_USAGE;
    }
    return 0;
}

/* What the options ask for fits together; 0 or EXIT_USAGE. */
static int coherent(const Opts *o)
{
    if (!o->compile && weights_given(&o->w))
        return EXIT_USAGE;
    if (o->write_weights && !o->w.synthetic) {
        diag("--write-weights writes synthetic weights: give --synthetic SEED");
        return EXIT_USAGE;
    }
    if (o->compile && (o->out || o->logits)) {
        diag("--compile runs nothing: %s names where a run's %s go", o->out ? "-o" : "--logits",
             o->out ? "token ids" : "logits");
        return EXIT_USAGE;
    }
    if (o->compile)
        return 0;
    if (o->out && o->logits && outfile_same(o->out, o->logits)) {
        diag("-o and --logits both name '%s': give each its own file", o->logits);
        return EXIT_USAGE;
    }
    if (!o->write_weights && o->nprompts == 0) {
        diag("give a prompt: -p \"1 2 3\" or -P FILE");
        return EXIT_USAGE;
    }
    if (o->nfollow && o->nfollow != o->nprompts) {
        diag("give one --follow for each of the %d prompts, not %d", o->nprompts, o->nfollow);
        return EXIT_USAGE;
    }
    if (ref_nudge_read() || ref_ties_read())
        return EXIT_USAGE;
    return coherent_tp(o);
}

static int options(Arena *a, int argc, char **argv, Opts *o)
{
    o->ngen = 16;
    o->a = a;
    o->tp.rank = -1;
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

/* The figures of a run on stderr: the lane, the tokens and their time; on
 * the GPU what starting took. */
static void figures(const Stream *st, double secs, double start)
{
    if (!strcmp(st->lane->name, "cuda-nccl")) {
        int chips, here;
        const char *gpus = lane_tp_devices(st->lane, &chips, &here);
        diag("cuda over NCCL (%d of %d chips: %s): %ld tokens generated in %.3f s; start-up %.3f s", here, chips,
             gpus, st->generated, secs, start);
        return;
    }
    if (strcmp(st->lane->name, "cuda")) {
        diag("cpu reference%s: %ld tokens generated in %.3f s", st->chips > 1 ? arena_printf(st->a, " (%d chips)",
             st->chips) : "", st->generated, secs);
        return;
    }
    int sms, compiled, kernels;
    double compile;
    const char *gpu = lane_cuda_device(st->lane, &sms);
    lane_cuda_startup(st->lane, &compile, &compiled, &kernels);
    diag("cuda (%s): %ld tokens generated in %.3f s; start-up %.3f s (kernels: %d compiled, %d from the cache, %.3f s)",
         gpu, st->generated, secs, start, compiled, kernels - compiled, compile);
}

static int generate(Stream *st, Opts *o, double start)
{
    OutFile tokens = {0}, logits = {0};
    int quiet = o->tp.rank > 0;   /* every chip computes the tokens; rank 0 writes them */
    int s = outfile_open(&tokens, quiet ? "/dev/null" : o->out, stdout);
    if (!s)
        s = outfile_open(&logits, quiet ? NULL : o->logits, NULL);
    st->logits = logits.f;
    st->outname = o->out;
    st->follow = o->follow;
    st->nfollow = o->nfollow;
    double t0 = mono_s();
    if (!s)
        s = run_generate(st, o->prompts, o->nprompts, (int)o->ngen, tokens.f);
    double secs = mono_s() - t0;
    s = outfile_close(&logits, s);
    s = outfile_close(&tokens, s);
    if (!s && !o->quiet)
        figures(st, secs, start);
    return s;
}

/* --arch: one this NVRTC compiles for (where it can say); 0 or EXIT_USAGE. */
static int arch_known(int arch)
{
    int a[128], n = nvrtc_archs(a, 128);
    char list[1024] = "";
    for (int i = 0; i < n; i++)
        if (a[i] == arch)
            return 0;
    if (!n)
        return 0;
    for (int i = 0, at = 0; i < n && at < 1000; i++)
        at += snprintf(list + at, sizeof list - (size_t)at, "%s%d", i ? " " : "", a[i]);
    int v = nvrtc_version();
    diag("--arch %d: NVRTC %d.%d compiles for %s", arch, v / 1000, v % 1000 / 10, list);
    return EXIT_USAGE;
}

/* --compile: the plans' kernels into the cache, no run. */
static int compile_only(Stream *st, const Opts *o)
{
    if (arch_known(o->arch ? (int)o->arch : 90))
        return EXIT_USAGE;
    FuseOpts fo;
    fuse_defaults(&fo, st->ctx);
    for (int k = 0; k < st->nprogs; k++)
        if (!st->plans[k] && !(st->plans[k] = fuse(st->a, st->progs[k], st->graphs[k], &fo)))
            return EXIT_INPUT;
    return cache_compile_stream(st, o->arch ? (int)o->arch : 90, stdout);
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
    if (!s && o.compile) {   /* before the phases: plans of several models may share a stream here */
        s = compile_only(&st, &o);
        arena_free(a);
        return stdout_done(s);
    }

    if (!s && o.write_weights) {
        for (int k = 0; !s && k < st.nprogs; k++)
            s = weights_write_synthetic(st.progs[k], o.write_weights, o.w.seed);
        arena_free(a);
        return s;
    }
    if (!s)
        s = stream_phases(&st);
    st.tp = &o.tp;
    if (!s)
        s = tp_fits(&st);
    FuseOpts fo;
    fuse_defaults(&fo, st.ctx);
    Lane *lane = s ? NULL : lane_choose(&st, o.device, &fo, o.quiet, &s);
    double t0 = mono_s();
    if (lane)
        s = stream_open(&st, lane, &o.w);
    double opened = mono_s() - t0;
    if (!s)
        s = generate(&st, &o, opened);
    stream_close(&st);
    arena_free(a);
    return s;
}
