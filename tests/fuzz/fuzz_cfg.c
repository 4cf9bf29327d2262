/* fuzz_cfg.c — libFuzzer harness: a Hugging Face config.json through
 * logos-import's reader (the families, their keys and the checks of
 * cfg_finish), then the spec it writes read back and each format's decode
 * step authored from it: a configuration the reader takes never crashes
 * what import does next. Built by tests/fuzz/run. */
#include <stddef.h>
#include <stdint.h>

#include "logos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    import_config(data, size);
    return 0;
}
