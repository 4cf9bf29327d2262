/* fuzz_tok.c — libFuzzer harness: a tokenizer file (tokenizer.json, or a
 * GGUF's tokenizer.ggml.* keys where the input starts with GGUF's magic)
 * through logos-tok's reader, then texts encoded with it and their ids
 * decoded as a stream. Its property: whatever the reader accepts encodes
 * and decodes without a crash, every id it gives inside its vocabulary.
 * Each input is written to a file of its own (tok_load reads paths), under
 * $TMPDIR. Built by tests/fuzz/run. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "logos.h"

static const char *texts[] = {
    "Hello, world! 123 ",
    "  two  spaces\tand a tab\nand lines\r\n",
    "caf\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80 <s></s><|endoftext|>",
    "",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[256];
    if (!path[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(path, sizeof path, "%s/fuzz_tok.%ld", tmp ? tmp : "/tmp", (long)getpid());
    }
    int gguf = size >= 4 && !memcmp(data, "GGUF", 4);
    char file[300];
    snprintf(file, sizeof file, "%s%s", path, gguf ? ".gguf" : ".json");
    FILE *f = fopen(file, "wb");
    if (!f || fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    Arena *a = arena_new();
    Tokenizer *t = tok_load(a, file);
    if (t) {
        FILE *null = fopen("/dev/null", "w");
        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
            for (int special = 0; special < 2; special++) {
                TokIds ids = {0};
                tok_encode(t, texts[i], strlen(texts[i]), special, 0, &ids);
                TokDec *d = tok_dec_new(t, special);
                for (int k = 0; k < ids.n; k++) {
                    if (ids.v[k] < 0 || ids.v[k] >= tok_vocab(t)) {
                        fprintf(stderr, "fuzz_tok: id %d outside the vocabulary of %d\n", ids.v[k], tok_vocab(t));
                        abort();
                    }
                    tok_dec_push(d, ids.v[k], null);
                }
                tok_dec_end(d, null);
                tok_dec_free(d);
                free(ids.v);
            }
        fclose(null);
        tok_free(t);
    }
    arena_free(a);
    remove(file);
    return 0;
}
