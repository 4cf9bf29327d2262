/* replay.c — a main for the libFuzzer harnesses without libFuzzer: each
 * FILE given is read whole and passed once to LLVMFuzzerTestOneInput, so
 * that `make check` runs every harness (built with gcc under
 * AddressSanitizer and UBSan) over the inputs that once crashed it
 * (tests/fuzz/regress/HARNESS/) and a few seeds. A TAP line a file; a
 * crash or a sanitizer's report ends the process, which tests/run counts
 * as a failure.
 *   usage: HARNESS FILE... */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FILE's bytes, malloc'd, in *n; NULL when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *b = NULL;
    size_t cap = 0;
    *n = 0;
    for (;;) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 65536;
            uint8_t *nb = realloc(b, cap);
            if (!nb) {
                free(b);
                fclose(f);
                return NULL;
            }
            b = nb;
        }
        size_t got = fread(b + *n, 1, cap - *n, f);
        *n += got;
        if (got == 0)
            break;
    }
    fclose(f);
    return b;
}

int main(int argc, char **argv)
{
    int bad = 0;
    for (int i = 1; i < argc; i++) {
        size_t n;
        uint8_t *b = slurp(argv[i], &n);
        if (!b) {
            printf("not ok %d - %s: cannot read\n", i, argv[i]);
            bad = 1;
            continue;
        }
        LLVMFuzzerTestOneInput(b, n);
        free(b);
        printf("ok %d - %s\n", i, argv[i]);
        fflush(stdout);
    }
    return bad;
}
