#!/bin/sh
# bench/probe/s45f.sh — session forty-five's sixth call (bench/NOTES.md
# run249): mmi with four warpgroups (build-ab/W: main with
# bench/probe/wg4.patch, each warpgroup 64 weight rows by half of x's NR
# rows, 512 threads a block) against main: W's mmi cases, then the 8B's
# q8 decode batches (f16 caches, position 512) of 64, 32, 24 and 16 on
# main, W and mmv (--mmi-rows 65 on main), steps and launches. Carry
# build/carry and build-ab/W.
set -u
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
echo "== W: gpu_kernels mmi"
kcheck build-ab/W/test/gpu_kernels mmi kernels.W
spec8
export FORM_SKIP="rownorm|embed|argmax|attend"
for b in 64 32 24 16; do
    bform build/bin $b main$b --mmi-rows 3
    bform build-ab/W/bin $b W$b --mmi-rows 3
    bform build/bin $b mmv$b --mmi-rows 65
done
bform build/bin 64 main64b --mmi-rows 3
bform build-ab/W/bin 64 W64b --mmi-rows 3
keep
