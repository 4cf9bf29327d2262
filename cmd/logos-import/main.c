/* logos-import — brings a checkpoint in: a Hugging Face folder (config.json
 * and safetensors) or a GGUF file becomes OUT/spec.yaml and the weight files
 * its programs declare. */
#include <stdlib.h>
#include <string.h>

#include "logos.h"

static const char usage[] =
    "usage: logos-import [--format f32|q8] [--ctx N] [--rewrite-rope] [-q] -o OUT DIR|FILE.gguf\n"
    "  DIR             a Hugging Face checkpoint folder: config.json and *.safetensors\n"
    "  FILE.gguf       a GGUF file (llama.cpp's names and metadata)\n"
    "  -o OUT          the output folder (created if absent): spec.yaml and weight files\n"
    "  --format F      storage of the matrices: q8 (Q8_0, the default) or f32;\n"
    "                  norms, biases and other vectors are always f32\n"
    "  --ctx N         the spec's ctx (default: the model's context, at most 4096)\n"
    "  --rewrite-rope  put a GGUF's interleaved q/k rows back in halves (pairing neox)\n"
    "                  instead of binding them through the rope permutation\n"
    "  -q              no summary line on stderr\n"
    "  -h              this help\n";

static int usage_error(const char *fmt, const char *arg)
{
    diag(fmt, arg);
    fputs(usage, stderr);
    return EXIT_USAGE;
}

int main(int argc, char **argv)
{
    diag_tool = "logos-import";
    ImportOpts o = {.fmt = FMT_Q8};
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return EXIT_OK;
        } else if (!strcmp(a, "-q")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--rewrite-rope")) {
            o.rewrite_rope = 1;
        } else if (!strcmp(a, "-o") && i + 1 < argc) {
            o.out = argv[++i];
        } else if (!strcmp(a, "--format") && i + 1 < argc) {
            a = argv[++i];
            if (strcmp(a, "f32") && strcmp(a, "q8"))
                return usage_error("--format is f32 or q8, not '%s'", a);
            o.fmt = !strcmp(a, "q8") ? FMT_Q8 : FMT_F32;
        } else if (!strcmp(a, "--ctx") && i + 1 < argc) {
            char *end;
            a = argv[++i];
            o.ctx = strtol(a, &end, 10);
            if (!*a || *end || o.ctx < 1 || o.ctx > 2147483647L)
                return usage_error("--ctx takes a number of positions from 1, not '%s'", a);
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (argc - i != 1)
        return usage_error("%s", argc - i ? "one checkpoint at a time" : "no checkpoint given");
    if (!o.out)
        return usage_error("%s", "no output folder: -o OUT is required");
    o.in = argv[i];
    return import_run(&o);
}
