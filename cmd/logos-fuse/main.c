/* logos-fuse — reads a stream of LOGOS programs and prints its launch plan
 * for a lane. Until the CUDA lane lands, it checks the programs and passes
 * them through unchanged, saying so on stderr. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-fuse [--lane cuda] [-q] [FILE]\n"
    "  FILE        the program stream (stdin when absent or -)\n"
    "  --lane L    the lane whose kernels decide the fusion (cuda)\n"
    "  -q          no notice on stderr\n"
    "  -h          this help\n";

int main(int argc, char **argv)
{
    diag_tool = "logos-fuse";
    int i = 1, quiet = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return EXIT_OK;
        } else if (!strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (!strcmp(argv[i], "--lane") && i + 1 == argc) {
            diag("--lane needs a value");
            return EXIT_USAGE;
        } else if (!strcmp(argv[i], "--lane")) {
            if (strcmp(argv[++i], "cuda")) {
                diag("unknown lane '%s' (lanes: cuda)", argv[i]);
                return EXIT_USAGE;
            }
        } else {
            diag("unknown option '%s'", argv[i]);
            fputs(usage, stderr);
            return EXIT_USAGE;
        }
    }
    if (argc - i > 1) {
        diag("one program stream at a time");
        return EXIT_USAGE;
    }
    Arena *a = arena_new();
    Src *src = src_read(a, i < argc ? argv[i] : "-");
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
        if (!quiet)
            diag("the CUDA lane's fusion is not built yet: passing the programs through unchanged");
        fwrite(text, 1, len, stdout);
    }
    free(text);
    arena_free(a);
    return stdout_done(status);
}
