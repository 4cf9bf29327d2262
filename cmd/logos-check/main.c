/* logos-check — is a ModelSpec writable as programs (and splittable over N
 * chips), is a stream of LOGOS programs well-formed and well-typed, is a
 * stream of plans one logos-run would launch? */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static int is_spec(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && strcmp(path + n - 5, ".yaml") == 0) || (n > 4 && strcmp(path + n - 4, ".yml") == 0);
}

/* A spec's verdict: its ok line (not under -p and -o, whose output holds
 * programs only) or its located messages; 0 or EXIT_INPUT. */
static int check_spec(Arena *a, const char *path, int tp, int quiet)
{
    Spec *s = spec_load(a, path);
    if (!s)
        return EXIT_INPUT;
    if (tp) {
        const char *why = spec_tp_block(a, s, tp);
        if (why) {
            diag_file(path, "does not split over %d chips: %s", tp, why);
            return EXIT_INPUT;
        }
        if (!quiet)
            printf("%s: splits over %d chips\n", path, tp);
        return EXIT_OK;
    }
    int bad = 0;
    for (int l = 0; l < s->nlayers; l++) {
        const char *why = spec_not_yet(a, s, l);
        if (why) {
            const LayerSpec *ls = spec_layer(s, l);
            fprintf(stderr, "%s: %s:%d: layer %d (%s): not yet: %s\n", diag_tool, path, ls->line, l, ls->kind, why);
            bad = 1;
        }
    }
    if (bad)
        return EXIT_INPUT;
    if (!quiet)
        printf("%s: ok: %d layers can be written\n", path, s->nlayers);
    return EXIT_OK;
}

/* Checks every program (or plan) of one stream; prints them when out is set. */
static int check_stream(Arena *a, const char *path, FILE *out)
{
    Stream st = {0};
    if (stream_load(a, path, &st))
        return EXIT_INPUT;
    for (int k = 0; out && k < st.nprogs; k++) {
        if (st.plans[k])
            plan_print(out, st.plans[k]);
        else
            print_prog(out, st.progs[k]);
    }
    if (!out)
        printf("%s: ok: %d %s%s\n", st.src, st.nprogs, st.plans[0] ? "plan" : "program", st.nprogs == 1 ? "" : "s");
    return EXIT_OK;
}

typedef struct Opts {
    long tp;
    int print;
    const char *outpath;
    const char **files;
    int nfiles;
} Opts;

static const Opt opts[] = {
    {.arg = "FILE.yaml", .help = "a ModelSpec: can every layer be written as a program?"},
    {.arg = "FILE, -", .help = "a stream of LOGOS programs or plans (stdin when no FILE)"},
    {.l = "tp", .kind = OPT_LONG, .at = offsetof(Opts, tp), .arg = "N", .lo = 1, .hi = 1024,
     .what = "a number of chips", .help = "with a spec: does it split over N chips?"},
    {.s = 'p', .kind = OPT_FLAG, .at = offsetof(Opts, print),
     .help = "print each checked program (canonical form) to stdout"},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(Opts, outpath), .arg = "FILE",
     .help = "write the printed programs to FILE instead of stdout"},
    {0},
};
static const Cli cli = {"usage: logos-check [-p] [-o FILE] [--tp N] [FILE ...]\n", opts};

/* The options and the files (stdin when none); 0, OPT_DONE or EXIT_USAGE. */
static int options(int argc, char **argv, Opts *o)
{
    static const char *stdin_only[] = {"-"};
    int st = opt_parse(&cli, o, argc, argv, &o->nfiles);
    if (st)
        return st;
    o->files = o->nfiles ? (const char **)argv + 1 : stdin_only;
    if (!o->nfiles)
        o->nfiles = 1;
    if (o->outpath)
        o->print = 1;
    return 0;
}

/* --tp reads specs. */
static int files_fit(const Opts *o)
{
    for (int k = 0; k < o->nfiles; k++)
        if (o->tp && !is_spec(o->files[k])) {
            if (!strcmp(o->files[k], "-"))
                diag("--tp checks a spec: give it (FILE.yaml)");
            else
                diag("--tp checks a spec (FILE.yaml), not '%s'", o->files[k]);
            return EXIT_USAGE;
        }
    return 0;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-check";
    Opts o = {0};
    int status = options(argc, argv, &o);
    if (status)
        return status == OPT_DONE ? stdout_done(EXIT_OK) : status;
    if ((status = files_fit(&o)))
        return status;
    char *text;
    size_t len;
    FILE *mem = mem_stream(&text, &len);
    if (!mem)
        return EXIT_SYSTEM;
    for (int k = 0; k < o.nfiles; k++) {
        Arena *a = arena_new();
        int st = is_spec(o.files[k]) ? check_spec(a, o.files[k], (int)o.tp, o.print)
                                     : check_stream(a, o.files[k], o.print ? mem : NULL);
        if (st > status)
            status = st;
        arena_free(a);
    }
    fclose(mem);
    if (o.print && status == EXIT_OK)
        status = outfile_whole(o.outpath, text, len);
    free(text);
    return stdout_done(status);
}
