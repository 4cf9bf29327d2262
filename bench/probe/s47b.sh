#!/bin/sh
# bench/probe/s47b.sh — session forty-seven's second device call
# (bench/NOTES.md run262): the defaults the H200's crossover table asks
# for (bench/probe/defaults.patch: MMV_ROWS 2, MMI_ROWS 24, and a
# gpu_kernels case of mmv at 2 rows), built into build-ab/X, checked
# (X's gpu_kernels, its mmv and mmi cases) and timed against main
# (build/carry) on q8 decode batches of 2 and 24 rows (f16 caches,
# position 512) of the 8B, the 1B and Gemma-2-2B, and of the 8B with f32
# caches (the crossover table's); then the 8B's attention at 64 rows under
# --sms 132, 264 and 528 (more blocks a row). Carry build-ab/s47b.tar.xz:
#   tar cJf build-ab/s47b.tar.xz build/carry build-ab/X
set -u
tar xJf build-ab/s47b.tar.xz || exit 3
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
echo "== gpu_kernels (defaults.patch), the cases matching mmv or mmi"
kcheck build-ab/X/test/gpu_kernels mmv kv
kcheck build-ab/X/test/gpu_kernels mmi ki
echo "== shape caches batch: ms main, ms defaults.patch"
for s in llama-3-8b llama-3.2-1b gemma-2-2b; do
    spec16 "$s"
    for b in 2 24; do
        echo "$s f16 $b: $(ms "b-$s-$b" build/bin "$work/$s.yaml" $b) $(ms "x-$s-$b" build-ab/X/bin "$work/$s.yaml" $b)"
    done
done
sed 's/^ctx: .*/ctx: 1024/' examples/llama-3-8b.yaml >"$work/f32.yaml"
for b in 2 24; do
    echo "llama-3-8b f32 $b: $(ms "b-f32-$b" build/bin "$work/f32.yaml" $b) $(ms "x-f32-$b" build-ab/X/bin "$work/f32.yaml" $b)"
done
echo "== the 8B's batch of 64 (f16 caches): its attention's µs a launch with the chip taken as more multiprocessors (more blocks a row, BUSY)"
for sm in 132 264 528; do
    step "a$sm" build/bin "$work/llama-3-8b.yaml" 64 --sms $sm
    printf '%s sms %s: step %s, ' "$(grep -o 'SPLIT=[0-9]* CHUNK=[0-9]* BUSY=[0-9]*' "$work/a$sm.plan" | head -1)" $sm "$(step_ms a$sm)"
    awk -F, '$1 == "launch" && $7 ~ /^attend/ { t += $9; c++ } END { printf "attend avg %.1f us (n=%d)\n", 1000 * t / c, c }' "$work/a$sm.csv"
done
keep
