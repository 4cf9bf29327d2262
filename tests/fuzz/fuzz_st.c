/* fuzz_st.c — libFuzzer harness: a safetensors file image through
 * logos-import's header parser (length, JSON header, dtypes, shapes,
 * data_offsets against the data, overlaps). Built by tests/fuzz/run. */
#include <stddef.h>
#include <stdint.h>

#include "logos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    import_st_header(data, size);
    return 0;
}
