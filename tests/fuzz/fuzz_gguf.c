/* fuzz_gguf.c — libFuzzer harness: a GGUF file image through logos-import's
 * parser (magic, version, counts, typed key-values and arrays, tensor infos,
 * alignment, data bounds) and the configuration read from its metadata.
 * Built by tests/fuzz/run. */
#include <stddef.h>
#include <stdint.h>

#include "logos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    import_gguf_header(data, size);
    return 0;
}
