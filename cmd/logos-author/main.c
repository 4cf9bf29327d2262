/* logos-author — prints a model's computation for one form as a LOGOS
 * program (or its weight manifest) from a ModelSpec. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

typedef struct Opts {
    const char *outpath, *form, *spec;
    int list, has_layer;
    long batch, layer;
} Opts;

static const Opt opts[] = {
    {.arg = "FORM", .help = "forward decode_step prefill decode_batch decode_embed decode_layer\n"
                            "decode_head layer head layer_input prefill_embed stacked_layer\n"
                            "stacked_layer_input prefill_head decode_batch_embed decode_batch_head\n"
                            "generate"},
    {.arg = "LAYER", .help = "the layer of decode_layer, layer, stacked_layer, layer_input,\n"
                             "stacked_layer_input"},
    {.l = "batch", .kind = OPT_LONG, .at = offsetof(Opts, batch), .arg = "B", .lo = 1, .hi = 4096,
     .what = "a number of sequences",
     .help = "sequences of decode_batch (default 4); stacked_layer's rows are\n"
             "B sequences instead of one prefill chunk"},
    {.l = "manifest", .kind = OPT_FLAG, .at = offsetof(Opts, list),
     .help = "print the weights the program declares: NAME FORMAT COUNT FILE..."},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(Opts, outpath), .arg = "FILE",
     .help = "write to FILE (replaced whole, only on success)"},
    {0},
};
static const Cli cli = {"usage: logos-author [-o FILE] [--manifest] [--batch B] FORM [LAYER] SPEC.yaml\n", opts};

/* FORM [LAYER] SPEC: the n operands; 0 or an exit status. */
static int operands(int n, char **args, Opts *o)
{
    if (n < 2) {
        opt_usage(&cli, stderr);
        return EXIT_USAGE;
    }
    o->form = args[0];
    int known = author_form_info(o->form, &o->has_layer);
    if (known < 0) {
        diag("form '%s' is a tensor-parallel form: the split forms are not written yet "
             "(logos-check --tp N says whether a spec splits)", o->form);
        return EXIT_INPUT;
    }
    if (!known) {
        diag("unknown form '%s' (forms: %s)", o->form, author_forms());
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
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) {
        diag("out of memory");
        return EXIT_SYSTEM;
    }
    int st = author(a, s, o->form, (int)o->layer, (int)o->batch, o->list, mem);
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
