/* logos-author — prints a model's computation for one form as a LOGOS
 * program (or its weight manifest) from a ModelSpec. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-author [-o FILE] [--manifest] [--batch B] [--tp N] FORM [LAYER] SPEC.yaml\n"
    "  FORM        forward decode_step prefill decode_batch decode_embed decode_layer\n"
    "              decode_head layer head layer_input prefill_embed stacked_layer\n"
    "              stacked_layer_input prefill_head decode_batch_embed decode_batch_head\n"
    "              generate; split over N chips (--tp N): tp_decode_step\n"
    "              tp_decode_layer tp_decode_batch tp_stacked_layer\n"
    "  LAYER       the layer of decode_layer, layer, stacked_layer, layer_input,\n"
    "              stacked_layer_input, tp_decode_layer, tp_stacked_layer\n"
    "  --batch B   sequences of decode_batch and tp_decode_batch (default 4);\n"
    "              stacked_layer's rows are B sequences instead of one prefill chunk\n"
    "  --tp N      the chips a tp_ form splits over (1 to 1024)\n"
    "  --manifest  print the weights the program declares: NAME FORMAT COUNT FILE...\n"
    "              (a tp_ form: RANK NAME FORMAT COUNT SHAPE PART FILE...)\n"
    "  -o FILE     write to FILE (replaced whole, only on success)\n"
    "  -h          this help\n";

typedef struct Opts {
    const char *outpath, *form, *spec;
    int list, has_layer, split;
    long batch, layer, tp;
} Opts;

/* The flags before the form; the index of the form, or -(exit status) - 1. */
static int flags(int argc, char **argv, Opts *o)
{
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *f = argv[i];
        if (!strcmp(f, "-h") || !strcmp(f, "--help")) {
            fputs(usage, stdout);
            return -EXIT_OK - 1;
        } else if ((!strcmp(f, "-o") || !strcmp(f, "--batch") || !strcmp(f, "--tp")) && i + 1 == argc) {
            diag("%s needs a value", f);
            return -EXIT_USAGE - 1;
        } else if (!strcmp(f, "--manifest")) {
            o->list = 1;
        } else if (!strcmp(f, "-o")) {
            o->outpath = argv[++i];
        } else if (!strcmp(f, "--batch")) {
            if (parse_long(argv[++i], 1, 4096, &o->batch)) {
                diag("--batch takes a number of sequences from 1 to 4096, not '%s'", argv[i]);
                return -EXIT_USAGE - 1;
            }
        } else if (!strcmp(f, "--tp")) {
            if (parse_long(argv[++i], 1, LOGOS_MAXCHIPS, &o->tp)) {
                diag("--tp takes a number of chips from 1 to %d, not '%s'", LOGOS_MAXCHIPS, argv[i]);
                return -EXIT_USAGE - 1;
            }
        } else {
            diag("unknown option '%s'", f);
            fputs(usage, stderr);
            return -EXIT_USAGE - 1;
        }
    }
    return i;
}

/* FORM [LAYER] SPEC after the flags; 0 or an exit status. */
static int operands(int argc, char **argv, int i, Opts *o)
{
    if (argc - i < 2) {
        fputs(usage, stderr);
        return EXIT_USAGE;
    }
    o->form = argv[i];
    int known = author_form_info(o->form, &o->has_layer);
    if (!known) {
        diag("unknown form '%s' (forms: %s)", o->form, author_forms());
        return EXIT_USAGE;
    }
    o->split = known == 2;
    if (o->split && !o->tp) {
        diag("form '%s' is split over chips: give their number with --tp N", o->form);
        return EXIT_USAGE;
    }
    if (!o->split && o->tp) {
        diag("--tp splits the tp_ forms, not '%s'", o->form);
        return EXIT_USAGE;
    }
    for (int k = i + 1; k < argc; k++)
        if (argv[k][0] == '-' && argv[k][1] && (argv[k][1] < '0' || argv[k][1] > '9')) {
            diag("options come before the form: '%s'", argv[k]);
            return EXIT_USAGE;
        }
    if (argc - i != 2 + o->has_layer) {
        diag(o->has_layer ? "form '%s' takes a layer: logos-author %s LAYER SPEC.yaml"
                          : "form '%s' takes no layer: logos-author %s SPEC.yaml", o->form, o->form);
        return EXIT_USAGE;
    }
    o->layer = -1;
    if (o->has_layer && parse_long(argv[i + 1], 0, 1 << 20, &o->layer)) {
        diag("the layer is a whole number, not '%s'", argv[i + 1]);
        return EXIT_USAGE;
    }
    o->spec = argv[argc - 1];
    return 0;
}

/* Authors the form into memory, then writes it whole. */
static int write_form(Arena *a, const Spec *s, const Opts *o)
{
    if (o->has_layer && o->layer >= s->nlayers) {
        diag_file(o->spec, "layer %ld is out of range: the model has %d layers (0 to %d)", o->layer, s->nlayers,
                  s->nlayers - 1);
        return EXIT_INPUT;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        diag("out of memory");
        return EXIT_SYSTEM;
    }
    int st = author_tp(a, s, o->form, (int)o->layer, (int)o->batch, (int)o->tp, o->list, mem);
    fclose(mem);
    if (st == 0)
        st = outfile_whole(o->outpath, text, len);
    free(text);
    return st;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-author";
    Opts o = {0};
    int i = flags(argc, argv, &o);
    if (i < 0)
        return -i - 1;
    int st = operands(argc, argv, i, &o);
    if (st)
        return st;
    Arena *a = arena_new();
    Spec *s = spec_load(a, o.spec);
    st = s ? write_form(a, s, &o) : EXIT_INPUT;
    arena_free(a);
    return st;
}
