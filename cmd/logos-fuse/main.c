/* logos-fuse — reads a stream of LOGOS programs and prints its launch plan
 * for a lane. Until the CUDA lane lands, it checks the programs and passes
 * them through unchanged, saying so on stderr. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Opts {
    int quiet;
} Opts;

static int lane(void *field, const char *flag, const char *value)
{
    (void)field;
    (void)flag;
    if (strcmp(value, "cuda")) {
        diag("unknown lane '%s' (lanes: cuda)", value);
        return EXIT_USAGE;
    }
    return 0;
}

static const Opt opts[] = {
    {.arg = "FILE", .help = "the program stream (stdin when absent or -)"},
    {.l = "lane", .kind = OPT_CALL, .arg = "L", .fn = lane,
     .help = "the lane whose kernels decide the fusion (cuda)"},
    {.s = 'q', .kind = OPT_FLAG, .at = offsetof(Opts, quiet), .help = "no notice on stderr"},
    {0},
};
static const Cli cli = {"usage: logos-fuse [--lane cuda] [-q] [FILE]\n", opts};

int main(int argc, char **argv)
{
    diag_tool = "logos-fuse";
    Opts o = {0};
    int nargs, st = opt_parse(&cli, &o, argc, argv, &nargs);
    if (st)
        return st == OPT_DONE ? stdout_done(EXIT_OK) : st;
    if (nargs > 1) {
        diag("one program stream at a time");
        return EXIT_USAGE;
    }
    Arena *a = arena_new();
    Src *src = src_read(a, nargs ? argv[1] : "-");
    int status = src ? EXIT_OK : EXIT_INPUT;
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (src) {
        Lexer lx;
        lex_init(&lx, src);
        int err = 0, n = 0;
        for (Prog *p; (p = parse_prog(a, &lx, &err)); n++) {
            if (check_prog(a, p))
                status = EXIT_INPUT;
            else
                print_prog(mem, p);
        }
        if (err)
            status = EXIT_INPUT;
        else if (n == 0 && status == EXIT_OK) {
            diag_file(src->name, "no program in the input");
            status = EXIT_INPUT;
        }
    }
    fclose(mem);
    if (status == EXIT_OK) {
        if (!o.quiet)
            diag("the CUDA lane's fusion is not built yet: passing the programs through unchanged");
        fwrite(text, 1, len, stdout);
    }
    free(text);
    arena_free(a);
    return stdout_done(status);
}
