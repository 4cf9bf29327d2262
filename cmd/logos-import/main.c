/* logos-import — brings a checkpoint in: a Hugging Face folder (config.json
 * and safetensors) or a GGUF file becomes OUT/spec.yaml and the weight files
 * its programs declare. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const Opt opts[] = {
    {.arg = "DIR", .help = "a Hugging Face checkpoint folder: config.json and *.safetensors"},
    {.arg = "FILE.gguf", .help = "a GGUF file (llama.cpp's names and metadata)"},
    {.s = 'o', .kind = OPT_STR, .at = offsetof(ImportOpts, out), .arg = "OUT",
     .help = "the output folder (created if absent): spec.yaml and weight files"},
    {.l = "format", .kind = OPT_WORD, .at = offsetof(ImportOpts, fmt), .arg = "F", .what = "f32 q8",
     .help = "storage of the matrices: q8 (Q8_0, the default) or f32;\n"
             "norms, biases and other vectors are always f32"},
    {.l = "ctx", .kind = OPT_LONG, .at = offsetof(ImportOpts, ctx), .arg = "N", .lo = 1, .hi = LOGOS_MAXINT,
     .what = "a number of positions", .help = "the spec's ctx (default: the model's context, at most 4096)"},
    {.l = "rewrite-rope", .kind = OPT_FLAG, .at = offsetof(ImportOpts, rewrite_rope),
     .help = "put a GGUF's interleaved q/k rows back in halves (pairing neox)\n"
             "instead of binding them through the rope permutation"},
    {.s = 'q', .kind = OPT_FLAG, .at = offsetof(ImportOpts, quiet), .help = "no summary line on stderr"},
    {0},
};
static const Cli cli = {"usage: logos-import [--format f32|q8] [--ctx N] [--rewrite-rope] [-q] -o OUT DIR|FILE.gguf\n",
                        opts};

static int usage_error(const char *msg)
{
    diag("%s", msg);
    opt_usage(&cli, stderr);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-import";
    ImportOpts o = {.fmt = FMT_Q8};
    int n, st = opt_parse(&cli, &o, argc, argv, &n);
    if (st)
        return st == OPT_DONE ? stdout_done(EXIT_OK) : st;
    if (n != 1)
        return usage_error(n ? "one checkpoint at a time" : "no checkpoint given");
    if (!o.out)
        return usage_error("no output folder: -o OUT is required");
    o.in = argv[1];
    return import_run(&o);
}
