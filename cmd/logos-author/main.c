/* logos-author — prints a model's computation for one form as a LOGOS
 * program (or its weight manifest) from a ModelSpec. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Opts {
    const char *outpath, *form, *spec;
    int list, has_layer, split;
    long batch, layer, tp;
} Opts;

static const Opt opts[] = {
    {.arg = "FORM", .help = "forward decode_step prefill decode_batch decode_embed decode_layer\n"
                            "decode_head layer head layer_input prefill_embed stacked_layer\n"
                            "stacked_layer_input prefill_head decode_batch_embed decode_batch_head\n"
                            "generate; split over N chips (--tp N): tp_decode_step\n"
                            "tp_decode_layer tp_decode_batch tp_stacked_layer"},
    {.arg = "LAYER", .help = "the layer of decode_layer, layer, stacked_layer, layer_input,\n"
                             "stacked_layer_input, tp_decode_layer, tp_stacked_layer"},
    {.l = "batch", .kind = OPT_LONG, .at = offsetof(Opts, batch), .arg = "B", .lo = 1, .hi = 4096,
     .what = "a number of sequences",
     .help = "sequences of decode_batch and tp_decode_batch (default 4);\n"
             "stacked_layer's rows are B sequences instead of one prefill chunk"},
    {.l = "tp", .kind = OPT_LONG, .at = offsetof(Opts, tp), .arg = "N", .lo = 1, .hi = LOGOS_MAXCHIPS,
     .what = "a number of chips", .help = "the chips a tp_ form splits over (1 to 1024)"},
    {.l = "manifest", .kind = OPT_FLAG, .at = offsetof(Opts, list),
     .help = "print the weights the program declares: NAME FORMAT COUNT FILE...\n"
             "(a tp_ form: RANK NAME FORMAT COUNT SHAPE PART FILE...)"},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(Opts, outpath), .arg = "FILE",
     .help = "write to FILE (replaced whole, only on success)"},
    {0},
};
static const Cli cli = {"usage: logos-author [-o FILE] [--manifest] [--batch B] [--tp N] FORM [LAYER] SPEC.yaml\n",
                        opts};

/* FORM [LAYER] SPEC: the n operands; 0 or an exit status. */
static int operands(int n, char **args, Opts *o)
{
    if (n == 0) {
        opt_usage(&cli, stderr);
        return EXIT_USAGE;
    }
    o->form = args[0];
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
    if (n == 1) {
        diag("give the spec: logos-author %s%s SPEC.yaml", o->form, o->has_layer ? " LAYER" : "");
        return EXIT_USAGE;
    }
    if (n != 2 + o->has_layer) {
        diag(o->has_layer ? "form '%s' takes a layer: logos-author %s LAYER SPEC.yaml"
                          : "form '%s' takes no layer: logos-author %s SPEC.yaml", o->form, o->form);
        return EXIT_USAGE;
    }
    o->layer = -1;
    if (o->has_layer && parse_long(args[1], 0, 1 << 20, &o->layer)) {
        diag("the layer is a whole number, not '%s'", args[1]);
        return EXIT_USAGE;
    }
    o->spec = args[n - 1];
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
    char *text;
    size_t len;
    FILE *mem = mem_stream(&text, &len);
    if (!mem)
        return EXIT_SYSTEM;
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
    int n, st = opt_parse(&cli, &o, argc, argv, &n);
    if (st)
        return st == OPT_DONE ? stdout_done(EXIT_OK) : st;
    if ((st = operands(n, argv + 1, &o)))
        return st;
    Arena *a = arena_new();
    Spec *s = spec_load(a, o.spec);
    st = s ? write_form(a, s, &o) : EXIT_INPUT;
    arena_free(a);
    return st;
}
