#!/bin/sh
# bench/probe/s45c.sh — session forty-five's third call (bench/NOTES.md
# run246): mmi with split tiles meeting at their first block's run end
# (give/take): all its gpu_kernels cases; the 8B's decode batches of 64,
# 40, 32 and 24 (q8, f16 caches, position 512) on mmi and on mmv; then the
# lane through mmi (--mmi-rows 3) on real shapes cut to 2 layers, batches
# of 40 and 64 under q8, against the reference. Carry build/carry.
set -u
LATE=${LATE:-420}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
echo "== gpu_kernels mmi"
kcheck build/test/gpu_kernels mmi kernels.out
spec8
export FORM_SKIP="rownorm|embed|argmax"
for b in 64 40 32 24; do
    bform build/bin $b mmi$b --mmi-rows 3
    bform build/bin $b mmv$b
done
keep
late lane && exit 0
echo "== lane, 2 layers, q8, --mmi-rows 3, batches 40 and 64"
LANE_FUSE_ARGS="--mmi-rows 3" LANE_ALONE= STACKED_SHAPES="llama-3.2-1b qwen3-0.6b gemma-2-2b mistral-7b deepseek-v2-lite lfm2-1.2b" \
    STACKED_BATCHES="40 64" timeout $((LATE + 150 - ($(date +%s) - t0))) sh tests/gpu/run stacked >"$work/lane.out" 2>&1
echo "status $?" >>"$work/lane.out"
tail -16 "$work/lane.out"
keep
