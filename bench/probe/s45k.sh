#!/bin/sh
# bench/probe/s45k.sh — session forty-five's last call (bench/NOTES.md
# run254): mmi at the default (from 32 rows, products with fewer than 4
# stages a multiprocessor, or under 32 rows fewer tiles than
# multiprocessors, left on mmv: lane_cuda.c's mmi_small) against all on
# mmv (--mmi-rows 65) and all that can on mmi (--mmi-rows 32), q8 decode
# batches of 32 and 64 (f16 caches, position 512), five shapes. Carry
# build/carry.
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
echo "== shape batch: ms default, all mmv, all mmi (mmi launches)"
for s in llama-3-8b llama-3.2-1b qwen3-0.6b gemma-2-2b mistral-7b; do
    spec16 "$s"
    for b in 32 64; do
        echo "$s $b:$(versus "$s" $b "" "--mmi-rows 65" "--mmi-rows 32")"
    done
done
keep
