/* logos-check — is a ModelSpec writable as programs (and splittable over N
 * chips), or is a stream of LOGOS programs well-formed and well-typed? */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-check [-p] [-o FILE] [--tp N] [FILE ...]\n"
    "  FILE.yaml   a ModelSpec: can every layer be written as a program?\n"
    "  FILE, -     a stream of LOGOS programs (stdin when no FILE)\n"
    "  --tp N      with a spec: does it split over N chips?\n"
    "  -p          print each checked program (canonical form) to stdout\n"
    "  -o FILE     write the printed programs to FILE instead of stdout\n"
    "  -h          this help\n";

static int is_spec(const char *path)
{
    size_t n = strlen(path);
    return (n > 5 && strcmp(path + n - 5, ".yaml") == 0) || (n > 4 && strcmp(path + n - 4, ".yml") == 0);
}

static int check_spec(Arena *a, const char *path, int tp)
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
    printf("%s: ok: %d layers can be written\n", path, s->nlayers);
    return EXIT_OK;
}

/* Checks every program of one stream; prints them when out is set. */
static int check_stream(Arena *a, const char *path, FILE *out)
{
    Src *src = src_read(a, path);
    if (!src)
        return EXIT_INPUT;
    if (src->len == 0) {
        diag_file(src->name, "empty input: no program");
        return EXIT_INPUT;
    }
    Lexer lx;
    lex_init(&lx, src);
    int err = 0, n = 0, bad = 0;
    for (Prog *p; (p = parse_prog(a, &lx, &err));) {
        n++;
        if (check_prog(a, p))
            bad = 1;
        else if (out)
            print_prog(out, p);
    }
    if (err || bad)
        return EXIT_INPUT;
    if (n == 0) {
        diag_file(src->name, "no program in the input");
        return EXIT_INPUT;
    }
    if (!out)
        printf("%s: ok: %d program%s\n", src->name, n, n == 1 ? "" : "s");
    return EXIT_OK;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-check";
    int tp = 0, print = 0, i = 1;
    const char *outpath = NULL;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[i], "-p")) {
            print = 1;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            outpath = argv[++i];
            print = 1;
        } else if (!strcmp(argv[i], "--tp") && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end || v < 1 || v > 1024) {
                diag("--tp takes a number of chips from 1 to 1024, not '%s'", argv[i]);
                return EXIT_USAGE;
            }
            tp = (int)v;
        } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--tp")) && i + 1 == argc) {
            diag("%s needs %s", argv[i], argv[i][1] == 'o' ? "a FILE" : "a number of chips");
            return EXIT_USAGE;
        } else if (!strcmp(argv[i], "--")) {
            i++;
            break;
        } else {
            diag("unknown option '%s'", argv[i]);
            fputs(usage, stderr);
            return EXIT_USAGE;
        }
    }
    const char *stdin_only[] = {"-"};
    int nfiles = argc - i;
    const char **files = nfiles ? (const char **)argv + i : stdin_only;
    if (!nfiles)
        nfiles = 1;
    if (tp) {
        for (int k = 0; k < nfiles; k++)
            if (!is_spec(files[k])) {
                diag("--tp checks a spec (FILE.yaml), not '%s'", files[k]);
                return EXIT_USAGE;
            }
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    int status = EXIT_OK;
    for (int k = 0; k < nfiles; k++) {
        Arena *a = arena_new();
        int st = is_spec(files[k]) ? check_spec(a, files[k], tp)
                                   : check_stream(a, files[k], print ? mem : NULL);
        if (st > status)
            status = st;
        arena_free(a);
    }
    fclose(mem);
    if (print && status == EXIT_OK)
        status = outfile_whole(outpath, text, len);
    free(text);
    return status;
}
