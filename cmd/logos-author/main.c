/* logos-author — prints a model's computation for one form as a LOGOS
 * program (or its weight manifest) from a ModelSpec. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-author [-o FILE] [--manifest] [--batch B] FORM [LAYER] SPEC.yaml\n"
    "  FORM        forward decode_step prefill decode_batch decode_embed decode_layer\n"
    "              decode_head layer head layer_input prefill_embed stacked_layer\n"
    "              stacked_layer_input prefill_head decode_batch_embed decode_batch_head\n"
    "              generate\n"
    "  LAYER       the layer of decode_layer, layer, stacked_layer, layer_input,\n"
    "              stacked_layer_input\n"
    "  --batch B   sequences of decode_batch (default 4); stacked_layer's rows are\n"
    "              B sequences instead of one prefill chunk\n"
    "  --manifest  print the weights the program declares: NAME FORMAT COUNT FILE...\n"
    "  -o FILE     write to FILE (replaced whole, only on success)\n"
    "  -h          this help\n";

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* Checks the authored text (every printed program passes logos-check) and
 * prints it in canonical form, or the manifest of its weights when asked. */
static void finish(Arena *a, const char *text, FILE *out, int list)
{
    Src *src = src_from_string(a, "<authored>", text);
    Lexer lx;
    lex_init(&lx, src);
    int err = 0;
    char *seen = arena_strdup(a, " ");
    for (Prog *p; (p = parse_prog(a, &lx, &err));) {
        if (check_prog(a, p))
            BUG("the authored program does not check");
        if (!list)
            print_prog(out, p);
        for (int i = 0; list && i < p->ndecls; i++) {
            const Decl *d = &p->decls[i];
            char *key = arena_printf(a, " %s ", d->name);
            if (d->kind != D_WEIGHT || strstr(seen, key))
                continue;
            seen = arena_printf(a, "%s%s ", seen, d->name);
            long n = 1;
            for (int k = 0; k < d->rank; k++)
                n *= strtol(d->dims[k], NULL, 10);
            if (d->base == T_Q8)
                fprintf(out, "%s q8 %ld %s.q %s.s\n", d->name, n, d->name, d->name);
            else
                fprintf(out, "%s f32 %ld %s.f\n", d->name, n, d->name);
        }
    }
    if (err)
        BUG("the authored program does not parse");
}

int main(int argc, char **argv)
{
    diag_tool = "logos-author";
    const char *outpath = NULL;
    int list = 0, i = 1;
    long batch = 0;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return EXIT_OK;
        } else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--batch")) && i + 1 == argc) {
            diag("%s needs a value", argv[i]);
            return EXIT_USAGE;
        } else if (!strcmp(argv[i], "--manifest")) {
            list = 1;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            outpath = argv[++i];
        } else if (!strcmp(argv[i], "--batch") && i + 1 < argc) {
            if (parse_int(argv[++i], 1, 4096, &batch)) {
                diag("--batch takes a number of sequences from 1 to 4096, not '%s'", argv[i]);
                return EXIT_USAGE;
            }
        } else {
            diag("unknown option '%s'", argv[i]);
            fputs(usage, stderr);
            return EXIT_USAGE;
        }
    }
    if (argc - i < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    const char *form = argv[i];
    int has_layer = 0, known = author_form_info(form, &has_layer);
    if (known < 0) {
        diag("form '%s' is a tensor-parallel form: the split forms are not written yet "
             "(logos-check --tp N says whether a spec splits)", form);
        return EXIT_INPUT;
    }
    if (!known) {
        diag("unknown form '%s' (forms: %s)", form, author_forms());
        return EXIT_USAGE;
    }
    for (int k = i + 1; k < argc; k++)
        if (argv[k][0] == '-' && argv[k][1] && (argv[k][1] < '0' || argv[k][1] > '9')) {
            diag("options come before the form: '%s'", argv[k]);
            return EXIT_USAGE;
        }
    if (argc - i != 2 + has_layer) {
        diag(has_layer ? "form '%s' takes a layer: logos-author %s LAYER SPEC.yaml"
                       : "form '%s' takes no layer: logos-author %s SPEC.yaml", form, form);
        return EXIT_USAGE;
    }
    long layer = -1;
    if (has_layer && parse_int(argv[i + 1], 0, 1 << 20, &layer)) {
        diag("the layer is a whole number, not '%s'", argv[i + 1]);
        return EXIT_USAGE;
    }
    Arena *a = arena_new();
    const char *path = argv[argc - 1];
    Spec *s = spec_load(a, path);
    int st = EXIT_INPUT;
    if (s && has_layer && layer >= s->nlayers)
        diag_file(path, "layer %ld is out of range: the model has %d layers (0 to %d)", layer, s->nlayers,
                  s->nlayers - 1);
    else if (s) {
        char *text = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&text, &len);
        st = author(a, s, form, (int)layer, (int)batch, mem);
        fclose(mem);
        if (st == 0 && strcmp(form, "layer_input") && strcmp(form, "stacked_layer_input")) {
            char *mtext = NULL;
            size_t mlen = 0;
            FILE *m = open_memstream(&mtext, &mlen);
            finish(a, text, m, list);
            fclose(m);
            free(text);
            text = mtext;
            len = mlen;
        }
        if (st == 0)
            st = outfile_whole(outpath, text, len);
        free(text);
    }
    arena_free(a);
    return st;
}
