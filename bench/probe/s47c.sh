#!/bin/sh
# bench/probe/s47c.sh — session forty-seven's last call (bench/NOTES.md
# run263): the crossover of mmv against the GEMV at 2 and 3 rows (q8,
# f32 caches, position 512: tests/gpu/crossover) for the other dense
# shapes, now that --mmv-rows defaults to 2 on the 8B's table. Carry
# build/carry (main's tools).
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
for s in llama-3.2-1b gemma-2-2b qwen3-0.6b qwen2.5-0.5b mistral-7b; do
    late "$s" && break
    CROSS_NUMERICS=q8 CROSS_BATCHES="2 3" timeout 120 sh tests/gpu/crossover "$s" 2>&1 | grep -v '^shape'
done
