#!/bin/sh
# bench/probe/s45d.sh — session forty-five's fourth call (bench/NOTES.md
# run247): main with mmi by default from 32 rows: gpu_kernels whole (each
# case named after a product kernel now checked to launch it; two mmh
# cases moved to --sms 8); DeepSeek-V2-Lite cut to 2 layers, a q8 batch of
# 40 through mmi and through mmv (--mmi-rows 65), the reference's reruns
# saying what quantization and rounding alone give; then issue 11's table
# for the 8B under q8 with f16 caches (tests/gpu/benchforms: chunks of 512
# and 2048, batches of 1, 16, 32 and 64). Carry build/carry.
set -u
LATE=${LATE:-420}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
PARTS=kernels LATE=200 sh bench/probe/s34.sh
mv "$out/logs.tgz" "$out/logs.kernels.tgz" 2>/dev/null
sed 's/^layers: .*/layers: 2/' examples/deepseek-v2-lite.yaml >"$work/deepseek-v2-lite-l2.yaml"
for a in "" "--mmi-rows 65"; do
    late "deepseek $a" && break
    echo "== lane deepseek-v2-lite 2 layers, q8 batch of 40 ($a)"
    LANE_FUSE_ARGS=$a LANE_SPECS="$work/deepseek-v2-lite-l2.yaml" LANE_BATCHES=40 LANE_FORMS=decode_batch LANE_STEPS=8 \
        LANE_NUMERICS=q8 LANE_REF=numerics LOGOS_BIN=build/bin timeout 120 sh tests/gpu/lane 2>&1 | tail -2
done
keep
late benchforms && exit 0
echo "== benchforms llama-3-8b q8, f16 caches"
BENCH_CACHE=f16 BENCH_NUMERICS=q8 BENCH_BATCHES="1 16 32 64" BENCH_REPS=20 BENCH_LAUNCH_REPS=1 OUT="$work/bf" \
    timeout $((LATE + 150 - ($(date +%s) - t0))) sh tests/gpu/benchforms llama-3-8b 2>&1 | tail -9
keep
