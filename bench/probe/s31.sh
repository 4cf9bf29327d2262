#!/bin/sh
# bench/probe/s31.sh — the device work sessions thirty-one left, in one call
# (bench/NOTES.md run204): main's decode figures with the decode step's LR
# on the card lent (table9.sh, lr0h.sh), the precise products without I2F
# (main with bench/probe/i8f.patch, built here by `sh bench/probe/patched.sh
# bench/probe/i8f.patch` into build-ab/B) against main, both builds'
# gpu_kernels, then main's lane and oracle. Carry build/bin, build/test and
# build-ab/B; logs under $OUT (or /tmp).
set -u
out=${OUT:-/tmp}
nvidia-smi -L
echo "== main: table9"; sh bench/probe/table9.sh
echo "== main: lr0h"; sh bench/probe/lr0h.sh
echo "== i8f: table9"; B=build-ab/B/bin sh bench/probe/table9.sh
for side in B A; do
    if [ $side = B ]; then bin=build-ab/B/bin; else bin=build/bin; fi
    LOGOS_BIN=$bin KERNELS_JOBS=8 sh tests/gpu/run kernels >"$out/kernels.$side" 2>&1
    echo "== gpu_kernels $side: $(grep -E '^gpu_kernels: ' "$out/kernels.$side" | tail -1)"
done
# the precise cases' figures, main's against the patch's (the same sums:
# every line should be equal)
grep -i precise "$out/kernels.A" >"$out/precise.A"
grep -i precise "$out/kernels.B" >"$out/precise.B"
echo "== precise lines that differ: $(diff "$out/precise.A" "$out/precise.B" | grep -c '^<')"
echo "== main: lane and oracle"
LANE_JOBS=6 sh tests/gpu/run lane oracle >"$out/lane" 2>&1
tail -12 "$out/lane"
