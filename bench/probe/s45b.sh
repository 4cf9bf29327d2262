#!/bin/sh
# bench/probe/s45b.sh — session forty-five's second call (bench/NOTES.md
# run245): how much of mmi's step its tile ends cost (build-ab/N: main with
# bench/probe/noend.patch, the tile ends left out, wrong sums, timing
# only) at the 8B's batch of 64; main's mmi against mmv at batches 40, 48
# and 56 (where the default should turn to mmi); then every family's tiny
# spec in a batch of 64 through mmi (--mmi-rows 33) under q8 against the
# reference (tests/gpu/run sweep). Carry build/carry and build-ab/N.
set -u
LATE=${LATE:-420}
. "$(dirname "$0")/call.sh"
carry_in || exit 3
nvidia-smi -L
spec8
export FORM_SKIP="rownorm|embed|argmax"
bform build/bin 64 mmi64 --mmi-rows 3
bform build-ab/N/bin 64 noend64 --mmi-rows 3
bform build/bin 64 mmi64b --mmi-rows 3
for b in 56 48 40; do
    bform build/bin $b mmi$b --mmi-rows 3
    bform build/bin $b mmv$b
done
keep
mv "$out/logs.tgz" "$out/logs.steps.tgz"
late sweep && exit 0
echo "== sweep, batches of 64 through mmi, q8"
LANE_FUSE_ARGS="--mmi-rows 33" SWEEP_CHUNKS=1 SWEEP_BATCHES=64 SWEEP_NUMERICS=q8 SWEEP_JOBS=8 \
    timeout $((${LATE} + 150 - ($(date +%s) - t0))) sh tests/gpu/run sweep >"$work/sweep.out" 2>&1
echo "status $?"
grep -v " ok " "$work/sweep.out" | tail -30
keep
