#!/bin/sh
# bench/probe/s45j.sh — session forty-five's last call (bench/NOTES.md
# run253): main's checks at its head (gpu_kernels whole, the lane and the
# oracle); mmi (the default from 32 rows) against mmv (--mmi-rows 65) on
# the other shapes, q8 decode batches of 32 and 64 (f16 caches, position
# 512); then issue 11's table for the 8B and the 1B under q8 with f16
# caches (tests/gpu/benchforms: chunks of 512 and 2048, batches of 1, 16,
# 32 and 64). Carry build/carry.
set -u
LATE=${LATE:-300}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
P="kernels lane"
nvidia-smi -L | grep -q H200 && P="kernels lane bench9 bench10"
PARTS="$P" LATE=200 sh bench/probe/s34.sh
mv "$out/logs.tgz" "$out/logs.checks.tgz" 2>/dev/null
echo "== mmi against mmv: shape batch numerics: ms mmi, ms mmv"
for s in llama-3.2-1b qwen3-0.6b gemma-2-2b mistral-7b qwen2.5-0.5b; do
    spec16 "$s"
    for b in 32 64; do
        echo "$s $b q8:$(versus "$s" $b "" "--mmi-rows 65")"
    done
done
keep
late benchforms && exit 0
echo "== benchforms llama-3-8b llama-3.2-1b q8, f16 caches"
BENCH_CACHE=f16 BENCH_NUMERICS=q8 BENCH_BATCHES="1 16 32 64" BENCH_REPS=20 BENCH_LAUNCH_REPS=1 OUT="$work/bf" \
    timeout $((LATE + 250 - ($(date +%s) - t0))) sh tests/gpu/benchforms llama-3-8b llama-3.2-1b 2>&1 | tail -14
keep
