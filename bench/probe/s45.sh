#!/bin/sh
# bench/probe/s45.sh — session forty-five's first call (bench/NOTES.md
# run243): mmi with its tile ends' loads batched, its three gpu_kernels
# cases, then the 8B's decode batches of 64, 32 and 16 (q8, f16 caches,
# position 512) on mmi (--mmi-rows 3) and on mmv side by side, each step
# and its launches by kind; then main's owed checks (gpu_kernels whole,
# which runs mmh's tensor maps through the shared weight_maps, the lane
# and the oracle; on an H200 issue 9's and 10's tables too). Carry
# build/carry.
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
KERNELS_MATCH="mmi K 14336|mmi gated silu, quantizing|mmi the o" timeout 40 build/test/gpu_kernels | sed 's/  quantization.*//'
spec8
bform build/bin 64 mmi64 --mmi-rows 3
bform build/bin 64 mmv64
bform build/bin 32 mmi32 --mmi-rows 3
bform build/bin 32 mmv32
bform build/bin 16 mmi16 --mmi-rows 3
bform build/bin 16 mmv16
keep
mv "$out/logs.tgz" "$out/logs.mmi.tgz"
P="${S45_PARTS-kernels lane}"
nvidia-smi -L | grep -q H200 && P="kernels lane bench9 bench10"
[ -n "$P" ] || exit 0
left=$((${LATE:-480} - ($(date +%s) - t0)))
[ "$left" -gt 0 ] || left=-1
PARTS="$P" LATE=$left sh bench/probe/s34.sh
